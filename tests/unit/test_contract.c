// SPDX-License-Identifier: GPL-2.0
/*
 * policyc: task contracts (seed 002) and the check that an envelope grants
 * no more than its contract.
 *
 * Envelope models are built by hand (calloc + fields) so these tests depend
 * on the contract code alone.  Runs from the repository root
 * (tests/policyc/contract/ is read).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "policyc/policy.h"

#define SEED_PATH "tests/policyc/contract/seed-task.yaml"

/* Per-test state, released by fini() so every test stays leak-free under ASan. */
static struct tp_diags diags;
static struct tp_contract *contract;
static struct tp_envelope *env;
static char *notes_text;
static size_t notes_size;
static FILE *notes;

static void env_free(struct tp_envelope *e)
{
	if (!e)
		return;

	struct tp_path_list *lists[] = { &e->read, &e->write, &e->exec, &e->deny,
					 &e->workspace_write };

	for (size_t l = 0; l < sizeof(lists) / sizeof(*lists); l++) {
		for (size_t i = 0; i < lists[l]->count; i++)
			free(lists[l]->items[i].path);
		free(lists[l]->items);
	}
	for (size_t i = 0; i < e->destination_count; i++)
		free(e->destinations[i].host);
	free(e->destinations);
	free(e->workspace_path);
	free(e);
}

static void init(void)
{
	notes = open_memstream(&notes_text, &notes_size);
	cr_assert_not_null(notes);
}

static void fini(void)
{
	tp_diags_free(&diags);
	tp_contract_free(contract);
	contract = NULL;
	env_free(env);
	env = NULL;
	if (notes)
		fclose(notes);
	notes = NULL;
	free(notes_text);
	notes_text = NULL;
}

TestSuite(contract, .init = init, .fini = fini, .timeout = 20);

static char *read_seed(size_t *len)
{
	FILE *f = fopen(SEED_PATH, "r");
	char *data = calloc(1, 4096);

	cr_assert_not_null(f, "cannot open %s (run from the repository root)", SEED_PATH);
	cr_assert_not_null(data);
	*len = fread(data, 1, 4095, f);
	fclose(f);
	return data;
}

static int parse(const char *text)
{
	return tp_contract_parse("task.yaml", text, strlen(text), &contract, &diags);
}

/* The seed contract, named "task.yaml" in messages. */
static void parse_seed(void)
{
	size_t len;
	char *data = read_seed(&len);

	cr_assert_eq(tp_contract_parse("task.yaml", data, len, &contract, &diags), 0);
	cr_assert_eq(diags.count, 0);
	free(data);
}

static void expect_diag_in(size_t i, const char *file, unsigned int line, unsigned int column,
			   const char *message)
{
	cr_assert_lt(i, diags.count, "expected diagnostic #%zu (%u:%u: %s), have only %zu",
		     i, line, column, message, diags.count);
	cr_expect_str_eq(diags.items[i].file, file);
	cr_expect(diags.items[i].line == line && diags.items[i].column == column,
		  "diagnostic #%zu at %u:%u, expected %u:%u (%s)", i, diags.items[i].line,
		  diags.items[i].column, line, column, diags.items[i].message);
	cr_expect_str_eq(diags.items[i].message, message);
}

static void expect_diag(size_t i, unsigned int line, unsigned int column, const char *message)
{
	expect_diag_in(i, "task.yaml", line, column, message);
}

/* Parses `text`, which must fail with exactly one diagnostic. */
static void expect_only_error(const char *text, unsigned int line, unsigned int column,
			      const char *message)
{
	cr_assert_eq(parse(text), -EINVAL);
	cr_assert_null(contract);
	expect_diag(0, line, column, message);
	cr_expect_eq(diags.count, 1, "expected one diagnostic, got %zu", diags.count);
}

/* A minimal valid contract, followed by the test's lines. */
#define HEAD                          \
	"task_id: t-1\n"              \
	"goal: g\n"                   \
	"workspace:\n"                \
	"  repository: example/repo\n" \
	"  ref: main\n"               \
	"deliverable: patch\n"

