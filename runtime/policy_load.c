// SPDX-License-Identifier: GPL-2.0
/* What the policy verbs (and tether run) share: loading a policy, printing what is wrong with it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policyc/policy.h"
#include "runtime/tether.h"

/*
 * Standard input, read once and kept: a verb that needs the envelope's
 * bytes twice (check --contract parses the envelope again) gets the same
 * bytes.  At most TP_POLICY_MAX_BYTES, the limit of a file.
 */
static struct {
	bool read;
	int error;		/* 0, or the negative errno reading failed with */
	char *data;
	size_t len;
} stdin_input;

bool policy_path_is_stdin(const char *path)
{
	return path && strcmp(path, "-") == 0;
}

const char *policy_input_name(const char *path)
{
	return policy_path_is_stdin(path) ? POLICY_STDIN_NAME : path;
}

int policy_read_stdin(const char **data, size_t *len, struct tp_diags *diags)
{
	size_t capacity = 0;
	int r;

	if (!stdin_input.read) {
		stdin_input.read = true;
		for (;;) {
			ssize_t n;

			if (stdin_input.len == capacity) {
				size_t grown = capacity ? capacity * 2 : 65536;
				char *p;

				/* One byte over the limit is enough to know it is over. */
				if (capacity > TP_POLICY_MAX_BYTES) {
					stdin_input.error = -EFBIG;
					break;
				}
				if (grown > (size_t)TP_POLICY_MAX_BYTES + 1)
					grown = (size_t)TP_POLICY_MAX_BYTES + 1;
				p = realloc(stdin_input.data, grown + 1);
				if (!p) {
					stdin_input.error = -ENOMEM;
					break;
				}
				stdin_input.data = p;
				capacity = grown;
			}
			n = read(STDIN_FILENO, stdin_input.data + stdin_input.len,
				 capacity - stdin_input.len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				stdin_input.error = -errno;
				break;
			}
			if (n == 0)
				break;
			stdin_input.len += (size_t)n;
		}
		if (!stdin_input.error && stdin_input.len > TP_POLICY_MAX_BYTES)
			stdin_input.error = -EFBIG;
		if (stdin_input.data)
			stdin_input.data[stdin_input.len] = '\0';
	}
	if (stdin_input.error == -EFBIG)
		r = tp_diags_add(diags, POLICY_STDIN_NAME, 0, 0,
				 "the input is over the limit of %u bytes", TP_POLICY_MAX_BYTES);
	else if (stdin_input.error)
		r = tp_diags_add(diags, POLICY_STDIN_NAME, 0, 0, "cannot read: %s",
				 strerror(-stdin_input.error));
	else
		r = 0;
	if (r < 0)
		return r;
	if (stdin_input.error)
		return stdin_input.error;
	*data = stdin_input.data ? stdin_input.data : "";
	*len = stdin_input.len;
	return 0;
}

/* Prints every diagnostic (or the bare error) to stderr. */
void policy_print_diags(const struct tp_diags *diags, const char *path, int error)
{
	char *text = NULL;

	if (diags->count && tp_diags_format(diags, &text) == 0)
		fputs(text, stderr);
	else
		fprintf(stderr, "%s: error: %s\n", policy_input_name(path), strerror(-error));
	free(text);
}

int policy_load_diags(const char *path, struct tp_policy **out, struct tp_diags *diags)
{
	const char *data;
	size_t len;
	int r;

	if (!policy_path_is_stdin(path))
		return tp_policy_load_file(path, out, diags);
	r = policy_read_stdin(&data, &len, diags);
	return r < 0 ? r : tp_policy_load(POLICY_STDIN_NAME, data, len, out, diags);
}

int policy_load_bound(const char *path, const struct tp_run_binding *bind, struct tp_policy **out,
		      uint8_t envelope_digest[32])
{
	struct tp_diags diags = { 0 };
	const char *data;
	size_t len = 0;
	int r;

	if (!policy_path_is_stdin(path)) {
		r = tp_policy_load_file_bound(path, bind, out, envelope_digest, &diags);
	} else {
		r = policy_read_stdin(&data, &len, &diags);
		if (r >= 0)
			r = tp_policy_load_bound(POLICY_STDIN_NAME, data, len, bind, out,
						 envelope_digest, &diags);
	}
	if (r < 0)
		policy_print_diags(&diags, path, r);
	tp_diags_free(&diags);
	return r;
}

int policy_load(const char *path, struct tp_policy **out)
{
	struct tp_diags diags = { 0 };
	int r = policy_load_diags(path, out, &diags);

	if (r < 0)
		policy_print_diags(&diags, path, r);
	tp_diags_free(&diags);
	return r;
}

int policy_print_digest(const struct tp_policy *policy, FILE *out)
{
	char text[TP_DIGEST_TEXT_MAX];
	uint8_t digest[32];
	int r = tp_policy_digest(policy, digest);

	if (r < 0)
		return r;
	tp_digest_text(digest, text);
	fprintf(out, "policy %s\n", text);
	return 0;
}

/* Whether `path` (or standard input) starts with the compiled policy's magic. */
bool policy_is_compiled(const char *path)
{
	struct tp_diags diags = { 0 };
	const char *data;
	char magic[4];
	size_t len;
	FILE *f;
	bool yes;

	if (policy_path_is_stdin(path)) {
		yes = policy_read_stdin(&data, &len, &diags) == 0 && len >= sizeof(magic) &&
		      memcmp(data, TP_FORMAT_MAGIC, sizeof(magic)) == 0;
		tp_diags_free(&diags);
		return yes;
	}
	f = fopen(path, "re");
	if (!f)
		return false;
	yes = fread(magic, 1, sizeof(magic), f) == sizeof(magic) &&
	      memcmp(magic, TP_FORMAT_MAGIC, sizeof(magic)) == 0;
	fclose(f);
	return yes;
}

int policy_parse_contract(const char *path, struct tp_contract **out, struct tp_diags *diags)
{
	const char *data;
	size_t len;
	int r;

	if (!policy_path_is_stdin(path))
		return tp_contract_parse_file(path, out, diags);
	r = policy_read_stdin(&data, &len, diags);
	return r < 0 ? r : tp_contract_parse(POLICY_STDIN_NAME, data, len, out, diags);
}

int policy_parse_envelope(const char *path, struct tp_envelope **out, struct tp_diags *diags)
{
	const char *data;
	size_t len;
	int r;

	if (!policy_path_is_stdin(path))
		return tp_envelope_parse_file(path, out, diags);
	r = policy_read_stdin(&data, &len, diags);
	return r < 0 ? r : tp_envelope_parse(POLICY_STDIN_NAME, data, len, out, diags);
}

/*
 * What is valid but worth a look (policyc/warnings.c) in an envelope; none
 * for a compiled policy, which has no positions.  0 or -ENOMEM.
 */
int policy_warnings(const char *path, struct tp_diags *warnings)
{
	struct tp_envelope *env = NULL;
	struct tp_diags diags = { 0 };
	int r = 0;

	if (!policy_is_compiled(path) && policy_parse_envelope(path, &env, &diags) == 0)
		r = tp_envelope_warnings(policy_input_name(path), env, warnings);
	tp_diags_free(&diags);
	tp_envelope_free(env);
	return r;
}
