// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/abi/rules.h"
#include "bpf/exit.skel.h"
#include "bpf/fs.skel.h"
#include "bpf/kernel.skel.h"
#include "bpf/net.skel.h"
#include "bpf/pin_id.h"
#include "bpf/proc.skel.h"
#include "bpf/sock.skel.h"
#include "common/cleanup.h"
#include "loader/loader.h"

#define BPF_FS_MAGIC 0xcafe4a11

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
 * What the loader needs of one generated skeleton, behind one type: the
 * skeletons are distinct structs, and everything below works on any of them.
 * SKEL_OPS(x) writes the functions for x.skel.h.
 */
struct skel_ops {
	const void *(*elf_bytes)(size_t *size);
	void *(*open)(void);
	int (*load)(void *skel);
	void (*destroy)(void *skel);
	struct bpf_object *(*object)(void *skel);
	struct bpf_map *(*rodata)(void *skel);
	void (*set_level)(void *skel, uint32_t level);
	/* the program table alone, without parsing the object: freed by destroy */
	void *(*tables)(void);
	const struct bpf_object_skeleton *(*table)(void *skel);
	size_t level_offset;	/* of run_cgroup_level in the object's rodata */
};

#define SKEL_OPS(x)                                                                        \
	static const void *x##_elf_bytes(size_t *size)                                     \
	{                                                                                  \
		return x##_bpf__elf_bytes(size);                                           \
	}                                                                                  \
	static void *x##_open(void)                                                        \
	{                                                                                  \
		return x##_bpf__open();                                                    \
	}                                                                                  \
	static int x##_load(void *skel)                                                    \
	{                                                                                  \
		return x##_bpf__load(skel);                                                \
	}                                                                                  \
	static void x##_destroy(void *skel)                                                \
	{                                                                                  \
		x##_bpf__destroy(skel);                                                    \
	}                                                                                  \
	static struct bpf_object *x##_object(void *skel)                                   \
	{                                                                                  \
		return ((struct x##_bpf *)skel)->obj;                                      \
	}                                                                                  \
	static struct bpf_map *x##_rodata(void *skel)                                      \
	{                                                                                  \
		return ((struct x##_bpf *)skel)->maps.rodata;                              \
	}                                                                                  \
	static void x##_set_level(void *skel, uint32_t level)                              \
	{                                                                                  \
		((struct x##_bpf *)skel)->rodata->run_cgroup_level = level;                \
	}                                                                                  \
	static void *x##_tables(void)                                                      \
	{                                                                                  \
		struct x##_bpf *skel = calloc(1, sizeof(*skel));                           \
                                                                                           \
		if (skel && x##_bpf__create_skeleton(skel)) {                              \
			x##_bpf__destroy(skel);                                            \
			skel = NULL;                                                       \
		}                                                                          \
		return skel;                                                               \
	}                                                                                  \
	static const struct bpf_object_skeleton *x##_table(void *skel)                     \
	{                                                                                  \
		return ((struct x##_bpf *)skel)->skeleton;                                 \
	}                                                                                  \
	static const struct skel_ops x##_ops = {                                           \
		x##_elf_bytes, x##_open,   x##_load,	 x##_destroy, x##_object, x##_rodata, \
		x##_set_level, x##_tables, x##_table,                                      \
		offsetof(struct x##_bpf__rodata, run_cgroup_level),                        \
	}

SKEL_OPS(fs);
SKEL_OPS(proc);
SKEL_OPS(exit);
SKEL_OPS(kernel);
SKEL_OPS(sock);
SKEL_OPS(net);

/*
 * A program that exists in one variant per hook signature (or only on some
 * kernels): loaded when the kernel's bpf_lsm_<hook> has `arity` parameters.
 * `required`: a kernel where no variant of the hook matches is refused,
 * with the hook named.
 */
struct hook_variant {
	const char *prog;
	const char *hook;
	int arity;
	bool required;
};

/* An LSM hook some kernels lack that tether cannot do without. */
struct required_hook {
	const char *name;
	int arity;
	const char *needs;
};

enum attach_kind {
	ATTACH_TRACING,	/* BPF-LSM, fentry, fexit, tp_btf: bpf_program__attach */
	ATTACH_CGROUP,	/* cgroup-BPF: attached to the run cgroups' parent */
};

static const struct hook_variant fs_variants[] = {
	/* inode_setattr gained a leading idmap argument in 6.3 */
	{ "tether_inode_setattr_idmap", "inode_setattr", 3, true },
	{ "tether_inode_setattr_legacy", "inode_setattr", 2, true },
	/* 6.2+: ACLs have hooks of their own; before, they went through setxattr */
	{ "tether_inode_set_acl", "inode_set_acl", 4, false },
	{ "tether_inode_remove_acl", "inode_remove_acl", 3, false },
	{ "tether_file_ioctl_compat", "file_ioctl_compat", 3, false },
	/* 6.9+: the last close of a file has a hook before release */
	{ "tether_file_release", "file_release", 1, false },
	/* 6.2+: ftruncate no longer passes path_truncate */
	{ "tether_file_truncate", "file_truncate", 1, false },
	{ NULL },
};

static const struct hook_variant kernel_variants[] = {
	/* the bpf hook gained a `kernel` argument after 6.12 */
	{ "tether_bpf", "bpf", 3, true },
	{ "tether_bpf_kernel", "bpf", 4, true },
	/* perf_event_open lost its attr argument in 6.12 */
	{ "tether_perf_event_open_attr", "perf_event_open", 2, true },
	{ "tether_perf_event_open", "perf_event_open", 1, true },
	{ NULL },
};

/*
 * Required, not optional: without them a run could leave through a user
 * namespace or reach keys outside it.  Said by name rather than left to a
 * failed load.
 */
static const struct required_hook proc_required[] = {
	{ "userns_create", 1, "Linux 6.1 or later" },
	{ "key_alloc", 3, "CONFIG_KEYS" },
	{ "key_permission", 3, "CONFIG_KEYS" },
	{ "file_fcntl", 3, "any supported kernel" },
	{ "ptrace_traceme", 1, "any supported kernel" },
	{ NULL },
};

static const struct required_hook kernel_required[] = {
	{ "syslog", 1, "any supported kernel" },
	{ "settime", 2, "any supported kernel" },
	/* userfaultfd and io_uring instances: refused by this hook alone */
	{ "inode_init_security_anon", 3, "Linux 5.12 or later" },
	{ NULL },
};

/* Kernel functions the fentry/fexit programs attach to (not LSM hooks). */
/* may_open: the kernel's own permission check of opens and execs (fs.bpf.c) */
static const char *const fs_traced[] = { "may_open", NULL };
static const char *const proc_traced[] = { "security_key_free", NULL };
static const char *const kernel_traced[] = { "cap_capable", NULL };

/*
 * The BPF objects, one per concern (bpf/NAME.bpf.c).  Adding one is a row
 * here and a SKEL_OPS line above.  Its links are pinned as link_<program>
 * (program names are unique across objects), its rodata as rodata_<name>;
 * the shared maps below are created once and given to every object.  `lsm`:
 * the object needs BPF-LSM or fentry (tl_net_open_unpinned leaves it out).
 */
static const struct bpf_object_row {
	const char *name;
	const struct skel_ops *ops;
	enum attach_kind attach;
	bool lsm;
	const struct hook_variant *variants;
	const struct required_hook *required;
	const char *const *traced;
} objects[] = {
	{ "fs", &fs_ops, ATTACH_TRACING, true, fs_variants, NULL, fs_traced },
	{ "proc", &proc_ops, ATTACH_TRACING, true, NULL, proc_required, proc_traced },
	/* tp_btf, no LSM hook; but not a network object (tl_net_open_unpinned) */
	{ "exit", &exit_ops, ATTACH_TRACING, true, NULL, NULL, NULL },
	{ "kernel", &kernel_ops, ATTACH_TRACING, true, kernel_variants, kernel_required,
	  kernel_traced },
	{ "sock", &sock_ops, ATTACH_TRACING, true, NULL, NULL, NULL },
	{ "net", &net_ops, ATTACH_CGROUP, false, NULL, NULL, NULL },
};
#define OBJECT_COUNT (sizeof(objects) / sizeof(objects[0]))
/* The object whose rodata says which cgroup level the pinned set serves. */
#define LEVEL_OBJECT 0

/*
 * The maps of bpf/lib/maps.h, shared by every object and pinned once;
 * `node_fd` is where tl_node keeps its fd (-1: userspace needs none).
 */
static const struct shared_map {
	const char *name;
	ptrdiff_t node_fd;
} shared_maps[] = {
	{ "runs", offsetof(struct tl_node, runs_fd) },
	{ "run_seq", offsetof(struct tl_node, run_seq_fd) },
	{ "audit_rings", offsetof(struct tl_node, audit_rings_fd) },
	{ "run_slots", offsetof(struct tl_node, run_slots_fd) },
	{ "ring_ids", offsetof(struct tl_node, ring_ids_fd) },
	{ "path_rules", offsetof(struct tl_node, path_rules_fd) },
	{ "inode_rules", offsetof(struct tl_node, inode_rules_fd) },
	{ "ptys", offsetof(struct tl_node, ptys_fd) },
	{ "abstract_sockets", offsetof(struct tl_node, abstract_fd) },
	{ "run_keys", offsetof(struct tl_node, run_keys_fd) },
	{ "net_rules", offsetof(struct tl_node, net_rules_fd) },
	{ "run_exit", offsetof(struct tl_node, run_exit_fd) },
	{ "walk_scratch", -1 },
};
#define SHARED_MAP_COUNT (sizeof(shared_maps) / sizeof(shared_maps[0]))

static int *node_fd(struct tl_node *node, const struct shared_map *m)
{
	return (int *)((char *)node + m->node_fd);
}

static void node_init(struct tl_node *node)
{
	*node = (struct tl_node){ 0 };
	for (size_t i = 0; i < SHARED_MAP_COUNT; i++)
		if (shared_maps[i].node_fd >= 0)
			*node_fd(node, &shared_maps[i]) = -1;
}

/* The set's directory: named by the objects' digest, which the build writes (Makefile). */
const char *tl_pin_dir(void)
{
	return TETHER_PIN_ROOT "/" TL_PIN_ID;
}

static void pin_path(char *buf, size_t len, const char *prefix, const char *name)
{
	snprintf(buf, len, "%s/%s%s", tl_pin_dir(), prefix, name);
}

/* The names in the pin directory, sorted: one listing instead of a lookup per pin. */
struct pin_list {
	char **names;
	size_t count;
	bool listed;	/* false: the listing failed; each name is looked up instead */
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void pin_list_free(struct pin_list *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->names[i]);
	free(l->names);
	*l = (struct pin_list){ 0 };
}

/* Lists dir_fd (the open pin directory) from its start; on failure l->listed stays false. */
static void pin_list_read(struct pin_list *l, int dir_fd)
{
	size_t cap = 0;
	struct dirent *de;
	DIR *dir;
	int fd;

	*l = (struct pin_list){ 0 };
	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((errno = 0, de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (l->count == cap) {
			char **nv = realloc(l->names, (cap = cap ? 2 * cap : 64) * sizeof(*nv));

			if (!nv)
				goto fail;
			l->names = nv;
		}
		if (!(l->names[l->count] = strdup(de->d_name)))
			goto fail;
		l->count++;
	}
	if (errno)
		goto fail;
	closedir(dir);
	qsort(l->names, l->count, sizeof(*l->names), cmp_name);
	l->listed = true;
	return;
fail:
	closedir(dir);
	pin_list_free(l);
}

static bool pinned(const struct pin_list *l, const char *prefix, const char *name)
{
	char path[256];

	if (l->listed) {
		const char *key = path;

		snprintf(path, sizeof(path), "%s%s", prefix, name);
		return bsearch(&key, l->names, l->count, sizeof(*l->names), cmp_name) != NULL;
	}
	pin_path(path, sizeof(path), prefix, name);
	return access(path, F_OK) == 0;
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

/*
 * Hooks whose signature changed between supported kernels come as one
 * program per signature, and hooks newer than 6.1 are optional; keep what
 * this kernel has.  Must run right after opening the skeleton, before pins
 * are counted or programs loaded.
 */
static int select_programs(const struct bpf_object_row *row, void *skel,
			   const struct btf *vmlinux, struct tl_error *err)
{
	struct bpf_object *obj = row->ops->object(skel);

	for (const struct hook_variant *v = row->variants; v && v->prog; v++) {
		struct bpf_program *prog = bpf_object__find_program_by_name(obj, v->prog);
		int arity = hook_arity(vmlinux, v->hook);
		bool any = false;

		if (!prog)
			return fail(err, ENOENT, "the %s object has no program %s", row->name,
				    v->prog);
		bpf_program__set_autoload(prog, arity == v->arity);
		if (!v->required)
			continue;
		for (const struct hook_variant *w = row->variants; w->prog; w++)
			any |= strcmp(w->hook, v->hook) == 0 && w->arity == arity;
		if (!any)
			return fail(err, arity < 0 ? arity : EINVAL,
				    "reading the signature of the %s LSM hook from kernel BTF",
				    v->hook);
	}
	for (const struct required_hook *h = row->required; h && h->name; h++)
		if (hook_arity(vmlinux, h->name) != h->arity)
			return fail(err, ENOTSUP,
				    "this kernel has no %s LSM hook with %d arguments (%s)", h->name,
				    h->arity, h->needs);
	for (const char *const *f = row->traced; f && *f; f++)
		if (btf__find_by_name_kind(vmlinux, *f, BTF_KIND_FUNC) < 0)
			return fail(err, ENOTSUP,
				    "this kernel's BTF has no function %s to trace (fentry/fexit)", *f);
	return 0;
}

/*
 * Which programs select_programs() kept, pinned as one array map next to
 * the links ("autoload": a byte per program, the objects' program tables
 * one after another in the order of `objects`), so that later controllers
 * need neither read the kernel's BTF nor open the objects (parsing them and
 * the BTF took most of a run's setup).  It is pinned last, after a complete
 * load; without it, or with a set it does not describe, the objects are
 * opened and the BTF decides, as on the first load.
 */
#define AUTOLOAD_PIN	"autoload"
#define AUTOLOAD_MAX	256

/* The objects' program tables, without opening (parsing) the objects. */
struct obj_tables {
	void *skel[OBJECT_COUNT];
};

static void tables_close(struct obj_tables *t)
{
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		/* its object was never opened: frees the tables */
		if (t->skel[i])
			objects[i].ops->destroy(t->skel[i]);
		t->skel[i] = NULL;
	}
}

static int tables_open(struct obj_tables *t)
{
	size_t progs = 0;

	*t = (struct obj_tables){ 0 };
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		t->skel[i] = objects[i].ops->tables();
		if (!t->skel[i])
			return -ENOMEM;
		progs += (size_t)objects[i].ops->table(t->skel[i])->prog_cnt;
	}
	return progs > AUTOLOAD_MAX ? -E2BIG : 0;
}

static const struct bpf_object_skeleton *table_of(const struct obj_tables *t, size_t i)
{
	return objects[i].ops->table(t->skel[i]);
}

static void pin_autoload(const unsigned char flags[AUTOLOAD_MAX])
{
	char path[256];
	__u32 zero = 0;
	_cleanup_close_ int fd = -1;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, AUTOLOAD_PIN, sizeof(zero), AUTOLOAD_MAX, 1, NULL);
	if (fd < 0)
		return;
	pin_path(path, sizeof(path), "", AUTOLOAD_PIN);
	if (bpf_map_update_elem(fd, &zero, flags, BPF_ANY) == 0)
		bpf_obj_pin(fd, path);
}

/* The pinned "autoload" record: 0, or -ENOENT when there is none. */
static int read_autoload(unsigned char flags[AUTOLOAD_MAX])
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	char path[256];
	_cleanup_close_ int fd = -1;

	pin_path(path, sizeof(path), "", AUTOLOAD_PIN);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -ENOENT;
	return bpf_obj_get_info_by_fd(fd, &info, &len) || info.value_size != AUTOLOAD_MAX ||
			       bpf_map_lookup_elem(fd, &zero, flags)
		       ? -ENOENT
		       : 0;
}

/*
 * Counts the pins of a complete set: every shared map, each object's
 * rodata, and one link per program whose flag is set (select_programs'
 * choice; cgroup programs are never variants).
 */
static void count_pins(const struct obj_tables *t, const unsigned char *flags, int dir_fd,
		       size_t *present, size_t *expected)
{
	struct pin_list pins;
	size_t flag = 0;
	char name[64];

	pin_list_read(&pins, dir_fd);
	*present = *expected = 0;
	for (size_t i = 0; i < SHARED_MAP_COUNT; i++) {
		(*expected)++;
		*present += pinned(&pins, "", shared_maps[i].name);
	}
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		const struct bpf_object_skeleton *s = table_of(t, i);

		snprintf(name, sizeof(name), "rodata_%s", objects[i].name);
		(*expected)++;
		*present += pinned(&pins, "", name);
		for (int p = 0; p < s->prog_cnt; p++, flag++) {
			if (!flags[flag])
				continue;
			(*expected)++;
			*present += pinned(&pins, "link_", s->progs[p].name);
		}
	}
	pin_list_free(&pins);
}

/* select_programs' choice as flags in the tables' order. */
static void autoload_flags(void *const skel[OBJECT_COUNT], const struct obj_tables *t,
			   unsigned char flags[AUTOLOAD_MAX])
{
	size_t flag = 0;

	memset(flags, 0, AUTOLOAD_MAX);
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		const struct bpf_object_skeleton *s = table_of(t, i);
		struct bpf_object *obj = objects[i].ops->object(skel[i]);

		for (int p = 0; p < s->prog_cnt; p++, flag++) {
			struct bpf_program *prog =
				bpf_object__find_program_by_name(obj, s->progs[p].name);

			flags[flag] = prog && bpf_program__autoload(prog);
		}
	}
}

static void unpin_all(const struct obj_tables *t)
{
	char path[256], name[64];

	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		const struct bpf_object_skeleton *s = table_of(t, i);

		for (int p = 0; p < s->prog_cnt; p++) {
			pin_path(path, sizeof(path), "link_", s->progs[p].name);
			unlink(path);
		}
		snprintf(name, sizeof(name), "rodata_%s", objects[i].name);
		pin_path(path, sizeof(path), "", name);
		unlink(path);
	}
	for (size_t i = 0; i < SHARED_MAP_COUNT; i++) {
		pin_path(path, sizeof(path), "", shared_maps[i].name);
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
 * The pinned cgroup links must be attached to this parent cgroup: one
 * removed and made again has another id, and its runs would go unchecked.
 */
static int check_cgroup_links(const struct obj_tables *t, int parent_fd, struct tl_error *err)
{
	uint64_t parent_id = 0;
	char path[256];
	int r = tl_cgroup_id(parent_fd, &parent_id);

	if (r)
		return fail(err, r, "reading the cgroup id of the run cgroups' parent");
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		const struct bpf_object_skeleton *s = table_of(t, i);

		if (objects[i].attach != ATTACH_CGROUP)
			continue;
		for (int p = 0; p < s->prog_cnt; p++) {
			const char *name = s->progs[p].name;
			struct bpf_link_info info = {};
			__u32 len = sizeof(info);
			_cleanup_close_ int fd = -1;

			pin_path(path, sizeof(path), "link_", name);
			fd = bpf_obj_get(path);
			if (fd < 0)
				return fail(err, errno, "opening pinned link %s", path);
			if (bpf_obj_get_info_by_fd(fd, &info, &len))
				return fail(err, errno, "reading pinned link %s", path);
			if (info.type != BPF_LINK_TYPE_CGROUP || info.cgroup.cgroup_id != parent_id)
				return fail(err, ESTALE,
					    "the pinned network program %s is attached to cgroup "
					    "%llu, not to the run cgroups' parent (%llu), which was "
					    "made again since; when no run is live, reload with: "
					    "rm -r %s",
					    name, (unsigned long long)info.cgroup.cgroup_id,
					    (unsigned long long)parent_id, tl_pin_dir());
		}
	}
	return 0;
}

/* The opened objects of one load, in the order of `objects`; NULL: not opened. */
struct obj_set {
	void *skel[OBJECT_COUNT];
};

static void set_close(struct obj_set *set)
{
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		if (set->skel[i])
			objects[i].ops->destroy(set->skel[i]);
		set->skel[i] = NULL;
	}
}

enum set_which {
	SET_ALL,
	SET_LSM,	/* the objects that need BPF-LSM or fentry */
	SET_NO_LSM,	/* the others */
};

static int set_open(struct obj_set *set, enum set_which which, struct tl_error *err)
{
	*set = (struct obj_set){ 0 };
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		if ((which == SET_LSM && !objects[i].lsm) || (which == SET_NO_LSM && objects[i].lsm))
			continue;
		set->skel[i] = objects[i].ops->open();
		if (!set->skel[i])
			return fail(err, errno, "opening the embedded BPF object %s", objects[i].name);
	}
	return 0;
}

static int set_select(struct obj_set *set, struct tl_error *err)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int r = 0;

	if (!vmlinux)
		return fail(err, errno, "reading the kernel's BTF (/sys/kernel/btf/vmlinux)");
	for (size_t i = 0; i < OBJECT_COUNT && !r; i++)
		if (set->skel[i])
			r = select_programs(&objects[i], set->skel[i], vmlinux, err);
	btf__free(vmlinux);
	return r;
}

static void close_shared(int fds[SHARED_MAP_COUNT])
{
	for (size_t i = 0; i < SHARED_MAP_COUNT; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

/*
 * Creates the shared maps as `obj` defines them (every object has the same
 * definitions: bpf/lib/maps.h), without loading it.  libbpf would create
 * them with the first object's load; doing it here, before any load, lets
 * every object reuse the same fds, and the unit tests get the real maps.
 */
static int create_shared(struct bpf_object *obj, int fds[SHARED_MAP_COUNT], struct tl_error *err)
{
	for (size_t i = 0; i < SHARED_MAP_COUNT; i++)
		fds[i] = -1;
	for (size_t i = 0; i < SHARED_MAP_COUNT; i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, shared_maps[i].name);
		LIBBPF_OPTS(bpf_map_create_opts, opts);
		_cleanup_close_ int inner_fd = -1;
		struct bpf_map *inner;

		if (!map) {
			close_shared(fds);
			return fail(err, ENOENT, "the BPF objects have no map %s",
				    shared_maps[i].name);
		}
		opts.map_flags = bpf_map__map_flags(map);
		inner = bpf_map__inner_map(map);
		if (inner) {
			inner_fd = bpf_map_create(bpf_map__type(inner), NULL,
						  bpf_map__key_size(inner),
						  bpf_map__value_size(inner),
						  bpf_map__max_entries(inner), NULL);
			if (inner_fd < 0) {
				close_shared(fds);
				return fail(err, errno, "creating the inner map of %s",
					    shared_maps[i].name);
			}
			opts.inner_map_fd = inner_fd;
		}
		fds[i] = bpf_map_create(bpf_map__type(map), shared_maps[i].name,
					bpf_map__key_size(map), bpf_map__value_size(map),
					bpf_map__max_entries(map), &opts);
		if (fds[i] < 0) {
			close_shared(fds);
			return fail(err, errno, "creating map %s", shared_maps[i].name);
		}
	}
	return 0;
}

/* Every opened object of `set` uses the shared maps `fds`. */
static int set_reuse(struct obj_set *set, const int fds[SHARED_MAP_COUNT], struct tl_error *err)
{
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		struct bpf_object *obj;

		if (!set->skel[i])
			continue;
		obj = objects[i].ops->object(set->skel[i]);
		for (size_t m = 0; m < SHARED_MAP_COUNT; m++) {
			struct bpf_map *map = bpf_object__find_map_by_name(obj, shared_maps[m].name);

			if (!map || bpf_map__reuse_fd(map, fds[m]))
				return fail(err, map ? errno : ENOENT,
					    "sharing map %s with the %s object", shared_maps[m].name,
					    objects[i].name);
		}
	}
	return 0;
}

/*
 * Loads and attaches every opened object.  With `pin`, pins links (a pinned
 * link stays attached after its fd is closed) and keeps none open; without,
 * the links are kept in `node` (tl_net_open_unpinned), or, when node is
 * NULL, closed at once, which detaches them (tl_probe_lsm).
 */
static int set_load(struct obj_set *set, uint32_t level, int parent_fd, bool pin,
		    struct tl_node *node, struct tl_error *err)
{
	char path[256];
	int r;

	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		if (!set->skel[i])
			continue;
		objects[i].ops->set_level(set->skel[i], level);
		r = objects[i].ops->load(set->skel[i]);
		if (r)
			return fail(err, r, "loading the %s BPF programs into the kernel",
				    objects[i].name);
	}
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		struct bpf_program *prog;

		if (!set->skel[i])
			continue;
		bpf_object__for_each_program(prog, objects[i].ops->object(set->skel[i])) {
			struct bpf_link *link;
			void **grown;

			if (!bpf_program__autoload(prog))
				continue;
			link = objects[i].attach == ATTACH_CGROUP
				       ? bpf_program__attach_cgroup(prog, parent_fd)
				       : bpf_program__attach(prog);
			if (!link)
				return fail(err, errno, "attaching BPF program %s",
					    bpf_program__name(prog));
			if (pin) {
				pin_path(path, sizeof(path), "link_", bpf_program__name(prog));
				r = bpf_link__pin(link, path);
				bpf_link__destroy(link);
				if (r)
					return fail(err, r, "pinning %s", path);
				continue;
			}
			if (!node) {
				bpf_link__destroy(link);
				continue;
			}
			grown = realloc(node->links, (node->link_count + 1) * sizeof(*grown));
			if (!grown) {
				bpf_link__destroy(link);
				return fail(err, ENOMEM, "allocating links");
			}
			node->links = grown;
			node->links[node->link_count++] = link;
		}
	}
	return 0;
}

