/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tamper analysis: a process that can call bpf(2) with CAP_SYS_ADMIN (or
 * CAP_BPF) can detach the program that guards it. The hook checks the
 * container's capabilities and seccomp profile and acts as the node config's
 * `tamper` says (warn, refuse, ignore).
 */
#ifndef SG_TAMPER_H
#define SG_TAMPER_H

#include <stdbool.h>

#include "json.h"

/* process.capabilities grants CAP_SYS_ADMIN or CAP_BPF in some set. */
bool sg_tamper_caps_allow_bpf(const struct sg_json *capabilities);

/*
 * Whether the linux.seccomp profile (NULL: none) lets bpf(2) through, by
 * building the filter with libseccomp and running it on a bpf(2) call.
 * Argument conditions are read cautiously: a conditional allow allows.
 */
int sg_tamper_seccomp_allows_bpf(const struct sg_json *seccomp, bool *allows);

#endif
