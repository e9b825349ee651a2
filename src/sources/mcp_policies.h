/* moat's file of the policies of wrapped servers (docs/clients.md, "moat mcp
 * list, wrap, unwrap"): ~/.config/moat/servers.toml unless named.  It is a
 * moat config like any other -- `moat run --config FILE --profile ID` reads
 * it -- holding for each wrapped entry:
 *
 *   [profiles."ID"]        the server's policy: extends, read, write, net, ...
 *   [wrapped."ID"]         where the entry is (client, file, server) and the
 *                          bytes wrap replaced (before) by its own (after),
 *                          for `moat mcp unwrap` to put back exactly.
 *
 * `[wrapped]` is a key at the top of the file that moat's config loader
 * leaves alone, as it does a client's settings.  This module writes the
 * text of both tables for `wrap`, finds them for `list` and `unwrap`, and
 * gives the splices that remove them; it writes no file. */
#ifndef MOAT_SOURCES_MCP_POLICIES_H
#define MOAT_SOURCES_MCP_POLICIES_H

#include <stdbool.h>
#include <stddef.h>

#include "sources/mcp_clients.h"
#include "sources/toml.h"
#include "util/err.h"

/* A `moat run` option `moat mcp wrap` takes into a profile (each has a
 * key there): its own spelling, for struct mcp_flag; NULL when it is not
 * one.  *takes_value: whether a value follows. */
const char *mcp_policy_flag(const char *opt, bool *takes_value);

struct mcp_flag {
	const char *opt;   /* as the table has it: "--write" */
	const char *value; /* NULL for a flag without one */
};

/* A table of moat settings in the client's file that `moat run --config
 * FILE --server NAME` applies to the entry -- a user profile of the file
 * (of the chain the entry's profile names), the file's [sandbox], the
 * entry's own sandbox -- carried into the profile wrap writes, base first
 * and wrap's flags on top, so that the wrapped server runs under no less
 * than what its entry says.  A key wrap cannot carry is an error, never
 * dropped. */
struct mcp_carried {
	const struct toml_value *table; /* a table, or `sandbox = "BACKEND"`'s string */
	const char *key;		/* where it is: "mcp_servers.files.sandbox" */
	const char *file;		/* the client's file, for messages */
	const char *dir, *home;		/* what its relative paths and ~ are taken against */
};

/* The profile keys carried from c (n tables), as wrap writes them: "" for
 * none; NULL with err for a setting it cannot carry. */
char *mcp_carried_text(const struct mcp_carried *c, size_t n, struct moat_error *err);

/* What wrap records for one entry. */
struct mcp_wrap_record {
	const char *id;
	const char *extends; /* --profile, or the servers' default (mcp) */
	const struct mcp_flag *flags;
	size_t n_flags;
	char *const *env_pass; /* what the client hands the server (its env, env_vars) */
	size_t n_env_pass;
	const char *cwd; /* relative paths of the flags are taken against it */
	const struct mcp_carried *carried; /* under the flags, base first */
	size_t n_carried;
	const char *carried_text; /* mcp_carried_text of them, kept in the record */
	const char *client, *file, *server;
	const char *before, *after;
};

/* The two tables of a record, a blank line before each; appended to the
 * file as it is.  NULL with err when a path cannot be made absolute. */
char *mcp_record_text(const struct mcp_wrap_record *r, struct moat_error *err);

/* The first text of a new file. */
const char *mcp_policies_preamble(void);

/* The file, parsed (text taken over; "" for a file that does not exist). */
struct mcp_policies {
	char *path;
	char *text;
	size_t len;
	bool exists;
	struct toml_value *root;
};

int mcp_policies_parse(const char *path, char *text, size_t len, bool exists, struct mcp_policies **out,
		       struct moat_error *err);
void mcp_policies_free(struct mcp_policies *p);

/* The profile and the record of ID, or NULL. */
const struct toml_value *mcp_policies_profile(const struct mcp_policies *p, const char *id);
const struct toml_value *mcp_policies_record(const struct mcp_policies *p, const char *id);
/* A string of a record, or NULL. */
const char *mcp_record_get(const struct toml_value *record, const char *key);

/* An id for SERVER of CLIENT that the file does not use yet: "CLIENT.SERVER"
 * (characters other than letters, digits, '.', '_', '-' and '@' as '_'),
 * then "-2", "-3", ... */
char *mcp_policies_new_id(const struct mcp_policies *p, enum mcp_client client, const char *server);

/* The splices that remove ID's profile and record, sorted, appended to
 * *v (n of them).  Returns false when one of them is not written as
 * sections ([profiles."ID"] and [wrapped."ID"] headers) and is left. */
bool mcp_policies_remove(const struct mcp_policies *p, const char *id, struct mcp_splice **v, size_t *n);

/* wrap writes a blank line before each section it appends: each run of the
 * sorted removals v takes the blank line before it along, so that unwrap
 * leaves the file as it was before wrap.  Once, after the last
 * mcp_policies_remove. */
void mcp_policies_take_blank_lines(const struct mcp_policies *p, struct mcp_splice *v, size_t n);

#endif
