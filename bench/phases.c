/* bench/phases: where moat's own (parent-side, user-space) start-up time goes.
 *
 *   phases ITER -- [moat run options] -- COMMAND...
 *
 * Links libmoat.a and times, in one process, the steps `moat run` takes
 * before and after the launch (src/cli/main.c: cmd_run), each ITER times:
 *   host_probe     what the kernel offers (uname, Landlock ABI, seccomp, userns);
 *   cli_parse_run  flags and profile to the one policy, command resolved;
 *   fs_plan        the part of plan_build that resolves every path of the
 *                  policy to its object (resolve/fsplan.h), timed apart:
 *                  fs_plan_build, then fs_plan_free;
 *   plan_build     policy to plan: paths, Landlock ruleset, BPF, environment
 *                  (and without a mount namespace the per-run tmp and the
 *                  host's cgroups read);
 *   report_build   the JSON report (incl. the policy digest), which a run
 *                  builds only when a report is asked for (--report,
 *                  --report-fd, a dry run);
 *   cleanup        what the plan left on the host removed (the per-run tmp
 *                  of a run without a mount namespace): backend_plan_cleanup;
 *   free           plan_free + policy_free (what moat_run_main pays for an
 *                  embedder; the moat program leaves it to its exit,
 *                  src/api/run.h).
 * The first iteration is reported apart (cold: page faults, first malloc
 * arenas) from the median of the rest (warm).  Prints one JSON object, in
 * microseconds.  It measures moat's code as it is in the tree it was built
 * from; it depends on libmoat's internal headers, so bench/run treats a
 * build failure here as "not measured" rather than an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "launch/launch.h"
#include "host/host.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "report/report.h"
#include "resolve/fsplan.h"
#include "sources/cli.h"

#include "stats.h"

extern char **environ;

enum { P_PROBE, P_PARSE, P_FSPLAN, P_PLAN, P_REPORT, P_CLEANUP, P_FREE, P__N };
static const char *const names[P__N] = {"host_probe",	"cli_parse_run", "fs_plan", "plan_build",
					"report_build", "cleanup",	 "free"};

int main(int argc, char **argv)
{
	int iter = argc > 1 ? atoi(argv[1]) : 0;
	double *t[P__N];
	int i, k;

	if (iter < 2 || argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: phases ITER -- [moat run options] -- COMMAND...\n");
		return 2;
	}
	for (k = 0; k < P__N; k++)
		t[k] = calloc((size_t)iter, sizeof(double));
	/* cli_parse_run wants argv[0] == "run". */
	argv[2] = (char *)"run";
	for (i = 0; i < iter; i++) {
		struct moat_policy policy;
		struct moat_run_options opts;
		struct moat_host host;
		struct moat_plan plan;
		struct moat_launch_result result;
		struct moat_error err = {0};
		json_t *report;
		char *dump;
		double a, b;

		policy_init(&policy);
		run_options_init(&opts);
		a = bench_now_us();
		if (host_probe(&host, &err) < 0) {
			fprintf(stderr, "phases: host_probe failed\n");
			return 1;
		}
		b = bench_now_us();
		t[P_PROBE][i] = b - a;
		if (cli_parse_run(argc - 2, argv + 2, environ, &policy, &opts, &err) < 0) {
			fprintf(stderr, "phases: cli_parse_run failed\n");
			return 1;
		}
		a = bench_now_us();
		t[P_PARSE][i] = a - b;
		{
			struct fs_plan fp;
			if (fs_plan_build(&policy, getenv("HOME"), &fp, &err) < 0) {
				fprintf(stderr, "phases: fs_plan_build failed\n");
				return 1;
			}
			fs_plan_free(&fp);
		}
		b = bench_now_us();
		t[P_FSPLAN][i] = b - a;
		a = b;
		if (plan_build(&policy, &host, &plan, &err) < 0) {
			fprintf(stderr, "phases: plan_build failed\n");
			return 1;
		}
		b = bench_now_us();
		t[P_PLAN][i] = b - a;
		memset(&result, 0, sizeof(result));
		result.executed = true;
		result.exited = true;
		report = report_build(&policy, &host, &plan, &result);
		/* Timed as a run that asked for a report pays it: built, then
		 * serialized (below, not timed). */
		a = bench_now_us();
		t[P_REPORT][i] = a - b;
		dump = json_dumps(report, JSON_COMPACT);
		free(dump);
		json_decref(report);
		b = bench_now_us();
		backend_plan_cleanup(&plan.compiled); /* the private tmp a plan made (host_cleanup does it in moat) */
		a = bench_now_us();
		t[P_CLEANUP][i] = a - b;
		b = a;
		plan_free(&plan);
		policy_free(&policy);
		run_options_free(&opts);
		t[P_FREE][i] = bench_now_us() - b;
	}
	printf("{\"iterations\": %d", iter);
	for (k = 0; k < P__N; k++) {
		double cold = t[k][0];
		qsort(t[k] + 1, (size_t)iter - 1, sizeof(double), bench_cmp_double);
		printf(", \"%s\": {\"cold_us\": %.1f, \"warm_median_us\": %.1f}", names[k], cold,
		       t[k][1 + (iter - 1) / 2]);
	}
	printf("}\n");
	return 0;
}
