/* Policy -> plan.  The plan picks the backend, compiles everything that can
 * fail (paths, BPF, Landlock rules, environment) in the parent, and gives
 * each property a verdict computed from what the backend will apply. */
#ifndef MOAT_PLAN_PLAN_H
#define MOAT_PLAN_PLAN_H

#include <stdbool.h>

#include "backends/backend.h"
#include "backends/native.h"
#include "resolve/fsplan.h"
#include "host/host.h"
#include "resolve/limits.h"
#include "policy/backend_names.h"
#include "policy/properties.h"
#include "policy/verdict.h"
#include "policy/policy.h"
#include "util/err.h"

enum moat_status {
	MOAT_STATUS_ENFORCED,    /* everything asked is enforced */
	MOAT_STATUS_DEGRADED,    /* prefer mode, something is missing */
	MOAT_STATUS_UNAVAILABLE, /* require mode, something is missing: nothing runs */
	MOAT_STATUS_OFF,         /* the sandbox is off */
};


struct moat_plan {
	const char *backend;     /* the backend chosen: "native", "none" or an
				  * external backend's name */
	const char *backend_asked; /* what the policy asked for ("auto", ...) */
	char backend_reason[4096];  /* why this backend (for auto: what the
				    * stronger ones lacked; one part for each
				    * backend of the ranking, ~2 KiB at most) */
	/* What the backend compiled: a tool to execute, moat's own in-child
	 * program (compiled.in_child), or nothing (none). */
	struct backend_plan compiled;
	enum moat_status status;
	struct moat_verdict props[MOAT_P__COUNT];
	char **envp;      /* the child's exact environment */
	char **env_names; /* its names, sorted, for the report */
	struct fs_plan fs; /* every path of the policy, resolved once */
	/* The host's cgroups, probed only when the policy needs them
	 * (limits_need_cgroups); !cgroup.probed otherwise. */
	struct moat_cgroup_info cgroup;
	/* The chosen backend's limits (compiled.limits, copied): each limit's
	 * mechanism, the tree's cgroup (launch/cgroup.c), proc.tree. */
	struct limits_plan limits;
};

int plan_build(const struct moat_policy *p, const struct moat_host *h, struct moat_plan *plan,
	       struct moat_error *err);
/* The same for `moat export`: the named external backend is compiled with
 * export_dir as its work directory, and nothing is created that a run
 * would need (no fds, no per-run directories). */
int plan_build_export(const struct moat_policy *p, const struct moat_host *h, const char *export_dir,
		      struct moat_plan *plan, struct moat_error *err);
void plan_free(struct moat_plan *plan);
/* The plan's backend runs a tool, and nothing could be compiled for it
 * here (its tool is absent, the host rules it out, or this is not its
 * OS): the run is refused with one line for the cause. */
bool plan_backend_absent(const struct moat_plan *plan);

const char *moat_status_name(enum moat_status s);


#endif
