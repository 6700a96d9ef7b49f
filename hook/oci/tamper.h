/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tamper analysis: a process that can call bpf(2) with CAP_SYS_ADMIN (or
 * CAP_BPF), or that sees the host's bpffs, can detach the program that
 * guards it. The hook checks the container's capabilities, seccomp profile
 * and mounts and acts as the node config's `tamper` says (warn, refuse,
 * ignore).
 */
#ifndef SG_TAMPER_H
#define SG_TAMPER_H

#include <stdbool.h>

#include "base/json.h"

/*
 * process.capabilities grants CAP_SYS_ADMIN or CAP_BPF in some set, named as
 * any runtime takes it: "CAP_SYS_ADMIN", "cap_sys_admin" or its number.
 */
bool sg_tamper_caps_allow_bpf(const struct sg_json *capabilities);

/*
 * The source of the first of the container's mounts (config.json's
 * "mounts") through which it would see the guards' pins, NULL when none:
 * a bind of the pin directory or of anything on its bpffs, or a recursive
 * bind of a directory above that bpffs (/sys, /sys/fs, /). Removing its
 * link's pin takes a guard away without any capability. A new bpf or sysfs
 * mount shows none of the host's pins.
 */
const char *sg_tamper_mount_exposing_pins(const struct sg_json *mounts);

/*
 * Whether the linux.seccomp profile (NULL: none) lets bpf(2) through, by
 * building the filter with libseccomp and running it on a bpf(2) call.
 * Argument conditions are read cautiously: a conditional allow allows.
 */
int sg_tamper_seccomp_allows_bpf(const struct sg_json *seccomp, bool *allows);

#endif
