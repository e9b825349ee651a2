/* bench/netbench: TCP on the loopback, for the network fence's figures
 * (bench/measure.py netfence).  One binary, three roles:
 *
 *   netbench serve BYTES
 *        listens on 127.0.0.1 on three ephemeral ports and prints them on
 *        one line, "LATENCY SINK SOURCE"; then serves until its standard
 *        input reaches end of file:
 *          LATENCY  accepts and closes (the connect loop's peer), every
 *                   20 ms rather than when a connection arrives: a server
 *                   asleep in poll(2) must be woken by each handshake, and
 *                   on this VM that wakeup, into a halted vCPU, costs as
 *                   much as the connect itself and comes and goes with
 *                   where the server last ran (a connect took 20 or 40 us
 *                   a run); a backlog of 4096 holds 20 ms of connects;
 *          SINK     reads until end of file, then writes one byte back;
 *          SOURCE   writes BYTES, then closes.
 *        One process, one connection at a time: the connect loop needs
 *        only the kernel's handshake, and one bulk transfer runs at a
 *        time.
 *
 *   netbench connect HOST PORT N [nonblock]
 *        N timed connects (after 20 untimed ones), each followed by a close;
 *        prints one JSON object: the median, p90, min and max in µs, the
 *        name's lookup time when HOST is a name (getaddrinfo once, before
 *        the loop: under the fence that is its DNS), and the samples.  The
 *        socket is made with SOCK_CLOEXEC (what curl, Node and Python do),
 *        and each connect is timed alone: socket(2) before, close(2) after
 *        are not in it.  Blocking by default; "nonblock": connect(2) on a
 *        non-blocking socket, then poll(2) for POLLOUT, both timed (what an
 *        event loop does).  Each socket is closed with SO_LINGER {1, 0}
 *        (a reset, set after the connect so the fence never sees it):
 *        thousands of connects would otherwise leave as many TIME_WAIT
 *        sockets behind, and the port search of every later connect grows
 *        with them.
 *
 *   netbench bulk HOST SINK SOURCE BYTES [http | socks5]
 *        sends BYTES to SINK (write(2), 256 KiB at a time, then shutdown
 *        and wait for the server's byte: every byte has arrived), then
 *        reads BYTES from SOURCE until end of file; prints one JSON object
 *        with the seconds of each, connect excluded.
 *
 *   "http" or "socks5" after connect's N or bulk's BYTES: every connection
 *        goes through the proxy the environment names, as a proxy-aware
 *        client's would (under moat, its proxy mode's listeners inside the
 *        sandbox): "http" an HTTP CONNECT to the proxy in https_proxy (or
 *        HTTPS_PROXY), "socks5" a SOCKS5 CONNECT (no authentication) to the
 *        one in all_proxy (or ALL_PROXY), HOST given to the proxy as a name
 *        (socks5h) unless it is an address.  The proxy must be named by an
 *        address ("http://127.0.0.1:3128").  A connect is then timed from
 *        socket(2)'s connect to the proxy's success reply.
 *
 * Plain C, no dependency: bench/run builds it static where the libc
 * allows, so that it runs inside a sandbox's view of the file system. */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

#define WARMUP 20
#define CHUNK  (256 * 1024)

static char buf[CHUNK];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "netbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int listener(unsigned *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0)
		die("listen");
	*port = ntohs(a.sin_port);
	return fd;
}

