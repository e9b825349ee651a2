/* Protected entries shared between concurrent runs: see sharedlock.h. */
#include "resolve/sharedlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/pause.h"

int shared_lock_take(int obj)
{
	int fd = openat(obj, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int tries;

	if (fd < 0)
		return -1;
	/* An exclusive holder is a run removing it: wait until it is done. */
	for (tries = 0; flock(fd, LOCK_SH | LOCK_NB) != 0; tries++) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || tries >= 50) {
			close(fd);
			return -1;
		}
		moat_pause_ms(5);
	}
	if (fstat(fd, &st) != 0 || st.st_nlink == 0) {
		close(fd); /* removed meanwhile: the name may be free */
		return -2;
	}
	return fd;
}

static bool dir_is_empty(int fd)
{
	char buf[512];
	long n;
	long at;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return false;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (at = 0; at < n;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf + at);
			if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
				return false;
			at += d->d_reclen;
		}
	}
	return n == 0;
}

bool shared_is_placeholder(int fd)
{
	struct stat st;
	char v[4];

	/* 0500 since other users could open a 0555 one and hold a lock on
	 * it, which made every run leave it behind; 0555, an older moat's. */
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || ((st.st_mode & 07777) != 0500 && (st.st_mode & 07777) != 0555) ||
	    st.st_uid != geteuid())
		return false;
	if (fgetxattr(fd, PLACEHOLDER_XATTR, v, sizeof(v)) != 1 || v[0] != '1')
		return false;
	return dir_is_empty(fd);
}

void shared_mark_placeholder(int fd)
{
	if (fsetxattr(fd, PLACEHOLDER_XATTR, "1", 1, 0) != 0) {
		/* ENOTSUP and the like: unmarked, never adopted (sharedlock.h) */
	}
}

int shared_remove_placeholder(int dirfd, const char *name, dev_t dev, ino_t ino, int lock_fd)
{
	cleanup_close int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int tries, lk;

	if (fd < 0 && (errno == EACCES || moat_errno_out_of_resources(errno)))
		return -errno; /* ours, chmodded (000) by the command; or not known: said left, not taken for gone */
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino)
		return 0; /* gone, or replaced by the host meanwhile: not ours */
	/* Our own lock is converted (a second open file description of this
	 * process would conflict with it); without one, ours is a new one. */
	lk = lock_fd >= 0 ? lock_fd : fd;
	for (tries = 0; flock(lk, LOCK_EX | LOCK_NB) != 0; tries++) {
		/* Only EWOULDBLOCK says another run holds it; a lock refused
		 * for another cause (ENOLCK: the kernel out of lock memory)
		 * says nothing of that, and the placeholder is ours, left. */
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (lock_fd >= 0 || tries >= 40)
			return 0; /* another run holds it: it is that run's now */
		moat_pause_ms(5);
	}
	/* Under the exclusive lock, only when still empty. */
	return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 ? 1 : -errno;
}
