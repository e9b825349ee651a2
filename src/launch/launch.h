/* Launch: start the command as the plan says, supervise it (signals,
 * timeout, the process tree), and give back how it ended. */
#ifndef MOAT_LAUNCH_LAUNCH_H
#define MOAT_LAUNCH_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/netfence.h"
#include "kernel/netproxy.h"
#include "launch/netlog.h"
#include "policy/netdest.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "util/err.h"

/* SIGTERM first; SIGKILL this long after, when --timeout expires. */
#define MOAT_TIMEOUT_GRACE_MS 2000
/* moat's exit status when --timeout expired (as coreutils' timeout). */
#define MOAT_EXIT_TIMEOUT 124

/* What moat's clean-up after the run left on the host (api/run.c): a
 * placeholder it could not remove, a watched entry the command made. */
struct moat_leftover {
	char *path;
	char *kept_as;	  /* the new name it was moved aside to, "" when it
			   * was removed, NULL when it is left in place */
	const char *what; /* "placeholder", "watched", "tmpdir", "cgroup" (the tree's), "workdir"
			   * (the backend's), or a SysV IPC object of the
			   * host's (launch/sysvipc.h): "sysv_shm", "sysv_sem",
			   * "sysv_msg", whose path is its /proc/sysvipc table */
	bool ipc;	  /* a SysV IPC object: */
	int ipc_id;	  /* its id (ipcs, ipcrm) */
	int ipc_key;	  /* its key (0: IPC_PRIVATE) */
};

struct moat_launch_result {
	bool executed;       /* execve succeeded */
	bool exited;         /* the command ended with exit() */
	int exit_status;     /* when exited */
	int signal;          /* when killed by a signal, else 0 */
	bool timed_out;
	const char *limit_hit; /* "cpu" when --cpu ended the tree (moat's read of its
				* CPU time, or a process's RLIMIT_CPU), else NULL */
	int64_t memory_peak;   /* the tree's memory cgroup's peak, bytes; -1: none */
	int64_t oom_kills;     /* processes the OOM killer ended there; -1: none */
	int64_t pids_refused;  /* forks and threads --pids refused there; -1: none */
	int64_t cpu_usec;      /* the tree's CPU time, from its cgroup; -1: none */
	int exit_code;       /* what moat exits with */
	double exec_ms;      /* from moat's start to execve */
	double run_ms;       /* from execve to the end */
	char failure[MOAT_ERR_MSG_MAX]; /* when !executed: what failed */
	bool fenced;                 /* net allow: the fence served the run */
	struct netfence_stats fence; /* what it did, when fenced */
	struct netlog netlog;        /* its decisions, name by name (launch_result_free) */
	struct netproxy_stats proxy; /* the proxy mode's counts, when fenced */
	char upstream[3][NET_PROXY_HOST_MAX + 24]; /* the host's proxies moat's connects used
						    * (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; no
						    * credentials), or "" */
	struct moat_leftover *left; /* after the run (launch_result_free) */
	size_t n_left;
};

void launch_result_free(struct moat_launch_result *r);

/* `moat_start_ns`: CLOCK_MONOTONIC at moat's start, for exec_ms.
 * `events_fd`: --events-fd (checked: report/dest.h), or -1.
 * `spare`: a child of moat's that is not the command's (moat's guard, or
 * -1): left alone when the tree is killed.
 * `term`: the command's terminal (launch/term.h), or NULL: relayed for
 * the run, the caller's terminal raw meanwhile and as it was at the end.
 * Makes the tree's cgroup (plan->limits) when there is one; the caller
 * removes it (host_cleanup, launch/guard.h).
 * Returns 0 when the command ran or failed in a way the result says (exit
 * codes 126/127/125 with `failure`); -1 only when moat could not start. */
struct term;
int launch_run(const struct moat_policy *p, struct moat_plan *plan, struct term *term, long long moat_start_ns,
	       int events_fd, pid_t spare, struct moat_launch_result *r, struct moat_error *err);

long long moat_now_ns(void);

#endif
