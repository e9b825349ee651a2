#include "util/stale.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/rmtree.h"

static bool same_object(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* tmpfd/name, a directory of this user whose moat is gone: removed while
 * holding its lock, so that its moat cannot be running in some other pid
 * namespace (it holds the lock until its directory is gone). */
static void sweep_one(int tmpfd, const char *name)
{
	cleanup_close int fd = openat(tmpfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat held, now;
	int rc;

	if (fd < 0 || fstat(fd, &held) != 0 || held.st_uid != geteuid())
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		return; /* its moat, or its guard, runs: wherever that is */
	/* Locked: the name must still be this directory (not one made at a
	 * name freed meanwhile), and the removal works from the locked
	 * descriptor. */
	if (fstatat(tmpfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(now.st_mode) || !same_object(&held, &now))
		return;
	rc = rmtree_at(tmpfd, name, fd);
	/* Its moat's own removal failed too (and said so): said again, run
	 * after run, rather than left unsaid. */
	if (rc != 0) {
		cleanup_free char *path = moat_xasprintf("/tmp/%s", name);

		rmtree_warn("the stale per-run directory", path, rc);
	}
}

/* /tmp's entries are read a few at a time (a 4 KiB buffer: some hundred
 * names), so that `stop` is asked often: /tmp holds hundreds of names on a
 * workstation, and reading them all takes ~0.2 ms (ext4 hashes each). */
void stale_sweep(const char *prefix, bool (*stop)(void *), void *arg)
{
	cleanup_close int tmpfd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t plen = strlen(prefix);
	/* getdents64(2) fills it with struct dirent64 records, 8-aligned. */
	_Alignas(struct dirent64) char buf[4096];
	ssize_t got;

	if (tmpfd < 0)
		return;
	while (!(stop && stop(arg)) && (got = getdents64(tmpfd, buf, sizeof(buf))) > 0) {
		for (ssize_t at = 0; at < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(const void *)(buf + at);
			char *end;
			long pid;

			at += e->d_reclen;
			if (strncmp(e->d_name, prefix, plen) != 0 || e->d_name[plen] != '.')
				continue;
			errno = 0;
			pid = strtol(e->d_name + plen + 1, &end, 10);
			if (errno || pid <= 0 || *end != '.' || strlen(end) != 7)
				continue;
			if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue; /* its moat runs here (or is not ours to ask about) */
			sweep_one(tmpfd, e->d_name);
		}
	}
}

/* The directory just made at `path`, locked: its descriptor, or -1 when a
 * sweep got there first (it took the lock -- it removes the directory --
 * or it has removed it already), or -2 with errno on a failure. */
static int lock_new(const char *path)
{
	cleanup_close int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat held, now;

	if (fd < 0)
		return errno == ENOENT ? -1 : -2;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		return errno == EWOULDBLOCK ? -1 : -2;
	if (fstat(fd, &held) != 0)
		return -2;
	/* A sweep that locked, removed and let go before us leaves a
	 * directory without links, or another one at the name. */
	if (held.st_nlink == 0 || lstat(path, &now) != 0 || !same_object(&held, &now))
		return -1;
	return steal_fd(&fd);
}

char *stale_mkdtemp(const char *prefix, bool sweep, int *lock_fd, struct moat_error *err)
{
	char tmpl[PATH_MAX];
	int tries;

	if (sweep)
		stale_sweep(prefix, NULL, NULL);
	/* Only a sweep racing this very directory (another moat of this user
	 * in another pid namespace, where this pid looks gone) makes a try
	 * fail: a few are plenty. */
	for (tries = 0; tries < 8; tries++) {
		int fd;

		snprintf(tmpl, sizeof(tmpl), "/tmp/%s.%d.XXXXXX", prefix, (int)getpid());
		if (!mkdtemp(tmpl)) {
			moat_error_set(err, MOAT_E_SYSTEM, errno, "creating a per-run directory under /tmp");
			return NULL;
		}
		fd = lock_new(tmpl);
		if (fd >= 0) {
			*lock_fd = fd;
			return moat_xstrdup(tmpl);
		}
		if (fd == -2) {
			moat_error_set(err, MOAT_E_SYSTEM, errno, "locking the per-run directory %s", tmpl);
			rmdir(tmpl);
			return NULL;
		}
	}
	moat_error_set(err, MOAT_E_SYSTEM, 0, "creating a per-run directory under /tmp: removed by another moat's sweep %d times",
		       tries);
	return NULL;
}
