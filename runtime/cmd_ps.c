// SPDX-License-Identifier: GPL-2.0
/*
 * tether ps, inspect and logs: the daemon's runs, from its API; with no
 * daemon up, from its journal (runtime/daemon/journal.h) read directly.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/daemon/client.h"
#include "runtime/daemon/journal.h"
#include "runtime/runs.h"
#include "runtime/tether.h"

#define STATE_DIR_DEFAULT "/var/lib/tether"

struct common_opts {
	const char *state_dir;
	const char *tenant;
	const char *state;
	bool json, follow;
	uint64_t seq;
};

static int parse(int argc, char **argv, const char *verb, struct common_opts *o, int *first)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 'd' },
		{ "tenant", required_argument, NULL, 't' },
		{ "state", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "follow", no_argument, NULL, 'f' },
		{ "seq", required_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	o->state_dir = STATE_DIR_DEFAULT;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+d:t:s:jfq:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->state_dir = optarg;
			break;
		case 't':
			o->tenant = optarg;
			break;
		case 's':
			o->state = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'f':
			o->follow = true;
			break;
		case 'q':
			o->seq = strtoull(optarg, NULL, 10);
			break;
		case 'h':
			printf("usage: tether ps [--state running|ended] [--tenant T] [--json]\n"
			       "       tether inspect RUN\n"
			       "       tether logs [-f] [--seq N] RUN\n"
			       "Through the daemon on $TETHER_SOCKET (default " DAEMON_SOCKET_PATH
			       "); with no daemon up,\nfrom its journal in --state-dir (default "
			       STATE_DIR_DEFAULT ").\n");
			exit(TETHER_EXIT_OK);
		default:
			return -EINVAL;
		}
	}
	*first = optind;
	(void)verb;
	return 0;
}

/* Every run's record from the journal (the daemon is down): a JSON array. */
static int journal_runs(const char *state_dir, json_t **out)
{
	char path[4096];
	DIR *dir;
	struct dirent *de;
	json_t *arr = json_array();

	snprintf(path, sizeof(path), "%s/runs", state_dir);
	dir = opendir(path);
	if (!dir) {
		json_decref(arr);
		return -errno;
	}
	while ((de = readdir(dir))) {
		json_t *rec;
		int fd;

		if (!run_id_valid(de->d_name))
			continue;
		fd = openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (journal_run_record(fd, &rec) == 0)
			json_array_append_new(arr, rec);
		close(fd);
	}
	closedir(dir);
	*out = arr;
	return 0;
}

/* GET target, as JSON; *from_journal when the daemon did not answer. */
static int get_json(const char *target, json_t **out, int *status)
{
	char *body = NULL;
	int r = client_request(client_socket_path(), "GET", target, NULL, 0, status, &body, NULL);

	if (r)
		return r;
	*out = json_loads(body, 0, NULL);
	free(body);
	return *out ? 0 : -EPROTO;
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "-";
}

