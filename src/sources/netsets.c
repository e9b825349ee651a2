/* Destination sets (sources/netsets.h; docs/policy.md, "Destination sets").
 *
 * Each set reads what its tools read, in their order, and nothing is run:
 * npm's npmrc layers (@npmcli/config: env, project, user, global, builtin,
 * then the default), pip's pip.conf files and PIP_* variables and uv's UV_*
 * variables, Go's GOPROXY and GOSUMDB (the environment, the go env file,
 * $GOROOT/go.env).  crates.io has no such configuration that moat follows:
 * a cargo source replacement is only named in a note (see crates_note). */
#include "sources/netsets.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/config_common.h"
#include "sources/toml.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"
#include "util/strmap.h"

enum { SET_NPM, SET_PYPI, SET_CRATES, SET_GO, SET__COUNT };

/* In mask order; the last one is all of them. */
static const char *const set_names[] = {"@npm", "@pypi", "@crates", "@go", "@registries", NULL};

/* A config file larger than this is refused rather than read. */
#define MAX_CONFIG_FILE (1 << 20)

/* ---- notes ---- */

void netset_notes_free(struct netset_notes *n)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		free(n->v[i]);
	free(n->v);
	memset(n, 0, sizeof(*n));
}

/* ---- set names ---- */

bool netset_named(const char *text)
{
	return text[0] == '@';
}

int netset_parse(const char *text, unsigned *mask, struct net_parse_error *e)
{
	const char *sug;
	size_t i;

	for (i = 0; set_names[i]; i++)
		if (strcmp(text, set_names[i]) == 0) {
			*mask = i < SET__COUNT ? 1u << i : (1u << SET__COUNT) - 1;
			return 0;
		}
	snprintf(e->msg, sizeof(e->msg), "no destination set named \"%s\"", text);
	sug = config_suggest(text, set_names);
	snprintf(e->hint, sizeof(e->hint), "%s%s%sthe sets are @npm, @pypi, @crates, @go and @registries (all four)",
		 sug ? "did you mean " : "", sug ? sug : "", sug ? "? " : "");
	return -1;
}

/* ---- URLs ---- */

static int url_refuse(struct net_parse_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int url_refuse(struct net_parse_error *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->hint[0] = '\0';
	return -1;
}

/* One number of a URL's IPv4 host as the WHATWG URL parser reads it:
 * 0x hex (no digits: 0), a leading 0 octal, else decimal.  false for a
 * digit out of place, or a value past 32 bits. */
static bool ipv4_number(const char *s, size_t len, unsigned long long *out)
{
	unsigned base = 10;
	unsigned long long v = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2, len -= 2;
	else if (len >= 2 && s[0] == '0')
		base = 8, s++, len--;
	for (; len; s++, len--) {
		int d = isdigit((unsigned char)*s) ? *s - '0' : isxdigit((unsigned char)*s) ? tolower(*s) - 'a' + 10 : 99;

		if (d >= (int)base || v > 0xffffffffULL)
			return false;
		v = v * base + (unsigned)d;
	}
	*out = v;
	return v <= 0xffffffffULL;
}

/* The WHATWG URL parser's IPv4 host, what node (and so npm) connects to: a
 * host whose last label is a number (decimal, or 0x and hex digits) is an
 * address of one to four numbers -- "127.1", "0x7f000001", "0177.0.0.1"
 * are all 127.0.0.1 -- a trailing dot dropped.  1 and the address as
 * a.b.c.d in out; 0 for a name; -1 for numbers that make no address (node
 * refuses the URL too). */
static int url_ipv4(const char *host, size_t len, char *out, size_t out_len)
{
	unsigned long long part[4], addr;
	const char *last, *s, *dot;
	size_t n, i, last_len;
	bool hex;

	if (len > 1 && host[len - 1] == '.')
		len--;
	last = memrchr(host, '.', len);
	last = last ? last + 1 : host;
	last_len = (size_t)(host + len - last);
	hex = last_len >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X');
	if (last_len == 0)
		return 0;
	for (i = hex ? 2 : 0; i < last_len; i++)
		if (!(hex ? isxdigit((unsigned char)last[i]) : isdigit((unsigned char)last[i])))
			return 0;
	for (s = host, n = 0; s <= host + len; s = dot + 1, n++) {
		dot = memchr(s, '.', (size_t)(host + len - s));
		if (!dot)
			dot = host + len;
		if (n == 4 || dot == s || !ipv4_number(s, (size_t)(dot - s), &part[n]))
			return -1;
	}
	for (i = 0, addr = part[n - 1]; i + 1 < n; i++) {
		if (part[i] > 255)
			return -1;
		addr += part[i] << (8 * (3 - i));
	}
	if (part[n - 1] >= 1ULL << (8 * (5 - n)) || addr > 0xffffffffULL)
		return -1;
	snprintf(out, out_len, "%llu.%llu.%llu.%llu", addr >> 24, (addr >> 16) & 255, (addr >> 8) & 255, addr & 255);
	return 1;
}

int netset_url_dest(const char *url, struct moat_net_dest *out, struct net_parse_error *e)
{
	const char *sep = strstr(url, "://"), *auth, *end, *at, *host, *host_end, *port = NULL, *c;
	char text[320], addr[16];
	int v4;
	unsigned long port_num;
	size_t slen;
	bool bracketed = false;

	for (c = url; sep && c < sep; c++)
		if (!(isalpha((unsigned char)*c) || (c > url && (isdigit((unsigned char)*c) || strchr("+.-", *c)))))
			break;
	if (!sep || c != sep || sep == url)
		return url_refuse(e, "not a URL (expected http:// or https://, a host and an optional port)");
	slen = (size_t)(sep - url);
	if (slen == 4 && strncasecmp(url, "file", 4) == 0)
		return 0;
	if (slen == 4 && strncasecmp(url, "http", 4) == 0)
		port_num = 80;
	else if (slen == 5 && strncasecmp(url, "https", 5) == 0)
		port_num = 443;
	else
		return url_refuse(e, "scheme \"%.*s\": expected http or https", (int)(slen > 20 ? 20 : slen), url);
	auth = sep + 3;
	end = auth + strcspn(auth, "/?#");
	/* The user part (user:password@) is dropped unread. */
	at = memrchr(auth, '@', (size_t)(end - auth));
	host = at ? at + 1 : auth;
	if (host < end && *host == '[') {
		const char *close = memchr(host, ']', (size_t)(end - host));

		if (!close)
			return url_refuse(e, "unclosed '[' in the host");
		bracketed = true;
		host_end = close + 1;
		if (host_end < end && *host_end != ':')
			return url_refuse(e, "unexpected text after the IPv6 address's ']'");
	} else {
		host_end = memchr(host, ':', (size_t)(end - host));
		if (!host_end)
			host_end = end;
	}
	if (host_end < end)
		port = host_end + 1;
	if (host_end == host || (bracketed && host_end == host + 2))
		return url_refuse(e, "no host in the URL");
	if (memchr(host, '*', (size_t)(host_end - host)) || memchr(host, '%', (size_t)(host_end - host)))
		return url_refuse(e, "the URL's host has '%c' in it (expected a host name or an IP address)",
				  memchr(host, '*', (size_t)(host_end - host)) ? '*' : '%');
	if (port && port < end) {
		port_num = 0;
		for (c = port; c < end; c++) {
			if (!isdigit((unsigned char)*c) || port_num > 65535)
				return url_refuse(e, "the URL's port is not a number 1-65535");
			port_num = port_num * 10 + (unsigned long)(*c - '0');
		}
		if (port_num < 1 || port_num > 65535)
			return url_refuse(e, "the URL's port is not a number 1-65535");
	}
	if ((size_t)(host_end - host) > 260)
		return url_refuse(e, "the URL's host is longer than a host name can be");
	v4 = bracketed ? 0 : url_ipv4(host, (size_t)(host_end - host), addr, sizeof(addr));
	if (v4 < 0)
		return url_refuse(e, "the URL's host ends in a number but is no IPv4 address");
	if (v4 > 0)
		snprintf(text, sizeof(text), "%s:%lu", addr, port_num);
	else
		snprintf(text, sizeof(text), "%.*s:%lu", (int)(host_end - host), host, port_num);
	if (net_dest_parse(text, out, e) < 0) {
		static const char head[] = "the URL's host: ";
		size_t n = strnlen(e->msg, sizeof(e->msg) - sizeof(head));

		memmove(e->msg + sizeof(head) - 1, e->msg, n);
		memcpy(e->msg, head, sizeof(head) - 1);
		e->msg[sizeof(head) - 1 + n] = '\0';
		return -1;
	}
	return 1;
}

/* ---- the expansion ---- */

struct expand {
	const struct netset_host *h;
	const char *home; /* HOME, or NULL */
	const char *set;  /* "@npm" */
	struct moat_origin origin;
	struct moat_policy *p;
	struct netset_notes *notes;
	struct moat_error *err;
	struct netset_urls *urls; /* or NULL: the URLs themselves, for netset_npm_urls */
	/* This set's entries in p->net_allow by text (the first of each), for
	 * add_entry's dedupe; made at its first call (expand_done frees). */
	struct strmap dests;
	bool dests_ready;
};

static void expand_done(struct expand *x)
{
	strmap_free(&x->dests);
}

/* Is `o` an entry of this set (its `from` "@set (WHERE)")? */
static bool of_this_set(const struct expand *x, const struct moat_net_dest *o)
{
	size_t n = strlen(x->set);

	return o->from && strncmp(o->from, x->set, n) == 0 && o->from[n] == ' ';
}

static void note(struct expand *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct expand *x, const char *fmt, ...)
{
	struct netset_notes *n = x->notes;
	cleanup_free char *body = NULL, *line = NULL;
	va_list ap;

	if (!n)
		return;
	va_start(ap, fmt);
	body = moat_xvasprintf(fmt, ap);
	va_end(ap);
	line = moat_xasprintf("%s: %s", x->set, body);
	netset_notes_add(n, line);
}

void netset_notes_add(struct netset_notes *n, const char *line)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		if (strcmp(n->v[i], line) == 0)
			return;
	n->v = moat_xgrow(n->v, &n->cap, n->n, sizeof(*n->v));
	n->v[n->n++] = moat_xstrdup(line);
}

