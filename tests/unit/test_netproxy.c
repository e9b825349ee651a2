/* Proxy mode (kernel/netproxy.h) and moat's connects through an upstream
 * proxy (kernel/upstream.h).  Two parts:
 *
 *   the parsers, on tables of good, truncated and hostile input (every
 *   prefix of a good request is "incomplete", never an overread; a few
 *   thousand mutations of each run under ASan in the SAN=1 build);
 *
 *   the module on the real kernel, as root and as an unprivileged user:
 *     main        the host side: servers on the host's loopback (echo on
 *                 127.0.0.2:P for "allowed.test", 127.0.0.3:P denied,
 *                 127.0.0.5:P for "tls.test" counting the bytes it gets,
 *                 a bulk source on 127.0.0.2:Q) and a small CONNECT proxy
 *                 on 127.0.0.4:U that wants credentials (the upstream);
 *                 it counts what reaches each and prints the TAP lines;
 *     supervisor  receives the listeners and serves two proxies in one
 *                 poll loop -- one relaying by buffer copy (3128, 1080),
 *                 one by splice (3129, 1081) -- with the rules below;
 *     sandbox     a new user and network namespace (only lo): binds the
 *                 listeners (netproxy_child_listen), hands them over, and
 *                 runs the clients.
 * Each refusal has a control that passes (the allowed name, the server
 * reached directly), and the host servers' counts show what arrived.
 * Traffic goes to loopback only; every wait is bounded. */
#include "tap.h"
#include "nsbox.h"
#include "upproxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/netfence.h"
#include "kernel/netproxy.h"
#include "kernel/upstream.h"
#include "util/cleanup.h"
#include "util/userns.h"

#define IP2 0x7f000002
#define IP3 0x7f000003
#define IP4 0x7f000004
#define IP5 0x7f000005
#define IP6 0x7f000006 /* nothing listens there */
#define IP7 0x7f000007 /* up.test's address: the upstream connects it to 127.0.0.2 */
#define IP8 0x7f000008 /* up-refused.test's: the upstream refuses it */
#define IP9 0x7f000009 /* hrr.test's: a server that asks for a second ClientHello */

static uint16_t port_p, port_q, port_u;
static size_t bulk_bytes = 64u << 20;

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ================================================================== */
/* Part 1: the parsers                                                 */

static int http(const char *s, struct netproxy_request *r)
{
	return netproxy_parse_http((const unsigned char *)s, strlen(s), r);
}

static void parse_http_checks(void)
{
	struct netproxy_request r;
	static const char *const bad400[] = {
	    "CONNECT a.test HTTP/1.1\r\n\r\n",			      /* no port */
	    "CONNECT a.test:0 HTTP/1.1\r\n\r\n",		      /* port 0 */
	    "CONNECT a.test:65536 HTTP/1.1\r\n\r\n",		      /* port too big */
	    "CONNECT a.test:44x HTTP/1.1\r\n\r\n",		      /* not a number */
	    "CONNECT ::1:443 HTTP/1.1\r\n\r\n",			      /* bare IPv6 */
	    "CONNECT [1.2.3.4]:443 HTTP/1.1\r\n\r\n",		      /* brackets hold IPv6 */
	    "CONNECT a..test:443 HTTP/1.1\r\n\r\n",		      /* empty label */
	    "CONNECT a\x01test:443 HTTP/1.1\r\n\r\n",		      /* a control byte */
	    "CONNECT a%2etest:443 HTTP/1.1\r\n\r\n",		      /* escapes are not names */
	    "CONNECT a.test:443 HTTP/2.0\r\n\r\n",		      /* version */
	    "CONNECT a.test:443\r\n\r\n",			      /* no version */
	    "CONNECT  a.test:443 HTTP/1.1\r\n\r\n",		      /* two spaces */
	    "CONNECT a.test:443 HTTP/1.1\r\nHost a\r\n\r\n",	      /* header without colon */
	    "CONNECT a.test:443 HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n", /* obs-fold */
	    "CONNECT a.test:443 HTTP/1.1\r\nX : 1\r\n\r\n",	      /* space before the colon */
	    "CONNECT a.test:443 HTTP/1.1\rX: 1\r\n\r\n",	      /* a bare CR */
	    "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",		      /* origin form: not a proxy request */
	    "GET http://user@a.test/ HTTP/1.1\r\n\r\n",		      /* userinfo */
	    "GET http:///x HTTP/1.1\r\n\r\n",			      /* no host */
	    "GET http://a.test:99999/ HTTP/1.1\r\n\r\n",	      /* port */
	};
	for (size_t i = 0; i < ARRAY_LEN(bad400); i++)
		ok(http(bad400[i], &r) == -400, "malformed request %zu is 400", i);
	ok(http("GET https://a.test/ HTTP/1.1\r\n\r\n", &r) == -501,
	   "https:// in absolute form is 501 (CONNECT is the way)");
	ok(http("GET ftp://a.test/ HTTP/1.1\r\n\r\n", &r) == -501, "another scheme is 501");
	char nul[] = "CONNECT a.test:443 HTTP/1.1\r\nX: a\0b\r\n\r\n";
	ok(netproxy_parse_http((unsigned char *)nul, sizeof(nul) - 1, &r) == -400, "a NUL in the head is 400");

	const char *c = "CONNECT Api.Example.COM.:443 HTTP/1.1\r\nHost: x\r\n\r\nTLS";
	int rc = http(c, &r);
	ok(rc == (int)strlen(c) - 3 && r.kind == NETPROXY_TUNNEL && !r.t.is_addr && r.t.port == 443,
	   "CONNECT: complete, a tunnel to port 443, the bytes after the head not taken (%d)", rc);
	is_str(r.t.host, "api.example.com", "  the name lower-cased, the final dot dropped");
	for (size_t n = 0; n < strlen(c) - 3; n++)
		if (netproxy_parse_http((const unsigned char *)c, n, &r) != 0) {
			ok(0, "a prefix of %zu bytes is incomplete", n);
			break;
		} else if (n == strlen(c) - 4)
			ok(1, "every prefix of a good CONNECT is incomplete (0), none an error or a read past it");
	rc = http("CONNECT [::ffff:127.0.0.2]:8080 HTTP/1.0\n\n", &r);
	ok(rc > 0 && r.t.is_addr && r.t.addr.family == AF_INET && r.t.port == 8080,
	   "CONNECT to a v4-mapped address in brackets, LF line ends, HTTP/1.0: the IPv4 address");
	is_str(r.t.host, "127.0.0.2", "  written as IPv4");
	rc = http("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", &r);
	ok(rc > 0 && r.t.is_addr && r.t.addr.family == AF_INET6, "CONNECT to [2001:db8::1]:443: an IPv6 address");
	rc = http("CONNECT 10.1.2.3:22 HTTP/1.1\r\n\r\n", &r);
	ok(rc > 0 && r.t.is_addr && r.t.port == 22, "CONNECT to an IPv4 address");
	/* What the host's resolver (getaddrinfo, inet_aton's forms) reads as
	 * an IPv4 address is that address, judged as one: never a name the
	 * allowlist could allow while the connection goes to the address. */
	static const struct {
		const char *req, *addr;
	} numbers[] = {
	    {"CONNECT 127.1:443 HTTP/1.1\r\n\r\n", "127.0.0.1"},
	    {"CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", "127.0.0.1"},
	    {"CONNECT 0x7F.0.0.1:443 HTTP/1.1\r\n\r\n", "127.0.0.1"},
	    {"CONNECT 10.1.2.3.:443 HTTP/1.1\r\n\r\n", "10.1.2.3"},
	    {"GET http://017.1/x HTTP/1.1\r\n\r\n", "15.0.0.1"},
	};
	for (size_t i = 0; i < ARRAY_LEN(numbers); i++) {
		rc = http(numbers[i].req, &r);
		ok(rc > 0 && r.t.is_addr && r.t.addr.family == AF_INET && strcmp(r.t.host, numbers[i].addr) == 0,
		   "a host the resolver reads as %s is that address (%.*s)", numbers[i].addr,
		   (int)strcspn(numbers[i].req, "\r"), numbers[i].req);
	}
	rc = http("CONNECT 1.example:443 HTTP/1.1\r\n\r\n", &r);
	ok(rc > 0 && !r.t.is_addr && strcmp(r.t.host, "1.example") == 0, "  control: 1.example stays a name");

	const char *g = "POST http://a.test:8080/p/q?x=1 HTTP/1.1\r\nHost: evil.test\r\nContent-Length: 3\r\n\r\nabc";
	rc = http(g, &r);
	ok(rc > 0 && r.kind == NETPROXY_FORWARD && r.t.port == 8080 && r.method_len == 4,
	   "absolute form: a request to forward, to port 8080");
	ok(r.path_len == 8 && memcmp(g + r.path_off, "/p/q?x=1", 8) == 0, "  its path and query");
	rc = http("GET http://a.test HTTP/1.1\r\n\r\n", &r);
	ok(rc > 0 && r.t.port == 80 && r.path_len == 0, "absolute form without a path or port: port 80, an empty path");
	rc = http("GET http://a.test?q HTTP/1.1\r\n\r\n", &r);
	ok(rc > 0 && r.path_len == 2, "absolute form with a query only");

	char big[NETPROXY_HEAD_MAX + 64];
	memset(big, 'a', sizeof(big));
	memcpy(big, "CONNECT a.test:443 HTTP/1.1\r\nX: ", 32);
	ok(netproxy_parse_http((unsigned char *)big, sizeof(big), &r) == -431, "a head longer than %d bytes is 431",
	   NETPROXY_HEAD_MAX);
	ok(netproxy_parse_http((unsigned char *)big, 1000, &r) == 0, "  and a part of it is still incomplete");
	char name[300];
	memset(name, 'a', sizeof(name));
	memcpy(name, "CONNECT ", 8);
	memcpy(name + 8 + 64, ":443 HTTP/1.1\r\n\r\n", 17);
	ok(netproxy_parse_http((unsigned char *)name, 8 + 64 + 17, &r) == -400, "a label of 64 is refused");
}