/* ---- envelope models ---------------------------------------------------- */

static struct tp_envelope *env_new(void)
{
	struct tp_envelope *e = calloc(1, sizeof(*e));

	cr_assert_not_null(e);
	e->workspace_path = strdup("/ws");
	cr_assert_not_null(e->workspace_path);
	e->sandbox_pos = (struct tp_pos){ 2, 1 };
	return e;
}

static void add_path(struct tp_path_list *list, const char *path, bool relative,
		     enum tp_path_kind kind, unsigned int line, unsigned int column)
{
	list->items = realloc(list->items, (list->count + 1) * sizeof(*list->items));
	cr_assert_not_null(list->items);
	list->items[list->count++] = (struct tp_path_entry){
		.path = strdup(path),
		.relative = relative,
		.kind = kind,
		.pos = { line, column },
	};
}

static struct tp_destination *add_destination(unsigned int line, unsigned int column)
{
	struct tp_destination *d;

	env->destinations = realloc(env->destinations,
				    (env->destination_count + 1) * sizeof(*env->destinations));
	cr_assert_not_null(env->destinations);
	d = &env->destinations[env->destination_count++];
	*d = (struct tp_destination){
		.protocols = TP_PROTO_ANY,
		.port_min = 1,
		.port_max = 65535,
		.pos = { line, column },
	};
	return d;
}

static void add_host(const char *host, uint16_t port_min, uint16_t port_max, uint8_t protocols,
		     unsigned int line, unsigned int column)
{
	struct tp_destination *d = add_destination(line, column);

	d->host = strdup(host);
	d->port_min = port_min;
	d->port_max = port_max;
	d->protocols = protocols;
}

/* An IPv4 block in the mapped form. */
static void add_v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint8_t prefix,
		   uint16_t port_min, uint16_t port_max, unsigned int line, unsigned int column)
{
	struct tp_destination *dest = add_destination(line, column);

	dest->addr[10] = dest->addr[11] = 0xff;
	dest->addr[12] = a;
	dest->addr[13] = b;
	dest->addr[14] = c;
	dest->addr[15] = d;
	dest->prefixlen = (uint8_t)(96 + prefix);
	dest->port_min = port_min;
	dest->port_max = port_max;
}

/* An IPv6 block: the first four bytes, the rest zero. */
static void add_v6(const uint8_t head[4], uint8_t prefix, uint16_t port_min, uint16_t port_max,
		   unsigned int line, unsigned int column)
{
	struct tp_destination *dest = add_destination(line, column);

	memcpy(dest->addr, head, 4);
	dest->addr[15] = prefix == 128 ? 1 : 0;
	dest->prefixlen = prefix;
	dest->port_min = port_min;
	dest->port_max = port_max;
}

static int check(void)
{
	return tp_contract_check(contract, "env.yaml", env, &diags, notes);
}

static const char *notes_output(void)
{
	cr_assert_eq(fflush(notes), 0);
	return notes_text ? notes_text : "";
}

static void expect_env_diag(size_t i, unsigned int line, unsigned int column, const char *message)
{
	expect_diag_in(i, "env.yaml", line, column, message);
}

/* ---- parsing ------------------------------------------------------------ */

Test(contract, seed_file_parses)
{
	cr_assert_eq(tp_contract_parse_file(SEED_PATH, &contract, &diags), 0);
	cr_expect_eq(diags.count, 0);
	cr_assert_not_null(contract);
}

Test(contract, limits_parse)
{
	cr_expect_eq(parse(HEAD "max_wall_clock: 1h30m\n"
			      "max_tool_calls: 200\n"
			      "max_turns: 40\n"
			      "max_cost: 5 USD\n"
			      "allowed_paths: [\"**\", README.md, ./docs/./x/../**]\n"
			      "network:\n"
			      "  allow: [\"*.example.com:443\", 192.0.2.0/24]\n"),
		     0);
	cr_expect_eq(diags.count, 0);
}

