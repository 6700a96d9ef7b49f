// SPDX-License-Identifier: Apache-2.0
#include "kernel/tables.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/log.h"
#include "base/siphash.h"
#include "base/util.h"
#include "policy/inputs.h" /* sg_build_id */
#include "compile/dfa_pack.h"
#include "compile/eval.h"
#include "compile/layout.h"
#include "kernel/fault.h"
#include "kernel/map.h"
#include "kernel/vacancy.h"

/* What is pinned per policy: its maps in the outer maps (enum sg_outer order), then ours. */
static const char *const policy_pins[] = {SG_OUTER_NAMES, "info", "rule_names"};
_Static_assert(SG_ARRAY_SIZE(policy_pins) == SG_OUTER_COUNT + 2, "outer maps, info, rule_names");

/* One map per pin; -1 when not made (a policy without long names has no exact_long). */
struct policy_maps {
	int fds[SG_ARRAY_SIZE(policy_pins)];
	bool tables_placed; /* a vacancy: placed in its slot and pinned in staging already */
};

enum { PIN_INFO = SG_OUTER_COUNT, PIN_RULE_NAMES = SG_OUTER_COUNT + 1 };

static void close_maps(struct policy_maps *m)
{
	for (size_t i = 0; i < SG_ARRAY_SIZE(m->fds); i++)
		if (m->fds[i] >= 0)
			close(m->fds[i]);
}

/*
 * The policy's key: a hash, under the node's secret key, of the loaded
 * program whose slots it lives in (by id: were the program's pins lost and
 * the program loaded again, its policies would be made again, not found in
 * slots of the old one) and of everything the program reads of it
 * (sg_compiled_hash, which names the DFA by this binary's build). Keyed, so
 * no one can build a policy offline that takes another's key.
 */
static uint64_t policy_key(const struct sg_program *prog, const struct sg_compiled *c,
			   char out[SG_KEY_LEN])
{
	struct sg_siphash h;
	uint8_t build_id[64];
	const size_t build_id_len = sg_build_id(build_id, sizeof(build_id));

	sg_siphash_init(&h, prog->secret);
	sg_siphash_update(&h, prog->key, strlen(prog->key) + 1);
	sg_siphash_update(&h, &prog->id, sizeof(prog->id));
	sg_compiled_hash(c, build_id, build_id_len, &h);
	uint64_t key = sg_siphash_final(&h);
	snprintf(out, SG_KEY_LEN, "%016llx", (unsigned long long)key);
	return key;
}

static uint32_t at_least_one(size_t n)
{
	return n ? (uint32_t)n : 1;
}

static const char *rule_name(const struct sg_compiled *c, uint32_t rule)
{
	return c->origins[rule].name ? c->origins[rule].name : "";
}

/* Elements of the rule_names table: every name with its NUL. */
static size_t rule_names_units(const struct sg_compiled *c)
{
	return (c->rule_names_bytes + SG_RULE_NAMES_UNIT - 1) / SG_RULE_NAMES_UNIT;
}

/* The rules, then the bounds of their ranges (sysctl_guard.h). */
static size_t rules_elements(const struct sg_compiled *c)
{
	return (size_t)c->config.n_rules + c->n_bounds;
}

static uint32_t counter_rows(const struct sg_compiled *c)
{
	return c->config.n_rules + c->config.n_layers + SG_EXTRA_COUNTER_ROWS;
}

static const uint32_t table_shift[SG_TABLE_COUNT] = SG_TABLE_SHIFTS;

/* What a policy's tables are laid out from besides the compiled policy. */
struct planned_tables {
	struct sg_hashed_tables hashed;
	struct sg_dfa_packed dfa;
	uint32_t n_pages; /* of the policy's map */
};

static void planned_tables_free(struct planned_tables *p)
{
	sg_hashed_tables_free(&p->hashed);
	sg_dfa_packed_free(&p->dfa);
}

/*
 * The buckets a lookup in a hashed table may read: up to SG_HASH_PROBES
 * from any home bucket. Those past the last that holds entries are free.
 */
static size_t probed_buckets(const struct sg_hash_plan *plan)
{
	size_t n = (size_t)(plan->n_homes ? plan->n_homes : 1) + SG_HASH_PROBES - 1;
	return n > plan->n_buckets ? n : plan->n_buckets;
}

/*
 * Plans the hashed tables and packs the DFA, then places every table in the
 * policy's map, one after the other from page 0: @config gets where
 * (sysctl_guard.h). Each table holds every element the program can read of
 * it, for the program does not check (sg_table_at): the hashed tables every
 * bucket a probe reaches, the DFA, after its last element, a row's width of
 * elements that belong to no state. A hashed table's plan that fails (entries whose hashes
 * crowd together at every size, which a new seed would all but surely
 * undo) is -EOVERFLOW, told apart from the kernel's errors (sg_tables_get).
 */
