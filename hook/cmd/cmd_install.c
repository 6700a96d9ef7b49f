// SPDX-License-Identifier: Apache-2.0
/*
 * `sysctl-guard install --root DIR`: puts what a node needs under DIR, the
 * node's root (/ on the node itself, /host in the example DaemonSet's pod):
 * this very binary, the hooks.d file that names it, and a node config where
 * there is none. The texts are in the binary (install_files.h), so an image
 * holding nothing else installs itself.
 *
 * Paths are resolved in DIR as the node resolves them: an absolute symlink
 * there (Fedora CoreOS has /usr/local -> /var/usrlocal) leads to the node's
 * target, not the pod's. Each file is written to a temporary file in its
 * directory, synced, and renamed over the old one, so a runtime starting
 * the hook meanwhile runs the old binary or the new one, never a part of
 * either. A file that has the content and mode already is left alone: a
 * second run changes nothing. The binary goes first and the hooks.d file,
 * which makes runtimes run it, last.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "policy/policy.h"
#include "policy/profiles.h"
#include "oci/config.h"
#include "cmd/cli.h"
#include "cmd/install_files.h"
#include "sg_build.h"

/* Where Podman and CRI-O look for the node's own hooks (/usr/share is the distribution's). */
#define HOOKS_D_FILE "/etc/containers/oci/hooks.d/sysctl-guard.json"
#define BINARY_MAX   (256u << 20)
#define MAX_PROFILES 1024
/* The kernel's limit on symlinks followed in one path (ELOOP). */
#define MAX_SYMLINKS 40

enum how {
	REPLACE, /* written unless it has the content and mode already */
	KEEP,	 /* written only where nothing is: the node config */
};

struct file {
	char *path; /* as the node names it: absolute, without DIR */
	const char *data;
	size_t len;
	mode_t mode;
	enum how how;
};

struct install {
	const char *root; /* DIR without trailing slashes: "" for / */
	int root_fd;
	bool dry_run;
	struct file files[3 + MAX_PROFILES]; /* binary, --profiles', config, hooks.d */
	size_t n_files;
	size_t changed;
};

static int system_error(const struct install *in, const char *path, const char *what,
			struct sg_err *err)
{
	int e = errno;
	return sg_system_error(err, e, "%s%s: %s: %s", in->root, path, what, strerror(e));
}

/*
 * Opens @path (absolute, as the node names it) in DIR as the node resolves it,
 * component by component (openat2's RESOLVE_IN_ROOT does the same, but
 * runtimes' seccomp profiles may refuse openat2): a symlink's absolute target
 * starts again at DIR, and ".." stops there. A directory with @dir, where
 * missing ones are made (0755) when @create; else the file, for reading.
 * Returns the descriptor, or -ENOENT (message set) for a missing one when
 * not @create, or another -errno.
 */
