// SPDX-License-Identifier: GPL-2.0
/*
 * OCSF events (runtime/sink/ocsf.h) for every record kind tether makes,
 * checked against what the OCSF schema itself requires of each class:
 * tests/data/ocsf-1.x-required.json, which scripts/ocsf-required derives
 * from the schema's repository at a release tag.  Each event must parse,
 * carry every required attribute of its class and of every object it holds
 * (with the schema's types and constraints), use only the schema's enum
 * values, and say what docs/audit.md's mapping table says.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "runtime/audit.h"
#include "runtime/dnsproxy.h"
#include "runtime/json.h"
#include "runtime/record.h"
#include "runtime/sink/ocsf.h"
#include "runtime/sink/sink.h"

#define REQUIRED_FILE "tests/data/ocsf-1.x-required.json"
/* in the process's environment and in the command's arguments: never in an event */
#define CANARY_ENV "canary-env-5f3a9c"
#define CANARY_ARG "canary-arg-81d2e7"

static const struct record_context full_ctx = {
    .host = "node-7",
    .boot_id = "0b6a2f9e-1c3d-4e5f-8a9b-0c1d2e3f4a5b",
    .tether_version = "0.9.1",
    .tenant = "team-a",
    .attempt = 2,
    .trace_id = "4bf92f3577b34da6a3ce929d0e0e4736",
    .span_id = "00f067aa0ba902b7",
    .policy_digest = "sha256:abcd",
};

static json_t *schema(void)
{
	static json_t *loaded;
	json_error_t err;

	if (!loaded) {
		loaded = json_load_file(REQUIRED_FILE, 0, &err);
		cr_assert_not_null(loaded,
				   "%s:%d: %s (run from the repository root; "
				   "regenerate with scripts/ocsf-required)",
				   REQUIRED_FILE, err.line, err.text);
	}
	return loaded;
}

static bool in_values(json_t *values, json_int_t value)
{
	json_t *v;
	size_t i;

	json_array_foreach(values, i, v) if (json_integer_value(v) == value) return true;
	return false;
}

static void check_type(const char *path, json_t *v, const char *type)
{
	size_t len = strlen(type), i;
	json_t *e;

	if (len > 2 && !strcmp(type + len - 2, "[]")) {
		char base[64];

		snprintf(base, sizeof(base), "%.*s", (int)(len - 2), type);
		cr_expect(json_is_array(v), "%s: an array (%s)", path, type);
		json_array_foreach(v, i, e) check_type(path, e, base);
		return;
	}
	if (!strcmp(type, "integer_t") || !strcmp(type, "long_t"))
		cr_expect(json_is_integer(v), "%s: an integer (%s)", path, type);
	else if (!strcmp(type, "string_t"))
		cr_expect(json_is_string(v), "%s: a string", path);
	else if (!strcmp(type, "boolean_t"))
		cr_expect(json_is_boolean(v), "%s: a boolean", path);
	else if (!strcmp(type, "float_t"))
		cr_expect(json_is_number(v), "%s: a number", path);
	else if (strcmp(type, "json_t"))
		cr_expect(json_is_object(v), "%s: an object (%s)", path, type);
}

/*
 * Every required attribute of `def` (a class or an object of the schema
 * file) is in `obj`, with its type; its constraints hold; and every object
 * `obj` holds is checked the same way against its own definition.
 */
static void walk(json_t *def, json_t *obj, const char *path)
{
	json_t *objects = json_object_get(schema(), "objects");
	json_t *constraints = json_object_get(def, "constraints"), *v, *list;
	const char *key;
	char sub[512];
	size_t i;

	cr_assert(json_is_object(obj), "%s: an object", path);
	json_object_foreach(json_object_get(def, "required"), key, v)
	{
		json_t *got = json_object_get(obj, key);

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
		cr_expect_not_null(got, "%s is required by OCSF %s", sub,
				   json_string_value(json_object_get(schema(), "ocsf_version")));
		if (got)
			check_type(sub, got, json_string_value(v));
	}
	if ((list = json_object_get(constraints, "at_least_one"))) {
		size_t present = 0;

		json_array_foreach(list, i, v) present +=
		    json_object_get(obj, json_string_value(v)) != NULL;
		cr_expect_geq(present, 1, "%s: at least one of the constraint's list (%s, ...)",
			      *path ? path : "(event)", json_string_value(json_array_get(list, 0)));
	}
	if ((list = json_object_get(constraints, "just_one"))) {
		size_t present = 0;

		json_array_foreach(list, i, v) present +=
		    json_object_get(obj, json_string_value(v)) != NULL;
		cr_expect_eq(present, 1, "%s: just one of the constraint's list", path);
	}
	json_object_foreach(obj, key, v)
	{
		json_t *type = json_object_get(json_object_get(def, "objects"), key), *child;
		json_t *attrs = json_object_get(def, "attributes");
		json_t *known = json_object_get(attrs, key);
		json_t *values = json_object_get(json_object_get(def, "enums"), key);

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
		/* an object OCSF leaves open (unmapped) lists no attributes */
		cr_expect(known || !json_object_size(attrs),
			  "%s is no attribute OCSF defines there", sub);
		if (known)
			check_type(sub, v, json_string_value(known));
		if (values && json_is_integer(v))
			cr_expect(in_values(values, json_integer_value(v)),
				  "%s: %lld is none of the schema's values", sub,
				  (long long)json_integer_value(v));

		if (!type || !(child = json_object_get(objects, json_string_value(type))))
			continue;
		if (json_is_array(v)) {
			json_t *e;

			json_array_foreach(v, i, e) walk(child, e, sub);
		} else {
			walk(child, v, sub);
		}
	}
}

