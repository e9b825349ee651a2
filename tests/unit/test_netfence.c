/* The fenced network (kernel/netfence.h) on the real kernel, as root and as
 * an unprivileged user.  Three processes:
 *
 *   main        the host side of the test: TCP servers on the host's
 *               loopback (127.0.0.2:P allowed for "allowed.test", the same
 *               address on another port Q, 127.0.0.3:P denied), a UDP
 *               listener on 127.0.0.2:U; it counts what reaches them and
 *               prints the TAP lines the sandbox reports;
 *   supervisor  receives the fence's fds and serves them in a poll loop
 *               with the rules below, in the host's network namespace;
 *               "slow.test" is looked up slowly (300 ms): its queries
 *               wait, the others do not; at the end it frees the fence
 *               and counts its descriptors against those it had before;
 *   sandbox     a new user, network and mount namespace (only lo), with a
 *               resolv.conf naming 127.0.0.1: first the control (the same
 *               clients without the fence reach nothing of the host), then
 *               the fence (DNS, filter, fds to the supervisor) and every
 *               client; last the supervisor is killed and connects must
 *               fail (fail closed).
 *
 * Each refusal is checked against a control that would pass without the
 * fence (the errno differs, or the host server counts the connection).
 * Traffic goes to loopback only; every wait is bounded (poll timeouts, an
 * alarm per process). */
#include "tap.h"
#include "nsbox.h"
#include "upproxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/netfence.h"
#include "util/cleanup.h"
#include "util/userns.h"

#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C
#endif
#define X32_BIT	  0x40000000L
#define LATENCY_N 1000

static uint16_t port_p, port_q, port_u;
/* slow.test: asked (CLOCK_MONOTONIC ns) and answered yet. */
static int64_t slow_asked_ns;
static bool slow_ready;
#define SLOW_NS (300 * 1000000LL)

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the rules the supervisor runs ---- */

static struct netfence_addr v4(uint32_t host_order)
{
	struct netfence_addr a = {.family = AF_INET};
	a.v4.s_addr = htonl(host_order);
	return a;
}

static int t_resolve(void *ctx, const char *name, int qtype, struct netfence_addr *out, size_t max)
{
	uint32_t addr;

	(void)ctx;
	bool slow_name = strcmp(name, "slow.test") == 0 || strcmp(name, "slowtcp.test") == 0;
	if (slow_name && qtype == NETFENCE_QTYPE_A && !slow_ready) {
		if (!slow_asked_ns)
			slow_asked_ns = mono_ns();
		return NETFENCE_RESOLVE_PENDING;
	}
	/* "127.2" as a policy could allow a name: the host's resolver reads
	 * it as an address, here as there. */
	if (strcmp(name, "allowed.test") == 0 || strcmp(name, "127.2") == 0 || strcmp(name, "2130706434") == 0)
		addr = 0x7f000002;
	else if (slow_name)
		addr = 0x7f000005;
	else if (strcmp(name, "closed.test") == 0)
		addr = 0x7f000004; /* allowed, and nothing listens there */
	else if (strcmp(name, "up.test") == 0)
		addr = 0x7f000007; /* through the upstream proxy (127.0.0.6) */
	else if (strcmp(name, "upref.test") == 0)
		addr = 0x7f000008; /* likewise, and the proxy refuses it */
	else
		return -1;
	if (qtype != NETFENCE_QTYPE_A || max == 0)
		return 0;
	out[0] = v4(addr);
	return 1;
}

/* Only by name: 127.0.0.2:P is allowed once the DNS handed it out. */
static bool t_connect_ok(void *ctx, const struct netfence_addr *a, uint16_t port, const char *name)
{
	(void)ctx;
	if (a->family != AF_INET || port != port_p || !name)
		return false;
	if (a->v4.s_addr == htonl(0x7f000002))
		return strcmp(name, "allowed.test") == 0;
	if (a->v4.s_addr == htonl(0x7f000004))
		return strcmp(name, "closed.test") == 0;
	if (a->v4.s_addr == htonl(0x7f000007) || a->v4.s_addr == htonl(0x7f000008))
		return strncmp(name, "up", 2) == 0;
	return false;
}

/* The host's proxy (upproxy.h, on 127.0.0.6): for 127.0.0.7 and .8; it
 * takes 127.0.0.7:P to the echo server 127.0.0.2:P and refuses the rest. */
static struct upstream_proxy up;

static const struct upstream_proxy *t_upstream(void *ctx, const char *host, uint16_t port)
{
	(void)ctx, (void)port;
	return strcmp(host, "127.0.0.7") == 0 || strcmp(host, "127.0.0.8") == 0 ? &up : NULL;
}

static uint32_t up_target(const char *host, uint16_t *port)
{
	(void)port;
	return strcmp(host, "127.0.0.7") == 0 ? 0x7f000002 : 0;
}

/* What the sandbox reports: nsbox.h; and kinds of this test's own: the
 * sandbox asks for the supervisor's end, the supervisor says it freed its
 * fence. */
enum { REC_KILL_SUPERVISOR = REC_OWN, REC_FENCE_FREED };

/* ---- sandbox-side clients ---- */

static struct sockaddr_in sin_of(uint32_t host_order, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(host_order);
	return a;
}

/* connect a new TCP socket; returns the fd (>= 0) or -errno. */
static int tcp_connect(uint32_t addr, uint16_t port, bool nonblock)
{
	struct sockaddr_in a = sin_of(addr, port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && !(nonblock && errno == EINPROGRESS)) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Write "ping", read it back (the host server echoes). */
static bool exchange(int fd)
{
	char buf[8] = {0};
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (send(fd, "ping", 4, MSG_NOSIGNAL) != 4 || poll(&p, 1, 3000) != 1)
		return false;
	return recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == 4 && memcmp(buf, "ping", 4) == 0;
}

/* 0: the socket is in this (the sandbox's) namespace; -EPERM: in one this
 * process has no CAP_NET_ADMIN over (the host's). */
static int sock_ns(int fd)
{
	int ns = ioctl(fd, SIOCGSKNS);
	if (ns < 0)
		return -errno;
	close(ns);
	return 0;
}

static size_t dns_query(unsigned char *b, uint16_t id, const char *name, uint16_t qtype)
{
	size_t o = 12;
	const char *p = name;

	memset(b, 0, 12);
	b[0] = (unsigned char)(id >> 8), b[1] = (unsigned char)id, b[2] = 0x01, b[5] = 1;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		b[o++] = (unsigned char)l;
		memcpy(b + o, p, l);
		o += l;
		p += l + (dot ? 1 : 0);
	}
	b[o++] = 0;
	b[o++] = (unsigned char)(qtype >> 8), b[o++] = (unsigned char)qtype, b[o++] = 0, b[o++] = 1;
	return o;
}

