// SPDX-License-Identifier: Apache-2.0
#include "guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../bpf/sysctl_guard.h"
#include "cgroup.h"
#include "eval.h"
#include "log.h"
#include "util.h"
#include "sysctl_guard.skel.h"

_Static_assert(sizeof(struct sg_guard_meta) == 512, "meta map value is 512 bytes");

static const char *const pinned_maps[] = {"counters", "rule_names", "meta", "seen"};

#define SG_SEEN_ENTRIES 4096 /* distinct name/access/value triples a learning guard keeps */

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

/*
 * A test seam: SYSCTL_GUARD_FAULT=STEP[,STEP...] makes those kernel steps
 * fail (bpffs, map_create, prog_load, map_update, attach, pin, rename), so
 * tests can show that every failure leaves nothing attached or pinned. It can
 * only make the hook fail, which fails closed.
 */
static int injected_fault(const char *step)
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

static void destroy_link(struct bpf_link **link)
{
	if (*link)
		bpf_link__destroy(*link);
}

void sg_guard_entry_name(uint64_t cgroup_id, char out[32])
{
	snprintf(out, 32, "%llu", (unsigned long long)cgroup_id);
}

int sg_bpffs_prepare(struct sg_err *err)
{
	struct statfs sfs;

	if (injected_fault("bpffs"))
		return sg_system_error(err, EIO, "bpffs: injected fault");
	if (statfs("/sys/fs/bpf", &sfs) < 0 || sfs.f_type != BPF_FS_MAGIC) {
		mkdir("/sys/fs/bpf", 0700);
		if (mount("bpf", "/sys/fs/bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") < 0)
			return sg_system_error(err, errno,
					       "bpffs is not mounted at /sys/fs/bpf and mounting it "
					       "failed: %s",
					       strerror(errno));
	}
	if (mkdir(SG_PIN_ROOT, 0700) < 0 && errno != EEXIST)
		return sg_system_error(err, errno, "cannot create %s: %s", SG_PIN_ROOT,
				       strerror(errno));
	return 0;
}

uint64_t sg_compiled_hash(const struct sg_compiled *c)
{
	uint64_t h = 0xcbf29ce484222325ull;
#define HASH_BYTES(ptr, len)                                                                       \
	do {                                                                                       \
		const unsigned char *_p = (const unsigned char *)(ptr);                            \
		for (size_t _i = 0; _i < (len); _i++)                                              \
			h = (h ^ _p[_i]) * 0x100000001b3ull;                                       \
	} while (0)
	struct sg_config cfg = c->config;
	cfg.rewrite_works = 0;
	HASH_BYTES(&cfg, sizeof(cfg));
	HASH_BYTES(c->transitions, (size_t)c->n_states * c->config.n_classes * sizeof(uint32_t));
	HASH_BYTES(c->accept, (size_t)c->n_states * sizeof(uint32_t));
	HASH_BYTES(c->rules, (size_t)c->config.n_rules * sizeof(*c->rules));
	HASH_BYTES(c->exact_keys, c->n_exact * sizeof(*c->exact_keys));
	HASH_BYTES(c->exact_rules, c->n_exact * sizeof(*c->exact_rules));
	HASH_BYTES(c->value_keys, c->n_values * sizeof(*c->value_keys));
#undef HASH_BYTES
	return h;
}

static uint32_t at_least_one(size_t n)
{
	return n ? (uint32_t)n : 1;
}

static uint32_t counter_rows(const struct sg_config *cfg)
{
	/* rules, one default row per layer, early decisions, dropped events */
	return cfg->n_rules + cfg->n_layers + SG_EXTRA_COUNTER_ROWS;
}

