// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "common/version.h"
#include "runtime/tether.h"


bool tether_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!tether_verbose && level != LIBBPF_WARN)
		return 0;
	if (!tether_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int cmd_version(int argc, char **argv)
{
	printf("tether %s\n", TETHER_VERSION);
	return TETHER_EXIT_OK;
}

static int cmd_help(int argc, char **argv);

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} cmds[] = {
	{ "run", cmd_run, "run a command confined by an envelope" },
	{ "check", cmd_check, "validate an envelope and print its policy digest" },
	{ "compile", cmd_compile, "compile an envelope into a binary policy" },
	{ "explain", cmd_explain, "summarise what a run under an envelope may do" },
	{ "diff", cmd_diff, "list the authority one envelope adds or removes" },
	{ "daemon", cmd_daemon, "the node agent: runs started through its API, journaled" },
	{ "ps", cmd_ps, "list the daemon's runs" },
	{ "inspect", cmd_inspect, "print one run's record (JSON)" },
	{ "logs", cmd_logs, "print a run's audit records (-f: follow)" },
	{ "kill", cmd_kill, "cancel a live run: its processes are killed and its cgroup removed" },
	{ "audit", cmd_audit, "verify the node log: name each record edited, removed or cut off" },
	{ "doctor", cmd_doctor, "tell whether this host can confine runs, and how to fix it" },
	{ "version", cmd_version, "print the version" },
	{ "help", cmd_help, "show this help" },
};

static int cmd_help(int argc, char **argv)
{
	printf("usage: tether [-v] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		printf("  %-8s %s\n", cmds[i].name, cmds[i].summary);
	printf("\n  -v, --verbose  libbpf's log; with run, how long each step of setup and teardown "
	       "took\n");
	printf("\n'tether COMMAND --help' describes each command.\n");
	return TETHER_EXIT_OK;
}

int main(int argc, char **argv)
{
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
			tether_verbose = true;
			i++;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			return cmd_help(0, NULL);
		} else if (strcmp(argv[i], "--version") == 0) {
			return cmd_version(0, NULL);
		} else {
			fprintf(stderr, "tether: unknown option '%s' (see tether --help)\n", argv[i]);
			return TETHER_EXIT_USAGE;
		}
	}
	libbpf_set_print(libbpf_print);
	if (i >= argc) {
		cmd_help(0, NULL);
		return TETHER_EXIT_USAGE;
	}
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
		if (strcmp(argv[i], cmds[c].name) == 0)
			return cmds[c].fn(argc - i, argv + i);
	fprintf(stderr, "tether: unknown command '%s' (see tether --help)\n", argv[i]);
	return TETHER_EXIT_USAGE;
}
