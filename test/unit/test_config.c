// SPDX-License-Identifier: Apache-2.0
/* The node configuration: path selection, keys, baseline, error messages. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "policy/profiles.h"
#include "oci/config.h"
#include "test.h"

static char tmp[64];

static void tmp_make(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/sg-test-config.XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void tmp_remove(void)
{
	_cleanup_free_ char *cmd = sg_xasprintf("rm -rf -- '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
}

/* Writes @text to tmp/NAME and returns the path (free it). */
static char *write_file(const char *name, const char *text)
{
	char *path = sg_xasprintf("%s/%s", tmp, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	return path;
}

/*
 * test/fixtures/config, found from this file's path as the compiler saw it.
 * Meson compiles from the build root with paths relative to it, and this
 * executable lives in BUILD/test/, so a relative path is taken from there.
 */
static char *fixtures_dir(void)
{
	const char *self = __FILE__;
	const char *cut = strstr(self, "unit/test_config.c");
	char exe[4096];

	if (!cut) {
		fprintf(stderr, "cannot find the fixtures from %s\n", self);
		exit(1);
	}
	if (self[0] == '/')
		return sg_xasprintf("%.*sfixtures/config", (int)(cut - self), self);

	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		perror("/proc/self/exe");
		exit(1);
	}
	exe[n] = '\0';
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
	}
	return sg_xasprintf("%s/%.*sfixtures/config", exe, (int)(cut - self), self);
}

static int load(const char *path, struct sg_node_config *cfg, struct sg_err *err)
{
	memset(err, 0, sizeof(*err));
	return sg_node_config_load(path, cfg, err);
}

static void expect_error(const char *text, const char *needle)
{
	_cleanup_free_ char *path = write_file("config.json", text);
	struct sg_node_config cfg;
	struct sg_err err;

	CHECK(load(path, &cfg, &err) == -EINVAL);
	CHECK(err.status == SG_EXIT_INPUT);
	CHECK(strncmp(err.msg, path, strlen(path)) == 0);
	CHECK_CONTAINS(err.msg, needle);
	CHECK(cfg.baseline == NULL && cfg.path == NULL && cfg.profiles_dir == NULL);
}

TEST(empty_object_means_defaults)
{
	_cleanup_free_ char *path = write_file("config.json", "{}\n");
	struct sg_node_config cfg;
	struct sg_err err;

	CHECK(load(path, &cfg, &err) == 0);
	CHECK_STR(cfg.path, path);
	CHECK(cfg.baseline == NULL);
	CHECK(cfg.baseline_label == NULL);
	CHECK_STR(cfg.profiles_dir, SG_DEFAULT_PROFILES_DIR);
	CHECK(cfg.allow_inline);
	CHECK(cfg.on_unsupported == SG_UNSUPPORTED_FAIL);
	CHECK(cfg.tamper == SG_TAMPER_WARN);
	CHECK(cfg.log_syslog);
	CHECK(!cfg.log_debug);
	sg_node_config_free(&cfg);
	sg_node_config_free(&cfg); /* harmless twice */
}

TEST(every_key)
{
	_cleanup_free_ char *path =
	    write_file("config.json", "{\n"
				      "  \"version\": 1,\n"
				      "  \"baseline\": \"deny-all\",\n"
				      "  \"profiles_dir\": \"/srv/profiles\",\n"
				      "  \"allow_inline\": false,\n"
				      "  \"on_unsupported\": \"skip\",\n"
				      "  \"tamper\": \"refuse\",\n"
				      "  \"log\": { \"syslog\": false, \"level\": \"debug\" }\n"
				      "}\n");
	struct sg_node_config cfg;
	struct sg_err err;

	CHECK(load(path, &cfg, &err) == 0);
	CHECK(cfg.baseline != NULL);
	CHECK_STR(cfg.baseline_label, "profile deny-all");
	if (cfg.baseline) {
		CHECK_STR(cfg.baseline->origin, "profile deny-all");
		CHECK(cfg.baseline->default_access == SG_ACCESS_NONE);
	}
	CHECK_STR(cfg.profiles_dir, "/srv/profiles");
	CHECK(!cfg.allow_inline);
	CHECK(cfg.on_unsupported == SG_UNSUPPORTED_SKIP);
	CHECK(cfg.tamper == SG_TAMPER_REFUSE);
	CHECK(!cfg.log_syslog);
	CHECK(cfg.log_debug);
	sg_node_config_free(&cfg);

	_cleanup_free_ char *p2 =
	    write_file("c2.json", "{\"tamper\": \"ignore\", \"log\": {\"level\": \"info\"}}");
	CHECK(load(p2, &cfg, &err) == 0);
	CHECK(cfg.tamper == SG_TAMPER_IGNORE);
	CHECK(cfg.log_syslog && !cfg.log_debug);
	sg_node_config_free(&cfg);
}

