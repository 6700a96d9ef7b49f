// SPDX-License-Identifier: Apache-2.0
#include "kernel/guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/sysctl_guard.h"
#include "base/log.h"
#include "base/timing.h"
#include "base/util.h"
#include "kernel/cgroup.h"
#include "kernel/fault.h"
#include "kernel/map.h"
#include "kernel/seen.h"

_Static_assert(sizeof(struct sg_guard_meta) == 512, "meta map value is 512 bytes");

void sg_guard_entry_name(uint64_t cgroup_id, char out[32])
{
	snprintf(out, 32, "%llu", (unsigned long long)cgroup_id);
}

/*
 * The index of guards by container: SG_CONTAINER_ROOT/<id> is a symlink to
 * the guard's entry, so that poststop finds its guard without reading every
 * guard on the node. bpffs refuses names with dots; OCI ids may hold them
 * but never ':', which stands for them here. False when the id cannot be a
 * name (empty, too long).
 */
static bool container_link_path(const char *id, char out[PATH_MAX])
{
	size_t len = strlen(id);

	if (len == 0 || len > NAME_MAX || strchr(id, '/'))
		return false;
	int n = snprintf(out, PATH_MAX, "%s/%s", SG_CONTAINER_ROOT, id);
	for (char *c = out + n - len; *c; c++)
		if (*c == '.')
			*c = ':';
	return true;
}

/* The guard entry the index link at @path names ("../<entry>"), when it is one. */
static bool link_entry(const char *path, char entry[32])
{
	char target[64];
	ssize_t n = readlink(path, target, sizeof(target) - 1);

	if (n <= 0)
		return false;
	target[n] = '\0';
	const char *name = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	if (!sg_guard_is_entry(name) || strlen(name) >= 32)
		return false;
	snprintf(entry, 32, "%s", name);
	return true;
}

/* The entry container @id's index link names, when there is one. */
static bool indexed_entry(const char *id, char entry[32])
{
	char path[PATH_MAX];
	return container_link_path(id, path) && link_entry(path, entry);
}

/* Links container @id to @entry; *made says whether this call made the link. */
static int index_container(const char *id, const char *entry, bool *made)
{
	char path[PATH_MAX], target[64], existing[32];

	*made = false;
	if (!container_link_path(id, path))
		return 0; /* found by a scan instead */
	if (indexed_entry(id, existing) && strcmp(existing, entry) == 0)
		return 0;
	unlink(path);
	snprintf(target, sizeof(target), "../%s", entry);
	if (symlink(target, path) < 0)
		return -errno;
	*made = true;
	return 0;
}

/* Removes container @id's index link if it names @entry. */
static void unindex_container(const char *id, const char *entry)
{
	char path[PATH_MAX], existing[32];

	if (indexed_entry(id, existing) && strcmp(existing, entry) == 0 &&
	    container_link_path(id, path))
		unlink(path);
}

bool sg_guard_meta_id_starts(const struct sg_guard_meta *meta, const char *prefix)
{
	const size_t kept = sizeof(meta->container_id) - 1, len = strlen(prefix);
	return strncmp(meta->container_id, prefix, len < kept ? len : kept) == 0;
}

bool sg_guard_meta_names(const struct sg_guard_meta *meta, const char *id)
{
	const size_t kept = sizeof(meta->container_id) - 1, len = strlen(id);
	return sg_guard_meta_id_starts(meta, id) &&
	       strlen(meta->container_id) == (len < kept ? len : kept);
}

/* Removes every pin of a guard directory and the directory; detaches when @detach. */
static int remove_pins(const char *dir, bool detach)
{
	char path[PATH_MAX];
	int ret = 0;

	if (detach) {
		snprintf(path, sizeof(path), "%s/link", dir);
		_cleanup_close_ int fd = bpf_obj_get(path);
		/* LINK_DETACH takes effect even while other references keep the link. */
		if (fd >= 0 && bpf_link_detach(fd) < 0 && errno != EINVAL && errno != ENOLINK)
			ret = -errno;
	}
	int r = sg_unpin_dir(dir);
	return r < 0 ? r : ret;
}

/* A small map the program never reads, pinned for status: meta or rule names. */
static int pin_user_map(const char *dir, const char *name, const void *values, size_t value_size,
			size_t n)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = sg_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(uint32_t),
					       (uint32_t)value_size, n ? (uint32_t)n : 1, 0);
	if (fd < 0)
		return -errno;
	_cleanup_free_ uint32_t *keys = sg_xcalloc(n, sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		keys[i] = i;
	int r = sg_map_update_all(fd, keys, sizeof(uint32_t), values, value_size, n, BPF_ANY);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_pin(fd, path) < 0 ? -errno : 0;
}

static int pin_meta(const char *dir, const struct sg_guard_meta *meta)
{
	return pin_user_map(dir, "meta", meta, sizeof(*meta), 1);
}

static void fill_meta(struct sg_guard_meta *meta, uint64_t cgid, const struct sg_tables *tables,
		      const struct sg_guard_options *o, const char *description)
{
	const struct sg_config *config = &tables->info.config;

	memset(meta, 0, sizeof(*meta));
	meta->format = SG_META_FORMAT;
	meta->cgroup_id = cgid;
	meta->attached_at = (uint64_t)time(NULL);
	meta->n_layers = config->n_layers;
	meta->n_rules = config->n_rules;
	meta->rewrite_works = config->rewrite_works;
	/* A policy with an audit layer (audit_events) records what it would have done. */
	meta->learn = o->learn || config->audit_events;
	meta->save_learned = o->learn;
	meta->host_namespaces = (uint8_t)o->host_namespaces;
	meta->namespaces_checked = o->namespaces_checked;
	for (uint32_t i = 0; i < config->n_layers && i < SG_LAYERS_MAX; i++)
		meta->layer_modes[i] = config->layers[i].mode;
	snprintf(meta->policy_key, sizeof(meta->policy_key), "%s", tables->key);
	snprintf(meta->program_key, sizeof(meta->program_key), "%s", tables->info.program_key);
	snprintf(meta->container_id, sizeof(meta->container_id), "%s",
		 o->container_id ? o->container_id : "");
	snprintf(meta->description, sizeof(meta->description), "%s", description);
}

