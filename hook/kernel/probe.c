// SPDX-License-Identifier: Apache-2.0
#include "kernel/probe.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "base/util.h"
#include "kernel/fault.h"
#include "kernel/map.h"

/*
 * What this boot's kernel can do, as the cache line "BOOT_ID rewrite=0|1
 * sysctl_hook=0|1 task_helpers=0|1" records it. The two load probes cost the
 * hook four program verifications per run, so they are cached with the
 * rewrite probe (sysctl_hook= says whether the kernel has every feature
 * guarding needs). rewrite= stays the first field: older binaries read only
 * that one. Fields this binary does not know (another binary's) are ignored,
 * and go when it writes the line.
 */
enum {
	FACT_UNKNOWN = -1,
	FACT_FAILED = -2, /* the probe itself failed: "no" for this run, not cached */
};
struct probe_facts {
	int rewrite;
	int sysctl_hook;
	int task_helpers;
};

static struct probe_facts facts = {FACT_UNKNOWN, FACT_UNKNOWN, FACT_UNKNOWN};
static char boot_id[64];

static void read_boot_id(char out[64])
{
	_cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	out[0] = '\0';
	if (f && fgets(out, 64, f))
		out[strcspn(out, "\n")] = '\0';
}

/* Where the value of " KEY=" starts in @line, or NULL. */
static const char *cached_value(const char *line, const char *key)
{
	char needle[32];
	snprintf(needle, sizeof(needle), " %s=", key);
	const char *p = strstr(line, needle);
	return p ? p + strlen(needle) : NULL;
}

static bool field_ends(char c)
{
	return c == ' ' || c == '\n' || c == '\0';
}

/* The value of " KEY=0|1" in @line, or FACT_UNKNOWN. */
static int cached_flag(const char *line, const char *key)
{
	const char *p = cached_value(line, key);
	return p && (*p == '0' || *p == '1') && field_ends(p[1]) ? *p - '0' : FACT_UNKNOWN;
}

/* The cache's facts into *@out; a line of another boot counts as none. */
static void facts_read(struct probe_facts *out)
{
	char line[256], id[64];

	_cleanup_fclose_ FILE *f = boot_id[0] ? fopen(SG_PROBE_CACHE, "re") : NULL;
	if (!f || !fgets(line, sizeof(line), f) || sscanf(line, "%63s", id) != 1 ||
	    strcmp(id, boot_id) != 0)
		return;
	out->rewrite = cached_flag(line, "rewrite");
	out->sysctl_hook = cached_flag(line, "sysctl_hook");
	out->task_helpers = cached_flag(line, "task_helpers");
}

/* Reads the cache once per process. */
static void facts_load(void)
{
	static bool loaded;

	if (loaded)
		return;
	loaded = true;
	read_boot_id(boot_id);
	facts_read(&facts);
}

static void append_flag(char *line, size_t cap, const char *key, int value)
{
	if (value == 0 || value == 1)
		snprintf(line + strlen(line), cap - strlen(line), " %s=%d", key, value);
}

/* Writes what is known so far; a hook racing this one writes the same facts. */
static void facts_store(void)
{
	char tmp[PATH_MAX], line[256];

	if (!boot_id[0])
		return;
	snprintf(line, sizeof(line), "%s", boot_id);
	append_flag(line, sizeof(line), "rewrite", facts.rewrite);
	append_flag(line, sizeof(line), "sysctl_hook", facts.sysctl_hook);
	append_flag(line, sizeof(line), "task_helpers", facts.task_helpers);
	snprintf(tmp, sizeof(tmp), "%s.%d", SG_PROBE_CACHE, (int)getpid());
	mkdir(SG_RUN_DIR, 0755);
	_cleanup_fclose_ FILE *f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%s\n", line);
	if (fflush(f) != 0 || rename(tmp, SG_PROBE_CACHE) != 0)
		unlink(tmp);
}

/* A libbpf probe's 1 (yes) or 0 (no) is the kernel's answer; an error is not. */
static int fact_of(int probe_result)
{
	return probe_result == 0 || probe_result == 1 ? probe_result : FACT_FAILED;
}

/* A kernel before 5.10 refuses the flag: an inner array's size was its template's. */
static int probe_inner_map_flag(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sg_probe", 4, 4, 1, &opts);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EINVAL ? 0 : -errno;
}

static int probe_sysctl_programs(void)
{
	return libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SYSCTL, NULL);
}

static int probe_ring_buffers(void)
{
	if (sg_injected_fault("no_ringbuf"))
		return 0;
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
}

/* What guarding needs of the kernel, oldest first, each with the release that brought it. */
static const struct {
	const char *what;
	int (*probe)(void);
} needed_features[] = {
    {"BPF_PROG_TYPE_CGROUP_SYSCTL programs (Linux 5.2 with CONFIG_CGROUP_BPF)",
     probe_sysctl_programs},
    {"BPF ring buffers (Linux 5.8)", probe_ring_buffers},
    {"inner maps sized each their own, BPF_F_INNER_MAP (Linux 5.10)", probe_inner_map_flag},
};

const char *sg_probe_missing_feature(void)
{
	/* The test seam's answer is this process's only: the cache keeps the kernel's. */
	const bool seam = sg_injected_fault("no_ringbuf");
	facts_load();
	if (facts.sysctl_hook == 1 && !seam)
		return NULL;
	int answer = 1;
	const char *missing = NULL;
	for (size_t i = 0; i < SG_ARRAY_SIZE(needed_features) && answer == 1; i++) {
		answer = fact_of(needed_features[i].probe());
		if (answer != 1)
			missing = needed_features[i].what;
	}
	if (!seam) {
		facts.sysctl_hook = answer;
		facts_store();
	}
	return missing;
}

bool sg_probe_task_helpers(void)
{
	static const enum bpf_func_id helpers[] = {
	    BPF_FUNC_get_current_comm,
	    BPF_FUNC_get_current_pid_tgid,
	    BPF_FUNC_get_current_cgroup_id,
	};

	facts_load();
	if (facts.task_helpers == FACT_UNKNOWN) {
		facts.task_helpers = 1;
		for (size_t i = 0; i < SG_ARRAY_SIZE(helpers) && facts.task_helpers == 1; i++)
			facts.task_helpers = fact_of(
			    libbpf_probe_bpf_helper(BPF_PROG_TYPE_CGROUP_SYSCTL, helpers[i], NULL));
		facts_store();
	}
	return facts.task_helpers == 1;
}

int sg_probe_cached_rewrite(void)
{
	facts_load();
	return facts.rewrite == 0 || facts.rewrite == 1 ? facts.rewrite : -1;
}

void sg_probe_cache_rewrite(bool works)
{
	facts_load();
	facts.rewrite = works;
	facts_store();
}
