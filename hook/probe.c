// SPDX-License-Identifier: Apache-2.0
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <bpf/libbpf.h>

#include "cgroup.h"
#include "compile.h"
#include "guard.h"
#include "log.h"
#include "util.h"

#define PROBE_REWRITE "sg-rewrite-probe"

bool sg_probe_sysctl_hook(void)
{
	static int supported = -1;
	if (supported < 0)
		supported = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SYSCTL, NULL) == 1;
	return supported;
}

bool sg_probe_task_helpers(void)
{
	static int allowed = -1;
	if (allowed < 0)
		allowed = libbpf_probe_bpf_helper(BPF_PROG_TYPE_CGROUP_SYSCTL,
						  BPF_FUNC_get_current_comm, NULL) == 1 &&
			  libbpf_probe_bpf_helper(BPF_PROG_TYPE_CGROUP_SYSCTL,
						  BPF_FUNC_get_current_pid_tgid, NULL) == 1 &&
			  libbpf_probe_bpf_helper(BPF_PROG_TYPE_CGROUP_SYSCTL,
						  BPF_FUNC_get_current_cgroup_id, NULL) == 1;
	return allowed;
}

static void read_boot_id(char out[64])
{
	_cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	out[0] = '\0';
	if (f && fgets(out, 64, f))
		out[strcspn(out, "\n")] = '\0';
}

/* The cache holds "BOOT_ID rewrite=0|1". */
static int cache_lookup(const char *boot_id, bool *works)
{
	char line[128], id[64];
	int value;
	_cleanup_fclose_ FILE *f = fopen(SG_PROBE_CACHE, "re");

	if (!f || !fgets(line, sizeof(line), f))
		return -ENOENT;
	if (sscanf(line, "%63s rewrite=%d", id, &value) != 2 || strcmp(id, boot_id) != 0)
		return -ENOENT;
	*works = value == 1;
	return 0;
}

static void cache_store(const char *boot_id, bool works)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s.%d", SG_PROBE_CACHE, (int)getpid());
	mkdir(SG_RUN_DIR, 0755);
	_cleanup_fclose_ FILE *f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%s rewrite=%d\n", boot_id, works ? 1 : 0);
	if (fflush(f) == 0 && rename(tmp, SG_PROBE_CACHE) == 0)
		return;
	unlink(tmp);
}

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
	r = sg_guard_attach(cgdir, &compiled, &options, &meta, err);
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
	static int cached = -1;
	char boot_id[64];

	if (cached >= 0) {
		*works = cached;
		return 0;
	}
	read_boot_id(boot_id);
	if (boot_id[0] && cache_lookup(boot_id, works) == 0) {
		cached = *works;
		return 0;
	}
	int r = run_probe(works, err);
	if (r < 0)
		return r;
	cached = *works;
	if (boot_id[0])
		cache_store(boot_id, *works);
	return 0;
}