/* The authority a proxy like tinyproxy (or Squid's URL parser) reads out
 * of an absolute-form target: after "http://", up to the first "/", what
 * follows the last "@" (userinfo stripped).  Into out. */
static void tinyproxy_host(const char *target, char *out, size_t cap)
{
	const char *a = target + strlen("http://"), *slash = strchr(a, '/');
	size_t n = slash ? (size_t)(slash - a) : strlen(a);
	const char *at = memrchr(a, '@', n);

	if (at) {
		n -= (size_t)(at + 1 - a);
		a = at + 1;
	}
	snprintf(out, cap, "%.*s", (int)n, a);
}

/* What an upstream proxy is handed for an absolute-form request
 * (netproxy_forward_target): built from the checked authority. */
static void forward_target_checks(void)
{
	static const struct {
		const char *target, *want, *origin, *proxy_reads_raw;
	} cases[] = {
	    {"http://svc.test:8080?@127.0.0.3:8080/", "http://svc.test:8080/?@127.0.0.3:8080/", "/?@127.0.0.3:8080/",
	     "127.0.0.3:8080"},
	    {"http://svc.test:8080#@127.0.0.3:8080/", "http://svc.test:8080/", "/", "127.0.0.3:8080"},
	    {"http://svc.test:8080/a#@127.0.0.3/", "http://svc.test:8080/a", "/a", "svc.test:8080"},
	    {"http://A.Test.?q=1", "http://a.test:80/?q=1", "/?q=1", "A.Test.?q=1"},
	    {"http://a.test", "http://a.test:80/", "/", "a.test"},
	    {"http://[2001:db8::1]:81/x?y#z", "http://[2001:db8::1]:81/x?y", "/x?y", "[2001:db8::1]:81"},
	    {"http://[::ffff:10.1.2.3]/", "http://10.1.2.3:80/", "/", "[::ffff:10.1.2.3]"},
	};
	char req[300], out[300], host[300];
	struct netproxy_request r;
	size_t po = 0;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", cases[i].target);
		size_t n = http(req, &r) > 0 ? netproxy_forward_target(&r, (const unsigned char *)req, out, sizeof(out), &po)
					   : 0;
		ok(n == strlen(cases[i].want) && strcmp(out, cases[i].want) == 0 && strcmp(out + po, cases[i].origin) == 0,
		   "the upstream gets %s for %s (origin form %s)", cases[i].want, cases[i].target, n ? out + po : "-");
		tinyproxy_host(cases[i].target, host, sizeof(host));
		is_str(host, cases[i].proxy_reads_raw, "  control: a tinyproxy-like reader takes %s out of the client's bytes",
		       cases[i].proxy_reads_raw);
		tinyproxy_host(out, host, sizeof(host));
		ok(strncmp(host, r.t.is_addr && r.t.addr.family == AF_INET6 ? "[" : r.t.host,
			   r.t.is_addr && r.t.addr.family == AF_INET6 ? 1 : strlen(r.t.host)) == 0 && !strchr(host, '@'),
		   "  and the checked host (%s) out of what moat sends", host);
	}
	snprintf(req, sizeof(req), "GET http://a.test/%s HTTP/1.1\r\n\r\n", "0123456789");
	ok(http(req, &r) > 0 && netproxy_forward_target(&r, (const unsigned char *)req, out, 27, &po) == 0 &&
	       netproxy_forward_target(&r, (const unsigned char *)req, out, 28, &po) == 27,
	   "a target that does not fit (with its NUL): 0; one that just fits: its length");
}

static void parse_socks_checks(void)
{
	struct netproxy_target t;
	bool noauth = true;
	static const unsigned char g_ok[] = {5, 2, 2, 0}, g_auth[] = {5, 1, 2}, g_v4[] = {4, 1, 0, 80},
				   g_zero[] = {5, 0};

	ok(netproxy_parse_socks_greeting(g_ok, sizeof(g_ok), &noauth) == 4 && noauth,
	   "SOCKS5 greeting offering no-auth among others");
	ok(netproxy_parse_socks_greeting(g_auth, sizeof(g_auth), &noauth) == 3 && !noauth, "  one without it");
	ok(netproxy_parse_socks_greeting(g_v4, sizeof(g_v4), &noauth) == -1, "  SOCKS4 is not SOCKS5");
	ok(netproxy_parse_socks_greeting(g_zero, sizeof(g_zero), &noauth) == -1, "  no methods at all");
	ok(netproxy_parse_socks_greeting(g_ok, 3, &noauth) == 0 && netproxy_parse_socks_greeting(g_ok, 0, &noauth) == 0,
	   "  truncated: incomplete");

	unsigned char dom[] = {5, 1, 0, 3, 12, 'A', 'P', 'I', '.', 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 1, 187};
	ok(netproxy_parse_socks_request(dom, sizeof(dom), &t) == (int)sizeof(dom) && !t.is_addr && t.port == 443,
	   "SOCKS5 CONNECT to a name (socks5h)");
	is_str(t.host, "api.example", "  lower-cased");
	bool all_short = true;
	for (size_t n = 0; n < sizeof(dom); n++)
		all_short = all_short && netproxy_parse_socks_request(dom, n, &t) == 0;
	ok(all_short, "  every prefix is incomplete");
	unsigned char v4[] = {5, 1, 0, 1, 127, 0, 0, 2, 0, 80};
	ok(netproxy_parse_socks_request(v4, sizeof(v4), &t) == 10 && t.is_addr && t.port == 80, "to an IPv4 address");
	unsigned char v6[22] = {5, 1, 0, 4, [19] = 1, [20] = 1, [21] = 187};
	ok(netproxy_parse_socks_request(v6, sizeof(v6), &t) == 22 && t.is_addr && t.addr.family == AF_INET6,
	   "to an IPv6 address");
	unsigned char iptext[] = {5, 1, 0, 3, 9, '1', '2', '7', '.', '0', '.', '0', '.', '3', 0, 80};
	ok(netproxy_parse_socks_request(iptext, sizeof(iptext), &t) > 0 && t.is_addr,
	   "an address written as a name is the address");
	unsigned char short4[] = {5, 1, 0, 3, 5, '1', '2', '7', '.', '1', 0, 80};
	ok(netproxy_parse_socks_request(short4, sizeof(short4), &t) > 0 && t.is_addr &&
	       strcmp(t.host, "127.0.0.1") == 0,
	   "  so is one in a form the resolver reads (127.1: %s)", t.host);
	unsigned char bind[] = {5, 2, 0, 1, 127, 0, 0, 2, 0, 80};
	ok(netproxy_parse_socks_request(bind, sizeof(bind), &t) == -7, "BIND: command not supported (7)");
	unsigned char udp[] = {5, 3, 0, 1, 127, 0, 0, 2, 0, 80};
	ok(netproxy_parse_socks_request(udp, sizeof(udp), &t) == -7, "UDP ASSOCIATE: command not supported (7)");
	unsigned char atyp[] = {5, 1, 0, 9, 0, 0, 0, 0, 0, 0};
	ok(netproxy_parse_socks_request(atyp, sizeof(atyp), &t) == -8, "an unknown address type (8)");
	unsigned char badname[] = {5, 1, 0, 3, 3, 'a', '/', 'b', 0, 80};
	ok(netproxy_parse_socks_request(badname, sizeof(badname), &t) == -4, "a name with a '/' cannot be one (4)");
	unsigned char port0[] = {5, 1, 0, 1, 127, 0, 0, 2, 0, 0};
	ok(netproxy_parse_socks_request(port0, sizeof(port0), &t) == -1, "port 0 (1)");
	unsigned char rsv[] = {5, 1, 7, 1, 127, 0, 0, 2, 0, 80};
	ok(netproxy_parse_socks_request(rsv, sizeof(rsv), &t) == -1, "a reserved byte set (1)");
	unsigned char empty[] = {5, 1, 0, 3, 0, 0, 80};
	ok(netproxy_parse_socks_request(empty, sizeof(empty), &t) == -1, "an empty name (1)");
}

/* A TLS ClientHello, in records of at most `frag` bytes of handshake
 * (0: one record); sni NULL: without a server_name extension. */
static size_t hello(unsigned char *out, size_t cap, const char *sni, size_t frag)
{
	unsigned char hs[600];
	size_t o = 4, ext_at, n = 0, off = 0;

	hs[0] = 1;
	hs[o++] = 3, hs[o++] = 3;
	memset(hs + o, 0x5a, 32), o += 32;
	hs[o++] = 0;			/* session id */
	hs[o++] = 0, hs[o++] = 2;	/* cipher suites */
	hs[o++] = 0x13, hs[o++] = 0x01; /* TLS_AES_128_GCM_SHA256 */
	hs[o++] = 1, hs[o++] = 0;	/* compression: null */
	ext_at = o, o += 2;
	hs[o++] = 0, hs[o++] = 0x2b, hs[o++] = 0, hs[o++] = 3, hs[o++] = 2, hs[o++] = 3, hs[o++] = 4; /* versions */
	if (sni) {
		size_t l = strlen(sni);
		hs[o++] = 0, hs[o++] = 0;
		hs[o++] = (unsigned char)((l + 5) >> 8), hs[o++] = (unsigned char)(l + 5);
		hs[o++] = (unsigned char)((l + 3) >> 8), hs[o++] = (unsigned char)(l + 3);
		hs[o++] = 0;
		hs[o++] = (unsigned char)(l >> 8), hs[o++] = (unsigned char)l;
		memcpy(hs + o, sni, l), o += l;
	}
	hs[ext_at] = (unsigned char)((o - ext_at - 2) >> 8), hs[ext_at + 1] = (unsigned char)(o - ext_at - 2);
	hs[1] = 0, hs[2] = (unsigned char)((o - 4) >> 8), hs[3] = (unsigned char)(o - 4);
	if (!frag)
		frag = o;
	while (off < o && n + 5 + frag <= cap) {
		size_t l = o - off < frag ? o - off : frag;
		out[n++] = 0x16, out[n++] = 3, out[n++] = 1, out[n++] = (unsigned char)(l >> 8),
		out[n++] = (unsigned char)l;
		memcpy(out + n, hs + off, l), n += l, off += l;
	}
	return n;
}

