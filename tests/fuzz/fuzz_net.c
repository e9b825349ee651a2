/* libFuzzer harness for the parsers of the fenced network's supervisor:
 * what moat, outside the sandbox, reads of the bytes the command sends it
 * (kernel/netproxy.c: the HTTP proxy's request head, its authority, the
 * SOCKS5 greeting and request, the ClientHello's server_name, the target
 * handed to an upstream; kernel/netfence.c: the fenced DNS's reply to a
 * query, the sockaddr of a connect or bind) and of an upstream proxy's
 * replies (kernel/upstream.c).  The first byte picks the parser.
 *
 * Besides ASan/UBSan's checks (libFuzzer's buffer is exactly the input:
 * every read past it is caught; the output buffers are allocated to the
 * exact capacity given), each parse that succeeds is checked for what the
 * allowlist relies on: the host and port judged are well formed and are
 * the ones the bytes name (they read back to themselves from their own
 * text, and a name is never text the resolver would take for an address);
 * a server_name is a name, NUL-terminated within its buffer; a DNS reply
 * fits its capacity and is a well-formed answer to the question parsed;
 * and a verdict on a prefix of the bytes never contradicts the verdict on
 * all of them (the supervisor judges what has arrived so far).
 *
 * netfence.c's DNS answer (dns_reply), its sockaddr reader (inet_addr_of)
 * and bind_port are static: the file is included here, whole, so that the
 * product keeps them static and has no entry point for tests; the harness
 * is linked without netfence.o (run-fuzz-net). */
#include "../../src/kernel/netfence.c"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernel/netproxy.h"
#include "kernel/upstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define must(cond)                                                                                                     \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "fuzz_net: property failed at line %d: %s\n", __LINE__, #cond);                \
			abort();                                                                                       \
		}                                                                                                      \
	} while (0)

/* The bytes, copied to a buffer of exactly n bytes (ASan then sees any
 * read past them, as it does of libFuzzer's own). */
static unsigned char *exact(const uint8_t *b, size_t n)
{
	unsigned char *p = malloc(n ? n : 1);

	must(p != NULL);
	if (n)
		memcpy(p, b, n);
	return p;
}

/* ---- targets ---- */

/* A name as the fence's rules take one: lower case [a-z0-9_-] and dots,
 * labels of 1-63, at most 253, no final dot; and not an address in any of
 * the forms the host's resolver reads (inet_aton's "127.1", "0x7f.1",
 * "2130706433"), whose connection would go to that address, not to a name
 * the allowlist judged (number: the caller compares such a name with one
 * that is not). */
static void check_name(const char *s, bool number)
{
	size_t len = strlen(s), label = 0;
	struct in_addr ia;

	must(len >= 1 && len <= NETFENCE_NAME_MAX);
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '.') {
			must(label > 0);
			label = 0;
			continue;
		}
		must((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_');
		must(++label <= 63);
	}
	must(label > 0);
	must(number || inet_aton(s, &ia) == 0);
}

/* A target a parser filled: well formed, and its text reads back to itself. */
static void check_target(const struct netproxy_target *t)
{
	char text[NETFENCE_NAME_MAX + 16];
	struct netproxy_target again;
	bool v6 = t->is_addr && t->addr.family == AF_INET6;

	must(t->port >= 1);
	must(memchr(t->host, '\0', sizeof(t->host)) != NULL);
	if (t->is_addr) {
		unsigned char bytes[16];
		char back[INET6_ADDRSTRLEN];
		must(t->addr.family == AF_INET || t->addr.family == AF_INET6);
		must(inet_pton(t->addr.family, t->host, bytes) == 1);
		must(memcmp(bytes, t->addr.family == AF_INET ? (const void *)&t->addr.v4 : (const void *)&t->addr.v6,
			    t->addr.family == AF_INET ? 4 : 16) == 0);
		if (v6)
			must(!IN6_IS_ADDR_V4MAPPED(&t->addr.v6)); /* v4-mapped is given as IPv4 */
		inet_ntop(t->addr.family, bytes, back, sizeof(back));
		must(strcmp(back, t->host) == 0);
	} else {
		check_name(t->host, false);
	}
	snprintf(text, sizeof(text), "%s%s%s:%u", v6 ? "[" : "", t->host, v6 ? "]" : "", t->port);
	must(netproxy_parse_authority(text, strlen(text), 0, &again) == 0);
	must(again.is_addr == t->is_addr && again.port == t->port && strcmp(again.host, t->host) == 0);
}