static bool in_enum(json_t *class_def, const char *attr, json_int_t value)
{
	return in_values(json_object_get(json_object_get(class_def, "enums"), attr), value);
}

static json_int_t int_at(json_t *root, const char *dotted)
{
	char buf[256], *save = NULL, *part;
	json_t *v = root;

	snprintf(buf, sizeof(buf), "%s", dotted);
	for (part = strtok_r(buf, ".", &save); part && v; part = strtok_r(NULL, ".", &save))
		v = json_object_get(v, part);
	cr_assert(json_is_integer(v), "%s: an integer", dotted);
	return json_integer_value(v);
}

static const char *str_at(json_t *root, const char *dotted)
{
	char buf[256], *save = NULL, *part;
	json_t *v = root;

	snprintf(buf, sizeof(buf), "%s", dotted);
	for (part = strtok_r(buf, ".", &save); part && v; part = strtok_r(NULL, ".", &save))
		v = json_object_get(v, part);
	cr_assert(json_is_string(v), "%s: a string", dotted);
	return json_string_value(v);
}

/* What the mapping table says an event is. */
struct expect {
	unsigned int class_uid, activity_id;
	int action_id, disposition_id;
};

/*
 * Parses one event and checks it against the schema file and `want`.
 * Returns the parsed event (the caller frees it).
 */
static json_t *check_event(const char *text, const struct expect *want)
{
	json_t *classes = json_object_get(schema(), "classes"), *ev, *def;
	json_error_t err;
	char uid[16];
	json_int_t class_uid, activity;

	ev = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	cr_assert_not_null(ev, "not JSON (%s at %d): %s", err.text, err.position, text);
	class_uid = int_at(ev, "class_uid");
	activity = int_at(ev, "activity_id");
	snprintf(uid, sizeof(uid), "%lld", (long long)class_uid);
	def = json_object_get(classes, uid);
	cr_assert_not_null(def, "class_uid %s is none of the classes tether maps to: %s", uid,
			   text);
	cr_expect_eq(class_uid, want->class_uid, "class_uid: %s", text);
	cr_expect_eq(activity, want->activity_id, "activity_id: %s", text);
	cr_expect_eq(int_at(ev, "action_id"), want->action_id, "action_id: %s", text);
	cr_expect_eq(int_at(ev, "disposition_id"), want->disposition_id, "disposition_id: %s",
		     text);
	cr_expect_eq(int_at(ev, "category_uid"), int_at(def, "category_uid"), "%s", text);
	cr_expect_eq(int_at(ev, "type_uid"), class_uid * 100 + activity, "type_uid: %s", text);
	cr_expect(in_enum(def, "activity_id", activity), "activity_id %lld: %s",
		  (long long)activity, text);
	cr_expect(in_enum(def, "action_id", int_at(ev, "action_id")), "%s", text);
	cr_expect(in_enum(def, "disposition_id", int_at(ev, "disposition_id")), "%s", text);
	cr_expect(in_enum(def, "severity_id", int_at(ev, "severity_id")), "%s", text);
	cr_expect(in_enum(def, "status_id", int_at(ev, "status_id")), "%s", text);
	cr_expect_str_eq(str_at(ev, "metadata.version"),
			 json_string_value(json_object_get(schema(), "ocsf_version")));
	cr_expect_str_eq(str_at(ev, "metadata.version"), OCSF_VERSION);
	cr_expect_str_eq(str_at(ev, "metadata.product.name"), "tether");
	cr_expect(json_is_object(json_object_get(ev, "unmapped")), "unmapped: %s", text);
	walk(def, ev, "");
	cr_expect_null(strstr(text, CANARY_ENV), "an environment value in: %s", text);
	cr_expect_null(strstr(text, CANARY_ARG), "an argument beyond argv[0] in: %s", text);
	return ev;
}

static char *encode(const struct record *rec)
{
	struct strbuf sb = {0};

	cr_assert_eq(ocsf_encode(rec, &sb), 0);
	cr_assert_null(memchr(sb.data, '\n', sb.len), "one line: %s", sb.data);
	return sb.data;
}

static void expect_verdict(struct expect *e, uint32_t decision)
{
	e->action_id = decision == TETHER_DECISION_DENY ? 2 : 1;
	e->disposition_id = decision == TETHER_DECISION_DENY	     ? 2
			    : decision == TETHER_DECISION_WOULD_DENY ? 15
								     : 1;
}

static struct tether_fs_event fs_event(uint32_t op, uint32_t decision)
{
	struct tether_fs_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.kind = tether_fs_op_kind(op);
	ev.hdr.size = sizeof(ev);
	ev.hdr.cgroup_id = 77;
	ev.hdr.pid = 10;
	ev.hdr.tgid = 9;
	ev.hdr.seq = 5;
	ev.hdr.ts_ns = 1000;
	ev.op = op;
	ev.decision = decision;
	ev.err = decision == TETHER_DECISION_DENY ? -EACCES : 0;
	ev.reason =
	    decision == TETHER_DECISION_ALLOW ? TETHER_REASON_RULE : TETHER_REASON_DEFAULT_DENY;
	ev.rule_id = decision == TETHER_DECISION_ALLOW ? 0 : TETHER_RULE_NONE;
	ev.access = TETHER_ACCESS_WRITE;
	ev.uid = 1000;
	strcpy(ev.comm, "agent");
	strcpy(ev.path, op == TETHER_FS_CAPABILITY ? "21" : "/work/out/file.txt");
	strcpy(ev.exe, "/usr/bin/agent");
	return ev;
}