/* A HelloRetryRequest as a server sends it: a ServerHello record whose
 * random is RFC 8446's constant (retry 0: an ordinary ServerHello). */
static size_t server_hello(unsigned char *out, bool retry)
{
	static const unsigned char hrr[32] = {0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c,
					      0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb,
					      0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};
	size_t o = 0;

	out[o++] = 0x16, out[o++] = 3, out[o++] = 3, out[o++] = 0, out[o++] = 44;
	out[o++] = 2, out[o++] = 0, out[o++] = 0, out[o++] = 40;
	out[o++] = 3, out[o++] = 3;
	if (retry)
		memcpy(out + o, hrr, 32);
	else
		memset(out + o, 0x42, 32);
	o += 32;
	out[o++] = 0;			  /* session id */
	out[o++] = 0x13, out[o++] = 0x01; /* the cipher suite */
	out[o++] = 0;			  /* compression */
	out[o++] = 0, out[o++] = 0;	  /* extensions */
	return o;
}

static void parse_sni_checks(void)
{
	unsigned char b[1200];
	char name[NETFENCE_NAME_MAX + 1];
	size_t n = hello(b, sizeof(b), "Tls.Test.", 0);

	ok(netproxy_parse_sni(b, n, name, sizeof(name)) == NETPROXY_SNI_NAME, "a ClientHello with a server_name");
	is_str(name, "tls.test", "  the name, lower-cased, without its final dot");
	bool more = true;
	for (size_t k = 0; k < n; k++)
		more = more && netproxy_parse_sni(b, k, name, sizeof(name)) == NETPROXY_SNI_MORE;
	ok(more, "every prefix of it wants more");
	n = hello(b, sizeof(b), "other.test", 7);
	ok(netproxy_parse_sni(b, n, name, sizeof(name)) == NETPROXY_SNI_NAME && strcmp(name, "other.test") == 0,
	   "the hello split into records of 7 bytes: the name is still found");
	size_t used = 0;
	memcpy(b + n, "\x14\x03\x03\x00\x01\x01", 6);
	ok(netproxy_parse_hello(b, n + 6, name, sizeof(name), &used) == NETPROXY_SNI_NAME && used == n,
	   "  the records that carried it (%zu bytes of %zu), not what follows them", used, n + 6);
	n = hello(b, sizeof(b), "a.test", 0);
	b[4]++, b[n++] = 1; /* one more handshake byte in the record: a second message begins */
	ok(netproxy_parse_sni(b, n, name, sizeof(name)) == NETPROXY_SNI_BAD,
	   "a hello whose record goes on with more handshake bytes: bad (a second hello would go unread)");
	unsigned char sh[64];
	size_t shn = server_hello(sh, true);
	bool unknown = true;
	for (size_t k = 0; k < 43; k++)
		unknown = unknown && netproxy_server_hello_retry(sh, k) == -1;
	ok(netproxy_server_hello_retry(sh, shn) == 1 && unknown,
	   "a HelloRetryRequest is one from its 43rd byte on (not known before)");
	shn = server_hello(sh, false);
	ok(netproxy_server_hello_retry(sh, shn) == 0, "  an ordinary ServerHello is not");
	ok(netproxy_server_hello_retry((const unsigned char *)"\x15\x03\x03\x00\x02\x02\x28", 7) == 0 &&
	       netproxy_server_hello_retry((const unsigned char *)"SSH-2.0", 7) == 0,
	   "  nor an alert, nor what is not TLS, from its first bytes");
	n = hello(b, sizeof(b), NULL, 0);
	ok(netproxy_parse_sni(b, n, name, sizeof(name)) == NETPROXY_SNI_NONE, "a hello without server_name");
	ok(netproxy_parse_sni((const unsigned char *)"GET / HTTP/1.1\r\n", 16, name, sizeof(name)) ==
	       NETPROXY_SNI_NOT_TLS,
	   "plain text is not TLS");
	ok(netproxy_parse_sni((const unsigned char *)"\x16\x01\x02", 3, name, sizeof(name)) == NETPROXY_SNI_NOT_TLS,
	   "0x16 followed by no TLS version is not TLS either (not refused)");
	ok(netproxy_parse_sni((const unsigned char *)"\x16", 1, name, sizeof(name)) == NETPROXY_SNI_MORE,
	   "0x16 alone: wait for the version");
	n = hello(b, sizeof(b), "a.test", 20);
	b[25] = 0x17; /* the second record is application data */
	ok(netproxy_parse_sni(b, n, name, sizeof(name)) == NETPROXY_SNI_BAD,
	   "a record other than handshake before the hello ends: bad");
	n = hello(b, sizeof(b), "a.test", 0);
	b[5] = 2; /* a ServerHello */
	ok(netproxy_parse_sni(b, n, name, sizeof(name)) == NETPROXY_SNI_BAD, "not a ClientHello: bad");
	n = hello(b, sizeof(b), "a.test", 0);
	b[n - 9] = 0xff; /* the server_name list's length past the extension */
	ok(netproxy_parse_sni(b, n, name, sizeof(name)) == NETPROXY_SNI_BAD, "a length past its container: bad");
	n = hello(b, sizeof(b), "a/b.test", 0);
	ok(netproxy_parse_sni(b, n, name, sizeof(name)) == NETPROXY_SNI_BAD,
	   "a server_name that cannot be a name: bad");
	unsigned char huge[9] = {0x16, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff};
	ok(netproxy_parse_sni(huge, sizeof(huge), name, sizeof(name)) == NETPROXY_SNI_BAD,
	   "a hello that says it is 16 MiB long: bad at once");
	unsigned char rec0[5] = {0x16, 3, 1, 0, 0};
	ok(netproxy_parse_sni(rec0, sizeof(rec0), name, sizeof(name)) == NETPROXY_SNI_BAD, "an empty record: bad");
}

static void parse_upstream_checks(void)
{
	int st = 0;
	const char *r = "HTTP/1.1 200 Connection established\r\nVia: x\r\n\r\nSSH-2.0-banner";
	int rc = upstream_parse_reply((const unsigned char *)r, strlen(r), &st);

	ok(rc == (int)(strlen(r) - 14) && st == 200, "an upstream's 200: the head's length, not the bytes after it");
	bool more = true;
	for (size_t k = 0; k < strlen(r) - 14; k++)
		more = more && upstream_parse_reply((const unsigned char *)r, k, &st) == 0;
	ok(more, "  every prefix is incomplete");
	rc = upstream_parse_reply((const unsigned char *)"HTTP/1.0 407 Auth\n\n", 19, &st);
	ok(rc == 19 && st == 407, "a 407 with bare LFs");
	ok(upstream_parse_reply((const unsigned char *)"SSH-2.0-x\r\n\r\n", 13, &st) == -1, "not HTTP: -1");
	ok(upstream_parse_reply((const unsigned char *)"HTTP/1.1 2x0 OK\r\n\r\n", 19, &st) == -1,
	   "a status with a letter: -1");
	unsigned char big[UPSTREAM_REPLY_MAX + 10];
	memset(big, 'a', sizeof(big));
	memcpy(big, "HTTP/1.1 200 OK\r\n", 17);
	ok(upstream_parse_reply(big, sizeof(big), &st) == -1, "a head longer than %d bytes: -1", UPSTREAM_REPLY_MAX);

	/* A 407's Proxy-Authenticate scheme, for moat's note at the end. */
	static const struct {
		const char *head, *scheme, *what;
	} schemes[] = {
	    {"HTTP/1.1 407 Auth\r\nVia: x\r\nProxy-Authenticate: NTLM\r\nProxy-Authenticate: Negotiate\r\n\r\n", "NTLM",
	     "a 407's first Proxy-Authenticate scheme: NTLM"},
	    {"HTTP/1.0 407 Auth\nproxy-authenticate:\t Basic realm=\"a b\"\n\n", "Basic",
	     "  lower case, a tab, parameters after it: Basic"},
	    {"HTTP/1.1 407 Auth\r\nProxy-Authenticate: SomeVeryLongScheme\r\n\r\n", "SomeVer",
	     "  a long one cut to the buffer"},
	    {"HTTP/1.1 407 Auth\r\nX-Proxy-Authenticate: NTLM\r\nProxy-Authenticate", "",
	     "  another header's name, and one cut before its colon: none"},
	    {"HTTP/1.1 407 Auth\r\nProxy-Authenticate: \r\n\r\n", "", "  an empty value: none"},
	};
	for (size_t i = 0; i < ARRAY_LEN(schemes); i++) {
		char scheme[8];
		upstream_auth_scheme((const unsigned char *)schemes[i].head, strlen(schemes[i].head), scheme,
				     sizeof(scheme));
		is_str(scheme, schemes[i].scheme, "%s", schemes[i].what);
	}

	/* A SOCKS5 CONNECT reply's length, from its first bytes. */
	static const unsigned char v4[] = {5, 0, 0, 1, 127, 0, 0, 1, 0, 80}, v6[] = {5, 0, 0, 4, 0},
				   name[] = {5, 0, 0, 3, 7}, badver[] = {4, 0, 0, 1, 0}, badrsv[] = {5, 0, 1, 1, 0},
				   badtype[] = {5, 0, 0, 2, 0};
	ok(upstream_socks_reply_len(v4, sizeof(v4)) == 10 && upstream_socks_reply_len(v6, 5) == 22 &&
	       upstream_socks_reply_len(name, 5) == 4 + 1 + 7 + 2,
	   "a SOCKS5 reply's length: IPv4 10, IPv6 22, a name of 7 bytes 14");
	more = true;
	for (size_t k = 0; k < 5; k++)
		more = more && upstream_socks_reply_len(v4, k) == 0;
	ok(more, "  fewer than 5 bytes: not known yet");
	ok(upstream_socks_reply_len(badver, 5) == -1 && upstream_socks_reply_len(badrsv, 5) == -1 &&
	       upstream_socks_reply_len(badtype, 5) == -1,
	   "  another version, a reserved byte set, an unknown address type: -1");
}

