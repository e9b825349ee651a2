/* Denied files with another hard link: resolve/linkscan.h. */
#include "resolve/linkscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/err.h"
#include "util/path.h"

/* One name of a file with a link count above one, seen inside the denied
 * paths.  A name is its directory and its entry: the same name reached
 * twice (a denied file inside a denied directory, a bind mount showing a
 * directory again) counts once. */
struct link_name {
	dev_t dev;
	ino_t ino;
	nlink_t nlink;
	dev_t dir_dev;
	ino_t dir_ino;
	char *base;
	char *path;  /* for the report */
	size_t deny; /* the deny (fs_plan.obj index) it lies under */
};

struct dir_id {
	dev_t dev;
	ino_t ino;
};

/* A directory waiting its turn: the walk is breadth first, so that what
 * the bound leaves out is the deepest levels (caches, a profile's storage),
 * not the top of the denied paths listed last. */
struct pending_dir {
	int fd;
	char *path;
	size_t deny;
	unsigned depth;
};

struct link_scan {
	struct fs_plan *fp;
	struct link_name *names;
	size_t n_names, cap_names;
	struct dir_id *dirs; /* directories walked: each once */
	size_t n_dirs, cap_dirs;
	struct pending_dir *queue;
	size_t head, n_queue, cap_queue;
	size_t entries;      /* entries looked at, against LINK_SCAN_ENTRIES */
	int failed;          /* out of descriptors or memory: the errno */
	char *failed_at;     /* the directory it happened at */
};

/* Out of descriptors or memory, a directory not walked says nothing about
 * what it holds, and the bound's note would pass it off as a choice: the
 * plan fails instead, naming the cause (docs/errors.md).  true when `e`
 * is such an errno (recorded, the walk stops). */
static bool out_of_resources(struct link_scan *ls, int e, const char *path)
{
	if (!moat_errno_out_of_resources(e))
		return false;
	if (!ls->failed) {
		ls->failed = e;
		ls->failed_at = moat_xstrdup(path);
	}
	return true;
}

/* Files a second name can lead to: a regular file's content, a socket's
 * listener (a gpg-agent or ssh-agent socket kept in the denied directory),
 * a fifo's writer.  A symlink's second name only repeats its text, which
 * the kernel resolves by name; a device node's access is the device's. */
static bool linkable(mode_t mode)
{
	return S_ISREG(mode) || S_ISSOCK(mode) || S_ISFIFO(mode);
}

static void add_name(struct link_scan *ls, const struct stat *st, dev_t dir_dev, ino_t dir_ino, const char *base,
		     char *path, size_t deny)
{
	struct link_name *l;

	ls->names = moat_xgrow(ls->names, &ls->cap_names, ls->n_names, sizeof(*ls->names));
	l = &ls->names[ls->n_names++];
	*l = (struct link_name){ .dev = st->st_dev,
				 .ino = st->st_ino,
				 .nlink = st->st_nlink,
				 .dir_dev = dir_dev,
				 .dir_ino = dir_ino,
				 .base = moat_xstrdup(base),
				 .path = path,
				 .deny = deny };
}

/* false: walked before (under another deny, or through another mount). */
static bool first_visit(struct link_scan *ls, const struct stat *st)
{
	for (size_t i = 0; i < ls->n_dirs; i++)
		if (ls->dirs[i].dev == st->st_dev && ls->dirs[i].ino == st->st_ino)
			return false;
	ls->dirs = moat_xgrow(ls->dirs, &ls->cap_dirs, ls->n_dirs, sizeof(*ls->dirs));
	ls->dirs[ls->n_dirs++] = (struct dir_id){ st->st_dev, st->st_ino };
	return true;
}

static void unchecked(struct link_scan *ls, size_t deny, const char *path)
{
	struct fs_obj *o = &ls->fp->obj[deny];

	if (!o->link_unchecked)
		o->link_unchecked = moat_xstrdup(path);
}

/* A directory open(2) refused with EACCES: its files are not listed, so a
 * second name of one is not looked for, and that is said, as the bound is.
 * A directory this uid owns (a ~/.ssh/keys made mode 0311 or 0000: a link
 * to a file in it made before) or may search (0711: its files are opened
 * by name) is said.  One of another user's that this uid may not even
 * search (/etc/ssl/private, 0710 root:ssl-cert) is not: its files could not
 * be reached by this uid to link them, and a name elsewhere leads to a file
 * whose own mode still applies. */
