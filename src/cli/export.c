/* `moat export`: what an external backend would run, written to a
 * directory instead of run.  For oci and gvisor that is an OCI bundle
 * (config.json and its rootfs) that crun, runc or runsc run as they are --
 * the bridge to container platforms; for the others it is the tool's argv
 * (argv.json) and the files it reads (seatbelt's profile.sb).  Golden tests
 * compare these files (tests/golden/).
 *
 *   moat export --backend NAME -o DIR [run options] (-- CMD... | --config FILE --server NAME)
 *   moat oci export -o DIR ...          the same as --backend oci */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/commands.h"
#include "host/host.h"
#include "plan/plan.h"
#include "report/report.h"
#include "sources/cli.h"
#include "sources/config.h"
#include "util/cleanup.h"
#include "util/mem.h"

extern char **environ;

static void export_usage(FILE *out)
{
	fprintf(out, "usage: moat export --backend NAME -o DIR [run options] -- COMMAND [ARGS...]\n"
		     "       moat export --backend NAME -o DIR --config FILE --server NAME\n"
		     "       moat oci export -o DIR (-- COMMAND... | --config FILE --server NAME)\n"
		     "writes what the backend would run into DIR: argv.json (the tool's argv), report.json\n"
		     "(the verdicts), and the backend's files (oci, gvisor: an OCI bundle, config.json;\n"
		     "seatbelt: profile.sb).  Run options as for `moat run` (see moat help run).\n");
}

static int make_dir(const char *dir, struct moat_error *err)
{
	struct stat st;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return moat_error_set(err, MOAT_E_USAGE, errno, "-o %s", dir);
}

static int write_json(const char *dir, const char *name, json_t *j, struct moat_error *err)
{
	cleanup_free char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	cleanup_free char *with_nl = moat_xasprintf("%s\n", text ? text : "null");

	return backend_write_file(dir, name, with_nl, strlen(with_nl), err);
}

static int export_run(int argc, char **argv, const char *forced_backend)
{
	struct moat_error err = {0};
	struct moat_policy policy;
	struct moat_run_options opts;
	struct moat_server_meta meta = {0};
	struct moat_host host;
	struct moat_plan plan;
	cleanup_free char **args = moat_xcalloc((size_t)argc + 3, sizeof(char *));
	const char *dir = NULL;
	bool have_plan = false, after_dashes = false;
	json_t *argv_json = NULL, *report = NULL;
	int n = 0, i, code = 125;

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

	policy_init(&policy);
	run_options_init(&opts);
	if (cli_parse_run_meta(n, args, environ, &policy, &opts, &meta, &err) < 0 || make_dir(dir, &err) < 0 ||
	    host_probe(&host, &err) < 0 || plan_build_export(&policy, &host, dir, &plan, &err) < 0)
		goto fail;
	have_plan = true;
	argv_json = json_array();
	for (i = 0; i < (int)plan.compiled.argc; i++)
		json_array_append_new(argv_json, json_string(plan.compiled.argv[i]));
	report = report_build(&policy, &host, &plan, NULL);
	if (write_json(dir, "argv.json", argv_json, &err) < 0 || write_json(dir, "report.json", report, &err) < 0)
		goto fail;
	fprintf(stderr, "moat: exported backend %s (status %s here) to %s\n", plan.backend,
		moat_status_name(plan.status), dir);
	code = 0;
	goto out;
fail:
	code = moat_error_print(&err);
out:
	json_decref(argv_json);
	json_decref(report);
	if (have_plan)
		plan_free(&plan);
	policy_free(&policy);
	run_options_free(&opts);
	config_server_meta_free(&meta);
	return code;
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
