/* `moat run` of a package runner (`npx -y PKG`): the fetch phase, run here
 * before the server phase that run.c runs (sources/runners.h decides what
 * each phase is; docs/policy.md, "Package runners", says why). */
#ifndef MOAT_API_RUNNER_H
#define MOAT_API_RUNNER_H

#include <jansson.h>
#include <stdbool.h>

#include "host/host.h"
#include "launch/launch.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "sources/runners.h"
#include "util/err.h"

struct runner_run {
	struct runner_call call;
	char **argv; /* the command as written */
	size_t argc;
	const char *outcome; /* "fetched", "cached", "as written", "failed", "would fetch" (dry run) */
	json_t *fetch;	     /* the fetch phase's report (its plan in a dry run), or NULL */
};

void runner_run_free(struct runner_run *rr);

/* After the server's plan is built (*plan, from *p as written): when the
 * command is a package runner that needs a fetch, run the fetch phase (in
 * a dry run, plan it), and when the package is installed make *p the
 * server phase's policy and build *plan again.  Returns 0 to go on with
 * the server phase; 1 when the fetch failed: it said why on stderr and
 * *result is the run that did not start, with the exit code (127: no such
 * package, 125: anything else, 128+N: moat was signalled); -1 with *err. */
int runner_prepare(struct moat_policy *p, const struct moat_host *host, struct moat_plan *plan, bool dry_run,
		   long long start_ns, struct runner_run *rr, struct moat_launch_result *result,
		   struct moat_error *err);

/* The report's `runner` object and, when there was one, `fetch`. */
void runner_report_add(json_t *report, const struct runner_run *rr);

#endif
