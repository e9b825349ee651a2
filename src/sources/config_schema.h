/* The schema of configuration files (sources/config_schema.c). */
#ifndef MOAT_SOURCES_CONFIG_SCHEMA_H
#define MOAT_SOURCES_CONFIG_SCHEMA_H

#include "sources/config.h"
#include "sources/toml.h"
#include "util/err.h"

/* Check the tree (from toml_parse or config_json_parse) key by key against
 * the schema and compile it into `c`, whose file, dir and json are set.
 * `home` expands "~" (NULL: "~" is an error).  Every problem goes into
 * c->problems, and the loading goes on: a server or a layer with a problem
 * is marked broken. */
void config_load_tree(struct moat_config *c, const struct toml_value *root, const char *home);

/* The first key of t -- a server entry at `key`, or with key NULL the top
 * of a client's file -- that the loader refuses as a typo of one of moat's
 * (`Sandbox`, `sandbx`, `sandbox` and a zero-width space): -1 with the
 * error the loader gives it, else 0.  For `moat mcp wrap`, which would
 * otherwise take the entry without the settings the key was meant to hold. */
int config_client_keys_check(const char *file, bool json, const struct toml_value *t, const char *key,
			     struct moat_error *err);

#endif
