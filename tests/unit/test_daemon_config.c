// SPDX-License-Identifier: GPL-2.0
/*
 * runtime/daemon/config.c: /etc/tether/daemon.yaml is read as strictly as an
 * envelope.  Every kind of error is checked with its exact
 * "FILE:LINE:COLUMN: error: MESSAGE" text, several at once in file order;
 * names resolve from passwd and group files written here (never the host's);
 * and daemon_config_allows() grants what docs/daemon.md says, nothing more.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policyc/policy.h"
#include "runtime/daemon/config.h"
#include "runtime/sink/nodelog.h"
#include "runtime/sink/syslog.h"

/* short, so every path below it fits with room to spare */
static char top[64];
static char passwd_path[128], group_path[128];
static struct daemon_config_files files;
static struct tp_diags diags;
static struct daemon_config cfg;

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "cannot create %s", path);
	cr_assert_eq(fputs(text, f) >= 0, true);
	cr_assert_eq(fclose(f), 0);
}

static void setup(void)
{
	FILE *f;

	snprintf(top, sizeof(top), "/tmp/tether-test-dconfig-XXXXXX");
	cr_assert_not_null(mkdtemp(top));
	snprintf(passwd_path, sizeof(passwd_path), "%s/passwd", top);
	snprintf(group_path, sizeof(group_path), "%s/group", top);
	/*
	 * A malformed line and NIS compat lines ("+" alone parses as uid 0)
	 * among the accounts: neither may be resolved, nor stop the lookup.
	 */
	write_file(passwd_path,
		   "root:x:0:0:root:/root:/bin/sh\n"
		   "this line is not an account\n"
		   "+::::::\n"
		   "+nisuser::::::\n"
		   "alice:x:1000:1000:Alice:/home/alice:/bin/sh\n"
		   "bob:x:1001:1001::/home/bob:/bin/sh\n"
		   "alice:x:4242:4242:a second alice, never used:/:/bin/sh\n"
		   "minus1:x:4294967295:0::/:/bin/sh\n");
	f = fopen(group_path, "w");
	cr_assert_not_null(f);
	fputs("root:x:0:\n"
	      "tether:x:990:\n"
	      "agents:x:2000:alice,bob\n"
	      "+:::\n", f);
	/* A line far longer than the first buffer the lookup tries (1 KiB). */
	fputs("crowd:x:3000:", f);
	for (int i = 0; i < 5000; i++)
		fprintf(f, "%smember%d", i ? "," : "", i);
	fputs("\nlate:x:3001:\n", f);
	cr_assert_eq(fclose(f), 0);
	files = (struct daemon_config_files){ .passwd = passwd_path, .group = group_path };
}

