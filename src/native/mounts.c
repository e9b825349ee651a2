#include "native/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/mem.h"
#include "util/path.h"

void mounts_add(struct native_mounts *m, enum native_mount_kind kind, const char *target)
{
	m->items = moat_xgrow(m->items, &m->cap, m->n, sizeof(*m->items));
	m->items[m->n].kind = kind;
	m->items[m->n].target = moat_xstrdup(target);
	m->n++;
}

void mounts_free(struct native_mounts *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->items[i].target);
	free(m->items);
	memset(m, 0, sizeof(*m));
}

/* An empty file with no permissions, to bind over denied files.  It is made
 * on a tmpfs mounted only for this over a staging directory, which is
 * detached again at once: the bind mounts keep the file alive, nothing else
 * can reach it, and the directory is then whatever the plan puts there.  (A
 * memfd cannot be the source of a bind mount: it lives on a kernel-internal
 * mount.)
 *
 * Fix: the staging directory must not be an ancestor of any file to mask,
 * or the targets (a HOME or a project under /tmp: ~/.netrc) are hidden by
 * the staging tmpfs while they are bound over, and the run fails with
 * ENOENT.  The first candidate that covers no target is used. */
static const char *const staging_candidates[] = {"/tmp", "/mnt", "/media", "/srv", "/var/tmp", "/opt", "/dev/shm"};

static char mask_file[64];

static const char *pick_staging(const struct native_mounts *m)
{
	for (size_t c = 0; c < sizeof(staging_candidates) / sizeof(staging_candidates[0]); c++) {
		const char *dir = staging_candidates[c];
		struct stat st;
		bool covers = false;

		if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		for (size_t i = 0; i < m->n && !covers; i++)
			covers = (m->items[i].kind == NATIVE_MOUNT_MASK_FILE || m->items[i].kind == NATIVE_MOUNT_MASK_DIR) &&
				 path_within(m->items[i].target, dir);
		if (!covers)
			return dir;
	}
	return NULL;
}

static char mask_dir[64];

#define MASK_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* The staging tmpfs holds one empty file and one empty directory, both mode
 * 0, and is then made read-only as a whole (the superblock, not a mount):
 * every mask is a single bind from it and is read-only and empty with no
 * remount of its own. */
static int make_masks_source(const char *staging)
{
	int fd;

	if (mount("moat-stage", staging, "tmpfs", MASK_FLAGS, "size=4k,nr_inodes=4,mode=0700") != 0)
		return -errno;
	snprintf(mask_file, sizeof(mask_file), "%s/moat-mask", staging);
	snprintf(mask_dir, sizeof(mask_dir), "%s/moat-mask-dir", staging);
	fd = open(mask_file, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	close(fd);
	if (mkdir(mask_dir, 0) != 0)
		return -errno;
	if (mount(NULL, staging, NULL, MS_REMOUNT | MS_RDONLY | MASK_FLAGS, "size=4k,nr_inodes=4,mode=0700") != 0)
		return -errno;
	return 0;
}

static int bind_mask(const char *target, bool dir)
{
	if (mount(dir ? mask_dir : mask_file, target, NULL, MS_BIND, NULL) != 0)
		return -errno;
	return 0;
}

/* Will a fresh tmpfs be mounted on `dir` anyway?  Then the staging tmpfs
 * can stay beneath it instead of being detached (umount2 waits for an RCU
 * grace period). */
static bool covered_later(const struct native_mounts *m, const char *dir)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->items[i].kind == NATIVE_MOUNT_TMPFS && strcmp(m->items[i].target, dir) == 0)
			return true;
	return false;
}

/* A minimal /dev, as bubblewrap makes it: no disks, no /dev/kvm, no
 * /dev/mem, nothing to mknod into.  The device nodes themselves (null,
 * zero, full, random, urandom) are KEEP items bound back by restore_kept;
 * their bind mounts keep the host's flags, so this tmpfs can be nodev. */
