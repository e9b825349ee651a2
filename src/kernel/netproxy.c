/* Proxy mode of the fenced network (netproxy.h): the listeners the child
 * binds, the parsers of what clients send (hostile input: every read is
 * bounded by the bytes there are, names by 253, heads by
 * NETPROXY_HEAD_MAX, hellos by NETPROXY_HELLO_MAX), and the connections
 * moat serves in its poll loop.
 *
 * Why the bytes pass through moat here, when the transparent fence hands
 * the command a socket of the host's instead: a proxy client speaks to
 * the proxy first, so the connection it holds is the one to 127.0.0.1:3128
 * inside the sandbox, and something must carry its bytes to the host's
 * socket.  The copy is the price of the exact host policy; docs/network.md
 * gives the figures. */
#include "kernel/netproxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/clock.h"
#include "util/mem.h"

/* ------------------------------------------------------------------ */
/* Child side                                                          */

static int listen_local(uint16_t port)
{
	struct sockaddr_in a = {
	    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int netproxy_child_listen(int *http_fd, int *socks_fd)
{
	int h = listen_local(NETPROXY_HTTP_PORT), s;

	if (h < 0)
		return h;
	s = listen_local(NETPROXY_SOCKS_PORT);
	if (s < 0) {
		close(h);
		return s;
	}
	*http_fd = h;
	*socks_fd = s;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Parsers                                                             */

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* A host name as the fence's DNS takes one: [a-z0-9_-] and dots (upper
 * case folded), one final dot dropped, labels of 1-63, at most 253.  Into
 * out (NETFENCE_NAME_MAX + 1 bytes). */
static bool name_check(const unsigned char *s, size_t len, char *out)
{
	size_t label = 0;

	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len == 0 || len > NETFENCE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = s[i];
		if (ch == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_') {
			label++;
		} else if (ch >= 'A' && ch <= 'Z') {
			ch = (unsigned char)(ch - 'A' + 'a');
			label++;
		} else {
			return false;
		}
		if (label > 63)
			return false;
		out[i] = (char)ch;
	}
	if (label == 0)
		return false;
	out[len] = '\0';
	return true;
}

/* An address as text (family's syntax only) into t; v4-mapped as v4. */
static bool addr_text(const char *s, size_t len, int family, struct netproxy_target *t)
{
	char buf[INET6_ADDRSTRLEN + 1];
	unsigned char bytes[16];

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(family, buf, bytes) != 1)
		return false;
	t->is_addr = true;
	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((struct in6_addr *)(void *)bytes)) {
		t->addr.family = AF_INET;
		memcpy(&t->addr.v4, bytes + 12, 4);
	} else {
		t->addr.family = family;
		memcpy(family == AF_INET ? (void *)&t->addr.v4 : (void *)&t->addr.v6, bytes,
		       family == AF_INET ? 4 : 16);
	}
	inet_ntop(t->addr.family, t->addr.family == AF_INET ? (const void *)&t->addr.v4 : (const void *)&t->addr.v6,
		  t->host, sizeof(t->host));
	return true;
}

/* A host written as a name (s[0..len)) into t: a name, or, when the host's
 * resolver would read it as an IPv4 address ("127.1", "2130706433",
 * "1.2.3.4." -- netfence_name_is_number), that address: what would be
 * reached is what the rules judge (addr_ok), never a name they allow. */
static bool host_name(const unsigned char *s, size_t len, struct netproxy_target *t)
{
	struct in_addr v4;

	if (!name_check(s, len, t->host))
		return false;
	if (netfence_name_is_number(t->host, &v4)) {
		t->is_addr = true;
		t->addr.family = AF_INET;
		t->addr.v4 = v4;
		inet_ntop(AF_INET, &v4, t->host, sizeof(t->host));
	}
	return true;
}

int netproxy_parse_authority(const char *s, size_t len, uint16_t port_default, struct netproxy_target *t)
{
	struct netproxy_target out;
	const char *host = s, *port = NULL, *colon;
	size_t hlen = len, plen = 0;
	bool bracketed = false;

	memset(&out, 0, sizeof(out));
	if (len == 0 || len > NETFENCE_NAME_MAX + 8)
		return -1;
	if (s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return -1;
		host = s + 1;
		hlen = (size_t)(close - host);
		bracketed = true;
		if ((size_t)(close + 1 - s) < len) {
			if (close[1] != ':')
				return -1;
			port = close + 2;
			plen = len - (size_t)(port - s);
		}
	} else if ((colon = memchr(s, ':', len))) {
		if (memchr(colon + 1, ':', len - (size_t)(colon + 1 - s)))
			return -1; /* a bare IPv6 address: ambiguous, brackets are the syntax */
		hlen = (size_t)(colon - s);
		port = colon + 1;
		plen = len - hlen - 1;
	}
	if (port) {
		unsigned long v = 0;
		if (plen == 0 || plen > 5)
			return -1;
		for (size_t i = 0; i < plen; i++) {
			if (port[i] < '0' || port[i] > '9')
				return -1;
			v = v * 10 + (unsigned long)(port[i] - '0');
		}
		if (v < 1 || v > 65535)
			return -1;
		out.port = (uint16_t)v;
	} else if (port_default) {
		out.port = port_default;
	} else {
		return -1;
	}
	if (bracketed) {
		if (!addr_text(host, hlen, AF_INET6, &out))
			return -1;
	} else if (!addr_text(host, hlen, AF_INET, &out)) {
		if (!host_name((const unsigned char *)host, hlen, &out))
			return -1;
	}
	*t = out;
	return 0;
}

