// SPDX-License-Identifier: GPL-2.0
/*
 * tether audit verify: checks node log files (docs/audit.md, "The node
 * log") and names every line that was edited, removed, reordered or cut off
 * the end (runtime/sink/nodelog_verify.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "runtime/sink/nodelog.h"
#include "runtime/tether.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tether audit verify [--key FILE | --public-key FILE] [--anchor FILE] [-q]\n"
		"                           LOG...\n"
		"\n"
		"Checks node log files (the daemon's STATE_DIR/audit/node.log and its rotated\n"
		"node.log.N, in any order): every line's MAC chains it to the line before, and\n"
		"every checkpoint's signature.  Each line that was edited, removed, reordered\n"
		"or cut short is named as FILE:LINE: error: ...\n"
		"\n"
		"  --key FILE         the node log key (default " NODELOG_DEFAULT_KEY_PATH ")\n"
		"  --public-key FILE  only the public key (STATE_DIR/audit/node-log.pub): the\n"
		"                     checkpoints' signatures are checked, the MACs are not\n"
		"  --anchor FILE      a file whose last line is a checkpoint exported off the\n"
		"                     node: the log must hold it, and all it covers\n"
		"  -q, --quiet        problems only, no summary\n"
		"\n"
		"Exit status: 0 verified;  1 tampering found;  2 usage error, or a log or key\n"
		"that cannot be read.\n");
}

static int audit_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "public-key", required_argument, NULL, 'p' },
		{ "anchor", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct nodelog_verify_options o = { 0 };
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			o.key_path = optarg;
			break;
		case 'p':
			o.public_key_path = optarg;
			break;
		case 'a':
			o.anchor_path = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return TETHER_EXIT_OK;
		default:
			usage(stderr);
			return TETHER_EXIT_USAGE;
		}
	}
	if (o.key_path && o.public_key_path) {
		fprintf(stderr, "tether audit verify: --key and --public-key exclude each other\n");
		return TETHER_EXIT_USAGE;
	}
	if (optind == argc) {
		usage(stderr);
		return TETHER_EXIT_USAGE;
	}
	r = nodelog_verify(&o, (const char *const *)argv + optind, (size_t)(argc - optind), stdout,
			   stderr);
	if (r < 0)
		return TETHER_EXIT_USAGE;
	return r ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
}

int cmd_audit(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return audit_verify(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return TETHER_EXIT_OK;
	}
	usage(stderr);
	return TETHER_EXIT_USAGE;
}
