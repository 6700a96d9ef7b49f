// SPDX-License-Identifier: Apache-2.0
#include "cmd/learn.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <bpf/bpf.h>

#include "bpf/sysctl_guard.h"
#include "base/json.h"
#include "base/jsonout.h"
#include "base/log.h"
#include "base/util.h"
#include "policy/name.h"
#include "policy/policy.h"
#include "compile/eval.h"
#include "kernel/cgroup.h"
#include "kernel/guard.h"
#include "kernel/map.h"
#include "cmd/cli.h"

/* One sysctl the workload touched. */
struct learned {
	char name[SG_NAME_MAX];
	bool written;
	char **values; /* as a policy spells them; distinct once the record is read */
	size_t n_values, values_cap;
	bool any_value;	 /* a value that cannot be listed was written (note_unlisted) */
	bool host_level; /* written in a namespace the guarded processes shared with the host */
};

/* Lines for the operator, in the order they are to be read. */
struct notes {
	char **v;
	size_t n, cap;
};

/*
 * The record holds up to 65,536 accesses the workload chose: names are found
 * through a hash index and values made distinct by a sort, never by a scan
 * per access, which a workload writing many names or values would have made
 * quadratic (and poststop waits for it).
 */
struct record {
	struct learned *items;
	size_t n, cap;
	uint32_t *index; /* open addressing: item + 1, 0 when free; at most half full */
	size_t index_cap;
	struct notes left_out;	 /* what the guard denied, rewrote or clamped: not in the policy */
	struct notes unlisted;	 /* names written with values no policy can list */
	struct notes host_level; /* names written in a namespace shared with the host */
};

/* At most this many accesses are named one by one, per kind. */
#define NOTES_NAMED 20

static size_t name_slot(const struct record *rec, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	size_t mask = rec->index_cap - 1, i = (size_t)h & mask;
	while (rec->index[i] && strcmp(rec->items[rec->index[i] - 1].name, name) != 0)
		i = (i + 1) & mask;
	return i;
}

static void grow_index(struct record *rec)
{
	rec->index_cap = rec->index_cap ? 2 * rec->index_cap : 64;
	free(rec->index);
	rec->index = sg_xcalloc(rec->index_cap, sizeof(*rec->index));
	for (size_t k = 0; k < rec->n; k++)
		rec->index[name_slot(rec, rec->items[k].name)] = (uint32_t)k + 1;
}

static struct learned *find_or_add(struct record *rec, const char *name)
{
	if (2 * (rec->n + 1) > rec->index_cap)
		grow_index(rec);
	size_t i = name_slot(rec, name);
	if (rec->index[i])
		return &rec->items[rec->index[i] - 1];
	if (rec->n == rec->cap) {
		rec->cap = rec->cap ? 2 * rec->cap : 16;
		rec->items = sg_xrealloc(rec->items, rec->cap, sizeof(*rec->items));
	}
	struct learned *l = &rec->items[rec->n++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	rec->index[i] = (uint32_t)rec->n;
	return l;
}

static void add_note(struct notes *notes, char *line)
{
	if (notes->n == notes->cap) {
		notes->cap = notes->cap ? 2 * notes->cap : 16;
		notes->v = sg_xrealloc(notes->v, notes->cap, sizeof(char *));
	}
	notes->v[notes->n++] = line;
}

/*
 * A value the policy can list as written: within SG_VALUE_MAX (the kernel
 * cut a longer one, and the record has none of it) and UTF-8, as JSON
 * strings are. Any other makes the rule allow any value, which is said.
 */
static void add_value(struct record *rec, struct learned *l, const struct sg_seen_key *seen)
{
	char norm[SG_VALUE_MAX];
	const char *raw = seen->value;
	size_t len = strnlen(raw, SG_VALUE_MAX);
	int n = seen->value_too_long || !sg_utf8_valid(raw, len)
		    ? -1
		    : sg_value_normalise(raw, len, norm, sizeof(norm));
	if (n < 0) {
		if (!l->any_value) {
			char dotted[SG_NAME_MAX];
			sg_name_to_dotted(l->name, dotted, sizeof(dotted));
			add_note(&rec->unlisted, sg_xstrdup(dotted));
		}
		l->any_value = true;
		return;
	}
	/* As a policy lists it: a value with a newline before its last token keeps it there. */
	char spelled[SG_VALUE_MAX + 1];
	sg_value_spell(norm, spelled, sizeof(spelled));
	if (l->n_values == l->values_cap) {
		l->values_cap = l->values_cap ? 2 * l->values_cap : 4;
		l->values = sg_xrealloc(l->values, l->values_cap, sizeof(char *));
	}
	l->values[l->n_values++] = sg_xstrdup(spelled);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct learned *)a)->name, ((const struct learned *)b)->name);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Values that normalise alike (and one value under several verdicts) are listed once. */