/* The mapping table's class and activity for each fs-body op (docs/audit.md, "OCSF"). */
static const struct {
	uint32_t op;
	unsigned int class_uid, activity_id;
} fs_table[] = {
    {TETHER_FS_OPEN_WRITE, 1001, 3},
    {TETHER_FS_CREATE, 1001, 1},
    {TETHER_FS_UNLINK, 1001, 4},
    {TETHER_FS_MKDIR, 1001, 1},
    {TETHER_FS_RMDIR, 1001, 4},
    {TETHER_FS_RENAME, 1001, 5},
    {TETHER_FS_LINK, 1001, 1},
    {TETHER_FS_SYMLINK, 1001, 1},
    {TETHER_FS_TRUNCATE, 1001, 3},
    {TETHER_FS_CHMOD, 1001, 7},
    {TETHER_FS_CHOWN, 1001, 7},
    {TETHER_FS_MOUNT, 1001, 12},
    {TETHER_FS_UMOUNT, 1001, 13},
    {TETHER_FS_PIVOT_ROOT, 1001, 99},
    {TETHER_FS_MOVE_MOUNT, 1001, 12},
    {TETHER_FS_SETXATTR, 1001, 6},
    {TETHER_FS_REMOVEXATTR, 1001, 6},
    {TETHER_FS_UTIMES, 1001, 6},
    {TETHER_FS_SET_ACL, 1001, 7},
    {TETHER_FS_REMOVE_ACL, 1001, 7},
    {TETHER_FS_IOCTL, 1001, 99},
    {TETHER_FS_TTY_INJECT, 1001, 99},
    {TETHER_FS_CLONE_INTO_CGROUP, 1007, 1},
    {TETHER_FS_MKNOD_DEVICE, 1001, 1},
    {TETHER_FS_OPEN_DEVICE, 1001, 3},
    {TETHER_FS_PTRACE, 1007, 3},
    {TETHER_FS_UNIX_CONNECT, 1001, 14},
    {TETHER_FS_UNIX_SEND, 1001, 99},
    {TETHER_FS_BPF, 1007, 99},
    {TETHER_FS_KERNEL_LOAD, 1007, 99},
    {TETHER_FS_MODULE_REQUEST, 1007, 99},
    {TETHER_FS_SIGNAL, 1007, 99},
    {TETHER_FS_OPEN_READ, 1001, 2},
    {TETHER_FS_EXEC, 1007, 1},
    {TETHER_FS_MMAP_EXEC, 1001, 99},
    {TETHER_FS_MPROTECT_EXEC, 1001, 99},
    {TETHER_FS_SOCKET_CREATE, 4001, 99},
    {TETHER_FS_CAPABILITY, 1007, 99},
    {TETHER_FS_USERNS, 1007, 99},
    {TETHER_FS_PERF_EVENT, 1007, 99},
    {TETHER_FS_SYSLOG, 1007, 99},
    {TETHER_FS_SETTIME, 1007, 99},
    {TETHER_FS_KEY, 1007, 99},
    {TETHER_FS_TASK_CONTROL, 1007, 99},
    {TETHER_FS_ANON_INODE, 1007, 99},
};

/* Every op the kernel names, each decision, with and without a context. */
Test(ocsf, every_fs_body_op_is_its_class_and_activity)
{
	static const uint32_t decisions[] = {TETHER_DECISION_ALLOW, TETHER_DECISION_DENY,
					     TETHER_DECISION_WOULD_DENY};
	const char *const rule_paths[] = {"/work"};

	setenv("TETHER_OCSF_CANARY", CANARY_ENV, 1);
	cr_assert_eq(sizeof(fs_table) / sizeof(fs_table[0]), TETHER_FS_ANON_INODE,
		     "every enum tether_fs_op has its row");
	for (size_t i = 0; i < sizeof(fs_table) / sizeof(fs_table[0]); i++) {
		for (size_t d = 0; d < 3; d++) {
			for (int with_ctx = 0; with_ctx < 2; with_ctx++) {
				struct tether_fs_event ev = fs_event(fs_table[i].op, decisions[d]);
				struct record_names names = {.run_id = "run-1",
							     .ctx = with_ctx ? &full_ctx : NULL,
							     .rule_paths = rule_paths,
							     .rule_count = 1};
				struct expect want = {fs_table[i].class_uid,
						      fs_table[i].activity_id, 0, 0};
				struct record_scratch scratch;
				struct record rec;
				json_t *got;
				char *text;

				cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec),
					     0);
				expect_verdict(&want, decisions[d]);
				text = encode(&rec);
				got = check_event(text, &want);
				cr_expect_str_eq(str_at(got, "unmapped.op"), rec.fs.op);
				cr_expect_str_eq(str_at(got, "unmapped.decision"),
						 record_decision_name(decisions[d]));
				cr_expect_eq(int_at(got, "actor.process.pid"), 9);
				cr_expect_str_eq(str_at(got, "actor.process.name"), "agent");
				cr_expect_str_eq(str_at(got, "actor.process.user.uid"), "1000");
				cr_expect_str_eq(str_at(got, "actor.process.file.path"),
						 "/usr/bin/agent");
				if (fs_table[i].class_uid == 1001)
					cr_expect_str_eq(str_at(got, "file.path"),
							 "/work/out/file.txt");
				json_decref(got);
				free(text);
			}
		}
	}
}