static void teardown(void)
{
	char cmd[96];

	daemon_config_free(&cfg);
	tp_diags_free(&diags);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(daemon_config, .init = setup, .fini = teardown, .timeout = 20);

static char *diag_text(void)
{
	char *text = NULL;

	cr_assert_eq(tp_diags_format(&diags, &text), 0);
	return text;
}

static int parse(const char *text)
{
	return daemon_config_parse("t.yaml", text, strlen(text), &files, &cfg, &diags);
}

static void expect_valid(const char *text)
{
	int r = parse(text);

	if (r != 0) {
		char *d = diag_text();

		cr_assert_fail("daemon.yaml invalid (%d):\n%s---\n%s", r, d, text);
	}
	cr_assert_eq(diags.count, 0);
}

/*
 * `text` fails with exactly the diagnostics `expected` ("t.yaml:L:C: error:
 * ...\n" each, in file order), and *cfg is left as it was.
 */
static void expect_errors(const char *text, const char *expected)
{
	struct daemon_config before = { .max_runs = 7 };
	char *got;
	int r;

	cfg = before;
	r = parse(text);
	got = diag_text();
	cr_expect_eq(r, -EINVAL, "parse returned %d for:\n%s", r, text);
	cr_expect_str_eq(got, expected, "for:\n%s\ngot:\n%s\nexpected:\n%s", text, got,
			 expected);
	cr_expect(memcmp(&cfg, &before, sizeof(cfg)) == 0, "cfg written on failure");
	free(got);
	cfg = (struct daemon_config){ 0 };
	tp_diags_free(&diags);
}

static const char *tenant(const struct daemon_caller *caller, size_t i)
{
	cr_assert_lt(i, caller->tenant_count);
	return caller->tenants[i];
}

/* ---- defaults and valid files ------------------------------------------ */

static void expect_defaults(const struct daemon_config *c)
{
	cr_expect_str_eq(c->socket_path, "/run/tether/tether.sock");
	cr_expect_str_eq(c->state_dir, "/var/lib/tether");
	cr_expect_eq(c->socket_gid, 0);
	cr_expect_eq(c->max_runs, 256);
	cr_assert_eq(c->caller_count, 1);
	cr_expect_eq(c->callers[0].kind, DAEMON_CALLER_UID);
	cr_expect_eq(c->callers[0].id, 0);
	cr_expect(c->callers[0].any_tenant);
	cr_expect_eq(c->callers[0].tenant_count, 0);
	cr_expect_null(c->callers[0].tenants);
	cr_expect_eq(c->callers[0].line, 0);
}

Test(daemon_config, defaults)
{
	cr_assert_eq(daemon_config_defaults(&cfg), 0);
	expect_defaults(&cfg);
	cr_expect_eq(daemon_config_defaults(NULL), -EINVAL);
}

Test(daemon_config, version_alone_is_the_defaults)
{
	expect_valid("version: 1\n");
	expect_defaults(&cfg);
}

Test(daemon_config, full_file)
{
	expect_valid("# the node agent\n"
		     "version: 1\n"
		     "socket: /run/tether/agent.sock\n"
		     "socket_group: tether\n"
		     "state_dir: /srv/tether/state\n"
		     "max_runs: 1024\n"
		     "callers:\n"
		     "  - uid: 0\n"
		     "    tenants: [\"*\"]\n"
		     "  - user: alice\n"
		     "    tenants: [team-a]\n"
		     "  - gid: 5000\n"
		     "    tenants:\n"
		     "      - team.b_2\n"
		     "      - team-c\n"
		     "  - group: agents\n"
		     "    tenants: [team-a, team-b]\n");
	cr_expect_str_eq(cfg.socket_path, "/run/tether/agent.sock");
	cr_expect_str_eq(cfg.state_dir, "/srv/tether/state");
	cr_expect_eq(cfg.socket_gid, 990);
	cr_expect_eq(cfg.max_runs, 1024);
	cr_assert_eq(cfg.caller_count, 4);
	cr_expect(cfg.callers[0].kind == DAEMON_CALLER_UID && cfg.callers[0].id == 0);
	cr_expect(cfg.callers[0].any_tenant && cfg.callers[0].tenant_count == 0);
	cr_expect_eq(cfg.callers[0].line, 8);
	cr_expect(cfg.callers[1].kind == DAEMON_CALLER_UID && cfg.callers[1].id == 1000);
	cr_expect(!cfg.callers[1].any_tenant);
	cr_assert_eq(cfg.callers[1].tenant_count, 1);
	cr_expect_str_eq(tenant(&cfg.callers[1], 0), "team-a");
	cr_expect_eq(cfg.callers[1].line, 10);
	cr_expect(cfg.callers[2].kind == DAEMON_CALLER_GID && cfg.callers[2].id == 5000);
	cr_expect_eq(cfg.callers[3].kind, DAEMON_CALLER_GID);
	cr_expect_eq(cfg.callers[3].id, 2000);
	cr_assert_eq(cfg.callers[3].tenant_count, 2);
	cr_expect_str_eq(tenant(&cfg.callers[3], 0), "team-a");
	cr_expect_str_eq(tenant(&cfg.callers[3], 1), "team-b");
	cr_assert_eq(cfg.callers[2].tenant_count, 2);
	cr_expect_str_eq(tenant(&cfg.callers[2], 0), "team.b_2");
	cr_expect_str_eq(tenant(&cfg.callers[2], 1), "team-c");
	cr_expect_eq(cfg.callers[3].line, 16);
}

Test(daemon_config, star_beside_names)
{
	expect_errors("version: 1\n"
		      "callers:\n"
		      "  - gid: 5000\n"
		      "    tenants:\n"
		      "      - team.b_2\n"
		      "      - '*'\n",
		      "t.yaml:6:9: error: '*' means every tenant: list either \"*\" alone or "
		      "tenant names, not both\n");
}

Test(daemon_config, paths_are_normalised)
{
	expect_valid("version: 1\n"
		     "socket: /run//tether/./x/../tether.sock/\n"
		     "state_dir: /var/lib/tether/\n");
	cr_expect_str_eq(cfg.socket_path, "/run/tether/tether.sock");
	cr_expect_str_eq(cfg.state_dir, "/var/lib/tether");
}

Test(daemon_config, socket_group_numeric_and_names)
{
	expect_valid("version: 1\nsocket_group: 4294967294\n");
	cr_expect_eq(cfg.socket_gid, 4294967294u);
	daemon_config_free(&cfg);
	/* Taken as given: a numeric gid need not be in the group file. */
	expect_valid("version: 1\nsocket_group: \"12345\"\n");
	cr_expect_eq(cfg.socket_gid, 12345);
	daemon_config_free(&cfg);
	/* Past a line of 5000 members, which needs a larger buffer. */
	expect_valid("version: 1\nsocket_group: late\n");
	cr_expect_eq(cfg.socket_gid, 3001);
	daemon_config_free(&cfg);
	expect_valid("version: 1\nsocket_group: crowd\n");
	cr_expect_eq(cfg.socket_gid, 3000);
}

Test(daemon_config, first_line_of_a_name_wins)
{
	expect_valid("version: 1\ncallers:\n  - user: alice\n    tenants: [t]\n");
	cr_expect_eq(cfg.callers[0].id, 1000);
}

Test(daemon_config, flow_style_and_crlf)
{
	expect_valid("{version: 1, max_runs: 1, callers: [{uid: 7, tenants: [a]}]}\r\n");
	cr_expect_eq(cfg.max_runs, 1);
	cr_assert_eq(cfg.caller_count, 1);
	cr_expect_eq(cfg.callers[0].id, 7);
	daemon_config_free(&cfg);
	expect_valid("\xef\xbb\xbfversion: 1\r\nmax_runs: 2\r\n");
	cr_expect_eq(cfg.max_runs, 2);
}

Test(daemon_config, free_is_null_safe_and_idempotent)
{
	daemon_config_free(NULL);
	cr_assert_eq(daemon_config_defaults(&cfg), 0);
	daemon_config_free(&cfg);
	daemon_config_free(&cfg);
	cr_expect_null(cfg.callers);
	cr_expect_eq(cfg.caller_count, 0);
}

/* ---- load ---------------------------------------------------------------- */

Test(daemon_config, load_missing_file_gives_defaults)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/absent.yaml", top);
	cr_assert_eq(daemon_config_load(path, &files, &cfg, &diags), -ENOENT);
	cr_expect_eq(diags.count, 0);
	expect_defaults(&cfg);
	daemon_config_free(&cfg);
	cr_assert_eq(daemon_config_load(path, &files, &cfg, NULL), -ENOENT);
	expect_defaults(&cfg);
}

Test(daemon_config, load_file)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/daemon.yaml", top);
	write_file(path, "version: 1\nmax_runs: 9\ncallers:\n  - group: agents\n    tenants: [x]\n");
	cr_assert_eq(daemon_config_load(path, &files, &cfg, &diags), 0);
	cr_expect_eq(diags.count, 0);
	cr_expect_eq(cfg.max_runs, 9);
	cr_assert_eq(cfg.caller_count, 1);
	cr_expect_eq(cfg.callers[0].id, 2000);
}

Test(daemon_config, load_invalid_file_names_the_path)
{
	char path[128], expected[256];
	char *got;

	snprintf(path, sizeof(path), "%s/daemon.yaml", top);
	write_file(path, "version: 1\nmax_runs: 0\n");
	cr_assert_eq(daemon_config_load(path, &files, &cfg, &diags), -EINVAL);
	snprintf(expected, sizeof(expected),
		 "%s:2:11: error: invalid 'max_runs': '0' is too small; the minimum is 1\n", path);
	got = diag_text();
	cr_expect_str_eq(got, expected);
	free(got);
	cr_expect_null(cfg.callers);
}

Test(daemon_config, load_unreadable)
{
	char expected[256];
	char *got;

	cr_assert_eq(daemon_config_load(top, &files, &cfg, &diags), -EISDIR);
	snprintf(expected, sizeof(expected), "%s: error: cannot read: Is a directory\n", top);
	got = diag_text();
	cr_expect_str_eq(got, expected);
	free(got);
	cr_expect_eq(diags.items[0].line, 0);
	cr_expect_null(cfg.callers);
}

Test(daemon_config, load_too_large)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/big.yaml", top);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("version: 1\n", f);
	for (size_t i = 0; i < DAEMON_CONFIG_MAX_BYTES / 8; i++)
		fputs("# pad  \n", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(daemon_config_load(path, &files, &cfg, &diags), -EFBIG);
	cr_assert_eq(diags.count, 1);
	cr_expect_eq(diags.items[0].line, 0);
}

Test(daemon_config, parse_too_large)
{
	size_t len = DAEMON_CONFIG_MAX_BYTES + 1;
	char *text = malloc(len);
	char *got;

	cr_assert_not_null(text);
	memset(text, '#', len);
	cr_expect_eq(daemon_config_parse("t.yaml", text, len, &files, &cfg, &diags), -EINVAL);
	got = diag_text();
	cr_expect_str_eq(got, "t.yaml: error: the daemon configuration is 1048577 bytes, over "
			      "the limit of 1048576 bytes\n");
	free(got);
	free(text);
}

