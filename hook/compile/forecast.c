// SPDX-License-Identifier: Apache-2.0
#include "compile/forecast.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/thread.h"
#include "base/util.h"
#include "policy/name.h"
#include "compile/dfa_pack.h"

struct sg_dfa_forecast {
	const char *text; /* until text_done */
	size_t len;
	const struct sg_policy *before;
	int (*confine)(struct sg_err *err); /* the thread's first call, or NULL */

	pthread_t thread;
	bool joined;
	atomic_bool cancel;

	pthread_mutex_t lock; /* guards the three dones, which cond signals */
	pthread_cond_t cond;
	bool text_done;
	bool dfa_done;
	bool packing_done;

	/* The thread's, until text_done: */
	bool scanned; /* in is all the set's patterns */
	struct sg_arena names;
	struct sg_dfa_input in;
	/* The thread's until dfa_done; the DFA only read after that, to be packed */
	bool built; /* dfa is in's */
	struct sg_dfa dfa;
	/* The thread's, until packing_done: */
	struct sg_dfa_packed *packed;

	bool taken; /* dfa's tables are a compiled policy's */
};

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/*
 * The first quote or backslash from @p on, or @end: eight bytes at a time,
 * the way json.c finds a string's end (a byte loop took 0.9 ms of a
 * 10,000-rule policy's 826 KB).
 */