/* The key of a cgroup's storage, padding zeroed: the kernel gets the whole struct. */
static void storage_key(uint64_t cgid, struct bpf_cgroup_storage_key *key)
{
	memset(key, 0, sizeof(*key));
	key->cgroup_inode_id = cgid;
	key->attach_type = BPF_CGROUP_SYSCTL;
}

/*
 * The per-attachment storage of (@cgid, sysctl): who the guard is, what it
 * records, and its policy. The kernel swaps the whole value at once, so a
 * replaced policy takes effect in one step.
 */
static int put_storage(const struct sg_program *prog, uint64_t cgid,
		       const struct sg_guard_storage *storage)
{
	struct bpf_cgroup_storage_key key;
	storage_key(cgid, &key);
	return bpf_map_update_elem(prog->guard_fd, &key, storage, BPF_ANY) < 0 ? -errno : 0;
}

static int get_storage(const struct sg_program *prog, uint64_t cgid,
		       struct sg_guard_storage *storage)
{
	struct bpf_cgroup_storage_key key;
	storage_key(cgid, &key);
	return bpf_map_lookup_elem(prog->guard_fd, &key, storage) < 0 ? -errno : 0;
}

/*
 * The guard's storage for its policy. With @keep_totals, the verdict totals
 * the program has counted so far, in this value (also while the link waited
 * for it), carry over; what it counts between the read and the write is lost.
 */
static int set_storage(const struct sg_program *prog, const struct sg_guard_meta *meta,
		       const struct sg_tables *tables, const struct sg_guard_options *o,
		       bool keep_totals)
{
	uint64_t cgid = meta->cgroup_id;
	struct sg_guard_storage now, storage = {.cgroup_id = cgid,
						.learn = meta->learn,
						.events = o->events,
						.slot = tables->info.slot,
						.host_namespaces = o->host_namespaces,
						.config = tables->info.config};
	if (keep_totals && get_storage(prog, cgid, &now) == 0) {
		memcpy(storage.verdicts, now.verdicts, sizeof(storage.verdicts));
		storage.events_dropped = now.events_dropped;
	}
	return put_storage(prog, cgid, &storage);
}

/*
 * The kernel's info of a link, all zero when it cannot be read: its program
 * (prog_id), and the cgroup it is attached to (cgroup.cgroup_id; 0 once it
 * is detached, or its cgroup is gone).
 */
static struct bpf_link_info link_info(int link_fd)
{
	struct bpf_link_info info = {};
	uint32_t len = sizeof(info);
	if (link_fd < 0 || bpf_obj_get_info_by_fd(link_fd, &info, &len) < 0)
		memset(&info, 0, sizeof(info));
	return info;
}

static uint32_t prog_id(int prog_fd)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	return bpf_obj_get_info_by_fd(prog_fd, &info, &len) == 0 ? info.id : 0;
}

/*
 * Whether the new guard keeps the old one's link: a guard replaced by one of
 * the same program does (the cgroup's storage then names the new policy);
 * one of another build of the program gets a new link next to the old one,
 * and so does one whose link was detached behind its back.
 */
static bool link_reusable(const struct sg_program *prog, uint64_t cgid, int old_link_fd)
{
	const struct bpf_link_info old = link_info(old_link_fd);
	return old.prog_id && old.prog_id == prog_id(prog->prog_fd) && old.cgroup.cgroup_id == cgid;
}

/* The link of the new guard: the old one's when @reuse, else a new one. */
static int make_link(const struct sg_program *prog, int cg_fd, int old_link_fd, bool reuse)
{
	if (reuse) {
		int fd = dup(old_link_fd);
		return fd < 0 ? -errno : fd;
	}
	if (sg_injected_fault("attach"))
		return -EIO;
	int fd = bpf_link_create(prog->prog_fd, cg_fd, BPF_CGROUP_SYSCTL, NULL);
	return fd < 0 ? -errno : fd;
}

/*
 * The policy's tables: those its inputs made before (by their @digest; NULL
 * when they cannot be cached), or its compiled form's, made by policy->make
 * first when *@compiled is NULL (and kept there: a second try after gc does
 * not compile again). @description: the guard's description, which found
 * inputs or make give.
 */
static int find_or_make_tables(struct sg_program *prog, const struct sg_policy_request *policy,
			       const uint64_t *digest, const struct sg_compiled **compiled,
			       struct sg_tables *tables, char description[SG_DESCRIPTION_LEN],
			       struct sg_err *err)
{
	int r = 0;

	if (digest && sg_tables_find_by_inputs(prog, *digest, tables, description) == 0) {
		sg_debug("policy %s found by its inputs", tables->key);
		return 0;
	}
	if (!*compiled) {
		const char *made_description = "";
		r = policy->make(policy->make_arg, compiled, &made_description, err);
		if (r == 0)
			snprintf(description, SG_DESCRIPTION_LEN, "%s", made_description);
	}
	if (r == 0)
		r = sg_tables_get(prog, *compiled, tables, err);
	if (r == 0 && digest)
		sg_tables_remember_inputs(prog, *digest, tables, description);
	return r;
}

static int gc_locked(unsigned min_age_s, bool preloaded, bool programs);