static void unlistable(struct link_scan *ls, size_t deny, int dirfd, const char *name, const char *path)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    (st.st_uid != geteuid() && faccessat(dirfd, name, X_OK, AT_EACCESS) != 0))
		return;
	if (!ls->fp->obj[deny].link_unchecked)
		ls->fp->obj[deny].link_unlistable = true;
	unchecked(ls, deny, path);
}

static void enqueue(struct link_scan *ls, int fd, char *path, size_t deny, unsigned depth)
{
	ls->queue = moat_xgrow(ls->queue, &ls->cap_queue, ls->n_queue, sizeof(*ls->queue));
	ls->queue[ls->n_queue++] = (struct pending_dir){ fd, path, deny, depth };
}

/* Lists one directory (its descriptor taken): files with another link are
 * recorded, directories queued.  false once the bound is reached. */
static bool walk_one(struct link_scan *ls, struct pending_dir *pd)
{
	cleanup_closedir DIR *d = NULL;
	struct stat dst;
	struct dirent *e;

	if (fstat(pd->fd, &dst) != 0) {
		int e0 = errno;

		close(pd->fd);
		if (out_of_resources(ls, e0, pd->path))
			return false;
		unchecked(ls, pd->deny, pd->path); /* EIO, ...: not walked */
		return true;
	}
	if (!first_visit(ls, &dst)) {
		close(pd->fd);
		return true;
	}
	if (!(d = fdopendir(pd->fd))) {
		int e0 = errno;

		close(pd->fd);
		return !out_of_resources(ls, e0, pd->path);
	}
	/* readdir's NULL is the end of the listing only with errno left 0: a
	 * getdents64 that failed (ENOMEM, EIO) ends it part-way, and the
	 * names not listed may be a denied file's second ones. */
	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		struct stat st;
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (ls->entries++ >= LINK_SCAN_ENTRIES) {
			unchecked(ls, pd->deny, pd->path);
			return false;
		}
		if (e->d_type == DT_LNK || e->d_type == DT_CHR || e->d_type == DT_BLK)
			continue;
		if (e->d_type != DT_DIR) {
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
				if (out_of_resources(ls, errno, pd->path))
					return false;
				if (errno != ENOENT)
					unchecked(ls, pd->deny, pd->path); /* EIO, ...: not looked at */
				continue; /* else gone since the listing */
			}
			if (linkable(st.st_mode) && st.st_nlink > 1)
				add_name(ls, &st, dst.st_dev, dst.st_ino, e->d_name, path_join(pd->path, e->d_name),
					 pd->deny);
			if (!S_ISDIR(st.st_mode))
				continue;
		}
		cleanup_free char *subpath = path_join(pd->path, e->d_name);
		/* Each queued directory holds a descriptor: at most
		 * LINK_SCAN_OPEN of them, whatever RLIMIT_NOFILE allows. */
		if (pd->depth + 1 >= LINK_SCAN_DEPTH || ls->n_queue - ls->head >= LINK_SCAN_OPEN) {
			unchecked(ls, pd->deny, subpath);
			continue;
		}
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			enqueue(ls, sub, subpath, pd->deny, pd->depth + 1);
			subpath = NULL;
		} else if (out_of_resources(ls, errno, subpath))
			return false;
		else if (errno == EACCES)
			unlistable(ls, pd->deny, dirfd(d), e->d_name, subpath);
		else if (errno != ENOENT && errno != ELOOP && errno != ENOTDIR)
			unchecked(ls, pd->deny, subpath); /* EIO, ...: not walked */
		/* else gone, or replaced by a link since the listing */
	}
	if (errno != 0) {
		if (out_of_resources(ls, errno, pd->path))
			return false;
		unchecked(ls, pd->deny, pd->path); /* listed part-way */
	}
	return true;
}

/* The queue in order, until it is empty or the bound is reached; what is
 * left is said unchecked, each under its own deny. */
