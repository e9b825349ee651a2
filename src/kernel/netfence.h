/* The fenced network: a destination allowlist for a command that runs in
 * its own network namespace (only lo).  The kernel mechanism only: which
 * names and destinations are allowed is the caller's (struct
 * netfence_rules).  Facts and figures: /work/shared/docs/network.md.
 *
 *   child (between clone and execve, in the command's user and network
 *   namespace, with its capabilities there; nothing here allocates):
 *     1. netfence_child_dns()      binds UDP and TCP 127.0.0.1:53;
 *     2. PR_SET_NO_NEW_PRIVS (or CAP_SYS_ADMIN in the namespace);
 *     3. netfence_child_install()  loads the fence filter, which returns
 *                                  SECCOMP_RET_USER_NOTIF for connect(2),
 *                                  listen(2) and bind(2), and gets the
 *                                  listener;
 *     4. netfence_child_send()     passes the listener and the two DNS fds
 *                                  to the supervisor over a unix socket;
 *                                  then close all three: the command must
 *                                  not hold them;
 *     5. moat's main filter (kernel/seccomp.h), last, then execve.
 *   Nothing between 3 and 4 may call connect, listen or bind: the call would wait
 *   for a supervisor that does not have the listener yet.
 *
 *   supervisor (moat, outside, in the host's network namespace; never
 *   blocks):  netfence_recv_fds() when the unix socket is readable, then
 *   netfence_new(), then netfence_pollfds() / netfence_timeout_ms() /
 *   poll / netfence_handle() in the caller's poll loop, with
 *   netfence_dns_ready() whenever the rules' lookups make progress,
 *   netfence_free() at the end.
 *
 * What the main filter must allow in allow mode.  Filters stack and the
 * strictest answer wins (KILL > ERRNO > USER_NOTIF > ALLOW), so a connect
 * the main filter refuses never reaches the supervisor:
 *   - socket(2) for AF_INET and AF_INET6, SOCK_STREAM and SOCK_DGRAM
 *     (moat_seccomp_opts.net = MOAT_NET_ALL or MOAT_NET_LOOPBACK);
 *   - connect(2), listen(2), bind(2), sendto(2), sendmsg(2), sendmmsg(2) (it
 *     does not filter them today);
 *   - and it must keep io_uring refused (it does): io_uring's connect runs
 *     in a kernel worker that no seccomp filter sees;
 *   - no other filter with a listener: a second NEW_LISTENER in the same
 *     chain is EBUSY.
 *
 * What the fence decides (the supervisor answers the call itself; the
 * kernel never re-reads the child's sockaddr for an INET decision):
 *   - connect to an INET/INET6 address on a TCP socket of the sandbox's
 *     namespace: connect_ok() says yes: the supervisor connects a socket of
 *     its own (host namespace, non-blocking), copies the child's socket
 *     options onto it and installs it over the child's fd number
 *     (SECCOMP_IOCTL_NOTIF_ADDFD, SETFD) when it is connected: the answer
 *     is 0 (or -EINPROGRESS at once for a non-blocking socket, or when the
 *     socket's SO_SNDTIMEO runs out first, as the kernel answers).
 *     connect_ok() says no: -ECONNREFUSED; but for a loopback address
 *     (127.0.0.0/8, ::1, 0.0.0.0, ::, v4-mapped alike) "no" means "not the
 *     HOST's loopback": the connect stays inside the sandbox's own lo.
 *   - UDP and other non-TCP INET sockets: loopback stays inside the
 *     sandbox; anything else is -ENETUNREACH (no UDP leaves, not even
 *     through the fence: what the namespace itself says).
 *   - connect on a socket of another namespace (one the fence installed):
 *     connected or connecting: -EISCONN / -EALREADY, as the kernel says;
 *     unconnected again (a failed non-blocking connect): decided afresh and
 *     replaced by a new socket when allowed; AF_UNSPEC (disconnect) and
 *     every non-INET address: refused.
 *   - listen on a socket of another namespace: -EPERM.
 *   - bind: on a socket of another namespace -EPERM; on a TCP socket of the
 *     sandbox's, made by the supervisor (Landlock refuses the child's own
 *     TCP binds), ports below 1024 -EACCES as the kernel says to the
 *     child; other sockets' binds CONTINUE.
 *   - sendto/sendmsg/sendmmsg with MSG_FASTOPEN: -EOPNOTSUPP, in the
 *     filter itself (a fast-open send connects an unconnected host socket
 *     to the address of the send, behind the fence's back).
 *   - connect with a non-INET address on a socket of the sandbox: CONTINUE
 *     (see netfence.c for why this is safe, and the one race it leaves).
 * If the supervisor dies, the listener closes, and every connect and
 * listen answers -ENOSYS: the fence fails closed.
 *
 * Limits: a bind(2) before connect cannot be carried over; a socket
 * dup()ed before connect keeps the sandbox's socket under the other
 * number; epoll registrations of the old socket are lost (the kernel
 * removes them with the file). */
