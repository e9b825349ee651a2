#include "report/dest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "report/report.h"
#include "util/account.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/mkdirs.h"
#include "util/umask.h"

/* What a descriptor of moat's own output must not be, said for its option
 * (--report-fd, --events-fd). */
#define FD_HINT                                                                                                        \
	"give it a pipe only the caller reads (the Python binding does), or a file the caller owns: "                  \
	"%s 3 3>FILE"

void report_dest_init(struct report_dest *d)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	d->dirfd = -1;
}

void report_dest_free(struct report_dest *d)
{
	moat_closep(&d->dirfd);
	free(d->path);
	free(d->dir);
	free(d->name);
	report_dest_init(d);
}

bool report_dest_wanted(const struct report_dest *d)
{
	return d->fd >= 0 || d->dirfd >= 0;
}

/* "uid 65534 (nobody)", or "uid N" when the name is unknown. */
static void owner_text(uid_t uid, char *buf, size_t len)
{
	char name[256];

	if (account_name(uid, name, sizeof(name)))
		snprintf(buf, len, "uid %u (%s)", (unsigned)uid, name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

static const char *kind_name(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFIFO:
		return "pipe";
	case S_IFSOCK:
		return "socket";
	case S_IFREG:
		return "file";
	case S_IFCHR:
		return "character device";
	case S_IFBLK:
		return "block device";
	case S_IFDIR:
		return "directory";
	case S_IFLNK:
		return "symlink";
	}
	return "object";
}

/* --- --report-fd ------------------------------------------------------- */

/* A pipe or a socket reaches only whoever holds the other end; a regular
 * file is accepted when moat's user owns it.  Anything else -- a terminal,
 * /dev/null, a directory, another user's file -- is a mistake or someone
 * else's object that root's moat would write into. */
static int check_fd_kind(int fd, const char *opt, const struct stat *st, struct moat_error *err)
{
	char owner[320];

	if (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode) || (S_ISREG(st->st_mode) && st->st_uid == geteuid()))
		return 0;
	if (S_ISREG(st->st_mode)) {
		owner_text(st->st_uid, owner, sizeof(owner));
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %d: a file owned by %s, not by moat's user (uid %u)", opt, fd,
			       owner, (unsigned)geteuid());
	} else {
		moat_error_set(err, MOAT_E_USAGE, 0,
			       "%s %d: is a %s; moat writes only to a pipe, a socket or a file moat's user owns", opt, fd,
			       S_ISCHR(st->st_mode) && isatty(fd) ? "terminal" : kind_name(st));
	}
	return moat_error_hint(err, FD_HINT, opt);
}

static int check_fd_writable(int fd, const char *opt, struct moat_error *err)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return moat_error_set(err, MOAT_E_USAGE, errno, "%s %d", opt, fd);
	if ((fl & O_PATH) || (fl & O_ACCMODE) == O_RDONLY) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %d: is not open for writing", opt, fd);
		return moat_error_hint(err, "open it for writing: %s %d %d>FILE, not %d<FILE", opt, fd, fd, fd);
	}
	return 0;
}

/* The command gets stdio and every --keep-fd.  One of those that is the
 * report's own pipe or file (`3>&1`, `--keep-fd 4 4>&3`) would let the
 * command write into the report, or read it. */
static int check_fd_not_inherited(int fd, const char *opt, const struct stat *st, const struct moat_policy *p,
				  struct moat_error *err)
{
	size_t i;

	for (i = 0; i < 3 + p->n_keep_fds; i++) {
		int other = i < 3 ? (int)i : p->keep_fds[i - 3];
		struct stat o;

		if (other == fd) {
			moat_error_set(err, MOAT_E_USAGE, 0,
				       "%s %d is also --keep-fd %d: the command would inherit moat's descriptor", opt,
				       fd, fd);
			return moat_error_hint(err, "give %s a descriptor of its own", opt);
		}
		if (fstat(other, &o) < 0 || o.st_dev != st->st_dev || o.st_ino != st->st_ino)
			continue;
		moat_error_set(err, MOAT_E_USAGE, 0,
			       "%s %d: descriptor %d, which the command inherits, is the same %s: the "
			       "command could write into what moat says",
			       opt, fd, other, kind_name(st));
		return moat_error_hint(err, "give %s a pipe or file of its own", opt);
	}
	return 0;
}