/* The envelope: where each field of the run's context goes. */
Test(ocsf, the_context_goes_to_metadata_device_and_unmapped)
{
	const char *const rule_paths[] = {"/work"};
	struct record_names names = {
	    .run_id = "run-1", .ctx = &full_ctx, .rule_paths = rule_paths, .rule_count = 1};
	struct tether_fs_event ev = fs_event(TETHER_FS_OPEN_WRITE, TETHER_DECISION_DENY);
	struct expect want = {1001, 3, 2, 2};
	struct record_scratch scratch;
	struct record rec;
	json_t *got;
	char *text;

	ev.reason = TETHER_REASON_RULE;
	ev.rule_id = 0;
	cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec), 0);
	text = encode(&rec);
	got = check_event(text, &want);
	cr_expect_str_eq(str_at(got, "metadata.product.version"), "0.9.1");
	cr_expect_str_eq(str_at(got, "metadata.uid"), "run-1:5");
	cr_expect_str_eq(str_at(got, "metadata.correlation_uid"), "run-1");
	cr_expect_str_eq(str_at(got, "metadata.tenant_uid"), "team-a");
	cr_expect_eq(int_at(got, "metadata.sequence"), 5);
	cr_expect_str_eq(str_at(got, "device.hostname"), "node-7");
	cr_expect_eq(int_at(got, "status_id"), 2);
	cr_expect_str_eq(str_at(got, "status_code"), "EACCES");
	cr_expect_str_eq(str_at(got, "status_detail"), "rule");
	cr_expect_str_eq(str_at(got, "metadata.event_code"), "fs/open_write");
	cr_expect_str_eq(str_at(got, "file.name"), "file.txt");
	cr_expect_str_eq(str_at(got, "unmapped.run_id"), "run-1");
	cr_expect_eq(int_at(got, "unmapped.seq"), 5);
	cr_expect_str_eq(str_at(got, "unmapped.tenant"), "team-a");
	cr_expect_eq(int_at(got, "unmapped.attempt"), 2);
	cr_expect_str_eq(str_at(got, "unmapped.trace_id"), full_ctx.trace_id);
	cr_expect_str_eq(str_at(got, "unmapped.span_id"), full_ctx.span_id);
	cr_expect_str_eq(str_at(got, "unmapped.policy_digest"), "sha256:abcd");
	cr_expect_str_eq(str_at(got, "unmapped.boot_id"), full_ctx.boot_id);
	cr_expect_str_eq(str_at(got, "unmapped.errno"), "EACCES");
	cr_expect_str_eq(str_at(got, "unmapped.reason"), "rule");
	cr_expect_eq(int_at(got, "unmapped.rule"), 0);
	cr_expect_str_eq(str_at(got, "unmapped.rule_path"), "/work");
	cr_expect_str_eq(str_at(got, "unmapped.access"), "write");
	json_decref(got);
	free(text);

	/* no context: the same event minus what only the context knows, still valid */
	names.ctx = NULL;
	cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec), 0);
	text = encode(&rec);
	got = check_event(text, &want);
	cr_expect_null(json_object_get(json_object_get(got, "unmapped"), "tenant"), "%s", text);
	cr_expect_null(json_object_get(json_object_get(json_object_get(got, "metadata"), "product"),
				       "version"),
		       "%s", text);
	cr_expect(json_string_length(json_object_get(json_object_get(got, "device"), "hostname")) >
		      0,
		  "%s", text);
	json_decref(got);
	free(text);
}

/* A refusal of the kernel's own permission check: a denied read, reason "permission", no rule. */
Test(ocsf, the_kernels_own_refusal_is_a_denied_read)
{
	struct record_names names = {.run_id = "run-1"};
	struct tether_fs_event ev = fs_event(TETHER_FS_OPEN_READ, TETHER_DECISION_DENY);
	struct expect want = {1001, 2, 2, 2};
	struct record_scratch scratch;
	struct record rec;
	json_t *got;
	char *text;

	ev.reason = TETHER_REASON_PERMISSION;
	ev.access = TETHER_ACCESS_READ;
	cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec), 0);
	text = encode(&rec);
	got = check_event(text, &want);
	cr_expect_str_eq(str_at(got, "status_code"), "EACCES");
	cr_expect_str_eq(str_at(got, "status_detail"), "permission");
	cr_expect_str_eq(str_at(got, "unmapped.reason"), "permission");
	cr_expect_null(json_object_get(json_object_get(got, "unmapped"), "rule"), "%s", text);
	json_decref(got);
	free(text);
}

/* exec is the Launch of the image; the process is the same pid. */
Test(ocsf, exec_is_a_launch_of_the_file)
{
	struct record_names names = {.run_id = "r", .ctx = &full_ctx};
	struct tether_fs_event ev = fs_event(TETHER_FS_EXEC, TETHER_DECISION_DENY);
	struct expect want = {1007, 1, 2, 2};
	struct record_scratch scratch;
	struct record rec;
	json_t *got;
	char *text;

	strcpy(ev.path, "/usr/bin/curl");
	cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec), 0);
	text = encode(&rec);
	got = check_event(text, &want);
	cr_expect_eq(int_at(got, "process.pid"), 9);
	cr_expect_str_eq(str_at(got, "process.name"), "curl");
	cr_expect_str_eq(str_at(got, "process.file.path"), "/usr/bin/curl");
	cr_expect_str_eq(str_at(got, "actor.process.file.path"), "/usr/bin/agent");
	json_decref(got);
	free(text);
}