static void distinct_values(struct learned *l)
{
	size_t kept = 0;

	if (l->n_values)
		qsort(l->values, l->n_values, sizeof(char *), by_text);
	for (size_t i = 0; i < l->n_values; i++) {
		if (kept && strcmp(l->values[kept - 1], l->values[i]) == 0) {
			free(l->values[i]);
			continue;
		}
		l->values[kept++] = l->values[i];
	}
	l->n_values = kept;
}

/*
 * What the guard did not let through as asked: denied, or rewritten or
 * clamped. A policy that allowed it would allow what the guard did not.
 */
static bool left_out(const struct sg_seen_key *seen)
{
	return seen->verdict == SG_VERDICT_DENY || seen->verdict == SG_VERDICT_REWRITE;
}

/* An access left out, as the warning names it: "denied: write kernel.domainname \"x\"". */
static void add_left_out(struct record *rec, const struct sg_seen_key *seen)
{
	char dotted[SG_NAME_MAX], value[2 * SG_VALUE_MAX];
	const char *what = seen->verdict == SG_VERDICT_DENY ? "denied" : "rewritten or clamped";

	sg_name_to_dotted(seen->name, dotted, sizeof(dotted));
	if (seen->value_too_long)
		snprintf(value, sizeof(value), "(longer than %d bytes)", SG_VALUE_MAX - 1);
	else if (seen->write)
		sg_json_quote(seen->value, strlen(seen->value), value, sizeof(value));
	add_note(&rec->left_out, seen->write ? sg_xasprintf("%s: write %s %s", what, dotted, value)
					     : sg_xasprintf("%s: read %s", what, dotted));
}

/*
 * A write that reached a namespace the guard's processes shared with the
 * host (they were the host's settings): its rule allows that, as the
 * workload did it, and the operator hears of it.
 */
static void note_host_level(struct record *rec, struct learned *l, uint32_t host_namespaces)
{
	uint32_t ns = sg_namespace_of(l->name);
	char dotted[SG_NAME_MAX];

	if (l->host_level || !(ns & host_namespaces))
		return;
	l->host_level = true;
	sg_name_to_dotted(l->name, dotted, sizeof(dotted));
	add_note(&rec->host_level,
		 sg_xasprintf("%s (the host's %s namespace)", dotted, sg_namespace_name(ns)));
}

/* The accesses the guard at @entry (of @source, "container ID") recorded, from its seen map. */
static int read_seen(const char *entry, const char *source, struct record *rec, struct sg_err *err)
{
	struct sg_seen_key key, next;
	struct sg_guard_meta meta;
	void *prev = NULL;

	int r = sg_guard_read_meta(entry, &meta, err);
	if (r < 0)
		return r;
	uint64_t guard = meta.cgroup_id;
	_cleanup_close_ int fd = sg_program_open_map(meta.program_key, "seen");
	if (!meta.learn)
		return sg_input_error(err,
				      "the guard of %s does not record accesses: attach it in "
				      "audit mode or with io.sysctl-guard.learn=true",
				      source);
	if (fd < 0)
		return sg_system_error(err, errno, "cannot open the record of %s: %s", source,
				       strerror(errno));
	if (!sg_map_shape_is(fd, sizeof(next), sizeof(uint64_t)))
		return sg_system_error(err, EPROTO,
				       "the record of %s was made by another version of "
				       "sysctl-guard: learn with that version",
				       source);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (next.guard != guard)
			continue;
		next.name[SG_NAME_MAX - 1] = '\0';
		next.value[SG_VALUE_MAX - 1] = '\0';
		if (left_out(&next)) {
			add_left_out(rec, &next);
			continue;
		}
		struct learned *l = find_or_add(rec, next.name);
		if (next.write) {
			l->written = true;
			add_value(rec, l, &next);
			note_host_level(rec, l, meta.host_namespaces);
		}
	}
	for (size_t i = 0; i < rec->n; i++)
		distinct_values(&rec->items[i]);
	/* qsort takes no NULL: none seen, none left out */
	if (rec->n)
		qsort(rec->items, rec->n, sizeof(*rec->items), by_name);
	if (rec->left_out.n)
		qsort(rec->left_out.v, rec->left_out.n, sizeof(char *), by_text);
	if (rec->unlisted.n)
		qsort(rec->unlisted.v, rec->unlisted.n, sizeof(char *), by_text);
	if (rec->host_level.n)
		qsort(rec->host_level.v, rec->host_level.n, sizeof(char *), by_text);
	return 0;
}