/* Ask 127.0.0.1:53 over UDP or TCP; the reply's length or -errno. */
static ssize_t dns_ask(bool tcp, const unsigned char *q, size_t n, unsigned char *r, size_t cap)
{
	struct sockaddr_in a = sin_of(0x7f000001, 53);
	cleanup_close int fd = socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	unsigned char tb[600];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t got;

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -errno;
	if (tcp) {
		tb[0] = (unsigned char)(n >> 8), tb[1] = (unsigned char)n;
		memcpy(tb + 2, q, n);
		if (send(fd, tb, n + 2, MSG_NOSIGNAL) != (ssize_t)(n + 2))
			return -errno;
	} else if (send(fd, q, n, MSG_NOSIGNAL) != (ssize_t)n)
		return -errno;
	if (poll(&p, 1, 2000) != 1)
		return -ETIMEDOUT;
	got = recv(fd, tcp ? tb : r, tcp ? sizeof(tb) : cap, MSG_DONTWAIT);
	if (got < 0)
		return -errno;
	if (!tcp)
		return got;
	if (got < 2 || (size_t)got - 2 > cap)
		return -EBADMSG;
	memcpy(r, tb + 2, (size_t)got - 2);
	return got - 2;
}

static int rcode(const unsigned char *r)
{
	return r[3] & 0xf;
}
static unsigned ancount(const unsigned char *r)
{
	return (unsigned)r[6] << 8 | r[7];
}

/* The first A answer's address (host order), or 0: the question is the
 * one we sent (qlen bytes), the answer name a pointer. */
static uint32_t first_a(const unsigned char *r, ssize_t n, size_t qlen)
{
	if (n < (ssize_t)(qlen + 16) || ancount(r) == 0)
		return 0;
	const unsigned char *a = r + qlen + 12;
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

/* Landlock ABI >= 4 in the sandbox, handling TCP connect with no port
 * allowed: the fence makes every TCP connect for the child, so the child
 * itself never needs that right (netfence.c: what closes the CONTINUE
 * race).  Returns the ABI, or 0 when the kernel has no network rules. */
static int landlock_no_tcp_connect(void)
{
	struct {
		uint64_t fs, net;
	} attr = {0, 1ULL << 1 /* LANDLOCK_ACCESS_NET_CONNECT_TCP */};
	long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1UL /* VERSION */);
	int fd;

	if (abi < 4)
		return 0;
	fd = (int)syscall(444, &attr, sizeof(attr), 0UL);
	if (fd < 0)
		return 0;
	if (syscall(446 /* landlock_restrict_self */, fd, 0UL) < 0)
		abi = 0;
	close(fd);
	return (int)abi;
}

static double us_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e6 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n ? v[n / 2] : 0;
}

