/* The child side of a launch: the irreversible steps, in their fixed
 * order, then execve.  Internal to launch/. */
#ifndef MOAT_LAUNCH_CHILD_H
#define MOAT_LAUNCH_CHILD_H

#include <signal.h>

#include "plan/plan.h"
#include "policy/policy.h"

/* What the child tells the parent when a step fails, through the
 * close-on-exec error pipe (EOF on that pipe means execve succeeded). */
struct child_failure {
	int errnum;
	int exit_code; /* 125 setup, 126 not executable, 127 not found */
	char what[256];
};

struct child_args {
	const struct moat_policy *policy;
	const struct moat_plan *plan;
	sigset_t saved_mask; /* moat's mask before it blocked signals */
	int err_fd;          /* write end of the error pipe */
	int status_fd;       /* pid-namespace init: write end for the command's wait status */
	int lifeline_fd;     /* read end: hangs up when moat dies */
	int go_fd;           /* read end: one byte once moat put the child in the
			      * tree's cgroup; -1: no cgroup, no wait */
	/* moat's own ends of those pipes (-1: none), which the child inherits
	 * from clone and closes first: while it holds the lifeline's write
	 * end, the lifeline cannot hang up, and while it holds go's write
	 * end, its wait for go cannot end when moat dies. */
	int parent_ends[10];
	int started_fd; /* write end for moat __init --started-fd; -1: none */
	int tool_err_fd; /* write end: the tool's stderr (backend.h, stderr_to) */
	int fence_fd;    /* net allow: the unix socket the fence's fds go to
			  * moat by (kernel/netfence.h); -1: no fence */
	int tty_fd;	 /* the command's end of its pty (launch/term.h); -1: none */
	unsigned tty_fds; /* bit i: the command's fd i is that pty */
};

/* Runs in the first child; never returns. */
_Noreturn void child_main(const struct child_args *a);

#endif
