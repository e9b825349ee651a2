/* The native Linux backend: a compiler from the policy to kernel
 * mechanisms (namespaces, mounts, rlimits, Landlock, seccomp), and the
 * child-side program that applies what was compiled.  Its compile runs in
 * the parent and decides, per property, what will enforce it; the launcher
 * (launch/) applies the program in the order written in launch/child.c. */
#ifndef MOAT_BACKENDS_NATIVE_H
#define MOAT_BACKENDS_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "kernel/landlock.h"
#include "kernel/mounts.h"
#include "kernel/seccomp.h"
#include "resolve/fsplan.h"
#include "host/host.h"
#include "resolve/limits.h"
#include "policy/policy.h"
#include "util/err.h"

struct moat_verdict;

struct native_plan {
	/* Namespaces: clone flags for the first child. */
	int clone_flags;
	bool pid_init;      /* a pid namespace: the first child is its init */
	uid_t outer_uid;    /* mapped to the same id inside the user namespace */
	gid_t outer_gid;

	struct native_mounts mounts; /* applied in the mount namespace */
	struct native_landlock landlock;
	bool use_seccomp;
	bool net_fence; /* net allow: the fence (kernel/netfence.h) is set up
			 * in the child and served by moat (launch/fence.h) */
	struct moat_bpf bpf;

	char *private_tmp_dir; /* without a mount namespace: a per-run TMPDIR,
				* /tmp/NATIVE_TMP_PREFIX.PID.XXXXXX */
	int private_tmp_fd;    /* its descriptor, for the Landlock rule */
	int private_tmp_lock;  /* its lock, held by moat and its guard until it
				* is removed (util/stale.h), or -1 */
	bool private_tmp_tried; /* native_remove_tmp ran: not again */
};

/* The per-run TMPDIR's prefix (util/stale.h): moat's guard sweeps those of
 * moats that are gone. */
#define NATIVE_TMP_PREFIX "moat-tmp"

void native_plan_init(struct native_plan *np);
void native_plan_free(struct native_plan *np);

/* The native backend (backend_native, backends/backend.h) compiles the
 * policy for this host into a native_plan, bp->in_child, and fills props[]
 * for everything it enforces.  It fails only on errors (bad paths in
 * require mode, libseccomp failures), never because a feature is missing:
 * that is a verdict.  Its rlimits and limits are the backend plan's own
 * (bp->rlimits, bp->limits), as for every backend. */

/* After the run: remove what the run created on the host (the per-run tmp). */
void native_cleanup(struct native_plan *np);

/* The per-run TMPDIR removed once the tree has ended, before the report is
 * written (native_cleanup then leaves it): 0, or -errno (-E2BIG: too many
 * entries, util/rmtree.h) when it is left on the host, said on stderr.  Its
 * verdict says "removed afterwards": the caller says in the report that it
 * was not. */
int native_remove_tmp(struct native_plan *np);

#endif
