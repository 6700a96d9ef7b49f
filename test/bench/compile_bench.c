// SPDX-License-Identifier: Apache-2.0
/*
 * How long sg_compile takes and how large its tables get, for policies of
 * 100, 1,000 and 10,000 rules: nine in ten exact names of per-device sysctls,
 * one in ten patterns with '*', '?' and '**'. Prints the median of several
 * runs. Usage: compile_bench [RUNS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "policy/name.h"
#include "compile/compile.h"

/* Leaves of real per-device sysctls. */
static const char *const ipv4_conf[] = {
    "rp_filter",      "forwarding",	  "accept_redirects",	 "send_redirects",
    "arp_ignore",     "arp_announce",	  "log_martians",	 "accept_source_route",
    "proxy_arp",      "secure_redirects", "arp_filter",		 "bootp_relay",
    "disable_policy", "route_localnet",	  "promote_secondaries", "shared_media",
};
static const char *const ipv6_conf[] = {
    "accept_ra",	"forwarding",
    "disable_ipv6",	"autoconf",
    "hop_limit",	"mtu",
    "accept_dad",	"dad_transmits",
    "use_tempaddr",	"router_solicitations",
    "accept_ra_defrtr", "proxy_ndp",
};
static const char *const neigh[] = {
    "gc_stale_time", "base_reachable_time_ms", "retrans_time_ms", "delay_first_probe_time",
    "ucast_solicit", "mcast_solicit",	       "app_solicit",	  "locktime",
};

#define PICK(a, i) ((a)[(size_t)(i) % (sizeof(a) / sizeof((a)[0]))])

static void exact_name(size_t i, char *buf, size_t cap)
{
	size_t dev = i / 4;
	switch (i % 4) {
	case 0:
		snprintf(buf, cap, "net/ipv4/conf/eth%zu/%s", dev, PICK(ipv4_conf, dev));
		break;
	case 1:
		snprintf(buf, cap, "net/ipv6/conf/veth%zu/%s", dev, PICK(ipv6_conf, dev));
		break;
	case 2:
		snprintf(buf, cap, "net/ipv4/neigh/eth%zu/%s", dev, PICK(neigh, dev));
		break;
	default:
		snprintf(buf, cap, "net/ipv4/conf/eth%zu.%zu/%s", dev % 64, dev,
			 PICK(ipv4_conf, dev + 3));
		break;
	}
}

static void pattern_name(size_t j, char *buf, size_t cap)
{
	size_t k = j / 5;
	switch (j % 5) {
	case 0:
		snprintf(buf, cap, "net/ipv4/conf/eth%zu*/%s", k, PICK(ipv4_conf, k));
		break;
	case 1:
		snprintf(buf, cap, "net/ipv6/conf/veth%zu?/%s", k, PICK(ipv6_conf, k));
		break;
	case 2:
		snprintf(buf, cap, "net/**/br%zu/%s", k, PICK(ipv4_conf, k + 5));
		break;
	case 3:
		snprintf(buf, cap, "net/ipv4/neigh/vlan%zu.*/%s", k, PICK(neigh, k));
		break;
	default:
		snprintf(buf, cap, "net/ipv6/neigh/*/%s_%zu", PICK(neigh, k), k);
		break;
	}
}

static void build_policy(size_t n_rules, struct sg_policy_set *set)
{
	struct sg_policy *p = &set->layers[0];
	size_t n_patterns = n_rules / 10;
	char name[SG_NAME_MAX];

	memset(set, 0, sizeof(*set));
	set->n_layers = 1;
	p->origin = "bench";
	p->mode = SG_MODE_ENFORCE;
	p->default_access = SG_ACCESS_READ;
	p->rules = sg_xcalloc(n_rules, sizeof(*p->rules));
	p->n_rules = n_rules;
	for (size_t i = 0; i < n_rules; i++) {
		struct sg_rule *r = &p->rules[i];
		/* Patterns spread through the list, as people write them. */
		if (n_patterns && i % 10 == 9)
			pattern_name(i / 10, name, sizeof(name));
		else
			exact_name(i - i / 10, name, sizeof(name));
		r->name = sg_xstrdup(name);
		r->pattern = sg_xstrdup(name);
		r->is_literal = sg_pattern_is_literal(name);
		r->access = i % 3 == 0 ? SG_ACCESS_READ_WRITE : SG_ACCESS_READ;
	}
}

static void free_policy_set(struct sg_policy_set *set)
{
	struct sg_policy *p = &set->layers[0];
	for (size_t i = 0; i < p->n_rules; i++) {
		free(p->rules[i].name);
		free(p->rules[i].pattern);
	}
	free(p->rules);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static size_t table_bytes(const struct sg_compiled *c)
{
	return (size_t)c->dfa.n_states * c->dfa.n_classes * sizeof(uint32_t) +
	       (size_t)c->dfa.n_states * sizeof(uint32_t) +
	       (size_t)c->config.n_rules * sizeof(struct sg_rule_entry) +
	       (size_t)c->n_texts * sizeof(struct sg_rule_text) + c->n_exact * sizeof(*c->exact) +
	       c->n_values * sizeof(*c->values);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = {100, 1000, 10000};
	int runs = argc > 1 ? atoi(argv[1]) : 9;

	if (runs < 1)
		runs = 1;
	printf("%8s %8s %8s %8s %8s %10s %12s %10s\n", "rules", "exact", "patterns", "states",
	       "classes", "dfa bytes", "table bytes", "median ms");
	for (size_t s = 0; s < SG_ARRAY_SIZE(sizes); s++) {
		struct sg_policy_set set;
		struct sg_compiled c = {0};
		double *ms = sg_xcalloc((size_t)runs, sizeof(*ms));

		build_policy(sizes[s], &set);
		for (int r = 0; r < runs; r++) {
			struct sg_err err = {0};
			sg_compiled_free(&c);
			double t0 = now_ms();
			if (sg_compile(&set, &c, &err) < 0) {
				fprintf(stderr, "compile_bench: %s\n", err.msg);
				return 1;
			}
			ms[r] = now_ms() - t0;
		}
		qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
		size_t patterns = 0;
		for (size_t i = 0; i < set.layers[0].n_rules; i++)
			patterns += !set.layers[0].rules[i].is_literal;
		printf("%8zu %8zu %8zu %8u %8u %10zu %12zu %10.2f\n", sizes[s], c.n_exact, patterns,
		       c.dfa.n_states, c.dfa.n_classes,
		       (size_t)c.dfa.n_states * c.dfa.n_classes * sizeof(uint32_t), table_bytes(&c),
		       ms[runs / 2]);
		sg_compiled_free(&c);
		free_policy_set(&set);
		free(ms);
	}
	return 0;
}
