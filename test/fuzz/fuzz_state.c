// SPDX-License-Identifier: Apache-2.0
/*
 * The OCI state the hook reads on stdin (sg_oci_state_parse): whatever a
 * runtime sends, the hook either rejects it with a message or returns a
 * state with an id, an absolute bundle and a pid that is a process id.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = {
    SG_ANNOTATION_PROFILE, SG_ANNOTATION_POLICY, SG_ANNOTATION_MODE, SG_ANNOTATION_LEARN, "",
};

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_state: %s: %s\n", what, detail ? detail : "");
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sg_oci_state state;
	struct sg_err err = {0};

	if (size > SG_MAX_STATE_BYTES)
		return 0;
	int r = sg_oci_state_parse((const char *)data, size, &state, &err);
	if (r < 0) {
		if (r != -EINVAL || !err.msg[0])
			fail("rejected without a message", err.msg);
	} else {
		if (!state.id || !state.id[0])
			fail("accepted a state without an id", NULL);
		if (!state.status)
			fail("status is NULL", state.id);
		if (!state.bundle || state.bundle[0] != '/')
			fail("accepted a relative bundle", state.bundle);
		if (state.pid < 0 || state.pid > INT_MAX)
			fail("accepted a pid that is not a process id", state.id);
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			(void)sg_oci_annotation(&state, NULL, keys[i]);
		for (size_t i = 0; i < state.n_annotations; i++) {
			const char *v = sg_oci_annotation(&state, NULL, state.annotations[i].key);
			if (!v)
				fail("an annotation is not found by its key",
				     state.annotations[i].key);
		}
	}
	/* The hook frees the state on every path; so must a failed parse allow it. */
	sg_oci_state_free(&state);
	return 0;
}