static const char *next_stop(const char *p, const char *end)
{
	uint64_t w;

	for (; end - p >= (ptrdiff_t)sizeof(w); p += sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		uint64_t stops = sg_bytes_equal(w, '"') | sg_bytes_equal(w, '\\');
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (stops) /* the lowest stop is a true one */
			return p + __builtin_ctzll(stops) / 8;
#else
		if (stops)
			break;
#endif
	}
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

/* A JSON string's contents, as written. */
struct span {
	const char *at;
	size_t len;
	bool escaped; /* has a backslash: its bytes are not its value */
};

/*
 * The string whose opening quote is @q: returns the byte after its closing
 * quote, or NULL when it is not closed.
 */
static const char *string_at(const char *q, const char *end, struct span *s)
{
	s->at = q + 1;
	s->escaped = false;
	for (const char *p = next_stop(s->at, end); p < end; p = next_stop(p + 2, end)) {
		if (*p == '"') {
			s->len = (size_t)(p - s->at);
			return p + 1;
		}
		s->escaped = true; /* and the byte after the backslash is skipped */
		if (end - p < 2)
			break;
	}
	return NULL;
}

/* Adds rule @rule's name @s where it has a wildcard; false where the parser refuses it. */
static bool add_name(const struct span *s, uint32_t rule, struct sg_arena *names,
		     struct sg_dfa_input *in)
{
	char raw[SG_NAME_MAX], pattern[SG_NAME_MAX];
	struct sg_err err;

	if (s->len == 0 || s->len >= SG_NAME_MAX)
		return false;
	/* Normalising turns separators round; it makes no wildcard and takes none away. */
	if (sg_pattern_is_literal_n(s->at, s->len))
		return true;
	memcpy(raw, s->at, s->len);
	raw[s->len] = '\0';
	err.code = 0; /* its message is written only where it fails */
	if (sg_name_normalise(raw, pattern, sizeof(pattern), &err) < 0)
		return false;
	sg_dfa_input_add(in, sg_arena_strndup(names, pattern, s->len), (uint32_t)s->len, rule);
	return true;
}

/* Whether to stop: @cancel is set (looked at every 64 KiB of text, some 40 us). */
static bool cancelled(const atomic_bool *cancel, const char *p, const char **check)
{
	if (!cancel || p < *check)
		return false;
	*check = p + (64 << 10);
	return atomic_load_explicit(cancel, memory_order_relaxed);
}

/* Whether the six bytes at @p are "name", quotes included (musl's memcmp goes byte by byte). */
static bool is_name_key(const char *p)
{
	uint32_t head;
	uint16_t tail;
	memcpy(&head, p, sizeof(head));
	memcpy(&tail, p + 4, sizeof(tail));
	return memcmp(&head, "\"nam", 4) == 0 && memcmp(&tail, "e\"", 2) == 0;
}

/*
 * The first "name" (the six bytes, quotes included) from @p on, @end when
 * there is none, or NULL at a backslash: eight places at a time, those
 * where a quote, an 'n' and an 'a' follow each other are compared whole (a
 * mask may also mark places above a true one: each is compared). musl's
 * memmem took 0.76 ms of 826 KB.
 */
static const char *next_name_key(const char *p, const char *end)
{
	uint64_t a, b, c;

	for (; end - p >= (ptrdiff_t)sizeof(a) + 5; p += sizeof(a)) {
		memcpy(&a, p, sizeof(a));
		memcpy(&b, p + 1, sizeof(b));
		memcpy(&c, p + 2, sizeof(c));
		if (sg_bytes_equal(a, '\\'))
			return NULL;
		uint64_t m =
		    sg_bytes_equal(a, '"') & sg_bytes_equal(b, 'n') & sg_bytes_equal(c, 'a');
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		for (; m; m &= m - 1) { /* the lowest place first */
			const char *at = p + __builtin_ctzll(m) / 8;
			if (is_name_key(at))
				return at;
		}
#else
		if (m)
			break;
#endif
	}
	for (; p < end; p++) {
		if (*p == '\\')
			return NULL;
		if (end - p >= 6 && is_name_key(p))
			return p;
	}
	return end;
}

enum plain_scan { PLAIN_DONE, PLAIN_GAVE_UP, PLAIN_BACKSLASH };

/*
 * The scan of a text without a backslash: its strings are plain, a quote
 * opens or closes one, and in valid JSON the six bytes "name" followed by a
 * colon are that key, wherever they are (inside a string their quotes would
 * be escaped). Going from quote to quote took 0.5 ms of 826 KB.
 */
static enum plain_scan scan_plain(const char *text, size_t len, uint32_t first_rule,
				  const atomic_bool *cancel, struct sg_arena *names,
				  struct sg_dfa_input *in)
{
	const char *p = text, *end = text + len, *check = text;
	uint32_t rule = first_rule;

	while ((p = next_name_key(p, end)) != end) {
		if (!p)
			return PLAIN_BACKSLASH;
		if (cancelled(cancel, p, &check))
			return PLAIN_GAVE_UP;
		const char *q = skip_space(p + 6, end);
		p += 6;
		if (q == end || *q != ':')
			continue; /* a value, not the key */
		q = skip_space(q + 1, end);
		const char *close = q < end && *q == '"' ? next_stop(q + 1, end) : end;
		if (close == end || *close != '"') /* not a string, not closed, or a backslash */
			return close < end ? PLAIN_BACKSLASH : PLAIN_GAVE_UP;
		const struct span name = {q + 1, (size_t)(close - q - 1), false};
		if (rule >= SG_MAX_RULES || !add_name(&name, rule++, names, in))
			return PLAIN_GAVE_UP;
		p = close + 1;
	}
	sg_dfa_input_end_layer(in);
	return PLAIN_DONE;
}

/*
 * A rule's name is the string after its "name" key: in a valid policy only
 * rules have that key, each once, and they come in the order of the rules.
 * A text with a backslash has its strings found by their quotes and
 * backslashes alone, wherever they stand; one without, by its "name" keys
 * (scan_plain). Nothing else of the text needs reading.
 */
bool sg_forecast_scan(const char *text, size_t len, uint32_t first_rule, const atomic_bool *cancel,
		      struct sg_arena *names, struct sg_dfa_input *in)
{
	const char *p = text, *end = text + len, *check = text;
	uint32_t rule = first_rule;
	struct span key, name;

	const size_t first_n = in->n;
	const enum plain_scan plain = scan_plain(text, len, first_rule, cancel, names, in);
	if (plain != PLAIN_BACKSLASH)
		return plain == PLAIN_DONE;
	in->n = first_n; /* from quote to quote, anew */

	while ((p = next_stop(p, end)) < end) {
		if (cancelled(cancel, p, &check))
			return false;
		if (*p != '"' || !(p = string_at(p, end, &key)))
			return false; /* a backslash outside strings, or a string not closed */
		const bool is_name = !key.escaped && key.len == 4 && memcmp(key.at, "name", 4) == 0;
		if (!is_name && !key.escaped)
			continue;
		p = skip_space(p, end);
		if (p == end || *p != ':')
			continue; /* a value, not a key */
		if (!is_name)
			return false; /* a key with an escape might be "name" */
		p = skip_space(p + 1, end);
		if (p == end || *p != '"' || !(p = string_at(p, end, &name)) || name.escaped)
			return false;
		if (rule >= SG_MAX_RULES || !add_name(&name, rule++, names, in))
			return false;
	}
	sg_dfa_input_end_layer(in);
	return true;
}

/* The layer of parsed policy @p, its rules numbered from @first_rule. */
static bool add_policy(const struct sg_policy *p, uint32_t first_rule, struct sg_dfa_input *in)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct sg_rule *rule = &p->rules[i];
		if (!rule->pattern)
			return false;
		if (!rule->is_literal)
			sg_dfa_input_add(in, rule->pattern, (uint32_t)strlen(rule->pattern),
					 first_rule + (uint32_t)i);
	}
	sg_dfa_input_end_layer(in);
	return true;
}

