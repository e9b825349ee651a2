/* The network allowlist's parser and matchers (policy/netdest.c): every
 * form, every error, the default ports, IPv6 brackets, CIDR edges, the
 * private-range classifier and the matchers. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/netdest.h"
#include "policy/policy.h"
#include "tap.h"
#include "util/cleanup.h"

/* The parsed form as one line: kind name|addr/prefix ports flags. */
/* host_loopback, and whether all of the entry is the host's loopback. */
static const char *loopback_text(const struct moat_net_dest *d)
{
	if (!d->host_loopback)
		return d->loopback_only ? " BROKEN:only-without-loopback" : "";
	return d->loopback_only ? " loopback" : " loopback(part)";
}

static const char *show(const char *text, char *buf, size_t len)
{
	struct moat_net_dest d;
	struct net_parse_error e;
	char addr[64], ports[32] = "";
	size_t i, o = 0;

	if (net_dest_parse(text, &d, &e) < 0) {
		snprintf(buf, len, "error: %s%s%s", e.msg, e.hint[0] ? " / " : "", e.hint);
		return buf;
	}
	if (d.any_port)
		snprintf(ports, sizeof(ports), "*");
	for (i = 0; i < d.n_ports; i++)
		o += (size_t)snprintf(ports + o, sizeof(ports) - o, "%s%u", i ? "," : "", d.ports[i]);
	if (d.kind == MOAT_NET_DEST_ADDR)
		snprintf(buf, len, "address %s/%u %s%s%s%s", net_addr_text(d.family, d.addr, addr, sizeof(addr)),
			 d.prefix, ports, loopback_text(&d), d.names_private_range ? " private" : "",
			 d.proxy_only ? " proxy-only" : "");
	else
		snprintf(buf, len, "%s %s %s%s%s%s", net_dest_kind_name(d.kind), d.name, ports, loopback_text(&d),
			 d.names_private_range ? " private" : "", d.proxy_only ? " proxy-only" : "");
	net_dest_free(&d);
	return buf;
}