void netset_urls_free(struct netset_urls *u)
{
	for (size_t i = 0; i < u->n; i++) {
		free(u->keys[i]);
		free(u->urls[i]);
	}
	free(u->keys);
	free(u->urls);
	memset(u, 0, sizeof(*u));
}

/* `url` without a user part (scheme://user:password@host/...): what the
 * tool is told may not carry a credential the sandbox keeps from it. */
static char *url_without_user(const char *url)
{
	const char *auth = strstr(url, "://"), *end, *at;

	if (!auth)
		return moat_xstrdup(url);
	auth += 3;
	end = auth + strcspn(auth, "/?#");
	at = memrchr(auth, '@', (size_t)(end - auth));
	if (!at)
		return moat_xstrdup(url);
	return moat_xasprintf("%.*s%s", (int)(auth - url), url, at + 1);
}

void netset_urls_add(struct netset_urls *u, const char *key, const char *url)
{
	size_t cap_keys = u->cap, cap_urls = u->cap;

	for (size_t i = 0; i < u->n; i++)
		if (strcmp(u->keys[i], key) == 0)
			return;
	u->keys = moat_xgrow(u->keys, &cap_keys, u->n, sizeof(*u->keys));
	u->urls = moat_xgrow(u->urls, &cap_urls, u->n, sizeof(*u->urls));
	u->cap = cap_keys;
	u->keys[u->n] = moat_xstrdup(key);
	u->urls[u->n] = url_without_user(url);
	u->n++;
}

/* The entry of `url` into the policy, from "@set (WHERE)": `where` is
 * "FILE:LINE", the variable, or what a built-in entry is; `key` (or NULL)
 * is the setting, for messages.  `name` (or NULL) gets the entry's host
 * name ("" for an address, or a URL that needs no network).  `project`:
 * a file of the project chose the setting (the entry's `project`). */
static int add_entry(struct expand *x, const char *url, const char *where, const char *key, char *name, size_t len,
		     bool project)
{
	struct moat_net_dest d;
	struct net_parse_error pe;
	size_t i;
	int rc = netset_url_dest(url, &d, &pe);

	if (name)
		name[0] = '\0';
	if (key && strcmp(key, where) == 0)
		key = NULL; /* the variable is the setting */
	if (rc < 0) {
		moat_error_set(x->err, MOAT_E_CONFIG, 0, "%s: %s%s%s", where, key ? key : "", key ? ": " : "", pe.msg);
		return moat_error_hint(
		    x->err, "correct it there, or allow the host with --allow-net HOST:PORT instead of %s", x->set);
	}
	if (rc == 0)
		return 0;
	if (name && d.name)
		snprintf(name, len, "%s", d.name);
	if (x->urls)
		netset_urls_add(x->urls, key ? key : "registry", url);
	/* The same set named twice (or pypi.org by pip and by uv): once; the
	 * user's own setting of it makes it his, whichever came first.  By
	 * text through a map: a project's file can name tens of thousands. */
	if (!x->dests_ready) {
		for (i = 0; i < x->p->n_net_allow; i++)
			if (of_this_set(x, &x->p->net_allow[i]))
				(void)strmap_seen(&x->dests, x->p->net_allow[i].text, i);
		x->dests_ready = true;
	}
	if (strmap_get(&x->dests, d.text, &i)) {
		struct moat_net_dest *o = &x->p->net_allow[i];

		if (!project && o->project) {
			free(o->project);
			o->project = NULL;
		}
		net_dest_free(&d);
		return 0;
	}
	d.origin = x->origin;
	d.from = moat_xasprintf("%s (%s)", x->set, where);
	if (project) {
		cleanup_free char *bare = url_without_user(url);
		d.project = moat_xasprintf("%s: %s=%s", where, key ? key : "registry", bare);
	}
	strmap_put(&x->dests, d.text, x->p->n_net_allow);
	policy_add_net_dest(x->p, &d);
	return 0;
}

/* A setting of the user's (or of his tools' defaults) as an entry. */
static int add_url(struct expand *x, const char *url, const char *where, const char *key, char *name, size_t len)
{
	return add_entry(x, url, where, key, name, len, false);
}

/* A destination no configuration names; `what` says what it is. */
static void add_fixed(struct expand *x, const char *url, const char *what)
{
	/* Constant URLs: they parse. */
	add_url(x, url, what, NULL, NULL, 0);
}

/* A config file's text, or NULL when there is nothing to read: absent, not
 * a regular file, or not readable by moat (nor by the tool run as this
 * user).  -1 with *err only for a file too large or a read that failed. */
static int read_config(struct expand *x, const char *path, char **out)
{
	cleanup_close int fd = -1;
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t got = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == EPERM || errno == ELOOP ||
		    errno == ENXIO)
			return 0;
		return moat_error_set(x->err, MOAT_E_SYSTEM, errno, "opening %s", path);
	}
	if (fstat(fd, &st) != 0)
		return moat_error_set(x->err, MOAT_E_SYSTEM, errno, "%s", path);
	if (!S_ISREG(st.st_mode))
		return 0;
	if (st.st_size > MAX_CONFIG_FILE) {
		moat_error_set(x->err, MOAT_E_CONFIG, 0, "%s is larger than %d bytes; not read", path, MAX_CONFIG_FILE);
		return moat_error_hint(x->err, "name the hosts with --allow-net instead of %s", x->set);
	}
	buf = moat_xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return moat_error_set(x->err, MOAT_E_SYSTEM, errno, "reading %s", path);
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	*out = steal_ptr(&buf);
	return 0;
}

/* The real path of `name` found on moat's PATH, as the shell finds a
 * command (only absolute PATH entries), or NULL. */
static char *which_real(const struct expand *x, const char *name)
{
	const char *path = config_getenv(x->h->env, "PATH"), *s, *e;
	char real[PATH_MAX];

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path; *s; s = *e ? e + 1 : e) {
		cleanup_free char *cand = NULL;
		struct stat st;

		e = s + strcspn(s, ":");
		if (*s != '/')
			continue;
		cand = moat_xasprintf("%.*s/%s", (int)(e - s), s, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0 && realpath(cand, real))
			return moat_xstrdup(real);
	}
	return NULL;
}