static void free_record(struct record *rec)
{
	for (size_t i = 0; i < rec->n; i++) {
		for (size_t v = 0; v < rec->items[i].n_values; v++)
			free(rec->items[i].values[v]);
		free(rec->items[i].values);
	}
	free(rec->items);
	free(rec->index);
	struct notes *kinds[] = {&rec->left_out, &rec->unlisted, &rec->host_level};
	for (size_t k = 0; k < SG_ARRAY_SIZE(kinds); k++) {
		for (size_t i = 0; i < kinds[k]->n; i++)
			free(kinds[k]->v[i]);
		free(kinds[k]->v);
	}
}

static void warn_each(const struct notes *notes)
{
	for (size_t i = 0; i < notes->n && i < NOTES_NAMED; i++)
		sg_warning("  %s", notes->v[i]);
	if (notes->n > NOTES_NAMED)
		sg_warning("  and %zu more", notes->n - NOTES_NAMED);
}

/* What the policy does not say as the workload did it: the operator hears which. */
static void warn_notes(const struct record *rec, const char *source)
{
	if (rec->left_out.n) {
		sg_warning("the guard of %s denied, rewrote or clamped %zu access%s; the learned "
			   "policy leaves %s out:",
			   source, rec->left_out.n, rec->left_out.n == 1 ? "" : "es",
			   rec->left_out.n == 1 ? "it" : "them");
		warn_each(&rec->left_out);
	}
	if (rec->unlisted.n) {
		sg_warning(
		    "values written that a policy cannot list (longer than %d bytes, or not "
		    "UTF-8): the learned rules of these allow any value; narrow them by hand:",
		    SG_VALUE_MAX - 1);
		warn_each(&rec->unlisted);
	}
	if (rec->host_level.n) {
		sg_warning("%s wrote these in namespaces it shared with the host, changing the "
			   "host's settings; the learned rules allow that (allow_host_namespace): "
			   "remove it to keep the container off them:",
			   source);
		warn_each(&rec->host_level);
	}
}

static void write_rule(FILE *out, const struct learned *l, bool last)
{
	char dotted[SG_NAME_MAX];
	sg_name_to_dotted(l->name, dotted, sizeof(dotted));
	fprintf(out, "    { \"name\": ");
	sg_json_write_string(out, dotted);
	fprintf(out, ", \"access\": \"%s\"", l->written ? "read-write" : "read");
	if (l->written && l->n_values && !l->any_value) {
		fprintf(out, ", \"values\": [");
		for (size_t v = 0; v < l->n_values; v++) {
			fprintf(out, "%s", v ? ", " : "");
			sg_json_write_string(out, l->values[v]);
		}
		fprintf(out, "]");
	}
	if (l->written && l->host_level)
		fprintf(out, ", \"allow_host_namespace\": true");
	fprintf(out, " }%s\n", last ? "" : ",");
}

