// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "bpf/abi/rules.h"
#include "loader/loader.h"

Test(loader, key_for_directory_rule_ends_in_slash)
{
	struct tether_path_key key;

	cr_assert_eq(tl_path_key(7, "/work/ws", &key), 0);
	cr_assert_eq(key.run_slot, 7);
	cr_assert_eq(key.prefixlen, 32 + 8 * 9);
	cr_assert(memcmp(key.path, "/work/ws/", 9) == 0);
	cr_assert_eq(key.path[9], 0);
}

Test(loader, key_for_root_is_one_slash)
{
	struct tether_path_key key;

	cr_assert_eq(tl_path_key(1, "/", &key), 0);
	cr_assert_eq(key.prefixlen, 32 + 8);
	cr_assert_eq(key.path[0], '/');
}

Test(loader, key_rejects_relative_and_trailing_slash)
{
	struct tether_path_key key;

	cr_assert_eq(tl_path_key(1, "work", &key), -EINVAL);
	cr_assert_eq(tl_path_key(1, "", &key), -EINVAL);
	cr_assert_eq(tl_path_key(1, "/work/", &key), -EINVAL);
}

Test(loader, key_length_limit)
{
	struct tether_path_key key;
	char path[TETHER_PATH_KEY_MAX + 2];

	/* 251 bytes plus the '/' fill the key exactly */
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[TETHER_PATH_KEY_MAX - 1] = 0;
	cr_assert_eq(tl_path_key(1, path, &key), 0);
	cr_assert_eq(key.prefixlen, 32 + 8 * TETHER_PATH_KEY_MAX);
	path[TETHER_PATH_KEY_MAX - 1] = 'a';
	path[TETHER_PATH_KEY_MAX] = 0;
	cr_assert_eq(tl_path_key(1, path, &key), -ENAMETOOLONG);
}

/*
 * The map layer against real maps: a node whose shared maps come from the
 * embedded objects' definitions (tl_node_create_maps), no program loaded,
 * which this host allows where it refuses BPF-LSM.
 */
#include <pthread.h>
#include <stdlib.h>
#include <bpf/bpf.h>

static struct tl_node node;

static void node_up(void)
{
	struct tl_error err = { { 0 } };

	cr_assert_eq(tl_node_create_maps(&node, &err), 0, "%s", err.msg);
}

static void node_down(void)
{
	tl_node_close(&node);
}

/* Entries of map `fd` whose run slot (a u32 at `offset` of the key) is `slot`. */
static size_t slot_entries(int fd, size_t key_size, size_t offset, uint32_t slot)
{
	unsigned char cur[512], next[512];
	size_t n = 0;
	bool first = true;

	cr_assert(key_size <= sizeof(cur));
	while (bpf_map_get_next_key(fd, first ? NULL : cur, next) == 0) {
		uint32_t s;

		memcpy(&s, next + offset, sizeof(s));
		n += s == slot;
		memcpy(cur, next, key_size);
		first = false;
	}
	return n;
}

static size_t entries_of_slot(uint32_t slot)
{
	return slot_entries(node.path_rules_fd, sizeof(struct tether_path_key),
			    offsetof(struct tether_path_key, run_slot), slot) +
	       slot_entries(node.inode_rules_fd, sizeof(struct tether_inode_key),
			    offsetof(struct tether_inode_key, run_slot), slot) +
	       slot_entries(node.ptys_fd, sizeof(struct tether_pty_key),
			    offsetof(struct tether_pty_key, run_slot), slot) +
	       slot_entries(node.abstract_fd, sizeof(struct tether_abstract_key),
			    offsetof(struct tether_abstract_key, run_slot), slot) +
	       slot_entries(node.net_rules_fd, sizeof(struct tether_net_key),
			    offsetof(struct tether_net_key, run_slot), slot);
}