/* The node's program and the policy's tables, under the pins lock held shared in *lock_fd. */
static int get_program_and_tables(const struct sg_policy_request *policy, struct sg_program *prog,
				  struct sg_tables *tables, char description[SG_DESCRIPTION_LEN],
				  int *lock_fd, struct sg_err *err)
{
	const struct sg_compiled *compiled = policy->compiled;
	uint64_t digest;
	int r = sg_bpffs_prepare(err);
	if (r < 0)
		return r;
	*lock_fd = sg_pins_lock(false);
	if (*lock_fd < 0)
		return sg_system_error(err, -*lock_fd, "cannot lock %s: %s", SG_PIN_ROOT,
				       strerror(-*lock_fd));
	r = sg_program_get(prog, err);
	if (r < 0)
		return r;
	/* Once, before make, which may free what the inputs point to. */
	bool cached = policy->inputs && sg_inputs_digest(policy->inputs, prog->secret, &digest);
	r = find_or_make_tables(prog, policy, cached ? &digest : NULL, &compiled, tables,
				description, err);
	if (r != -ENOSPC)
		return r;
	/*
	 * Every slot is taken: free those of policies no guard uses, and try
	 * once more. Not the programs: this one may hold no policy then, and
	 * unpinned, the next hook would load it again.
	 */
	close(*lock_fd);
	gc_locked(SG_GC_MIN_AGE, false, false);
	*lock_fd = sg_pins_lock(false);
	if (*lock_fd < 0)
		return r;
	memset(err, 0, sizeof(*err));
	return find_or_make_tables(prog, policy, cached ? &digest : NULL, &compiled, tables,
				   description, err);
}

/* An attach under way: its names, and what to undo if a later step fails. */
struct attach {
	const char *cgroup_dir;
	uint64_t cgid;
	char entry[32], final_dir[PATH_MAX], staging[PATH_MAX];
	int link_fd, old_link_fd;
	bool replacing;	  /* a guard is there already */
	bool reused;	  /* its link stays: the same program */
	bool had_storage; /* old_storage holds what to put back */
	bool indexed;	  /* this attach made the container's index link */
	struct sg_guard_storage old_storage;
};

static void attach_init(struct attach *a, const char *cgroup_dir, uint64_t cgid)
{
	char path[PATH_MAX];

	memset(a, 0, sizeof(*a));
	a->cgroup_dir = cgroup_dir;
	a->cgid = cgid;
	a->link_fd = -1;
	sg_guard_entry_name(cgid, a->entry);
	snprintf(a->final_dir, sizeof(a->final_dir), "%s/%s", SG_PIN_ROOT, a->entry);
	snprintf(a->staging, sizeof(a->staging), "%s/%s%d-%s", SG_PIN_ROOT, SG_STAGING_PREFIX,
		 (int)getpid(), a->entry);
	snprintf(path, sizeof(path), "%s/link", a->final_dir);
	a->old_link_fd = bpf_obj_get(path);
	a->replacing = a->old_link_fd >= 0;
}

static void attach_close(struct attach *a)
{
	if (a->link_fd >= 0)
		close(a->link_fd);
	if (a->old_link_fd >= 0)
		close(a->old_link_fd);
}

/*
 * The guard's directory, aside, with its meta. One of the same name is left
 * by a killed hook of this pid: unpinned, never detached, as its link may be
 * the one its cgroup's guard still uses (sg_guard_remove_staging).
 */
static int stage(struct attach *a, const struct sg_guard_meta *meta, struct sg_err *err)
{
	remove_pins(a->staging, false);
	if (mkdir(a->staging, 0700) < 0)
		return sg_system_error(err, errno, "cannot create %s: %s", a->staging,
				       strerror(errno));
	int r = pin_meta(a->staging, meta);
	if (r < 0)
		return sg_system_error(err, -r, "cannot pin the guard's data in %s: %s", a->staging,
				       strerror(-r));
	return 0;
}

/*
 * The cgroup runs the program with the policy in its storage. A new link
 * joins an old one before the old one goes: every program on a cgroup runs
 * and any denial wins, so the cgroup is never unguarded.
 */
static int enforce(struct attach *a, const struct sg_program *prog, int cg_fd,
		   const struct sg_guard_meta *meta, const struct sg_tables *tables,
		   const struct sg_guard_options *o, struct sg_err *err)
{
	struct sg_guard_storage stale;
	a->reused = link_reusable(prog, a->cgid, a->old_link_fd);
	/*
	 * A cgroup's storage outlives its guards and their links (the kernel
	 * frees it with the cgroup): one guarded before still names the last
	 * guard's policy, and holds its totals. Written before a new link
	 * exists, that link never runs with a policy whose slot may be another's
	 * by now, and its totals start at zero. Only a link kept keeps them.
	 */
	if (!a->reused && get_storage(prog, a->cgid, &stale) == 0) {
		int r = set_storage(prog, meta, tables, o, false);
		if (r < 0)
			return sg_system_error(err, -r, "cannot put the guard of %s in place: %s",
					       a->cgroup_dir, strerror(-r));
	}
	a->link_fd = make_link(prog, cg_fd, a->old_link_fd, a->reused);
	if (a->link_fd < 0) /* a kernel without the cgroup sysctl attach type says EINVAL */
		return sg_kernel_error(err, -a->link_fd, "cannot attach to cgroup %s: %s",
				       a->cgroup_dir, strerror(-a->link_fd));
	a->had_storage = a->reused && get_storage(prog, a->cgid, &a->old_storage) == 0;
	int r = set_storage(prog, meta, tables, o, true);
	/* kill_after_storage: killed here, a hook leaves the storage ahead of the meta (gc) */
	if (r == 0 && sg_injected_fault("kill_after_storage"))
		kill(getpid(), SIGKILL);
	if (r == 0 && o->container_id)
		r = index_container(o->container_id, a->entry, &a->indexed);
	if (r < 0)
		return sg_system_error(err, -r, "cannot put the guard of %s in place: %s",
				       a->cgroup_dir, strerror(-r));
	return 0;
}

