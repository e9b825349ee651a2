#include "launch/netlog.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/mem.h"

void netlog_init(struct netlog *l, int events_fd, long long start_ns)
{
	memset(l, 0, sizeof(*l));
	l->events_fd = events_fd;
	l->start_ns = start_ns;
	/* Never block moat on a reader that does not read: a line that does
	 * not fit is dropped (and counted).  The flag is the open file's,
	 * shared with the caller's copy of the same end, which only writes
	 * would notice. */
	if (events_fd >= 0) {
		int fl = fcntl(events_fd, F_GETFL);
		if (fl >= 0)
			(void)fcntl(events_fd, F_SETFL, fl | O_NONBLOCK);
	}
}

void netlog_free(struct netlog *l)
{
	size_t i;

	for (i = 0; i < l->n_names; i++)
		free(l->names[i].name);
	for (i = 0; i < l->n_conns; i++)
		free(l->conns[i].name);
	for (i = 0; i < l->n_proxied; i++)
		free(l->proxied[i].host);
	free(l->names);
	free(l->conns);
	free(l->proxied);
	memset(l, 0, sizeof(*l));
	l->events_fd = -1;
}

const char *netlog_protocol_name(int protocol)
{
	switch (protocol) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_MPTCP:
		return "mptcp";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	default:
		return "other";
	}
}

const char *netlog_qtype_name(int qtype, char *buf, size_t len)
{
	static const struct {
		int t;
		const char *n;
	} names[] = {{1, "A"},	   {2, "NS"},	{5, "CNAME"},  {6, "SOA"},   {12, "PTR"},   {15, "MX"},	 {16, "TXT"},
		     {28, "AAAA"}, {33, "SRV"}, {35, "NAPTR"}, {64, "SVCB"}, {65, "HTTPS"}, {255, "ANY"}};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].t == qtype)
			return names[i].n;
	snprintf(buf, len, "TYPE%d", qtype);
	return buf;
}

static bool addr_eq(const struct netfence_addr *a, const struct netfence_addr *b)
{
	if (a->family != b->family)
		return false;
	return a->family == AF_INET ? a->v4.s_addr == b->v4.s_addr : memcmp(&a->v6, &b->v6, sizeof(a->v6)) == 0;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static struct netlog_name *name_entry(struct netlog *l, const char *name)
{
	struct netlog_name *n;

	for (size_t i = 0; i < l->n_names; i++)
		if (strcmp(l->names[i].name, name) == 0)
			return &l->names[i];
	if (l->n_names >= NETLOG_MAX) {
		l->names_dropped++;
		return NULL;
	}
	l->names = moat_xgrow(l->names, &l->cap_names, l->n_names, sizeof(*l->names));
	n = &l->names[l->n_names++];
	memset(n, 0, sizeof(*n));
	n->name = moat_xstrdup(name);
	return n;
}

static struct netlog_conn *conn_entry(struct netlog *l, const struct netfence_event *ev)
{
	struct netlog_conn *c;

	for (size_t i = 0; i < l->n_conns; i++) {
		c = &l->conns[i];
		if (c->port == ev->port && c->protocol == ev->protocol && addr_eq(&c->addr, ev->addr) &&
		    str_eq(c->name, ev->name))
			return c;
	}
	if (l->n_conns >= NETLOG_MAX) {
		l->conns_dropped++;
		return NULL;
	}
	l->conns = moat_xgrow(l->conns, &l->cap_conns, l->n_conns, sizeof(*l->conns));
	c = &l->conns[l->n_conns++];
	memset(c, 0, sizeof(*c));
	c->addr = *ev->addr;
	c->port = ev->port;
	c->protocol = ev->protocol;
	c->name = ev->name ? moat_xstrdup(ev->name) : NULL;
	return c;
}

static void add_addrs(struct netlog_name *n, const struct netfence_event *ev)
{
	for (size_t i = 0; i < ev->n_addrs; i++) {
		bool seen = false;
		for (size_t k = 0; k < n->n_addrs && !seen; k++)
			seen = addr_eq(&n->addrs[k], &ev->addrs[i]);
		if (!seen && n->n_addrs < NETFENCE_MAX_ANSWERS)
			n->addrs[n->n_addrs++] = ev->addrs[i];
	}
}

/* Milliseconds since moat started, to the microsecond. */
static double t_ms(const struct netlog *l)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec - l->start_ns) / 1000) / 1e3;
}

/* j as one line, written whole or not at all (a pipe takes up to PIPE_BUF
 * bytes atomically; lines are shorter).  Takes j. */
static void write_line(struct netlog *l, json_t *j)
{
	char *line = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
	ssize_t w;

	json_decref(j);
	if (!line) {
		l->events_dropped++;
		return;
	}
	size_t n = strlen(line);
	line[n] = '\n'; /* json_dumps's buffer has the NUL there: replaced, and written without one */
	do
		w = write(l->events_fd, line, n + 1);
	while (w < 0 && errno == EINTR);
	free(line);
	if (w == (ssize_t)(n + 1))
		l->events_written++;
	else
		l->events_dropped++;
}

