/* The cgroup that holds the whole tree (resolve/limits.h decides which
 * hierarchies and names it): made before the first child runs, the child
 * put in it before it does anything, the limits written and read back,
 * the tree killed through it, removed after the run -- by moat, or by
 * moat's guard (launch/guard.h) when moat dies. */
#ifndef MOAT_LAUNCH_CGROUP_H
#define MOAT_LAUNCH_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "resolve/limits.h"
#include "policy/policy.h"
#include "util/err.h"

/* Make the cgroups lp names and write the limits; each value is read back
 * and must hold (a kernel that rounds or refuses is an error, not a weaker
 * sandbox).  On failure nothing of this run's is left, and a name someone
 * else made meanwhile (a moat of the same pid in another pid namespace) is
 * dropped from lp: never killed or removed by the clean-up after. */
int tree_cgroup_create(struct limits_plan *lp, const struct moat_limits *l, struct moat_error *err);

/* The v2 cgroup's directory, opened for clone3's CLONE_INTO_CGROUP (the
 * child starts there: no migration), or -1 when lp names no v2 cgroup or
 * it cannot be opened (then tree_cgroup_add moves the child). */
int tree_cgroup_open_v2(const struct limits_plan *lp);

/* Put `pid` in every one of them; with `v2_done`, in the v1 ones only (it
 * was cloned into the v2 one). */
int tree_cgroup_add(const struct limits_plan *lp, pid_t pid, bool v2_done, struct moat_error *err);

/* The tree's CPU time so far in microseconds (for --cpu), or -1. */
int64_t tree_cgroup_cpu_usec(const struct limits_plan *lp);

/* Kill every process in the tree's cgroup and wait (bounded) until none is
 * left.  Returns 0 when the cgroup is empty, -1 when processes remain. */
int tree_cgroup_kill(const struct limits_plan *lp);

/* Job control without a pid namespace (launch.c, tree_job_stop): the
 * command's process group is not the tree -- a process of it may lead a
 * session of its own -- so the tree is stopped by freezing its cgroup, and
 * thawed when moat is continued.  0 when frozen (or thawed), -1 when the
 * plan has no cgroup for the tree or the freeze did not take. */
int tree_cgroup_freeze(const struct limits_plan *lp, bool on);

/* The counters of the tree's cgroup that say a limit was reached, opened
 * right after tree_cgroup_create, before anything of the command runs,
 * from descriptors of the directories moat made (O_NOFOLLOW): read through
 * them, never by a path the tree could swap later.  -1 where no cgroup of
 * moat's holds that limit. */
struct tree_counters {
	int pids_events;   /* pids.events ("max": forks and threads refused) */
	int memory_events; /* v2 memory.events, or v1 memory.oom_control ("oom_kill") */
	int memory_peak;   /* v2 memory.peak, or v1 memory.max_usage_in_bytes */
	/* pids.events is a v2 file: the kernel wakes a poll for POLLPRI when
	 * it changes.  v1's is never notified (measured here, Linux 6.18): it
	 * is read at intervals instead. */
	bool pids_notify;
};
#define TREE_COUNTERS_NONE {.pids_events = -1, .memory_events = -1, .memory_peak = -1}

void tree_counters_open(const struct limits_plan *lp, struct tree_counters *c);
void tree_counters_close(struct tree_counters *c);

/* After the run: the memory cgroup's peak usage and how many processes the
 * kernel's OOM killer ended there (-1: no memory cgroup of moat's). */
void tree_cgroup_memory_stats(const struct tree_counters *c, int64_t *peak, int64_t *oom_kills);
/* How many forks (and threads) the tree's pids.max refused so far
 * (pids.events "max"), or -1 where no cgroup of moat's holds --pids.
 * Also rearms the POLLPRI of a v2 pids.events. */
int64_t tree_cgroup_pids_refused(const struct tree_counters *c);

/* Kill what is left and remove the cgroups (what does not exist is
 * skipped: safe to call twice, and from the guard).  `left` (or NULL) is
 * called with each cgroup directory that could not be removed and the
 * errno of its last rmdir; the number of those is returned. */
size_t tree_cgroup_destroy(const struct limits_plan *lp, void (*left)(void *ctx, const char *path, int errnum),
			   void *ctx);

#endif
