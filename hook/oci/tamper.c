// SPDX-License-Identifier: Apache-2.0
/*
 * Can the container reach bpf(2) with a capability that lets it detach its
 * guard? The capability sets come from process.capabilities. The seccomp
 * profile is built into a real filter with libseccomp, and the filter is run
 * on the seccomp data of a bpf(2) call, so the answer is the kernel's. Can
 * it see the host's pins, where unlinking a guard's link detaches it? Its
 * bind mounts are resolved on the host, where the hook runs.
 */
#include "oci/tamper.h"

#include <errno.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <seccomp.h>

#include "base/util.h"
#include "kernel/program.h"

/* A capability as runc writes it, as crun also takes it (libcap's spelling, any case), or its
 * number. */
static bool names_cap(const char *text, const char *name, int number)
{
	char digits[16];
	snprintf(digits, sizeof(digits), "%d", number);
	return strcasecmp(text, name) == 0 || strcmp(text, digits) == 0;
}

static bool has_cap(const struct sg_json *caps, const char *set, const char *name, int number)
{
	const struct sg_json *list = sg_json_get(caps, set);
	if (!list || list->type != SG_JSON_ARRAY)
		return false;
	for (size_t i = 0; i < list->array.len; i++)
		if (list->array.items[i]->type == SG_JSON_STRING &&
		    names_cap(list->array.items[i]->string.text, name, number))
			return true;
	return false;
}

/* Any set counts: what is bounding today can be effective after an exec. */
bool sg_tamper_caps_allow_bpf(const struct sg_json *capabilities)
{
	static const char *const sets[] = {"bounding", "effective", "permitted", "inheritable",
					   "ambient"};
	for (size_t i = 0; i < SG_ARRAY_SIZE(sets); i++)
		if (has_cap(capabilities, sets[i], "CAP_SYS_ADMIN", CAP_SYS_ADMIN) ||
		    has_cap(capabilities, sets[i], "CAP_BPF", CAP_BPF))
			return true;
	return false;
}

/* Whether @path is @dir or lies under it (both resolved). */
static bool is_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool has_option(const struct sg_json *mount, const char *option)
{
	const struct sg_json *options = sg_json_get(mount, "options");
	for (size_t i = 0; options && options->type == SG_JSON_ARRAY && i < options->array.len; i++)
		if (options->array.items[i]->type == SG_JSON_STRING &&
		    strcmp(options->array.items[i]->string.text, option) == 0)
			return true;
	return false;
}

/* Whether the bind of @mount shows the pins at @pins (resolved; @pins_dev its filesystem). */
static bool bind_exposes(const struct sg_json *mount, const char *pins, dev_t pins_dev)
{
	const char *type = sg_json_get_string(mount, "type");
	const char *source = sg_json_get_string(mount, "source");
	const bool rbind = has_option(mount, "rbind");
	char resolved[PATH_MAX];
	struct stat st;

	if (!source || !(rbind || has_option(mount, "bind") || (type && strcmp(type, "bind") == 0)))
		return false;
	if (!realpath(source, resolved) || stat(resolved, &st) < 0)
		return false; /* the runtime cannot bind it either */
	if (is_within(resolved, pins))
		return true;
	/* Above the pins: on their bpffs, a bind shows them; above that bpffs, an rbind. */
	return is_within(pins, resolved) && (st.st_dev == pins_dev || rbind);
}

/*
 * Where the pins are, resolved, and their filesystem's device. Before the
 * first guard on the node they are not made yet: where sg_bpffs_prepare will
 * make them, under the bpffs mount point.
 */
static bool locate_pins(char pins[PATH_MAX], dev_t *dev)
{
	struct stat st;
	char mount_point[PATH_MAX];

	if (realpath(SG_PIN_ROOT, pins) && stat(pins, &st) == 0) {
		*dev = st.st_dev;
		return true;
	}
	if (!realpath(SG_BPFFS_ROOT, mount_point) || stat(mount_point, &st) < 0)
		return false;
	snprintf(pins, PATH_MAX, "%s%s", mount_point, &SG_PIN_ROOT[sizeof(SG_BPFFS_ROOT) - 1]);
	*dev = st.st_dev;
	return true;
}

const char *sg_tamper_mount_exposing_pins(const struct sg_json *mounts)
{
	char pins[PATH_MAX];
	dev_t dev;

	if (!mounts || mounts->type != SG_JSON_ARRAY || !locate_pins(pins, &dev))
		return NULL;
	for (size_t i = 0; i < mounts->array.len; i++) {
		const struct sg_json *mount = mounts->array.items[i];
		if (mount->type == SG_JSON_OBJECT && bind_exposes(mount, pins, dev))
			return sg_json_get_string(mount, "source");
	}
	return NULL;
}

