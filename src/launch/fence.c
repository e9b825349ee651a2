#include "launch/fence.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "policy/netdest.h"
#include "util/cleanup.h"
#include "util/helperthread.h"
#include "util/mem.h"
#include "util/nss.h"

/* How many lookups run at once; how many names a run may look up at all (a
 * command asking for a.example.org, b.example.org, ... under a wildcard
 * entry must not grow moat without bound: past it, SERVFAIL); when an
 * answer is looked up again (in the background: the old answer serves
 * meanwhile, and addresses already handed out stay connectable); when a
 * failed lookup is tried again. */
#define FENCE_LOOKUPS	 4
#define FENCE_NAMES_MAX	 4096
#define FENCE_REFRESH_NS (300 * 1000000000LL)
#define FENCE_RETRY_NS	 (5 * 1000000000LL)

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

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

static void add_addr(struct netfence_addr *addrs, size_t *n, int family, const void *bytes)
{
	struct netfence_addr a = {.family = family};
	size_t i;

	if (*n >= NETFENCE_MAX_ANSWERS)
		return;
	if (family == AF_INET)
		memcpy(&a.v4, bytes, 4);
	else
		memcpy(&a.v6, bytes, 16);
	for (i = 0; i < *n; i++)
		if (addrs[i].family == family && memcmp(addr_bytes(&addrs[i]), bytes, family == AF_INET ? 4 : 16) == 0)
			return;
	addrs[(*n)++] = a;
}

/* The DNS-rebinding rule (policy/netdest.h): an address in a private,
 * loopback or metadata range is handed out by the fenced DNS for a name
 * only when the name is pinned or a direct entry names the address on one
 * of the name's ports; the connect itself is checked on its own port
 * (fence_connect_ok). */
static bool may_hand_out(const struct fence_rules *fr, const struct fence_name *n, const struct netfence_addr *a)
{
	if (n->pinned || !net_addr_is_private(a->family, addr_bytes(a)))
		return true;
	return net_private_addr_named(fr->policy, a->family, addr_bytes(a), n->name);
}

/* ---- the lookups: the host's own resolver (glibc: /etc/hosts, DNS, NSS),
 * in moat, outside the sandbox, each in a thread of its own ----
 *
 * A thread owns its request and shares only the channel: under its lock it
 * writes the request's address to the pipe (one pointer: atomic), unless
 * the run is over (closed), and then frees the request itself.  So
 * fence_rules_free need not wait for a resolver that takes its time, and
 * no request is lost between its last read and the close.  The channel
 * lives until its last holder lets it go. */
struct lookup_channel {
	pthread_mutex_t lock;
	bool closed;
	int refs;
	int wfd;
};