Test(daemon_config, bad_arguments)
{
	cr_expect_eq(daemon_config_parse("t.yaml", "version: 1\n", 11, &files, NULL, &diags),
		     -EINVAL);
	cr_expect_eq(daemon_config_parse("t.yaml", NULL, 1, &files, &cfg, &diags), -EINVAL);
	cr_expect_eq(daemon_config_load(NULL, &files, NULL, &diags), -EINVAL);
	cr_expect_eq(diags.count, 0);
	/* No diags list and no files: still a result, names from /etc. */
	cr_expect_eq(daemon_config_parse(NULL, "version: 1\n", 11, NULL, &cfg, NULL), 0);
	expect_defaults(&cfg);
}

/* ---- errors, each kind --------------------------------------------------- */

#define TOP_KEYS "version, socket, socket_group, state_dir, max_runs, audit_rate_limit, callers, sinks, node_log"
#define CALLER_KEYS "uid, user, gid, group, tenants, envelopes, workspaces"

Test(daemon_config, document_shape)
{
	expect_errors("", "t.yaml:1:1: error: the daemon configuration is empty: it needs at "
			  "least 'version: 1' (without the file the daemon uses its defaults)\n");
	expect_errors("# only a comment\n",
		      "t.yaml:1:1: error: the daemon configuration is empty: it needs at "
		      "least 'version: 1' (without the file the daemon uses its defaults)\n");
	expect_errors("- version: 1\n", "t.yaml:1:1: error: the daemon configuration must be a "
					"mapping of keys, got a sequence\n");
	expect_errors("socket: /a\n", "t.yaml:1:1: error: missing required key 'version' at the "
				      "top level\n");
}

Test(daemon_config, version)
{
	expect_errors("version: 2\n",
		      "t.yaml:1:10: error: 'version' must be 1, the only version of the daemon "
		      "configuration this tether reads\n");
}

Test(daemon_config, unknown_keys)
{
	expect_errors("version: 1\nsockets: /a\n",
		      "t.yaml:2:1: error: unknown key 'sockets' at the top level (expected one "
		      "of: " TOP_KEYS ")\n");
	expect_errors("version: 1\ncallers:\n  - uid: 0\n    tenant: [a]\n",
		      "t.yaml:3:5: error: missing required key 'tenants' in 'callers'\n"
		      "t.yaml:4:5: error: unknown key 'tenant' in 'callers' (expected one of: "
		      CALLER_KEYS ")\n");
}

Test(daemon_config, duplicate_keys)
{
	expect_errors("version: 1\nmax_runs: 2\nmax_runs: 3\n",
		      "t.yaml:3:1: error: duplicate key 'max_runs' (first defined at line 2)\n");
	expect_errors("version: 1\ncallers:\n  - uid: 1\n    tenants: [a]\n    tenants: [b]\n",
		      "t.yaml:5:5: error: duplicate key 'tenants' (first defined at line 4)\n");
}

Test(daemon_config, wrong_kinds)
{
	expect_errors("version: 1\n"
		      "socket: [/a]\n"
		      "socket_group: {a: 1}\n"
		      "state_dir:\n"
		      "max_runs: [1]\n"
		      "callers: everyone\n",
		      "t.yaml:2:9: error: 'socket' must be a scalar, got a sequence\n"
		      "t.yaml:3:15: error: 'socket_group' must be a scalar, got a mapping\n"
		      "t.yaml:4:11: error: 'state_dir' must be an absolute path, got an empty value\n"
		      "t.yaml:5:11: error: 'max_runs' must be a scalar, got a sequence\n"
		      "t.yaml:6:10: error: 'callers' must be a sequence, got a scalar\n");
	expect_errors("version: 1\n"
		      "callers:\n"
		      "  - uid: 0\n"
		      "    tenants: \"*\"\n"
		      "  - 42\n"
		      "  - gid: [1]\n"
		      "    tenants: [[a], {b: c}, ~]\n",
		      "t.yaml:4:14: error: 'tenants' must be a sequence, got a scalar\n"
		      "t.yaml:5:5: error: entries of 'callers' must be mappings with one of 'uid', "
		      "'user', 'gid' or 'group', and 'tenants'; got a scalar\n"
		      "t.yaml:6:10: error: 'gid' must be a scalar, got a sequence\n"
		      "t.yaml:7:15: error: entries of 'tenants' must be tenant names, got a "
		      "sequence\n"
		      "t.yaml:7:20: error: entries of 'tenants' must be tenant names, got a "
		      "mapping\n"
		      "t.yaml:7:28: error: '~' unquoted is YAML's null, not a tenant name: quote it "
		      "(\"~\") for a tenant of that name\n");
}

Test(daemon_config, out_of_range)
{
	expect_errors("version: 1\n"
		      "max_runs: 0\n",
		      "t.yaml:2:11: error: invalid 'max_runs': '0' is too small; the minimum is 1\n");
	expect_errors("version: 1\n"
		      "max_runs: 1025\n",
		      "t.yaml:2:11: error: invalid 'max_runs': '1025' is too large; the maximum is "
		      "1024\n");
	expect_errors("version: 1\n"
		      "max_runs: 010\n",
		      "t.yaml:2:11: error: invalid 'max_runs': '010' has a leading zero (octal in "
		      "YAML 1.1); write '10'\n");
	expect_errors("version: 1\n"
		      "socket_group: 4294967295\n"
		      "callers:\n"
		      "  - uid: -1\n"
		      "    tenants: [a]\n"
		      "  - gid: 4294967296\n"
		      "    tenants: [a]\n",
		      "t.yaml:2:15: error: 'socket_group' must not be 4294967295: that is "
		      "(gid_t)-1, which the kernel reads as \"unchanged\", not an id\n"
		      "t.yaml:4:10: error: invalid 'uid': '-1' is negative; a number cannot be "
		      "negative\n"
		      "t.yaml:6:10: error: invalid 'gid': '4294967296' is too large; the maximum is "
		      "4294967294\n");
}

Test(daemon_config, empty_lists)
{
	expect_errors("version: 1\ncallers: []\n",
		      "t.yaml:2:10: error: 'callers' must not be empty: nobody could use the "
		      "daemon; leave the key out for the default (uid 0, every tenant)\n");
	expect_errors("version: 1\ncallers:\n  - uid: 0\n    tenants: []\n",
		      "t.yaml:4:14: error: 'tenants' must not be empty: list tenant names, or "
		      "\"*\" for every tenant\n");
}

