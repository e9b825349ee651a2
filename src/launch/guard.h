/* moat's guard: a small process, forked from moat after planning and before
 * moat changes anything on the host, that undoes those changes if moat dies
 * without doing it itself (SIGKILL, the OOM killer, a crash).
 *
 * What moat leaves on the host during a run: the tree's cgroup (with the
 * tree in it, when there is no pid namespace), the placeholders of absent
 * protected entries, an external backend's work directory and its
 * runtime's state (runc keeps a container record and a cgroup), the
 * per-run tmp without a mount namespace.  All of it is named in the plan
 * before the guard is forked, so the guard knows it without being told.
 *
 * The guard holds the read end of a pipe whose only writer is moat.  moat
 * says "done" (one byte) after its own clean-up; end of file without it
 * means moat is gone, and the guard kills the tree through its cgroup, runs
 * the backend's clean-up command (`runc delete --force ID`), removes what
 * is left, and exits.  It runs in a session of its own (no terminal
 * signals), with no descriptor of moat's but that pipe, so it keeps no pipe
 * of the caller's open.  Beside the command, it also sweeps the per-run
 * tmps of moats that are gone (util/stale.h), which moat would otherwise do
 * before starting the command, until moat says it is done. */
#ifndef MOAT_LAUNCH_GUARD_H
#define MOAT_LAUNCH_GUARD_H

#include <stdbool.h>
#include <sys/types.h>

#include "plan/plan.h"
#include "util/err.h"

struct moat_guard {
	pid_t pid; /* -1: none */
	int fd;    /* the write end; -1: none */
};

/* Is there anything on the host a guard would have to undo? */
bool guard_needed(const struct moat_plan *plan);

/* Fork the guard for `plan`.  g->pid is -1 when none is needed. */
int guard_start(struct moat_guard *g, struct moat_plan *plan, struct moat_error *err);

/* fs_placeholders_make's `made` (ctx: the guard): moat made the placeholder
 * of object `index`, still under its temporary name; tell the guard its
 * identity, so that it removes exactly that object. */
void guard_placeholder_made(void *ctx, size_t index, dev_t dev, ino_t ino);

/* moat cleaned up itself: tell the guard, and reap it. */
void guard_done(struct moat_guard *g);

/* What the guard does, and what moat does after a normal run: kill the tree
 * through its cgroup and remove it, run the backend's clean-up command,
 * remove the placeholders (and the temporary names `moat_pid` made them
 * under), the per-run tmp and the work directory. */
void host_cleanup(struct moat_plan *plan, pid_t moat_pid, bool moat_died);
/* On stderr: `n` placeholders (the first at `first`) could not be removed
 * after the run. */
void say_placeholders_left(const char *first, size_t n);

#endif