static int open_node_path(const struct install *in, const char *path, bool dir, bool create,
			  struct sg_err *err)
{
	char todo[PATH_MAX], done[PATH_MAX] = "", next_todo[PATH_MAX], target[PATH_MAX];
	unsigned links = 0;
	_cleanup_close_ int fd = openat(in->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return system_error(in, "/", "cannot open", err);
	if ((size_t)snprintf(todo, sizeof(todo), "%s", path) >= sizeof(todo))
		return sg_input_error(err, "%s: the path is too long", path);
	for (char *rest = todo;;) {
		rest += strspn(rest, "/");
		if (!*rest)
			return SG_TAKE_FD(fd);
		size_t n = strcspn(rest, "/");
		char name[NAME_MAX + 1];
		if (n > NAME_MAX)
			return sg_input_error(err, "%s: a name in it is too long", path);
		memcpy(name, rest, n);
		name[n] = '\0';
		rest += n;
		bool last = !rest[strspn(rest, "/")];
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			char *slash = strrchr(done, '/');
			*(slash ? slash : done) = '\0';
			int up = openat(in->root_fd, done[0] ? done + 1 : ".",
					O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (up < 0)
				return system_error(in, done, "cannot open", err);
			close(fd);
			fd = up;
			continue;
		}
		int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
		if (dir || !last)
			flags |= O_DIRECTORY;
		size_t done_len = strlen(done);
		snprintf(done + done_len, sizeof(done) - done_len, "/%s", name);
		int next = openat(fd, name, flags);
		if (next < 0 && errno == ENOENT && create && (dir || !last)) {
			if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST)
				return system_error(in, done, "cannot make the directory", err);
			next = openat(fd, name, flags);
		}
		if (next >= 0) {
			close(fd);
			fd = next;
			continue;
		}
		if (errno == ENOENT) {
			sg_input_error(err, "%s%s: no such file or directory", in->root, done);
			return -ENOENT;
		}
		if (errno != ELOOP && errno != ENOTDIR)
			return system_error(in, done, "cannot open", err);
		ssize_t len = readlinkat(fd, name, target, sizeof(target) - 1);
		if (len < 0) {
			errno = ENOTDIR;
			return system_error(in, done, "cannot go through it", err);
		}
		target[len] = '\0';
		if (++links > MAX_SYMLINKS) {
			errno = ELOOP;
			return system_error(in, path, "cannot resolve", err);
		}
		if ((size_t)snprintf(next_todo, sizeof(next_todo), "%s/%s", target, rest) >=
		    sizeof(next_todo))
			return sg_input_error(err, "%s%s: the symlink's target is too long",
					      in->root, done);
		memcpy(todo, next_todo, sizeof(todo));
		rest = todo;
		done[done_len] = '\0';
		if (target[0] == '/') {
			int top = openat(in->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (top < 0)
				return system_error(in, "/", "cannot open", err);
			close(fd);
			fd = top;
			done[0] = '\0';
		}
	}
}

/* Whether @dir_fd's @name is a regular file with @f's content and mode. */
static bool same_file(int dir_fd, const char *name, const struct file *f)
{
	_cleanup_close_ int fd =
	    openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char buf[1 << 16];

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != f->len ||
	    (st.st_mode & 07777) != f->mode)
		return false;
	for (size_t off = 0; off < f->len;) {
		size_t want = f->len - off < sizeof(buf) ? f->len - off : sizeof(buf);
		ssize_t got = read(fd, buf, want);
		if (got <= 0 || memcmp(buf, f->data + off, (size_t)got) != 0)
			return false;
		off += (size_t)got;
	}
	return true;
}

