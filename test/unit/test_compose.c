// SPDX-License-Identifier: Apache-2.0
/* Composition: baseline AND annotation layers, mode override, pinned linux.sysctl pairs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "policy/compose.h"
#include "policy/profiles.h"
#include "test.h"

static void parse(const char *json, const char *origin, struct sg_policy *p)
{
	struct sg_err err = {0};
	if (sg_policy_parse(json, strlen(json), origin, p, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
}

static void profile(const char *name, struct sg_policy *p)
{
	struct sg_err err = {0};
	if (sg_profile_load(name, NULL, p, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
}

static const char audit_policy[] = "{\"version\": 1, \"mode\": \"audit\", \"default\": \"read\","
				   " \"rules\": [{\"name\": \"kernel.domainname\", \"access\": "
				   "\"read-write\"}]}";

static const enum sg_mode enforce = SG_MODE_ENFORCE, audit = SG_MODE_AUDIT;

TEST(nothing_to_attach)
{
	struct sg_sysctl_pair pairs[] = {{"net.ipv4.ping_group_range", "0 0"}};
	struct sg_policy_set set;
	struct sg_err err = {0};

	CHECK(sg_policy_set_compose(NULL, NULL, NULL, NULL, NULL, pairs, 1, &set, &err) == 0);
	CHECK(set.n_layers == 0);
	CHECK(!sg_err_is_set(&err));
	sg_policy_set_free(&set);

	/* A mode annotation without a policy has nothing to apply to. */
	CHECK(sg_policy_set_compose(NULL, NULL, NULL, NULL, &enforce, NULL, 0, &set, &err) == 0);
	CHECK(set.n_layers == 0);
	sg_policy_set_free(&set);
}

TEST(baseline_only)
{
	struct sg_policy base = {0};
	struct sg_policy_set set;
	struct sg_err err = {0};

	profile("k8s-safe", &base);
	CHECK(sg_policy_set_compose(&base, "profile k8s-safe", NULL, NULL, NULL, NULL, 0, &set,
				    &err) == 0);
	CHECK(set.n_layers == 1);
	CHECK(set.n_pinned == 0);
	CHECK_STR(set.description, "baseline profile k8s-safe");
	CHECK(set.layers[0].n_rules == base.n_rules);
	CHECK(set.layers[0].mode == SG_MODE_ENFORCE);
	/* The layer is a deep copy: it outlives the policy it came from. */
	CHECK(set.layers[0].rules != base.rules);
	CHECK(set.layers[0].origin != base.origin);
	sg_policy_free(&base);
	CHECK_STR(set.layers[0].origin, "profile k8s-safe");
	CHECK_STR(set.layers[0].rules[0].pattern, "kernel/shm_rmid_forced");
	sg_policy_set_free(&set);
	CHECK(set.n_layers == 0 && set.description == NULL);
	sg_policy_set_free(&set); /* harmless twice */
}

TEST(annotation_only)
{
	struct sg_policy ann = {0};
	struct sg_policy_set set;
	struct sg_err err = {0};

	profile("deny-all", &ann);
	CHECK(sg_policy_set_compose(NULL, NULL, &ann, "profile deny-all", NULL, NULL, 0, &set,
				    &err) == 0);
	CHECK(set.n_layers == 1);
	CHECK_STR(set.description, "annotation profile deny-all");
	CHECK(set.layers[0].default_access == SG_ACCESS_NONE);
	sg_policy_set_free(&set);
	sg_policy_free(&ann);
}

TEST(baseline_and_annotation)
{
	struct sg_policy base = {0}, ann = {0};
	struct sg_policy_set set;
	struct sg_err err = {0};

	profile("k8s-safe", &base);
	profile("deny-all", &ann);
	CHECK(sg_policy_set_compose(&base, "profile k8s-safe", &ann, "profile deny-all", &enforce,
				    NULL, 0, &set, &err) == 0);
	CHECK(set.n_layers == 2);
	CHECK_STR(set.description,
		  "baseline profile k8s-safe + annotation profile deny-all (mode enforce)");
	CHECK_STR(set.layers[0].origin, "profile k8s-safe");
	CHECK_STR(set.layers[1].origin, "profile deny-all");
	sg_policy_set_free(&set);

	/* Without labels, the policies' origins name them. */
	CHECK(sg_policy_set_compose(&base, NULL, &ann, NULL, NULL, NULL, 0, &set, &err) == 0);
	CHECK_STR(set.description, "baseline profile k8s-safe + annotation profile deny-all");
	sg_policy_set_free(&set);
	sg_policy_free(&base);
	sg_policy_free(&ann);
}