static int size_maps(struct sysctl_guard *skel, const struct sg_compiled *c)
{
	struct {
		struct bpf_map *map;
		size_t entries;
	} sizes[] = {
		{skel->maps.exact_names, c->n_exact},
		{skel->maps.dfa_next, (size_t)c->n_states * c->config.n_classes},
		{skel->maps.dfa_accept, c->n_states},
		{skel->maps.rules, c->config.n_rules},
		{skel->maps.rule_values, c->n_values},
		{skel->maps.counters, (size_t)counter_rows(&c->config) * SG_VERDICT_COUNT},
		{skel->maps.rule_names, c->config.n_rules},
		{skel->maps.seen, c->config.learn ? SG_SEEN_ENTRIES : 1},
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
static int update_all(int fd, const void *keys, size_t key_size, const void *values,
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
	return update_all(bpf_map__fd(map), keys, sizeof(uint32_t), packed, value_size, used,
			  BPF_ANY);
}

static int fill_hash(struct bpf_map *map, const void *keys, size_t key_size, const void *values,
		     size_t value_size, size_t n)
{
	return update_all(bpf_map__fd(map), keys, key_size, values, value_size, n, BPF_NOEXIST);
}

static int fill_maps(struct sysctl_guard *skel, const struct sg_compiled *c,
		     const __u64 hash_key[2], const struct sg_guard_meta *meta)
{
	const uint8_t present = 1;
	_cleanup_free_ uint8_t *ones = NULL;
	_cleanup_free_ struct sg_rule_name *names = NULL;
	uint32_t zero = 0;
	int r;

	r = fill_array(skel->maps.dfa_next, c->transitions, sizeof(uint32_t),
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
	for (size_t i = 0; i < c->n_values; i++) {
		hashes[i].rule = c->value_keys[i].rule;
		hashes[i].hash = sg_value_hash(hash_key, c->value_keys[i].value);
	}
	ones = sg_xcalloc(c->n_values, 1);
	memset(ones, present, c->n_values);
	r = fill_hash(skel->maps.rule_values, hashes, sizeof(*hashes), ones, 1, c->n_values);
	if (r)
		return r;

	names = sg_xcalloc(c->config.n_rules, sizeof(*names));
	for (size_t i = 0; i < c->config.n_rules; i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s",
			 c->origins[i].name ? c->origins[i].name : "");
	r = fill_array(skel->maps.rule_names, names, sizeof(*names), c->config.n_rules);
	if (r)
		return r;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.meta), &zero, meta, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static struct bpf_map *pinned_map(struct sysctl_guard *skel, const char *name)
{
	if (strcmp(name, "counters") == 0)
		return skel->maps.counters;
	if (strcmp(name, "rule_names") == 0)
		return skel->maps.rule_names;
	if (strcmp(name, "seen") == 0)
		return skel->maps.seen;
	return skel->maps.meta;
}

/* Removes every pin of a guard directory and the directory; detaches when @detach. */
static int remove_pins(const char *dir, bool detach)
{
	char path[PATH_MAX];
	int ret = 0;

	snprintf(path, sizeof(path), "%s/link", dir);
	if (detach) {
		_cleanup_close_ int fd = bpf_obj_get(path);
		/* LINK_DETACH takes effect even while other references keep the link. */
		if (fd >= 0 && bpf_link_detach(fd) < 0 && errno != EINVAL && errno != ENOLINK)
			ret = -errno;
	}
	if (unlink(path) < 0 && errno != ENOENT)
		ret = -errno;
	for (size_t i = 0; i < SG_ARRAY_SIZE(pinned_maps); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pinned_maps[i]);
		if (unlink(path) < 0 && errno != ENOENT)
			ret = -errno;
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		ret = -errno;
	return ret;
}

static int pin_maps(struct sysctl_guard *skel, const char *dir)
{
	char path[PATH_MAX];
	for (size_t i = 0; i < SG_ARRAY_SIZE(pinned_maps); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pinned_maps[i]);
		if (bpf_map__pin(pinned_map(skel, pinned_maps[i]), path) < 0)
			return -errno;
	}
	return 0;
}

#define SG_EVENTS_BYTES (256 * 1024)

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

/* Every guard reports into the node's ring buffer, so one `monitor` sees them all. */
static int share_events(struct sysctl_guard *skel, struct sg_err *err)
{
	_cleanup_close_ int fd = sg_events_open(err);
	if (fd < 0)
		return fd;
	if (bpf_map__reuse_fd(skel->maps.events, fd) < 0)
		return sg_system_error(err, errno, "cannot share %s: %s", SG_EVENTS_PIN,
				       strerror(errno));
	return 0;
}

int sg_guard_find_container(const char *id, char entry[32])
{
	DIR *dir = opendir(SG_PIN_ROOT);
	int found = -ENOENT;

	for (struct dirent *de; dir && found < 0 && (de = readdir(dir));) {
		struct sg_guard_status st;
		struct sg_err ignored = {0};

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (sg_guard_read(de->d_name, &st, &ignored) < 0)
			continue;
		if (st.meta.container_id[0] && strncmp(st.meta.container_id, id, strlen(id)) == 0) {
			snprintf(entry, 32, "%s", de->d_name);
			found = 0;
		}
		sg_guard_status_free(&st);
	}
	if (dir)
		closedir(dir);
	return found;
}

static int load_program(const struct sg_compiled *c, uint64_t cgid,
			const struct sg_guard_meta *meta, struct sysctl_guard **out,
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
	struct sg_config config = c->config;
	config.guard_cgroup_id = cgid;
	if (getrandom(config.hash_key, sizeof(config.hash_key), 0) != sizeof(config.hash_key))
		return sg_system_error(err, errno, "cannot get random bytes: %s", strerror(errno));
	memcpy((void *)&skel->rodata->config, &config, sizeof(config));
	memcpy(skel->bss->hash_key, config.hash_key, sizeof(config.hash_key));
	r = size_maps(skel, c);
	if (r == 0)
		r = injected_fault("map_create");
	if (r < 0)
		return sg_system_error(err, -r, "cannot size the BPF maps: %s", strerror(-r));
	r = share_events(skel, err);
	if (r < 0)
		return r;
	r = injected_fault("prog_load");
	if (r == 0)
		r = sysctl_guard__load(skel);
	if (r < 0)
		return sg_system_error(err, -r,
				       "the kernel refused the BPF program (%s); does it support "
				       "BPF_PROG_TYPE_CGROUP_SYSCTL (Linux 5.2+)?\n%s",
				       strerror(-r), libbpf_log_tail());
	if (getenv("SYSCTL_GUARD_VERIFIER_STATS")) {
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.sysctl_guard), &info, &len) == 0)
			fprintf(stderr, "verified_insns %u xlated %u\n", info.verified_insns,
				info.xlated_prog_len / 8);
	}
	r = injected_fault("map_update");
	if (r == 0)
		r = fill_maps(skel, c, config.hash_key, meta);
	if (r < 0)
		return sg_system_error(err, -r, "cannot fill the policy maps: %s", strerror(-r));
	*out = SG_TAKE(skel);
	return 0;
}