static const struct {
	const char *text, *want;
} forms[] = {
    /* names */
    {"example.com", "name example.com 443,80"},
    {"Example.COM.", "name example.com 443,80"},
    {"api.example.com:8443", "name api.example.com 8443"},
    {"a-b.c-d.example:1", "name a-b.c-d.example 1"},
    {"xn--bcher-kva.example", "name xn--bcher-kva.example 443,80"}, /* "--" inside a label: punycode */
    {"example.com:65535", "name example.com 65535"},
    {"example.com:*", "name example.com *"},
    {"intranet", "name intranet 443,80"},
    /* wildcards: subdomains only */
    {"*.example.com", "wildcard example.com 443,80"},
    {"*.Example.com.:22", "wildcard example.com 22"},
    /* the host's loopback */
    {"localhost:5432", "name localhost 5432 loopback private"},
    {"LOCALHOST.:5432", "name localhost 5432 loopback private"},
    {"db.localhost:5432", "name db.localhost 5432 loopback private"},
    {"127.0.0.1:8080", "address 127.0.0.1/32 8080 loopback private"},
    {"[::1]:8080", "address ::1/128 8080 loopback private"},
    {"::1", "address ::1/128 443,80 loopback private"},
    /* IPv4 */
    {"203.0.113.7", "address 203.0.113.7/32 443,80"},
    {"203.0.113.7:25", "address 203.0.113.7/32 25"},
    {"203.0.113.0/24", "address 203.0.113.0/24 443,80"},
    {"203.0.113.0/24:*", "address 203.0.113.0/24 *"},
    {"10.0.0.0/8:5432", "address 10.0.0.0/8 5432 private"},
    {"169.254.169.254:80", "address 169.254.169.254/32 80 private"},
    {"100.64.0.0/10", "address 100.64.0.0/10 443,80 private"},
    {"172.16.0.0/12", "address 172.16.0.0/12 443,80 private"},
    {"172.32.0.0/12", "address 172.32.0.0/12 443,80"},
    {"192.168.1.0/24", "address 192.168.1.0/24 443,80 private"},
    {"0.0.0.0/0", "address 0.0.0.0/0 443,80 loopback(part) private"}, /* holds 127/8 */
    {"0.0.0.0/1", "address 0.0.0.0/1 443,80 loopback(part) private"},
    {"128.0.0.0/1", "address 128.0.0.0/1 443,80 private"},
    {"126.0.0.0/7", "address 126.0.0.0/7 443,80 loopback(part) private"},
    {"127.1.0.0/16", "address 127.1.0.0/16 443,80 loopback private"},
    {"8.0.0.0/6", "address 8.0.0.0/6 443,80 private"}, /* holds 10/8 */
    {"8.0.0.0/7", "address 8.0.0.0/7 443,80"},	       /* 8 and 9 only */
    {"203.0.113.7/32", "address 203.0.113.7/32 443,80"},
    {"127.0.0.0/8", "address 127.0.0.0/8 443,80 loopback private"},
    /* IPv6 */
    {"2001:db8::1", "address 2001:db8::1/128 443,80"},
    {"[2001:db8::1]", "address 2001:db8::1/128 443,80"},
    {"[2001:DB8::1]:443", "address 2001:db8::1/128 443"},
    {"2001:db8::/32", "address 2001:db8::/32 443,80"},
    {"[2001:db8::/32]:*", "address 2001:db8::/32 *"},
    {"fd00:ec2::254", "address fd00:ec2::254/128 443,80 private"},
    {"fe80::/10", "address fe80::/10 443,80 private"},
    {"::/0", "address ::/0 443,80 loopback(part) private"},
    {"::/127", "address ::/127 443,80 loopback(part) private"},
    {"::2/127", "address ::2/127 443,80 private"},
    {"::ffff:0:0/96", "address 0.0.0.0/0 443,80 loopback(part) private"}, /* mapped: 0.0.0.0/0 */
    {"2001:db8::1/128", "address 2001:db8::1/128 443,80"},
    {"::ffff:10.1.2.3", "address 10.1.2.3/32 443,80 private"}, /* mapped: the IPv4 address */
    {"[::ffff:203.0.113.0/120]:9", "address 203.0.113.0/24 9"},
    /* proxy-only: "proxy:" and then anything but a port */
    {"proxy:cdn.example.com", "name cdn.example.com 443,80 proxy-only"},
    {"proxy:cdn.example.com:8443", "name cdn.example.com 8443 proxy-only"},
    {"proxy:*.cdn.example", "wildcard cdn.example 443,80 proxy-only"},
    {"proxy:203.0.113.7:25", "address 203.0.113.7/32 25 proxy-only"},
    {"proxy:[::1]:8080", "address ::1/128 8080 loopback private proxy-only"},
    {"proxy:proxy:3128", "name proxy 3128 proxy-only"},
    {"proxy:8080", "name proxy 8080"}, /* the host named proxy, on a port */
    {"proxy:*", "name proxy *"},
    {"proxy", "name proxy 443,80"},

    /* errors */
    {"proxy:", "error: empty destination after \"proxy:\" / proxy:DEST makes DEST reachable only through the "
	       "proxy mode, e.g. proxy:cdn.example.com"},
    {"", "error: empty destination / expected host, host:port, *.domain, an IP address or CIDR (with :port; "
	 "[v6]:port for IPv6), or localhost:PORT"},
    {":443", "error: empty host / expected host, host:port, *.domain, an IP address or CIDR (with :port; [v6]:port "
	     "for IPv6), or localhost:PORT"},
    {"example.com:", "error: empty port / give a port after ':', or leave out the ':' for ports 443 and 80"},
    {"example.com:0", "error: port \"0\": expected a number 1-65535 or *"},
    {"example.com:65536", "error: port \"65536\": expected a number 1-65535 or *"},
    {"example.com:http", "error: port \"http\": expected a number 1-65535 or *"},
    {"example.com:-1", "error: port \"-1\": expected a number 1-65535 or *"},
    {"exa_mple.com", "error: character '_' not allowed in a host name (letters, digits, '-', '.')"},
    {"ex ample.com", "error: character ' ' not allowed in a host name (letters, digits, '-', '.')"},
    {"example..com", "error: empty label in the host name / remove the doubled dot"},
    {".example.com", "error: empty label in the host name / remove the doubled dot"},
    {"example.com..", "error: empty label in the host name / remove the doubled dot"},
    {".", "error: empty host name"},
    {"-foo.com", "error: a label of the host name starts with '-' / a label of a host name starts and ends with a "
		 "letter or a digit"},
    {"foo-.com", "error: a label of the host name ends with '-' / a label of a host name starts and ends with a "
		 "letter or a digit"},
    {"a.-b.com:8443", "error: a label of the host name starts with '-' / a label of a host name starts and ends "
		      "with a letter or a digit"},
    {"*.com-", "error: a label of the host name ends with '-' / a label of a host name starts and ends with a "
	       "letter or a digit"},
    {"--dry-run", "error: a label of the host name starts with '-' / a label of a host name starts and ends with a "
		  "letter or a digit"},
    {"https://api.example.com/v1", "error: a URL, not a destination / write it as api.example.com (ports 443 and 80 "
				   "when it names none)"},
    {"socks5://[::1]:1080", "error: a URL, not a destination / write it as [::1]:1080 (ports 443 and 80 when it "
			    "names none)"},
    {"https://", "error: a URL, not a destination / give the host, e.g. api.example.com (api.example.com:8443 for "
		 "another port than 443 and 80)"},
    {"*", "error: '*' alone is not a destination / --net all opens the whole network; *.example.com allows the "
	  "subdomains of example.com"},
    {"*:443", "error: '*' alone is not a destination / --net all opens the whole network; *.example.com allows "
	      "the subdomains of example.com"},
    {"*example.com", "error: '*' must be followed by '.' / a wildcard is written *.domain, e.g. *.example.com"},
    {"*.", "error: empty host name"},
    {"a.*.example.com", "error: '*' is allowed only as a leading \"*.\" / a wildcard is written *.domain, and "
			"allows the subdomains of the domain"},
    {"*.*.example.com", "error: '*' is allowed only as a leading \"*.\" / a wildcard is written *.domain, and "
			"allows the subdomains of the domain"},
    {"example.com/24", "error: \"example.com\" is not an IPv4 address"},
    {"1.2.3", "error: neither an IPv4 address nor a host name (a host name's last label is not all digits) / "
	      "write an IPv4 address as four numbers 0-255 (10.0.0.1)"},
    {"10.0.0.256", "error: neither an IPv4 address nor a host name (a host name's last label is not all digits) / "
		   "write an IPv4 address as four numbers 0-255 (10.0.0.1)"},
    {"0x7f000001", "error: \"0x7f000001\" is an IPv4 address in a short form, not a host name / write it as "
		   "127.0.0.1"},
    {"1.0X1:22", "error: \"1.0X1\" is an IPv4 address in a short form, not a host name / write it as 1.0.0.1"},
    {"0x1.example", "name 0x1.example 443,80"}, /* control: a name */
    {"10.0.0.0/33", "error: prefix /33 is longer than the 32 bits of an IPv4 address"},
    {"2001:db8::/129", "error: prefix /129 is longer than the 128 bits of an IPv6 address"},
    {"10.0.0.0/", "error: empty prefix after '/' / a CIDR is written ADDRESS/PREFIX, e.g. 10.0.0.0/8"},
    {"10.0.0.0/x", "error: prefix \"/x\": expected a number of bits"},
    {"10.1.2.3/8", "error: 10.1.2.3/8 has host bits set (expected the network address) / write 10.0.0.0/8 for "
		   "the network, or 10.1.2.3 alone for the one address"},
    {"2001:db8::1/32", "error: 2001:db8::1/32 has host bits set (expected the network address) / write "
		       "2001:db8::/32 for the network, or 2001:db8::1 alone for the one address"},
    {"[::1", "error: unclosed '[' / an IPv6 address with a port is written [v6]:port"},
    {"[::1]8080", "error: unexpected \"8080\" after ']' / an IPv6 address with a port is written [v6]:port"},
    {"[10.0.0.1]:80", "error: brackets hold an IPv6 address; \"10.0.0.1\" is not one / write an IPv4 address "
		      "without brackets: ADDRESS:port"},
    {"[example.com]:80", "error: brackets hold an IPv6 address; \"example.com\" is not one"},
    {"2001:db8::zz", "error: \"2001:db8::zz\" is not an IPv6 address / an IPv6 address with a port is written "
		     "[v6]:port"},
    {"2001:db8::/32:443", "error: prefix \"/32:443\": expected a number of bits / an IPv6 CIDR with a port is "
			  "written [v6/prefix]:port"},
    {"[::1]:", "error: empty port / give a port after ':', or leave out the ':' for ports 443 and 80"},
};