Test(daemon_config, paths)
{
	char long_socket[160], long_state[1100], text[1400], expected[512];
	char *p;

	expect_errors("version: 1\nsocket: run/tether.sock\nstate_dir: \"\"\n",
		      "t.yaml:2:9: error: 'socket' must be an absolute path (starting with '/'), "
		      "got 'run/tether.sock'\n"
		      "t.yaml:3:12: error: 'state_dir' must be an absolute path (starting with "
		      "'/'), got ''\n");
	expect_errors("version: 1\nsocket: /\nstate_dir: /a/..\n",
		      "t.yaml:2:9: error: 'socket' must be a path below '/', not '/' itself\n"
		      "t.yaml:3:12: error: 'state_dir' must be a path below '/', not '/' itself\n");

	/* 107 bytes is the most a sockaddr_un holds; 108 is one too many. */
	p = long_socket;
	*p++ = '/';
	memset(p, 's', 106);
	p[106] = '\0';
	snprintf(text, sizeof(text), "version: 1\nsocket: %s\n", long_socket);
	expect_valid(text);
	cr_expect_eq(strlen(cfg.socket_path), 107);
	daemon_config_free(&cfg);
	strcat(long_socket, "s");
	snprintf(text, sizeof(text), "version: 1\nsocket: %s\n", long_socket);
	expect_errors(text, "t.yaml:2:9: error: 'socket' is 108 bytes long after normalisation, "
			    "over the limit of 107: a Unix socket address holds at most 107 "
			    "bytes\n");

	long_state[0] = '/';
	memset(long_state + 1, 'd', 1024);
	long_state[1025] = '\0';
	snprintf(text, sizeof(text), "version: 1\nstate_dir: %s\n", long_state);
	snprintf(expected, sizeof(expected),
		 "t.yaml:2:12: error: 'state_dir' is 1025 bytes long after normalisation, over "
		 "the limit of 1024\n");
	expect_errors(text, expected);
}

Test(daemon_config, tenants)
{
	expect_errors("version: 1\n"
		      "callers:\n"
		      "  - uid: 0\n"
		      "    tenants: [team-a, \"team a\", .hidden, -x, \"\", team-a]\n"
		      "  - uid: 1\n"
		      "    tenants: ['*', '*']\n"
		      "  - uid: 2\n"
		      "    tenants: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n",
		      "t.yaml:4:23: error: invalid tenant 'team a': 1 to 64 letters, digits, '.', "
		      "'_' or '-', starting with a letter or digit\n"
		      "t.yaml:4:33: error: invalid tenant '.hidden': 1 to 64 letters, digits, '.', "
		      "'_' or '-', starting with a letter or digit\n"
		      "t.yaml:4:42: error: invalid tenant '-x': 1 to 64 letters, digits, '.', "
		      "'_' or '-', starting with a letter or digit\n"
		      "t.yaml:4:46: error: invalid tenant '': 1 to 64 letters, digits, '.', "
		      "'_' or '-', starting with a letter or digit\n"
		      "t.yaml:4:50: error: tenant 'team-a' is listed twice (first at line 4, "
		      "column 15)\n"
		      "t.yaml:6:20: error: '*' is listed twice (first at line 6, column 15)\n"
		      "t.yaml:8:15: error: invalid tenant 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		      "aaaaaaaaaaaaaaaaaaaaaaaa...': 1 to 64 letters, digits, '.', '_' or '-', "
		      "starting with a letter or digit\n");
	/* Unquoted null spellings are YAML's null; quoted they are names. */
	expect_errors("version: 1\ncallers:\n  - uid: 0\n    tenants: [null, \"null\", ~, NULL]\n",
		      "t.yaml:4:15: error: 'null' unquoted is YAML's null, not a tenant name: "
		      "quote it (\"null\") for a tenant of that name\n"
		      "t.yaml:4:29: error: '~' unquoted is YAML's null, not a tenant name: quote it "
		      "(\"~\") for a tenant of that name\n"
		      "t.yaml:4:32: error: 'NULL' unquoted is YAML's null, not a tenant name: "
		      "quote it (\"NULL\") for a tenant of that name\n");
	expect_errors("version: 1\ncallers:\n  - uid: 0\n    tenants:\n      -\n      - a\n",
		      "t.yaml:5:8: error: entries of 'tenants' must be tenant names, got an empty "
		      "value\n");
	/* A plain * starts an alias in YAML: the hint says to quote it. */
	expect_errors("version: 1\ncallers:\n  - uid: 0\n    tenants: [*]\n",
		      "t.yaml:4:15: error: a plain value cannot start with '*' (YAML reads an "
		      "alias): quote it (\"*\")\n");
}

Test(daemon_config, selectors)
{
	expect_errors("version: 1\n"
		      "callers:\n"
		      "  - tenants: [a]\n"
		      "  - uid: 0\n"
		      "    group: agents\n"
		      "    tenants: [a]\n"
		      "  - {user: alice, uid: 5, gid: 6, tenants: [a]}\n",
		      "t.yaml:3:5: error: an entry of 'callers' needs one of 'uid', 'user', 'gid' "
		      "or 'group'\n"
		      "t.yaml:5:5: error: 'group' and 'uid' (line 4, column 5) in one entry of "
		      "'callers': an entry names exactly one of uid, user, gid or group; write one "
		      "entry for each\n"
		      "t.yaml:7:19: error: 'uid' and 'user' (line 7, column 6) in one entry of "
		      "'callers': an entry names exactly one of uid, user, gid or group; write one "
		      "entry for each\n"
		      "t.yaml:7:27: error: 'gid' and 'user' (line 7, column 6) in one entry of "
		      "'callers': an entry names exactly one of uid, user, gid or group; write one "
		      "entry for each\n");
}

Test(daemon_config, duplicate_callers)
{
	expect_errors("version: 1\n"
		      "callers:\n"
		      "  - uid: 1000\n"
		      "    tenants: [a]\n"
		      "  - gid: 1000\n"
		      "    tenants: [a]\n"
		      "  - user: alice\n"
		      "    tenants: [b]\n"
		      "  - group: agents\n"
		      "    tenants: [a]\n"
		      "  - gid: 2000\n"
		      "    tenants: [c]\n"
		      "  - uid: 1000\n"
		      "    tenants: [d]\n",
		      "t.yaml:7:5: error: user 'alice' (uid 1000) has an entry already (at line 3, "
		      "column 5): merge their tenants into one entry\n"
		      "t.yaml:11:5: error: gid 2000 has an entry already (at line 9, column 5): "
		      "merge their tenants into one entry\n"
		      "t.yaml:13:5: error: uid 1000 has an entry already (at line 3, column 5): "
		      "merge their tenants into one entry\n");
}

