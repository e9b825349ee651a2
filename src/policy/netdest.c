/* The network allowlist's parser and matchers (policy/netdest.h).  Pure:
 * inet_pton and inet_ntop are the only library calls that know addresses,
 * and they touch neither DNS nor sockets. */
#include "policy/netdest.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "util/mem.h"

#define MAX_TEXT 300
#define MAX_NAME 253
#define MAX_LABEL 63

static int refuse(struct net_parse_error *e, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(struct net_parse_error *e, const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	snprintf(e->hint, sizeof(e->hint), "%s", hint ? hint : "");
	return -1;
}

static const char *const FORMS = "expected host, host:port, *.domain, an IP address or CIDR (with :port; "
				 "[v6]:port for IPv6), or localhost:PORT";

/* ---- ranges ---- */

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static unsigned max_prefix(int family)
{
	return family == AF_INET ? 32 : 128;
}

/* The first `bits` bits of a and b are equal. */
static bool prefix_equal(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[whole] ^ b[whole]) & (unsigned char)(0xff << (8 - rest))) == 0;
}

/* The network mask's byte i for a prefix of `bits`. */
static unsigned char mask_byte(unsigned bits, size_t i)
{
	unsigned keep = bits >= 8 * (i + 1) ? 8 : bits > 8 * i ? bits - 8 * (unsigned)i : 0;

	return (unsigned char)(0xff00u >> keep);
}

static bool host_bits_zero(const unsigned char *a, size_t len, unsigned bits)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] & (unsigned char)~mask_byte(bits, i))
			return false;
	return true;
}

struct range {
	int family;
	unsigned char addr[16];
	unsigned prefix;
	const char *text;
};

/* Private, loopback, link-local, shared (CGNAT) and metadata ranges; the
 * "this host" addresses (0.0.0.0/8, ::), which reach the host's own
 * services when connected to; and what is not a public unicast address
 * (IETF protocol assignments, benchmarking, multicast, reserved and
 * broadcast; IPv4-compatible, local NAT64, site-local and multicast
 * IPv6), which no public name has reason to give. */
static const struct range private_ranges[] = {
    {AF_INET, {0}, 8, "0.0.0.0/8"},
    {AF_INET, {10}, 8, "10.0.0.0/8"},
    {AF_INET, {100, 64}, 10, "100.64.0.0/10"},
    {AF_INET, {127}, 8, "127.0.0.0/8"},
    {AF_INET, {169, 254}, 16, "169.254.0.0/16"},
    {AF_INET, {172, 16}, 12, "172.16.0.0/12"},
    {AF_INET, {192, 0, 0}, 24, "192.0.0.0/24"},
    {AF_INET, {192, 168}, 16, "192.168.0.0/16"},
    {AF_INET, {198, 18}, 15, "198.18.0.0/15"},
    {AF_INET, {224}, 4, "224.0.0.0/4"},
    {AF_INET, {240}, 4, "240.0.0.0/4"},
    {AF_INET6, {0}, 128, "::/128"},
    {AF_INET6, {[15] = 1}, 128, "::1/128"},
    {AF_INET6, {0}, 96, "::/96"},
    {AF_INET6, {0, 0x64, 0xff, 0x9b, 0, 1}, 48, "64:ff9b:1::/48"},
    {AF_INET6, {0xfc}, 7, "fc00::/7"},
    {AF_INET6, {0xfe, 0x80}, 10, "fe80::/10"},
    {AF_INET6, {0xfe, 0xc0}, 10, "fec0::/10"},
    {AF_INET6, {0xff}, 8, "ff00::/8"},
};

static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* An IPv4-mapped IPv6 address as the IPv4 address it maps. */
static void unmap(int *family, const unsigned char **addr)
{
	if (*family == AF_INET6 && memcmp(*addr, v4_mapped, 12) == 0) {
		*family = AF_INET;
		*addr += 12;
	}
}

static const char *range_of(int family, const unsigned char *a)
{
	size_t i;

	for (i = 0; i < sizeof(private_ranges) / sizeof(private_ranges[0]); i++)
		if (private_ranges[i].family == family && prefix_equal(a, private_ranges[i].addr, private_ranges[i].prefix))
			return private_ranges[i].text;
	return NULL;
}

/* IPv6 forms that hold an IPv4 address a translator connects to: NAT64's
 * well-known prefix (RFC 6052, the address in the last 32 bits) and 6to4
 * (RFC 3056, in bits 16-47).  Such an address is private when the IPv4
 * address it holds is: on an IPv6-only network with NAT64, an allowed
 * name answering 64:ff9b::7f00:1 would reach the translator's 127.0.0.1. */
static const char *embedded_private(const unsigned char *a)
{
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};

	if (memcmp(a, nat64, sizeof(nat64)) == 0 && range_of(AF_INET, a + 12))
		return "64:ff9b::/96 (NAT64) with a private IPv4 address";
	if (a[0] == 0x20 && a[1] == 0x02 && range_of(AF_INET, a + 2))
		return "2002::/16 (6to4) with a private IPv4 address";
	return NULL;
}

const char *net_addr_private_range(int family, const void *addr)
{
	const unsigned char *a = addr;
	const char *r;

	if (!a || (family != AF_INET && family != AF_INET6))
		return NULL;
	unmap(&family, &a);
	if ((r = range_of(family, a)) != NULL)
		return r;
	return family == AF_INET6 ? embedded_private(a) : NULL;
}