static void test_forms(void)
{
	char buf[512];
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		is_str(show(forms[i].text, buf, sizeof(buf)), forms[i].want, "'%s'", forms[i].text);
}

static void test_lengths(void)
{
	char name[400], label[70], buf[512];
	struct moat_net_dest d;
	struct net_parse_error e;
	size_t i;

	/* 253 characters: 63+1+63+1+63+1+61 */
	memset(name, 'a', sizeof(name));
	name[63] = name[127] = name[191] = '.';
	name[253] = '\0';
	ok(net_dest_parse(name, &d, &e) == 0 && strlen(d.name) == 253, "a name of 253 characters is a name");
	net_dest_free(&d);
	name[253] = '.';
	name[254] = '\0';
	ok(net_dest_parse(name, &d, &e) == 0 && strlen(d.name) == 253, "  and with a trailing dot (254)");
	net_dest_free(&d);
	name[253] = 'a';
	is_str(show(name, buf, sizeof(buf)), "error: host name of 254 characters; at most 253", "254 characters are not");
	memset(label, 'b', 64);
	label[64] = '\0';
	is_str(show(label, buf, sizeof(buf)), "error: a label of the host name is longer than 63 characters",
	       "a label of 64 characters is not");
	for (i = 0; i < 350; i++)
		name[i] = 'c';
	name[350] = '\0';
	is_str(show(name, buf, sizeof(buf)), "error: destination of 350 characters; at most 300", "nor a long text");
}