/* One SOCKS4 exchange through upstream_start/upstream_step against a
 * listener of the test's on the loopback: the request's bytes as the
 * proxy reads them, and the reply given.  The proxy's reply is followed
 * by a banner, which must stay in the socket for the tunnel's taker.
 * Returns upstream_step's last result; req and req_len the request seen. */
static bool socks4_proxy_connected;
static int socks4_exchange(bool socks4a, const char *user, const char *host, const unsigned char reply[8],
			   unsigned char *req, size_t *req_len, char *after, size_t after_cap)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s = -1, rc = 0;
	struct upstream_proxy p = {.socks = true, .socks4 = true, .socks4a = socks4a, .auth = user,
				   .auth_len = user ? strlen(user) : 0};
	struct upstream_conn u;

	*req_len = 0;
	after[0] = '\0';
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0)
		abort();
	memcpy(&p.addr, &a, sizeof(a));
	p.addr_len = sizeof(a);
	rc = upstream_start(&u, &p, host, 443);
	if (rc < 0) {
		/* Refused before anything: not even a connection to the proxy. */
		struct pollfd lp = {.fd = l, .events = POLLIN};
		socks4_proxy_connected = poll(&lp, 1, 100) == 1;
		close(l);
		return rc;
	}
	s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	for (int i = 0; i < 200 && rc == 0 && u.phase != UPSTREAM_READING; i++) {
		struct pollfd pf = {.fd = u.fd, .events = upstream_events(&u)};
		(void)poll(&pf, 1, 10);
		rc = upstream_step(&u);
	}
	if (rc == 0) {
		struct pollfd pf = {.fd = s, .events = POLLIN};
		ssize_t n = poll(&pf, 1, 2000) == 1 ? recv(s, req, 600, MSG_DONTWAIT) : -1;
		*req_len = n > 0 ? (size_t)n : 0;
		if (send(s, reply, 8, MSG_NOSIGNAL) != 8 || send(s, "BANNER", 6, MSG_NOSIGNAL) != 6)
			abort();
		for (int i = 0; i < 200 && rc == 0; i++) {
			struct pollfd uf = {.fd = u.fd, .events = upstream_events(&u)};
			(void)poll(&uf, 1, 10);
			rc = upstream_step(&u);
		}
	}
	if (rc == 1) {
		int fd = upstream_take_fd(&u);
		ssize_t n = recv(fd, after, after_cap - 1, MSG_DONTWAIT);
		after[n > 0 ? n : 0] = '\0';
		close(fd);
	} else {
		upstream_close(&u);
	}
	if (s >= 0)
		close(s);
	close(l);
	return rc;
}

static void socks4_checks(void)
{
	static const unsigned char granted[8] = {0, 90, 1, 187, 10, 0, 0, 9}, refused[8] = {0, 91, 0, 0, 0, 0, 0, 0},
				   echoed4[8] = {4, 90, 0, 0, 0, 0, 0, 0}, badver[8] = {5, 90, 0, 0, 0, 0, 0, 0},
				   badcode[8] = {0, 17, 0, 0, 0, 0, 0, 0};
	unsigned char req[600];
	size_t n;
	char after[32];
	int code = 0;

	ok(upstream_socks4_reply(granted, &code) == 1, "a SOCKS4 reply of 90: granted");
	ok(upstream_socks4_reply(refused, &code) == 0 && code == 91, "  91: refused, with its code");
	ok(upstream_socks4_reply(echoed4, &code) == 1, "  a reply with version 4 (some servers echo it): granted");
	ok(upstream_socks4_reply(badver, &code) == -1 && upstream_socks4_reply(badcode, &code) == -1,
	   "  version 5, or a code SOCKS4 does not have: not a reply (-1)");

	int rc = socks4_exchange(false, "moat", "10.0.0.9", granted, req, &n, after, sizeof(after));
	static const unsigned char want4[] = {4, 1, 1, 187, 10, 0, 0, 9, 'm', 'o', 'a', 't', 0};
	ok(rc == 1, "SOCKS4 CONNECT 10.0.0.9:443 through a proxy that grants it: the tunnel stands (%d)", rc);
	ok(n == sizeof(want4) && memcmp(req, want4, n) == 0,
	   "  the request: VN 4, CONNECT, the port, the address, the user id and a NUL (%zu bytes)", n);
	is_str(after, "BANNER", "  what the far end sent after the reply stays in the socket");
	rc = socks4_exchange(true, NULL, "api.example.org", granted, req, &n, after, sizeof(after));
	static const unsigned char want4a[] = {4, 1, 1, 187, 0, 0, 0, 1, 0, 'a', 'p', 'i', '.', 'e', 'x', 'a',
					       'm', 'p', 'l', 'e', '.', 'o', 'r', 'g', 0};
	ok(rc == 1 && n == sizeof(want4a) && memcmp(req, want4a, n) == 0,
	   "SOCKS4a CONNECT to a name: 0.0.0.1, an empty user id, then the name (%d, %zu bytes)", rc, n);
	rc = socks4_exchange(false, NULL, "10.0.0.9", refused, req, &n, after, sizeof(after));
	ok(rc == -ECONNREFUSED, "a proxy that answers 91: ECONNREFUSED (%d)", rc);
	rc = socks4_exchange(false, NULL, "10.0.0.9", badver, req, &n, after, sizeof(after));
	ok(rc == -EPROTO, "a reply that is not SOCKS4's: EPROTO (%d)", rc);
	rc = socks4_exchange(false, NULL, "api.example.org", granted, req, &n, after, sizeof(after));
	ok(rc == -EHOSTUNREACH && !socks4_proxy_connected,
	   "plain SOCKS4 cannot take a name: EHOSTUNREACH, and the proxy was not even connected to (%d)", rc);
	rc = socks4_exchange(true, NULL, "2001:db8::1", granted, req, &n, after, sizeof(after));
	ok(rc == -ENETUNREACH && !socks4_proxy_connected, "nor SOCKS4a an IPv6 address: ENETUNREACH, no connection (%d)",
	   rc);
}

/* Mutations of good inputs through every parser: they must only ever
 * answer, never read out of bounds (ASan) or loop. */
static void mutation_checks(void)
{
	unsigned char seed[4][700], b[700];
	size_t len[4];
	unsigned x = 12345;
	unsigned long answers = 0;
	char name[NETFENCE_NAME_MAX + 1];
	struct netproxy_request r;
	struct netproxy_target t;
	bool noauth;
	int st;

	len[0] = (size_t)snprintf((char *)seed[0], 700, "CONNECT a.test:443 HTTP/1.1\r\nHost: a\r\n\r\n");
	len[1] = (size_t)snprintf((char *)seed[1], 700, "GET http://a.test:80/x HTTP/1.1\r\nA: b\r\n\r\n");
	len[2] = hello(seed[2], 700, "a.test", 50);
	memcpy(seed[3],
	       "\x05\x01\x00\x03\x06"
	       "a.test\x01\xbb",
	       13);
	len[3] = 13;
	for (int i = 0; i < 20000; i++) {
		int k = i % 4;
		size_t n = len[k];
		memcpy(b, seed[k], n);
		for (int m = 0; m < 1 + i % 3; m++) {
			x = x * 1103515245 + 12345;
			b[(x >> 8) % n] = (unsigned char)(x >> 20);
		}
		x = x * 1103515245 + 12345;
		if (x % 5 == 0)
			n = (x >> 8) % n;
		answers += netproxy_parse_http(b, n, &r) >= -501;
		answers += netproxy_parse_sni(b, n, name, sizeof(name)) <= NETPROXY_SNI_BAD;
		answers += netproxy_parse_socks_greeting(b, n, &noauth) >= -1;
		answers += netproxy_parse_socks_request(b, n, &t) >= -8;
		answers += upstream_parse_reply(b, n, &st) >= -1;
		answers += upstream_socks_reply_len(b, n) <= 4 + 1 + 255 + 2;
		{
			char sc[24];
			upstream_auth_scheme(b, n, sc, sizeof(sc));
			answers += strlen(sc) < sizeof(sc);
		}
	}
	ok(answers == 7 * 20000, "20000 mutated requests, hellos and replies: every parser answered each (%lu)",
	   answers);
}

/* ================================================================== */
/* Part 2: on the real kernel                                          */

/* ---- the host side: servers in threads ---- */

/* SRV_HRR: as SRV_ECHO, with a HelloRetryRequest before the first echo. */
enum srv_mode { SRV_ECHO, SRV_SOURCE, SRV_HRR };
struct server {
	int fd;
	enum srv_mode mode;
	atomic_int conns;
	atomic_long bytes; /* received */
};
static struct server srv_a, srv_b, srv_tls, srv_bulk, srv_hrr;

struct served {
	struct server *s;
	int fd;
};