int report_fd_check(int fd, const char *opt, const struct moat_policy *p, struct moat_error *err)
{
	struct stat st;
	int fl;

	if (fstat(fd, &st) < 0)
		return moat_error_set(err, MOAT_E_USAGE, errno, "%s %d", opt, fd);
	if (check_fd_kind(fd, opt, &st, err) < 0 || check_fd_writable(fd, opt, err) < 0 ||
	    check_fd_not_inherited(fd, opt, &st, p, err) < 0)
		return -1;
	/* moat's own descriptor: the command must not inherit it, even with
	 * --mode off, where nothing closes the others. */
	fl = fcntl(fd, F_GETFD);
	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s %d: marking it close-on-exec", opt, fd);
	return 0;
}

int report_fds_apart(int report_fd, int events_fd, struct moat_error *err)
{
	struct stat r, e;

	if (report_fd < 0 || events_fd < 0 || fstat(report_fd, &r) < 0 || fstat(events_fd, &e) < 0 ||
	    r.st_dev != e.st_dev || r.st_ino != e.st_ino)
		return 0;
	moat_error_set(err, MOAT_E_USAGE, 0,
		       "--events-fd %d: is the same %s as --report-fd %d: the event lines would run into the report%s",
		       events_fd, kind_name(&e), report_fd,
		       S_ISREG(e.st_mode) ? "" : ", and moat's non-blocking writes of the events would be the report's too");
	return moat_error_hint(err, "give the events a pipe or file of their own: --events-fd %d %d>events.jsonl",
			       events_fd, events_fd);
}

int report_dest_use_fd(struct report_dest *d, int fd, const struct moat_policy *p, struct moat_error *err)
{
	if (report_fd_check(fd, "--report-fd", p, err) < 0)
		return -1;
	d->fd = fd;
	return 0;
}

/* --- --report FILE: the checks before the run --------------------------- */

static int split_path(struct report_dest *d, const char *path, struct moat_error *err)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;

	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		moat_error_set(err, MOAT_E_USAGE, 0, "--report %s: names a directory, not a file", path);
		return moat_error_hint(err, "name the file: --report %s%smoat-report.json", path, *name ? "/" : "");
	}
	d->path = moat_xstrdup(path);
	d->name = moat_xstrdup(name);
	if (!slash)
		d->dir = moat_xstrdup(".");
	else if (slash == path)
		d->dir = moat_xstrdup("/");
	else
		d->dir = moat_xstrndup(path, (size_t)(slash - path));
	return 0;
}

/* Where a link or a directory leads into /proc: moat's own descriptors
 * (/dev/stdout is /proc/self/fd/1), which the command shares. */
static bool into_proc(const char *real)
{
	return real && (strcmp(real, "/proc") == 0 || strncmp(real, "/proc/", 6) == 0);
}

#define STREAMS_HINT                                                                                                   \
	"moat does not write its report into its own output streams, which the command shares and could print a "     \
	"forged report into; give the report a pipe or a file of its own: --report-fd 3 3>FILE"

static int symlink_error(const struct report_dest *d, size_t prefix_len, struct moat_error *err)
{
	cleanup_free char *real = realpath(d->dir, NULL); /* for the hint only */

	moat_error_set(err, MOAT_E_USAGE, 0,
		       "--report %s: %.*s is a symlink; the report is written only into a directory reached "
		       "without one",
		       d->path, (int)prefix_len, d->dir);
	if (into_proc(real))
		return moat_error_hint(err, STREAMS_HINT);
	if (real)
		return moat_error_hint(err, "name the directory it leads to: --report %s%s%s", real,
				       strcmp(real, "/") ? "/" : "", d->name);
	return moat_error_hint(err, "name the real directory, without a symlink on the way");
}

