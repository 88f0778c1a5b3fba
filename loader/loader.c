// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/abi/rules.h"
#include "bpf/fs.skel.h"
#include "bpf/net.skel.h"
#include "loader/loader.h"

#define BPF_FS_MAGIC 0xcafe4a11

/* Maps userspace needs; everything else stays private to the programs. */
static const char *const pinned_maps[] = { "runs", "path_rules", "inode_rules", "audit_rings",
					   "ptys", "abstract_sockets", "run_keys", "rodata" };
/* The network object's own maps (it shares runs and audit_rings). */
static const char *const net_pinned_maps[] = { "net_rules", "net_rodata" };

static int fail(struct tl_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct tl_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (code > 0)
		code = -code;
	if (code == 0)
		code = -EIO;
	if (err) {
		va_start(ap, fmt);
		n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < sizeof(err->msg))
			snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(-code));
	}
	return code;
}

/*
 * FNV-1a over 64-bit words (the tail byte by byte): identity, not security.
 * Every run hashes both objects (about 2 MB), so a word at a time.
 */
static uint64_t hash_bytes(uint64_t hash, const unsigned char *p, size_t size)
{
	size_t i = 0;

	for (; i + 8 <= size; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, sizeof(w));
		hash = (hash ^ w) * 0x100000001b3ULL;
	}
	for (; i < size; i++)
		hash = (hash ^ p[i]) * 0x100000001b3ULL;
	return hash;
}

const char *tl_pin_dir(void)
{
	static char dir[64];
	const unsigned char *elf;
	uint64_t hash = 0xcbf29ce484222325ULL;
	size_t size;

	if (dir[0])
		return dir;
	elf = fs_bpf__elf_bytes(&size);
	hash = hash_bytes(hash, elf, size);
	elf = net_bpf__elf_bytes(&size);
	hash = hash_bytes(hash, elf, size);
	snprintf(dir, sizeof(dir), "%s/%016llx", TETHER_PIN_ROOT, (unsigned long long)hash);
	return dir;
}

static void pin_path(char *buf, size_t len, const char *prefix, const char *name)
{
	snprintf(buf, len, "%s/%s%s", tl_pin_dir(), prefix, name);
}

static bool pinned(const char *prefix, const char *name)
{
	char path[256];

	pin_path(path, sizeof(path), prefix, name);
	return access(path, F_OK) == 0;
}

/* The rodata map as pinned: libbpf names it "<object>.rodata". */
static struct bpf_map *rodata_map(struct fs_bpf *skel)
{
	return skel->maps.rodata;
}

static struct bpf_map *map_by_pin_name(struct fs_bpf *skel, const char *name)
{
	if (strcmp(name, "rodata") == 0)
		return rodata_map(skel);
	return bpf_object__find_map_by_name(skel->obj, name);
}

static int make_pin_dir(struct tl_error *err)
{
	struct statfs sfs;

	if (statfs(TETHER_BPFFS, &sfs) < 0 || (unsigned long)sfs.f_type != BPF_FS_MAGIC)
		return fail(err, ENOENT,
			    "no BPF filesystem at %s (mount it with: mount -t bpf bpf %s)",
			    TETHER_BPFFS, TETHER_BPFFS);
	if (mkdir(TETHER_PIN_ROOT, 0700) < 0 && errno != EEXIST)
		return fail(err, errno, "creating %s", TETHER_PIN_ROOT);
	if (mkdir(tl_pin_dir(), 0700) < 0 && errno != EEXIST)
		return fail(err, errno, "creating %s", tl_pin_dir());
	return 0;
}

/* Number of parameters of the kernel's bpf_lsm_<hook>, or a negative errno. */
static int hook_arity(const struct btf *vmlinux, const char *hook)
{
	const struct btf_type *t;
	char name[128];
	int id;

	snprintf(name, sizeof(name), "bpf_lsm_%s", hook);
	id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC);
	if (id < 0)
		return id;
	t = btf__type_by_id(vmlinux, btf__type_by_id(vmlinux, id)->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -EINVAL;
}

/* LSM hooks some kernels lack that tether cannot do without, and what provides them. */
static const struct {
	const char *name;
	int arity;
	const char *needs;
} required_hooks[] = {
	{ "userns_create", 1, "Linux 6.1 or later" },
	{ "key_alloc", 3, "CONFIG_KEYS" },
	{ "key_permission", 3, "CONFIG_KEYS" },
	{ "file_fcntl", 3, "any supported kernel" },
	{ "syslog", 1, "any supported kernel" },
	{ "settime", 2, "any supported kernel" },
	{ "ptrace_traceme", 1, "any supported kernel" },
};

/* Kernel functions the fentry/fexit programs attach to (not LSM hooks). */
static const char *const traced_functions[] = { "cap_capable", "security_key_free" };

/*
 * Hooks whose signature changed between supported kernels come as one
 * program per signature, and hooks newer than 6.1 are optional; keep what
 * this kernel has.  Must run right after opening the skeleton, before pins
 * are counted or programs loaded.
 */