TEST(path_selection)
{
	_cleanup_free_ char *good = write_file("good.json", "{\"tamper\": \"refuse\"}");
	_cleanup_free_ char *missing = sg_xasprintf("%s/missing.json", tmp);
	struct sg_node_config cfg;
	struct sg_err err;

	/* SYSCTL_GUARD_CONFIG names a file that must exist. */
	setenv("SYSCTL_GUARD_CONFIG", missing, 1);
	CHECK(load(NULL, &cfg, &err) == -EINVAL);
	CHECK(err.status == SG_EXIT_INPUT);
	CHECK(strncmp(err.msg, missing, strlen(missing)) == 0);
	CHECK_CONTAINS(err.msg, "SYSCTL_GUARD_CONFIG");
	CHECK_CONTAINS(err.msg, "No such file or directory");

	/* The explicit path wins over the environment. */
	CHECK(load(good, &cfg, &err) == 0);
	CHECK_STR(cfg.path, good);
	CHECK(cfg.tamper == SG_TAMPER_REFUSE);
	sg_node_config_free(&cfg);

	setenv("SYSCTL_GUARD_CONFIG", good, 1);
	CHECK(load(NULL, &cfg, &err) == 0);
	CHECK_STR(cfg.path, good);
	CHECK(cfg.tamper == SG_TAMPER_REFUSE);
	sg_node_config_free(&cfg);

	/* An explicit path must exist too. */
	CHECK(load(missing, &cfg, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "--config");
	CHECK_CONTAINS(err.msg, missing);

	/* A directory is not a configuration. */
	CHECK(load(tmp, &cfg, &err) == -EINVAL);
	CHECK_CONTAINS(err.msg, "not a regular file");
	unsetenv("SYSCTL_GUARD_CONFIG");
}

TEST(profiles_dir_before_baseline)
{
	_cleanup_free_ char *dir = sg_xasprintf("%s/profiles", tmp);
	CHECK(mkdir(dir, 0700) == 0);
	_cleanup_free_ char *prof =
	    write_file("profiles/node-base.json",
		       "{\"version\": 1, \"default\": \"read\", \"rules\": "
		       "[{\"name\": \"kernel.domainname\", \"access\": \"read-write\"}]}");
	/* baseline is written before profiles_dir: the order must not matter. */
	_cleanup_free_ char *text =
	    sg_xasprintf("{\n  \"baseline\": \"node-base\",\n  \"profiles_dir\": \"%s\"\n}\n", dir);
	_cleanup_free_ char *path = write_file("config.json", text);
	struct sg_node_config cfg;
	struct sg_err err;

	CHECK(load(path, &cfg, &err) == 0);
	if (sg_err_is_set(&err))
		fprintf(stderr, "%s\n", err.msg);
	CHECK(cfg.baseline != NULL);
	CHECK_STR(cfg.baseline_label, "profile node-base");
	if (cfg.baseline) {
		CHECK_STR(cfg.baseline->origin, prof);
		CHECK(cfg.baseline->n_rules == 1);
	}
	sg_node_config_free(&cfg);
}

TEST(inline_baseline)
{
	_cleanup_free_ char *path = write_file(
	    "config.json", "{\n"
			   "  \"tamper\": \"warn\",\n"
			   "  \"baseline\": {\n"
			   "    \"version\": 1,\n"
			   "    \"mode\": \"audit\",\n"
			   "    \"default\": \"none\",\n"
			   "    \"rules\": [\n"
			   "      { \"name\": \"net.core.somaxconn\", \"access\": \"read-write\", "
			   "\"range\": [128, 4096] },\n"
			   "      { \"name\": \"kernel.*\", \"access\": \"read\" }\n"
			   "    ]\n"
			   "  },\n"
			   "  \"allow_inline\": false\n"
			   "}\n");
	struct sg_node_config cfg;
	struct sg_err err;

	CHECK(load(path, &cfg, &err) == 0);
	if (sg_err_is_set(&err))
		fprintf(stderr, "%s\n", err.msg);
	CHECK(cfg.baseline != NULL);
	CHECK_STR(cfg.baseline_label, "inline policy");
	CHECK(!cfg.allow_inline);
	if (cfg.baseline) {
		_cleanup_free_ char *origin = sg_xasprintf("%s baseline", path);
		CHECK_STR(cfg.baseline->origin, origin);
		CHECK(cfg.baseline->mode == SG_MODE_AUDIT);
		CHECK(cfg.baseline->default_access == SG_ACCESS_NONE);
		CHECK(cfg.baseline->n_rules == 2);
		if (cfg.baseline->n_rules == 2) {
			CHECK_STR(cfg.baseline->rules[0].pattern, "net/core/somaxconn");
			/* Positions are the configuration file's own. */
			CHECK(cfg.baseline->rules[0].pos.line == 8);
			CHECK(cfg.baseline->rules[1].pos.line == 9);
			CHECK_STR(cfg.baseline->rules[1].pattern, "kernel/*");
		}
	}
	sg_node_config_free(&cfg);
}

TEST(inline_baseline_on_one_line_after_non_ascii)
{
	/* Multi-byte characters before the policy on its line must not shift it. */
	_cleanup_free_ char *path = write_file(
	    "config.json", "{\"profiles_dir\": \"/srv/caf\xc3\xa9/\xe2\x82\xac\", \"baseline\": "
			   "{\"version\": 1, \"rules\": [{\"name\": \"kernel.hostname\", "
			   "\"access\": \"read-write\", \"values\": [\"a\", \"b c\"]}]}}");
	struct sg_node_config cfg;
	struct sg_err err;

	CHECK(load(path, &cfg, &err) == 0);
	if (sg_err_is_set(&err))
		fprintf(stderr, "%s\n", err.msg);
	CHECK(cfg.baseline && cfg.baseline->n_rules == 1);
	if (cfg.baseline && cfg.baseline->n_rules == 1)
		CHECK(cfg.baseline->rules[0].n_values == 2);
	sg_node_config_free(&cfg);

	/* An error inside it still points into the file, on line 1. */
	_cleanup_free_ char *bad = write_file(
	    "bad.json", "{\"profiles_dir\": \"/srv/caf\xc3\xa9\", \"baseline\": "
			"{\"version\": 1, \"rules\": [{\"name\": \"x\", \"access\": \"write\"}]}}");
	CHECK(load(bad, &cfg, &err) == -EINVAL);
	_cleanup_free_ char *prefix = sg_xasprintf("%s:1:", bad);
	CHECK(strncmp(err.msg, prefix, strlen(prefix)) == 0);
	CHECK_CONTAINS(err.msg, "baseline");
}

TEST(inline_baseline_error_points_into_the_file)
{
	_cleanup_free_ char *path = write_file(
	    "config.json", "{\n"
			   "  \"baseline\": {\n"
			   "    \"version\": 1,\n"
			   "    \"rules\": [\n"
			   "      { \"name\": \"kernel.hostname\", \"access\": \"sometimes\" }\n"
			   "    ]\n"
			   "  }\n"
			   "}\n");
	struct sg_node_config cfg;
	struct sg_err err;

	CHECK(load(path, &cfg, &err) == -EINVAL);
	CHECK(err.status == SG_EXIT_INPUT);
	_cleanup_free_ char *prefix = sg_xasprintf("%s:5:", path);
	CHECK(strncmp(err.msg, prefix, strlen(prefix)) == 0);
	CHECK_CONTAINS(err.msg, "baseline.rules[0].access");
	CHECK(cfg.baseline == NULL);
}

TEST(inline_baseline_root_errors_and_warnings)
{
	_cleanup_free_ char *path = write_file("config.json", "{\"baseline\": {\"rules\": []}}");
	struct sg_node_config cfg;
	struct sg_err err;

	/* A problem with the policy as a whole is the baseline's, at its opening brace. */
	CHECK(load(path, &cfg, &err) == -EINVAL);
	_cleanup_free_ char *prefix = sg_xasprintf("%s:1:14: baseline: ", path);
	CHECK(strncmp(err.msg, prefix, strlen(prefix)) == 0);
	CHECK_CONTAINS(err.msg, "version");

	/* Warnings name the rule by its path in the configuration. */
	_cleanup_free_ char *warn =
	    write_file("warn.json", "{\"baseline\": {\"version\": 1, \"rules\": [\n"
				    "  {\"name\": \"kernel.hostname\", \"access\": \"read\"},\n"
				    "  {\"name\": \"kernel/hostname\", \"access\": \"none\"}]}}\n");
	CHECK(load(warn, &cfg, &err) == 0);
	CHECK(cfg.baseline && cfg.baseline->n_warnings == 1);
	if (cfg.baseline && cfg.baseline->n_warnings == 1) {
		_cleanup_free_ char *expected = sg_xasprintf("%s:3:3: baseline.rules[1]: ", warn);
		CHECK(strncmp(cfg.baseline->warnings[0], expected, strlen(expected)) == 0);
		if (strncmp(cfg.baseline->warnings[0], expected, strlen(expected)) != 0)
			fprintf(stderr, "warning: %s\n", cfg.baseline->warnings[0]);
	}
	sg_node_config_free(&cfg);
}

TEST(error_messages)
{
	expect_error("{\n  \"version\": 1,\n  \"frobnicate\": true\n}\n",
		     ":3:3: frobnicate: unknown key; known keys: version, baseline, profiles_dir, "
		     "allow_inline, on_unsupported, tamper, log");
	expect_error("{\"log\": {\"colour\": 1}}", ":1:10: log.colour: unknown key");
	expect_error("{\"allow_inline\": 1}", ":1:18: allow_inline: expected true or false, got ");
	expect_error("{\"tamper\": \"loud\"}",
		     ":1:12: tamper: \"loud\" is not one of \"warn\", \"refuse\" or \"ignore\"");
	expect_error("{\"version\": 2}", ":1:13: version: unsupported version 2");
	expect_error("{\"version\": 1.0}", ":1:13: version: expected the integer 1");
	expect_error("{\"profiles_dir\": \"etc/x\"}",
		     ":1:18: profiles_dir: \"etc/x\" is not an absolute path");
	expect_error("{\"baseline\": [\"k8s-safe\"]}",
		     ":1:14: baseline: expected a profile name or an inline policy object");
	expect_error("{\"baseline\": \"../x\"}",
		     ":1:14: baseline: profile name \"../x\" is invalid");
	expect_error("[]", ":1:1: (top level): expected an object");
	expect_error("{\"baseline\": \"k8s-safe\",}", ":1:");
	expect_error("{\"tamper\": \"warn\", \"tamper\": \"refuse\"}", ":1:");
}

TEST(missing_profile_names_both_places)
{
	_cleanup_free_ char *text =
	    sg_xasprintf("{\"profiles_dir\": \"%s/none\", \"baseline\": \"x\"}", tmp);
	_cleanup_free_ char *needle = sg_xasprintf(
	    ":1:%zu: baseline: profile \"x\" not found: not built in (k8s-safe, read-only, "
	    "deny-all, audit) and no %s/none/x.json",
	    strlen(text) - 3, tmp);
	expect_error(text, needle);
}

static char *read_expect(const char *path)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct sg_err err = {0};

	if (sg_read_file(path, 4096, &text, &len, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return NULL;
	}
	while (len && text[len - 1] == '\n')
		text[--len] = '\0';
	return SG_TAKE(text);
}

/* Every file in fixtures/config/valid loads; every one in invalid/ fails with its .expect text. */
TEST(fixtures)
{
	_cleanup_free_ char *dir = fixtures_dir();
	static const char *const kinds[] = {"valid", "invalid"};
	size_t seen[2] = {0, 0};

	unsetenv("SYSCTL_GUARD_CONFIG");
	for (size_t k = 0; k < 2; k++) {
		_cleanup_free_ char *sub = sg_xasprintf("%s/%s", dir, kinds[k]);
		DIR *d = opendir(sub);
		if (!d) {
			fprintf(stderr, "%s: %s\n", sub, strerror(errno));
			CHECK(d != NULL);
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
				continue;
			_cleanup_free_ char *path = sg_xasprintf("%s/%s", sub, e->d_name);
			struct sg_node_config cfg;
			struct sg_err err;
			int r = load(path, &cfg, &err);
			seen[k]++;
			if (k == 0) {
				if (r < 0)
					fprintf(stderr, "%s\n", err.msg);
				CHECK(r == 0);
				sg_node_config_free(&cfg);
				continue;
			}
			_cleanup_free_ char *expect_path =
			    sg_xasprintf("%s/%.*s.expect", sub, (int)(n - 5), e->d_name);
			_cleanup_free_ char *expect = read_expect(expect_path);
			if (r == 0)
				fprintf(stderr, "%s: accepted\n", path);
			CHECK(r == -EINVAL);
			CHECK(strncmp(err.msg, path, strlen(path)) == 0);
			CHECK(expect != NULL);
			if (expect)
				CHECK_CONTAINS(err.msg, expect);
		}
		closedir(d);
	}
	CHECK(seen[0] >= 4);
	CHECK(seen[1] >= 10);
}

/*
 * sg_node_config_parse for install: a baseline profile is read from the
 * lookup's first directory where it is there, else from profiles_dir under
 * the lookup's root; the text is the config's, with @origin in errors.
 */
TEST(parse_with_lookup)
{
	static const char text[] = "{ \"version\": 1, \"baseline\": \"sgt-base\", "
				   "\"profiles_dir\": \"/p\" }";
	static const char policy[] = "{ \"version\": 1, \"default\": \"none\" }\n";
	_cleanup_free_ char *root = sg_xasprintf("%s/root", tmp);
	_cleanup_free_ char *first = sg_xasprintf("%s/first", tmp);
	_cleanup_free_ char *in_root = sg_xasprintf("%s/p", root);
	struct sg_config_lookup lookup = {.root = root, .first = first};
	struct sg_node_config cfg;
	struct sg_err err = {0};

	CHECK(mkdir(root, 0755) == 0 && mkdir(first, 0755) == 0 && mkdir(in_root, 0755) == 0);
	/* Nowhere yet: the error names the file and the directory under the root. */
	CHECK(sg_node_config_parse("--config c.json", text, strlen(text), &lookup, &cfg, &err) ==
	      -EINVAL);
	CHECK_CONTAINS(err.msg, "--config c.json:1:");
	CHECK_CONTAINS(err.msg, in_root);

	free(write_file("root/p/sgt-base.json", policy));
	memset(&err, 0, sizeof(err));
	CHECK(sg_node_config_parse("c", text, strlen(text), &lookup, &cfg, &err) == 0);
	CHECK_STR(cfg.profiles_dir, "/p");
	CHECK_STR(cfg.baseline_label, "profile sgt-base");
	CHECK(cfg.baseline && cfg.baseline->default_access == SG_ACCESS_NONE);
	CHECK(cfg.text_len == strlen(text) && memcmp(cfg.text, text, cfg.text_len) == 0);
	sg_node_config_free(&cfg);

	/* The first directory wins where it has the profile. */
	free(write_file("first/sgt-base.json", "{ \"version\": 1, \"default\": \"read\" }\n"));
	CHECK(sg_node_config_parse("c", text, strlen(text), &lookup, &cfg, &err) == 0);
	CHECK(cfg.baseline && cfg.baseline->default_access == SG_ACCESS_READ);
	sg_node_config_free(&cfg);
}

/* One scratch directory for the whole run: made first, removed last. */
TEST(setup)
{
	unsetenv("SYSCTL_GUARD_CONFIG");
	tmp_make();
}

TEST(teardown)
{
	tmp_remove();
}

RUN_TESTS(T(setup), T(empty_object_means_defaults), T(every_key), T(path_selection),
	  T(profiles_dir_before_baseline), T(inline_baseline),
	  T(inline_baseline_on_one_line_after_non_ascii),
	  T(inline_baseline_error_points_into_the_file),
	  T(inline_baseline_root_errors_and_warnings), T(error_messages),
	  T(missing_profile_names_both_places), T(fixtures), T(parse_with_lookup), T(teardown))
