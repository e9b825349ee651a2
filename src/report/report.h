/* Report: the JSON attestation of what was enforced (docs/report.md).
 * Versioned by "schema"; fields are only ever added. */
#ifndef MOAT_REPORT_REPORT_H
#define MOAT_REPORT_REPORT_H

#include <jansson.h>

#include "launch/launch.h"
#include "host/host.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "util/err.h"

#define MOAT_REPORT_SCHEMA "moat.report/1"

/* The effective policy as JSON: the oracle for tests.  Environment values
 * are never included, only names and whether each is set or passed. */
json_t *policy_to_json(const struct moat_policy *p);

/* The report.  `run` NULL: a dry run (no run fields, plus the policy). */
json_t *report_build(const struct moat_policy *p, const struct moat_host *h, const struct moat_plan *plan,
		     const struct moat_launch_result *run);

/* Write j, followed by a newline, to fd. */
int report_write_fd(json_t *j, int fd, struct moat_error *err);

#endif