/* Opens the link of the guard being replaced. */
static int open_link(const char *dir, struct sg_err *err)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/link", dir);
	int fd = bpf_obj_get(path);
	if (fd < 0)
		return sg_system_error(err, errno, "cannot open the pinned link %s: %s", path,
				       strerror(errno));
	return fd;
}

/*
 * The new maps and the link are in place under @final_dir and the old ones
 * under @staging: point the link at the new program, or put the old guard
 * back when the kernel refuses.
 */
static int switch_program(int link_fd, struct sysctl_guard *skel, const char *staging,
			  const char *final_dir, struct sg_err *err)
{
	if (bpf_link_update(link_fd, bpf_program__fd(skel->progs.sysctl_guard), NULL) == 0) {
		remove_pins(staging, false); /* the old maps */
		return 0;
	}
	int e = errno;
	renameat2(AT_FDCWD, staging, AT_FDCWD, final_dir, RENAME_EXCHANGE);
	remove_pins(staging, false);
	return sg_system_error(err, e, "cannot replace the program of %s: %s", final_dir,
			       strerror(e));
}

int sg_guard_attach(const char *cgroup_dir, const struct sg_compiled *c,
		    struct sg_guard_meta *meta, struct sg_err *err)
{
	__attribute__((cleanup(destroy_skel))) struct sysctl_guard *skel = NULL;
	__attribute__((cleanup(destroy_link))) struct bpf_link *link = NULL;
	_cleanup_close_ int cg_fd = -1;
	_cleanup_close_ int link_fd = -1;
	char entry[32], final_dir[PATH_MAX], staging[PATH_MAX], path[PATH_MAX];
	uint64_t cgid;
	struct stat st;
	int r;