/* 0 when a blocking connect succeeds (the socket is closed), else errno. */
static int connect_errno(uint32_t addr, uint16_t port)
{
	int fd = tcp_connect(addr, port, false);

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

static void *thread_connect(void *arg)
{
	int *out = arg;
	*out = tcp_connect(0x7f000002, port_p, false);
	return NULL;
}

/* Before the fence: the same clients reach nothing outside. */
static void control_phase(void)
{
	unsigned char q[300], r[600];
	int fd, fl, e;

	e = connect_errno(0x7f000002, port_p);
	check(e != 0, "[control] without the fence, 127.0.0.2:%u (a host server) is not reached: %s", port_p,
	      strerror(e));
	e = connect_errno(0xc0000201, 443);
	check(e == ENETUNREACH, "[control] without the fence, 192.0.2.1:443 is ENETUNREACH: %s", strerror(e));
	size_t n = dns_query(q, 1, "allowed.test", 1);
	ssize_t got = dns_ask(false, q, n, r, sizeof(r));
	check(got < 0, "[control] without the fence, no DNS answers on 127.0.0.1:53: %s",
	      strerror(got < 0 ? (int)-got : 0));
	/* Fast open on an unconnected socket: whatever it says, not the
	 * filter's EOPNOTSUPP. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = sin_of(0x7f000003, port_p);
	fl = (int)sendto(fd, "x", 1, MSG_FASTOPEN | MSG_NOSIGNAL, (struct sockaddr *)&a, sizeof(a));
	check(fl >= 0 || errno != EOPNOTSUPP, "[control] without the fence, sendto MSG_FASTOPEN is not EOPNOTSUPP: %s",
	      fl < 0 ? strerror(errno) : "sent");
	close(fd);
}

static void dns_checks(void)
{
	unsigned char q[300], r[600];
	size_t n;
	ssize_t got;
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	int rc;

	rc = getaddrinfo("allowed.test", NULL, &hints, &ai);
	check(rc == 0 && ai && ((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr == htonl(0x7f000002),
	      "getaddrinfo(allowed.test) through the fenced DNS gives 127.0.0.2 (%s)", rc ? gai_strerror(rc) : "ok");
	if (ai)
		freeaddrinfo(ai);
	ai = NULL;
	rc = getaddrinfo("denied.test", NULL, &hints, &ai);
	check(rc == EAI_NONAME, "getaddrinfo(denied.test) is EAI_NONAME (%s)", rc ? gai_strerror(rc) : "resolved!");
	if (ai)
		freeaddrinfo(ai);

	n = dns_query(q, 7, "Allowed.Test", 1);
	got = dns_ask(false, q, n, r, sizeof(r));
	check(got > 0 && rcode(r) == 0 && ancount(r) == 1 && first_a(r, got, n) == 0x7f000002 && r[0] == 0 && r[1] == 7,
	      "UDP A query (mixed case) is answered 127.0.0.2, with the query's id");
	n = dns_query(q, 8, "denied.test", 1);
	got = dns_ask(false, q, n, r, sizeof(r));
	check(got >= 12 && rcode(r) == 3 && ancount(r) == 0, "a denied name is NXDOMAIN (rcode %d)",
	      got >= 12 ? rcode(r) : -1);
	/* A name the host's resolver reads as an IPv4 address (inet_aton's
	 * forms) is no name: NXDOMAIN, without asking the rules (which here
	 * would answer 127.0.0.2, as getaddrinfo would). */
	static const char *const numbers[] = {"127.2", "2130706434"};
	for (size_t i = 0; i < ARRAY_LEN(numbers); i++) {
		n = dns_query(q, (uint16_t)(40 + i), numbers[i], 1);
		got = dns_ask(false, q, n, r, sizeof(r));
		check(got >= 12 && rcode(r) == 3 && ancount(r) == 0,
		      "a query for %s (an address to getaddrinfo) is NXDOMAIN (rcode %d, %d answers)", numbers[i],
		      got >= 12 ? (int)rcode(r) : -1, got >= 12 ? (int)ancount(r) : -1);
	}
	n = dns_query(q, 9, "allowed.test", 16 /* TXT */);
	got = dns_ask(false, q, n, r, sizeof(r));
	check(got >= 12 && rcode(r) == 0 && ancount(r) == 0, "a TXT query for an allowed name gets no answer (NODATA)");
	n = dns_query(q, 10, "allowed.test", 28 /* AAAA */);
	got = dns_ask(false, q, n, r, sizeof(r));
	check(got >= 12 && rcode(r) == 0 && ancount(r) == 0, "AAAA for a name with only A: NODATA");
	n = dns_query(q, 11, "allowed.test", 1);
	got = dns_ask(true, q, n, r, sizeof(r));
	check(got > 0 && rcode(r) == 0 && first_a(r, got, n) == 0x7f000002, "a TCP A query is answered 127.0.0.2");
	/* Hostile input: a label longer than 63, a compression pointer in
	 * the question, a truncated question, a response.  The first three
	 * are FORMERR; a response gets no reply; the server still answers. */
	n = dns_query(q, 12, "allowed.test", 1);
	q[12] = 64;
	got = dns_ask(false, q, n, r, sizeof(r));
	check(got >= 12 && rcode(r) == 1, "a label of 64 bytes is FORMERR");
	n = dns_query(q, 13, "allowed.test", 1);
	q[12] = 0xc0;
	got = dns_ask(false, q, n, r, sizeof(r));
	check(got >= 12 && rcode(r) == 1, "a compression pointer in the question is FORMERR");
	n = dns_query(q, 14, "allowed.test", 1);
	got = dns_ask(false, q, n - 3, r, sizeof(r));
	check(got >= 12 && rcode(r) == 1, "a truncated question is FORMERR");
	n = dns_query(q, 15, "allowed.test", 1);
	q[2] |= 0x80;
	got = dns_ask(false, q, n, r, sizeof(r));
	check(got == -ETIMEDOUT, "a response sent to the server gets no reply");
	n = dns_query(q, 16, "closed.test", 1);
	got = dns_ask(false, q, n, r, sizeof(r));
	check(got > 0 && first_a(r, got, n) == 0x7f000004, "closed.test resolves (127.0.0.4), the server lives on");

	/* A name the rules are still looking up: its query waits (over UDP
	 * and TCP), and the others are answered meanwhile. */
	{
		struct sockaddr_in ns = sin_of(0x7f000001, 53);
		cleanup_close int slow = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		unsigned char sq[300], sr[600];
		size_t sn = dns_query(sq, 17, "slow.test", 1);
		struct pollfd sp = {.fd = slow, .events = POLLIN};
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		bool sent = slow >= 0 && sendto(slow, sq, sn, 0, (struct sockaddr *)&ns, sizeof(ns)) == (ssize_t)sn;
		/* The same over TCP, on a connection of its own. */
		cleanup_close int slowt = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		unsigned char tq[302], tr[600];
		size_t tn = dns_query(tq + 2, 19, "slowtcp.test", 1);
		tq[0] = (unsigned char)(tn >> 8), tq[1] = (unsigned char)tn;
		bool tsent = slowt >= 0 && connect(slowt, (struct sockaddr *)&ns, sizeof(ns)) == 0 &&
			     send(slowt, tq, tn + 2, MSG_NOSIGNAL) == (ssize_t)(tn + 2);
		n = dns_query(q, 18, "allowed.test", 1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		got = dns_ask(true, q, n, r, sizeof(r));
		double fast = us_since(&t1);
		check(got > 0 && first_a(r, got, n) == 0x7f000002 && fast < 150e3,
		      "while slow.test is being looked up, allowed.test is answered at once over TCP (%.1f ms)",
		      fast / 1e3);
		ssize_t sg = sent && poll(&sp, 1, 3000) == 1 ? recv(slow, sr, sizeof(sr), 0) : -1;
		double waited = us_since(&t0);
		check(sg > 0 && rcode(sr) == 0 && first_a(sr, sg, sn) == 0x7f000005 && waited >= 250e3,
		      "the UDP query for slow.test waited for its lookup (%.0f ms) and got its answer", waited / 1e3);
		struct pollfd tp = {.fd = slowt, .events = POLLIN};
		ssize_t tg = tsent && poll(&tp, 1, 3000) == 1 ? recv(slowt, tr, sizeof(tr), 0) : -1;
		check(tg > 2 && rcode(tr + 2) == 0 && first_a(tr + 2, tg - 2, tn) == 0x7f000005,
		      "and the TCP query for slowtcp.test, asked at the same time, got its answer too");
	}
}

/* Through the host's proxy (rules.upstream): the fence asks it for a
 * tunnel to the address and installs the socket once it said 200. */
static void upstream_checks(void)
{
	unsigned char q[300], r[600];
	size_t n = dns_query(q, 30, "up.test", 1);
	ssize_t got = dns_ask(false, q, n, r, sizeof(r));
	int fd, e = -1;
	socklen_t l = sizeof(e);

	check(got > 0 && first_a(r, got, n) == 0x7f000007, "up.test resolves (127.0.0.7)");
	n = dns_query(q, 31, "upref.test", 1);
	got = dns_ask(false, q, n, r, sizeof(r));
	fd = tcp_connect(0x7f000007, port_p, false);
	check(fd >= 0 && exchange(fd),
	      "blocking connect to up.test goes through the host's proxy (a tunnel to 127.0.0.7:%u) and echoes",
	      port_p);
	check(fd >= 0 && sock_ns(fd) == -EPERM, "  on a socket of the supervisor's");
	if (fd >= 0)
		close(fd);
	fd = tcp_connect(0x7f000007, port_p, true);
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	if (fd >= 0 && poll(&p, 1, 3000) == 1)
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
	check(fd >= 0 && e == 0 && exchange(fd),
	      "a non-blocking connect through it too (its connect waits for the 200)");
	if (fd >= 0)
		close(fd);
	e = connect_errno(0x7f000008, port_p);
	check(got > 0 && e == ECONNREFUSED, "upref.test, which the host's proxy refuses (403): ECONNREFUSED: %s",
	      strerror(e));
}

static void connect_checks(void)
{
	int fd, one = 1, v = 0, e;
	socklen_t l = sizeof(v);
	struct pollfd p;
	struct sockaddr_in a;

	/* Blocking, allowed, with options set before connect. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	a = sin_of(0x7f000002, port_p);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	e = connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	check(e == 0 && exchange(fd), "blocking connect to allowed.test (127.0.0.2:%u) succeeds and echoes: %s", port_p,
	      strerror(e));
	check(sock_ns(fd) == -EPERM, "that socket is the supervisor's, from the host namespace (SIOCGSKNS EPERM)");
	v = 0;
	getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l);
	int ka = 0;
	l = sizeof(ka);
	getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &ka, &l);
	check(v == 1 && ka == 1, "TCP_NODELAY and SO_KEEPALIVE set before connect survive the replacement");
	e = listen(fd, 4) < 0 ? errno : 0;
	check(e == EPERM, "listen on the injected socket is EPERM: %s", strerror(e));
	a = sin_of(0x7f000003, port_p);
	e = connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	check(e == EISCONN, "a second connect on it, to 127.0.0.3, is EISCONN: %s", strerror(e));
	struct sockaddr un = {.sa_family = AF_UNSPEC};
	e = connect(fd, &un, sizeof(un)) < 0 ? errno : 0;
	check(e == EPERM, "an AF_UNSPEC reconnect on it is EPERM: %s", strerror(e));
	check(exchange(fd), "and it is still connected to the allowed server");
	close(fd);

	/* Non-blocking. */
	fd = tcp_connect(0x7f000002, port_p, true);
	p = (struct pollfd){.fd = fd, .events = POLLOUT};
	e = -1;
	l = sizeof(e);
	if (fd >= 0 && poll(&p, 1, 3000) == 1)
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
	check(fd >= 0 && e == 0 && exchange(fd), "non-blocking connect to allowed.test completes via poll and echoes");
	if (fd >= 0)
		close(fd);

	e = connect_errno(0xc0000201, 443);
	check(e == ECONNREFUSED, "denied 192.0.2.1:443 is ECONNREFUSED, the fence's answer (control: ENETUNREACH): %s",
	      strerror(e));
	e = connect_errno(0x7f000002, port_q);
	check(e == ECONNREFUSED, "the allowed address on another port (%u, a host server) is refused: %s", port_q,
	      strerror(e));
	e = connect_errno(0x7f000003, port_p);
	check(e == ECONNREFUSED, "denied host server 127.0.0.3:%u is refused: %s", port_p, strerror(e));

	/* Pitfall 1: a failed non-blocking connect leaves the injected host
	 * socket unconnected.  It must not be connectable elsewhere. */
	fd = tcp_connect(0x7f000004, port_p, true);
	p = (struct pollfd){.fd = fd, .events = POLLOUT};
	e = 0;
	l = sizeof(e);
	if (fd >= 0 && poll(&p, 1, 3000) == 1)
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
	check(fd >= 0 && e == ECONNREFUSED && sock_ns(fd) == -EPERM,
	      "non-blocking connect to closed.test fails (ECONNREFUSED) on an injected host socket: %s", strerror(e));
	if (fd >= 0) {
		a = sin_of(0x7f000003, port_p);
		e = connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
		check(e == ECONNREFUSED, "connecting that unconnected host socket to 127.0.0.3 is refused: %s",
		      strerror(e));
		e = sendto(fd, "x", 1, MSG_FASTOPEN | MSG_NOSIGNAL, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
		check(e == EOPNOTSUPP, "sendto MSG_FASTOPEN to 127.0.0.3 on it is EOPNOTSUPP: %s", strerror(e));
		struct msghdr m = {.msg_name = &a, .msg_namelen = sizeof(a)};
		e = sendmsg(fd, &m, MSG_FASTOPEN | MSG_NOSIGNAL) < 0 ? errno : 0;
		check(e == EOPNOTSUPP, "sendmsg MSG_FASTOPEN on it is EOPNOTSUPP: %s", strerror(e));
		struct mmsghdr mm = {.msg_hdr = m};
		e = sendmmsg(fd, &mm, 1, MSG_FASTOPEN | MSG_NOSIGNAL) < 0 ? errno : 0;
		check(e == EOPNOTSUPP, "sendmmsg MSG_FASTOPEN on it is EOPNOTSUPP: %s", strerror(e));
		e = listen(fd, 4) < 0 ? errno : 0;
		check(e == EPERM, "listen on it is EPERM (would open a port on the host): %s", strerror(e));
		close(fd);
	}

	/* UDP: nothing leaves. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	a = sin_of(0x7f000002, port_u);
	check(sendto(fd, "udp", 3, 0, (struct sockaddr *)&a, sizeof(a)) == 3,
	      "a UDP datagram to 127.0.0.2:%u is sent (it stays in the sandbox's lo)", port_u);
	a = sin_of(0xc0000201, 53);
	e = connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	check(e == ENETUNREACH, "UDP connect to 192.0.2.1 is ENETUNREACH: %s", strerror(e));
	close(fd);

	/* The sandbox's own loopback: listen and connect stay inside. */
	{
		cleanup_close int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in me = sin_of(0x7f000001, 0);
		socklen_t ml = sizeof(me);
		int lrc = -1, c = -1, acc = -1;
		if (bind(ls, (struct sockaddr *)&me, sizeof(me)) == 0 &&
		    getsockname(ls, (struct sockaddr *)&me, &ml) == 0)
			lrc = listen(ls, 4);
		if (lrc == 0)
			c = tcp_connect(0x7f000001, ntohs(me.sin_port), false);
		if (c >= 0)
			acc = accept(ls, NULL, NULL);
		check(lrc == 0 && c >= 0 && acc >= 0 && sock_ns(c) == 0 && send(c, "x", 1, 0) == 1,
		      "listen and connect on the sandbox's own 127.0.0.1 work and stay in its namespace");
		if (c >= 0)
			close(c);
		if (acc >= 0)
			close(acc);
	}
	/* v4-mapped IPv6 to the allowed server. */
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port_p)};
		inet_pton(AF_INET6, "::ffff:127.0.0.2", &a6.sin6_addr);
		e = connect(fd, (struct sockaddr *)&a6, sizeof(a6)) < 0 ? errno : 0;
		check(e == 0 && exchange(fd), "AF_INET6 connect to ::ffff:127.0.0.2 (v4-mapped) is allowed: %s",
		      strerror(e));
		close(fd);
	}
	/* A thread's connect: the notification carries a thread id. */
	{
		pthread_t t;
		int tfd = -1;
		if (pthread_create(&t, NULL, thread_connect, &tfd) == 0)
			pthread_join(t, NULL);
		check(tfd >= 0 && exchange(tfd), "a connect from a second thread is allowed: %s",
		      strerror(tfd < 0 ? -tfd : 0));
		if (tfd >= 0)
			close(tfd);
	}
	/* The installed socket keeps the close-on-exec bit of the one it
	 * replaces: set and clear in turn under the same fd number (the
	 * supervisor reads the bit from fdinfo and keeps that file open from
	 * one connect to the next: it must see each new socket's bit). */
	{
		int good = 0;
		for (int k = 0; k < 6; k++) {
			bool cloexec = k % 2 == 0;
			struct sockaddr_in dst = sin_of(0x7f000002, port_p);
			int s = socket(AF_INET, SOCK_STREAM | (cloexec ? SOCK_CLOEXEC : 0), 0);
			if (s >= 0 && connect(s, (struct sockaddr *)&dst, sizeof(dst)) == 0 && sock_ns(s) != 0 &&
			    !!(fcntl(s, F_GETFD) & FD_CLOEXEC) == cloexec)
				good++;
			if (s >= 0)
				close(s);
		}
		check(good == 6,
		      "an installed socket keeps the close-on-exec bit it replaces, set and clear in turn (%d of 6)",
		      good);
	}
	/* Other ABIs are killed: an x32 getpid. */
	{
		pid_t k = fork();
		int st = 0;
		if (k == 0) {
			syscall(39 | X32_BIT);
			_exit(0);
		}
		if (k > 0)
			waitpid(k, &st, 0);
		check(k > 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "an x32 syscall is killed (SIGSYS)");
	}
}