/* The host a client wrote in s[0..len), as the allowlist must see it: a
 * name lower-cased without its final dot. */
static void check_same_name(const struct netproxy_target *t, const char *s, size_t len)
{
	if (t->is_addr)
		return;
	if (len > 0 && s[len - 1] == '.')
		len--;
	must(strlen(t->host) == len);
	for (size_t i = 0; i < len; i++)
		must(t->host[i] == tolower((unsigned char)s[i]));
}

/* The host part of an authority s[0..len): brackets off, port off. */
static void authority_host(const char *s, size_t len, const char **h, size_t *hl)
{
	const char *close = len && s[0] == '[' ? memchr(s, ']', len) : NULL, *colon;

	if (close) {
		*h = s + 1;
		*hl = (size_t)(close - s - 1);
		return;
	}
	colon = memchr(s, ':', len);
	*h = s;
	*hl = colon ? (size_t)(colon - s) : len;
}

static void fuzz_authority(const uint8_t *d, size_t n)
{
	struct netproxy_target t;
	uint16_t dflt;
	const char *h;
	size_t hl;
	char *s;

	if (n < 1)
		return;
	dflt = d[0] & 1 ? 0 : 80;
	s = (char *)exact(d + 1, n - 1);
	memset(&t, 0x5a, sizeof(t));
	if (netproxy_parse_authority(s, n - 1, dflt, &t) == 0) {
		check_target(&t);
		authority_host(s, n - 1, &h, &hl);
		check_same_name(&t, h, hl);
		if (!memchr(s, ':', n - 1))
			must(t.port == dflt); /* no port written: the default */
	}
	free(s);
}

/* What a proxy like tinyproxy reads out of an absolute-form target: after
 * "http://", up to the first '/', '?' or '#', after the last '@'. */
static void reader_host(const char *target, char *out, size_t cap)
{
	const char *a = target + strlen("http://");
	size_t k = strcspn(a, "/?#");
	const char *at = memrchr(a, '@', k);

	if (at) {
		k -= (size_t)(at + 1 - a);
		a = at + 1;
	}
	snprintf(out, cap, "%.*s", (int)k, a);
}

static void fuzz_http(const uint8_t *d, size_t n)
{
	struct netproxy_request r, again;
	unsigned char *b = exact(d, n);
	int rc = netproxy_parse_http(b, n, &r);

	must(rc == 0 || rc == -400 || rc == -431 || rc == -501 || rc > 0);
	if (rc == 0)
		must(n < NETPROXY_HEAD_MAX);
	if (rc <= 0) {
		free(b);
		return;
	}
	size_t end = (size_t)rc;
	must(end <= n && end <= NETPROXY_HEAD_MAX && r.head_len == end && b[end - 1] == '\n');
	must(memchr(b, '\0', end) == NULL);
	must(r.target_off + r.target_len < end && r.version_off + 8 < end && r.headers_off <= end);
	/* A verdict on the bytes so far holds for all of them: one byte less
	 * of the head is incomplete, never another request. */
	must(netproxy_parse_http(b, end - 1, &again) == 0);
	check_target(&r.t);
	if (r.kind == NETPROXY_TUNNEL) {
		const char *h;
		size_t hl;
		must(r.method_len == 7 && memcmp(b, "CONNECT", 7) == 0);
		authority_host((const char *)b + r.target_off, r.target_len, &h, &hl);
		check_same_name(&r.t, h, hl);
	} else {
		char out[NETFENCE_NAME_MAX + 32 + NETPROXY_HEAD_MAX], host[NETFENCE_NAME_MAX + 32],
		    want[NETFENCE_NAME_MAX + 32];
		char req[sizeof(out) + 64];
		size_t po = 0, cap = (size_t)d[n - 1] % (sizeof(out) + 1), tl;
		bool v6 = r.t.is_addr && r.t.addr.family == AF_INET6;
		must(r.path_off + r.path_len == r.target_off + r.target_len);
		must(r.path_len == 0 || strchr("/?#", b[r.path_off]));
		/* What an upstream proxy is handed: built from what was
		 * checked; any reader takes the checked host out of it. */
		tl = netproxy_forward_target(&r, b, out, sizeof(out), &po);
		must(tl > 0 && tl < sizeof(out) && out[tl] == '\0' && strlen(out) == tl && po < tl && out[po] == '/');
		reader_host(out, host, sizeof(host));
		snprintf(want, sizeof(want), "%s%s%s:%u", v6 ? "[" : "", r.t.host, v6 ? "]" : "", r.t.port);
		must(strcmp(host, want) == 0);
		must(!strchr(out + po, '#'));
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\n\r\n", out);
		must(netproxy_parse_http((const unsigned char *)req, strlen(req), &again) > 0);
		must(again.kind == NETPROXY_FORWARD && again.t.is_addr == r.t.is_addr && again.t.port == r.t.port &&
		     strcmp(again.t.host, r.t.host) == 0);
		/* A smaller buffer: the whole target or nothing, never past cap. */
		char *small = malloc(cap ? cap : 1);
		must(small != NULL);
		size_t sl = netproxy_forward_target(&r, b, small, cap, &po);
		must(sl == 0 || (sl == tl && sl < cap && memcmp(small, out, tl + 1) == 0));
		must(sl != 0 || tl >= cap);
		free(small);
	}
	free(b);
}