static void test_pins(void)
{
	static const struct {
		const char *text, *want;
	} rows[] = {
	    {"API.example.com.=203.0.113.7", "api.example.com 203.0.113.7"},
	    {"db.internal=10.0.0.5", "db.internal 10.0.0.5"},
	    {"v6.example=2001:db8::1", "v6.example 2001:db8::1"},
	    {"v6.example=[2001:db8::1]", "v6.example 2001:db8::1"},
	    {"m.example=::ffff:192.0.2.1", "m.example 192.0.2.1"},
	    {"example.com", "error: expected NAME=IP / e.g. api.example.com=203.0.113.7"},
	    {"example.com=", "error: \"\" is not an IP address"},
	    {"example.com=host", "error: \"host\" is not an IP address"},
	    {"example.com=10.0.0.0/8", "error: \"10.0.0.0/8\" is not an IP address / a pin names one address, not a CIDR"},
	    {"=1.2.3.4", "error: empty host name"},
	    {"*.example.com=1.2.3.4", "error: a pin names one host, not a wildcard / pin each name on its own"},
	    {"1.2.3.4=1.2.3.4", "error: NAME is a host name, not an address"},
	    {"ex_ample=1.2.3.4", "error: character '_' not allowed in a host name (letters, digits, '-', '.')"},
	};
	char buf[512], addr[64];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct moat_net_pin pin;
		struct net_parse_error e;

		if (net_pin_parse(rows[i].text, &pin, &e) == 0) {
			snprintf(buf, sizeof(buf), "%s %s", pin.name, net_addr_text(pin.family, pin.addr, addr, sizeof(addr)));
			net_pin_free(&pin);
		} else {
			snprintf(buf, sizeof(buf), "error: %s%s%s", e.msg, e.hint[0] ? " / " : "", e.hint);
		}
		is_str(buf, rows[i].want, "pin '%s'", rows[i].text);
	}
}

static void a4(const char *s, unsigned char *out)
{
	inet_pton(AF_INET, s, out);
}

static void a6(const char *s, unsigned char *out)
{
	inet_pton(AF_INET6, s, out);
}

