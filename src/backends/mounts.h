/* The mounts of a sandbox whose root holds nothing but the grants: what the
 * bwrap and oci backends both build (docs/backends.md).  Planned once from
 * the policy, as the native backend's Landlock view would show it:
 *
 *   - read grants are read-only binds, write grants read-write binds;
 *   - a granted symlink whose target is granted too stays a symlink (/bin ->
 *     usr/bin on Debian), so one view and one set of masks shows the files;
 *   - /proc and /dev are fresh; /tmp and /dev/shm are fresh tmpfs (when the
 *     policy has a private /tmp), so is HOME unless it is granted whole;
 *   - each denied path is masked at every place a bind shows it;
 *   - with net all, the socket directories of /run are masked too.
 *
 * The ops come sorted by destination, so a parent is always mounted before
 * what lies below it. */
#ifndef MOAT_BACKENDS_MOUNTS_H
#define MOAT_BACKENDS_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* The kinds, in the order they are applied when two share a destination.
 * The comments name bwrap's spelling; backends/oci.c maps each to an OCI
 * mount. */
enum mount_kind {
	MOUNT_PROC,      /* --proc */
	MOUNT_DEV,       /* --dev */
	MOUNT_TMPFS,     /* --perms MODE --tmpfs: /tmp, /dev/shm, HOME, /run */
	MOUNT_BIND_RO,   /* --ro-bind */
	MOUNT_BIND_RW,   /* --bind */
	MOUNT_DEV_BIND,  /* --dev-bind (+ --remount-ro for a read grant) */
	MOUNT_SYMLINK,   /* --symlink: a granted link whose target is granted too */
	MOUNT_MASK_DIR,  /* --perms 0000 --tmpfs, --remount-ro */
	MOUNT_MASK_FILE, /* --ro-bind /dev/null: nodev, so open(2) is EACCES */
	MOUNT_DIR,       /* --dir: the cwd when nothing shows it */
};

struct mount_op {
	enum mount_kind kind;
	char *dest;     /* path inside the sandbox */
	char *src;      /* bind source, symlink target */
	char *src_real; /* binds: the host directory the view shows */
	bool read_only; /* MOUNT_DEV_BIND */
	unsigned mode;  /* MOUNT_TMPFS */
};

struct mount_plan {
	struct mount_op *v;
	size_t n, cap;
	size_t n_masks; /* how many MOUNT_MASK_* ops */
};

/* Plan every mount of the sandbox for `p` into *o (zeroed first). */
void mount_plan_build(const struct moat_policy *p, struct mount_plan *o);
void mount_plan_free(struct mount_plan *o);
bool mount_is_bind(enum mount_kind k);
/* The op whose destination is the longest ancestor-or-equal of `path`
 * (masks and MOUNT_DIR excluded): what shows `path`, or NULL when only the
 * empty root does. */
const struct mount_op *mount_plan_cover(const struct mount_plan *o, const char *path);

#endif
