#include "util/mkdirs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"

/* The component `comp` below cur, made first when `make` and absent: its
 * O_PATH descriptor, or -1 with errno (ELOOP for a symlink). */
static int step(int cur, const char *comp, bool make, mode_t mode)
{
	struct stat st;
	int next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (next < 0 && errno == ENOENT && make) {
		if (mkdirat(cur, comp, mode) != 0 && errno != EEXIST)
			return -1;
		/* Opened again, as if it had been there: a link put at the
		 * name since the mkdirat is refused below. */
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (next < 0)
		return -1;
	if (fstat(next, &st) != 0) {
		moat_closep(&next);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		close(next);
		errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
		return -1;
	}
	return next;
}

int dir_walk_nofollow(const char *path, bool make, mode_t mode, size_t *stop)
{
	cleanup_close int cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *walk = moat_xstrdup(path);
	char *comp, *save = NULL;

	*stop = path[0] == '/' ? 1 : 0;
	if (cur < 0)
		return -1;
	for (comp = strtok_r(walk, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		int next;

		if (strcmp(comp, ".") == 0)
			continue;
		*stop = (size_t)(comp - walk) + strlen(comp);
		next = step(cur, comp, make, mode);
		if (next < 0)
			return -1;
		close(cur);
		cur = next;
	}
	return steal_fd(&cur);
}

/* A symlink at path[0..len): named, with its target, and the grant to give
 * instead when the target resolves. */
static int link_refused(const char *path, size_t len, const char *opt, struct moat_error *err)
{
	cleanup_free char *link = moat_xstrndup(path, len);
	cleanup_free char *real = realpath(link, NULL); /* for the hint only */
	char text[PATH_MAX];
	ssize_t n = readlink(link, text, sizeof(text) - 1);

	text[n > 0 ? n : 0] = '\0';
	moat_error_set(err, MOAT_E_USAGE, 0,
		       "%s: %s is a symbolic link%s%s%s: nothing was made; directories are made only through real "
		       "ones",
		       path, link, n > 0 ? " (to " : "", text, n > 0 ? ")" : "");
	if (real)
		return moat_error_hint(err,
				       "a write grant must name the real directory (%s %s%s): a link in a writable "
				       "place can be swapped between runs to point anywhere",
				       opt, real, path + len);
	return moat_error_hint(err, "remove the link, or name the real directory");
}

int mkdirs(const char *path, mode_t mode, const char *opt, struct moat_error *err)
{
	size_t stop;
	int fd;

	if (path[0] != '/')
		return moat_error_set(err, MOAT_E_USAGE, 0, "%s: not an absolute path", path);
	fd = dir_walk_nofollow(path, true, mode, &stop);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ELOOP)
		return link_refused(path, stop, opt, err);
	return moat_error_set(err, errno == ENOTDIR ? MOAT_E_USAGE : MOAT_E_SYSTEM, errno, "making the directory %.*s",
			      (int)stop, path);
}

void dir_parent_name(char *name)
{
	char *slash = strrchr(name, '/');

	if (slash == name)
		name[1] = '\0';
	else if (slash)
		*slash = '\0';
}

int dir_walk_up(int start, int (*visit)(const struct stat *st, void *arg), void *arg)
{
	cleanup_close int cur = fcntl(start, F_DUPFD_CLOEXEC, 3);
	struct stat st, up_st;
	int depth, rc;

	if (cur < 0 || fstat(cur, &st) < 0)
		return -errno;
	for (depth = 0; depth < PATH_MAX / 2; depth++) {
		int up;

		if ((rc = visit(&st, arg)) != 0)
			return rc;
		up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0)
			return -errno;
		close(cur);
		cur = up;
		if (fstat(cur, &up_st) < 0)
			return -errno;
		if (up_st.st_dev == st.st_dev && up_st.st_ino == st.st_ino)
			return 0;
		st = up_st;
	}
	return -ELOOP;
}

/* Is `uid` the kernel's overflow uid of a user namespace that is not the
 * host's (`unshare -Ur`, a rootless container)?  There every uid the
 * namespace does not map, root's among them, shows as it: not known to be
 * another user's.  On the host it is a user like any (nobody, 65534). */
static bool uid_unmapped(uid_t uid)
{
	cleanup_fclose FILE *map = fopen("/proc/self/uid_map", "re");
	cleanup_fclose FILE *of = NULL;
	unsigned long inner, outer, count;
	unsigned overflow;

	if (!map || fscanf(map, "%lu %lu %lu", &inner, &outer, &count) != 3 ||
	    (inner == 0 && outer == 0 && count == 4294967295UL))
		return false;
	of = fopen("/proc/sys/kernel/overflowuid", "re");
	return of && fscanf(of, "%u", &overflow) == 1 && uid == (uid_t)overflow;
}

static bool foreign_owner(const struct stat *st)
{
	return st->st_uid != geteuid() && st->st_uid != 0 && !uid_unmapped(st->st_uid);
}

/* The first entry on the way to `path` (each leading part, lstat'ed, up to
 * the first that does not exist) that belongs to neither moat's user nor
 * root: its length, its owner in *owner; 0 when there is none. */
size_t path_foreign_on_way(const char *path, uid_t *owner)
{
	cleanup_free char *head = moat_xstrdup(path);
	struct stat st;

	for (char *slash = head; slash; slash = strchr(slash + 1, '/')) {
		size_t len = slash == head ? 1 : (size_t)(slash - head);
		char keep = head[len];

		head[len] = '\0';
		if (lstat(head, &st) != 0)
			return 0;
		head[len] = keep;
		if (foreign_owner(&st)) {
			*owner = st.st_uid;
			return len;
		}
	}
	if (lstat(head, &st) == 0 && foreign_owner(&st)) {
		*owner = st.st_uid;
		return strlen(head);
	}
	return 0;
}
