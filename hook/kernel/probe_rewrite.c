// SPDX-License-Identifier: Apache-2.0
#include "kernel/probe_rewrite.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile/compile.h"
#include "kernel/cgroup.h"
#include "kernel/fault.h"
#include "kernel/guard.h"
#include "kernel/probe.h"

#define PROBE_REWRITE "sg-rewrite-probe"

/* One rule: kernel.domainname may be written and is rewritten to PROBE_REWRITE. */
static int compile_probe_policy(struct sg_compiled *out, struct sg_err *err)
{
	struct sg_rule rule = {
	    .name = "kernel.domainname",
	    .pattern = "kernel/domainname",
	    .is_literal = true,
	    .access = SG_ACCESS_READ_WRITE,
	    .rewrite = PROBE_REWRITE,
	};
	struct sg_policy_set set = {.n_layers = 1};
	set.layers[0] = (struct sg_policy){
	    .origin = "rewrite probe",
	    .mode = SG_MODE_ENFORCE,
	    .default_access = SG_ACCESS_READ_WRITE,
	    .rules = &rule,
	    .n_rules = 1,
	};
	int r = sg_compile(&set, out, err);
	if (r == 0)
		out->config.rewrite_works = 1;
	return r;
}

/* In the child: a new UTS namespace, into the cgroup, write, read back. */
static int probe_child(const char *procs)
{
	char buf[128] = "";
	int fd;

	if (unshare(CLONE_NEWUTS) < 0)
		return 3;
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		return 3;
	close(fd);
	fd = open("/proc/sys/kernel/domainname", O_WRONLY | O_CLOEXEC);
	/* A rewritten write reports the length of the value the kernel stored. */
	if (fd < 0 || write(fd, "sg-original", 11) <= 0)
		return 3;
	close(fd);
	fd = open("/proc/sys/kernel/domainname", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return 3;
	close(fd);
	return strncmp(buf, PROBE_REWRITE, strlen(PROBE_REWRITE)) == 0 ? 0 : 1;
}

static int run_probe(bool *works, struct sg_err *err)
{
	struct sg_compiled compiled = {0};
	struct sg_guard_meta meta = {0};
	char mount[PATH_MAX], cgdir[PATH_MAX], procs[PATH_MAX + 16];
	int r, status;

	r = sg_cgroup2_mount(mount, err);
	if (r < 0)
		return r;
	r = compile_probe_policy(&compiled, err);
	if (r < 0)
		return r;
	snprintf(cgdir, sizeof(cgdir), "%s/sysctl-guard-probe-%d", mount, (int)getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgdir);
	if (mkdir(cgdir, 0700) < 0) {
		sg_compiled_free(&compiled);
		return sg_system_error(err, errno, "rewrite probe: cannot create cgroup %s: %s",
				       cgdir, strerror(errno));
	}
	struct sg_guard_options options = {.description = "rewrite probe"};
	struct sg_policy_request request = {.compiled = &compiled};
	r = sg_guard_attach(cgdir, &request, &options, &meta, err);
	sg_compiled_free(&compiled);
	if (r == 0) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(probe_child(procs));
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) > 1)
			r = sg_system_error(err, EIO, "rewrite probe: the probing child failed");
		else
			*works = WEXITSTATUS(status) == 0;
		bool found;
		struct sg_err ignored = {0};
		sg_guard_detach(cgdir, &found, &ignored);
	}
	rmdir(cgdir);
	return r;
}

int sg_probe_rewrite(bool *works, struct sg_err *err)
{
	/* The test seam's answer is this process's only: the cache keeps the kernel's. */
	if (sg_injected_fault("rewrite")) {
		*works = false;
		return 0;
	}
	int cached = sg_probe_cached_rewrite();
	if (cached >= 0) {
		*works = cached;
		return 0;
	}
	int r = run_probe(works, err);
	if (r == 0)
		sg_probe_cache_rewrite(*works);
	return r;
}

int sg_probe_kernel(bool *rewrite_works, struct sg_err *err)
{
	const char *missing = sg_probe_missing_feature();
	if (missing)
		return sg_unsupported_error(err, EOPNOTSUPP,
					    "this kernel lacks %s, which guarding needs", missing);
	return sg_probe_rewrite(rewrite_works, err);
}
