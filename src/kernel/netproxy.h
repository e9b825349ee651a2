/* Proxy mode of the fenced network: an HTTP proxy (CONNECT and
 * absolute-form requests) and a SOCKS5 proxy inside the sandbox's network
 * namespace, served by moat from outside, for the programs that honour
 * HTTP_PROXY, HTTPS_PROXY and ALL_PROXY.  It gives what the transparent
 * fence (kernel/netfence.h) cannot: a policy by host name, exact even for
 * names that share an address with others (CDNs), and a check that a TLS
 * ClientHello names the host the tunnel was asked for.  The kernel
 * mechanism only: which names and addresses may be reached is the caller's
 * (struct netproxy_rules).  docs/network.md says why it is built so.
 *
 *   child (between clone and execve, in the command's network namespace,
 *   before Landlock refuses TCP binds; nothing here allocates):
 *     netproxy_child_listen()   binds and listens on 127.0.0.1:3128 (HTTP)
 *                               and 127.0.0.1:1080 (SOCKS5); the two fds go
 *                               to moat with the fence's
 *                               (netfence_child_sendv), and the command
 *                               must not hold them.
 *
 *   supervisor (moat, outside, in the host's network namespace; never
 *   blocks): netproxy_new(), then netproxy_pollfds() /
 *   netproxy_timeout_ms() / poll / netproxy_handle() in the caller's loop,
 *   netproxy_names_ready() whenever the rules' lookups make progress,
 *   netproxy_free() at the end.
 *
 * What it does with a connection (each step bounded in time and size):
 *   1. reads the request: an HTTP head (at most NETPROXY_HEAD_MAX bytes),
 *      or the SOCKS5 greeting (no authentication) and request (CONNECT
 *      only; an IPv4, IPv6 or domain-name address: socks5h, names are
 *      resolved by moat);
 *   2. asks the rules: name_ok() for a host name, addr_ok() for an address
 *      written as one; refused: 403, or SOCKS reply 2;
 *   3. connects, from the host's namespace, to the addresses resolve()
 *      gives (NETFENCE_RESOLVE_PENDING: the connection waits for
 *      netproxy_names_ready(), at most 10 s), each in turn until one
 *      answers: directly, or, when the rules name an upstream proxy for
 *      the name and for the address, through it (kernel/upstream.h:
 *      CONNECT address:port, an absolute-form request then in origin
 *      form inside the tunnel), so that what was checked is what is
 *      reached.  Only a name the host's resolver has no address for
 *      (NETFENCE_RESOLVE_FAILED, NETPROXY_RESOLVE_NONE) goes to the
 *      upstream by name: CONNECT name:port, or the absolute form rebuilt
 *      from the checked authority (netproxy_forward_target);
 *   4. answers 200 (or SOCKS success); an absolute-form request goes on
 *      in origin form with Host set from its target, hop-by-hop headers
 *      dropped and "Connection: close" (one request per connection: the
 *      next one may be for another host);
 *   5. for a tunnel (to any port, or rules->tls_port's): holds the client's first bytes until they
 *      are a whole TLS ClientHello (reassembled across records, at most
 *      NETPROXY_HELLO_MAX bytes) and closes the tunnel when its
 *      server_name is not the host the tunnel was asked for (or names one
 *      at all when the target was an address): domain fronting.  What is
 *      not TLS passes; a hello with no server_name passes.  The client's
 *      bytes after the hello then wait for the server's first message: a
 *      HelloRetryRequest is answered by a second ClientHello (after
 *      change_cipher_spec and early-data records, skipped), judged as the
 *      first, and anything else there closes the tunnel (a TLS 1.3 server
 *      such as OpenSSL's takes the second hello's server_name);
 *   6. relays bytes both ways (a buffer copy, or splice(2) through a pipe
 *      pair), half-closes as the ends do, until both are done. */
#ifndef MOAT_KERNEL_NETPROXY_H
#define MOAT_KERNEL_NETPROXY_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/netfence.h"
#include "kernel/upstream.h"
#include "util/err.h"

/* The sandbox's own namespace: fixed ports cannot collide with anyone's. */
#define NETPROXY_HTTP_PORT  3128
#define NETPROXY_SOCKS_PORT 1080

/* ---- child side: async-signal-safe, no allocation ---- */

/* Bind and listen on 127.0.0.1:3128 and 127.0.0.1:1080 in the calling
 * process's network namespace (lo up; before Landlock's TCP bind rule).
 * Non-blocking, close-on-exec.  0, or -errno with nothing left open. */
int netproxy_child_listen(int *http_fd, int *socks_fd) __attribute__((nonnull, warn_unused_result));

