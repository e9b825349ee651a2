/* The library's side of `moat config check|show` (src/api/config.c): the
 * CLI (cli/config.c) parses the arguments and prints. */
#ifndef MOAT_API_CONFIG_H
#define MOAT_API_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "util/err.h"

/* Load and check FILE as a run would (every server's policy, built and
 * validated); *n_servers receives how many it defines. */
int api_config_check(const char *file, size_t *n_servers, struct moat_error *err);

/* The report of a dry run for one server of FILE (server NULL: the file's
 * only one): the effective policy, planned on this host.  *report is the
 * caller's to json_decref; *refused is true when a run would be refused
 * (status unavailable). */
int api_config_show(const char *file, const char *server, json_t **report, bool *refused, struct moat_error *err);

#endif
