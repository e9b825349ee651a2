#include "launch/fence.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/netdest.h"
#include "util/cleanup.h"
#include "util/mem.h"

static const void *addr_bytes(const struct netfence_addr *a)
{
	return a->family == AF_INET ? (const void *)&a->v4 : (const void *)&a->v6;
}

static struct fence_name *find(struct fence_rules *fr, const char *name)
{
	size_t i;

	for (i = 0; i < fr->n_names; i++)
		if (strcmp(fr->names[i].name, name) == 0)
			return &fr->names[i];
	return NULL;
}

static struct fence_name *add_name(struct fence_rules *fr, const char *name)
{
	struct fence_name *n = find(fr, name);

	if (n)
		return n;
	fr->names = moat_xgrow(fr->names, &fr->cap_names, fr->n_names, sizeof(*fr->names));
	n = &fr->names[fr->n_names++];
	memset(n, 0, sizeof(*n));
	n->name = moat_xstrdup(name);
	return n;
}

static void add_addr(struct fence_name *n, int family, const void *bytes)
{
	struct netfence_addr a = {.family = family};
	size_t i;

	if (n->n >= NETFENCE_MAX_ANSWERS)
		return;
	if (family == AF_INET)
		memcpy(&a.v4, bytes, 4);
	else
		memcpy(&a.v6, bytes, 16);
	for (i = 0; i < n->n; i++)
		if (n->addr[i].family == family && memcmp(addr_bytes(&n->addr[i]), bytes, family == AF_INET ? 4 : 16) == 0)
			return;
	n->addr[n->n++] = a;
}

/* The DNS-rebinding rule (policy/netdest.h): an address in a private,
 * loopback or metadata range is handed out for a name only when the name
 * is pinned or an entry names the range. */
static bool may_hand_out(const struct fence_rules *fr, const struct fence_name *n, const struct netfence_addr *a)
{
	if (n->pinned || !net_addr_is_private(a->family, addr_bytes(a)))
		return true;
	return net_private_addr_named(fr->policy, a->family, addr_bytes(a));
}

/* The upstream lookup, in moat, outside the sandbox: the host's own
 * resolver (glibc, /etc/hosts and DNS).  Done before the command starts for
 * the names the allowlist names exactly; for a name below a wildcard entry
 * at the time of the query (fence_resolve), which then waits for it. */
static void lookup(struct fence_name *n)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL, *ai;

	if (getaddrinfo(n->name, NULL, &hints, &res) != 0)
		return;
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET)
			add_addr(n, AF_INET, &((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr);
		else if (ai->ai_family == AF_INET6)
			add_addr(n, AF_INET6, &((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr);
	}
	freeaddrinfo(res);
}

static int fence_resolve(void *ctx, const char *name, int qtype, struct netfence_addr *out, size_t max)
{
	struct fence_rules *fr = ctx;
	struct fence_name *n;
	size_t i, k = 0;
	int family = qtype == NETFENCE_QTYPE_A ? AF_INET : qtype == NETFENCE_QTYPE_AAAA ? AF_INET6 : 0;

	if (!net_allow_name_any_port(fr->policy, name))
		return -1;
	if (!family || !out || !max)
		return 0;
	n = find(fr, name);
	if (!n) {
		/* A name below a wildcard entry: looked up now (the one wait
		 * left in the fence; a pinned or exactly named one never
		 * waits). */
		n = add_name(fr, name);
		lookup(n);
	}
	for (i = 0; i < n->n && k < max; i++)
		if (n->addr[i].family == family && may_hand_out(fr, n, &n->addr[i]))
			out[k++] = n->addr[i];
	return (int)k;
}

static bool fence_connect_ok(void *ctx, const struct netfence_addr *a, uint16_t port, const char *name)
{
	struct fence_rules *fr = ctx;
	const struct fence_name *n;

	/* An address or CIDR entry, or localhost:PORT for the host's own
	 * loopback: the address decides, whatever name it came under. */
	if (net_allow_addr(fr->policy, a->family, addr_bytes(a), port))
		return true;
	if (!name || !net_allow_name(fr->policy, name, port))
		return false;
	/* Handed out for an allowed name: the rebinding rule again, since the
	 * fence remembers only the last name an address went out for. */
	n = find(fr, name);
	return n && may_hand_out(fr, n, a);
}

void fence_rules_init(struct fence_rules *fr, const struct moat_policy *p)
{
	size_t i;

	memset(fr, 0, sizeof(*fr));
	fr->policy = p;
	for (i = 0; i < p->n_net_pins; i++) {
		struct fence_name *n = add_name(fr, p->net_pins[i].name);
		n->pinned = true;
		add_addr(n, p->net_pins[i].family, p->net_pins[i].addr);
	}
	for (i = 0; i < p->n_net_allow; i++) {
		const struct moat_net_dest *d = &p->net_allow[i];
		if (d->kind != MOAT_NET_DEST_NAME || find(fr, d->name))
			continue;
		lookup(add_name(fr, d->name));
	}
	fr->rules.ctx = fr;
	fr->rules.resolve = fence_resolve;
	fr->rules.connect_ok = fence_connect_ok;
}

void fence_rules_free(struct fence_rules *fr)
{
	size_t i;

	for (i = 0; i < fr->n_names; i++)
		free(fr->names[i].name);
	free(fr->names);
	memset(fr, 0, sizeof(*fr));
}
