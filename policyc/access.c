// SPDX-License-Identifier: GPL-2.0
/* The names of the access rights (access.h). */
#include "policyc/access.h"

_Static_assert(__builtin_popcount(TETHER_ACCESS_ALL) == TP_ACCESS_RIGHT_COUNT,
	       "every right of TETHER_ACCESS_ALL has a name, and only those");

const struct tp_access_right tp_access_rights[TP_ACCESS_RIGHT_COUNT] = {
	{ TETHER_ACCESS_READ, "read", "read", "may read" },
	{ TETHER_ACCESS_WRITE, "write", "write", "may write" },
	{ TETHER_ACCESS_EXEC, "exec", "execute", "may execute" },
	{ TETHER_ACCESS_CONNECT, "connect", "connect", "may connect to unix sockets bound in" },
};
