// SPDX-License-Identifier: Apache-2.0
#include "learn.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <bpf/bpf.h>

#include "../bpf/sysctl_guard.h"
#include "cgroup.h"
#include "cli.h"
#include "guard.h"
#include "json.h"
#include "jsonout.h"
#include "log.h"
#include "name.h"
#include "policy.h"
#include "util.h"

/* One sysctl the workload touched. */
struct learned {
	char name[SG_NAME_MAX];
	bool written;
	char **values; /* normalised, distinct */
	size_t n_values;
	bool any_value; /* a value too long to list was written */
};

struct record {
	struct learned *items;
	size_t n;
	char **denied; /* what the guard denied, described: left out of the policy */
	size_t n_denied;
};

/* At most this many denials are named one by one. */
#define DENIALS_NAMED 20

static struct learned *find_or_add(struct record *rec, const char *name)
{
	for (size_t i = 0; i < rec->n; i++)
		if (strcmp(rec->items[i].name, name) == 0)
			return &rec->items[i];
	rec->items = sg_xrealloc(rec->items, rec->n + 1, sizeof(*rec->items));
	struct learned *l = &rec->items[rec->n++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	return l;
}

static void add_value(struct learned *l, const char *raw)
{
	char norm[SG_VALUE_MAX];
	int n = sg_value_normalise(raw, strnlen(raw, SG_VALUE_MAX), norm, sizeof(norm));
	if (n < 0) {
		l->any_value = true;
		return;
	}
	/* As a policy lists it: a value with a newline before its last token keeps it there. */
	char spelled[SG_VALUE_MAX + 1];
	sg_value_spell(norm, spelled, sizeof(spelled));
	for (size_t i = 0; i < l->n_values; i++)
		if (strcmp(l->values[i], spelled) == 0)
			return;
	l->values = sg_xrealloc(l->values, l->n_values + 1, sizeof(char *));
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

/* A denied access, as the warning names it: "write kernel.domainname \"x\"". */
static void add_denial(struct record *rec, const struct sg_seen_key *seen)
{
	char dotted[SG_NAME_MAX], value[2 * SG_VALUE_MAX];

	sg_name_to_dotted(seen->name, dotted, sizeof(dotted));
	if (seen->write)
		sg_json_quote(seen->value, strlen(seen->value), value, sizeof(value));
	rec->denied = sg_xrealloc(rec->denied, rec->n_denied + 1, sizeof(char *));
	rec->denied[rec->n_denied++] = seen->write ? sg_xasprintf("write %s %s", dotted, value)
						   : sg_xasprintf("read %s", dotted);
}

/* The accesses the guard at @entry recorded, from its policy's seen map. */
static int read_seen(const char *entry, struct record *rec, struct sg_err *err)
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
				      "the guard of cgroup %s does not record accesses: attach "
				      "it in audit mode or with io.sysctl-guard.learn=true",
				      entry);
	if (fd < 0)
		return sg_system_error(err, errno, "cannot open the record of cgroup %s: %s", entry,
				       strerror(errno));
	if (!sg_map_shape_is(fd, sizeof(next), sizeof(uint64_t)))
		return sg_system_error(err, EPROTO,
				       "the record of cgroup %s was made by another version of "
				       "sysctl-guard: learn with that version",
				       entry);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (next.guard != guard)
			continue;
		next.name[SG_NAME_MAX - 1] = '\0';
		next.value[SG_VALUE_MAX - 1] = '\0';
		if (next.denied) {
			add_denial(rec, &next);
			continue;
		}
		struct learned *l = find_or_add(rec, next.name);
		if (next.write) {
			l->written = true;
			add_value(l, next.value);
		}
	}
	/* qsort takes no NULL: none seen, none denied */
	if (rec->n)
		qsort(rec->items, rec->n, sizeof(*rec->items), by_name);
	if (rec->n_denied)
		qsort(rec->denied, rec->n_denied, sizeof(*rec->denied), by_text);
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
	for (size_t i = 0; i < rec->n_denied; i++)
		free(rec->denied[i]);
	free(rec->denied);
}

/* Denied accesses are left out of the policy: the operator hears which. */
static void warn_denials(const struct record *rec, const char *source)
{
	if (!rec->n_denied)
		return;
	sg_warning("the guard of %s denied %zu access%s; the learned policy leaves %s out:", source,
		   rec->n_denied, rec->n_denied == 1 ? "" : "es",
		   rec->n_denied == 1 ? "it" : "them");
	for (size_t i = 0; i < rec->n_denied && i < DENIALS_NAMED; i++)
		sg_warning("  denied: %s", rec->denied[i]);
	if (rec->n_denied > DENIALS_NAMED)
		sg_warning("  and %zu more", rec->n_denied - DENIALS_NAMED);
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
	fprintf(out, " }%s\n", last ? "" : ",");
}

int sg_learn_write_policy(const char *entry, const char *source, FILE *out, struct sg_err *err)
{
	struct record rec = {0};
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	int r = read_seen(entry, &rec, err);
	if (r < 0)
		return r;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	fprintf(out, "{\n  \"version\": 1,\n  \"description\": ");
	char *description =
	    rec.n_denied
		? sg_xasprintf("learned from %s on %s: what it read and wrote, but for %zu "
			       "access%s its guard denied",
			       source, when, rec.n_denied, rec.n_denied == 1 ? "" : "es")
		: sg_xasprintf("learned from %s on %s: exactly what it read and wrote", source,
			       when);
	sg_json_write_string(out, description);
	free(description);
	fprintf(out, ",\n  \"mode\": \"enforce\",\n  \"default\": \"none\",\n  \"rules\": [\n");
	for (size_t i = 0; i < rec.n; i++)
		write_rule(out, &rec.items[i], i + 1 == rec.n);
	fprintf(out, "  ]\n}\n");
	warn_denials(&rec, source);
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