Test(contract, missing_file)
{
	cr_expect_eq(tp_contract_parse_file("tests/policyc/contract/no-such.yaml", &contract,
					    &diags),
		     -ENOENT);
	cr_assert_null(contract);
	expect_diag_in(0, "tests/policyc/contract/no-such.yaml", 0, 0,
		       "cannot open: No such file or directory");
}

Test(contract, empty)
{
	expect_only_error("# nothing\n", 1, 1,
			  "empty contract: expected a mapping with keys 'task_id', 'goal', "
			  "'workspace' and 'deliverable'");
}

Test(contract, unknown_keys)
{
	cr_assert_eq(parse(HEAD "stop_when: done\n"
			      "network:\n"
			      "  allow: []\n"
			      "  deny: []\n"),
		     -EINVAL);
	expect_diag(0, 7, 1,
		    "unknown key 'stop_when' at the top level (expected one of: task_id, goal, "
		    "workspace, allowed_paths, network, forbidden, approvals, verification, "
		    "deliverable, max_wall_clock, max_tool_calls, max_turns, max_cost)");
	expect_diag(1, 10, 3, "unknown key 'deny' in 'network' (expected one of: allow)");
	cr_expect_eq(diags.count, 2);
}

Test(contract, missing_required)
{
	cr_assert_eq(parse("goal: g\nworkspace:\n  ref: main\n"), -EINVAL);
	expect_diag(0, 1, 1, "missing required key 'task_id' at the top level");
	expect_diag(1, 1, 1, "missing required key 'deliverable' at the top level");
	expect_diag(2, 2, 1, "missing required key 'repository' in 'workspace'");
	cr_expect_eq(diags.count, 3);
}

Test(contract, wrong_types)
{
	cr_assert_eq(parse(HEAD "allowed_paths: src/**\n"
			      "forbidden:\n"
			      "  - [a]\n"
			      "  -\n"
			      "network: [api.github.com]\n"
			      "max_turns: {n: 1}\n"
			      "approvals: \"\"\n"),
		     -EINVAL);
	expect_diag(0, 7, 16, "'allowed_paths' must be a sequence, got a scalar");
	expect_diag(1, 9, 5, "each entry of 'forbidden' must be a non-empty string, got a sequence");
	expect_diag(2, 10, 4, "each entry of 'forbidden' must be a non-empty string, got an empty value");
	expect_diag(3, 11, 10, "'network' must be a mapping, got a sequence");
	expect_diag(4, 12, 12, "'max_turns' must be a scalar, got a mapping");
	expect_diag(5, 13, 12, "'approvals' must be a sequence, got a scalar");
	cr_expect_eq(diags.count, 6);
}

Test(contract, empty_strings)
{
	cr_assert_eq(parse("task_id:\n"
			   "goal: \"\"\n"
			   "workspace: {repository: r, ref: ~}\n"
			   "deliverable: patch\n"),
		     -EINVAL);
	expect_diag(0, 1, 9, "'task_id' must be a non-empty string, got an empty value");
	expect_diag(1, 2, 7, "'goal' must be a non-empty string, got an empty string");
	expect_diag(2, 3, 33,
		    "'workspace.ref' must be a non-empty string, got an empty value");
	cr_expect_eq(diags.count, 3);
}

Test(contract, bad_task_id)
{
	expect_only_error("task_id: fix 482/x\ngoal: g\nworkspace: {repository: r, ref: m}\n"
			  "deliverable: d\n",
			  1, 10,
			  "'task_id' must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and "
			  "'-', got 'fix 482/x'");
}

/* The message tp_parse_path_pattern gives for a glob (shared with envelopes). */
#define GLOB                                                                              \
	"is a glob the kernel cannot enforce: only exact paths ('dir/file') and whole "   \
	"subtrees ('dir/**') can be; list the files, or grant their directory with 'dir/**'"

