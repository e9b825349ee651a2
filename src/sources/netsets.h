/* Destination sets in the allowlist: @npm, @pypi, @crates, @go and
 * @registries (all four), usable wherever a destination is (--allow-net,
 * network.allow).  A set becomes ordinary entries here, in the sources:
 * read from the host's own configuration of each tool -- the files and
 * variables the tool reads, in the tool's own precedence -- without running
 * the tool (`npm config get registry` alone takes ~300 ms per start).  What
 * each set reads is in docs/policy.md, "Destination sets".
 *
 * Only the keys that name an index are kept: auth lines (_authToken,
 * _auth, _password, ...) are skipped unread, and a URL's user:password@ is
 * dropped, so no credential reaches the policy, the report or a message. */
#ifndef MOAT_SOURCES_NETSETS_H
#define MOAT_SOURCES_NETSETS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/netdest.h"
#include "policy/policy.h"
#include "util/err.h"

/* What a set reads besides its files: moat's environment (HOME, PATH, the
 * tools' own variables) and the command's working directory (npm's
 * project). */
struct netset_host {
	char *const *env;
	const char *cwd;
};

/* Lines for stderr: what a set had to leave out, and why. */
struct netset_notes {
	char **v;
	size_t n, cap;
};

void netset_notes_free(struct netset_notes *n);
/* Add a line (a copy; one already there is not added twice). */
void netset_notes_add(struct netset_notes *n, const char *line);

/* Does the text name a set ("@...") rather than a destination? */
bool netset_named(const char *text);

/* The sets "@npm", "@pypi", "@crates", "@go" or "@registries" (all four) as
 * a mask; any other name is refused (-1, *e with a "did you mean" and the
 * list of sets). */
int netset_parse(const char *text, unsigned *mask, struct net_parse_error *e);

/* Add the entries of the sets in `mask` to p's allowlist, each with
 * `origin` (where the set was named) and `from` ("@npm (FILE:LINE)": what
 * named the entry).  An entry the same set already added is not added
 * again.  `notes` (or NULL) gets what was left out.  -1 with *err naming the
 * file and line (or the variable) of a value that is not a usable URL. */
int netset_expand(unsigned mask, const struct netset_host *h, struct moat_origin origin, struct moat_policy *p,
		  struct netset_notes *notes, struct moat_error *err);

/* The registries npm uses on this host, read as @npm reads them: keys[i]
 * is "registry" (the default one, always there) or "@scope:registry", and
 * urls[i] its URL without a user part.  For a tool that cannot read the
 * files that named them (the fetch phase of a package runner: ~/.npmrc is
 * a built-in secret, the project is not in its view), told instead through
 * its environment. */
struct netset_urls {
	char **keys, **urls;
	size_t n, cap;
};

int netset_npm_urls(const struct netset_host *h, struct netset_urls *out, struct moat_error *err);

/* pip's part of @pypi (its index, the extra ones, their files' hosts; not
 * uv's) added to p's allowlist as netset_expand adds a set, and the URLs
 * pip reads on this host into *out: keys[i] "index-url" or
 * "extra-index-url" (none: pip's default, pypi.org), urls[i] the
 * whitespace-separated list, each URL without its user part.  For pip in
 * a package runner's fetch phase, told them through its environment. */
int netset_pip_expand(const struct netset_host *h, struct moat_origin origin, struct moat_policy *p,
		      struct netset_notes *notes, struct netset_urls *out, struct moat_error *err);
void netset_urls_free(struct netset_urls *u);
/* Add `key` (unless it is there) with `url` (or a list of them) without
 * its user part. */
void netset_urls_add(struct netset_urls *u, const char *key, const char *url);

/* A URL, scheme://[user[:password]@]host[:port][/path], as an allowlist
 * entry: the host (a name, an IPv4 address, or an IPv6 address in
 * brackets) on the URL's port (http 80, https 443, or the one given); the
 * user part is dropped.  1 and *out (free with net_dest_free); 0 for a URL
 * that needs no network (file:); -1 and *e otherwise.  The messages never
 * repeat the URL, which may hold a password. */
int netset_url_dest(const char *url, struct moat_net_dest *out, struct net_parse_error *e);

#endif