Test(daemon_config, names)
{
	char text[512], expected[2048];

	snprintf(text, sizeof(text),
		 "version: 1\n"
		 "socket_group: nogroup\n"
		 "callers:\n"
		 "  - user: carol\n"
		 "    tenants: [a]\n"
		 "  - user: \"1002\"\n"
		 "    tenants: [a]\n"
		 "  - uid: alice\n"
		 "    tenants: [a]\n"
		 "  - group: \"+\"\n"
		 "    tenants: [a]\n"
		 "  - user: \"a:b\"\n"
		 "    tenants: [a]\n"
		 "  - user: nisuser\n"
		 "    tenants: [a]\n"
		 "  - user: minus1\n"
		 "    tenants: [a]\n");
	snprintf(expected, sizeof(expected),
		 "t.yaml:2:15: error: unknown group 'nogroup' (not in %s)\n"
		 "t.yaml:4:11: error: unknown user 'carol' (not in %s)\n"
		 "t.yaml:6:11: error: unknown user '1002' (not in %s); for a numeric uid write "
		 "'uid: 1002'\n"
		 "t.yaml:8:10: error: invalid 'uid': 'alice' is not a number; for a name write "
		 "'user: alice'\n"
		 "t.yaml:10:12: error: invalid 'group': '+' is not a group name (1 to 255 bytes "
		 "without ':', spaces or control characters, not starting with '+' or '-')\n"
		 "t.yaml:12:11: error: invalid 'user': 'a:b' is not a user name (1 to 255 bytes "
		 "without ':', spaces or control characters, not starting with '+' or '-')\n"
		 "t.yaml:14:11: error: unknown user 'nisuser' (not in %s)\n"
		 "t.yaml:16:11: error: user 'minus1' has uid 4294967295 in %s: that is "
		 "(uid_t)-1, not an id\n",
		 group_path, passwd_path, passwd_path, passwd_path, passwd_path);
	expect_errors(text, expected);
}

Test(daemon_config, names_without_the_files)
{
	char text[256], expected[512];

	files.passwd = "/nonexistent/passwd";
	files.group = "/nonexistent/group";
	snprintf(text, sizeof(text),
		 "version: 1\n"
		 "socket_group: tether\n"
		 "callers:\n"
		 "  - user: alice\n"
		 "    tenants: [a]\n"
		 "  - user: bob\n"
		 "    tenants: [a]\n"
		 "  - uid: 0\n"
		 "    tenants: [a]\n");
	/* Once per file: the first message says why no name resolves. */
	snprintf(expected, sizeof(expected),
		 "t.yaml:2:15: error: cannot read /nonexistent/group to resolve group names: No "
		 "such file or directory\n"
		 "t.yaml:4:11: error: cannot read /nonexistent/passwd to resolve user names: No "
		 "such file or directory\n");
	expect_errors(text, expected);
}

Test(daemon_config, yaml_level_refusals_name_the_document)
{
	expect_errors("version: 1\nsocket: &s /a\n",
		      "t.yaml:2:9: error: anchor '&s' is not supported: a daemon configuration "
		      "spells out every value\n");
	expect_errors("version: 1\nmax_runs: !!binary AAAA\n",
		      "t.yaml:2:11: error: tag '!!binary' is not supported on a scalar: a daemon "
		      "configuration uses only the standard tags (!!str, !!int, !!float, !!bool, "
		      "!!null, !!map, !!seq)\n"
		      "t.yaml:2:11: error: invalid 'max_runs': 'AAAA' is not a number; expected a "
		      "decimal integer\n");
	expect_errors("version: 1\n---\nversion: 1\n",
		      "t.yaml:2:1: error: a second document starts here; a daemon configuration "
		      "is exactly one YAML document\n");
}

Test(daemon_config, nul_byte)
{
	static const char text[] = "version: 1\nstate_dir: /a\0b\n";
	char *got;

	cr_expect_eq(daemon_config_parse("t.yaml", text, sizeof(text) - 1, &files, &cfg, &diags),
		     -EINVAL);
	got = diag_text();
	cr_expect_str_eq(got, "t.yaml:2:14: error: NUL byte in the daemon configuration: YAML "
			      "text cannot contain one\n");
	free(got);
}

/* Checks of different stages (tree building, schema, names, duplicates) in one pass, in file order. */
Test(daemon_config, every_error_at_once)
{
	char expected[2048];

	snprintf(expected, sizeof(expected),
		 "t.yaml:1:10: error: 'version' must be 1, the only version of the daemon "
		 "configuration this tether reads\n"
		 "t.yaml:2:9: error: 'socket' must be an absolute path (starting with '/'), got "
		 "'tether.sock'\n"
		 "t.yaml:3:15: error: unknown group 'wheel' (not in %s)\n"
		 "t.yaml:4:1: error: duplicate key 'socket' (first defined at line 2)\n"
		 "t.yaml:5:11: error: invalid 'max_runs': '5000' is too large; the maximum is "
		 "1024\n"
		 "t.yaml:6:1: error: unknown key 'colour' at the top level (expected one of: "
		 TOP_KEYS ")\n"
		 "t.yaml:8:24: error: invalid tenant 'a b': 1 to 64 letters, digits, '.', '_' or "
		 "'-', starting with a letter or digit\n"
		 "t.yaml:9:23: error: 'tenants' must not be empty: list tenant names, or \"*\" for "
		 "every tenant\n"
		 "t.yaml:10:6: error: uid 3 has an entry already (at line 9, column 6): merge "
		 "their tenants into one entry\n",
		 group_path);
	expect_errors("version: 3\n"
		      "socket: tether.sock\n"
		      "socket_group: wheel\n"
		      "socket: /a\n"
		      "max_runs: 5000\n"
		      "colour: blue\n"
		      "callers:\n"
		      "  - {uid: 1, tenants: [\"a b\"]}\n"
		      "  - {uid: 3, tenants: []}\n"
		      "  - {uid: 3, tenants: [x]}\n"
		      "  - {uid: 4, tenants: [x]}\n",
		      expected);
}

/* ---- who may call -------------------------------------------------------- */