#ifndef MOAT_KERNEL_NETFENCE_H
#define MOAT_KERNEL_NETFENCE_H

#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/upstream.h"
#include "util/err.h"

/* ---- child side: async-signal-safe, no allocation, -errno on failure ---- */

/* Bind UDP and TCP sockets on 127.0.0.1:53 in the calling process's network
 * namespace (needs CAP_NET_BIND_SERVICE there: call before the capabilities
 * are dropped; lo must be up).  Both are non-blocking and close-on-exec;
 * the TCP one listens.  Returns 0, or -errno with nothing left open. */
int netfence_child_dns(int *udp_fd, int *tcp_fd) __attribute__((nonnull, warn_unused_result));

/* Load the fence filter for the calling thread (after PR_SET_NO_NEW_PRIVS,
 * before moat's main filter) and return its listener in *listener_fd
 * (close-on-exec).  Returns 1 when the kernel took
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19: once the supervisor has
 * the notification, a signal does not restart the connect -- which would
 * connect upstream twice), 0 when it did not, or -errno. */
int netfence_child_install(int *listener_fd) __attribute__((nonnull, warn_unused_result));

/* Send the three fds over the unix socket `sock` (SCM_RIGHTS, one message,
 * blocking).  Returns 0 or -errno.  The caller still owns its copies. */
int netfence_child_send(int sock, int listener, int dns_udp, int dns_tcp) __attribute__((warn_unused_result));

/* The same with more fds after those three (the proxy mode's listeners,
 * kernel/netproxy.h): fds[0..n), 3 <= n <= NETFENCE_FDS_MAX. */
#define NETFENCE_FDS_MAX 8
int netfence_child_sendv(int sock, const int *fds, size_t n) __attribute__((nonnull, warn_unused_result));

/* The fence's filter as a program, for tests that run it in an interpreter.
 * Static storage; *len receives the instruction count. */
struct sock_filter; /* <linux/filter.h> */
const struct sock_filter *netfence_filter(unsigned short *len) __attribute__((nonnull));

/* ---- supervisor side ---- */

/* Receive what netfence_child_send() sent, without blocking: call it when
 * `sock` is readable.  0 with the three fds (close-on-exec, owned by the
 * caller), or -1 with err (errnum EAGAIN: nothing there yet; errnum 0:
 * end of file, the child closed its end without sending). */
int netfence_recv_fds(int sock, int *listener, int *dns_udp, int *dns_tcp, struct moat_error *err)
    __attribute__((nonnull(2, 3, 4, 5), warn_unused_result));
/* What netfence_child_sendv() sent: 3 to max fds into fds[0..*n). */
int netfence_recv_fdv(int sock, int *fds, size_t max, size_t *n, struct moat_error *err)
    __attribute__((nonnull(2, 4, 5), warn_unused_result));

/* An address: family AF_INET (v4) or AF_INET6 (v6).  A v4-mapped IPv6
 * address is always given as AF_INET. */
struct netfence_addr {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	};
};

#define NETFENCE_QTYPE_A     1
#define NETFENCE_QTYPE_AAAA  28
#define NETFENCE_MAX_ANSWERS 16	 /* addresses per DNS answer */
#define NETFENCE_NAME_MAX    253 /* a DNS name in text, without the final dot */
#define NETFENCE_DNS_TTL     60	 /* seconds, in every answer */