/* The directory, one component at a time, never following a symlink: a
 * link in the directory part (planted in a shared /tmp, or left by an
 * earlier command in its write grant) could lead anywhere, and root's moat
 * would replace whatever file has the report's name there.  The same rule
 * as for a write grant (docs/filesystem.md). */
static int open_dir(struct report_dest *d, struct moat_error *err)
{
	size_t stop;
	int fd = dir_walk_nofollow(d->dir, false, 0, &stop);

	if (fd >= 0) {
		d->dirfd = fd;
		return 0;
	}
	if (errno == ELOOP)
		return symlink_error(d, stop, err);
	if (stop == 0 || (stop == 1 && d->dir[0] == '/'))
		return moat_error_set(err, MOAT_E_USAGE, errno, "--report %s: %s", d->path,
				      d->dir[0] == '/' ? "/" : "the current directory");
	return moat_error_set(err, MOAT_E_USAGE, errno, "--report %s: %.*s", d->path, (int)stop, d->dir);
}

static const struct fs_obj *write_grant_at(const struct fs_plan *fp, const struct stat *st)
{
	size_t i;

	for (i = 0; fp && i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		if (o->role == FS_WRITE && o->present && !o->dropped && o->dev == st->st_dev && o->ino == st->st_ino)
			return o;
	}
	return NULL;
}

/* One directory on the way from the report up to the root (`name` says
 * which, for the message).  Inside a write grant the command can create,
 * rename and remove entries; a directory anyone else can write (unless the
 * sticky bit keeps each user to their own entries) lets them replace the
 * report, or the directory holding it, after moat wrote it. */
static int check_dir(const struct report_dest *d, const char *name, const struct stat *st, const struct fs_plan *fp,
		     struct moat_error *err)
{
	const struct fs_obj *g = write_grant_at(fp, st);

	if (g) {
		moat_error_set(err, MOAT_E_USAGE, 0,
			       "--report %s: the directory %s lies in the write grant %s: the command could replace "
			       "the report",
			       d->path, name, g->path);
		return moat_error_hint(err, "write the report outside every write grant, or use --report-fd N");
	}
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX))
		return 0;
	moat_error_set(err, MOAT_E_USAGE, 0,
		       "--report %s: the directory %s is writable by %s and not sticky: they could replace the "
		       "report",
		       d->path, name, (st->st_mode & S_IWOTH) ? "every user" : "its group");
	return moat_error_hint(err,
			       "write the report into a directory only you can write (chmod go-w %s), or a "
			       "sticky one such as /tmp; or use --report-fd N",
			       name);
}

struct ancestry_walk {
	const struct report_dest *d;
	const struct fs_plan *fp;
	struct moat_error *err;
	char *name; /* the directory's name, for messages */
};

static int ancestry_visit(const struct stat *st, void *arg)
{
	struct ancestry_walk *w = arg;

	if (check_dir(w->d, w->name, st, w->fp, w->err) < 0)
		return 1;
	dir_parent_name(w->name);
	return 0;
}

/* The report's directory and every directory above it, by ".." up to the
 * root: compared with the write grants as objects (device and inode),
 * never as names, so a bind mount, a second name or a renamed parent
 * cannot hide a grant.  `fp` NULL: the modes only (after the run). */
static int check_ancestry(const struct report_dest *d, const struct fs_plan *fp, struct moat_error *err)
{
	cleanup_free char *real = realpath(d->dir, NULL); /* for messages only */
	cleanup_free char *name = moat_xstrdup(real ? real : d->dir);
	struct ancestry_walk w = {.d = d, .fp = fp, .err = err, .name = name};
	int rc = dir_walk_up(d->dirfd, ancestry_visit, &w);

	if (rc > 0)
		return -1; /* check_dir said why */
	if (rc < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "--report %s: walking up from %s (at %s)", d->path,
				      d->dir, name);
	return 0;
}