Test(daemon_config, allows)
{
	static const uint32_t alice_gids[] = { 1000, 2000 };	/* primary, then agents */
	static const uint32_t bob_gids[] = { 1001 };
	static const uint32_t ops_gids[] = { 1001, 3000 };	/* 3000: supplementary */
	static const uint32_t other_gids[] = { 4000 };

	expect_valid("version: 1\n"
		     "callers:\n"
		     "  - uid: 0\n"
		     "    tenants: [\"*\"]\n"
		     "  - user: alice\n"
		     "    tenants: [team-a]\n"
		     "  - group: agents\n"
		     "    tenants: [team-b, team-c]\n"
		     "  - gid: 1001\n"
		     "    tenants: [team-d]\n"
		     "  - gid: 3000\n"
		     "    tenants: [\"*\"]\n");

	/* uid 0: every tenant, with no groups at all. */
	cr_expect(daemon_config_allows(&cfg, 0, NULL, 0, NULL));
	cr_expect(daemon_config_allows(&cfg, 0, NULL, 0, "anything"));
	/* alice: her uid's tenant and her group's, together; nothing else. */
	cr_expect(daemon_config_allows(&cfg, 1000, alice_gids, 2, NULL));
	cr_expect(daemon_config_allows(&cfg, 1000, alice_gids, 2, "team-a"));
	cr_expect(daemon_config_allows(&cfg, 1000, alice_gids, 2, "team-b"));
	cr_expect(daemon_config_allows(&cfg, 1000, alice_gids, 2, "team-c"));
	cr_expect(!daemon_config_allows(&cfg, 1000, alice_gids, 2, "team-d"));
	cr_expect(!daemon_config_allows(&cfg, 1000, alice_gids, 2, "Team-a"));
	/* Without the agents group she keeps only her own. */
	cr_expect(daemon_config_allows(&cfg, 1000, alice_gids, 1, "team-a"));
	cr_expect(!daemon_config_allows(&cfg, 1000, alice_gids, 1, "team-b"));
	/* bob: by primary gid 1001 only. */
	cr_expect(daemon_config_allows(&cfg, 1001, bob_gids, 1, NULL));
	cr_expect(daemon_config_allows(&cfg, 1001, bob_gids, 1, "team-d"));
	cr_expect(!daemon_config_allows(&cfg, 1001, bob_gids, 1, "team-a"));
	/* A supplementary gid with "*". */
	cr_expect(daemon_config_allows(&cfg, 5555, ops_gids, 2, "whatever"));
	cr_expect(daemon_config_allows(&cfg, 5555, ops_gids + 1, 1, "team-z"));
	/* No entry matches: refused outright. */
	cr_expect(!daemon_config_allows(&cfg, 4000, other_gids, 1, NULL));
	cr_expect(!daemon_config_allows(&cfg, 4000, other_gids, 1, "team-a"));
	cr_expect(!daemon_config_allows(&cfg, 4000, NULL, 0, NULL));
	/* A gid equal to a listed uid grants nothing, nor a uid equal to a listed gid. */
	cr_expect(!daemon_config_allows(&cfg, 4000, (const uint32_t[]){ 0 }, 1, NULL));
	cr_expect(!daemon_config_allows(&cfg, 2000, NULL, 0, NULL));
	/* Names no entry can hold are refused, even under "*". */
	cr_expect(!daemon_config_allows(&cfg, 0, NULL, 0, "*"));
	cr_expect(!daemon_config_allows(&cfg, 0, NULL, 0, ".."));
	cr_expect(!daemon_config_allows(&cfg, 0, NULL, 0, ""));
	/* Bad arguments refuse. */
	cr_expect(!daemon_config_allows(NULL, 0, NULL, 0, NULL));
	cr_expect(!daemon_config_allows(&cfg, 0, NULL, 1, NULL));
}

Test(daemon_config, allows_defaults)
{
	cr_assert_eq(daemon_config_defaults(&cfg), 0);
	cr_expect(daemon_config_allows(&cfg, 0, NULL, 0, NULL));
	cr_expect(daemon_config_allows(&cfg, 0, NULL, 0, "team-a"));
	/* Root's group is not root. */
	cr_expect(!daemon_config_allows(&cfg, 1000, (const uint32_t[]){ 0 }, 1, NULL));
}

