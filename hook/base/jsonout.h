/* SPDX-License-Identifier: Apache-2.0 */
/* Writing JSON text: strings escaped for JSON, for status, monitor and learn. */
#ifndef SG_JSONOUT_H
#define SG_JSONOUT_H

#include <stdio.h>

/* Writes @s as a JSON string literal, quotes included. */
void sg_json_write_string(FILE *out, const char *s);

#endif