int cmd_ps(int argc, char **argv)
{
	struct common_opts o = { 0 };
	json_t *reply = NULL, *runs = NULL, *rec;
	char target[512];
	int first, status = 200, r;
	size_t i;

	if (parse(argc, argv, "ps", &o, &first) || first != argc)
		return TETHER_EXIT_USAGE;
	snprintf(target, sizeof(target), "/v1/runs%s%s%s%s%s", o.state || o.tenant ? "?" : "",
		 o.state ? "state=" : "", o.state ? o.state : "", o.tenant ? "&tenant=" : "",
		 o.tenant ? o.tenant : "");
	r = get_json(target, &reply, &status);
	if (r == -ECONNREFUSED || r == -ENOENT) {
		if (journal_runs(o.state_dir, &runs)) {
			fprintf(stderr, "tether ps: no daemon answers on %s and %s/runs cannot be "
					"read\n", client_socket_path(), o.state_dir);
			return TETHER_EXIT_NO_DAEMON;
		}
		reply = json_pack("{s:o}", "runs", runs);
	} else if (r || status != 200) {
		fprintf(stderr, "tether ps: the daemon: %s\n",
			r ? strerror(-r) : str(reply, "error"));
		json_decref(reply);
		return TETHER_EXIT_RUN_ERROR;
	}
	runs = json_object_get(reply, "runs");
	if (o.json) {
		json_dumpf(runs, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		printf("%-24s %-8s %-12s %-16s %-5s %s\n", "RUN", "STATE", "TENANT", "REASON", "EXIT",
		       "COMMAND");
		json_array_foreach(runs, i, rec) {
			json_t *st = json_object_get(rec, "exit_status");
			json_t *argv0 = json_array_get(json_object_get(rec, "argv"), 0);
			char exit_s[16] = "-";

			if (o.state && strcmp(o.state, str(rec, "state")))
				continue;
			if (json_is_integer(st))
				snprintf(exit_s, sizeof(exit_s), "%lld", (long long)json_integer_value(st));
			printf("%-24s %-8s %-12s %-16s %-5s %s\n", str(rec, "id"), str(rec, "state"),
			       str(rec, "tenant"), str(rec, "reason"), exit_s,
			       json_string_value(argv0) ?: "-");
		}
	}
	json_decref(reply);
	return TETHER_EXIT_OK;
}

int cmd_inspect(int argc, char **argv)
{
	struct common_opts o = { 0 };
	json_t *rec = NULL;
	char target[512];
	int first, status = 200, r;

	if (parse(argc, argv, "inspect", &o, &first) || first + 1 != argc) {
		fprintf(stderr, "usage: tether inspect RUN\n");
		return TETHER_EXIT_USAGE;
	}
	if (!run_id_valid(argv[first])) {
		fprintf(stderr, "tether inspect: invalid run id '%s'\n", argv[first]);
		return TETHER_EXIT_USAGE;
	}
	snprintf(target, sizeof(target), "/v1/runs/%s", argv[first]);
	r = get_json(target, &rec, &status);
	if (r == -ECONNREFUSED || r == -ENOENT) {
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "%s/runs/%s", o.state_dir, argv[first]);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || journal_run_record(fd, &rec)) {
			if (fd >= 0)
				close(fd);
			fprintf(stderr, "tether inspect: no run '%s' (no daemon answers on %s; "
					"%s/runs holds no such journal)\n", argv[first],
				client_socket_path(), o.state_dir);
			return TETHER_EXIT_KILL_NO_RUN;
		}
		close(fd);
	} else if (r || status != 200) {
		fprintf(stderr, "tether inspect: %s\n", r ? strerror(-r) : str(rec, "error"));
		json_decref(rec);
		return status == 404 ? TETHER_EXIT_KILL_NO_RUN : TETHER_EXIT_RUN_ERROR;
	}
	json_dumpf(rec, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(rec);
	return TETHER_EXIT_OK;
}

static int write_out(void *ctx, const char *data, size_t len)
{
	return fwrite(data, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : -EIO;
}

int cmd_logs(int argc, char **argv)
{
	struct common_opts o = { 0 };
	char target[512];
	int first, status = 0, r;

	if (parse(argc, argv, "logs", &o, &first) || first + 1 != argc) {
		fprintf(stderr, "usage: tether logs [-f] [--seq N] RUN\n");
		return TETHER_EXIT_USAGE;
	}
	if (!run_id_valid(argv[first])) {
		fprintf(stderr, "tether logs: invalid run id '%s'\n", argv[first]);
		return TETHER_EXIT_USAGE;
	}
	snprintf(target, sizeof(target), "/v1/runs/%s/records?seq=%llu&follow=%s", argv[first],
		 (unsigned long long)o.seq, o.follow ? "true" : "false");
	r = client_stream(client_socket_path(), target, write_out, NULL, &status, NULL);
	if (r == -ECONNREFUSED || r == -ENOENT) {
		char path[4096];
		FILE *f;
		char *line = NULL;
		size_t cap = 0;

		snprintf(path, sizeof(path), "%s/runs/%s/" JOURNAL_RECORDS_FILE, o.state_dir,
			 argv[first]);
		f = fopen(path, "re");
		if (!f) {
			fprintf(stderr, "tether logs: no daemon answers on %s and %s: %s\n",
				client_socket_path(), path, strerror(errno));
			return TETHER_EXIT_KILL_NO_RUN;
		}
		while (getline(&line, &cap, f) > 0) {
			json_t *rec = json_loads(line, 0, NULL);
			json_int_t seq = json_integer_value(json_object_get(rec, "seq"));

			if (!o.seq || (uint64_t)seq >= o.seq)
				fputs(line, stdout);
			json_decref(rec);
		}
		free(line);
		fclose(f);
		return TETHER_EXIT_OK;
	}
	if (r) {
		fprintf(stderr, "tether logs: %s\n", strerror(-r));
		return TETHER_EXIT_RUN_ERROR;
	}
	if (status != 200) {
		fprintf(stderr, "tether logs: the daemon answered %d\n", status);
		return status == 404 ? TETHER_EXIT_KILL_NO_RUN : TETHER_EXIT_RUN_ERROR;
	}
	return TETHER_EXIT_OK;
}
