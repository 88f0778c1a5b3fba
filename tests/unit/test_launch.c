// SPDX-License-Identifier: GPL-2.0
/* The run's environment and run files: what passes into a run, and who owns it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "runtime/launch.h"
#include "runtime/runs.h"

static bool has(char **envp, const char *entry)
{
	for (size_t i = 0; envp[i]; i++)
		if (strcmp(envp[i], entry) == 0)
			return true;
	return false;
}

static size_t count(char **envp)
{
	size_t n = 0;

	while (envp[n])
		n++;
	return n;
}

Test(launch, environment_is_an_allow_list)
{
	char *env[] = {
		"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm",
		"TZ=UTC", "AWS_SECRET_ACCESS_KEY=x", "GITHUB_TOKEN=y", "SSH_AUTH_SOCK=/tmp/a",
		"LD_PRELOAD=/tmp/evil.so", "TMPDIR=/tmp", "KUBECONFIG=/root/.kube/config",
		"NOEQUALS", NULL,
	};
	char **out = launch_env_build(env, NULL, 0, "/run/tether/tmp/r-1", "/ws");

	cr_assert_not_null(out);
	cr_assert(has(out, "PATH=/usr/bin:/bin"));
	cr_assert(has(out, "LANG=C.UTF-8"));
	cr_assert(has(out, "LC_ALL=C"));
	cr_assert(has(out, "TERM=xterm"));
	cr_assert(has(out, "TZ=UTC"));
	cr_assert(has(out, "TMPDIR=/run/tether/tmp/r-1"));
	cr_assert(has(out, "HOME=/ws"));
	/* nothing else: no credentials, no agent sockets, no loader tricks */
	cr_assert_eq(count(out), 7);
	launch_env_free(out);
}

Test(launch, listed_names_pass_even_credentials)
{
	char *env[] = { "GITHUB_TOKEN=y", "AWS_SECRET_ACCESS_KEY=x", "HOME=/root", "CI=1", NULL };
	const char *names[] = { "GITHUB_TOKEN", "CI", "HOME" };
	char **out = launch_env_build(env, names, 3, "/t", "/ws");

	cr_assert_not_null(out);
	cr_assert(has(out, "GITHUB_TOKEN=y"));
	cr_assert(has(out, "CI=1"));
	/* a listed HOME keeps the caller's */
	cr_assert(has(out, "HOME=/root"));
	cr_assert(!has(out, "HOME=/ws"));
	cr_assert(!has(out, "AWS_SECRET_ACCESS_KEY=x"));
	launch_env_free(out);
}

Test(launch, prefixes_do_not_match)
{
	/* "PATHX" is not PATH, "GITHUB_TOKEN_2" is not GITHUB_TOKEN, "LC" is not LC_* */
	char *env[] = { "PATHX=1", "GITHUB_TOKEN_2=z", "LC=1", "TERMINFO=/x", NULL };
	const char *names[] = { "GITHUB_TOKEN" };
	char **out = launch_env_build(env, names, 1, NULL, NULL);

	cr_assert_not_null(out);
	/* only the default PATH tether adds when the caller has none */
	cr_assert_eq(count(out), 1);
	cr_assert(has(out, "PATH=/usr/local/bin:/usr/bin:/bin"));
	launch_env_free(out);
}

Test(launch, first_duplicate_wins)
{
	char *env[] = { "PATH=/a", "PATH=/b", "HOME=/h", "HOME=/i", NULL };
	const char *names[] = { "HOME" };
	char **out = launch_env_build(env, names, 1, NULL, "/ws");

	cr_assert_not_null(out);
	cr_assert(has(out, "PATH=/a"));
	cr_assert(has(out, "HOME=/h"));
	cr_assert_eq(count(out), 2);
	launch_env_free(out);
}

Test(launch, step_names)
{
	cr_assert_str_eq(launch_step_name(LAUNCH_STEP_UID), "switching to the run's uid");
	cr_assert_str_eq(launch_step_name(0), "preparing the command");
	cr_assert_str_eq(launch_step_name(1000), "preparing the command");
}

Test(runs, stat_start_time)
{
	unsigned long long t;
	/* a command name with spaces and parentheses cannot shift the fields */
	const char *stat = "1234 (evil) 1 2 3) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 "
			   "1 0 987654 1000 10 18446744073709551615\n";

	cr_assert_eq(proc_stat_start_time(stat, &t), 0);
	cr_assert_eq(t, 987654);
	cr_assert_eq(proc_stat_start_time("1234 (x) S 1", &t), -EINVAL);
	cr_assert_eq(proc_stat_start_time("no parens", &t), -EINVAL);
}

Test(runs, own_start_time)
{
	unsigned long long a, b;

	cr_assert_eq(proc_start_time(getpid(), &a), 0);
	cr_assert_eq(proc_start_time(getpid(), &b), 0);
	cr_assert_eq(a, b);
}

Test(runs, run_file)
{
	unsigned long long start;
	pid_t pid;

	cr_assert_eq(runs_file_parse("42 123456\n", &pid, &start), 0);
	cr_assert_eq(pid, 42);
	cr_assert_eq(start, 123456);
	cr_assert_eq(runs_file_parse("42\n", &pid, &start), -EINVAL);
	cr_assert_eq(runs_file_parse("-1 5\n", &pid, &start), -EINVAL);
	cr_assert_eq(runs_file_parse("0 5\n", &pid, &start), -EINVAL);
	cr_assert_eq(runs_file_parse("42 x\n", &pid, &start), -EINVAL);
	cr_assert_eq(runs_file_parse("42 5 6\n", &pid, &start), -EINVAL);
	cr_assert_eq(runs_file_parse("", &pid, &start), -EINVAL);
}

Test(runs, ids)
{
	cr_assert(run_id_valid("run-85a_1.2"));
	cr_assert(!run_id_valid(""));
	cr_assert(!run_id_valid("."));
	cr_assert(!run_id_valid(".."));
	cr_assert(!run_id_valid("a/b"));
	cr_assert(!run_id_valid("a b"));
	cr_assert(!run_id_valid("0123456789012345678901234567890123456789012345678901234567890123x"));
}