static bool scan(struct sg_dfa_forecast *f)
{
	uint32_t first_rule = 0;

	if (f->before) {
		if (!add_policy(f->before, 0, &f->in))
			return false;
		first_rule = (uint32_t)f->before->n_rules;
	}
	return sg_forecast_scan(f->text, f->len, first_rule, &f->cancel, &f->names, &f->in);
}

/* A step is done: what the thread wrote before is seen by who waits for it (wait_done). */
static void set_done(struct sg_dfa_forecast *f, bool *done)
{
	pthread_mutex_lock(&f->lock);
	*done = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

static void wait_done(struct sg_dfa_forecast *f, const bool *done)
{
	pthread_mutex_lock(&f->lock);
	while (!*done)
		pthread_cond_wait(&f->cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
}

static void *forecast(void *arg)
{
	struct sg_dfa_forecast *f = arg;
	struct sg_err err = {0};
	/* Not a byte of the untrusted text before the filter is on. */
	bool scanned = (!f->confine || f->confine(&err) == 0) && scan(f);

	f->scanned = scanned;
	set_done(f, &f->text_done);

	uint32_t layer;
	const bool built = scanned && sg_dfa_build(&f->in, &f->cancel, &f->dfa, &layer) == 0;
	f->built = built;
	set_done(f, &f->dfa_done);

	/*
	 * Packed as the program reads it too, the tables' longest step after the
	 * DFA's own, while the compiler goes on with the DFA taken: it reads it,
	 * as this does.
	 */
	if (built && !atomic_load(&f->cancel)) {
		f->packed = sg_xcalloc(1, sizeof(*f->packed));
		sg_dfa_pack(&f->dfa, f->packed);
	}
	/* Told before the thread ends: a join would wait for its exit too. */
	set_done(f, &f->packing_done);
	sched_yield(); /* to the thread that waited for it, likely on this CPU */
	return NULL;
}

struct sg_dfa_forecast *sg_dfa_forecast_start(const char *text, size_t len,
					      const struct sg_policy *before,
					      int (*confine)(struct sg_err *err))
{
	struct sg_dfa_forecast *f = sg_xcalloc(1, sizeof(*f));

	f->confine = confine;
	f->text = text;
	f->len = len;
	f->before = before;
	atomic_init(&f->cancel, false);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	if (sg_thread_start(&f->thread, forecast, f) != 0) {
		f->joined = true; /* nothing to join */
		sg_dfa_forecast_free(f);
		return NULL;
	}
	return f;
}

void sg_dfa_forecast_text_done(struct sg_dfa_forecast *f)
{
	wait_done(f, &f->text_done);
	f->text = NULL;
}

static void stop(struct sg_dfa_forecast *f, bool cancel)
{
	if (f->joined)
		return;
	if (cancel)
		atomic_store(&f->cancel, true);
	pthread_join(f->thread, NULL);
	f->joined = true;
}

void sg_dfa_forecast_cancel(struct sg_dfa_forecast *f)
{
	if (f)
		atomic_store(&f->cancel, true);
}

bool sg_dfa_forecast_take(struct sg_dfa_forecast *f, const struct sg_dfa_input *in,
			  struct sg_dfa *dfa)
{
	sg_dfa_forecast_text_done(f);
	if (!f->scanned || !sg_dfa_input_equal(&f->in, in)) {
		stop(f, true);
		return false;
	}
	wait_done(f, &f->dfa_done);
	if (!f->built) {
		stop(f, false);
		return false;
	}
	/* A copy: the thread reads f->dfa while it packs; its tables are @dfa's now. */
	*dfa = f->dfa;
	f->taken = true;
	return true;
}

const struct sg_dfa_packed *sg_dfa_forecast_packed(struct sg_dfa_forecast *f)
{
	wait_done(f, &f->packing_done);
	return f->packed;
}

void sg_dfa_forecast_free(struct sg_dfa_forecast *f)
{
	if (!f)
		return;
	stop(f, true);
	if (!f->taken)
		sg_dfa_free(&f->dfa);
	if (f->packed)
		sg_dfa_packed_free(f->packed);
	free(f->packed);
	sg_dfa_input_free(&f->in);
	sg_arena_free(&f->names);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f);
}