static void *serve_conn(void *arg)
{
	struct served sv = *(struct served *)arg;
	char buf[65536];

	free(arg);
	if (sv.s->mode == SRV_SOURCE) {
		memset(buf, 'x', sizeof(buf));
		for (size_t sent = 0; sent < bulk_bytes;) {
			size_t want = bulk_bytes - sent < sizeof(buf) ? bulk_bytes - sent : sizeof(buf);
			ssize_t n = send(sv.fd, buf, want, MSG_NOSIGNAL);
			if (n <= 0)
				break;
			sent += (size_t)n;
		}
	} else {
		struct pollfd p = {.fd = sv.fd, .events = POLLIN};
		bool retry = sv.s->mode == SRV_HRR;
		while (!stop_all && poll(&p, 1, 200) >= 0) {
			if (!p.revents)
				continue;
			ssize_t n = recv(sv.fd, buf, sizeof(buf), 0);
			if (n <= 0)
				break;
			atomic_fetch_add(&sv.s->bytes, n);
			if (retry) {
				unsigned char sh[64];
				size_t shn = server_hello(sh, true);
				retry = false;
				if (send(sv.fd, sh, shn, MSG_NOSIGNAL) != (ssize_t)shn)
					break;
			}
			if (send(sv.fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
				break;
		}
	}
	close(sv.fd);
	return NULL;
}

static void *server_loop(void *arg)
{
	struct server *s = arg;
	struct pollfd p = {.fd = s->fd, .events = POLLIN};

	while (!stop_all) {
		if (poll(&p, 1, 200) != 1)
			continue;
		int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		atomic_fetch_add(&s->conns, 1);
		struct served *sv = malloc(sizeof(*sv));
		*sv = (struct served){.s = s, .fd = c};
		spawn(serve_conn, sv);
	}
	return NULL;
}

/* The upstream (upproxy.h), as the host's proxy sees the world: up.test's
 * address 127.0.0.7 is 127.0.0.2:P there, and so is upnx.test, a name the
 * host's resolver does not know; up.test asked by name, up-refused.test's
 * address 127.0.0.8 and everything else are refused (403).  So a 200
 * shows which of name and address moat asked for. */
static uint32_t up_target(const char *host, uint16_t *port)
{
	if (strcmp(host, "127.0.0.7") != 0 && strcmp(host, "upnx.test") != 0)
		return 0;
	*port = port_p;
	return IP2;
}

static int listen_on(uint32_t addr, uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(*port)};
	socklen_t l = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(addr);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 256) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* ---- the rules the supervisor runs ---- */

static struct upstream_proxy up;
static int64_t slow_asked;

static bool r_name_ok(void *ctx, const char *name, uint16_t port)
{
	static const char *const names[] = {"allowed.test", "slow.test",  "nx.test",   "tls.test",
					    "up.test",	    "up-refused.test", "multi.test", "bulk.test",
					    "upnx.test",    "uprebind.test", "hrr.test"};
	(void)ctx;
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		if (strcmp(name, names[i]) == 0)
			return port == (strcmp(name, "bulk.test") == 0 ? port_q : port_p);
	return false;
}

static struct netfence_addr v4(uint32_t h)
{
	struct netfence_addr a = {.family = AF_INET};
	a.v4.s_addr = htonl(h);
	return a;
}

static int r_resolve(void *ctx, const char *name, uint16_t port, struct netfence_addr *out, size_t max)
{
	(void)ctx;
	(void)port;
	if (max < 2)
		return NETFENCE_RESOLVE_FAILED;
	if (strcmp(name, "slow.test") == 0) {
		if (!slow_asked)
			slow_asked = mono_ns();
		if (mono_ns() - slow_asked < 300 * 1000000LL)
			return NETFENCE_RESOLVE_PENDING;
	}
	if (strcmp(name, "nx.test") == 0 || strcmp(name, "uprebind.test") == 0)
		return 0; /* what the rebinding rule left: nothing */
	if (strcmp(name, "upnx.test") == 0)
		return NETFENCE_RESOLVE_FAILED; /* the host resolves it only through its proxy */
	if (strcmp(name, "up.test") == 0 || strcmp(name, "up-refused.test") == 0) {
		out[0] = v4(strcmp(name, "up.test") == 0 ? IP7 : IP8);
		return 1;
	}
	if (strcmp(name, "multi.test") == 0) {
		out[0] = v4(IP6); /* refused: the next one answers */
		out[1] = v4(IP2);
		return 2;
	}
	out[0] = v4(strcmp(name, "tls.test") == 0 ? IP5 : strcmp(name, "hrr.test") == 0 ? IP9 : IP2);
	return 1;
}

static bool r_addr_ok(void *ctx, const struct netfence_addr *a, uint16_t port)
{
	(void)ctx;
	return a->family == AF_INET && a->v4.s_addr == htonl(IP2) && port == port_p;
}

static const struct upstream_proxy *r_upstream(void *ctx, const char *host, uint16_t port)
{
	(void)ctx, (void)port;
	return strncmp(host, "up", 2) == 0 || strcmp(host, "127.0.0.7") == 0 || strcmp(host, "127.0.0.8") == 0 ? &up
																 : NULL;
}

static bool r_tls_port(void *ctx, uint16_t port)
{
	(void)ctx;
	return port == port_p;
}

/* ---- the sandbox's clients ---- */

/* What the sandbox reports: nsbox.h. */

static int local_connect(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {.tv_sec = 3};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read until the peer closes, cap bytes, or 3 s: the bytes read. */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (n < cap && poll(&p, 1, 3000) == 1) {
		ssize_t k = recv(fd, buf + n, cap - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n < cap ? n : cap - 1] = '\0';
	return n;
}

/* Send a request to the HTTP proxy on `port`; read the reply's head; the
 * status (0 when none), the fd left open for the tunnel in *fd_out. */
static int http_req(uint16_t port, const char *req, int *fd_out, char *head, size_t cap)
{
	int fd = local_connect(port);
	size_t n = 0;

	head[0] = '\0';
	if (fd < 0)
		return 0;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		close(fd);
		return 0;
	}
	n = read_head(fd, head, cap);
	int st = n > 12 && strncmp(head, "HTTP/1.", 7) == 0 ? atoi(head + 9) : 0;
	if (fd_out)
		*fd_out = fd;
	else
		close(fd);
	return st;
}

static int connect_to(uint16_t pport, const char *hostport, int *fd)
{
	char req[700], head[1024];
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport);
	return http_req(pport, req, fd, head, sizeof(head));
}

