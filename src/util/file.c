#include "util/file.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"

int file_read_at(int dirfd, const char *name, const char *shown, size_t max, bool follow, char **out, size_t *len,
		 struct stat *st, struct moat_error *err)
{
	/* O_NONBLOCK: a FIFO at the name would wait for a writer; it is
	 * refused below as not a regular file. */
	cleanup_close int fd =
	    openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
	cleanup_free char *buf = NULL;
	size_t got = 0;

	if (fd < 0 && errno == ENOENT) {
		moat_error_set(err, MOAT_E_CONFIG, ENOENT, "%s", shown);
		return moat_error_hint(err, "check the name: there is no file there%s",
				       shown[0] == '/' ? "" : " (a relative name is taken from the current directory)");
	}
	if (fd < 0)
		return moat_error_set(err, MOAT_E_CONFIG, errno, "%s", shown);
	if (fstat(fd, st) != 0)
		return moat_error_set(err, MOAT_E_CONFIG, errno, "%s", shown);
	if (!S_ISREG(st->st_mode)) {
		moat_error_set(err, MOAT_E_CONFIG, 0, "%s: not a regular file (%s)", shown,
			       S_ISFIFO(st->st_mode)  ? "a pipe"
			       : S_ISDIR(st->st_mode) ? "a directory"
			       : S_ISCHR(st->st_mode) ? "a character device"
						      : "a special file");
		return moat_error_hint(err, "moat reads a config only from a regular file; copy it to one");
	}
	if ((uint64_t)st->st_size > max)
		return moat_error_set(err, MOAT_E_CONFIG, 0, "%s: larger than %zu bytes", shown, max);
	buf = moat_xmalloc((size_t)st->st_size + 1);
	/* To EOF: the size may change under us, and must stay bounded. */
	for (;;) {
		ssize_t n = read(fd, buf + got, (size_t)st->st_size + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return moat_error_set(err, MOAT_E_CONFIG, errno, "reading %s", shown);
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > (size_t)st->st_size)
			return moat_error_set(err, MOAT_E_CONFIG, 0, "%s changed while it was read", shown);
	}
	buf[got] = '\0';
	*out = steal_ptr(&buf);
	*len = got;
	return 0;
}

int file_open_regular_fd(const char *path, off_t max)
{
	/* O_NONBLOCK: a FIFO would wait for a writer in open(2). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	int saved;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0)
		goto fail;
	if (!S_ISREG(st.st_mode) || st.st_size > max) {
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		goto fail;
	}
	return fd; /* O_NONBLOCK left: reads of a regular file do not wait anyway */
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

FILE *file_open_regular(const char *path, off_t max)
{
	int fd = file_open_regular_fd(path, max);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "r"))) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return f;
}

/* ".NAME.moat-XXXXXXXX": hidden, and named after the file it becomes. */
static int create_temp(int dirfd, const char *name, mode_t mode, char *tmp, size_t len)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[8];
	char sfx[sizeof(rnd) + 1];
	int tries;

	for (tries = 0; tries < 100; tries++) {
		size_t i;
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -1;
		for (i = 0; i < sizeof(rnd); i++)
			sfx[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		sfx[sizeof(rnd)] = '\0';
		snprintf(tmp, len, ".%.*s.moat-%s", (int)(NAME_MAX - sizeof(rnd) - 8), name, sfx);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

int file_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* Full, and O_NONBLOCK (the caller's flag, on a
			 * description it shares): wait until the reader makes
			 * room, as a blocking write would.  A reader that is
			 * gone wakes the poll, and the write says EPIPE. */
			struct pollfd w = {.fd = fd, .events = POLLOUT};

			if (poll(&w, 1, -1) < 0 && errno != EINTR)
				return -1;
			continue;
		}
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The new file over the name, if the name still holds what the caller read
 * (or nothing, when it read nothing). */
static int rename_into_place(int dirfd, const char *tmp, const char *name, const char *shown, const struct stat *like,
			     bool replace_any, struct moat_error *err)
{
	struct stat now;

	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno != ENOENT)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", shown);
		if (like)
			return moat_error_set(err, MOAT_E_CONFIG, 0, "%s was removed while moat was editing it", shown);
		if (syscall(SYS_renameat2, dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
			return 0;
		/* EINVAL, ENOSYS: a file system or kernel without the flag;
		 * the check above is then all there is. */
		if (errno != EINVAL && errno != ENOSYS)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: renaming the new file into place", shown);
	} else if (like ? !same_file(like, &now) : !replace_any) {
		moat_error_set(err, MOAT_E_CONFIG, 0, "%s was changed by another program while moat was editing it",
			       shown);
		return moat_error_hint(err, "nothing was written; run the command again");
	}
	if (renameat(dirfd, tmp, dirfd, name) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: renaming the new file into place", shown);
	return 0;
}

int file_replace_at(int dirfd, const char *name, const char *shown, const char *buf, size_t len, mode_t mode,
		    const struct stat *like, bool replace_any, struct moat_error *err)
{
	char tmp[NAME_MAX + 1];
	cleanup_close int fd = create_temp(dirfd, name, mode & 07777, tmp, sizeof(tmp));
	int rc = -1;

	if (fd < 0) {
		moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: creating a file beside it", shown);
		if (errno == EACCES || errno == EROFS || errno == EPERM)
			moat_error_hint(err, "moat writes the new file next to the old one and renames it into place, "
					     "so the directory must be writable; nothing was changed");
		return -1;
	}
	/* The umask applied at creation: the mode asked for, exactly; and
	 * the owner of the file it replaces when moat runs as root for
	 * another user (a failure leaves the new file moat's, which is no
	 * loss of access for the owner of the directory). */
	if (fchmod(fd, mode & 07777) != 0) {
		moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: setting the mode of the new file", shown);
		goto out;
	}
	if (like && (like->st_uid != geteuid() || like->st_gid != getegid()))
		(void)!fchown(fd, like->st_uid, like->st_gid);
	if (file_write_all(fd, buf, len) < 0 || fsync(fd) < 0) {
		moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: writing the new file", shown);
		goto out;
	}
	if (close(steal_fd(&fd)) != 0) {
		moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: writing the new file", shown);
		goto out;
	}
	rc = rename_into_place(dirfd, tmp, name, shown, like, replace_any, err);
	if (rc == 0)
		(void)fsync(dirfd); /* the rename itself on disk: best effort */
out:
	if (rc < 0)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

DIR *file_opendir_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return d;
}