bool net_addr_is_private(int family, const void *addr)
{
	return net_addr_private_range(family, addr) != NULL;
}

/* The entry's range and a private range share an address. */
static bool overlaps_private(int family, const unsigned char *addr, unsigned prefix)
{
	size_t i;

	for (i = 0; i < sizeof(private_ranges) / sizeof(private_ranges[0]); i++) {
		const struct range *r = &private_ranges[i];
		unsigned bits = prefix < r->prefix ? prefix : r->prefix;

		if (r->family == family && prefix_equal(addr, r->addr, bits))
			return true;
		/* ::/N with N < 96 holds the IPv4-mapped addresses too. */
		if (family == AF_INET6 && r->family == AF_INET && prefix <= 96) {
			unsigned char mapped[16];
			memcpy(mapped, v4_mapped, 12);
			memcpy(mapped + 12, r->addr, 4);
			if (prefix_equal(addr, mapped, prefix))
				return true;
		}
	}
	return false;
}

/* The entry's range and the host's loopback (127/8, ::1) share an
 * address: 0.0.0.0/0 and ::/0 reach the host's 127.0.0.1 and ::1 too. */
static bool overlaps_loopback(int family, const unsigned char *addr, unsigned prefix)
{
	static const unsigned char lo4[4] = {127}, lo6[16] = {[15] = 1};
	unsigned char mapped[16];

	if (family == AF_INET)
		return prefix_equal(addr, lo4, prefix < 8 ? prefix : 8);
	if (prefix_equal(addr, lo6, prefix))
		return true;
	/* ::ffff:127.0.0.0/104, inside a short IPv6 prefix. */
	memcpy(mapped, v4_mapped, 12);
	memcpy(mapped + 12, lo4, 4);
	return prefix_equal(addr, mapped, prefix < 104 ? prefix : 104);
}

/* All of the entry's range is the host's loopback. */
static bool inside_loopback(int family, const unsigned char *addr, unsigned prefix)
{
	static const unsigned char lo6[16] = {[15] = 1};

	if (family == AF_INET)
		return prefix >= 8 && addr[0] == 127;
	return prefix == 128 && memcmp(addr, lo6, 16) == 0;
}

/* ---- names ---- */

/* The label of `len` characters that ends at name[end] starts or ends
 * with '-': no host has such a name (RFC 952, 1123), resolvers refuse it,
 * and an entry naming it would allow nothing.  "-foo.com" is most often an
 * option where the value was forgotten.  true with e set. */
static bool hyphen_ends_label(const char *name, size_t end, size_t len, struct net_parse_error *e)
{
	if (name[end - len] != '-' && name[end - 1] != '-')
		return false;
	refuse(e, "a label of a host name starts and ends with a letter or a digit",
	       "a label of the host name %s with '-'", name[end - len] == '-' ? "starts" : "ends");
	return true;
}

char *net_name_normalise(const char *name, struct net_parse_error *e)
{
	size_t len = strlen(name), i, label = 0;
	const char *last;
	char *out;
	bool numeric = true;

	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0) {
		refuse(e, NULL, "empty host name");
		return NULL;
	}
	if (len > MAX_NAME) {
		refuse(e, NULL, "host name of %zu characters; at most %d", len, MAX_NAME);
		return NULL;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '.') {
			if (label == 0) {
				refuse(e, "remove the doubled dot", "empty label in the host name");
				return NULL;
			}
			if (hyphen_ends_label(name, i, label, e))
				return NULL;
			label = 0;
			continue;
		}
		if (!isalnum(c) && c != '-') {
			if (c == '*')
				refuse(e, "a wildcard is written *.domain, and allows the subdomains of the domain",
				       "'*' is allowed only as a leading \"*.\"");
			else if (c == '/')
				refuse(e, "a CIDR is written ADDRESS/PREFIX, e.g. 10.0.0.0/8",
				       "'/' after a host name; a prefix follows an IP address only");
			else
				refuse(e, NULL, "character '%s%c' not allowed in a host name (letters, digits, '-', '.')",
				       isprint(c) ? "" : "\\", isprint(c) ? c : '?');
			return NULL;
		}
		if (++label > MAX_LABEL) {
			refuse(e, NULL, "a label of the host name is longer than %d characters", MAX_LABEL);
			return NULL;
		}
	}
	if (label == 0) {
		refuse(e, "remove the doubled dot", "empty label in the host name");
		return NULL;
	}
	if (hyphen_ends_label(name, len, label, e))
		return NULL;
	/* "1.2.3" or "10.0.0.256" is no host name, and resolvers would take
	 * some of them for addresses (inet_aton's "1.2.3" is 1.2.0.3). */
	last = memrchr(name, '.', len);
	last = last ? last + 1 : name;
	for (; last < name + len; last++)
		if (!isdigit((unsigned char)*last))
			numeric = false;
	if (numeric) {
		refuse(e, "write an IPv4 address as four numbers 0-255 (10.0.0.1)",
		       "neither an IPv4 address nor a host name (a host name's last label is not all digits)");
		return NULL;
	}
	out = moat_xstrndup(name, len);
	/* Nor is "0x7f000001" or "1.0x1": the host's resolver reads them as
	 * the address (inet_aton's hexadecimal forms), and the fence and the
	 * proxy mode take them so (kernel/netfence.h, netfence_name_is_number):
	 * as a name the entry would never match. */
	struct in_addr v4;
	if (inet_aton(out, &v4)) {
		refuse(e, NULL, "\"%s\" is an IPv4 address in a short form, not a host name", out);
		snprintf(e->hint, sizeof(e->hint), "write it as %s", inet_ntoa(v4));
		free(out);
		return NULL;
	}
	for (i = 0; i < len; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
	return out;
}