static int serve(unsigned long long bytes)
{
	unsigned p[3];
	int lfd[3];

	for (int i = 0; i < 3; i++)
		lfd[i] = listener(&p[i]);
	/* The connect loop's peer drains its queue without blocking. */
	if (fcntl(lfd[0], F_SETFL, O_NONBLOCK) < 0)
		die("fcntl");
	printf("%u %u %u\n", p[0], p[1], p[2]);
	fflush(stdout);
	for (;;) {
		/* The latency listener is not polled (see above): f[0] is a
		 * placeholder, drained after every wakeup or 20 ms. */
		struct pollfd f[4] = {{.fd = -1},
				      {.fd = lfd[1], .events = POLLIN},
				      {.fd = lfd[2], .events = POLLIN},
				      {.fd = 0, .events = POLLIN}};
		if (poll(f, 4, 20) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (f[3].revents) { /* the driver closed our stdin: done */
			char c;
			if (read(0, &c, 1) <= 0)
				return 0;
		}
		for (int k = 0; k < 4096; k++) {
			int c = accept4(lfd[0], NULL, NULL, SOCK_CLOEXEC);
			if (c < 0)
				break;
			close(c);
		}
		if (f[1].revents) {
			int c = accept4(lfd[1], NULL, NULL, SOCK_CLOEXEC);
			ssize_t n;
			if (c >= 0) {
				while ((n = read(c, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
					;
				(void)send(c, "k", 1, MSG_NOSIGNAL);
				close(c);
			}
		}
		if (f[2].revents) {
			int c = accept4(lfd[2], NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				for (unsigned long long left = bytes; left > 0;) {
					size_t k = left < sizeof(buf) ? (size_t)left : sizeof(buf);
					ssize_t n = send(c, buf, k, MSG_NOSIGNAL);
					if (n < 0 && errno == EINTR)
						continue;
					if (n <= 0)
						break;
					left -= (unsigned long long)n;
				}
				close(c);
			}
		}
	}
}

static struct sockaddr_storage dst;
static socklen_t dst_len;

/* Through a proxy: its kind, its address, and the target as the proxy is
 * asked for it (HOST and the port set by set_port). */
enum via { VIA_NONE, VIA_HTTP, VIA_SOCKS5 };
static enum via via;
static struct sockaddr_storage proxy;
static socklen_t proxy_len;
static const char *target_host;
static unsigned target_port;

/* HOST as an address, or looked up once (the fenced DNS under moat). */
static double resolve(const char *host)
{
	if (via) /* the proxy looks the name up */
		return -1;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	double t0;
	int rc;

	hints.ai_flags = AI_NUMERICHOST;
	if (getaddrinfo(host, NULL, &hints, &res) == 0) {
		memcpy(&dst, res->ai_addr, res->ai_addrlen);
		dst_len = res->ai_addrlen;
		freeaddrinfo(res);
		return -1; /* an address: nothing was looked up */
	}
	hints.ai_flags = 0;
	t0 = now_s();
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "netbench: %s: %s\n", host, gai_strerror(rc));
		exit(1);
	}
	memcpy(&dst, res->ai_addr, res->ai_addrlen);
	dst_len = res->ai_addrlen;
	freeaddrinfo(res);
	return (now_s() - t0) * 1e6;
}

static void set_port(unsigned port)
{
	target_port = port;
	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = htons((unsigned short)port);
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = htons((unsigned short)port);
}

/* "http" or "socks5": the proxy the environment names for it, an address
 * and a port ("SCHEME://ADDR:PORT", "[v6]:PORT" too). */
static enum via via_arg(const char *arg, const char *host)
{
	static const char *const vars[2][2] = {{"https_proxy", "HTTPS_PROXY"}, {"all_proxy", "ALL_PROXY"}};
	enum via v = strcmp(arg, "http") == 0 ? VIA_HTTP : strcmp(arg, "socks5") == 0 ? VIA_SOCKS5 : VIA_NONE;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
	struct addrinfo *res = NULL;
	char addr[128];
	const char *url, *p, *colon;

	if (v == VIA_NONE)
		return v;
	url = getenv(vars[v - 1][0]);
	if (!url || !*url)
		url = getenv(vars[v - 1][1]);
	if (!url || !(p = strstr(url, "://"))) {
		fprintf(stderr, "netbench: %s names no proxy URL\n", vars[v - 1][1]);
		exit(2);
	}
	p += 3;
	colon = strrchr(p, ':');
	if (!colon || (size_t)(colon - p) >= sizeof(addr)) {
		fprintf(stderr, "netbench: %s: no ADDR:PORT\n", url);
		exit(2);
	}
	if (*p == '[' && colon > p + 1 && colon[-1] == ']')
		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - p - 2), p + 1);
	else
		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - p), p);
	if (getaddrinfo(addr, colon + 1, &hints, &res) != 0) {
		fprintf(stderr, "netbench: %s: the proxy must be an address and a port\n", url);
		exit(2);
	}
	memcpy(&proxy, res->ai_addr, res->ai_addrlen);
	proxy_len = res->ai_addrlen;
	freeaddrinfo(res);
	target_host = host;
	return v;
}