/* The staged directory, with the link, takes the guard's name: the guard is complete. */
static int commit(struct attach *a, struct sg_err *err)
{
	char path[PATH_MAX];
	int r = sg_injected_fault("pin");

	snprintf(path, sizeof(path), "%s/link", a->staging);
	if (r == 0 && bpf_obj_pin(a->link_fd, path) < 0)
		r = -errno;
	if (r == 0)
		r = sg_injected_fault("rename");
	if (r == 0 && (a->replacing ? sg_rename_exchange(a->staging, a->final_dir)
				    : rename(a->staging, a->final_dir)) < 0)
		r = -errno;
	if (r < 0)
		return sg_system_error(err, -r, "cannot put the guard of %s in place: %s",
				       a->cgroup_dir, strerror(-r));
	return 0;
}

/* After a failed step: only a link made here is detached; a kept one gets its policy back. */
static void undo(struct attach *a, const struct sg_program *prog, const struct sg_guard_options *o)
{
	if (a->link_fd >= 0 && !a->reused)
		bpf_link_detach(a->link_fd);
	else if (a->had_storage)
		put_storage(prog, a->cgid, &a->old_storage);
	if (a->indexed)
		unindex_container(o->container_id, a->entry);
	remove_pins(a->staging, false);
}

/*
 * One change at a time per cgroup: two attaches side by side could leave its
 * storage naming one's policy and its meta the other's. Released with @cg_fd.
 */
static int lock_cgroup(int cg_fd, const char *cgroup_dir, struct sg_err *err)
{
	if (flock(cg_fd, LOCK_EX) < 0)
		return sg_system_error(err, errno, "cannot lock cgroup %s: %s", cgroup_dir,
				       strerror(errno));
	return 0;
}

/*
 * A container's hook replaces only its own guard, or none: containers that
 * share a cgroup (runc allows it) share its guard, and one's policy would
 * replace the other's, which could widen it; the other's poststop would
 * then leave the cgroup unguarded. A guard made by `attach` (no container)
 * is the operator's, and stays too. `attach` replaces its own kind, not a
 * container's: that guard holds the node's baseline, and the container's
 * poststop would no longer find it.
 */
static int check_owner(uint64_t cgid, const char *cgroup_dir, const char *container_id,
		       struct sg_err *err)
{
	struct sg_guard_meta meta;
	struct sg_err ignored = {0};
	char entry[32];

	sg_guard_entry_name(cgid, entry);
	if (sg_guard_read_meta(entry, &meta, &ignored) < 0 || !sg_guard_link_alive(entry))
		return 0;
	if (!container_id && meta.container_id[0])
		return sg_input_error(
		    err,
		    "cgroup %s is guarded for container %s by its hook; `sysctl-guard "
		    "detach --cgroup %s` first if it is to be guarded otherwise",
		    cgroup_dir, meta.container_id, cgroup_dir);
	if (!container_id || sg_guard_meta_names(&meta, container_id))
		return 0;
	if (!meta.container_id[0])
		return sg_input_error(
		    err,
		    "cgroup %s is guarded by `sysctl-guard attach`; a container "
		    "in it would replace that guard: detach it first, or give the "
		    "container a cgroup of its own",
		    cgroup_dir);
	return sg_input_error(err,
			      "cgroup %s is guarded for container %s; containers that share a "
			      "cgroup share its guard, and this one's policy would replace that "
			      "one's: give each container a cgroup of its own",
			      cgroup_dir, meta.container_id);
}

int sg_guard_attach(const char *cgroup_dir, const struct sg_policy_request *policy,
		    const struct sg_guard_options *options, struct sg_guard_meta *meta,
		    struct sg_err *err)
{
	__attribute__((cleanup(sg_program_close))) struct sg_program prog;
	__attribute__((cleanup(attach_close))) struct attach a = {.link_fd = -1, .old_link_fd = -1};
	_cleanup_close_ int cg_fd = -1, lock_fd = -1;
	struct sg_tables tables;
	char description[SG_DESCRIPTION_LEN];
	uint64_t cgid;

	snprintf(description, sizeof(description), "%s",
		 options->description ? options->description : "");
	sg_program_init(&prog);
	int r = sg_cgroup_open(cgroup_dir, &cg_fd, &cgid, err);
	if (r == 0)
		r = lock_cgroup(cg_fd, cgroup_dir, err);
	if (r == 0)
		r = check_owner(cgid, cgroup_dir, options->container_id, err);
	if (r == 0)
		r = get_program_and_tables(policy, &prog, &tables, description, &lock_fd, err);
	sg_timing_mark("tables");
	if (r < 0)
		return r;
	fill_meta(meta, cgid, &tables, options, description);
	attach_init(&a, cgroup_dir, cgid);

	r = stage(&a, meta, err);
	if (r == 0)
		r = enforce(&a, &prog, cg_fd, meta, &tables, options, err);
	if (r == 0)
		r = commit(&a, err);
	if (r < 0) {
		undo(&a, &prog, options);
		return r;
	}
	if (a.replacing)
		remove_pins(a.staging, !a.reused); /* the old guard, now in staging */
	sg_timing_mark("attach");
	return 0;
}

/*
 * Whether a hook with @policy's inputs finds @tables by them, which is what
 * preloading is for: not when the node's record of inputs is full, or when
 * this binary cannot digest inputs (no build id).
 */
