/* What an external backend would run, written to a directory instead of
 * run.  For oci and gvisor that is an OCI bundle (config.json and its
 * rootfs) that crun, runc or runsc run as they are -- the bridge to
 * container platforms; for the others it is the tool's argv (argv.json) and
 * the files it reads (seatbelt's profile.sb).  Golden tests compare these
 * files (tests/golden/). */
#include "api/export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "host/host.h"
#include "policy/env.h"
#include "plan/plan.h"
#include "report/report.h"
#include "sources/cli.h"
#include "sources/config.h"
#include "util/cleanup.h"
#include "util/jsontext.h"
#include "util/mem.h"

extern char **environ;

/* 1 when it made the directory, 0 when it was there. */
static int make_dir(const char *dir, struct moat_error *err)
{
	struct stat st;

	if (mkdir(dir, 0755) == 0)
		return 1;
	if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return moat_error_set(err, MOAT_E_USAGE, errno, "-o %s", dir);
}

/* DIR holds an earlier export: its report.json is moat's. */
static bool holds_export(const char *dir)
{
	cleanup_free char *path = moat_xasprintf("%s/report.json", dir);
	cleanup_close int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char head[128];
	ssize_t n = fd >= 0 ? read(fd, head, sizeof(head) - 1) : -1;

	if (n <= 0)
		return false;
	head[n] = '\0';
	return strstr(head, "\"schema\": \"moat.report/") != NULL;
}

/* The files an export of any backend writes beside argv.json (src/backends;
 * OCI's rootfs is a directory it checks itself).  An export into a DIR of
 * an earlier export removes them first: that export's run.sh of another
 * backend or policy must not stay beside this one's report, which does not
 * describe it.  (Only there: in a directory of the user's, `-o .`, a
 * config.json or run.sh may be the user's own.)  A link at one of the
 * names is removed, not followed; a directory stays (the write then
 * fails). */
static void remove_export_files(const char *dir)
{
	static const char *const names[] = {"argv.json", "report.json", "run.sh", "env.args", "seccomp.bpf",
					    "nsjail.cfg", "seccomp.kafel", "profile.sb", "config.json"};
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; dfd >= 0 && i < ARRAY_LEN(names); i++)
		(void)unlinkat(dfd, names[i], 0);
}

/* argv.json is JSON, whose strings are UTF-8: an argument that is not
 * cannot be written as it is, and json_string() of it is NULL, which the
 * array once dropped without a word (the argv then was not run.sh's). */
static int argv_json(const struct moat_plan *plan, json_t **out, struct moat_error *err)
{
	json_t *a = json_array();

	for (size_t i = 0; i < plan->compiled.argc; i++) {
		const char *arg = plan->compiled.argv[i];

		if (!utf8_valid(arg, strlen(arg))) {
			/* Shown as the report shows it: each stray byte \xNN. */
			json_t *as_text = json_text(arg);
			cleanup_free char *shown = moat_text_shown(json_string_value(as_text));

			json_decref(as_text);
			json_decref(a);
			moat_error_set(err, MOAT_E_USAGE, 0,
				       "argument %zu of %s's argv (%s) is not UTF-8, which argv.json must be", i,
				       plan->backend, shown);
			return moat_error_hint(err, "export a command, paths and variables that are UTF-8 text, or "
						    "run it with moat run --backend %s",
					       plan->backend);
		}
		json_array_append_new(a, json_string(arg));
	}
	*out = a;
	return 0;
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
	bool have_plan = false, export_dir = false;
	json_t *argv = NULL, *report = NULL;
	int made = 0;
	int rc = -1;

	policy_init(&policy);
	run_options_init(&opts);
	if (cli_parse_run_meta(n, args, environ, &policy, &opts, &meta, err) < 0 || (made = make_dir(dir, err)) < 0 ||
	    host_probe(&host, err) < 0)
		goto out;
	export_dir = made == 1 || holds_export(dir);
	if (export_dir)
		remove_export_files(dir);
	if (plan_build_export(&policy, &host, dir, &plan, err) < 0)
		goto out;
	have_plan = true;
	if (argv_json(&plan, &argv, err) < 0)
		goto out;
	report = report_build(&policy, &host, &plan, NULL);
	if (write_json(dir, "argv.json", argv, err) < 0 || write_json(dir, "report.json", report, err) < 0)
		goto out;
	snprintf(out->backend, sizeof(out->backend), "%s", plan.backend);
	snprintf(out->status, sizeof(out->status), "%s", moat_status_name(plan.status));
	rc = 0;
out:
	/* A failed export leaves nothing runnable in an export's directory:
	 * no run.sh without its report. */
	if (rc < 0 && have_plan && export_dir)
		remove_export_files(dir);
	json_decref(argv);
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
