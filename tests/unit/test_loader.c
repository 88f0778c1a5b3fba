// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "bpf/abi/rules.h"
#include "loader/loader.h"

Test(loader, key_for_directory_rule_ends_in_slash)
{
	struct tether_path_key key;

	cr_assert_eq(tl_path_key(7, "/work/ws", &key), 0);
	cr_assert_eq(key.run_slot, 7);
	cr_assert_eq(key.prefixlen, 32 + 8 * 9);
	cr_assert(memcmp(key.path, "/work/ws/", 9) == 0);
	cr_assert_eq(key.path[9], 0);
}

Test(loader, key_for_root_is_one_slash)
{
	struct tether_path_key key;

	cr_assert_eq(tl_path_key(1, "/", &key), 0);
	cr_assert_eq(key.prefixlen, 32 + 8);
	cr_assert_eq(key.path[0], '/');
}

Test(loader, key_rejects_relative_and_trailing_slash)
{
	struct tether_path_key key;

	cr_assert_eq(tl_path_key(1, "work", &key), -EINVAL);
	cr_assert_eq(tl_path_key(1, "", &key), -EINVAL);
	cr_assert_eq(tl_path_key(1, "/work/", &key), -EINVAL);
}

Test(loader, key_length_limit)
{
	struct tether_path_key key;
	char path[TETHER_PATH_KEY_MAX + 2];

	/* 251 bytes plus the '/' fill the key exactly */
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[TETHER_PATH_KEY_MAX - 1] = 0;
	cr_assert_eq(tl_path_key(1, path, &key), 0);
	cr_assert_eq(key.prefixlen, 32 + 8 * TETHER_PATH_KEY_MAX);
	path[TETHER_PATH_KEY_MAX - 1] = 'a';
	path[TETHER_PATH_KEY_MAX] = 0;
	cr_assert_eq(tl_path_key(1, path, &key), -ENAMETOOLONG);
}