/* --- --report-fd N: where its file is -------------------------------------
 * A file or a named FIFO given by descriptor lies in some directory too:
 * in a write grant, the command renames a forged report over its name
 * (the caller reads the name), or writes into the FIFO first.  --report
 * refused that directory; the descriptor took it without a word, and
 * moat's own hints name `--report-fd 3 3>FILE`.  Best effort: the name is
 * the kernel's for the descriptor (/proc/self/fd), taken only when that
 * name still leads to the very object; a pipe, a socket, a deleted file
 * or one outside this mount namespace has none to look at. */
struct grant_walk {
	const struct fs_plan *fp;
	const struct fs_obj *found;
};

static int grant_visit(const struct stat *st, void *arg)
{
	struct grant_walk *w = arg;

	w->found = write_grant_at(w->fp, st);
	return w->found != NULL;
}

int report_fd_check_grants(int fd, const char *opt, const struct moat_plan *plan, struct moat_error *err)
{
	char link[64], path[PATH_MAX];
	cleanup_close int dir = -1;
	struct grant_walk w = {.fp = &plan->fs};
	struct stat st, at;
	char *slash;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)))
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return 0; /* an anonymous pipe ("pipe:[N]"): no name */
	path[n] = '\0';
	slash = strrchr(path, '/');
	*slash = '\0';
	dir = open(slash == path ? "/" : path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	*slash = '/';
	if (dir < 0 || fstatat(dir, slash + 1, &at, AT_SYMLINK_NOFOLLOW) != 0 || at.st_dev != st.st_dev ||
	    at.st_ino != st.st_ino)
		return 0; /* moved, removed, or another one at the name */
	/* A step up that fails leaves nothing to say: best effort. */
	if (dir_walk_up(dir, grant_visit, &w) <= 0)
		return 0;
	moat_error_set(err, MOAT_E_USAGE, 0, "%s %d: %s lies in the write grant %s: the command could %s", opt, fd,
		       path, w.found->path,
		       S_ISFIFO(st.st_mode) ? "open it by its name and write into it first"
					    : "put a file of its own at that name");
	return moat_error_hint(err, "give %s a file outside every write grant, or a pipe only the caller holds", opt);
}

/* Only a sandbox that keeps the command's writes to its grants keeps it
 * away from the report's directory; unsandboxed, it could swap the
 * directory for its own while moat holds the old one.  Writes into *why
 * why not; false: confined, or nothing runs. */
static bool unconfined(const struct moat_plan *plan, char *why, size_t len)
{
	if (plan->status == MOAT_STATUS_UNAVAILABLE)
		return false;
	if (plan->status == MOAT_STATUS_OFF) {
		snprintf(why, len, "the sandbox is off (%.80s)", plan->backend_reason);
		return true;
	}
	if (plan->props[MOAT_P_FS_WRITE].enforced)
		return false;
	/* Landlock without a mount namespace misses fs.write for metadata
	 * and protected entries, but nothing outside the write grants can be
	 * created, renamed or removed: enough for the report. */
	if (plan->compiled.in_child && plan->compiled.in_child->landlock.abi > 0)
		return false;
	snprintf(why, len, "fs.write is not enforced (backend %.40s)", plan->backend);
	return true;
}

static int check_confined(const struct report_dest *d, const struct moat_plan *plan, struct moat_error *err)
{
	char why[128];

	if (!unconfined(plan, why, sizeof(why)))
		return 0;
	moat_error_set(err, MOAT_E_USAGE, 0,
		       "--report %s: %s: the command could write anywhere moat's user can, the report too", d->path,
		       why);
	return moat_error_hint(err, "use --report-fd N: a pipe only the caller holds");
}

/* A symlink at the name.  Renaming the report over it would destroy the
 * link (as root, `--report /dev/stdout` replaced the system's
 * /dev/stdout with a file), and following it would write wherever it
 * leads: neither is done. */