static int select_programs(struct fs_bpf *skel, struct tl_error *err)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int arity;

	if (!vmlinux)
		return fail(err, errno, "reading the kernel's BTF (/sys/kernel/btf/vmlinux)");
	arity = hook_arity(vmlinux, "inode_setattr");
	if (arity != 2 && arity != 3) {
		btf__free(vmlinux);
		return fail(err, arity < 0 ? arity : EINVAL,
			    "reading the signature of the inode_setattr LSM hook from kernel BTF");
	}
	/* inode_setattr gained a leading idmap argument in 6.3 */
	bpf_program__set_autoload(skel->progs.tether_inode_setattr_idmap, arity == 3);
	bpf_program__set_autoload(skel->progs.tether_inode_setattr_legacy, arity == 2);
	/* 6.2+: ACLs have hooks of their own; before, they went through setxattr */
	bpf_program__set_autoload(skel->progs.tether_inode_set_acl,
				  hook_arity(vmlinux, "inode_set_acl") == 4);
	bpf_program__set_autoload(skel->progs.tether_inode_remove_acl,
				  hook_arity(vmlinux, "inode_remove_acl") == 3);
	bpf_program__set_autoload(skel->progs.tether_file_ioctl_compat,
				  hook_arity(vmlinux, "file_ioctl_compat") == 3);
	/* the bpf hook gained a `kernel` argument after 6.12 */
	arity = hook_arity(vmlinux, "bpf");
	bpf_program__set_autoload(skel->progs.tether_bpf, arity == 3);
	bpf_program__set_autoload(skel->progs.tether_bpf_kernel, arity == 4);
	if (arity != 3 && arity != 4) {
		btf__free(vmlinux);
		return fail(err, arity < 0 ? arity : EINVAL,
			    "reading the signature of the bpf LSM hook from kernel BTF");
	}
	/* 6.9+: the last close of a file has a hook before release */
	bpf_program__set_autoload(skel->progs.tether_file_release,
				  hook_arity(vmlinux, "file_release") == 1);
	/* 6.2+: ftruncate no longer passes path_truncate */
	bpf_program__set_autoload(skel->progs.tether_file_truncate,
				  hook_arity(vmlinux, "file_truncate") == 1);
	/* perf_event_open lost its attr argument in 6.12 */
	arity = hook_arity(vmlinux, "perf_event_open");
	bpf_program__set_autoload(skel->progs.tether_perf_event_open_attr, arity == 2);
	bpf_program__set_autoload(skel->progs.tether_perf_event_open, arity == 1);
	if (arity != 1 && arity != 2) {
		btf__free(vmlinux);
		return fail(err, arity < 0 ? arity : EINVAL,
			    "reading the signature of the perf_event_open LSM hook from kernel BTF");
	}
	/*
	 * Required, not optional: without them a run could leave through a
	 * user namespace or reach keys outside it.  Said here by name rather
	 * than left to a failed load.
	 */
	for (size_t i = 0; i < sizeof(required_hooks) / sizeof(required_hooks[0]); i++) {
		if (hook_arity(vmlinux, required_hooks[i].name) != required_hooks[i].arity) {
			btf__free(vmlinux);
			return fail(err, ENOTSUP,
				    "this kernel has no %s LSM hook with %d arguments (%s)",
				    required_hooks[i].name, required_hooks[i].arity,
				    required_hooks[i].needs);
		}
	}
	for (size_t i = 0; i < sizeof(traced_functions) / sizeof(traced_functions[0]); i++) {
		if (btf__find_by_name_kind(vmlinux, traced_functions[i], BTF_KIND_FUNC) < 0) {
			btf__free(vmlinux);
			return fail(err, ENOTSUP,
				    "this kernel's BTF has no function %s to trace (fentry/fexit)",
				    traced_functions[i]);
		}
	}
	btf__free(vmlinux);
	return 0;
}

/*
 * Which programs select_programs() kept, pinned as one array map next to
 * the links ("autoload": a byte per program, in the order of the
 * skeleton's program table), so that later controllers need neither read
 * the kernel's BTF nor open the objects (parsing them and the BTF took most
 * of a run's setup).  It is pinned last, after a complete load; without it,
 * or with a set it does not describe, the objects are opened and the BTF
 * decides, as on the first load.
 */
#define AUTOLOAD_PIN	"autoload"
#define AUTOLOAD_MAX	256

/* The objects' program tables, without opening (parsing) the objects. */
struct obj_tables {
	struct fs_bpf *fs;
	struct net_bpf *net;
};

static int tables_open(struct obj_tables *t)
{
	*t = (struct obj_tables){ calloc(1, sizeof(*t->fs)), calloc(1, sizeof(*t->net)) };
	if (!t->fs || !t->net || fs_bpf__create_skeleton(t->fs) || net_bpf__create_skeleton(t->net))
		return -ENOMEM;
	if (t->fs->skeleton->prog_cnt > AUTOLOAD_MAX)
		return -E2BIG;
	return 0;
}

static void tables_close(struct obj_tables *t)
{
	fs_bpf__destroy(t->fs);	/* its object was never opened: frees the tables */
	net_bpf__destroy(t->net);
}

static void pin_autoload(const unsigned char flags[AUTOLOAD_MAX])
{
	char path[256];
	__u32 zero = 0;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, AUTOLOAD_PIN, sizeof(zero), AUTOLOAD_MAX, 1, NULL);
	if (fd < 0)
		return;
	pin_path(path, sizeof(path), "", AUTOLOAD_PIN);
	if (bpf_map_update_elem(fd, &zero, flags, BPF_ANY) == 0)
		bpf_obj_pin(fd, path);
	close(fd);
}

/* The pinned "autoload" record: 0, or -ENOENT when there is none. */
static int read_autoload(unsigned char flags[AUTOLOAD_MAX])
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	char path[256];
	int fd, r;

	pin_path(path, sizeof(path), "", AUTOLOAD_PIN);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -ENOENT;
	r = bpf_obj_get_info_by_fd(fd, &info, &len) || info.value_size != AUTOLOAD_MAX ||
		    bpf_map_lookup_elem(fd, &zero, flags) ? -ENOENT : 0;
	close(fd);
	return r;
}

/*
 * Counts the pins of a complete set: every map above and one link per
 * program, those of fs whose flag is set (select_programs' choice).
 */
static void count_pins(const struct obj_tables *t, const unsigned char *flags, size_t *present,
		       size_t *expected)
{
	const struct bpf_object_skeleton *fs = t->fs->skeleton, *net = t->net->skeleton;
	size_t i;

	*present = *expected = 0;
	for (i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++) {
		(*expected)++;
		*present += pinned("", pinned_maps[i]);
	}
	for (i = 0; i < sizeof(net_pinned_maps) / sizeof(net_pinned_maps[0]); i++) {
		(*expected)++;
		*present += pinned("", net_pinned_maps[i]);
	}
	for (int p = 0; p < fs->prog_cnt; p++) {
		if (!flags[p])
			continue;
		(*expected)++;
		*present += pinned("link_", fs->progs[p].name);
	}
	for (int p = 0; p < net->prog_cnt; p++) {
		(*expected)++;
		*present += pinned("link_", net->progs[p].name);
	}
}

/* select_programs' choice as flags in the fs table's order. */
static void autoload_flags(struct fs_bpf *skel, const struct obj_tables *t,
			   unsigned char flags[AUTOLOAD_MAX])
{
	const struct bpf_object_skeleton *s = t->fs->skeleton;

	memset(flags, 0, AUTOLOAD_MAX);
	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_program *prog = bpf_object__find_program_by_name(skel->obj,
									     s->progs[i].name);

		flags[i] = prog && bpf_program__autoload(prog);
	}
}

