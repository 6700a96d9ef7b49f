// SPDX-License-Identifier: Apache-2.0
#include "base/promtext.h"

#include <string.h>

#include "base/json.h"

#define REPLACEMENT_CHARACTER "\xef\xbf\xbd"

/* HELP text escapes backslash and newline only (a quote is literal there). */
static void write_help(FILE *out, const char *help)
{
	for (const char *c = help; *c; c++) {
		if (*c == '\\')
			fputs("\\\\", out);
		else if (*c == '\n')
			fputs("\\n", out);
		else
			fputc(*c, out);
	}
}

void sg_prom_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s ", name);
	write_help(out, help);
	fprintf(out, "\n# TYPE %s %s\n", name, type);
}

void sg_prom_label_value(FILE *out, const char *value)
{
	size_t len = strlen(value);

	fputc('"', out);
	for (size_t i = 0, n; i < len; i += n) {
		n = sg_utf8_char_len(value + i, len - i);
		if (!n) {
			fputs(REPLACEMENT_CHARACTER, out);
			n = 1;
		} else if (value[i] == '\\' || value[i] == '"') {
			fprintf(out, "\\%c", value[i]);
		} else if (value[i] == '\n') {
			fputs("\\n", out);
		} else {
			fwrite(value + i, 1, n, out);
		}
	}
	fputc('"', out);
}

void sg_prom_sample(FILE *out, const char *name, const struct sg_prom_label *labels, size_t n,
		    uint64_t value)
{
	fputs(name, out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s%s=", i ? "," : "{", labels[i].name);
		sg_prom_label_value(out, labels[i].value);
	}
	fprintf(out, "%s %llu\n", n ? "}" : "", (unsigned long long)value);
}
