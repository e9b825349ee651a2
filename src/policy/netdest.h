/* The network allowlist: the parser of a destination (--allow-net DEST,
 * network.allow) and of a pin (--resolve NAME=IP, network.resolve), and the
 * matchers the enforcement calls.  Pure: no DNS, no sockets, no host.
 * The syntax is documented in docs/policy.md, "Network allowlist". */
#ifndef MOAT_POLICY_NETDEST_H
#define MOAT_POLICY_NETDEST_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* Why a destination or a pin was refused: a message naming the fault
 * (without the value, which the caller names with its flag or its
 * file:line:col) and, where the fix is known, a hint (static, or NULL). */
struct net_parse_error {
	char msg[200];
	char hint[200]; /* "" when there is none */
};

/* The longest upstream proxy host name moat takes. */
#define NET_PROXY_HOST_MAX 253

/* The default ports of a destination written without one. */
#define MOAT_NET_DEFAULT_PORT_1 443
#define MOAT_NET_DEFAULT_PORT_2 80

/* Parse one destination into *out (text and name allocated; free with
 * net_dest_free).  0, or -1 with *e filled and *out untouched. */
int net_dest_parse(const char *text, struct moat_net_dest *out, struct net_parse_error *e);
void net_dest_free(struct moat_net_dest *d);
/* A deep copy (a config layer's entry into the policy). */
void net_dest_copy(struct moat_net_dest *out, const struct moat_net_dest *d);

/* Parse "NAME=IP" (IP: IPv4, or IPv6 with or without brackets). */
int net_pin_parse(const char *text, struct moat_net_pin *out, struct net_parse_error *e);
void net_pin_free(struct moat_net_pin *pin);
void net_pin_copy(struct moat_net_pin *out, const struct moat_net_pin *pin);

/* A host name checked and normalised as destinations are: letters, digits,
 * '-' and dots, lowercased, a trailing dot stripped, at most 253
 * characters, labels of 1..63.  NULL (and *e) when it is not one. */
char *net_name_normalise(const char *name, struct net_parse_error *e);

/* The matchers below answer for a direct connect (the transparent fence,
 * its DNS): proxy-only entries ("proxy:DEST") do not count there.  Their
 * _via forms answer for the path given: via_proxy true is the proxy mode
 * (kernel/netproxy.h), where every entry counts. */

/* Is `name` (any case, a trailing dot allowed) allowed on `port`: a name
 * entry equal to it, or a wildcard entry of a domain it lies below. */
bool net_allow_name(const struct moat_policy *p, const char *name, unsigned short port);
bool net_allow_name_via(const struct moat_policy *p, const char *name, unsigned short port, bool via_proxy);

/* Is the address (AF_INET: 4 bytes, AF_INET6: 16, network order) allowed
 * on `port`: an address or CIDR entry that contains it, or a localhost
 * entry for 127.0.0.1 and ::1.  An IPv4-mapped IPv6 address matches as
 * the IPv4 address it maps. */
bool net_allow_addr(const struct moat_policy *p, int family, const void *addr, unsigned short port);
bool net_allow_addr_via(const struct moat_policy *p, int family, const void *addr, unsigned short port, bool via_proxy);

/* The private, loopback, link-local or metadata range the address lies in
 * ("10.0.0.0/8", "169.254.0.0/16", "fc00::/7", ...), or NULL.  An
 * IPv4-mapped IPv6 address is judged as its IPv4 address. */
const char *net_addr_private_range(int family, const void *addr);
bool net_addr_is_private(int family, const void *addr);

/* The DNS-rebinding rule: an address in a private range is handed out for
 * a name (net_allow_name) only when this is true: some address or CIDR
 * entry contains the address, or the address is 127.0.0.1 or ::1 and a
 * localhost entry exists, on a port that an entry allows the name on.  A
 * connect to it is then allowed on the ports that address entry allows
 * (net_allow_addr), never on the name's alone: localhost:5432 beside
 * evil.example:22 opens neither port to 127.0.0.1 for the name.  Pinned
 * names (net_name_pinned) are exempt from the rule. */