static const struct tl_path_rule plan_rules[] = {
	{ .path = "/", .access = TETHER_ACCESS_READ },
	{ .path = "/work", .access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE, .has_inode = true,
	  .dev = (8u << 20) | 1, .ino = 1234 },
	{ .path = "/work/in", .access = TETHER_ACCESS_READ, .has_inode = true,
	  .dev = (8u << 20) | 1, .ino = 1300 },
};
static const struct tl_inode_pin plan_pins[] = {
	{ .dev = (8u << 20) | 1, .ino = 1234, .access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE,
	  .rule_id = 1 },
	{ .dev = (8u << 20) | 1, .ino = 2, .access = TETHER_ACCESS_READ, .rule_id = 0 },
};
static const struct tl_run_plan plan = {
	.mode = TETHER_MODE_ENFORCE,
	.rules = plan_rules,
	.rule_count = 3,
	.pins = plan_pins,
	.pin_count = 2,
};

static struct tl_net_entry net_entry(uint8_t last, uint8_t prefixlen)
{
	struct tl_net_entry e = { .prefixlen = prefixlen };

	e.addr[10] = e.addr[11] = 0xff;
	e.addr[12] = 192;
	e.addr[15] = last;
	e.rule.rule_id = last;
	e.rule.tcp_count = 1;
	e.rule.tcp[0] = (struct tether_port_range){ 80, 80 };
	return e;
}

static void install(uint64_t cgroup_id, struct tl_run *run)
{
	static char *abstract[] = { "tether-test" };
	struct tl_net_entry entries[] = { net_entry(2, 128) };
	struct tl_run_plan p = plan;
	struct tl_error err = { { 0 } };

	p.mode = TETHER_MODE_AUDIT;
	p.run_flags = TETHER_RUN_AUDIT_ALLOWED;
	p.abstract_sockets = abstract;
	p.abstract_count = 1;
	p.net = (struct tl_run_net){ entries, 1, 65536, 5353, 5354 };
	cr_assert_eq(tl_run_install(&node, cgroup_id, &p, run, &err), 0, "%s", err.msg);
}

TestSuite(loader_maps, .init = node_up, .fini = node_down);

Test(loader_maps, node_has_every_shared_map_and_run_seq_mapped)
{
	cr_assert_geq(node.runs_fd, 0);
	cr_assert_geq(node.path_rules_fd, 0);
	cr_assert_geq(node.inode_rules_fd, 0);
	cr_assert_geq(node.audit_rings_fd, 0);
	cr_assert_geq(node.run_slots_fd, 0);
	cr_assert_geq(node.ring_ids_fd, 0);
	cr_assert_geq(node.ptys_fd, 0);
	cr_assert_geq(node.abstract_fd, 0);
	cr_assert_geq(node.net_rules_fd, 0);
	cr_assert_geq(node.run_keys_fd, 0);
	cr_assert_geq(node.run_seq_fd, 0);
	cr_assert_geq(node.run_exit_fd, 0);
	cr_assert_not_null(node.run_seq);
}