static void unpin_all(struct fs_bpf *skel, struct net_bpf *net)
{
	struct bpf_program *prog;
	char path[256];
	size_t i;

	bpf_object__for_each_program(prog, skel->obj) {
		pin_path(path, sizeof(path), "link_", bpf_program__name(prog));
		unlink(path);
	}
	if (net) {
		bpf_object__for_each_program(prog, net->obj) {
			pin_path(path, sizeof(path), "link_", bpf_program__name(prog));
			unlink(path);
		}
	}
	for (i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++) {
		pin_path(path, sizeof(path), "", pinned_maps[i]);
		unlink(path);
	}
	for (i = 0; i < sizeof(net_pinned_maps) / sizeof(net_pinned_maps[0]); i++) {
		pin_path(path, sizeof(path), "", net_pinned_maps[i]);
		unlink(path);
	}
	pin_path(path, sizeof(path), "", AUTOLOAD_PIN);
	unlink(path);
}

int tl_cgroup_id(int dir_fd, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mnt_id;

	if (name_to_handle_at(dir_fd, "", &h.fh, &mnt_id, AT_EMPTY_PATH) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EOPNOTSUPP;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

/*
 * Loads the network programs, sharing `runs` and `audit_rings` when their
 * fds are given, and attaches them to the parent cgroup.  With `pin`, pins
 * links and maps and keeps no link open; without, returns the links.
 */
static int net_load(struct net_bpf *net, uint32_t level, int runs_fd, int rings_fd,
		    int parent_fd, bool pin, struct tl_node *node, struct tl_error *err)
{
	struct bpf_program *prog;
	char path[256];
	size_t n = 0;
	int r;

	net->rodata->run_cgroup_level = level;
	if (runs_fd >= 0 && (bpf_map__reuse_fd(net->maps.runs, runs_fd) ||
			     bpf_map__reuse_fd(net->maps.audit_rings, rings_fd)))
		return fail(err, errno, "sharing the runs map with the network programs");
	r = net_bpf__load(net);
	if (r)
		return fail(err, r, "loading the cgroup-BPF network programs into the kernel");
	if (!pin) {
		bpf_object__for_each_program(prog, net->obj)
			n++;
		node->links = calloc(n, sizeof(*node->links));
		if (!node->links)
			return fail(err, ENOMEM, "allocating links");
	}
	bpf_object__for_each_program(prog, net->obj) {
		struct bpf_link *link = bpf_program__attach_cgroup(prog, parent_fd);

		if (!link)
			return fail(err, errno, "attaching cgroup-BPF program %s",
				    bpf_program__name(prog));
		if (!pin) {
			node->links[node->link_count++] = link;
			continue;
		}
		pin_path(path, sizeof(path), "link_", bpf_program__name(prog));
		r = bpf_link__pin(link, path);
		bpf_link__destroy(link);
		if (r)
			return fail(err, r, "pinning %s", path);
	}
	if (!pin)
		return 0;
	pin_path(path, sizeof(path), "", "net_rules");
	r = bpf_map__pin(net->maps.net_rules, path);
	if (!r) {
		pin_path(path, sizeof(path), "", "net_rodata");
		r = bpf_map__pin(net->maps.rodata, path);
	}
	return r ? fail(err, r, "pinning %s", path) : 0;
}

/*
 * The pinned network links must be attached to this parent cgroup: one
 * removed and made again has another id, and its runs would go unchecked.
 */
static int check_net_links(const struct bpf_object_skeleton *net, int parent_fd,
			   struct tl_error *err)
{
	uint64_t parent_id = 0;
	char path[256];
	int r = tl_cgroup_id(parent_fd, &parent_id);

	if (r)
		return fail(err, r, "reading the cgroup id of the run cgroups' parent");
	for (int p = 0; p < net->prog_cnt; p++) {
		const char *name = net->progs[p].name;
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd;

		pin_path(path, sizeof(path), "link_", name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			return fail(err, errno, "opening pinned link %s", path);
		r = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
		close(fd);
		if (r)
			return fail(err, r, "reading pinned link %s", path);
		if (info.type != BPF_LINK_TYPE_CGROUP || info.cgroup.cgroup_id != parent_id)
			return fail(err, ESTALE,
				    "the pinned network program %s is attached to cgroup %llu, not "
				    "to the run cgroups' parent (%llu), which was made again since; "
				    "when no run is live, reload with: rm -r %s",
				    name,
				    (unsigned long long)info.cgroup.cgroup_id,
				    (unsigned long long)parent_id, tl_pin_dir());
	}
	return 0;
}

/* Loads and attaches every program; pins maps and links when `pin` is set. */
static int load_and_attach(struct fs_bpf *skel, struct net_bpf *net, uint32_t level,
			   int parent_fd, bool pin, struct tl_error *err)
{
	struct bpf_program *prog;
	char path[256];
	size_t i;
	int r;

	skel->rodata->run_cgroup_level = level;
	r = fs_bpf__load(skel);
	if (r)
		return fail(err, r, "loading the BPF-LSM and tracing programs into the kernel");
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;
		link = bpf_program__attach(prog);
		if (!link) {
			r = -errno;
			if (pin)
				unpin_all(skel, net);
			return fail(err, r, "attaching BPF program %s", bpf_program__name(prog));
		}
		if (pin) {
			pin_path(path, sizeof(path), "link_", bpf_program__name(prog));
			r = bpf_link__pin(link, path);
		}
		/* A pinned link stays attached after its fd is closed; an unpinned one detaches. */
		bpf_link__destroy(link);
		if (r) {
			unpin_all(skel, net);
			return fail(err, r, "pinning %s", path);
		}
	}
	if (!pin)
		return 0;
	for (i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++) {
		pin_path(path, sizeof(path), "", pinned_maps[i]);
		r = bpf_map__pin(map_by_pin_name(skel, pinned_maps[i]), path);
		if (r) {
			unpin_all(skel, net);
			return fail(err, r, "pinning %s", path);
		}
	}
	r = net_load(net, level, bpf_map__fd(skel->maps.runs), bpf_map__fd(skel->maps.audit_rings),
		     parent_fd, true, NULL, err);
	if (r)
		unpin_all(skel, net);
	return r;
}

static int open_pinned_map(const char *name, int *fd, struct tl_error *err)
{
	char path[256];

	pin_path(path, sizeof(path), "", name);
	*fd = bpf_obj_get(path);
	if (*fd < 0)
		return fail(err, errno, "opening pinned map %s", path);
	return 0;
}

/* The level the pinned programs were loaded for, read back from their rodata. */
static int pinned_level(uint32_t *level, struct tl_error *err)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	__u32 zero = 0;
	char *value = NULL;
	int fd, r;

	r = open_pinned_map("rodata", &fd, err);
	if (r)
		return r;
	r = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	if (r || info.value_size < offsetof(struct fs_bpf__rodata, run_cgroup_level) + 4) {
		r = fail(err, r ? errno : EINVAL, "reading the pinned programs' settings");
		goto out;
	}
	value = calloc(1, info.value_size);
	if (!value) {
		r = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &zero, value)) {
		r = fail(err, errno, "reading the pinned programs' settings");
		goto out;
	}
	memcpy(level, value + offsetof(struct fs_bpf__rodata, run_cgroup_level), sizeof(*level));
	r = 0;
out:
	free(value);
	close(fd);
	return r;
}

