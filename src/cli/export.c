/* `moat export`: what an external backend would run, written to a
 * directory instead of run (api/export.c).
 *
 *   moat export --backend NAME -o DIR [run options] (-- CMD... | --config FILE --server NAME)
 *   moat oci export -o DIR ...          the same as --backend oci */
#include <stdio.h>
#include <string.h>

#include "api/export.h"
#include "cli/commands.h"
#include "util/cleanup.h"
#include "util/mem.h"

static void export_usage(FILE *out)
{
	fprintf(out, "usage: moat export --backend NAME -o DIR [run options] -- COMMAND [ARGS...]\n"
		     "       moat export --backend NAME -o DIR --config FILE --server NAME\n"
		     "       moat oci export -o DIR (-- COMMAND... | --config FILE --server NAME)\n"
		     "writes what the backend would run into DIR: argv.json (the tool's argv), report.json\n"
		     "(the verdicts), and the backend's files (oci, gvisor: an OCI bundle, config.json;\n"
		     "seatbelt: profile.sb).  Run options as for `moat run` (see moat help run).\n");
}

static int export_run(int argc, char **argv, const char *forced_backend)
{
	struct moat_error err = {0};
	struct api_export_result res;
	cleanup_free char **args = moat_xcalloc((size_t)argc + 3, sizeof(char *));
	const char *dir = NULL;
	bool after_dashes = false;
	int n = 0, i;

	static char run_word[] = "run", backend_opt[] = "--backend";
	cleanup_free char *forced = forced_backend ? moat_xstrdup(forced_backend) : NULL;

	/* -o DIR is export's own; everything else is `moat run`'s. */
	args[n++] = run_word;
	if (forced) {
		args[n++] = backend_opt;
		args[n++] = forced;
	}
	for (i = 1; i < argc; i++) {
		if (!after_dashes && (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0)) {
			if (i + 1 >= argc) {
				fprintf(stderr, "moat: %s needs a directory\n", argv[i]);
				return 125;
			}
			dir = argv[++i];
			continue;
		}
		if (!after_dashes && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
			export_usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--") == 0)
			after_dashes = true;
		args[n++] = argv[i];
	}
	args[n] = NULL;
	if (!dir) {
		fprintf(stderr, "moat: export needs -o DIR\n");
		export_usage(stderr);
		return 125;
	}

	if (api_export(n, args, dir, &res, &err) < 0)
		return moat_error_print(&err);
	fprintf(stderr, "moat: exported backend %s (status %s here) to %s\n", res.backend, res.status, dir);
	return 0;
}

int cmd_export(int argc, char **argv)
{
	return export_run(argc, argv, NULL);
}

int cmd_oci(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return export_run(argc - 1, argv + 1, "oci");
	fprintf(stderr, "usage: moat oci export -o DIR (-- COMMAND... | --config FILE --server NAME)\n");
	return 125;
}