static int link_error(const struct report_dest *d, struct moat_error *err)
{
	char text[PATH_MAX];
	ssize_t n = readlinkat(d->dirfd, d->name, text, sizeof(text) - 1);
	cleanup_free char *real = realpath(d->path, NULL); /* for the hint only */
	cleanup_free char *dir = realpath(d->dir, NULL);

	text[n > 0 ? n : 0] = '\0';
	moat_error_set(err, MOAT_E_USAGE, 0,
		       "--report %s: is a symbolic link%s%s%s; moat writes a report by replacing a regular file, and "
		       "neither follows nor replaces a link",
		       d->path, n > 0 ? " (to " : "", text, n > 0 ? ")" : "");
	if (into_proc(dir) || into_proc(real) || into_proc(text) || strncmp(text, "/dev/fd/", 8) == 0)
		return moat_error_hint(err, STREAMS_HINT);
	if (real)
		return moat_error_hint(err, "name the file it leads to: --report %s", real);
	return moat_error_hint(err, "remove the link, or name another file");
}

/* What is at the name now.  A directory cannot be replaced.  In a sticky
 * directory another user's entry is theirs: the kernel refuses an
 * unprivileged rename over it, and root's moat leaves it alone as well
 * (root passes the sticky bit), so that a link someone planted in a
 * shared /tmp is neither followed nor replaced. */
static int check_existing(const struct report_dest *d, struct moat_error *err)
{
	struct stat dst, st;
	char owner[320];

	if (fstat(d->dirfd, &dst) < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "--report %s: %s", d->path, d->dir);
	if (fstatat(d->dirfd, d->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : moat_error_set(err, MOAT_E_USAGE, errno, "--report %s", d->path);
	if (S_ISDIR(st.st_mode)) {
		moat_error_set(err, MOAT_E_USAGE, 0, "--report %s: is a directory", d->path);
		return moat_error_hint(err, "name a file in it: --report %s/moat-report.json", d->path);
	}
	/* The report is renamed over the name: a device node, a FIFO or a
	 * socket there would be replaced (as root, /dev/null itself). */
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		moat_error_set(err, MOAT_E_USAGE, 0,
			       "--report %s: is a %s: moat writes a report by replacing a regular file, and does not "
			       "replace a %s",
			       d->path, kind_name(&st), kind_name(&st));
		return moat_error_hint(err, S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)
						    ? "give a pipe or socket as a descriptor: --report-fd N"
						    : "name a regular file (leave --report out for no report)");
	}
	if ((dst.st_mode & S_ISVTX) && st.st_uid != geteuid()) {
		owner_text(st.st_uid, owner, sizeof(owner));
		moat_error_set(err, MOAT_E_USAGE, 0,
			       "--report %s: a %s there belongs to %s, in a sticky directory: moat does not replace "
			       "another user's entry",
			       d->path, kind_name(&st), owner);
		return moat_error_hint(err, "remove it, or choose another name");
	}
	if (S_ISLNK(st.st_mode))
		return link_error(d, err);
	return 0;
}