Test(loader_maps, install_writes_the_plan_and_turns_the_run_on_last)
{
	struct tl_run run;
	struct tether_run value;
	struct tether_path_key key;
	struct tether_path_rule rule;
	struct tether_inode_key ikey;
	struct tether_net_key nkey = { .prefixlen = 32 + 128 };
	struct tether_net_rule nrule;
	struct tether_abstract_key akey = { .len = 11 };
	int ring;
	__u8 one;

	install(4242, &run);
	cr_assert(run.active);
	/* the lowest free slot, held in run_slots by the run's cgroup id */
	cr_assert_eq(run.run_slot, 1);
	{
		uint64_t holder = 0;

		cr_assert_eq(bpf_map_lookup_elem(node.run_slots_fd, &run.run_slot, &holder), 0);
		cr_assert_eq(holder, 4242);
	}
	cr_assert_eq(bpf_map_lookup_elem(node.runs_fd, &run.cgroup_id, &value), 0);
	cr_assert_eq(value.run_slot, run.run_slot);
	cr_assert_eq(value.mode, TETHER_MODE_AUDIT);
	cr_assert_eq(value.flags, TETHER_RUN_AUDIT_ALLOWED);
	cr_assert_eq(value.egress_max, 65536);
	cr_assert_eq(value.dns_port4, 5353);
	cr_assert_eq(value.dns_port6, 5354);
	/* the ring is registered under the slot (a map of maps answers with an id) */
	cr_assert_eq(bpf_map_lookup_elem(node.audit_rings_fd, &run.run_slot, &ring), 0);

	cr_assert_eq(tl_path_key(run.run_slot, "/work", &key), 0);
	cr_assert_eq(bpf_map_lookup_elem(node.path_rules_fd, &key, &rule), 0);
	cr_assert_eq(rule.access, TETHER_ACCESS_READ | TETHER_ACCESS_WRITE);
	cr_assert_eq(rule.rule_id, 1);
	/* the rule's inode entry became a pin: its own access, plus PINNED */
	ikey = (struct tether_inode_key){ run.run_slot, (8u << 20) | 1, 1234 };
	cr_assert_eq(bpf_map_lookup_elem(node.inode_rules_fd, &ikey, &rule), 0);
	cr_assert_eq(rule.access, TETHER_ACCESS_READ | TETHER_ACCESS_WRITE | TETHER_ACCESS_PINNED);
	cr_assert_eq(rule.rule_id, 1);
	ikey.ino = 1300;
	cr_assert_eq(bpf_map_lookup_elem(node.inode_rules_fd, &ikey, &rule), 0);
	cr_assert_eq(rule.access, TETHER_ACCESS_READ);
	cr_assert_eq(rule.rule_id, 2);
	ikey.ino = 2;
	cr_assert_eq(bpf_map_lookup_elem(node.inode_rules_fd, &ikey, &rule), 0);
	cr_assert_eq(rule.access, TETHER_ACCESS_READ | TETHER_ACCESS_PINNED);
	cr_assert_eq(rule.rule_id, 0);
	/* "/" has no identity in the plan: no inode entry */
	cr_assert_eq(run.rule_count, 3);
	cr_assert_not(run.rules[0].has_inode);
	cr_assert_eq(run.pin_count, 2);

	akey.run_slot = run.run_slot;
	memcpy(akey.name, "tether-test", 11);
	cr_assert_eq(bpf_map_lookup_elem(node.abstract_fd, &akey, &one), 0);
	nkey.run_slot = run.run_slot;
	memcpy(nkey.addr, net_entry(2, 128).addr, 16);
	cr_assert_eq(bpf_map_lookup_elem(node.net_rules_fd, &nkey, &nrule), 0);
	cr_assert_eq(nrule.rule_id, 2);
	cr_assert_eq(nrule.tcp_count, 1);

	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
}

Test(loader_maps, remove_leaves_nothing_of_the_run)
{
	struct tl_run run;
	struct tether_pty_key pty;
	uint64_t key_addr = 0xffff888000001000ull, master = 1;
	uint32_t slot;
	int ring;

	install(77, &run);
	slot = run.run_slot;
	/* what BPF writes while the run lives: a pty and a key */
	pty = (struct tether_pty_key){ slot, 3 };
	cr_assert_eq(bpf_map_update_elem(node.ptys_fd, &pty, &master, BPF_ANY), 0);
	cr_assert_eq(bpf_map_update_elem(node.run_keys_fd, &key_addr, &run.cgroup_id, BPF_ANY), 0);
	cr_assert_gt(entries_of_slot(slot), 0);

	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	cr_assert_not(run.active);
	cr_assert_eq(entries_of_slot(slot), 0);
	cr_assert_neq(bpf_map_lookup_elem(node.runs_fd, &(uint64_t){ 77 }, &(struct tether_run){ 0 }),
		      0);
	/* the controller still reads its ring: the slot stays its own until released */
	cr_assert_eq(bpf_map_lookup_elem(node.run_slots_fd, &slot, &master), 0);
	cr_assert_eq(master, 77);
	{
		struct tl_run next;

		install(78, &next);
		cr_assert_neq(next.run_slot, slot);
		cr_assert_eq(tl_run_remove(&node, &next, NULL), 0);
		cr_assert_eq(tl_run_release(&node, &next, NULL), 0);
		tl_run_free(&next);
	}
	cr_assert_eq(tl_run_release(&node, &run, NULL), 0);
	cr_assert_eq(run.run_slot, 0);
	/* the slot is free again; its ring stays for the slot's next run */
	cr_assert_neq(bpf_map_lookup_elem(node.run_slots_fd, &slot, &master), 0);
	cr_assert_eq(bpf_map_lookup_elem(node.audit_rings_fd, &slot, &ring), 0);
	cr_assert_neq(bpf_map_lookup_elem(node.run_keys_fd, &key_addr, &master), 0);
	tl_run_free(&run);
	cr_assert_eq(run.ring_fd, -1);
}