int tl_node_open(uint32_t run_cgroup_level, int parent_cgroup_fd, struct tl_node *node,
		 struct tl_error *err)
{
	unsigned char flags[AUTOLOAD_MAX];
	struct obj_tables tables = { 0 };
	struct net_bpf *net = NULL;
	struct fs_bpf *skel = NULL;
	size_t present = 0, expected = 0;
	bool complete = false;
	uint32_t level = 0;
	int lock_fd = -1;
	int r;

	*node = (struct tl_node){
		.runs_fd = -1, .path_rules_fd = -1, .inode_rules_fd = -1, .audit_rings_fd = -1,
		.ptys_fd = -1, .abstract_fd = -1, .net_rules_fd = -1, .run_keys_fd = -1,
	};
	r = make_pin_dir(err);
	if (r)
		return r;
	/* Serialise first loads: two controllers starting at once load once. */
	lock_fd = open(tl_pin_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock_fd < 0)
		return fail(err, errno, "opening %s", tl_pin_dir());
	/* Bounded: whoever can open the directory can hold its lock. */
	for (int waited_ms = 0; flock(lock_fd, LOCK_EX | LOCK_NB) < 0; waited_ms += 10) {
		if (errno != EWOULDBLOCK || waited_ms >= 10000) {
			r = fail(err, errno == EWOULDBLOCK ? EBUSY : errno,
				 "locking %s (held for 10 s by another process)", tl_pin_dir());
			goto out;
		}
		usleep(10000);
	}
	r = tables_open(&tables);
	if (r) {
		r = fail(err, r, "reading the embedded BPF objects' program tables");
		goto out;
	}
	/*
	 * The fast way, for every run after the first: a complete set pinned in
	 * this boot, with the choice of programs it was loaded with.
	 */
	if (read_autoload(flags) == 0) {
		count_pins(&tables, flags, &present, &expected);
		complete = present == expected;
	}
	if (!complete) {
		skel = fs_bpf__open();
		net = net_bpf__open();
		if (!skel || !net) {
			r = fail(err, errno, "opening the embedded BPF objects");
			goto out;
		}
		r = select_programs(skel, err);
		if (r)
			goto out;
		autoload_flags(skel, &tables, flags);
		count_pins(&tables, flags, &present, &expected);
		if (present == 0) {
			r = load_and_attach(skel, net, run_cgroup_level, parent_cgroup_fd, true, err);
			if (r)
				goto out;
			node->loaded_now = true;
			/* without it later runs open the objects again: slower, not wrong */
			pin_autoload(flags);
		} else if (present != expected) {
			/*
			 * Removing a partial set could detach programs that still
			 * confine live runs; a person has to decide.
			 */
			r = fail(err, EUCLEAN,
				 "%s holds %zu of the %zu pinned objects this tether expects "
				 "(another tether version, or an interrupted load); when no run is "
				 "live, remove it with: rm -r %s",
				 tl_pin_dir(), present, expected, tl_pin_dir());
			goto out;
		}
	}
	r = pinned_level(&level, err);
	if (r)
		goto out;
	if (level != run_cgroup_level) {
		r = fail(err, ESTALE,
			 "the pinned programs expect run cgroups at level %u, this run's is at "
			 "level %u; when no run is live, reload with: rm -r %s",
			 level, run_cgroup_level, tl_pin_dir());
		goto out;
	}
	node->run_cgroup_level = level;
	r = check_net_links(tables.net->skeleton, parent_cgroup_fd, err);
	if (!r)
		r = open_pinned_map("runs", &node->runs_fd, err);
	if (!r)
		r = open_pinned_map("path_rules", &node->path_rules_fd, err);
	if (!r)
		r = open_pinned_map("inode_rules", &node->inode_rules_fd, err);
	if (!r)
		r = open_pinned_map("ptys", &node->ptys_fd, err);
	if (!r)
		r = open_pinned_map("abstract_sockets", &node->abstract_fd, err);
	if (!r)
		r = open_pinned_map("run_keys", &node->run_keys_fd, err);
	if (!r)
		r = open_pinned_map("audit_rings", &node->audit_rings_fd, err);
	if (!r)
		r = open_pinned_map("net_rules", &node->net_rules_fd, err);
out:
	net_bpf__destroy(net);
	fs_bpf__destroy(skel);
	tables_close(&tables);
	if (lock_fd >= 0)
		close(lock_fd);
	if (r)
		tl_node_close(node);
	return r;
}

void tl_node_close(struct tl_node *node)
{
	if (!node)
		return;
	if (node->runs_fd >= 0)
		close(node->runs_fd);
	if (node->path_rules_fd >= 0)
		close(node->path_rules_fd);
	if (node->inode_rules_fd >= 0)
		close(node->inode_rules_fd);
	if (node->ptys_fd >= 0)
		close(node->ptys_fd);
	if (node->abstract_fd >= 0)
		close(node->abstract_fd);
	if (node->audit_rings_fd >= 0)
		close(node->audit_rings_fd);
	if (node->net_rules_fd >= 0)
		close(node->net_rules_fd);
	if (node->run_keys_fd >= 0)
		close(node->run_keys_fd);
	node->runs_fd = node->path_rules_fd = node->inode_rules_fd = node->audit_rings_fd = -1;
	node->ptys_fd = node->abstract_fd = node->net_rules_fd = node->run_keys_fd = -1;
	for (size_t i = 0; i < node->link_count; i++)
		bpf_link__destroy(node->links[i]);
	free(node->links);
	node->links = NULL;
	node->link_count = 0;
	net_bpf__destroy(node->net_skel);
	node->net_skel = NULL;
}