bool net_private_addr_named(const struct moat_policy *p, int family, const void *addr, const char *name);
bool net_private_addr_named_via(const struct moat_policy *p, int family, const void *addr, const char *name,
				bool via_proxy);

/* The private range an entry names, for a message: an address's
 * ("127.0.0.0/8", "169.254.0.0/16", "64:ff9b::/96 (NAT64) with a private
 * IPv4 address"), "a private range" for a CIDR that overlaps one,
 * "localhost" for a localhost name (*.localhost too); NULL for any other. */
const char *net_dest_private_range(const struct moat_net_dest *d);

/* Does an entry of the user's (one no project file named: project NULL;
 * not `d` itself) allow what `d` names, on each of d's ports: its address
 * (an address or CIDR entry containing it, a localhost entry for
 * 127.0.0.1 and ::1), or its name (the same name, a wildcard above it;
 * for a localhost name an entry for 127.0.0.1 too)?  The check that lets
 * a project's registry in a private range in: the user named it. */
bool net_dest_user_allows(const struct moat_policy *p, const struct moat_net_dest *d);

/* Does a --resolve pin exist for the name (normalised as above). */
bool net_name_pinned(const struct moat_policy *p, const char *name);

/* Does some entry allow the name on any port (the fenced DNS: direct
 * entries only; pins: any entry, via_proxy true). */
bool net_allow_name_any_port(const struct moat_policy *p, const char *name);
bool net_allow_name_any_port_via(const struct moat_policy *p, const char *name, bool via_proxy);

/* ---- the host's own proxy (moat's HTTPS_PROXY, HTTP_PROXY, NO_PROXY) ---- */

/* An upstream proxy's URL: [SCHEME://][user[:password]@]host[:port][/],
 * host a name, an IPv4 address or a bracketed IPv6 one.  SCHEME http (the
 * default; the port 80 when not given, as Python and Go take it), socks5
 * or socks5h (a SOCKS5 proxy, port 1080 by default; moat hands it names
 * either way: socks5h's way, docs/network.md), or socks4 or socks4a (a
 * SOCKS4 proxy, port 1080: IPv4 addresses only, and names too with
 * socks4a).  The credentials, percent-decoded, become auth: for HTTP the
 * value of a Proxy-Authorization header ("Basic ..."), for SOCKS5 RFC
 * 1929's request (user and password of at most 255 bytes each), for SOCKS4
 * the user id (1-255 bytes, no password: SOCKS4 has no field for one).
 * Other schemes (https://) are refused. */
struct net_proxy_url {
	char host[NET_PROXY_HOST_MAX + 1]; /* a name (lower case), or an address (IPv6 without brackets) */
	unsigned short port;
	bool socks;	 /* socks5://, socks5h://, socks4:// or socks4a:// */
	bool socks_h;	 /* socks5h:// (for the text) */
	bool socks4;	 /* socks4:// or socks4a:// */
	bool socks4a;	 /* socks4a:// */
	char *auth;	 /* allocated, or NULL; net_proxy_url_free wipes it */
	size_t auth_len; /* its bytes (RFC 1929's request may hold a 0: an empty password) */
};
int net_proxy_url_parse(const char *url, struct net_proxy_url *out, struct net_parse_error *e);
void net_proxy_url_free(struct net_proxy_url *u);
/* The URL without its credentials, for messages and the report:
 * "http://host:port", "socks5h://host:port", "socks4a://host:port" (buf >= NET_PROXY_HOST_MAX +
 * 20 bytes). */
const char *net_proxy_url_text(const struct net_proxy_url *u, char *buf, size_t len);

/* Does NO_PROXY (comma- or space-separated: "*", names -- a leading "."
 * or "*." allowed, matching the name and every name below it --,
 * addresses, CIDRs, any of them with ":port") exempt host (a name or an
 * address in text) on port from the upstream proxy? */
bool net_no_proxy_match(const char *no_proxy, const char *host, unsigned short port);

/* "name", "wildcard", "address". */
const char *net_dest_kind_name(enum moat_net_dest_kind k);

/* The address as text ("10.0.0.0", "fc00::"), into buf (>= 46 bytes). */
const char *net_addr_text(int family, const void *addr, char *buf, size_t len);

#endif