Test(loader_maps, a_failed_install_removes_what_it_wrote)
{
	static char *bad[] = { "" };	/* an abstract name of 0 bytes */
	struct tl_error err = { { 0 } };
	struct tl_run_plan p = plan;
	struct tl_run run;
	uint32_t slot = 1;
	uint64_t holder;

	p.abstract_sockets = bad;
	p.abstract_count = 1;
	cr_assert_eq(tl_run_install(&node, 99, &p, &run, &err), -EINVAL);
	cr_assert_not_null(strstr(err.msg, "abstract socket name 0"), "%s", err.msg);
	cr_assert_eq(entries_of_slot(slot), 0);
	cr_assert_neq(bpf_map_lookup_elem(node.run_slots_fd, &slot, &holder), 0);
	cr_assert_neq(bpf_map_lookup_elem(node.runs_fd, &(uint64_t){ 99 }, &(struct tether_run){ 0 }),
		      0);
}

Test(loader_maps, two_runs_get_two_slots)
{
	struct tl_run a, b;
	uint64_t *ids = NULL;
	size_t count = 0;

	install(5, &a);
	install(5 + TETHER_MAX_RUNS, &b);
	cr_assert_eq(a.run_slot, 1);
	cr_assert_eq(b.run_slot, 2);
	cr_assert_eq(tl_runs_list(&node, &ids, &count), 0);
	cr_assert_eq(count, 2);
	free(ids);
	cr_assert_eq(tl_run_remove(&node, &a, NULL), 0);
	cr_assert_eq(tl_run_remove(&node, &b, NULL), 0);
	tl_run_free(&a);
	tl_run_free(&b);
}

static uint32_t map_id(int fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	cr_assert_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	return info.id;
}

Test(loader_maps, a_slots_ring_is_kept_for_its_next_run_and_a_live_runs_is_its_own)
{
	struct tl_run a, b, c;
	uint32_t ring_a, ring_b, in_map;

	install(10, &a);
	ring_a = map_id(a.ring_fd);
	cr_assert_eq(bpf_map_lookup_elem(node.audit_rings_fd, &a.run_slot, &in_map), 0);
	cr_assert_eq(in_map, ring_a);
	install(11, &b);
	ring_b = map_id(b.ring_fd);
	cr_assert_neq(ring_a, ring_b);
	cr_assert_eq(tl_run_remove(&node, &a, NULL), 0);
	cr_assert_eq(tl_run_release(&node, &a, NULL), 0);
	tl_run_free(&a);
	/* the next run takes slot 1 again, and the ring that waited there */
	install(12, &c);
	cr_assert_eq(c.run_slot, 1);
	cr_assert_eq(map_id(c.ring_fd), ring_a);
	cr_assert_eq(tl_run_remove(&node, &b, NULL), 0);
	cr_assert_eq(tl_run_remove(&node, &c, NULL), 0);
	tl_run_free(&b);
	tl_run_free(&c);
}

/*
 * Installs a run of `cgroup_id`, asserts that it took `slot` and the ring
 * `ring`, and that ring_ids names that ring, then removes and releases it.
 */
static void run_takes_slot_ring(uint64_t cgroup_id, uint32_t slot, uint32_t ring)
{
	struct tl_run run;
	uint32_t id = 0;

	install(cgroup_id, &run);
	cr_assert_eq(run.run_slot, slot);
	cr_assert_eq(map_id(run.ring_fd), ring);
	cr_assert_eq(bpf_map_lookup_elem(node.ring_ids_fd, &slot, &id), 0);
	cr_assert_eq(id, ring);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	cr_assert_eq(tl_run_release(&node, &run, NULL), 0);
	tl_run_free(&run);
}

/*
 * ring_ids keeps each slot's ring id, so that a run finds its slot's ring
 * without a map-of-maps lookup; an id missing (a controller died between
 * the ring's registration and the id's) or naming no ring falls back to
 * audit_rings, whose ring is reused and its id written back.
 */