/* Pins the shared maps and each object's rodata (the level check reads it). */
static int set_pin_maps(struct obj_set *set, const int fds[SHARED_MAP_COUNT],
			struct tl_error *err)
{
	char path[256], name[64];
	int r;

	for (size_t i = 0; i < SHARED_MAP_COUNT; i++) {
		pin_path(path, sizeof(path), "", shared_maps[i].name);
		if (bpf_obj_pin(fds[i], path))
			return fail(err, errno, "pinning %s", path);
	}
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		snprintf(name, sizeof(name), "rodata_%s", objects[i].name);
		pin_path(path, sizeof(path), "", name);
		r = bpf_map__pin(objects[i].ops->rodata(set->skel[i]), path);
		if (r)
			return fail(err, r, "pinning %s", path);
	}
	return 0;
}

/* The first load of this set on the node: everything loaded, attached and pinned. */
static int load_and_pin(struct obj_set *set, const struct obj_tables *t, uint32_t level,
			int parent_fd, struct tl_error *err)
{
	int fds[SHARED_MAP_COUNT];
	int r;

	r = create_shared(objects[0].ops->object(set->skel[0]), fds, err);
	if (r)
		return r;
	r = set_reuse(set, fds, err);
	if (!r)
		r = set_load(set, level, parent_fd, true, NULL, err);
	if (!r)
		r = set_pin_maps(set, fds, err);
	if (r)
		unpin_all(t);
	close_shared(fds);
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
	const size_t offset = objects[LEVEL_OBJECT].ops->level_offset;
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	__u32 zero = 0;
	_cleanup_free_ char *value = NULL;
	_cleanup_close_ int fd = -1;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "rodata_%s", objects[LEVEL_OBJECT].name);
	r = open_pinned_map(name, &fd, err);
	if (r)
		return r;
	r = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	if (r || info.value_size < offset + sizeof(*level))
		return fail(err, r ? errno : EINVAL, "reading the pinned programs' settings");
	value = calloc(1, info.value_size);
	if (!value)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, value))
		return fail(err, errno, "reading the pinned programs' settings");
	memcpy(level, value + offset, sizeof(*level));
	return 0;
}

