/* Destination sets (sources/netsets.c): the set names, URLs as entries,
 * and each set's expansion from files and variables made here -- npm's
 * npmrc layers and their precedence, scoped registries and ${VAR}, pip's
 * pip.conf files and PIP_* variables, uv's UV_* variables, GOPROXY,
 * GOSUMDB and the go env files, crates.io -- with the malformed values each
 * refuses, and never a token in what comes out. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/netdest.h"
#include "policy/policy.h"
#include "sources/netsets.h"
#include "tap.h"
#include "util/rmtree.h"

static char base[64];

/* "B/" in a string stands for the base directory ("B/home", "HOME=B/h",
 * "(B/h/.npmrc:1)"): a B that starts the string or follows one of "=:( /". */
static const char *b(const char *s, char *buf, size_t len)
{
	const char *start = s;
	size_t o = 0;

	for (; *s && o + 1 < len; s++) {
		if (*s == 'B' && s[1] == '/' && (s == start || strchr("=:( /", s[-1]))) {
			o += (size_t)snprintf(buf + o, len - o, "%s", base);
			if (o >= len)
				o = len - 1;
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}

/* Write TEXT to base/REL, making its directories. */
static void put(const char *rel, const char *text)
{
	char path[512], r[512], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, b(rel, r, sizeof(r)));
	for (s = path + strlen(base) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void rm(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	unlink(path);
}

static void dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	mkdir(path, 0755);
}

static char got[4096], notes_text[4096], urls_text[4096];

/* Expand `sets` ("@npm") with the environment `env` (NULL-terminated, "B"
 * for the base directory) and the working directory `cwd` ("B/..."):
 * "text from | text from ..." in `got`, or "error: MESSAGE / HINT"; the
 * notes, joined by " | ", in `notes_text`. */
static const char *expand(const char *sets, const char *cwd, ...)
{
	char envbuf[16][512], cwdbuf[512], *env[17];
	struct netset_host h = {.env = env, .cwd = b(cwd, cwdbuf, sizeof(cwdbuf))};
	struct netset_notes notes = {0};
	struct net_parse_error pe;
	struct moat_error err = {0};
	struct moat_policy p;
	unsigned mask = 0;
	const char *s;
	size_t n = 0, o = 0, i;
	va_list ap;

	va_start(ap, cwd);
	while ((s = va_arg(ap, const char *)) && n < 16) {
		b(s, envbuf[n], sizeof(envbuf[n]));
		env[n] = envbuf[n];
		n++;
	}
	va_end(ap);
	env[n] = NULL;
	policy_init(&p);
	got[0] = notes_text[0] = urls_text[0] = '\0';
	if (strcmp(sets, "(pip)") == 0) {
		struct netset_urls u = {0};

		if (netset_pip_expand(&h, (struct moat_origin){.source = "test"}, &p, &notes, &u, &err) < 0)
			snprintf(got, sizeof(got), "error: %s / %s", err.message, err.hint);
		for (i = 0; i < u.n && o < sizeof(urls_text); i++)
			o += (size_t)snprintf(urls_text + o, sizeof(urls_text) - o, "%s%s=%s", i ? " | " : "", u.keys[i],
					      u.urls[i]);
		netset_urls_free(&u);
		o = 0;
	}
	if (strcmp(sets, "(pip)") == 0 && got[0]) {
		/* the error is in got */
	} else if (strcmp(sets, "(pip)") != 0 && netset_parse(sets, &mask, &pe) < 0) {
		snprintf(got, sizeof(got), "error: %s / %s", pe.msg, pe.hint);
	} else if (mask && netset_expand(mask, &h, (struct moat_origin){.source = "test"}, &p, &notes, &err) < 0) {
		snprintf(got, sizeof(got), "error: %s / %s", err.message, err.hint);
	} else {
		for (i = 0; i < p.n_net_allow && o < sizeof(got); i++)
			o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s %s%s", i ? " | " : "", p.net_allow[i].text,
					      p.net_allow[i].from, p.net_allow[i].project ? " [project]" : "");
	}
	for (i = 0, o = 0; i < notes.n && o < sizeof(notes_text); i++)
		o += (size_t)snprintf(notes_text + o, sizeof(notes_text) - o, "%s%s", i ? " | " : "", notes.v[i]);
	netset_notes_free(&notes);
	policy_free(&p);
	return got;
}

#define is_b(gotv, want, ...)                                                                                          \
	do {                                                                                                           \
		char want_[4096];                                                                                      \
		is_str(gotv, b(want, want_, sizeof(want_)), __VA_ARGS__);                                              \
	} while (0)

/* ---- set names ---- */

static void test_names(void)
{
	struct net_parse_error e;
	unsigned m = 0;

	ok(netset_parse("@npm", &m, &e) == 0 && m == 1, "@npm is a set");
	ok(netset_parse("@go", &m, &e) == 0 && m == 8, "@go is a set");
	ok(netset_parse("@registries", &m, &e) == 0 && m == 15, "@registries is all four");
	ok(netset_named("@npm") && !netset_named("npm.example.com"), "a set is told from a destination by its '@'");
	ok(netset_parse("@nmp", &m, &e) < 0, "an unknown set is refused");
	is_str(e.msg, "no destination set named \"@nmp\"", "  naming it");
	is_str(e.hint, "did you mean @npm? the sets are @npm, @pypi, @crates, @go and @registries (all four)",
	       "  with a did-you-mean and the list");
	ok(netset_parse("@cargo", &m, &e) < 0, "@cargo is not a set");
	is_str(e.hint, "the sets are @npm, @pypi, @crates, @go and @registries (all four)",
	       "  and nothing close: only the list");
	ok(netset_parse("@NPM", &m, &e) < 0, "set names are lowercase");
}

/* ---- URLs ---- */

static const char *url(const char *u)
{
	static char buf[400];
	struct moat_net_dest d;
	struct net_parse_error e;
	char a[64];
	int rc = netset_url_dest(u, &d, &e);

	if (rc < 0) {
		snprintf(buf, sizeof(buf), "error: %s", e.msg);
		return buf;
	}
	if (rc == 0)
		return "no network";
	if (d.kind == MOAT_NET_DEST_ADDR)
		snprintf(buf, sizeof(buf), "address %s/%u %u%s", net_addr_text(d.family, d.addr, a, sizeof(a)),
			 d.prefix, d.ports[0], d.host_loopback ? " loopback" : "");
	else
		snprintf(buf, sizeof(buf), "name %s %u%s [%s]", d.name, d.ports[0], d.host_loopback ? " loopback" : "",
			 d.text);
	ok(d.n_ports == 1 && !d.any_port, "  %s: one port", u);
	net_dest_free(&d);
	return buf;
}

static void test_urls(void)
{
	static const struct {
		const char *url, *want;
	} rows[] = {
	    {"https://registry.npmjs.org/", "name registry.npmjs.org 443 [registry.npmjs.org:443]"},
	    {"http://reg.test:8123/", "name reg.test 8123 [reg.test:8123]"},
	    {"http://reg.test", "name reg.test 80 [reg.test:80]"},
	    {"http://reg.test:/x", "name reg.test 80 [reg.test:80]"},
	    {"HTTPS://Mirror.Example.COM.:4873/npm/?q#f", "name mirror.example.com 4873 [Mirror.Example.COM.:4873]"},
	    {"https://user:hunter2@npm.example.com/", "name npm.example.com 443 [npm.example.com:443]"},
	    {"https://a@b@npm.example.com:444", "name npm.example.com 444 [npm.example.com:444]"},
	    {"http://10.1.2.3:8080/simple", "address 10.1.2.3/32 8080"},
	    {"https://[2001:db8::1]/", "address 2001:db8::1/128 443"},
	    {"https://[2001:db8::1]:8443/x", "address 2001:db8::1/128 8443"},
	    {"http://localhost:4873/", "name localhost 4873 loopback [localhost:4873]"},
	    {"http://127.0.0.1:4873", "address 127.0.0.1/32 4873 loopback"},
	    {"http://[::1]:3000/", "address ::1/128 3000 loopback"},
	    {"file:///srv/simple", "no network"},
	    {"registry.npmjs.org", "error: not a URL (expected http:// or https://, a host and an optional port)"},
	    {"htp//registry.npmjs.org", "error: not a URL (expected http:// or https://, a host and an optional port)"},
	    {"://x", "error: not a URL (expected http:// or https://, a host and an optional port)"},
	    {"1http://x", "error: not a URL (expected http:// or https://, a host and an optional port)"},
	    {"ftp://x/", "error: scheme \"ftp\": expected http or https"},
	    {"https:///x", "error: no host in the URL"},
	    {"https://user:pw@/x", "error: no host in the URL"},
	    {"https://[]/", "error: no host in the URL"},
	    {"https://x:0/", "error: the URL's port is not a number 1-65535"},
	    {"https://x:65536/", "error: the URL's port is not a number 1-65535"},
	    {"https://x:99999999999999999999/", "error: the URL's port is not a number 1-65535"},
	    {"https://x:8a/", "error: the URL's port is not a number 1-65535"},
	    {"https://[::1/", "error: unclosed '[' in the host"},
	    {"https://[::1]x/", "error: unexpected text after the IPv6 address's ']'"},
	    {"https://*.example.com/", "error: the URL's host has '*' in it (expected a host name or an IP address)"},
	    {"https://ex%41mple.com/", "error: the URL's host has '%' in it (expected a host name or an IP address)"},
	    {"https://exa_mple.com/",
	     "error: the URL's host: character '_' not allowed in a host name (letters, digits, '-', '.')"},
	    {"https://[10.0.0.1]/", "error: the URL's host: brackets hold an IPv6 address; \"10.0.0.1\" is not one"},
	    {"https://::1/", "error: no host in the URL"},
	    /* IPv4 as node's URL parser (WHATWG) reads it, and so connects */
	    {"http://0x7f000001:99/", "address 127.0.0.1/32 99 loopback"},
	    {"http://127.1/", "address 127.0.0.1/32 80 loopback"},
	    {"http://0177.0.0.1/", "address 127.0.0.1/32 80 loopback"},
	    {"http://2130706433/", "address 127.0.0.1/32 80 loopback"},
	    {"http://127.0.0.1./", "address 127.0.0.1/32 80 loopback"},
	    {"http://169.254.43518/", "address 169.254.169.254/32 80"},
	    {"http://10.0.0.0x1/", "address 10.0.0.1/32 80"},
	    {"http://0x/", "address 0.0.0.0/32 80"},
	    {"http://1e3/", "name 1e3 80 [1e3:80]"},
	    {"http://1.2.3.4.5/", "error: the URL's host ends in a number but is no IPv4 address"},
	    {"http://256.1.1.1/", "error: the URL's host ends in a number but is no IPv4 address"},
	    {"http://1.2.3.256/", "error: the URL's host ends in a number but is no IPv4 address"},
	    {"http://1.16777216/", "error: the URL's host ends in a number but is no IPv4 address"},
	    {"http://4294967296/", "error: the URL's host ends in a number but is no IPv4 address"},
	    {"http://09/", "error: the URL's host ends in a number but is no IPv4 address"},
	    {"http://foo.0x10/", "error: the URL's host ends in a number but is no IPv4 address"},
	    {"http://1..1/", "error: the URL's host ends in a number but is no IPv4 address"},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		is_str(url(rows[i].url), rows[i].want, "URL %s", rows[i].url);
	ok(!strstr(url("https://user:hunter2@:99/"), "hunter2") && !strstr(url("https://u:hunter2@x:0/"), "hunter2") &&
	       !strstr(url("ftp://u:hunter2@x/"), "hunter2") && !strstr(url("https://u:hunter2@ex_ample/"), "hunter2"),
	   "no refusal repeats the URL's password");
}

/* ---- npm ---- */

static void test_npm(void)
{
	const char *none = "PATH=/nonexistent";
	char buf[512];

	/* nothing configured: the default, whatever this host has */
	expand("@npm", "B/w", "HOME=B/home", none, NULL);
	is_str(got, "registry.npmjs.org:443 @npm (default registry)", "@npm with no npmrc: npm's default registry");
	is_str(notes_text, "", "  and no note");

	put("home/.npmrc", "; a comment\n"
			   "# another\n"
			   "//reg.user.test:8080/:_authToken=npm_TOKEN_SECRET\n"
			   "_auth = dXNlcjpTRUNSRVQ=\n"
			   "email=u@example.com\n"
			   "registry = http://reg.user.test:8080/\n"
			   "[section]\n"
			   "registry=http://in-a-section.test/\n");
	expand("@npm", "B/w", "HOME=B/home", none, NULL);
	is_b(got, "reg.user.test:8080 @npm (B/home/.npmrc:6)", "~/.npmrc's registry replaces the default");
	ok(!strstr(got, "SECRET") && !strstr(notes_text, "SECRET"), "  auth lines are never copied");
	is_b(notes_text,
	     "@npm: B/home/.npmrc names a registry, but the sandbox keeps that file from the command (a built-in "
	     "secret: it holds tokens): unless npm inside gets the registry another way (--env "
	     "npm_config_registry=URL, or the project's .npmrc), it goes to its default registry",
	     "  with a note: the command's npm cannot read ~/.npmrc");

	/* global: $PREFIX/etc/npmrc */
	put("prefix/etc/npmrc", "registry=http://reg.global.test/\n");
	expand("@npm", "B/w", "HOME=B/nohome", "PREFIX=B/prefix", none, NULL);
	is_b(got, "reg.global.test:80 @npm (B/prefix/etc/npmrc:1)", "the global npmrc under PREFIX");
	is_str(notes_text, "", "  no note (not ~/.npmrc)");
	expand("@npm", "B/w", "HOME=B/home", "PREFIX=B/prefix", none, NULL);
	is_b(got, "reg.user.test:8080 @npm (B/home/.npmrc:6)", "the user npmrc wins over the global one");

	/* project: the nearest directory up with package.json or
	 * node_modules; its .npmrc wins over the user's */
	put("proj/package.json", "{}\n");
	put("proj/.npmrc", "registry=https://reg.project.test/\n");
	put("proj/a/b/keep", "");
	expand("@npm", "B/proj/a/b", "HOME=B/home", "PREFIX=B/prefix", none, NULL);
	is_b(got, "reg.project.test:443 @npm (B/proj/.npmrc:1) [project]",
	     "the project's .npmrc (package.json two levels up) wins, as the project's choice");
	dir("proj/a/node_modules");
	expand("@npm", "B/proj/a/b", "HOME=B/home", "PREFIX=B/prefix", none, NULL);
	is_b(got, "reg.user.test:8080 @npm (B/home/.npmrc:6)",
	     "a nearer node_modules makes proj/a the project (no .npmrc there): the user's");
	expand("@npm", "B/proj/a/b", "HOME=B/home", "PREFIX=B/prefix", "npm_config_global=true", none, NULL);
	is_b(got, "reg.user.test:8080 @npm (B/home/.npmrc:6)", "global mode reads no project file");
	expand("@npm", "B/proj", "HOME=B/home", "PREFIX=B/prefix", "npm_config_global=true", none, NULL);
	is_b(got, "reg.user.test:8080 @npm (B/home/.npmrc:6)", "  (control: from the project, the same)");
	expand("@npm", "B/proj", "HOME=B/home", "PREFIX=B/prefix", none, NULL);
	is_b(got, "reg.project.test:443 @npm (B/proj/.npmrc:1) [project]", "  and without global mode, the project's");
	/* the user's own layers naming the same destination make a project's
	 * entry his (the environment here: ~/.npmrc, the global files alike) */
	put("proj/.npmrc", "registry=http://127.0.0.1:4873/\n@p:registry=http://10.9.9.9/\n");
	expand("@npm", "B/proj", "HOME=B/home", "PREFIX=B/prefix", "npm_config_@v:registry=http://127.0.0.1:4873", none,
	       NULL);
	is_b(got, "127.0.0.1:4873 @npm (B/proj/.npmrc:1) | 10.9.9.9:80 @npm (B/proj/.npmrc:2) [project]",
	     "a registry the user's environment names too is not the project's alone; another stays the project's");
	put("proj/.npmrc", "registry=https://reg.project.test/\n");

	/* the environment wins over every file, in any case */
	expand("@npm", "B/proj", "HOME=B/home", "PREFIX=B/prefix", "NPM_CONFIG_REGISTRY=https://reg.env.test:9443",
	       none, NULL);
	is_str(got, "reg.env.test:9443 @npm (NPM_CONFIG_REGISTRY)", "NPM_CONFIG_REGISTRY wins over the files");
	expand("@npm", "B/proj", "HOME=B/home", "npm_CONFIG_Registry=https://reg.env.test:9443",
	       "npm_config_registry=", none, NULL);
	is_str(got, "reg.env.test:9443 @npm (npm_CONFIG_Registry)", "  in any case; an empty one is skipped");

	/* userconfig and globalconfig move the files */
	put("other/npmrc", "registry=http://reg.other.test/\nprefix=${HOME}/pfx\n");
	put("home/pfx/etc/npmrc", "registry=http://reg.pfx.test/\n@pfx:registry=http://reg.pfx-scope.test/\n");
	expand("@npm", "B/w", "HOME=B/home", "NPM_CONFIG_USERCONFIG=B/other/npmrc", none, NULL);
	is_b(got, "reg.other.test:80 @npm (B/other/npmrc:1) | reg.pfx-scope.test:80 @npm (B/home/pfx/etc/npmrc:2)",
	     "NPM_CONFIG_USERCONFIG names the user file (~/.npmrc unread), whose prefix= moves the global one");
	is_str(notes_text, "", "  no note: the user file is not ~/.npmrc");
	put("proj/.npmrc", "userconfig=B/other/npmrc\n");
	put("proj/.npmrc", b("userconfig = B/other/npmrc\n", buf, sizeof(buf)));
	expand("@npm", "B/proj", "HOME=B/home", none, NULL);
	is_b(got,
	     "reg.other.test:80 @npm (B/other/npmrc:1) [project] | reg.pfx-scope.test:80 @npm (B/home/pfx/etc/npmrc:2) "
	     "[project]",
	     "the project's .npmrc may name the user file: what it says (and the global file its prefix= names) is "
	     "the project's choice");
	expand("@npm", "B/w", "HOME=B/nohome", "npm_config_globalconfig=B/prefix/etc/npmrc", none, NULL);
	is_b(got, "reg.global.test:80 @npm (B/prefix/etc/npmrc:1)", "npm_config_globalconfig names the global file");

	/* node's prefix (the node on PATH, two levels up), and npm's builtin
	 * npmrc next to npm-cli.js */
	put("node/bin/node", "#!/bin/sh\n");
	chmod(b("B/node/bin/node", buf, sizeof(buf)), 0755);
	put("node/etc/npmrc", "registry=http://reg.node-prefix.test/\n");
	put("node/lib/node_modules/npm/bin/npm-cli.js", "");
	chmod(b("B/node/lib/node_modules/npm/bin/npm-cli.js", buf, sizeof(buf)), 0755);
	put("node/lib/node_modules/npm/npmrc", "registry=http://reg.builtin.test/\n@b:registry=http://reg.b.test/\n");
	{
		char target[512], link[512];
		ok(symlink(b("B/node/lib/node_modules/npm/bin/npm-cli.js", target, sizeof(target)),
			   b("B/node/bin/npm", link, sizeof(link))) == 0,
		   "(set-up: npm links to npm-cli.js)");
	}
	expand("@npm", "B/w", "HOME=B/nohome", "PATH=/nonexistent:B/node/bin", NULL);
	is_b(got,
	     "reg.node-prefix.test:80 @npm (B/node/etc/npmrc:1) | reg.b.test:80 @npm "
	     "(B/node/lib/node_modules/npm/npmrc:2)",
	     "the node on PATH gives the global prefix; npm's builtin npmrc is below it");
	rm("node/etc/npmrc");
	expand("@npm", "B/w", "HOME=B/nohome", "PATH=B/node/bin", NULL);
	is_b(got,
	     "reg.builtin.test:80 @npm (B/node/lib/node_modules/npm/npmrc:1) | reg.b.test:80 @npm "
	     "(B/node/lib/node_modules/npm/npmrc:2)",
	     "  the builtin npmrc when nothing above it names a registry");
	expand("@npm", "B/w", "HOME=B/nohome", "PATH=B/node/bin", "DESTDIR=B/dest", NULL);
	put("dest/B/node/etc/npmrc", "registry=http://reg.destdir.test/\n");
	expand("@npm", "B/w", "HOME=B/nohome", "PATH=B/node/bin", "DESTDIR=B/dest", NULL);
	ok(strstr(got, "reg.destdir.test:80"), "  DESTDIR goes before node's prefix");

	/* scoped registries: each scope from the highest layer naming it */
	put("home/.npmrc", "@a:registry=https://a-user.test/\n@c:registry=https://c-user.test/\n"
			   "@a:_authToken=SECRET\n");
	put("proj/.npmrc", "@a:registry = https://a-project.test/\n");
	put("prefix/etc/npmrc", "@d:registry=https://d-global.test/\n@c:registry=https://c-global.test/\n");
	expand("@npm", "B/proj", "HOME=B/home", "PREFIX=B/prefix", "npm_config_@e:registry=https://e-env.test/", none,
	       NULL);
	is_b(got,
	     "registry.npmjs.org:443 @npm (default registry) | e-env.test:443 @npm (npm_config_@e:registry) | "
	     "a-project.test:443 @npm (B/proj/.npmrc:1) [project] | c-user.test:443 @npm (B/home/.npmrc:2) | "
	     "d-global.test:443 @npm (B/prefix/etc/npmrc:1)",
	     "scoped registries are added too, each from the highest layer that names it");
	ok(!strstr(got, "SECRET"), "  the scope's token is not");

	/* ${VAR}, quotes and comments as npm's ini reads them */
	put("home/.npmrc", "registry = \"https://${NPM_HOST}:${NPM_PORT}/\"\n"
			   "@${SCOPE}:registry='https://scoped.test/' \n"
			   "@x:registry=https://x${UNSET?}.test/ # comment\n"
			   "@y:registry=https://y.test/\\;x ; comment\n");
	expand("@npm", "B/w", "HOME=B/home", "NPM_HOST=reg.var.test", "NPM_PORT=8443", "SCOPE=myco", none, NULL);
	is_b(got,
	     "reg.var.test:8443 @npm (B/home/.npmrc:1) | scoped.test:443 @npm (B/home/.npmrc:2) | x.test:443 @npm "
	     "(B/home/.npmrc:3) | y.test:443 @npm (B/home/.npmrc:4)",
	     "${VAR} in values and keys, ${VAR?} unset is empty, quotes, inline comments, \\;");
	put("home/.npmrc", "registry = \"https:\\/\\/json.test\\u003a8080\\/\"\n"
			   "@sq:registry = '\"https://sq.test/\"'\n");
	expand("@npm", "B/w", "HOME=B/home", none, NULL);
	ok(strstr(got, "json.test:8080 @npm") && strstr(got, "sq.test:443 @npm"),
	   "a double-quoted value is read as JSON (\\/ and \\u003a), a single-quoted JSON string too (%s)", got);
	put("home/.npmrc", "@bad:registry = \"https://bad\\qjson.test/\"\n");
	expand("@npm", "B/w", "HOME=B/home", none, NULL);
	ok(strstr(got, ".npmrc:1: @bad:registry: not a URL"), "  an invalid JSON escape keeps the quotes: refused (%s)",
	   got);
	put("home/.npmrc", "registry = \"https://reg.quoted.test/\" ; comment\n");
	expand("@npm", "B/w", "HOME=B/home", none, NULL);
	ok(strstr(got, "error: ") && strstr(got, ".npmrc:1: registry: not a URL"),
	   "a quoted value with a comment after it keeps its quotes, as ini reads it (npm refuses it too)");
	put("home/.npmrc", "registry=https://\\${NPM_HOST}/\n");
	expand("@npm", "B/w", "HOME=B/home", "NPM_HOST=reg.var.test", none, NULL);
	is_b(got,
	     "error: B/home/.npmrc:1: registry: the URL's host: character '$' not allowed in a host name (letters, "
	     "digits, '-', '.') / correct it there, or allow the host with --allow-net HOST:PORT instead of @npm",
	     "\\${VAR} is not replaced (npm leaves \"${NPM_HOST}\", which is no host)");
	put("home/.npmrc", "registry=https://${NOT_SET}/\n");
	expand("@npm", "B/w", "HOME=B/home", none, NULL);
	ok(strncmp(got, "error: ", 7) == 0 && strstr(got, ".npmrc:1: registry: the URL's host: character '$'"),
	   "an unset ${VAR} stays as written, and the host is refused");

	/* malformed: an error naming the file and line, never the value */
	put("home/.npmrc", "# registry\nregistry=htp//registry.example.com\n");
	expand("@npm", "B/w", "HOME=B/home", none, NULL);
	is_b(got,
	     "error: B/home/.npmrc:2: registry: not a URL (expected http:// or https://, a host and an optional port) "
	     "/ correct it there, or allow the host with --allow-net HOST:PORT instead of @npm",
	     "a registry that is not a URL: the file, the line, with a hint");
	put("home/.npmrc", "@s:registry=https://me:hunter2@reg.test:70000/\n");
	expand("@npm", "B/w", "HOME=B/home", none, NULL);
	is_b(got,
	     "error: B/home/.npmrc:1: @s:registry: the URL's port is not a number 1-65535 / correct it there, or allow "
	     "the host with --allow-net HOST:PORT instead of @npm",
	     "a scoped registry's bad port, and no password in the message");
	expand("@npm", "B/w", "HOME=B/home", "npm_config_registry=ftp://x/", none, NULL);
	is_str(got,
	       "error: npm_config_registry: registry: scheme \"ftp\": expected http or https / correct it there, or "
	       "allow the host with --allow-net HOST:PORT instead of @npm",
	       "a variable's bad value names the variable");

	/* the same set twice: once */
	rm("home/.npmrc");
	expand("@registries", "B/w", "HOME=B/home", none, "PIP_CONFIG_FILE=/dev/null", NULL);
	ok(strstr(got, "registry.npmjs.org:443 @npm (default registry)") && strstr(got, "index.crates.io:443") &&
	       strstr(got, "proxy.golang.org:443") && strstr(got, "pypi.org:443"),
	   "@registries: all four");
}

/* ---- pypi ---- */

static void test_pypi(void)
{
	const char *none = "PATH=/nonexistent";
	bool clean_etc = true;
	FILE *f = fopen("/etc/pip.conf", "r");
	char line[512];

	/* /etc/pip.conf is this host's; it must not name an index for the
	 * tests that expect pip's default. */
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "index"))
			clean_etc = false;
	if (f)
		fclose(f);

	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=/dev/null", none, NULL);
	is_str(got, "pypi.org:443 @pypi (pip's default index) | files.pythonhosted.org:443 @pypi (pypi.org's files)",
	       "@pypi with nothing configured: pypi.org (pip's and uv's default, once) and its files' host");

	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=/dev/null", "PIP_INDEX_URL=https://mirror.test/simple",
	       "UV_DEFAULT_INDEX=https://mirror.test/simple", none, NULL);
	is_str(got, "mirror.test:443 @pypi (PIP_INDEX_URL)",
	       "PIP_INDEX_URL and UV_DEFAULT_INDEX replace pypi.org: no files.pythonhosted.org either");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=/dev/null", "PIP_INDEX_URL=https://mirror.test/simple",
	       none, NULL);
	is_str(got,
	       "mirror.test:443 @pypi (PIP_INDEX_URL) | pypi.org:443 @pypi (uv's default index) | "
	       "files.pythonhosted.org:443 @pypi (pypi.org's files)",
	       "  pip's mirror alone: uv still goes to pypi.org, which stays");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=/dev/null", "PIP_INDEX_URL=/srv/simple",
	       "UV_INDEX_URL=http://uv-old.test:3141/root/pypi/", none, NULL);
	is_str(got, "uv-old.test:3141 @pypi (UV_INDEX_URL)",
	       "a local directory as pip's index needs no network; UV_INDEX_URL is uv's default index");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=/dev/null", "PIP_INDEX_URL=file:///srv/simple",
	       "UV_DEFAULT_INDEX=internal=https://uv-new.test/simple", "UV_INDEX_URL=https://uv-old.test/",
	       "UV_INDEX=torch=https://download.pytorch.test/whl https://idx2.test/",
	       "UV_EXTRA_INDEX_URL=https://test.pypi.org/simple", none, NULL);
	is_str(got,
	       "uv-new.test:443 @pypi (UV_DEFAULT_INDEX) | download.pytorch.test:443 @pypi (UV_INDEX) | idx2.test:443 "
	       "@pypi (UV_INDEX) | test.pypi.org:443 @pypi (UV_EXTRA_INDEX_URL) | test-files.pythonhosted.org:443 "
	       "@pypi (test.pypi.org's files)",
	       "UV_DEFAULT_INDEX (NAME=URL) over UV_INDEX_URL, UV_INDEX's list, UV_EXTRA_INDEX_URL; test.pypi.org's "
	       "files");

	/* pip.conf: [install] over [global], a later file over an earlier
	 * one, PIP_CONFIG_FILE last, the variables over all */
	put("xdg/pip/pip.conf", "[global]\nindex-url = https://xdg-global.test/simple\n");
	put("home/.pip/pip.conf", "[global]\nindex_url = https://legacy.test/simple\n");
	put("home/.config/pip/pip.conf", "[global]\n"
					 "timeout = 60\n"
					 "Index-URL: https://user.test/simple\n"
					 "extra-index-url =\n"
					 "    https://extra1.test/simple\n"
					 "    # a comment inside the value\n"
					 "\n"
					 "    https://extra2.test:8443/simple\n"
					 "[install]\n"
					 "trusted-host = user.test\n");
	if (clean_etc) {
		expand("@pypi", "B/w", "HOME=B/home", "XDG_CONFIG_DIRS=B/xdg",
		       "UV_DEFAULT_INDEX=https://user.test/simple", none, NULL);
		is_b(got,
		     "user.test:443 @pypi (B/home/.config/pip/pip.conf:3) | extra1.test:443 @pypi "
		     "(B/home/.config/pip/pip.conf:4) | extra2.test:8443 @pypi (B/home/.config/pip/pip.conf:4)",
		     "the user's pip.conf over the legacy one and the global ones; extra-index-url over lines");
		rm("home/.config/pip/pip.conf");
		expand("@pypi", "B/w", "HOME=B/home", "XDG_CONFIG_DIRS=B/xdg", "UV_DEFAULT_INDEX=https://legacy.test/",
		       none, NULL);
		is_b(got, "legacy.test:443 @pypi (B/home/.pip/pip.conf:2)",
		     "  without it, ~/.pip/pip.conf (index_url)");
		rm("home/.pip/pip.conf");
		expand("@pypi", "B/w", "HOME=B/home", "XDG_CONFIG_DIRS=/nonexistent:B/xdg",
		       "UV_DEFAULT_INDEX=https://xdg-global.test/", none, NULL);
		is_b(got, "xdg-global.test:443 @pypi (B/xdg/pip/pip.conf:2)",
		     "  without that, $XDG_CONFIG_DIRS/pip/pip.conf");
		put("venv/pip.conf", "[install]\nindex-url = https://venv.test/simple\n");
		put("cf.conf", "[global]\nindex-url = https://config-file.test/simple\n");
		expand("@pypi", "B/w", "HOME=B/home", "XDG_CONFIG_DIRS=B/xdg", "VIRTUAL_ENV=B/venv",
		       "PIP_CONFIG_FILE=B/cf.conf", "UV_DEFAULT_INDEX=https://venv.test/", none, NULL);
		is_b(got, "venv.test:443 @pypi (B/venv/pip.conf:2)",
		     "  [install] in the virtualenv's wins over [global] in PIP_CONFIG_FILE");
		put("venv/pip.conf", "[global]\nindex-url = https://venv.test/simple\n");
		expand("@pypi", "B/w", "HOME=B/home", "XDG_CONFIG_DIRS=B/xdg", "VIRTUAL_ENV=B/venv",
		       "PIP_CONFIG_FILE=B/cf.conf", "UV_DEFAULT_INDEX=https://config-file.test/", none, NULL);
		is_b(got, "config-file.test:443 @pypi (B/cf.conf:2)",
		     "  PIP_CONFIG_FILE over the virtualenv's (same section)");
		expand("@pypi", "B/w", "HOME=B/home", "XDG_CONFIG_DIRS=B/xdg", "PIP_CONFIG_FILE=B/cf.conf",
		       "PIP_INDEX_URL=https://env.test/", "PIP_EXTRA_INDEX_URL=https://e1.test/ https://e2.test/",
		       "UV_DEFAULT_INDEX=https://env.test/", none, NULL);
		is_b(got,
		     "env.test:443 @pypi (PIP_INDEX_URL) | e1.test:443 @pypi (PIP_EXTRA_INDEX_URL) | e2.test:443 @pypi "
		     "(PIP_EXTRA_INDEX_URL)",
		     "  PIP_INDEX_URL and PIP_EXTRA_INDEX_URL over every file");
	} else {
		printf("ok %d # SKIP /etc/pip.conf names an index on this host\n", ++tap_n);
	}

	/* malformed pip.conf: what configparser refuses */
	put("bad.conf", "index-url = https://x.test/\n");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=B/bad.conf", none, NULL);
	is_b(got,
	     "error: B/bad.conf:1: a key before any [section] / pip refuses this file too (configparser); correct it, "
	     "or name the index hosts with --allow-net instead of @pypi",
	     "a key before any section: refused with the file and line");
	put("bad.conf", "[global]\nindex-url = https://x.test/\n[install]\n[global]\n");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=B/bad.conf", none, NULL);
	ok(strstr(got, "bad.conf:4: a section given twice"), "a section given twice: refused (%s)", got);
	put("bad.conf", "[global]\nindex-url = https://x.test/\nINDEX-URL = https://y.test/\n");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=B/bad.conf", none, NULL);
	ok(strstr(got, "bad.conf:3: a key given twice in its section"), "a key given twice: refused (%s)", got);
	put("bad.conf", "[global]\njust words\n");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=B/bad.conf", none, NULL);
	ok(strstr(got, "bad.conf:2: neither a [section] nor key = value"), "a line that is neither: refused (%s)", got);
	put("bad.conf", "[global]\nindex-url = https://user:s3cret@x.test:0/\n");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=B/bad.conf", none, NULL);
	is_b(got,
	     "error: B/bad.conf:2: index-url: the URL's port is not a number 1-65535 / correct it there, or allow the "
	     "host with --allow-net HOST:PORT instead of @pypi",
	     "a bad index URL: file, line and key, no password");
	put("bad.conf", "[global] ; trailing\nindex-url = https://ok.test/\n");
	expand("@pypi", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=B/bad.conf", "UV_DEFAULT_INDEX=https://ok.test/", none,
	       NULL);
	is_b(got, "ok.test:443 @pypi (B/bad.conf:2)", "  (control: a header with text after it is configparser's too)");

	/* pip's part alone (a pipx run's fetch phase): not uv's, the URLs
	 * without their user part, the extra ones as one list */
	expand("(pip)", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=/dev/null", "UV_DEFAULT_INDEX=https://uv.test/simple",
	       none, NULL);
	is_str(got, "pypi.org:443 @pypi (pip's default index) | files.pythonhosted.org:443 @pypi (pypi.org's files)",
	       "pip's part of @pypi: pip's default index and its files' host, not uv's index");
	is_str(urls_text, "", "  and no URL to tell pip (its default)");
	expand("(pip)", "B/w", "HOME=B/home", "PIP_CONFIG_FILE=/dev/null",
	       "PIP_INDEX_URL=https://me:s3cret@mirror.test/simple",
	       "PIP_EXTRA_INDEX_URL=https://extra1.test/simple https://tok@extra2.test:8443/simple", none, NULL);
	is_str(got,
	       "mirror.test:443 @pypi (PIP_INDEX_URL) | extra1.test:443 @pypi (PIP_EXTRA_INDEX_URL) | "
	       "extra2.test:8443 @pypi (PIP_EXTRA_INDEX_URL)",
	       "pip's index and its extra ones");
	is_str(urls_text,
	       "index-url=https://mirror.test/simple | extra-index-url=https://extra1.test/simple "
	       "https://extra2.test:8443/simple",
	       "  the URLs pip is told, without their user parts");
	ok(strstr(urls_text, "s3cret") == NULL && strstr(urls_text, "tok@") == NULL, "  no credential in them");
}