static void walk_queue(struct link_scan *ls)
{
	bool more = true;

	for (; ls->head < ls->n_queue; ls->head++) {
		struct pending_dir pd = ls->queue[ls->head]; /* a copy: walking grows the queue */

		if (more && !ls->failed)
			more = walk_one(ls, &pd);
		else {
			unchecked(ls, pd.deny, pd.path);
			close(pd.fd);
		}
		free(pd.path);
	}
}

/* A denied file (not a directory): its own name, keyed by its directory
 * (a denied file inside a denied directory is one name, not two). */
static void add_denied_file(struct link_scan *ls, size_t i)
{
	struct fs_obj *o = &ls->fp->obj[i];
	struct stat st, dst;
	cleanup_free char *dir = NULL;
	const char *slash;

	if (fstat(o->fd, &st) != 0 || !linkable(st.st_mode) || st.st_nlink < 2)
		return;
	slash = strrchr(o->real, '/');
	dir = moat_xstrndup(o->real, slash && slash != o->real ? (size_t)(slash - o->real) : 1);
	if (slash && stat(dir, &dst) == 0)
		add_name(ls, &st, dst.st_dev, dst.st_ino, slash + 1, moat_xstrdup(o->real), i);
	else /* keyed by the whole path: a name of its own */
		add_name(ls, &st, 0, 0, o->real, moat_xstrdup(o->real), i);
}

/* By file, then by name. */
static int name_cmp(const void *pa, const void *pb)
{
	const struct link_name *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	if (a->dir_dev != b->dir_dev)
		return a->dir_dev < b->dir_dev ? -1 : 1;
	if (a->dir_ino != b->dir_ino)
		return a->dir_ino < b->dir_ino ? -1 : 1;
	return strcmp(a->base, b->base);
}

/* Each file whose link count is above the number of its distinct names
 * seen has a name elsewhere: the deny each of its names lies under gets
 * one of them as linked_secret.  Sorted, so that a `cp -al` of thousands of
 * files costs a sort, not a square. */
static void judge(struct link_scan *ls)
{
	size_t i = 0, j, k;

	if (!ls->n_names)
		return; /* qsort's base must not be NULL, even for none */
	qsort(ls->names, ls->n_names, sizeof(*ls->names), name_cmp);
	while (i < ls->n_names) {
		const struct link_name *a = &ls->names[i];
		nlink_t seen = 1;

		for (j = i + 1; j < ls->n_names && ls->names[j].dev == a->dev && ls->names[j].ino == a->ino; j++)
			seen += name_cmp(&ls->names[j - 1], &ls->names[j]) != 0;
		if (seen < a->nlink)
			for (k = i; k < j; k++) {
				struct fs_obj *o = &ls->fp->obj[ls->names[k].deny];

				if (!o->linked_secret)
					o->linked_secret = moat_xstrdup(ls->names[k].path);
			}
		i = j;
	}
}

int fs_find_linked_denies(struct fs_plan *fp, struct moat_error *err)
{
	struct link_scan ls = { .fp = fp };
	size_t i;
	int rc = 0;

	for (i = 0; i < fp->n; i++) {
		struct fs_obj *o = &fp->obj[i];

		if (o->role != FS_DENY || !o->present || o->fd < 0)
			continue;
		if (!S_ISDIR(o->mode))
			add_denied_file(&ls, i);
		else {
			int fd = openat(o->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			if (fd >= 0)
				enqueue(&ls, fd, moat_xstrdup(o->real), i, 0);
			else if (out_of_resources(&ls, errno, o->real))
				break;
			else if (errno == EACCES)
				unlistable(&ls, i, o->fd, ".", o->real);
			else
				unchecked(&ls, i, o->real);
		}
	}
	walk_queue(&ls);
	if (ls.failed)
		rc = moat_error_set(err, MOAT_E_SYSTEM, ls.failed, "looking for other hard links of the denied files below %s",
				    ls.failed_at);
	else
		judge(&ls);
	free(ls.failed_at);
	for (i = 0; i < ls.n_names; i++) {
		free(ls.names[i].base);
		free(ls.names[i].path);
	}
	free(ls.names);
	free(ls.dirs);
	free(ls.queue);
	return rc;
}
