/* What the package runners' modules share (sources/runners.c, npm's and
 * the dispatch; sources/runner_pipx.c, pipx's): not for the rest of moat,
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

/* The cache's name for the package list and the registry given to the
 * runner: 16 hex digits of their SHA-256. */
char *runner_cache_key(const struct runner_call *rc);

/* rc->cache (moat's cache root/SUB/KEY); the caller sets rc->state (cached
 * when the install there satisfies the spec).  -1 with *err when there is
 * no cache root (neither XDG_CACHE_HOME nor HOME). */
int runner_cache_state(struct runner_call *rc, char *const *env, const char *sub, struct moat_error *err);

/* The install found: rc->tree, rc->bin and rc->version take the three
 * strings (set to NULL).  true. */
bool runner_found(struct runner_call *rc, char **tree, char **bin, char **version);

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
 * NAME=VALUE where user_setting(NAME)), then policy_validate. */
int runner_fetch_finish(struct moat_policy *out, const struct moat_policy *server, bool (*user_setting)(const char *),
			struct moat_error *err);

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

/* pipx run (sources/runner_pipx.c), as runners.h describes each step. */
int pipx_detect(const struct moat_policy *p, size_t first, char *const *env, struct runner_call *rc,
		struct moat_error *err);
bool pipx_find_install(struct runner_call *rc);
bool pipx_install_current(const struct runner_call *rc);
int pipx_fetch_policy(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
		      struct moat_policy *out, struct netset_notes *notes, struct moat_error *err);
void pipx_server_policy(struct moat_policy *p, const struct runner_call *rc, char *const *env);
int pipx_fetch_failure(const struct runner_call *rc, const char *output, const char *registry, char *msg,
		       size_t len);

#endif