Test(contract, bad_path_patterns)
{
	cr_assert_eq(parse(HEAD "allowed_paths:\n"
			      "  - /etc/**\n"
			      "  - src/*.c\n"
			      "  - src/auth/\n"
			      "  - ../other/**\n"
			      "  - a/../../b\n"
			      "  - \"\"\n"
			      "  - src/**/x\n"),
		     -EINVAL);
	expect_diag(0, 8, 5,
		    "invalid entry in 'allowed_paths': '/etc/**' must be relative to the workspace "
		    "(no leading '/')");
	expect_diag(1, 9, 5,
		    "invalid entry in 'allowed_paths': 'src/*.c' " GLOB);
	expect_diag(2, 10, 5,
		    "invalid entry in 'allowed_paths': 'src/auth/' ends with '/': write "
		    "'src/auth/**' for the directory and everything beneath it, or 'src/auth' "
		    "for the directory itself");
	expect_diag(3, 11, 5,
		    "invalid entry in 'allowed_paths': '../other/**' leaves the workspace through "
		    "'..'");
	expect_diag(4, 12, 5,
		    "invalid entry in 'allowed_paths': 'a/../../b' leaves the workspace through "
		    "'..'");
	expect_diag(5, 13, 5,
		    "invalid entry in 'allowed_paths': the pattern is empty; write '**' for the "
		    "whole workspace");
	expect_diag(6, 14, 5,
		    "invalid entry in 'allowed_paths': 'src/**/x' " GLOB);
	cr_expect_eq(diags.count, 7);
}

Test(contract, long_path_pattern)
{
	char text[600];
	char path[300];

	memset(path, 'a', 252);
	path[252] = '\0';
	snprintf(text, sizeof(text), HEAD "allowed_paths: [%s]\n", path);
	cr_assert_eq(parse(text), -EINVAL);
	cr_assert_eq(diags.count, 1);
	cr_expect_eq(diags.items[0].line, 7);
	cr_expect_eq(diags.items[0].column, 17);
	cr_expect(strstr(diags.items[0].message, "is 252 bytes long after normalisation, over "
						 "the limit of 251") != NULL,
		  "%s", diags.items[0].message);
}

Test(contract, duplicate_paths)
{
	cr_assert_eq(parse(HEAD "allowed_paths:\n"
			      "  - src/**\n"
			      "  - docs\n"
			      "  - ./src/**\n"
			      "  - docs/**\n"
			      "  - src//x/..\n"),
		     -EINVAL);
	expect_diag(0, 10, 5, "duplicate entry 'src/**' in 'allowed_paths' (first at 8:5)");
	expect_diag(1, 11, 5,
		    "'docs/**' in 'allowed_paths' names the same path as 'docs' (at 9:5); list "
		    "either the path or its subtree");
	expect_diag(2, 12, 5,
		    "'src' in 'allowed_paths' names the same path as 'src/**' (at 8:5); list "
		    "either the path or its subtree");
	cr_expect_eq(diags.count, 3);
}

Test(contract, duplicate_strings)
{
	cr_assert_eq(parse(HEAD "forbidden: [deploy, rotate, deploy, deploy]\n"), -EINVAL);
	expect_diag(0, 7, 29, "duplicate entry 'deploy' in 'forbidden' (first at 7:13)");
	expect_diag(1, 7, 37, "duplicate entry 'deploy' in 'forbidden' (first at 7:13)");
	cr_expect_eq(diags.count, 2);
}

Test(contract, bad_destination)
{
	cr_assert_eq(parse(HEAD "network:\n"
			      "  allow:\n"
			      "    - api.github.com\n"
			      "    - \"not a host\"\n"
			      "    - {host: x.org}\n"),
		     -EINVAL);
	cr_assert_eq(diags.count, 2);
	cr_expect_eq(diags.items[0].line, 10);
	cr_expect_eq(diags.items[0].column, 7);
	cr_expect(strncmp(diags.items[0].message, "invalid destination in 'network.allow': ",
			  strlen("invalid destination in 'network.allow': ")) == 0 &&
			  strlen(diags.items[0].message) >
				  strlen("invalid destination in 'network.allow': "),
		  "%s", diags.items[0].message);
	expect_diag(1, 11, 7,
		    "each entry of 'network.allow' must be a destination ('host', 'host:port', "
		    "'*.domain', an address or CIDR), got a mapping");
}