static int check_found_by_inputs(const struct sg_program *prog,
				 const struct sg_policy_request *policy,
				 const struct sg_tables *tables, struct sg_err *err)
{
	char description[SG_DESCRIPTION_LEN];
	struct sg_tables found;
	uint64_t digest;

	if (!policy->inputs || !sg_inputs_digest(policy->inputs, prog->secret, &digest))
		return sg_system_error(err, ENOTSUP,
				       "policy %s is made, but its inputs cannot be recorded (this "
				       "binary has no build id): containers will make it again",
				       tables->key);
	if (sg_tables_find_by_inputs(prog, digest, &found, description) < 0 ||
	    strcmp(found.key, tables->key) != 0)
		return sg_system_error(
		    err, ENOSPC,
		    "policy %s is made, but the node's record of inputs is full "
		    "(%d): its first container will make it again; `sysctl-guard "
		    "gc` forgets the inputs of policies it frees",
		    tables->key, SG_MAX_INPUTS);
	return 0;
}

int sg_guard_preload(const struct sg_policy_request *policy, const char *label,
		     struct sg_tables *tables, char description[SG_DESCRIPTION_LEN],
		     struct sg_err *err)
{
	__attribute__((cleanup(sg_program_close))) struct sg_program prog;
	_cleanup_close_ int lock_fd = -1;

	sg_program_init(&prog);
	int r = get_program_and_tables(policy, &prog, tables, description, &lock_fd, err);
	if (r < 0)
		return r;
	/* Under the pins lock: gc cannot take the policy before it is marked. */
	r = sg_tables_take_mark(tables->key, label);
	if (r < 0)
		return sg_system_error(err, -r, "cannot mark policy %s preloaded: %s", tables->key,
				       strerror(-r));
	return check_found_by_inputs(&prog, policy, tables, err);
}

int sg_guard_drop_marks_except(const char *const *labels, size_t n, const char *scope,
			       struct sg_err *err)
{
	_cleanup_close_ int lock_fd = sg_pins_lock(false);
	int r = lock_fd < 0 ? lock_fd : sg_tables_drop_marks_except(labels, n, scope);

	if (r < 0)
		return sg_system_error(err, -r, "cannot take preloaded marks off: %s",
				       strerror(-r));
	return 0;
}

int sg_guard_remove_staging(const char *name, struct sg_err *err)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, name);
	int r = sg_unpin_dir(dir);
	if (r < 0)
		return sg_system_error(err, -r, "cannot remove %s: %s", dir, strerror(-r));
	return 0;
}

int sg_guard_remove_entry(const char *entry, struct sg_err *err)
{
	struct sg_guard_meta meta;
	struct sg_err ignored = {0};
	bool read = sg_guard_read_meta(entry, &meta, &ignored) == 0;

	return sg_guard_remove_entry_of(entry, read ? &meta : NULL, err);
}

int sg_guard_remove_entry_of(const char *entry, const struct sg_guard_meta *meta,
			     struct sg_err *err)
{
	char dir[PATH_MAX];

	if (meta && meta->container_id[0])
		unindex_container(meta->container_id, entry);
	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, entry);
	int r = remove_pins(dir, true);
	if (meta && meta->learn)
		sg_seen_forget(meta->program_key, meta->cgroup_id);
	if (r < 0)
		return sg_system_error(err, -r, "cannot remove the guard pinned at %s: %s", dir,
				       strerror(-r));
	return 0;
}

int sg_guard_detach(const char *cgroup_dir, bool *found, struct sg_err *err)
{
	_cleanup_close_ int cg_fd = -1;
	char entry[32];
	uint64_t cgid;

	int r = sg_cgroup_open(cgroup_dir, &cg_fd, &cgid, err);
	if (r == 0)
		r = lock_cgroup(cg_fd, cgroup_dir, err);
	if (r < 0)
		return r;
	sg_guard_entry_name(cgid, entry);
	*found = sg_guard_exists(entry);
	if (!*found)
		return 0;
	return sg_guard_remove_entry(entry, err);
}

/* The guards whose metas name a container id (whole) or begin with it (prefix). */
struct id_matches {
	int whole, prefix;
	char whole_entry[32], prefix_entry[32]; /* the first of each */
	struct sg_guard_meta whole_meta;
};

/* One look at the metas of every guard, for an id the index does not answer. */
static void scan_container_ids(const char *id, struct id_matches *m)
{
	DIR *dir = opendir(SG_PIN_ROOT);
	struct sg_guard_meta meta;

	memset(m, 0, sizeof(*m));
	for (struct dirent *de; dir && (de = readdir(dir));) {
		struct sg_err ignored = {0};

		if (!sg_guard_is_entry(de->d_name) ||
		    sg_guard_read_meta(de->d_name, &meta, &ignored) < 0 || !meta.container_id[0] ||
		    !sg_guard_meta_id_starts(&meta, id))
			continue;
		if (m->prefix++ == 0)
			snprintf(m->prefix_entry, sizeof(m->prefix_entry), "%s", de->d_name);
		if (sg_guard_meta_names(&meta, id) && m->whole++ == 0) {
			snprintf(m->whole_entry, sizeof(m->whole_entry), "%s", de->d_name);
			m->whole_meta = meta;
		}
	}
	if (dir)
		closedir(dir);
}

/*
 * The link says where to look; the guard's own meta says whether it is this
 * container's: as far as it holds the id, the link's name (the whole id)
 * the rest.
 */
static bool find_indexed(const char *id, char entry[32], struct sg_guard_meta *meta)
{
	struct sg_err ignored = {0};
	return indexed_entry(id, entry) && sg_guard_read_meta(entry, meta, &ignored) == 0 &&
	       sg_guard_meta_names(meta, id);
}

