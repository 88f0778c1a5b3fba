// SPDX-License-Identifier: GPL-2.0
/* tether daemon: the node agent (runtime/daemon/daemon.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/daemon/daemon.h"
#include "runtime/tether.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tether daemon [--config FILE] [--socket PATH] [--state-dir DIR]\n"
		"\n"
		"The node agent: keeps the BPF programs pinned, serves the API of docs/api.yaml\n"
		"(HTTP/1.1 and JSON) on a unix socket (default /run/tether/tether.sock, mode 0660),\n"
		"runs each run it is asked for and journals it under the state directory (default\n"
		"/var/lib/tether).  --config (default " DAEMON_CONFIG_PATH ") says who may call\n"
		"and for which tenants (docs/daemon.md); without the file only root may.  Runs in\n"
		"the foreground and logs to stderr; SIGTERM, SIGINT or SIGHUP stop it.\n"
		"\n"
		"Exit status: 0 stopped by a signal; 1 the configuration is invalid; 4 another\n"
		"daemon holds the state directory; 120 not root; 123 setup failed.\n");
}

int cmd_daemon(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct daemon_options opts = { 0 };
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:s:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			opts.config_path = optarg;
			break;
		case 's':
			opts.socket_path = optarg;
			break;
		case 'd':
			opts.state_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return TETHER_EXIT_OK;
		default:
			usage(stderr);
			return TETHER_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tether daemon: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return TETHER_EXIT_USAGE;
	}
	return daemon_main(&opts);
}
