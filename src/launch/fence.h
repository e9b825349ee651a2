/* The policy side of the fenced network (net allow under the native
 * backend): the rules kernel/netfence.c asks, made from the policy's
 * allowlist (policy/netdest.h), and the names' addresses, looked up by the
 * host's own resolver in threads, so that moat's loop never waits for DNS.
 * Internal to launch/. */
#ifndef MOAT_LAUNCH_FENCE_H
#define MOAT_LAUNCH_FENCE_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/netfence.h"
#include "kernel/netproxy.h"
#include "launch/hostproxy.h"
#include "launch/netlog.h"
#include "policy/policy.h"

enum fence_lookup_state {
	FENCE_LOOKUP_NONE,    /* pinned: never looked up */
	FENCE_LOOKUP_QUEUED,  /* waiting for a free lookup thread */
	FENCE_LOOKUP_RUNNING, /* a thread is asking the host's resolver */
	FENCE_LOOKUP_DONE,    /* addr[0..n) is the answer (n may be 0: no address) */
	FENCE_LOOKUP_FAILED,  /* the resolver failed (no answer, a timeout): SERVFAIL */
};

struct fence_name {
	char *name;
	struct netfence_addr addr[NETFENCE_MAX_ANSWERS];
	size_t n;
	bool pinned;
	enum fence_lookup_state state;
	bool refreshing; /* DONE, and a newer lookup runs or waits */
	int64_t done_ns; /* when the last lookup ended */
};

struct lookup_channel;

struct fence_rules {
	const struct moat_policy *policy;
	struct fence_name *names; /* pinned and looked-up names */
	size_t n_names, cap_names;
	int done_fd;		     /* lookup threads write their finished requests here */
	struct lookup_channel *ch;   /* ... through this (fence.c) */
	size_t running;		     /* lookups in threads now */
	struct netlog *log;		     /* the fence's decisions go here */
	const struct hostproxy *hp;	     /* the host's proxy for moat's connects, or NULL */
	struct netfence_rules rules; /* what netfence_new takes; ctx is this */
	struct netproxy_rules proxy_rules; /* what netproxy_new takes; ctx is this */
};

/* Fill *fr for the policy: the pins, and a lookup started for every name
 * the allowlist names exactly (not the wildcards: those are looked up when
 * the command asks).  The fence's decisions are recorded in *log.  The
 * fence's and the proxy mode's connects go through the host's proxy as
 * *hp says (NULL: all direct; hp must outlive fr).  Never
 * blocks.  -1 with err when the pipe cannot be
 * made. */
int fence_rules_init(struct fence_rules *fr, const struct moat_policy *p, struct netlog *log,
		     const struct hostproxy *hp, struct moat_error *err)
    __attribute__((nonnull(1, 2, 3, 5), warn_unused_result));
void fence_rules_free(struct fence_rules *fr);

/* The descriptor to poll (POLLIN) for finished lookups. */
int fence_rules_fd(const struct fence_rules *fr) __attribute__((nonnull));
/* Take the finished lookups in; true when any ended (then the fence's
 * waiting queries can be answered: netfence_dns_ready).  Never blocks. */
bool fence_rules_collect(struct fence_rules *fr) __attribute__((nonnull));

#endif
