/* The native backend's in-child program as data: made empty, freed, and
 * what it left on the host removed.  Apart from native.c, which compiles
 * it, so that the helpers every backend plan uses (backends/util.c) can
 * free one without depending on the compiler. */
#include "backends/native.h"

#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/rmtree.h"

void native_plan_init(struct native_plan *np)
{
	memset(np, 0, sizeof(*np));
	native_mounts_init(&np->mounts);
	landlock_plan_init(&np->landlock);
	np->private_tmp_fd = -1;
	np->private_tmp_lock = -1;
}

void native_plan_free(struct native_plan *np)
{
	native_mounts_free(&np->mounts);
	landlock_plan_free(&np->landlock);
	moat_bpf_free(&np->bpf);
	free(np->private_tmp_dir);
	if (np->private_tmp_fd >= 0)
		close(np->private_tmp_fd);
	moat_closep(&np->private_tmp_lock);
	memset(np, 0, sizeof(*np));
	np->landlock.ruleset_fd = -1;
	np->private_tmp_fd = -1;
	np->private_tmp_lock = -1;
}

int native_remove_tmp(struct native_plan *np)
{
	int rc;

	if (!np->private_tmp_dir || np->private_tmp_tried)
		return 0;
	np->private_tmp_tried = true;
	rc = rmtree(np->private_tmp_dir);
	rmtree_warn("the per-run TMPDIR", np->private_tmp_dir, rc);
	return rc;
}

void native_cleanup(struct native_plan *np)
{
	/* By descriptors: the tree may still run here (no pid namespace),
	 * and swap a directory of its tmp for a link (util/rmtree.h).  A run
	 * removed it before its report (native_remove_tmp); this is for the
	 * other ends (a refusal, moat's guard after moat died). */
	if (np->private_tmp_dir && !np->private_tmp_tried)
		(void)native_remove_tmp(np);
	/* Gone: a sweep may pass where it was. */
	moat_closep(&np->private_tmp_lock);
	np->private_tmp_lock = -1;
}