static int check_can_create(const struct report_dest *d, struct moat_error *err)
{
	if (faccessat(d->dirfd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		return moat_error_set(err, MOAT_E_USAGE, errno, "--report %s: cannot create files in %s", d->path,
				      d->dir);
	return 0;
}

static int open_checked(struct report_dest *d, const char *path, const struct moat_plan *plan, struct moat_error *err)
{
	if (split_path(d, path, err) < 0 || open_dir(d, err) < 0)
		return -1;
	if (check_ancestry(d, &plan->fs, err) < 0 || check_confined(d, plan, err) < 0 || check_existing(d, err) < 0 ||
	    check_can_create(d, err) < 0)
		return -1;
	return 0;
}

int report_dest_open(struct report_dest *d, const char *path, const struct moat_plan *plan, struct moat_error *err)
{
	struct report_dest tmp;

	report_dest_init(&tmp);
	if (open_checked(&tmp, path, plan, err) < 0) {
		report_dest_free(&tmp);
		return -1;
	}
	report_dest_free(d);
	*d = tmp;
	return 0;
}

/* --- --report FILE: the write after the run ----------------------------- */

/* ".NAME.XXXXXX" with a random suffix; NAME cut to fit NAME_MAX. */
static int temp_name(const struct report_dest *d, char *buf, size_t len)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[6];
	char sfx[sizeof(rnd) + 1];
	size_t i;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	for (i = 0; i < sizeof(rnd); i++)
		sfx[i] = chars[rnd[i] % (sizeof(chars) - 1)];
	sfx[sizeof(rnd)] = '\0';
	snprintf(buf, len, ".%.*s.%s", (int)(NAME_MAX - sizeof(rnd) - 2), d->name, sfx);
	return 0;
}

/* A new file only moat has: O_EXCL and O_NOFOLLOW, so nothing planted in
 * the directory is opened instead. */
static int create_temp(const struct report_dest *d, char *name, size_t len, struct moat_error *err)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		int fd;

		if (temp_name(d, name, len) < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "--report %s: getrandom", d->path);
		/* The caller's umask: the report is the caller's file
		 * (util/umask.h). */
		fd = openat(d->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600 & ~umask_caller());
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			break;
	}
	return moat_error_set(err, MOAT_E_SYSTEM, errno, "--report %s: creating a temporary file in %s", d->path,
			      d->dir);
}

/* The written file over the name: atomic; a symlink that appeared at the
 * name is neither followed nor replaced.  Checked again first: a directory's mode may
 * have changed during the run (Landlock alone does not govern chmod), and
 * in a sticky directory another user may have put an entry at the name. */
static int replace(const struct report_dest *d, const char *tmp, struct moat_error *err)
{
	struct stat st;

	if (check_ancestry(d, NULL, err) < 0 || check_existing(d, err) < 0)
		return -1;
	/* Nothing at the name when checked: it must still be so, or an entry
	 * another user put there since would be replaced unchecked. */
	if (fstatat(d->dirfd, d->name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
		if (syscall(SYS_renameat2, d->dirfd, tmp, d->dirfd, d->name, RENAME_NOREPLACE) == 0)
			return 0;
		/* EINVAL, ENOSYS: a file system or kernel without the flag */
		if (errno != EEXIST && errno != EINVAL && errno != ENOSYS)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "--report %s: renaming the report into place",
					      d->path);
		if (errno == EEXIST && check_existing(d, err) < 0)
			return -1;
	}
	if (renameat(d->dirfd, tmp, d->dirfd, d->name) == 0)
		return 0;
	if ((errno == EPERM || errno == EACCES) && check_existing(d, err) < 0)
		return -1; /* someone else's entry appeared since: say whose */
	return moat_error_set(err, MOAT_E_SYSTEM, errno, "--report %s: renaming the report into place", d->path);
}

static int write_file(const struct report_dest *d, json_t *j, struct moat_error *err)
{
	char tmp[NAME_MAX + 1];
	cleanup_close int fd = create_temp(d, tmp, sizeof(tmp), err);
	int rc;

	if (fd < 0)
		return -1;
	rc = report_write_fd(j, fd, err);
	if (rc < 0)
		moat_error_wrap(err, "--report %s", d->path);
	else if (close(steal_fd(&fd)) < 0)
		rc = moat_error_set(err, MOAT_E_SYSTEM, errno, "--report %s: writing the report", d->path);
	if (rc == 0)
		rc = replace(d, tmp, err);
	if (rc < 0)
		unlinkat(d->dirfd, tmp, 0);
	return rc;
}

int report_dest_write(const struct report_dest *d, json_t *j, struct moat_error *err)
{
	if (d->fd >= 0)
		return report_write_fd(j, d->fd, err);
	return write_file(d, j, err);
}
