/* Source: what the go command needs to build in a sandbox (docs/policy.md,
 * "Go").  Three things the sandbox itself would break, each only when the
 * policy names the variable go documents for it:
 *
 *   - the module cache ~/go/pkg/mod, read-only, without network (with
 *     network it is moat's package cache): a build with dependencies reads
 *     their source there;
 *   - go builds nothing (`go build`, `go run`, `go test`) without a
 *     writable build cache, and the user's own (~/.cache/go-build) is
 *     read-only or hidden: without network (where the package caches of
 *     sources/pkgcache.h give it one of moat's) GOCACHE names a directory
 *     in the sandbox's private /tmp, discarded with it -- nothing is
 *     written on the host, and nothing a sandboxed build left in a cache is
 *     what a later build outside takes (p->go_cache_in_tmp: the plan moves
 *     it to the per-run tmp of a run without a mount namespace, and drops
 *     it where nothing keeps /tmp private);
 *   - a write grant without a .git gets an empty, read-only .git for the
 *     run (docs/filesystem.md, "Protected entries"), which go takes for a
 *     repository: `go build` of a main package then fails with "error
 *     obtaining VCS status".  When the current directory is in such a grant
 *     and no .git lies between them, GOFLAGS=-buildvcs=false: there is no
 *     repository to stamp. */
#ifndef MOAT_SOURCES_GOTOOL_H
#define MOAT_SOURCES_GOTOOL_H

#include "policy/policy.h"

/* When the command is go (by its name, or its name through links), or
 * with `project` when the current directory is a Go module whose go the
 * command runs by its name (sources/toolchain.h), in a sandbox that is on:
 * the module cache, GOCACHE and GOFLAGS as above.  `home` and `env` (moat's
 * environment) say where go's own cache is, for the check that the user
 * did not grant it writable. */
void gotool_add(struct moat_policy *p, const char *home, char *const *env, bool project);

#endif
