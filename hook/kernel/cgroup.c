// SPDX-License-Identifier: Apache-2.0
#include "kernel/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/util.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *out = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

static int find_cgroup2_mount(char out[PATH_MAX], struct sg_err *err)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (!f)
		return sg_system_error(err, errno, "cannot read /proc/self/mountinfo: %s",
				       strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
		char mountpoint[PATH_MAX], fstype[64];
		const char *sep = strstr(line, " - ");
		if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mountpoint) != 1)
			continue;
		unescape_octal(mountpoint);
		snprintf(out, PATH_MAX, "%s", mountpoint);
		return 0;
	}
	return sg_unsupported_error(
	    err, ENOENT,
	    "no cgroup v2 (cgroup2) mount in /proc/self/mountinfo: sysctl-guard "
	    "needs the unified hierarchy (mount -t cgroup2 none /sys/fs/cgroup/unified)");
}

/* The inode number of a cgroup2 hierarchy's root directory (kernfs's root). */
#define CGROUP2_ROOT_INO 1

/*
 * Whether @dir is a mount of the root of the cgroup2 hierarchy: the kernel's
 * own facts (filesystem magic, root inode), not the path, decide. Inside a
 * cgroup namespace the mount's root is another cgroup, and this says no.
 */
static bool is_cgroup2_root(const char *dir)
{
	struct statfs sfs;
	struct stat st;

	return statfs(dir, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC && stat(dir, &st) == 0 &&
	       st.st_ino == CGROUP2_ROOT_INO;
}

/*
 * The kernel formats all of mountinfo on every read, which took 50-120 us
 * even with a few dozen mounts (more on busy hosts): the two places systemd
 * and the runtimes mount cgroup2 are checked first, each verified as the
 * hierarchy's root, and mountinfo is read only when neither is. The result
 * is kept for the process: mounts do not move in the milliseconds a hook runs.
 */
int sg_cgroup2_mount(char out[PATH_MAX], struct sg_err *err)
{
	static const char *const usual[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"};
	static char cached[PATH_MAX];

	for (size_t i = 0; !cached[0] && i < SG_ARRAY_SIZE(usual); i++)
		if (is_cgroup2_root(usual[i]))
			snprintf(cached, sizeof(cached), "%s", usual[i]);
	if (!cached[0]) {
		int r = find_cgroup2_mount(cached, err);
		if (r < 0)
			return r;
	}
	snprintf(out, PATH_MAX, "%s", cached);
	return 0;
}

int sg_cgroup_id(int fd, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t cgid;
	} handle = {.fh.handle_bytes = sizeof(uint64_t)};
	int mount_id;

	if (name_to_handle_at(fd, "", &handle.fh, &mount_id, AT_EMPTY_PATH) < 0)
		return -errno;
	*id = handle.cgid;
	return 0;
}

int sg_cgroup_path_of(uint64_t id, char out[PATH_MAX])
{
	struct {
		struct file_handle fh;
		uint64_t cgid;
	} handle = {.fh.handle_bytes = sizeof(uint64_t)};
	char mount[PATH_MAX], link[64];
	struct sg_err ignored = {0};
	int mount_id;

	if (sg_cgroup2_mount(mount, &ignored) < 0)
		return -ENOENT;
	_cleanup_close_ int mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* The root's handle gives the hierarchy's handle type (kernfs's), then the id replaces its
	 * own. */
	if (mfd < 0 || name_to_handle_at(mfd, "", &handle.fh, &mount_id, AT_EMPTY_PATH) < 0)
		return -errno;
	handle.cgid = id;
	_cleanup_close_ int fd = open_by_handle_at(mfd, &handle.fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	char path[PATH_MAX];
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return -errno;
	path[n] = '\0';
	/*
	 * In a cgroup namespace (a pod's), a cgroup outside it has no path in
	 * this mount: the kernel shows its root instead, or an unreachable one.
	 * Nothing is better than a wrong name.
	 */
	size_t len = strlen(mount);
	bool inside = strncmp(path, mount, len) == 0 && (path[len] == '/' || path[len] == '\0');
	uint64_t root_id = 0;
	if (!inside || (path[len] == '\0' && (sg_cgroup_id(mfd, &root_id) < 0 || root_id != id)))
		return -EXDEV;
	memcpy(out, path, (size_t)n + 1);
	return 0;
}

int sg_cgroup_open(const char *dir, int *fd, uint64_t *id, struct sg_err *err)
{
	struct statfs sfs;
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* A directory that is not there was named wrong (--cgroup, cgroupsPath): input. */
	if (dfd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		char mount[PATH_MAX];
		struct sg_err ignored = {0};
		bool no_dir = errno == ENOENT;
		if (sg_cgroup2_mount(mount, &ignored) < 0)
			snprintf(mount, sizeof(mount), "none found");
		return sg_input_error(err,
				      "cgroup %s: %s; a cgroup is a directory under the cgroup2 "
				      "mount (%s)",
				      dir, no_dir ? "no such directory" : "not a directory", mount);
	}
	if (dfd < 0)
		return sg_system_error(err, errno, "cgroup %s: cannot open: %s", dir,
				       strerror(errno));
	if (fstatfs(dfd, &sfs) < 0)
		return sg_system_error(err, errno, "cgroup %s: %s", dir, strerror(errno));
	/* A cgroup v1 hierarchy is what the machine has; any other directory, a wrong name. */
	if (sfs.f_type == CGROUP_SUPER_MAGIC)
		return sg_unsupported_error(err, ENOTDIR,
					    "%s is a cgroup v1 directory, which cannot be guarded: "
					    "use a directory under the cgroup2 mount",
					    dir);
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		char mount[PATH_MAX];
		struct sg_err ignored = {0};
		if (sg_cgroup2_mount(mount, &ignored) < 0)
			snprintf(mount, sizeof(mount), "none found");
		return sg_input_error(err,
				      "%s is not a cgroup directory; a cgroup is a directory under "
				      "the cgroup2 mount (%s)",
				      dir, mount);
	}
	int r = sg_cgroup_id(dfd, id);
	if (r < 0)
		return sg_system_error(err, -r, "cgroup %s: cannot get its id: %s", dir,
				       strerror(-r));
	*fd = SG_TAKE_FD(dfd);
	return 0;
}

int sg_cgroup_of_pid(long pid, const char *mount, char out[PATH_MAX], struct sg_err *err)
{
	char path[64];
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return sg_system_error(err, errno, "%s: %s (has the container process exited?)",
				       path, strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, "/..") || line[3] != '/')
			break;
		snprintf(out, PATH_MAX, "%s%s", mount, strcmp(line + 3, "/") == 0 ? "" : line + 3);
		return 0;
	}
	return sg_system_error(err, ENOENT,
			       "%s has no cgroup v2 entry (\"0::\"): the container is not in the "
			       "unified hierarchy",
			       path);
}