Test(contract, duplicate_destinations)
{
	cr_assert_eq(parse(HEAD "network:\n"
			      "  allow: [api.github.com, API.github.com, \"api.github.com:443\"]\n"),
		     -EINVAL);
	expect_diag(0, 8, 27,
		    "duplicate destination 'api.github.com' in 'network.allow' (first at 8:11)");
	cr_expect_eq(diags.count, 1);
}

Test(contract, bad_limits)
{
	cr_assert_eq(parse(HEAD "max_wall_clock: 10\n"
			      "max_tool_calls: 0\n"
			      "max_turns:\n"
			      "max_cost: \"\"\n"),
		     -EINVAL);
	cr_assert_eq(diags.count, 4);
	cr_expect_eq(diags.items[0].line, 7);
	cr_expect_eq(diags.items[0].column, 17);
	cr_expect(strncmp(diags.items[0].message, "invalid 'max_wall_clock': ", 26) == 0, "%s",
		  diags.items[0].message);
	cr_expect_eq(diags.items[1].line, 8);
	cr_expect_eq(diags.items[1].column, 17);
	cr_expect(strncmp(diags.items[1].message, "invalid 'max_tool_calls': ", 26) == 0, "%s",
		  diags.items[1].message);
	expect_diag(2, 9, 11, "'max_turns' must be a positive integer, got an empty value");
	expect_diag(3, 10, 11, "'max_cost' must be a non-empty string, got an empty string");
}

Test(contract, duplicate_key)
{
	cr_assert_eq(parse(HEAD "goal: again\n"), -EINVAL);
	cr_assert_geq(diags.count, 1);
	cr_expect_eq(diags.items[0].line, 7);
	cr_expect_eq(diags.items[0].column, 1);
}

Test(contract, errors_in_file_order)
{
	cr_assert_eq(parse("workspace: {repository: r, ref: m, x: 1}\n"
			   "bogus: 1\n"
			   "task_id: \"a/b\"\n"
			   "goal: g\n"
			   "deliverable: d\n"),
		     -EINVAL);
	cr_assert_eq(diags.count, 3);
	cr_expect_eq(diags.items[0].line, 1);
	cr_expect_eq(diags.items[1].line, 2);
	cr_expect_eq(diags.items[2].line, 3);
}

Test(contract, nul_byte)
{
	static const char text[] = "task_id: a\0b\n";

	cr_assert_eq(tp_contract_parse("task.yaml", text, sizeof(text) - 1, &contract, &diags),
		     -EINVAL);
	expect_diag(0, 1, 11, "NUL byte in the contract: YAML text cannot contain one");
}

/* ---- the check ---------------------------------------------------------- */

Test(contract, seed_allows_its_envelope)
{
	parse_seed();
	env = env_new();
	add_path(&env->workspace_write, "src/auth", true, TP_PATH_SUBTREE, 10, 11);
	add_host("api.github.com", 443, 443, TP_PROTO_TCP, 14, 9);
	cr_expect_eq(check(), 0);
	cr_expect_eq(diags.count, 0);
	cr_expect_str_eq(notes_output(),
			 "note: forbidden action 'production deployment' is outside what a "
			 "sandbox can observe; enforce it in the tool broker\n"
			 "note: forbidden action 'secret rotation' is outside what a sandbox can "
			 "observe; enforce it in the tool broker\n");
}

Test(contract, wider_workspace_write)
{
	parse_seed();
	env = env_new();
	add_path(&env->workspace_write, "src", true, TP_PATH_SUBTREE, 10, 11);
	cr_expect_eq(check(), -EINVAL);
	expect_env_diag(0, 10, 11,
			"write grant 'src/**' is not within the contract's allowed_paths "
			"(task.yaml:6:1 allows 'src/auth/**', 'tests/auth/**')");
	cr_expect_eq(diags.count, 1);
}

