// SPDX-License-Identifier: GPL-2.0
/*
 * testdns [-d] ADDR PORT [LOG] NAME=ANSWER[,ANSWER...][/TTL]...: a tiny
 * authoritative DNS server over UDP and TCP on ADDR:PORT, for the VM tests.
 *
 * ANSWER is one of
 *   an IPv4 literal       an A record
 *   an IPv6 literal       an AAAA record
 *   cname:OTHER           a CNAME to OTHER, followed through the table
 *   rcode:NAME            answer with that rcode (SERVFAIL, REFUSED, ...)
 *   drop                  never answer (a client times out)
 * TTL defaults to 300.  Names match case-insensitively, with or without
 * the final dot.  A name that is not in the table gets NXDOMAIN; a name
 * without records of the asked type gets NOERROR with no answer (NODATA).
 * Each query appends "query NAME TYPE from=PEER proto=udp|tcp" to LOG.
 *
 * -d: daemon mode; the parent returns once both sockets are bound and
 * prints the server's pid.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_ENTRIES 64
#define MAX_ANSWERS 8
#define IDLE_SEC 10

enum answer_kind { ANSWER_A, ANSWER_AAAA, ANSWER_CNAME };

struct answer {
	enum answer_kind kind;
	unsigned char addr[16];
	char target[256];
};

struct entry {
	char name[256];
	unsigned int ttl;
	int rcode;	/* >0: answer with this rcode only */
	int drop;	/* never answer */
	int count;
	struct answer answers[MAX_ANSWERS];
};

static struct entry table[MAX_ENTRIES];
static int entries;
static const char *log_path;

/* Lower case, no final dot. */
static void normalize(char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < n; i++)
		name[i] = (char)tolower((unsigned char)name[i]);
	if (n > 1 && name[n - 1] == '.')
		name[n - 1] = 0;
}

static int rcode_of(const char *name)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP",	"REFUSED" };

	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcasecmp(name, names[i]))
			return i;
	return -1;
}