static void test_classifier(void)
{
	static const struct {
		const char *addr, *range;
	} rows[] = {
	    {"10.1.2.3", "10.0.0.0/8"},	      {"172.16.0.1", "172.16.0.0/12"},   {"172.31.255.255", "172.16.0.0/12"},
	    {"172.32.0.1", NULL},	      {"192.168.0.1", "192.168.0.0/16"}, {"169.254.169.254", "169.254.0.0/16"},
	    {"127.0.0.53", "127.0.0.0/8"},    {"100.64.0.1", "100.64.0.0/10"},   {"100.128.0.1", NULL},
	    {"0.0.0.0", "0.0.0.0/8"},	      {"8.8.8.8", NULL},		 {"203.0.113.7", NULL},
	    {"::1", "::1/128"},		      {"::", "::/128"},			 {"fc00::1", "fc00::/7"},
	    {"fd00:ec2::254", "fc00::/7"},    {"fe80::1", "fe80::/10"},		 {"febf::1", "fe80::/10"},
	    {"fec0::1", "fec0::/10"},	      {"2001:db8::1", NULL},		 {"::ffff:10.0.0.1", "10.0.0.0/8"},
	    {"::ffff:127.0.0.1", "127.0.0.0/8"}, {"::ffff:8.8.8.8", NULL},
	    /* not public unicast */
	    {"192.0.0.192", "192.0.0.0/24"}, {"192.0.1.1", NULL}, {"198.18.0.1", "198.18.0.0/15"},
	    {"198.20.0.1", NULL}, {"224.0.0.1", "224.0.0.0/4"}, {"239.255.255.250", "224.0.0.0/4"},
	    {"255.255.255.255", "240.0.0.0/4"}, {"223.255.255.255", NULL},
	    {"::127.0.0.3", "::/96"}, {"::8.8.8.8", "::/96"}, {"ff02::1", "ff00::/8"},
	    {"64:ff9b:1::a00:1", "64:ff9b:1::/48"},
	    /* IPv4 inside IPv6: NAT64 and 6to4 */
	    {"64:ff9b::7f00:3", "64:ff9b::/96 (NAT64) with a private IPv4 address"},
	    {"64:ff9b::a9fe:a9fe", "64:ff9b::/96 (NAT64) with a private IPv4 address"},
	    {"64:ff9b::808:808", NULL},
	    {"2002:7f00:3::", "2002::/16 (6to4) with a private IPv4 address"},
	    {"2002:c0a8:101::1", "2002::/16 (6to4) with a private IPv4 address"},
	    {"2002:808:808::1", NULL},
	};
	unsigned char a[16];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int fam = strchr(rows[i].addr, ':') ? AF_INET6 : AF_INET;
		if (fam == AF_INET)
			a4(rows[i].addr, a);
		else
			a6(rows[i].addr, a);
		is_str(net_addr_private_range(fam, a), rows[i].range, "%s is in %s", rows[i].addr,
		       rows[i].range ? rows[i].range : "no private range");
		ok(net_addr_is_private(fam, a) == (rows[i].range != NULL), "  net_addr_is_private agrees");
	}
	ok(!net_addr_is_private(AF_UNIX, a) && !net_addr_is_private(AF_INET, NULL), "other families and NULL: no");
}

static void add(struct moat_policy *p, const char *text)
{
	struct moat_net_dest d;
	struct net_parse_error e;

	if (net_dest_parse(text, &d, &e) == 0)
		policy_add_net_dest(p, &d);
	else
		printf("# %s: %s\n", text, e.msg);
}

