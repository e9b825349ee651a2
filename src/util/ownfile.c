#include "util/ownfile.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/sha256.h"

/* Does the file at dirfd/name hold exactly `data`?  (O_NONBLOCK: a FIFO
 * an unsandboxed run made there would hold the open for ever; it is no
 * regular file, and so replaced.) */
static bool holds(int dirfd, const char *name, const char *data, size_t len)
{
	cleanup_close int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t)st.st_size != len)
		return false;
	buf = moat_xmalloc(len + 1);
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return memcmp(buf, data, len) == 0;
}

int own_dir_at(int dirfd, const char *name, const char *shown, struct moat_error *err)
{
	cleanup_close int fd = -1;
	struct stat st;

	if (mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "making %s", shown);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* Planted where moat's own directory belongs (a link into
		 * ~/.ssh, a file): never followed, never written through. */
		moat_error_set(err, MOAT_E_SYSTEM, 0, "%s is %s, not moat's own directory", shown,
			       S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
		return moat_error_hint(err, "remove it; moat makes it again, mode 0700");
	}
	if (fd < 0 || fstat(fd, &st) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", shown);
	/* Another user's directory (made first, in the shared /tmp) could be
	 * swapped under moat: refused, never used. */
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		moat_error_set(err, MOAT_E_SYSTEM, 0, "%s is not moat's own (owner %u, mode %03o)", shown,
			       (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		if (st.st_uid == geteuid())
			return moat_error_hint(err, "`chmod 700 %s`, or remove it: moat makes it again, mode 0700",
					       shown);
		return moat_error_hint(err, "remove it; moat makes it again, mode 0700");
	}
	return steal_fd(&fd);
}

int own_dirs_at(int dirfd, const char *rel, const char *shown_base, struct moat_error *err)
{
	cleanup_free char *copy = moat_xstrdup(rel), *shown = moat_xstrdup(shown_base);
	cleanup_close int fd = -1;
	char *save = NULL;

	for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		char *next = moat_xasprintf("%s/%s", shown, part);
		int sub = own_dir_at(fd >= 0 ? fd : dirfd, part, next, err);

		free(shown);
		shown = next;
		if (sub < 0)
			return -1;
		if (fd >= 0)
			close(fd);
		fd = sub;
	}
	return fd >= 0 ? steal_fd(&fd) : moat_error_set(err, MOAT_E_USAGE, 0, "%s: no directory named", shown_base);
}

char *ownfile_put(const char *kind, const char *name, const char *data, size_t len, struct moat_error *err)
{
	cleanup_free char *dir = moat_xasprintf("/tmp/moat-%s-%u", kind, (unsigned)geteuid());
	cleanup_close int dirfd = own_dir_at(AT_FDCWD, dir, dir, err);
	char hex[65], file[128], tmp[160];

	if (dirfd < 0)
		return NULL;
	sha256_hex(data, len, hex);
	snprintf(file, sizeof(file), "%.32s.%s", hex, name);
	if (!holds(dirfd, file, data, len)) {
		cleanup_close int wfd = -1;

		/* Written aside, then renamed into place: a concurrent run reads
		 * the old file or the new one, never half of one. */
		snprintf(tmp, sizeof(tmp), ".%s.%d", file, (int)getpid());
		unlinkat(dirfd, tmp, 0);
		wfd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
		if (wfd < 0 || file_write_all(wfd, data, len) < 0 || renameat(dirfd, tmp, dirfd, file) != 0) {
			moat_error_set(err, MOAT_E_SYSTEM, errno, "writing %s/%s", dir, file);
			unlinkat(dirfd, tmp, 0);
			return NULL;
		}
	}
	return moat_xasprintf("%s/%s", dir, file);
}
