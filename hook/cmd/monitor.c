// SPDX-License-Identifier: Apache-2.0
/*
 * `sysctl-guard monitor`: streams the decisions every guard on the node
 * reports through the shared ring buffer, as readable lines or JSON lines
 * (schema/event.schema.json), with container ids and rule names resolved.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "base/jsonout.h"
#include "base/util.h"
#include "policy/name.h"
#include "compile/eval.h"
#include "kernel/guard.h"
#include "kernel/probe.h" /* SG_RUN_DIR */
#include "cmd/cli.h"
#include "cmd/journal.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* What is known of one guard, looked up once from its pins. */
struct guard_info {
	uint64_t cgroup_id;
	char container_id[72];
	uint32_t n_rules;
	struct sg_rule_name *rule_names;
};

struct monitor {
	bool skipping; /* draining what was reported before the monitor started */
	bool json;
	bool to_syslog;
	bool to_journal;
	const char *container; /* only this container (id or prefix) */
	int64_t boot_to_real_ns;
	struct guard_info *guards;
	size_t n_guards;
};

static const struct guard_info *guard_info(struct monitor *m, uint64_t cgroup_id)
{
	for (size_t i = 0; i < m->n_guards; i++)
		if (m->guards[i].cgroup_id == cgroup_id)
			return &m->guards[i];

	char entry[32];
	struct sg_guard_status st;
	struct sg_err err = {0};
	sg_guard_entry_name(cgroup_id, entry);
	if (sg_guard_read(entry, &st, &err) < 0)
		return NULL; /* gone already: the event still prints, without names */
	m->guards = sg_xrealloc(m->guards, m->n_guards + 1, sizeof(*m->guards));
	struct guard_info *g = &m->guards[m->n_guards++];
	g->cgroup_id = cgroup_id;
	snprintf(g->container_id, sizeof(g->container_id), "%s", st.meta.container_id);
	g->n_rules = st.meta.n_rules;
	g->rule_names = SG_TAKE(st.rule_names);
	sg_guard_status_free(&st);
	return g;
}

static const char *const verdict_words[SG_VERDICT_COUNT] = {"allow", "deny", "rewrite", "audit"};

/* A value as the kernel saw it, without the newline writers add. */
static void chop(char *value, size_t cap)
{
	value[cap - 1] = '\0';
	value[strcspn(value, "\n")] = '\0';
}

static void format_time(const struct monitor *m, uint64_t boot_ns, char out[40])
{
	int64_t real_ns = (int64_t)boot_ns + m->boot_to_real_ns;
	time_t secs = (time_t)(real_ns / 1000000000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 40 - n, ".%06ldZ", (long)((real_ns % 1000000000) / 1000));
}

static void print_json(const struct monitor *m, const struct sg_event *e,
		       const struct guard_info *g, const char *name, const char *rule)
{
	char when[40];
	format_time(m, e->time_ns, when);
	printf("{\"version\": 1, \"time\": \"%s\", \"container_id\": ", when);
	sg_json_write_string(stdout, g ? g->container_id : "");
	printf(", \"cgroup_id\": %llu, \"task_cgroup_id\": %llu, \"pid\": %u, \"comm\": ",
	       (unsigned long long)e->guard_cgroup_id, (unsigned long long)e->cgroup_id, e->pid);
	sg_json_write_string(stdout, e->comm);
	printf(", \"sysctl\": ");
	sg_json_write_string(stdout, name);
	printf(", \"access\": \"%s\", \"verdict\": \"%s\", \"reason\": ",
	       e->write ? "write" : "read", verdict_words[e->verdict % SG_VERDICT_COUNT]);
	sg_json_write_string(stdout, sg_reason_text(e->reason));
	printf(", \"rule\": ");
	if (rule)
		sg_json_write_string(stdout, rule);
	else
		printf("null");
	printf(", \"current_value\": ");
	sg_json_write_string(stdout, e->current_value);
	if (e->write) {
		printf(", \"value\": ");
		sg_json_write_string(stdout, e->new_value);
	}
	if (e->rewritten) {
		printf(", \"new_value\": ");
		sg_json_write_string(stdout, e->final_value);
	}
	/* The sysctl's namespace, where sharing it with the host decided. */
	if (sg_reason_is_host_namespace(e->reason))
		printf(", \"host_namespace\": \"%s\"", sg_namespace_name(sg_namespace_of(e->name)));
	printf("}\n");
}

