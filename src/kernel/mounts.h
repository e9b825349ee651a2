/* The native backend's mount namespace: the view planned in resolve/view.h,
 * applied by the child.  The parent plans (and allocates everything the
 * child needs: the child allocates nothing); the child, in its new user and
 * mount namespace,
 *
 *   1. makes propagation private, so nothing reaches back to the host;
 *   2. opens every object the view binds, by its real path, and checks it is
 *      the object the parent planned (device and inode): a name swapped since
 *      planning (a link planted, a directory renamed) fails the start;
 *   3. builds the new root on a tmpfs: the binds (new mount API: open_tree,
 *      mount_setattr on the detached copy, move_mount onto a target resolved
 *      without following any link and checked like the source), the private
 *      tmpfs, masks, pins, /dev, /proc, the symlinks and directories the view
 *      makes;
 *   4. makes the skeletons and the root read-only, and pivots into it; the old
 *      root is detached, so nothing of the host remains but what is bound. */
#ifndef MOAT_KERNEL_MOUNTS_H
#define MOAT_KERNEL_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "resolve/fsplan.h"
#include "resolve/view.h"

struct native_mounts {
	bool enabled;
	struct view view;
	int *fds;  /* per op, for the child: the source it opened, and the
		    * skeleton mounts to seal (allocated by the parent) */
	int *mfds;
};

void native_mounts_init(struct native_mounts *m);
/* Plan the view for `fp` and allocate what the child needs. */
void native_mounts_plan(struct native_mounts *m, const struct moat_policy *p, const struct fs_plan *fp, bool landlock);
void native_mounts_free(struct native_mounts *m);

/* Child, inside the new user and mount namespace, as pid 1 of the new pid
 * namespace (for /proc).  Returns 0, or -errno with `what` (len bytes)
 * naming the step and the path. */
int mounts_apply(const struct native_mounts *m, const struct fs_plan *fp, char *what, size_t len);

/* Open `rel` (relative, no leading '/') below `root`, never following a
 * link; with `make`, missing components are made as directories (and the
 * last as a file when !dir): only on the sandbox's own tmpfs.  Returns an
 * O_PATH descriptor or -errno.  Allocates nothing (the native child uses
 * it); moat __init too, on the view an external tool mounted. */
int mounts_open_beneath(int root, const char *rel, bool make, bool dir);

#endif