/* "a-b-c.slice" -> "a.slice/a-b.slice/a-b-c.slice", as systemd nests slices. */
static int expand_slice(const char *slice, char *out, size_t cap)
{
	size_t len = strlen(slice), used = 0;

	if (len < 6 || strcmp(slice + len - 6, ".slice") != 0 || strchr(slice, '/'))
		return -EINVAL;
	if (strcmp(slice, "-.slice") == 0) {
		out[0] = '\0';
		return 0;
	}
	for (const char *dash = slice;; dash++) {
		dash = strchr(dash, '-');
		size_t prefix = dash ? (size_t)(dash - slice) : len - 6;
		int n = snprintf(out + used, cap - used, "/%.*s.slice", (int)prefix, slice);
		if (n < 0 || (size_t)n >= cap - used)
			return -ENAMETOOLONG;
		used += (size_t)n;
		if (!dash)
			return 0;
	}
}

int sg_cgroup_from_config(const char *cgroups_path, const char *mount, char out[PATH_MAX],
			  struct sg_err *err)
{
	char slice[PATH_MAX], expanded[PATH_MAX];
	const char *c1, *c2;

	if (!cgroups_path || !*cgroups_path)
		return sg_input_error(err, "config.json has no linux.cgroupsPath to find the "
					   "container's cgroup by");
	if (strstr(cgroups_path, ".."))
		return sg_input_error(err, "linux.cgroupsPath \"%s\": \"..\" is not allowed",
				      cgroups_path);
	if (cgroups_path[0] == '/') {
		snprintf(out, PATH_MAX, "%s%s", mount, cgroups_path);
		return 0;
	}
	c1 = strchr(cgroups_path, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || strchr(c2 + 1, ':'))
		return sg_input_error(err,
				      "linux.cgroupsPath \"%s\": expected /path or the systemd "
				      "form slice:prefix:name",
				      cgroups_path);
	snprintf(slice, sizeof(slice), "%.*s", (int)(c1 - cgroups_path), cgroups_path);
	if (expand_slice(slice[0] ? slice : "system.slice", expanded, sizeof(expanded)) < 0)
		return sg_input_error(err, "linux.cgroupsPath \"%s\": \"%s\" is not a slice name",
				      cgroups_path, slice);
	if (c2 == c1 + 1)
		snprintf(out, PATH_MAX, "%s%s/%s.scope", mount, expanded, c2 + 1);
	else
		snprintf(out, PATH_MAX, "%s%s/%.*s-%s.scope", mount, expanded, (int)(c2 - c1 - 1),
			 c1 + 1, c2 + 1);
	return 0;
}

/* The same directory however it is spelled: two stat(2) calls, not realpath(3)'s readlink per
 * component. */
bool sg_cgroup_is_root(const char *dir)
{
	char mount[PATH_MAX];
	struct sg_err ignored = {0};
	struct stat a, b;

	return sg_cgroup2_mount(mount, &ignored) == 0 && stat(mount, &a) == 0 &&
	       stat(dir, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}