/* dirname(dirname(path)): /usr/bin/node -> /usr.  NULL above "/". */
static char *up_two(const char *path)
{
	char *d = moat_xstrdup(path), *s;
	int i;

	for (i = 0; i < 2; i++) {
		s = strrchr(d, '/');
		if (!s || s == d) {
			free(d);
			return NULL;
		}
		*s = '\0';
	}
	return d;
}

/* ---- npm ---- */

/* npm's layers, highest first (the command line's, which moat cannot see,
 * would be above them all). */
enum { NPM_ENV, NPM_PROJECT, NPM_USER, NPM_GLOBAL, NPM_BUILTIN, NPM__LAYERS };

/* The keys that decide the registries and where the files are. */
enum { NK_REGISTRY, NK_USERCONFIG, NK_GLOBALCONFIG, NK_PREFIX, NK_GLOBAL, NK_LOCATION, NK__COUNT };
static const char *const npm_keys[NK__COUNT] = {"registry", "userconfig", "globalconfig",
						"prefix",   "global",	  "location"};

struct setting {
	char *value; /* NULL: not set in this layer */
	char *where; /* "FILE:LINE" or the variable */
};

struct npm_scope {
	char *key; /* "@scope:registry" */
	struct setting v;
};

/* The most scoped registries (`@scope:registry=URL`) moat reads from one
 * layer.  A project's .npmrc is the repository's words: each new scope is
 * compared with those before it, here and again as a destination of the
 * set, and 28000 scope lines in a 1 MiB file kept moat busy for 10 s
 * before the command started. */
#define NPM_MAX_SCOPES 1000

struct npm_layer {
	struct setting keys[NK__COUNT];
	struct npm_scope *scopes;
	size_t n_scopes, cap_scopes;
	struct strmap scope_index; /* each scope's key: its index in scopes */
	char *too_many; /* "FILE:LINE" of the first scope past NPM_MAX_SCOPES */
	char *file;   /* the file read, or NULL */
	bool project; /* a file the project chose: its .npmrc, or one that file
		       * names (userconfig, globalconfig, prefix) */
};

static void setting_set(struct setting *v, const char *value, const char *where)
{
	free(v->value);
	free(v->where);
	v->value = moat_xstrdup(value);
	v->where = moat_xstrdup(where);
}

static void npm_layers_free(struct npm_layer *l)
{
	size_t i, k;

	for (i = 0; i < NPM__LAYERS; i++) {
		for (k = 0; k < NK__COUNT; k++) {
			free(l[i].keys[k].value);
			free(l[i].keys[k].where);
		}
		for (k = 0; k < l[i].n_scopes; k++) {
			free(l[i].scopes[k].key);
			free(l[i].scopes[k].v.value);
			free(l[i].scopes[k].v.where);
		}
		free(l[i].scopes);
		strmap_free(&l[i].scope_index);
		free(l[i].file);
		free(l[i].too_many);
	}
}

static bool is_scope_key(const char *k)
{
	size_t n = strlen(k);

	return k[0] == '@' && n > 10 && strcmp(k + n - 9, ":registry") == 0 && !strchr(k, '/');
}

/* One key of a layer; later ones win, as in npm's object. */
static void npm_set(struct npm_layer *l, const char *key, const char *value, const char *where)
{
	size_t i;

	for (i = 0; i < NK__COUNT; i++)
		if (strcmp(key, npm_keys[i]) == 0) {
			setting_set(&l->keys[i], value, where);
			return;
		}
	if (!is_scope_key(key))
		return; /* every other key, auth lines included, is never kept */
	if (strmap_get(&l->scope_index, key, &i)) {
		setting_set(&l->scopes[i].v, value, where);
		return;
	}
	if (l->n_scopes == NPM_MAX_SCOPES) {
		if (!l->too_many)
			l->too_many = moat_xstrdup(where);
		return;
	}
	l->scopes = moat_xgrow(l->scopes, &l->cap_scopes, l->n_scopes, sizeof(*l->scopes));
	memset(&l->scopes[l->n_scopes], 0, sizeof(*l->scopes));
	l->scopes[l->n_scopes].key = moat_xstrdup(key);
	setting_set(&l->scopes[l->n_scopes].v, value, where);
	strmap_put(&l->scope_index, key, l->n_scopes);
	l->n_scopes++;
}

/* The value of `key` in the highest of layers [from, to), and its layer. */
static const struct setting *npm_get(const struct npm_layer *l, int from, int to, int key, int *layer)
{
	int i;

	for (i = from; i < to; i++)
		if (l[i].keys[key].value) {
			if (layer)
				*layer = i;
			return &l[i].keys[key];
		}
	return NULL;
}

/* A growing string. */
struct text {
	char *p;
	size_t n, cap;
};

static void text_put(struct text *t, const char *p, size_t len)
{
	t->p = moat_xgrow(t->p, &t->cap, t->n + len + 1, 1);
	memcpy(t->p + t->n, p, len);
	t->n += len;
	t->p[t->n] = '\0';
}

/* npm's ${NAME} in npmrc keys and values (@npmcli/config, env-replace.js):
 * NAME's value; "${NAME}" as written when NAME is unset, or "" for
 * ${NAME?}.  A run of backslashes before the '$': an odd count escapes the
 * reference (keeping half of them, rounded down), an even count keeps
 * half. */
static char *npm_env_replace(const char *s, char *const *env)
{
	struct text out = {0};
	size_t i = 0;

	text_put(&out, "", 0);
	while (s[i]) {
		size_t j = i, k, m, nb;
		bool opt;

		while (s[j] == '\\')
			j++;
		nb = j - i;
		if (s[j] == '$' && s[j + 1] == '{') {
			for (k = j + 2; s[k] && !strchr("${}?", s[k]); k++)
				;
			opt = s[k] == '?';
			m = k + opt;
			if (k > j + 2 && s[m] == '}') {
				cleanup_free char *var = moat_xstrndup(s + j + 2, k - j - 2);
				const char *val = config_getenv(env, var);

				if (nb % 2) {
					text_put(&out, s + i + (nb + 1) / 2, m + 1 - i - (nb + 1) / 2);
				} else {
					text_put(&out, s + i, nb / 2);
					if (val)
						text_put(&out, val, strlen(val));
					else if (!opt)
						text_put(&out, s + j, m + 1 - j);
				}
				i = m + 1;
				continue;
			}
		}
		/* No reference here: the backslashes and the next character
		 * as they are. */
		text_put(&out, s + i, nb + (s[j] ? 1 : 0));
		i = j + (s[j] ? 1 : 0);
	}
	return out.p;
}

/* A JSON string literal's text ("..." with JSON's escapes), or NULL when
 * it is not one (ini's JSON.parse then fails and keeps the text). */
static char *json_string_text(const char *s, size_t len)
{
	static const char esc_from[] = "\"\\/bfnrt", esc_to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	char *out, *o;
	size_t i;

	if (len < 2 || s[0] != '"' || s[len - 1] != '"')
		return NULL;
	o = out = moat_xmalloc(len * 2);
	for (i = 1; i < len - 1; i++) {
		char c = s[i];

		if (c == '"' || (unsigned char)c < 0x20)
			goto bad;
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		if (++i >= len - 1)
			goto bad;
		if (s[i] && (e = strchr(esc_from, s[i]))) {
			*o++ = esc_to[e - esc_from];
			continue;
		}
		/* \uXXXX: only what a URL could hold, ASCII. */
		if (s[i] == 'u' && i + 4 < len - 1 && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2]) && isxdigit((unsigned char)s[i + 3]) &&
		    isxdigit((unsigned char)s[i + 4])) {
			char hex[5] = {s[i + 1], s[i + 2], s[i + 3], s[i + 4], 0};
			unsigned long u = strtoul(hex, NULL, 16);

			if (u == 0 || u > 0x7f)
				goto bad;
			*o++ = (char)u;
			i += 4;
			continue;
		}
		goto bad;
	}
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

