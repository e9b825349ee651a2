/* The library's side of `moat export` (src/api/export.c): the CLI
 * (cli/export.c) separates -o DIR from the run options and prints. */
#ifndef MOAT_API_EXPORT_H
#define MOAT_API_EXPORT_H

#include "util/err.h"

struct api_export_result {
	char backend[32]; /* the backend exported */
	char status[16];  /* its status on this host ("enforced", ...) */
};

/* Plan `moat run` ARGS (args[0] is "run", NULL-terminated, n of them) for
 * export into DIR (made if absent): the backend's files, argv.json (the
 * tool's argv) and report.json (the verdicts). */
int api_export(int n, char **args, const char *dir, struct api_export_result *out, struct moat_error *err);

#endif