static void fuzz_socks_greeting(const uint8_t *d, size_t n)
{
	bool noauth = false;
	unsigned char *b = exact(d, n);
	int rc = netproxy_parse_socks_greeting(b, n, &noauth);

	must(rc >= -1);
	if (rc > 0) {
		must(n >= 2 && (size_t)rc == 2u + b[1] && (size_t)rc <= n);
		must(noauth == (memchr(b + 2, 0, b[1]) != NULL));
		must(netproxy_parse_socks_greeting(b, (size_t)rc - 1, &noauth) == 0);
	}
	free(b);
}

static void fuzz_socks_request(const uint8_t *d, size_t n)
{
	struct netproxy_target t;
	unsigned char *b = exact(d, n);
	int rc;

	memset(&t, 0x5a, sizeof(t));
	rc = netproxy_parse_socks_request(b, n, &t);
	must(rc >= 0 || rc == -1 || rc == -4 || rc == -7 || rc == -8);
	if (rc > 0) {
		size_t want = b[3] == 1 ? 10 : b[3] == 4 ? 22 : 7u + b[4];
		must(n >= (size_t)rc && (size_t)rc == want && b[0] == 5 && b[1] == 1 && b[2] == 0);
		must(t.port == ((unsigned)b[rc - 2] << 8 | b[rc - 1]));
		check_target(&t);
		if (b[3] == 3)
			check_same_name(&t, (const char *)b + 5, b[4]);
		else
			must(t.is_addr);
		for (size_t k = 0; k < (size_t)rc; k += 1 + (size_t)rc / 8) {
			struct netproxy_target u;
			must(netproxy_parse_socks_request(b, k, &u) == 0);
		}
	}
	free(b);
}

static enum netproxy_sni sni_of(const unsigned char *b, size_t n, char **name_out)
{
	char *name = malloc(NETFENCE_NAME_MAX + 1);
	enum netproxy_sni s;

	must(name != NULL);
	memset(name, 0x5a, NETFENCE_NAME_MAX + 1);
	s = netproxy_parse_sni(b, n, name, NETFENCE_NAME_MAX + 1);
	must(s >= NETPROXY_SNI_MORE && s <= NETPROXY_SNI_BAD);
	if (s == NETPROXY_SNI_NAME) {
		must(memchr(name, '\0', NETFENCE_NAME_MAX + 1) != NULL);
		/* sni_judge compares it with the name asked, never a number. */
		check_name(name, true);
	}
	*name_out = name;
	return s;
}

/* Does the name occur in b[0..n), case aside? */
static bool occurs(const unsigned char *b, size_t n, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; i + l <= n; i++)
		if (strncasecmp((const char *)b + i, name, l) == 0)
			return true;
	return false;
}