/* What resolve() may say besides a count of addresses. */
#define NETFENCE_RESOLVE_DENIED	 (-1) /* not on the list: NXDOMAIN */
#define NETFENCE_RESOLVE_PENDING (-2) /* being looked up: the query waits (netfence_dns_ready) */
#define NETFENCE_RESOLVE_FAILED	 (-3) /* the upstream lookup failed: SERVFAIL */

/* What the fence decided, for the rules' log (event, below). */
enum netfence_event_kind {
	NETFENCE_EV_ALLOWED,	   /* a connect the rules allowed (then made from the host's namespace) */
	NETFENCE_EV_REFUSED,	   /* a connect the rules refused (ECONNREFUSED; UDP: ENETUNREACH) */
	NETFENCE_EV_LOCAL,	   /* a TCP connect to a loopback address the rules do not allow on the
				    * host: made on the sandbox's own lo instead */
	NETFENCE_EV_NAME_ANSWERED, /* a DNS query answered (addrs: the addresses handed out, maybe none) */
	NETFENCE_EV_NAME_DENIED,   /* a DNS query for a name not on the list (NXDOMAIN) */
	NETFENCE_EV_NAME_FAILED,   /* a DNS query the rules could not answer (SERVFAIL) */
};

struct netfence_event {
	enum netfence_event_kind kind;
	/* connects */
	const struct netfence_addr *addr;
	uint16_t port;
	int protocol; /* the socket's (SO_PROTOCOL): IPPROTO_TCP, _UDP, _MPTCP, ... */
	/* connects: the name the address was last handed out for, or NULL;
	 * DNS: the name asked (printable ASCII: other bytes are '?') */
	const char *name;
	/* DNS */
	int qtype;
	const struct netfence_addr *addrs;
	size_t n_addrs;
};

/* The policy, as callbacks.  They run in the supervisor, inside
 * netfence_handle(): they must not block.  A name the rules are still
 * looking up is NETFENCE_RESOLVE_PENDING: the fence keeps the query (at
 * most 10 s, then SERVFAIL) and asks again when the owner calls
 * netfence_dns_ready(). */
struct netfence_rules {
	void *ctx;
	/* A DNS query for `name` (lower case, no final dot, only [a-z0-9_-]
	 * and dots; names with other bytes, and names that are IPv4 addresses
	 * in inet_aton's forms (netfence_name_is_number), are NXDOMAIN
	 * without asking).
	 * For A and AAAA, fill up to `max` addresses of that family and
	 * return how many (0: the name is allowed but has none: NODATA).
	 * For any other qtype, out is NULL and max 0: only the verdict is
	 * asked, and an allowed name gets NODATA.  Or one of the
	 * NETFENCE_RESOLVE_* codes above. */
	int (*resolve)(void *ctx, const char *name, int qtype, struct netfence_addr *out, size_t max);
	/* May the sandbox connect to a:port (TCP)?  name_or_null is the name
	 * the fenced DNS last handed `a` out for, or NULL.  For a loopback
	 * address (netfence_addr_is_loopback) the question is whether to use
	 * the HOST's loopback; false keeps the connect inside the sandbox's
	 * own lo. */
	bool (*connect_ok)(void *ctx, const struct netfence_addr *a, uint16_t port, const char *name_or_null);
	/* Optional: each decision, as it is made (must not block). */
	void (*event)(void *ctx, const struct netfence_event *ev);
	/* Optional: the host's proxy to make an allowed connect to host:port
	 * through (host: the address as text), or NULL: directly.  Through
	 * it, the fence asks the proxy for a tunnel (CONNECT, kernel/upstream.h)
	 * and installs the socket only once the proxy said 200: the caller's
	 * connect waits for that, non-blocking or not (at most
	 * NETFENCE_UPSTREAM_MS, or its SO_SNDTIMEO: then ETIMEDOUT; a
	 * non-blocking one then hears EINPROGRESS, the socket already
	 * connected), and a proxy's refusal is ECONNREFUSED. */
	const struct upstream_proxy *(*upstream)(void *ctx, const char *host, uint16_t port);
};
#define NETFENCE_UPSTREAM_MS 15000