/* Maps run_seq: the counters userspace takes numbers from (tl_run_seq_next). */
static int map_run_seq(struct tl_node *node, struct tl_error *err)
{
	size_t size = sizeof(uint64_t) * TETHER_RUN_SEQ_ENTRIES;
	void *p;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, node->run_seq_fd, 0);
	if (p == MAP_FAILED)
		return fail(err, errno, "mapping the run_seq map");
	node->run_seq = p;
	return 0;
}

/* The node's fds (and run_seq's mapping) from `fds`, which keeps its own. */
static int node_adopt(struct tl_node *node, const int fds[SHARED_MAP_COUNT],
		      struct tl_error *err)
{
	for (size_t i = 0; i < SHARED_MAP_COUNT; i++) {
		if (shared_maps[i].node_fd < 0)
			continue;
		*node_fd(node, &shared_maps[i]) = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
		if (*node_fd(node, &shared_maps[i]) < 0)
			return fail(err, errno, "duplicating the fd of map %s", shared_maps[i].name);
	}
	return map_run_seq(node, err);
}

int tl_node_open(uint32_t run_cgroup_level, int parent_cgroup_fd, struct tl_node *node,
		 struct tl_error *err)
{
	unsigned char flags[AUTOLOAD_MAX];
	struct obj_tables tables = { 0 };
	struct obj_set set = { 0 };
	size_t present = 0, expected = 0;
	bool complete = false;
	uint32_t level = 0;
	_cleanup_close_ int lock_fd = -1;
	int r;

