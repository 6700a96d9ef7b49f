/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing the Prometheus text exposition format, version 0.0.4: a metric
 * family's HELP and TYPE lines, then its samples, each with its labels.
 * A family's samples must follow its TYPE line, none of another between.
 */
#ifndef SG_PROMTEXT_H
#define SG_PROMTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sg_prom_label {
	const char *name; /* [a-zA-Z_][a-zA-Z0-9_]*, not beginning with "__" */
	const char *value;
};

/* The HELP and TYPE lines of family @name; @type is "counter" or "gauge". */
void sg_prom_family(FILE *out, const char *name, const char *type, const char *help);

/* One sample of family @name: its @n labels, in that order, and its value. */
void sg_prom_sample(FILE *out, const char *name, const struct sg_prom_label *labels, size_t n,
		    uint64_t value);

/*
 * @value as a label value, quotes included: backslash, double quote and
 * newline escaped, as the format asks, and each byte that is not UTF-8 as
 * U+FFFD: a scraper rejects the whole exposition over one such byte, and a
 * cgroup's directory or a container id may hold any.
 */
void sg_prom_label_value(FILE *out, const char *value);

#endif