static int read_full(int fd, void *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = read(fd, (char *)p + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			errno = k ? errno : ECONNRESET;
			return -1;
		}
		got += (size_t)k;
	}
	return 0;
}

/* The proxy's answer to CONNECT: a 2xx status line, the head read to its
 * blank line and no further (what follows is the tunnel's). */
static int http_connect(int fd)
{
	char req[512], head[1024];
	size_t have = 0;
	int n = snprintf(req, sizeof(req), "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", target_host,
			 target_port, target_host, target_port);

	if (n < 0 || (size_t)n >= sizeof(req) || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
		return -1;
	while (have < sizeof(head) - 1) {
		ssize_t k = recv(fd, head + have, sizeof(head) - 1 - have, MSG_PEEK);
		char *end;
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || (size_t)k <= have) {
			errno = k < 0 ? errno : ECONNRESET;
			return -1;
		}
		head[k] = 0;
		end = strstr(head, "\r\n\r\n");
		have = end ? (size_t)(end - head) + 4 : (size_t)k;
		if (read_full(fd, head, have) < 0) /* consume what was peeked */
			return -1;
		if (end) {
			if (strncmp(head, "HTTP/1.1 2", 10) != 0 && strncmp(head, "HTTP/1.0 2", 10) != 0) {
				errno = ECONNREFUSED;
				return -1;
			}
			return 0;
		}
	}
	errno = EPROTO;
	return -1;
}

/* SOCKS5, no authentication, CONNECT to the name (or the address). */
static int socks5_connect(int fd)
{
	unsigned char m[300], r[22];
	size_t n = 0, hl = strlen(target_host);
	struct in_addr a4;
	struct in6_addr a6;

	m[n++] = 5, m[n++] = 1, m[n++] = 0; /* greeting */
	m[n++] = 5, m[n++] = 1, m[n++] = 0; /* request */
	if (inet_pton(AF_INET, target_host, &a4) == 1) {
		m[n++] = 1;
		memcpy(m + n, &a4, 4), n += 4;
	} else if (inet_pton(AF_INET6, target_host, &a6) == 1) {
		m[n++] = 4;
		memcpy(m + n, &a6, 16), n += 16;
	} else {
		if (hl > 255)
			return errno = ENAMETOOLONG, -1;
		m[n++] = 3, m[n++] = (unsigned char)hl;
		memcpy(m + n, target_host, hl), n += hl;
	}
	m[n++] = (unsigned char)(target_port >> 8), m[n++] = (unsigned char)target_port;
	/* Greeting and request at once: the proxy reads them in turn. */
	if (send(fd, m, n, MSG_NOSIGNAL) != (ssize_t)n || read_full(fd, r, 2) < 0)
		return -1;
	if (r[0] != 5 || r[1] != 0)
		return errno = EPROTO, -1;
	if (read_full(fd, r, 4) < 0)
		return -1;
	if (r[1] != 0)
		return errno = ECONNREFUSED, -1;
	if (r[3] != 1 && r[3] != 4)
		return errno = EPROTO, -1;
	return read_full(fd, r, r[3] == 1 ? 4 + 2 : 16 + 2);
}

static int dial(int flags)
{
	const struct sockaddr_storage *to = via ? &proxy : &dst;
	int fd = socket(to->ss_family, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, (const struct sockaddr *)to, via ? proxy_len : dst_len) == 0) {
		if (via == VIA_NONE || (via == VIA_HTTP ? http_connect(fd) : socks5_connect(fd)) == 0)
			return fd;
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (errno == EINPROGRESS) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int e = 0;
		socklen_t l = sizeof(e);
		if (poll(&p, 1, 10000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) == 0 && e == 0)
			return fd;
		errno = e ? e : ETIMEDOUT;
	}
	close(fd);
	return -1;
}