static void test_matchers(void)
{
	struct moat_policy p;
	struct moat_net_pin pin;
	struct net_parse_error e;
	unsigned char a[16];

	policy_init(&p);
	add(&p, "api.example.com");
	add(&p, "*.cdn.example:8443");
	add(&p, "203.0.113.0/24:25");
	add(&p, "[2001:db8::/32]:*");
	add(&p, "localhost:5432");
	add(&p, "10.9.0.0/16:*");
	if (net_pin_parse("pinned.example=10.0.0.5", &pin, &e) == 0)
		policy_add_net_pin(&p, &pin);

	ok(net_allow_name(&p, "api.example.com", 443) && net_allow_name(&p, "api.example.com", 80),
	   "a name entry allows the default ports");
	ok(!net_allow_name(&p, "api.example.com", 8080), "  not another");
	ok(net_allow_name(&p, "API.Example.Com.", 443), "  any case, a trailing dot");
	ok(!net_allow_name(&p, "www.api.example.com", 443) && !net_allow_name(&p, "example.com", 443),
	   "  neither its subdomains nor its parent");
	ok(net_allow_name(&p, "a.cdn.example", 8443) && net_allow_name(&p, "x.y.cdn.example", 8443),
	   "a wildcard allows every subdomain");
	ok(!net_allow_name(&p, "cdn.example", 8443), "  not the domain itself");
	ok(!net_allow_name(&p, "evilcdn.example", 8443) && !net_allow_name(&p, "a.cdn.example.evil", 8443),
	   "  nor a name that only ends in its text");
	ok(!net_allow_name(&p, "a.cdn.example", 443), "  only on its port");
	ok(net_allow_name(&p, "localhost", 5432) && !net_allow_name(&p, "localhost", 22), "localhost:PORT, that port");
	ok(!net_allow_name(&p, "", 443) && !net_allow_name(&p, NULL, 443) && !net_allow_name(&p, ".", 443),
	   "empty names: no");
	ok(net_allow_name_any_port(&p, "b.cdn.example") && !net_allow_name_any_port(&p, "other.example"),
	   "net_allow_name_any_port");

	a4("203.0.113.9", a);
	ok(net_allow_addr(&p, AF_INET, a, 25) && !net_allow_addr(&p, AF_INET, a, 443), "a CIDR entry, on its port");
	a4("203.0.114.1", a);
	ok(!net_allow_addr(&p, AF_INET, a, 25), "  not outside it");
	a6("2001:db8:ffff::1", a);
	ok(net_allow_addr(&p, AF_INET6, a, 1) && net_allow_addr(&p, AF_INET6, a, 65535), "an IPv6 CIDR with :*");
	a6("2001:db9::1", a);
	ok(!net_allow_addr(&p, AF_INET6, a, 443), "  not outside it");
	a6("::ffff:203.0.113.1", a);
	ok(net_allow_addr(&p, AF_INET6, a, 25), "an IPv4-mapped address matches the IPv4 entry");
	a4("127.0.0.1", a);
	ok(net_allow_addr(&p, AF_INET, a, 5432) && !net_allow_addr(&p, AF_INET, a, 5433),
	   "localhost:PORT allows 127.0.0.1 on that port");
	a6("::1", a);
	ok(net_allow_addr(&p, AF_INET6, a, 5432), "  and ::1");
	a4("127.0.0.2", a);
	ok(!net_allow_addr(&p, AF_INET, a, 5432), "  not the rest of 127/8");
	a4("93.184.216.34", a);
	ok(!net_allow_addr(&p, AF_INET, a, 443), "a name entry allows no address by itself");
	ok(!net_allow_addr(&p, AF_INET, NULL, 443) && !net_allow_addr(&p, AF_UNIX, a, 443), "NULL, other families: no");

	/* the DNS-rebinding rule's helpers */
	a4("10.9.1.1", a);
	ok(net_private_addr_named(&p, AF_INET, a, "api.example.com"),
	   "a private address inside an entry's range (:*) is named for a name");
	a4("10.8.1.1", a);
	ok(!net_private_addr_named(&p, AF_INET, a, "api.example.com"), "  one outside is not");
	a4("127.0.0.1", a);
	ok(!net_private_addr_named(&p, AF_INET, a, "api.example.com"),
	   "  loopback is not named for a name by localhost:5432: the name's ports (443, 80) do not meet 5432");
	ok(net_private_addr_named(&p, AF_INET, a, "localhost"), "  it is for localhost itself");
	ok(!net_private_addr_named(&p, AF_INET, a, "other.example"), "  nor for a name no entry allows");
	a4("203.0.113.9", a);
	ok(!net_private_addr_named(&p, AF_INET, a, "a.cdn.example"),
	   "  203.0.113.0/24:25 does not name it for *.cdn.example:8443");
	a4("169.254.169.254", a);
	ok(!net_private_addr_named(&p, AF_INET, a, "api.example.com"), "  the metadata address is not named");
	ok(net_name_pinned(&p, "Pinned.Example.") && !net_name_pinned(&p, "api.example.com"), "net_name_pinned");
	policy_free(&p);

	policy_init(&p);
	a4("8.8.8.8", a);
	ok(!net_allow_name(&p, "example.com", 443) && !net_allow_addr(&p, AF_INET, a, 443) &&
	       !net_private_addr_named(&p, AF_INET, a, "example.com"),
	   "an empty allowlist allows nothing");
	add(&p, "[::/0]:*");
	a6("::ffff:8.8.8.8", a);
	ok(net_allow_addr(&p, AF_INET6, a, 443), "::/0 holds the mapped addresses too");
	policy_free(&p);
}