TEST(mode_override_narrows_only)
{
	struct sg_policy base_enforce = {0}, base_audit = {0}, ann = {0}, ann_audit = {0};
	struct sg_policy_set set;
	struct sg_err err = {0};

	profile("k8s-safe", &base_enforce);
	parse(audit_policy, "audit baseline", &base_audit);
	profile("read-only", &ann);
	parse(audit_policy, "audit annotation", &ann_audit);

	/* "audit" sets the annotation layer's mode but cannot loosen the baseline. */
	CHECK(sg_policy_set_compose(&base_enforce, "profile k8s-safe", &ann, "profile read-only",
				    &audit, NULL, 0, &set, &err) == 0);
	CHECK(set.layers[0].mode == SG_MODE_ENFORCE);
	CHECK(set.layers[1].mode == SG_MODE_AUDIT);
	CHECK_STR(set.description,
		  "baseline profile k8s-safe + annotation profile read-only (mode audit)");
	sg_policy_set_free(&set);

	/* Not even when the annotation names no policy; nor does the description say so. */
	CHECK(sg_policy_set_compose(&base_enforce, "profile k8s-safe", NULL, NULL, &audit, NULL, 0,
				    &set, &err) == 0);
	CHECK(set.n_layers == 1);
	CHECK(set.layers[0].mode == SG_MODE_ENFORCE);
	CHECK_STR(set.description, "baseline profile k8s-safe");
	sg_policy_set_free(&set);

	/* "enforce" turns an audited baseline into an enforced one, and the annotation too. */
	CHECK(sg_policy_set_compose(&base_audit, "inline policy", &ann_audit, "inline policy",
				    &enforce, NULL, 0, &set, &err) == 0);
	CHECK(set.layers[0].mode == SG_MODE_ENFORCE);
	CHECK(set.layers[1].mode == SG_MODE_ENFORCE);
	sg_policy_set_free(&set);
	CHECK(sg_policy_set_compose(&base_audit, "inline policy", NULL, NULL, &enforce, NULL, 0,
				    &set, &err) == 0);
	CHECK(set.layers[0].mode == SG_MODE_ENFORCE);
	CHECK_STR(set.description, "baseline inline policy (mode enforce)");
	sg_policy_set_free(&set);
	/* The caller's policy is not changed. */
	CHECK(base_audit.mode == SG_MODE_AUDIT);

	/* "audit" leaves an audited baseline audited; no override keeps each layer's own mode. */
	CHECK(sg_policy_set_compose(&base_audit, NULL, &ann, NULL, &audit, NULL, 0, &set, &err) ==
	      0);
	CHECK(set.layers[0].mode == SG_MODE_AUDIT);
	CHECK(set.layers[1].mode == SG_MODE_AUDIT);
	sg_policy_set_free(&set);
	CHECK(sg_policy_set_compose(&base_audit, NULL, &ann, NULL, NULL, NULL, 0, &set, &err) == 0);
	CHECK(set.layers[0].mode == SG_MODE_AUDIT);
	CHECK(set.layers[1].mode == SG_MODE_ENFORCE);
	sg_policy_set_free(&set);

	sg_policy_free(&base_enforce);
	sg_policy_free(&base_audit);
	sg_policy_free(&ann);
	sg_policy_free(&ann_audit);
}

TEST(pairs_normalised)
{
	struct sg_sysctl_pair pairs[] = {
	    {"net.ipv4.ping_group_range", "0\t2147483647\n"},
	    {"net/ipv4/ip_local_port_range", " 1024   65000 "},
	    {"net.ipv4.conf.eth0/100.rp_filter", "1"},
	    {"kernel.shm_rmid_forced", "1\n"},
	    /* The same pair again, written the other way: kept once. */
	    {"net/ipv4/ping_group_range", "0 2147483647"},
	};
	struct sg_policy base = {0};
	struct sg_policy_set set;
	struct sg_err err = {0};

	profile("read-only", &base);
	CHECK(sg_policy_set_compose(&base, "profile read-only", NULL, NULL, NULL, pairs,
				    SG_ARRAY_SIZE(pairs), &set, &err) == 0);
	CHECK(set.n_pinned == 4);
	if (set.n_pinned == 4) {
		CHECK_STR(set.pinned[0].name, "net/ipv4/ping_group_range");
		CHECK_STR(set.pinned[0].value, "0 2147483647");
		CHECK_STR(set.pinned[1].name, "net/ipv4/ip_local_port_range");
		CHECK_STR(set.pinned[1].value, "1024 65000");
		CHECK_STR(set.pinned[2].name, "net/ipv4/conf/eth0.100/rp_filter");
		CHECK_STR(set.pinned[2].value, "1");
		CHECK_STR(set.pinned[3].name, "kernel/shm_rmid_forced");
		CHECK_STR(set.pinned[3].value, "1");
	}
	/* The pinned pairs are the set's own. */
	CHECK(set.n_pinned == 0 || set.pinned[0].name != pairs[0].name);
	sg_policy_set_free(&set);
	sg_policy_free(&base);
}

