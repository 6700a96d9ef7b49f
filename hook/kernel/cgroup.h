/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup v2: where it is mounted, opening a cgroup directory, its id. */
#ifndef SG_CGROUP_H
#define SG_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/*
 * The cgroup2 mount point (hybrid hosts have it at /sys/fs/cgroup/unified,
 * pure v2 hosts at /sys/fs/cgroup): one of those where it is verified as the
 * hierarchy's root, else the first cgroup2 mount in /proc/self/mountinfo. No
 * mount is a system error (exit 2).
 */
int sg_cgroup2_mount(char out[PATH_MAX], struct sg_err *err);

/* Whether @dir is the cgroup2 mount itself: a guard there confines every process on the host. */
bool sg_cgroup_is_root(const char *dir);

/* Opens @dir, which must be a directory on cgroup2; *id is the kernel's cgroup id. */
int sg_cgroup_open(const char *dir, int *fd, uint64_t *id, struct sg_err *err);

/* The kernel's cgroup id of an open cgroup2 directory. */
int sg_cgroup_id(int fd, uint64_t *id);

/*
 * The directory of the cgroup whose id is @id, under the cgroup2 mount: 0,
 * or -ESTALE when it is gone, -EXDEV when this process's cgroup namespace
 * does not see it, or another -errno. Needs CAP_DAC_READ_SEARCH
 * (open_by_handle_at), as status and detach need root anyway.
 */
int sg_cgroup_path_of(uint64_t id, char out[PATH_MAX]);

/* The cgroup v2 directory of process @pid: its "0::" line of /proc/PID/cgroup under @mount. */
int sg_cgroup_of_pid(long pid, const char *mount, char out[PATH_MAX], struct sg_err *err);

/*
 * The directory linux.cgroupsPath names: "/a/b" under @mount, or the systemd
 * form "slice:prefix:name" ("machine-x.slice:libpod:ID" ->
 * machine.slice/machine-x.slice/libpod-ID.scope).
 */
int sg_cgroup_from_config(const char *cgroups_path, const char *mount, char out[PATH_MAX],
			  struct sg_err *err);

#endif