static int plan_tables(const struct sg_compiled *c, struct sg_config *config,
		       struct planned_tables *p)
{
	p->hashed.seed = config->table_seed;
	if (sg_plan_exact(&p->hashed, c) < 0 ||
	    (c->n_values && sg_plan_values(&p->hashed, c, config->hash_key) < 0) ||
	    sg_injected_fault("plan"))
		return -EOVERFLOW;
	config->exact_homes = p->hashed.exact.n_homes;
	config->value_homes = p->hashed.values.n_homes;
	sg_dfa_pack(&c->dfa, &p->dfa);

	const size_t n[SG_TABLE_COUNT] = {
	    [SG_TABLE_EXACT] = probed_buckets(&p->hashed.exact),
	    [SG_TABLE_DFA] = p->dfa.n_elements + sg_dfa_accept_column(c->config.n_classes) + 1,
	    [SG_TABLE_RULES] = rules_elements(c),
	    [SG_TABLE_VALUES] = c->n_values ? probed_buckets(&p->hashed.values) : 0,
	    [SG_TABLE_TEXTS] = c->n_texts,
	    [SG_TABLE_COUNTERS] = (size_t)counter_rows(c) * SG_VERDICT_COUNT,
	};
	uint64_t page = 0;
	for (size_t t = 0; t < SG_TABLE_COUNT; t++) {
		if (n[t] > UINT32_MAX)
			return -E2BIG;
		config->tables[t].first_page = (uint32_t)page;
		config->tables[t].n_elements = (uint32_t)n[t];
		page += sg_table_pages((uint32_t)n[t], table_shift[t]);
	}
	if (page > UINT32_MAX)
		return -E2BIG;
	p->n_pages = (uint32_t)page;
	return 0;
}

static void write_rule_entries(const struct sg_compiled *c, char *dst, size_t stride)
{
	for (size_t k = 0; k < rules_elements(c); k++, dst += stride)
		if (k < c->config.n_rules)
			memcpy(dst, &c->rules[k], sizeof(c->rules[0]));
		else
			memcpy(dst, &c->bounds[k - c->config.n_rules], sizeof(c->bounds[0]));
}

static void write_rule_texts(const struct sg_compiled *c, char *dst, size_t stride)
{
	for (size_t k = 0; k < c->n_texts; k++, dst += stride)
		memcpy(dst, &c->texts[k], sizeof(c->texts[0]));
}

/* Writes table @t, planned in @p and placed in @config, into the policy's map mapped at @base. */
static void write_table(size_t t, const struct sg_compiled *c, const struct sg_config *config,
			const struct planned_tables *p, char *base)
{
	const struct sg_table_place *at = &config->tables[t];
	char *dst = base + (size_t)at->first_page * SG_PAGE_SIZE;
	const size_t stride = (size_t)1 << table_shift[t];

	switch (t) {
	case SG_TABLE_EXACT: /* a free slot is zeros, as the map starts */
		sg_lay_exact_buckets(&p->hashed, c, 0, p->hashed.exact.n_buckets, dst, stride);
		break;
	case SG_TABLE_DFA: /* an element of no state is zeros, as the map starts */
		sg_dfa_packed_write(&p->dfa, 0, p->dfa.n_elements, (sg_dfa_element *)dst);
		break;
	case SG_TABLE_RULES:
		write_rule_entries(c, dst, stride);
		break;
	case SG_TABLE_VALUES:
		sg_lay_value_buckets(&p->hashed, 0, p->hashed.values.n_buckets, dst, stride);
		for (size_t b = p->hashed.values.n_buckets; b < at->n_elements; b++)
			for (size_t way = 0; way < SG_HASH_WAYS; way++)
				((struct sg_value_bucket *)(dst + b * stride))->slot[way].set =
				    SG_NO_RULE;
		break;
	case SG_TABLE_TEXTS:
		write_rule_texts(c, dst, stride);
		break;
	default: /* the counters start at zero */
		break;
	}
}

/*
 * Opens the policy's map of tables into m->fds: a vacancy that fits
 * (vacancy.h), moved into the directory @staging, whose slot *@slot gets;
 * else a new map.
 */
