/* The library's side of `moat export` (src/api/export.c): the CLI
 * (cli/export.c) separates -o DIR from the run options and prints. */
#ifndef MOAT_API_EXPORT_H
#define MOAT_API_EXPORT_H

#include <jansson.h>

#include "backends/k8s.h"
#include "util/err.h"

struct api_export_result {
	char backend[32]; /* the backend exported */
	char status[16];  /* its status on this host ("enforced", ...) */
};

/* Plan `moat run` ARGS (args[0] is "run", NULL-terminated, n of them) for
 * export into DIR (made if absent): the backend's files, argv.json (the
 * tool's argv) and report.json (the verdicts). */
int api_export(int n, char **args, const char *dir, struct api_export_result *out, struct moat_error *err);

/* `moat export --format k8s`: the same run options as Kubernetes manifests
 * in DIR (backends/k8s.h); *report_out the export's report (a new
 * reference). opts->server is filled from --server. */
int api_export_k8s(int n, char **args, const char *dir, struct k8s_options *opts, json_t **report_out,
		   struct moat_error *err);

#endif
