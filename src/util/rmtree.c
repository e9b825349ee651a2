#include "util/rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/mem.h"

/* How deep the walk goes before it moves a directory up instead of
 * entering it: each level holds a descriptor and a directory stream, so
 * this bounds both (and the stack). */
#define RMTREE_MAX_DEPTH 256

/* Entries handled in one removal, all passes together: a tree can be huge,
 * and a command still running can keep adding to it or keep moving a
 * directory down again; past this the removal stops (-E2BIG). */
#define RMTREE_MAX_ENTRIES (1UL << 24)

/* A removal's state, over all its passes. */
struct walk {
	int top;		/* the tree's top: where a too-deep directory goes */
	dev_t dev;		/* the tree's device: no other mount is entered */
	unsigned long budget;	/* entries still to handle */
	unsigned long moved;	/* directories moved up in this pass */
	unsigned long serial;	/* for their new names */
};

static int keep_first(int rc, int e)
{
	return rc ? rc : e;
}

/* renameat2 RENAME_NOREPLACE, or plain renameat on a file system without
 * it: what that one replaces (an empty directory, a file) is at the top of
 * the tree, going as well.  0, or errno with EEXIST for a name taken. */
static int rename_noreplace(int from, const char *name, int to, const char *new_name)
{
	if (renameat2(from, name, to, new_name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL)
		return errno;
	if (renameat(from, name, to, new_name) == 0)
		return 0;
	return errno == ENOTEMPTY || errno == ENOTDIR || errno == EISDIR ? EEXIST : errno;
}

/* Moves the directory `name` of `dfd` (RMTREE_MAX_DEPTH down) to the top
 * of the tree, where a later pass empties it from depth 1.  A rename works
 * on the entry itself: swapped for a link meanwhile, the link is moved, not
 * followed; a mount is not moved (EXDEV); and it moves the entry into the
 * tree, never out of it.  A name taken at the top (by the command, or an
 * earlier move) is not replaced: the next one is tried. */
static int move_up(struct walk *w, int dfd, const char *name)
{
	char to[48];
	int tries, e;

	for (tries = 0; tries < 16; tries++) {
		snprintf(to, sizeof(to), ".moat-rmtree-deep.%lu", w->serial++);
		e = rename_noreplace(dfd, name, w->top, to);
		if (e == 0)
			w->moved++;
		if (e == 0 || e == ENOENT) /* moved, or gone already */
			return 0;
		if (e != EEXIST)
			return -e;
	}
	return -EEXIST;
}

/* The directory `name` of `dfd`, the user's own on `dev`, made 0700: a
 * command can chmod a directory of its tmp to 0 or 0500 (Landlock does not
 * govern chmod), and the owner could then neither list it nor remove what
 * it holds.  Changed through an O_PATH descriptor of it (which needs no
 * permission on it) by its /proc/self/fd name, which is that very inode:
 * O_NOFOLLOW | O_DIRECTORY, never a link nor a file (a file could be a
 * hard link to one outside the tree). */
static void make_walkable(int dfd, const char *name, dev_t dev)
{
	cleanup_close int fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char proc[40];
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != dev || st.st_uid != geteuid())
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	(void)chmod(proc, 0700); /* failing, the open that follows says why */
}

/* Opens the directory `name` of `dfd` (seen as `st`) to empty it: -errno
 * when it cannot be (a link now, or gone). */
static int open_sub(int dfd, const char *name, const struct stat *st)
{
	int fd;

	if ((st->st_mode & 0700) != 0700 && st->st_uid == geteuid())
		make_walkable(dfd, name, st->st_dev);
	/* O_NOFOLLOW: swapped for a link since the fstatat, it fails here
	 * and is unlinked as a link. */
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Empties the directory open as `fd` (`depth` below the top); closes fd. */
static int empty_dir(struct walk *w, int fd, int depth)
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
		if (w->budget == 0) {
			rc = keep_first(rc, -E2BIG);
			break;
		}
		w->budget--;
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
		if (st.st_dev != w->dev) {
			rc = keep_first(rc, -EXDEV); /* a mount: not entered */
			continue;
		}
		if (depth >= RMTREE_MAX_DEPTH) {
			rc = keep_first(rc, move_up(w, dirfd(d), e->d_name));
			continue;
		}
		sub = open_sub(dirfd(d), e->d_name, &st);
		if (sub < 0) {
			/* Still a directory (EISDIR): why it could not be
			 * opened is what is wrong. */
			if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
				rc = keep_first(rc, errno == EISDIR ? sub : -errno);
			continue;
		}
		rc = keep_first(rc, empty_dir(w, sub, depth + 1));
		if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT)
			rc = keep_first(rc, -errno);
	}
	closedir(d);
	return rc;
}

/* Passes over the tree until one moves nothing up (or the budget is
 * spent): the failure of the last, the one that says what is left.  Each
 * pass reads the top from its start, on a descriptor of its own ("." of
 * the top: never a link), so it sees what the one before moved there. */
static int empty_tree(struct walk *w)
{
	int rc;

	do {
		int fd = openat(w->top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		w->moved = 0;
		rc = empty_dir(w, fd, 0);
	} while (w->moved > 0 && w->budget > 0);
	return rc;
}

int rmtree_at(int parent, const char *name, int fd)
{
	struct walk w = {.top = fd, .budget = RMTREE_MAX_ENTRIES};
	struct stat st;
	int rc;

	if (fstat(fd, &st) != 0)
		return -errno;
	w.dev = st.st_dev;
	rc = empty_tree(&w);
	if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = keep_first(rc, -errno);
	return rc;
}

int rmtree(const char *path)
{
	cleanup_free char *parent = strdup(path);
	char *slash;
	cleanup_close int pfd = -1, fd = -1;
	struct stat st;

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
	if (fstatat(pfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR; /* a link is not followed */
	fd = open_sub(pfd, slash + 1, &st);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	return rmtree_at(pfd, slash + 1, fd);
}

void rmtree_warn(const char *what, const char *path, int rc)
{
	cleanup_free char *text = NULL;

	if (rc == 0)
		return;
	text = moat_xasprintf("%s %s is left on the host, not removed: %s", what, path,
			      rc == -E2BIG ? "more entries than moat removes in one go, or still growing"
					   : strerror(-rc));
	moat_say("moat: warning: ", text);
}
