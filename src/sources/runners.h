/* Package runners (`npx`, `npm exec`, `pnpm dlx`, `bunx`, `uvx`, `pipx
 * run`): commands that fetch a package from a registry and run it.  Read
 * from the command here, in the sources, like the other things moat learns
 * from the host before the plan (docs/policy.md, "Package runners").
 *
 * For npm's runners, `pnpm dlx`, `bunx` and `pipx run` moat splits the run
 * in two phases: the fetch alone (only the registry, only this package's
 * cache writable, nothing of the project or HOME), then the package's own command with the user's policy
 * and the cache read-only.  This module finds the runner and its packages,
 * decides whether a fetch is needed, builds the fetch phase's policy,
 * finds what the fetch installed and turns the user's policy into the
 * server phase's.  Running the phases is the api's (api/runner.c). */
#ifndef MOAT_SOURCES_RUNNERS_H
#define MOAT_SOURCES_RUNNERS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "sources/netsets.h"
#include "util/err.h"

/* The fetch phase's --timeout, unless the user's is shorter: an install
 * that takes longer is stopped (exit 125). */
#define RUNNER_FETCH_TIMEOUT_S 300

enum runner_state {
	RUNNER_AS_WRITTEN, /* one phase: the command runs as written (`why` says why) */
	RUNNER_FETCH,	   /* the package is not in moat's cache: fetch it first */
	RUNNER_CACHED,	   /* it is: the server phase alone, from the cache */
};

enum runner_kind {
	RUNNER_KIND_NPM,   /* npx, npm exec: npm's cache (_npx/HASH/node_modules) */
	RUNNER_KIND_PNPM,  /* pnpm dlx: pnpm's dlx cache (cache/dlx/HASH/pkg/node_modules), its store beside */
	RUNNER_KIND_BUN,   /* bunx, bun x: bun's cache (.bunx-UID/SPEC/node_modules) */
	RUNNER_KIND_PIPX,  /* pipx run: a virtualenv (venv/) installed by pip */
	RUNNER_KIND_OTHER, /* uvx: recognised, always as written (no uv to test a fetch phase with) */
};

struct runner_call {
	const char *name; /* "npx", "npm exec", "pnpm dlx", ...; NULL: not a runner */
	enum runner_kind kind;
	const char *tool; /* what fetches, for messages: "npm", "pnpm", "bun", "pip" */
	size_t opts_at;	  /* argv index of the runner's first option (after "dlx", "x", "run") */
	char **fetch_args; /* the runner's options the fetch is given too (pnpm's --allow-build, bun's --trust) */
	size_t n_fetch_args;
	enum runner_state state;
	char *why;	 /* RUNNER_AS_WRITTEN: why one phase (for the report and stderr) */
	bool note;	 /* say `why` on stderr: a runner moat would have split but does not */
	char **packages; /* the package specs as written (-p, or the first word) */
	size_t n_packages;
	char *cmd;	/* the command named after -p (pipx: the app, with --spec), or NULL: the first package's own */
	size_t args_at; /* argv index of the command's first argument */
	char *registry; /* --registry URL given to the runner (pipx: --index-url), or NULL */
	/* The registries the fetch is told, read once, before the cache is
	 * named (runner_cache_state): the cache's key and the fetch's settings
	 * are both made from these, so that what one registry served is never
	 * taken as another's. */
	char *fetch_registry;	   /* the default one (pipx: the index) */
	char *fetch_registry_from; /* what named it, when not the host's configuration (the runner's --registry,
				    * --env VAR, VAR of moat's environment): allowed on its own; or NULL */
	struct netset_urls fetch_urls; /* the host's configuration of the tool (@npm's registries: "registry",
					* "@scope:registry"; pip's "index-url", "extra-index-url") */
	char *cache;	/* moat's cache of this package list (npm_config_cache of both phases) */
	char *tree;	/* once installed: the node_modules directory (pipx: the venv) the command runs from */
	char *local_tree; /* RUNNER_AS_WRITTEN for a package or command of the project's node_modules
			   * (`npx tsc`): that node_modules, which the run must see to find it */
	char *bin;	/* once installed: the command's path there */
	char *version;	/* once installed: the first package's version */
};

void runner_call_free(struct runner_call *rc);

/* Is the policy's command a package runner, and what does it run?  Fills
 * *rc (rc->name NULL: not a runner).  `env` is moat's environment (the
 * cache's place: XDG_CACHE_HOME, HOME; the tool's registry settings).
 * Looks at the file system (the project's and the global node_modules, the
 * tool's configuration files, moat's cache) but changes nothing.  -1 for a
 * cache directory moat cannot name, or a registry setting that is not a
 * URL (the cache's key needs the registry). */
