// SPDX-License-Identifier: Apache-2.0
/*
 * The node configuration (sg_node_config_load), read from a file as the hook
 * does: the input goes into a memfd opened through /proc/self/fd/N. A valid
 * configuration's baseline is composed and compiled like the hook's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "policy/compose.h"
#include "compile/compile.h"
#include "oci/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_node_config: %s: %s\n", what, detail ? detail : "");
	abort();
}

/* One file for the whole run, rewritten for each input. */
static const char *config_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("sysctl-guard-fuzz-config.json", MFD_CLOEXEC);
		if (fd < 0)
			fail("memfd_create", strerror(errno));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0)
		fail("ftruncate", strerror(errno));
	for (size_t done = 0; done < size;) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
		if (n <= 0)
			fail("pwrite", strerror(errno));
		done += (size_t)n;
	}
	return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sg_node_config config;
	struct sg_policy_set set = {0};
	struct sg_compiled compiled = {0};
	struct sg_err err = {0};

	if (size > (1u << 20))
		return 0;
	const char *path = config_file(data, size);
	int r = sg_node_config_load(path, &config, &err);
	if (r < 0) {
		if (r != -EINVAL || strncmp(err.msg, path, strlen(path)) != 0)
			fail("an error that does not name the file", err.msg);
		sg_node_config_free(&config);
		return 0;
	}
	if (!config.path || strcmp(config.path, path) != 0)
		fail("path is not the file read", config.path);
	if (!config.profiles_dir || config.profiles_dir[0] != '/')
		fail("profiles_dir is not absolute", config.profiles_dir);
	if ((config.baseline != NULL) != (config.baseline_label != NULL))
		fail("a baseline without a label, or the reverse", config.baseline_label);
	if (config.baseline) {
		r = sg_policy_set_compose(config.baseline, config.baseline_label, NULL, NULL, NULL,
					  NULL, 0, &set, &err);
		if (r < 0)
			fail("the baseline does not compose", err.msg);
		if (sg_compile(&set, &compiled, &err) < 0 && !err.msg[0])
			fail("compilation failed without a message", NULL);
	}
	sg_compiled_free(&compiled);
	sg_policy_set_free(&set);
	sg_node_config_free(&config);
	return 0;
}