/* NAME=ANSWER[,ANSWER...][/TTL] */
static int parse_entry(const char *spec)
{
	char buf[1024], *eq, *slash, *tok, *save;
	struct entry *e;

	if (entries == MAX_ENTRIES || strlen(spec) >= sizeof(buf))
		return -1;
	e = &table[entries];
	memset(e, 0, sizeof(*e));
	strcpy(buf, spec);
	eq = strchr(buf, '=');
	if (!eq || eq == buf || (size_t)(eq - buf) >= sizeof(e->name))
		return -1;
	*eq = 0;
	strcpy(e->name, buf);
	normalize(e->name);
	e->ttl = 300;
	slash = strrchr(eq + 1, '/');
	if (slash) {
		char *end;

		*slash = 0;
		e->ttl = (unsigned int)strtoul(slash + 1, &end, 10);
		if (*end || !slash[1])
			return -1;
	}
	for (tok = strtok_r(eq + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct answer *a = &e->answers[e->count];

		if (!strcmp(tok, "drop")) {
			e->drop = 1;
			continue;
		}
		if (!strncmp(tok, "rcode:", 6)) {
			e->rcode = rcode_of(tok + 6);
			if (e->rcode < 0)
				return -1;
			continue;
		}
		if (e->count == MAX_ANSWERS)
			return -1;
		if (!strncmp(tok, "cname:", 6) && tok[6] && strlen(tok + 6) < sizeof(a->target)) {
			a->kind = ANSWER_CNAME;
			strcpy(a->target, tok + 6);
			normalize(a->target);
		} else if (inet_pton(AF_INET, tok, a->addr) == 1) {
			a->kind = ANSWER_A;
		} else if (inet_pton(AF_INET6, tok, a->addr) == 1) {
			a->kind = ANSWER_AAAA;
		} else {
			return -1;
		}
		e->count++;
	}
	entries++;
	return 0;
}

static struct entry *lookup(const char *name)
{
	for (int i = 0; i < entries; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

static int parse_addr(const char *text, const char *port, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char *end;
	long p = strtol(port, &end, 10);

	if (*end || p <= 0 || p > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((unsigned short)p);
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((unsigned short)p);
		*len = sizeof(*sin6);
	} else {
		return -1;
	}
	return 0;
}

static const char *fmt_addr(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char text[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
		snprintf(buf, size, "%s:%u", text, ntohs(sin->sin_port));
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text));
		snprintf(buf, size, "[%s]:%u", text, ntohs(sin6->sin6_port));
	}
	return buf;
}

static const char *type_name(unsigned int type, char *buf, size_t size)
{
	switch (type) {
	case 1: return "A";
	case 5: return "CNAME";
	case 28: return "AAAA";
	case 255: return "ANY";
	default: snprintf(buf, size, "TYPE%u", type); return buf;
	}
}

static void log_query(const char *name, unsigned int type, const struct sockaddr_storage *peer,
		      const char *proto)
{
	char line[512], from[64], tbuf[16];
	int fd, n;

	if (!log_path)
		return;
	n = snprintf(line, sizeof(line), "query %s %s from=%s proto=%s\n", name,
		     type_name(type, tbuf, sizeof(tbuf)), fmt_addr(peer, from, sizeof(from)), proto);
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		perror("testdns: log");
	close(fd);
}

/* Writes NAME as labels at out; returns the length or -1. */
static int encode_name(const char *name, unsigned char *out, size_t size)
{
	size_t off = 0;

	while (*name) {
		size_t len = strcspn(name, ".");

		if (len == 0 || len > 63 || off + len + 2 > size)
			return -1;
		out[off++] = (unsigned char)len;
		memcpy(out + off, name, len);
		off += len;
		name += len;
		if (*name == '.')
			name++;
	}
	if (off + 1 > size)
		return -1;
	out[off++] = 0;
	return (int)off;
}

struct builder {
	unsigned char *buf;
	size_t len, size;
	int failed;
};

static void put(struct builder *b, const void *data, size_t n)
{
	if (b->failed || b->len + n > b->size) {
		b->failed = 1;
		return;
	}
	memcpy(b->buf + b->len, data, n);
	b->len += n;
}

/*
 * A resource record: the owner is the question's name (a pointer to offset
 * 12) when `owner` is NULL, else written out in full.
 */
static void put_rr(struct builder *b, const char *owner, unsigned int type, unsigned int ttl,
		   const void *rdata, size_t rdlen)
{
	unsigned char fixed[10] = { (unsigned char)(type >> 8), (unsigned char)type, 0, 1,
				    (unsigned char)(ttl >> 24), (unsigned char)(ttl >> 16),
				    (unsigned char)(ttl >> 8), (unsigned char)ttl,
				    (unsigned char)(rdlen >> 8), (unsigned char)rdlen };
	unsigned char name[256];

	if (owner) {
		int n = encode_name(owner, name, sizeof(name));

		if (n < 0) {
			b->failed = 1;
			return;
		}
		put(b, name, (size_t)n);
	} else {
		put(b, "\xc0\x0c", 2);
	}
	put(b, fixed, sizeof(fixed));
	put(b, rdata, rdlen);
}

/*
 * Answers one query.  Returns the response's length, 0 to send nothing
 * (a "drop" name, or a message that is not a query).
 */
static size_t answer(const unsigned char *q, size_t qlen, unsigned char *out, size_t size,
		     const struct sockaddr_storage *peer, const char *proto, int udp)
{
	struct builder b = { out, 0, size, 0 };
	char name[256] = "", cur[256];
	size_t pos = 12, o = 0;
	unsigned int qtype = 0, ancount = 0;
	int rcode = 0, formerr = 0;
	const struct entry *e;

	if (qlen < 12 || (q[2] & 0x80))
		return 0;
	if ((q[4] << 8 | q[5]) != 1) {
		formerr = 1;
	} else {
		/* the question: uncompressed labels, then type and class */
		while (pos < qlen && q[pos]) {
			unsigned char l = q[pos++];

			if ((l & 0xc0) || pos + l > qlen || o + l + 1 >= sizeof(name)) {
				formerr = 1;
				break;
			}
			memcpy(name + o, q + pos, l);
			o += l;
			name[o++] = '.';
			pos += l;
		}
		if (!formerr && pos + 5 <= qlen) {
			pos++;
			qtype = (unsigned)q[pos] << 8 | q[pos + 1];
			pos += 4;
		} else {
			formerr = 1;
		}
		name[o ? o - 1 : 0] = 0;
		normalize(name);
	}
	log_query(formerr ? "-" : name, qtype, peer, proto);

	/* header: id, QR AA + the opcode and RD of the query, RA */
	put(&b, q, 2);
	put(&b, (unsigned char[]){ (unsigned char)(0x84 | (q[2] & 0x79)), 0x80 }, 2);
	put(&b, (unsigned char[]){ 0, formerr ? 0 : 1, 0, 0, 0, 0, 0, 0 }, 8);
	if (formerr || (q[2] & 0x78)) {
		out[3] |= formerr ? 1 : 4;	/* FORMERR, or NOTIMP for another opcode */
		out[5] = 0;	/* no question echoed */
		return b.len;
	}
	put(&b, q + 12, pos - 12);

	strcpy(cur, name);
	for (int hops = 0; hops < 8; hops++) {
		e = lookup(cur);
		if (!e) {
			if (hops == 0)
				rcode = 3;	/* NXDOMAIN */
			break;
		}
		if (hops == 0 && e->drop)
			return 0;
		if (e->rcode) {
			if (hops == 0)
				rcode = e->rcode;
			break;
		}
		if (e->count && e->answers[0].kind == ANSWER_CNAME) {
			unsigned char target[256];
			int n = encode_name(e->answers[0].target, target, sizeof(target));

			if (n < 0)
				break;
			put_rr(&b, hops ? cur : NULL, 5, e->ttl, target, (size_t)n);
			ancount++;
			strcpy(cur, e->answers[0].target);
			if (qtype == 5)
				break;
			continue;
		}
		for (int i = 0; i < e->count; i++) {
			const struct answer *a = &e->answers[i];

			if (a->kind == ANSWER_A && (qtype == 1 || qtype == 255)) {
				put_rr(&b, hops ? cur : NULL, 1, e->ttl, a->addr, 4);
				ancount++;
			} else if (a->kind == ANSWER_AAAA && (qtype == 28 || qtype == 255)) {
				put_rr(&b, hops ? cur : NULL, 28, e->ttl, a->addr, 16);
				ancount++;
			}
		}
		break;
	}
	if (b.failed || (udp && b.len > 512)) {
		/* too big for a plain UDP answer: truncated, the client retries over TCP */
		b.failed = 0;
		b.len = 12 + (pos - 12);
		out[2] |= 0x02;
		ancount = 0;
	}
	out[3] = (unsigned char)((out[3] & 0xf0) | rcode);
	out[6] = (unsigned char)(ancount >> 8);
	out[7] = (unsigned char)ancount;
	return b.len;
}

static void serve_udp(int fd)
{
	unsigned char q[4096], r[4096];
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	ssize_t n = recvfrom(fd, q, sizeof(q), MSG_DONTWAIT, (struct sockaddr *)&peer, &plen);
	size_t len;

	if (n < 0)
		return;
	len = answer(q, (size_t)n, r, sizeof(r), &peer, "udp", 1);
	if (len)
		sendto(fd, r, len, 0, (struct sockaddr *)&peer, plen);
}

static int read_full(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Queries on one TCP connection, each with its two-byte length prefix. */
static void serve_tcp(int fd, const struct sockaddr_storage *peer)
{
	struct timeval tv = { .tv_sec = IDLE_SEC };
	unsigned char q[65536], r[65536 + 2];

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (;;) {
		unsigned char pfx[2];
		size_t qlen, len;

		if (read_full(fd, pfx, 2) < 0)
			break;
		qlen = (size_t)pfx[0] << 8 | pfx[1];
		if (read_full(fd, q, qlen) < 0)
			break;
		len = answer(q, qlen, r + 2, sizeof(r) - 2, peer, "tcp", 0);
		if (!len)
			continue;
		r[0] = (unsigned char)(len >> 8);
		r[1] = (unsigned char)len;
		if (send(fd, r, len + 2, MSG_NOSIGNAL) != (ssize_t)(len + 2))
			break;
	}
	close(fd);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int daemonize = 0, one = 1, tcp, udp, ready[2], first;
	char ok = 1;

	if (argc > 1 && !strcmp(argv[1], "-d")) {
		daemonize = 1;
		argv++;
		argc--;
	}
	if (argc < 3 || parse_addr(argv[1], argv[2], &ss, &len) < 0) {
		fprintf(stderr, "usage: testdns [-d] ADDR PORT [LOG] NAME=ANSWER[,ANSWER...][/TTL]...\n");
		return 2;
	}
	first = 3;
	if (argc > 3 && !strchr(argv[3], '=')) {
		log_path = argv[3];
		first = 4;
	}
	for (int i = first; i < argc; i++) {
		if (parse_entry(argv[i]) < 0) {
			fprintf(stderr, "testdns: bad entry %s\n", argv[i]);
			return 2;
		}
	}
	signal(SIGCHLD, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);

	tcp = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	udp = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tcp < 0 || udp < 0) {
		perror("testdns: socket");
		return 1;
	}
	setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6) {
		setsockopt(tcp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(udp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (bind(tcp, (struct sockaddr *)&ss, len) < 0 || listen(tcp, 64) < 0 ||
	    bind(udp, (struct sockaddr *)&ss, len) < 0) {
		fprintf(stderr, "testdns: bind %s %s: %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}

	if (daemonize) {
		pid_t pid;

		if (pipe(ready) < 0)
			return 1;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid > 0) {
			close(ready[1]);
			if (read(ready[0], &ok, 1) != 1)
				ok = 0;
			printf("%d\n", (int)pid);
			return ok ? 0 : 1;
		}
		close(ready[0]);
		setsid();
		int null = open("/dev/null", O_RDWR);

		/*
		 * No inherited stdio: a suite run as "sh suite.sh | tail" must
		 * see EOF although this server outlives it.
		 */
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		if (write(ready[1], &ok, 1) != 1)
			return 1;
		close(ready[1]);
	}

	for (;;) {
		struct pollfd p[2] = { { .fd = tcp, .events = POLLIN }, { .fd = udp, .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("testdns: poll");
			return 1;
		}
		if (p[1].revents & POLLIN)
			serve_udp(udp);
		if (p[0].revents & POLLIN) {
			struct sockaddr_storage peer;
			socklen_t plen = sizeof(peer);
			int c = accept4(tcp, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
			pid_t pid;

			if (c < 0)
				continue;
			pid = fork();
			if (pid == 0) {
				close(tcp);
				close(udp);
				serve_tcp(c, &peer);
				_exit(0);
			}
			close(c);
		}
	}
}
