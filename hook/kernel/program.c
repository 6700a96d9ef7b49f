// SPDX-License-Identifier: Apache-2.0
#include "kernel/program.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/sysctl_guard.h"
#include "base/util.h"
#include "kernel/fault.h"
#include "kernel/map.h"
#include "kernel/probe.h"
#include "sysctl_guard.skel.h"
#include "sysctl_guard_digest.h"

#define SG_EVENTS_PIN	SG_PIN_ROOT "/events"
#define SG_EVENTS_BYTES (256 * 1024)

/*
 * libbpf's warnings, the verifier log among them, for the error message. The
 * verifier's verdict is at the end of its log, so the tail is kept.
 */
static char libbpf_log[16384];
static size_t libbpf_log_len;

static int capture_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	_cleanup_free_ char *msg = NULL;

	if (level == LIBBPF_DEBUG || vasprintf(&msg, fmt, ap) < 0)
		return 0;
	/* A verifier log arrives in one piece: keep its end. */
	size_t len = strlen(msg);
	const char *line = msg;
	if (len > sizeof(libbpf_log) / 2) {
		line += len - sizeof(libbpf_log) / 2;
		len = sizeof(libbpf_log) / 2;
	}
	if (libbpf_log_len + len >= sizeof(libbpf_log)) {
		size_t drop = libbpf_log_len + len - sizeof(libbpf_log) + sizeof(libbpf_log) / 2;
		if (drop > libbpf_log_len)
			drop = libbpf_log_len;
		memmove(libbpf_log, libbpf_log + drop, libbpf_log_len - drop);
		libbpf_log_len -= drop;
	}
	memcpy(libbpf_log + libbpf_log_len, line, len);
	libbpf_log_len += len;
	libbpf_log[libbpf_log_len] = '\0';
	return 0;
}

/* The last lines of the captured log: what the verifier said last. */
static const char *libbpf_log_tail(void)
{
	const size_t keep = 2048;
	const char *tail = libbpf_log_len > keep ? libbpf_log + libbpf_log_len - keep : libbpf_log;
	const char *nl = tail == libbpf_log ? NULL : strchr(tail, '\n');
	return nl ? nl + 1 : tail;
}

static void destroy_skel(struct sysctl_guard **skel)
{
	sysctl_guard__destroy(*skel);
}

int sg_bpffs_prepare(struct sg_err *err)
{
	struct statfs sfs;

	if (sg_injected_fault("bpffs"))
		return sg_system_error(err, EIO, "bpffs: injected fault");
	if (statfs(SG_BPFFS_ROOT, &sfs) < 0 || sfs.f_type != BPF_FS_MAGIC) {
		mkdir(SG_BPFFS_ROOT, 0700);
		if (mount("bpf", SG_BPFFS_ROOT, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "mode=0700") < 0)
			return sg_kernel_error(err, errno,
					       "bpffs is not mounted at " SG_BPFFS_ROOT
					       " and mounting it failed: %s",
					       strerror(errno));
	}
	const char *const dirs[] = {SG_PIN_ROOT, SG_PROGRAM_ROOT, SG_POLICY_ROOT,
				    SG_CONTAINER_ROOT};
	for (size_t i = 0; i < SG_ARRAY_SIZE(dirs); i++)
		if (mkdir(dirs[i], 0700) < 0 && errno != EEXIST)
			return sg_system_error(err, errno, "cannot create %s: %s", dirs[i],
					       strerror(errno));
	return 0;
}

int sg_events_open(struct sg_err *err)
{
	int r = sg_bpffs_prepare(err);
	if (r < 0)
		return r;
	int fd = bpf_obj_get(SG_EVENTS_PIN);
	if (fd >= 0)
		return fd;
	fd = sg_map_create(BPF_MAP_TYPE_RINGBUF, "sg_events", 0, 0, SG_EVENTS_BYTES, 0);
	if (fd < 0)
		return sg_kernel_error(err, errno, "cannot create the events ring buffer: %s",
				       strerror(errno));
	/* A hook racing this one may have pinned its buffer first: use that. */
	if (bpf_obj_pin(fd, SG_EVENTS_PIN) < 0) {
		int e = errno;
		close(fd);
		fd = e == EEXIST ? bpf_obj_get(SG_EVENTS_PIN) : -1;
		if (fd < 0)
			return sg_system_error(err, e, "cannot pin %s: %s", SG_EVENTS_PIN,
					       strerror(e));
	}
	return fd;
}

