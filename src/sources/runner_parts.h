/* What the package runners' modules share (sources/runners.c, npm's and
 * the dispatch; sources/runner_dlx.c, pnpm's and bun's; sources/runner_pipx.c,
 * pipx's): not for the rest of moat,
 * whose interface is sources/runners.h. */
#ifndef MOAT_SOURCES_RUNNER_PARTS_H
#define MOAT_SOURCES_RUNNER_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "sources/netsets.h"
#include "sources/runners.h"
#include "util/err.h"

/* One phase, the command as written: `why` for the report (and stderr
 * when `note`). */
void runner_as_written(struct runner_call *rc, bool note, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The origin of what the fetch phase's policy gets from moat. */
#define RUNNER_FETCH_ORIGIN "package runner: fetch phase"

void runner_add_package(struct runner_call *rc, const char *spec);
void runner_free_strs(char **v, size_t n);

/* The cache's name for what the fetch installs: 16 hex digits of the
 * SHA-256 of the package list, the options given to the fetch, the
 * registries it is told (rc->fetch_registry, rc->fetch_urls; each URL
 * normalised) and the user's settings of the tool that pass to it and
 * name where packages come from (--env npm_config_X...registry,
 * PIP_FIND_LINKS, PIP_NO_INDEX). */
char *runner_cache_key(const struct runner_call *rc, const struct moat_policy *server);

/* How a runner's registries are read: runner_registries, pipx_registries. */
typedef int (*runner_registries_fn)(struct runner_call *rc, const struct moat_policy *server, char *const *env,
				    struct moat_error *err);

/* The registries the fetch will be told (`registries`: the caller's, so
 * that this file calls no runner's file back), then rc->cache (moat's
 * cache root/SUB/KEY); the caller sets rc->state (cached when the install
 * there satisfies the spec).  -1 with *err when there is no cache root
 * (neither XDG_CACHE_HOME nor HOME), or for a registry setting that is not
 * a URL. */
int runner_cache_state(struct runner_call *rc, const struct moat_policy *server, char *const *env, const char *sub,
		       runner_registries_fn registries, struct moat_error *err);

/* The registries the fetch phase is told, into rc->fetch_registry,
 * rc->fetch_registry_from and rc->fetch_urls: for npm's runners, pnpm dlx
 * and bunx the runner's --registry, else the first of the tool's
 * variables set with --env (any case) or, for one that is not npm's own
 * (@npm reads that one), in moat's environment, else @npm's default; with
 * @npm's scoped ones (sources/netsets.h).  pipx has its own,
 * pipx_registries.
 * Read without the network and without running the tool: a few small
 * files. */
int runner_registries(struct runner_call *rc, const struct moat_policy *server, char *const *env,
		      struct moat_error *err);

/* The install found: rc->tree, rc->bin and rc->version take the three
 * strings (set to NULL).  true. */
bool runner_found(struct runner_call *rc, char **tree, char **bin, char **version);

/* A path the fetch wrote (the install, its command), resolved: NULL unless
 * it is inside rc->cache.  A link pointing elsewhere (into HOME, say) is not
 * the install: the server phase would be granted what it points at, as the
 * command's install dir. */
char *runner_inside_cache(const struct runner_call *rc, const char *path);
bool runner_within_cache(const struct runner_call *rc, const char *path);

/* An environment variable the fetch phase's tool is told. */
void runner_fetch_env(struct moat_policy *p, const char *name, const char *value);

/* The registry at `url` into p's allowlist, from `what`; a URL that needs no
 * network (file:) adds nothing.  -1 with *err for one that is not a URL. */
int runner_allow_url(struct moat_policy *p, const char *url, const char *what, struct moat_error *err);

/* The fetch phase's sandbox around the command already in *out (argv, exe):
 * the strict profile, rc->cache its working directory and only write grant
 * (nothing in it protected), the network an allowlist (empty so far), the
 * server's mode and limits with RUNNER_FETCH_TIMEOUT_S at most. */
int runner_fetch_sandbox(const struct runner_call *rc, const struct moat_policy *server, const char *home,
			 struct moat_policy *out, struct moat_error *err);

/* Once the fetch's allowlist is complete: the server's pins for the names
 * in it. */
void runner_fetch_pins(struct moat_policy *out, const struct moat_policy *server);

/* The end of a fetch policy: the user's own settings of the tool (--env
 * PREFIX_X=VALUE, PREFIX in any case, unless X is one moat sets for the
 * phase; runner_cache_key covers them), then policy_validate. */
int runner_fetch_finish(struct moat_policy *out, const struct moat_policy *server, const struct runner_call *rc,
			struct moat_error *err);

/* The registries on the host's loopback (runner_loopback_hosts), after
 * `first` (or NULL), as no_proxy and NO_PROXY: the tool reaches them
 * directly, through the fence.  Nothing when there are none. */
void runner_fetch_no_proxy(struct moat_policy *out, const char *first);

/* The runner's options from argv[*i]: true while argv[*i] is one (a word
 * starting with '-'); false at the first other word, or past a `--`
 * (*i moved beyond it). */
bool runner_is_option(const struct moat_policy *p, size_t *i);

/* The server phase's command: rc->bin with the arguments that followed the
 * package, rc->tree read-only, `bin_dir` first on PATH. */
void runner_server_command(struct moat_policy *p, const struct runner_call *rc, char *const *env, const char *bin_dir);

/* The allowlist's destinations on the host's loopback (a local mirror, by
 * address or by a name pinned there), comma-separated, or NULL: the tool
 * reaches them directly, through the fence, not through moat's proxy mode
 * (then a mirror that is down is the tool's own "connection refused", not
 * the proxy's 502). */
char *runner_loopback_hosts(const struct moat_policy *p);

/* The installation of the interpreter at `interp` (the directory above its
 * bin/), read-only, from `source`: never the root, HOME or a directory
 * containing it.  Nothing for NULL. */
void runner_grant_install(struct moat_policy *p, const char *interp, const char *home, const char *source);

/* ---- npm packages: npm's runners, pnpm dlx and bunx ---- */

/* A registry package spec: [@scope/]name[@version-or-range-or-tag].  The
 * name's length into *name_len, the version part (or "") into *version.
 * Paths, URLs, git repositories and aliases are not. */
bool runner_registry_spec(const char *spec, size_t *name_len, const char **version);

/* A package.json (or the like) the fetch phase or the project wrote, as
 * JSON, or NULL: opened without waiting (a FIFO planted there would hold
 * moat, and the client waiting on it, for ever) and only if it is a
 * regular file of at most 16 MiB. */
struct json_t;
struct json_t *runner_json_load(const char *file);

/* package.json's "version" and the command of its "bin": `cmd` when named,
 * else the only one, else the one named after the package. */
bool runner_read_manifest(const char *file, const char *name, size_t name_len, const char *cmd, char **version,
			  char **bin);

/* The node beside `beside` (or NULL), else on PATH outside the project
 * around `cwd` (runner_lookup): its installation read-only, for the
 * fetch's install scripts. */
void runner_grant_node(struct moat_policy *p, const char *beside, const char *path_env, const char *cwd,
		       const char *home);

/* `name` on `path_env` with the entries in the project around `cwd`
 * passed over (util/projpath.h): the tool a fetch phase runs, or the
 * interpreter it grants, is never the repository's own (direnv puts its
 * node_modules/.bin, .venv's bin, bin/ first on PATH); it would run with
 * the fetch's network and the cache every project shares writable.  A new
 * absolute path, or NULL with `err` set. */
char *runner_lookup(const char *name, const char *path_env, const char *cwd, const char *home,
		    struct moat_error *err);

/* The fetch phase's network for an npm package: @npm (the registries npm
 * uses here) into out's allowlist, and rc->fetch_registry when something
 * else named it (runner_registries); the server's pins follow. */
int runner_npm_network(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
		       struct moat_policy *out, struct netset_notes *notes, struct moat_error *err);

/* npm's settings as PREFIX + name (npm_config_, pnpm_config_): the
 * registry and the scoped ones (rc->fetch_registry, rc->fetch_urls), one
 * short retry and a 30 s timeout, no update check, and the registries on
 * the host's loopback as noproxy. */
void runner_npm_settings(struct moat_policy *out, const char *prefix, const struct runner_call *rc);

/* pnpm dlx and bunx (sources/runner_dlx.c).  dlx_parse reads the runner's
 * options and its package (false: as written, rc->why says why). */
bool dlx_parse(const struct moat_policy *p, size_t first, struct runner_call *rc);
bool dlx_find_install(struct runner_call *rc);
int dlx_fetch_policy(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
		     struct moat_policy *out, struct netset_notes *notes, struct moat_error *err);
int dlx_fetch_failure(const struct runner_call *rc, const char *output, const char *registry, char *msg, size_t len);

/* pipx run (sources/runner_pipx.c), as runners.h describes each step. */
int pipx_detect(const struct moat_policy *p, size_t first, char *const *env, struct runner_call *rc,
		struct moat_error *err);
int pipx_registries(struct runner_call *rc, const struct moat_policy *server, char *const *env, struct moat_error *err);
bool pipx_find_install(struct runner_call *rc);
bool pipx_install_current(const struct runner_call *rc);
int pipx_fetch_policy(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
		      struct moat_policy *out, struct netset_notes *notes, struct moat_error *err);
void pipx_server_policy(struct moat_policy *p, const struct runner_call *rc, char *const *env);
int pipx_fetch_failure(const struct runner_call *rc, const char *output, const char *registry, char *msg,
		       size_t len);

/* uvx and `uv tool run` (sources/runner_pipx.c, beside pipx's): always one
 * phase, as written; rc->why names the exact `uv tool install` that
 * pre-installs the package, read from the arguments from `first`. */
void uvx_as_written(const struct moat_policy *p, size_t first, struct runner_call *rc);

#endif
