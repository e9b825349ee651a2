/* The sandbox's file-system view, planned from the objects of the plan
 * (resolve/fsplan.h): a root that holds only what is granted, as bubblewrap
 * and the OCI runtimes build it.
 *
 *   - the root is an empty tmpfs, read-only at the end; parents of grants
 *     exist in it and show only the granted entries (`ls /` works);
 *   - each grant is its object bound at its real path (read grants
 *     read-only), and each symlink a read grant was reached through is
 *     recreated where it lies, so the policy's name still leads there
 *     (/bin -> usr/bin);
 *   - /proc is fresh, /dev minimal, /run, /tmp and /dev/shm private tmpfs;
 *     HOME, unless it is granted whole, a read-only skeleton holding only
 *     the grants below it;
 *   - a grant with denied paths below it ("expanded", fsplan.h) is either
 *     bound whole with each denied object masked (when Landlock binds the
 *     rules to the entries' inodes: opts.landlock), or *mounted entry by
 *     entry* into a read-only skeleton, so that the denied objects are not
 *     in the view at all -- what the external backends do, and native for
 *     a grant below a private tmpfs, whose own Landlock rule would cover
 *     everything mounted beneath it;
 *   - protected entries of write grants, and the directories leading to
 *     them, are bound onto themselves (read-only for the entries): a mount
 *     point cannot be renamed, removed or replaced from inside.
 *
 * Ops are sorted by destination, parents first.  Destinations are real
 * paths: the view mirrors the host's layout for what it shows. */
#ifndef MOAT_RESOLVE_VIEW_H
#define MOAT_RESOLVE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "resolve/fsplan.h"
#include "policy/policy.h"

enum view_kind {
	/* mounts of the sandbox's own, applied first at one destination */
	VIEW_PROC,     /* a fresh /proc */
	VIEW_DEV,      /* the minimal /dev (tmpfs; nodes are VIEW_BINDs) */
	VIEW_TMPFS,    /* a private, writable tmpfs: /tmp, /dev/shm, /run */
	VIEW_SKELETON, /* a tmpfs made read-only at the end, holding only what
			* is mounted or made below it */
	/* the host's objects */
	VIEW_BIND,     /* obj bound at dest */
	VIEW_PIN,      /* obj bound onto itself (read_only: a protected entry) */
	VIEW_MASK,     /* an empty, unreadable file or directory over obj */
	/* made in the sandbox's own tmpfs */
	VIEW_DIR,      /* an empty directory (the cwd, an empty chain dir) */
	VIEW_SYMLINK,  /* a symlink with `text` */
};

struct view_op {
	enum view_kind kind;
	char *dest;      /* where, in the sandbox; owned */
	int obj;         /* the object (BIND, PIN, MASK), index in the fs_plan */
	bool read_only;
	bool device;     /* BIND of a device node: devices stay usable */
	bool dir;        /* MASK: the object is a directory */
	bool made_here;  /* the mount point lies on the sandbox's own tmpfs and
			  * is made there (else it is in a host directory the
			  * view binds, must exist, and is the object itself) */
	char *text;      /* SYMLINK: owned */
	unsigned mode;   /* TMPFS, SKELETON */
	int64_t size;    /* TMPFS: its size in bytes (the policy's tmp size) */
};

struct view {
	struct view_op *v;
	size_t n, cap;
	size_t n_binds, n_masks, n_pins, n_expanded;
	size_t n_unpinned; /* absent protected entries left out (exports) */
	size_t n_links_unheld;   /* protected symlinks left out (links_as_text) */
	const char *link_unheld; /* the first of them (points into the fs_plan) */
	const char *home; /* HOME's skeleton (points into the fs_plan), or NULL */
};

struct view_opts {
	bool landlock;    /* the backend binds expanded grants' entries to
			   * inodes with Landlock: bind them whole, with masks */
	bool private_tmp; /* /tmp and /dev/shm private */
	bool no_placeholders; /* an export: nobody makes the placeholders of
			       * absent protected entries, so they are not
			       * pinned (counted in n_unpinned) */
	bool links_as_text; /* the backend mounts only on what a path leads to,
			     * never on a symlink itself (bwrap, the OCI
			     * runtimes, nsjail): a protected entry that is a
			     * link is made with its text (VIEW_SYMLINK) where
			     * the view makes its mount point, and where that is
			     * in a bound host directory it cannot be held: left
			     * out, counted in n_links_unheld */
};

void view_build(const struct moat_policy *p, const struct fs_plan *fp, const struct view_opts *o, struct view *out);
void view_free(struct view *v);

/* The op whose destination is the longest ancestor-or-equal of `path` among
 * the mounts (PROC, DEV, TMPFS, SKELETON, BIND, PIN, MASK), or NULL when
 * only the root shows it. */
const struct view_op *view_cover(const struct view *v, const char *path);

/* HOME's real path when the view gives it a skeleton of its own: when HOME
 * is known and no grant shows it whole.  NULL otherwise. */
const char *view_private_home(const struct fs_plan *fp);

const char *view_kind_name(enum view_kind k);

/* The inodes of a private tmpfs of `size` bytes: one per page of it.
 * size= counts file data only, and the kernel's default is half the host's
 * pages: 50000 empty files in a 1 MiB /tmp took 60 MiB of kernel memory
 * (~1 KiB each).  One per page bounds them by what one-page files would
 * take anyway (tests/blackbox/limits_tree.sh). */
static inline int64_t view_tmpfs_inodes(int64_t size)
{
	return size / 4096;
}

#endif