/* What became of a request, for the rules' log (event, below). */
enum netproxy_event_kind {
	NETPROXY_EV_TUNNEL,	  /* allowed and connected: the relay begins */
	NETPROXY_EV_REFUSED,	  /* the rules refused the destination (403, SOCKS 2) */
	NETPROXY_EV_SNI_REFUSED, /* the ClientHello named another host: closed */
	NETPROXY_EV_FAILED,	  /* allowed, but no connection could be made */
};

struct netproxy_event {
	enum netproxy_event_kind kind;
	const char *host; /* the destination as asked: a name, or an address as text */
	uint16_t port;
	bool socks; /* asked over SOCKS5 (else HTTP) */
};

/* ---- the policy, as callbacks (they run inside netproxy_handle and must
 * not block) ---- */
struct netproxy_rules {
	void *ctx;
	/* May the sandbox reach `name` on `port` (TCP) through the proxy?
	 * name: lower case, no final dot, only [a-z0-9_-] and dots, labels of
	 * 1-63, at most 253 (other names are refused without asking). */
	bool (*name_ok)(void *ctx, const char *name, uint16_t port);
	/* The addresses of an allowed name, in the order to try (both
	 * families; only those moat may connect to on `port`: the
	 * DNS-rebinding rule is the rules'): how many were filled (at most max; 0: the resolver's
	 * addresses were all withheld, which stays refused), or
	 * NETFENCE_RESOLVE_DENIED, _PENDING (asked again after
	 * netproxy_names_ready), _FAILED (the lookup failed) or
	 * NETPROXY_RESOLVE_NONE (the resolver answered, with no address).
	 * The last two, and only they, let an upstream proxy resolve the
	 * name itself. */
	int (*resolve)(void *ctx, const char *name, uint16_t port, struct netfence_addr *out, size_t max);
	/* May the sandbox reach the address a:port, asked for as an address? */
	bool (*addr_ok)(void *ctx, const struct netfence_addr *a, uint16_t port);
	/* Optional: the upstream proxy to reach host:port through (host: the
	 * name, or the address as text), or NULL: directly.  A name's
	 * address goes through it only when both the name and the address
	 * (as text) are given one: the name's is used. */
	const struct upstream_proxy *(*upstream)(void *ctx, const char *host, uint16_t port);
	/* Optional: is a tunnel to this port TLS, whose ClientHello must name
	 * the host asked for (step 5)?  NULL: every port (what is not TLS
	 * passes at its first byte). */
	bool (*tls_port)(void *ctx, uint16_t port);
	/* Optional: each request's outcome, as it is decided (must not block). */
	void (*event)(void *ctx, const struct netproxy_event *ev);
};

/* What resolve() may say besides NETFENCE_RESOLVE_*: the host's resolver
 * answered that the name has no address (NXDOMAIN, no data). */
#define NETPROXY_RESOLVE_NONE (-4)

struct netproxy;

/* Take over the two listeners (closed by netproxy_free, and on failure).
 * splice: relay with splice(2) through a pipe pair per direction instead
 * of a buffer copy.  NULL with err on failure. */
struct netproxy *netproxy_new(int http_fd, int socks_fd, const struct netproxy_rules *r, bool splice,
			      struct moat_error *err) __attribute__((nonnull(3, 5), warn_unused_result));
void netproxy_free(struct netproxy *np);

#define NETPROXY_MAX_CONNS   64 /* connections at once; past it, closed at once */
#define NETPROXY_HEAD_MAX    8192
#define NETPROXY_HELLO_MAX   16384
#define NETPROXY_POLLFDS_MAX (2 + 2 * NETPROXY_MAX_CONNS)

/* As netfence_pollfds / netfence_timeout_ms / netfence_handle. */
size_t netproxy_pollfds(struct netproxy *np, struct pollfd *fds, size_t max) __attribute__((nonnull));
int netproxy_timeout_ms(const struct netproxy *np) __attribute__((nonnull));
void netproxy_handle(struct netproxy *np, const struct pollfd *fds, size_t n) __attribute__((nonnull(1)));

/* The rules' lookups made progress: the connections that waited for a
 * name ask again.  Never blocks. */
void netproxy_names_ready(struct netproxy *np) __attribute__((nonnull));

struct netproxy_stats {
	unsigned long accepted;			 /* connections taken from the listeners */
	unsigned long tunnels;			 /* requests allowed and connected */
	unsigned long refused;			 /* requests the rules refused */
	unsigned long sni_refused;		 /* tunnels closed: the ClientHello named another host */
	unsigned long failed;			 /* allowed, but no connection (resolve, connect, upstream) */
	unsigned long bad;			 /* malformed or unsupported requests, timeouts, no room */
	unsigned long via_upstream;		 /* of the tunnels, through the upstream proxy */
	unsigned long via_upstream_by_name;	 /* of those, asked by name: the host's resolver had no address */
	unsigned long long bytes_up, bytes_down; /* relayed to and from the destinations */
	struct upstream_refusals upstream_refused; /* requests the upstream proxy refused */
};
void netproxy_get_stats(const struct netproxy *np, struct netproxy_stats *out) __attribute__((nonnull));