/* The event as a journal entry: the line, and each part a field to match on. */
static void send_to_journal(const struct sg_event *e, const struct guard_info *g, const char *name,
			    const char *rule, const char *line, int priority)
{
	bool host = sg_reason_is_host_namespace(e->reason);
	struct sg_journal_entry entry = {
	    .message = line,
	    .priority = priority,
	    .container_id = g ? g->container_id : NULL,
	    .sysctl = name,
	    .access = e->write ? "write" : "read",
	    .verdict = verdict_words[e->verdict % SG_VERDICT_COUNT],
	    .rule = rule,
	    .reason = sg_reason_text(e->reason),
	    .value = e->write ? e->new_value : NULL,
	    .new_value = e->rewritten ? e->final_value : NULL,
	    .host_namespace = host ? sg_namespace_name(sg_namespace_of(e->name)) : NULL,
	    .comm = e->comm,
	    .pid = e->pid,
	};
	int r = sg_journal_send(&entry);
	if (r < 0)
		fprintf(stderr, "sysctl-guard: the journal did not take an event: %s\n",
			strerror(-r));
}

static void print_line(const struct monitor *m, const struct sg_event *e,
		       const struct guard_info *g, const char *name, const char *rule)
{
	char when[40], line[1024];
	int n;

	format_time(m, e->time_ns, when);
	n = snprintf(line, sizeof(line), "container %.12s pid %u (%s) %s %s",
		     g && g->container_id[0] ? g->container_id : "-", e->pid, e->comm,
		     e->write ? "write" : "read", name);
	if (e->write)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " \"%s\"", e->new_value);
	n += snprintf(line + n, sizeof(line) - (size_t)n, ": %s",
		      verdict_words[e->verdict % SG_VERDICT_COUNT]);
	if (e->rewritten)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " to \"%s\"", e->final_value);
	snprintf(line + n, sizeof(line) - (size_t)n, " (%s%s%s)", rule ? rule : "default",
		 e->reason ? ": " : "", e->reason ? sg_reason_text(e->reason) : "");
	int priority = e->verdict == SG_VERDICT_DENY ? LOG_WARNING : LOG_INFO;
	if (m->to_journal)
		send_to_journal(e, g, name, rule, line, priority);
	else if (m->to_syslog)
		syslog(priority, "%s", line);
	else
		printf("%s %s\n", when, line);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct monitor *m = ctx;
	struct sg_event e;
	char name[SG_NAME_MAX];

	if (size < sizeof(e) || m->skipping)
		return 0;
	memcpy(&e, data, sizeof(e));
	if (e.version != SG_EVENT_VERSION)
		return 0;
	chop(e.name, sizeof(e.name));
	chop(e.current_value, sizeof(e.current_value));
	chop(e.new_value, sizeof(e.new_value));
	chop(e.final_value, sizeof(e.final_value));
	/* Clamped values start with a blank the kernel skips; people need not see it. */
	memmove(e.final_value, e.final_value + strspn(e.final_value, " "),
		strlen(e.final_value + strspn(e.final_value, " ")) + 1);
	e.comm[sizeof(e.comm) - 1] = '\0';

	const struct guard_info *g = guard_info(m, e.guard_cgroup_id);
	if (m->container &&
	    (!g || strncmp(g->container_id, m->container, strlen(m->container)) != 0))
		return 0;
	const char *rule = g && e.rule < g->n_rules ? g->rule_names[e.rule].name : NULL;
	sg_name_to_dotted(e.name, name, sizeof(name));
	if (m->json)
		print_json(m, &e, g, name, rule);
	else
		print_line(m, &e, g, name, rule);
	return 0;
}

static int64_t boot_to_real_offset(void)
{
	struct timespec real, boot;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return ((int64_t)real.tv_sec - boot.tv_sec) * 1000000000 + (real.tv_nsec - boot.tv_nsec);
}

/* Held by the node's one monitor: a directory of its own, beside the events' pin. */
#define SG_MONITOR_LOCK SG_PIN_ROOT "/monitor"
/* Its pid, for a second monitor's refusal (where the two share /run). */
#define SG_MONITOR_PID SG_RUN_DIR "/monitor.pid"

/* A second monitor's refusal, naming the first where /run says who it is. Closes @fd. */
static int refused(int fd, struct sg_err *err)
{
	char pid[32] = "";
	int pid_fd = open(SG_MONITOR_PID, O_RDONLY | O_CLOEXEC);
	ssize_t n = pid_fd >= 0 ? read(pid_fd, pid, sizeof(pid) - 1) : -1;

	if (pid_fd >= 0)
		close(pid_fd);
	close(fd);
	pid[n > 0 ? strcspn(pid, "\n") : 0] = '\0';
	/* A pid left by a monitor gone since (the holder's /run is its own): not named. */
	long holder = strtol(pid, NULL, 10);
	if (holder <= 0 || (kill((pid_t)holder, 0) < 0 && errno == ESRCH))
		pid[0] = '\0';
	return sg_system_error(err, EBUSY,
			       "another monitor%s%s%s reads this node's events (it holds %s): the "
			       "events have one reader, and two would split them",
			       pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "", SG_MONITOR_LOCK);
}