static void fuzz_sni(const uint8_t *d, size_t n)
{
	unsigned char *b = exact(d, n);
	char *name, *pname;
	enum netproxy_sni s = sni_of(b, n, &name);

	/* One record: the name is bytes of the input (lower-cased). */
	if (s == NETPROXY_SNI_NAME && n >= 5 && (size_t)(5 + get16(b + 3)) >= n)
		must(occurs(b, n, name));
	/* The supervisor judges the bytes that have arrived: a prefix is
	 * either not enough yet, or judged as the whole is. */
	for (size_t k = 0; k < n; k += 1 + n / 8) {
		enum netproxy_sni p = sni_of(b, k, &pname);
		must(p == NETPROXY_SNI_MORE || p == s);
		if (p == NETPROXY_SNI_NAME)
			must(strcmp(pname, name) == 0);
		free(pname);
	}
	/* The hello's records: what the server gets before the client's next
	 * bytes wait; they alone are judged as the whole was. */
	size_t used = 0;
	char hname[NETFENCE_NAME_MAX + 1];
	must(netproxy_parse_hello(b, n, hname, sizeof(hname), &used) == s);
	if (s == NETPROXY_SNI_NAME || s == NETPROXY_SNI_NONE) {
		must(used >= 5 && used <= n);
		must(sni_of(b, used, &pname) == s && (s != NETPROXY_SNI_NAME || strcmp(pname, name) == 0));
		free(pname);
	}
	/* The same bytes as a server's first ones: a retry or not, never
	 * both, whatever part of them has come. */
	int r = netproxy_server_hello_retry(b, n);
	must(r >= -1 && r <= 1 && (r != -1 || n < 43));
	for (size_t k = 0; k < n; k += 1 + n / 8) {
		int rk = netproxy_server_hello_retry(b, k);
		must(rk == -1 || rk == r);
	}
	free(name);
	free(b);
}

/* ---- the fenced DNS ---- */

/* The rules' answer, from the input: mode & 3 picks it (addresses,
 * DENIED, PENDING, FAILED), mode >> 2 how many addresses, of both
 * families. */
static struct {
	unsigned mode;
	bool asked;
	char name[NETFENCE_NAME_MAX + 1];
	int qtype;
	size_t max;
	int r;
	struct netfence_addr given[NETFENCE_MAX_ANSWERS];
} dns_rules;

static void fake_addr(struct netfence_addr *a, size_t i, unsigned mode)
{
	memset(a, 0, sizeof(*a));
	if ((i + mode) % 3 == 0) {
		a->family = AF_INET6;
		a->v6.s6_addr[0] = 0x20, a->v6.s6_addr[1] = 0x01, a->v6.s6_addr[2] = 0x0d, a->v6.s6_addr[3] = 0xb8;
		a->v6.s6_addr[15] = (unsigned char)i;
	} else {
		a->family = AF_INET;
		a->v4.s_addr = htonl(0x0a000000u | (uint32_t)i);
	}
}

static int fake_resolve(void *ctx, const char *name, int qtype, struct netfence_addr *out, size_t max)
{
	(void)ctx;
	dns_rules.asked = true;
	snprintf(dns_rules.name, sizeof(dns_rules.name), "%s", name);
	dns_rules.qtype = qtype;
	dns_rules.max = max;
	switch (dns_rules.mode & 3) {
	case 1:
		return dns_rules.r = NETFENCE_RESOLVE_DENIED;
	case 2:
		return dns_rules.r = NETFENCE_RESOLVE_PENDING;
	case 3:
		return dns_rules.r = NETFENCE_RESOLVE_FAILED;
	}
	size_t k = (dns_rules.mode >> 2) & 0x1f;
	if (!out)
		return dns_rules.r = 0;
	if (k > max)
		k = max;
	for (size_t i = 0; i < k; i++) {
		fake_addr(&out[i], i, dns_rules.mode);
		dns_rules.given[i] = out[i];
	}
	return dns_rules.r = (int)k;
}

static struct netfence *dns_fence(void)
{
	static struct netfence *nf;

	if (!nf) {
		nf = calloc(1, sizeof(*nf));
		must(nf != NULL);
		nf->rules.resolve = fake_resolve;
	}
	return nf;
}

/* The question of q[0..n) as the fence must read it, written again here
 * from RFC 1035 rather than shared with dns_reply (an oracle of its own):
 * the name, lower case, dots between labels (*odd: a byte a host name has
 * not); its end in *qend.  false: no whole question (FORMERR). */
static bool question_of(const unsigned char *q, size_t n, char *name, size_t *qend, bool *odd)
{
	size_t off = 12, nl = 0;

	*odd = false;
	for (;;) {
		if (off >= n)
			return false;
		unsigned l = q[off];
		if (l == 0)
			break;
		if (l > 63 || off + 1 + l > n || nl + (nl ? 1 : 0) + l > NETFENCE_NAME_MAX)
			return false;
		if (nl)
			name[nl++] = '.';
		for (unsigned i = 0; i < l; i++) {
			int c = tolower(q[off + 1 + i]);
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
				*odd = true;
			name[nl++] = (char)c;
		}
		off += 1 + l;
	}
	name[nl] = '\0';
	*qend = off + 5;
	return *qend <= n;
}