static bool echo_ok(int fd, const void *msg, size_t n)
{
	char buf[2048];
	size_t got = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (send(fd, msg, n, MSG_NOSIGNAL) != (ssize_t)n)
		return false;
	while (got < n && poll(&p, 1, 3000) == 1) {
		ssize_t k = recv(fd, buf + got, sizeof(buf) - got, 0);
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return got == n && memcmp(buf, msg, n) == 0;
}

/* A tunnel through the HTTP proxy: its status, and whether "ping" echoes. */
static void tunnel_check(uint16_t pport, const char *hostport, int want, const char *what)
{
	int fd = -1, st = connect_to(pport, hostport, &fd);
	bool echoed = st == 200 && echo_ok(fd, "ping", 4);

	if (fd >= 0)
		close(fd);
	check(st == want && (want != 200 || echoed), "%s: CONNECT %s is %d%s (got %d)", what, hostport, want,
	      want == 200 ? " and the tunnel echoes" : "", st);
}

/* SOCKS5 to the proxy on `port`: the reply code (-1: none), fd open. */
static int socks(uint16_t port, const unsigned char *req, size_t n, int *fd_out)
{
	static const unsigned char greet[] = {5, 1, 0};
	unsigned char r[10];
	int fd = local_connect(port), rep = -1;

	if (fd < 0)
		return -1;
	if (send(fd, greet, 3, MSG_NOSIGNAL) == 3 && recv(fd, r, 2, MSG_WAITALL) == 2 && r[0] == 5 && r[1] == 0 &&
	    send(fd, req, n, MSG_NOSIGNAL) == (ssize_t)n && recv(fd, r, 10, MSG_WAITALL) == 10 && r[0] == 5)
		rep = r[1];
	if (fd_out && rep == 0)
		*fd_out = fd;
	else
		close(fd);
	return rep;
}

static size_t socks_name(unsigned char *b, const char *name, uint16_t port)
{
	size_t l = strlen(name);
	b[0] = 5, b[1] = 1, b[2] = 0, b[3] = 3, b[4] = (unsigned char)l;
	memcpy(b + 5, name, l);
	b[5 + l] = (unsigned char)(port >> 8), b[6 + l] = (unsigned char)port;
	return 7 + l;
}

static void socks_checks(void)
{
	unsigned char b[300];
	size_t n = socks_name(b, "allowed.test", port_p);
	int fd = -1, rep = socks(NETPROXY_SOCKS_PORT, b, n, &fd);

	check(rep == 0 && echo_ok(fd, "ping", 4),
	      "SOCKS5 CONNECT allowed.test:%u (a name, socks5h): success, and it echoes", port_p);
	if (fd >= 0)
		close(fd);
	n = socks_name(b, "denied.test", port_p);
	check(socks(NETPROXY_SOCKS_PORT, b, n, NULL) == 2, "SOCKS5 to denied.test: not allowed by the ruleset (2)");
	n = socks_name(b, "allowed.test", port_q);
	check(socks(NETPROXY_SOCKS_PORT, b, n, NULL) == 2, "SOCKS5 to allowed.test on another port: 2");
	unsigned char a2[] = {5, 1, 0, 1, 127, 0, 0, 2, (unsigned char)(port_p >> 8), (unsigned char)port_p};
	fd = -1;
	rep = socks(NETPROXY_SOCKS_PORT, a2, sizeof(a2), &fd);
	check(rep == 0 && echo_ok(fd, "ping", 4), "SOCKS5 to the allowed address 127.0.0.2:%u: success", port_p);
	if (fd >= 0)
		close(fd);
	unsigned char a3[] = {5, 1, 0, 1, 127, 0, 0, 3, (unsigned char)(port_p >> 8), (unsigned char)port_p};
	check(socks(NETPROXY_SOCKS_PORT, a3, sizeof(a3), NULL) == 2, "SOCKS5 to 127.0.0.3:%u (not listed): 2", port_p);
	unsigned char bind[] = {5, 2, 0, 1, 127, 0, 0, 2, (unsigned char)(port_p >> 8), (unsigned char)port_p};
	check(socks(NETPROXY_SOCKS_PORT, bind, sizeof(bind), NULL) == 7, "SOCKS5 BIND: command not supported (7)");
	/* A client that offers only username/password: no acceptable method. */
	int f = local_connect(NETPROXY_SOCKS_PORT);
	unsigned char r[2] = {0, 0};
	bool refused = f >= 0 && send(f, "\x05\x01\x02", 3, MSG_NOSIGNAL) == 3 && recv(f, r, 2, MSG_WAITALL) == 2 &&
		       r[0] == 5 && r[1] == 0xff;
	check(refused, "SOCKS5 greeting without no-auth: no acceptable method (0xff)");
	if (f >= 0)
		close(f);
}

static void http_checks(void)
{
	char hp[300], head[2048], body[4096];
	int st;

	const struct {
		const char *host;
		bool other_port;
		int want;
		const char *what;
	} cases[] = {
	    {"allowed.test", false, 200, "an allowed name"},
	    {"ALLOWED.TEST.", false, 200, "the same name in capitals, with a final dot"},
	    {"denied.test", false, 403, "a name not on the list"},
	    {"allowed.test", true, 403, "the allowed name on another port"},
	    {"127.0.0.2", false, 200, "an allowed address"},
	    {"127.0.0.3", false, 403, "an address not on the list"},
	    {"multi.test", false, 200, "a name whose first address refuses: the second"},
	    {"nx.test", false, 502, "an allowed name without addresses"},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		snprintf(hp, sizeof(hp), "%s:%u", cases[i].host, cases[i].other_port ? port_q : port_p);
		tunnel_check(NETPROXY_HTTP_PORT, hp, cases[i].want, cases[i].what);
	}

	int64_t t0 = mono_ns();
	snprintf(hp, sizeof(hp), "slow.test:%u", port_p);
	tunnel_check(NETPROXY_HTTP_PORT, hp, 200, "a name the rules look up slowly (300 ms)");
	int64_t waited = (mono_ns() - t0) / 1000000;
	check(waited >= 250 && waited < 3000, "  the request waited for the lookup (%lld ms)", (long long)waited);

	/* Absolute form: rewritten to origin form; Host from the target; the
	 * client's proxy credentials and connection headers not passed on. */
	char req[600];
	snprintf(
	    req, sizeof(req),
	    "GET http://allowed.test:%u/x?y=1 HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic c2VjcmV0\r\n"
	    "Proxy-Connection: keep-alive\r\nX-Keep: 1\r\n\r\n",
	    port_p);
	int s = local_connect(NETPROXY_HTTP_PORT);
	size_t got = 0;
	if (s >= 0 && send(s, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req)) {
		shutdown(s, SHUT_WR);
		got = read_all(s, body, sizeof(body));
	}
	if (s >= 0)
		close(s);
	char want_host[80];
	snprintf(want_host, sizeof(want_host), "\r\nHost: allowed.test:%u\r\n", port_p);
	check(got > 0 && strncmp(body, "GET /x?y=1 HTTP/1.1\r\n", 21) == 0 && strstr(body, want_host) &&
		  strstr(body, "\r\nConnection: close\r\n") && strstr(body, "\r\nX-Keep: 1\r\n") &&
		  !strstr(body, "evil") && !strstr(body, "c2VjcmV0") && !strstr(body, "Proxy-Connection"),
	      "absolute form reaches the server in origin form, Host from its target, the client's proxy headers "
	      "dropped, Connection: close");
	snprintf(req, sizeof(req), "GET http://denied.test:%u/ HTTP/1.1\r\n\r\n", port_p);
	st = http_req(NETPROXY_HTTP_PORT, req, NULL, head, sizeof(head));
	check(st == 403, "absolute form to a name not on the list: 403 (%d)", st);
	st = http_req(NETPROXY_HTTP_PORT, "GET https://allowed.test/ HTTP/1.1\r\n\r\n", NULL, head, sizeof(head));
	check(st == 501, "https:// in absolute form: 501 (%d)", st);
	st = http_req(NETPROXY_HTTP_PORT, "HELLO\r\n\r\n", NULL, head, sizeof(head));
	check(st == 400, "garbage: 400 (%d)", st);
	static char longreq[NETPROXY_HEAD_MAX + 100];
	memset(longreq, 'a', sizeof(longreq) - 1);
	memcpy(longreq, "CONNECT a.test:1 HTTP/1.1\r\nX: ", 30);
	st = http_req(NETPROXY_HTTP_PORT, longreq, NULL, head, sizeof(head));
	check(st == 431, "a head longer than %d bytes: 431 (%d)", NETPROXY_HEAD_MAX, st);
}

static void sni_checks(void)
{
	char hp[300];
	unsigned char h[800];
	size_t n;
	int fd;

	snprintf(hp, sizeof(hp), "tls.test:%u", port_p);
	fd = -1;
	n = hello(h, sizeof(h), "tls.test", 0);
	check(connect_to(NETPROXY_HTTP_PORT, hp, &fd) == 200 && echo_ok(fd, h, n),
	      "a tunnel whose ClientHello names its host: the hello goes through (echoed)");
	if (fd >= 0)
		close(fd);
	struct {
		const char *sni;
		size_t frag;
		const char *what;
	} bad[] = {{"other.test", 0, "another host"}, {"other.test", 5, "another host, split into records of 5 bytes"}};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		char buf[64];
		fd = -1;
		n = hello(h, sizeof(h), bad[i].sni, bad[i].frag);
		bool closed = connect_to(NETPROXY_HTTP_PORT, hp, &fd) == 200 &&
			      send(fd, h, n, MSG_NOSIGNAL) == (ssize_t)n && read_all(fd, buf, sizeof(buf)) == 0;
		check(closed, "a ClientHello naming %s: the tunnel is closed, nothing echoed", bad[i].what);
		if (fd >= 0)
			close(fd);
	}
	fd = -1;
	n = hello(h, sizeof(h), NULL, 0);
	check(connect_to(NETPROXY_HTTP_PORT, hp, &fd) == 200 && echo_ok(fd, h, n),
	      "a ClientHello without server_name goes through");
	if (fd >= 0)
		close(fd);
	unsigned char b[300];
	size_t bl = socks_name(b, "tls.test", port_p);
	fd = -1;
	n = hello(h, sizeof(h), "evil.test", 0);
	char buf[64];
	bool closed = socks(NETPROXY_SOCKS_PORT, b, bl, &fd) == 0 && send(fd, h, n, MSG_NOSIGNAL) == (ssize_t)n &&
		      read_all(fd, buf, sizeof(buf)) == 0;
	check(closed, "SOCKS5 too: a ClientHello naming another host closes the tunnel");
	if (fd >= 0)
		close(fd);
}