int tl_net_open_unpinned(uint32_t run_cgroup_level, int parent_cgroup_fd, struct tl_node *node,
			 struct tl_error *err)
{
	struct net_bpf *net;
	int r;

	*node = (struct tl_node){
		.runs_fd = -1, .path_rules_fd = -1, .inode_rules_fd = -1, .audit_rings_fd = -1,
		.ptys_fd = -1, .abstract_fd = -1, .net_rules_fd = -1, .run_keys_fd = -1,
	};
	net = net_bpf__open();
	if (!net)
		return fail(err, errno, "opening the embedded network BPF object");
	node->net_skel = net;
	r = net_load(net, run_cgroup_level, -1, -1, parent_cgroup_fd, false, node, err);
	if (!r) {
		node->runs_fd = dup(bpf_map__fd(net->maps.runs));
		node->audit_rings_fd = dup(bpf_map__fd(net->maps.audit_rings));
		node->net_rules_fd = dup(bpf_map__fd(net->maps.net_rules));
		if (node->runs_fd < 0 || node->audit_rings_fd < 0 || node->net_rules_fd < 0)
			r = fail(err, errno, "duplicating map fds");
	}
	node->run_cgroup_level = run_cgroup_level;
	if (r)
		tl_node_close(node);
	return r;
}

int tl_probe_lsm(struct tl_error *err)
{
	struct fs_bpf *skel = fs_bpf__open();
	int r;

	if (!skel)
		return fail(err, errno, "opening the embedded BPF object");
	/* Level 0 is the root cgroup, which is never a run: the probe confines nothing. */
	r = select_programs(skel, err);
	if (!r)
		r = load_and_attach(skel, NULL, 0, -1, false, err);
	fs_bpf__destroy(skel);
	return r;
}

int tl_path_key(uint32_t run_slot, const char *path, struct tether_path_key *key)
{
	size_t len = strlen(path);

	if (len == 0 || path[0] != '/' || (len > 1 && path[len - 1] == '/'))
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	key->run_slot = run_slot;
	if (len == 1) {
		key->path[0] = '/';
		key->prefixlen = 32 + 8;
		return 0;
	}
	if (len + 1 > TETHER_PATH_KEY_MAX)
		return -ENAMETOOLONG;
	memcpy(key->path, path, len);
	key->path[len] = '/';
	key->prefixlen = 32 + 8 * (uint32_t)(len + 1);
	return 0;
}

static int claim_slot(struct tl_node *node, struct tl_run *run, struct tl_error *err)
{
	uint32_t i, slot;

	for (i = 0; i < TETHER_MAX_RUNS; i++) {
		slot = 1 + (uint32_t)((run->cgroup_id + i) % TETHER_MAX_RUNS);
		/* BPF_NOEXIST makes the claim atomic between concurrent controllers. */
		if (bpf_map_update_elem(node->audit_rings_fd, &slot, &run->ring_fd,
					BPF_NOEXIST) == 0) {
			run->run_slot = slot;
			return 0;
		}
		if (errno != EEXIST)
			return fail(err, errno, "registering the audit ring of run slot %u", slot);
	}
	return fail(err, EBUSY, "all %u run slots are in use", TETHER_MAX_RUNS);
}

/* The kernel's dev_t encoding (MKDEV) of a userspace st_dev. */
static uint32_t kernel_dev(dev_t dev)
{
	return (uint32_t)((major(dev) << 20) | minor(dev));
}