	node_init(node);
	r = make_pin_dir(err);
	if (r)
		return r;
	/* Serialise first loads: two controllers starting at once load once. */
	lock_fd = open(tl_pin_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock_fd < 0)
		return fail(err, errno, "opening %s", tl_pin_dir());
	/* Bounded: whoever can open the directory can hold its lock. */
	for (int waited_ms = 0; flock(lock_fd, LOCK_EX | LOCK_NB) < 0; waited_ms += 10) {
		if (errno != EWOULDBLOCK || waited_ms >= 10000)
			return fail(err, errno == EWOULDBLOCK ? EBUSY : errno,
				    "locking %s (held for 10 s by another process)", tl_pin_dir());
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
		count_pins(&tables, flags, lock_fd, &present, &expected);
		complete = present == expected;
	}
	if (!complete) {
		r = set_open(&set, SET_ALL, err);
		if (!r)
			r = set_select(&set, err);
		if (r)
			goto out;
		autoload_flags(set.skel, &tables, flags);
		count_pins(&tables, flags, lock_fd, &present, &expected);
		if (present == 0) {
			r = load_and_pin(&set, &tables, run_cgroup_level, parent_cgroup_fd, err);
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
	r = check_cgroup_links(&tables, parent_cgroup_fd, err);
	for (size_t i = 0; i < SHARED_MAP_COUNT && !r; i++)
		if (shared_maps[i].node_fd >= 0)
			r = open_pinned_map(shared_maps[i].name, node_fd(node, &shared_maps[i]),
					    err);
	if (!r)
		r = map_run_seq(node, err);
out:
	set_close(&set);
	tables_close(&tables);
	if (r)
		tl_node_close(node);
	return r;
}

void tl_node_close(struct tl_node *node)
{
	if (!node)
		return;
	if (node->run_seq)
		munmap(node->run_seq, sizeof(uint64_t) * TETHER_RUN_SEQ_ENTRIES);
	node->run_seq = NULL;
	for (size_t i = 0; i < SHARED_MAP_COUNT; i++) {
		int *fd;

		if (shared_maps[i].node_fd < 0)
			continue;
		fd = node_fd(node, &shared_maps[i]);
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	for (size_t i = 0; i < node->link_count; i++)
		bpf_link__destroy(node->links[i]);
	free(node->links);
	node->links = NULL;
	node->link_count = 0;
	if (node->net_skel) {
		struct obj_set *set = node->net_skel;

		set_close(set);
		free(set);
	}
	node->net_skel = NULL;
}

int tl_net_open_unpinned(uint32_t run_cgroup_level, int parent_cgroup_fd, struct tl_node *node,
			 struct tl_error *err)
{
	_cleanup_free_ struct obj_set *set = NULL;
	int fds[SHARED_MAP_COUNT];
	size_t first = OBJECT_COUNT;
	int r;

	node_init(node);
	node->run_cgroup_level = run_cgroup_level;
	set = calloc(1, sizeof(*set));
	if (!set)
		return fail(err, ENOMEM, "allocating the network objects");
	r = set_open(set, SET_NO_LSM, err);
	if (r) {
		set_close(set);
		return r;
	}
	for (size_t i = 0; i < OBJECT_COUNT && first == OBJECT_COUNT; i++)
		if (set->skel[i])
			first = i;
	if (first == OBJECT_COUNT)
		return fail(err, ENOENT, "no BPF object loads without BPF-LSM");
	r = create_shared(objects[first].ops->object(set->skel[first]), fds, err);
	if (r) {
		set_close(set);
		return r;
	}
	node->net_skel = TAKE_PTR(set);
	r = set_reuse(node->net_skel, fds, err);
	if (!r)
		r = set_load(node->net_skel, run_cgroup_level, parent_cgroup_fd, false, node, err);
	if (!r)
		r = node_adopt(node, fds, err);
	close_shared(fds);
	if (r)
		tl_node_close(node);
	return r;
}

int tl_node_create_maps(struct tl_node *node, struct tl_error *err)
{
	int fds[SHARED_MAP_COUNT];
	void *skel;
	int r;

	node_init(node);
	/* parsing an object needs no privilege; its definitions are the maps' */
	skel = objects[0].ops->open();
	if (!skel)
		return fail(err, errno, "opening the embedded BPF object %s", objects[0].name);
	r = create_shared(objects[0].ops->object(skel), fds, err);
	objects[0].ops->destroy(skel);
	if (r)
		return r;
	r = node_adopt(node, fds, err);
	close_shared(fds);
	if (r)
		tl_node_close(node);
	return r;
}

int tl_probe_lsm(struct tl_error *err)
{
	struct obj_set set = { 0 };
	int fds[SHARED_MAP_COUNT];
	int r;

	/* the cgroup programs need a cgroup and prove nothing about BPF-LSM */
	r = set_open(&set, SET_LSM, err);
	if (!r)
		r = set_select(&set, err);
	if (!r)
		r = create_shared(objects[0].ops->object(set.skel[0]), fds, err);
	if (!r) {
		/* Level 0 is the root cgroup, which is never a run: the probe confines nothing. */
		r = set_reuse(&set, fds, err);
		if (!r)
			r = set_load(&set, 0, -1, false, NULL, err);
		close_shared(fds);
	}
	set_close(&set);
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

/*
 * Moves the ring's consumer position to its producer's: what an earlier run
 * of the slot left unread (its controller died, or a record was still being
 * written when its runs entry went) is never this run's.  A record a
 * program of that run commits later still says that run's cgroup, and the
 * stream drops it (runtime/audit.c).
 */
static int ring_skip_unread(int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long *cons, *prod;
	int r = 0;

	cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, (off_t)page);
	if (prod == MAP_FAILED)
		r = -errno;
	else
		__atomic_store_n(cons, __atomic_load_n(prod, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	if (prod != MAP_FAILED)
		munmap(prod, page);
	munmap(cons, page);
	return r;
}

/* `fd`'s map id if it is an audit ring (a ring buffer of the size runs get); 0 if not. */
static uint32_t audit_ring_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_MAP_TYPE_RINGBUF ||
	    info.max_entries != TETHER_AUDIT_RING_BYTES)
		return 0;
	return info.id;
}

/*
 * An fd of the ring registered under `slot` in audit_rings; -ENOENT when
 * there is none.  By its id in ring_ids: audit_rings itself is looked up
 * only when ring_ids has no usable id for the slot (its first use since
 * the set was pinned, or a controller that died between the two writes),
 * and the id found there is written back (bpf/lib/maps.h says why).
 */
static int slot_ring_find(struct tl_node *node, uint32_t slot, int *out, struct tl_error *err)
{
	uint32_t id = 0;
	int fd;

	if (bpf_map_lookup_elem(node->ring_ids_fd, &slot, &id))
		return fail(err, errno, "looking up the audit ring id of run slot %u", slot);
	if (id) {
		fd = bpf_map_get_fd_by_id(id);
		if (fd >= 0 && audit_ring_id(fd) == id) {
			*out = fd;
			return 0;
		}
		if (fd >= 0)
			close(fd);
	}
	if (bpf_map_lookup_elem(node->audit_rings_fd, &slot, &id))
		return errno == ENOENT ? -ENOENT
				       : fail(err, errno, "looking up the audit ring of run slot %u",
					      slot);
	/* from userspace, a map-of-maps lookup yields the inner map's id */
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return fail(err, errno, "opening the audit ring of run slot %u (map id %u)", slot,
			    id);
	/* without it the slot's next run looks the ring up again: slower, not wrong */
	bpf_map_update_elem(node->ring_ids_fd, &slot, &id, BPF_ANY);
	*out = fd;
	return 0;
}

/*
 * The claimed slot's audit ring: the one an earlier run of the slot made,
 * or a new one, registered under the slot for the runs after this one
 * (bpf/lib/maps.h says why rings are kept).
 */
static int slot_ring(struct tl_node *node, struct tl_run *run, struct tl_error *err)
{
	uint32_t slot = run->run_slot, id;
	int fd = -1, r;

	r = slot_ring_find(node, slot, &fd, err);
	if (r == 0) {
		r = ring_skip_unread(fd);
		if (r) {
			close(fd);
			return fail(err, r, "emptying the audit ring of run slot %u", slot);
		}
		run->ring_fd = fd;
		return 0;
	}
	if (r != -ENOENT)
		return r;
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "tether_audit", 0, 0, TETHER_AUDIT_RING_BYTES,
			    NULL);
	if (fd < 0)
		return fail(err, errno, "creating the audit ring of run slot %u", slot);
	/* the slot is ours: nobody else registers a ring under it */
	if (bpf_map_update_elem(node->audit_rings_fd, &slot, &fd, BPF_NOEXIST)) {
		r = fail(err, errno, "registering the audit ring of run slot %u", slot);
		close(fd);
		return r;
	}
	id = audit_ring_id(fd);
	if (id)
		bpf_map_update_elem(node->ring_ids_fd, &slot, &id, BPF_ANY);
	run->ring_fd = fd;
	return 0;
}

/*
 * The lowest free slot, so that the rings kept number the most runs ever
 * live at once, not every slot a cgroup id hashes to.
 */
static int claim_slot(struct tl_node *node, struct tl_run *run, struct tl_error *err)
{
	for (uint32_t slot = 1; slot <= TETHER_MAX_RUNS; slot++) {
		/* BPF_NOEXIST makes the claim atomic between concurrent controllers. */
		if (bpf_map_update_elem(node->run_slots_fd, &slot, &run->cgroup_id,
					BPF_NOEXIST) == 0) {
			run->run_slot = slot;
			return 0;
		}
		if (errno != EEXIST)
			return fail(err, errno, "claiming run slot %u", slot);
	}
	return fail(err, EBUSY, "all %u run slots are in use", TETHER_MAX_RUNS);
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
 * Hooks without a mount (xattrs, ACLs, timestamps) decide by inode identity;
 * the plan says which rules have one (runtime/plan/paths.c).
 */
static int install_inode_rule(struct tl_node *node, struct tl_run *run, struct tl_run_rule *rr,
			      const struct tl_path_rule *src, const struct tether_path_rule *rule,
			      struct tl_error *err)
{
	struct tether_inode_key ikey = { .run_slot = run->run_slot, .dev = src->dev,
					 .ino = src->ino };

	if (!src->has_inode)
		return 0;
	if (bpf_map_update_elem(node->inode_rules_fd, &ikey, rule, BPF_ANY))
		return fail(err, errno, "writing the inode rule of %s", rr->path);
	rr->has_inode = true;
	rr->dev = ikey.dev;
	rr->ino = ikey.ino;
	return 0;
}

int tl_run_inode_rule_add(struct tl_node *node, struct tl_run *run, size_t index, uint32_t dev,
			  uint64_t ino, uint32_t access, struct tl_error *err)
{
	struct tether_path_rule rule = { .access = access, .rule_id = (__u32)index };
	struct tether_inode_key ikey = { .run_slot = run->run_slot, .dev = dev, .ino = ino };
	struct tl_run_rule *rr;

	if (index >= run->rule_count)
		return fail(err, EINVAL, "no path rule %zu to give an inode identity", index);
	rr = &run->rules[index];
	if (rr->has_inode) {
		/* the object the plan saw there (the host's /tmp) is not the run's */
		struct tether_inode_key old = { .run_slot = run->run_slot, .dev = rr->dev,
						.ino = rr->ino };

		if (bpf_map_delete_elem(node->inode_rules_fd, &old) && errno != ENOENT)
			return fail(err, errno, "replacing the inode rule of %s", rr->path);
		rr->has_inode = false;
	}
	if (bpf_map_update_elem(node->inode_rules_fd, &ikey, &rule, BPF_ANY))
		return fail(err, errno, "writing the inode rule of %s", rr->path);
	rr->has_inode = true;
	rr->dev = dev;
	rr->ino = ino;
	return 0;
}

int tl_run_inode_identity_add(struct tl_node *node, struct tl_run *run, size_t index,
			      uint32_t dev, uint64_t ino, uint32_t access, struct tl_error *err)
{
	struct tether_path_rule rule = { .access = access, .rule_id = (__u32)index };
	struct tether_inode_key ikey = { .run_slot = run->run_slot, .dev = dev, .ino = ino };
	int r;

	if (index >= run->rule_count)
		return fail(err, EINVAL, "no path rule %zu to give an inode identity", index);
	if (bpf_map_update_elem(node->inode_rules_fd, &ikey, &rule, BPF_ANY))
		return fail(err, errno, "writing an inode rule of %s", run->rules[index].path);
	r = pin_add(run, dev, ino);	/* removed with the pins */
	return r ? fail(err, r, "writing an inode rule of %s", run->rules[index].path) : 0;
}

/* The directories the plan pins above carve-outs (runtime/plan/paths.c says why). */
static int install_pins(struct tl_node *node, struct tl_run *run, const struct tl_run_plan *plan,
			struct tl_error *err)
{
	for (size_t i = 0; i < plan->pin_count; i++) {
		const struct tl_inode_pin *pin = &plan->pins[i];
		struct tether_inode_key ikey = { .run_slot = run->run_slot, .dev = pin->dev,
						 .ino = pin->ino };
		struct tether_path_rule value = { .access = pin->access | TETHER_ACCESS_PINNED,
						  .rule_id = pin->rule_id };
		int r;

		if (bpf_map_update_elem(node->inode_rules_fd, &ikey, &value, BPF_ANY))
			return fail(err, errno, "pinning directory %u:%llu", pin->dev,
				    (unsigned long long)pin->ino);
		r = pin_add(run, pin->dev, pin->ino);
		if (r)
			return fail(err, r, "pinning directory %u:%llu", pin->dev,
				    (unsigned long long)pin->ino);
	}
	return 0;
}

/* The slot's counter starts again: a run's first record is number 1. */
static void reset_seq(struct tl_node *node, uint32_t slot)
{
	if (node->run_seq && slot > 0 && slot < TETHER_RUN_SEQ_ENTRIES)
		__atomic_store_n(&node->run_seq[slot], 0, __ATOMIC_SEQ_CST);
}

/*
 * The slot's exit entry starts again, zero: no tgid, not exited.  A run
 * never reads how the slot's previous run ended, and a process of the
 * previous run that outlives it (its tgid left in the entry) writes
 * nothing once the runs entry is gone.
 */
static int reset_exit(struct tl_node *node, uint32_t slot)
{
	struct tether_run_exit zero = { 0 };

	if (slot == 0 || slot >= TETHER_RUN_EXIT_ENTRIES)
		return -EINVAL;
	return bpf_map_update_elem(node->run_exit_fd, &slot, &zero, BPF_ANY) ? -errno : 0;
}

int tl_run_install(struct tl_node *node, uint64_t cgroup_id, const struct tl_run_plan *plan,
		   struct tl_run *run, struct tl_error *err)
{
	const struct tl_path_rule *rules = plan->rules;
	const struct tl_run_net *net = &plan->net;
	size_t i, rule_count = plan->rule_count;
	struct tether_run value = {};
	struct tether_path_key key;
	struct tether_path_rule rule;
	int r;

	*run = (struct tl_run){ .cgroup_id = cgroup_id, .ring_fd = -1 };
	if (plan->mode != TETHER_MODE_ENFORCE && plan->mode != TETHER_MODE_AUDIT)
		return fail(err, EINVAL, "unknown run mode %u", plan->mode);
	if (!node->run_seq)
		return fail(err, EBADF, "the node's run_seq map is not mapped");
	run->rules = calloc(rule_count ? rule_count : 1, sizeof(*run->rules));
	if (!run->rules)
		return fail(err, ENOMEM, "allocating the run's rule list");
	r = claim_slot(node, run, err);
	if (!r)
		r = slot_ring(node, run, err);
	if (r)
		goto fail;
	/* no runs entry names the slot yet: no hook can take a number from it */
	reset_seq(node, run->run_slot);
	/* nor record an exit in it */
	r = reset_exit(node, run->run_slot);
	if (r) {
		r = fail(err, r, "resetting the exit entry of run slot %u", run->run_slot);
		goto fail;
	}
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
		r = install_inode_rule(node, run, &run->rules[i], &rules[i], &rule, err);
		if (r)
			goto fail;
	}
	r = install_pins(node, run, plan, err);
	if (r)
		goto fail;
	for (i = 0; i < plan->abstract_count; i++) {
		struct tether_abstract_key akey = { .run_slot = run->run_slot };
		size_t len = strlen(plan->abstract_sockets[i]);
		__u8 one = 1;

		if (len == 0 || len > TETHER_ABSTRACT_NAME_MAX) {
			r = fail(err, EINVAL, "abstract socket name %zu is %zu bytes long", i, len);
			goto fail;
		}
		akey.len = (__u32)len;
		memcpy(akey.name, plan->abstract_sockets[i], len);
		if (bpf_map_update_elem(node->abstract_fd, &akey, &one, BPF_ANY)) {
			r = fail(err, errno, "writing abstract socket name %zu", i);
			goto fail;
		}
	}
	for (i = 0; i < net->count; i++) {
		r = tl_run_net_write(node, run, &net->entries[i], err);
		if (r)
			goto fail;
	}
	/* Last: from here on every hook in the run's cgroup enforces the rules above. */
	value.run_slot = run->run_slot;
	value.mode = plan->mode;
	value.flags = plan->run_flags;
	value.egress_max = net->egress_max;
	value.dns_port4 = net->dns_port4;
	value.dns_port6 = net->dns_port6;
	value.layer_dev = plan->layer_dev;
	if (bpf_map_update_elem(node->runs_fd, &cgroup_id, &value, BPF_NOEXIST)) {
		r = fail(err, errno, "registering run cgroup %llu", (unsigned long long)cgroup_id);
		goto fail;
	}
	run->active = true;
	return 0;
fail:
	tl_run_remove(node, run, NULL);
	tl_run_release(node, run, NULL);
	tl_run_free(run);
	return r;
}

/* Notes a key the run wrote, for tl_run_remove. */
static int net_key_add(struct tl_run *run, const struct tether_net_key *key)
{
	if (run->net_key_count == run->net_key_cap) {
		size_t cap = run->net_key_cap ? 2 * run->net_key_cap : 16;
		struct tether_net_key *grown = realloc(run->net_keys, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		run->net_keys = grown;
		run->net_key_cap = cap;
	}
	run->net_keys[run->net_key_count++] = *key;
	return 0;
}

int tl_run_net_write(struct tl_node *node, struct tl_run *run,
		     const struct tl_net_entry *entry, struct tl_error *err)
{
	struct tether_net_key key = { .prefixlen = 32 + entry->prefixlen, .run_slot = run->run_slot };
	char text[64] = "";

	if (entry->prefixlen > 128 || entry->rule.tcp_count > TETHER_NET_PORT_RANGES ||
	    entry->rule.udp_count > TETHER_NET_PORT_RANGES)
		return fail(err, EINVAL, "address rule out of range (prefix %u, %u and %u port "
			    "ranges)", entry->prefixlen, entry->rule.tcp_count, entry->rule.udp_count);
	memcpy(key.addr, entry->addr, 16);
	/* a new key is noted once; an admission that renews one replaces its value */
	if (bpf_map_update_elem(node->net_rules_fd, &key, &entry->rule, BPF_NOEXIST) == 0) {
		if (net_key_add(run, &key) == 0)
			return 0;
		bpf_map_delete_elem(node->net_rules_fd, &key);
		errno = ENOMEM;
	} else if (errno == EEXIST &&
		   bpf_map_update_elem(node->net_rules_fd, &key, &entry->rule, BPF_EXIST) == 0) {
		return 0;
	}
	for (int i = 0; i < 16; i += 2)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%02x%02x",
			 i ? ":" : "", entry->addr[i], entry->addr[i + 1]);
	return fail(err, errno, "writing address rule %s/%u", text, entry->prefixlen);
}

int tl_run_counters(struct tl_node *node, const struct tl_run *run, struct tl_run_counters *c)
{
	struct tether_run value;

	if (!run->active || !node->run_seq || run->run_slot >= TETHER_RUN_SEQ_ENTRIES)
		return -ENOENT;
	if (bpf_map_lookup_elem(node->runs_fd, &run->cgroup_id, &value))
		return -errno;
	*c = (struct tl_run_counters){
		.seq = __atomic_load_n(&node->run_seq[run->run_slot], __ATOMIC_SEQ_CST),
		.audit_lost = value.audit_lost,
		.audit_refused = value.audit_refused,
		.egress_bytes = value.egress_bytes,
		.egress_exhausted = value.net_state & TETHER_NET_BUDGET_REPORTED,
		.ingress_dropped = value.ingress_dropped,
	};
	return 0;
}

int tl_run_seq_next(struct tl_node *node, const struct tl_run *run, uint64_t *seq)
{
	if (!run->active || !node->run_seq || run->run_slot == 0 ||
	    run->run_slot >= TETHER_RUN_SEQ_ENTRIES)
		return -ENOENT;
	/* the kernel's side is __sync_fetch_and_add on the same word (bpf/lib/run.h) */
	*seq = __atomic_fetch_add(&node->run_seq[run->run_slot], 1, __ATOMIC_SEQ_CST) + 1;
	return 0;
}

int tl_run_set_main(struct tl_node *node, const struct tl_run *run, uint32_t tgid,
		    struct tl_error *err)
{
	struct tether_run_exit value = { .tgid = tgid };
	uint32_t slot = run->run_slot;

	if (!run->active || slot == 0 || slot >= TETHER_RUN_EXIT_ENTRIES)
		return fail(err, ENOENT, "setting process %u as the main process of a run that is "
			    "not installed", tgid);
	/* one copy of the whole entry: exited, status and exit_ns back to 0 with the tgid */
	if (bpf_map_update_elem(node->run_exit_fd, &slot, &value, BPF_ANY))
		return fail(err, errno, "setting process %u as the main process of run slot %u",
			    tgid, slot);
	return 0;
}

int tl_run_main_exit(struct tl_node *node, uint32_t run_slot, struct tether_run_exit *out)
{
	struct tether_run_exit value;

	if (run_slot == 0 || run_slot >= TETHER_RUN_EXIT_ENTRIES)
		return -EINVAL;
	if (bpf_map_lookup_elem(node->run_exit_fd, &run_slot, &value))
		return -errno;
	/*
	 * The lookup copies the entry with no order between its fields, so a
	 * copy that saw exited == 1 may hold status as it was before.  BPF
	 * writes status and exit_ns before exited, with a fully ordered atomic
	 * (exit.bpf.c): a second copy, made after the first saw exited, holds
	 * them.  They do not change after that until the entry is reset.
	 */
	if (value.exited == 1) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (bpf_map_lookup_elem(node->run_exit_fd, &run_slot, &value))
			return -errno;
	}
	if (value.exited != 1) {
		/* not yet, or being written: nothing but the tgid is valid */
		value.exited = 0;
		value.status = 0;
		value.exit_ns = 0;
	}
	*out = value;
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
		for (i = 0; i < run->net_key_count; i++)
			if (bpf_map_delete_elem(node->net_rules_fd, &run->net_keys[i]) &&
			    errno != ENOENT && !first)
				first = fail(err, errno, "removing the address rules of run slot %u",
					     run->run_slot);
		run->net_key_count = 0;
		r = reset_exit(node, run->run_slot);
		if (r && !first)
			first = fail(err, r, "resetting the exit entry of run slot %u",
				     run->run_slot);
		/* the slot itself is released by tl_run_release, once the ring is read */
		run->slot_clean = !first;
	}
	return first;
}