Test(daemon_config, tenant_valid)
{
	cr_expect(daemon_tenant_valid("a"));
	cr_expect(daemon_tenant_valid("team-a.b_c"));
	cr_expect(daemon_tenant_valid("0"));
	cr_expect(daemon_tenant_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	cr_expect(!daemon_tenant_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	cr_expect(!daemon_tenant_valid(NULL));
	cr_expect(!daemon_tenant_valid(""));
	cr_expect(!daemon_tenant_valid("*"));
	cr_expect(!daemon_tenant_valid("."));
	cr_expect(!daemon_tenant_valid(".."));
	cr_expect(!daemon_tenant_valid("-rf"));
	cr_expect(!daemon_tenant_valid("a/b"));
	cr_expect(!daemon_tenant_valid("a b"));
	cr_expect(!daemon_tenant_valid("t\xc3\xa9"));
}

/* The daemon holds the tenants envelopes name: one rule for both (identity.tenant). */
Test(daemon_config, tenant_rule_is_the_envelopes)
{
	static const char *const samples[] = {
		"a", "team-a", "A.b_c-9", "9lives", ".a", "-a", "_a", "a b", "a/b", "a:b",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};

	for (size_t i = 0; i < sizeof(samples) / sizeof(*samples); i++) {
		struct tp_envelope *env = NULL;
		struct tp_diags env_diags = { 0 };
		char text[512];
		int r;

		snprintf(text, sizeof(text),
			 "sandbox:\n"
			 "  identity:\n"
			 "    tenant: '%s'\n"
			 "  filesystem:\n"
			 "    root: read_only\n"
			 "    workspace:\n"
			 "      path: /ws\n", samples[i]);
		r = tp_envelope_parse("e.yaml", text, strlen(text), &env, &env_diags);
		cr_expect_eq(r == 0, daemon_tenant_valid(samples[i]), "'%s': envelope %d",
			     samples[i], r);
		tp_envelope_free(env);
		tp_diags_free(&env_diags);
	}
}

/* ---- envelopes and workspaces: what a caller may run, and where -------- */

#define D1 "sha256:" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define D2 "sha256:" "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

Test(daemon_config, envelopes_and_workspaces)
{
	static const uint32_t alice_gids[] = { 1000, 2000 };
	static const uint32_t bob_gids[] = { 1001, 2000 };

	expect_valid("version: 1\n"
		     "callers:\n"
		     "  - uid: 0\n"
		     "    tenants: [\"*\"]\n"
		     "  - user: alice\n"
		     "    tenants: [team-a]\n"
		     "    envelopes: [\"" D1 "\"]\n"
		     "    workspaces: [/srv/agents//a/, /srv/shared]\n"
		     "  - group: agents\n"
		     "    tenants: [team-b]\n"
		     "    envelopes: [\"" D2 "\"]\n");
	cr_assert_eq(cfg.caller_count, 3);
	cr_expect(cfg.callers[0].any_envelope);
	cr_expect(!cfg.callers[1].any_envelope);
	cr_assert_eq(cfg.callers[1].workspace_count, 2);
	cr_expect_str_eq(cfg.callers[1].workspaces[0], "/srv/agents/a");

	/* root's entry lists none: any envelope, any workspace */
	cr_expect(daemon_config_allows_envelope(&cfg, 0, NULL, 0, D1));
	cr_expect(daemon_config_allows_workspace(&cfg, 0, NULL, 0, "/anywhere"));
	/* alice: her entry's digest and her group's, together */
	cr_expect(daemon_config_allows_envelope(&cfg, 1000, alice_gids, 2, D1));
	cr_expect(daemon_config_allows_envelope(&cfg, 1000, alice_gids, 2, D2));
	cr_expect(!daemon_config_allows_envelope(&cfg, 1000, alice_gids, 1, D2));
	cr_expect(!daemon_config_allows_envelope(&cfg, 1000, alice_gids, 2,
						 "sha256:0000000000000000000000000000000000000000000000000000000000000000"));
	/* bob, by the group only */
	cr_expect(!daemon_config_allows_envelope(&cfg, 1001, bob_gids, 2, D1));
	cr_expect(daemon_config_allows_envelope(&cfg, 1001, bob_gids, 2, D2));
	/* workspaces: the listed directories and what is beneath, on component boundaries */
	cr_expect(daemon_config_allows_workspace(&cfg, 1000, alice_gids, 2, "/srv/agents/a"));
	cr_expect(daemon_config_allows_workspace(&cfg, 1000, alice_gids, 2, "/srv/agents/a/t1"));
	cr_expect(daemon_config_allows_workspace(&cfg, 1000, alice_gids, 2, "/srv/shared/x"));
	cr_expect(!daemon_config_allows_workspace(&cfg, 1000, alice_gids, 2, "/srv/agents/ab"));
	cr_expect(!daemon_config_allows_workspace(&cfg, 1000, alice_gids, 2, "/srv/agents"));
	cr_expect(!daemon_config_allows_workspace(&cfg, 1000, alice_gids, 2, "/etc"));
	/* an entry without workspaces grants none */
	cr_expect(!daemon_config_allows_workspace(&cfg, 1001, bob_gids, 2, "/srv/agents/a"));
	/* nobody the file names */
	cr_expect(!daemon_config_allows_envelope(&cfg, 4000, NULL, 0, D1));
	cr_expect(!daemon_config_allows_workspace(&cfg, 4000, NULL, 0, "/srv/shared"));
	/* bad arguments */
	cr_expect(!daemon_config_allows_envelope(NULL, 0, NULL, 0, D1));
	cr_expect(!daemon_config_allows_envelope(&cfg, 0, NULL, 0, NULL));
	cr_expect(!daemon_config_allows_workspace(&cfg, 1000, alice_gids, 2, "srv/shared"));
}

Test(daemon_config, defaults_allow_any_envelope)
{
	cr_assert_eq(daemon_config_defaults(&cfg), 0);
	cr_expect(daemon_config_allows_envelope(&cfg, 0, NULL, 0, D1));
	cr_expect(daemon_config_allows_workspace(&cfg, 0, NULL, 0, "/srv/x"));
	cr_expect(!daemon_config_allows_workspace(&cfg, 1000, NULL, 0, "/srv/x"));
}

Test(daemon_config, envelopes_and_workspaces_errors)
{
	expect_errors("version: 1\n"
		      "callers:\n"
		      "  - uid: 0\n"
		      "    tenants: [a]\n"
		      "    envelopes: []\n"
		      "    workspaces: []\n",
		      "t.yaml:5:16: error: 'envelopes' must not be empty: list the digests "
		      "`tether check` prints, or leave the key out for any envelope\n"
		      "t.yaml:6:17: error: 'workspaces' must not be empty: list directories, or "
		      "leave the key out (no per-run workspace)\n");
	expect_errors("version: 1\n"
		      "callers:\n"
		      "  - uid: 0\n"
		      "    tenants: [a]\n"
		      "    envelopes: [sha256:ABC, \"" D1 "\", \"" D1 "\", {x: 1}]\n"
		      "    workspaces: [relative, /a/b, /a/./b/, ~]\n",
		      "t.yaml:5:17: error: invalid envelope digest 'sha256:ABC': write it as "
		      "`tether check` prints it, 'sha256:' and 64 lowercase hex digits\n"
		      "t.yaml:5:104: error: '" D1 "' is listed twice in 'envelopes'\n"
		      "t.yaml:5:179: error: entries of 'envelopes' must be digests, got a mapping\n"
		      "t.yaml:6:18: error: entries of 'workspaces' must be absolute paths "
		      "(starting with '/'), got 'relative'\n"
		      "t.yaml:6:34: error: '/a/b' is listed twice in 'workspaces'\n"
		      "t.yaml:6:43: error: entries of 'workspaces' must be absolute paths, got an "
		      "empty value\n");
}

/* Flood control's ceiling: default (0 in the struct), a number, or 0 in the file for none. */
Test(daemon_config, audit_rate_limit)
{
	expect_valid("version: 1\n");
	cr_expect_eq(cfg.audit_rate_limit, 0);
	daemon_config_free(&cfg);
	expect_valid("version: 1\naudit_rate_limit: 500\n");
	cr_expect_eq(cfg.audit_rate_limit, 500);
	daemon_config_free(&cfg);
	expect_valid("version: 1\naudit_rate_limit: 0\n");
	cr_expect_eq(cfg.audit_rate_limit, UINT64_MAX);
	daemon_config_free(&cfg);
	expect_errors("version: 1\naudit_rate_limit: -1\n",
		      "t.yaml:2:19: error: invalid 'audit_rate_limit': '-1' is negative; a number cannot be negative\n");
}

/* ---- sinks (docs/daemon.md, "sinks") ---------------------------------------- */

Test(daemon_config, sinks_every_type)
{
	const struct daemon_sink *s;

	expect_valid("version: 1\n"
		     "sinks:\n"
		     "  - name: siem\n"
		     "    type: syslog-tls\n"
		     "    address: 192.0.2.10:6514\n"
		     "    ca_file: /etc/tether//ca.pem\n"
		     "    cert_file: /etc/tether/node.pem\n"
		     "    key_file: /etc/tether/node.key\n"
		     "    server_name: SIEM.example.com\n"
		     "    facility: authpriv\n"
		     "    format: json\n"
		     "    spool_bytes: 16MiB\n"
		     "    default: true\n"
		     "  - {name: tcp6, type: syslog-tcp, address: '[2001:db8::1]:514'}\n"
		     "  - {name: local, type: syslog-unix, path: /dev/log}\n"
		     "  - {name: file, type: jsonl-file, path: /var/log/tether/records.jsonl, "
		     "format: ocsf}\n"
		     "  - {name: stream, type: jsonl-unix, path: /run/collector.sock, "
		     "spool_bytes: 1MiB}\n");
	cr_assert_eq(cfg.sink_count, 5);
	s = daemon_config_sink(&cfg, "siem");
	cr_assert_not_null(s);
	cr_expect_eq(s->type, DAEMON_SINK_SYSLOG_TLS);
	cr_expect_str_eq(s->address, "192.0.2.10:6514");
	cr_expect_str_eq(s->ca_file, "/etc/tether/ca.pem");
	cr_expect_str_eq(s->server_name, "siem.example.com");
	cr_expect_eq(s->facility, 10);
	cr_expect_eq(s->spool_bytes, 16u << 20);
	cr_expect(s->is_default);
	s = daemon_config_sink(&cfg, "tcp6");
	cr_assert_not_null(s);
	cr_expect_eq(s->facility, 0, "not set: the sink's default (local0)");
	cr_expect_eq(s->spool_bytes, SYSLOG_DEFAULT_SPOOL_BYTES);
	cr_expect_not(s->is_default);
	cr_expect_eq(daemon_config_sink(&cfg, "file")->type, DAEMON_SINK_JSONL_FILE);
	cr_expect(daemon_config_sink(&cfg, "file")->ocsf);
	cr_expect_not(daemon_config_sink(&cfg, "siem")->ocsf);
	cr_expect_eq(daemon_config_sink(&cfg, "stream")->spool_bytes, 1u << 20);
	cr_expect_null(daemon_config_sink(&cfg, "nope"));
	daemon_config_free(&cfg);
}

Test(daemon_config, sinks_errors)
{
	expect_errors("version: 1\n"
		      "sinks:\n"
		      "  - {name: a, type: syslog-tls, address: 192.0.2.1:6514}\n"
		      "  - {name: b, type: syslog-tcp, address: collector.example:514}\n"
		      "  - {name: c, type: syslog-tcp, address: 192.0.2.1:514, path: /x}\n"
		      "  - {name: d, type: syslog-unix}\n"
		      "  - {name: a, type: jsonl-file, path: /x}\n"
		      "  - {name: 'e f', type: nope, path: /x}\n"
		      "  - {name: g, type: syslog-tcp, address: 192.0.2.1:514, facility: kern}\n"
		      "  - {name: h, type: syslog-tcp, address: 192.0.2.1:514, spool_bytes: 1KiB}\n"
		      "  - {name: i, type: syslog-tcp, address: 192.0.2.1:514, format: cef}\n"
		      "  - {name: j, type: jsonl-file, path: /x, ca_file: /ca}\n",
		      "t.yaml:3:5: error: a sink of type 'syslog-tls' needs 'ca_file': the "
		      "collector's certificate is always checked\n"
		      "t.yaml:4:42: error: invalid 'address' 'collector.example:514': write an IPv4 "
		      "address and port (192.0.2.10:6514) or an IPv6 one in brackets "
		      "([2001:db8::10]:6514); names are not resolved (give the name to check as "
		      "'server_name')\n"
		      "t.yaml:5:57: error: 'path' does not apply to a sink of type 'syslog-tcp'\n"
		      "t.yaml:6:5: error: a sink of type 'syslog-unix' needs 'path' (a datagram "
		      "socket, e.g. /dev/log)\n"
		      "t.yaml:7:5: error: sink name 'a' is used already (at line 3, column 5): names "
		      "are unique\n"
		      "t.yaml:8:12: error: invalid sink name 'e f': 1 to 64 letters, digits, '.', '_' "
		      "or '-', starting with a letter or digit\n"
		      "t.yaml:8:25: error: 'type' must be one of: syslog-tcp, syslog-tls, "
		      "syslog-unix, jsonl-file, jsonl-unix; got 'nope'\n"
		      "t.yaml:9:67: error: invalid 'facility' 'kern': a syslog facility name (local0 "
		      "to local7, authpriv, auth, daemon, user, ...; not kern)\n"
		      "t.yaml:10:70: error: invalid 'spool_bytes': '1KiB' is too small; the minimum "
		      "is 16KiB\n"
		      "t.yaml:11:65: error: 'format' must be \"json\" (the record's JSON object, as "
		      "the records file has it) or \"ocsf\" (an OCSF 1.x event: docs/audit.md, "
		      "\"OCSF\")\n"
		      "t.yaml:12:43: error: 'ca_file' does not apply to a sink of type "
		      "'jsonl-file'\n");
}

Test(daemon_config, node_log_defaults_and_values)
{
	expect_valid("version: 1\n");
	cr_expect(cfg.node_log.enabled);
	cr_expect_null(cfg.node_log.key_file);
	cr_expect_eq(cfg.node_log.file_bytes, NODELOG_DEFAULT_FILE_BYTES);
	cr_expect_eq(cfg.node_log.max_bytes, NODELOG_DEFAULT_MAX_BYTES);
	cr_expect_eq(cfg.node_log.checkpoint_records, NODELOG_DEFAULT_CHECKPOINT_RECORDS);
	cr_expect_eq(cfg.node_log.checkpoint_ms, NODELOG_DEFAULT_CHECKPOINT_MS);
	daemon_config_free(&cfg);
	expect_valid("version: 1\n"
		     "node_log:\n"
		     "  key_file: /etc/tether//nl.key\n"
		     "  file_bytes: 1MiB\n"
		     "  max_bytes: 2MiB\n"
		     "  checkpoint_records: 500\n"
		     "  checkpoint_seconds: 5\n");
	cr_expect(cfg.node_log.enabled);
	cr_expect_str_eq(cfg.node_log.key_file, "/etc/tether/nl.key");
	cr_expect_eq(cfg.node_log.file_bytes, 1u << 20);
	cr_expect_eq(cfg.node_log.max_bytes, 2u << 20);
	cr_expect_eq(cfg.node_log.checkpoint_records, 500);
	cr_expect_eq(cfg.node_log.checkpoint_ms, 5000);
	daemon_config_free(&cfg);
	expect_valid("version: 1\nnode_log: {enabled: false}\n");
	cr_expect(!cfg.node_log.enabled);
}

/* `text` is invalid and its diagnostics hold each of `want` (NULL-ended). */
static void expect_diags(const char *text, const char *const *want)
{
	char *got;

	cr_assert_eq(parse(text), -EINVAL, "%s", text);
	got = diag_text();
	for (size_t i = 0; want[i]; i++)
		cr_expect(strstr(got, want[i]), "no '%s' in:\n%s", want[i], got);
	free(got);
	tp_diags_free(&diags);
	cfg = (struct daemon_config){ 0 };
}

Test(daemon_config, node_log_errors)
{
	expect_diags("version: 1\n"
		     "node_log:\n"
		     "  file_bytes: 1KiB\n"
		     "  checkpoint_records: 0\n"
		     "  checkpoint_seconds: 86401\n"
		     "  key_file: nl.key\n"
		     "  colour: red\n",
		     (const char *const[]){ "t.yaml:3:15: error: invalid 'file_bytes'",
					    "t.yaml:4:23: error: invalid 'checkpoint_records'",
					    "t.yaml:5:23: error: invalid 'checkpoint_seconds'",
					    "t.yaml:6:13: error: 'key_file' must be an absolute path",
					    "t.yaml:7:3: error: unknown key 'colour'", NULL });
	expect_diags("version: 1\nnode_log:\n  file_bytes: 64MiB\n  max_bytes: 100MiB\n",
		     (const char *const[]){ "error: 'node_log.max_bytes' (104857600) must be at "
					    "least twice 'file_bytes' (67108864)", NULL });
	expect_diags("version: 1\nnode_log: yes\n",
		     (const char *const[]){ "t.yaml:2:11: error: ", NULL });
}