static struct tether_net_event net_event(uint32_t op, uint32_t decision)
{
	struct tether_net_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.kind = TETHER_EVENT_NET;
	ev.hdr.size = sizeof(ev);
	ev.hdr.cgroup_id = 77;
	ev.hdr.pid = 10;
	ev.hdr.tgid = 9;
	ev.hdr.seq = 6;
	ev.op = op;
	ev.decision = decision;
	ev.err = decision == TETHER_DECISION_DENY ? -EPERM : 0;
	ev.reason =
	    decision == TETHER_DECISION_ALLOW ? TETHER_REASON_RULE : TETHER_REASON_DEFAULT_DENY;
	ev.rule_id =
	    decision == TETHER_DECISION_ALLOW ? (TETHER_NET_RULE_HOST | 0) : TETHER_RULE_NONE;
	ev.family = 2;
	ev.type = 1;
	ev.protocol = IPPROTO_TCP;
	ev.port = 443;
	ev.addr[10] = ev.addr[11] = 0xff;
	ev.addr[12] = 192, ev.addr[13] = 0, ev.addr[14] = 2, ev.addr[15] = 7;
	ev.bytes = 1500;
	ev.uid = 1000;
	strcpy(ev.comm, "curl");
	return ev;
}

Test(ocsf, every_net_op_is_network_activity)
{
	static const struct {
		uint32_t op;
		unsigned int activity_id;
	} table[] = {
	    {TETHER_NET_CONNECT, 1},
	    {TETHER_NET_SENDMSG, 6},
	    {TETHER_NET_PACKET, 6},
	    {TETHER_NET_EGRESS_BUDGET, 99},
	    {TETHER_NET_SOCKET_CREATE, 99},
	    {TETHER_NET_BIND, 99},
	    {TETHER_NET_SETSOCKOPT, 99},
	    {TETHER_NET_INGRESS, 6},
	};
	static const uint32_t decisions[] = {TETHER_DECISION_ALLOW, TETHER_DECISION_DENY,
					     TETHER_DECISION_WOULD_DENY};
	const char *const hosts[] = {"*.example.com"};

	setenv("TETHER_OCSF_CANARY", CANARY_ENV, 1);
	cr_assert_eq(sizeof(table) / sizeof(table[0]), TETHER_NET_INGRESS);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		for (size_t d = 0; d < 3; d++) {
			for (int with_ctx = 0; with_ctx < 2; with_ctx++) {
				struct tether_net_event ev = net_event(table[i].op, decisions[d]);
				struct record_names names = {.run_id = "r",
							     .ctx = with_ctx ? &full_ctx : NULL,
							     .host_rule_names = hosts,
							     .host_rule_count = 1};
				struct expect want = {4001, table[i].activity_id, 0, 0};
				struct record_scratch scratch;
				struct record rec;
				bool has_task = table[i].op != TETHER_NET_PACKET &&
						table[i].op != TETHER_NET_EGRESS_BUDGET;
				json_t *got;
				char *text;

				cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec),
					     0);
				expect_verdict(&want, decisions[d]);
				text = encode(&rec);
				got = check_event(text, &want);
				cr_expect_str_eq(str_at(got, "unmapped.op"), rec.net.op);
				if (has_task)
					cr_expect_eq(int_at(got, "actor.process.pid"), 9);
				else
					cr_expect_null(json_object_get(got, "actor"), "%s", text);
				if (table[i].op == TETHER_NET_CONNECT) {
					cr_expect_str_eq(str_at(got, "dst_endpoint.ip"),
							 "192.0.2.7");
					cr_expect_eq(int_at(got, "dst_endpoint.port"), 443);
					cr_expect_eq(int_at(got, "connection_info.direction_id"),
						     2);
				}
				if (table[i].op == TETHER_NET_BIND) {
					cr_expect_str_eq(str_at(got, "src_endpoint.ip"),
							 "192.0.2.7");
					cr_expect_eq(int_at(got, "src_endpoint.port"), 443);
					cr_expect_null(json_object_get(got, "dst_endpoint"), "%s",
						       text);
				}
				if (table[i].op == TETHER_NET_INGRESS) {
					cr_expect_str_eq(str_at(got, "src_endpoint.ip"),
							 "192.0.2.7");
					cr_expect_eq(int_at(got, "connection_info.direction_id"),
						     1);
				}
				if (decisions[d] == TETHER_DECISION_ALLOW)
					cr_expect_str_eq(str_at(got, "unmapped.rule_host"),
							 "*.example.com");
				json_decref(got);
				free(text);
			}
		}
	}
}