static bool is_localhost(const char *name)
{
	size_t n = strlen(name);

	return strcmp(name, "localhost") == 0 || (n > 10 && strcmp(name + n - 10, ".localhost") == 0);
}

/* ---- destinations ---- */

static int parse_port(const char *s, struct moat_net_dest *d, struct net_parse_error *e)
{
	long v = 0;
	const char *c;

	if (!*s)
		return refuse(e, "give a port after ':', or leave out the ':' for ports 443 and 80", "empty port");
	if (strcmp(s, "*") == 0) {
		d->any_port = true;
		d->n_ports = 0;
		return 0;
	}
	for (c = s; *c; c++) {
		if (!isdigit((unsigned char)*c) || v > 65535)
			return refuse(e, NULL, "port \"%s\": expected a number 1-65535 or *", s);
		v = v * 10 + (*c - '0');
	}
	if (v < 1 || v > 65535)
		return refuse(e, NULL, "port \"%s\": expected a number 1-65535 or *", s);
	d->ports[0] = (unsigned short)v;
	d->n_ports = 1;
	return 0;
}

/* An address with an optional /prefix. */
static int parse_addr(char *host, int family, struct moat_net_dest *d, struct net_parse_error *e)
{
	char *slash = strchr(host, '/');
	unsigned long prefix = max_prefix(family);
	char buf[INET6_ADDRSTRLEN];

	if (slash) {
		const char *c = slash + 1;

		*slash = '\0';
		if (!*c)
			return refuse(e, "a CIDR is written ADDRESS/PREFIX, e.g. 10.0.0.0/8", "empty prefix after '/'");
		for (prefix = 0; *c; c++) {
			if (!isdigit((unsigned char)*c) || prefix > 1000)
				return refuse(e, strchr(c, ':') ? "an IPv6 CIDR with a port is written [v6/prefix]:port" : NULL,
					      "prefix \"/%s\": expected a number of bits", slash + 1);
			prefix = prefix * 10 + (unsigned long)(*c - '0');
		}
	}
	if (inet_pton(family, host, d->addr) != 1) {
		if (family == AF_INET6)
			return refuse(e, strchr(host, '.') ? NULL : "an IPv6 address with a port is written [v6]:port",
				      "\"%s\" is not an IPv6 address", host);
		return refuse(e, NULL, "\"%s\" is not an IPv4 address", host);
	}
	if (prefix > max_prefix(family))
		return refuse(e, NULL, "prefix /%lu is longer than the %u bits of an IPv%d address", prefix,
			      max_prefix(family), family == AF_INET ? 4 : 6);
	/* 10.1.2.3/8 could mean 10.0.0.0/8 or a typo for 10.1.2.3/32: refused,
	 * naming the network the prefix gives. */
	if (!host_bits_zero(d->addr, addr_len(family), (unsigned)prefix)) {
		unsigned char net[16];
		size_t i;

		memcpy(net, d->addr, sizeof(net));
		for (i = 0; i < addr_len(family); i++)
			net[i] &= mask_byte((unsigned)prefix, i);
		inet_ntop(family, net, buf, sizeof(buf));
		refuse(e, NULL, "%s/%lu has host bits set (expected the network address)", host, prefix);
		snprintf(e->hint, sizeof(e->hint), "write %s/%lu for the network, or %s alone for the one address", buf,
			 prefix, host);
		return -1;
	}
	d->kind = MOAT_NET_DEST_ADDR;
	d->family = family;
	d->prefix = (unsigned)prefix;
	/* ::ffff:a.b.c.d is the IPv4 address. */
	if (family == AF_INET6 && prefix >= 96 && memcmp(d->addr, v4_mapped, 12) == 0) {
		memmove(d->addr, d->addr + 12, 4);
		memset(d->addr + 4, 0, 12);
		d->family = AF_INET;
		d->prefix -= 96;
	}
	return 0;
}

static int parse_host(char *host, bool bracketed, struct moat_net_dest *d, struct net_parse_error *e)
{
	unsigned char tmp[16];

	if (bracketed) {
		char *slash = strchr(host, '/');
		if (slash)
			*slash = '\0';
		if (inet_pton(AF_INET6, host, tmp) != 1) {
			bool v4 = inet_pton(AF_INET, host, tmp) == 1;
			if (slash)
				*slash = '/';
			return refuse(e, v4 ? "write an IPv4 address without brackets: ADDRESS:port" : NULL,
				      "brackets hold an IPv6 address; \"%s\" is not one", host);
		}
		if (slash)
			*slash = '/';
		return parse_addr(host, AF_INET6, d, e);
	}
	if (strchr(host, ':'))
		return parse_addr(host, AF_INET6, d, e);
	if (strchr(host, '/') || inet_pton(AF_INET, host, tmp) == 1)
		return parse_addr(host, AF_INET, d, e);
	if (strcmp(host, "*") == 0)
		return refuse(e, "--net all opens the whole network; *.example.com allows the subdomains of example.com",
			      "'*' alone is not a destination");
	if (host[0] == '*') {
		if (host[1] != '.')
			return refuse(e, "a wildcard is written *.domain, e.g. *.example.com",
				      "'*' must be followed by '.'");
		if (!(d->name = net_name_normalise(host + 2, e)))
			return -1;
		d->kind = MOAT_NET_DEST_WILDCARD;
		return 0;
	}
	if (!(d->name = net_name_normalise(host, e)))
		return -1;
	d->kind = MOAT_NET_DEST_NAME;
	return 0;
}

