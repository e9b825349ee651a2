/* Mount-namespace steps: private propagation, masks over denied paths, a
 * private /tmp, /dev/shm and /run, and a fresh /proc for the pid namespace.
 * Planned in the parent as a list; applied by the child in list order. */
#ifndef MOAT_NATIVE_MOUNTS_H
#define MOAT_NATIVE_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

enum native_mount_kind {
	NATIVE_MOUNT_MASK_DIR,  /* an empty read-only tmpfs over a directory */
	NATIVE_MOUNT_MASK_FILE, /* an empty unreadable file bound over a file */
	NATIVE_MOUNT_TMPFS,     /* a fresh writable tmpfs (private tmp) */
	NATIVE_MOUNT_PROC,      /* a fresh procfs for the new pid namespace */
	NATIVE_MOUNT_DEV,       /* a minimal /dev: a tmpfs with the kept device
				 * nodes bound in, and the /proc/self/fd links */
	NATIVE_MOUNT_WRITABLE,  /* a write grant: made a read-write mount again
				 * after the whole view was made read-only */
	NATIVE_MOUNT_KEEP,      /* a granted path (or the cwd) below a replaced
				 * directory: bound back into the fresh tmpfs */
};

struct native_mount {
	enum native_mount_kind kind;
	char *target;
};

struct native_mounts {
	bool enabled;
	struct native_mount *items;
	size_t n, cap;
};

void mounts_add(struct native_mounts *m, enum native_mount_kind kind, const char *target);
void mounts_free(struct native_mounts *m);

/* Child, inside the new user+mount namespace.  On failure returns -errno
 * and points *failed at the target that failed. */
int mounts_apply(const struct native_mounts *m, const char **failed);

#endif
