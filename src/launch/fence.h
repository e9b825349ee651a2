/* The policy side of the fenced network (net allow under the native
 * backend): the rules kernel/netfence.c asks, made from the policy's
 * allowlist (policy/netdest.h), and the names' addresses.  Internal to
 * launch/. */
#ifndef MOAT_LAUNCH_FENCE_H
#define MOAT_LAUNCH_FENCE_H

#include <stddef.h>

#include "kernel/netfence.h"
#include "policy/policy.h"

struct fence_name {
	char *name;
	struct netfence_addr addr[NETFENCE_MAX_ANSWERS];
	size_t n;
	bool pinned;
};

struct fence_rules {
	const struct moat_policy *policy;
	struct fence_name *names; /* pinned and resolved names */
	size_t n_names, cap_names;
	struct netfence_rules rules; /* what netfence_new takes; ctx is this */
};

/* Fill *fr for the policy: the pins, and every allowed name (not the
 * wildcards) resolved now, before the command starts, so the fence's DNS
 * answers without waiting (the callbacks may not block). */
void fence_rules_init(struct fence_rules *fr, const struct moat_policy *p);
void fence_rules_free(struct fence_rules *fr);

#endif
