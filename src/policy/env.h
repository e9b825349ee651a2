/* Environment curation: the child gets exactly the safe set plus what the
 * policy adds, never moat's whole environment (tokens live there). */
#ifndef MOAT_POLICY_ENV_H
#define MOAT_POLICY_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "util/err.h"

/* Variables that make a loader, an interpreter or a shell run code before
 * the program's own (LD_PRELOAD, NODE_OPTIONS, BASH_ENV, ...; the list, with
 * the reason for each, is in env.c).  Passing one through from moat's
 * environment would let whoever set moat's environment run code in the
 * sandbox unseen, and a config file is often a repository's (.mcp.json), so
 * one is accepted only from the command line with its value: --env NAME=VALUE. */
bool env_is_hook(const char *name);

/* Is `name` a valid variable name ([A-Za-z_][A-Za-z0-9_]*)? */
bool env_name_valid(const char *name);

/* Add the safe set (PATH, HOME, the locale, TZ, SSL_CERT_FILE, the terminal, XDG_*) as
 * pass-through rules; patterns ending in '*' match by prefix. */
void env_add_safe_set(struct moat_policy *p);

/* The i-th variable that names a CA bundle (SSL_CERT_FILE,
 * NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, ...; the list, with the tool
 * that reads each, is in env.c), or NULL past the last. */
const char *env_ca_bundle_name(size_t i);

/* Build the child's environment from the policy's rules and `environ`:
 * later rules win over earlier ones.  *envp_out is a NULL-terminated array
 * of "NAME=VALUE" strings; *names_out the sorted names (for the report,
 * which never shows values). */
int env_build(const struct moat_policy *p, char *const *environ_in, char ***envp_out, char ***names_out,
	      struct moat_error *err);

/* Set NAME=VALUE in a built environment (replacing an existing NAME), and
 * keep the sorted name list in step. */
void env_strv_set(char ***envp, char ***names, const char *name, const char *value);

/* Remove NAME from a built environment and its name list, if there. */
void env_strv_unset(char **envp, char **names, const char *name);

/* The value of NAME in a built environment, or NULL. */
const char *env_strv_get(char *const *envp, const char *name);

void env_strv_free(char **v);

#endif