static int open_tables_map(const struct sg_program *prog, const char *key, const char *staging,
			   uint32_t n_pages, struct policy_maps *m, uint32_t *slot)
{
	char path[PATH_MAX];
	int *fd = &m->fds[SG_OUTER_TABLES];

	snprintf(path, sizeof(path), "%s/%s", staging, policy_pins[SG_OUTER_TABLES]);
	int r = sg_vacancy_take(prog, n_pages, key, path, fd, slot);
	if (r != 0) {
		m->tables_placed = r > 0;
		if (r > 0)
			sg_debug("policy %s: its tables take the vacancy at slot %u", key, *slot);
		return r < 0 ? r : 0;
	}
	*fd = sg_map_create(BPF_MAP_TYPE_ARRAY, policy_pins[SG_OUTER_TABLES], sizeof(uint32_t),
			    SG_PAGE_SIZE, sg_vacancy_pages_for(n_pages),
			    BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	return *fd < 0 ? -errno : 0;
}

/*
 * Fills the policy's map of tables (sysctl_guard.h) through one mapping: a
 * copy, where updates would cost a system call's work per element (half a
 * million for the DFA of 10,000 rules). A vacancy holds the tables of the
 * policy that had it: zeroed first, as a new map starts.
 */
static int fill_tables_map(int fd, bool was_vacant, const struct sg_compiled *c,
			   const struct sg_config *config, const struct planned_tables *p)
{
	const size_t len = (size_t)(p->n_pages ? p->n_pages : 1) * SG_PAGE_SIZE;

	if (sg_injected_fault("fill_tables"))
		return -EIO;
	char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (was_vacant)
		memset(base, 0, len);
	for (size_t t = 0; t < SG_TABLE_COUNT; t++)
		write_table(t, c, config, p, base);
	munmap(base, len);
	return 0;
}

/*
 * The rule_names table: the names, each with its NUL, one after the other,
 * SG_RULE_NAMES_UNIT bytes to an element; zeros after the last.
 */
static void write_rule_names(const struct sg_compiled *c, char *dst)
{
	for (uint32_t rule = 0; rule < c->config.n_rules; rule++) {
		size_t len = c->origins[rule].name_len + 1;
		memcpy(dst, rule_name(c, rule), len);
		dst += len;
	}
}

static int make_rule_names_map(const struct sg_compiled *c, int *fd)
{
	const uint32_t units = at_least_one(rule_names_units(c));
	const size_t len = (size_t)units * SG_RULE_NAMES_UNIT;

	*fd = sg_map_create(BPF_MAP_TYPE_ARRAY, policy_pins[PIN_RULE_NAMES], sizeof(uint32_t),
			    SG_RULE_NAMES_UNIT, units, BPF_F_MMAPABLE);
	if (*fd < 0)
		return -errno;
	if (sg_injected_fault("fill_rule_names"))
		return -EIO;
	char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	write_rule_names(c, base);
	munmap(base, len);
	return 0;
}

/*
 * The long exact names, in a kernel hash map a batch at a time: they are few
 * (sysctl_guard.h), and their keys are zero padded to the key's size.
 * Batches take no BPF_NOEXIST; the compiler never repeats a key.
 */
static int fill_long_names(int fd, const struct sg_compiled *c)
{
	enum { BATCH = 256 };
	_cleanup_free_ struct sg_exact_key *keys = sg_xcalloc(BATCH, sizeof(*keys));
	uint32_t rules[BATCH];
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; r == 0 && i < c->n_exact; i++) {
		const struct sg_exact_name *e = &c->exact[i];
		size_t len = e->len;
		if (!sg_is_long_name(len))
			continue;
		memset(&keys[n], 0, sizeof(keys[n]));
		keys[n].layer = e->layer;
		memcpy(keys[n].name, e->name, len);
		rules[n++] = e->rule;
		if (n == BATCH) {
			r = sg_map_update_all(fd, keys, sizeof(keys[0]), rules, sizeof(rules[0]), n,
					      BPF_ANY);
			n = 0;
		}
	}
	if (r == 0 && n)
		r = sg_map_update_all(fd, keys, sizeof(keys[0]), rules, sizeof(rules[0]), n,
				      BPF_ANY);
	return r;
}

/* The long exact names' map, when the policy has any (most have none: then -1). */
static int make_long_names_map(const struct sg_compiled *c, int *fd)
{
	const size_t n_long = sg_long_names(c);

	if (n_long == 0)
		return 0;
	*fd = sg_map_create(BPF_MAP_TYPE_HASH, policy_pins[SG_OUTER_EXACT_LONG],
			    sizeof(struct sg_exact_key), sizeof(uint32_t), (uint32_t)n_long, 0);
	if (*fd < 0)
		return -errno;
	if (sg_injected_fault("fill_exact_long"))
		return -EIO;
	return fill_long_names(*fd, c);
}

static int make_info_map(int *fd)
{
	*fd = sg_map_create(BPF_MAP_TYPE_ARRAY, policy_pins[PIN_INFO], sizeof(uint32_t),
			    sizeof(struct sg_policy_info), 1, 0);
	return *fd < 0 ? -errno : 0;
}

/*
 * Plans, makes and fills the maps of policy @key into @m, up to the first
 * error; @info gets where its tables are, and the slot of the vacancy they
 * took, if they took one. Returns 0 or that error; the maps made are in @m
 * either way.
 */
static int make_maps(const struct sg_program *prog, const struct sg_compiled *c, const char *key,
		     const char *staging, struct sg_policy_info *info, struct policy_maps *m)
{
	struct planned_tables planned = {0};
	int r = plan_tables(c, &info->config, &planned);

	if (r == 0)
		r = open_tables_map(prog, key, staging, planned.n_pages, m, &info->slot);
	if (r == 0)
		r = fill_tables_map(m->fds[SG_OUTER_TABLES], m->tables_placed, c, &info->config,
				    &planned);
	planned_tables_free(&planned);
	if (r == 0)
		r = make_long_names_map(c, &m->fds[SG_OUTER_EXACT_LONG]);
	if (r == 0)
		r = make_rule_names_map(c, &m->fds[PIN_RULE_NAMES]);
	if (r == 0)
		r = make_info_map(&m->fds[PIN_INFO]);
	return r;
}