Test(contract, default_workspace_write)
{
	parse_seed();
	env = env_new();
	add_path(&env->workspace_write, "", true, TP_PATH_SUBTREE, 0, 0);
	cr_expect_eq(check(), -EINVAL);
	expect_env_diag(0, 2, 1,
			"'filesystem.workspace.write' is not set, and its default '**' grants "
			"writes to the whole workspace, which is not within the contract's "
			"allowed_paths (task.yaml:6:1 allows 'src/auth/**', 'tests/auth/**'); list "
			"the paths the task may change under 'filesystem.workspace.write'");
	cr_expect_eq(diags.count, 1);
}

Test(contract, absolute_write)
{
	parse_seed();
	env = env_new();
	add_path(&env->write, "/tmp/run", false, TP_PATH_SUBTREE, 12, 11);
	add_path(&env->write, "/ws/tests/auth/x.js", false, TP_PATH_EXACT, 13, 11);
	add_path(&env->write, "/ws/src", false, TP_PATH_SUBTREE, 14, 11);
	add_path(&env->write, "/", false, TP_PATH_SUBTREE, 15, 11);
	cr_expect_eq(check(), -EINVAL);
	expect_env_diag(0, 12, 11,
			"write grant '/tmp/run/**' is outside the workspace, where the contract "
			"allows no writes (task.yaml:6:1 allows 'src/auth/**', 'tests/auth/**')");
	expect_env_diag(1, 14, 11,
			"write grant '/ws/src/**' is not within the contract's allowed_paths "
			"(task.yaml:6:1 allows 'src/auth/**', 'tests/auth/**')");
	expect_env_diag(2, 15, 11,
			"write grant '/**' is outside the workspace, where the contract allows no "
			"writes (task.yaml:6:1 allows 'src/auth/**', 'tests/auth/**')");
	cr_expect_eq(diags.count, 3);
}

Test(contract, destination_not_allowed)
{
	parse_seed();
	env = env_new();
	add_host("api.github.com", 1, 65535, TP_PROTO_ANY, 14, 9);
	add_host("evil.example.com", 443, 443, TP_PROTO_ANY, 15, 9);
	add_host("*.github.com", 443, 443, TP_PROTO_ANY, 16, 9);
	add_v4(140, 82, 112, 0, 20, 443, 443, 17, 9);
	cr_expect_eq(check(), -EINVAL);
	expect_env_diag(0, 15, 9,
			"destination 'evil.example.com:443' is not within the contract's "
			"network.allow (task.yaml:10:3 allows 'api.github.com')");
	expect_env_diag(1, 16, 9,
			"destination '*.github.com:443' is not within the contract's "
			"network.allow (task.yaml:10:3 allows 'api.github.com')");
	expect_env_diag(2, 17, 9,
			"destination '140.82.112.0/20:443' is not within the contract's "
			"network.allow (task.yaml:10:3 allows 'api.github.com')");
	cr_expect_eq(diags.count, 3);
}

Test(contract, destination_coverage)
{
	cr_assert_eq(parse(HEAD "network:\n"
			      "  allow:\n"
			      "    - \"*.example.com:443\"\n"
			      "    - 192.0.2.0/24:8000-8100\n"
			      "    - \"2001:db8::/32\"\n"),
		     0, "%s", diags.count ? diags.items[0].message : "");
	env = env_new();
	/* within */
	add_host("a.example.com", 443, 443, TP_PROTO_TCP, 20, 1);
	add_host("*.b.example.com", 443, 443, TP_PROTO_ANY, 21, 1);
	add_v4(192, 0, 2, 128, 25, 8000, 8010, 22, 1);
	add_v6((const uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8 }, 48, 1, 65535, 23, 1);
	/* outside: the wildcard's own name, a wider port range, a wider block, no port at all */
	add_host("example.com", 443, 443, TP_PROTO_ANY, 30, 1);
	add_host("a.example.com", 443, 444, TP_PROTO_ANY, 31, 1);
	add_v4(192, 0, 0, 0, 16, 8000, 8000, 32, 1);
	add_v4(192, 0, 2, 1, 32, 1, 65535, 33, 1);
	add_host("example.org", 443, 443, TP_PROTO_UDP, 34, 1);
	add_v6((const uint8_t[]){ 0x20, 0x01, 0x0d, 0xb9 }, 128, 443, 443, 35, 1);
	cr_expect_eq(check(), -EINVAL);
	cr_assert_eq(diags.count, 6, "%zu diagnostics", diags.count);
	for (size_t i = 0; i < diags.count; i++)
		cr_expect_eq(diags.items[i].line, 30 + i);
	expect_env_diag(0, 30, 1,
			"destination 'example.com:443' is not within the contract's network.allow "
			"(task.yaml:8:3 allows '*.example.com:443', '192.0.2.0/24:8000-8100', "
			"'2001:db8::/32')");
	expect_env_diag(4, 34, 1,
			"destination 'example.org:443 (udp)' is not within the contract's "
			"network.allow (task.yaml:8:3 allows '*.example.com:443', "
			"'192.0.2.0/24:8000-8100', '2001:db8::/32')");
	expect_env_diag(5, 35, 1,
			"destination '[2001:db9::1]:443' is not within the contract's "
			"network.allow (task.yaml:8:3 allows '*.example.com:443', "
			"'192.0.2.0/24:8000-8100', '2001:db8::/32')");
}