int sg_learn_write_policy(const char *entry, const char *source, FILE *out, struct sg_err *err)
{
	struct record rec = {0};
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	int r = read_seen(entry, source, &rec, err);
	if (r < 0)
		return r;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	fprintf(out, "{\n  \"version\": 1,\n  \"description\": ");
	char *description =
	    rec.left_out.n || rec.unlisted.n
		? sg_xasprintf("learned from %s on %s: what it read and wrote, but for %zu "
			       "access%s its guard denied, rewrote or clamped, and %zu name%s "
			       "written with values no policy can list",
			       source, when, rec.left_out.n, rec.left_out.n == 1 ? "" : "es",
			       rec.unlisted.n, rec.unlisted.n == 1 ? "" : "s")
		: sg_xasprintf("learned from %s on %s: exactly what it read and wrote", source,
			       when);
	sg_json_write_string(out, description);
	free(description);
	fprintf(out, ",\n  \"mode\": \"enforce\",\n  \"default\": \"none\",\n  \"rules\": [\n");
	for (size_t i = 0; i < rec.n; i++)
		write_rule(out, &rec.items[i], i + 1 == rec.n);
	fprintf(out, "  ]\n}\n");
	warn_notes(&rec, source);
	free_record(&rec);
	return 0;
}

/* A container id as a file name: no path separators, no dot files. */
static bool safe_file_name(const char *id)
{
	if (!id || !*id || id[0] == '.' || strlen(id) > 128)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

int sg_learn_save(const char *entry, const char *container_id, struct sg_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];

	if (!safe_file_name(container_id))
		return sg_input_error(err, "container id \"%s\" cannot name a file in %s",
				      container_id, SG_LEARNED_DIR);
	mkdir("/var/lib/sysctl-guard", 0755);
	mkdir(SG_LEARNED_DIR, 0755);
	snprintf(path, sizeof(path), "%s/%s.json", SG_LEARNED_DIR, container_id);
	snprintf(tmp, sizeof(tmp), "%s/.%s.json.tmp", SG_LEARNED_DIR, container_id);
	_cleanup_fclose_ FILE *f = fopen(tmp, "we");
	if (!f)
		return sg_system_error(err, errno, "cannot write %s: %s", tmp, strerror(errno));
	char *source = sg_xasprintf("container %s", container_id);
	int r = sg_learn_write_policy(entry, source, f, err);
	free(source);
	if (r == 0 && (fflush(f) != 0 || rename(tmp, path) < 0))
		r = sg_system_error(err, errno, "cannot write %s: %s", path, strerror(errno));
	if (r < 0)
		unlink(tmp);
	return r;
}

int sg_cmd_learn(int argc, char **argv)
{
	static const struct option options[] = {
	    {"container", required_argument, NULL, 'C'},
	    {"cgroup", required_argument, NULL, 'g'},
	    {NULL, 0, NULL, 0},
	};
	const char *container = NULL, *cgroup = NULL;
	struct sg_err err = {0};
	char entry[32];
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'C':
			container = optarg;
			break;
		case 'g':
			cgroup = optarg;
			break;
		default:
			return sg_usage_error("learn", "unknown option");
		}
	}
	if (optind != argc || !container == !cgroup)
		return sg_usage_error("learn", "expected one of --container ID and --cgroup DIR");
	int found = container ? sg_guard_find_container(container, entry) : 0;
	if (found == -ENOTUNIQ) {
		fprintf(stderr,
			"sysctl-guard: %s begins the ids of several guarded containers: "
			"give more of the id (sysctl-guard status lists them)\n",
			container);
		return SG_EXIT_INPUT;
	}
	if (found < 0) {
		fprintf(stderr, "sysctl-guard: no guard for container %s\n", container);
		return SG_EXIT_INPUT;
	}
	if (cgroup) {
		_cleanup_close_ int fd = -1;
		uint64_t id;
		if (sg_cgroup_open(cgroup, &fd, &id, &err) < 0)
			return sg_report(&err);
		sg_guard_entry_name(id, entry);
		if (!sg_guard_exists(entry)) {
			fprintf(stderr, "sysctl-guard: no guard for cgroup %s\n", cgroup);
			return SG_EXIT_INPUT;
		}
	}
	char *source =
	    container ? sg_xasprintf("container %s", container) : sg_xasprintf("cgroup %s", cgroup);
	int r = sg_learn_write_policy(entry, source, stdout, &err);
	free(source);
	if (r < 0)
		return sg_report(&err);
	return SG_EXIT_OK;
}
