/* What the fence decided during a run, for the report (network.names,
 * network.connections, network.proxy.destinations) and as it happens for
 * --events-fd: one JSON line per connection refused or kept on the
 * sandbox's own loopback, per name denied or not answered, and per proxy
 * request refused.  Plain data the report reads; filled by the
 * fence's rules (launch/fence.c) from the fence's events. */
#ifndef MOAT_LAUNCH_NETLOG_H
#define MOAT_LAUNCH_NETLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/netfence.h"
#include "kernel/netproxy.h"

/* Distinct names and connections kept; past it they are counted in
 * *_dropped (the fence's totals still count everything). */
#define NETLOG_MAX 256

struct netlog_name {
	char *name;
	unsigned long answered, denied, failed; /* queries, by outcome */
	size_t n_addrs;				/* the addresses handed out for it */
	struct netfence_addr addrs[NETFENCE_MAX_ANSWERS];
};

struct netlog_conn {
	struct netfence_addr addr;
	uint16_t port;
	int protocol; /* IPPROTO_* (netlog_protocol_name) */
	char *name; /* the name the address was handed out for, or NULL */
	unsigned long allowed, refused, local;
};

/* A destination asked of the proxy mode (by name, or an address as text). */
struct netlog_proxy {
	char *host;
	uint16_t port;
	unsigned long tunnels, refused, sni_refused, failed;
};

struct netlog {
	struct netlog_name *names;
	size_t n_names, cap_names;
	struct netlog_conn *conns;
	size_t n_conns, cap_conns;
	struct netlog_proxy *proxied;
	size_t n_proxied, cap_proxied;
	unsigned long names_dropped, conns_dropped, proxied_dropped;
	int events_fd; /* --events-fd, or -1 */
	unsigned long events_written, events_dropped;
	long long start_ns; /* moat's start (events carry t_ms from it) */
};

void netlog_init(struct netlog *l, int events_fd, long long start_ns) __attribute__((nonnull));
/* Record one decision; a refusal also goes to the events descriptor, in one
 * write that never blocks (a full pipe drops the line and counts it). */
void netlog_record(struct netlog *l, const struct netfence_event *ev) __attribute__((nonnull));
/* The same for the proxy mode's requests: a refusal (by the rules, or a
 * ClientHello naming another host) also goes to the events descriptor. */
void netlog_record_proxy(struct netlog *l, const struct netproxy_event *ev) __attribute__((nonnull));
void netlog_free(struct netlog *l);

/* "tcp", "udp", "mptcp", ... as the report and the events name a
 * connect's IPPROTO_* protocol; "other" for the rest. */
const char *netlog_protocol_name(int protocol);

/* "A", "AAAA", "TXT", ... or "TYPE<n>". */
const char *netlog_qtype_name(int qtype, char *buf, size_t len);

#endif