Test(contract, network_needs_allow)
{
	expect_only_error(HEAD "network: {}\n", 7, 1, "missing required key 'allow' in 'network'");
}

Test(contract, no_allowed_paths_no_network)
{
	cr_assert_eq(parse(HEAD), 0);
	env = env_new();
	add_path(&env->workspace_write, "README.md", true, TP_PATH_EXACT, 9, 9);
	add_host("api.github.com", 443, 443, TP_PROTO_ANY, 14, 9);
	cr_expect_eq(check(), -EINVAL);
	expect_env_diag(0, 9, 9,
			"write grant 'README.md' is not within the contract's allowed_paths "
			"(task.yaml has no allowed_paths, so it allows no writes)");
	expect_env_diag(1, 14, 9,
			"destination 'api.github.com:443' is not within the contract's "
			"network.allow (task.yaml has no network.allow, so it allows no "
			"destinations)");
	cr_expect_eq(diags.count, 2);
	cr_expect_str_eq(notes_output(), "");
}

Test(contract, empty_lists_allow_nothing_but_read_only_envelope_passes)
{
	cr_assert_eq(parse(HEAD "allowed_paths: []\nnetwork: {allow: []}\n"), 0);
	env = env_new();
	cr_expect_eq(check(), 0);
	add_path(&env->workspace_write, "src", true, TP_PATH_SUBTREE, 9, 9);
	cr_expect_eq(check(), -EINVAL);
	expect_env_diag(0, 9, 9,
			"write grant 'src/**' is not within the contract's allowed_paths "
			"(task.yaml:7:1 allows none)");
}

Test(contract, exact_and_component_boundaries)
{
	cr_assert_eq(parse(HEAD "allowed_paths: [README.md, src/auth/**, \"**\"]\n"), 0);
	tp_contract_free(contract);
	contract = NULL;
	cr_assert_eq(parse(HEAD "allowed_paths: [README.md, src/auth/**]\n"), 0);
	env = env_new();
	add_path(&env->workspace_write, "README.md", true, TP_PATH_EXACT, 9, 1);
	add_path(&env->workspace_write, "src/auth", true, TP_PATH_EXACT, 10, 1);
	add_path(&env->workspace_write, "src/auth/a/b.c", true, TP_PATH_EXACT, 11, 1);
	add_path(&env->workspace_write, "README.md", true, TP_PATH_SUBTREE, 12, 1);
	add_path(&env->workspace_write, "src/authz", true, TP_PATH_SUBTREE, 13, 1);
	add_path(&env->workspace_write, "", true, TP_PATH_EXACT, 14, 1);
	cr_expect_eq(check(), -EINVAL);
	cr_assert_eq(diags.count, 3);
	expect_env_diag(0, 12, 1,
			"write grant 'README.md/**' is not within the contract's allowed_paths "
			"(task.yaml:7:1 allows 'README.md', 'src/auth/**')");
	expect_env_diag(1, 13, 1,
			"write grant 'src/authz/**' is not within the contract's allowed_paths "
			"(task.yaml:7:1 allows 'README.md', 'src/auth/**')");
	expect_env_diag(2, 14, 1,
			"write grant '.' is not within the contract's allowed_paths "
			"(task.yaml:7:1 allows 'README.md', 'src/auth/**')");
}