	r = sg_cgroup_open(cgroup_dir, &cg_fd, &cgid, err);
	if (r < 0)
		return r;
	r = sg_bpffs_prepare(err);
	if (r < 0)
		return r;

	meta->format = SG_META_FORMAT;
	meta->cgroup_id = cgid;
	meta->learn = c->config.learn;
	meta->attached_at = (uint64_t)time(NULL);
	meta->n_layers = c->config.n_layers;
	meta->n_rules = c->config.n_rules;
	meta->rewrite_works = c->config.rewrite_works;
	for (uint32_t i = 0; i < c->config.n_layers && i < SG_LAYERS_MAX; i++)
		meta->layer_modes[i] = c->config.layers[i].mode;
	snprintf(meta->policy_hash, sizeof(meta->policy_hash), "%016llx",
		 (unsigned long long)sg_compiled_hash(c));

	r = load_program(c, cgid, meta, &skel, err);
	if (r < 0)
		return r;

	sg_guard_entry_name(cgid, entry);
	snprintf(final_dir, sizeof(final_dir), "%s/%s", SG_PIN_ROOT, entry);
	snprintf(staging, sizeof(staging), "%s/%s%d-%s", SG_PIN_ROOT, SG_STAGING_PREFIX,
		 (int)getpid(), entry);
	remove_pins(staging, true);
	if (mkdir(staging, 0700) < 0)
		return sg_system_error(err, errno, "cannot create %s: %s", staging,
				       strerror(errno));
	r = pin_maps(skel, staging);
	if (r < 0) {
		remove_pins(staging, true);
		return sg_system_error(err, -r, "cannot pin maps in %s: %s", staging,
				       strerror(-r));
	}

	/*
	 * A replacement keeps its link (bpf_link_update swaps the program in one
	 * step) and changes it last, after the new guard is complete: any failure
	 * before leaves the old guard as it was.
	 */
	bool replacing = stat(final_dir, &st) == 0;
	if (replacing) {
		link_fd = open_link(final_dir, err);
		if (link_fd < 0) {
			remove_pins(staging, false);
			return link_fd;
		}
	} else {
		errno = EIO;
		if (!injected_fault("attach"))
			link = bpf_program__attach_cgroup(skel->progs.sysctl_guard, cg_fd);
		if (!link) {
			int e = errno;
			remove_pins(staging, false);
			return sg_system_error(err, e, "cannot attach to cgroup %s: %s", cgroup_dir,
					       strerror(e));
		}
		link_fd = dup(bpf_link__fd(link));
	}

	snprintf(path, sizeof(path), "%s/link", staging);
	errno = EIO;
	if (injected_fault("pin") || bpf_obj_pin(link_fd, path) < 0) {
		int e = errno;
		remove_pins(staging, !replacing);
		return sg_system_error(err, e, "cannot pin the link at %s: %s", path, strerror(e));
	}

	/* The complete guard takes the place of the old one in one step. */
	int renamed = -1;
	errno = EIO;
	if (!injected_fault("rename"))
		renamed = replacing ? renameat2(AT_FDCWD, staging, AT_FDCWD, final_dir,
						RENAME_EXCHANGE)
				    : rename(staging, final_dir);
	if (renamed < 0) {
		int e = errno;
		/* The staging link pin is the replaced guard's own link: never detach it. */
		remove_pins(staging, !replacing);
		return sg_system_error(err, e, "cannot move %s into place: %s", staging,
				       strerror(e));
	}
	if (replacing)
		return switch_program(link_fd, skel, staging, final_dir, err);
	return 0;
}