/* 127.0.0.0/8, 0.0.0.0 (which connect treats as a local address), ::1, ::. */
bool netfence_addr_is_loopback(const struct netfence_addr *a) __attribute__((nonnull));

/* Is `name` (a host name's characters, [a-z0-9_-] and dots) an IPv4
 * address in one of the forms inet_aton reads ("127.1", "0x7f.0.0.1",
 * "017.0.0.1", "2130706433", "1.2.3.4")?  The host's resolver
 * (getaddrinfo) takes such a "name" for that address without asking DNS,
 * so it is no name an allowlist of names can judge.  The address into
 * *out when out is not NULL. */
bool netfence_name_is_number(const char *name, struct in_addr *out) __attribute__((nonnull(1)));

struct netfence;

/* Take over the listener and the two DNS fds (closed by netfence_free, and
 * on failure).  *r is copied.  The sandbox's namespace is the one dns_udp
 * was bound in.  NULL with err on failure. */
struct netfence *netfence_new(int listener, int dns_udp, int dns_tcp, const struct netfence_rules *r,
			      struct moat_error *err) __attribute__((nonnull(4, 5), warn_unused_result));

/* Every descriptor of the fence is closed when it returns: the listener,
 * the DNS sockets, its pending connects, what it keeps between
 * notifications (pidfds, fdinfo files), and those of the threads that
 * wait on connects inside the sandbox, which it disconnects and waits for
 * (at most 1 s). */
void netfence_free(struct netfence *nf);

/* How many pollfds the fence may ask for at once. */
#define NETFENCE_MAX_PENDING	 64 /* connects in flight */
#define NETFENCE_DNS_TCP_CLIENTS 8  /* DNS-over-TCP connections at once */
#define NETFENCE_POLLFDS_MAX	 (3 + NETFENCE_MAX_PENDING + NETFENCE_DNS_TCP_CLIENTS)

/* Fill fds[0..] with what to poll now (at most max, which should be
 * NETFENCE_POLLFDS_MAX) and return the count.  Call it before every poll:
 * the set changes as connects come and go.  Pass the same entries, with
 * the revents poll set, to netfence_handle(). */
size_t netfence_pollfds(struct netfence *nf, struct pollfd *fds, size_t max) __attribute__((nonnull));

/* The poll timeout the fence needs (a connect's SO_SNDTIMEO, idle DNS
 * clients, a periodic check that waiting callers are still alive), in ms;
 * -1 when it needs none. */
int netfence_timeout_ms(const struct netfence *nf) __attribute__((nonnull));

/* Handle what poll reported in fds[0..n) (entries netfence_pollfds gave;
 * others are ignored), and any timeouts that fell due.  Never blocks.
 * Returns 0; 1 once no process uses the filter any more (the listener hung
 * up: the fence is done); -1 with err when the listener itself fails. */
int netfence_handle(struct netfence *nf, const struct pollfd *fds, size_t n, struct moat_error *err)
    __attribute__((nonnull(1, 4), warn_unused_result));

/* The rules' lookups made progress: answer the queries that waited for
 * them (those still pending wait on).  Never blocks. */
void netfence_dns_ready(struct netfence *nf) __attribute__((nonnull));

struct netfence_stats {
	unsigned long forwarded;   /* connects installed from the host namespace */
	unsigned long refused;	   /* connects, listens and binds the fence refused */
	unsigned long local;	   /* connects, listens and binds kept inside the sandbox */
	unsigned long continued;   /* non-INET connects, non-TCP binds let through (CONTINUE) */
	unsigned long dns_queries; /* DNS queries answered */
	unsigned long dns_denied;  /* of which NXDOMAIN */
	unsigned long failures;	   /* notifications that failed in the supervisor */
	unsigned long via_upstream; /* of the connects forwarded, through the host's proxy */
	struct upstream_refusals upstream_refused; /* ... and those the host's proxy refused */
};
void netfence_get_stats(const struct netfence *nf, struct netfence_stats *out) __attribute__((nonnull));

#endif