int sg_guard_find_container_exact(const char *id, char entry[32], struct sg_guard_meta *meta)
{
	char path[PATH_MAX];
	struct id_matches m;

	if (find_indexed(id, entry, meta))
		return 0;
	if (container_link_path(id, path))
		return -ENOENT;
	/*
	 * An id no index link can name (a '/' in it, longer than a file name).
	 * The meta keeps only the start of a long id: where two guards' metas
	 * both name it, neither is taken.
	 */
	scan_container_ids(id, &m);
	if (m.whole != 1)
		return -ENOENT;
	snprintf(entry, 32, "%s", m.whole_entry);
	*meta = m.whole_meta;
	return 0;
}

void sg_guard_gc_index(void)
{
	DIR *dir = opendir(SG_CONTAINER_ROOT);
	char entry[32], path[PATH_MAX];

	for (struct dirent *de; dir && (de = readdir(dir));) {
		if (de->d_name[0] == '.')
			continue;
		/* The name is the encoded id; the link itself says where it points. */
		snprintf(path, sizeof(path), "%s/%s", SG_CONTAINER_ROOT, de->d_name);
		if (link_entry(path, entry) && sg_guard_exists(entry))
			continue;
		unlink(path);
	}
	if (dir)
		closedir(dir);
}

bool sg_guard_exists(const char *entry)
{
	char dir[PATH_MAX];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, entry);
	return stat(dir, &st) == 0;
}

int sg_guard_find_container(const char *id, char entry[32])
{
	struct sg_guard_meta meta;
	struct id_matches m;

	if (find_indexed(id, entry, &meta))
		return 0;
	scan_container_ids(id, &m);
	/* A whole id wins over ids it begins ("web" beside "web-2"). */
	if (m.whole)
		snprintf(entry, 32, "%s", m.whole_entry);
	else if (m.prefix == 1)
		snprintf(entry, 32, "%s", m.prefix_entry);
	return m.whole || m.prefix == 1 ? 0 : m.prefix ? -ENOTUNIQ : -ENOENT;
}

static int open_in(const char *dir, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

/* The guard's verdict totals, from its cgroup's storage of the program that guards it. */
static void read_totals(const char *program_key, uint64_t cgid, struct sg_guard_status *out)
{
	struct bpf_cgroup_storage_key key;
	struct sg_guard_storage storage;
	_cleanup_close_ int fd = sg_program_open_map(program_key, "guard");

	storage_key(cgid, &key);
	if (fd < 0 || sg_map_lookup_sized(fd, &key, sizeof(key), &storage, sizeof(storage)) < 0)
		return;
	memcpy(out->totals, storage.verdicts, sizeof(out->totals));
	out->events_dropped = storage.events_dropped;
}

/* The policy's per-rule counters, which every cgroup it guards adds to. */
static void read_counters(const char *policy_key, struct sg_guard_status *out)
{
	struct sg_tables_view view;
	uint32_t n;

	if (sg_tables_view_open(policy_key, &view) < 0)
		return;
	const uint64_t *counters = sg_tables_view_table(&view, SG_TABLE_COUNTERS, &n);
	out->n_rows = n / SG_VERDICT_COUNT;
	out->counters = sg_xcalloc(n ? n : 1, sizeof(uint64_t));
	memcpy(out->counters, counters, (size_t)n * sizeof(uint64_t));
	sg_tables_view_close(&view);
}

bool sg_guard_policy_rewrites(const struct sg_guard_meta *meta)
{
	struct sg_tables_view view;
	uint32_t n;
	bool rewrites = false;

	if (sg_tables_view_open(meta->policy_key, &view) < 0)
		return false;
	const struct sg_rule_entry *rules = sg_tables_view_table(&view, SG_TABLE_RULES, &n);
	for (uint32_t k = 0; k < meta->n_rules && k < n; k++)
		rewrites = rewrites || (rules[k].flags & SG_RULE_REWRITE) ||
			   rules[k].on_violation == SG_VIOLATION_CLAMP;
	sg_tables_view_close(&view);
	return rewrites;
}

/* Rules whose names cannot be read stay unnamed: the counters are what status is for. */
static void read_rule_names(const char *policy_key, struct sg_guard_status *out)
{
	out->rule_names = sg_xcalloc(out->meta.n_rules, sizeof(*out->rule_names));
	sg_tables_read_rule_names(policy_key, out->meta.n_rules, out->rule_names);
}

/* The info of the link pinned in @dir (link_info). */
static struct bpf_link_info pinned_link_info(const char *dir)
{
	_cleanup_close_ int fd = open_in(dir, "link");
	return link_info(fd);
}

static void read_link(const char *dir, struct sg_guard_status *out)
{
	const struct bpf_link_info info = pinned_link_info(dir);
	out->prog_id = info.prog_id;
	out->link_alive = info.cgroup.cgroup_id != 0;
}

bool sg_guard_link_alive(const char *entry)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, entry);
	return pinned_link_info(dir).cgroup.cgroup_id != 0;
}

bool sg_guard_is_entry(const char *name)
{
	return name[0] >= '0' && name[0] <= '9';
}

bool sg_is_orphan_staging(const char *name)
{
	if (strncmp(name, SG_STAGING_PREFIX, strlen(SG_STAGING_PREFIX)) != 0)
		return false;
	int pid = atoi(name + strlen(SG_STAGING_PREFIX));
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

int sg_guard_read_meta(const char *entry, struct sg_guard_meta *meta, struct sg_err *err)
{
	char dir[PATH_MAX];
	uint32_t zero = 0;

	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, entry);
	_cleanup_close_ int fd = open_in(dir, "meta");
	if (fd < 0)
		return sg_system_error(err, errno, "cannot read the guard pinned at %s: %s", dir,
				       strerror(errno));
	if (sg_map_lookup_sized(fd, &zero, sizeof(zero), meta, sizeof(*meta)) < 0 ||
	    meta->format != SG_META_FORMAT)
		return sg_system_error(err, EPROTO, "%s/meta: not a guard of this version", dir);
	meta->policy_key[SG_KEY_LEN - 1] = '\0';
	meta->program_key[SG_KEY_LEN - 1] = '\0';
	meta->container_id[sizeof(meta->container_id) - 1] = '\0';
	meta->description[SG_DESCRIPTION_LEN - 1] = '\0';
	return 0;
}

