// SPDX-License-Identifier: Apache-2.0
/*
 * Namespaced sysctls: which namespace keeps each (the table of
 * bpf/sysctl_guard_decide.h, pinned here against docs/namespaces.md), and the
 * decision on a write to one the writer shares with the host.
 */
#include <stdio.h>
#include <string.h>

#include "compile/compile.h"
#include "compile/eval.h"
#include "policy/compose.h"
#include "test.h"

TEST(the_kernel_namespaces_these)
{
	static const struct {
		const char *name;
		uint32_t ns;
	} cases[] = {
	    {"net/core/somaxconn", SG_NS_NET},
	    {"net/ipv4/ip_local_port_range", SG_NS_NET},
	    {"net/ipv4/conf/eth0.100/rp_filter", SG_NS_NET},
	    {"net/netfilter/nf_conntrack_max", SG_NS_NET},
	    {"net/unix/max_dgram_qlen", SG_NS_NET},
	    {"kernel/hostname", SG_NS_UTS},
	    {"kernel/domainname", SG_NS_UTS},
	    {"kernel/ostype", SG_NS_UTS},
	    {"kernel/osrelease", SG_NS_UTS},
	    {"kernel/version", SG_NS_UTS},
	    {"kernel/arch", SG_NS_UTS},
	    {"kernel/shmmax", SG_NS_IPC},
	    {"kernel/shmall", SG_NS_IPC},
	    {"kernel/shmmni", SG_NS_IPC},
	    {"kernel/shm_rmid_forced", SG_NS_IPC},
	    {"kernel/msgmax", SG_NS_IPC},
	    {"kernel/msgmni", SG_NS_IPC},
	    {"kernel/msgmnb", SG_NS_IPC},
	    {"kernel/auto_msgmni", SG_NS_IPC},
	    {"kernel/sem", SG_NS_IPC},
	    {"kernel/sem_next_id", SG_NS_IPC},
	    {"kernel/msg_next_id", SG_NS_IPC},
	    {"kernel/shm_next_id", SG_NS_IPC},
	    {"fs/mqueue/queues_max", SG_NS_IPC},
	    {"fs/mqueue/msgsize_default", SG_NS_IPC},
	    {"user/max_user_namespaces", SG_NS_USER},
	    {"user/max_net_namespaces", SG_NS_USER},
	    {"user/max_inotify_watches", SG_NS_USER},
	    {"kernel/ns_last_pid", SG_NS_PID},
	    /* Per PID namespace from 6.14; before, global: host-level either way when shared. */
	    {"kernel/pid_max", SG_NS_PID},
	    {"vm/memfd_noexec", SG_NS_PID},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t ns = sg_namespace_of(cases[i].name);
		if (ns != cases[i].ns)
			fprintf(stderr, "  %s: %u, expected %u\n", cases[i].name, ns, cases[i].ns);
		CHECK(ns == cases[i].ns);
	}
}

/* Kept once for the host, or near a namespaced name without being one. */
TEST(the_kernel_keeps_these_once)
{
	static const char *const names[] = {
	    "kernel/pid_maxx",
	    "kernel/hostnames",
	    "kernel/host",
	    "kernel/semx",
	    "kernel/sem/x",
	    "kernel/shm_rmid_force",
	    "kernel/random/boot_id",
	    "kernel/threads-max",
	    "vm/swappiness",
	    "vm/memfd_noexecx",
	    "fs/file-max",
	    "fs/mqueue",
	    "fs/mqueuex/a",
	    "network/x",
	    "netx/core",
	    "usr/x",
	    "users/x",
	    "",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint32_t ns = sg_namespace_of(names[i]);
		if (ns)
			fprintf(stderr, "  %s: %u, expected 0\n", names[i], ns);
		CHECK(ns == 0);
	}
}

TEST(namespace_names_and_lists)
{
	uint32_t ns = 0;

	CHECK_STR(sg_namespace_name(SG_NS_NET), "net");
	CHECK_STR(sg_namespace_name(SG_NS_PID), "pid");
	CHECK_STR(sg_namespace_name(SG_NS_NET | SG_NS_UTS), "unknown");
	CHECK(sg_namespace_parse_list("net,uts", &ns) == 0 && ns == (SG_NS_NET | SG_NS_UTS));
	CHECK(sg_namespace_parse_list("ipc", &ns) == 0 && ns == SG_NS_IPC);
	CHECK(sg_namespace_parse_list("all", &ns) == 0 && ns == (1u << SG_NS_TYPES) - 1);
	CHECK(sg_namespace_parse_list("none", &ns) == 0 && ns == 0);
	CHECK(sg_namespace_parse_list("net,mnt", &ns) < 0);
	CHECK(sg_namespace_parse_list("ne", &ns) < 0);
	CHECK(sg_namespace_parse_list("netuts", &ns) < 0);
}

