/* The library's side of `moat config check|show` (src/api/config.c): the
 * CLI (cli/config.c) parses the arguments and prints. */
#ifndef MOAT_API_CONFIG_H
#define MOAT_API_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "util/err.h"

/* What `moat config check` found in a file. */
struct api_config_check {
	size_t n_servers;	     /* the servers moat can run (not skipped) */
	struct moat_error *problems; /* every problem, in the order found */
	size_t n_problems;
	char **notes; /* what was ignored or skipped: "FILE:LINE:COL: KEY: what" */
	size_t n_notes;
	bool stopped; /* a syntax error ended the reading (in *err) */
};

/* Load and check FILE as a run would (every server's policy, built and
 * validated), going on past each problem.  0: no problem.  -1: the
 * problems are in out->problems, or the file could not be read or parsed
 * (out->n_problems 0, the error in *err; out->stopped for a syntax error:
 * nothing after it was checked).  Free *out with api_config_check_free. */
int api_config_check(const char *file, struct api_config_check *out, struct moat_error *err);
void api_config_check_free(struct api_config_check *out);

/* The report of a dry run for one server of FILE (server NULL: the file's
 * only one): the effective policy, planned on this host.  *report is the
 * caller's to json_decref; *refused is true when a run would be refused
 * (status unavailable). */
int api_config_show(const char *file, const char *server, json_t **report, bool *refused, struct moat_error *err);

#endif