static void fuzz_dns(const uint8_t *d, size_t n)
{
	struct netfence *nf = dns_fence();
	char want_name[NETFENCE_NAME_MAX + 1];
	size_t cap, m, qend = 0;
	bool deferred = true, expired, odd, parsed;
	unsigned char *q, *out;

	if (n < 3)
		return;
	dns_rules.mode = d[0];
	expired = d[1] & 0x80;
	cap = ((size_t)(d[1] & 0x7f) << 8 | d[2]) % 1024;
	q = exact(d + 3, n - 3);
	n -= 3;
	out = malloc(cap ? cap : 1);
	must(out != NULL);
	dns_rules.asked = false;
	m = dns_reply(nf, q, n, out, cap, expired, &deferred);
	must(m <= cap);
	if (deferred) {
		/* Only a lookup still under way defers, and nothing is sent. */
		must(m == 0 && !expired && dns_rules.asked && dns_rules.r == NETFENCE_RESOLVE_PENDING);
		goto done;
	}
	if (n < 12 || cap < 12 || (q[2] & 0x80)) {
		must(m == 0); /* not a query: no answer, ever (no reflection loop) */
		goto done;
	}
	must(m >= 12 && memcmp(out, q, 2) == 0 && (out[2] & 0x80));
	unsigned flags = get16(out + 2), rcode = flags & 0xf;
	must(((flags >> 11) & 0xf) == ((get16(q + 2) >> 11) & 0xf)); /* the opcode, as asked */
	must(get16(out + 8) == 0 && get16(out + 10) == 0);
	parsed = question_of(q, n, want_name, &qend, &odd);
	if (rcode == RC_NOTIMP || rcode == RC_FORMERR) {
		must(m == 12 && get16(out + 4) == 0 && get16(out + 6) == 0 && !dns_rules.asked);
		must(rcode == RC_NOTIMP ? ((get16(q + 2) >> 11) & 0xf) != 0
					: get16(q + 4) != 1 || !parsed || qend > cap);
		goto done;
	}
	/* An answer to the question asked: the question echoed, then only
	 * records for it (the name by pointer, the type asked, IN). */
	must(parsed && get16(q + 4) == 1 && qend <= m);
	must(get16(out + 4) == 1 && memcmp(out + 12, q + 12, qend - 12) == 0);
	unsigned qtype = get16(q + qend - 4), qclass = get16(q + qend - 2);
	struct in_addr number;
	/* Asked: an IN question for a host name (not one the resolver reads
	 * as an address: NXDOMAIN). */
	bool asked = qclass == 1 && !odd && want_name[0] && inet_aton(want_name, &number) == 0;
	must(dns_rules.asked == asked);
	if (asked) {
		must(strcmp(dns_rules.name, want_name) == 0 && dns_rules.qtype == (int)qtype);
		check_name(dns_rules.name, false);
	}
	if (qclass != 1)
		must(rcode == RC_REFUSED);
	else if (!asked)
		must(rcode == RC_NXDOMAIN);
	size_t o = qend, an = get16(out + 6), fits = 0, matching = 0;
	int fam = qtype == NETFENCE_QTYPE_A ? AF_INET : AF_INET6;
	bool addr_type = qtype == NETFENCE_QTYPE_A || qtype == NETFENCE_QTYPE_AAAA;
	for (size_t i = 0; asked && addr_type && dns_rules.r > 0 && i < (size_t)dns_rules.r; i++) {
		const struct netfence_addr *a = &dns_rules.given[i];
		size_t rdlen = fam == AF_INET ? 4 : 16;
		if (a->family != fam)
			continue;
		matching++;
		if (fits == an)
			continue;
		must(o + 12 + rdlen <= m);
		must(get16(out + o) == 0xc00c && get16(out + o + 2) == qtype && get16(out + o + 4) == 1);
		must(get16(out + o + 10) == rdlen);
		must(memcmp(out + o + 12, fam == AF_INET ? (const void *)&a->v4 : (const void *)&a->v6, rdlen) == 0);
		o += 12 + rdlen;
		fits++;
	}
	must(fits == an && o == m);
	/* Truncated exactly when an answer did not fit. */
	must(((flags & 0x0200) != 0) == (matching > an));
	if (matching > an)
		must(m + 12 + (fam == AF_INET ? 4 : 16) > cap);
done:
	free(out);
	free(q);
}