/* ini's unsafe() (the npm "ini" package): trimmed; a quoted value is
 * unquoted ("..." read as JSON, '...' stripped, then read as JSON if it is
 * a JSON string); otherwise the value ends at the first ';' or '#' not
 * escaped with a backslash, and \; \# \\ are unescaped. */
static char *ini_unsafe(const char *s, size_t len)
{
	char *out, *o, *js;
	size_t i;
	bool esc = false;

	while (len && isspace((unsigned char)*s))
		s++, len--;
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len >= 1 && ((s[0] == '"' && s[len - 1] == '"') || (s[0] == '\'' && s[len - 1] == '\''))) {
		if (s[0] == '\'' && len >= 2) {
			s++;
			len -= 2;
		}
		js = json_string_text(s, len);
		return js ? js : moat_xstrndup(s, len);
	}
	o = out = moat_xmalloc(2 * len + 2);
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (esc) {
			if (!strchr("\\;#", c))
				*o++ = '\\';
			*o++ = c;
			esc = false;
		} else if (c == ';' || c == '#') {
			break;
		} else if (c == '\\') {
			esc = true;
		} else {
			*o++ = c;
		}
	}
	if (esc)
		*o++ = '\\';
	while (o > out && isspace((unsigned char)o[-1]))
		o--;
	*o = '\0';
	return out;
}

/* Read one npmrc as npm does (the "ini" package, then @npmcli/config):
 * lines; ';' or '#' first: a comment; "[section]": the keys after it are
 * not top-level and npm does not read them; "key = value" (a line with no
 * '=' is key = true).  Keys and values get ${VAR}; values are trimmed. */
static void npm_read_layer(struct expand *x, struct npm_layer *l, const char *file, const char *text)
{
	const char *line = text;
	int lineno = 0;
	bool in_section = false;

	while (*line) {
		size_t len = strcspn(line, "\n"), klen;
		const char *eq, *next = line + len + (line[len] ? 1 : 0);
		cleanup_free char *rawkey = NULL, *rawval = NULL, *key = NULL, *val = NULL, *where = NULL;
		size_t i = 0;

		lineno++;
		while (len && line[len - 1] == '\r')
			len--;
		while (i < len && isspace((unsigned char)line[i]))
			i++;
		if (len == 0 || (i < len && (line[i] == ';' || line[i] == '#'))) {
			line = next;
			continue;
		}
		if (line[0] == '[') {
			const char *close = memchr(line, ']', len);
			size_t t = close ? (size_t)(close - line) + 1 : len;

			while (t < len && isspace((unsigned char)line[t]))
				t++;
			if (close && t == len) {
				in_section = true;
				line = next;
				continue;
			}
		}
		eq = memchr(line, '=', len);
		klen = eq ? (size_t)(eq - line) : len;
		if (in_section || klen == 0) {
			line = next;
			continue;
		}
		rawkey = ini_unsafe(line, klen);
		rawval = eq ? ini_unsafe(eq + 1, len - klen - 1) : moat_xstrdup("true");
		key = npm_env_replace(rawkey, x->h->env);
		val = npm_env_replace(rawval, x->h->env);
		where = moat_xasprintf("%s:%d", file, lineno);
		npm_set(l, key, val, where);
		line = next;
	}
}

/* -1 with the error when the layer named more scopes than moat reads. */
static int npm_layer_bounded(struct expand *x, const struct npm_layer *l)
{
	if (!l->too_many)
		return 0;
	moat_error_set(x->err, MOAT_E_CONFIG, 0, "%s: more than %d scoped registries (@scope:registry): the most moat "
		       "reads from one npmrc or environment", l->too_many, NPM_MAX_SCOPES);
	return moat_error_hint(x->err, "keep the scopes the command needs, or allow the registries with --allow-net "
				       "HOST:PORT instead of %s", x->set);
}

static int npm_load_file(struct expand *x, struct npm_layer *l, const char *file)
{
	cleanup_free char *text = NULL;

	if (read_config(x, file, &text) < 0)
		return -1;
	l->file = moat_xstrdup(file);
	if (text)
		npm_read_layer(x, l, file, text);
	return npm_layer_bounded(x, l);
}

/* npm_config_* variables, any case: the key after the prefix, lowercased,
 * '_' read as '-' (except a leading one); empty values are skipped. */
static void npm_env_layer(struct expand *x, struct npm_layer *l)
{
	char *const *e;

	for (e = x->h->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		cleanup_free char *name = NULL, *key = NULL, *val = NULL;
		size_t i;

		if (!eq || eq[1] == '\0' || (size_t)(eq - *e) <= 11 || strncasecmp(*e, "npm_config_", 11) != 0)
			continue;
		name = moat_xstrndup(*e, (size_t)(eq - *e));
		key = moat_xstrdup(name + 11);
		if (strncmp(key, "//", 2) != 0)
			for (i = 0; key[i]; i++)
				key[i] = i > 0 && key[i] == '_' ? '-' : (char)tolower((unsigned char)key[i]);
		val = npm_env_replace(eq + 1, x->h->env);
		npm_set(l, key, val, name);
	}
}

/* A path-typed value as npm reads it: "~/" is HOME, a relative path is
 * taken against the working directory. */
static char *npm_path(const struct expand *x, const char *v)
{
	if (v[0] == '~' && v[1] != '/')
		return path_resolve_lexical(v, x->h->cwd, NULL);
	return path_resolve_lexical(v, x->h->cwd, x->home);
}

/* npm's project: the nearest directory upwards from the working directory
 * with a package.json file or a node_modules directory, else the working
 * directory itself.  (A workspace's root above it is not looked for.) */