static void channel_put(struct lookup_channel *ch)
{
	pthread_mutex_lock(&ch->lock);
	bool last = --ch->refs == 0;
	pthread_mutex_unlock(&ch->lock);
	if (!last)
		return;
	close(ch->wfd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

struct lookup {
	struct lookup_channel *ch;
	int rc; /* getaddrinfo's */
	size_t n;
	struct netfence_addr addr[NETFENCE_MAX_ANSWERS];
	char name[NETFENCE_NAME_MAX + 1];
};

static void *lookup_thread(void *arg)
{
	struct lookup *l = arg;
	struct lookup_channel *ch;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL, *ai;
	ssize_t w;

	l->rc = getaddrinfo(l->name, NULL, &hints, &res);
	for (ai = l->rc == 0 ? res : NULL; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET)
			add_addr(l->addr, &l->n, AF_INET, &((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr);
		else if (ai->ai_family == AF_INET6)
			add_addr(l->addr, &l->n, AF_INET6, &((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr);
	}
	if (res)
		freeaddrinfo(res);
	ch = l->ch;
	pthread_mutex_lock(&ch->lock);
	w = ch->closed ? -1 : write(ch->wfd, &l, sizeof(l));
	pthread_mutex_unlock(&ch->lock);
	if (w != (ssize_t)sizeof(l))
		free(l);
	channel_put(ch);
	return NULL;
}

/* Start n's lookup in a thread; false when none could start now (the name
 * stays queued). */
static bool lookup_spawn(struct fence_rules *fr, struct fence_name *n)
{
	struct lookup *l;

	if (fr->running >= FENCE_LOOKUPS)
		return false;
	nss_confine();
	l = moat_xcalloc(1, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", n->name);
	l->ch = fr->ch;
	pthread_mutex_lock(&fr->ch->lock);
	fr->ch->refs++;
	pthread_mutex_unlock(&fr->ch->lock);
	/* Signals stay moat's main thread's (its signalfd). */
	if (helper_thread_start(lookup_thread, l, 0) != 0) {
		channel_put(fr->ch);
		free(l);
		return false;
	}
	fr->running++;
	if (n->state == FENCE_LOOKUP_DONE)
		n->refreshing = true;
	else
		n->state = FENCE_LOOKUP_RUNNING;
	return true;
}

/* Ask for n's lookup: now, or when a thread is free. */
static void lookup_request(struct fence_rules *fr, struct fence_name *n)
{
	if (n->state == FENCE_LOOKUP_RUNNING || n->state == FENCE_LOOKUP_QUEUED || n->refreshing)
		return;
	if (lookup_spawn(fr, n))
		return;
	if (n->state == FENCE_LOOKUP_DONE)
		n->refreshing = true; /* queued behind the others */
	else
		n->state = FENCE_LOOKUP_QUEUED;
}

static void lookup_next(struct fence_rules *fr)
{
	for (size_t i = 0; i < fr->n_names && fr->running < FENCE_LOOKUPS; i++) {
		struct fence_name *n = &fr->names[i];
		bool waiting = n->state == FENCE_LOOKUP_QUEUED;
		bool refresh_waiting = n->state == FENCE_LOOKUP_DONE && n->refreshing;

		if (!waiting && !refresh_waiting)
			continue;
		n->refreshing = false; /* lookup_spawn sets it again for a refresh */
		if (!lookup_spawn(fr, n)) {
			n->refreshing = refresh_waiting;
			return;
		}
	}
}

int fence_rules_fd(const struct fence_rules *fr)
{
	return fr->done_fd;
}

bool fence_rules_collect(struct fence_rules *fr)
{
	struct lookup *l;
	bool any = false;

	while (read(fr->done_fd, &l, sizeof(l)) == (ssize_t)sizeof(l)) {
		struct fence_name *n = find(fr, l->name);

		fr->running--;
		any = true;
		if (n && !n->pinned) {
			n->done_ns = mono_ns();
			n->refreshing = false;
			if (l->rc == 0 || l->rc == EAI_NONAME || l->rc == EAI_NODATA) {
				/* No such name upstream is an answer (no address), not
				 * a failure. */
				memcpy(n->addr, l->addr, sizeof(n->addr));
				n->n = l->n;
				n->state = FENCE_LOOKUP_DONE;
			} else if (n->state != FENCE_LOOKUP_DONE) {
				n->state = FENCE_LOOKUP_FAILED; /* a refresh that fails keeps the answer */
			}
		}
		free(l);
	}
	lookup_next(fr);
	return any;
}

/* ---- the rules ---- */

/* The name's current answer in *out: 0; or NETFENCE_RESOLVE_PENDING while
 * it is looked up (started here when it must be), _FAILED. */
static int name_answer(struct fence_rules *fr, const char *name, struct fence_name **out)
{
	struct fence_name *n = find(fr, name);
	int64_t now;

	if (!n) {
		/* A name below a wildcard entry: looked up now, the query
		 * waits for it. */
		if (fr->n_names >= FENCE_NAMES_MAX)
			return NETFENCE_RESOLVE_FAILED;
		n = add_name(fr, name);
	}
	*out = n;
	if (n->pinned)
		return 0;
	now = mono_ns();
	switch (n->state) {
	case FENCE_LOOKUP_NONE:
		lookup_request(fr, n);
		return NETFENCE_RESOLVE_PENDING;
	case FENCE_LOOKUP_QUEUED:
	case FENCE_LOOKUP_RUNNING:
		return NETFENCE_RESOLVE_PENDING;
	case FENCE_LOOKUP_FAILED:
		if (now - n->done_ns < FENCE_RETRY_NS)
			return NETFENCE_RESOLVE_FAILED;
		lookup_request(fr, n);
		return NETFENCE_RESOLVE_PENDING;
	case FENCE_LOOKUP_DONE:
		if (now - n->done_ns >= FENCE_REFRESH_NS)
			lookup_request(fr, n);
		break;
	}
	return 0;
}

static int fence_resolve(void *ctx, const char *name, int qtype, struct netfence_addr *out, size_t max)
{
	struct fence_rules *fr = ctx;
	struct fence_name *n;
	size_t i, k = 0;
	int family = qtype == NETFENCE_QTYPE_A ? AF_INET : qtype == NETFENCE_QTYPE_AAAA ? AF_INET6 : 0, rc;

	/* Direct entries only: a proxy-only name is NXDOMAIN here, so that a
	 * client never connects to it itself. */
	if (!net_allow_name_any_port(fr->policy, name))
		return NETFENCE_RESOLVE_DENIED;
	if (!family || !out || !max)
		return 0;
	if ((rc = name_answer(fr, name, &n)) < 0)
		return rc;
	for (i = 0; i < n->n && k < max; i++)
		if (n->addr[i].family == family && may_hand_out(fr, n, &n->addr[i]))
			out[k++] = n->addr[i];
	return (int)k;
}

static bool fence_connect_ok(void *ctx, const struct netfence_addr *a, uint16_t port, const char *name)
{
	struct fence_rules *fr = ctx;
	const struct fence_name *n;

	/* The proxy mode's listeners are the sandbox's own 127.0.0.1:3128 and
	 * :1080, whatever an entry says of the host's ports there. */
	if (a->family == AF_INET && a->v4.s_addr == htonl(INADDR_LOOPBACK) &&
	    (port == NETPROXY_HTTP_PORT || port == NETPROXY_SOCKS_PORT))
		return false;
	/* An address or CIDR entry, or localhost:PORT for the host's own
	 * loopback: the address decides, whatever name it came under. */
	if (net_allow_addr(fr->policy, a->family, addr_bytes(a), port))
		return true;
	if (!name || !net_allow_name(fr->policy, name, port))
		return false;
	/* Handed out for an allowed name.  A private address that is not the
	 * name's pin needs an address entry on this very port, and that was
	 * asked above: the name's port is not enough, or localhost:5432 beside
	 * evil.example would open the host's 127.0.0.1:443 to a rebinding
	 * answer. */
	n = find(fr, name);
	return n && (n->pinned || !net_addr_is_private(a->family, addr_bytes(a)));
}

/* ---- the proxy mode's rules (kernel/netproxy.h): by the name asked,
 * every entry, proxy-only ones included ---- */

static bool proxy_name_ok(void *ctx, const char *name, uint16_t port)
{
	struct fence_rules *fr = ctx;

	return net_allow_name_via(fr->policy, name, port, true);
}

/* Both families, in the resolver's order: the proxy tries them in turn.
 * A private address that is not the name's pin only when an entry allows
 * that address on the port asked (as connect_ok does for the fence). */
static int proxy_resolve(void *ctx, const char *name, uint16_t port, struct netfence_addr *out, size_t max)
{
	struct fence_rules *fr = ctx;
	struct fence_name *n;
	size_t i, k = 0;
	int rc;

	if (!net_allow_name_any_port_via(fr->policy, name, true))
		return NETFENCE_RESOLVE_DENIED;
	if ((rc = name_answer(fr, name, &n)) < 0)
		return rc;
	/* No address at all (NXDOMAIN, no data) is not one withheld: the
	 * proxy may ask the host's proxy by name then (docs/network.md). */
	if (n->n == 0)
		return NETPROXY_RESOLVE_NONE;
	for (i = 0; i < n->n && k < max; i++) {
		const struct netfence_addr *a = &n->addr[i];
		if (n->pinned || !net_addr_is_private(a->family, addr_bytes(a)) ||
		    net_allow_addr_via(fr->policy, a->family, addr_bytes(a), port, true))
			out[k++] = *a;
	}
	return (int)k;
}

/* An address asked for as one: an address or CIDR entry (or localhost:PORT). */
static bool proxy_addr_ok(void *ctx, const struct netfence_addr *a, uint16_t port)
{
	struct fence_rules *fr = ctx;

	return net_allow_addr_via(fr->policy, a->family, addr_bytes(a), port, true);
}

static const struct upstream_proxy *fence_upstream(void *ctx, const char *host, uint16_t port)
{
	struct fence_rules *fr = ctx;

	return fr->hp ? hostproxy_for(fr->hp, host, port) : NULL;
}

/* A connect to the proxy mode's own listeners: moat's, not news. */
static bool to_proxy_mode(const struct netfence_event *ev)
{
	return ev->kind == NETFENCE_EV_LOCAL && ev->addr && ev->addr->family == AF_INET &&
	       ev->addr->v4.s_addr == htonl(INADDR_LOOPBACK) &&
	       (ev->port == NETPROXY_HTTP_PORT || ev->port == NETPROXY_SOCKS_PORT);
}

static void fence_event(void *ctx, const struct netfence_event *ev)
{
	struct fence_rules *fr = ctx;

	if (!to_proxy_mode(ev))
		netlog_record(fr->log, ev);
}

static void proxy_event(void *ctx, const struct netproxy_event *ev)
{
	struct fence_rules *fr = ctx;

	netlog_record_proxy(fr->log, ev);
}

int fence_rules_init(struct fence_rules *fr, const struct moat_policy *p, struct netlog *log,
		     const struct hostproxy *hp, struct moat_error *err)
{
	int fds[2];
	size_t i;

	memset(fr, 0, sizeof(*fr));
	fr->done_fd = -1;
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "net allow: a pipe for the name lookups");
	fr->done_fd = fds[0];
	fr->ch = moat_xcalloc(1, sizeof(*fr->ch));
	pthread_mutex_init(&fr->ch->lock, NULL);
	fr->ch->refs = 1;
	fr->ch->wfd = fds[1];
	fr->policy = p;
	fr->log = log;
	for (i = 0; i < p->n_net_pins; i++) {
		struct fence_name *n = add_name(fr, p->net_pins[i].name);
		n->pinned = true;
		add_addr(n->addr, &n->n, p->net_pins[i].family, p->net_pins[i].addr);
	}
	for (i = 0; i < p->n_net_allow; i++) {
		const struct moat_net_dest *d = &p->net_allow[i];
		if (d->kind != MOAT_NET_DEST_NAME || find(fr, d->name))
			continue;
		lookup_request(fr, add_name(fr, d->name));
	}
	fr->rules.ctx = fr;
	fr->rules.resolve = fence_resolve;
	fr->rules.connect_ok = fence_connect_ok;
	fr->rules.event = fence_event;
	fr->rules.upstream = fence_upstream;
	fr->hp = hp;
	fr->proxy_rules = (struct netproxy_rules){.ctx = fr,
						  .name_ok = proxy_name_ok,
						  .resolve = proxy_resolve,
						  .addr_ok = proxy_addr_ok,
						  .upstream = fence_upstream,
						  .event = proxy_event};
	return 0;
}

void fence_rules_free(struct fence_rules *fr)
{
	size_t i;

	for (i = 0; i < fr->n_names; i++)
		free(fr->names[i].name);
	free(fr->names);
	/* Threads still looking up find the channel closed and free their
	 * own requests; what the others wrote is read here. */
	if (fr->ch) {
		struct lookup *l;
		pthread_mutex_lock(&fr->ch->lock);
		fr->ch->closed = true;
		pthread_mutex_unlock(&fr->ch->lock);
		while (read(fr->done_fd, &l, sizeof(l)) == (ssize_t)sizeof(l))
			free(l);
		channel_put(fr->ch);
	}
	if (fr->done_fd >= 0)
		close(fr->done_fd);
	memset(fr, 0, sizeof(*fr));
	fr->done_fd = -1;
}