const char *const sg_outer_names[SG_OUTER_COUNT] = {SG_OUTER_NAMES};

/*
 * The program's key: its object's digest and the event format. Kernel
 * features are not in it: bpffs pins do not outlive a boot, and the features
 * were probed when the pinned program was loaded, in this boot.
 */
void sg_program_key(char out[SG_KEY_LEN])
{
	snprintf(out, SG_KEY_LEN, "%s-%u", SG_PROGRAM_DIGEST, SG_EVENT_VERSION);
}

/* Every guard reports into the node's ring buffer, so one `monitor` sees them all. */
static int share_events(struct sysctl_guard *skel, struct sg_err *err)
{
	_cleanup_close_ int fd = sg_events_open(err);
	if (fd < 0)
		return fd;
	if (bpf_map__reuse_fd(skel->maps.events, fd) < 0)
		return sg_system_error(err, errno, "cannot share the events ring buffer: %s",
				       strerror(errno));
	return 0;
}

static void report_verifier_stats(struct sysctl_guard *skel)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (getenv("SYSCTL_GUARD_VERIFIER_STATS") &&
	    bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.sysctl_guard), &info, &len) == 0)
		fprintf(stderr, "verified_insns %u xlated %u\n", info.verified_insns,
			info.xlated_prog_len / 8);
}

static int load(const struct sg_program_config *features, struct sysctl_guard **out,
		struct sg_err *err)
{
	__attribute__((cleanup(destroy_skel))) struct sysctl_guard *skel = NULL;
	int r;

	libbpf_log_len = 0;
	libbpf_log[0] = '\0';
	libbpf_set_print(capture_libbpf);

	skel = sysctl_guard__open();
	if (!skel)
		return sg_system_error(err, errno, "cannot open the BPF program: %s",
				       strerror(errno));
	memcpy((void *)&skel->rodata->program_config, features, sizeof(*features));
	r = sg_injected_fault("map_create");
	if (r < 0)
		return sg_system_error(err, -r, "cannot create the BPF maps: %s", strerror(-r));
	r = share_events(skel, err);
	if (r < 0)
		return r;
	/* prog_load: refused as a kernel without cgroup sysctl programs refuses it */
	r = sg_injected_fault("prog_load") ? -EINVAL : 0;
	if (r == 0)
		r = sysctl_guard__load(skel);
	if (r < 0)
		return sg_kernel_error(
		    err, -r,
		    "the kernel refused the BPF program (%s): sysctl-guard needs "
		    "Linux 5.12 or later with CONFIG_CGROUP_BPF (cgroup sysctl "
		    "programs, inner maps of their own size, atomic exchange)%s%s",
		    strerror(-r), libbpf_log_len ? "\n" : "", libbpf_log_tail());
	report_verifier_stats(skel);
	uint64_t secret[2];
	uint32_t zero = 0;
	if (getrandom(secret, sizeof(secret), 0) != sizeof(secret) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.secret), &zero, secret, BPF_ANY) < 0)
		return sg_system_error(err, errno, "cannot make the node's secret key: %s",
				       strerror(errno));
	*out = SG_TAKE(skel);
	return 0;
}

int sg_unpin_dir(const char *dir)
{
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	/* Every pin, whatever the version that made the directory pinned there. */
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
			ret = -errno;
	}
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT)
		ret = -errno;
	return ret;
}

int sg_program_unpin(const char *key)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/%s", SG_PROGRAM_ROOT, key);
	return sg_unpin_dir(dir);
}

static int pin_all(struct sysctl_guard *skel, const char *dir)
{
	const struct {
		const char *name;
		struct bpf_map *map;
	} pins[] = {
	    {"guard", skel->maps.guard},
	    {"seen", skel->maps.seen},
	    {"slots", skel->maps.slots},
	    {"secret", skel->maps.secret},
	    {"inputs", skel->maps.inputs},
	    {sg_outer_names[SG_OUTER_TABLES], skel->maps.policy_tables},
	    {sg_outer_names[SG_OUTER_EXACT_LONG], skel->maps.policy_exact_long},
	};
	char path[PATH_MAX];

	if (mkdir(dir, 0700) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/prog", dir);
	if (sg_injected_fault("pin"))
		return -EIO;
	if (bpf_program__pin(skel->progs.sysctl_guard, path) < 0)
		return -errno;
	for (size_t i = 0; i < SG_ARRAY_SIZE(pins); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pins[i].name);
		if (bpf_map__pin(pins[i].map, path) < 0)
			return -errno;
	}
	return 0;
}