Test(loader_maps, ring_ids_names_each_slots_ring_and_a_missing_or_stale_id_falls_back)
{
	struct tl_run a;
	uint32_t slot, ring, id = 0, bogus;
	int other;

	install(50, &a);
	slot = a.run_slot;
	ring = map_id(a.ring_fd);
	cr_assert_eq(bpf_map_lookup_elem(node.ring_ids_fd, &slot, &id), 0);
	cr_assert_eq(id, ring);
	cr_assert_eq(tl_run_remove(&node, &a, NULL), 0);
	cr_assert_eq(tl_run_release(&node, &a, NULL), 0);
	tl_run_free(&a);

	/* missing */
	id = 0;
	cr_assert_eq(bpf_map_update_elem(node.ring_ids_fd, &slot, &id, BPF_ANY), 0);
	run_takes_slot_ring(51, slot, ring);

	/* naming a map that is not an audit ring: never taken for the slot's */
	other = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	cr_assert_geq(other, 0);
	bogus = map_id(other);
	cr_assert_eq(bpf_map_update_elem(node.ring_ids_fd, &slot, &bogus, BPF_ANY), 0);
	run_takes_slot_ring(52, slot, ring);
	close(other);
}

Test(loader_maps, adopting_a_run_whose_slot_another_holds_fails)
{
	struct tl_error err = { { 0 } };
	struct tl_run run, adopted;
	uint64_t other = 999;

	install(20, &run);
	cr_assert_eq(tl_run_adopt(&node, 20, &adopted, &err), 0, "%s", err.msg);
	cr_assert_eq(map_id(adopted.ring_fd), map_id(run.ring_fd));
	tl_run_free(&adopted);
	cr_assert_eq(bpf_map_update_elem(node.run_slots_fd, &run.run_slot, &other, BPF_EXIST), 0);
	cr_assert_eq(tl_run_adopt(&node, 20, &adopted, &err), -EUCLEAN);
	cr_assert_not_null(strstr(err.msg, "is not held by it"), "%s", err.msg);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
}

Test(loader_maps, seq_starts_at_one_and_is_shared_with_the_kernel_counter)
{
	struct tl_run_counters c;
	struct tl_run run;
	uint64_t seq = 0;
	uint32_t slot = 1;

	/* an earlier run of the slot left its count: the install resets it */
	node.run_seq[slot] = 99;
	install(300, &run);
	cr_assert_eq(run.run_slot, slot);
	cr_assert_eq(tl_run_counters(&node, &run, &c), 0);
	cr_assert_eq(c.seq, 0);
	cr_assert_eq(tl_run_seq_next(&node, &run, &seq), 0);
	cr_assert_eq(seq, 1);
	/* a kernel record takes the next one (BPF's __sync_fetch_and_add on the same word) */
	__sync_fetch_and_add(&node.run_seq[slot], 1);
	cr_assert_eq(tl_run_seq_next(&node, &run, &seq), 0);
	cr_assert_eq(seq, 3);
	/* the map holds what the mapping holds */
	{
		uint64_t in_map = 0;

		cr_assert_eq(bpf_map_lookup_elem(node.run_seq_fd, &slot, &in_map), 0);
		cr_assert_eq(in_map, 3);
	}
	cr_assert_eq(tl_run_counters(&node, &run, &c), 0);
	cr_assert_eq(c.seq, 3);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	cr_assert_eq(tl_run_seq_next(&node, &run, &seq), -ENOENT);
	cr_assert_eq(tl_run_counters(&node, &run, &c), -ENOENT);
	tl_run_free(&run);
}

struct taker {
	struct tl_run *run;
	uint64_t *got;
};

static void *take_numbers(void *arg)
{
	struct taker *t = arg;

	for (int i = 0; i < 10000; i++)
		cr_assert_eq(tl_run_seq_next(&node, t->run, &t->got[i]), 0);
	return NULL;
}

static int u64_compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

