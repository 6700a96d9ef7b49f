// SPDX-License-Identifier: Apache-2.0
#include "program.h"

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
#include <sys/vfs.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../bpf/sysctl_guard.h"
#include "eval.h"
#include "util.h"
#include "sysctl_guard.skel.h"

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

int sg_injected_fault(const char *step)
{
	const char *list = getenv("SYSCTL_GUARD_FAULT");
	size_t len = strlen(step);

	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
		if (strncmp(p, step, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return -EIO;
	return 0;
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
	if (statfs("/sys/fs/bpf", &sfs) < 0 || sfs.f_type != BPF_FS_MAGIC) {
		mkdir("/sys/fs/bpf", 0700);
		if (mount("bpf", "/sys/fs/bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "mode=0700") < 0)
			return sg_system_error(
			    err, errno,
			    "bpffs is not mounted at /sys/fs/bpf and mounting it "
			    "failed: %s",
			    strerror(errno));
	}
	if ((mkdir(SG_PIN_ROOT, 0700) < 0 && errno != EEXIST) ||
	    (mkdir(SG_POLICY_ROOT, 0700) < 0 && errno != EEXIST))
		return sg_system_error(err, errno, "cannot create %s: %s", SG_POLICY_ROOT,
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
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "sg_events", 0, 0, SG_EVENTS_BYTES, NULL);
	if (fd < 0)
		return sg_system_error(err, errno, "cannot create the events ring buffer: %s",
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

void sg_policy_key(const struct sg_compiled *c, char out[SG_POLICY_KEY_LEN])
{
	uint64_t h = 0xcbf29ce484222325ull;
#define HASH_BYTES(ptr, len)                                                                       \
	do {                                                                                       \
		const unsigned char *_p = (const unsigned char *)(ptr);                            \
		for (size_t _i = 0; _i < (len); _i++)                                              \
			h = (h ^ _p[_i]) * 0x100000001b3ull;                                       \
	} while (0)
	/* The whole config: kernel features (rewrite_works, task helpers) make programs differ. */
	const uint32_t format = SG_EVENT_VERSION;
	HASH_BYTES(&format, sizeof(format));
	HASH_BYTES(&c->config, sizeof(c->config));
	HASH_BYTES(c->transitions, (size_t)c->n_states * c->config.n_classes * sizeof(uint32_t));
	HASH_BYTES(c->accept, (size_t)c->n_states * sizeof(uint32_t));
	HASH_BYTES(c->rules, (size_t)c->config.n_rules * sizeof(*c->rules));
	HASH_BYTES(c->exact_keys, c->n_exact * sizeof(*c->exact_keys));
	HASH_BYTES(c->exact_rules, c->n_exact * sizeof(*c->exact_rules));
	HASH_BYTES(c->value_keys, c->n_values * sizeof(*c->value_keys));
#undef HASH_BYTES
	snprintf(out, SG_POLICY_KEY_LEN, "%016llx", (unsigned long long)h);
}

static uint32_t at_least_one(size_t n)
{
	return n ? (uint32_t)n : 1;
}

static int size_maps(struct sysctl_guard *skel, const struct sg_compiled *c)
{
	uint32_t rows = c->config.n_rules + c->config.n_layers + SG_EXTRA_COUNTER_ROWS;
	struct {
		struct bpf_map *map;
		size_t entries;
	} sizes[] = {
	    {skel->maps.exact_names, c->n_exact},
	    {skel->maps.dfa_next, (size_t)c->n_states * c->config.n_classes},
	    {skel->maps.dfa_accept, c->n_states},
	    {skel->maps.rules, c->config.n_rules},
	    {skel->maps.rule_values, c->n_values},
	    {skel->maps.counters, (size_t)rows * SG_VERDICT_COUNT},
	};
	for (size_t i = 0; i < SG_ARRAY_SIZE(sizes); i++) {
		int r = bpf_map__set_max_entries(sizes[i].map, at_least_one(sizes[i].entries));
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * One BPF_MAP_UPDATE_BATCH call per table where the kernel has it (5.6+),
 * element by element otherwise: a policy's tables are thousands of entries.
 */
int sg_map_update_all(int fd, const void *keys, size_t key_size, const void *values,
		      size_t value_size, size_t n, uint64_t flags)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = flags);
	uint32_t count = (uint32_t)n;

	if (n == 0)
		return 0;
	if (bpf_map_update_batch(fd, keys, values, &count, &opts) == 0 && count == n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, (const char *)keys + i * key_size,
					(const char *)values + i * value_size, flags) < 0)
			return -errno;
	return 0;
}

/* An array map's entries; zero entries are skipped, the kernel zeroes arrays. */
static int fill_array(struct bpf_map *map, const void *values, size_t value_size, size_t n)
{
	_cleanup_free_ uint32_t *keys = sg_xcalloc(n, sizeof(uint32_t));
	_cleanup_free_ char *packed = sg_xcalloc(n, value_size);
	_cleanup_free_ char *zero = sg_xcalloc(1, value_size);
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		const char *v = (const char *)values + i * value_size;
		if (memcmp(v, zero, value_size) == 0)
			continue;
		keys[used] = (uint32_t)i;
		memcpy(packed + used * value_size, v, value_size);
		used++;
	}
	return sg_map_update_all(bpf_map__fd(map), keys, sizeof(uint32_t), packed, value_size, used,
				 BPF_ANY);
}

static int fill_hash(struct bpf_map *map, const void *keys, size_t key_size, const void *values,
		     size_t value_size, size_t n)
{
	/* Batches take no BPF_NOEXIST; the compiler never repeats a key. */
	return sg_map_update_all(bpf_map__fd(map), keys, key_size, values, value_size, n, BPF_ANY);
}

static int fill_tables(struct sysctl_guard *skel, const struct sg_compiled *c,
		       const __u64 hash_key[2])
{
	int r = fill_array(skel->maps.dfa_next, c->transitions, sizeof(uint32_t),
			   (size_t)c->n_states * c->config.n_classes);
	if (!r)
		r = fill_array(skel->maps.dfa_accept, c->accept, sizeof(uint32_t), c->n_states);
	if (!r)
		r = fill_array(skel->maps.rules, c->rules, sizeof(*c->rules), c->config.n_rules);
	if (!r)
		r = fill_hash(skel->maps.exact_names, c->exact_keys, sizeof(*c->exact_keys),
			      c->exact_rules, sizeof(uint32_t), c->n_exact);
	if (r)
		return r;

	/* The kernel's values table is keyed by the values' hashes under this program's key. */
	_cleanup_free_ struct sg_value_hash_key *hashes = sg_xcalloc(c->n_values, sizeof(*hashes));
	_cleanup_free_ uint8_t *ones = sg_xcalloc(c->n_values, 1);
	for (size_t i = 0; i < c->n_values; i++) {
		hashes[i].rule = c->value_keys[i].rule;
		hashes[i].hash = sg_value_hash(hash_key, c->value_keys[i].value);
		ones[i] = 1;
	}
	return fill_hash(skel->maps.rule_values, hashes, sizeof(*hashes), ones, 1, c->n_values);
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

static int load(const struct sg_compiled *c, struct sysctl_guard **out, struct sg_err *err)
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
	struct sg_config config = c->config;
	if (getrandom(config.hash_key, sizeof(config.hash_key), 0) != sizeof(config.hash_key))
		return sg_system_error(err, errno, "cannot get random bytes: %s", strerror(errno));
	memcpy((void *)&skel->rodata->config, &config, sizeof(config));
	memcpy(skel->bss->hash_key, config.hash_key, sizeof(config.hash_key));
	r = size_maps(skel, c);
	if (r == 0)
		r = sg_injected_fault("map_create");
	if (r < 0)
		return sg_system_error(err, -r, "cannot size the BPF maps: %s", strerror(-r));
	r = share_events(skel, err);
	if (r < 0)
		return r;
	r = sg_injected_fault("prog_load");
	if (r == 0)
		r = sysctl_guard__load(skel);
	if (r < 0)
		return sg_system_error(err, -r,
				       "the kernel refused the BPF program (%s); does it support "
				       "BPF_PROG_TYPE_CGROUP_SYSCTL (Linux 5.2+)?%s%s",
				       strerror(-r), libbpf_log_len ? "\n" : "", libbpf_log_tail());
	report_verifier_stats(skel);
	r = sg_injected_fault("map_update");
	if (r == 0)
		r = fill_tables(skel, c, config.hash_key);
	if (r < 0)
		return sg_system_error(err, -r, "cannot fill the policy maps: %s", strerror(-r));
	*out = SG_TAKE(skel);
	return 0;
}

int sg_unpin_dir(const char *dir, const char *const *names, size_t n)
{
	char path[PATH_MAX];
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (unlink(path) < 0 && errno != ENOENT)
			ret = -errno;
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		ret = -errno;
	return ret;
}

static int unpin_dir(const char *dir)
{
	static const char *const pins[] = {"prog", "guard", "totals", "counters", "seen"};
	return sg_unpin_dir(dir, pins, SG_ARRAY_SIZE(pins));
}

int sg_program_unpin(const char *key)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/%s", SG_POLICY_ROOT, key);
	return unpin_dir(dir);
}

static int pin_all(struct sysctl_guard *skel, const char *dir)
{
	char path[PATH_MAX];
	static const char *const names[] = {"guard", "totals", "counters", "seen"};
	struct bpf_map *maps[] = {skel->maps.guard, skel->maps.totals, skel->maps.counters,
				  skel->maps.seen};

	if (mkdir(dir, 0700) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/prog", dir);
	if (sg_injected_fault("pin"))
		return -EIO;
	if (bpf_program__pin(skel->progs.sysctl_guard, path) < 0)
		return -errno;
	for (size_t i = 0; i < SG_ARRAY_SIZE(maps); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (bpf_map__pin(maps[i], path) < 0)
			return -errno;
	}
	return 0;
}

int sg_program_open_map(const char *key, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/%s", SG_POLICY_ROOT, key, name);
	return bpf_obj_get(path);
}

static int open_pinned(struct sg_program *p)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/prog", SG_POLICY_ROOT, p->key);
	p->prog_fd = bpf_obj_get(path);
	p->guard_fd = sg_program_open_map(p->key, "guard");
	p->totals_fd = sg_program_open_map(p->key, "totals");
	if (p->prog_fd >= 0 && p->guard_fd >= 0 && p->totals_fd >= 0)
		return 0;
	sg_program_close(p);
	return -ENOENT;
}

int sg_program_get(const struct sg_compiled *c, struct sg_program *out, struct sg_err *err)
{
	__attribute__((cleanup(destroy_skel))) struct sysctl_guard *skel = NULL;
	char staging[PATH_MAX], final_dir[PATH_MAX];

	memset(out, 0, sizeof(*out));
	out->prog_fd = out->guard_fd = out->totals_fd = -1;
	sg_policy_key(c, out->key);
	if (open_pinned(out) == 0)
		return 0;

	int r = load(c, &skel, err);
	if (r < 0)
		return r;
	/* Pinned whole or not at all: built aside, then renamed into place. */
	snprintf(final_dir, sizeof(final_dir), "%s/%s", SG_POLICY_ROOT, out->key);
	snprintf(staging, sizeof(staging), "%s/staging-%d-%s", SG_POLICY_ROOT, (int)getpid(),
		 out->key);
	unpin_dir(staging);
	r = pin_all(skel, staging);
	if (r == 0 && rename(staging, final_dir) < 0)
		r = -errno;
	if (r < 0) {
		unpin_dir(staging);
		/* Another hook pinned the same policy first: share theirs. */
		if (open_pinned(out) == 0)
			return 0;
		return sg_system_error(err, -r, "cannot pin the program of policy %s: %s", out->key,
				       strerror(-r));
	}
	out->loaded = true;
	return open_pinned(out) == 0 ? 0 : sg_system_error(err, ENOENT, "%s vanished", final_dir);
}

void sg_program_close(struct sg_program *p)
{
	int *fds[] = {&p->prog_fd, &p->guard_fd, &p->totals_fd};
	for (size_t i = 0; i < SG_ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