int sg_program_open_map(const char *key, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/%s", SG_PROGRAM_ROOT, key, name);
	return bpf_obj_get(path);
}

void sg_program_init(struct sg_program *p)
{
	memset(p, 0, sizeof(*p));
	p->prog_fd = p->guard_fd = p->slots_fd = -1;
	for (size_t i = 0; i < SG_OUTER_COUNT; i++)
		p->outer_fds[i] = -1;
}

int sg_program_open(const char *key, struct sg_program *p)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info), zero = 0;

	sg_program_init(p);
	snprintf(p->key, sizeof(p->key), "%s", key);
	p->prog_fd = sg_program_open_map(key, "prog");
	p->guard_fd = sg_program_open_map(key, "guard");
	_cleanup_close_ int secret_fd = sg_program_open_map(key, "secret");
	/* Another build's program may keep other values in its guards' storage. */
	if (p->prog_fd >= 0 && p->guard_fd >= 0 &&
	    sg_map_shape_is(p->guard_fd, sizeof(struct bpf_cgroup_storage_key),
			    sizeof(struct sg_guard_storage)) &&
	    bpf_obj_get_info_by_fd(p->prog_fd, &info, &len) == 0 &&
	    sg_map_lookup_sized(secret_fd, &zero, sizeof(zero), p->secret, sizeof(p->secret)) ==
		0) {
		p->id = info.id;
		return 0;
	}
	sg_program_close(p);
	return -ENOENT;
}

int sg_program_open_slots(struct sg_program *p)
{
	if (p->slots_fd < 0)
		p->slots_fd = sg_program_open_map(p->key, "slots");
	bool all = p->slots_fd >= 0 && sg_map_shape_is(p->slots_fd, sizeof(uint32_t), SG_KEY_LEN);
	for (size_t i = 0; i < SG_OUTER_COUNT; i++) {
		if (p->outer_fds[i] < 0)
			p->outer_fds[i] = sg_program_open_map(p->key, sg_outer_names[i]);
		all = all && p->outer_fds[i] >= 0;
	}
	return all ? 0 : -ENOENT;
}

int sg_program_get(struct sg_program *out, struct sg_err *err)
{
	__attribute__((cleanup(destroy_skel))) struct sysctl_guard *skel = NULL;
	char key[SG_KEY_LEN], staging[PATH_MAX], final_dir[PATH_MAX];

	sg_program_key(key);
	/* The prog_load fault makes the load run, and fail, even where one is pinned. */
	if (!sg_injected_fault("prog_load") && sg_program_open(key, out) == 0)
		return 0;

	struct sg_program_config features = {.task_helpers = sg_probe_task_helpers()};
	int r = load(&features, &skel, err);
	if (r < 0)
		return r;
	/* Pinned whole or not at all: built aside, then renamed into place. */
	snprintf(final_dir, sizeof(final_dir), "%s/%s", SG_PROGRAM_ROOT, key);
	snprintf(staging, sizeof(staging), "%s/%s%d-%s", SG_PROGRAM_ROOT, SG_STAGING_PREFIX,
		 (int)getpid(), key);
	sg_unpin_dir(staging);
	r = pin_all(skel, staging);
	if (r == 0 && rename(staging, final_dir) < 0)
		r = -errno;
	if (r < 0) {
		sg_unpin_dir(staging);
		/* Another hook pinned it first: share theirs. */
		if (sg_program_open(key, out) == 0)
			return 0;
		return sg_system_error(err, -r, "cannot pin the BPF program in %s: %s", final_dir,
				       strerror(-r));
	}
	if (sg_program_open(key, out) < 0)
		return sg_system_error(err, ENOENT, "%s vanished", final_dir);
	return 0;
}

void sg_program_close(struct sg_program *p)
{
	int *fds[] = {&p->prog_fd, &p->guard_fd, &p->slots_fd};
	for (size_t i = 0; i < SG_ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	for (size_t i = 0; i < SG_OUTER_COUNT; i++) {
		if (p->outer_fds[i] >= 0)
			close(p->outer_fds[i]);
		p->outer_fds[i] = -1;
	}
}

int sg_pins_lock(bool exclusive)
{
	int fd = open(SG_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, exclusive ? LOCK_EX : LOCK_SH) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}