Test(ocsf, every_dns_event_is_a_query)
{
	struct dns_addr answers[2] = {
	    {.addr = {[10] = 0xff, [11] = 0xff, 192, 0, 2, 2}, .ttl = 60},
	    {.addr = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}, .ttl = 30},
	};
	uint8_t lo[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};
	const struct dns_event events[] = {
	    {.kind = DNS_EV_ALLOWED,
	     .name = "api.example.com",
	     .qtype = 1,
	     .transport = IPPROTO_UDP,
	     .addrs = answers,
	     .addr_count = 2},
	    {.kind = DNS_EV_REFUSED_NAME,
	     .name = "x\"y.example",
	     .qtype = 16,
	     .transport = IPPROTO_UDP,
	     .rcode = 5,
	     .suspected_tunnel = true},
	    {.kind = DNS_EV_REFUSED_ANSWER,
	     .name = "rebind.example",
	     .qtype = 1,
	     .transport = IPPROTO_TCP,
	     .rcode = 5,
	     .refused_addr = lo,
	     .refused_class = TP_ADDR_LOOPBACK},
	    {.kind = DNS_EV_UPSTREAM_FAILED,
	     .name = "slow.example",
	     .qtype = 28,
	     .transport = IPPROTO_UDP,
	     .rcode = 2},
	    {.kind = DNS_EV_MALFORMED,
	     .name = NULL,
	     .qtype = 0,
	     .transport = IPPROTO_UDP,
	     .rcode = 1},
	    {.kind = DNS_EV_REFUSED_TYPE,
	     .name = "zone.example",
	     .qtype = 252,
	     .transport = IPPROTO_TCP,
	     .rcode = 5},
	};

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		for (int with_ctx = 0; with_ctx < 2; with_ctx++) {
			struct record rec = {.kind = RECORD_DNS,
					     .seq = 8,
					     .mono_ns = 1,
					     .run_id = "r",
					     .ctx = with_ctx ? &full_ctx : NULL,
					     .dns = &events[i]};
			bool allowed = events[i].kind == DNS_EV_ALLOWED;
			struct expect want = {4003, 1, allowed ? 1 : 2, allowed ? 1 : 2};
			json_t *got;
			char *text = encode(&rec);

			got = check_event(text, &want);
			if (events[i].name)
				cr_expect_str_eq(str_at(got, "query.hostname"), events[i].name);
			else
				cr_expect_null(json_object_get(got, "query"), "%s", text);
			cr_expect_eq(int_at(got, "rcode_id"), events[i].rcode);
			if (allowed) {
				json_t *a = json_object_get(got, "answers");

				cr_expect_eq(json_array_size(a), 2, "%s", text);
				cr_expect_str_eq(str_at(json_array_get(a, 0), "rdata"),
						 "192.0.2.2");
				cr_expect_str_eq(str_at(json_array_get(a, 1), "rdata"),
						 "2001:db8::1");
			}
			json_decref(got);
			free(text);
		}
	}
}

static const uint64_t limits[TP_LIMIT_COUNT] = {[0] = 1 << 20};

Test(ocsf, every_run_event_is_process_activity_of_the_command)
{
	/* the command as the agent ran it: only argv[0] reaches the record */
	char *const argv[] = {"/usr/bin/agent", "--token=" CANARY_ARG, NULL};
	char *const unenforced[] = {"network.ingress"};
	struct record rec = {.kind = RECORD_RUN, .seq = 1, .mono_ns = 1, .run_id = "run-1"};
	struct {
		struct record_run run;
		struct expect want;
	} cases[8];
	int n = 0;

	setenv("TETHER_OCSF_CANARY", CANARY_ENV, 1);
	cases[n].run = (struct record_run){.event = RECORD_RUN_START};
	cases[n].run.start = (struct record_run_start){.command = argv[0],
						       .tmpdir = "/tmp/tether-run-1",
						       .cgroup_id = 77,
						       .run_slot = 3,
						       .rules = 4,
						       .policy_digest = "sha256:abcd",
						       .unenforced = unenforced,
						       .unenforced_count = 1,
						       .uid = 1000,
						       .gid = 1000,
						       .limits = limits,
						       .setup_us = 1200};
	cases[n++].want = (struct expect){1007, 1, 1, 1};
	cases[n].run = (struct record_run){.event = RECORD_RUN_OUTPUT_TRUNCATED};
	cases[n].run.truncated =
	    (struct record_run_truncated){.stream = "stdout", .output_bytes_max = 7};
	cases[n++].want = (struct expect){1007, 99, 3, 17};
	cases[n].run = (struct record_run){.event = RECORD_RUN_CLEANUP};
	cases[n].run.cleanup = (struct record_run_cleanup){
	    .killed = 2, .duration_us = 90, .tree_empty = true, .verified = true};
	cases[n++].want = (struct expect){1007, 99, 3, 17};
	cases[n].run = (struct record_run){.event = RECORD_RUN_END};
	cases[n].run.end = (struct record_run_end){.exit_status = 3,
						   .audit_records = 9,
						   .audit_lost = 1,
						   .reason = "exited",
						   .budget = NULL,
						   .cleanup_verified = true};
	cases[n++].want = (struct expect){1007, 2, 3, 17};
	cases[n].run = (struct record_run){.event = RECORD_RUN_ADOPTED};
	cases[n].run.adopted =
	    (struct record_run_adopted){.gap_ms = 40, .backlog = 2, .command_alive = true};
	cases[n++].want = (struct expect){1007, 99, 3, 17};
	static const uint64_t by_kind[RECORD_FLOOD_KINDS] = { 5, 0, 0, 0, 0, 2 };
	static const struct record_seq_range ranges[] = { { 10, 16 } };
	cases[n].run = (struct record_run){.event = RECORD_RUN_SUPPRESSED};
	cases[n].run.suppressed = (struct record_run_suppressed){
	    .count = 7, .denied = 7, .rate_limit = 2000, .window_ms = 1000, .seqs = ranges,
	    .seq_range_count = 1, .by_kind = by_kind};
	cases[n++].want = (struct expect){1007, 99, 3, 17};
	/* an artifact that left is observed and logged; one kept back is denied and blocked */
	cases[n].run = (struct record_run){.event = RECORD_RUN_ARTIFACT};
	cases[n].run.artifact = (struct record_run_artifact){
	    .path = "out/report.txt", .decision = "exported", .size = 11,
	    .sha256 = "sha256:0000000000000000000000000000000000000000000000000000000000000001"};
	cases[n++].want = (struct expect){1007, 99, 3, 17};
	cases[n].run = (struct record_run){.event = RECORD_RUN_ARTIFACT};
	cases[n].run.artifact = (struct record_run_artifact){
	    .path = "key.pem", .decision = "quarantined", .reason = "a private key (PEM)",
	    .size = 40,
	    .sha256 = "sha256:0000000000000000000000000000000000000000000000000000000000000002"};
	cases[n++].want = (struct expect){1007, 99, 2, 2};

	for (int i = 0; i < n; i++) {
		for (int with_ctx = 0; with_ctx < 2; with_ctx++) {
			json_t *got;
			char *text;

			rec.run = cases[i].run;
			rec.ctx = with_ctx ? &full_ctx : NULL;
			text = encode(&rec);
			got = check_event(text, &cases[i].want);
			cr_expect_str_eq(str_at(got, "process.uid"), "run-1");
			cr_expect_str_eq(str_at(got, "actor.process.name"), "tether");
			if (cases[i].run.event == RECORD_RUN_START) {
				cr_expect_str_eq(str_at(got, "process.name"), "agent");
				cr_expect_str_eq(str_at(got, "process.file.path"),
						 "/usr/bin/agent");
				cr_expect_str_eq(str_at(got, "unmapped.policy_digest"),
						 "sha256:abcd");
			}
			if (cases[i].run.event == RECORD_RUN_ARTIFACT) {
				const struct record_run_artifact *a = &cases[i].run.artifact;

				cr_expect_str_eq(str_at(got, "unmapped.path"), a->path);
				cr_expect_str_eq(str_at(got, "unmapped.decision"), a->decision);
				cr_expect_str_eq(str_at(got, "unmapped.sha256"), a->sha256);
				cr_expect_eq(int_at(got, "severity_id"), a->reason ? 4 : 1);
			}
			if (cases[i].run.event == RECORD_RUN_END) {
				cr_expect_eq(int_at(got, "exit_code"), 3);
				cr_expect_eq(int_at(got, "status_id"), 2);
				cr_expect_eq(int_at(got, "unmapped.audit_lost"), 1);
			}
			json_decref(got);
			free(text);
		}
	}
}