/* "proxy:" then something other than a port: "proxy:8080" and "proxy:*"
 * stay the host named proxy (a common name for one), with that port. */
static const char *proxy_only_body(const char *text)
{
	const char *b = text + 6, *c;

	if (strncmp(text, "proxy:", 6) != 0 || strcmp(b, "*") == 0)
		return NULL;
	for (c = b; *c && isdigit((unsigned char)*c); c++)
		;
	return *b && !*c ? NULL : b;
}

/* A URL given as a destination: the hint names its host and port, the
 * part an entry holds (the scheme's default port is among 443 and 80). */
static int refuse_url(const char *text, struct net_parse_error *e)
{
	const char *host = strstr(text, "://") + 3;
	int n = (int)strcspn(host, "/?#");

	refuse(e, NULL, "a URL, not a destination");
	if (n == 0)
		snprintf(e->hint, sizeof(e->hint), "give the host, e.g. api.example.com (api.example.com:8443 for another "
						   "port than 443 and 80)");
	else
		snprintf(e->hint, sizeof(e->hint), "write it as %.*s (ports 443 and 80 when it names none)", n, host);
	return -1;
}

int net_dest_parse(const char *text, struct moat_net_dest *out, struct net_parse_error *e)
{
	struct moat_net_dest d = {0};
	char buf[MAX_TEXT + 1], *host = buf, *port = NULL, *colon;
	bool bracketed = false;
	const char *whole = text, *body = proxy_only_body(text);
	size_t len;

	if (body) {
		d.proxy_only = true;
		text = body;
		if (!*text)
			return refuse(e,
				      "proxy:DEST makes DEST reachable only through the proxy mode, e.g. "
				      "proxy:cdn.example.com",
				      "empty destination after \"proxy:\"");
	}
	len = strlen(text);
	if (len == 0)
		return refuse(e, FORMS, "empty destination");
	/* "https://api.example.com" was read as host "https" and port
	 * "//api.example.com". */
	if (strstr(text, "://"))
		return refuse_url(text, e);
	if (len > MAX_TEXT)
		return refuse(e, NULL, "destination of %zu characters; at most %d", len, MAX_TEXT);
	memcpy(buf, text, len + 1);
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close)
			return refuse(e, "an IPv6 address with a port is written [v6]:port", "unclosed '['");
		*close = '\0';
		host = buf + 1;
		bracketed = true;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1])
			return refuse(e, "an IPv6 address with a port is written [v6]:port",
				      "unexpected \"%s\" after ']'", close + 1);
	} else if ((colon = strchr(buf, ':')) && !strchr(colon + 1, ':')) {
		/* One colon: host:port.  Two or more: a bare IPv6 address. */
		*colon = '\0';
		port = colon + 1;
	}
	if (!*host)
		return refuse(e, FORMS, "empty host");
	if (parse_host(host, bracketed, &d, e) < 0) {
		free(d.name);
		return -1;
	}
	if (port) {
		if (parse_port(port, &d, e) < 0) {
			free(d.name);
			return -1;
		}
	} else {
		d.ports[0] = MOAT_NET_DEFAULT_PORT_1;
		d.ports[1] = MOAT_NET_DEFAULT_PORT_2;
		d.n_ports = 2;
	}
	if (d.kind == MOAT_NET_DEST_ADDR) {
		d.names_private_range = overlaps_private(d.family, d.addr, d.prefix);
		d.host_loopback = overlaps_loopback(d.family, d.addr, d.prefix);
		d.loopback_only = inside_loopback(d.family, d.addr, d.prefix);
	} else if (is_localhost(d.name) || (d.kind == MOAT_NET_DEST_WILDCARD && strcmp(d.name, "localhost") == 0)) {
		d.names_private_range = true;
		d.host_loopback = true;
		d.loopback_only = true;
	}
	d.text = moat_xstrdup(whole);
	*out = d;
	return 0;
}

void net_dest_free(struct moat_net_dest *d)
{
	free(d->text);
	free(d->name);
	free(d->from);
	free(d->project);
	memset(d, 0, sizeof(*d));
}

void net_dest_copy(struct moat_net_dest *out, const struct moat_net_dest *d)
{
	*out = *d;
	out->text = moat_xstrdup(d->text);
	out->name = d->name ? moat_xstrdup(d->name) : NULL;
	out->from = d->from ? moat_xstrdup(d->from) : NULL;
	out->project = d->project ? moat_xstrdup(d->project) : NULL;
}

/* ---- pins ---- */