int tl_run_release(struct tl_node *node, struct tl_run *run, struct tl_error *err)
{
	uint32_t slot = run->run_slot;

	/*
	 * A slot whose entries did not all go stays claimed: the next run to
	 * claim it would inherit them.  It is lost until the pins are
	 * reloaded, which is the safe way to fail.
	 */
	if (!slot || !run->slot_clean)
		return 0;
	if (bpf_map_delete_elem(node->run_slots_fd, &slot) && errno != ENOENT)
		return fail(err, errno, "releasing run slot %u", slot);
	run->run_slot = 0;
	run->slot_clean = false;
	return 0;
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
	free(run->net_keys);
	run->net_keys = NULL;
	run->net_key_count = run->net_key_cap = 0;
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

int tl_run_reclaim(struct tl_node *node, uint64_t cgroup_id, bool release,
		   struct tl_error *err)
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
	/* no runs entry names the slot any more; the next install resets them too */
	reset_seq(node, value.run_slot);
	r = reset_exit(node, value.run_slot);
	if (r)
		return fail(err, r, "resetting the exit entry of run slot %u", value.run_slot);
	if (release && bpf_map_delete_elem(node->run_slots_fd, &value.run_slot) && errno != ENOENT)
		return fail(err, errno, "releasing run slot %u", value.run_slot);
	return 0;
}