static int path_compare(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Cuts an absolute path to its parent in place ("/a/b" -> "/a" -> "/"); false at "/". */
static bool path_parent(char *path, size_t *len)
{
	size_t n = *len;

	if (n <= 1)
		return false;
	while (n > 1 && path[n - 1] != '/')
		n--;
	n = n > 1 ? n - 1 : 1;
	path[n] = '\0';
	*len = n;
	return true;
}

/*
 * Whether a proper ancestor of `path` (on component boundaries) is in
 * `writable`, sorted: then `path` is a carve-out below a writable tree.
 */
static bool below_writable(const char *path, const char **writable, size_t count)
{
	char prefix[TETHER_PATH_KEY_MAX + 1];
	size_t len = strlen(path);

	if (!count || len >= sizeof(prefix))
		return false;
	memcpy(prefix, path, len + 1);
	while (path_parent(prefix, &len)) {
		const char *key = prefix;

		if (bsearch(&key, writable, count, sizeof(*writable), path_compare))
			return true;
	}
	return false;
}

/*
 * Hooks without a mount (xattrs, ACLs, timestamps) decide by inode identity:
 * the nearest ancestor entered here decides.  Rules that grant write are
 * entered, and so are the rules below them that do not (a denied or
 * read-only subtree inside a writable one), so a carve-out is not writable
 * through these hooks either.
 */
static int install_inode_rule(struct tl_node *node, struct tl_run *run, struct tl_run_rule *rr,
			      const struct tether_path_rule *rule, const char **writable,
			      size_t writable_count, struct tl_error *err)
{
	struct tether_inode_key ikey = { .run_slot = run->run_slot };
	struct stat st;

	if (!(rule->access & TETHER_ACCESS_WRITE) &&
	    !below_writable(rr->path, writable, writable_count))
		return 0;
	/*
	 * A rule for a path that does not exist yet has no identity to enter.
	 * lstat: a symlink swapped in since the path was checked must not move
	 * the rule to the link's target.
	 */
	if (lstat(rr->path, &st) < 0)
		return errno == ENOENT ? 0 : fail(err, errno, "lstat %s", rr->path);
	if (S_ISLNK(st.st_mode))
		return 0;
	ikey.dev = kernel_dev(st.st_dev);
	ikey.ino = st.st_ino;
	if (bpf_map_update_elem(node->inode_rules_fd, &ikey, rule, BPF_ANY))
		return fail(err, errno, "writing the inode rule of %s", rr->path);
	rr->has_inode = true;
	rr->dev = ikey.dev;
	rr->ino = ikey.ino;
	return 0;
}

struct rule_ref {
	const char *path;
	size_t index;
};

static int rule_ref_compare(const void *a, const void *b)
{
	return strcmp(((const struct rule_ref *)a)->path, ((const struct rule_ref *)b)->path);
}

static int pin_add(struct tl_run *run, uint32_t dev, uint64_t ino)
{
	struct tl_run_pin *pins;

	for (size_t i = 0; i < run->pin_count; i++)
		if (run->pins[i].dev == dev && run->pins[i].ino == ino)
			return 0;
	pins = realloc(run->pins, (run->pin_count + 1) * sizeof(*pins));
	if (!pins)
		return -ENOMEM;
	run->pins = pins;
	run->pins[run->pin_count++] = (struct tl_run_pin){ .dev = dev, .ino = ino };
	return 0;
}

/*
 * A carve-out (a rule without write below a writable one: a denied path, an
 * input) holds only while its path does, and renaming a directory above it
 * would carry it out of its rule.  Every existing directory between a
 * carve-out and "/" gets an inode rule marked TETHER_ACCESS_PINNED, with the
 * access and rule id of the rule that covers it, so the decisions made by
 * inode identity (xattrs, timestamps) stay as they were; the rename, unlink
 * and rmdir hooks refuse to move or remove a pinned directory.
 */
static int pin_carve_outs(struct tl_node *node, struct tl_run *run,
			  const struct tl_path_rule *rules, size_t rule_count,
			  const char **writable, size_t writable_count, struct tl_error *err)
{
	struct rule_ref *refs = calloc(rule_count + 1, sizeof(*refs));
	char prefix[TETHER_PATH_KEY_MAX + 1];
	int r = 0;

	if (!refs)
		return fail(err, ENOMEM, "pinning carve-outs");
	for (size_t i = 0; i < rule_count; i++)
		refs[i] = (struct rule_ref){ rules[i].path, i };
	qsort(refs, rule_count, sizeof(*refs), rule_ref_compare);

	for (size_t i = 0; i < rule_count && r == 0; i++) {
		size_t len = strlen(rules[i].path);

		if ((rules[i].access & TETHER_ACCESS_WRITE) || len >= sizeof(prefix) ||
		    !below_writable(rules[i].path, writable, writable_count))
			continue;
		memcpy(prefix, rules[i].path, len + 1);
		while (r == 0 && path_parent(prefix, &len) && len > 1) {
			struct tether_inode_key ikey = { .run_slot = run->run_slot };
			struct tether_path_rule value = { 0 };
			const struct rule_ref *cover = NULL;
			char up[TETHER_PATH_KEY_MAX + 1];
			size_t up_len = len;
			struct stat st;

			if (lstat(prefix, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			/* The rule the kernel applies here: the longest rule path at or above. */
			memcpy(up, prefix, len + 1);
			do {
				struct rule_ref key = { up, 0 };

				cover = bsearch(&key, refs, rule_count, sizeof(*refs), rule_ref_compare);
			} while (!cover && path_parent(up, &up_len));
			if (!cover)
				continue;
			ikey.dev = kernel_dev(st.st_dev);
			ikey.ino = st.st_ino;
			/* A rule's own inode entry keeps its access; it only gains the pin. */
			if (bpf_map_lookup_elem(node->inode_rules_fd, &ikey, &value)) {
				value.access = rules[cover->index].access;
				value.rule_id = (__u32)cover->index;
			}
			value.access |= TETHER_ACCESS_PINNED;
			if (bpf_map_update_elem(node->inode_rules_fd, &ikey, &value, BPF_ANY))
				r = fail(err, errno, "pinning %s", prefix);
			else if ((r = pin_add(run, ikey.dev, ikey.ino)))
				r = fail(err, -r, "pinning %s", prefix);
		}
	}
	free(refs);
	return r;
}

int tl_run_install(struct tl_node *node, uint64_t cgroup_id, uint32_t mode, uint32_t run_flags,
		   const struct tl_path_rule *rules, size_t rule_count,
		   char *const *abstract_sockets, size_t abstract_count,
		   const struct tl_run_net *net, struct tl_run *run, struct tl_error *err)
{
	struct tether_run value = {};
	struct tether_path_key key;
	struct tether_path_rule rule;
	const char **writable;
	size_t i, writable_count = 0;
	int r;

	*run = (struct tl_run){ .cgroup_id = cgroup_id, .ring_fd = -1 };
	if (mode != TETHER_MODE_ENFORCE && mode != TETHER_MODE_AUDIT)
		return fail(err, EINVAL, "unknown run mode %u", mode);
	run->rules = calloc(rule_count ? rule_count : 1, sizeof(*run->rules));
	writable = calloc(rule_count ? rule_count : 1, sizeof(*writable));
	if (!run->rules || !writable) {
		free(writable);
		free(run->rules);
		run->rules = NULL;
		return fail(err, ENOMEM, "allocating the run's rule list");
	}
	for (i = 0; i < rule_count; i++)
		if (rules[i].access & TETHER_ACCESS_WRITE)
			writable[writable_count++] = rules[i].path;
	qsort(writable, writable_count, sizeof(*writable), path_compare);
	run->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "tether_audit", 0, 0,
				      TETHER_AUDIT_RING_BYTES, NULL);
	if (run->ring_fd < 0) {
		r = fail(err, errno, "creating the run's audit ring buffer");
		goto fail;
	}
	r = claim_slot(node, run, err);
	if (r)
		goto fail;
	for (i = 0; i < rule_count; i++) {
		r = tl_path_key(run->run_slot, rules[i].path, &key);
		if (r) {
			r = fail(err, r, "path rule %zu (%s)", i, rules[i].path);
			goto fail;
		}
		rule = (struct tether_path_rule){ .access = rules[i].access, .rule_id = (__u32)i };
		if (bpf_map_update_elem(node->path_rules_fd, &key, &rule, BPF_ANY)) {
			r = fail(err, errno, "writing path rule %zu (%s)", i, rules[i].path);
			goto fail;
		}
		run->rules[i].path = strdup(rules[i].path);
		if (!run->rules[i].path) {
			bpf_map_delete_elem(node->path_rules_fd, &key);
			r = fail(err, ENOMEM, "copying path rule %zu", i);
			goto fail;
		}
		run->rule_count = i + 1;
		r = install_inode_rule(node, run, &run->rules[i], &rule, writable, writable_count,
				       err);
		if (r)
			goto fail;
	}
	r = pin_carve_outs(node, run, rules, rule_count, writable, writable_count, err);
	if (r)
		goto fail;
	for (i = 0; i < abstract_count; i++) {
		struct tether_abstract_key akey = { .run_slot = run->run_slot };
		size_t len = strlen(abstract_sockets[i]);
		__u8 one = 1;

		if (len == 0 || len > TETHER_ABSTRACT_NAME_MAX) {
			r = fail(err, EINVAL, "abstract socket name %zu is %zu bytes long", i, len);
			goto fail;
		}
		akey.len = (__u32)len;
		memcpy(akey.name, abstract_sockets[i], len);
		if (bpf_map_update_elem(node->abstract_fd, &akey, &one, BPF_ANY)) {
			r = fail(err, errno, "writing abstract socket name %zu", i);
			goto fail;
		}
	}
	for (i = 0; net && i < net->count; i++) {
		r = tl_run_net_write(node, run, &net->entries[i], err);
		if (r)
			goto fail;
	}
	/* Last: from here on every hook in the run's cgroup enforces the rules above. */
	value.run_slot = run->run_slot;
	value.mode = mode;
	value.flags = run_flags;
	if (net) {
		value.egress_max = net->egress_max;
		value.dns_port4 = net->dns_port4;
		value.dns_port6 = net->dns_port6;
	}
	if (bpf_map_update_elem(node->runs_fd, &cgroup_id, &value, BPF_NOEXIST)) {
		r = fail(err, errno, "registering run cgroup %llu", (unsigned long long)cgroup_id);
		goto fail;
	}
	run->active = true;
	free(writable);
	return 0;
fail:
	free(writable);
	tl_run_remove(node, run, NULL);
	tl_run_free(run);
	return r;
}

int tl_run_net_write(struct tl_node *node, const struct tl_run *run,
		     const struct tl_net_entry *entry, struct tl_error *err)
{
	struct tether_net_key key = { .prefixlen = 32 + entry->prefixlen, .run_slot = run->run_slot };
	char text[64] = "";

	if (entry->prefixlen > 128 || entry->rule.tcp_count > TETHER_NET_PORT_RANGES ||
	    entry->rule.udp_count > TETHER_NET_PORT_RANGES)
		return fail(err, EINVAL, "address rule out of range (prefix %u, %u and %u port "
			    "ranges)", entry->prefixlen, entry->rule.tcp_count, entry->rule.udp_count);
	memcpy(key.addr, entry->addr, 16);
	if (bpf_map_update_elem(node->net_rules_fd, &key, &entry->rule, BPF_ANY) == 0)
		return 0;
	for (int i = 0; i < 16; i += 2)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%02x%02x",
			 i ? ":" : "", entry->addr[i], entry->addr[i + 1]);
	return fail(err, errno, "writing address rule %s/%u", text, entry->prefixlen);
}

int tl_run_counters(struct tl_node *node, const struct tl_run *run, struct tl_run_counters *c)
{
	struct tether_run value;

	if (!run->active)
		return -ENOENT;
	if (bpf_map_lookup_elem(node->runs_fd, &run->cgroup_id, &value))
		return -errno;
	*c = (struct tl_run_counters){
		.seq = value.seq,
		.audit_lost = value.audit_lost,
		.egress_bytes = value.egress_bytes,
		.egress_exhausted = value.net_state & TETHER_NET_BUDGET_REPORTED,
		.ingress_dropped = value.ingress_dropped,
	};
	return 0;
}

static int delete_slot_keys(int fd, size_t key_size, size_t slot_offset, uint32_t slot);
static int delete_run_keys(int fd, uint64_t cgroup_id);

int tl_run_remove(struct tl_node *node, struct tl_run *run, struct tl_error *err)
{
	struct tether_path_key key;
	int first = 0;
	size_t i;

	if (run->active) {
		if (bpf_map_delete_elem(node->runs_fd, &run->cgroup_id) && errno != ENOENT)
			first = fail(err, errno, "removing run cgroup %llu from the runs map",
				     (unsigned long long)run->cgroup_id);
		run->active = false;
	}
	{
		int r = delete_run_keys(node->run_keys_fd, run->cgroup_id);

		if (r && !first)
			first = fail(err, r, "removing the keys of run cgroup %llu",
				     (unsigned long long)run->cgroup_id);
	}
	for (i = 0; i < run->rule_count; i++) {
		struct tl_run_rule *rr = &run->rules[i];

		if (rr->has_inode) {
			struct tether_inode_key ikey = {
				.run_slot = run->run_slot, .dev = rr->dev, .ino = rr->ino
			};

			if (bpf_map_delete_elem(node->inode_rules_fd, &ikey) && errno != ENOENT &&
			    !first)
				first = fail(err, errno, "removing the inode rule of %s", rr->path);
		}
		if (tl_path_key(run->run_slot, rr->path, &key))
			continue;
		if (bpf_map_delete_elem(node->path_rules_fd, &key) && errno != ENOENT && !first)
			first = fail(err, errno, "removing path rule %s", rr->path);
	}
	for (i = 0; i < run->pin_count; i++) {
		struct tether_inode_key ikey = {
			.run_slot = run->run_slot, .dev = run->pins[i].dev, .ino = run->pins[i].ino
		};

		if (bpf_map_delete_elem(node->inode_rules_fd, &ikey) && errno != ENOENT && !first)
			first = fail(err, errno, "removing a pin of run slot %u", run->run_slot);
	}
	run->pin_count = 0;
	for (i = 0; i < run->rule_count; i++)
		free(run->rules[i].path);
	run->rule_count = 0;
	if (run->run_slot) {
		/* the runs entry is gone: no process of the run can enter a pty now */
		int r = delete_slot_keys(node->ptys_fd, sizeof(struct tether_pty_key),
					 offsetof(struct tether_pty_key, run_slot), run->run_slot);

		if (r && !first)
			first = fail(err, r, "removing the ptys of run slot %u", run->run_slot);
		r = delete_slot_keys(node->abstract_fd, sizeof(struct tether_abstract_key),
				     offsetof(struct tether_abstract_key, run_slot), run->run_slot);
		if (r && !first)
			first = fail(err, r, "removing the abstract socket names of run slot %u",
				     run->run_slot);
		r = delete_slot_keys(node->net_rules_fd, sizeof(struct tether_net_key),
				     offsetof(struct tether_net_key, run_slot), run->run_slot);
		if (r && !first)
			first = fail(err, r, "removing the address rules of run slot %u",
				     run->run_slot);
		/*
		 * A slot whose entries did not all go stays claimed: the next run
		 * to claim it would inherit them.  It is lost until the pins are
		 * reloaded, which is the safe way to fail.
		 */
		if (!first && bpf_map_delete_elem(node->audit_rings_fd, &run->run_slot) &&
		    errno != ENOENT)
			first = fail(err, errno, "releasing run slot %u", run->run_slot);
		run->run_slot = 0;
	}
	return first;
}

void tl_run_free(struct tl_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->rule_count; i++)
		free(run->rules[i].path);
	free(run->rules);
	run->rules = NULL;
	run->rule_count = 0;
	free(run->pins);
	run->pins = NULL;
	run->pin_count = 0;
	if (run->ring_fd >= 0)
		close(run->ring_fd);
	run->ring_fd = -1;
}