/* ---- a command that tries to stall the supervisor ----
 *
 * O_NONBLOCK belongs to the socket's file, which the command shares with
 * the supervisor's copy (pidfd_getfd).  Attackers connect non-blocking
 * sockets to a sandbox-local listener whose accept queue is full (its SYNs
 * are dropped, so a blocking connect waits for the retries, about two
 * minutes), while a flipper thread clears and sets O_NONBLOCK on them: a
 * supervisor that connects the command's socket on its own loop would
 * block there, and with it every other answer.  Meanwhile a prober asks
 * the fenced DNS every 20 ms: each answer must come fast. */
#define STALL_ATTACKERS 32
static pthread_mutex_t stall_lock = PTHREAD_MUTEX_INITIALIZER;
static int stall_fds[STALL_ATTACKERS];
static volatile int stall_stop;
static uint16_t stall_port;
static unsigned long stall_tries;

static void *stall_attacker(void *arg)
{
	int k = (int)(intptr_t)arg;
	struct sockaddr_in a = sin_of(0x7f000001, stall_port);

	while (!stall_stop) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		pthread_mutex_lock(&stall_lock);
		stall_fds[k] = fd;
		pthread_mutex_unlock(&stall_lock);
		/* May block for good when the flag was cleared in time: then
		 * this thread is done, and the supervisor must not be. */
		(void)connect(fd, (struct sockaddr *)&a, sizeof(a));
		__atomic_add_fetch(&stall_tries, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&stall_lock);
		stall_fds[k] = -1;
		close(fd);
		pthread_mutex_unlock(&stall_lock);
	}
	return NULL;
}

