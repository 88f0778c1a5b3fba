// SPDX-License-Identifier: GPL-2.0
/*
 * Inputs verified by digest (docs/envelope.md, "Inputs by digest").  Before
 * the command exists, the controller reads each input that lists a digest
 * once, hashing it and copying it in the same pass onto a tmpfs it made for
 * the run (runtime/inputdigest.c), compares the digest with the envelope's,
 * and makes that tmpfs read-only.  The helper binds each copy over its
 * input's path in the run's mount namespace (runtime/run/scratch.c): what the
 * run reads is what was verified, byte for byte, whatever the host does to
 * the input afterwards.  A digest that differs, or an input that cannot be
 * read whole, refuses the run (exit 120) with both digests.
 *
 * The copy is owned by the run's uid and gid (read-only all the same: the
 * mount, and the input's rule), so tools that check ownership (git's
 * safe.directory) accept it.  Its pages are the controller's memory, not the
 * run's: the inputs are the envelope's, bounded by their authors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "runtime/inputdigest.h"
#include "runtime/run/internal.h"

static bool any_digest(const struct tp_policy *pol)
{
	for (size_t i = 0; i < pol->input_count; i++)
		if (pol->inputs[i].has_digest)
			return true;
	return false;
}

static int make_fs(struct run *run, struct run_error *err)
{
	static const char *const opts[] = { "source", "tether-inputs", "mode", "0755", NULL };
	const char *failed = "";
	int r = run_tmpfs_detached(opts, &failed);

	if (r < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r,
				"making the tmpfs for the verified copies of the inputs: %s: %s",
				strcmp(failed, "fsopen") && strcmp(failed, "fsmount") ? "fsconfig"
										: failed,
				strerror(-r));
	run->in_fd = r;
	return 0;
}

int run_inputs_verify(struct run *run, struct run_error *err)
{
	const struct tp_policy *pol = run->policy;
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	int r;

	if (!any_digest(pol))
		return 0;
	r = make_fs(run, err);
	if (r)
		return r;
	for (size_t i = 0; i < pol->input_count; i++) {
		const struct tp_input *in = &pol->inputs[i];
		char name[24], why[PATH_MAX + 256], want[TP_DIGEST_TEXT_MAX], got[TP_DIGEST_TEXT_MAX];
		struct input_copy copy = { run->in_fd, name, run->uid, run->gid, false };
		uint8_t d[32];

		if (!in->has_digest)
			continue;
		snprintf(name, sizeof(name), "%zu", i);
		r = input_digest(in->path, &copy, d, why, sizeof(why));
		if (r)
			return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, -r,
					"refusing to run: input %s cannot be verified against its "
					"digest: %s; the command was not started", in->path, why);
		if (memcmp(d, in->digest, sizeof(d)) != 0) {
			tp_digest_text(in->digest, want);
			tp_digest_text(d, got);
			return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, EBADMSG,
					"refusing to run: input %s has digest %s, but the envelope "
					"lists %s (it changed, or the envelope is out of date: "
					"`tether check --digest %s` prints what it is now); the "
					"command was not started", in->path, got, want, in->path);
		}
	}
	if (mount_setattr(run->in_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, errno,
				"making the verified copies of the inputs read-only: %s",
				strerror(errno));
	return 0;
}

void run_inputs_free(struct run *run)
{
	if (run->in_fd >= 0)
		close(run->in_fd);
	run->in_fd = -1;
}