/* Writes @f into a new temporary file of @dir_fd, named in @tmp, synced. */
static int write_temp(const struct install *in, int dir_fd, const struct file *f,
		      char tmp[NAME_MAX + 1], struct sg_err *err)
{
	_cleanup_close_ int fd = -1;
	size_t off = 0;

	for (unsigned attempt = 0; fd < 0; attempt++) {
		snprintf(tmp, NAME_MAX + 1, ".sysctl-guard-install.%d.%u", (int)getpid(), attempt);
		fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && (errno != EEXIST || attempt == 100))
			return system_error(in, f->path, "cannot write a file beside it", err);
	}
	while (off < f->len) {
		ssize_t w = write(fd, f->data + off, f->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	if (off < f->len || fchmod(fd, f->mode) < 0 || fsync(fd) < 0 || close(SG_TAKE_FD(fd)) < 0) {
		int e = off < f->len && !errno ? EIO : errno;
		unlinkat(dir_fd, tmp, 0);
		errno = e;
		return system_error(in, f->path, "cannot write a file beside it", err);
	}
	return 0;
}

static const char *outcome(const struct install *in, bool existed)
{
	if (in->dry_run)
		return existed ? "would be replaced" : "would be installed";
	return existed ? "replaced" : "installed";
}

/* Installs one file, atomically, unless it is there already; says what it did. */
static int install_file(struct install *in, const struct file *f, struct sg_err *err)
{
	_cleanup_free_ char *dir = sg_xstrndup(f->path, (size_t)(strrchr(f->path, '/') - f->path));
	const char *name = strrchr(f->path, '/') + 1;
	struct stat st;
	char tmp[NAME_MAX + 1];

	_cleanup_close_ int dir_fd =
	    open_node_path(in, dir[0] ? dir : "/", true, !in->dry_run, err);
	if (dir_fd == -ENOENT && in->dry_run) {
		printf("%s: %s\n", f->path, outcome(in, false));
		in->changed++;
		return 0;
	}
	if (dir_fd < 0)
		return dir_fd;
	bool existed = fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!existed && errno != ENOENT)
		return system_error(in, f->path, "cannot look at it", err);
	if (existed && f->how == KEEP) {
		printf("%s: kept: the node has one (install never overwrites it; --config FILE "
		       "replaces it)\n",
		       f->path);
		return 0;
	}
	if (existed && same_file(dir_fd, name, f)) {
		printf("%s: up to date\n", f->path);
		return 0;
	}
	in->changed++;
	if (in->dry_run) {
		printf("%s: %s\n", f->path, outcome(in, existed));
		return 0;
	}
	int r = write_temp(in, dir_fd, f, tmp, err);
	if (r < 0)
		return r;
	/* A config made since fstatat stays: link fails where a file is. */
	r = f->how == KEEP ? linkat(dir_fd, tmp, dir_fd, name, 0)
			   : renameat(dir_fd, tmp, dir_fd, name);
	int e = errno;
	if (f->how == KEEP || r < 0)
		unlinkat(dir_fd, tmp, 0);
	if (r < 0 && f->how == KEEP && e == EEXIST) {
		in->changed--;
		printf("%s: kept: the node has one (install never overwrites it)\n", f->path);
		return 0;
	}
	errno = e;
	if (r < 0 || fsync(dir_fd) < 0)
		return system_error(in, f->path, "cannot put it in place", err);
	printf("%s: %s\n", f->path, outcome(in, existed));
	return 0;
}

static void add_file(struct install *in, char *path, const char *data, size_t len, mode_t mode,
		     enum how how)
{
	assert(in->n_files < SG_ARRAY_SIZE(in->files));
	in->files[in->n_files++] =
	    (struct file){.path = path, .data = data, .len = len, .mode = mode, .how = how};
}

/* This binary, as the kernel runs it (a deleted or replaced one too). */
static int read_self(char **data, size_t *len, struct sg_err *err)
{
	_cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return sg_system_error(err, errno,
				       "/proc/self/exe: cannot open this binary to install it: %s; "
				       "is /proc mounted?",
				       strerror(errno));
	int r = sg_read_fd(fd, "/proc/self/exe", BINARY_MAX, data, len, err);
	if (r < 0)
		err->status = SG_EXIT_SYSTEM;
	return r;
}

/* Texts read for the files (--profiles, --config, the node's config), freed at the end. */
struct texts {
	char *v[MAX_PROFILES + 2];
	size_t n;
};

