#include "native/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/mem.h"

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
 * on a tmpfs mounted over /tmp only for this, which is detached again at
 * once: the bind mounts keep the file alive, nothing else can reach it, and
 * /tmp is then whatever the plan puts there.  (A memfd cannot be the source
 * of a bind mount: it lives on a kernel-internal mount.) */
#define STAGING "/tmp"
#define MASK_FILE STAGING "/moat-mask"

static int make_mask_file(void)
{
	int fd;

	if (mount("moat-stage", STAGING, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0700") != 0)
		return -errno;
	fd = open(MASK_FILE, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

#define MASK_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

static int bind_mask_file(const char *target)
{
	if (mount(MASK_FILE, target, NULL, MS_BIND, NULL) != 0 ||
	    mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MASK_FLAGS, NULL) != 0)
		return -errno;
	return 0;
}

static int apply_one(const struct native_mount *it)
{
	switch (it->kind) {
	case NATIVE_MOUNT_MASK_DIR:
		/* Read-only and empty: the secret is not there to read, and
		 * nothing can be hidden in its place either. */
		if (mount("moat-mask", it->target, "tmpfs", MASK_FLAGS | MS_RDONLY, "size=4k,nr_inodes=1,mode=0000") != 0)
			return -errno;
		return 0;
	case NATIVE_MOUNT_MASK_FILE:
		return 0; /* done in the first pass */
	case NATIVE_MOUNT_TMPFS:
		if (mount("moat-tmp", it->target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
			return -errno;
		return 0;
	case NATIVE_MOUNT_PROC:
		if (mount("proc", it->target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
			return -errno;
		return 0;
	}
	return -EINVAL;
}

int mounts_apply(const struct native_mounts *m, const char **failed)
{
	bool staged = false;
	size_t i;
	int rc;

	*failed = "/";
	/* Private propagation first: nothing mounted here may leak back to the
	 * host's mount namespace, and no host mount event reaches in. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return -errno;

	/* First pass: file masks, while the staging tmpfs is on /tmp. */
	for (i = 0; i < m->n; i++) {
		if (m->items[i].kind != NATIVE_MOUNT_MASK_FILE)
			continue;
		*failed = m->items[i].target;
		if (!staged && (rc = make_mask_file()) < 0)
			return rc;
		staged = true;
		if ((rc = bind_mask_file(m->items[i].target)) < 0)
			return rc;
	}
	if (staged && umount2(STAGING, MNT_DETACH) != 0) {
		*failed = STAGING;
		return -errno;
	}
	for (i = 0; i < m->n; i++) {
		*failed = m->items[i].target;
		if ((rc = apply_one(&m->items[i])) < 0)
			return rc;
	}
	return 0;
}