static int write_info(const struct policy_maps *m, const struct sg_policy_info *info)
{
	uint32_t zero = 0;
	return bpf_map_update_elem(m->fds[PIN_INFO], &zero, info, BPF_ANY) < 0 ? -errno : 0;
}

/* Pins the maps of @m in the staging directory @dir, but a vacancy, pinned there already. */
static int pin_maps(const struct policy_maps *m, const char *dir)
{
	char path[PATH_MAX];

	if (sg_injected_fault("pin"))
		return -EIO;
	for (size_t i = 0; i < SG_ARRAY_SIZE(policy_pins); i++) {
		if (i == SG_OUTER_TABLES && m->tables_placed)
			continue; /* pinned there as it was taken */
		snprintf(path, sizeof(path), "%s/%s", dir, policy_pins[i]);
		if (m->fds[i] >= 0 && bpf_obj_pin(m->fds[i], path) < 0)
			return -errno;
	}
	return 0;
}

/*
 * Claims a free slot for @key: inserting into the slots map without
 * overwriting is atomic, so two hooks never get the same slot. Probing
 * starts at a place the key picks, so claims rarely collide.
 */
static int claim_slot(const struct sg_program *prog, const char *key, uint32_t *slot)
{
	char value[SG_KEY_LEN] = {0};
	uint32_t start = (uint32_t)strtoull(key, NULL, 16);

	snprintf(value, sizeof(value), "%s", key);
	for (uint32_t i = 0; i < SG_MAX_POLICIES - 1; i++) {
		uint32_t s = 1 + (start + i) % (SG_MAX_POLICIES - 1);
		if (bpf_map_update_elem(prog->slots_fd, &s, value, BPF_NOEXIST) == 0) {
			*slot = s;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -ENOSPC;
}

/* Empties @slot in every outer map and frees it, if @key holds it (or a vacancy, SG_VACANT). */
static void release_slot(const struct sg_program *prog, uint32_t slot, const char *key)
{
	char holder[SG_KEY_LEN];

	if (bpf_map_lookup_elem(prog->slots_fd, &slot, holder) < 0 ||
	    strncmp(holder, key, sizeof(holder)) != 0)
		return;
	for (size_t i = 0; i < SG_OUTER_COUNT; i++) {
		uint32_t inner_id;
		/* A deletion waits for a grace period, on some kernels even of an empty slot. */
		if (bpf_map_lookup_elem(prog->outer_fds[i], &slot, &inner_id) == 0)
			bpf_map_delete_elem(prog->outer_fds[i], &slot);
	}
	sg_vacancy_unpin(prog, slot);
	bpf_map_delete_elem(prog->slots_fd, &slot);
}

/*
 * Puts the policy's maps at @slot of the program's outer maps: one update,
 * two for a policy with long names, none for tables that took a vacancy
 * and have no long names. Each update returns once no program can still see
 * what the slot held before (an RCU grace period), which a new policy waits
 * out here: vacancies and `preload` take that off the containers' path.
 */
static int place_tables(const struct sg_program *prog, const struct policy_maps *m, uint32_t slot)
{
	if (sg_injected_fault("map_update"))
		return -EIO;
	for (size_t i = 0; i < SG_OUTER_COUNT; i++) {
		if (m->fds[i] < 0 || (i == SG_OUTER_TABLES && m->tables_placed))
			continue;
		uint32_t inner = (uint32_t)m->fds[i];
		if (bpf_map_update_elem(prog->outer_fds[i], &slot, &inner, BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}

int sg_tables_open_map(const char *key, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/%s", SG_POLICY_ROOT, key, name);
	return bpf_obj_get(path);
}

int sg_tables_view_open(const char *key, struct sg_tables_view *view)
{
	static const uint32_t shift[SG_TABLE_COUNT] = SG_TABLE_SHIFTS;
	struct sg_policy_info info;
	struct bpf_map_info map = {0};
	uint32_t map_len = sizeof(map);

	memset(view, 0, sizeof(*view));
	int r = sg_tables_read_info(key, &info);
	if (r < 0)
		return r;
	_cleanup_close_ int fd = sg_tables_open_map(key, policy_pins[SG_OUTER_TABLES]);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &map, &map_len) < 0)
		return -errno;
	if (map.value_size != SG_PAGE_SIZE)
		return -EPROTO;
	/* Read as untrusted: every table within the map. */
	for (size_t t = 0; t < SG_TABLE_COUNT; t++) {
		const struct sg_table_place *at = &info.config.tables[t];
		if ((uint64_t)at->first_page + sg_table_pages(at->n_elements, shift[t]) >
		    map.max_entries)
			return -EPROTO;
	}
	view->len = (size_t)map.max_entries * SG_PAGE_SIZE;
	view->base = mmap(NULL, view->len, PROT_READ, MAP_SHARED, fd, 0);
	if (view->base == MAP_FAILED) {
		view->base = NULL;
		return -errno;
	}
	view->config = info.config;
	return 0;
}

const void *sg_tables_view_table(const struct sg_tables_view *view, enum sg_table table,
				 uint32_t *n)
{
	const struct sg_table_place *at = &view->config.tables[table];
	*n = at->n_elements;
	return view->base + (size_t)at->first_page * SG_PAGE_SIZE;
}

void sg_tables_view_close(struct sg_tables_view *view)
{
	if (view->base)
		munmap((void *)view->base, view->len);
	view->base = NULL;
}

#define PRELOADED_PREFIX "preloaded:"

/* The mark's pin name: the label with every byte but [A-Za-z0-9_-] as ':' (bpffs refuses dots). */
static void mark_name(const char *label, char out[NAME_MAX + 1])
{
	int n = snprintf(out, NAME_MAX + 1, PRELOADED_PREFIX);
	for (const char *c = label; *c && n < NAME_MAX; c++, n++)
		out[n] = isalnum((unsigned char)*c) || *c == '_' || *c == '-' ? *c : ':';
	out[n] = '\0';
}

static bool is_mark(const char *name)
{
	return strncmp(name, PRELOADED_PREFIX, strlen(PRELOADED_PREFIX)) == 0;
}

static void mark_path(const char *key, const char *name, char path[PATH_MAX])
{
	snprintf(path, PATH_MAX, "%s/%s/%s", SG_POLICY_ROOT, key, name);
}

static int mark(const char *key, const char *name)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = sg_tables_open_map(key, "info");

	if (fd < 0)
		return -errno;
	mark_path(key, name, path);
	if (bpf_obj_pin(fd, path) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Marks change under a lock of their own, an exclusive flock of
 * SG_POLICY_ROOT, which callers take with the pins lock held shared: two
 * preloads of one label then leave one mark, not none.
 */
static int marks_lock(void)
{
	int fd = open(SG_POLICY_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Calls @visit(policy, mark name, arg) for every mark on the node but those of policy @except. */
static void for_each_mark(const char *except, void (*visit)(const char *, const char *, void *),
			  void *arg)
{
	DIR *root = opendir(SG_POLICY_ROOT);

	for (struct dirent *p; root && (p = readdir(root));) {
		char path[PATH_MAX];
		if (p->d_name[0] == '.' || (except && strcmp(p->d_name, except) == 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", SG_POLICY_ROOT, p->d_name);
		DIR *policy = opendir(path);
		for (struct dirent *m; policy && (m = readdir(policy));)
			if (is_mark(m->d_name))
				visit(p->d_name, m->d_name, arg);
		if (policy)
			closedir(policy);
	}
	if (root)
		closedir(root);
}

static void unpin_mark(const char *key, const char *name)
{
	char path[PATH_MAX];
	mark_path(key, name, path);
	unlink(path);
}

static void drop_if_same(const char *key, const char *name, void *wanted)
{
	if (strcmp(name, wanted) == 0)
		unpin_mark(key, name);
}

int sg_tables_take_mark(const char *key, const char *label)
{
	char name[NAME_MAX + 1];
	int lock_fd = marks_lock();

	if (lock_fd < 0)
		return lock_fd;
	mark_name(label, name);
	int r = mark(key, name);
	if (r == 0)
		for_each_mark(key, drop_if_same, name);
	close(lock_fd);
	return r;
}

struct kept_marks {
	char (*names)[NAME_MAX + 1];
	size_t n;
	char scope[NAME_MAX + 1]; /* ":SCOPE" as it ends a mark's name, "" for none */
};

/* Whether mark @name is of the scope @kept drops in: its own pairs, or none. */
static bool in_scope(const char *name, const struct kept_marks *kept)
{
	size_t len = strlen(name), scope_len = strlen(kept->scope);
	if (!scope_len)
		return !strstr(name, ":" SG_MARK_SCOPE_PREFIX);
	return len > scope_len && strcmp(name + len - scope_len, kept->scope) == 0;
}

static void drop_unless_kept(const char *key, const char *name, void *arg)
{
	const struct kept_marks *kept = arg;
	if (!in_scope(name, kept))
		return;
	for (size_t i = 0; i < kept->n; i++)
		if (strcmp(name, kept->names[i]) == 0)
			return;
	unpin_mark(key, name);
}

int sg_tables_drop_marks_except(const char *const *labels, size_t n, const char *scope)
{
	struct kept_marks kept = {sg_xcalloc(n ? n : 1, sizeof(*kept.names)), n, ""};
	int lock_fd = marks_lock();

	if (scope[0])
		snprintf(kept.scope, sizeof(kept.scope), ":%s", scope);
	for (size_t i = 0; i < n; i++)
		mark_name(labels[i], kept.names[i]);
	if (lock_fd >= 0) {
		for_each_mark(NULL, drop_unless_kept, &kept);
		close(lock_fd);
	}
	free(kept.names);
	return lock_fd < 0 ? lock_fd : 0;
}

bool sg_tables_is_preloaded(const char *key)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", SG_POLICY_ROOT, key);
	DIR *dir = opendir(path);
	bool marked = false;

	for (struct dirent *de; dir && !marked && (de = readdir(dir));)
		marked = is_mark(de->d_name);
	if (dir)
		closedir(dir);
	return marked;
}

int sg_tables_read_rule_names(const char *key, uint32_t n, struct sg_rule_name *out)
{
	struct bpf_map_info info = {0};
	uint32_t info_len = sizeof(info);
	_cleanup_close_ int fd = sg_tables_open_map(key, "rule_names");

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &info_len) < 0)
		return -errno;
	if (info.value_size != SG_RULE_NAMES_UNIT)
		return -EPROTO;
	size_t len = (size_t)info.max_entries * SG_RULE_NAMES_UNIT;
	const char *names = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (names == MAP_FAILED)
		return -errno;
	/* Read as untrusted: a name runs to its NUL or to the end of the table. */
	size_t at = 0;
	for (uint32_t i = 0; i < n && at < len; i++) {
		size_t name_len = strnlen(names + at, len - at);
		snprintf(out[i].name, sizeof(out[i].name), "%.*s", (int)name_len, names + at);
		at += name_len + 1;
	}
	munmap((void *)names, len);
	return 0;
}

int sg_tables_read_info(const char *key, struct sg_policy_info *info)
{
	uint32_t zero = 0;
	_cleanup_close_ int fd = sg_tables_open_map(key, "info");
	if (fd < 0)
		return -errno;
	int r = sg_map_lookup_sized(fd, &zero, sizeof(zero), info, sizeof(*info));
	if (r < 0)
		return r;
	if (info->format != SG_POLICY_INFO_FORMAT || info->slot == 0)
		return -EPROTO;
	info->program_key[SG_KEY_LEN - 1] = '\0';
	return 0;
}

/* Found pinned, and for this program: then it is complete (pinned by rename). */
static int find_pinned(const struct sg_program *prog, struct sg_tables *out)
{
	int r = sg_tables_read_info(out->key, &out->info);
	if (r == 0 &&
	    (strcmp(out->info.program_key, prog->key) != 0 || out->info.program_id != prog->id))
		r = -ESTALE;
	return r;
}

/* The info of tables made here, but the slot: that is claimed once they are made. */
static int new_info(const struct sg_program *prog, const struct sg_compiled *c,
		    struct sg_policy_info *info)
{
	memset(info, 0, sizeof(*info));
	info->format = SG_POLICY_INFO_FORMAT;
	snprintf(info->program_key, sizeof(info->program_key), "%s", prog->key);
	info->program_id = prog->id;
	info->config = c->config;
	/* The keys of the values hash and of the hashed tables' (sysctl_guard.h). */
	__u64 keys[3];
	if (getrandom(keys, sizeof(keys), 0) != sizeof(keys))
		return -EIO;
	info->config.hash_key[0] = keys[0];
	info->config.hash_key[1] = keys[1];
	info->config.table_seed = keys[2];
	return 0;
}

/*
 * Claims a slot for the made maps @m of policy @key, unless their tables
 * took a vacancy's, places them there and pins them under @key's directory,
 * through @staging. *@info gets the slot. A slot is claimed before it is
 * placed and emptied before it is freed, so that no outer map ever has an
 * entry at a free slot. A hook killed on the way leaves the slot claimed
 * under a key that is not pinned: gc frees it (sg_tables_release_orphan_slots).
 */
static int publish_tables(const struct sg_program *prog, const struct policy_maps *m,
			  struct sg_policy_info *info, const char *key, const char *staging)
{
	int r = info->slot ? 0 : claim_slot(prog, key, &info->slot);
	if (r < 0)
		return r;
	/* No program reads the slot before a guard's storage names it, and no guard does yet. */
	r = place_tables(prog, m, info->slot);
	if (r == 0)
		r = write_info(m, info);
	if (r == 0)
		r = pin_maps(m, staging);
	if (r == 0 && sg_injected_fault("rename"))
		r = -EIO;
	if (r == 0) {
		char final_dir[PATH_MAX];
		snprintf(final_dir, sizeof(final_dir), "%s/%s", SG_POLICY_ROOT, key);
		if (rename(staging, final_dir) < 0)
			r = -errno;
	}
	return r;
}

/*
 * Makes the tables of @c and publishes them as policy out->key, unless a
 * policy of that key is pinned already: then *@out is that one.
 */
static int find_or_make(struct sg_program *prog, const struct sg_compiled *c, struct sg_tables *out)
{
	struct policy_maps m;
	struct sg_policy_info info = {0};
	char staging[PATH_MAX];

	policy_key(prog, c, out->key);
	if (find_pinned(prog, out) == 0)
		return 0;
	memset(m.fds, -1, sizeof(m.fds));
	m.tables_placed = false;
	snprintf(staging, sizeof(staging), "%s/%s%d-%s", SG_POLICY_ROOT, SG_STAGING_PREFIX,
		 (int)getpid(), out->key);
	sg_unpin_dir(staging);
	int r = mkdir(staging, 0700) < 0 ? -errno : 0;
	if (r == 0)
		r = new_info(prog, c, &info);
	if (r == 0)
		r = sg_program_open_slots(prog);
	if (r == 0)
		r = make_maps(prog, c, out->key, staging, &info, &m);
	if (r == 0)
		r = publish_tables(prog, &m, &info, out->key, staging);
	/* Emptied before freed: no outer map has an entry at a free slot. */
	if (r < 0 && info.slot)
		release_slot(prog, info.slot, out->key);
	sg_unpin_dir(staging);
	close_maps(&m);
	if (r == 0)
		out->info = info;
	return r;
}

int sg_tables_get(struct sg_program *prog, const struct sg_compiled *c, struct sg_tables *out,
		  struct sg_err *err)
{
	memset(out, 0, sizeof(*out));
	int r = find_or_make(prog, c, out);
	if (r < 0) {
		/* Another hook made the same policy first: share theirs. */
		if (find_pinned(prog, out) == 0)
			return 0;
		if (r == -ENOSPC)
			return sg_system_error(
			    err, ENOSPC,
			    "all %d policy slots are in use: run `sysctl-guard gc` "
			    "to free the policies no container uses",
			    SG_MAX_POLICIES - 1);
		if (r == -EOVERFLOW)
			return sg_system_error(
			    err, EOVERFLOW,
			    "cannot lay out the hash tables of policy %s: too many "
			    "of its names or values hash alike under this seed; "
			    "a new attempt draws a new one",
			    out->key);
		return sg_system_error(err, -r,
				       "cannot put the tables of policy %s in the kernel: %s",
				       out->key, strerror(-r));
	}
	return 0;
}

int sg_tables_find(const struct sg_program *prog, const char *key, struct sg_tables *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->key, sizeof(out->key), "%s", key);
	return find_pinned(prog, out);
}

int sg_tables_find_by_inputs(const struct sg_program *prog, uint64_t digest, struct sg_tables *out,
			     char description[SG_DESCRIPTION_LEN])
{
	struct sg_inputs_entry entry;
	_cleanup_close_ int fd = sg_program_open_map(prog->key, "inputs");

	if (fd < 0 || sg_map_lookup_sized(fd, &digest, sizeof(digest), &entry, sizeof(entry)) < 0)
		return -ENOENT;
	entry.policy_key[SG_KEY_LEN - 1] = '\0';
	entry.description[SG_DESCRIPTION_LEN - 1] = '\0';
	if (sg_tables_find(prog, entry.policy_key, out) < 0) {
		/* Its policy was collected since: the inputs will make it again. */
		bpf_map_delete_elem(fd, &digest);
		return -ENOENT;
	}
	memcpy(description, entry.description, SG_DESCRIPTION_LEN);
	return 0;
}

void sg_tables_remember_inputs(const struct sg_program *prog, uint64_t digest,
			       const struct sg_tables *tables, const char *description)
{
	struct sg_inputs_entry entry = {0};
	_cleanup_close_ int fd = sg_program_open_map(prog->key, "inputs");

	snprintf(entry.policy_key, sizeof(entry.policy_key), "%s", tables->key);
	snprintf(entry.description, sizeof(entry.description), "%s",
		 description ? description : "");
	/* Full (SG_MAX_INPUTS): these inputs are parsed again next time, nothing worse. */
	if (fd >= 0 && !sg_injected_fault("inputs"))
		bpf_map_update_elem(fd, &digest, &entry, BPF_ANY);
}

void sg_tables_forget_inputs_of_removed(const struct sg_program *prog)
{
	_cleanup_close_ int fd = sg_program_open_map(prog->key, "inputs");
	_cleanup_free_ uint64_t *digests = sg_xcalloc(SG_MAX_INPUTS, sizeof(*digests));
	struct sg_inputs_entry entry;
	size_t n = 0;

	/* Another build's record may hold other entries: this one's only. */
	if (fd < 0 || !sg_map_shape_is(fd, sizeof(*digests), sizeof(entry)))
		return;
	/* Keys first: deleting while walking would restart the walk. */
	while (n < SG_MAX_INPUTS &&
	       bpf_map_get_next_key(fd, n ? &digests[n - 1] : NULL, &digests[n]) == 0)
		n++;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		if (bpf_map_lookup_elem(fd, &digests[i], &entry) < 0)
			continue;
		entry.policy_key[SG_KEY_LEN - 1] = '\0';
		snprintf(path, sizeof(path), "%s/%s", SG_POLICY_ROOT, entry.policy_key);
		if (access(path, F_OK) < 0)
			bpf_map_delete_elem(fd, &digests[i]);
	}
}

int sg_tables_remove(const char *key)
{
	struct sg_policy_info info;
	struct sg_program prog;
	char dir[PATH_MAX];

	if (sg_tables_read_info(key, &info) == 0 && sg_program_open(info.program_key, &prog) == 0) {
		if (prog.id == info.program_id && sg_program_open_slots(&prog) == 0)
			release_slot(&prog, info.slot, key);
		sg_program_close(&prog);
	}
	snprintf(dir, sizeof(dir), "%s/%s", SG_POLICY_ROOT, key);
	return sg_unpin_dir(dir);
}

/*
 * Makes the map @fd at @slot a vacancy, its long names taken out: they
 * must not be a next policy's. That removal waits for a grace period,
 * which gc can. Failing that, empties and frees the slot.
 */
static void leave_vacancy(const struct sg_program *prog, uint32_t slot, int fd, const char *key)
{
	const int long_names = prog->outer_fds[SG_OUTER_EXACT_LONG];
	uint32_t inner_id;

	if ((bpf_map_lookup_elem(long_names, &slot, &inner_id) == 0 &&
	     bpf_map_delete_elem(long_names, &slot) < 0) ||
	    sg_vacancy_make(prog, slot, fd) < 0)
		release_slot(prog, slot, key);
}

/*
 * Frees policy @key as sg_tables_remove does, but leaves its map of tables
 * in its slot as a vacancy (vacancy.h), if its program has room for it:
 * 0 when freed, -errno when left as it was. The pins lock is held
 * exclusively: no hook finds the policy or takes a vacancy meanwhile.
 */
static int vacate(const char *key)
{
	struct sg_policy_info info;
	struct sg_program prog;
	char path[PATH_MAX];
	int r = sg_tables_read_info(key, &info);

	if (r < 0 || (r = sg_program_open(info.program_key, &prog)) < 0)
		return r;
	if (prog.id != info.program_id || sg_program_open_slots(&prog) < 0)
		r = -ESTALE;
	_cleanup_close_ int fd =
	    r == 0 ? sg_tables_open_map(key, policy_pins[SG_OUTER_TABLES]) : -1;
	if (r == 0 && (fd < 0 || !sg_vacancy_has_room(&prog, fd)))
		r = -ENOSPC;
	snprintf(path, sizeof(path), "%s/%s/info", SG_POLICY_ROOT, key);
	/* Without its info no hook finds the policy again (find_pinned). */
	if (r == 0 && unlink(path) < 0)
		r = -errno;
	if (r == 0) {
		leave_vacancy(&prog, info.slot, fd, key);
		snprintf(path, sizeof(path), "%s/%s", SG_POLICY_ROOT, key);
		sg_unpin_dir(path);
	}
	sg_program_close(&prog);
	return r;
}

/* Waits for removing child @pid: 1 when it removed its policy. */
static int wait_removal(pid_t pid)
{
	int status;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int sg_tables_remove_many(const char (*keys)[SG_KEY_LEN], size_t n)
{
	enum { side_by_side = 64 };
	pid_t running[side_by_side]; /* a ring, the oldest child at @oldest */
	size_t n_running = 0, oldest = 0;
	int removed = 0;

	for (size_t i = 0; i < n; i++) {
		if (vacate(keys[i]) == 0) {
			removed++;
			continue;
		}
		if (n_running == side_by_side) {
			removed += wait_removal(running[oldest]);
			oldest = (oldest + 1) % side_by_side;
			n_running--;
		}
		pid_t pid = fork();
		if (pid == 0)
			_exit(sg_tables_remove(keys[i]) == 0 ? 0 : 1);
		if (pid < 0)
			removed += sg_tables_remove(keys[i]) == 0;
		else
			running[(oldest + n_running++) % side_by_side] = pid;
	}
	for (; n_running > 0; n_running--, oldest = (oldest + 1) % side_by_side)
		removed += wait_removal(running[oldest]);
	return removed;
}

/*
 * The claimed slot after *@slot (the first when @first) into *@slot, and its
 * holder, NUL-terminated; false after the last.
 */
static bool next_claimed_slot(const struct sg_program *prog, bool first, uint32_t *slot,
			      char holder[SG_KEY_LEN])
{
	uint32_t next;

	while (bpf_map_get_next_key(prog->slots_fd, first ? NULL : slot, &next) == 0) {
		first = false;
		*slot = next;
		if (bpf_map_lookup_elem(prog->slots_fd, slot, holder) == 0) {
			holder[SG_KEY_LEN - 1] = '\0';
			return true;
		}
	}
	return false;
}

int sg_tables_release_orphan_slots(const struct sg_program *prog)
{
	char holder[SG_KEY_LEN];
	struct sg_policy_info info;
	uint32_t slot;
	int released = 0;

	for (bool more = next_claimed_slot(prog, true, &slot, holder); more;
	     more = next_claimed_slot(prog, false, &slot, holder)) {
		/* Pinned under the holder's key with this slot: a policy, not an orphan. */
		if (sg_tables_read_info(holder, &info) == 0 && info.slot == slot)
			continue;
		if (strcmp(holder, SG_VACANT) == 0 && sg_vacancy_pinned(prog, slot))
			continue;
		release_slot(prog, slot, holder);
		released++;
	}
	return released;
}

bool sg_tables_any_policy(const struct sg_program *prog)
{
	char holder[SG_KEY_LEN];
	uint32_t slot;

	for (bool more = next_claimed_slot(prog, true, &slot, holder); more;
	     more = next_claimed_slot(prog, false, &slot, holder))
		if (strcmp(holder, SG_VACANT) != 0)
			return true;
	return false;
}