Test(loader_maps, concurrent_takers_never_share_a_number)
{
	static uint64_t got[2][10000], all[20000];
	struct taker t[2];
	pthread_t th[2];
	struct tl_run run;

	install(301, &run);
	for (int i = 0; i < 2; i++) {
		t[i] = (struct taker){ &run, got[i] };
		cr_assert_eq(pthread_create(&th[i], NULL, take_numbers, &t[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	memcpy(all, got[0], sizeof(got[0]));
	memcpy(all + 10000, got[1], sizeof(got[1]));
	qsort(all, 20000, sizeof(all[0]), u64_compare);
	for (int i = 0; i < 20000; i++)
		cr_assert_eq(all[i], (uint64_t)i + 1);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
}

Test(loader_maps, counters_read_the_kernel_side)
{
	struct tl_run_counters c;
	struct tether_run value;
	struct tl_run run;

	install(302, &run);
	cr_assert_eq(bpf_map_lookup_elem(node.runs_fd, &run.cgroup_id, &value), 0);
	value.audit_lost = 4;
	value.audit_refused = 3;
	value.egress_bytes = 1000;
	value.net_state = TETHER_NET_BUDGET_REPORTED;
	value.ingress_dropped = 6;
	cr_assert_eq(bpf_map_update_elem(node.runs_fd, &run.cgroup_id, &value, BPF_EXIST), 0);
	cr_assert_eq(tl_run_counters(&node, &run, &c), 0);
	cr_assert_eq(c.audit_lost, 4);
	cr_assert_eq(c.audit_refused, 3);
	cr_assert_eq(c.egress_bytes, 1000);
	cr_assert(c.egress_exhausted);
	cr_assert_eq(c.ingress_dropped, 6);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
}

Test(loader_maps, reclaim_removes_a_dead_controllers_run)
{
	struct tl_error err = { { 0 } };
	struct tether_pty_key pty;
	uint64_t key_addr = 0xffff888000002000ull, master = 1, seq;
	struct tl_run run;
	uint32_t slot;
	int ring;

	install(303, &run);
	slot = run.run_slot;
	cr_assert_eq(tl_run_seq_next(&node, &run, &seq), 0);
	pty = (struct tether_pty_key){ slot, 4 };
	cr_assert_eq(bpf_map_update_elem(node.ptys_fd, &pty, &master, BPF_ANY), 0);
	cr_assert_eq(bpf_map_update_elem(node.run_keys_fd, &key_addr, &run.cgroup_id, BPF_ANY), 0);
	/* the controller died: its tl_run is gone, only the maps know the run */
	tl_run_free(&run);

	cr_assert_eq(tl_run_reclaim(&node, 303, true, &err), 0, "%s", err.msg);
	cr_assert_eq(entries_of_slot(slot), 0);
	cr_assert_neq(bpf_map_lookup_elem(node.run_slots_fd, &slot, &master), 0);
	cr_assert_eq(bpf_map_lookup_elem(node.audit_rings_fd, &slot, &ring), 0);
	cr_assert_neq(bpf_map_lookup_elem(node.run_keys_fd, &key_addr, &master), 0);
	cr_assert_eq(node.run_seq[slot], 0);
	cr_assert_eq(tl_run_reclaim(&node, 303, true, &err), -ENOENT);
}

Test(loader_maps, a_renewed_admission_is_noted_once_and_removal_spares_other_runs)
{
	struct tl_error err = { { 0 } };
	struct tl_net_entry e = net_entry(30, 128);
	struct tl_run a, b;
	uint32_t slot_a;
	size_t before;

	install(400, &a);
	install(401, &b);
	slot_a = a.run_slot;
	before = a.net_key_count;
	cr_assert_eq(before, 1);	/* the plan's one entry */
	cr_assert_eq(tl_run_net_write(&node, &a, &e, &err), 0, "%s", err.msg);
	e.rule.rule_id = 31;	/* the same block again, renewed with another value */
	cr_assert_eq(tl_run_net_write(&node, &a, &e, &err), 0, "%s", err.msg);
	cr_assert_eq(a.net_key_count, before + 1);
	cr_assert_eq(tl_run_net_write(&node, &b, &e, &err), 0, "%s", err.msg);
	cr_assert_eq(tl_run_remove(&node, &a, NULL), 0);
	cr_assert_eq(entries_of_slot(slot_a), 0);
	/* b's entries are b's: its plan's and its admission */
	cr_assert_eq(slot_entries(node.net_rules_fd, sizeof(struct tether_net_key),
				  offsetof(struct tether_net_key, run_slot), b.run_slot), 2);
	cr_assert_eq(tl_run_remove(&node, &b, NULL), 0);
	tl_run_free(&a);
	tl_run_free(&b);
}

Test(loader_maps, net_write_checks_and_writes_an_entry)
{
	struct tl_error err = { { 0 } };
	struct tl_net_entry e = net_entry(9, 120);
	struct tether_net_key key = { .prefixlen = 32 + 120 };
	struct tether_net_rule rule;
	struct tl_run run;
	uint32_t slot;

	install(304, &run);
	cr_assert_eq(tl_run_net_write(&node, &run, &e, &err), 0, "%s", err.msg);
	key.run_slot = run.run_slot;
	memcpy(key.addr, e.addr, 16);
	cr_assert_eq(bpf_map_lookup_elem(node.net_rules_fd, &key, &rule), 0);
	cr_assert_eq(rule.rule_id, 9);
	/* an address within the /120 finds it: the LPM key is the run slot, then the address */
	key.prefixlen = 32 + 128;
	key.addr[15] = 10;
	cr_assert_eq(bpf_map_lookup_elem(node.net_rules_fd, &key, &rule), 0);
	cr_assert_eq(rule.rule_id, 9);
	e.prefixlen = 129;
	cr_assert_eq(tl_run_net_write(&node, &run, &e, &err), -EINVAL);
	e.prefixlen = 120;
	e.rule.udp_count = TETHER_NET_PORT_RANGES + 1;
	cr_assert_eq(tl_run_net_write(&node, &run, &e, &err), -EINVAL);
	slot = run.run_slot;
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	cr_assert_eq(entries_of_slot(slot), 0);
	tl_run_free(&run);
}

/* The slot's run_exit entry as the map holds it. */
static struct tether_run_exit exit_entry(uint32_t slot)
{
	struct tether_run_exit e;

	cr_assert_eq(bpf_map_lookup_elem(node.run_exit_fd, &slot, &e), 0);
	return e;
}

/* What exit.bpf.c writes when the main process's last thread exits. */
static void kernel_writes_exit(uint32_t slot, uint32_t tgid, int32_t status, uint64_t ns)
{
	struct tether_run_exit e = { .tgid = tgid, .exited = 1, .status = status, .exit_ns = ns };

	cr_assert_eq(bpf_map_update_elem(node.run_exit_fd, &slot, &e, BPF_ANY), 0);
}

Test(loader_maps, install_resets_the_exit_the_slots_last_run_left)
{
	struct tl_run run;
	uint32_t slot = 1;	/* the lowest free */
	struct tether_run_exit e;

	/* the slot's previous run ended with exit(7) and left its entry */
	kernel_writes_exit(slot, 4000, 7 << 8, 55);
	install(310, &run);
	cr_assert_eq(run.run_slot, slot);
	e = exit_entry(slot);
	cr_assert_eq(e.tgid, 0);
	cr_assert_eq(e.exited, 0);
	cr_assert_eq(e.status, 0);
	cr_assert_eq(e.exit_ns, 0);
	cr_assert_eq(tl_run_main_exit(&node, slot, &e), 0);
	cr_assert_eq(e.tgid, 0);
	cr_assert_eq(e.exited, 0);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
}

Test(loader_maps, set_main_then_exit_reads_what_the_kernel_wrote)
{
	struct tl_error err = { { 0 } };
	struct tether_run_exit e;
	struct tl_run run;

	install(311, &run);
	cr_assert_eq(tl_run_set_main(&node, &run, 1234, &err), 0, "%s", err.msg);
	e = exit_entry(run.run_slot);
	cr_assert_eq(e.tgid, 1234);
	cr_assert_eq(e.exited, 0);
	/* running: only the tgid */
	memset(&e, 0xff, sizeof(e));
	cr_assert_eq(tl_run_main_exit(&node, run.run_slot, &e), 0);
	cr_assert_eq(e.tgid, 1234);
	cr_assert_eq(e.exited, 0);
	cr_assert_eq(e.status, 0);
	cr_assert_eq(e.exit_ns, 0);
	cr_assert_eq(e.reserved, 0);

	/* killed by SIGKILL */
	kernel_writes_exit(run.run_slot, 1234, 9, 777);
	cr_assert_eq(tl_run_main_exit(&node, run.run_slot, &e), 0);
	cr_assert_eq(e.tgid, 1234);
	cr_assert_eq(e.exited, 1);
	cr_assert_eq(e.status, 9);
	cr_assert_eq(e.exit_ns, 777);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
}

Test(loader_maps, set_main_again_resets_exited_and_status)
{
	struct tl_error err = { { 0 } };
	struct tether_run_exit e;
	struct tl_run run;

	install(312, &run);
	cr_assert_eq(tl_run_set_main(&node, &run, 50, &err), 0, "%s", err.msg);
	kernel_writes_exit(run.run_slot, 50, 3 << 8, 1000);
	cr_assert_eq(tl_run_set_main(&node, &run, 51, &err), 0, "%s", err.msg);
	e = exit_entry(run.run_slot);
	cr_assert_eq(e.tgid, 51);
	cr_assert_eq(e.exited, 0);
	cr_assert_eq(e.status, 0);
	cr_assert_eq(e.exit_ns, 0);
	cr_assert_eq(tl_run_main_exit(&node, run.run_slot, &e), 0);
	cr_assert_eq(e.tgid, 51);
	cr_assert_eq(e.exited, 0);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
}

Test(loader_maps, an_exit_being_written_reads_as_not_exited)
{
	struct tl_error err = { { 0 } };
	struct tether_run_exit e = { .tgid = 60, .exit_ns = 99, .status = 5 << 8 };
	struct tl_run run;

	install(313, &run);
	cr_assert_eq(tl_run_set_main(&node, &run, 60, &err), 0, "%s", err.msg);
	/* BPF claimed the entry (exit_ns) and wrote status, but not exited yet */
	cr_assert_eq(bpf_map_update_elem(node.run_exit_fd, &run.run_slot, &e, BPF_ANY), 0);
	memset(&e, 0xff, sizeof(e));
	cr_assert_eq(tl_run_main_exit(&node, run.run_slot, &e), 0);
	cr_assert_eq(e.tgid, 60);
	cr_assert_eq(e.exited, 0);
	cr_assert_eq(e.status, 0);
	cr_assert_eq(e.exit_ns, 0);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
}

Test(loader_maps, main_exit_checks_the_slot_and_set_main_the_run)
{
	struct tl_error err = { { 0 } };
	struct tether_run_exit e = { .tgid = 77 };
	struct tl_run run;

	cr_assert_eq(tl_run_main_exit(&node, 0, &e), -EINVAL);
	cr_assert_eq(tl_run_main_exit(&node, TETHER_RUN_EXIT_ENTRIES, &e), -EINVAL);
	/* output untouched on failure */
	cr_assert_eq(e.tgid, 77);
	install(314, &run);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	cr_assert_eq(tl_run_set_main(&node, &run, 77, &err), -ENOENT);
	cr_assert_not_null(strstr(err.msg, "not installed"), "%s", err.msg);
	tl_run_free(&run);
}

Test(loader_maps, remove_and_reclaim_zero_the_exit_entry)
{
	struct tl_error err = { { 0 } };
	struct tether_run_exit e;
	struct tl_run run;
	uint32_t slot;

	install(315, &run);
	slot = run.run_slot;
	cr_assert_eq(tl_run_set_main(&node, &run, 70, &err), 0, "%s", err.msg);
	kernel_writes_exit(slot, 70, 0, 10);
	cr_assert_eq(tl_run_remove(&node, &run, NULL), 0);
	tl_run_free(&run);
	e = exit_entry(slot);
	cr_assert_eq(e.tgid, 0);
	cr_assert_eq(e.exited, 0);
	cr_assert_eq(e.exit_ns, 0);

	/* a dead controller's run: reclaim zeroes it too */
	install(316, &run);
	slot = run.run_slot;
	cr_assert_eq(tl_run_set_main(&node, &run, 71, &err), 0, "%s", err.msg);
	kernel_writes_exit(slot, 71, 11 | 0x80, 20);
	tl_run_free(&run);
	cr_assert_eq(tl_run_reclaim(&node, 316, true, &err), 0, "%s", err.msg);
	e = exit_entry(slot);
	cr_assert_eq(e.tgid, 0);
	cr_assert_eq(e.exited, 0);
	cr_assert_eq(e.status, 0);
	cr_assert_eq(e.exit_ns, 0);
}