/*
 * Deletes every entry of map `fd` (keys of key_size bytes) for which
 * match(fd, key, arg) holds.  Keys are collected first: deleting while
 * walking with get_next_key could skip entries.
 */
static int delete_keys_if(int fd, size_t key_size,
			  bool (*match)(int fd, const void *key, const void *arg), const void *arg)
{
	unsigned char *keys = NULL, *cur = NULL, *next;
	size_t count = 0, cap = 0;
	int r = 0;

	next = calloc(1, key_size);
	if (!next)
		return -ENOMEM;
	while (bpf_map_get_next_key(fd, cur, next) == 0) {
		if (match(fd, next, arg)) {
			if (count == cap) {
				unsigned char *grown;

				cap = cap ? 2 * cap : 64;
				grown = realloc(keys, cap * key_size);
				if (!grown) {
					r = -ENOMEM;
					goto out;
				}
				keys = grown;
			}
			memcpy(keys + count * key_size, next, key_size);
			count++;
		}
		if (!cur) {
			cur = malloc(key_size);
			if (!cur) {
				r = -ENOMEM;
				goto out;
			}
		}
		memcpy(cur, next, key_size);
	}
	for (size_t i = 0; i < count; i++)
		if (bpf_map_delete_elem(fd, keys + i * key_size) && errno != ENOENT && !r)
			r = -errno;
out:
	free(keys);
	free(cur);
	free(next);
	return r;
}