/* ---- crates ---- */

static void test_crates(void)
{
	expand("@crates", "B/w", "HOME=B/home", "PATH=/nonexistent", NULL);
	is_str(got,
	       "index.crates.io:443 @crates (crates.io's sparse index) | static.crates.io:443 @crates (crates.io's "
	       "downloads) | crates.io:443 @crates (crates.io's API)",
	       "@crates: the sparse index, the downloads, the API");
	is_str(notes_text, "", "  no note without a cargo config");
	put("cargo/config.toml", "[source.crates-io]\nreplace-with = \"mirror\"\n[source.mirror]\n"
				 "registry = \"sparse+https://cargo.mirror.test/index/\"\n");
	expand("@crates", "B/w", "HOME=B/home", "CARGO_HOME=B/cargo", "PATH=/nonexistent", NULL);
	ok(strstr(got, "index.crates.io:443") && !strstr(got, "mirror"), "a source replacement is not followed");
	is_b(notes_text,
	     "@crates: B/cargo/config.toml:2 replaces crates.io with the source \"mirror\", which @crates does not "
	     "follow (its download host is named only on the network); allow that registry's hosts with --allow-net",
	     "  and a note says so");
}

/* ---- go ---- */

static void test_go(void)
{
	const char *none = "PATH=/nonexistent";
	char buf[512];

	expand("@go", "B/w", "HOME=B/home", none, NULL);
	is_str(got, "proxy.golang.org:443 @go (default GOPROXY) | sum.golang.org:443 @go (default GOSUMDB)",
	       "@go with nothing configured: the default proxy and checksum database");
	is_str(notes_text,
	       "@go: GOPROXY ends in \"direct\" (a module the proxy does not have is fetched from its version control "
	       "host, which can be any host): an allowlist cannot name that, so it is left out",
	       "  and the note that \"direct\" is left out");

	expand("@go", "B/w", "HOME=B/home",
	       "GOPROXY= https://goproxy.test/mod | goproxy2.test:8080 ,, direct,https://never.test", none, NULL);
	is_str(got,
	       "goproxy.test:443 @go (GOPROXY) | goproxy2.test:8080 @go (GOPROXY) | sum.golang.org:443 @go (default "
	       "GOSUMDB)",
	       "GOPROXY: ',' and '|' lists, https:// added to a bare host, nothing after direct");
	ok(strstr(notes_text, "GOPROXY (GOPROXY) ends in \"direct\""), "  direct: noted (%s)", notes_text);
	expand("@go", "B/w", "HOME=B/home", "GOPROXY=https://a.test,off,https://b.test", "GOSUMDB=off", none, NULL);
	is_str(got, "a.test:443 @go (GOPROXY)", "off ends the list; GOSUMDB=off: no checksum database");
	is_str(notes_text, "", "  no note: nothing was left out");
	expand("@go", "B/w", "HOME=B/home", "GOPROXY=off", "GOSUMDB=off", none, NULL);
	is_str(got, "", "GOPROXY=off and GOSUMDB=off: nothing");
	is_str(notes_text, "@go: GOPROXY (GOPROXY) is off: go downloads no module", "  noted");
	expand(
	    "@go", "B/w", "HOME=B/home", "GOPROXY=file:///srv/goproxy",
	    "GOSUMDB=sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8 https://sumproxy.test:8443/x",
	    none, NULL);
	is_str(got, "sumproxy.test:8443 @go (GOSUMDB)", "a file:// proxy needs no network; GOSUMDB's URL field");
	expand("@go", "B/w", "HOME=B/home", "GOPROXY=https://p.test", "GOSUMDB=sum.golang.google.cn", none, NULL);
	is_str(got, "p.test:443 @go (GOPROXY) | sum.golang.google.cn:443 @go (GOSUMDB)", "GOSUMDB's name as the host");
	expand("@go", "B/w", "HOME=B/home", "GOPROXY=https://p.test", "GONOSUMDB=*", "GOPRIVATE=corp.test/*", none,
	       NULL);
	is_str(got, "p.test:443 @go (GOPROXY) | sum.golang.org:443 @go (default GOSUMDB)",
	       "GONOSUMDB (some modules unchecked) keeps the checksum database");
	is_str(notes_text,
	       "@go: the modules GOPRIVATE names are fetched from their own hosts, which @go does not include",
	       "  GOPRIVATE: noted");

	/* the go env file and $GOROOT/go.env, below the variables */
	put("cfg/go/env", "# not a setting\nGOPROXY=https://wrong.test\nGOPROXY=https://file-proxy.test\nGOSUMDB=\n");
	put("goroot/go.env", "# go.env\nGOPROXY=https://goroot-proxy.test,direct\nGOSUMDB=goroot-sum.test\n");
	put("goroot/bin/go", "#!/bin/sh\n");
	chmod(b("B/goroot/bin/go", buf, sizeof(buf)), 0755);
	expand("@go", "B/w", "HOME=B/home", "XDG_CONFIG_HOME=B/cfg", "PATH=B/goroot/bin", NULL);
	is_b(got, "file-proxy.test:443 @go (B/cfg/go/env:3) | goroot-sum.test:443 @go (B/goroot/go.env:3)",
	     "the go env file (its last line) over $GOROOT/go.env; an empty value there is unset");
	expand("@go", "B/w", "HOME=B/home", "XDG_CONFIG_HOME=B/cfg", "PATH=B/goroot/bin", "GOPROXY=https://env.test",
	       NULL);
	is_b(got, "env.test:443 @go (GOPROXY) | goroot-sum.test:443 @go (B/goroot/go.env:3)",
	     "  the variable over both");
	expand("@go", "B/w", "HOME=B/home", "XDG_CONFIG_HOME=B/cfg", "PATH=B/goroot/bin", "GOENV=off", NULL);
	is_b(got, "goroot-proxy.test:443 @go (B/goroot/go.env:2) | goroot-sum.test:443 @go (B/goroot/go.env:3)",
	     "  GOENV=off: no go env file");
	put("home/.config/go/env", "GOPROXY=https://home-proxy.test\n");
	expand("@go", "B/w", "HOME=B/home", "GOROOT=B/nogoroot", none, NULL);
	is_b(got, "home-proxy.test:443 @go (B/home/.config/go/env:1) | sum.golang.org:443 @go (default GOSUMDB)",
	     "  ~/.config/go/env without XDG_CONFIG_HOME; GOROOT names where go.env is");

	expand("@go", "B/w", "HOME=B/home", "GOPROXY=proxy", none, NULL);
	is_str(got,
	       "error: GOPROXY: not a URL (expected http:// or https://, a host and an optional port) / correct it "
	       "there, or allow the host with --allow-net HOST:PORT instead of @go",
	       "a GOPROXY word that is not a URL: refused, as go refuses it");
	expand("@go", "B/w", "HOME=B/home", "GOSUMDB=a b c", none, NULL);
	is_str(got, "error: GOSUMDB: more than two fields (NAME[+KEY] [URL]) / go refuses it too; correct it there",
	       "a GOSUMDB of three fields: refused");
}

int main(void)
{
	snprintf(base, sizeof(base), "/tmp/moat-netsets.XXXXXX");
	if (!mkdtemp(base)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	dir("w");
	test_names();
	test_urls();
	test_npm();
	test_pypi();
	test_crates();
	test_go();
	rmtree(base);
	return tap_done();
}