/* A run's strings are the run's to choose: none of them breaks the JSON or the line. */
Test(ocsf, hostile_strings_stay_valid_json)
{
	static const struct record_context ctx = {
	    .host = "h\"ost\n", .tenant = "t\\\"\n\x01", .tether_version = "v\xc3\x28"};
	struct record_names names = {.run_id = "r\"1\n", .ctx = &ctx};
	struct tether_fs_event ev = fs_event(TETHER_FS_OPEN_WRITE, TETHER_DECISION_DENY);
	struct expect want = {1001, 3, 2, 2};
	struct record_scratch scratch;
	struct record rec;
	json_t *got;
	char *text;

	strcpy(ev.path, "/work/a\"b\nc\\d\xff\xfe/e\"f");
	strcpy(ev.comm, "x\"\n\xff");
	strcpy(ev.exe, "/bin/\xc0\xaf\"sh");
	cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec), 0);
	text = encode(&rec);
	got = check_event(text, &want);
	cr_expect_str_eq(str_at(got, "file.path"), "/work/a\"b\nc\\d\u00ff\u00fe/e\"f");
	cr_expect_str_eq(str_at(got, "file.name"), "e\"f");
	cr_expect_str_eq(str_at(got, "actor.process.name"), "x\"\n\u00ff");
	cr_expect_str_eq(str_at(got, "actor.process.file.path"), "/bin/\u00c0\u00af\"sh");
	cr_expect_str_eq(str_at(got, "device.hostname"), "h\"ost\n");
	cr_expect_str_eq(str_at(got, "unmapped.tenant"), "t\\\"\n\x01");
	cr_expect_str_eq(str_at(got, "metadata.uid"), "r\"1\n:5");
	json_decref(got);
	free(text);
}

/* A path the kernel filled to the last byte, without a NUL, stays in bounds. */
Test(ocsf, an_unterminated_path_stays_in_bounds)
{
	struct record_names names = {.run_id = "r"};
	struct tether_fs_event ev = fs_event(TETHER_FS_UNLINK, TETHER_DECISION_DENY);
	struct expect want = {1001, 4, 2, 2};
	struct record_scratch scratch;
	struct record rec;
	json_t *got;
	char *text;

	memset(ev.path, 'a', sizeof(ev.path));
	memset(ev.comm, 'c', sizeof(ev.comm));
	cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec), 0);
	text = encode(&rec);
	got = check_event(text, &want);
	cr_expect_leq(strlen(str_at(got, "file.path")), sizeof(ev.path));
	cr_expect_eq(strlen(str_at(got, "actor.process.name")), sizeof(ev.comm));
	json_decref(got);
	free(text);
}

static char *read_fd(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)len + 1);

	cr_assert_eq(pread(fd, buf, (size_t)len, 0), len);
	return buf;
}

static int fake_seq(void *ctx, uint64_t *seq)
{
	*seq = ++*(uint64_t *)ctx;
	return 0;
}

/*
 * Through the run's real audit stream into the OCSF sink: a thread refused
 * ten files is one full event and one coalesced event with its count; the
 * controller's records follow; every line is one valid event.
 */