int sg_guard_read(const char *entry, struct sg_guard_status *out, struct sg_err *err)
{
	char dir[PATH_MAX];

	memset(out, 0, sizeof(*out));
	int r = sg_guard_read_meta(entry, &out->meta, err);
	if (r < 0)
		return r;
	snprintf(dir, sizeof(dir), "%s/%s", SG_PIN_ROOT, entry);
	read_rule_names(out->meta.policy_key, out);
	read_totals(out->meta.program_key, out->meta.cgroup_id, out);
	read_counters(out->meta.policy_key, out);
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

/* The ids of every program some link uses. */
static size_t linked_programs(uint32_t **ids)
{
	size_t n = 0;
	*ids = NULL;
	for (uint32_t id = 0; bpf_link_get_next_id(id, &id) == 0;) {
		_cleanup_close_ int fd = bpf_link_get_fd_by_id(id);
		uint32_t prog = link_info(fd).prog_id;
		if (!prog)
			continue;
		*ids = sg_xrealloc(*ids, n + 1, sizeof(uint32_t));
		(*ids)[n++] = prog;
	}
	return n;
}

static void add_key(char (**keys)[SG_KEY_LEN], size_t *n, const char *key)
{
	*keys = sg_xrealloc(*keys, *n + 1, SG_KEY_LEN);
	snprintf((*keys)[(*n)++], SG_KEY_LEN, "%s", key);
}

/*
 * The policies the cgroups' storage of program @key names, where a guard's
 * link still enforces: what its guards use, whatever their metas say (a hook
 * killed between writing the storage and renaming the new meta into place
 * leaves the two apart). A cgroup keeps its storage after a detach, until
 * it is removed: that storage names nothing in use.
 */
static void add_if_enforced(const struct sg_program *prog, const struct bpf_cgroup_storage_key *at,
			    char (**keys)[SG_KEY_LEN], size_t *n)
{
	struct sg_guard_storage storage;
	char holder[SG_KEY_LEN], entry[32];

	sg_guard_entry_name(at->cgroup_inode_id, entry);
	if (!sg_guard_link_alive(entry) || bpf_map_lookup_elem(prog->guard_fd, at, &storage) < 0 ||
	    storage.slot == 0 || bpf_map_lookup_elem(prog->slots_fd, &storage.slot, holder) < 0)
		return;
	holder[SG_KEY_LEN - 1] = '\0';
	add_key(keys, n, holder);
}

static void add_enforced_policies(const char *key, char (**keys)[SG_KEY_LEN], size_t *n)
{
	struct bpf_cgroup_storage_key at, next;
	struct sg_program prog;

	/* Opened, its maps have this build's shapes (sg_program_open). */
	if (sg_program_open(key, &prog) < 0)
		return;
	if (sg_program_open_slots(&prog) == 0)
		for (int r = bpf_map_get_next_key(prog.guard_fd, NULL, &next); r == 0;
		     r = bpf_map_get_next_key(prog.guard_fd, &at, &next)) {
			at = next;
			add_if_enforced(&prog, &at, keys, n);
		}
	sg_program_close(&prog);
}

/* What every program's guards enforce (add_enforced_policies). */
static void add_all_enforced_policies(char (**keys)[SG_KEY_LEN], size_t *n)
{
	DIR *dir = opendir(SG_PROGRAM_ROOT);

	for (struct dirent *de; dir && (de = readdir(dir));)
		if (de->d_name[0] != '.' && !sg_is_orphan_staging(de->d_name))
			add_enforced_policies(de->d_name, keys, n);
	if (dir)
		closedir(dir);
}

/*
 * The policy keys the guards pinned on this node name, and those their
 * cgroups' storage names (add_enforced_policies). *@unknown: guards
 * whose meta another version of sysctl-guard wrote (or that cannot be read
 * now), whose links still enforce: which policies they use is not known.
 */
static size_t used_policies(char (**keys)[SG_KEY_LEN], size_t *unknown)
{
	DIR *dir = opendir(SG_PIN_ROOT);
	size_t n = 0;

	*keys = NULL;
	*unknown = 0;
	for (struct dirent *de; dir && (de = readdir(dir));) {
		struct sg_guard_meta meta;
		struct sg_err err = {0};
		if (!sg_guard_is_entry(de->d_name))
			continue;
		if (sg_guard_read_meta(de->d_name, &meta, &err) < 0) {
			/* Removed while we looked is no news. */
			if (err.code != ENOENT && sg_guard_link_alive(de->d_name))
				(*unknown)++;
			continue;
		}
		add_key(keys, &n, meta.policy_key);
	}
	if (dir)
		closedir(dir);
	add_all_enforced_policies(keys, &n);
	return n;
}

static bool is_old_enough(const char *path, unsigned min_age_s)
{
	struct stat st;
	/* A policy pinned a moment ago may be about to get its first guard. */
	return stat(path, &st) == 0 && time(NULL) - st.st_mtime >= (time_t)min_age_s;
}

/*
 * A preloaded mark keeps a policy of this build's program only: a hook of
 * this build never finds another build's, and its mark would keep that
 * program pinned too (holds_policies).
 */
static bool kept_by_mark(const char *key)
{
	struct sg_policy_info info;
	char program_key[SG_KEY_LEN];

	if (!sg_tables_is_preloaded(key) || sg_tables_read_info(key, &info) < 0)
		return false;
	sg_program_key(program_key);
	return strncmp(info.program_key, program_key, SG_KEY_LEN) == 0;
}

static int gc_unused_policies(unsigned min_age_s, bool preloaded)
{
	_cleanup_free_ char(*used)[SG_KEY_LEN] = NULL;
	_cleanup_free_ char(*unused)[SG_KEY_LEN] = NULL;
	size_t unknown, n_used = used_policies(&used, &unknown), n_unused = 0;
	DIR *dir = opendir(SG_POLICY_ROOT);

	/* Any policy may be one of theirs: none is freed while they enforce. */
	if (unknown > 0)
		sg_info("kept every policy: %zu guard%s on this node came from another version "
			"of sysctl-guard, which may use any of them",
			unknown, sg_plural(unknown));

	for (struct dirent *de; dir && (de = readdir(dir));) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", SG_POLICY_ROOT, de->d_name);
		/* Its slot, claimed and never named, is an orphan the program's gc frees. */
		if (sg_is_orphan_staging(de->d_name)) {
			sg_unpin_dir(path);
			continue;
		}
		if (unknown > 0 || de->d_name[0] == '.' || strlen(de->d_name) >= SG_KEY_LEN)
			continue;
		if (!is_old_enough(path, min_age_s) || (!preloaded && kept_by_mark(de->d_name)))
			continue;
		bool in_use = false;
		for (size_t i = 0; i < n_used && !in_use; i++)
			in_use = strncmp(used[i], de->d_name, SG_KEY_LEN) == 0;
		if (in_use)
			continue;
		unused = sg_xrealloc(unused, n_unused + 1, SG_KEY_LEN);
		snprintf(unused[n_unused++], SG_KEY_LEN, "%s", de->d_name);
	}
	if (dir)
		closedir(dir);
	return sg_tables_remove_many((const char(*)[SG_KEY_LEN])unused, n_unused);
}

