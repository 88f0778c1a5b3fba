/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scope-bound release, as in systemd, shared by policyc/, loader/ and
 * runtime/: a variable declared _cleanup_free_ is freed whenever it goes out
 * of scope, so every early return is leak-free.  Ownership leaves the scope
 * only through TAKE_PTR() (or TAKE_FD()), which makes the hand-over visible
 * where it happens.  Every destructor accepts the empty value (NULL, -1).
 */
#ifndef TETHER_COMMON_CLEANUP_H
#define TETHER_COMMON_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

#define TAKE_PTR(ptr)                            \
	({                                       \
		__typeof__(ptr) _taken_ = (ptr); \
		(ptr) = NULL;                    \
		_taken_;                         \
	})

#define TAKE_FD(fd)                   \
	({                            \
		int _taken_fd_ = (fd); \
		(fd) = -1;            \
		_taken_fd_;           \
	})

#endif
