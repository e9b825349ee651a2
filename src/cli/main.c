/* moat's command line: a thin front end over libmoat.  It is the only place
 * where an error becomes output on stderr and an exit status. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "launch/launch.h"
#include "plan/host.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "policy/profiles.h"
#include "report/report.h"
#include "sources/cli.h"
#include "util/cleanup.h"

#ifndef MOAT_VERSION
#define MOAT_VERSION "0.0.0"
#endif

extern char **environ;

int cli_report_error(const struct moat_error *err)
{
	fprintf(stderr, "moat: %s\n", err->message);
	if (err->hint[0])
		fprintf(stderr, "moat: hint: %s\n", err->hint);
	return moat_error_exit_status(err);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: moat run [OPTIONS] -- COMMAND [ARGS...]   run COMMAND in a sandbox\n"
		     "       moat profiles                               list the built-in profiles\n"
		     "       moat probe [--json]                         what this host can enforce\n"
		     "       moat config decode                          TOML on stdin to tagged JSON\n"
		     "       moat --version | help [properties]\n\n"
		     "`moat run --help` lists the options.  stdout belongs to the command; moat writes\n"
		     "diagnostics to stderr and its JSON report to --report FILE or --report-fd N.\n");
}

static void help_properties(void)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		printf("%-14s %s\n", moat_property_name((enum moat_property)i),
		       moat_property_meaning((enum moat_property)i));
}

static int open_report(const struct moat_run_options *o, struct moat_error *err)
{
	int fd;

	if (o->report_path) {
		fd = open(o->report_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return moat_error_set(err, MOAT_E_USAGE, errno, "--report %s", o->report_path);
		return fd;
	}
	if (o->report_fd >= 0) {
		/* moat's own descriptor: the command must not inherit it,
		 * even with --mode off. */
		int fl = fcntl(o->report_fd, F_GETFD);
		fcntl(o->report_fd, F_SETFD, fl | FD_CLOEXEC);
		return o->report_fd;
	}
	return -1;
}

static void say_missing(const struct moat_plan *plan, const char *prefix)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++) {
		const struct moat_verdict *v = &plan->props[i];
		if (!v->requested || v->enforced)
			continue;
		fprintf(stderr, "moat: %s %s: %s\n", prefix, moat_property_name((enum moat_property)i), v->reason);
		if (v->hint[0])
			fprintf(stderr, "moat:   hint: %s\n", v->hint);
	}
}

static int cmd_run(int argc, char **argv)
{
	long long start_ns = moat_now_ns();
	struct moat_policy policy;
	struct moat_run_options opts;
	struct moat_host host;
	struct moat_plan plan;
	struct moat_launch_result result;
	struct moat_error err = {0};
	cleanup_close int report_fd = -1;
	json_t *report = NULL;
	int code = 125;
	bool have_plan = false;

	policy_init(&policy);
	run_options_init(&opts);
	if (host_probe(&host, &err) < 0 || cli_parse_run(argc, argv, environ, &policy, &opts, &err) < 0) {
		code = cli_report_error(&err);
		goto out;
	}
	if (opts.help) {
		cli_run_usage(stdout);
		code = 0;
		goto out;
	}
	if ((report_fd = open_report(&opts, &err)) < 0 && err.kind != MOAT_E_NONE) {
		code = cli_report_error(&err);
		goto out;
	}
	if (plan_build(&policy, &host, &plan, &err) < 0) {
		code = cli_report_error(&err);
		goto out;
	}
	have_plan = true;

	if (opts.dry_run) {
		report = report_build(&policy, &host, &plan, NULL);
		if (report_write_fd(report, STDOUT_FILENO, &err) < 0)
			code = cli_report_error(&err);
		else
			code = plan.status == MOAT_STATUS_UNAVAILABLE ? 125 : 0;
		goto out;
	}
	if (plan.status == MOAT_STATUS_UNAVAILABLE) {
		say_missing(&plan, "cannot enforce");
		fprintf(stderr, "moat: refusing to run %s (mode require); --mode prefer runs with what this host "
				"has, and says so\n",
			policy.argv[0]);
		memset(&result, 0, sizeof(result));
		result.exit_code = 125;
		snprintf(result.failure, sizeof(result.failure), "required protections unavailable");
		report = report_build(&policy, &host, &plan, &result);
		code = 125;
		goto write_report;
	}
	if (plan.status == MOAT_STATUS_DEGRADED)
		say_missing(&plan, "degraded: missing");
	else if (plan.status == MOAT_STATUS_OFF)
		fprintf(stderr, "moat: sandbox off (mode off): running %s unsandboxed\n", policy.argv[0]);

	if (launch_run(&policy, &plan, start_ns, &result, &err) < 0) {
		code = cli_report_error(&err);
		goto out;
	}
	if (!result.executed)
		fprintf(stderr, "moat: %s\n", result.failure);
	code = result.exit_code;
	report = report_build(&policy, &host, &plan, &result);
write_report:
	if (report_fd >= 0 && report_write_fd(report, report_fd, &err) < 0) {
		cli_report_error(&err);
		if (code == 0)
			code = 125;
	}
out:
	json_decref(report);
	if (have_plan) {
		native_cleanup(&plan.native);
		plan_free(&plan);
	}
	if (report_fd == opts.report_fd)
		report_fd = -1; /* the caller's descriptor: not ours to close */
	policy_free(&policy);
	run_options_free(&opts);
	return code;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 125;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("moat %s\n", MOAT_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc > 2 && strcmp(argv[2], "properties") == 0)
			help_properties();
		else if (argc > 2 && strcmp(argv[2], "run") == 0)
			cli_run_usage(stdout);
		else
			usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "profiles") == 0) {
		profile_list(stdout);
		return 0;
	}
	if (strcmp(argv[1], "probe") == 0)
		return cmd_probe(argc - 1, argv + 1);
	if (strcmp(argv[1], "config") == 0)
		return cmd_config(argc - 1, argv + 1);
	fprintf(stderr, "moat: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 125;
}