static void texts_free(struct texts *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * --profiles SRC: every NAME.json of SRC (a ConfigMap's volume: its entries
 * are symlinks into a hidden directory, which is skipped), each a valid
 * policy, into the node's @profiles_dir. Nothing is written before all are read.
 */
static int add_profiles(struct install *in, const char *src, const char *profiles_dir,
			struct texts *texts, struct sg_err *err)
{
	DIR *d = opendir(src);
	char *names[MAX_PROFILES];
	size_t n = 0;
	int r = 0;

	if (!d)
		return sg_input_error(err, "--profiles %s: cannot open the directory: %s", src,
				      strerror(errno));
	for (struct dirent *de; r == 0 && (de = readdir(d));) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		char *stem = sg_xstrndup(de->d_name, len - 5);
		if (!sg_profile_name_valid(stem))
			r = sg_input_error(err,
					   "--profiles %s: %s: \"%s\" is not a profile name "
					   "([a-z0-9][a-z0-9._-]*, at most 64 characters): no "
					   "container could name it; rename it",
					   src, de->d_name, stem);
		else if (n == SG_ARRAY_SIZE(names))
			r = sg_input_error(err, "--profiles %s: more than %zu profiles", src,
					   SG_ARRAY_SIZE(names));
		if (r < 0)
			free(stem);
		else
			names[n++] = stem;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *file = sg_xasprintf("%s/%s.json", src, names[i]);
		struct sg_policy policy = {0};
		size_t len = 0;
		if (r == 0 && sg_policy_load_file(file, &policy, err) < 0) {
			sg_err_prefix(err, "--profiles %s", src);
			r = -EINVAL;
		}
		sg_policy_free(&policy);
		if (r == 0)
			r = sg_read_file(file, SG_MAX_POLICY_BYTES, &texts->v[texts->n], &len, err);
		if (r == 0) {
			const char *text = texts->v[texts->n++];
			add_file(in, sg_xasprintf("%s/%s.json", profiles_dir, names[i]), text, len,
				 0644, REPLACE);
		}
		free(names[i]);
	}
	return r;
}

/* The node's config as it is under DIR, when there is one: what --profiles install into. */
static int read_node_config(const struct install *in, char **text, size_t *len, struct sg_err *err)
{
	_cleanup_close_ int fd = open_node_path(in, SG_DEFAULT_CONFIG, false, false, err);
	if (fd == -ENOENT) {
		*err = (struct sg_err){0};
		return 0;
	}
	if (fd < 0)
		return fd;
	return sg_read_fd(fd, SG_DEFAULT_CONFIG, SG_CONFIG_MAX_BYTES, text, len, err);
}

struct options {
	const char *root, *hook, *config, *profiles;
	bool dry_run;
};

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option options[] = {
	    {"root", required_argument, NULL, 'r'},	{"dry-run", no_argument, NULL, 'n'},
	    {"hook", required_argument, NULL, 'h'},	{"config", required_argument, NULL, 'c'},
	    {"profiles", required_argument, NULL, 'p'}, {NULL, 0, NULL, 0},
	};
	int opt;

	*o = (struct options){.hook = "annotated"};
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'r')
			o->root = optarg;
		else if (opt == 'n')
			o->dry_run = true;
		else if (opt == 'h')
			o->hook = optarg;
		else if (opt == 'c')
			o->config = optarg;
		else if (opt == 'p')
			o->profiles = optarg;
		else
			return sg_usage_error("install", "unknown option");
	}
	if (optind != argc)
		return sg_usage_error("install", "unexpected argument \"%s\"", argv[optind]);
	if (!o->root || !o->root[0])
		return sg_usage_error("install",
				      "--root DIR is required: the node's root (/ on the node, "
				      "/host where a pod mounts it there)");
	if (strcmp(o->hook, "annotated") != 0 && strcmp(o->hook, "always") != 0)
		return sg_usage_error("install", "--hook takes annotated or always, not \"%s\"",
				      o->hook);
	return SG_EXIT_OK;
}

/*
 * The node config to install (--config FILE, else the default, which a node
 * config already there keeps out) and the profiles_dir --profiles fill:
 * each checked as the hook will read it, against the profiles it will have.
 */
static int plan_config(const struct install *in, const struct options *o, struct texts *texts,
		       struct file *config, struct sg_node_config *effective, struct sg_err *err)
{
	struct sg_config_lookup lookup = {.root = in->root, .first = o->profiles};
	const char *text = sg_install_default_config, *origin = "the default node config";
	size_t len = strlen(text);
	char *read = NULL;
	int r;

