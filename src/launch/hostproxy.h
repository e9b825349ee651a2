/* The host's own proxy, for moat's connects under net allow: where the
 * host reaches the outside only through a proxy, moat's environment says
 * so (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY), and the fence's and
 * the proxy mode's connects go through it (kernel/upstream.h: HTTP
 * CONNECT or SOCKS5, as each URL's scheme says).  Internal to launch/;
 * docs/network.md, "Upstream proxy". */
#ifndef MOAT_LAUNCH_HOSTPROXY_H
#define MOAT_LAUNCH_HOSTPROXY_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/upstream.h"
#include "policy/netdest.h"
#include "util/err.h"

/* The variables, in the report's order. */
enum hostproxy_var { HOSTPROXY_HTTPS, HOSTPROXY_HTTP, HOSTPROXY_ALL, HOSTPROXY_N };

struct hostproxy {
	bool have[HOSTPROXY_N];
	struct net_proxy_url url[HOSTPROXY_N]; /* the credentials in them are wiped by hostproxy_free */
	struct upstream_proxy up[HOSTPROXY_N]; /* where moat connects: the proxies' addresses */
	char *no_proxy;
};

/* Read https_proxy (then HTTPS_PROXY), http_proxy (then HTTP_PROXY),
 * all_proxy (then ALL_PROXY) and no_proxy (then NO_PROXY) from env, and
 * find each proxy's address (a name is looked up here, with the host's
 * resolver: this blocks, and is called before the sandbox starts).
 * Without any proxy, *hp says so and every connect is direct.  -1 with
 * err (a URL moat cannot use, a proxy name that does not resolve): moat
 * would otherwise connect around the proxy the host requires. */
int hostproxy_init(struct hostproxy *hp, char *const *env, struct moat_error *err)
    __attribute__((nonnull(1, 3), warn_unused_result));
void hostproxy_free(struct hostproxy *hp);

/* The proxy for a connect to host (a name, or an address as text) on
 * port, or NULL: directly.  Port 80 takes HTTP_PROXY (else HTTPS_PROXY,
 * else ALL_PROXY), every other port HTTPS_PROXY (else ALL_PROXY), as curl
 * falls back to ALL_PROXY; the host's own loopback ("localhost",
 * 127.0.0.1, ::1) and what NO_PROXY names are always direct. */
const struct upstream_proxy *hostproxy_for(const struct hostproxy *hp, const char *host, uint16_t port)
    __attribute__((nonnull(2)));

/* "SCHEME://host:port" of the variable's proxy (no credentials), or NULL. */
const char *hostproxy_text(const struct hostproxy *hp, enum hostproxy_var v, char *buf, size_t len)
    __attribute__((nonnull));

#endif
