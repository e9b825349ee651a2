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

#endif
