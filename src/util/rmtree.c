#include "util/rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"

/* Deep enough for any tree a command makes in its tmp; deeper ones are
 * left (and reported), not a stack overflow. */
#define RMTREE_MAX_DEPTH 256

static int keep_first(int rc, int e)
{
	return rc ? rc : e;
}

/* Empties the directory open as `fd` (on device `dev`); closes fd. */
static int empty_dir(int fd, dev_t dev, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d))) {
		struct stat st;
		int sub;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				rc = keep_first(rc, -errno);
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
				rc = keep_first(rc, -errno);
			continue;
		}
		if (st.st_dev != dev) {
			rc = keep_first(rc, -EXDEV); /* a mount: not entered */
			continue;
		}
		if (depth >= RMTREE_MAX_DEPTH) {
			rc = keep_first(rc, -ELOOP);
			continue;
		}
		/* O_NOFOLLOW: swapped for a link since the fstatat, it fails
		 * here and is unlinked as a link below. */
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
				rc = keep_first(rc, -errno);
			continue;
		}
		rc = keep_first(rc, empty_dir(sub, dev, depth + 1));
		if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT)
			rc = keep_first(rc, -errno);
	}
	closedir(d);
	return rc;
}

int rmtree_at(int parent, const char *name, int fd)
{
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 3), rc;
	struct stat st;

	if (own < 0)
		return -errno;
	/* fdopendir takes a copy (the same open file: the caller's lock is
	 * not released when the copy is closed). */
	if (fstat(own, &st) != 0) {
		close(own);
		return -errno;
	}
	rc = empty_dir(own, st.st_dev, 0);
	if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = keep_first(rc, -errno);
	return rc;
}

int rmtree(const char *path)
{
	cleanup_free char *parent = strdup(path);
	char *slash;
	cleanup_close int pfd = -1, fd = -1;

	if (!parent)
		return -ENOMEM;
	/* Most often empty (a private TMPDIR the command left clean): one
	 * rmdir, which removes only an empty directory and no link, instead
	 * of a dozen calls to list it. */
	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	slash = strrchr(parent, '/');
	if (!slash || !slash[1])
		return -EINVAL;
	*slash = '\0';
	pfd = open(slash == parent ? "/" : parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	fd = openat(pfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	return rmtree_at(pfd, slash + 1, fd);
}