static int connect_loop(const char *host, unsigned port, long n, int nonblock)
{
	double *t = calloc((size_t)n, sizeof(*t)), *s = calloc((size_t)n, sizeof(*s));
	double res_us = resolve(host);
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	long ok = 0, failed = 0;
	int first_errno = 0;

	if (!t || !s)
		die("calloc");
	set_port(port);
	for (long i = -WARMUP; i < n; i++) {
		double t0 = now_s();
		int fd = dial(nonblock ? SOCK_NONBLOCK : 0);
		double dt = (now_s() - t0) * 1e6;
		if (fd < 0) {
			if (!first_errno)
				first_errno = errno;
			failed++;
			continue;
		}
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
		if (i >= 0)
			t[ok++] = dt;
	}
	memcpy(s, t, (size_t)ok * sizeof(*t));
	qsort(s, (size_t)ok, sizeof(*s), bench_cmp_double);
	printf("{\"n\": %ld, \"ok\": %ld, \"failed\": %ld, \"nonblock\": %s, \"via\": \"%s\", ", n, ok, failed,
	       nonblock ? "true" : "false", via == VIA_HTTP ? "http" : via == VIA_SOCKS5 ? "socks5" : "direct");
	if (failed)
		printf("\"first_error\": \"%s\", ", strerror(first_errno));
	if (res_us >= 0)
		printf("\"resolve_us\": %.1f, ", res_us);
	if (ok) {
		double med = ok % 2 ? s[ok / 2] : (s[ok / 2 - 1] + s[ok / 2]) / 2;
		printf("\"median_us\": %.2f, \"p90_us\": %.2f, \"min_us\": %.2f, \"max_us\": %.2f, ", med,
		       s[(ok * 9) / 10], s[0], s[ok - 1]);
	}
	printf("\"samples_us\": [");
	for (long i = 0; i < ok; i++)
		printf("%s%.2f", i ? ", " : "", t[i]);
	printf("]}\n");
	free(t);
	free(s);
	return failed ? 1 : 0;
}

static int bulk(const char *host, unsigned sink, unsigned source, unsigned long long bytes)
{
	unsigned long long got = 0;
	double t0, send_s, recv_s;
	int fd;
	ssize_t n;
	char c;

	(void)resolve(host);
	set_port(sink);
	if ((fd = dial(0)) < 0)
		die("connect to the sink");
	t0 = now_s();
	for (unsigned long long left = bytes; left > 0;) {
		size_t k = left < sizeof(buf) ? (size_t)left : sizeof(buf);
		n = write(fd, buf, k);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("write");
		left -= (unsigned long long)n;
	}
	if (shutdown(fd, SHUT_WR) < 0)
		die("shutdown");
	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		die("the sink's acknowledgement");
	send_s = now_s() - t0;
	close(fd);

	set_port(source);
	if ((fd = dial(0)) < 0)
		die("connect to the source");
	t0 = now_s();
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("read");
		got += (unsigned long long)n;
	}
	recv_s = now_s() - t0;
	close(fd);
	if (got != bytes) {
		fprintf(stderr, "netbench: received %llu bytes of %llu\n", got, bytes);
		return 1;
	}
	printf("{\"bytes\": %llu, \"send_s\": %.6f, \"recv_s\": %.6f}\n", bytes, send_s, recv_s);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && strcmp(argv[1], "serve") == 0)
		return serve(strtoull(argv[2], NULL, 10));
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "connect") == 0) {
		via = argc == 6 ? via_arg(argv[5], argv[2]) : VIA_NONE;
		if (argc == 6 && !via && strcmp(argv[5], "nonblock") != 0)
			goto usage;
		return connect_loop(argv[2], (unsigned)atoi(argv[3]), atol(argv[4]),
				    argc == 6 && strcmp(argv[5], "nonblock") == 0);
	}
	if ((argc == 6 || argc == 7) && strcmp(argv[1], "bulk") == 0) {
		via = argc == 7 ? via_arg(argv[6], argv[2]) : VIA_NONE;
		if (argc == 7 && !via)
			goto usage;
		return bulk(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]), strtoull(argv[5], NULL, 10));
	}
usage:
	fprintf(stderr, "usage: netbench serve BYTES | connect HOST PORT N [nonblock | http | socks5]"
			" | bulk HOST SINK SOURCE BYTES [http | socks5]\n");
	return 2;
}