int net_pin_parse(const char *text, struct moat_net_pin *out, struct net_parse_error *e)
{
	const char *eq = strchr(text, '=');
	char ip[INET6_ADDRSTRLEN + 2];
	struct moat_net_pin pin = {0};
	size_t n;
	char *name;

	if (!eq)
		return refuse(e, "e.g. api.example.com=203.0.113.7", "expected NAME=IP");
	n = strlen(eq + 1);
	if (n >= sizeof(ip))
		return refuse(e, NULL, "\"%s\" is not an IP address", eq + 1);
	memcpy(ip, eq + 1, n + 1);
	if (n >= 2 && ip[0] == '[' && ip[n - 1] == ']') {
		memmove(ip, ip + 1, n - 2);
		ip[n - 2] = '\0';
	}
	if (inet_pton(AF_INET, ip, pin.addr) == 1)
		pin.family = AF_INET;
	else if (inet_pton(AF_INET6, ip, pin.addr) == 1)
		pin.family = AF_INET6;
	else
		return refuse(e, strchr(ip, '/') ? "a pin names one address, not a CIDR" : NULL,
			      "\"%s\" is not an IP address", eq + 1);
	{
		char *raw = moat_xstrndup(text, (size_t)(eq - text));
		unsigned char tmp[16];
		bool bad_wild = raw[0] == '*', bad_addr = inet_pton(AF_INET, raw, tmp) == 1 || strchr(raw, ':');

		name = bad_wild || bad_addr ? NULL : net_name_normalise(raw, e);
		free(raw);
		if (bad_wild)
			return refuse(e, "pin each name on its own", "a pin names one host, not a wildcard");
		if (bad_addr)
			return refuse(e, NULL, "NAME is a host name, not an address");
		if (!name)
			return -1;
	}
	/* ::ffff:a.b.c.d pins the IPv4 address. */
	if (pin.family == AF_INET6 && memcmp(pin.addr, v4_mapped, 12) == 0) {
		memmove(pin.addr, pin.addr + 12, 4);
		memset(pin.addr + 4, 0, 12);
		pin.family = AF_INET;
	}
	pin.name = name;
	*out = pin;
	return 0;
}

void net_pin_free(struct moat_net_pin *pin)
{
	free(pin->name);
	memset(pin, 0, sizeof(*pin));
}

void net_pin_copy(struct moat_net_pin *out, const struct moat_net_pin *pin)
{
	*out = *pin;
	out->name = moat_xstrdup(pin->name);
}

/* ---- matchers ---- */

static bool port_allowed(const struct moat_net_dest *d, unsigned short port)
{
	size_t i;

	if (d->any_port)
		return true;
	for (i = 0; i < d->n_ports; i++)
		if (d->ports[i] == port)
			return true;
	return false;
}

/* The name, lowercased, one trailing dot off; false if it cannot be a host
 * name at all (too long, empty). */
static bool fold_name(const char *name, char *buf, size_t len)
{
	size_t n, i;

	if (!name)
		return false;
	n = strlen(name);
	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0 || n >= len)
		return false;
	for (i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)name[i]);
	buf[n] = '\0';
	return true;
}

static bool name_matches(const struct moat_net_dest *d, const char *folded)
{
	size_t n, m;

	if (d->kind == MOAT_NET_DEST_NAME)
		return strcmp(d->name, folded) == 0;
	if (d->kind != MOAT_NET_DEST_WILDCARD)
		return false;
	/* Subdomains only: "*.example.com" allows a.example.com, not
	 * example.com. */
	n = strlen(folded);
	m = strlen(d->name);
	return n > m + 1 && folded[n - m - 1] == '.' && strcmp(folded + n - m, d->name) == 0;
}

/* Does the entry count on this path: a proxy-only one through the proxy
 * mode alone. */
static bool on_path(const struct moat_net_dest *d, bool via_proxy)
{
	return via_proxy || !d->proxy_only;
}

static bool name_allowed(const struct moat_policy *p, const char *name, bool any, unsigned short port, bool via_proxy)
{
	char folded[MAX_NAME + 2];
	size_t i;

	if (!fold_name(name, folded, sizeof(folded)))
		return false;
	for (i = 0; i < p->n_net_allow; i++)
		if (on_path(&p->net_allow[i], via_proxy) && name_matches(&p->net_allow[i], folded) &&
		    (any || port_allowed(&p->net_allow[i], port)))
			return true;
	return false;
}

bool net_allow_name_via(const struct moat_policy *p, const char *name, unsigned short port, bool via_proxy)
{
	return name_allowed(p, name, false, port, via_proxy);
}

bool net_allow_name(const struct moat_policy *p, const char *name, unsigned short port)
{
	return name_allowed(p, name, false, port, false);
}

bool net_allow_name_any_port_via(const struct moat_policy *p, const char *name, bool via_proxy)
{
	return name_allowed(p, name, true, 0, via_proxy);
}

bool net_allow_name_any_port(const struct moat_policy *p, const char *name)
{
	return name_allowed(p, name, true, 0, false);
}

static bool addr_in_entry(const struct moat_net_dest *d, int family, const unsigned char *a)
{
	const unsigned char *orig = a;
	int orig_family = family;

	if (d->kind != MOAT_NET_DEST_ADDR)
		return false;
	unmap(&family, &a);
	if (d->family == family && prefix_equal(a, d->addr, d->prefix))
		return true;
	/* A short IPv6 prefix (::/0) holds the mapped form too. */
	return orig_family == AF_INET6 && d->family == AF_INET6 && prefix_equal(orig, d->addr, d->prefix);
}

static bool is_loopback_host(int family, const unsigned char *a)
{
	static const unsigned char lo4[4] = {127, 0, 0, 1}, lo6[16] = {[15] = 1};

	unmap(&family, &a);
	return family == AF_INET ? memcmp(a, lo4, 4) == 0 : memcmp(a, lo6, 16) == 0;
}

/* An entry that covers the address: an address entry containing it, or a
 * localhost entry for 127.0.0.1 and ::1. */
static bool entry_covers(const struct moat_net_dest *d, int family, const unsigned char *a)
{
	if (d->kind == MOAT_NET_DEST_ADDR)
		return addr_in_entry(d, family, a);
	return d->host_loopback && is_loopback_host(family, a);
}