/* Exactly n bytes within 3 s. */
static bool read_n(int fd, unsigned char *buf, size_t n)
{
	size_t got = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (got < n && poll(&p, 1, 3000) == 1) {
		ssize_t k = recv(fd, buf + got, n - got, 0);
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return got == n;
}

/* A TLS 1.3 server may answer the ClientHello with a HelloRetryRequest,
 * and then takes the second hello's server_name (OpenSSL's does): the
 * second one is judged as the first.  hrr.test's server sends one, then
 * echoes; `then` goes after change_cipher_spec, once the hello went
 * through and the retry came back (or with the hello, `pipelined`). */
static bool after_retry(const char *hp, const void *then, size_t tn, bool pipelined, size_t *echoed)
{
	unsigned char h1[800], msg[1600], sh[64], got[2048];
	size_t n1 = hello(h1, sizeof(h1), "hrr.test", 0), shn = server_hello(sh, true), mn = 0;
	int fd = -1;
	bool ok_so_far;

	*echoed = 0;
	memcpy(msg, "\x14\x03\x03\x00\x01\x01", 6), mn = 6;
	memcpy(msg + mn, then, tn), mn += tn;
	ok_so_far = connect_to(NETPROXY_HTTP_PORT, hp, &fd) == 200;
	if (ok_so_far && pipelined) {
		memmove(msg + n1, msg, mn);
		memcpy(msg, h1, n1);
		ok_so_far = send(fd, msg, n1 + mn, MSG_NOSIGNAL) == (ssize_t)(n1 + mn);
	} else if (ok_so_far) {
		ok_so_far = send(fd, h1, n1, MSG_NOSIGNAL) == (ssize_t)n1 && read_n(fd, got, shn + n1) &&
			    memcmp(got, sh, shn) == 0 && send(fd, msg, mn, MSG_NOSIGNAL) == (ssize_t)mn;
	}
	if (ok_so_far)
		*echoed = read_all(fd, (char *)got, sizeof(got));
	if (fd >= 0)
		close(fd);
	return ok_so_far;
}

static void hrr_checks(void)
{
	char hp[300];
	unsigned char h2[800];
	size_t n2, echoed;
	bool went;

	snprintf(hp, sizeof(hp), "hrr.test:%u", port_p);
	n2 = hello(h2, sizeof(h2), "hrr.test", 0);
	went = after_retry(hp, h2, n2, false, &echoed);
	check(went && echoed == 6 + n2,
	      "after a HelloRetryRequest, a second hello naming the host goes through (%zu bytes echoed)", echoed);
	n2 = hello(h2, sizeof(h2), "evil.test", 0);
	went = after_retry(hp, h2, n2, false, &echoed);
	check(went && echoed == 0, "  one naming another host: the tunnel is closed, nothing of it echoed (%zu)",
	      echoed);
	went = after_retry(hp, h2, n2, true, &echoed);
	check(went && echoed == 0, "  and sent with the first hello, before the retry came: the same (%zu)", echoed);
	went = after_retry(hp, "GET / HTTP/1.1\r\n\r\n", 18, false, &echoed);
	check(went && echoed == 0, "  a client that answers the retry with no hello: closed (%zu)", echoed);
}

/* An absolute-form request through the HTTP proxy on 3128: what came
 * back (the echo server echoes the head it got; the upstream's GET
 * handler answers with the head it got). */
static size_t forward(const char *target, char *body, size_t cap)
{
	char req[600];
	int s = local_connect(NETPROXY_HTTP_PORT);
	size_t got = 0;

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n", target);
	if (s >= 0 && send(s, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req)) {
		shutdown(s, SHUT_WR);
		got = read_all(s, body, cap);
	}
	if (s >= 0)
		close(s);
	return got;
}

static void upstream_checks(void)
{
	char hp[300], body[4096], t[300], want[300];
	int fd = -1;

	/* By the address moat checked: up.test's 127.0.0.7, which the
	 * upstream knows; it refuses up.test by name. */
	snprintf(hp, sizeof(hp), "up.test:%u", port_p);
	tunnel_check(NETPROXY_HTTP_PORT, hp, 200, "through the upstream proxy by the checked address (CONNECT 127.0.0.7)");
	unsigned char b[300];
	size_t n = socks_name(b, "up.test", port_p);
	int rep = socks(NETPROXY_SOCKS_PORT, b, n, &fd);
	check(rep == 0 && echo_ok(fd, "ping", 4), "SOCKS5 through the upstream proxy: success, and it echoes");
	if (fd >= 0)
		close(fd);
	snprintf(hp, sizeof(hp), "up-refused.test:%u", port_p);
	tunnel_check(NETPROXY_HTTP_PORT, hp, 502, "a destination the upstream proxy refuses (403 there)");

	/* Absolute form with an address known: a tunnel to it, the request
	 * in origin form inside, moat's credentials only on the CONNECT. */
	snprintf(t, sizeof(t), "http://up.test:%u?@127.0.0.3:%u/y", port_p, port_p);
	size_t got = forward(t, body, sizeof(body));
	check(got > 0 && strncmp(body, "GET /?@127.0.0.3:", 17) == 0 && !strstr(body, "Proxy-Authorization") &&
		  !strstr(body, "c2VjcmV0"),
	      "absolute form through the upstream: a tunnel to the checked address, the request in origin form, "
	      "no credentials in it (%zu bytes back)", got);

	/* A name the host cannot resolve: the upstream asked by name. */
	snprintf(hp, sizeof(hp), "upnx.test:%u", port_p);
	tunnel_check(NETPROXY_HTTP_PORT, hp, 200, "a name the host's resolver fails: CONNECT upnx.test by name");
	snprintf(t, sizeof(t), "http://upnx.test:%u?@127.0.0.3:%u/", port_p, port_p);
	got = forward(t, body, sizeof(body));
	snprintf(want, sizeof(want), "GET http://upnx.test:%u/?@127.0.0.3:%u/ HTTP/1.1\r\n", port_p, port_p);
	check(got > 0 && strstr(body, want) && strstr(body, "Proxy-Authorization: Basic dXNlcjpwYXNz") &&
		  !strstr(body, "c2VjcmV0"),
	      "  absolute form by name: the target rebuilt from the checked authority (its host before any '@'), "
	      "moat's credentials, not the client's");
	snprintf(t, sizeof(t), "http://upnx.test:%u#@127.0.0.3:%u/", port_p, port_p);
	got = forward(t, body, sizeof(body));
	snprintf(want, sizeof(want), "GET http://upnx.test:%u/ HTTP/1.1\r\n", port_p);
	check(got > 0 && strstr(body, want) && !strstr(body, "127.0.0.3"), "  a #fragment is not passed on");
	/* Withheld by the rebinding rule: refused, the upstream not asked. */
	snprintf(hp, sizeof(hp), "uprebind.test:%u", port_p);
	tunnel_check(NETPROXY_HTTP_PORT, hp, 502, "a name whose addresses the rules withheld: not asked of the upstream");
}

/* Open NETPROXY_MAX_CONNS idle connections and one more: one beyond the
 * limit is closed at once; after they end, a request works again.  Which
 * one is closed depends on the slots the earlier checks' connections
 * still hold when these arrive (a loaded machine frees them late): the
 * 65th when none, else as many of the first as they hold, and the 65th
 * may then find a slot.  So: at least one of the 65 is closed, within 2 s
 * (none would be, with no limit). */
static void limit_checks(void)
{
	int fds[NETPROXY_MAX_CONNS + 1];
	struct pollfd p[NETPROXY_MAX_CONNS + 1];
	size_t k, n_closed = 0;
	int64_t end;
	char c;

	for (k = 0; k < ARRAY_LEN(fds); k++)
		if ((fds[k] = local_connect(NETPROXY_HTTP_PORT)) < 0)
			break;
	for (size_t i = 0; i < k; i++)
		p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	end = mono_ns() + 2000000000LL;
	while (n_closed == 0 && mono_ns() < end && poll(p, k, 100) >= 0)
		for (size_t i = 0; i < k; i++)
			if (p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) && recv(p[i].fd, &c, 1, 0) <= 0) {
				n_closed++;
				p[i].fd = -1;
			}
	check(k == ARRAY_LEN(fds) && n_closed >= 1, "%zu connections at once: one beyond the limit of %d is closed at once",
	      k, NETPROXY_MAX_CONNS);
	for (size_t i = 0; i < k; i++)
		close(fds[i]);
	usleep(100000);
	char hp[300];
	snprintf(hp, sizeof(hp), "allowed.test:%u", port_p);
	tunnel_check(NETPROXY_HTTP_PORT, hp, 200, "after they closed");
}

/* Bulk through each relay: MiB/s, into *mibs. */
static double bulk(uint16_t pport)
{
	char hp[300];
	static char buf[1 << 17];
	int fd = -1;
	size_t got = 0;

	snprintf(hp, sizeof(hp), "bulk.test:%u", port_q);
	int64_t t0 = mono_ns();
	if (connect_to(pport, hp, &fd) != 200)
		return -1;
	for (;;) {
		ssize_t k = recv(fd, buf, sizeof(buf), 0);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	double s = (double)(mono_ns() - t0) / 1e9;
	return got == bulk_bytes ? (double)got / (1 << 20) / s : -1;
}

static uint16_t splice_http_port = NETPROXY_HTTP_PORT + 1;

static void bulk_checks(void)
{
	double copy = bulk(NETPROXY_HTTP_PORT), spl = bulk(splice_http_port);

	check(copy > 0 && spl > 0, "%zu MiB through each relay arrive whole", bulk_bytes >> 20);
	report(REC_COMMENT, 1, "proxy relay throughput, %zu MiB: buffer copy %.0f MiB/s, splice %.0f MiB/s",
	       bulk_bytes >> 20, copy, spl);
}

static int listen_local_port(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0)
		return -1;
	return fd;
}

static _Noreturn void sandbox(int sp, uid_t uid, gid_t gid)
{
	int fds[5], rc;

	alarm(60);
	nsbox_enter(CLONE_NEWNET, uid, gid);
	/* Control: the sandbox itself reaches nothing of the host. */
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port_p)};
	a.sin_addr.s_addr = htonl(IP2);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	check(s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) < 0,
	      "control: the sandbox cannot reach the host's 127.0.0.2:%u itself (%s)", port_p, strerror(errno));
	if (s >= 0)
		close(s);

	rc = netproxy_child_listen(&fds[0], &fds[1]);
	check(rc == 0, "netproxy_child_listen binds 127.0.0.1:%d and :%d: %s", NETPROXY_HTTP_PORT, NETPROXY_SOCKS_PORT,
	      strerror(rc < 0 ? -rc : 0));
	fds[2] = listen_local_port(NETPROXY_HTTP_PORT + 1);
	fds[3] = listen_local_port(NETPROXY_SOCKS_PORT + 1);
	fds[4] = fds[0]; /* netfence_child_sendv carries at least three */
	if (rc < 0 || fds[2] < 0 || fds[3] < 0 || netfence_child_sendv(sp, fds, 5) < 0) {
		check(0, "handing the listeners over");
		report(REC_DONE, 1, " ");
		_exit(1);
	}
	for (int i = 0; i < 4; i++)
		close(fds[i]);

	http_checks();
	socks_checks();
	sni_checks();
	hrr_checks();
	upstream_checks();
	limit_checks();
	bulk_checks();
	report(REC_DONE, 1, " ");
	_exit(0);
}