int runner_detect(const struct moat_policy *p, char *const *env, struct runner_call *rc, struct moat_error *err);

/* Look for the packages in moat's cache: true, with rc->tree, rc->bin and
 * rc->version set, when an install of exactly this package list is there
 * and its first package has the command to run. */
bool runner_find_install(struct runner_call *rc);

/* Does the install found satisfy the specs without asking the registry (a
 * name alone, or the exact version installed)?  A tag or a range needs
 * the registry, as npm would ask it. */
bool runner_install_current(const struct runner_call *rc);

/* The fetch phase's policy, into *out (policy_init'd by the caller).  For
 * pnpm dlx and bunx: the runner itself, `pnpm dlx --package=SPEC... true`
 * or `bunx -p SPEC true`, in npm's sandbox, told the registry and where to
 * keep what it fetches (sources/runner_dlx.c).  For
 * pipx run: `sh -c 'PYTHON -m venv venv && venv/bin/python -m pip install
 * --no-input -- SPEC'` in the same sandbox, whose network is pip's index
 * (@pypi's pip part), pip told it through PIP_INDEX_URL.  For npm:
 * `npm exec --yes --package SPEC... -- true` in a strict sandbox whose only
 * write grant is rc->cache (its cwd too), whose network is the registries
 * the host's npm configuration names (@npm) and the one given to the
 * runner or with --env npm_config_registry, with the server's pins for
 * them, and whose npm is told the registry, short retries and timeouts.
 * The user's own npm settings (--env npm_config_*) pass to it too. */
int runner_fetch_policy(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
			struct moat_policy *out, struct netset_notes *notes, struct moat_error *err);

/* Turn the user's policy into the server phase's: the command becomes the
 * installed package's own (rc->bin and the arguments that followed the
 * package), its node_modules tree readable, its .bin first on PATH, npm
 * offline.  rc must have been found installed. */
void runner_server_policy(struct moat_policy *p, const struct runner_call *rc, char *const *env);

/* A runner, a package manager or pip under a closed network (none,
 * loopback): their retries would only delay a failure by a minute or
 * more, so they are turned off (npm_config_fetch_retries=0, PIP_RETRIES=0,
 * UV_HTTP_RETRIES=0), unless the policy sets them.  Adds nothing for other
 * commands. */
void runner_fail_fast_env(struct moat_policy *p);

/* The registries moat's cache of the package list is named for, so where
 * its install came from (fetched now or before): the default one ("registry";
 * pipx "index-url") then each other the fetch is told ("@scope:registry",
 * "extra-index-url"), each URL without a user part, into *out (free with
 * netset_urls_free).  Nothing for a command run as written. */
void runner_cache_registries(const struct runner_call *rc, struct netset_urls *out);

/* The registry the fetch phase's policy names (npm_config_registry,
 * PIP_INDEX_URL), or the tool's default, for messages. */
const char *runner_registry_shown(const struct runner_call *rc, const struct moat_policy *fetch);

/* What a failed fetch from `registry` printed, read for its cause: 127
 * with "the registry has no package ..." (npm's E404, ETARGET; pip's "No
 * matching distribution"), 125 with
 * "the registry ... could not be reached" (a refused or failed connection,
 * a name that does not resolve, a timeout) or with npm's own error code. */
int runner_fetch_failure(const struct runner_call *rc, const char *output, const char *registry, char *msg, size_t len);

/* Where moat keeps the runners' caches: $XDG_CACHE_HOME/moat, else
 * ~/.cache/moat; NULL without either. */
char *runner_cache_root(char *const *env);

/* That directory (`root`, from runner_cache_root), opened: its parent
 * (~/.cache) made, mode 0700, in an existing HOME as the user's own (a link
 * there is the user's choice), `root` itself moat's (util/ownfile.h's
 * own_dir_at: 0700, this uid's, no link).  -1 with err; err->errnum
 * ENOENT, EACCES, EROFS or EPERM when there is no directory of the user's
 * to make it in (uid 65534's HOME=/nonexistent); EACCES too when an entry
 * on the way belongs to another user than moat's and root (another user's
 * HOME given to root's moat, a link of theirs), which runner_cache_root
 * then leaves unresolved: moat makes nothing where they choose. */
int runner_cache_open(const char *root, struct moat_error *err);

#endif