int tl_run_adopt(struct tl_node *node, uint64_t cgroup_id, struct tl_run *run,
		 struct tl_error *err)
{
	struct tether_run value;
	uint64_t holder = 0;
	int fd, lr;

	if (bpf_map_lookup_elem(node->runs_fd, &cgroup_id, &value))
		return errno == ENOENT ? -ENOENT : fail(err, errno, "looking up run cgroup %llu",
							  (unsigned long long)cgroup_id);
	/* the slot's ring is the run's only while the run holds the slot */
	lr = bpf_map_lookup_elem(node->run_slots_fd, &value.run_slot, &holder);
	if (lr || holder != cgroup_id)
		return fail(err, lr ? errno : EUCLEAN,
			    "run slot %u of run cgroup %llu is not held by it", value.run_slot,
			    (unsigned long long)cgroup_id);
	lr = slot_ring_find(node, value.run_slot, &fd, err);
	if (lr == -ENOENT)
		return fail(err, ENOENT, "run slot %u of run cgroup %llu has no audit ring",
			    value.run_slot, (unsigned long long)cgroup_id);
	if (lr)
		return lr;
	*run = (struct tl_run){
		.cgroup_id = cgroup_id,
		.run_slot = value.run_slot,
		.ring_fd = fd,
		.active = true,
	};
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