/* An entry on the path that covers the address (on `port`, or on any
 * port when any). */
static bool addr_allowed(const struct moat_policy *p, int family, const void *addr, bool any, unsigned short port,
			 bool via_proxy)
{
	size_t i;

	if (!addr || (family != AF_INET && family != AF_INET6))
		return false;
	for (i = 0; i < p->n_net_allow; i++)
		if (on_path(&p->net_allow[i], via_proxy) && entry_covers(&p->net_allow[i], family, addr) &&
		    (any || port_allowed(&p->net_allow[i], port)))
			return true;
	return false;
}

bool net_allow_addr_via(const struct moat_policy *p, int family, const void *addr, unsigned short port, bool via_proxy)
{
	return addr_allowed(p, family, addr, false, port, via_proxy);
}

bool net_allow_addr(const struct moat_policy *p, int family, const void *addr, unsigned short port)
{
	return addr_allowed(p, family, addr, false, port, false);
}

/* Do the two entries' ports meet (an entry without :* names at least one). */
static bool ports_meet(const struct moat_net_dest *a, const struct moat_net_dest *b)
{
	size_t i;

	if (a->any_port || b->any_port)
		return true;
	for (i = 0; i < a->n_ports; i++)
		if (port_allowed(b, a->ports[i]))
			return true;
	return false;
}

bool net_private_addr_named_via(const struct moat_policy *p, int family, const void *addr, const char *name,
				bool via_proxy)
{
	char folded[MAX_NAME + 2];
	size_t i, j;

	if (!addr || (family != AF_INET && family != AF_INET6) || !fold_name(name, folded, sizeof(folded)))
		return false;
	/* Only where an address entry and one of the name's meet on a port:
	 * localhost:5432 beside api.example.com (443, 80) is no reason to hand
	 * out 127.0.0.1 for the name, since no port of the name could reach
	 * it (the connect is checked on its own port as well). */
	for (i = 0; i < p->n_net_allow; i++) {
		const struct moat_net_dest *d = &p->net_allow[i];
		if (!on_path(d, via_proxy) || !entry_covers(d, family, addr))
			continue;
		for (j = 0; j < p->n_net_allow; j++) {
			const struct moat_net_dest *n = &p->net_allow[j];
			if (on_path(n, via_proxy) && name_matches(n, folded) && ports_meet(d, n))
				return true;
		}
	}
	return false;
}

bool net_private_addr_named(const struct moat_policy *p, int family, const void *addr, const char *name)
{
	return net_private_addr_named_via(p, family, addr, name, false);
}

const char *net_dest_private_range(const struct moat_net_dest *d)
{
	const char *r;

	if (d->kind == MOAT_NET_DEST_ADDR) {
		if (d->prefix == max_prefix(d->family) && (r = net_addr_private_range(d->family, d->addr)))
			return r;
		return d->names_private_range ? "a private range" : NULL;
	}
	return d->names_private_range ? "localhost" : NULL;
}

/* Does the entry `e`, one of the user's, allow what `d` names on `port`
 * (on every port, when any)? */
static bool user_entry_allows(const struct moat_net_dest *e, const struct moat_net_dest *d, bool any,
			      unsigned short port)
{
	static const unsigned char lo4[4] = {127, 0, 0, 1};

	if (e == d || e->project || !on_path(e, d->proxy_only) || (any ? !e->any_port : !port_allowed(e, port)))
		return false;
	switch (d->kind) {
	case MOAT_NET_DEST_ADDR:
		if (d->prefix == max_prefix(d->family))
			return entry_covers(e, d->family, d->addr);
		return e->kind == MOAT_NET_DEST_ADDR && e->family == d->family && e->prefix <= d->prefix &&
		       prefix_equal(d->addr, e->addr, e->prefix);
	case MOAT_NET_DEST_NAME:
		return name_matches(e, d->name) || (is_localhost(d->name) && entry_covers(e, AF_INET, lo4));
	case MOAT_NET_DEST_WILDCARD:
		return e->kind == MOAT_NET_DEST_WILDCARD && (strcmp(e->name, d->name) == 0 || name_matches(e, d->name));
	}
	return false;
}

bool net_dest_user_allows(const struct moat_policy *p, const struct moat_net_dest *d)
{
	size_t i, k;
	bool found;

	for (k = 0; k < (d->any_port ? 1 : d->n_ports); k++) {
		for (i = 0, found = false; i < p->n_net_allow && !found; i++)
			found = user_entry_allows(&p->net_allow[i], d, d->any_port, d->any_port ? 0 : d->ports[k]);
		if (!found)
			return false;
	}
	return true;
}

bool net_name_pinned(const struct moat_policy *p, const char *name)
{
	char folded[MAX_NAME + 2];
	size_t i;

	if (!fold_name(name, folded, sizeof(folded)))
		return false;
	for (i = 0; i < p->n_net_pins; i++)
		if (strcmp(p->net_pins[i].name, folded) == 0)
			return true;
	return false;
}

const char *net_dest_kind_name(enum moat_net_dest_kind k)
{
	switch (k) {
	case MOAT_NET_DEST_NAME:
		return "name";
	case MOAT_NET_DEST_WILDCARD:
		return "wildcard";
	case MOAT_NET_DEST_ADDR:
		return "address";
	}
	return "?";
}

