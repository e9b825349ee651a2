/* What an external backend would run, written to a directory instead of
 * run.  For oci and gvisor that is an OCI bundle (config.json and its
 * rootfs) that crun, runc or runsc run as they are -- the bridge to
 * container platforms; for the others it is the tool's argv (argv.json) and
 * the files it reads (seatbelt's profile.sb).  Golden tests compare these
 * files (tests/golden/). */
#include "api/export.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "host/host.h"
#include "policy/env.h"
#include "plan/plan.h"
#include "report/report.h"
#include "sources/cli.h"
#include "sources/config.h"
#include "util/cleanup.h"
#include "util/mem.h"

extern char **environ;

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

int api_export(int n, char **args, const char *dir, struct api_export_result *out, struct moat_error *err)
{
	struct moat_policy policy;
	struct moat_run_options opts;
	struct moat_server_meta meta = {0};
	struct moat_host host;
	struct moat_plan plan;
	bool have_plan = false;
	json_t *argv_json = NULL, *report = NULL;
	size_t i;
	int rc = -1;

	policy_init(&policy);
	run_options_init(&opts);
	if (cli_parse_run_meta(n, args, environ, &policy, &opts, &meta, err) < 0 || make_dir(dir, err) < 0 ||
	    host_probe(&host, err) < 0 || plan_build_export(&policy, &host, dir, &plan, err) < 0)
		goto out;
	have_plan = true;
	argv_json = json_array();
	for (i = 0; i < plan.compiled.argc; i++)
		json_array_append_new(argv_json, json_string(plan.compiled.argv[i]));
	report = report_build(&policy, &host, &plan, NULL);
	if (write_json(dir, "argv.json", argv_json, err) < 0 || write_json(dir, "report.json", report, err) < 0)
		goto out;
	snprintf(out->backend, sizeof(out->backend), "%s", plan.backend);
	snprintf(out->status, sizeof(out->status), "%s", moat_status_name(plan.status));
	rc = 0;
out:
	json_decref(argv_json);
	json_decref(report);
	if (have_plan)
		plan_free(&plan);
	policy_free(&policy);
	run_options_free(&opts);
	config_server_meta_free(&meta);
	return rc;
}

int api_export_k8s(int n, char **args, const char *dir, struct k8s_options *opts, json_t **report_out,
		   struct moat_error *err)
{
	struct moat_policy policy;
	struct moat_run_options run_opts;
	struct moat_server_meta meta = {0};
	char **envp = NULL, **names = NULL;
	int rc = -1;

	policy_init(&policy);
	run_options_init(&run_opts);
	run_opts.for_another_host = true;
	/* The image is checked first: without it nothing can be written. */
	if (k8s_options_check(opts, err) < 0 ||
	    cli_parse_run_meta(n, args, environ, &policy, &run_opts, &meta, err) < 0 ||
	    env_build(&policy, environ, &envp, &names, err) < 0 || make_dir(dir, err) < 0)
		goto out;
	if (policy.mode == MOAT_MODE_OFF) {
		moat_error_set(err, MOAT_E_USAGE, 0, "--format k8s: the policy asks for no sandbox (mode off): there is "
						     "nothing to export");
		moat_error_hint(err, "drop --mode off (or mode = \"off\" in the config)");
		goto out;
	}
	opts->server = meta.name;
	rc = k8s_export(&policy, envp, opts, dir, report_out, err);
	opts->server = NULL;
out:
	env_strv_free(envp);
	env_strv_free(names);
	policy_free(&policy);
	run_options_free(&run_opts);
	config_server_meta_free(&meta);
	return rc;
}