/* ---- the child's sockaddr ---- */

static void fuzz_sockaddr(const uint8_t *d, size_t n)
{
	struct sockaddr_storage a, b;
	struct netfence_addr x, y;
	uint16_t px = 0, py = 0;
	struct call c = {.sock = -1};
	int len, rx, ry;

	if (n < 2)
		return;
	len = d[0] % (sizeof(a) + 1);
	c.domain = d[1] & 1 ? AF_INET6 : AF_INET;
	c.type = SOCK_STREAM;
	d += 2, n -= 2;
	/* What the child gave is its len bytes; the rest of the storage is
	 * the supervisor's zeroes (take_call_addr).  Whatever lies past len
	 * must not change the answer. */
	memset(&a, 0, sizeof(a));
	memset(&b, 0xa5, sizeof(b));
	memcpy(&a, d, n < (size_t)len ? n : (size_t)len);
	memcpy(&b, d, n < (size_t)len ? n : (size_t)len);
	if (n < (size_t)len)
		memset((char *)&b + n, 0, (size_t)len - n);
	rx = inet_addr_of(&a, (size_t)len, &x, &px);
	ry = inet_addr_of(&b, (size_t)len, &y, &py);
	must(rx == ry && (rx == 0 || rx == -EINVAL));
	if (rx == 0) {
		must(px == py && x.family == y.family && addr_eq(&x, &y));
		must(x.family == a.ss_family || (a.ss_family != AF_INET && x.family == AF_INET6));
		must((size_t)len >= (x.family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)));
	}
	must(bind_port(&c, &a, len) == bind_port(&c, &b, len));
}

/* ---- an upstream proxy's replies ---- */

static void fuzz_upstream(const uint8_t *d, size_t n)
{
	unsigned char *b;
	int status = -1, rc, code = -1;
	char *scheme;
	size_t slen;

	if (n < 1)
		return;
	slen = d[0] % 32;
	b = exact(d + 1, n - 1);
	n--;
	rc = upstream_parse_reply(b, n, &status);
	must(rc >= -1);
	if (rc == 0)
		must(n < UPSTREAM_REPLY_MAX);
	if (rc > 0) {
		int again = -1;
		must((size_t)rc <= n && rc <= UPSTREAM_REPLY_MAX && b[rc - 1] == '\n' && status >= 0 && status <= 999);
		must(memcmp(b, "HTTP/1.", 7) == 0 && status == (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0'));
		/* read_reply consumes rc - (what it took before): a prefix of
		 * the head must have been incomplete. */
		for (size_t k = 0; k < (size_t)rc; k += 1 + (size_t)rc / 8)
			must(upstream_parse_reply(b, k, &again) == 0);
	}
	scheme = malloc(slen ? slen : 1);
	must(scheme != NULL);
	upstream_auth_scheme(b, n, scheme, slen);
	if (slen) {
		must(memchr(scheme, '\0', slen) != NULL);
		for (const char *p = scheme; *p; p++)
			must(isalnum((unsigned char)*p) || *p == '-');
	}
	free(scheme);
	rc = upstream_socks_reply_len(b, n);
	must(rc == 0 || rc == -1 || (rc >= 4 + 1 + 2 && rc <= 4 + 1 + 255 + 2));
	if (rc == 0)
		must(n < 5);
	if (n >= 8) {
		rc = upstream_socks4_reply(b, &code);
		must(rc >= -1 && rc <= 1);
		if (rc == 0)
			must(code >= 91 && code <= 93);
	}
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 8) {
	case 0:
		fuzz_http(data + 1, size - 1);
		break;
	case 1:
		fuzz_authority(data + 1, size - 1);
		break;
	case 2:
		fuzz_socks_greeting(data + 1, size - 1);
		break;
	case 3:
		fuzz_socks_request(data + 1, size - 1);
		break;
	case 4:
		fuzz_sni(data + 1, size - 1);
		break;
	case 5:
		fuzz_dns(data + 1, size - 1);
		break;
	case 6:
		fuzz_sockaddr(data + 1, size - 1);
		break;
	case 7:
		fuzz_upstream(data + 1, size - 1);
		break;
	}
	return 0;
}