static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool ieq_prefix(const unsigned char *b, size_t n, const char *s)
{
	size_t l = strlen(s);

	if (n < l)
		return false;
	for (size_t i = 0; i < l; i++) {
		unsigned char c = b[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (c != (unsigned char)s[i])
			return false;
	}
	return true;
}

int netproxy_parse_http(const unsigned char *b, size_t n, struct netproxy_request *r)
{
	struct netproxy_request out;
	size_t end = 0, i, line_end, p, lim = n < NETPROXY_HEAD_MAX ? n : NETPROXY_HEAD_MAX;

	memset(&out, 0, sizeof(out));
	/* The head ends with an empty line; a NUL or a CR not before an LF
	 * anywhere in it is malformed (request smuggling lives there). */
	for (i = 0; i < lim && !end; i++) {
		if (b[i] == 0)
			return -400;
		if (b[i] == '\r' && i + 1 < lim && b[i + 1] != '\n')
			return -400;
		if (b[i] != '\n')
			continue;
		if (i + 1 < lim && b[i + 1] == '\n')
			end = i + 2;
		else if (i + 2 < lim && b[i + 1] == '\r' && b[i + 2] == '\n')
			end = i + 3;
	}
	if (!end)
		return n >= NETPROXY_HEAD_MAX ? -431 : 0;
	out.head_len = end;
	line_end = (size_t)((const unsigned char *)memchr(b, '\n', end) - b);
	size_t ll = line_end > 0 && b[line_end - 1] == '\r' ? line_end - 1 : line_end;

	/* METHOD SP TARGET SP HTTP/1.x */
	for (p = 0; p < ll && is_tchar(b[p]); p++)
		;
	if (p == 0 || p > 32 || p >= ll || b[p] != ' ')
		return -400;
	out.method_len = p;
	out.target_off = ++p;
	while (p < ll && b[p] > ' ' && b[p] < 0x7f)
		p++;
	out.target_len = p - out.target_off;
	if (out.target_len == 0 || p >= ll || b[p] != ' ')
		return -400;
	out.version_off = ++p;
	if (ll - p != 8 || (memcmp(b + p, "HTTP/1.1", 8) != 0 && memcmp(b + p, "HTTP/1.0", 8) != 0))
		return -400;
	out.headers_off = line_end + 1;

	/* Header lines: NAME: value; no folded continuation lines. */
	for (p = out.headers_off; p < end;) {
		const unsigned char *nl = memchr(b + p, '\n', end - p);
		size_t e = (size_t)(nl - b), q;
		if (e == p || (e == p + 1 && b[p] == '\r'))
			break; /* the empty line */
		if (b[p] == ' ' || b[p] == '\t')
			return -400;
		for (q = p; q < e && is_tchar(b[q]); q++)
			;
		if (q == p || q >= e || b[q] != ':')
			return -400;
		p = e + 1;
	}

	const char *target = (const char *)b + out.target_off;
	if (out.method_len == 7 && memcmp(b, "CONNECT", 7) == 0) {
		out.kind = NETPROXY_TUNNEL;
		if (netproxy_parse_authority(target, out.target_len, 0, &out.t) < 0)
			return -400;
	} else {
		const unsigned char *t = b + out.target_off;
		size_t a, alen;
		out.kind = NETPROXY_FORWARD;
		if (ieq_prefix(t, out.target_len, "https://"))
			return -501; /* the client's TLS is the client's: it asks with CONNECT */
		if (!ieq_prefix(t, out.target_len, "http://"))
			return out.target_len > 0 && t[0] == '/' ? -400 : -501;
		a = 7;
		for (alen = 0; a + alen < out.target_len && !strchr("/?#", t[a + alen]); alen++)
			;
		if (memchr(t + a, '@', alen))
			return -400; /* userinfo: what a reader takes for the host is not */
		if (netproxy_parse_authority(target + a, alen, 80, &out.t) < 0)
			return -400;
		out.path_off = out.target_off + a + alen;
		out.path_len = out.target_len - a - alen;
	}
	*r = out;
	return (int)end;
}

size_t netproxy_forward_target(const struct netproxy_request *r, const unsigned char *head, char *out, size_t cap,
			       size_t *path_off)
{
	const unsigned char *path = head + r->path_off, *hash = memchr(path, '#', r->path_len);
	size_t plen = hash ? (size_t)(hash - path) : r->path_len;
	bool v6 = r->t.is_addr && r->t.addr.family == AF_INET6, slash = plen == 0 || path[0] != '/';
	int n = snprintf(out, cap, "http://%s%s%s:%u", v6 ? "[" : "", r->t.host, v6 ? "]" : "", r->t.port);

	if (n < 0 || (size_t)n + slash + plen >= cap)
		return 0;
	*path_off = (size_t)n;
	if (slash)
		out[n++] = '/';
	memcpy(out + n, path, plen);
	out[(size_t)n + plen] = '\0';
	return (size_t)n + plen;
}

int netproxy_parse_socks_greeting(const unsigned char *b, size_t n, bool *noauth)
{
	if (n >= 1 && b[0] != 5)
		return -1;
	if (n >= 2 && b[1] == 0)
		return -1;
	if (n < 2 || n < 2 + (size_t)b[1])
		return 0;
	*noauth = memchr(b + 2, 0, b[1]) != NULL;
	return 2 + b[1];
}

int netproxy_parse_socks_request(const unsigned char *b, size_t n, struct netproxy_target *t)
{
	struct netproxy_target out;
	size_t len;

	memset(&out, 0, sizeof(out));
	if ((n >= 1 && b[0] != 5) || (n >= 3 && b[2] != 0))
		return -1;
	if (n < 5)
		return 0;
	switch (b[3]) {
	case 1:
		len = 4 + 4 + 2;
		break;
	case 3:
		if (b[4] == 0)
			return -1;
		len = 5 + (size_t)b[4] + 2;
		break;
	case 4:
		len = 4 + 16 + 2;
		break;
	default:
		return -8;
	}
	if (n < len)
		return 0;
	if (b[1] != 1)
		return -7; /* BIND, UDP ASSOCIATE: no */
	out.port = (uint16_t)get16(b + len - 2);
	if (out.port == 0)
		return -1;
	if (b[3] == 1 || b[3] == 4) {
		char txt[INET6_ADDRSTRLEN];
		inet_ntop(b[3] == 1 ? AF_INET : AF_INET6, b + 4, txt, sizeof(txt));
		if (!addr_text(txt, strlen(txt), b[3] == 1 ? AF_INET : AF_INET6, &out))
			return -1;
	} else if (!addr_text((const char *)b + 5, b[4], AF_INET, &out) &&
		   !addr_text((const char *)b + 5, b[4], AF_INET6, &out)) {
		/* A domain name (an address written as one is the address). */
		if (!host_name(b + 5, b[4], &out))
			return -4;
	}
	*t = out;
	return (int)len;
}

/* The ClientHello's server_name, from the hello's body h[0..n). */
static enum netproxy_sni hello_sni(const unsigned char *h, size_t n, char *name, size_t cap)
{
	size_t p = 2 + 32, end;

	if (p + 1 > n)
		return NETPROXY_SNI_BAD;
	p += 1 + h[p]; /* session id */
	if (p + 2 > n)
		return NETPROXY_SNI_BAD;
	p += 2 + get16(h + p); /* cipher suites */
	if (p + 1 > n)
		return NETPROXY_SNI_BAD;
	p += 1 + h[p]; /* compression methods */
	if (p == n)
		return NETPROXY_SNI_NONE; /* no extensions at all */
	if (p + 2 > n || p + 2 + get16(h + p) > n)
		return NETPROXY_SNI_BAD;
	end = p + 2 + get16(h + p);
	for (p += 2; p + 4 <= end;) {
		unsigned type = get16(h + p), elen = get16(h + p + 2);
		size_t e = p + 4;
		if (e + elen > end)
			return NETPROXY_SNI_BAD;
		if (type == 0) {
			/* server_name: a list of (type, name); the host_name one. */
			if (elen < 2 || 2 + get16(h + e) > elen)
				return NETPROXY_SNI_BAD;
			size_t q = e + 2, lend = e + 2 + get16(h + e);
			while (q + 3 <= lend) {
				unsigned nt = h[q], nl = get16(h + q + 1);
				if (q + 3 + nl > lend)
					return NETPROXY_SNI_BAD;
				if (nt == 0) {
					if (cap < NETFENCE_NAME_MAX + 1 || !name_check(h + q + 3, nl, name))
						return NETPROXY_SNI_BAD;
					return NETPROXY_SNI_NAME;
				}
				q += 3 + nl;
			}
			return NETPROXY_SNI_BAD; /* a server_name extension naming no host */
		}
		p = e + elen;
	}
	return p == end ? NETPROXY_SNI_NONE : NETPROXY_SNI_BAD;
}

enum netproxy_sni netproxy_parse_sni(const unsigned char *b, size_t n, char *name, size_t cap)
{
	size_t used;

	return netproxy_parse_hello(b, n, name, cap, &used);
}

enum netproxy_sni netproxy_parse_hello(const unsigned char *b, size_t n, char *name, size_t cap, size_t *used)
{
	unsigned char hs[NETPROXY_HELLO_MAX + 4];
	size_t off = 0, hn = 0, need = 0;

	if (n == 0)
		return NETPROXY_SNI_MORE;
	/* A TLS record starts 0x16 0x03 (a handshake, version 3.x): a
	 * protocol whose first byte happens to be 0x16 is not refused for it,
	 * and no TLS server takes a record of another version. */
	if (b[0] != 0x16 || (n > 1 && b[1] != 3))
		return NETPROXY_SNI_NOT_TLS;
	/* Handshake records, their fragments joined, until the first
	 * message (the ClientHello) is whole: a client cannot hide the name
	 * by splitting the hello across records. */
	for (;;) {
		if (off + 5 > n)
			return NETPROXY_SNI_MORE;
		if (b[off] != 0x16 || b[off + 1] != 3)
			return NETPROXY_SNI_BAD;
		size_t rl = get16(b + off + 3);
		if (rl == 0 || rl > 16384)
			return NETPROXY_SNI_BAD;
		if (off + 5 + rl > n)
			return NETPROXY_SNI_MORE;
		if (hn + rl > sizeof(hs))
			return NETPROXY_SNI_BAD;
		memcpy(hs + hn, b + off + 5, rl);
		hn += rl;
		off += 5 + rl;
		if (hn < 4)
			continue;
		if (hs[0] != 1)
			return NETPROXY_SNI_BAD; /* not a ClientHello */
		need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
		if (need > sizeof(hs))
			return NETPROXY_SNI_BAD;
		if (hn >= need)
			break;
	}
	/* More handshake bytes in the hello's last record: a second hello
	 * there would reach the server with the first, unread. */
	if (hn > need)
		return NETPROXY_SNI_BAD;
	*used = off;
	return hello_sni(hs + 4, need - 4, name, cap);
}

int netproxy_server_hello_retry(const unsigned char *b, size_t n)
{
	/* RFC 8446 4.1.3: a ServerHello whose random is SHA-256("HelloRetryRequest"). */
	static const unsigned char hrr[32] = {0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c,
					      0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb,
					      0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

	/* A handshake record, the message a ServerHello (2), version and
	 * random, in its first record: servers send it in one (a ServerHello
	 * split into records of a few bytes would read as no retry, and the
	 * server is the destination the rules allowed, not the client). */
	if ((n > 0 && b[0] != 0x16) || (n > 1 && b[1] != 3) || (n > 5 && b[5] != 2))
		return 0;
	if (n < 5 + 4 + 2 + 32)
		return -1;
	return memcmp(b + 5 + 4 + 2, hrr, sizeof(hrr)) == 0;
}

/* ------------------------------------------------------------------ */
/* The supervisor                                                      */

/* Per direction: 64 KiB relayed ~15% slower (docs/network.md, figures). */
#define BUF_SIZE   262144
#define PIPE_SIZE  262144
#define HEAD_NS	   (10 * 1000000000LL) /* the request, from accept on */
#define RESOLVE_NS (10 * 1000000000LL) /* a name the rules look up */
#define CONNECT_NS (10 * 1000000000LL) /* each address (or the upstream's handshake) */
#define TOTAL_NS   (30 * 1000000000LL) /* every address together */

/* ST_SNI: the client's bytes wait until they are a ClientHello judged (the
 * server's flow); ST_SERVER_HELLO: the hello goes, the client's bytes after
 * it wait, and so do the server's, until its first message says whether it
 * asks for another hello (ST_SNI again, second_hello) or not (ST_RELAY). */
enum conn_state { ST_HEAD, ST_RESOLVE, ST_CONNECT, ST_SNI, ST_SERVER_HELLO, ST_RELAY };
enum listener_kind { L_HTTP, L_SOCKS };

/* One direction of a relay: bytes in buf[off, off+len) go first (what was
 * read before the relay began, a rewritten head), then the pipe's. */
struct dir {
	unsigned char *buf;
	size_t off, len;
	int pipe[2];
	size_t in_pipe, pipe_cap;
	bool eof;  /* the source ended */
	bool shut; /* the destination was shut for writing */
};

struct conn {
	unsigned gen;
	enum listener_kind kind;
	enum conn_state st;
	int cfd, ufd;
	bool socks_greeted;
	bool via_up;  /* this attempt goes through the upstream proxy */
	bool by_name; /* ... asked for the name: the host's resolver had no address */
	struct upstream_conn up;
	const struct upstream_proxy *upx; /* the upstream for the destination as asked, or NULL */
	int up_status;			  /* the last upstream's answer, for the message; 0: none */
	bool up_socks;
	bool up_socks4;
	struct netproxy_request req; /* HTTP */
	struct netproxy_target t;
	bool tunnel;
	size_t consumed; /* head bytes the request took */
	struct netfence_addr addrs[NETFENCE_MAX_ANSWERS];
	size_t n_addrs, next_addr;
	int last_err;
	int64_t deadline, total_deadline;
	struct dir c2u, u2c;
	size_t hello_left; /* ST_SERVER_HELLO: bytes of the judged hello still to send */
	bool second_hello; /* ST_SNI: the hello that answers a HelloRetryRequest */
	short crev, urev;
	size_t head_len;
	unsigned char head[NETPROXY_HEAD_MAX];
};

enum slot_kind { SLOT_LISTEN, SLOT_CLIENT, SLOT_UP };

struct slot {
	enum slot_kind kind;
	unsigned idx, gen;
	int fd;
};

struct netproxy {
	int lfd[2];
	struct netproxy_rules rules;
	bool splice;
	unsigned next_gen;
	struct conn *c[NETPROXY_MAX_CONNS];
	struct slot slots[NETPROXY_POLLFDS_MAX];
	size_t n_slots;
	struct netproxy_stats st;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

struct netproxy *netproxy_new(int http_fd, int socks_fd, const struct netproxy_rules *r, bool splice,
			      struct moat_error *err)
{
	struct netproxy *np;

	if (!r->name_ok || !r->resolve || !r->addr_ok) {
		close(http_fd);
		close(socks_fd);
		moat_error_set(err, MOAT_E_USAGE, 0, "netproxy: the rules need name_ok, resolve and addr_ok");
		return NULL;
	}
	np = moat_xcalloc(1, sizeof(*np));
	np->lfd[L_HTTP] = http_fd;
	np->lfd[L_SOCKS] = socks_fd;
	np->rules = *r;
	np->splice = splice;
	return np;
}

static void dir_free(struct dir *d)
{
	free(d->buf);
	d->buf = NULL;
	close_fd(&d->pipe[0]);
	close_fd(&d->pipe[1]);
}

static void conn_free(struct netproxy *np, size_t i)
{
	struct conn *c = np->c[i];

	close_fd(&c->cfd);
	close_fd(&c->ufd);
	upstream_close(&c->up);
	dir_free(&c->c2u);
	dir_free(&c->u2c);
	free(c);
	np->c[i] = NULL;
}

void netproxy_free(struct netproxy *np)
{
	if (!np)
		return;
	for (size_t i = 0; i < ARRAY_LEN(np->c); i++)
		if (np->c[i])
			conn_free(np, i);
	close_fd(&np->lfd[0]);
	close_fd(&np->lfd[1]);
	free(np);
}

void netproxy_get_stats(const struct netproxy *np, struct netproxy_stats *out)
{
	*out = np->st;
}

static size_t conn_index(const struct netproxy *np, const struct conn *c)
{
	for (size_t i = 0; i < ARRAY_LEN(np->c); i++)
		if (np->c[i] == c)
			return i;
	return 0; /* cannot happen: every conn is in the table */
}

/* A small reply to the client (a fresh socket: it fits), then the end:
 * the write side shut and what the client still sent read away, so that
 * closing does not reset the connection before the reply is read. */
static void conn_end(struct netproxy *np, struct conn *c, const void *reply, size_t len)
{
	if (len && c->cfd >= 0) {
		char sink[4096];
		(void)send(c->cfd, reply, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		shutdown(c->cfd, SHUT_WR);
		for (int k = 0; k < 16 && recv(c->cfd, sink, sizeof(sink), MSG_DONTWAIT) > 0; k++)
			;
	}
	conn_free(np, conn_index(np, c));
}

static void http_error(struct netproxy *np, struct conn *c, int status, const char *why)
{
	char body[NETFENCE_NAME_MAX + 128], out[NETFENCE_NAME_MAX + 384];
	const char *reason = status == 400   ? "Bad Request"
			     : status == 403 ? "Forbidden"
			     : status == 408 ? "Request Timeout"
			     : status == 431 ? "Request Header Fields Too Large"
			     : status == 501 ? "Not Implemented"
			     : status == 502 ? "Bad Gateway"
			     : status == 503 ? "Service Unavailable"
					     : "Gateway Timeout";
	int bl = snprintf(body, sizeof(body), "moat: %s\n", why);
	int ol =
	    snprintf(out, sizeof(out),
		     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		     status, reason, bl, body);
	conn_end(np, c, out, ol > 0 && (size_t)ol < sizeof(out) ? (size_t)ol : 0);
}

static void socks_error(struct netproxy *np, struct conn *c, unsigned code)
{
	unsigned char r[10] = {5, (unsigned char)code, 0, 1};
	conn_end(np, c, r, sizeof(r));
}

/* A refusal, in the protocol the client speaks. */
static void refuse(struct netproxy *np, struct conn *c, int http_status, unsigned socks_code, const char *why)
{
	if (c->kind == L_HTTP)
		http_error(np, c, http_status, why);
	else
		socks_error(np, c, socks_code);
}

static void target_text(const struct conn *c, char *buf, size_t len)
{
	bool v6 = c->t.is_addr && c->t.addr.family == AF_INET6;
	snprintf(buf, len, "%s%s%s:%u", v6 ? "[" : "", c->t.host, v6 ? "]" : "", c->t.port);
}

static void proxy_event(struct netproxy *np, const struct conn *c, enum netproxy_event_kind kind)
{
	struct netproxy_event ev = {.kind = kind, .host = c->t.host, .port = c->t.port, .socks = c->kind == L_SOCKS};

	if (np->rules.event)
		np->rules.event(np->rules.ctx, &ev);
}

/* The connection could not be made (errno e, or the upstream's refusal). */
static void fail(struct netproxy *np, struct conn *c, int e)
{
	char what[NETFENCE_NAME_MAX + 80], tt[NETFENCE_NAME_MAX + 16];
	unsigned code = e == ECONNREFUSED ? 5 : e == ENETUNREACH ? 3 : e == EHOSTUNREACH ? 4 : e == ETIMEDOUT ? 6 : 1;

	np->st.failed++;
	proxy_event(np, c, NETPROXY_EV_FAILED);
	target_text(c, tt, sizeof(tt));
	if (c->up_status && c->up_socks)
		snprintf(what, sizeof(what), "the upstream SOCKS%d proxy refused %s (reply %d)", c->up_socks4 ? 4 : 5,
			 tt, c->up_status);
	else if (c->up_status)
		snprintf(what, sizeof(what), "the upstream proxy answered %d for %s", c->up_status, tt);
	else
		snprintf(what, sizeof(what), "%s: %s", tt, e ? strerror(e) : "no address");
	refuse(np, c, e == ETIMEDOUT ? 504 : 502, code, what);
}

static void connect_next(struct netproxy *np, struct conn *c);

/* The rules refused the destination: 403, or SOCKS reply 2. */
static void refuse_by_rules(struct netproxy *np, struct conn *c)
{
	char tt[NETFENCE_NAME_MAX + 16], why[NETFENCE_NAME_MAX + 64];

	np->st.refused++;
	proxy_event(np, c, NETPROXY_EV_REFUSED);
	target_text(c, tt, sizeof(tt));
	snprintf(why, sizeof(why), "%s is not on the allowlist", tt);
	refuse(np, c, 403, 2, why);
}

static void upstream_by_name(struct netproxy *np, struct conn *c);

static void resolve_step(struct netproxy *np, struct conn *c)
{
	int r = np->rules.resolve(np->rules.ctx, c->t.host, c->t.port, c->addrs, ARRAY_LEN(c->addrs));

	if (r == NETFENCE_RESOLVE_PENDING) {
		if (c->st != ST_RESOLVE) {
			c->st = ST_RESOLVE;
			c->deadline = moat_mono_ns() + RESOLVE_NS;
		}
		return;
	}
	if (r == NETFENCE_RESOLVE_DENIED) {
		refuse_by_rules(np, c);
		return;
	}
	/* No address from the host's resolver at all: where the host
	 * resolves outside names only through its proxy, the proxy is the
	 * one that knows the name.  Addresses the rebinding rule withheld
	 * (r == 0) are not that: they stay refused. */
	if ((r == NETFENCE_RESOLVE_FAILED || r == NETPROXY_RESOLVE_NONE) && c->upx) {
		upstream_by_name(np, c);
		return;
	}
	if (r <= 0) {
		c->last_err = r == NETFENCE_RESOLVE_FAILED ? EHOSTUNREACH : 0;
		fail(np, c, c->last_err);
		return;
	}
	c->n_addrs = (size_t)r > ARRAY_LEN(c->addrs) ? ARRAY_LEN(c->addrs) : (size_t)r;
	c->next_addr = 0;
	connect_next(np, c);
}

/* Begin asking the upstream for host (an address as text, or the name),
 * or, with host NULL, only connect to it (an absolute-form request by
 * name, spoken to it as it is).  false: it could not begin (c->last_err). */
static bool upstream_begin(struct conn *c, const char *host, int64_t now)
{
	int rc = upstream_start(&c->up, c->upx, host, c->t.port);

	if (rc < 0) {
		c->last_err = -rc;
		return false;
	}
	c->via_up = true;
	c->st = ST_CONNECT;
	c->deadline = !c->total_deadline || now + CONNECT_NS < c->total_deadline ? now + CONNECT_NS : c->total_deadline;
	return true;
}

/* The name goes to the upstream as it is: CONNECT name:port, or the
 * request to forward in absolute form (an HTTP proxy; a SOCKS5 one is
 * asked for a tunnel to the name, and the request goes in origin form). */
static void upstream_by_name(struct netproxy *np, struct conn *c)
{
	c->by_name = true;
	if (!upstream_begin(c, c->tunnel || c->upx->socks ? c->t.host : NULL, moat_mono_ns()))
		fail(np, c, c->last_err);
}

/* Does the address a of the destination go through the upstream?  When
 * the rules give one for the destination as asked (c->upx) and for the
 * address itself: the host's own loopback, or an address NO_PROXY names,
 * is reached directly, as the fence reaches it. */
static bool addr_via_upstream(struct netproxy *np, const struct conn *c, const struct netfence_addr *a, char *text,
			      size_t len)
{
	if (!c->upx)
		return false;
	inet_ntop(a->family, a->family == AF_INET ? (const void *)&a->v4 : (const void *)&a->v6, text, (socklen_t)len);
	return c->t.is_addr || np->rules.upstream(np->rules.ctx, text, c->t.port) != NULL;
}

/* The upstream attempt that ends: its answer kept for the message. */
static void upstream_end(struct netproxy *np, struct conn *c)
{
	upstream_refusal_note(&np->st.upstream_refused, &c->up);
	if (c->up.status) {
		c->up_status = c->up.status;
		c->up_socks = c->up.socks;
		c->up_socks4 = c->up.socks4;
	}
	upstream_close(&c->up);
	c->via_up = false;
}

/* Connect to the next address of the name, directly or through the
 * upstream (CONNECT address:port), without blocking. */
static void connect_next(struct netproxy *np, struct conn *c)
{
	int64_t now = moat_mono_ns();

	close_fd(&c->ufd);
	upstream_end(np, c);
	if (!c->total_deadline)
		c->total_deadline = now + TOTAL_NS;
	while (c->next_addr < c->n_addrs && now < c->total_deadline) {
		const struct netfence_addr *a = &c->addrs[c->next_addr++];
		struct sockaddr_storage ss;
		socklen_t sl;
		char text[INET6_ADDRSTRLEN];

		if (addr_via_upstream(np, c, a, text, sizeof(text))) {
			if (upstream_begin(c, text, now))
				return;
			continue;
		}
		memset(&ss, 0, sizeof(ss));
		if (a->family == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)&ss;
			in->sin_family = AF_INET;
			in->sin_addr = a->v4;
			in->sin_port = htons(c->t.port);
			sl = sizeof(*in);
		} else {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
			in6->sin6_family = AF_INET6;
			in6->sin6_addr = a->v6;
			in6->sin6_port = htons(c->t.port);
			sl = sizeof(*in6);
		}
		int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			c->last_err = errno;
			continue;
		}
		if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
			c->last_err = errno;
			close(fd);
			continue;
		}
		c->ufd = fd;
		c->st = ST_CONNECT;
		c->deadline = now + CONNECT_NS < c->total_deadline ? now + CONNECT_NS : c->total_deadline;
		return;
	}
	fail(np, c, now >= c->total_deadline ? ETIMEDOUT : c->last_err);
}

/* The rewritten head of an absolute-form request: origin form (or, to an
 * upstream proxy asked by name, the absolute form rebuilt from the checked
 * target, with moat's credentials), Host from the target, hop-by-hop
 * headers dropped, one request per connection.  Its length, or 0 when it
 * does not fit cap. */
static size_t build_forward(const struct conn *c, unsigned char *out, size_t cap)
{
	static const char *const drop[] = {
	    "connection:", "keep-alive:", "proxy-connection:", "proxy-authorization:", "host:", "te:", "upgrade:"};
	const struct netproxy_request *r = &c->req;
	const unsigned char *h = c->head;
	size_t o = 0, p, path_off, tl;
	char host[NETFENCE_NAME_MAX + 16], target[NETFENCE_NAME_MAX + 16 + NETPROXY_HEAD_MAX];
	bool v6 = c->t.is_addr && c->t.addr.family == AF_INET6;
	int hl;

#define PUT(src, n)                                                                                                    \
	do {                                                                                                           \
		if (o + (n) > cap)                                                                                     \
			return 0;                                                                                      \
		memcpy(out + o, (src), (n));                                                                           \
		o += (n);                                                                                              \
	} while (0)
	/* An HTTP proxy asked by name takes the absolute form; through a
	 * tunnel (to an address, or a SOCKS5 one's) the request goes to the
	 * server, as a direct one does. */
	bool to_proxy = c->via_up && c->by_name && !c->upx->socks;

	tl = netproxy_forward_target(r, h, target, sizeof(target), &path_off);
	if (!tl)
		return 0;
	PUT(h, r->method_len);
	PUT(" ", 1);
	if (to_proxy)
		PUT(target, tl);
	else
		PUT(target + path_off, tl - path_off);
	PUT(" ", 1);
	PUT(h + r->version_off, 8);
	PUT("\r\n", 2);
	for (p = r->headers_off; p < r->head_len;) {
		const unsigned char *nl = memchr(h + p, '\n', r->head_len - p);
		size_t e = (size_t)(nl - h), ll = e > p && h[e - 1] == '\r' ? e - 1 - p : e - p;
		bool keep = ll > 0;
		for (size_t k = 0; keep && k < ARRAY_LEN(drop); k++)
			if (ieq_prefix(h + p, ll, drop[k]))
				keep = false;
		if (keep) {
			PUT(h + p, ll);
			PUT("\r\n", 2);
		}
		p = e + 1;
	}
	hl = snprintf(host, sizeof(host), "%s%s%s", v6 ? "[" : "", c->t.host, v6 ? "]" : "");
	PUT("Host: ", 6);
	PUT(host, (size_t)hl);
	if (c->t.port != 80) {
		hl = snprintf(host, sizeof(host), ":%u", c->t.port);
		PUT(host, (size_t)hl);
	}
	PUT("\r\nConnection: close\r\n", 21);
	if (to_proxy && c->upx->auth) {
		PUT("Proxy-Authorization: ", 21);
		PUT(c->upx->auth, strlen(c->upx->auth));
		PUT("\r\n", 2);
	}
	PUT("\r\n", 2);
#undef PUT
	return o;
}

static bool dir_init(struct netproxy *np, struct dir *d)
{
	d->buf = moat_xmalloc(BUF_SIZE);
	if (np->splice) {
		if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
			return false;
		/* What the pipe holds is what the kernel gave (the user's pipe
		 * pages may be used up): asking for more than that would poll
		 * for room there is not. */
		(void)fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_SIZE);
		int cap = fcntl(d->pipe[1], F_GETPIPE_SZ);
		if (cap <= 0)
			return false;
		d->pipe_cap = (size_t)cap;
	}
	return true;
}