	if (o->config) {
		if (sg_read_file(o->config, SG_CONFIG_MAX_BYTES, &read, &len, err) < 0)
			return -EINVAL;
		texts->v[texts->n++] = read;
		text = read;
		origin = o->config;
	}
	r = sg_node_config_parse(origin, text, len, &lookup, effective, err);
	if (r < 0) {
		sg_err_prefix(err, "%s", o->config ? "--config" : "sysctl-guard's own default");
		return r;
	}
	*config = (struct file){
	    .data = text, .len = len, .mode = 0644, .how = o->config ? REPLACE : KEEP};
	if (o->config || !o->profiles)
		return 0;

	/* The node keeps its config: --profiles go where it says. */
	read = NULL;
	len = 0;
	r = read_node_config(in, &read, &len, err);
	if (r < 0 || !read)
		return r;
	texts->v[texts->n++] = read;
	sg_node_config_free(effective);
	r = sg_node_config_parse(SG_DEFAULT_CONFIG, read, len, &lookup, effective, err);
	if (r < 0)
		sg_err_prefix(err, "the node's config, which says where --profiles go (give "
				   "--config FILE to replace it)");
	return r;
}

int sg_cmd_install(int argc, char **argv)
{
	struct options o;
	int status = parse_options(argc, argv, &o);
	if (status != SG_EXIT_OK)
		return status;

	_cleanup_free_ struct install *in = sg_xcalloc(1, sizeof(*in));
	_cleanup_free_ char *root = sg_xstrdup(o.root);
	_cleanup_free_ char *binary = NULL;
	struct sg_node_config effective = {0};
	struct file config = {0};
	struct texts texts = {0};
	struct sg_err err = {0};
	size_t binary_len = 0;
	int r;

	for (size_t n = strlen(root); n > 0 && root[n - 1] == '/';)
		root[--n] = '\0';
	in->root = root;
	in->dry_run = o.dry_run;
	in->root_fd = open(o.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (in->root_fd < 0)
		return sg_usage_error("install", "--root %s: %s", o.root, strerror(errno));

	r = read_self(&binary, &binary_len, &err);
	if (r == 0)
		add_file(in, sg_xstrdup(sg_install_binary_path), binary, binary_len, 0755, REPLACE);
	if (r == 0)
		r = plan_config(in, &o, &texts, &config, &effective, &err);
	/* Profiles before the config, whose baseline may name one. */
	if (r == 0 && o.profiles)
		r = add_profiles(in, o.profiles, effective.profiles_dir, &texts, &err);
	if (r == 0) {
		add_file(in, sg_xstrdup(SG_DEFAULT_CONFIG), config.data, config.len, config.mode,
			 config.how);
		const char *hooks = strcmp(o.hook, "always") == 0 ? sg_install_hooks_always
								  : sg_install_hooks_annotated;
		add_file(in, sg_xstrdup(HOOKS_D_FILE), hooks, strlen(hooks), 0644, REPLACE);
	}
	for (size_t i = 0; r == 0 && i < in->n_files; i++)
		r = install_file(in, &in->files[i], &err);

	fflush(stdout);
	if (r < 0) {
		status = sg_report(&err);
		if (in->changed && !in->dry_run)
			fprintf(stderr,
				"sysctl-guard: the files listed above as installed or replaced "
				"are in place; run install again once the cause is fixed\n");
	} else if (in->dry_run) {
		printf("dry run: %zu file%s would change under %s/; nothing was written\n",
		       in->changed, sg_plural(in->changed), root);
	} else if (!in->changed) {
		printf("sysctl-guard %s: everything under %s/ is up to date\n", SG_VERSION, root);
	} else {
		printf("sysctl-guard %s: %zu file%s installed under %s/\n", SG_VERSION, in->changed,
		       sg_plural(in->changed), root);
	}
	for (size_t i = 0; i < in->n_files; i++)
		free(in->files[i].path);
	texts_free(&texts);
	sg_node_config_free(&effective);
	close(in->root_fd);
	return status;
}