/* Proxy-only entries count on the proxy path alone. */
static void test_paths(void)
{
	struct moat_policy p;
	struct moat_net_pin pin;
	struct net_parse_error e;
	unsigned char a[16];

	policy_init(&p);
	add(&p, "api.example.com");
	add(&p, "proxy:cdn.example.com");
	add(&p, "proxy:*.assets.example:8443");
	add(&p, "proxy:10.0.0.0/8:5432");
	ok(net_allow_name(&p, "api.example.com", 443) && net_allow_name_via(&p, "api.example.com", 443, true),
	   "a direct entry counts on both paths");
	ok(!net_allow_name(&p, "cdn.example.com", 443) && net_allow_name_via(&p, "cdn.example.com", 443, true),
	   "a proxy-only name: not for a direct connect, allowed through the proxy");
	ok(!net_allow_name_via(&p, "cdn.example.com", 8080, true), "  on its ports only");
	ok(!net_allow_name_any_port(&p, "cdn.example.com") && net_allow_name_any_port_via(&p, "cdn.example.com", true),
	   "  the fenced DNS does not know it (NXDOMAIN); the proxy path does");
	ok(!net_allow_name(&p, "x.assets.example", 8443) && net_allow_name_via(&p, "x.assets.example", 8443, true),
	   "a proxy-only wildcard likewise");
	a4("10.1.2.3", a);
	ok(!net_allow_addr(&p, AF_INET, a, 5432) && net_allow_addr_via(&p, AF_INET, a, 5432, true),
	   "a proxy-only CIDR: no direct connect, allowed through the proxy");
	ok(!net_private_addr_named(&p, AF_INET, a, "api.example.com") &&
	       !net_private_addr_named_via(&p, AF_INET, a, "api.example.com", true),
	   "  it names its private range on 5432 only, not on api.example.com's ports");
	add(&p, "proxy:db.example:5432");
	ok(!net_private_addr_named(&p, AF_INET, a, "db.example") &&
	       net_private_addr_named_via(&p, AF_INET, a, "db.example", true),
	   "  for a name on 5432: through the proxy only");
	if (net_pin_parse("cdn.example.com=203.0.113.9", &pin, &e) == 0) {
		char *argv[] = {"/bin/true", NULL};
		policy_add_net_pin(&p, &pin);
		policy_set_argv(&p, argv, 1);
		p.net = MOAT_NET_ALLOW;
		struct moat_error err = {0};
		ok(policy_validate(&p, &err) == 0, "a proxy-only name may be pinned: %s", err.message);
	}
	policy_free(&p);
}

