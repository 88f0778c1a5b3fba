// SPDX-License-Identifier: GPL-2.0
/* The special address ranges (ranges.h). */
#include <string.h>

#include "policyc/ranges.h"

#define V4(a, b, c, d) { [10] = 0xff, [11] = 0xff, [12] = (a), [13] = (b), [14] = (c), [15] = (d) }

const struct tp_addr_range tp_addr_ranges[] = {
	{ V4(0, 0, 0, 0), 96 + 8, TP_ADDR_UNSPECIFIED },
	{ V4(127, 0, 0, 0), 96 + 8, TP_ADDR_LOOPBACK },
	{ V4(169, 254, 0, 0), 96 + 16, TP_ADDR_LINK_LOCAL },
	{ V4(169, 254, 169, 254), 128, TP_ADDR_METADATA },
	{ V4(100, 100, 100, 200), 128, TP_ADDR_METADATA },
	{ V4(10, 0, 0, 0), 96 + 8, TP_ADDR_PRIVATE },
	{ V4(172, 16, 0, 0), 96 + 12, TP_ADDR_PRIVATE },
	{ V4(192, 168, 0, 0), 96 + 16, TP_ADDR_PRIVATE },
	{ V4(100, 64, 0, 0), 96 + 10, TP_ADDR_PRIVATE },
	/* 224/4 multicast and 240/4 reserved, 255.255.255.255 among them. */
	{ V4(224, 0, 0, 0), 96 + 4, TP_ADDR_MULTICAST },
	{ V4(240, 0, 0, 0), 96 + 4, TP_ADDR_MULTICAST },
	{ { 0 }, 128, TP_ADDR_UNSPECIFIED },					/* :: */
	{ { [15] = 1 }, 128, TP_ADDR_LOOPBACK },				/* ::1 */
	{ { 0xfe, 0x80 }, 10, TP_ADDR_LINK_LOCAL },				/* fe80::/10 */
	{ { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 }, 128, TP_ADDR_METADATA },
	/* fc00::/7 unique local, and fec0::/10, deprecated site-local but still private. */
	{ { 0xfc }, 7, TP_ADDR_PRIVATE },
	{ { 0xfe, 0xc0 }, 10, TP_ADDR_PRIVATE },
	{ { 0xff }, 8, TP_ADDR_MULTICAST },					/* ff00::/8 */
};
const size_t tp_addr_range_count = sizeof(tp_addr_ranges) / sizeof(tp_addr_ranges[0]);

bool tp_block_contains(const uint8_t outer[16], unsigned outer_len, const uint8_t inner[16],
		       unsigned inner_len)
{
	size_t bytes = outer_len / 8, bits = outer_len % 8;

	if (inner_len < outer_len || memcmp(outer, inner, bytes) != 0)
		return false;
	return !bits || ((outer[bytes] ^ inner[bytes]) & (0xff00u >> bits) & 0xff) == 0;
}

enum tp_addr_class tp_addr_range_class(const uint8_t addr[16])
{
	enum tp_addr_class found = TP_ADDR_PUBLIC;
	int found_len = -1;

	for (size_t i = 0; i < tp_addr_range_count; i++) {
		const struct tp_addr_range *range = &tp_addr_ranges[i];

		if (range->prefixlen > found_len &&
		    tp_block_contains(range->addr, range->prefixlen, addr, 128)) {
			found = range->addr_class;
			found_len = range->prefixlen;
		}
	}
	return found;
}

bool tp_addr_class_special(enum tp_addr_class addr_class)
{
	switch (addr_class) {
	case TP_ADDR_UNSPECIFIED:
	case TP_ADDR_LOOPBACK:
	case TP_ADDR_LINK_LOCAL:
	case TP_ADDR_METADATA:
		return true;
	case TP_ADDR_PUBLIC:
	case TP_ADDR_PRIVATE:
	case TP_ADDR_MULTICAST:
		break;
	}
	return false;
}

bool tp_special_range_between(const uint8_t outer[16], unsigned outer_len,
			      const uint8_t inner[16], unsigned inner_len)
{
	for (size_t i = 0; i < tp_addr_range_count; i++) {
		const struct tp_addr_range *sr = &tp_addr_ranges[i];

		if (tp_addr_class_special(sr->addr_class) && sr->prefixlen > outer_len &&
		    tp_block_contains(sr->addr, sr->prefixlen, inner, inner_len) &&
		    tp_block_contains(outer, outer_len, sr->addr, sr->prefixlen))
			return true;
	}
	return false;
}