/* Whether policies still hold slots of the program pinned under @key (freeing orphan slots). */
static bool holds_policies(const char *key)
{
	struct sg_program prog;

	/* A directory another version of sysctl-guard made holds none this one knows of. */
	if (sg_program_open(key, &prog) < 0)
		return false;
	bool held = false;
	if (sg_program_open_slots(&prog) == 0) {
		sg_tables_release_orphan_slots(&prog);
		held = sg_tables_any_policy(&prog);
	}
	sg_program_close(&prog);
	return held;
}

/* Programs no link uses and no policy holds: another build's, or no guard left. */
static void gc_unused_programs(unsigned min_age_s)
{
	_cleanup_free_ uint32_t *linked = NULL;
	size_t n_linked = linked_programs(&linked);
	DIR *dir = opendir(SG_PROGRAM_ROOT);

	for (struct dirent *de; dir && (de = readdir(dir));) {
		char path[PATH_MAX];
		if (de->d_name[0] == '.')
			continue;
		if (sg_is_orphan_staging(de->d_name)) {
			sg_program_unpin(de->d_name);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s/prog", SG_PROGRAM_ROOT, de->d_name);
		_cleanup_close_ int fd = bpf_obj_get(path);
		uint32_t id = fd >= 0 ? prog_id(fd) : 0;
		bool in_use = !is_old_enough(path, min_age_s) || holds_policies(de->d_name);
		for (size_t i = 0; i < n_linked && !in_use; i++)
			in_use = linked[i] == id;
		if (!in_use)
			sg_program_unpin(de->d_name);
	}
	if (dir)
		closedir(dir);
}

/*
 * Whether a guard of cgroup @cgid is pinned, asked once per cgroup: a
 * cgroup has many records, and gc holds every hook back while it looks.
 */
struct guard_cache {
	struct {
		uint64_t cgid; /* 0: empty (no cgroup has id 0) */
		bool guarded;
	} slot[256];
};

static bool unguarded(uint64_t cgid, void *arg)
{
	struct guard_cache *cache = arg;
	size_t i = (size_t)((cgid * 0x9e3779b97f4a7c15ull) >> 56);
	char entry[32];

	if (cache->slot[i].cgid != cgid) {
		sg_guard_entry_name(cgid, entry);
		cache->slot[i].cgid = cgid;
		cache->slot[i].guarded = sg_guard_exists(entry);
	}
	return !cache->slot[i].guarded;
}

/* Deletes the records of cgroups that no guard of the node names: killed, crashed. */
static void forget_unguarded_records(void)
{
	struct guard_cache cache;

	memset(&cache, 0, sizeof(cache));
	sg_seen_forget_where(unguarded, &cache);
}

/* Each program's record of inputs forgets the policies just removed. */
static void gc_inputs(void)
{
	DIR *dir = opendir(SG_PROGRAM_ROOT);
	struct sg_program prog;

	for (struct dirent *de; dir && (de = readdir(dir));) {
		if (de->d_name[0] == '.' || sg_program_open(de->d_name, &prog) < 0)
			continue;
		sg_tables_forget_inputs_of_removed(&prog);
		sg_program_close(&prog);
	}
	if (dir)
		closedir(dir);
}

static int gc_locked(unsigned min_age_s, bool preloaded, bool programs)
{
	int lock_fd = sg_pins_lock(true);
	if (lock_fd < 0)
		return lock_fd;
	int removed = gc_unused_policies(min_age_s, preloaded);
	if (removed > 0)
		gc_inputs();
	if (programs) {
		forget_unguarded_records(); /* of guards removed without a word */
		gc_unused_programs(min_age_s);
	}
	close(lock_fd);
	return removed;
}

int sg_guard_gc_policies(unsigned min_age_s, bool preloaded)
{
	return gc_locked(min_age_s, preloaded, true);
}