const char *net_addr_text(int family, const void *addr, char *buf, size_t len)
{
	if (!inet_ntop(family, addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

/* ---- the host's own proxy ---- */

static int hexval(int c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Percent-decode s[0..n) into out (at least n + 1 bytes); false on a bad
 * escape or a NUL. */
static bool pct_decode(const char *s, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return false;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0)
			return false;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return true;
}

/* RFC 1929's request from the URL's "user[:password]" raw[0..n) (its
 * escapes checked): 1, ULEN, user, PLEN, password, into u->auth.  Split
 * at the first ':' as written, then each part decoded, so that "%3A"
 * stays in the part it is in.  -1: a part too long, or no user. */
static int socks_auth(const char *raw, size_t n, struct net_proxy_url *u)
{
	const char *colon = memchr(raw, ':', n);
	size_t un = colon ? (size_t)(colon - raw) : n, ul, pl = 0;
	unsigned char *m = moat_xmalloc(3 + 2 * n + 2);
	char *user = (char *)m + 2;

	/* Decoded in place: the user after its two header bytes, then the
	 * password after the user and its length byte. */
	(void)pct_decode(raw, un, user);
	ul = strlen(user);
	if (colon) {
		(void)pct_decode(colon + 1, n - un - 1, user + ul + 1);
		pl = strlen(user + ul + 1);
	}
	if (ul < 1 || ul > 255 || pl > 255) {
		explicit_bzero(m, 3 + 2 * n + 2);
		free(m);
		return -1;
	}
	m[0] = 1;
	m[1] = (unsigned char)ul;
	m[2 + ul] = (unsigned char)pl; /* over the user's '\0' */
	u->auth = (char *)m;
	u->auth_len = 3 + ul + pl;
	return 0;
}

static char *base64(const unsigned char *in, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = moat_xmalloc(4 * ((n + 2) / 3) + 1), *o = out;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v =
		    (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}


int net_proxy_url_parse(const char *url, struct net_proxy_url *out, struct net_parse_error *e)
{
	struct net_proxy_url u;
	const char *p = url, *at, *end, *hs, *he, *colon = NULL;
	unsigned char tmp[16];
	size_t len = strlen(url);

	memset(&u, 0, sizeof(u));
	if (len == 0 || len > 2048)
		return refuse(e, NULL, "expected a URL such as http://proxy.example:3128");
	if (strncasecmp(p, "http://", 7) == 0) {
		p += 7;
	} else if (strncasecmp(p, "socks5://", 9) == 0 || strncasecmp(p, "socks5h://", 10) == 0) {
		u.socks = true;
		u.socks_h = p[6] == 'h' || p[6] == 'H';
		p += u.socks_h ? 10 : 9;
	} else if (strncasecmp(p, "socks4://", 9) == 0 || strncasecmp(p, "socks4a://", 10) == 0) {
		u.socks = u.socks4 = true;
		u.socks4a = p[6] == 'a' || p[6] == 'A';
		p += u.socks4a ? 10 : 9;
	} else if (strstr(p, "://")) {
		return refuse(e,
			      "moat speaks HTTP CONNECT, SOCKS5 and SOCKS4 to the host's proxy: give an http://, "
			      "socks5://, socks5h://, socks4:// or socks4a:// URL",
			      "a proxy URL of scheme \"%.*s\" is not supported", (int)(strstr(p, "://") - p), p);
	}
	end = p + strcspn(p, "/?#");
	if (*end && strcmp(end, "/") != 0)
		return refuse(e, NULL, "a proxy URL has no path (\"%s\")", end);
	/* The last '@' ends the credentials: a password may hold one. */
	at = NULL;
	for (const char *c = p; c < end; c++)
		if (*c == '@')
			at = c;
	hs = at ? at + 1 : p;
	if (hs < end && *hs == '[') {
		he = memchr(hs, ']', (size_t)(end - hs));
		if (!he)
			return refuse(e, NULL, "unclosed '[' in the proxy's address");
		if (he + 1 < end) {
			if (he[1] != ':')
				return refuse(e, NULL, "unexpected text after the proxy's address");
			colon = he + 1;
		}
		hs++;
	} else {
		colon = memchr(hs, ':', (size_t)(end - hs));
		he = colon ? colon : end;
	}
	if (he == hs || (size_t)(he - hs) > NET_PROXY_HOST_MAX)
		return refuse(e, NULL, "no proxy host in the URL");
	memcpy(u.host, hs, (size_t)(he - hs));
	u.host[he - hs] = '\0';
	if (hs > p && hs[-1] == '[') {
		if (inet_pton(AF_INET6, u.host, tmp) != 1)
			return refuse(e, NULL, "\"%s\" is not an IPv6 address", u.host);
	} else if (inet_pton(AF_INET, u.host, tmp) != 1) {
		char *n = net_name_normalise(u.host, e);
		if (!n)
			return -1;
		snprintf(u.host, sizeof(u.host), "%s", n);
		free(n);
	}
	u.port = u.socks ? 1080 : 80;
	if (colon) {
		unsigned long v = 0;
		const char *c = colon + 1;
		if (c == end || end - c > 5)
			return refuse(e, NULL, "the proxy's port: expected a number 1-65535");
		for (; c < end; c++) {
			if (!isdigit((unsigned char)*c))
				return refuse(e, NULL, "the proxy's port: expected a number 1-65535");
			v = v * 10 + (unsigned long)(*c - '0');
		}
		if (v < 1 || v > 65535)
			return refuse(e, NULL, "the proxy's port: expected a number 1-65535");
		u.port = (unsigned short)v;
	}
	if (at) {
		size_t n = (size_t)(at - p);
		char *plain = moat_xmalloc(n + 1);
		if (!pct_decode(p, n, plain)) {
			explicit_bzero(plain, n + 1);
			free(plain);
			return refuse(e, NULL, "the proxy's credentials: a bad %%-escape");
		}
		if (u.socks4) {
			/* SOCKS4 sends a user id and nothing else: a password
			 * would not reach the proxy, so it is refused, not
			 * dropped. */
			size_t ul = strlen(plain);
			bool has_password = memchr(p, ':', n) != NULL;
			if (has_password || ul < 1 || ul > 255) {
				explicit_bzero(plain, n + 1);
				free(plain);
				return refuse(e, has_password ? "SOCKS4 carries a user id, not a password: give socks4://user@host, or "
							 "a socks5:// proxy for a user name and password"
						       : NULL,
					      "the proxy's credentials: SOCKS4 takes a user id of 1 to 255 bytes%s",
					      has_password ? " and no password" : "");
			}
			u.auth = plain;
			u.auth_len = ul;
			*out = u;
			return 0;
		}
		if (u.socks) {
			int rc = socks_auth(p, n, &u);
			explicit_bzero(plain, n + 1);
			free(plain);
			if (rc < 0)
				return refuse(e, NULL, "the proxy's credentials: SOCKS5 takes a user name of 1 to 255 bytes "
						       "and a password of at most 255");
			*out = u;
			return 0;
		}
		/* user[:password] as it stands is what Basic encodes. */
		char *b = base64((const unsigned char *)plain, strlen(plain));
		u.auth = moat_xasprintf("Basic %s", b);
		u.auth_len = strlen(u.auth);
		explicit_bzero(plain, n + 1);
		explicit_bzero(b, strlen(b));
		free(plain);
		free(b);
	}
	*out = u;
	return 0;
}

void net_proxy_url_free(struct net_proxy_url *u)
{
	if (u->auth) {
		explicit_bzero(u->auth, u->auth_len);
		free(u->auth);
	}
	memset(u, 0, sizeof(*u));
}

const char *net_proxy_url_text(const struct net_proxy_url *u, char *buf, size_t len)
{
	bool v6 = strchr(u->host, ':') != NULL;

	snprintf(buf, len, "%s://%s%s%s:%u",
		 !u->socks     ? "http"
		 : u->socks4a  ? "socks4a"
		 : u->socks4   ? "socks4"
		 : u->socks_h  ? "socks5h"
			       : "socks5",
		 v6 ? "[" : "",
		 u->host, v6 ? "]" : "", u->port);
	return buf;
}

/* One NO_PROXY entry e[0..n) against host (folded) on port. */
static bool no_proxy_entry(const char *e, size_t n, const char *host, unsigned short port)
{
	char ent[MAX_NAME + 8], *c;
	unsigned char ha[16], ea[16];
	int hf = 0;

	if (n == 0 || n >= sizeof(ent))
		return false;
	memcpy(ent, e, n);
	ent[n] = '\0';
	if (strcmp(ent, "*") == 0)
		return true;
	/* A port: "[v6]:p", "name:p", "v4:p", "cidr:p" (a bare IPv6 address has
	 * more than one colon and no port). */
	if (ent[0] == '[') {
		char *close = strchr(ent, ']');
		if (!close)
			return false;
		*close = '\0';
		if (close[1] == ':' && (unsigned long)atol(close + 2) != port)
			return false;
		memmove(ent, ent + 1, strlen(ent + 1) + 1);
	} else if ((c = strchr(ent, ':')) && !strchr(c + 1, ':')) {
		*c = '\0';
		if ((unsigned long)atol(c + 1) != port)
			return false;
	}
	if (inet_pton(AF_INET, host, ha) == 1)
		hf = AF_INET;
	else if (inet_pton(AF_INET6, host, ha) == 1)
		hf = AF_INET6;
	if (hf) {
		char *slash = strchr(ent, '/');
		unsigned long bits = hf == AF_INET ? 32 : 128;
		if (slash) {
			*slash = '\0';
			bits = strtoul(slash + 1, NULL, 10);
		}
		if (inet_pton(hf, ent, ea) != 1 || bits > (hf == AF_INET ? 32u : 128u))
			return false;
		return prefix_equal(ha, ea, (unsigned)bits);
	}
	/* A name: ".example.com" and "*.example.com" as "example.com", which
	 * matches itself and every name below it. */
	c = ent;
	if (c[0] == '*' && c[1] == '.')
		c += 2;
	else if (c[0] == '.')
		c++;
	for (char *q = c; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	size_t cl = strlen(c), hl = strlen(host);
	if (cl > 0 && c[cl - 1] == '.')
		c[--cl] = '\0';
	if (cl == 0)
		return false;
	return strcmp(host, c) == 0 || (hl > cl + 1 && host[hl - cl - 1] == '.' && strcmp(host + hl - cl, c) == 0);
}

bool net_no_proxy_match(const char *no_proxy, const char *host, unsigned short port)
{
	char folded[MAX_NAME + 2];
	const char *p = no_proxy;

	if (!no_proxy || !host || !fold_name(host, folded, sizeof(folded)))
		return false;
	while (*p) {
		size_t n;
		p += strspn(p, ", \t");
		n = strcspn(p, ", \t");
		if (no_proxy_entry(p, n, folded, port))
			return true;
		p += n;
	}
	return false;
}
