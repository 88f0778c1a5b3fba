// SPDX-License-Identifier: GPL-2.0
/*
 * The node's configured sinks (config.h, `sinks:`; docs/daemon.md): opened
 * once when the daemon starts, shared by every run whose records they get,
 * closed when it stops.  A syslog sink's spool is <state_dir>/spool/<name>,
 * so records spooled while a collector was away survive a daemon restart.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runtime/daemon/config.h"
#include "runtime/daemon/internal.h"
#include "runtime/record.h"
#include "runtime/sink/nodelog.h"
#include "runtime/sink/sink.h"
#include "runtime/sink/syslog.h"

/* OCSF events, and the node log's own lines as they are (the anchor must get out). */
static int ocsf_or_node_line(const struct record *rec, struct strbuf *out)
{
	return syslog_encode_body(SYSLOG_FORMAT_OCSF, rec, out);
}

static int open_jsonl_file(const struct daemon_sink *cfg, struct sink **out, char *why,
			   size_t len)
{
	struct stat st;
	int fd, r;

	/* read too: the sink looks at the last byte (a line an earlier writer left cut) */
	fd = open(cfg->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
		  0600);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd < 0) {
		r = -errno;
		snprintf(why, len, "sink %s: cannot open %s: %s", cfg->name, cfg->path,
			 r == -EINVAL ? "not a regular file" : strerror(-r));
		return r;
	}
	r = cfg->ocsf ? sink_lines_open(fd, true, "ocsf", ocsf_or_node_line, out)
		      : sink_jsonl_open(fd, true, out);
	if (r < 0) {
		close(fd);
		snprintf(why, len, "sink %s: %s", cfg->name, strerror(-r));
	}
	return r;
}

/* One configured sink; `why` says what failed. */
static int open_one(const struct daemon *d, const struct daemon_sink *cfg, struct sink **out,
		    char *why, size_t len)
{
	static const enum syslog_transport transports[] = {
		[DAEMON_SINK_SYSLOG_TCP] = SYSLOG_TCP,
		[DAEMON_SINK_SYSLOG_TLS] = SYSLOG_TLS,
		[DAEMON_SINK_SYSLOG_UNIX] = SYSLOG_UNIX,
		[DAEMON_SINK_JSONL_UNIX] = SYSLOG_JSONL_UNIX,
	};
	char spool[PATH_MAX];
	struct syslog_options o;
	int r;

	if (cfg->type == DAEMON_SINK_JSONL_FILE)
		return open_jsonl_file(cfg, out, why, len);
	if ((size_t)snprintf(spool, sizeof(spool), "%s/spool", d->cfg.state_dir) >= sizeof(spool) ||
	    (mkdir(spool, 0700) < 0 && errno != EEXIST) ||
	    (size_t)snprintf(spool, sizeof(spool), "%s/spool/%s", d->cfg.state_dir, cfg->name) >=
		    sizeof(spool)) {
		r = errno ? -errno : -ENAMETOOLONG;
		snprintf(why, len, "sink %s: cannot make its spool directory in %s/spool: %s",
			 cfg->name, d->cfg.state_dir, strerror(-r));
		return r;
	}
	o = (struct syslog_options){
		.name = cfg->name,
		.transport = transports[cfg->type],
		.address = cfg->address,
		.path = cfg->path,
		.ca_file = cfg->ca_file,
		.cert_file = cfg->cert_file,
		.key_file = cfg->key_file,
		.server_name = cfg->server_name,
		.facility = cfg->facility,
		.format = cfg->ocsf ? SYSLOG_FORMAT_OCSF : SYSLOG_FORMAT_JSON,
		.spool_dir = spool,
		.spool_bytes = cfg->spool_bytes,
	};
	r = sink_syslog_open(&o, out);
	if (r < 0)
		snprintf(why, len, "sink %s (%s, line %u of the configuration): %s (said above)",
			 cfg->name, daemon_sink_type_name(cfg->type), cfg->line, strerror(-r));
	return r;
}

const char *daemon_node_log_key(const struct daemon *d, char *buf, size_t len)
{
	if (d->cfg.node_log.key_file)
		return d->cfg.node_log.key_file;
	snprintf(buf, len, "%s/" NODELOG_KEY_FILE, d->cfg.state_dir);
	return buf;
}