static void test_proxy_url(void)
{
	struct net_proxy_url u;
	struct net_parse_error e;
	char buf[300];
	static const struct {
		const char *url, *text, *auth;
	} good[] = {
	    {"http://proxy.corp.example:3128", "http://proxy.corp.example:3128", NULL},
	    {"HTTP://Proxy.Corp.Example:3128/", "http://proxy.corp.example:3128", NULL},
	    {"proxy.corp.example:8080", "http://proxy.corp.example:8080", NULL},
	    {"http://10.0.0.1", "http://10.0.0.1:80", NULL},
	    {"http://[2001:db8::1]:3128", "http://[2001:db8::1]:3128", NULL},
	    {"http://user:pass@127.0.0.4:3128", "http://127.0.0.4:3128", "Basic dXNlcjpwYXNz"},
	    {"http://us%40er:p%3Ass@proxy:1", "http://proxy:1", "Basic dXNAZXI6cDpzcw=="}, /* "us@er:p:ss" */
	    {"http://u@x@proxy:1", "http://proxy:1", "Basic dUB4"},			   /* the last @ */
	    {"http://user@proxy:1", "http://proxy:1", "Basic dXNlcg=="},
	    /* SOCKS5: RFC 1929's request, shown here as its bytes in hex. */
	    {"socks5h://127.0.0.4", "socks5h://127.0.0.4:1080", NULL},
	    {"SOCKS5://Proxy:9050", "socks5://proxy:9050", NULL},
	    {"socks5h://user:pass@[::1]:1", "socks5h://[::1]:1", "0104757365720470617373"},
	    {"socks5://u%3A:p%3A@p:1", "socks5://p:1", "0102753a02703a"}, /* user "u:", password "p:" */
	    {"socks5://user@p:1", "socks5://p:1", "01047573657200"}, /* no password: PLEN 0 */
	    /* SOCKS4: the user id's bytes. */
	    {"socks4://127.0.0.4", "socks4://127.0.0.4:1080", NULL},
	    {"SOCKS4A://Proxy:9050", "socks4a://proxy:9050", NULL},
	    {"socks4a://us%3Aer@p:1", "socks4a://p:1", "75733a6572"}, /* "us:er": an escaped ':' is the id's */
	};
	for (size_t i = 0; i < ARRAY_LEN(good); i++) {
		if (net_proxy_url_parse(good[i].url, &u, &e) < 0) {
			ok(0, "proxy URL %s: %s", good[i].url, e.msg);
			continue;
		}
		is_str(net_proxy_url_text(&u, buf, sizeof(buf)), good[i].text, "proxy URL %s", good[i].url);
		if (u.socks4) {
			char hex[600] = "";
			for (size_t k = 0; u.auth && k < u.auth_len && k < 299; k++)
				snprintf(hex + 2 * k, 3, "%02x", (unsigned char)u.auth[k]);
			is_str(u.auth ? hex : NULL, good[i].auth, "  its credentials as SOCKS4's user id");
		} else if (u.socks) {
			char hex[600] = "";
			for (size_t k = 0; u.auth && k < u.auth_len && k < 299; k++)
				snprintf(hex + 2 * k, 3, "%02x", (unsigned char)u.auth[k]);
			is_str(u.auth ? hex : NULL, good[i].auth, "  its credentials as RFC 1929's request");
		} else {
			is_str(u.auth, good[i].auth, "  its credentials as Proxy-Authorization");
		}
		net_proxy_url_free(&u);
	}
	static const char *const bad[] = {"",
					  "https://proxy:3128",
					  "socks://proxy:1080",
					  "socks4://user:pass@proxy:1080", /* SOCKS4 has no password */
					  "socks4a://:@proxy:1080",
					  "socks5://:pass@proxy:1080", /* SOCKS5: a user name of 1-255 bytes */
					  "http://proxy:0",
					  "http://proxy:65536",
					  "http://proxy:x",
					  "http://:3128",
					  "http://proxy:3128/path",
					  "http://[::1",
					  "http://u:%zz@proxy:1",
					  "http://pro_xy:1",
					  "http://u:%00@p:1"};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		bool refused = net_proxy_url_parse(bad[i], &u, &e) < 0;
		ok(refused, "proxy URL '%s' is refused: %s", bad[i], refused ? e.msg : "");
		if (!refused)
			net_proxy_url_free(&u);
	}
}

static void test_no_proxy(void)
{
	static const struct {
		const char *list, *host;
		unsigned short port;
		bool match;
	} cases[] = {
	    {"*", "anything.example", 443, true},
	    {"example.com", "example.com", 443, true},
	    {"example.com", "api.example.com", 443, true},
	    {"example.com", "badexample.com", 443, false},
	    {".example.com", "example.com", 443, true},
	    {"*.example.com", "a.b.example.com", 443, true},
	    {"EXAMPLE.com.", "Api.Example.Com.", 443, true},
	    {"localhost, 127.0.0.1 ,::1", "127.0.0.1", 80, true},
	    {"localhost,127.0.0.1,::1", "::1", 80, true},
	    {"localhost,127.0.0.1", "127.0.0.2", 80, false},
	    {"10.0.0.0/8", "10.9.8.7", 443, true},
	    {"10.0.0.0/8", "11.0.0.1", 443, false},
	    {"10.0.0.0/8", "ten.example", 443, false},
	    {"2001:db8::/32", "2001:db8::5", 443, true},
	    {"[2001:db8::5]:443", "2001:db8::5", 443, true},
	    {"example.com:8443", "example.com", 8443, true},
	    {"example.com:8443", "example.com", 443, false},
	    {"", "example.com", 443, false},
	    {",, ,", "example.com", 443, false},
	    {".", "example.com", 443, false},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		ok(net_no_proxy_match(cases[i].list, cases[i].host, cases[i].port) == cases[i].match,
		   "NO_PROXY '%s' %s %s:%u", cases[i].list, cases[i].match ? "exempts" : "does not exempt",
		   cases[i].host, cases[i].port);
	ok(!net_no_proxy_match(NULL, "a", 1) && !net_no_proxy_match("*", NULL, 1), "NULLs: no");
}

int main(void)
{
	test_forms();
	test_lengths();
	test_pins();
	test_classifier();
	test_matchers();
	test_paths();
	test_proxy_url();
	test_no_proxy();
	return tap_done();
}