/*
 * A BPF ring buffer has one read position, which every reader moves: two
 * monitors would each take what the other did not, and neither would see
 * every event. The first holds an exclusive flock of SG_MONITOR_LOCK while
 * it runs; another is refused. The lock is in bpffs, where the events are:
 * a monitor in another mount namespace (a container given the node's
 * bpffs) reads the same events and meets the same lock, where a file under
 * its own /run would be a lock of its own. Returns the lock's fd, or -errno.
 */
static int take_reader_lock(struct sg_err *err)
{
	if (mkdir(SG_MONITOR_LOCK, 0700) < 0 && errno != EEXIST)
		return sg_system_error(err, errno, "cannot make %s: %s", SG_MONITOR_LOCK,
				       strerror(errno));
	int fd = open(SG_MONITOR_LOCK, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sg_system_error(err, errno, "cannot open %s: %s", SG_MONITOR_LOCK,
				       strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		if (e == EWOULDBLOCK)
			return refused(fd, err);
		close(fd);
		return sg_system_error(err, e, "cannot lock %s: %s", SG_MONITOR_LOCK, strerror(e));
	}
	/* The pid only makes another monitor's refusal clearer: not written, no harm. */
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	mkdir(SG_RUN_DIR, 0755);
	int pid_fd = open(SG_MONITOR_PID, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (pid_fd >= 0) {
		(void)!write(pid_fd, pid, (size_t)len);
		close(pid_fd);
	}
	return fd;
}

int sg_cmd_monitor(int argc, char **argv)
{
	static const struct option options[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"container", required_argument, NULL, 'C'},
	    {"syslog", no_argument, NULL, 's'},
	    {"journal", no_argument, NULL, 'J'},
	    {NULL, 0, NULL, 0},
	};
	struct monitor m = {0};
	struct sg_err err = {0};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'j':
			m.json = true;
			break;
		case 'C':
			m.container = optarg;
			break;
		case 's':
			m.to_syslog = true;
			break;
		case 'J':
			m.to_journal = true;
			break;
		default:
			return sg_usage_error("monitor", "unknown option");
		}
	}
	if (optind != argc)
		return sg_usage_error("monitor", "unexpected argument \"%s\"", argv[optind]);
	if (m.json + m.to_syslog + m.to_journal > 1)
		return sg_usage_error("monitor",
				      "--json, --syslog and --journal exclude each other");
	if (m.to_journal && sg_journal_check(&err) < 0)
		return sg_report(&err);

	/* The events first: opening them makes the pins' directory the lock lives in. */
	_cleanup_close_ int fd = sg_events_open(&err);
	if (fd < 0)
		return sg_report(&err);
	_cleanup_close_ int lock_fd = take_reader_lock(&err);
	if (lock_fd < 0)
		return sg_report(&err);
	struct ring_buffer *rb = ring_buffer__new(fd, on_event, &m, NULL);
	if (!rb) {
		fprintf(stderr, "sysctl-guard: cannot read the events ring buffer: %s\n",
			strerror(errno));
		return SG_EXIT_SYSTEM;
	}
	if (m.to_syslog)
		openlog("sysctl-guard", LOG_PID, LOG_DAEMON);
	setvbuf(stdout, NULL, _IOLBF, 0);
	m.boot_to_real_ns = boot_to_real_offset();
	/* The buffer outlives monitors: what it holds from before is not news. */
	m.skipping = true;
	ring_buffer__consume(rb);
	m.skipping = false;
	char entry[32];
	if (m.container && sg_guard_find_container(m.container, entry) == -ENOENT)
		fprintf(stderr,
			"sysctl-guard: no guard of container %s yet; monitoring for its events "
			"(ids beginning so), stop with Ctrl-C\n",
			m.container);
	else if (m.container)
		fprintf(stderr,
			"sysctl-guard: monitoring the guards of containers whose ids begin %s; "
			"stop with Ctrl-C\n",
			m.container);
	else
		fprintf(stderr,
			"sysctl-guard: monitoring every guard on this node; stop with Ctrl-C\n");

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int status = SG_EXIT_OK;
	while (!stopping) {
		int r = ring_buffer__poll(rb, 200);
		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "sysctl-guard: reading events failed: %s\n", strerror(-r));
			status = SG_EXIT_SYSTEM;
			break;
		}
	}
	ring_buffer__free(rb);
	for (size_t i = 0; i < m.n_guards; i++)
		free(m.guards[i].rule_names);
	free(m.guards);
	return status;
}