struct slot_match {
	size_t offset;		/* of the run slot in the key */
	uint32_t slot;
};

static bool key_has_slot(int fd, const void *key, const void *arg)
{
	const struct slot_match *m = arg;
	uint32_t slot;

	(void)fd;
	memcpy(&slot, (const unsigned char *)key + m->offset, sizeof(slot));
	return slot == m->slot;
}

/* Every key whose run slot, a u32 at slot_offset, equals `slot`. */
static int delete_slot_keys(int fd, size_t key_size, size_t slot_offset, uint32_t slot)
{
	struct slot_match m = { slot_offset, slot };

	return delete_keys_if(fd, key_size, key_has_slot, &m);
}

static bool value_is_cgroup(int fd, const void *key, const void *arg)
{
	uint64_t owner;

	return bpf_map_lookup_elem(fd, key, &owner) == 0 && owner == *(const uint64_t *)arg;
}

/*
 * The keys a run allocated (run_keys: key address -> run cgroup id).  They
 * leave the map when the kernel frees them, which for a run's keyrings is
 * soon after its last process; removing them with the run leaves nothing
 * behind at once.  No run can reach them either way: cgroup ids are not
 * reused.  -1 (tl_net_open_unpinned's node): nothing to remove.
 */
static int delete_run_keys(int fd, uint64_t cgroup_id)
{
	if (fd < 0)
		return 0;
	return delete_keys_if(fd, sizeof(uint64_t), value_is_cgroup, &cgroup_id);
}

int tl_run_reclaim(struct tl_node *node, uint64_t cgroup_id, struct tl_error *err)
{
	struct tether_run value;
	int r;

	if (bpf_map_lookup_elem(node->runs_fd, &cgroup_id, &value))
		return errno == ENOENT ? -ENOENT : fail(err, errno, "looking up run cgroup %llu",
							  (unsigned long long)cgroup_id);
	if (bpf_map_delete_elem(node->runs_fd, &cgroup_id) && errno != ENOENT)
		return fail(err, errno, "removing run cgroup %llu", (unsigned long long)cgroup_id);
	r = delete_run_keys(node->run_keys_fd, cgroup_id);
	if (!r)
		r = delete_slot_keys(node->path_rules_fd, sizeof(struct tether_path_key),
				     offsetof(struct tether_path_key, run_slot), value.run_slot);
	if (!r)
		r = delete_slot_keys(node->inode_rules_fd, sizeof(struct tether_inode_key),
				     offsetof(struct tether_inode_key, run_slot), value.run_slot);
	if (!r)
		r = delete_slot_keys(node->ptys_fd, sizeof(struct tether_pty_key),
				     offsetof(struct tether_pty_key, run_slot), value.run_slot);
	if (!r)
		r = delete_slot_keys(node->abstract_fd, sizeof(struct tether_abstract_key),
				     offsetof(struct tether_abstract_key, run_slot), value.run_slot);
	if (!r)
		r = delete_slot_keys(node->net_rules_fd, sizeof(struct tether_net_key),
				     offsetof(struct tether_net_key, run_slot), value.run_slot);
	if (r)
		return fail(err, r, "removing the rules of run slot %u", value.run_slot);
	if (bpf_map_delete_elem(node->audit_rings_fd, &value.run_slot) && errno != ENOENT)
		return fail(err, errno, "releasing run slot %u", value.run_slot);
	return 0;
}

int tl_runs_list(struct tl_node *node, uint64_t **ids, size_t *count)
{
	uint64_t *list = NULL, key, prev;
	size_t n = 0;

	while (bpf_map_get_next_key(node->runs_fd, n ? &prev : NULL, &key) == 0) {
		uint64_t *grown = realloc(list, (n + 1) * sizeof(*list));

		if (!grown) {
			free(list);
			return -ENOMEM;
		}
		list = grown;
		list[n++] = key;
		prev = key;
	}
	*ids = list;
	*count = n;
	return 0;
}
