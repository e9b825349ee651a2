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

int rmtree(const char *path)
{
	cleanup_free char *parent = strdup(path);
	char *slash;
	cleanup_close int pfd = -1;
	int fd, rc;
	struct stat st;

	if (!parent)
		return -ENOMEM;
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
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -errno;
	}
	rc = empty_dir(fd, st.st_dev, 0);
	if (unlinkat(pfd, slash + 1, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = keep_first(rc, -errno);
	return rc;
}