Test(contract, whole_workspace_allowed)
{
	cr_assert_eq(parse(HEAD "allowed_paths: [\"**\"]\n"), 0);
	env = env_new();
	add_path(&env->workspace_write, "", true, TP_PATH_SUBTREE, 0, 0);
	add_path(&env->write, "/ws", false, TP_PATH_SUBTREE, 9, 1);
	cr_expect_eq(check(), 0);
	cr_expect_eq(diags.count, 0);
}

Test(contract, wall_clock)
{
	cr_assert_eq(parse(HEAD "max_wall_clock: 10m\nmax_turns: 40\nmax_cost: 5 USD\n"), 0);
	env = env_new();
	cr_expect_eq(check(), -EINVAL);
	expect_env_diag(0, 2, 1,
			"'resources.wall_clock' is not set, so the run's time is unlimited; the "
			"contract allows at most 10m (task.yaml:7:1)");
	tp_diags_free(&diags);

	env->limits[TP_LIMIT_WALL_CLOCK_MS] = 3600000;
	env->limit_pos[TP_LIMIT_WALL_CLOCK_MS] = (struct tp_pos){ 20, 17 };
	cr_expect_eq(check(), -EINVAL);
	cr_assert_eq(diags.count, 1);
	cr_expect_eq(diags.items[0].line, 20);
	cr_expect_eq(diags.items[0].column, 17);
	cr_expect(strncmp(diags.items[0].message, "'resources.wall_clock' ", 23) == 0 &&
			  strstr(diags.items[0].message,
				 "is longer than the contract allows: at most 10m (task.yaml:7:1)"),
		  "%s", diags.items[0].message);
	tp_diags_free(&diags);

	env->limits[TP_LIMIT_WALL_CLOCK_MS] = 600000;
	cr_expect_eq(check(), 0);
	cr_expect_eq(diags.count, 0);
	/* Three checks, the same notes each time. */
	cr_expect_str_eq(notes_output(),
			 "note: max_turns 40 is outside what a sandbox can observe; enforce it in "
			 "the agent harness\n"
			 "note: max_cost '5 USD' is outside what a sandbox can observe; enforce it "
			 "in the agent harness\n"
			 "note: max_turns 40 is outside what a sandbox can observe; enforce it in "
			 "the agent harness\n"
			 "note: max_cost '5 USD' is outside what a sandbox can observe; enforce it "
			 "in the agent harness\n"
			 "note: max_turns 40 is outside what a sandbox can observe; enforce it in "
			 "the agent harness\n"
			 "note: max_cost '5 USD' is outside what a sandbox can observe; enforce it "
			 "in the agent harness\n");
}

Test(contract, diagnostics_sorted_and_notes_optional)
{
	parse_seed();
	env = env_new();
	add_host("example.org", 1, 65535, TP_PROTO_ANY, 5, 9);
	add_path(&env->workspace_write, "lib", true, TP_PATH_SUBTREE, 9, 9);
	add_path(&env->write, "/tmp", false, TP_PATH_SUBTREE, 7, 9);
	cr_expect_eq(tp_contract_check(contract, "env.yaml", env, &diags, NULL), -EINVAL);
	cr_assert_eq(diags.count, 3);
	cr_expect_eq(diags.items[0].line, 5);
	cr_expect_eq(diags.items[1].line, 7);
	cr_expect_eq(diags.items[2].line, 9);
}

Test(contract, bad_arguments)
{
	env = env_new();
	cr_expect_eq(tp_contract_check(NULL, "env.yaml", env, &diags, NULL), -EINVAL);
	cr_expect_eq(tp_contract_parse("t", "x", 1, NULL, &diags), -EINVAL);
	cr_expect_eq(tp_contract_parse_file(NULL, &contract, &diags), -EINVAL);
	cr_expect_eq(diags.count, 0);
	tp_contract_free(NULL);
}
