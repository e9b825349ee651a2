/* moat's own outgoing connects through the host's proxy: where the host
 * reaches the outside only through a proxy (HTTPS_PROXY or ALL_PROXY in
 * moat's own environment), the fence (kernel/netfence.h) and the proxy
 * mode (kernel/netproxy.h) connect to that proxy and ask it for a tunnel
 * -- an HTTP CONNECT, a SOCKS5 CONNECT (RFC 1928, with RFC 1929's user
 * name and password when the URL has them), or a SOCKS4 CONNECT (with the
 * URL's user id; SOCKS4a's extension for a name) -- then use the tunnel
 * as they would a direct connection.  Which destinations go through it is the
 * caller's (NO_PROXY, ports).
 *
 * Non-blocking: upstream_start() begins, upstream_events() says what to
 * poll the fd for, upstream_step() advances when poll says so.  The
 * proxy's reply is read with MSG_PEEK first and then exactly its head is
 * consumed, so whatever the far end sends right after the 200 (an ssh
 * banner) stays in the socket for whoever takes the tunnel over. */
#ifndef MOAT_KERNEL_UPSTREAM_H
#define MOAT_KERNEL_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The host's proxy: where it is (moat connects to it from the host's
 * namespace), its kind, and its credentials, or NULL: for HTTP the
 * Proxy-Authorization value ("Basic ..."), for SOCKS5 RFC 1929's request
 * (1, ULEN, user, PLEN, password: auth_len bytes), for SOCKS4 the user id
 * (auth_len bytes, no NUL).  The credentials are moat's: they go to the
 * proxy only, never to the command or the report. */
struct upstream_proxy {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool socks;   /* SOCKS (socks4 says which); else HTTP CONNECT */
	bool socks4;  /* SOCKS4: IPv4 addresses only, unless socks4a */
	bool socks4a; /* SOCKS4a: a name too, which the proxy resolves */
	const char *auth;
	size_t auth_len;
};

/* The longest reply head taken from the proxy; a longer one fails. */
#define UPSTREAM_REPLY_MAX 4096

enum upstream_phase {
	UPSTREAM_CONNECTING, /* TCP connect to the proxy */
	UPSTREAM_SENDING,    /* the CONNECT request (SOCKS5: each message in turn) */
	UPSTREAM_READING,    /* the proxy's reply */
	UPSTREAM_DONE,	     /* the tunnel stands (or, without a target, the connection) */
};

/* SOCKS5: which reply is awaited. */
enum upstream_socks_step {
	UPSTREAM_SOCKS_METHOD, /* the method the proxy chose */
	UPSTREAM_SOCKS_AUTH,   /* RFC 1929's status */
	UPSTREAM_SOCKS_REPLY,  /* the CONNECT's reply */
};

struct upstream_conn {
	int fd; /* -1 when closed */
	enum upstream_phase phase;
	char *req; /* the request being sent (allocated), NULL without a target */
	size_t req_len, sent;
	unsigned char *reply; /* the reply's head so far (allocated when reading) */
	size_t reply_len;
	int status; /* the proxy's status code (SOCKS5: its reply code), once read */
	char auth_scheme[24]; /* a 407's first Proxy-Authenticate scheme ("NTLM"), or "" */
	bool socks;  /* SOCKS5 or SOCKS4 */
	bool socks4; /* SOCKS4: one request (in req), one 8-byte reply */
	enum upstream_socks_step socks_step;
	char *socks_auth, *socks_connect; /* the messages still to send (allocated), or NULL */
	size_t socks_auth_len, socks_connect_len;
};

/* The host's proxy's refusals over a run, for moat's note at the end
 * (api/run.c): a command whose connect fails sees ECONNREFUSED or a 502,
 * never why. */
struct upstream_refusals {
	unsigned long count;  /* connects the host's proxy refused */
	int status;	      /* the last one's HTTP status, or SOCKS reply code */
	int socks;	      /* 0: HTTP; 4 or 5: SOCKS4 or SOCKS5 */
	char auth_scheme[24]; /* a 407's Proxy-Authenticate scheme ("NTLM"), or "" */
};

/* An attempt that ends: counted in r when the proxy refused it (it
 * answered, and not with a tunnel); nothing for one that stood, failed
 * before an answer, or timed out. */
void upstream_refusal_note(struct upstream_refusals *r, const struct upstream_conn *u) __attribute__((nonnull));

/* Start a connection to the proxy: a non-blocking socket of its family,
 * connect begun.  With a target (host: a name, or an address as text --
 * an IPv6 one is bracketed here), the CONNECT host:port request is made
 * ready; without (host NULL), the connection itself is the end (the
 * caller speaks to the proxy itself; an HTTP proxy only: a SOCKS proxy
 * needs a target, -EINVAL).  SOCKS5 is asked for a name as a name (moat
 * never resolves it for the proxy, as with socks5h), for an address as
 * that address.  SOCKS4 takes an IPv4 address only (-ENETUNREACH for an
 * IPv6 one, -EHOSTUNREACH for a name), SOCKS4a a name as well.  0, or
 * -errno with nothing open.  u->fd may be polled at once. */
int upstream_start(struct upstream_conn *u, const struct upstream_proxy *p, const char *host, uint16_t port)
    __attribute__((nonnull(1, 2), warn_unused_result));

/* POLLOUT or POLLIN: what the fd waits for in this phase. */
short upstream_events(const struct upstream_conn *u) __attribute__((nonnull));

/* Advance after poll said the fd is ready (or at any time: a step that
 * cannot advance returns 0).  1: done (u->fd is the tunnel, positioned
 * right after the proxy's reply head); 0: not yet; -errno: failed
 * (-ECONNREFUSED when the proxy answered other than 2xx, or a SOCKS
 * proxy refused the credentials or the CONNECT: u->status says what;
 * -EPROTO for a reply that is not the protocol's). */
int upstream_step(struct upstream_conn *u) __attribute__((nonnull, warn_unused_result));

/* Take the fd out (the caller owns it now); u is closed. */
int upstream_take_fd(struct upstream_conn *u) __attribute__((nonnull));

/* Close the fd and free the request. */
void upstream_close(struct upstream_conn *u) __attribute__((nonnull));

/* Parse a proxy's reply head in b[0..n) (hostile input): "HTTP/1.x NNN
 * reason\r\n", header lines, "\r\n".  > 0: the head's length, *status its
 * code; 0: not complete yet (and n < UPSTREAM_REPLY_MAX); -1: malformed,
 * or longer than UPSTREAM_REPLY_MAX. */
int upstream_parse_reply(const unsigned char *b, size_t n, int *status) __attribute__((nonnull));

/* The scheme of the first Proxy-Authenticate header in a reply head
 * b[0..n) (hostile input), into out ("" when there is none): its first
 * token, letters, digits and '-' only, cut to len - 1. */
void upstream_auth_scheme(const unsigned char *b, size_t n, char *out, size_t len) __attribute__((nonnull));

/* A SOCKS5 CONNECT reply's length from its first n bytes (hostile input):
 * > 0 the whole reply's length, 0 not known yet (fewer than 5 bytes), -1
 * not a reply (version, reserved byte or address type). */
int upstream_socks_reply_len(const unsigned char *b, size_t n) __attribute__((nonnull));

/* A SOCKS4 reply's 8 bytes (hostile input): 1 granted (90), 0 refused
 * (*code: 91-93, what the proxy said), -1 not a SOCKS4 reply (its version
 * byte, or a code SOCKS4 does not have). */
int upstream_socks4_reply(const unsigned char b[8], int *code) __attribute__((nonnull));

#endif