static int make_dev(const char *dev)
{
	static const char *const links[][2] = {
		{"fd", "/proc/self/fd"},
		{"stdin", "/proc/self/fd/0"},
		{"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"},
	};
	char path[256];
	size_t i;

	if (mount("moat-dev", dev, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k") != 0)
		return -errno;
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dev, links[i][0]);
		if (symlink(links[i][1], path) != 0)
			return -errno;
	}
	snprintf(path, sizeof(path), "%s/shm", dev);
	if (mkdir(path, 01777) != 0)
		return -errno;
	return 0;
}

static int apply_one(const struct native_mount *it)
{
	switch (it->kind) {
	case NATIVE_MOUNT_WRITABLE:
	case NATIVE_MOUNT_MASK_DIR:
	case NATIVE_MOUNT_MASK_FILE:
	case NATIVE_MOUNT_KEEP:
		return 0; /* done in their own passes */
	case NATIVE_MOUNT_TMPFS:
		if (mount("moat-tmp", it->target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
			return -errno;
		return 0;
	case NATIVE_MOUNT_PROC:
		if (mount("proc", it->target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
			return -errno;
		return 0;
	case NATIVE_MOUNT_DEV:
		return make_dev(it->target);
	}
	return -EINVAL;
}

#define ARRAY_SIZE_FDS 128

/* mkdir -p of the directories above `path`, then the mount point itself,
 * of the same type as what will be bound there. */
static int make_mountpoint(const char *path, bool dir)
{
	char buf[4096];
	size_t i, len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (i = 1; i < len; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		buf[i] = '/';
	}
	if (dir) {
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -errno;
	} else {
		int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		close(fd);
	}
	return 0;
}

static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Is `path` (lexically) inside a masked, denied path? */
static bool masked(const struct native_mounts *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if ((m->items[i].kind == NATIVE_MOUNT_MASK_DIR || m->items[i].kind == NATIVE_MOUNT_MASK_FILE) &&
		    path_within(path, m->items[i].target))
			return true;
	return false;
}

/* Bind the kept paths below `dir` (just replaced by a tmpfs) back, from the
 * O_PATH fds opened before it was covered.
 *
 * Fix 1: shortest path first, so that a grant nested in another kept grant
 * is bound on top of it, not hidden under it.
 * Fix 2: a kept path that is, or resolves to (a planted symlink), a path
 * inside a denied one is not bound.  Landlock cannot refuse it here: the
 * rule on the private tmpfs covers everything mounted below it, so the mask
 * is all that stands in the way, and a mask over .ssh does not come along
 * with a bind of .ssh/id_ed25519 itself.  (Read-only grants are made
 * read-only mounts by the child, launch/child.c, for the same reason.) */
static int restore_kept(const struct native_mounts *m, const int *fds, const char *dir, const char **failed)
{
	size_t last_len = 0, last_i = 0;
	bool first = true;

	for (;;) {
		char src[64], real[4096];
		struct stat st;
		size_t i, pick = m->n, pick_len = 0;
		ssize_t n;
		int rc;

		for (i = 0; i < m->n; i++) {
			size_t len;

			if (m->items[i].kind != NATIVE_MOUNT_KEEP || fds[i] < 0 || !below(m->items[i].target, dir))
				continue;
			len = strlen(m->items[i].target);
			if (!first && (len < last_len || (len == last_len && i <= last_i)))
				continue;
			if (pick == m->n || len < pick_len) {
				pick = i;
				pick_len = len;
			}
		}
		if (pick == m->n)
			return 0;
		first = false;
		last_len = pick_len;
		last_i = pick;
		i = pick;

		*failed = m->items[i].target;
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fds[i]);
		n = readlink(src, real, sizeof(real) - 1);
		if (n < 0)
			return -errno;
		real[n] = '\0';
		if (masked(m, m->items[i].target) || masked(m, real))
			continue;
		if (fstat(fds[i], &st) != 0)
			return -errno;
		if ((rc = make_mountpoint(m->items[i].target, S_ISDIR(st.st_mode))) < 0)
			return rc;
		if (mount(src, m->items[i].target, NULL, MS_BIND | MS_REC, NULL) != 0)
			return -errno;
	}
}

static int apply_all(const struct native_mounts *m, const int *fds, const char **failed)
{
	size_t i;
	int rc;

	for (i = 0; i < m->n; i++) {
		*failed = m->items[i].target;
		if ((rc = apply_one(&m->items[i])) < 0)
			return rc;
		if ((m->items[i].kind == NATIVE_MOUNT_TMPFS || m->items[i].kind == NATIVE_MOUNT_DEV) &&
		    (rc = restore_kept(m, fds, m->items[i].target, failed)) < 0)
			return rc;
	}
	return 0;
}

/* mount_setattr(2), from Linux 5.12; declared here for older headers. */
struct moat_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};
#define MOAT_MOUNT_ATTR_RDONLY 0x00000001
#define MOAT_MOUNT_ATTR_NOSUID 0x00000002
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

static int set_attr(const char *path, uint64_t set, uint64_t clr)
{
	struct moat_mount_attr attr = {.attr_set = set, .attr_clr = clr};

	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof(attr)) != 0)
		return -errno;
	return 0;
}