/* One line: {"event": ..., "t_ms": ..., ...}. */
static void emit(struct netlog *l, const struct netfence_event *ev)
{
	char abuf[INET6_ADDRSTRLEN], dest[INET6_ADDRSTRLEN + 270], qbuf[16];
	const char *kind;
	json_t *j;

	switch (ev->kind) {
	case NETFENCE_EV_REFUSED:
		kind = "connect_refused";
		break;
	case NETFENCE_EV_LOCAL:
		kind = "connect_local";
		break;
	case NETFENCE_EV_NAME_DENIED:
		kind = "name_denied";
		break;
	case NETFENCE_EV_NAME_FAILED:
		kind = "name_failed";
		break;
	default:
		return;
	}
	j = json_pack("{s:s, s:f}", "event", kind, "t_ms", t_ms(l));
	if (ev->addr) {
		inet_ntop(ev->addr->family,
			  ev->addr->family == AF_INET ? (const void *)&ev->addr->v4 : (const void *)&ev->addr->v6, abuf,
			  sizeof(abuf));
		if (ev->name)
			snprintf(dest, sizeof(dest), "%s:%u", ev->name, ev->port);
		else
			snprintf(dest, sizeof(dest), ev->addr->family == AF_INET6 ? "[%s]:%u" : "%s:%u", abuf,
				 ev->port);
		json_object_set_new(j, "destination", json_string(dest));
		json_object_set_new(j, "address", json_string(abuf));
		json_object_set_new(j, "port", json_integer(ev->port));
		json_object_set_new(j, "name", ev->name ? json_string(ev->name) : json_null());
		json_object_set_new(j, "protocol", json_string(netlog_protocol_name(ev->protocol)));
	} else {
		json_object_set_new(j, "name", json_string(ev->name ? ev->name : ""));
		json_object_set_new(j, "type", json_string(netlog_qtype_name(ev->qtype, qbuf, sizeof(qbuf))));
	}
	write_line(l, j);
}

void netlog_record(struct netlog *l, const struct netfence_event *ev)
{
	struct netlog_name *n;
	struct netlog_conn *c;

	switch (ev->kind) {
	case NETFENCE_EV_ALLOWED:
	case NETFENCE_EV_REFUSED:
	case NETFENCE_EV_LOCAL:
		if (!ev->addr)
			return;
		c = conn_entry(l, ev);
		if (c && ev->kind == NETFENCE_EV_ALLOWED)
			c->allowed++;
		else if (c && ev->kind == NETFENCE_EV_REFUSED)
			c->refused++;
		else if (c)
			c->local++;
		break;
	case NETFENCE_EV_NAME_ANSWERED:
	case NETFENCE_EV_NAME_DENIED:
	case NETFENCE_EV_NAME_FAILED:
		if (!ev->name)
			return;
		n = name_entry(l, ev->name);
		if (n && ev->kind == NETFENCE_EV_NAME_ANSWERED) {
			n->answered++;
			add_addrs(n, ev);
		} else if (n && ev->kind == NETFENCE_EV_NAME_DENIED)
			n->denied++;
		else if (n)
			n->failed++;
		break;
	}
	if (l->events_fd >= 0)
		emit(l, ev);
}

static struct netlog_proxy *proxy_entry(struct netlog *l, const struct netproxy_event *ev)
{
	struct netlog_proxy *p;

	for (size_t i = 0; i < l->n_proxied; i++)
		if (l->proxied[i].port == ev->port && strcmp(l->proxied[i].host, ev->host) == 0)
			return &l->proxied[i];
	if (l->n_proxied >= NETLOG_MAX) {
		l->proxied_dropped++;
		return NULL;
	}
	l->proxied = moat_xgrow(l->proxied, &l->cap_proxied, l->n_proxied, sizeof(*l->proxied));
	p = &l->proxied[l->n_proxied++];
	memset(p, 0, sizeof(*p));
	p->host = moat_xstrdup(ev->host);
	p->port = ev->port;
	return p;
}

void netlog_record_proxy(struct netlog *l, const struct netproxy_event *ev)
{
	struct netlog_proxy *p = proxy_entry(l, ev);
	char dest[NETFENCE_NAME_MAX + 16];

	if (p && ev->kind == NETPROXY_EV_TUNNEL)
		p->tunnels++;
	else if (p && ev->kind == NETPROXY_EV_REFUSED)
		p->refused++;
	else if (p && ev->kind == NETPROXY_EV_SNI_REFUSED)
		p->sni_refused++;
	else if (p)
		p->failed++;
	if (l->events_fd < 0 || (ev->kind != NETPROXY_EV_REFUSED && ev->kind != NETPROXY_EV_SNI_REFUSED))
		return;
	snprintf(dest, sizeof(dest), strchr(ev->host, ':') ? "[%s]:%u" : "%s:%u", ev->host, ev->port);
	write_line(l, json_pack("{s:s, s:f, s:s, s:s, s:i, s:s}", "event",
				ev->kind == NETPROXY_EV_REFUSED ? "proxy_refused" : "proxy_sni_refused", "t_ms",
				t_ms(l), "destination", dest, "host", ev->host, "port", (int)ev->port, "via",
				ev->socks ? "socks5" : "http"));
}