Test(ocsf, the_sink_writes_json_lines_with_coalesced_counts)
{
	int fd = memfd_create("ocsf", MFD_CLOEXEC);
	uint64_t counter = 0;
	struct sink *sink;
	struct audit_stream st = {.names = {.run_id = "run-1", .ctx = &full_ctx},
				  .seq_next = fake_seq,
				  .seq_ctx = &counter};
	struct dns_event dns = {.kind = DNS_EV_REFUSED_NAME,
				.name = "x.example",
				.qtype = 1,
				.transport = IPPROTO_UDP,
				.rcode = 5};
	struct record end = {.kind = RECORD_RUN};
	struct expect fs_want = {1001, 2, 2, 2}, dns_want = {4003, 1, 2, 2},
		      end_want = {1007, 2, 3, 17};
	char *buf, *line, *save = NULL;
	json_t *got;
	int lines = 0;

	cr_assert_geq(fd, 0);
	cr_assert_eq(sink_ocsf_open(fd, true, &sink), 0);
	st.sink = sink;
	for (int i = 1; i <= 10; i++) {
		struct tether_fs_event ev = fs_event(TETHER_FS_OPEN_READ, TETHER_DECISION_DENY);

		snprintf(ev.path, sizeof(ev.path), "/proc/%d/stat", i);
		ev.hdr.seq = ++counter;
		ev.hdr.ts_ns = 1000000 + (uint64_t)i * 1000;
		audit_handle_record(&st, &ev, sizeof(ev));
	}
	audit_flush(&st);
	cr_assert_eq(audit_write_dns_event(&st, &dns), 0);
	end.run.event = RECORD_RUN_END;
	end.run.end = (struct record_run_end){.exit_status = 0,
					      .audit_records = 12,
					      .audit_coalesced = 9,
					      .reason = "exited",
					      .cleanup_verified = true};
	cr_assert_eq(audit_write(&st, &end), 0);
	buf = read_fd(fd);
	cr_assert_eq(sink_close(sink), 0);
	audit_stream_release(&st);
	cr_assert(buf[0] && buf[strlen(buf) - 1] == '\n', "every event ends its line: %s", buf);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines++;
		if (lines == 1) {
			got = check_event(line, &fs_want);
			cr_expect_null(json_object_get(got, "count"), "%s", line);
			cr_expect_str_eq(str_at(got, "file.path"), "/proc/1/stat");
		} else if (lines == 2) {
			json_t *paths, *seqs;

			got = check_event(line, &fs_want);
			cr_expect_eq(int_at(got, "count"), 9, "%s", line);
			cr_expect_eq(int_at(got, "unmapped.coalesced"), 9);
			cr_expect_eq(int_at(got, "unmapped.first_seq"), 1);
			cr_expect_str_eq(str_at(got, "file.path"), "/proc/2/stat");
			paths = json_object_get(json_object_get(got, "unmapped"), "paths");
			cr_expect_eq(json_array_size(paths), 8, "%s", line);
			cr_expect_eq(int_at(got, "unmapped.paths_unlisted"), 1);
			seqs = json_object_get(json_object_get(got, "unmapped"), "coalesced_seqs");
			cr_expect_eq(json_integer_value(json_array_get(json_array_get(seqs, 0), 0)),
				     2);
			cr_expect_eq(json_integer_value(json_array_get(json_array_get(seqs, 0), 1)),
				     10);
		} else if (lines == 3) {
			got = check_event(line, &dns_want);
		} else {
			got = check_event(line, &end_want);
			cr_expect_eq(int_at(got, "status_id"), 1);
		}
		json_decref(got);
	}
	cr_expect_eq(lines, 4, "one full, one coalesced, dns, end");
	free(buf);
}

/* A file an earlier writer left inside a line: the first event starts a line of its own. */
Test(ocsf, the_sink_ends_a_cut_line_first)
{
	struct record rec = {.kind = RECORD_RUN, .seq = 1, .mono_ns = 1, .run_id = "r"};
	struct expect want = {1007, 99, 3, 17};
	int fd = memfd_create("ocsf", MFD_CLOEXEC);
	struct sink *sink;
	char *buf, *nl;
	json_t *got;

	rec.run.event = RECORD_RUN_OUTPUT_TRUNCATED;
	rec.run.truncated = (struct record_run_truncated){.stream = "stderr"};
	cr_assert_eq(write(fd, "{\"cut", 5), 5);
	cr_assert_eq(sink_ocsf_open(fd, false, &sink), 0);
	cr_assert_eq(sink_write(sink, &rec), 0);
	cr_assert_eq(sink_close(sink), 0);
	buf = read_fd(fd);
	close(fd);
	cr_assert(strncmp(buf, "{\"cut\n{", 7) == 0, "%s", buf);
	nl = strchr(buf + 6, '\n');
	cr_assert_not_null(nl);
	*nl = 0;
	got = check_event(buf + 6, &want);
	json_decref(got);
	free(buf);
}

/* An op this version does not name is still a valid event: Other, the op "unknown". */
Test(ocsf, an_unknown_op_is_other)
{
	struct record_names names = {.run_id = "r"};
	struct tether_fs_event ev = fs_event(TETHER_FS_OPEN_READ, TETHER_DECISION_DENY);
	struct tether_net_event net = net_event(TETHER_NET_CONNECT, TETHER_DECISION_DENY);
	struct expect want = {1001, 99, 2, 2}, net_want = {4001, 99, 2, 2};
	struct record_scratch scratch;
	struct record rec;
	json_t *got;
	char *text;

	ev.op = 200;
	cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec), 0);
	text = encode(&rec);
	got = check_event(text, &want);
	cr_expect_str_eq(str_at(got, "unmapped.op"), "unknown");
	json_decref(got);
	free(text);
	net.op = 200;
	cr_assert_eq(record_decode(&net, sizeof(net), &names, &scratch, &rec), 0);
	text = encode(&rec);
	got = check_event(text, &net_want);
	json_decref(got);
	free(text);
}

/* A record kind or a run event it does not know is refused, not guessed at. */
Test(ocsf, refuses_what_it_does_not_know)
{
	struct record rec = {.kind = RECORD_RUN, .seq = 1, .run_id = "r"};
	struct strbuf sb = {0};

	rec.run.event = 99;
	cr_expect_eq(ocsf_encode(&rec, &sb), -EINVAL);
	rec.kind = 99;
	cr_expect_eq(ocsf_encode(&rec, &sb), -EINVAL);
	sb_free(&sb);
}
