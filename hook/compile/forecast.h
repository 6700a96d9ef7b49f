/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A large policy's DFA, built by a second thread while the first parses the
 * policy's text: the DFA is the longest step of compiling such a policy,
 * and needs only the names of its wildcard rules, which a short scan of the
 * text finds without parsing it. The scan may be wrong where the text is
 * not a valid policy, and gives up where it would have to decode (a name
 * with an escape); the compiler takes the DFA only when it was built from
 * exactly the patterns the parsed policy has (sg_dfa_input_equal), and
 * builds its own otherwise.
 */
#ifndef SG_FORECAST_H
#define SG_FORECAST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "policy/policy.h"
#include "compile/dfa.h"

/*
 * Texts smaller than this are parsed and compiled in a millisecond or so:
 * a thread would cost more than it saves.
 */
#define SG_FORECAST_MIN_BYTES (64 << 10)

struct sg_dfa_forecast;

/*
 * Starts forecasting the DFA of a policy set whose layers are @before (a
 * parsed policy, borrowed; NULL: none) and then the policy of @text, which
 * must stay until sg_dfa_forecast_text_done. NULL when no thread started.
 * The thread inherits the caller's confinement; @confine (NULL: none) is
 * its first call, before it reads the text: sg_confine_thread where the
 * caller is not confined yet. Where that fails, it forecasts nothing.
 */
struct sg_dfa_forecast *sg_dfa_forecast_start(const char *text, size_t len,
					      const struct sg_policy *before,
					      int (*confine)(struct sg_err *err));

/* Waits until the forecast no longer reads the text (it reads it first, briefly). */
void sg_dfa_forecast_text_done(struct sg_dfa_forecast *f);

/*
 * Moves the forecast's DFA into @dfa (empty) and returns true when it was
 * built from exactly @in, waiting for it to be built but not packed: the
 * forecast, packing it still, then goes with the DFA (sg_compiled's
 * dfa_forecast; sg_compiled_free frees both, in that order). Otherwise
 * stops the forecast and returns false.
 */
bool sg_dfa_forecast_take(struct sg_dfa_forecast *f, const struct sg_dfa_input *in,
			  struct sg_dfa *dfa);

/* The taken DFA as the program reads it, once packed; NULL where the packing stopped. */
const struct sg_dfa_packed *sg_dfa_forecast_packed(struct sg_dfa_forecast *f);

/* Tells the thread to stop where it is (it checks every 64 KiB and 256 states); NULL is fine. */
void sg_dfa_forecast_cancel(struct sg_dfa_forecast *f);

/* Stops the forecast (at once where it is still building) and frees it; NULL is fine. */
void sg_dfa_forecast_free(struct sg_dfa_forecast *f);

#define _cleanup_dfa_forecast_ __attribute__((cleanup(sg_dfa_forecast_freep)))
static inline void sg_dfa_forecast_freep(struct sg_dfa_forecast **f)
{
	sg_dfa_forecast_free(*f);
}

/*
 * The scan, pure, for tests and the fuzzer: adds to @in, as one layer, the
 * wildcard names of the rules of policy @text in slash form (copies in
 * @names), numbering the rules from @first_rule. False where it gives up,
 * or once @cancel (NULL: never) is set; @in then holds part of them.
 */
bool sg_forecast_scan(const char *text, size_t len, uint32_t first_rule, const atomic_bool *cancel,
		      struct sg_arena *names, struct sg_dfa_input *in);

#endif