int sg_guard_remove_entry(const char *entry, struct sg_err *err)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, entry);
	int r = remove_pins(dir, true);
	if (r < 0)
		return sg_system_error(err, -r, "cannot remove the guard pinned at %s: %s", dir,
				       strerror(-r));
	return 0;
}

int sg_guard_detach(const char *cgroup_dir, bool *found, struct sg_err *err)
{
	_cleanup_close_ int cg_fd = -1;
	char entry[32], dir[PATH_MAX];
	uint64_t cgid;
	struct stat st;

	int r = sg_cgroup_open(cgroup_dir, &cg_fd, &cgid, err);
	if (r < 0)
		return r;
	sg_guard_entry_name(cgid, entry);
	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, entry);
	*found = stat(dir, &st) == 0;
	if (!*found)
		return 0;
	return sg_guard_remove_entry(entry, err);
}

static int read_pinned_map(const char *dir, const char *name, int *fd)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*fd = bpf_obj_get(path);
	return *fd < 0 ? -errno : 0;
}

static int read_counters(int fd, struct sg_guard_status *out)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	int ncpus = libbpf_num_possible_cpus();

	if (ncpus <= 0)
		return -EINVAL;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	out->n_rows = info.max_entries / SG_VERDICT_COUNT;
	out->counters = sg_xcalloc(info.max_entries, sizeof(uint64_t));
	_cleanup_free_ uint64_t *percpu = sg_xcalloc((size_t)ncpus, sizeof(uint64_t));
	for (uint32_t k = 0; k < info.max_entries; k++) {
		if (bpf_map_lookup_elem(fd, &k, percpu) < 0)
			return -errno;
		for (int cpu = 0; cpu < ncpus; cpu++)
			out->counters[k] += percpu[cpu];
	}
	return 0;
}

static void read_link(const char *dir, struct sg_guard_status *out)
{
	char path[PATH_MAX];
	struct bpf_link_info info = {};
	uint32_t len = sizeof(info);

	snprintf(path, sizeof(path), "%s/link", dir);
	_cleanup_close_ int fd = bpf_obj_get(path);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return;
	out->prog_id = info.prog_id;
	out->link_alive = info.cgroup.cgroup_id != 0;
}

int sg_guard_read(const char *entry, struct sg_guard_status *out, struct sg_err *err)
{
	char dir[PATH_MAX];
	_cleanup_close_ int meta_fd = -1, counters_fd = -1, names_fd = -1;
	uint32_t zero = 0;
	int r;

	memset(out, 0, sizeof(*out));
	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, entry);
	r = read_pinned_map(dir, "meta", &meta_fd);
	if (!r && bpf_map_lookup_elem(meta_fd, &zero, &out->meta) < 0)
		r = -errno;
	if (!r && out->meta.format != SG_META_FORMAT)
		r = -EPROTO;
	if (!r)
		r = read_pinned_map(dir, "counters", &counters_fd);
	if (!r)
		r = read_counters(counters_fd, out);
	if (!r)
		r = read_pinned_map(dir, "rule_names", &names_fd);
	if (r < 0) {
		sg_guard_status_free(out);
		return sg_system_error(err, -r, "cannot read the guard pinned at %s: %s", dir,
				       strerror(-r));
	}
	out->rule_names = sg_xcalloc(out->meta.n_rules, sizeof(*out->rule_names));
	for (uint32_t i = 0; i < out->meta.n_rules; i++)
		bpf_map_lookup_elem(names_fd, &i, &out->rule_names[i]);
	read_link(dir, out);
	return 0;
}

void sg_guard_status_free(struct sg_guard_status *status)
{
	free(status->counters);
	free(status->rule_names);
	status->counters = NULL;
	status->rule_names = NULL;
}