static void relay_step(struct netproxy *np, struct conn *c, short crev, short urev);

/* The destination answered: tell the client, and start relaying. */
static void connected(struct netproxy *np, struct conn *c)
{
	static const char ok200[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	static const unsigned char socks_ok[10] = {5, 0, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t rest = c->head_len - c->consumed;

	c->deadline = 0;
	np->st.tunnels++;
	proxy_event(np, c, NETPROXY_EV_TUNNEL);
	if (c->via_up)
		np->st.via_upstream++;
	if (c->via_up && c->by_name)
		np->st.via_upstream_by_name++;
	if (!dir_init(np, &c->c2u) || !dir_init(np, &c->u2c)) {
		np->st.bad++;
		refuse(np, c, 503, 1, "out of pipes");
		return;
	}
	if (c->kind == L_HTTP && c->tunnel) {
		if (send(c->cfd, ok200, sizeof(ok200) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(ok200) - 1) {
			conn_free(np, conn_index(np, c));
			return;
		}
	} else if (c->kind == L_SOCKS) {
		if (send(c->cfd, socks_ok, sizeof(socks_ok), MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    (ssize_t)sizeof(socks_ok)) {
			conn_free(np, conn_index(np, c));
			return;
		}
	} else {
		c->c2u.len = build_forward(c, c->c2u.buf, BUF_SIZE - NETPROXY_HEAD_MAX);
		if (!c->c2u.len) {
			np->st.bad++;
			refuse(np, c, 431, 1, "the request head is too long");
			return;
		}
	}
	/* What the client sent after its request (a body, a ClientHello). */
	memcpy(c->c2u.buf + c->c2u.len, c->head + c->consumed, rest);
	c->c2u.len += rest;
	/* Every port by default: TLS on 8443 fronts other names as well as on
	 * 443, and bytes that are not TLS pass at their first byte. */
	bool tls = np->rules.tls_port ? np->rules.tls_port(np->rules.ctx, c->t.port) : true;
	c->st = c->tunnel && tls ? ST_SNI : ST_RELAY;
	relay_step(np, c, 0, 0);
}

/* The rules' answer for the request. */
static void decide(struct netproxy *np, struct conn *c)
{
	bool ok = c->t.is_addr ? np->rules.addr_ok(np->rules.ctx, &c->t.addr, c->t.port)
			       : np->rules.name_ok(np->rules.ctx, c->t.host, c->t.port);

	if (!ok) {
		refuse_by_rules(np, c);
		return;
	}
	/* Through the upstream too, moat connects to what it checked: the
	 * addresses, each in turn (connect_next), never the name for the
	 * upstream to resolve, save when the host cannot (resolve_step). */
	c->upx = np->rules.upstream ? np->rules.upstream(np->rules.ctx, c->t.host, c->t.port) : NULL;
	if (c->t.is_addr) {
		c->addrs[0] = c->t.addr;
		c->n_addrs = 1;
		connect_next(np, c);
		return;
	}
	resolve_step(np, c);
}

static void read_head(struct netproxy *np, struct conn *c)
{
	ssize_t n = recv(c->cfd, c->head + c->head_len, sizeof(c->head) - c->head_len, MSG_DONTWAIT);
	int rc;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_free(np, conn_index(np, c));
		return;
	}
	if (n < 0)
		return;
	c->head_len += (size_t)n;
	if (c->kind == L_HTTP) {
		rc = netproxy_parse_http(c->head, c->head_len, &c->req);
		if (rc == 0)
			return;
		if (rc < 0) {
			np->st.bad++;
			http_error(np, c, -rc,
				   rc == -431	? "the request head is too long"
				   : rc == -501 ? "a proxy request is CONNECT host:port, or http://... in absolute form"
						: "malformed request");
			return;
		}
		c->consumed = (size_t)rc;
		c->t = c->req.t;
		c->tunnel = c->req.kind == NETPROXY_TUNNEL;
		decide(np, c);
		return;
	}
	if (!c->socks_greeted) {
		bool noauth = false;
		rc = netproxy_parse_socks_greeting(c->head, c->head_len, &noauth);
		if (rc == 0)
			return;
		if (rc < 0 || !noauth) {
			static const unsigned char no[2] = {5, 0xff};
			np->st.bad++;
			conn_end(np, c, no, rc < 0 ? 0 : sizeof(no));
			return;
		}
		static const unsigned char yes[2] = {5, 0};
		if (send(c->cfd, yes, sizeof(yes), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(yes)) {
			conn_free(np, conn_index(np, c));
			return;
		}
		c->socks_greeted = true;
		memmove(c->head, c->head + rc, c->head_len - (size_t)rc);
		c->head_len -= (size_t)rc;
	}
	rc = netproxy_parse_socks_request(c->head, c->head_len, &c->t);
	if (rc == 0) {
		if (c->head_len >= sizeof(c->head)) { /* cannot be: a request is at most 262 bytes */
			np->st.bad++;
			conn_free(np, conn_index(np, c));
		}
		return;
	}
	if (rc < 0) {
		np->st.bad++;
		socks_error(np, c, (unsigned)-rc);
		return;
	}
	c->consumed = (size_t)rc;
	c->tunnel = true;
	decide(np, c);
}

static void connect_progress(struct netproxy *np, struct conn *c)
{
	if (c->via_up) {
		int rc = upstream_step(&c->up);
		if (rc == 0)
			return;
		if (rc < 0) {
			c->last_err = -rc;
			connect_next(np, c); /* the next address, if any */
			return;
		}
		c->ufd = upstream_take_fd(&c->up);
		connected(np, c);
		return;
	}
	int e = 0;
	socklen_t l = sizeof(e);
	struct pollfd pf = {.fd = c->ufd, .events = POLLOUT};
	if (poll(&pf, 1, 0) <= 0)
		return;
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		e = errno;
	if (e) {
		c->last_err = e;
		connect_next(np, c);
		return;
	}
	connected(np, c);
}

/* ---- relaying ---- */

static bool dir_room(const struct netproxy *np, const struct dir *d)
{
	if (d->eof)
		return false;
	return np->splice ? d->in_pipe < d->pipe_cap : d->off + d->len < BUF_SIZE;
}

/* Room in d's buffer (the states before the relay read into it only). */
static bool buf_room(const struct dir *d)
{
	return d->off + d->len < BUF_SIZE && !d->eof;
}

static bool dir_pending(const struct dir *d)
{
	return d->len > 0 || d->in_pipe > 0;
}

/* Read from src into d: 0, or -1 on an error (the connection ends). */
static int dir_fill(struct netproxy *np, struct dir *d, int src, bool to_buf)
{
	ssize_t n;

	if (d->eof)
		return 0;
	if (np->splice && !to_buf) {
		if (d->in_pipe >= d->pipe_cap)
			return 0;
		n = splice(src, NULL, d->pipe[1], NULL, d->pipe_cap - d->in_pipe, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n > 0)
			d->in_pipe += (size_t)n;
	} else {
		if (d->off + d->len == BUF_SIZE && d->off > 0) {
			memmove(d->buf, d->buf + d->off, d->len);
			d->off = 0;
		}
		if (d->off + d->len == BUF_SIZE)
			return 0;
		n = recv(src, d->buf + d->off + d->len, BUF_SIZE - d->off - d->len, MSG_DONTWAIT);
		if (n > 0)
			d->len += (size_t)n;
	}
	if (n == 0)
		d->eof = true;
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		return -1;
	return 0;
}

/* Write what d holds to dst; shut dst's write side once the source ended
 * and everything went.  0, or -1 on an error. */
static int dir_flush(struct dir *d, int dst, unsigned long long *count)
{
	ssize_t n;

	while (d->len > 0) {
		n = send(dst, d->buf + d->off, d->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		d->off += (size_t)n;
		d->len -= (size_t)n;
		*count += (unsigned long long)n;
	}
	d->off = 0;
	while (d->in_pipe > 0) {
		n = splice(d->pipe[0], NULL, dst, NULL, d->in_pipe, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (n == 0)
			return -1;
		d->in_pipe -= (size_t)n;
		*count += (unsigned long long)n;
	}
	if (d->eof && !d->shut) {
		shutdown(dst, SHUT_WR);
		d->shut = true;
	}
	return 0;
}

/* The change_cipher_spec and application_data (early data) records a
 * client may send before its second hello: their length, whole ones only;
 * *partial when one is not whole yet. */
static size_t records_before_hello(const unsigned char *b, size_t n, bool *partial)
{
	size_t off = 0;

	*partial = false;
	while (off < n && (b[off] == 0x14 || b[off] == 0x17)) {
		if (off + 5 > n || off + 5 + get16(b + off + 3) > n) {
			*partial = true;
			break;
		}
		off += 5 + get16(b + off + 3);
	}
	return off;
}

/* A tunnel before its first bytes were judged: they must be a ClientHello
 * for the host asked for (or not TLS at all).  After a HelloRetryRequest,
 * the second hello is judged alike, and must be one. */
static bool sni_judge(struct netproxy *np, struct conn *c)
{
	char name[NETFENCE_NAME_MAX + 1];
	const unsigned char *b = c->c2u.buf + c->c2u.off;
	bool partial = false;
	size_t skip = c->second_hello ? records_before_hello(b, c->c2u.len, &partial) : 0, used = 0;
	enum netproxy_sni s =
	    partial ? NETPROXY_SNI_MORE : netproxy_parse_hello(b + skip, c->c2u.len - skip, name, sizeof(name), &used);

	if (s == NETPROXY_SNI_MORE) {
		if (c->c2u.off + c->c2u.len < BUF_SIZE && !c->c2u.eof)
			return true; /* wait for the rest */
		/* A client that half-closed before sending anything (it only
		 * reads a server's banner) sent no TLS. */
		s = c->c2u.len ? NETPROXY_SNI_BAD : NETPROXY_SNI_NOT_TLS;
	}
	/* A client that answers a HelloRetryRequest with anything but a
	 * hello is no TLS client: nothing of it goes. */
	if (c->second_hello && s == NETPROXY_SNI_NOT_TLS && c->c2u.len)
		s = NETPROXY_SNI_BAD;
	if (s == NETPROXY_SNI_BAD || (s == NETPROXY_SNI_NAME && (c->t.is_addr || strcmp(name, c->t.host) != 0))) {
		np->st.sni_refused++;
		proxy_event(np, c, NETPROXY_EV_SNI_REFUSED);
		conn_free(np, conn_index(np, c));
		return false;
	}
	if (!c->second_hello && s != NETPROXY_SNI_NOT_TLS) {
		c->st = ST_SERVER_HELLO;
		c->hello_left = used;
		return true;
	}
	c->st = ST_RELAY;
	return true;
}

/* ST_SERVER_HELLO: send the judged hello (the client's bytes after it
 * wait).  0, or -1 on an error. */
static int hello_send(struct netproxy *np, struct conn *c)
{
	while (c->hello_left > 0) {
		ssize_t n = send(c->ufd, c->c2u.buf + c->c2u.off, c->hello_left, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		c->c2u.off += (size_t)n;
		c->c2u.len -= (size_t)n;
		c->hello_left -= (size_t)n;
		np->st.bytes_up += (unsigned long long)n;
	}
	return 0;
}

/* ST_SERVER_HELLO, the hello sent: the server's first bytes (held in u2c)
 * say whether a second hello is to be judged. */
static void server_hello_judge(struct conn *c)
{
	int r = netproxy_server_hello_retry(c->u2c.buf + c->u2c.off, c->u2c.len);

	if (r < 0 && !c->u2c.eof && c->u2c.off + c->u2c.len < BUF_SIZE)
		return; /* not yet */
	if (r == 1) {
		c->st = ST_SNI;
		c->second_hello = true;
	} else {
		c->st = ST_RELAY;
	}
}

static void relay_step(struct netproxy *np, struct conn *c, short crev, short urev)
{
	/* Until the hellos are judged, both directions go through the buffers
	 * (the pipes only after: a buffer's bytes go before a pipe's). */
	bool held = c->st != ST_RELAY;

	/* An end that failed, or hung up with nothing more to come from it:
	 * nothing can move any more. */
	if ((crev | urev) & (POLLERR | POLLNVAL) || ((crev & POLLHUP) && c->c2u.eof) ||
	    ((urev & POLLHUP) && c->u2c.eof))
		goto end;

	/* Until the hello is judged, the client's bytes stay in the buffer
	 * (and nothing of them goes out); the far end's flow freely, save
	 * its first message, read first. */
	if (dir_fill(np, &c->c2u, c->cfd, held) < 0 || dir_fill(np, &c->u2c, c->ufd, held) < 0)
		goto end;
	if (c->st == ST_SNI && !sni_judge(np, c))
		return;
	if (c->st == ST_SERVER_HELLO) {
		if (hello_send(np, c) < 0)
			goto end;
		if (c->hello_left == 0)
			server_hello_judge(c);
		if (c->st == ST_SERVER_HELLO)
			return;
		/* The second hello may be there already. */
		if (c->st == ST_SNI && !sni_judge(np, c))
			return;
	}
	if (c->st == ST_SNI) {
		if (dir_flush(&c->u2c, c->cfd, &np->st.bytes_down) < 0)
			goto end;
		return;
	}
	if (dir_flush(&c->c2u, c->ufd, &np->st.bytes_up) < 0 || dir_flush(&c->u2c, c->cfd, &np->st.bytes_down) < 0)
		goto end;
	if (c->c2u.shut && c->u2c.shut)
		goto end;
	return;
end:
	conn_free(np, conn_index(np, c));
}

/* ---- the poll loop ---- */

static void accept_on(struct netproxy *np, enum listener_kind kind)
{
	for (int k = 0; k < 8; k++) {
		int fd = accept4(np->lfd[kind], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		size_t i;

		if (fd < 0)
			return;
		np->st.accepted++;
		for (i = 0; i < ARRAY_LEN(np->c) && np->c[i]; i++)
			;
		if (i == ARRAY_LEN(np->c)) {
			np->st.bad++; /* full: the client sees the connection closed */
			close(fd);
			continue;
		}
		struct conn *c = moat_xcalloc(1, sizeof(*c));
		c->gen = ++np->next_gen;
		c->kind = kind;
		c->st = ST_HEAD;
		c->cfd = fd;
		c->ufd = -1;
		c->up.fd = -1;
		c->c2u.pipe[0] = c->c2u.pipe[1] = c->u2c.pipe[0] = c->u2c.pipe[1] = -1;
		c->deadline = moat_mono_ns() + HEAD_NS;
		np->c[i] = c;
	}
}

size_t netproxy_pollfds(struct netproxy *np, struct pollfd *fds, size_t max)
{
	size_t n = 0;

#define ADD(k, i, g, f, ev)                                                                                            \
	do {                                                                                                           \
		if (n < max && n < ARRAY_LEN(np->slots)) {                                                             \
			np->slots[n] = (struct slot){.kind = (k), .idx = (unsigned)(i), .gen = (g), .fd = (f)};        \
			fds[n++] = (struct pollfd){.fd = (f), .events = (short)(ev)};                                  \
		}                                                                                                      \
	} while (0)
	ADD(SLOT_LISTEN, L_HTTP, 0, np->lfd[L_HTTP], POLLIN);
	ADD(SLOT_LISTEN, L_SOCKS, 0, np->lfd[L_SOCKS], POLLIN);
	for (size_t i = 0; i < ARRAY_LEN(np->c); i++) {
		struct conn *c = np->c[i];
		if (!c)
			continue;
		switch (c->st) {
		case ST_HEAD:
			ADD(SLOT_CLIENT, i, c->gen, c->cfd, POLLIN);
			break;
		case ST_RESOLVE:
			break;
		case ST_CONNECT:
			if (c->via_up)
				ADD(SLOT_UP, i, c->gen, c->up.fd, upstream_events(&c->up));
			else
				ADD(SLOT_UP, i, c->gen, c->ufd, POLLOUT);
			break;
		case ST_SNI:
		case ST_SERVER_HELLO:
		case ST_RELAY: {
			/* Before the relay, buffers only (relay_step); in
			 * ST_SERVER_HELLO only the hello goes out, and the
			 * server's bytes wait to be read. */
			bool held = c->st != ST_RELAY, sh = c->st == ST_SERVER_HELLO;
			bool c_room = held ? buf_room(&c->c2u) : dir_room(np, &c->c2u);
			bool u_room = held ? buf_room(&c->u2c) : dir_room(np, &c->u2c);
			bool up_out = sh ? c->hello_left > 0 : !held && dir_pending(&c->c2u);
			ADD(SLOT_CLIENT, i, c->gen, c->cfd,
			    (c_room ? POLLIN : 0) | (!sh && dir_pending(&c->u2c) ? POLLOUT : 0));
			ADD(SLOT_UP, i, c->gen, c->ufd, (u_room ? POLLIN : 0) | (up_out ? POLLOUT : 0));
			break;
		}
		}
	}
#undef ADD
	np->n_slots = n;
	return n;
}

int netproxy_timeout_ms(const struct netproxy *np)
{
	int64_t next = INT64_MAX;

	for (size_t i = 0; i < ARRAY_LEN(np->c); i++)
		if (np->c[i] && np->c[i]->deadline && np->c[i]->deadline < next)
			next = np->c[i]->deadline;
	return moat_poll_ms_until(next);
}

static void step(struct netproxy *np, struct conn *c)
{
	short crev = c->crev, urev = c->urev;

	c->crev = c->urev = 0;
	switch (c->st) {
	case ST_HEAD:
		if (crev)
			read_head(np, c);
		break;
	case ST_RESOLVE:
		break;
	case ST_CONNECT:
		if (urev)
			connect_progress(np, c);
		break;
	case ST_SNI:
	case ST_SERVER_HELLO:
	case ST_RELAY:
		relay_step(np, c, crev, urev);
		break;
	}
}

static void handle_timeouts(struct netproxy *np)
{
	int64_t now = moat_mono_ns();

	for (size_t i = 0; i < ARRAY_LEN(np->c); i++) {
		struct conn *c = np->c[i];
		if (!c || !c->deadline || c->deadline > now)
			continue;
		if (c->st == ST_HEAD) {
			np->st.bad++;
			conn_free(np, i);
		} else if (c->st == ST_RESOLVE) {
			fail(np, c, ETIMEDOUT);
		} else if (c->st == ST_CONNECT && c->next_addr < c->n_addrs && now < c->total_deadline) {
			connect_next(np, c); /* this address did not answer: the next */
		} else if (c->st == ST_CONNECT) {
			fail(np, c, ETIMEDOUT);
		}
	}
}

void netproxy_handle(struct netproxy *np, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < n && i < np->n_slots; i++) {
		const struct slot *s = &np->slots[i];
		struct conn *c;

		if (!fds[i].revents || fds[i].fd != s->fd)
			continue;
		if (s->kind == SLOT_LISTEN) {
			accept_on(np, (enum listener_kind)s->idx);
			continue;
		}
		c = np->c[s->idx];
		if (!c || c->gen != s->gen)
			continue; /* gone, and its place taken, since pollfds */
		if (s->kind == SLOT_CLIENT)
			c->crev |= fds[i].revents;
		else
			c->urev |= fds[i].revents;
	}
	for (size_t i = 0; i < ARRAY_LEN(np->c); i++)
		if (np->c[i] && (np->c[i]->crev || np->c[i]->urev))
			step(np, np->c[i]);
	handle_timeouts(np);
}

void netproxy_names_ready(struct netproxy *np)
{
	for (size_t i = 0; i < ARRAY_LEN(np->c); i++)
		if (np->c[i] && np->c[i]->st == ST_RESOLVE)
			resolve_step(np, np->c[i]);
}