static void parse(const char *json, struct sg_policy *p)
{
	struct sg_err err = {0};
	if (sg_policy_parse(json, strlen(json), "t.json", p, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
}

/* A policy set and its tables, which point into it. */
struct compiled {
	struct sg_policy_set set;
	struct sg_compiled c;
};

/* @baseline, and @annotation over it unless NULL, compiled. */
static void compile_layers(const char *baseline, const char *annotation, struct compiled *out)
{
	struct sg_policy base = {0}, ann = {0};
	struct sg_err err = {0};

	parse(baseline, &base);
	if (annotation)
		parse(annotation, &ann);
	if (sg_policy_set_compose(&base, "baseline", annotation ? &ann : NULL, "annotation", NULL,
				  NULL, 0, &out->set, &err) < 0 ||
	    sg_compile(&out->set, &out->c, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	sg_policy_free(&base);
	sg_policy_free(&ann);
}

static void compiled_free(struct compiled *c)
{
	sg_compiled_free(&c->c);
	sg_policy_set_free(&c->set);
}

static enum sg_verdict decide(const struct compiled *c, const char *name, bool write,
			      uint32_t host_namespaces, struct sg_decision *d)
{
	struct sg_access_req req = {.name = name,
				    .write = write,
				    .value = "1",
				    .value_len = write ? 1 : 0,
				    .host_namespaces = host_namespaces};
	sg_eval(&c->c, &req, d);
	return d->verdict;
}

static const char host_rules[] =
    "{\"version\": 1, \"default\": \"read\", \"rules\": ["
    "{\"name\": \"net.core.somaxconn\", \"access\": \"read-write\"},"
    "{\"name\": \"kernel.domainname\", \"access\": \"read-write\"},"
    "{\"name\": \"kernel.hostname\", \"access\": \"read-write\", \"allow_host_namespace\": true},"
    "{\"name\": \"vm.swappiness\", \"access\": \"read-write\"}]}";

TEST(a_write_to_a_shared_namespace_is_the_hosts)
{
	struct compiled c;
	struct sg_decision d;

	compile_layers(host_rules, NULL, &c);
	/* Its own namespaces: the rules decide. */
	CHECK(decide(&c, "net/core/somaxconn", true, 0, &d) == SG_VERDICT_ALLOW);
	CHECK(decide(&c, "kernel/domainname", true, SG_NS_NET, &d) == SG_VERDICT_ALLOW);
	/* The host's: denied, with a reason and a counter row of its own. */
	CHECK(decide(&c, "net/core/somaxconn", true, SG_NS_NET, &d) == SG_VERDICT_DENY);
	CHECK(d.rule == 0);
	CHECK_CONTAINS(d.reason, "shared with the host");
	CHECK(decide(&c, "kernel/domainname", true, SG_NS_UTS | SG_NS_IPC, &d) == SG_VERDICT_DENY);
	/* Reads are not host-level changes. */
	CHECK(decide(&c, "net/core/somaxconn", false, SG_NS_NET, &d) == SG_VERDICT_ALLOW);
	/* The rule opted in. */
	CHECK(decide(&c, "kernel/hostname", true, SG_NS_UTS, &d) == SG_VERDICT_ALLOW);
	/* A sysctl of no namespace is the policy's alone, shared or not. */
	CHECK(decide(&c, "vm/swappiness", true, (1u << SG_NS_TYPES) - 1, &d) == SG_VERDICT_ALLOW);
	/* A denial by access stays one, with its own reason. */
	CHECK(decide(&c, "net/ipv4/tcp_syncookies", true, SG_NS_NET, &d) == SG_VERDICT_DENY);
	CHECK_CONTAINS(d.reason, "does not allow writes");
	compiled_free(&c);
}

TEST(every_layer_opts_in)
{
	static const char narrow[] =
	    "{\"version\": 1, \"rules\": [{\"name\": \"kernel.hostname\", \"access\": "
	    "\"read-write\"}]}";
	static const char wide[] =
	    "{\"version\": 1, \"rules\": [{\"name\": \"kernel.*\", \"access\": \"read-write\", "
	    "\"allow_host_namespace\": true}]}";
	struct compiled c;
	struct sg_decision d;

	/* The baseline opts in, the annotation does not: the annotation narrows. */
	compile_layers(host_rules, narrow, &c);
	CHECK(decide(&c, "kernel/hostname", true, SG_NS_UTS, &d) == SG_VERDICT_DENY);
	CHECK(d.layer == 1);
	CHECK(decide(&c, "kernel/hostname", true, 0, &d) == SG_VERDICT_ALLOW);
	compiled_free(&c);
	/* An annotation cannot opt in where the baseline does not. */
	compile_layers(host_rules, wide, &c);
	CHECK(decide(&c, "kernel/domainname", true, SG_NS_UTS, &d) == SG_VERDICT_DENY);
	CHECK(d.layer == 0);
	CHECK(decide(&c, "kernel/hostname", true, SG_NS_UTS, &d) == SG_VERDICT_ALLOW);
	compiled_free(&c);
}

TEST(audit_records_what_enforce_would_deny)
{
	static const char audited[] = "{\"version\": 1, \"mode\": \"audit\", \"default\": "
				      "\"read-write\", \"rules\": []}";
	struct compiled c;
	struct sg_decision d;

	compile_layers(audited, NULL, &c);
	CHECK(decide(&c, "net/core/somaxconn", true, SG_NS_NET, &d) == SG_VERDICT_AUDIT);
	CHECK_CONTAINS(d.reason, "shared with the host");
	CHECK(decide(&c, "net/core/somaxconn", true, 0, &d) == SG_VERDICT_ALLOW);
	compiled_free(&c);
}

RUN_TESTS(T(the_kernel_namespaces_these), T(the_kernel_keeps_these_once),
	  T(namespace_names_and_lists), T(a_write_to_a_shared_namespace_is_the_hosts),
	  T(every_layer_opts_in), T(audit_records_what_enforce_would_deny))
