/* Source: caches of moat's own for package managers (docs/policy.md,
 * "Package caches").  A command that can reach a network installs
 * packages, and a package manager writes its cache: the user's own
 * (~/.npm, ~/.cache/pip, ...) is read-only or hidden in the sandbox, so
 * `npm install` failed with EROFS or npm's "root-owned files", and making it
 * writable would let a sandboxed install poison what the user later runs
 * outside.  So each tool gets a directory of moat's, through the variable
 * the tool documents for its cache, granted writable:
 * $XDG_CACHE_HOME/moat/pkg/TOOL (else ~/.cache/moat/pkg/TOOL), or, when
 * there is no cache directory of the user's to make it in (uid 65534's
 * HOME=/nonexistent), /tmp/moat-pkg-UID/TOOL.  Every directory from moat's
 * down is made 0700 and opened without following a link
 * (util/ownfile.h's own_dir_at): one planted there is refused. */
#ifndef MOAT_SOURCES_PKGCACHE_H
#define MOAT_SOURCES_PKGCACHE_H

#include "policy/policy.h"
#include "sources/netsets.h"
#include "util/err.h"

/* When the policy lets the command reach a network (net other than none)
 * in a sandbox that is on, under any profile but strict (which writes
 * nothing the user did not name): each tool's cache directory made, granted
 * writable and named in its variable, listed in p->pkg_caches -- unless
 * the policy already names the variable (--env, --env-pass: the user's
 * choice wins) or the user granted the tool's own cache writable
 * (--write ~/.npm, --write ~).  A note in `notes` when the fallback under
 * /tmp is used, and when a directory cannot be made (read-only, full: the
 * run goes on without caches of moat's).  -1 when a directory of moat's is
 * not its own (a link, a file, another owner, a mode open to others). */
int pkgcache_add(struct moat_policy *p, const char *home, char *const *env, struct netset_notes *notes,
		 struct moat_error *err);

#endif