/* The node log in <state_dir>/audit, its checkpoints exported to the default sinks. */
static int open_node_log(struct daemon *d, char *why, size_t len)
{
	const struct daemon_node_log *cfg = &d->cfg.node_log;
	struct sink **export;
	char dir[PATH_MAX], key[PATH_MAX], host[256] = "", boot_id[64];
	struct nodelog_options o;
	struct utsname u;
	size_t n = 0;
	int r;

	if (!cfg->enabled)
		return 0;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/" DAEMON_NODE_LOG_DIR, d->cfg.state_dir) >=
		    sizeof(dir) ||
	    (size_t)snprintf(key, sizeof(key), "%s/" NODELOG_KEY_FILE, d->cfg.state_dir) >=
		    sizeof(key)) {
		snprintf(why, len, "node log: %s: %s", d->cfg.state_dir, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	export = calloc(d->cfg.sink_count + 1, sizeof(*export));
	if (!export) {
		snprintf(why, len, "node log: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (size_t i = 0; d->sinks && i < d->cfg.sink_count; i++)
		if (d->cfg.sinks[i].is_default)
			export[n++] = d->sinks[i];
	if (uname(&u) == 0)
		snprintf(host, sizeof(host), "%s", u.nodename);
	record_boot_id(boot_id, sizeof(boot_id));
	o = (struct nodelog_options){
		.dir = dir,
		.key_path = daemon_node_log_key(d, key, sizeof(key)),
		.host = host,
		.boot_id = boot_id,
		.file_bytes = cfg->file_bytes,
		.max_bytes = cfg->max_bytes,
		.checkpoint_records = cfg->checkpoint_records,
		.checkpoint_ms = cfg->checkpoint_ms,
		.export = export,
		.export_count = n,
	};
	r = sink_nodelog_open(&o, &d->node_log, why, len);
	free(export);	/* the log keeps a copy */
	if (r == 0 && n == 0)
		daemon_log(d, "warning: the node log's checkpoints go to no sink (none is "
			      "default: true): nothing off this node can tell a log whose tail was "
			      "cut (docs/audit.md, \"The node log\")");
	return r;
}

int daemon_sinks_open(struct daemon *d, char *why, size_t len)
{
	int r;

	if (d->cfg.sink_count) {
		d->sinks = calloc(d->cfg.sink_count, sizeof(*d->sinks));
		if (!d->sinks) {
			snprintf(why, len, "opening the sinks: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < d->cfg.sink_count; i++) {
		r = open_one(d, &d->cfg.sinks[i], &d->sinks[i], why, len);
		if (r < 0) {
			daemon_sinks_close(d);
			return r;
		}
	}
	r = open_node_log(d, why, len);
	if (r < 0)
		daemon_sinks_close(d);
	return r;
}

void daemon_sinks_close(struct daemon *d)
{
	uint64_t lost = d->node_log ? sink_nodelog_lost(d->node_log) : 0;
	int r = sink_close(d->node_log);

	if (r || lost)
		fprintf(stderr, "tether daemon: the node log: %s; %llu records could not be written "
			"(node_log_dropped lines say which)\n",
			r ? strerror(-r) : "closed", (unsigned long long)lost);
	d->node_log = NULL;
	for (size_t i = 0; d->sinks && i < d->cfg.sink_count; i++)
		sink_close(d->sinks[i]);
	free(d->sinks);
	d->sinks = NULL;
}

int daemon_sinks_for_run(const struct daemon *d, const char *const *names, size_t count,
			 struct sink ***out, size_t *out_count)
{
	struct sink **list;
	size_t n = 0;

	*out = NULL;
	*out_count = 0;
	if (!d->sinks && count)
		return -ENOENT;
	list = calloc(d->cfg.sink_count + 2, sizeof(*list));
	if (!list)
		return -ENOMEM;
	if (d->node_log)
		list[n++] = d->node_log;
	/* in configuration order, each once: a default one named again is not doubled */
	for (size_t i = 0; d->sinks && i < d->cfg.sink_count; i++) {
		bool named = d->cfg.sinks[i].is_default;

		for (size_t j = 0; j < count && !named; j++)
			named = strcmp(names[j], d->cfg.sinks[i].name) == 0;
		if (named)
			list[n++] = d->sinks[i];
	}
	*out = list;
	*out_count = n;
	return 0;
}