static _Noreturn void supervisor(int sp, int stats_fd)
{
	struct pollfd p = {.fd = sp, .events = POLLIN};
	struct netproxy_rules rules = {.name_ok = r_name_ok,
				       .resolve = r_resolve,
				       .addr_ok = r_addr_ok,
				       .upstream = r_upstream,
				       .tls_port = r_tls_port};
	struct moat_error err = {0};
	int fds[NETFENCE_FDS_MAX];
	size_t nfds;

	alarm(90);
	if (poll(&p, 1, 20000) != 1 || netfence_recv_fdv(sp, fds, NETFENCE_FDS_MAX, &nfds, &err) < 0 || nfds != 5)
		_exit(3);
	close(fds[4]);
	struct netproxy *px[2] = {netproxy_new(fds[0], fds[1], &rules, false, &err),
				  netproxy_new(fds[2], fds[3], &rules, true, &err)};
	if (!px[0] || !px[1])
		_exit(4);
	for (;;) {
		struct pollfd pf[1 + 2 * NETPROXY_POLLFDS_MAX];
		size_t n0, n1;
		int t0, t1, timeout;

		pf[0] = (struct pollfd){.fd = sp, .events = POLLIN}; /* the sandbox ends: hang-up */
		n0 = netproxy_pollfds(px[0], pf + 1, NETPROXY_POLLFDS_MAX);
		n1 = netproxy_pollfds(px[1], pf + 1 + n0, NETPROXY_POLLFDS_MAX);
		t0 = netproxy_timeout_ms(px[0]);
		t1 = netproxy_timeout_ms(px[1]);
		timeout = t0 < 0 ? t1 : t1 < 0 ? t0 : t0 < t1 ? t0 : t1;
		if (slow_asked && (timeout < 0 || timeout > 20))
			timeout = 20; /* the slow lookup ends on its own */
		if (poll(pf, 1 + n0 + n1, timeout) < 0 && errno != EINTR)
			_exit(5);
		if (pf[0].revents)
			break;
		netproxy_handle(px[0], pf + 1, n0);
		netproxy_handle(px[1], pf + 1 + n0, n1);
		if (slow_asked && mono_ns() - slow_asked >= 300 * 1000000LL) {
			netproxy_names_ready(px[0]);
			netproxy_names_ready(px[1]);
		}
	}
	struct netproxy_stats st[2];
	netproxy_get_stats(px[0], &st[0]);
	netproxy_get_stats(px[1], &st[1]);
	(void)!write(stats_fd, st, sizeof(st));
	netproxy_free(px[0]);
	netproxy_free(px[1]);
	_exit(0);
}

/* Bulk from the source directly (the host's own figure). */
static double direct_bulk(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port_q)};
	static char buf[1 << 17];
	size_t got = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(IP2);
	int64_t t0 = mono_ns();
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	for (ssize_t k; (k = recv(fd, buf, sizeof(buf), 0)) > 0;)
		got += (size_t)k;
	close(fd);
	return (double)got / (1 << 20) / ((double)(mono_ns() - t0) / 1e9);
}

static void kernel_checks(void)
{
	int sp[2], res[2], stp[2];
	pid_t sup, box;
	bool done = false, skipped = false;
	int status;

	for (int tries = 0; tries < 20; tries++) {
		port_p = 0;
		srv_a.fd = listen_on(IP2, &port_p);
		srv_b.fd = srv_a.fd >= 0 ? listen_on(IP3, &port_p) : -1;
		srv_tls.fd = srv_b.fd >= 0 ? listen_on(IP5, &port_p) : -1;
		srv_hrr.fd = srv_tls.fd >= 0 ? listen_on(IP9, &port_p) : -1;
		if (srv_hrr.fd >= 0)
			break;
		if (srv_a.fd >= 0)
			close(srv_a.fd);
		if (srv_b.fd >= 0)
			close(srv_b.fd);
		if (srv_tls.fd >= 0)
			close(srv_tls.fd);
	}
	port_q = port_u = 0;
	srv_bulk.fd = listen_on(IP2, &port_q);
	srv_bulk.mode = SRV_SOURCE;
	up_fd = listen_on(IP4, &port_u);
	up_map = up_target;
	srv_hrr.mode = SRV_HRR;
	if (srv_a.fd < 0 || srv_b.fd < 0 || srv_tls.fd < 0 || srv_hrr.fd < 0 || srv_bulk.fd < 0 || up_fd < 0) {
		ok(0, "servers on 127.0.0.2-5 and .9");
		return;
	}
	struct sockaddr_in *ua = (struct sockaddr_in *)&up.addr;
	ua->sin_family = AF_INET;
	ua->sin_port = htons(port_u);
	ua->sin_addr.s_addr = htonl(IP4);
	up.addr_len = sizeof(*ua);
	up.auth = "Basic dXNlcjpwYXNz";

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 || pipe2(res, O_CLOEXEC) < 0 ||
	    pipe2(stp, O_CLOEXEC) < 0) {
		ok(0, "socketpair and pipes");
		return;
	}
	uid_t uid = getuid();
	gid_t gid = getgid();
	sup = fork();
	if (sup == 0) {
		close(sp[1]);
		close(res[0]);
		close(res[1]);
		close(stp[0]);
		supervisor(sp[0], stp[1]);
	}
	box = fork();
	if (box == 0) {
		close(sp[0]);
		close(res[0]);
		close(stp[0]);
		close(stp[1]);
		res_fd = res[1];
		sandbox(sp[1], uid, gid);
	}
	close(sp[0]);
	close(sp[1]);
	close(res[1]);
	close(stp[1]);
	/* Threads only now: a child forked from a process with threads may
	 * find a lock of the allocator held for good (ASan's).  The clients
	 * wait in the listeners' queues meanwhile. */
	spawn(server_loop, &srv_a);
	spawn(server_loop, &srv_b);
	spawn(server_loop, &srv_tls);
	spawn(server_loop, &srv_hrr);
	spawn(server_loop, &srv_bulk);
	spawn(up_loop, NULL);
	/* Control: the server that must see nothing of the sandbox answers
	 * when asked directly (its one connection). */
	struct sockaddr_in b3 = {.sin_family = AF_INET, .sin_port = htons(port_p)};
	b3.sin_addr.s_addr = htonl(IP3);
	int c3 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = 3};
	setsockopt(c3, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ok(c3 >= 0 && connect(c3, (struct sockaddr *)&b3, sizeof(b3)) == 0 && echo_ok(c3, "ping", 4),
	   "control: the host server on 127.0.0.3:%u answers when reached directly", port_p);
	if (c3 >= 0)
		close(c3);

	int64_t t0 = mono_ns();
	while (!done && mono_ns() - t0 < 80 * 1000000000LL) {
		struct rec r;
		struct pollfd p = {.fd = res[0], .events = POLLIN};
		if (poll(&p, 1, 1000) != 1)
			continue;
		if (read(res[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
			break;
		if (rec_print(&r, &skipped) == REC_DONE)
			done = true;
	}
	ok(done || skipped, "the sandbox finished within the time bound");
	waitpid(box, &status, 0);
	double direct = direct_bulk();
	struct netproxy_stats st[2];
	struct pollfd p = {.fd = stp[0], .events = POLLIN};
	bool have = poll(&p, 1, 5000) == 1 && read(stp[0], st, sizeof(st)) == (ssize_t)sizeof(st);
	kill(sup, SIGKILL);
	waitpid(sup, &status, 0);
	atomic_store(&stop_all, 1);
	if (skipped)
		return;
	printf("# direct on the host, %zu MiB: %.0f MiB/s\n", bulk_bytes >> 20, direct);
	ok(atomic_load(&srv_b.conns) == 1,
	   "the host server on 127.0.0.3 (not listed) got no connection but the control's (%d)",
	   atomic_load(&srv_b.conns));
	ok(atomic_load(&srv_a.conns) >= 10, "the allowed server got the allowed tunnels (%d)",
	   atomic_load(&srv_a.conns));
	/* tls.test: one hello that passed and one without a name were
	 * echoed; the refused ones added nothing to what the server got. */
	unsigned char h1[800], h2[800];
	long want = (long)(hello(h1, sizeof(h1), "tls.test", 0) + hello(h2, sizeof(h2), NULL, 0));
	ok(atomic_load(&srv_tls.bytes) == want,
	   "the tls.test server got only the two hellos that passed (%ld bytes of %ld): nothing of the refused ones",
	   atomic_load(&srv_tls.bytes), want);
	/* hrr.test: the four first hellos, and of the second ones only the
	 * one naming the host (after its change_cipher_spec). */
	long want_hrr = (long)(5 * hello(h1, sizeof(h1), "hrr.test", 0) + 6);
	ok(atomic_load(&srv_hrr.bytes) == want_hrr,
	   "the hrr.test server got the first hellos and the one second hello that passed (%ld bytes of %ld)",
	   atomic_load(&srv_hrr.bytes), want_hrr);
	ok(atomic_load(&up_requests) == 7, "the upstream proxy got the 7 requests sent its way (%d), none for uprebind.test",
	   atomic_load(&up_requests));
	ok(have, "the supervisor reported its counts");
	if (have) {
		printf("# copy: accepted %lu tunnels %lu refused %lu sni_refused %lu failed %lu bad %lu upstream %lu "
		       "(by name %lu) up %llu down %llu\n",
		       st[0].accepted, st[0].tunnels, st[0].refused, st[0].sni_refused, st[0].failed, st[0].bad,
		       st[0].via_upstream, st[0].via_upstream_by_name, st[0].bytes_up, st[0].bytes_down);
		ok(st[0].refused == 7 && st[0].sni_refused == 6 && st[0].via_upstream == 6 &&
		       st[0].via_upstream_by_name == 3 && st[0].failed == 3,
		   "the counts: 7 refused, 6 by SNI, 6 tunnels through the upstream (3 by name), 3 failed");
		ok(st[0].bad >= 5, "  and the malformed ones, and the one past the limit (%lu)", st[0].bad);
		ok(st[1].bytes_down == bulk_bytes && st[1].tunnels == 1, "the splice relay carried the bulk (%llu)",
		   st[1].bytes_down);
	}
}

int main(void)
{
	const char *mib = getenv("MOAT_NETPROXY_BENCH_MIB");

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);
	alarm(120);
	if (mib && atoi(mib) > 0)
		bulk_bytes = (size_t)atoi(mib) << 20;
	parse_http_checks();
	forward_target_checks();
	parse_socks_checks();
	parse_sni_checks();
	parse_upstream_checks();
	socks4_checks();
	mutation_checks();
	kernel_checks();
	return tap_done();
}