/* OCI action names -> libseccomp actions; NULL when unknown. */
static bool parse_action(const char *name, uint32_t *action)
{
	static const struct {
		const char *name;
		uint32_t action;
	} actions[] = {
	    {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW},
	    {"SCMP_ACT_LOG", SCMP_ACT_LOG},
	    {"SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(EPERM)},
	    {"SCMP_ACT_KILL", SCMP_ACT_KILL},
	    {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL},
	    {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS},
	    {"SCMP_ACT_TRAP", SCMP_ACT_TRAP},
	    {"SCMP_ACT_TRACE", SCMP_ACT_TRACE(0)},
	    {"SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY},
	};
	for (size_t i = 0; name && i < SG_ARRAY_SIZE(actions); i++) {
		if (strcmp(actions[i].name, name) == 0) {
			*action = actions[i].action;
			return true;
		}
	}
	return false;
}

/* A classic BPF interpreter for what libseccomp emits, enough to run one filter. */
static uint32_t run_filter(const struct sock_filter *prog, size_t len,
			   const struct seccomp_data *data)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &prog[pc];
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k + 4 > sizeof(*data))
				return SECCOMP_RET_KILL_PROCESS;
			memcpy(&a, (const char *)data + f->k, 4);
			break;
		case BPF_LD | BPF_MEM:
			a = mem[f->k % BPF_MEMWORDS];
			break;
		case BPF_LDX | BPF_MEM:
			x = mem[f->k % BPF_MEMWORDS];
			break;
		case BPF_ST:
			mem[f->k % BPF_MEMWORDS] = a;
			break;
		case BPF_STX:
			mem[f->k % BPF_MEMWORDS] = x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= f->k;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
			a |= f->k;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & f->k) ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return f->k;
		case BPF_RET | BPF_A:
			return a;
		default:
			/* Unknown instruction: assume the worst, the call gets through. */
			return SECCOMP_RET_ALLOW;
		}
	}
	return SECCOMP_RET_KILL_PROCESS;
}

static void release_ctx(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

/*
 * Adds the profile's rules for bpf(2), and only those: the verdict for one
 * call depends on no other syscall's rules (their argument conditions are
 * dropped here), and a filter of a whole runtime default profile (some 400
 * names) took libseccomp milliseconds to build, in every hook run.
 */
static int add_rules(scmp_filter_ctx ctx, const struct sg_json *syscalls)
{
	for (size_t i = 0; syscalls && i < syscalls->array.len; i++) {
		const struct sg_json *rule = syscalls->array.items[i];
		const struct sg_json *names = sg_json_get(rule, "names");
		const struct sg_json *args = sg_json_get(rule, "args");
		uint32_t action;

		if (!names || names->type != SG_JSON_ARRAY ||
		    !parse_action(sg_json_get_string(rule, "action"), &action))
			continue;
		/*
		 * Argument conditions are dropped: an allowing rule then allows every
		 * call (the cautious reading), a denying one is left out.
		 */
		bool conditional = args && args->type == SG_JSON_ARRAY && args->array.len > 0;
		if (conditional && action != SCMP_ACT_ALLOW && action != SCMP_ACT_LOG)
			continue;
		for (size_t n = 0; n < names->array.len; n++) {
			if (names->array.items[n]->type != SG_JSON_STRING)
				continue;
			int nr = seccomp_syscall_resolve_name(names->array.items[n]->string.text);
			if (nr == __NR_bpf)
				seccomp_rule_add(ctx, action, nr,
						 0); /* same as default: EEXIST, fine */
		}
	}
	return 0;
}

int sg_tamper_seccomp_allows_bpf(const struct sg_json *seccomp, bool *allows)
{
	uint32_t default_action;
	__attribute__((cleanup(release_ctx))) scmp_filter_ctx ctx = NULL;

	*allows = true;
	if (!seccomp || seccomp->type != SG_JSON_OBJECT)
		return 0; /* no filter: bpf(2) is reachable */
	if (!parse_action(sg_json_get_string(seccomp, "defaultAction"), &default_action))
		return 0;
	ctx = seccomp_init(default_action);
	if (!ctx)
		return -ENOMEM;
	const struct sg_json *syscalls = sg_json_get(seccomp, "syscalls");
	add_rules(ctx, syscalls && syscalls->type == SG_JSON_ARRAY ? syscalls : NULL);

	_cleanup_close_ int fd = memfd_create("sg-seccomp", MFD_CLOEXEC);
	if (fd < 0 || seccomp_export_bpf(ctx, fd) < 0)
		return -EIO;
	off_t size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % sizeof(struct sock_filter) != 0)
		return -EIO;
	_cleanup_free_ struct sock_filter *prog = sg_xmalloc((size_t)size);
	if (pread(fd, prog, (size_t)size, 0) != size)
		return -EIO;

	struct seccomp_data data = {.nr = __NR_bpf, .arch = AUDIT_ARCH_X86_64};
#if defined(__aarch64__)
	data.arch = AUDIT_ARCH_AARCH64;
#endif
	uint32_t ret = run_filter(prog, (size_t)size / sizeof(*prog), &data);
	uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
	*allows = action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG ||
		  action == SECCOMP_RET_TRACE || action == SECCOMP_RET_USER_NOTIF;
	return 0;
}
