/* Launch: start the command as the plan says, supervise it (signals,
 * timeout, the process tree), and give back how it ended. */
#ifndef MOAT_LAUNCH_LAUNCH_H
#define MOAT_LAUNCH_LAUNCH_H

#include <stdbool.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "util/err.h"

/* SIGTERM first; SIGKILL this long after, when --timeout expires. */
#define MOAT_TIMEOUT_GRACE_MS 2000
/* moat's exit status when --timeout expired (as coreutils' timeout). */
#define MOAT_EXIT_TIMEOUT 124

struct moat_launch_result {
	bool executed;       /* execve succeeded */
	bool exited;         /* the command ended with exit() */
	int exit_status;     /* when exited */
	int signal;          /* when killed by a signal, else 0 */
	bool timed_out;
	int exit_code;       /* what moat exits with */
	double exec_ms;      /* from moat's start to execve */
	double run_ms;       /* from execve to the end */
	char failure[MOAT_ERR_MSG_MAX]; /* when !executed: what failed */
};

/* `moat_start_ns`: CLOCK_MONOTONIC at moat's start, for exec_ms.
 * `close_fd`: a descriptor of moat's own (the report) the child must not get.
 * Returns 0 when the command ran or failed in a way the result says (exit
 * codes 126/127/125 with `failure`); -1 only when moat could not start. */
int launch_run(const struct moat_policy *p, const struct moat_plan *plan, long long moat_start_ns,
	       struct moat_launch_result *r, struct moat_error *err);

long long moat_now_ns(void);

#endif
