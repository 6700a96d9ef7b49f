// SPDX-License-Identifier: Apache-2.0
/* Profiles: name validation, the built-ins, and PROFILES_DIR/NAME.json. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "policy/name.h"
#include "policy/profiles.h"
#include "compile/eval.h"
#include "test.h"

/*
 * The kubelet's safe set (pkg/kubelet/sysctl/safe_sysctls.go), with the
 * Kubernetes version that added each; docs/policy.md lists them too.
 */
static const char *const k8s_safe_sysctls[] = {
    "kernel/shm_rmid_forced",		   /* 1.4 */
    "net/ipv4/ip_local_port_range",	   /* 1.4 */
    "net/ipv4/tcp_syncookies",		   /* 1.4 */
    "net/ipv4/ping_group_range",	   /* 1.18 */
    "net/ipv4/ip_unprivileged_port_start", /* 1.22 */
    "net/ipv4/ip_local_reserved_ports",	   /* 1.27 */
    "net/ipv4/tcp_keepalive_time",	   /* 1.29 */
    "net/ipv4/tcp_fin_timeout",		   /* 1.29 */
    "net/ipv4/tcp_keepalive_intvl",	   /* 1.29 */
    "net/ipv4/tcp_keepalive_probes",	   /* 1.29 */
    "net/ipv4/tcp_rmem",		   /* 1.32 */
    "net/ipv4/tcp_wmem",		   /* 1.32 */
    "net/ipv4/tcp_slow_start_after_idle",  /* 1.37 */
    "net/ipv4/tcp_notsent_lowat",	   /* 1.37 */
};

/* A scratch profiles directory, removed with everything in it. */
struct tmpdir {
	char path[64];
};