TEST(bad_pairs_are_input_errors)
{
	char long_value[SG_VALUE_MAX + 10];
	memset(long_value, '7', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	struct sg_sysctl_pair empty[] = {{"", "1"}};
	struct sg_sysctl_pair blank[] = {{"net.ipv4.tcp syncookies", "1"}};
	struct sg_sysctl_pair too_long[] = {{"kernel.shm_rmid_forced", "1"},
					    {"net.ipv4.tcp_rmem", long_value}};
	struct sg_policy base = {0};
	struct sg_policy_set set;
	struct sg_err err = {0};

	profile("k8s-safe", &base);
	CHECK(sg_policy_set_compose(&base, NULL, NULL, NULL, NULL, empty, 1, &set, &err) ==
	      -EINVAL);
	CHECK(err.status == SG_EXIT_INPUT);
	CHECK(strncmp(err.msg, "linux.sysctl[\"\"]: ", 18) == 0);
	CHECK(set.n_layers == 0 && set.pinned == NULL && set.description == NULL);

	memset(&err, 0, sizeof(err));
	CHECK(sg_policy_set_compose(&base, NULL, NULL, NULL, NULL, blank, 1, &set, &err) ==
	      -EINVAL);
	CHECK_CONTAINS(err.msg, "linux.sysctl[\"net.ipv4.tcp syncookies\"]: ");

	memset(&err, 0, sizeof(err));
	CHECK(sg_policy_set_compose(&base, NULL, NULL, NULL, NULL, too_long, 2, &set, &err) ==
	      -EINVAL);
	CHECK_CONTAINS(err.msg, "linux.sysctl[\"net.ipv4.tcp_rmem\"]: the value is longer than");
	CHECK(set.n_layers == 0 && set.n_pinned == 0);
	sg_policy_free(&base);
}

TEST(single)
{
	struct sg_policy p = {0};
	struct sg_policy_set set;
	struct sg_err err = {0};

	parse(audit_policy, "/tmp/p.json", &p);
	CHECK(sg_policy_set_single(&p, "policy /tmp/p.json", &set, &err) == 0);
	CHECK(set.n_layers == 1);
	CHECK(set.n_pinned == 0);
	CHECK(set.layers[0].mode == SG_MODE_AUDIT);
	CHECK(set.layers[0].n_rules == 1);
	CHECK_STR(set.description, "policy /tmp/p.json");
	sg_policy_set_free(&set);

	CHECK(sg_policy_set_single(&p, NULL, &set, &err) == 0);
	CHECK_STR(set.description, "/tmp/p.json");
	sg_policy_set_free(&set);
	sg_policy_free(&p);
}

TEST(adopting_compose_takes_the_annotation)
{
	struct sg_policy base = {0}, ann = {0}, copy = {0};
	struct sg_policy_set copied, adopted;
	struct sg_err err = {0};

	profile("k8s-safe", &base);
	profile("deny-all", &ann);
	CHECK(sg_policy_copy(&ann, &copy) == 0);
	CHECK(sg_policy_set_compose(&base, "profile k8s-safe", &copy, "profile deny-all", &audit,
				    NULL, 0, &copied, &err) == 0);
	CHECK(sg_policy_set_compose_adopt(&base, "profile k8s-safe", &ann, "profile deny-all",
					  &audit, NULL, 0, &adopted, &err) == 0);
	/* The same set, and the annotation's policy now belongs to it. */
	CHECK_STR(adopted.description, copied.description);
	CHECK(adopted.n_layers == 2 && copied.n_layers == 2);
	CHECK(adopted.layers[1].mode == SG_MODE_AUDIT);
	CHECK(adopted.layers[1].n_rules == copied.layers[1].n_rules);
	CHECK_STR(adopted.layers[1].origin, "profile deny-all");
	CHECK(ann.rules == NULL && ann.origin == NULL && ann.n_rules == 0);
	/* The baseline is the node's: copied, never taken. */
	CHECK(base.n_rules > 0 && base.rules != adopted.layers[0].rules);
	sg_policy_set_free(&copied);
	sg_policy_set_free(&adopted);
	sg_policy_free(&copy);
	sg_policy_free(&ann); /* harmless on a taken policy */
	sg_policy_free(&base);
}

RUN_TESTS(T(adopting_compose_takes_the_annotation), T(nothing_to_attach), T(baseline_only),
	  T(annotation_only), T(baseline_and_annotation), T(mode_override_narrows_only),
	  T(pairs_normalised), T(bad_pairs_are_input_errors), T(single))