static char *npm_project(const struct expand *x)
{
	cleanup_free char *dir = NULL;

	if (!x->h->cwd || x->h->cwd[0] != '/')
		return NULL;
	dir = moat_xstrdup(x->h->cwd);
	for (;;) {
		cleanup_free char *pj = moat_xasprintf("%s/package.json", strcmp(dir, "/") == 0 ? "" : dir);
		cleanup_free char *nm = moat_xasprintf("%s/node_modules", strcmp(dir, "/") == 0 ? "" : dir);
		struct stat st;
		char *slash;

		if ((stat(pj, &st) == 0 && S_ISREG(st.st_mode)) || (stat(nm, &st) == 0 && S_ISDIR(st.st_mode)))
			return steal_ptr(&dir);
		if (strcmp(dir, "/") == 0)
			return moat_xstrdup(x->h->cwd);
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

/* Where npm's own install keeps its builtin npmrc: the npm found on PATH
 * is npm/bin/npm-cli.js (a link to it), and the file is npm/npmrc. */
static char *npm_builtin(const struct expand *x)
{
	cleanup_free char *npm = which_real(x, "npm"), *dir = NULL;
	const char *s;

	if (!npm || !(dir = up_two(npm)))
		return NULL;
	s = strrchr(npm, '/');
	if (s - npm < 4 || strncmp(s - 4, "/bin", 4) != 0)
		return NULL;
	return moat_xasprintf("%s/npmrc", dir);
}

/* npm's default global prefix: PREFIX, else the prefix of the node that
 * runs npm (/usr/bin/node: /usr), DESTDIR before it. */
static char *npm_default_prefix(const struct expand *x)
{
	const char *env = config_getenv(x->h->env, "PREFIX"), *destdir = config_getenv(x->h->env, "DESTDIR");
	cleanup_free char *node = NULL, *prefix = NULL;

	if (env && *env)
		return path_resolve_lexical(env, x->h->cwd, NULL); /* taken as it is, no "~/" */
	if (!(node = which_real(x, "node")) || !(prefix = up_two(node)))
		return NULL;
	if (destdir && *destdir)
		return moat_xasprintf("%s%s", destdir, prefix);
	return steal_ptr(&prefix);
}

/* A registry the user's own layers name (the environment, ~/.npmrc, the
 * global and builtin files), though a project's file wins over it: an
 * entry the project named for the same destination is his too. */
static void npm_vouch(struct expand *x, const char *url)
{
	struct moat_net_dest d;
	struct net_parse_error pe;

	if (netset_url_dest(url, &d, &pe) <= 0)
		return; /* npm does not read it: not checked */
	for (size_t i = 0; i < x->p->n_net_allow; i++) {
		struct moat_net_dest *o = &x->p->net_allow[i];

		if (o->project && strcmp(o->text, d.text) == 0) {
			free(o->project);
			o->project = NULL;
		}
	}
	net_dest_free(&d);
}

static void npm_vouch_layers(struct expand *x, const struct npm_layer *l)
{
	for (size_t i = 0; i < NPM__LAYERS; i++) {
		if (l[i].project)
			continue;
		if (l[i].keys[NK_REGISTRY].value)
			npm_vouch(x, l[i].keys[NK_REGISTRY].value);
		for (size_t k = 0; k < l[i].n_scopes; k++)
			npm_vouch(x, l[i].scopes[k].v.value);
	}
}

/* An npm found on PATH (its builtin npmrc), or the node whose prefix is
 * npm's global one, that lies in the project: the repository's (direnv's
 * `layout node` puts the project's node_modules/.bin on PATH, and a clone
 * may carry node_modules/npm with an npmrc of its choosing).  Not when the
 * project is the user's home or above it: ~/node_modules makes ~ npm's
 * project, and nvm's npm in ~/.nvm is the user's. */
static bool npm_file_in_project(const struct expand *x, const char *project, const char *file)
{
	char real[PATH_MAX];

	if (!project || !file || (x->home && path_within(x->home, project)))
		return false;
	return path_within(realpath(file, real) ? real : file, project);
}

static int expand_npm(struct expand *x)
{
	struct npm_layer l[NPM__LAYERS];
	cleanup_free char *builtin = NULL, *project = NULL, *projfile = NULL, *userfile = NULL, *globalfile = NULL;
	cleanup_free char *home_npmrc = x->home ? moat_xasprintf("%s/.npmrc", x->home) : NULL;
	const struct setting *v, *g, *loc;
	int rc = -1, layer = -1, chooser = -1;
	bool from_user = false;
	size_t i, k;

	memset(l, 0, sizeof(l));
	/* What the project's files say is the repository's choice, and so is
	 * what a file they name says. */
	l[NPM_PROJECT].project = true;
	/* The order npm loads them in: builtin, env, project (which may
	 * name the user file), user (which may name the global one or the
	 * prefix), global. */
	npm_env_layer(x, &l[NPM_ENV]);
	if (npm_layer_bounded(x, &l[NPM_ENV]) < 0)
		goto out;
	if ((builtin = npm_builtin(x)) && npm_load_file(x, &l[NPM_BUILTIN], builtin) < 0)
		goto out;
	g = npm_get(l, NPM_ENV, NPM__LAYERS, NK_GLOBAL, NULL);
	loc = npm_get(l, NPM_ENV, NPM__LAYERS, NK_LOCATION, NULL);
	v = npm_get(l, NPM_ENV, NPM__LAYERS, NK_USERCONFIG, NULL);
	userfile = v ? npm_path(x, v->value) : home_npmrc ? moat_xstrdup(home_npmrc) : NULL;
	if (!(g && strcmp(g->value, "true") == 0) && !(loc && strcmp(loc->value, "global") == 0)) {
		project = npm_project(x);
		projfile = project ? moat_xasprintf("%s/.npmrc", strcmp(project, "/") == 0 ? "" : project) : NULL;
		/* npm skips a project file that is the user file (~ with a
		 * node_modules in it). */
		if (projfile && (!userfile || strcmp(projfile, userfile) != 0) &&
		    npm_load_file(x, &l[NPM_PROJECT], projfile) < 0)
			goto out;
		l[NPM_BUILTIN].project = npm_file_in_project(x, project, builtin);
	}
	v = npm_get(l, NPM_ENV, NPM__LAYERS, NK_USERCONFIG, &chooser);
	free(userfile);
	userfile = v ? npm_path(x, v->value) : home_npmrc ? moat_xstrdup(home_npmrc) : NULL;
	l[NPM_USER].project = v && l[chooser].project;
	if (userfile && npm_load_file(x, &l[NPM_USER], userfile) < 0)
		goto out;
	if ((v = npm_get(l, NPM_ENV, NPM__LAYERS, NK_GLOBALCONFIG, &chooser))) {
		globalfile = npm_path(x, v->value);
	} else {
		cleanup_free char *prefix = NULL;

		v = npm_get(l, NPM_ENV, NPM__LAYERS, NK_PREFIX, &chooser);
		prefix = v ? npm_path(x, v->value) : npm_default_prefix(x);
		if (prefix)
			globalfile = moat_xasprintf("%s/etc/npmrc", strcmp(prefix, "/") == 0 ? "" : prefix);
	}
	l[NPM_GLOBAL].project = v ? l[chooser].project : npm_file_in_project(x, project, globalfile);
	if (globalfile && npm_load_file(x, &l[NPM_GLOBAL], globalfile) < 0)
		goto out;

	if ((v = npm_get(l, NPM_ENV, NPM__LAYERS, NK_REGISTRY, &layer))) {
		if (add_entry(x, v->value, v->where, "registry", NULL, 0, l[layer].project) < 0)
			goto out;
		from_user = layer == NPM_USER;
	} else {
		add_fixed(x, "https://registry.npmjs.org/", "default registry");
	}
	/* Each scope's registry, from the highest layer that names it. */
	for (i = 0; i < NPM__LAYERS; i++)
		for (k = 0; k < l[i].n_scopes; k++) {
			const struct npm_scope *s = &l[i].scopes[k];
			size_t j;
			bool higher = false;

			for (j = 0; j < i && !higher; j++)
				higher = strmap_get(&l[j].scope_index, s->key, NULL);
			if (higher)
				continue;
			if (add_entry(x, s->v.value, s->v.where, s->key, NULL, 0, l[i].project) < 0)
				goto out;
			from_user |= i == NPM_USER;
		}
	npm_vouch_layers(x, l);
	/* ~/.npmrc is a built-in secret (it holds tokens): the command's npm
	 * does not read it. */
	if (from_user && home_npmrc && strcmp(l[NPM_USER].file, home_npmrc) == 0)
		note(x,
		     "%s names a registry, but the sandbox keeps that file from the command (a built-in secret: it "
		     "holds tokens): unless npm inside gets the registry another way (--env npm_config_registry=URL, "
		     "or the project's .npmrc), it goes to its default registry",
		     home_npmrc);
	rc = 0;
out:
	npm_layers_free(l);
	return rc;
}

/* ---- pypi: pip and uv ---- */

enum { PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP__KEYS };
static const char *const pip_keys[PIP__KEYS] = {"index-url", "extra-index-url"};

/* What pip reads for `pip install`: per key, [global] and [install] of the
 * files (a later file wins), and the PIP_* variable over both. */
struct pip_conf {
	struct setting global[PIP__KEYS], install[PIP__KEYS], env[PIP__KEYS];
};

static void pip_conf_free(struct pip_conf *c)
{
	size_t i;

	for (i = 0; i < PIP__KEYS; i++) {
		free(c->global[i].value);
		free(c->global[i].where);
		free(c->install[i].value);
		free(c->install[i].where);
		free(c->env[i].value);
		free(c->env[i].where);
	}
}

/* pip's _normalize_name: lowercase, '_' read as '-'. */
static int pip_key(const char *name, size_t len)
{
	char buf[64];
	size_t i;
	int k;

	if (len >= sizeof(buf))
		return -1;
	for (i = 0; i < len; i++)
		buf[i] = name[i] == '_' ? '-' : (char)tolower((unsigned char)name[i]);
	buf[len] = '\0';
	for (k = 0; k < PIP__KEYS; k++)
		if (strcmp(buf, pip_keys[k]) == 0)
			return k;
	return -1;
}

static int pip_fail(struct expand *x, const char *file, int line, const char *what)
{
	moat_error_set(x->err, MOAT_E_CONFIG, 0, "%s:%d: %s", file, line, what);
	return moat_error_hint(x->err,
			       "pip refuses this file too (configparser); correct it, or name the index hosts "
			       "with --allow-net instead of %s",
			       x->set);
}

/* One pip.conf as Python's configparser (RawConfigParser, as pip makes it)
 * reads it: "[section]"; "key = value" or "key: value"; a line indented
 * deeper than its key continues the value; whole-line comments start with
 * '#' or ';'.  A key before any section, a line that is none of these, or a
 * section or key given twice in the file: configparser refuses the file,
 * and pip with it, so moat refuses it too. */
static int pip_read(struct expand *x, struct pip_conf *c, const char *file, const char *text)
{
	const char *line = text;
	struct strmap seen = {0}; /* section.key given (configparser's strict mode refuses a repeat) */
	size_t i, indent_level = 0;
	cleanup_free char *section = NULL;
	struct setting *cur = NULL; /* the value being continued, if kept */
	bool in_value = false;
	int lineno = 0, rc = -1;

	while (*line) {
		size_t len = strcspn(line, "\n"), s = 0, e, indent;
		const char *next = line + len + (line[len] ? 1 : 0);

		lineno++;
		while (s < len && isspace((unsigned char)line[s]))
			s++;
		e = len;
		while (e > s && isspace((unsigned char)line[e - 1]))
			e--;
		indent = s;
		if (s == e || line[s] == '#' || line[s] == ';') {
			line = next;
			continue;
		}
		if (in_value && indent > indent_level) {
			if (cur) {
				char *v = moat_xasprintf("%s\n%.*s", cur->value, (int)(e - s), line + s);
				free(cur->value);
				cur->value = v;
			}
			line = next;
			continue;
		}
		indent_level = indent;
		in_value = false;
		cur = NULL;
		/* configparser's "\[(?P<header>.+)\]", matched at the start:
		 * up to the last ']', what follows it ignored. */
		if (line[s] == '[' && memrchr(line + s, ']', e - s) > (const void *)(line + s + 1)) {
			const char *close = memrchr(line + s, ']', e - s);
			cleanup_free char *item = NULL;

			free(section);
			section = moat_xstrndup(line + s + 1, (size_t)(close - line) - s - 1);
			item = moat_xasprintf("[%s]", section);
			if (strmap_seen(&seen, item, 0)) {
				pip_fail(x, file, lineno, "a section given twice");
				goto out;
			}
		} else if (!section) {
			pip_fail(x, file, lineno, "a key before any [section]");
			goto out;
		} else {
			size_t d = s + strcspn(line + s, "=:"), ke = d, vs = d + 1;
			cleanup_free char *item = NULL, *key = NULL;
			int k;

			if (d >= e) {
				pip_fail(x, file, lineno, "neither a [section] nor key = value");
				goto out;
			}
			while (ke > s && isspace((unsigned char)line[ke - 1]))
				ke--;
			while (vs < e && isspace((unsigned char)line[vs]))
				vs++;
			if (ke == s) {
				pip_fail(x, file, lineno, "an empty key");
				goto out;
			}
			key = moat_xstrndup(line + s, ke - s);
			for (i = 0; key[i]; i++)
				key[i] = (char)tolower((unsigned char)key[i]);
			item = moat_xasprintf("%s.%s", section, key);
			if (strmap_seen(&seen, item, 0)) {
				pip_fail(x, file, lineno, "a key given twice in its section");
				goto out;
			}
			in_value = true;
			k = pip_key(key, strlen(key));
			if (k >= 0 && (strcmp(section, "global") == 0 || strcmp(section, "install") == 0)) {
				cleanup_free char *where = moat_xasprintf("%s:%d", file, lineno);
				cleanup_free char *val = moat_xstrndup(line + vs, e > vs ? e - vs : 0);

				cur = strcmp(section, "global") == 0 ? &c->global[k] : &c->install[k];
				setting_set(cur, val, where);
			}
		}
		line = next;
	}
	rc = 0;
out:
	strmap_free(&seen);
	return rc;
}

static int pip_load(struct expand *x, struct pip_conf *c, const char *file)
{
	cleanup_free char *text = NULL;

	if (read_config(x, file, &text) < 0)
		return -1;
	return text ? pip_read(x, c, file, text) : 0;
}

/* pip's files, lowest first (pip's configuration.py): the global ones
 * ($XDG_CONFIG_DIRS/pip/pip.conf, then /etc/pip.conf), the user ones
 * (~/.pip/pip.conf, then $XDG_CONFIG_HOME/pip/pip.conf; not when
 * PIP_CONFIG_FILE names a file that exists), the virtualenv's
 * ($VIRTUAL_ENV/pip.conf), then PIP_CONFIG_FILE.  PIP_CONFIG_FILE=/dev/null:
 * no file at all. */
static int pip_files(struct expand *x, struct pip_conf *c)
{
	const char *cf_env = config_getenv(x->h->env, "PIP_CONFIG_FILE");
	cleanup_free char *cf = cf_env && *cf_env ? path_resolve_lexical(cf_env, x->h->cwd, NULL) : NULL;
	const char *dirs = config_getenv(x->h->env, "XDG_CONFIG_DIRS");
	const char *xdg_home = config_getenv(x->h->env, "XDG_CONFIG_HOME");
	const char *venv = config_getenv(x->h->env, "VIRTUAL_ENV");
	const char *s, *e;
	struct stat st;

	if (cf && strcmp(cf, "/dev/null") == 0)
		return 0; /* pip's os.devnull: no file at all */
	if (!dirs || !*dirs)
		dirs = "/etc/xdg";
	for (s = dirs; *s; s = *e ? e + 1 : e) {
		cleanup_free char *f = NULL;

		e = s + strcspn(s, ":");
		if (*s != '/')
			continue;
		f = moat_xasprintf("%.*s/pip/pip.conf", (int)(e - s), s);
		if (pip_load(x, c, f) < 0)
			return -1;
	}
	if (pip_load(x, c, "/etc/pip.conf") < 0)
		return -1;
	if (x->home && !(cf && stat(cf, &st) == 0)) {
		cleanup_free char *legacy = moat_xasprintf("%s/.pip/pip.conf", x->home);
		cleanup_free char *f = xdg_home && xdg_home[0] == '/'
					   ? moat_xasprintf("%s/pip/pip.conf", xdg_home)
					   : moat_xasprintf("%s/.config/pip/pip.conf", x->home);

		if (pip_load(x, c, legacy) < 0 || pip_load(x, c, f) < 0)
			return -1;
	}
	if (venv && venv[0] == '/') {
		cleanup_free char *f = moat_xasprintf("%s/pip.conf", venv);

		if (pip_load(x, c, f) < 0)
			return -1;
	}
	if (cf && pip_load(x, c, cf) < 0)
		return -1;
	return 0;
}

/* PIP_INDEX_URL and PIP_EXTRA_INDEX_URL (any PIP_ name pip normalises to
 * them). */
static void pip_env(struct expand *x, struct pip_conf *c)
{
	char *const *e;

	for (e = x->h->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		cleanup_free char *name = NULL;
		int k;

		if (!eq || strncmp(*e, "PIP_", 4) != 0 || eq[1] == '\0')
			continue;
		if ((k = pip_key(*e + 4, (size_t)(eq - *e) - 4)) < 0)
			continue;
		name = moat_xstrndup(*e, (size_t)(eq - *e));
		setting_set(&c->env[k], eq + 1, name);
	}
}

/* Whitespace-separated URLs; one that is not a URL is a local directory
 * (pip and uv take one), which needs no network. */
static int add_index_list(struct expand *x, const char *list, const char *where, const char *key, bool named,
			  bool *pypi, bool *testpypi)
{
	cleanup_free char *copy = moat_xstrdup(list);
	char *save = NULL, *tok, host[256];

	for (tok = strtok_r(copy, " \t\n\r", &save); tok; tok = strtok_r(NULL, " \t\n\r", &save)) {
		const char *url = tok, *eq = named ? strchr(tok, '=') : NULL;

		/* uv's NAME=URL */
		if (eq && eq < tok + strcspn(tok, ":/"))
			url = eq + 1;
		if (!strstr(url, "://"))
			continue;
		if (add_url(x, url, where, key, host, sizeof(host)) < 0)
			return -1;
		*pypi |= strcmp(host, "pypi.org") == 0;
		*testpypi |= strcmp(host, "test.pypi.org") == 0;
	}
	return 0;
}

static const struct setting *pip_pick(const struct pip_conf *c, int k)
{
	return c->env[k].value	     ? &c->env[k]
	       : c->install[k].value ? &c->install[k]
	       : c->global[k].value  ? &c->global[k]
				     : NULL;
}

/* pip's part of @pypi: the index (pypi.org unless replaced) and the extra
 * ones, read into *c (the caller frees it). */
static int expand_pip(struct expand *x, struct pip_conf *c, bool *pypi, bool *testpypi)
{
	const struct setting *v;
	int k;

	if (pip_files(x, c) < 0)
		return -1;
	pip_env(x, c);
	for (k = 0; k < PIP__KEYS; k++) {
		if (!(v = pip_pick(c, k)))
			continue;
		if (add_index_list(x, v->value, v->where, pip_keys[k], false, pypi, testpypi) < 0)
			return -1;
	}
	if (!pip_pick(c, PIP_INDEX_URL)) {
		add_fixed(x, "https://pypi.org/simple", "pip's default index");
		*pypi = true;
	}
	return 0;
}

/* pypi.org serves its files from files.pythonhosted.org; another index's
 * files are wherever it says (often its own host). */
static void add_files_hosts(struct expand *x, bool pypi, bool testpypi)
{
	if (pypi)
		add_fixed(x, "https://files.pythonhosted.org/", "pypi.org's files");
	if (testpypi)
		add_fixed(x, "https://test-files.pythonhosted.org/", "test.pypi.org's files");
}

static int expand_pypi(struct expand *x)
{
	struct pip_conf c;
	const char *uv_names[] = {"UV_DEFAULT_INDEX", "UV_INDEX_URL"};
	bool pypi = false, testpypi = false, uv_default = false;
	int rc = -1;
	size_t i;

	memset(&c, 0, sizeof(c));
	if (expand_pip(x, &c, &pypi, &testpypi) < 0)
		goto out;
	/* uv: its default index (UV_DEFAULT_INDEX, or the older
	 * UV_INDEX_URL; pypi.org unless one is set), and the others. */
	for (i = 0; i < 2 && !uv_default; i++) {
		const char *val = config_getenv(x->h->env, uv_names[i]);

		if (val && *val) {
			uv_default = true;
			if (add_index_list(x, val, uv_names[i], NULL, true, &pypi, &testpypi) < 0)
				goto out;
		}
	}
	if (!uv_default) {
		add_fixed(x, "https://pypi.org/simple", "uv's default index");
		pypi = true;
	}
	for (i = 0; i < 2; i++) {
		const char *name = i == 0 ? "UV_INDEX" : "UV_EXTRA_INDEX_URL", *val = config_getenv(x->h->env, name);

		/* UV_INDEX's entries may be NAME=URL. */
		if (val && add_index_list(x, val, name, NULL, i == 0, &pypi, &testpypi) < 0)
			goto out;
	}
	add_files_hosts(x, pypi, testpypi);
	rc = 0;
out:
	pip_conf_free(&c);
	return rc;
}

/* ---- crates ---- */

/* cargo's source replacement ([source.crates-io] replace-with in
 * $CARGO_HOME/config.toml) is not followed: the replacement's download
 * host is named only in its index's config.json, on the network, so moat
 * could allow its index and not its downloads.  A note says so instead. */
static int crates_note(struct expand *x)
{
	const char *cargo_home = config_getenv(x->h->env, "CARGO_HOME");
	static const char *const names[] = {"config", "config.toml"};
	size_t i;

	for (i = 0; i < 2; i++) {
		cleanup_free char *file = NULL, *text = NULL;
		struct toml_value *root = NULL, *v;
		struct toml_error te;

		if (cargo_home && cargo_home[0] == '/')
			file = moat_xasprintf("%s/%s", cargo_home, names[i]);
		else if (x->home)
			file = moat_xasprintf("%s/.cargo/%s", x->home, names[i]);
		else
			return 0;
		if (read_config(x, file, &text) < 0)
			return -1;
		if (!text || toml_parse(text, strlen(text), &root, &te) < 0)
			continue;
		v = toml_table_get(toml_table_get(toml_table_get(root, "source"), "crates-io"), "replace-with");
		if (v && v->type == TOML_STRING)
			note(x,
			     "%s:%d replaces crates.io with the source \"%s\", which %s does not follow (its download "
			     "host is named only on the network); allow that registry's hosts with --allow-net",
			     file, v->pos.line, v->u.str.ptr, x->set);
		toml_free(root);
	}
	return 0;
}

static int expand_crates(struct expand *x)
{
	add_fixed(x, "https://index.crates.io/", "crates.io's sparse index");
	add_fixed(x, "https://static.crates.io/", "crates.io's downloads");
	add_fixed(x, "https://crates.io/", "crates.io's API");
	return crates_note(x);
}

/* ---- go ---- */

/* The go env file's KEY=VALUE lines, as cmd/go reads them: a line whose
 * first character is not A-Z, or without '=', is skipped; the last one
 * wins; the value is taken as it is. */
static int go_file_get(struct expand *x, const char *file, const char *key, struct setting *out)
{
	cleanup_free char *text = NULL;
	const char *line;
	size_t klen = strlen(key);
	int lineno = 0;

	if (read_config(x, file, &text) < 0)
		return -1;
	for (line = text; line && *line;) {
		size_t len = strcspn(line, "\n");

		lineno++;
		if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == '=') {
			cleanup_free char *val = moat_xstrndup(line + klen + 1, len - klen - 1);
			cleanup_free char *where = moat_xasprintf("%s:%d", file, lineno);

			setting_set(out, val, where);
		}
		line += len + (line[len] ? 1 : 0);
	}
	return 0;
}

struct go_env {
	char *user;   /* $GOENV, or $XDG_CONFIG_HOME/go/env, ~/.config/go/env; NULL for GOENV=off */
	char *goroot; /* $GOROOT/go.env, or NULL */
};

/* A Go setting as cmd/go's cfg.Getenv finds it: the variable when it is
 * set and not empty, then the go env file, then $GOROOT/go.env.  *out's
 * value stays NULL when none has it. */
static int go_get(struct expand *x, const struct go_env *g, const char *key, struct setting *out)
{
	const char *v = config_getenv(x->h->env, key);

	if (v && *v) {
		setting_set(out, v, key);
		return 0;
	}
	if (g->user && go_file_get(x, g->user, key, out) < 0)
		return -1;
	if ((!out->value || !*out->value) && g->goroot && go_file_get(x, g->goroot, key, out) < 0)
		return -1;
	/* cmd/go takes an empty value for unset: the default. */
	if (out->value && !*out->value) {
		free(out->value);
		free(out->where);
		out->value = out->where = NULL;
	}
	return 0;
}

static int go_env_files(struct expand *x, struct go_env *g)
{
	const char *goenv = config_getenv(x->h->env, "GOENV"), *xdg = config_getenv(x->h->env, "XDG_CONFIG_HOME");
	struct setting root = {0};
	cleanup_free char *go = NULL, *dir = NULL;

	if (goenv && *goenv)
		g->user = strcmp(goenv, "off") == 0 ? NULL : moat_xstrdup(goenv);
	else if (xdg && *xdg)
		g->user = xdg[0] == '/' ? moat_xasprintf("%s/go/env", xdg) : NULL; /* Go refuses a relative one */
	else if (x->home)
		g->user = moat_xasprintf("%s/.config/go/env", x->home);
	/* GOROOT: the variable, the go env file's, else the go on PATH
	 * (/usr/lib/go/bin/go: /usr/lib/go). */
	if (go_get(x, &(struct go_env){.user = g->user}, "GOROOT", &root) < 0)
		return -1;
	if (root.value && root.value[0] == '/')
		g->goroot = moat_xasprintf("%s/go.env", root.value);
	else if ((go = which_real(x, "go")) && (dir = up_two(go)))
		g->goroot = moat_xasprintf("%s/go.env", dir);
	free(root.value);
	free(root.where);
	return 0;
}

/* GOPROXY as cmd/go's proxyList reads it: entries separated by ',' or '|';
 * "off" and "direct" end the list; an entry with a '.', ':' or '/' but no
 * ":/" gets "https://" before it. */
static int go_proxies(struct expand *x, const struct setting *v, bool *direct, bool *off, bool *any)
{
	cleanup_free char *copy = moat_xstrdup(v->value);
	char *s = copy;

	while (s) {
		char *end = s + strcspn(s, ",|"), *t = s, *e;
		cleanup_free char *url = NULL;

		s = *end ? end + 1 : NULL;
		*end = '\0';
		while (isspace((unsigned char)*t))
			t++;
		for (e = t + strlen(t); e > t && isspace((unsigned char)e[-1]); e--)
			;
		*e = '\0';
		if (!*t)
			continue;
		if (strcmp(t, "off") == 0 || strcmp(t, "direct") == 0) {
			*(t[0] == 'o' ? off : direct) = true;
			break;
		}
		url = strpbrk(t, ".:/") && !strstr(t, ":/") && t[0] != '/' ? moat_xasprintf("https://%s", t)
									   : moat_xstrdup(t);
		if (add_url(x, url, v->where, "GOPROXY", NULL, 0) < 0)
			return -1;
		*any = true;
	}
	return 0;
}

/* GOSUMDB: "off", or "NAME[+KEY] [URL]": the database at URL, or at
 * https://NAME (sum.golang.google.cn is sum.golang.org's mirror). */
static int go_sumdb(struct expand *x, const struct setting *v)
{
	cleanup_free char *copy = moat_xstrdup(v->value), *url = NULL;
	char *save = NULL, *name = strtok_r(copy, " \t", &save), *alt = strtok_r(NULL, " \t", &save);

	if (!name || strcmp(name, "off") == 0)
		return 0;
	if (strtok_r(NULL, " \t", &save)) {
		bool var = strcmp(v->where, "GOSUMDB") == 0;

		moat_error_set(x->err, MOAT_E_CONFIG, 0, "%s%sGOSUMDB: more than two fields (NAME[+KEY] [URL])",
			       var ? "" : v->where, var ? "" : ": ");
		return moat_error_hint(x->err, "go refuses it too; correct it there");
	}
	name[strcspn(name, "+")] = '\0';
	if (alt)
		url = moat_xstrdup(alt);
	else
		url = moat_xasprintf("https://%s", name);
	return add_url(x, url, v->where, "GOSUMDB", NULL, 0);
}

static int expand_go(struct expand *x)
{
	struct go_env g = {0};
	struct setting proxy = {0}, sumdb = {0}, private = {0}, noproxy = {0};
	bool direct = false, off = false, any = false;
	int rc = -1;

	if (go_env_files(x, &g) < 0 || go_get(x, &g, "GOPROXY", &proxy) < 0 || go_get(x, &g, "GOSUMDB", &sumdb) < 0 ||
	    go_get(x, &g, "GOPRIVATE", &private) < 0 || go_get(x, &g, "GONOPROXY", &noproxy) < 0)
		goto out;
	if (proxy.value) {
		if (go_proxies(x, &proxy, &direct, &off, &any) < 0)
			goto out;
	} else {
		add_fixed(x, "https://proxy.golang.org/", "default GOPROXY");
		any = direct = true;
	}
	if (sumdb.value) {
		if (go_sumdb(x, &sumdb) < 0)
			goto out;
	} else {
		add_fixed(x, "https://sum.golang.org/", "default GOSUMDB");
	}
	if (direct)
		note(x,
		     "GOPROXY%s%s%s ends in \"direct\" (a module the proxy does not have is fetched from its "
		     "version control host, which can be any host): an allowlist cannot name that, so it is left "
		     "out",
		     proxy.where ? " (" : "", proxy.where ? proxy.where : "", proxy.where ? ")" : "");
	if (off && !any)
		note(x, "GOPROXY (%s) is off: go downloads no module", proxy.where);
	if ((private.value && *private.value) || (noproxy.value && *noproxy.value))
		note(x, "the modules %s names are fetched from their own hosts, which %s does not include",
		     noproxy.value && *noproxy.value ? "GONOPROXY" : "GOPRIVATE", x->set);
	rc = 0;
out:
	free(g.user);
	free(g.goroot);
	free(proxy.value);
	free(proxy.where);
	free(sumdb.value);
	free(sumdb.where);
	free(private.value);
	free(private.where);
	free(noproxy.value);
	free(noproxy.where);
	return rc;
}

/* ---- the sets ---- */

static int (*const expanders[SET__COUNT])(struct expand *) = {expand_npm, expand_pypi, expand_crates, expand_go};

int netset_npm_urls(const struct netset_host *h, struct netset_urls *out, struct moat_error *err)
{
	const char *home = config_getenv(h->env, "HOME");
	struct moat_policy scratch;
	struct netset_urls u = {0};
	struct expand x = {.h = h,
			   .home = home && home[0] == '/' ? home : NULL,
			   .set = set_names[SET_NPM],
			   .origin = {.source = "npm"},
			   .p = &scratch,
			   .err = err,
			   .urls = &u};
	int rc;

	policy_init(&scratch);
	rc = expand_npm(&x);
	expand_done(&x);
	policy_free(&scratch);
	if (rc < 0) {
		netset_urls_free(&u);
		return -1;
	}
	*out = u;
	return 0;
}

/* A whitespace-separated list of index URLs, each without its user part. */
static char *url_list_without_users(const char *list)
{
	cleanup_free char *copy = moat_xstrdup(list);
	char *save = NULL, *tok, *out = moat_xstrdup("");
	size_t len = 0, cap = 1;

	/* Appended in place: a new string for each URL copied the whole list
	 * again, tens of thousands of times for a project's pip.conf. */
	for (tok = strtok_r(copy, " \t\n\r", &save); tok; tok = strtok_r(NULL, " \t\n\r", &save)) {
		cleanup_free char *bare = url_without_user(tok);
		size_t n = strlen(bare);

		out = moat_xgrow_uninit(out, &cap, len + n + 2, 1);
		if (len)
			out[len++] = ' ';
		memcpy(out + len, bare, n + 1);
		len += n;
	}
	return out;
}

int netset_pip_expand(const struct netset_host *h, struct moat_origin origin, struct moat_policy *p,
		      struct netset_notes *notes, struct netset_urls *out, struct moat_error *err)
{
	const char *home = config_getenv(h->env, "HOME");
	struct expand x = {.h = h,
			   .home = home && home[0] == '/' ? home : NULL,
			   .set = set_names[SET_PYPI],
			   .origin = origin,
			   .p = p,
			   .notes = notes,
			   .err = err};
	struct netset_urls u = {0};
	struct pip_conf c;
	bool pypi = false, testpypi = false;
	int rc = -1;

	memset(&c, 0, sizeof(c));
	if (expand_pip(&x, &c, &pypi, &testpypi) < 0)
		goto out;
	add_files_hosts(&x, pypi, testpypi);
	for (int k = 0; k < PIP__KEYS; k++) {
		const struct setting *v = pip_pick(&c, k);

		if (v && strstr(v->value, "://")) {
			cleanup_free char *list = url_list_without_users(v->value);
			netset_urls_add(&u, pip_keys[k], list);
		}
	}
	*out = u;
	rc = 0;
out:
	expand_done(&x);
	pip_conf_free(&c);
	return rc;
}

int netset_expand(unsigned mask, const struct netset_host *h, struct moat_origin origin, struct moat_policy *p,
		  struct netset_notes *notes, struct moat_error *err)
{
	const char *home = config_getenv(h->env, "HOME");
	size_t i;

	for (i = 0; i < SET__COUNT; i++) {
		struct expand x = {.h = h,
				   .home = home && home[0] == '/' ? home : NULL,
				   .set = set_names[i],
				   .origin = origin,
				   .p = p,
				   .notes = notes,
				   .err = err};

		int rc = (mask & (1u << i)) ? expanders[i](&x) : 0;

		expand_done(&x);
		if (rc < 0)
			return -1;
	}
	return 0;
}
