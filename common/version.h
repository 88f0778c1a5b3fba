/* SPDX-License-Identifier: GPL-2.0 */
/* tether's version: the Makefile may set it (-DTETHER_VERSION=...). */
#ifndef TETHER_COMMON_VERSION_H
#define TETHER_COMMON_VERSION_H

#ifndef TETHER_VERSION
#define TETHER_VERSION "0.1.0"
#endif

#endif