/* The last pass: write grants become read-write mounts again (a bind of the
 * path onto itself, so that only it is cleared).  EPERM: the host mount is
 * itself read-only and locked so; nothing could be written there anyway. */
static int reopen_writable(const struct native_mounts *m, const char **failed)
{
	size_t i;
	int rc;

	for (i = 0; i < m->n; i++) {
		const char *t = m->items[i].target;

		if (m->items[i].kind != NATIVE_MOUNT_WRITABLE)
			continue;
		*failed = t;
		if (mount(t, t, NULL, MS_BIND | MS_REC, NULL) != 0)
			return errno == ENOENT ? 0 : -errno;
		if ((rc = set_attr(t, 0, MOAT_MOUNT_ATTR_RDONLY)) < 0 && rc != -EPERM)
			return rc;
	}
	return 0;
}

int mounts_apply(const struct native_mounts *m, const char **failed)
{
	int fds[ARRAY_SIZE_FDS];
	const char *staging = NULL;
	size_t i;
	int rc;

	if (m->n > ARRAY_SIZE_FDS)
		return -E2BIG;
	/* Open what must survive before anything covers it.  Opened here, in
	 * the new mount namespace: a bind mount's source must be in it. */
	for (i = 0; i < m->n; i++) {
		fds[i] = -1;
		if (m->items[i].kind == NATIVE_MOUNT_KEEP)
			fds[i] = open(m->items[i].target, O_PATH | O_CLOEXEC);
	}

	*failed = "/";
	/* Private propagation first: nothing mounted here may leak back to the
	 * host's mount namespace, and no host mount event reaches in. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return -errno;
	/* The whole view read-only and nosuid, in one call: Landlock governs
	 * file contents but not chmod, chown, utimes or xattrs, so without this
	 * a command could change the metadata of host files outside its write
	 * grants (as root: make a host binary setuid).  Write grants are made
	 * read-write again at the end. */
	if ((rc = set_attr("/", MOAT_MOUNT_ATTR_RDONLY | MOAT_MOUNT_ATTR_NOSUID, 0)) < 0)
		return rc;

	/* First pass: masks (read-only and empty: the secret is not there to
	 * read, and nothing can be hidden in its place either), while the
	 * staging tmpfs is mounted. */
	for (i = 0; i < m->n; i++) {
		enum native_mount_kind k = m->items[i].kind;

		if (k != NATIVE_MOUNT_MASK_FILE && k != NATIVE_MOUNT_MASK_DIR)
			continue;
		*failed = m->items[i].target;
		if (!staging) {
			staging = pick_staging(m);
			if (!staging)
				return -ENOTDIR; /* every staging candidate covers a target */
			if ((rc = make_masks_source(staging)) < 0)
				return rc;
		}
		if ((rc = bind_mask(m->items[i].target, k == NATIVE_MOUNT_MASK_DIR)) < 0)
			return rc;
	}
	if (staging && !covered_later(m, staging) && umount2(staging, MNT_DETACH) != 0) {
		*failed = staging;
		return -errno;
	}
	rc = apply_all(m, fds, failed);
	if (rc == 0)
		rc = reopen_writable(m, failed);
	for (i = 0; i < m->n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}
