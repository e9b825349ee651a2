#include "launch/hostproxy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/mem.h"
#include "util/nss.h"

/* name's value in env (NULL-terminated "NAME=VALUE"), or NULL; an empty
 * value is no value. */
static const char *env_value(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i][len + 1] ? env[i] + len + 1 : NULL;
	return NULL;
}

/* curl's order: the lower-case name first. */
static const char *either(char *const *env, const char *lower, const char *upper, const char **which)
{
	const char *v = env_value(env, lower);

	*which = lower;
	if (!v) {
		v = env_value(env, upper);
		*which = upper;
	}
	return v;
}

/* Parse the URL in `var` and find the proxy's address. */
static int one_proxy(const char *var, const char *url, struct net_proxy_url *u, struct upstream_proxy *up,
		     struct moat_error *err)
{
	struct net_parse_error e;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	char port[8];
	int rc;

	if (net_proxy_url_parse(url, u, &e) < 0) {
		/* The URL is not repeated: it may hold the proxy's password. */
		moat_error_set(err, MOAT_E_USAGE, 0, "net allow: moat's %s: %s", var, e.msg);
		return moat_error_hint(err, "%s",
				       e.hint[0] ? e.hint
						 : "moat's connects go through the host's proxy "
						   "(docs/network.md): fix or unset it");
	}
	snprintf(port, sizeof(port), "%u", u->port);
	nss_confine();
	rc = getaddrinfo(u->host, port, &hints, &res);
	if (rc != 0 || !res) {
		moat_error_set(err, MOAT_E_SYSTEM, 0,
			       "net allow: moat's %s names the proxy %s, which does not resolve: %s", var, u->host,
			       gai_strerror(rc));
		net_proxy_url_free(u);
		return moat_error_hint(err,
				       "moat connects to the host's proxy itself: its name must resolve on the host");
	}
	memset(up, 0, sizeof(*up));
	memcpy(&up->addr, res->ai_addr, res->ai_addrlen);
	up->addr_len = (socklen_t)res->ai_addrlen;
	up->socks = u->socks;
	up->socks4 = u->socks4;
	up->socks4a = u->socks4a;
	up->auth = u->auth;
	up->auth_len = u->auth_len;
	freeaddrinfo(res);
	return 0;
}

int hostproxy_init(struct hostproxy *hp, char *const *env, struct moat_error *err)
{
	static const char *const names[HOSTPROXY_N][2] = {
	    {"https_proxy", "HTTPS_PROXY"}, {"http_proxy", "HTTP_PROXY"}, {"all_proxy", "ALL_PROXY"}};
	const char *which, *v;

	memset(hp, 0, sizeof(*hp));
	for (size_t i = 0; i < HOSTPROXY_N; i++) {
		if (!(v = either(env, names[i][0], names[i][1], &which)))
			continue;
		if (one_proxy(which, v, &hp->url[i], &hp->up[i], err) < 0) {
			hostproxy_free(hp);
			return -1;
		}
		hp->have[i] = true;
	}
	if ((v = either(env, "no_proxy", "NO_PROXY", &which)))
		hp->no_proxy = moat_xstrdup(v);
	return 0;
}

void hostproxy_free(struct hostproxy *hp)
{
	for (size_t i = 0; i < HOSTPROXY_N; i++)
		net_proxy_url_free(&hp->url[i]);
	free(hp->no_proxy);
	memset(hp, 0, sizeof(*hp));
}

/* The host's own loopback as NO_PROXY conventionally names it: localhost
 * (and its subdomains), 127.0.0.1, ::1.  The rest of 127/8 follows
 * NO_PROXY like any address. */
static bool host_loopback(const char *host)
{
	size_t n = strlen(host);

	return strcmp(host, "127.0.0.1") == 0 || strcmp(host, "::1") == 0 || strcmp(host, "localhost") == 0 ||
	       (n > 10 && strcmp(host + n - 10, ".localhost") == 0);
}

const struct upstream_proxy *hostproxy_for(const struct hostproxy *hp, const char *host, uint16_t port)
{
	if (!hp || (!hp->have[HOSTPROXY_HTTPS] && !hp->have[HOSTPROXY_HTTP] && !hp->have[HOSTPROXY_ALL]))
		return NULL;
	/* The host's own services are not behind its proxy. */
	if (host_loopback(host) || net_no_proxy_match(hp->no_proxy, host, port))
		return NULL;
	if (port == 80 && hp->have[HOSTPROXY_HTTP])
		return &hp->up[HOSTPROXY_HTTP];
	if (hp->have[HOSTPROXY_HTTPS])
		return &hp->up[HOSTPROXY_HTTPS];
	return hp->have[HOSTPROXY_ALL] ? &hp->up[HOSTPROXY_ALL] : NULL;
}

const char *hostproxy_text(const struct hostproxy *hp, enum hostproxy_var v, char *buf, size_t len)
{
	if (!hp->have[v])
		return NULL;
	return net_proxy_url_text(&hp->url[v], buf, len);
}
