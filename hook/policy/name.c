// SPDX-License-Identifier: Apache-2.0
/*
 * Sysctl names and rule patterns: the sysctl.d(5) dot/slash rule, validation,
 * precedence and the reference matcher the compiler is tested against.
 */
#include "policy/name.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bpf/sysctl_guard.h"
#include "base/util.h"

#define PROC_SYS "/proc/sys/"

/*
 * @s as a C-like quoted string for messages: control bytes escaped, long
 * names cut. Returns @out. Made only for a message: every rule's name passes here.
 */
static const char *quote(const char *s, char *out, size_t cap)
{
	size_t o = 0, max_in = 80;

	out[o++] = '"';
	for (size_t i = 0; s[i] && o + 8 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (i == max_in) {
			o += (size_t)snprintf(out + o, cap - o, "...");
			break;
		}
		if (c == '\n')
			o += (size_t)snprintf(out + o, cap - o, "\\n");
		else if (c == '\t')
			o += (size_t)snprintf(out + o, cap - o, "\\t");
		else if (c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, cap - o, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

/*
 * What a byte is to a name: most are plain; whitespace and control bytes are
 * refused, the separators turn into each other in dotted names, and a star
 * after a star makes "**". A table: every rule's name passes here byte by
 * byte, and plain bytes take one look.
 */
enum name_byte_kind { NAME_PLAIN, NAME_SEPARATOR, NAME_REFUSED, NAME_STAR };
static const unsigned char name_byte[256] = {[0 ... 0x20] = NAME_REFUSED,
					     [0x7f] = NAME_REFUSED,
					     ['.'] = NAME_SEPARATOR,
					     ['/'] = NAME_SEPARATOR,
					     ['*'] = NAME_STAR};

/* The first byte of the @len at @name that no sysctl name has, or @len. */
static size_t first_refused(const char *name, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (name_byte[(unsigned char)name[i]] == NAME_REFUSED)
			return i;
	return len;
}

/* Whether "**" occurs in the @len bytes at @s. */
static bool has_globstar(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (s[i] == '*' && s[i + 1] == '*')
			return true;
	return false;
}

/* What is wrong with a component of a name's slash form, if anything. */
enum component_fault { COMPONENT_OK, COMPONENT_EMPTY, COMPONENT_DOTS, COMPONENT_GLOBSTAR };

/* @star_pair: whether "**" occurs in it (has_globstar). */
static enum component_fault component_fault(const char *comp, size_t len, bool star_pair)
{
	if (len == 0)
		return COMPONENT_EMPTY;
	if (comp[0] == '.' && (len == 1 || (len == 2 && comp[1] == '.')))
		return COMPONENT_DOTS;
	if (len != 2 && star_pair)
		return COMPONENT_GLOBSTAR;
	return COMPONENT_OK;
}

/*
 * The error for the component of @len bytes at @comp of the slash form of
 * @name: @first, @last whether it is the first or the last one.
 */
static int component_error(const char *comp, size_t len, bool first, bool last, const char *name,
			   struct sg_err *err)
{
	char q[128];

	switch (component_fault(comp, len, has_globstar(comp, len))) {
	case COMPONENT_EMPTY:
		if (first)
			return sg_input_error(err,
					      "%s starts with a separator; write names "
					      "relative to /proc/sys, like net.ipv4.tcp_rmem",
					      quote(name, q, sizeof(q)));
		if (last)
			return sg_input_error(err,
					      "%s ends with a separator; remove the "
					      "trailing '.' or '/'",
					      quote(name, q, sizeof(q)));
		return sg_input_error(err,
				      "%s has an empty component (two separators in a "
				      "row); separate components with one '.' or '/'",
				      quote(name, q, sizeof(q)));
	case COMPONENT_DOTS:
		return sg_input_error(err,
				      "%s has a component \"%.*s\", which no sysctl has; "
				      "name the sysctl itself",
				      quote(name, q, sizeof(q)), (int)len, comp);
	case COMPONENT_GLOBSTAR:
		return sg_input_error(err,
				      "%s: component \"%.*s\" mixes ** with other "
				      "characters; ** must be a whole component "
				      "(net.**.rp_filter), use * within a component",
				      quote(name, q, sizeof(q)), (int)len, comp);
	default:
		return 0;
	}
}

/*
 * Where the one pass over a name stands: the first component at fault is
 * reported only after the whole name is found free of control bytes and
 * short enough, as those errors come first.
 */
struct slash_form {
	size_t comp; /* where the current component starts */
	size_t bad;  /* the first component at fault, or SIZE_MAX */
	size_t bad_len;
	char first_sep; /* '.' (dotted: '/' is a literal dot) or '/', 0 before the first */
	bool star_pair; /* "**" in the current component */
};

static void end_component(struct slash_form *f, const char *out, size_t end)
{
	if (f->bad == SIZE_MAX &&
	    component_fault(out + f->comp, end - f->comp, f->star_pair) != COMPONENT_OK) {
		f->bad = f->comp;
		f->bad_len = end - f->comp;
	}
	f->comp = end + 1;
	f->star_pair = false;
}

static int refused_error(const char *name, size_t at, struct sg_err *err)
{
	char q[128];
	return sg_input_error(err,
			      "%s contains whitespace or a control character (byte %zu); sysctl "
			      "names have none",
			      quote(name, q, sizeof(q)), at + 1);
}

int sg_name_normalise(const char *name, char *out, size_t cap, struct sg_err *err)
{
	return sg_name_normalise_n(name, name ? strlen(name) : 0, out, cap, err);
}

int sg_name_normalise_n(const char *name, size_t len, char *out, size_t cap, struct sg_err *err)
{
	char q[128];
	size_t limit = cap < SG_NAME_MAX ? cap : SG_NAME_MAX;
	struct slash_form f = {.bad = SIZE_MAX};

	if (cap)
		out[0] = '\0';
	if (!name || !name[0])
		return sg_input_error(err, "empty name; write a sysctl name like "
					   "net.ipv4.tcp_rmem or a pattern like kernel.random.*");
	/* Not strncmp: a call per name; memcmp of a constant length is a few compares. */
	if (len > strlen(PROC_SYS) && memcmp(name, PROC_SYS, strlen(PROC_SYS)) == 0)
		return sg_input_error(err, "%s: write names relative to /proc/sys: \"%s\"",
				      quote(name, q, sizeof(q)), name + strlen(PROC_SYS));
	/*
	 * Whitespace and control bytes are told first, wherever they are; then
	 * the length; then the components. In one pass, the bytes are written in
	 * slash form: sysctl.d(5) makes a name dotted when its first separator is
	 * '.', and then '/' is a literal dot ('.' and '/' differ in their lowest bit).
	 */
	if (len + 1 > limit) {
		size_t refused = first_refused(name, len);
		if (refused < len)
			return refused_error(name, refused, err);
		return sg_input_error(err,
				      "%s is %zu characters long; sysctl-guard handles names of at "
				      "most %zu characters",
				      quote(name, q, sizeof(q)), len, limit ? limit - 1 : 0);
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		out[i] = c;
		enum name_byte_kind kind = name_byte[(unsigned char)c];
		if (__builtin_expect(kind == NAME_PLAIN, 1))
			continue; /* most bytes: before the switch, which jumps through a table */
		switch (kind) {
		case NAME_STAR:
			f.star_pair |= i > 0 && name[i - 1] == '*';
			continue;
		case NAME_REFUSED:
			out[0] = '\0';
			return refused_error(name, i, err);
		default: /* NAME_SEPARATOR */
			if (!f.first_sep)
				f.first_sep = c;
			if (f.first_sep == '.')
				out[i] = c ^ ('.' ^ '/');
			if (out[i] == '/')
				end_component(&f, out, i);
		}
	}
	out[len] = '\0';
	end_component(&f, out, len);
	if (f.bad == SIZE_MAX)
		return 0;
	int r = component_error(out + f.bad, f.bad_len, f.bad == 0, f.bad + f.bad_len == len, name,
				err);
	out[0] = '\0';
	return r;
}

bool sg_pattern_is_literal(const char *pattern)
{
	return sg_pattern_is_literal_n(pattern, strlen(pattern));
}

/*
 * Eight bytes at a time: the parser and the compiler ask about every rule
 * (musl's strpbrk builds a byte set at each call; a loop over bytes was 4%
 * of parsing and compiling a 10,000-rule policy).
 */
bool sg_pattern_is_literal_n(const char *pattern, size_t len)
{
	size_t i = 0;
	uint64_t w;

	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, pattern + i, sizeof(w));
		if (sg_bytes_equal(w, '*') | sg_bytes_equal(w, '?'))
			return false;
	}
	for (; i < len; i++)
		if (pattern[i] == '*' || pattern[i] == '?')
			return false;
	return true;
}

/* Separators count too: like letters, they are characters a matching name must have. */
size_t sg_pattern_literal_chars(const char *pattern)
{
	size_t n = 0;
	for (const char *p = pattern; *p; p++)
		n += *p != '*' && *p != '?';
	return n;
}

int sg_pattern_precedence(const char *a, size_t ia, const char *b, size_t ib)
{
	bool la = sg_pattern_is_literal(a), lb = sg_pattern_is_literal(b);

	if (la != lb)
		return la ? -1 : 1;
	if (!la) {
		size_t ca = sg_pattern_literal_chars(a), cb = sg_pattern_literal_chars(b);
		if (ca != cb)
			return ca > cb ? -1 : 1;
	}
	if (ia != ib)
		return ia < ib ? -1 : 1;
	return 0;
}

/* One component: '*' any run of characters, '?' one character, anything else itself. */
/*
 * '*' and '?' within one component. The classic wildcard walk: on a mismatch,
 * the last '*' takes one more character. O(plen * nlen), no recursion.
 */
static bool glob_match(const char *p, size_t plen, const char *n, size_t nlen)
{
	size_t pi = 0, ni = 0, star = SIZE_MAX, mark = 0;

	while (ni < nlen) {
		if (pi < plen && p[pi] != '*' && (p[pi] == '?' || p[pi] == n[ni])) {
			pi++;
			ni++;
		} else if (pi < plen && p[pi] == '*') {
			star = pi++;
			mark = ni;
		} else if (star != SIZE_MAX) {
			pi = star + 1;
			ni = ++mark;
		} else {
			return false;
		}
	}
	while (pi < plen && p[pi] == '*')
		pi++;
	return pi == plen;
}

/* The component after the one at @s, or NULL after the last. */
static const char *next_component(const char *s)
{
	const char *slash = strchr(s, '/');
	return slash ? slash + 1 : NULL;
}

static size_t component_len(const char *s)
{
	return (size_t)(strchrnul(s, '/') - s);
}

static bool is_globstar(const char *c)
{
	return component_len(c) == 2 && c[0] == '*' && c[1] == '*';
}

/*
 * The same walk one level up: components are the symbols, "**" takes zero
 * or more whole components, and on a mismatch the last "**" takes one more.
 */
bool sg_pattern_match(const char *pattern, const char *name)
{
	const char *p = pattern, *n = name, *star = NULL, *mark = NULL;

	while (n) {
		if (p && is_globstar(p)) {
			star = p;
			p = next_component(p);
			mark = n;
		} else if (p && glob_match(p, component_len(p), n, component_len(n))) {
			p = next_component(p);
			n = next_component(n);
		} else if (star) {
			p = next_component(star);
			mark = next_component(mark);
			n = mark;
		} else {
			return false;
		}
	}
	while (p && is_globstar(p))
		p = next_component(p);
	return !p;
}

void sg_name_to_dotted(const char *slash, char *out, size_t cap)
{
	if (!cap)
		return;
	/*
	 * A dot in the first component cannot be written in dotted form: there
	 * the first separator decides the form. Such names stay in slash form.
	 */
	size_t first = (size_t)(strchrnul(slash, '/') - slash);
	bool keep = memchr(slash, '.', first) != NULL;
	size_t i;

	for (i = 0; slash[i] && i + 1 < cap; i++) {
		char c = slash[i];
		if (!keep && c == '/')
			c = '.';
		else if (!keep && c == '.')
			c = '/';
		out[i] = c;
	}
	out[i] = '\0';
}