/* Mostly non-blocking, so that most tries return at once and the next
 * begins; blocking for an instant now and then, which is the window. */
static void *stall_flipper(void *arg)
{
	(void)arg;
	while (!stall_stop) {
		pthread_mutex_lock(&stall_lock);
		for (int k = 0; k < STALL_ATTACKERS; k++)
			if (stall_fds[k] >= 0)
				(void)fcntl(stall_fds[k], F_SETFL, 0);
		for (int k = 0; k < STALL_ATTACKERS; k++)
			if (stall_fds[k] >= 0)
				(void)fcntl(stall_fds[k], F_SETFL, O_NONBLOCK);
		pthread_mutex_unlock(&stall_lock);
		for (volatile int spin = 0; spin < 2000; spin++) {
		}
	}
	return NULL;
}

static void stall_checks(void)
{
	cleanup_close int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cleanup_close int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in me = sin_of(0x7f000001, 0);
	socklen_t ml = sizeof(me);
	pthread_t att[STALL_ATTACKERS], flip;
	double worst = 0;
	int filler = -1, answered = 0, asked = 0;

	/* Backlog 0: one connection fills the accept queue. */
	if (ls < 0 || probe < 0 || bind(ls, (struct sockaddr *)&me, sizeof(me)) < 0 ||
	    getsockname(ls, (struct sockaddr *)&me, &ml) < 0 || listen(ls, 0) < 0) {
		check(0, "a sandbox-local listener for the stall attack: %s", strerror(errno));
		return;
	}
	stall_port = ntohs(me.sin_port);
	for (int k = 0; k < STALL_ATTACKERS; k++)
		stall_fds[k] = -1;
	filler = tcp_connect(0x7f000001, stall_port, false);
	check(filler >= 0, "the listener's accept queue is filled by one connection: %s",
	      strerror(filler < 0 ? -filler : 0));
	for (int k = 0; k < STALL_ATTACKERS; k++)
		pthread_create(&att[k], NULL, stall_attacker, (void *)(intptr_t)k);
	pthread_create(&flip, NULL, stall_flipper, NULL);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (us_since(&t0) < 1.5e6) {
		unsigned char q[300], r[600];
		struct timespec t1;
		size_t n = dns_query(q, (uint16_t)(100 + asked), "allowed.test", 1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		asked++;
		/* sendto, not connect: a connect would itself wait for the
		 * supervisor. */
		struct sockaddr_in ns = sin_of(0x7f000001, 53);
		struct pollfd pu = {.fd = probe, .events = POLLIN};
		if (sendto(probe, q, n, 0, (struct sockaddr *)&ns, sizeof(ns)) == (ssize_t)n &&
		    poll(&pu, 1, 2000) == 1 && recv(probe, r, sizeof(r), 0) > 0)
			answered++;
		double us = us_since(&t1);
		if (us > worst)
			worst = us;
		usleep(20000);
	}
	stall_stop = 1;
	pthread_join(flip, NULL);
	/* Attackers stuck in a connect stay so (detached): the supervisor
	 * answers them when their SYN retries end, or fails them when it is
	 * killed at the end. */
	for (int k = 0; k < STALL_ATTACKERS; k++)
		pthread_detach(att[k]);
	report(REC_COMMENT, 1, "stall attack: %lu connects with O_NONBLOCK flipped under them", stall_tries);
	check(answered == asked && worst < 1e6,
	      "the supervisor kept answering while the command flipped O_NONBLOCK under its connects to a full "
	      "listener (%d of %d DNS answers, the slowest %.0f ms)",
	      answered, asked, worst / 1e3);
	if (filler >= 0)
		close(filler);
}

static void latency(void)
{
	static double t[LATENCY_N];
	size_t ok_n = 0;

	for (size_t i = 0; i < LATENCY_N; i++) {
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int fd = tcp_connect(0x7f000002, port_p, false);
		t[i] = us_since(&t0);
		if (fd >= 0) {
			ok_n++;
			close(fd);
		}
	}
	check(ok_n == LATENCY_N, "%d fenced connects in a row all succeed (%zu did)", LATENCY_N, ok_n);
	report(REC_COMMENT, 1, "fenced connect (filter, supervisor, inject): median %.1f us of %d",
	       median(t, LATENCY_N), LATENCY_N);
}

static _Noreturn void sandbox(int sp, int ctl, uid_t uid, gid_t gid, const char *resolv)
{
	int udp, tcp, listener, rc;
	char k = 0;
	struct pollfd p = {.fd = ctl, .events = POLLIN};

	alarm(60);
	nsbox_enter(CLONE_NEWNET | CLONE_NEWNS, uid, gid);
	bool have_resolv = mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
			   mount(resolv, "/etc/resolv.conf", NULL, MS_BIND, NULL) == 0;
	if (!have_resolv)
		report(REC_COMMENT, 1, "no private resolv.conf (%s): getaddrinfo checks will fail", strerror(errno));

	control_phase();

	if ((rc = netfence_child_dns(&udp, &tcp)) < 0) {
		check(0, "netfence_child_dns: %s", strerror(-rc));
		report(REC_DONE, 1, " ");
		_exit(1);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		check(0, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	int abi = landlock_no_tcp_connect();
	report(REC_COMMENT, 1, "%s",
	       abi ? "the sandbox runs under Landlock without the TCP connect right"
		   : "no Landlock network rules on this kernel");
	rc = netfence_child_install(&listener);
	check(rc >= 0, "the fence filter loads with a listener (WAIT_KILLABLE_RECV: %s)",
	      rc == 1	? "yes"
	      : rc == 0 ? "no"
			: strerror(-rc));
	if (rc < 0) {
		report(REC_DONE, 1, " ");
		_exit(1);
	}
	rc = netfence_child_send(sp, listener, udp, tcp);
	check(rc == 0, "the listener and the DNS fds go to the supervisor: %s", strerror(rc < 0 ? -rc : 0));
	close(listener);
	close(udp);
	close(tcp);
	close(sp);

	/* Before any name was handed out, the allowed address is refused:
	 * the rule is by name, and the connect stays in the sandbox's lo. */
	int e = connect_errno(0x7f000002, port_p);
	check(e == ECONNREFUSED, "127.0.0.2:%u before the DNS handed it out is refused: %s", port_p, strerror(e));
	dns_checks();
	connect_checks();
	upstream_checks();
	stall_checks();
	latency();

	/* Fail closed: the supervisor frees its fence (which must leave no
	 * descriptor of it behind: supervisor_end), then is killed. */
	report(REC_KILL_SUPERVISOR, 1, " ");
	if (poll(&p, 1, 10000) != 1 || read(ctl, &k, 1) != 1 || k != 'k')
		check(0, "the supervisor was killed");
	e = connect_errno(0x7f000002, port_p);
	check(e == ENOSYS, "with the supervisor dead, connect to the allowed server fails (ENOSYS): %s", strerror(e));
	unsigned char q[300], r[600];
	size_t n = dns_query(q, 20, "allowed.test", 1);
	ssize_t got = dns_ask(false, q, n, r, sizeof(r));
	check(got < 0, "with the supervisor dead, DNS fails too: %s", strerror(got < 0 ? (int)-got : 0));
	report(REC_DONE, 1, " ");
	_exit(0);
}

/* The supervisor's open descriptors: all of them, its pidfds, and the
 * /proc/PID/fdinfo files it holds open. */
struct fd_count {
	int all, pidfds, fdinfos;
};

static struct fd_count count_fds(void)
{
	struct fd_count c = {0};
	char path[64], target[256];

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t n;
		if (fcntl(fd, F_GETFD) < 0)
			continue;
		c.all++;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		c.pidfds += strcmp(target, "anon_inode:[pidfd]") == 0;
		c.fdinfos += strncmp(target, "/proc/", 6) == 0 && strstr(target, "/fdinfo/") != NULL;
	}
	return c;
}

/* Told (a byte on `fin`) to end: frees its fence and reports what it
 * holds before and after against what it held before the fence came (the
 * fence's descriptors are its own, netfence_free closes them, its caches
 * of pidfds and fdinfo files with them), then waits to be killed. */
static _Noreturn void supervisor_end(struct netfence *nf, struct fd_count base)
{
	struct fd_count before = count_fds(), after;

	netfence_free(nf);
	after = count_fds();
	check(before.pidfds > base.pidfds && before.fdinfos > base.fdinfos,
	      "before netfence_free the supervisor holds the fence's kept pidfds and fdinfo files (%d and %d; %d "
	      "descriptors, %d before the fence)",
	      before.pidfds - base.pidfds, before.fdinfos - base.fdinfos, before.all, base.all);
	check(after.all == base.all && after.pidfds == base.pidfds && after.fdinfos == base.fdinfos,
	      "after netfence_free no descriptor of the fence is left: %d open, %d before the fence (%d pidfds, %d "
	      "fdinfo files)",
	      after.all, base.all, after.pidfds - base.pidfds, after.fdinfos - base.fdinfos);
	report(REC_FENCE_FREED, 1, " ");
	for (;;)
		pause();
}

static _Noreturn void supervisor(int sp, int fin)
{
	struct pollfd p = {.fd = sp, .events = POLLIN};
	struct netfence_rules rules = {.resolve = t_resolve, .connect_ok = t_connect_ok, .upstream = t_upstream};
	struct moat_error err = {0};
	struct fd_count base = count_fds();
	int l, u, t;

	alarm(90);
	if (poll(&p, 1, 20000) != 1 || netfence_recv_fds(sp, &l, &u, &t, &err) < 0)
		_exit(3);
	struct netfence *nf = netfence_new(l, u, t, &rules, &err);
	if (!nf)
		_exit(4);
	for (;;) {
		struct pollfd fds[NETFENCE_POLLFDS_MAX + 1];
		size_t n = netfence_pollfds(nf, fds, NETFENCE_POLLFDS_MAX);
		int timeout = netfence_timeout_ms(nf), rc;
		if (slow_asked_ns && !slow_ready) {
			int left = (int)((slow_asked_ns + SLOW_NS - mono_ns()) / 1000000) + 1;
			if (timeout < 0 || left < timeout)
				timeout = left < 0 ? 0 : left;
		}
		fds[n] = (struct pollfd){.fd = fin, .events = POLLIN};
		if (poll(fds, n + 1, timeout) < 0 && errno != EINTR)
			_exit(5);
		if (fds[n].revents)
			supervisor_end(nf, base);
		rc = netfence_handle(nf, fds, n, &err);
		if (rc != 0) {
			netfence_free(nf);
			_exit(rc < 0 ? 5 : 0);
		}
		/* The slow lookup ends: its queries are answered now. */
		if (slow_asked_ns && !slow_ready && mono_ns() >= slow_asked_ns + SLOW_NS) {
			slow_ready = true;
			netfence_dns_ready(nf);
		}
	}
}

/* ---- main: the host side ---- */

enum { L_P, L_Q, L_B, L_UDP, L_N };
static int counts[L_N];

static int listen_on(uint32_t addr, uint16_t *port, int type)
{
	struct sockaddr_in a = sin_of(addr, *port);
	socklen_t l = sizeof(a);
	int one = 1, fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || (type == SOCK_STREAM && listen(fd, 4096) < 0) ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static double direct_latency(int lfd)
{
	static double t[LATENCY_N];

	for (size_t i = 0; i < LATENCY_N; i++) {
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int fd = tcp_connect(0x7f000002, port_p, false);
		t[i] = us_since(&t0);
		if (fd >= 0)
			close(fd);
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		if (poll(&p, 1, 1000) == 1) {
			int a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (a >= 0)
				close(a);
		}
	}
	return median(t, LATENCY_N);
}

#define MAX_CONNS 64

int main(void)
{
	int lfd[L_N], conns[MAX_CONNS], sp[2], res[2], ctl[2], fin[2];
	char resolv[] = "/tmp/moat-netfence-resolv.XXXXXX";
	pid_t sup, box;
	bool done = false, skipped = false;
	int status;

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);
	alarm(120);
	for (int tries = 0; tries < 20; tries++) {
		port_p = 0;
		lfd[L_P] = listen_on(0x7f000002, &port_p, SOCK_STREAM);
		lfd[L_B] = lfd[L_P] >= 0 ? listen_on(0x7f000003, &port_p, SOCK_STREAM) : -1;
		if (lfd[L_B] >= 0)
			break;
		if (lfd[L_P] >= 0)
			close(lfd[L_P]);
	}
	port_q = port_u = 0;
	lfd[L_Q] = listen_on(0x7f000002, &port_q, SOCK_STREAM);
	lfd[L_UDP] = listen_on(0x7f000002, &port_u, SOCK_DGRAM);
	if (lfd[L_P] < 0 || lfd[L_B] < 0 || lfd[L_Q] < 0 || lfd[L_UDP] < 0) {
		ok(0, "servers on 127.0.0.2 and 127.0.0.3");
		return tap_done();
	}
	for (int i = 0; i < MAX_CONNS; i++)
		conns[i] = -1;
	double direct = direct_latency(lfd[L_P]);
	uint16_t port_up = 0;
	up_fd = listen_on(0x7f000006, &port_up, SOCK_STREAM);
	if (up_fd < 0) {
		ok(0, "the upstream proxy on 127.0.0.6");
		return tap_done();
	}
	up_map = up_target;
	struct sockaddr_in *ua = (struct sockaddr_in *)&up.addr;
	*ua = sin_of(0x7f000006, port_up);
	up.addr_len = sizeof(*ua);
	up.auth = UPPROXY_AUTH;

	int rfd = mkstemp(resolv);
	if (rfd < 0 || write(rfd, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n", 51) != 51) {
		ok(0, "writing %s", resolv);
		return tap_done();
	}
	fchmod(rfd, 0644);
	close(rfd);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 || pipe2(res, O_CLOEXEC) < 0 ||
	    pipe2(ctl, O_CLOEXEC) < 0 || pipe2(fin, O_CLOEXEC) < 0) {
		ok(0, "socketpair and pipes");
		return tap_done();
	}
	uid_t uid = getuid();
	gid_t gid = getgid();
	sup = fork();
	if (sup == 0) {
		close(sp[1]);
		close(fin[1]);
		res_fd = res[1];
		supervisor(sp[0], fin[0]);
	}
	box = fork();
	if (box == 0) {
		close(sp[0]);
		close(res[0]);
		close(ctl[1]);
		close(fin[0]);
		close(fin[1]);
		res_fd = res[1];
		sandbox(sp[1], ctl[0], uid, gid, resolv);
	}
	close(sp[0]);
	close(sp[1]);
	close(res[1]);
	close(ctl[0]);
	close(fin[0]);
	/* Threads only now: a child forked from a process with threads may
	 * find a lock of the allocator held for good (ASan's). */
	spawn(up_loop, NULL);

	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!done && us_since(&t0) < 100e6) {
		struct pollfd p[1 + L_N + MAX_CONNS];
		int idx[1 + L_N + MAX_CONNS];
		size_t n = 0;
		p[n++] = (struct pollfd){.fd = res[0], .events = POLLIN};
		for (int i = 0; i < L_N; i++)
			p[n] = (struct pollfd){.fd = lfd[i], .events = POLLIN}, idx[n++] = i;
		for (int i = 0; i < MAX_CONNS; i++)
			if (conns[i] >= 0)
				p[n] = (struct pollfd){.fd = conns[i], .events = POLLIN}, idx[n++] = 100 + i;
		if (poll(p, n, 1000) < 0 && errno != EINTR)
			break;
		for (size_t i = 1; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (idx[i] == L_UDP) {
				char b[64];
				while (recv(lfd[L_UDP], b, sizeof(b), MSG_DONTWAIT) >= 0)
					counts[L_UDP]++;
			} else if (idx[i] < L_N) {
				int a;
				while ((a = accept4(lfd[idx[i]], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
					counts[idx[i]]++;
					int slot = -1;
					for (int c = 0; c < MAX_CONNS && slot < 0; c++)
						if (conns[c] < 0)
							slot = c;
					if (slot < 0)
						close(a);
					else
						conns[slot] = a;
				}
			} else {
				int c = idx[i] - 100;
				char b[64];
				ssize_t got = recv(conns[c], b, sizeof(b), MSG_DONTWAIT);
				if (got > 0)
					(void)!send(conns[c], b, (size_t)got, MSG_NOSIGNAL | MSG_DONTWAIT);
				else if (got == 0 || errno != EAGAIN) {
					close(conns[c]);
					conns[c] = -1;
				}
			}
		}
		if (p[0].revents) {
			struct rec r;
			ssize_t got = read(res[0], &r, sizeof(r));
			if (got != (ssize_t)sizeof(r)) {
				done = true;
				break;
			}
			int kind = rec_print(&r, &skipped);
			if (kind == REC_RESULT || kind == REC_COMMENT || kind == REC_SKIP)
				continue;
			if (kind == REC_KILL_SUPERVISOR) {
				/* It frees its fence first: REC_FENCE_FREED. */
				(void)!write(fin[1], "f", 1);
			} else if (kind == REC_FENCE_FREED) {
				kill(sup, SIGKILL);
				waitpid(sup, &status, 0);
				sup = -1;
				(void)!write(ctl[1], "k", 1);
			} else
				done = true;
		}
	}
	ok(done || skipped, "the sandbox finished within the time bound");
	if (sup > 0) {
		kill(sup, SIGKILL);
		waitpid(sup, &status, 0);
	}
	kill(box, SIGKILL);
	waitpid(box, &status, 0);
	unlink(resolv);
	atomic_store(&stop_all, 1);
	if (!skipped) {
		char want[64];
		snprintf(want, sizeof(want), "127.0.0.8:%u", port_p);
		ok(atomic_load(&up_requests) == 3 && strcmp(up_last_target, want) == 0,
		   "the host's proxy got the 3 tunnels asked through it, by address (%d, the last %s)",
		   atomic_load(&up_requests), up_last_target);
		printf("# direct connect on the host: median %.1f us of %d (network.md: 5.5-9; fenced ~41)\n", direct,
		       LATENCY_N);
		ok(counts[L_B] == 0, "the denied host server 127.0.0.3 got no connection (%d)", counts[L_B]);
		ok(counts[L_Q] == 0, "the host server on the other port got no connection (%d)", counts[L_Q]);
		ok(counts[L_UDP] == 0, "the host UDP listener got no datagram (%d)", counts[L_UDP]);
		ok(counts[L_P] >= LATENCY_N, "the allowed host server got the fenced connects (%d)", counts[L_P]);
	}
	return tap_done();
}