/* ---- the parsers, for the tests: hostile input, every read bounded by n ---- */

enum netproxy_kind { NETPROXY_TUNNEL, NETPROXY_FORWARD };

/* A destination as the client wrote it. */
struct netproxy_target {
	char host[NETFENCE_NAME_MAX + 1]; /* a checked name (lower case), or the address as text */
	bool is_addr;
	struct netfence_addr addr; /* is_addr: the address (v4-mapped as v4) */
	uint16_t port;
};

struct netproxy_request {
	enum netproxy_kind kind; /* CONNECT, or an absolute-form request to forward */
	struct netproxy_target t;
	size_t head_len;	       /* the head, through its empty line */
	size_t method_len;	       /* FORWARD: the method, at 0 */
	size_t target_off, target_len; /* FORWARD: the absolute URI */
	size_t path_off, path_len;     /* FORWARD: its path and query ("/" when empty: path_len 0) */
	size_t version_off;	       /* "HTTP/1.x", 8 bytes */
	size_t headers_off;	       /* the first header line */
};

/* An HTTP proxy request head in b[0..n).  > 0: complete (the head's
 * length), *r filled; 0: incomplete (n < NETPROXY_HEAD_MAX); < 0: the HTTP
 * status to refuse with, negated (-400 malformed, -431 too long, -501 a
 * method or scheme the proxy does not do). */
int netproxy_parse_http(const unsigned char *b, size_t n, struct netproxy_request *r) __attribute__((nonnull));

/* The absolute-form target to hand an upstream proxy for the request
 * r parsed from head: "http://" host (an IPv6 address bracketed) ":"
 * port, then the path and query, beginning with "/" always, without a
 * "#fragment" -- built from what was checked, never the client's bytes
 * (a proxy that reads the authority up to the first "/" and strips
 * "userinfo@" would read another host out of "http://a.test?@b.test/").
 * *path_off: where the path begins in out (the origin form).  Its length,
 * or 0 when it does not fit cap. */
size_t netproxy_forward_target(const struct netproxy_request *r, const unsigned char *head, char *out, size_t cap,
			       size_t *path_off) __attribute__((nonnull));

/* Parse a host[:port] authority (host a name, an IPv4 address or a
 * bracketed IPv6 one) of len bytes into *t; port_default 0: a port is
 * required.  0 or -1. */
int netproxy_parse_authority(const char *s, size_t len, uint16_t port_default, struct netproxy_target *t)
    __attribute__((nonnull));

/* The SOCKS5 greeting in b[0..n): > 0 its length (*noauth: it offers "no
 * authentication"); 0 incomplete; -1 not SOCKS5. */
int netproxy_parse_socks_greeting(const unsigned char *b, size_t n, bool *noauth) __attribute__((nonnull));
/* The SOCKS5 request in b[0..n): > 0 its length, *t filled; 0 incomplete;
 * < 0 the SOCKS reply code to refuse with, negated (-7 not CONNECT, -8
 * address type, -1 malformed, -4 a name that cannot be one). */
int netproxy_parse_socks_request(const unsigned char *b, size_t n, struct netproxy_target *t) __attribute__((nonnull));

enum netproxy_sni {
	NETPROXY_SNI_MORE,    /* a TLS handshake, not complete yet */
	NETPROXY_SNI_NAME,    /* a ClientHello naming *name */
	NETPROXY_SNI_NONE,    /* a ClientHello without a server_name */
	NETPROXY_SNI_NOT_TLS, /* the bytes are not a TLS handshake */
	NETPROXY_SNI_BAD,     /* a TLS handshake that is not a valid ClientHello, or too long */
};
/* The client's first bytes b[0..n) of a tunnel: the server_name of the
 * ClientHello they carry (records reassembled; at most NETPROXY_HELLO_MAX
 * of handshake), lower case, without a final dot, into name (cap bytes:
 * NETFENCE_NAME_MAX + 1). */
enum netproxy_sni netproxy_parse_sni(const unsigned char *b, size_t n, char *name, size_t cap) __attribute__((nonnull));
/* The same, and, for NAME and NONE, *used: the bytes of the records that
 * carried the hello (what follows them is the client's next message). */
enum netproxy_sni netproxy_parse_hello(const unsigned char *b, size_t n, char *name, size_t cap, size_t *used)
    __attribute__((nonnull));

/* The server's first bytes b[0..n) of a tunnel whose ClientHello passed:
 * 1 a HelloRetryRequest (TLS 1.3: the client answers it with a second
 * ClientHello, which step 5 judges too), 0 anything else, -1 not known
 * yet (a ServerHello's first 43 bytes hold its random). */
int netproxy_server_hello_retry(const unsigned char *b, size_t n) __attribute__((nonnull));

#endif