static void tmpdir_make(struct tmpdir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/sg-test-profiles.XXXXXX");
	if (!mkdtemp(d->path)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void tmpdir_write(struct tmpdir *d, const char *name, const char *text)
{
	_cleanup_free_ char *path = sg_xasprintf("%s/%s", d->path, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void tmpdir_remove(struct tmpdir *d)
{
	_cleanup_free_ char *cmd = sg_xasprintf("rm -rf -- '%s'", d->path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", d->path);
}

TEST(valid_names)
{
	CHECK(sg_profile_name_valid("k8s-safe"));
	CHECK(sg_profile_name_valid("a"));
	CHECK(sg_profile_name_valid("0"));
	CHECK(sg_profile_name_valid("web.v2_strict-1"));
	CHECK(sg_profile_name_valid("a.."));
	char longest[65];
	memset(longest, 'a', 64);
	longest[64] = '\0';
	CHECK(sg_profile_name_valid(longest));
}

TEST(invalid_names)
{
	static const char *const bad[] = {
	    "../x",	   "/etc/passwd", "",	"A",	  "x/y", ".",	     "..",
	    ".hidden",	   "-x",	  "_x", "a b",	  "a\n", "k8s-Safe", "x\\y",
	    "caf\xc3\xa9", "a:b",	  "a*", "x/../y",
	};
	for (size_t i = 0; i < SG_ARRAY_SIZE(bad); i++) {
		if (sg_profile_name_valid(bad[i]))
			fprintf(stderr, "accepted \"%s\"\n", bad[i]);
		CHECK(!sg_profile_name_valid(bad[i]));
	}
	CHECK(!sg_profile_name_valid(NULL));
	char too_long[66];
	memset(too_long, 'a', 65);
	too_long[65] = '\0';
	CHECK(!sg_profile_name_valid(too_long));
}

TEST(invalid_names_are_not_loaded)
{
	static const char *const bad[] = {"../x", "/etc/passwd", "",
					  "A",	  "x/y",	 "../../etc/shadow"};
	struct tmpdir d;

	/* Even a file that exists at the traversed path must not be reached. */
	tmpdir_make(&d);
	_cleanup_free_ char *inner = sg_xasprintf("%s/inner", d.path);
	CHECK(mkdir(inner, 0700) == 0);
	tmpdir_write(&d, "x.json", "{\"version\": 1, \"default\": \"read-write\", \"rules\": []}");
	tmpdir_write(&d, "inner/y.json",
		     "{\"version\": 1, \"default\": \"read-write\", \"rules\": []}");

	for (size_t i = 0; i < SG_ARRAY_SIZE(bad); i++) {
		struct sg_err err = {0};
		struct sg_policy p = {0};
		CHECK(sg_profile_load(bad[i], inner, &p, &err) == -EINVAL);
		CHECK(err.status == SG_EXIT_INPUT);
		CHECK_CONTAINS(err.msg, "is invalid");
		_cleanup_free_ char *quoted = sg_xasprintf("profile name \"%s\"", bad[i]);
		CHECK_CONTAINS(err.msg, quoted);
	}
	struct sg_err err = {0};
	struct sg_policy p = {0};
	CHECK(sg_profile_load("inner/y", d.path, &p, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "is invalid");
	tmpdir_remove(&d);
}

TEST(builtin_list)
{
	const char *const *names = sg_builtin_profile_names();
	static const char *const expected[] = {"k8s-safe", "read-only", "deny-all", "audit"};
	size_t n = 0;

	while (names[n])
		n++;
	CHECK(n == SG_ARRAY_SIZE(expected));
	for (size_t i = 0; i < n && i < SG_ARRAY_SIZE(expected); i++)
		CHECK_STR(names[i], expected[i]);
	CHECK(sg_builtin_profile("nope") == NULL);
	CHECK(sg_builtin_profile_summary("nope") == NULL);
	CHECK_STR(sg_builtin_profile_summary("deny-all"), "no sysctl readable or writable");
}

TEST(every_builtin_loads)
{
	for (const char *const *n = sg_builtin_profile_names(); *n; n++) {
		struct sg_err err = {0};
		struct sg_policy p = {0};
		int r = sg_profile_load(*n, "/nonexistent-sysctl-guard-test", &p, &err);
		if (r < 0)
			fprintf(stderr, "%s: %s\n", *n, err.msg);
		CHECK(r == 0);
		CHECK(!sg_err_is_set(&err));
		_cleanup_free_ char *origin = sg_xasprintf("profile %s", *n);
		CHECK_STR(p.origin, origin);
		sg_policy_find_shadowed(&p); /* a built-in profile shadows nothing */
		CHECK(p.n_warnings == 0);
		CHECK(sg_builtin_profile(*n) != NULL);
		CHECK(sg_builtin_profile_summary(*n) && sg_builtin_profile_summary(*n)[0]);
		sg_policy_free(&p);
	}
}

static void load_builtin(const char *name, struct sg_policy *p)
{
	struct sg_err err = {0};
	if (sg_profile_load(name, NULL, p, &err) < 0) {
		fprintf(stderr, "%s: %s\n", name, err.msg);
		exit(1);
	}
}

TEST(builtin_semantics)
{
	struct sg_policy p = {0};

	load_builtin("read-only", &p);
	CHECK(p.mode == SG_MODE_ENFORCE);
	CHECK(p.default_access == SG_ACCESS_READ);
	CHECK(p.n_rules == 0);
	sg_policy_free(&p);

	load_builtin("deny-all", &p);
	CHECK(p.mode == SG_MODE_ENFORCE);
	CHECK(p.default_access == SG_ACCESS_NONE);
	CHECK(p.n_rules == 0);
	sg_policy_free(&p);

	/*
	 * An audit layer records what enforcing it would have done and never
	 * denies: with "read" as the default every write is recorded and still
	 * goes through.
	 */
	load_builtin("audit", &p);
	CHECK(p.mode == SG_MODE_AUDIT);
	CHECK(p.default_access == SG_ACCESS_READ);
	CHECK(p.n_rules == 0);
	sg_policy_free(&p);
}

TEST(k8s_safe_is_exactly_the_kubernetes_list)
{
	struct sg_policy p = {0};

	load_builtin("k8s-safe", &p);
	CHECK(p.mode == SG_MODE_ENFORCE);
	CHECK(p.default_access == SG_ACCESS_READ);
	CHECK(p.n_rules == SG_ARRAY_SIZE(k8s_safe_sysctls));
	for (size_t i = 0; i < SG_ARRAY_SIZE(k8s_safe_sysctls); i++) {
		bool found = false;
		for (size_t j = 0; j < p.n_rules; j++) {
			const struct sg_rule *r = &p.rules[j];
			if (strcmp(r->pattern, k8s_safe_sysctls[i]) != 0)
				continue;
			found = true;
			CHECK(r->is_literal);
			CHECK(r->access == SG_ACCESS_READ_WRITE);
			CHECK(r->n_values == 0 && r->n_ranges == 0 && !r->rewrite);
			/* Safe only in the container's own namespace, as Kubernetes means it. */
			CHECK(!r->allow_host_namespace);
			CHECK(sg_namespace_of(r->pattern) != 0);
		}
		if (!found)
			fprintf(stderr, "k8s-safe lacks %s\n", k8s_safe_sysctls[i]);
		CHECK(found);
	}
	sg_policy_free(&p);
}

TEST(profile_from_dir)
{
	struct tmpdir d;
	struct sg_err err = {0};
	struct sg_policy p = {0};

	tmpdir_make(&d);
	tmpdir_write(&d, "web.v2.json",
		     "{\n  \"version\": 1,\n  \"default\": \"none\",\n  \"rules\": [\n"
		     "    { \"name\": \"net.core.somaxconn\", \"access\": \"read-write\", "
		     "\"range\": [128, 4096] }\n  ]\n}\n");
	CHECK(sg_profile_load("web.v2", d.path, &p, &err) == 0);
	_cleanup_free_ char *path = sg_xasprintf("%s/web.v2.json", d.path);
	CHECK_STR(p.origin, path);
	CHECK(p.default_access == SG_ACCESS_NONE);
	CHECK(p.n_rules == 1);
	if (p.n_rules == 1) {
		CHECK_STR(p.rules[0].pattern, "net/core/somaxconn");
		CHECK(p.n_rules == 1 && p.rules[0].n_ranges == 1);
	}
	sg_policy_free(&p);

	/* A trailing slash on the directory makes no difference. */
	_cleanup_free_ char *slashed = sg_xasprintf("%s/", d.path);
	memset(&err, 0, sizeof(err));
	CHECK(sg_profile_load("web.v2", slashed, &p, &err) == 0);
	CHECK_STR(p.origin, path);
	sg_policy_free(&p);
	tmpdir_remove(&d);
}

TEST(builtin_wins_over_dir)
{
	struct tmpdir d;
	struct sg_err err = {0};
	struct sg_policy p = {0};

	tmpdir_make(&d);
	tmpdir_write(&d, "k8s-safe.json",
		     "{\"version\": 1, \"default\": \"read-write\", \"rules\": []}");
	CHECK(sg_profile_load("k8s-safe", d.path, &p, &err) == 0);
	CHECK_STR(p.origin, "profile k8s-safe");
	CHECK(p.default_access == SG_ACCESS_READ);
	sg_policy_free(&p);
	tmpdir_remove(&d);
}

TEST(not_found_names_both_places)
{
	struct tmpdir d;
	struct sg_err err = {0};
	struct sg_policy p = {0};

	tmpdir_make(&d);
	CHECK(sg_profile_load("x", d.path, &p, &err) == -EINVAL);
	CHECK(err.status == SG_EXIT_INPUT);
	_cleanup_free_ char *expected = sg_xasprintf(
	    "profile \"x\" not found: not built in (k8s-safe, read-only, deny-all, audit) "
	    "and no %s/x.json",
	    d.path);
	CHECK(strncmp(err.msg, expected, strlen(expected)) == 0);
	CHECK_CONTAINS(err.msg, expected);

	/* A directory that does not exist is the same: nothing installed. */
	memset(&err, 0, sizeof(err));
	_cleanup_free_ char *missing = sg_xasprintf("%s/missing", d.path);
	CHECK(sg_profile_load("x", missing, &p, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "missing/x.json");

	/* Without a directory, the default one is named. */
	memset(&err, 0, sizeof(err));
	CHECK(sg_profile_load("no-such-profile-sg-test", NULL, &p, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "and no /etc/sysctl-guard/profiles/no-such-profile-sg-test.json");
	tmpdir_remove(&d);
}

TEST(broken_dir_profile_names_the_file)
{
	struct tmpdir d;
	struct sg_err err = {0};
	struct sg_policy p = {0};

	tmpdir_make(&d);
	tmpdir_write(&d, "broken.json", "{\n  \"version\": 1,\n  \"default\": \"maybe\"\n}\n");
	CHECK(sg_profile_load("broken", d.path, &p, &err) == -EINVAL);
	_cleanup_free_ char *prefix = sg_xasprintf("%s/broken.json:3:", d.path);
	CHECK(strncmp(err.msg, prefix, strlen(prefix)) == 0);
	CHECK_CONTAINS(err.msg, "default");

	memset(&err, 0, sizeof(err));
	tmpdir_write(&d, "syntax.json", "{ \"version\": 1, ");
	CHECK(sg_profile_load("syntax", d.path, &p, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "syntax.json");
	tmpdir_remove(&d);
}

TEST(only_regular_files)
{
	struct tmpdir d;
	struct sg_err err = {0};
	struct sg_policy p = {0};

	tmpdir_make(&d);
	_cleanup_free_ char *dir = sg_xasprintf("%s/sub.json", d.path);
	CHECK(mkdir(dir, 0700) == 0);
	CHECK(sg_profile_load("sub", d.path, &p, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "is not a regular file");

	/* A FIFO must be refused, not block the hook waiting for a writer. */
	_cleanup_free_ char *fifo = sg_xasprintf("%s/pipe.json", d.path);
	CHECK(mkfifo(fifo, 0600) == 0);
	memset(&err, 0, sizeof(err));
	CHECK(sg_profile_load("pipe", d.path, &p, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "is not a regular file");
	tmpdir_remove(&d);
}

/* A profile has a policy's bound, 4 MiB: what `check` takes, the hook takes. */
static void write_padded_profile(struct tmpdir *d, const char *name, size_t size)
{
	static const char head[] = "{\"version\": 1, \"rules\": []}";
	_cleanup_free_ char *text = sg_xmalloc(size + 1);
	memcpy(text, head, sizeof(head) - 1);
	memset(text + sizeof(head) - 1, ' ', size - (sizeof(head) - 1));
	text[size] = '\0';
	tmpdir_write(d, name, text);
}

TEST(profile_size_bound_is_a_policys)
{
	struct tmpdir d;
	struct sg_err err = {0};
	struct sg_policy p = {0};

	tmpdir_make(&d);
	write_padded_profile(&d, "big.json", 2u << 20);
	CHECK(sg_profile_load("big", d.path, &p, &err) == 0);
	sg_policy_free(&p);
	write_padded_profile(&d, "huge.json", (4u << 20) + 1);
	memset(&err, 0, sizeof(err));
	CHECK(sg_profile_load("huge", d.path, &p, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "larger than 4194304 bytes");
	tmpdir_remove(&d);
}

RUN_TESTS(T(valid_names), T(invalid_names), T(invalid_names_are_not_loaded), T(builtin_list),
	  T(every_builtin_loads), T(builtin_semantics), T(k8s_safe_is_exactly_the_kubernetes_list),
	  T(profile_from_dir), T(builtin_wins_over_dir), T(not_found_names_both_places),
	  T(broken_dir_profile_names_the_file), T(only_regular_files),
	  T(profile_size_bound_is_a_policys))
