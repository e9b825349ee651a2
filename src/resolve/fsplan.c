/* Every path resolved once, to an object (fsplan.h, docs/filesystem.md). */
#include "resolve/fsplan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "resolve/gitcode.h"
#include "resolve/linkfarm.h"
#include "resolve/linkscan.h"
#include "resolve/sharedlock.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "policy/protected.h"
#include "util/mem.h"
#include "util/mountinfo.h"
#include "util/timeline.h"
#include "util/openat2.h"
#include "util/path.h"

/* As the kernel's own limit on nested links (MAXSYMLINKS). */
#define FS_MAX_LINKS 40
/* Expansion recurses one level per path component towards a deny. */
#define FS_MAX_DEPTH 32

void fs_plan_init(struct fs_plan *fp)
{
	unsigned char r[8] = {0};

	memset(fp, 0, sizeof(*fp));
	/* Made at planning, before moat's guard is forked: the guard finds
	 * the same names. */
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		memcpy(r, &ts.tv_nsec, sizeof(r) < sizeof(ts.tv_nsec) ? sizeof(r) : sizeof(ts.tv_nsec));
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(fp->placeholder_tag + 2 * i, 3, "%02x", r[i]);
}

void fs_plan_free(struct fs_plan *fp)
{
	size_t i;

	for (i = 0; i < fp->n; i++) {
		struct fs_obj *o = &fp->obj[i];
		if (o->fd >= 0)
			close(o->fd);
		if (o->dirfd >= 0)
			close(o->dirfd);
		if (o->lock_fd >= 0)
			close(o->lock_fd);
		free(o->path);
		free(o->real);
		free(o->anchor);
		free(o->link_text);
		free(o->mount_of);
		free(o->linked_secret);
		free(o->link_unchecked);
	}
	free(fp->obj);
	for (i = 0; i < fp->n_links; i++) {
		free(fp->links[i].real);
		free(fp->links[i].text);
	}
	free(fp->links);
	for (i = 0; i < fp->n_follow; i++) {
		free(fp->follow[i].real);
		free(fp->follow[i].text);
	}
	free(fp->follow);
	for (i = 0; i < fp->n_dotdot; i++)
		free(fp->dotdot[i]);
	free(fp->dotdot);
	for (i = 0; i < fp->n_excluded; i++)
		free(fp->excluded[i]);
	free(fp->excluded);
	free(fp->home_real);
	free(fp->unread_path);
	for (i = 0; i < fp->n_names; i++)
		free(fp->names[i]);
	free(fp->names);
	for (i = 0; i < fp->n_farms; i++) {
		free(fp->farms[i].dir);
		free(fp->farms[i].file);
	}
	free(fp->farms);
	free(fp->by_real);
	memset(fp, 0, sizeof(*fp));
}

void fs_plan_release_locks(struct fs_plan *fp)
{
	for (size_t i = 0; i < fp->n; i++)
		if (fp->obj[i].lock_fd >= 0) {
			close(fp->obj[i].lock_fd);
			fp->obj[i].lock_fd = -1;
		}
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void fs_plan_close_launched(struct fs_plan *fp)
{
	cleanup_free int *fds = moat_xcalloc(fp->n + 1, sizeof(int));
	size_t n = 0, i, j;

	for (i = 0; i < fp->n; i++) {
		struct fs_obj *o = &fp->obj[i];

		if ((o->role == FS_READ || o->role == FS_DENY || o->role == FS_LINK) && o->fd >= 0) {
			fds[n++] = o->fd;
			o->fd = -1;
		}
	}
	/* Opened one after another, they are mostly runs of consecutive
	 * numbers (the entries of /etc, some 150): a run whose every number is
	 * one of them is closed in one close_range(2).  Closed one by one
	 * where that call is missing (before Linux 5.9). */
	qsort(fds, n, sizeof(int), int_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && fds[j] == fds[j - 1] + 1; j++)
			;
		if (j - i < 2 || syscall(SYS_close_range, (unsigned)fds[i], (unsigned)fds[j - 1], 0) != 0)
			for (size_t k = i; k < j; k++)
				close(fds[k]);
	}
}

static struct fs_obj *obj_add(struct fs_plan *fp, enum fs_role role, const char *path)
{
	struct fs_obj *o;

	/* Cleared one at a time as added.  A strict start adds ~350: room for
	 * 512 from the first, so that the array is not copied at each
	 * doubling (8, 16, ... 512: ~0.02 ms of copies and page faults); pages
	 * not reached are never touched. */
	if (!fp->cap) {
		fp->cap = 512;
		fp->obj = moat_xmalloc(fp->cap * sizeof(*fp->obj));
	}
	fp->obj = moat_xgrow_uninit(fp->obj, &fp->cap, fp->n, sizeof(*fp->obj));
	o = &fp->obj[fp->n++];
	memset(o, 0, sizeof(*o));
	o->role = role;
	o->path = moat_xstrdup(path);
	o->fd = -1;
	o->dirfd = -1;
	o->lock_fd = -1;
	o->parent = -1;
	return o;
}

/* The excluded set is kept sorted: every path that starts with a given
 * prefix then lies in one run, and a question about a path costs a few
 * binary searches instead of a pass over the set (about 180 built-in secrets,
 * asked about every entry of every expanded directory and every bind). */

/* In `n` sorted entries of `size` bytes, each starting with a string: the
 * first entry not below the first `len` bytes of `key`.  An entry shorter
 * than `len` that `key` starts with sorts below it: strncmp meets the
 * entry's end first.  Entries that start with the same prefix are one run
 * from there. */
static size_t sorted_lower(const void *base, size_t n, size_t size, const char *key, size_t len)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *e;

		memcpy(&e, (const char *)base + mid * size, sizeof(e));
		if (strncmp(e, key, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t excluded_lower(const struct fs_plan *fp, const char *key, size_t len)
{
	return sorted_lower(fp->excluded, fp->n_excluded, sizeof(char *), key, len);
}

/* Is the first `len` bytes of `key` an entry of the set? */
static bool excluded_has(const struct fs_plan *fp, const char *key, size_t len)
{
	size_t i = excluded_lower(fp, key, len);

	return i < fp->n_excluded && strncmp(fp->excluded[i], key, len) == 0 && fp->excluded[i][len] == '\0';
}

static void excluded_add(struct fs_plan *fp, const char *real)
{
	size_t len = strlen(real), i = excluded_lower(fp, real, len);

	if (i < fp->n_excluded && strcmp(fp->excluded[i], real) == 0)
		return;
	fp->excluded = moat_xgrow(fp->excluded, &fp->cap_excluded, fp->n_excluded, sizeof(char *));
	memmove(&fp->excluded[i + 1], &fp->excluded[i], (fp->n_excluded - i) * sizeof(char *));
	fp->excluded[i] = moat_xstrdup(real);
	fp->n_excluded++;
}

/* `real` or one of the directories above it is in the set (path_within). */
bool fs_is_excluded(const struct fs_plan *fp, const char *real)
{
	size_t i, len = strlen(real);

	if (real[0] != '/')
		return false;
	if (excluded_has(fp, "/", 1))
		return true;
	for (i = 2; i <= len; i++)
		if ((i == len || real[i] == '/') && excluded_has(fp, real, i))
			return true;
	return false;
}

bool fs_has_excluded_below(const struct fs_plan *fp, const char *real)
{
	size_t len = strlen(real), i;

	if (strcmp(real, "/") == 0)
		return fp->n_excluded > (excluded_has(fp, "/", 1) ? 1u : 0u);
	/* Below `real`: the run of entries that start with "real/". */
	i = excluded_lower(fp, real, len);
	for (; i < fp->n_excluded && strncmp(fp->excluded[i], real, len) == 0; i++)
		if (fp->excluded[i][len] == '/')
			return true;
	return false;
}

int fs_find_real(const struct fs_plan *fp, const char *real)
{
	size_t i;

	for (i = 0; i < fp->n; i++)
		if ((fp->obj[i].role == FS_READ || fp->obj[i].role == FS_WRITE) && fp->obj[i].rule &&
		    !fp->obj[i].dropped && fp->obj[i].present && strcmp(fp->obj[i].real, real) == 0)
			return (int)i;
	return -1;
}

/* --- resolution ---------------------------------------------------------- */

struct walk_out {
	int fd;            /* the object, or -1 when absent */
	struct stat st;
	char *real;        /* owned */
	bool present;
	bool via_symlink;
	char *anchor;      /* absent: the last directory reached (owned) */
	char *first_missing; /* absent: anchor + the first missing name (owned) */
	int parent_fd;     /* absent: the anchor's descriptor (owned), else -1 */
	char **link_dirs;  /* the real paths of the directories the links
			    * followed sit in (owned): whether a write grant
			    * may pass them (link_fixed) */
	size_t n_link_dirs;
	char *foreign_link; /* the first link followed that another user may
			     * replace (foreign_link), or NULL (owned) */
};

/* The link `at` (lstat `lst`) in the directory `dst`: would the kernel's
 * fs.protected_symlinks refuse to follow it for this uid -- in a sticky
 * directory anyone can write (/tmp), owned by neither this uid nor the
 * directory's owner?  Its owner may replace it at any time, so it leads
 * where that user chooses.  moat reads links itself, so the sysctl never
 * sees them: the rule is applied here, whatever the sysctl says. */
static void note_foreign_link(struct walk_out *w, const struct stat *dst, const struct stat *lst, const char *at)
{
	if (w->foreign_link || !(dst->st_mode & S_ISVTX) || !(dst->st_mode & S_IWOTH) || lst->st_uid == geteuid() ||
	    lst->st_uid == dst->st_uid)
		return;
	w->foreign_link = moat_xasprintf("%s (owned by uid %u)", at, (unsigned)lst->st_uid);
}

static void walk_out_add_link_dir(struct walk_out *w, const char *dir)
{
	w->link_dirs = moat_xrealloc(w->link_dirs, (w->n_link_dirs + 1) * sizeof(*w->link_dirs));
	w->link_dirs[w->n_link_dirs++] = moat_xstrdup(dir);
}

static void walk_out_free(struct walk_out *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->parent_fd >= 0)
		close(w->parent_fd);
	free(w->real);
	free(w->anchor);
	free(w->first_missing);
	free(w->foreign_link);
	for (size_t i = 0; i < w->n_link_dirs; i++)
		free(w->link_dirs[i]);
	free(w->link_dirs);
	memset(w, 0, sizeof(*w));
	w->fd = w->parent_fd = -1;
}

/* Does the absolute, normalised `path` resolve without any symlink?  Then
 * one openat2(2) gives the object.  -1 with errno otherwise (ELOOP: a link on
 * the way; ENOENT; ENOSYS on kernels before 5.6): the caller walks. */
static int open_no_symlinks(const char *path)
{
	return moat_openat2(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			    MOAT_RESOLVE_NO_SYMLINKS | MOAT_RESOLVE_NO_MAGICLINKS);
}

static void record_link(struct fs_plan *fp, const char *real, const char *text, bool for_deny)
{
	size_t i;
	struct fs_link *l;

	for (i = 0; i < fp->n_links; i++)
		if (strcmp(fp->links[i].real, real) == 0) {
			fp->links[i].for_deny = fp->links[i].for_deny || for_deny;
			return;
		}
	fp->links = moat_xgrow(fp->links, &fp->cap_links, fp->n_links, sizeof(*fp->links));
	l = &fp->links[fp->n_links++];
	l->real = moat_xstrdup(real);
	l->text = moat_xstrdup(text);
	l->for_deny = for_deny;
	l->for_home = false;
}

/* The object's current location as the kernel sees it, to catch a rename
 * that raced the component walk.  NULL when /proc is not there. */
static bool location_matches(int fd, const char *real)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return errno == ENOENT; /* no /proc: nothing to compare with */
	buf[n] = '\0';
	return strcmp(buf, real) == 0;
}

/* The walk ends at a missing component `comp` of the directory `*cur` (real
 * path `real`), `remaining` after it: absent, with its anchor. */
static void walk_absent(struct walk_out *w, const char *real, const char *comp, const char *remaining, int *cur)
{
	cleanup_free char *tail = moat_xasprintf("%s%s", comp, remaining);

	w->anchor = moat_xstrdup(real);
	w->first_missing = path_join(real, comp);
	w->real = path_resolve_lexical(tail, real, NULL);
	w->parent_fd = steal_fd(cur);
}

/* walk_from's common case in one call: `path` present, with no link on the
 * way or at its end and no "..", is the object the component walk would
 * reach (it stops at every link, followed or not).  Its real path is
 * `start_real` joined with the components.  Returns true with *w filled;
 * false, having changed nothing, for the walk to decide. */
static bool walk_fast(int start, const char *start_real, const char *path, struct walk_out *w)
{
	char real[PATH_MAX];
	size_t len = strlen(start_real);
	const char *p = path;
	struct stat st;
	int fd;

	while (*p == '/')
		p++;
	if (!*p || len >= sizeof(real))
		return false;
	memcpy(real, start_real, len + 1);
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 2 && c[0] == '.' && c[1] == '.')
			return false;
		if (!(n == 1 && c[0] == '.')) {
			bool root = len == 1 && real[0] == '/';
			if (len + 1 + n >= sizeof(real))
				return false;
			if (!root)
				real[len++] = '/';
			memcpy(real + len, c, n);
			len += n;
			real[len] = '\0';
		}
		c += n;
		while (*c == '/')
			c++;
	}
	fd = moat_open_beneath_nolinks(start, p);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
		close(fd);
		return false;
	}
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->parent_fd = -1;
	w->st = st;
	w->real = moat_xstrdup(real);
	w->present = true;
	return true;
}

/* Resolve `path` (absolute, normalised) one component at a time from `start`
 * (a directory descriptor whose real path is `start_real`), never letting
 * the kernel follow a link: each link is read and its text walked in turn,
 * and recorded in fp->links.  `follow`: follow links at all (else a link
 * component ends the walk and is the result, as O_NOFOLLOW would give);
 * `follow_final`: also a trailing one.  An absent component ends the walk
 * with the anchor.  Returns 0 with *w filled, or -1 with err. */
static int walk_from(struct fs_plan *fp, int start, const char *start_real, const char *path, bool follow,
		     bool follow_final, bool for_deny, struct walk_out *w, struct moat_error *err)
{
	cleanup_close int cur = -1;
	cleanup_free char *rest = NULL;
	char real[PATH_MAX];
	size_t links = 0, off = 0;

	if (walk_fast(start, start_real, path, w))
		return 0;
	cur = fcntl(start, F_DUPFD_CLOEXEC, 3);
	rest = moat_xstrdup(path);
	memset(w, 0, sizeof(*w));
	w->fd = w->parent_fd = -1;
	if (cur < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", path);
	snprintf(real, sizeof(real), "%s", start_real);
	for (;;) {
		char *p = rest + off, *end, *comp;
		const char *remaining;
		size_t len;
		bool last;
		int nfd;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchr(p, '/');
		len = end ? (size_t)(end - p) : strlen(p);
		remaining = end ? end : "";
		last = strspn(remaining, "/") == strlen(remaining);
		comp = moat_xstrndup(p, len);
		off = (size_t)(p - rest) + len;
		if (strcmp(comp, ".") == 0) {
			free(comp);
			continue;
		}
		if (strcmp(comp, "..") == 0) {
			free(comp);
			if (strcmp(real, "/") != 0) {
				char *slash = strrchr(real, '/');
				if (fp->record_dotdot) {
					fp->dotdot = moat_xgrow(fp->dotdot, &fp->cap_dotdot, fp->n_dotdot, sizeof(char *));
					fp->dotdot[fp->n_dotdot++] = moat_xstrdup(real);
				}
				int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (up < 0)
					return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: resolving ..", path);
				close(cur);
				cur = up;
				if (slash == real)
					real[1] = '\0';
				else
					*slash = '\0';
			}
			continue;
		}
		nfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			int e = errno;
			if (e != ENOENT && e != ENOTDIR && e != EACCES) {
				free(comp);
				return moat_error_set(err, MOAT_E_SYSTEM, e, "%s", path);
			}
			walk_absent(w, real, comp, remaining, &cur);
			free(comp);
			return 0;
		}
		{
			struct stat st;
			cleanup_close int ofd = nfd;
			if (fstat(ofd, &st) != 0) {
				free(comp);
				return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", path);
			}
			if (S_ISLNK(st.st_mode) && follow && (!last || follow_final)) {
				char text[PATH_MAX];
				ssize_t n = readlinkat(ofd, "", text, sizeof(text) - 1);
				cleanup_free char *at = path_join(real, comp);
				char *next;

				free(comp);
				if (n < 0)
					return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: reading the link %s", path,
							      at);
				text[n] = '\0';
				if (++links > FS_MAX_LINKS) {
					moat_error_set(err, MOAT_E_USAGE, ELOOP, "%s", path);
					return moat_error_hint(err, "a symlink cycle (or more than %d links) on the way: "
								    "fix the links, or name the target",
							       FS_MAX_LINKS);
				}
				record_link(fp, at, text, for_deny);
				w->via_symlink = true;
				walk_out_add_link_dir(w, real);
				{
					struct stat dst;
					if (fstat(cur, &dst) == 0)
						note_foreign_link(w, &dst, &st, at);
				}
				next = moat_xasprintf("%s%s", text, remaining);
				free(rest);
				rest = next;
				off = 0;
				if (text[0] == '/') {
					int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
					if (root < 0)
						return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: opening /",
								      path);
					close(cur);
					cur = root;
					snprintf(real, sizeof(real), "/");
				}
				continue;
			}
			if (!last && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
				/* A file where a directory would be: the path cannot
				 * exist unless that file is replaced. */
				walk_absent(w, real, comp, remaining, &cur);
				free(comp);
				return 0;
			}
			{
				cleanup_free char *nreal = path_join(real, comp);
				free(comp);
				if (strlen(nreal) >= sizeof(real))
					return moat_error_set(err, MOAT_E_USAGE, ENAMETOOLONG, "%s", path);
				snprintf(real, sizeof(real), "%s", nreal);
			}
			close(cur);
			cur = steal_fd(&ofd);
			if (S_ISLNK(st.st_mode))
				break; /* a link not followed: it is the result */
		}
	}
	if (fstat(cur, &w->st) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", path);
	if (w->via_symlink && !location_matches(cur, real))
		return moat_error_set(err, MOAT_E_USAGE, 0, "%s changed while moat was resolving it (now %s moved)",
				      path, real);
	w->real = moat_xstrdup(real);
	w->present = true;
	w->fd = steal_fd(&cur);
	return 0;
}

/* An absent path with no link on the way (most of the built-in secrets):
 * climb with openat2 to the nearest existing directory, one call a level,
 * instead of walking every component.  Returns 1 with *w filled (absent),
 * 0 when the climb meets a link or anything unusual (the caller walks), or
 * -1 with err. */
static int climb_absent(const char *path, struct walk_out *w, struct moat_error *err)
{
	cleanup_free char *prefix = moat_xstrdup(path);
	cleanup_free char *below = NULL; /* the level that was missing */

	for (;;) {
		char *slash = strrchr(prefix, '/');
		struct stat st;
		int fd;

		free(below);
		below = moat_xstrdup(prefix);
		if (!slash)
			return 0;
		if (slash == prefix)
			slash[1] = '\0';
		else
			*slash = '\0';
		fd = open_no_symlinks(prefix);
		if (fd < 0) {
			if (errno == ENOENT && strcmp(prefix, "/") != 0)
				continue;
			return 0; /* a link (ELOOP), or no openat2: walk */
		}
		if (fstat(fd, &st) != 0) {
			close(fd);
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: %s", path, prefix);
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			return 0; /* a file where a directory would be: walk */
		}
		memset(w, 0, sizeof(*w));
		w->fd = -1;
		w->parent_fd = fd;
		w->anchor = steal_ptr(&prefix);
		w->first_missing = steal_ptr(&below);
		w->real = moat_xstrdup(path);
		return 1;
	}
}

static int walk_links(struct fs_plan *fp, const char *path, bool for_deny, size_t links, struct walk_out *w,
		      struct moat_error *err);

/* Link text that names a path without "." or ".." or an empty component
 * ("usr/bin", "/usr/lib/os-release"): joined to the link's directory it is
 * a normalised path, the one the component walk would follow. */
static bool plain_link_text(const char *text)
{
	const char *c = text[0] == '/' ? text + 1 : text;

	if (!*c)
		return false;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!c[n])
			return true;
		c += n + 1;
	}
}

/* `path` (absolute, normalised, with no link above its last component) is a
 * link, open at `fd`: follow it to its target as the component walk would,
 * and walk that.  The common case (/bin -> usr/bin on a merged-/usr
 * system): one readlinkat and the target's own openat2, where the walk from
 * "/" opened each component again.  Returns 1 with *w filled, 0 for the
 * walk to answer (text it leaves to the walk, or too many links: it
 * reports the cycle), -1 with err. */
static int follow_trailing(struct fs_plan *fp, const char *path, int fd, bool for_deny, size_t links,
			   struct walk_out *w, struct moat_error *err)
{
	char text[PATH_MAX];
	cleanup_free char *target = NULL;
	ssize_t n;

	if (links >= FS_MAX_LINKS)
		return 0;
	n = readlinkat(fd, "", text, sizeof(text) - 1);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	if (!plain_link_text(text))
		return 0;
	if (text[0] == '/') {
		target = moat_xstrdup(text);
	} else {
		const char *slash = strrchr(path, '/');
		target = moat_xasprintf("%.*s/%s", (int)(slash - path), path, text);
	}
	if (strlen(target) >= PATH_MAX)
		return 0;
	record_link(fp, path, text, for_deny);
	if (walk_links(fp, target, for_deny, links + 1, w, err) < 0)
		return -1;
	w->via_symlink = true;
	{
		cleanup_free char *dir = moat_xstrndup(path, (size_t)(strrchr(path, '/') - path));
		struct stat dst, lst;

		walk_out_add_link_dir(w, *dir ? dir : "/");
		if (fstat(fd, &lst) == 0 && stat(*dir ? dir : "/", &dst) == 0)
			note_foreign_link(w, &dst, &lst, path);
	}
	return 1;
}

static int walk_links(struct fs_plan *fp, const char *path, bool for_deny, size_t links, struct walk_out *w,
		      struct moat_error *err)
{
	cleanup_close int root = -1;
	int fd = open_no_symlinks(path), rc;

	if (fd < 0 && errno == ENOENT && (rc = climb_absent(path, w, err)) != 0)
		return rc < 0 ? -1 : 0;
	if (fd >= 0) {
		memset(w, 0, sizeof(*w));
		w->parent_fd = -1;
		if (fstat(fd, &w->st) != 0) {
			close(fd);
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", path);
		}
		if (!S_ISLNK(w->st.st_mode)) {
			w->fd = fd;
			w->real = moat_xstrdup(path);
			w->present = true;
			return 0;
		}
		rc = follow_trailing(fp, path, fd, for_deny, links, w, err);
		close(fd);
		if (rc != 0)
			return rc < 0 ? -1 : 0;
		/* else a trailing link: walked below, like any other */
	}
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s: opening /", path);
	return walk_from(fp, root, "/", path, true, true, for_deny, w, err);
}

static int walk(struct fs_plan *fp, const char *path, bool for_deny, struct walk_out *w, struct moat_error *err)
{
	int rc;

	/* Every step below clears *w before it adds to it, except on an
	 * early error: the list starts empty, and an error frees it (the
	 * rest of *w is then not the caller's to free). */
	w->link_dirs = NULL;
	w->n_link_dirs = 0;
	rc = walk_links(fp, path, for_deny, 0, w, err);
	if (rc < 0) {
		for (size_t i = 0; i < w->n_link_dirs; i++)
			free(w->link_dirs[i]);
		free(w->link_dirs);
		w->link_dirs = NULL;
		w->n_link_dirs = 0;
	}
	return rc;
}

/* --- denied paths, a directory at a time ------------------------------------- */

/* Most denied paths do not exist: about 180 built-in secrets, a handful of
 * them on a given host, and the walk finds each absent with system calls of its
 * own (climb_absent: 3 or 4 a path).  Instead the denied paths are followed
 * down from "/" together, through a tree of the directories on their way,
 * each one looked at once: one where many of them branch (HOME, ~/.config,
 * /etc) is listed, and a path whose next name its listing lacks is absent
 * without a system call; elsewhere each next name is tried once with
 * openat2.  Either way the absent path's anchor is that directory and its
 * first missing name that name, as the walk would find them.  Only
 * directories reached without any link are looked into (RESOLVE_NO_SYMLINKS),
 * so their names are their real paths; anything else -- a link, a file
 * where a directory would be, a directory that cannot be read -- is left to
 * the walk.  A name made after its directory was looked at is the race a
 * name made after the walk is: the first missing name is excluded either
 * way, so a grant holding it is expanded and nothing made there later is
 * granted (docs/filesystem.md, section 3). */

/* A directory is listed when at least this many denied paths' next names
 * differ in it.  Measured here: a listing costs about what 5 names tried
 * do, plus a fifth of one per entry (ext4 reads its index for each); with
 * 24 names a listing wins up to ~100 entries and costs about as much as
 * trying the names at ~500.  Today that lists HOME and ~/.config, and
 * tries the names in /etc (~150 entries, 19 names). */
#define LIST_MIN_NAMES 24

/* Names compared as a file system that ignores case would: a project on a
 * case-insensitive one (vfat, exFAT, SMB, ext4's casefold, a Mac's APFS
 * shared into a VM) holding `.YARNRC` has the kernel's lookup of `.yarnrc`
 * find it, and so must the listing, or the name would go unpinned and its
 * watch would miss it.  ASCII letters only: a listing with any other byte
 * (where Unicode case folding or normalisation could make two names one)
 * is not used (grant_list, dnode_open). */
static int name_casecmp(const void *a, const void *b)
{
	const unsigned char *x = *(const unsigned char *const *)a, *y = *(const unsigned char *const *)b;

	for (;; x++, y++) {
		int cx = *x >= 'A' && *x <= 'Z' ? *x + 32 : *x, cy = *y >= 'A' && *y <= 'Z' ? *y + 32 : *y;

		if (cx != cy || !cx)
			return cx - cy;
	}
}

static bool ascii_name(const char *name)
{
	for (; *name; name++)
		if ((unsigned char)*name >= 0x80)
			return false;
	return true;
}

/* The names of the open directory `dir` (not . and ..), sorted ignoring
 * ASCII case (name_casecmp), into *names, *n and *cap (the caller's to
 * free): 0, or an errno with nothing kept -- the read failed, EILSEQ for
 * a name not in ASCII (on a file system that folds case, Unicode folding
 * could make it one of the names looked up, which only a lookup tells),
 * E2BIG past `max` names (0: no bound).  The deny tree's listings and the
 * write grants' (protected entries) are both read so. */
static int list_names_ascii(DIR *dir, size_t max, char ***names, size_t *n, size_t *cap)
{
	struct dirent *e;
	int rc;
	size_t i;

	for (errno = 0; (e = readdir(dir)) != NULL; errno = 0) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (!ascii_name(e->d_name) || (max && *n >= max)) {
			errno = ascii_name(e->d_name) ? E2BIG : EILSEQ;
			break;
		}
		*names = moat_xgrow(*names, cap, *n, sizeof(char *));
		(*names)[(*n)++] = moat_xstrdup(e->d_name);
	}
	rc = errno;
	if (rc != 0) {
		for (i = 0; i < *n; i++)
			free((*names)[i]);
		free(*names);
		*names = NULL;
		*n = *cap = 0;
		return rc;
	}
	if (*n) /* an empty directory has no names array at all */
		qsort(*names, *n, sizeof(char *), name_casecmp);
	return 0;
}

enum { NODE_NOT_YET = -1, NODE_NONE = -2, NODE_ABSENT = -3, NODE_UNSEARCHABLE = -4 };

struct dnode {
	char *path;  /* reached without any link: its name is its real path */
	bool listed; /* names: its whole listing, sorted; else the names tried */
	bool unsearchable; /* a name in it gave EACCES: every name does */
	char **names;
	int *sub; /* per name: the index of its node, or NODE_* */
	size_t n, cap;
};

struct deny_tree {
	char **denied; /* the denied paths, sorted (borrowed) */
	size_t n_denied;
	struct dnode *node; /* node[0] is "/" */
	size_t n, cap;
	bool no_root; /* "/" could not be looked at: the walk answers all */
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void deny_tree_init(struct deny_tree *t, const struct moat_policy *p)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->denied = moat_xcalloc(p->n_paths + 1, sizeof(char *));
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY && p->paths[i].path[0] == '/')
			t->denied[t->n_denied++] = p->paths[i].path;
	qsort(t->denied, t->n_denied, sizeof(char *), name_cmp);
}

static void deny_tree_free(struct deny_tree *t)
{
	size_t i, j;

	for (i = 0; i < t->n; i++) {
		for (j = 0; j < t->node[i].n; j++)
			free(t->node[i].names[j]);
		free(t->node[i].names);
		free(t->node[i].sub);
		free(t->node[i].path);
	}
	free(t->node);
	free(t->denied);
	memset(t, 0, sizeof(*t));
}

/* How many different next names the denied paths below `dir` have there:
 * they are one run of the sorted list, and equal names are adjacent. */
static size_t names_below(const struct deny_tree *t, const char *dir)
{
	size_t len = strcmp(dir, "/") == 0 ? 0 : strlen(dir), lo, n = 0;
	const char *prev = NULL;
	size_t prev_len = 0;

	for (lo = sorted_lower(t->denied, t->n_denied, sizeof(char *), dir, len);
	     lo < t->n_denied && strncmp(t->denied[lo], dir, len) == 0; lo++) {
		const char *next = t->denied[lo] + len, *end;
		size_t nlen;

		if (next[0] != '/' || next[1] == '\0')
			continue; /* dir itself, or a sibling sharing its prefix */
		next++;
		end = strchr(next, '/');
		nlen = end ? (size_t)(end - next) : strlen(next);
		if (!prev || nlen != prev_len || strncmp(next, prev, nlen) != 0)
			n++;
		prev = next;
		prev_len = nlen;
	}
	return n;
}

/* Look at the directory `path`: listed when enough denied paths branch in
 * it, else only checked to be a directory reached without a link.  Its
 * node's index, NODE_ABSENT, or NODE_NONE (the walk answers below it). */
static int dnode_open(struct deny_tree *t, const char *path)
{
	bool list = names_below(t, path) >= LIST_MIN_NAMES;
	struct dnode d = {.listed = list};
	DIR *dir;
	size_t i;
	int fd = moat_openat2(AT_FDCWD, path, (list ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			      MOAT_RESOLVE_NO_SYMLINKS | MOAT_RESOLVE_NO_MAGICLINKS),
	    read_err;

	if (fd < 0 && errno == EACCES && list) {
		/* Searchable but not readable (a HOME of mode 0711): its names
		 * are tried one by one. */
		list = d.listed = false;
		fd = moat_openat2(AT_FDCWD, path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				  MOAT_RESOLVE_NO_SYMLINKS | MOAT_RESOLVE_NO_MAGICLINKS);
	}
	/* EACCES for an O_PATH open: the directory above, which this tree
	 * opened, cannot be searched by this uid (deny_by_tree). */
	if (fd < 0)
		return errno == ENOENT ? NODE_ABSENT : errno == EACCES ? NODE_UNSEARCHABLE : NODE_NONE;
	if (list) {
		dir = fdopendir(fd);
		if (!dir) {
			close(fd);
			return NODE_NONE;
		}
		read_err = list_names_ascii(dir, 0, &d.names, &d.n, &d.cap);
		closedir(dir);
		if (read_err == EILSEQ) {
			/* Its names are tried one by one, as in a directory
			 * with few denied names. */
			memset(&d, 0, sizeof(d));
		} else if (read_err != 0) {
			return NODE_NONE;
		} else {
			d.sub = moat_xcalloc(d.n + 1, sizeof(int));
			for (i = 0; i < d.n; i++)
				d.sub[i] = NODE_NOT_YET;
		}
	} else {
		close(fd);
	}
	d.path = moat_xstrdup(path);
	t->node = moat_xgrow(t->node, &t->cap, t->n, sizeof(*t->node));
	t->node[t->n] = d;
	return (int)t->n++;
}

/* The slot of `name` in `d`: found in its listing, or added to the names
 * tried (NODE_NOT_YET); -1 when a listing lacks it, even ignoring case;
 * -2 when it holds it only in another case (`.SSH` for `.ssh`): on a file
 * system that folds case (ext4's casefold, vfat, SMB, ciopfs) the lookup of
 * `.ssh` finds `.SSH`, on another it does not: only the walk tells. */
static ssize_t dnode_slot(struct dnode *d, const char *name)
{
	const char *key = name;
	char *const *hit;
	size_t i, lo, hi;

	if (d->listed) {
		hit = d->n ? bsearch(&key, d->names, d->n, sizeof(char *), name_casecmp) : NULL;
		if (!hit)
			return -1;
		/* The run of names equal to it ignoring case (`.ssh` and
		 * `.SSH` both there on a file system that keeps case). */
		for (lo = (size_t)(hit - d->names); lo > 0 && name_casecmp(&d->names[lo - 1], &key) == 0; lo--)
			;
		for (hi = lo; hi < d->n && name_casecmp(&d->names[hi], &key) == 0; hi++)
			if (strcmp(d->names[hi], name) == 0)
				return (ssize_t)hi;
		return -2;
	}
	for (i = 0; i < d->n; i++)
		if (strcmp(d->names[i], name) == 0)
			return (ssize_t)i;
	d->names = moat_xgrow(d->names, &d->cap, d->n, sizeof(char *));
	d->sub = moat_xrealloc(d->sub, d->cap * sizeof(int));
	d->names[d->n] = moat_xstrdup(name);
	d->sub[d->n] = NODE_NOT_YET;
	return (ssize_t)d->n++;
}

static void absent_at(struct walk_out *w, const char *path, const char *dir, const char *name)
{
	memset(w, 0, sizeof(*w));
	w->fd = w->parent_fd = -1;
	w->anchor = moat_xstrdup(dir);
	w->first_missing = path_join(dir, name);
	w->real = moat_xstrdup(path);
}

/* Resolve the denied `path` (absolute, normalised) down the tree.  1 with
 * *w filled as the walk fills it (absent: no descriptor; present: its
 * object), 0 when the walk must answer. */
static int deny_by_tree(struct deny_tree *t, const char *path, struct walk_out *w)
{
	const char *p = path;
	int cur = 0;

	/* Only a normalised path: `real` is the path as given, and a real
	 * of /a//home/.ssh was not found inside a grant of /a/home. */
	if (!path_is_normalised(path) || t->no_root)
		return 0;
	if (t->n == 0 && dnode_open(t, "/") < 0) {
		t->no_root = true;
		return 0;
	}
	for (;;) {
		char name[NAME_MAX + 1];
		const char *end;
		size_t len;
		ssize_t slot;
		bool last;
		int sub;

		while (*p == '/')
			p++;
		end = strchr(p, '/');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len == 0 || len > NAME_MAX || (p[0] == '.' && (len == 1 || (len == 2 && p[1] == '.'))))
			return 0;
		memcpy(name, p, len);
		name[len] = '\0';
		last = !end || end[strspn(end, "/")] == '\0';
		/* A directory this uid cannot search (a HOME of 0700 that is
		 * not the caller's: `sudo -u` keeping HOME, a run as uid 65534
		 * under root's HOME): nothing below it can be opened, so every
		 * path below is absent there, as the walk finds it (EACCES at
		 * that name) -- one open told it, not one for each of the ~180
		 * secrets. */
		if (t->node[cur].unsearchable) {
			absent_at(w, path, t->node[cur].path, name);
			return 1;
		}
		slot = dnode_slot(&t->node[cur], name);
		if (slot == -2)
			return 0;
		if (slot < 0) {
			absent_at(w, path, t->node[cur].path, name);
			return 1;
		}
		sub = t->node[cur].sub[slot];
		if (sub == NODE_NOT_YET && last) {
			if (t->node[cur].listed)
				return 0; /* it exists: the walk gives its object */
			/* One openat2, as the walk's first: present, or absent. */
			memset(w, 0, sizeof(*w));
			w->parent_fd = -1;
			w->fd = open_no_symlinks(path);
			if (w->fd < 0 && (errno == ENOENT || errno == EACCES)) {
				/* EACCES: this node's directory, whose own open
				 * succeeded, cannot be searched. */
				if (errno == EACCES)
					t->node[cur].unsearchable = true;
				t->node[cur].sub[slot] = NODE_ABSENT;
				absent_at(w, path, t->node[cur].path, name);
				return 1;
			}
			if (w->fd < 0 || fstat(w->fd, &w->st) != 0 || S_ISLNK(w->st.st_mode)) {
				if (w->fd >= 0)
					close(w->fd);
				w->fd = -1;
				return 0;
			}
			w->real = moat_xstrdup(path);
			w->present = true;
			return 1;
		}
		if (sub == NODE_NOT_YET) {
			cleanup_free char *dir = moat_xstrndup(path, (size_t)(end - path));
			sub = dnode_open(t, dir);
			if (sub == NODE_UNSEARCHABLE) {
				t->node[cur].unsearchable = true;
				sub = NODE_ABSENT;
			}
			t->node[cur].sub[slot] = sub; /* t->node may have moved: by index */
		}
		if (sub == NODE_ABSENT) {
			absent_at(w, path, t->node[cur].path, name);
			return 1;
		}
		if (sub < 0 || last)
			return 0;
		cur = sub;
		p = end;
	}
}

/* --- rules --------------------------------------------------------------- */

static void fill_present(struct fs_obj *o, struct walk_out *w)
{
	o->present = true;
	o->fd = steal_fd(&w->fd);
	o->dev = w->st.st_dev;
	o->ino = w->st.st_ino;
	o->mode = w->st.st_mode;
	o->hard_linked = S_ISREG(w->st.st_mode) && w->st.st_nlink > 1;
	o->real = steal_ptr(&w->real);
	o->via_symlink = w->via_symlink;
}

static const char *where(const struct moat_path_rule *r, char *buf, size_t len)
{
	return moat_origin_text(&r->origin, buf, len);
}

static bool from_command_line(const struct moat_path_rule *r)
{
	return moat_origin_is_command_line(&r->origin);
}

/* Directories the sandbox makes itself: a grant of one of them would mean
 * the host's, which the view never shows (the private one wins). */
static const char *sandbox_made(const struct moat_policy *p, const char *path)
{
	if (path_within(path, "/proc"))
		return "the sandbox has its own /proc (for its own processes)";
	if (strcmp(path, "/dev") == 0)
		return "the sandbox has a minimal /dev; grant device nodes one by one (--write /dev/ttyUSB0)";
	if (strcmp(path, "/run") == 0)
		return "the sandbox has a private, empty /run (it holds the host's sockets); grant what you need "
		       "below it";
	if (p->private_tmp && (strcmp(path, "/tmp") == 0 || strcmp(path, "/dev/shm") == 0))
		return "the sandbox has a private, fresh one (fs.tmp); grant a directory below it "
		       "(e.g. --write /tmp/work) to share that";
	return NULL;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Can no one but root change where the links a write grant passed lead:
 * is every directory they sit in, and every one above, root's and writable
 * by no one else (above, sticky will do), and none inside a write grant of
 * the policy?  Then the
 * caller cannot replace a link or rename a directory on its way, nor can the
 * command, which runs as the caller (or, for a root caller, as root inside
 * the write grants: so never for root).  /home -> var/home (Fedora Atomic),
 * a HOME on another disk linked from /: `--write ~/proj` names the project
 * as surely as its real path does, run after run. */
static bool links_fixed(const struct moat_policy *p, char *const *dirs, size_t n)
{
	static int uid = -1;

	if (uid < 0)
		uid = (int)geteuid();
	if (uid == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char buf[PATH_MAX];
		struct stat st;

		for (size_t k = 0; k < p->n_paths; k++)
			if (p->paths[k].access == MOAT_ACCESS_WRITE && path_within(dirs[i], p->paths[k].path))
				return false;
		if (snprintf(buf, sizeof(buf), "%s", dirs[i]) >= (int)sizeof(buf))
			return false;
		for (bool own = true;; own = false) {
			char *slash;

			/* Above the link's own directory a sticky one (/var/tmp)
			 * will do: the root-owned directory below it, checked
			 * already, cannot be renamed away by anyone else. */
			if (lstat(buf, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
			    ((st.st_mode & (S_IWGRP | S_IWOTH)) && (own || !(st.st_mode & S_ISVTX))))
				return false;
			if (strcmp(buf, "/") == 0)
				break;
			slash = strrchr(buf, '/');
			if (!slash)
				return false;
			if (slash == buf)
				slash[1] = '\0';
			else
				*slash = '\0';
		}
	}
	return true;
}

static int resolve_rule(struct fs_plan *fp, const struct moat_policy *p, const struct moat_path_rule *r,
			struct deny_tree *dt, struct moat_error *err)
{
	enum fs_role role = r->access == MOAT_ACCESS_READ ? FS_READ : r->access == MOAT_ACCESS_WRITE ? FS_WRITE : FS_DENY;
	struct walk_out w;
	struct fs_obj *o;
	const char *made;
	bool fixed_links;
	char loc[512];

	if (role != FS_DENY && (made = sandbox_made(p, r->path)) != NULL) {
		if (r->from_profile)
			return 0; /* the profile means the sandbox's own (/proc) */
		moat_error_set(err, MOAT_E_USAGE, 0, "%s: --%s %s: %s", where(r, loc, sizeof(loc)),
			       moat_access_name(r->access), r->path, made);
		return moat_error_hint(err, "remove the grant, or name a path below it");
	}
	/* walk's message starts with the path */
	if ((role != FS_DENY || !deny_by_tree(dt, r->path, &w)) && walk(fp, r->path, role == FS_DENY, &w, err) < 0)
		return moat_error_wrap(err, "%s", where(r, loc, sizeof(loc)));
	o = obj_add(fp, role, r->path);
	o->rule = r;
	if (w.present) {
		fill_present(o, &w);
	} else {
		o->real = steal_ptr(&w.real);
		o->anchor = steal_ptr(&w.anchor);
		if (role == FS_DENY) {
			if (has_glob(r->path)) {
				walk_out_free(&w);
				moat_error_set(err, MOAT_E_USAGE, 0, "%s: --deny %s: globs are not supported",
					       where(r, loc, sizeof(loc)), r->path);
				return moat_error_hint(err, "the pattern would only cover files that exist now; deny "
							    "each path, or the directory that holds them");
			}
			/* Nothing created later in the anchor may be granted:
			 * its first missing name is excluded, which expands
			 * every grant holding the anchor. */
			excluded_add(fp, w.first_missing);
		} else if (r->optional) {
			o->dropped = true;
		} else if (p->cwd && strcmp(r->path, p->cwd) == 0) {
			/* It existed when the command line was read. */
			walk_out_free(&w);
			moat_error_set(err, MOAT_E_USAGE, 0, "%s: --%s %s: the working directory was deleted while moat "
							     "was starting",
				       where(r, loc, sizeof(loc)), moat_access_name(r->access), r->path);
			return moat_error_hint(err, "cd to a directory that exists, or name one with --cwd DIR");
		} else {
			walk_out_free(&w);
			moat_error_set(err, MOAT_E_USAGE, 0,
				       "%s: --%s %s: no such file or directory (a granted path must "
				       "exist when moat starts)",
				       where(r, loc, sizeof(loc)), moat_access_name(r->access), r->path);
			if (r->access == MOAT_ACCESS_WRITE)
				return moat_error_hint(err,
						       "create it first: `mkdir -p %s` (or give --mkdir, and moat "
						       "creates it); or drop the grant",
						       r->path);
			return moat_error_hint(err, "create it first, or drop the grant");
		}
	}
	fixed_links = role == FS_WRITE && o->present && o->via_symlink && links_fixed(p, w.link_dirs, w.n_link_dirs);
	if (role != FS_DENY && o->present && w.foreign_link) {
		if (r->from_profile) {
			walk_out_free(&w);
			o->dropped = true;
			return 0;
		}
		moat_error_set(err, MOAT_E_USAGE, 0,
			       "%s: --%s %s passes through the link %s in a sticky directory anyone can write: "
			       "its owner chooses where it leads (it is %s now)",
			       where(r, loc, sizeof(loc)), moat_access_name(r->access), r->path, w.foreign_link, o->real);
		walk_out_free(&w);
		return moat_error_hint(err, "the kernel's fs.protected_symlinks would not follow it for you either; "
					    "name what you mean to grant by its real path (--%s %s)",
				       moat_access_name(r->access), o->real);
	}
	walk_out_free(&w);
	if (role != FS_DENY && o->present && o->via_symlink && (made = sandbox_made(p, o->real)) != NULL) {
		if (r->from_profile) {
			o->dropped = true;
			return 0;
		}
		moat_error_set(err, MOAT_E_USAGE, 0, "%s: --%s %s resolves to %s: %s", where(r, loc, sizeof(loc)),
			       moat_access_name(r->access), r->path, o->real, made);
		return moat_error_hint(err, "remove the grant, or name a path below it");
	}
	/* A profile's grant bound to a tree (~/.nix-profile, the store): what
	 * its links led to this time, by the descriptor's path. */
	if (role != FS_DENY && o->present && r->within && !path_within(o->real, r->within)) {
		o->dropped = true;
		return 0;
	}
	/* A grant bound to the object a check judged (a CA bundle, an
	 * interpreter's installation): a name swapped since then leads to an
	 * object nobody judged. */
	if (role != FS_DENY && o->present && r->bound && (o->dev != r->bound_dev || o->ino != r->bound_ino)) {
		o->dropped = true;
		o->swapped = true;
		return 0;
	}
	if (role == FS_WRITE && o->present && o->via_symlink && !fixed_links) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s: --write %s passes through a symlink: it is %s",
			       where(r, loc, sizeof(loc)), r->path, o->real);
		return moat_error_hint(err, "a write grant must name the real directory (--write %s): a link in a "
					    "writable place can be swapped between runs to point anywhere",
				       o->real);
	}
	if (role == FS_DENY && o->present)
		excluded_add(fp, o->real);
	return 0;
}

/* A deny by one of its names (its path, its real path), sorted: the denies
 * a grant could lie in are those named by one of the grant's ancestors, a
 * few binary searches instead of a pass over some 180 denies per grant. */
struct deny_key {
	const char *name; /* first: sorted_lower reads it */
	size_t obj;
};

static int deny_key_cmp(const void *a, const void *b)
{
	const struct deny_key *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->obj > y->obj) - (x->obj < y->obj);
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

/* Add to hits the denies named exactly `s`'s first `len` bytes. */
static void deny_keys_named(const struct deny_key *k, size_t n, const char *s, size_t len, size_t **hits,
			    size_t *n_hits, size_t *cap)
{
	size_t lo = sorted_lower(k, n, sizeof(*k), s, len);

	/* Exact names sort first among those `s` starts. */
	for (; lo < n && strncmp(k[lo].name, s, len) == 0 && k[lo].name[len] == '\0'; lo++) {
		*hits = moat_xgrow(*hits, cap, *n_hits, sizeof(size_t));
		(*hits)[(*n_hits)++] = k[lo].obj;
	}
}

/* Add to hits the denies named by `path` or a directory above it. */
static void deny_keys_above(const struct deny_key *k, size_t n, const char *path, size_t **hits, size_t *n_hits,
			    size_t *cap)
{
	size_t i, len = strlen(path);

	deny_keys_named(k, n, "/", 1, hits, n_hits, cap);
	for (i = 2; i <= len; i++)
		if (i == len || path[i] == '/')
			deny_keys_named(k, n, path, i, hits, n_hits, cap);
}

/* A grant inside a denied path, or resolving into one.  The more specific
 * rule wins between the user's own rules (peers do the same); a built-in
 * secret is never granted; a profile's grant loses to any deny. */
/* Does a flag grant what the file's grant g does (the path, with at least
 * its access)? */
static bool granted_by_flag(const struct fs_plan *fp, const struct fs_obj *g)
{
	for (size_t i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		if ((o->role == FS_READ || o->role == FS_WRITE) && o->rule && from_command_line(o->rule) &&
		    strcmp(o->path, g->path) == 0 && (o->role == FS_WRITE || g->role == FS_READ))
			return true;
	}
	return false;
}

static int check_conflicts(struct fs_plan *fp, struct moat_error *err)
{
	cleanup_free struct deny_key *keys = moat_xcalloc(2 * fp->n + 1, sizeof(*keys));
	cleanup_free size_t *hits = NULL;
	size_t i, k, n_keys = 0, n_hits, cap = 0;
	char a[512], b[512];

	/* Only the denies that exist: the grants tested are present ones
	 * (below), and a present path cannot be, or lie inside, or resolve
	 * into an absent one.  Most of the ~180 built-in secrets are absent
	 * on any one machine: sorting only the present ones is ~10x less. */
	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *d = &fp->obj[i];

		if (d->role != FS_DENY || !d->present)
			continue;
		keys[n_keys++] = (struct deny_key){d->path, i};
		if (d->real && strcmp(d->real, d->path) != 0)
			keys[n_keys++] = (struct deny_key){d->real, i};
	}
	qsort(keys, n_keys, sizeof(*keys), deny_key_cmp);
	for (i = 0; i < fp->n; i++) {
		struct fs_obj *g = &fp->obj[i];

		if ((g->role != FS_READ && g->role != FS_WRITE) || !g->present || g->dropped)
			continue;
		/* Every deny the tests below could match, in the plan's order. */
		n_hits = 0;
		deny_keys_above(keys, n_keys, g->path, &hits, &n_hits, &cap);
		deny_keys_above(keys, n_keys, g->real, &hits, &n_hits, &cap);
		if (n_hits)
			qsort(hits, n_hits, sizeof(size_t), size_cmp);
		for (k = 0; k < n_hits && !g->dropped; k++) {
			const struct fs_obj *d = &fp->obj[hits[k]];
			bool lex_equal, lex_inside, real_inside;

			if (k > 0 && hits[k] == hits[k - 1])
				continue;
			lex_equal = strcmp(g->path, d->path) == 0;
			lex_inside = !lex_equal && path_within(g->path, d->path);
			real_inside = path_within(g->real, d->real) || (d->present && path_within(g->real, d->path));
			if (!lex_equal && !lex_inside && !real_inside)
				continue;
			if (g->rule->from_profile) {
				g->dropped = true;
				continue;
			}
			if ((lex_equal || lex_inside) && d->rule->from_profile) {
				moat_error_set(err, MOAT_E_USAGE, 0,
					       "%s: %s%s %s: %s %s, which moat always denies "
					       "(%s)",
					       where(g->rule, a, sizeof(a)), from_command_line(g->rule) ? "--" : "",
					       moat_access_name(g->rule->access), g->path,
					       lex_equal ? "it is" : "it lies inside", d->path,
					       d->rule->origin.source ? d->rule->origin.source : "built-in secrets");
				return moat_error_hint(err,
						       "moat does not grant credentials; give the command a copy of "
						       "what it needs (in the project, say)");
			}
			if (lex_equal) {
				moat_error_set(err, MOAT_E_USAGE, 0, "%s: %s is both granted (%s%s) and denied (%s)",
					       where(g->rule, a, sizeof(a)), g->path, from_command_line(g->rule) ? "--" : "",
					       moat_access_name(g->rule->access),
					       where(d->rule, b, sizeof(b)));
				return moat_error_hint(err, "remove it from one of the two lists");
			}
			/* Flags go on top of a config file, and win: a file's
			 * grant (a project's own, maybe) does not open a hole in
			 * a deny given on the command line. */
			if (lex_inside && from_command_line(d->rule) && g->rule->origin.line > 0 &&
			    !granted_by_flag(fp, g)) {
				moat_error_set(err, MOAT_E_USAGE, 0,
					       "%s: --%s %s lies inside %s, denied on the command line: a config's grant "
					       "does not narrow a deny given as a flag",
					       where(g->rule, a, sizeof(a)), moat_access_name(g->rule->access), g->path,
					       d->path);
				return moat_error_hint(err,
						       "give the grant on the command line too (--%s %s) if you mean it, or "
						       "remove it from the file",
						       moat_access_name(g->rule->access), g->path);
			}
			if (lex_inside)
				continue; /* the user's more specific grant wins */
			moat_error_set(err, MOAT_E_USAGE, 0, "%s: --%s %s resolves to %s, inside the denied %s",
				       where(g->rule, a, sizeof(a)), moat_access_name(g->rule->access), g->path, g->real,
				       d->path);
			return moat_error_hint(err, "a symlink on the way leads into a denied path: remove the link "
						    "or the grant");
		}
	}
	return 0;
}

/* --- other mounts of a denied path ---------------------------------------
 * A denied object can show at more than one path: /home bound at /mnt/home
 * as well, a data disk mounted under /opt that holds the homes, a btrfs
 * top level mounted beside its subvolumes.  Landlock's rules and the view
 * follow paths, so a grant of such another path (or of a directory above
 * it, /opt of the strict profile) granted the secret under that name.  So
 * every excluded path is excluded, and a present one denied, at each path
 * where the mount table shows the same place of the same file system; the
 * rest of the plan then treats that path as it treats the deny (grants
 * around it expanded, masked in the view, a grant inside it a conflict).
 * Only pairs of mounts of one device whose roots nest can show a place
 * twice, and the excluded paths one of them shows are a run of the sorted
 * set: a few binary searches where the table has no such pair. */

/* Is mount `m` the one `path` lies on: the deepest mount point above it,
 * the last mounted there (the one on top)? */
static bool mount_holds(const struct mountinfo_entry *e, size_t n, size_t m, const char *path)
{
	size_t mlen = strlen(e[m].point);

	if (!path_within(path, e[m].point))
		return false;
	for (size_t k = 0; k < n; k++) {
		size_t klen = strlen(e[k].point);
		if (k != m && path_within(path, e[k].point) && (klen > mlen || (klen == mlen && k > m)))
			return false;
	}
	return true;
}

/* `alias` shows what the excluded `orig` is: exclude it, and deny it as
 * the deny whose object `orig` is, when there is one and `alias` is there. */
static void exclude_alias(struct fs_plan *fp, const char *orig, const char *alias)
{
	const struct moat_path_rule *rule = NULL;
	struct walk_out w;
	struct moat_error ignored = {0};

	if (strcmp(orig, alias) == 0 || excluded_has(fp, alias, strlen(alias)))
		return;
	excluded_add(fp, alias);
	for (size_t i = 0; i < fp->n && !rule; i++)
		if (fp->obj[i].role == FS_DENY && fp->obj[i].present && strcmp(fp->obj[i].real, orig) == 0)
			rule = fp->obj[i].rule;
	/* The walk may fail where the caller cannot look (EACCES): the name
	 * stays excluded, which is what keeps it from every grant. */
	if (!rule || walk(fp, alias, true, &w, &ignored) < 0)
		return;
	if (w.present && !w.via_symlink) {
		struct fs_obj *o = obj_add(fp, FS_DENY, alias);
		o->rule = rule;
		o->mount_of = moat_xstrdup(orig);
		fill_present(o, &w);
	}
	walk_out_free(&w);
}

struct mount_table {
	struct mountinfo_entry *e;
	size_t n;
};

static void mount_table_free(struct mount_table *t)
{
	if (t->e)
		mountinfo_entries_free(t->e, t->n);
}

/* The excluded paths of the sorted `set` that are `dir` or lie below it,
 * from index *i on: the next one, or NULL. */
static const char *next_within(char *const *set, size_t n, size_t *i, const char *dir)
{
	size_t len = strlen(dir);

	for (; *i < n && strncmp(set[*i], dir, len) == 0; (*i)++)
		if (path_within(set[*i], dir))
			return set[(*i)++];
	return NULL;
}

static int exclude_other_mounts(struct fs_plan *fp, struct moat_error *err)
{
	__attribute__((cleanup(mount_table_free))) struct mount_table t = {0};
	cleanup_free char **orig = NULL;
	size_t n_orig = fp->n_excluded;

	t.e = mountinfo_entries(&t.n);
	if (!t.e) {
		moat_error_set(err, MOAT_E_SYSTEM, errno,
			       "reading /proc/self/mountinfo (to find other mounts of the denied paths)");
		/* Without it a denied path bound elsewhere would be missed:
		 * moat stops rather than deny by one name only. */
		return err->errnum == ENOENT ? moat_error_hint(err, "/proc is not mounted here: mount it (mount -t proc proc "
							      "/proc), or in a container give it one (docker does)")
				       : -1;
	}
	for (size_t m = 0; m < t.n; m++) {
		for (size_t k = 0; k < t.n; k++) {
			const struct mountinfo_entry *a = &t.e[m], *b = &t.e[k];
			cleanup_free char *q = NULL;
			const char *ex;
			size_t i;

			if (k == m || a->major != b->major || a->minor != b->minor ||
			    !(path_within(b->root, a->root) || path_within(a->root, b->root)))
				continue;
			if (!orig) { /* excluded_add inserts: the set as it was */
				orig = moat_xmalloc((n_orig + 1) * sizeof(*orig));
				if (n_orig)
					memcpy(orig, fp->excluded, n_orig * sizeof(*orig));
			}
			if (path_within(b->root, a->root)) {
				/* b shows a's directory q: each excluded path on a
				 * below q shows again below b's point, and an
				 * excluded directory above q holds all of b. */
				q = path_rebase(b->root, a->root, a->point);
				i = sorted_lower(orig, n_orig, sizeof(char *), q, strlen(q));
				while ((ex = next_within(orig, n_orig, &i, q))) {
					if (mount_holds(t.e, t.n, m, ex)) {
						cleanup_free char *alias = path_rebase(ex, q, b->point);
						exclude_alias(fp, ex, alias);
					}
				}
				for (size_t len = strlen(q); len > 0;) {
					size_t plen, j;

					do
						len--;
					while (len > 0 && q[len] != '/');
					plen = len ? len : 1; /* "/a/b", "/a", "/" */
					j = sorted_lower(orig, n_orig, sizeof(char *), q, plen);
					if (j < n_orig && strlen(orig[j]) == plen && strncmp(orig[j], q, plen) == 0 &&
					    mount_holds(t.e, t.n, m, orig[j]))
						exclude_alias(fp, orig[j], b->point);
				}
			} else {
				/* b shows all of a, and more: each excluded path
				 * on a shows again at b's point + a's root. */
				q = path_rebase(a->root, b->root, b->point);
				i = sorted_lower(orig, n_orig, sizeof(char *), a->point, strlen(a->point));
				while ((ex = next_within(orig, n_orig, &i, a->point))) {
					if (mount_holds(t.e, t.n, m, ex)) {
						cleanup_free char *alias = path_rebase(ex, a->point, q);
						exclude_alias(fp, ex, alias);
					}
				}
			}
		}
	}
	return 0;
}

/* --- expansion ----------------------------------------------------------- */

/* Is the entry `name` of `dir` (its object `st`) one of the excluded
 * names directly below `real` under another spelling?  On a file system
 * that folds case (ext4's casefold, vfat, exFAT, SMB, ciopfs) the denied
 * `~/.ssh` is the listed `.SSH`: compared by name it would be granted, the
 * key readable under `.ssh`'s deny.  An excluded name equal to it ignoring
 * ASCII case, or any when either is not ASCII (Unicode folding), is looked
 * up in `dir`: the same object is the excluded one.  1 with *alias set (a
 * pointer into fp->excluded, borrowed) to the excluded path below `real`
 * whose next name it is; 0 when none; -1 with `err` set when a lookup
 * failed otherwise than by absence. */
static int excluded_alias_of(const struct fs_plan *fp, int dir, const char *real, const char *name,
			     const struct stat *st, const char **alias, struct moat_error *err)
{
	size_t len = strcmp(real, "/") == 0 ? 0 : strlen(real), i;
	bool ascii = ascii_name(name);

	for (i = excluded_lower(fp, real, len); i < fp->n_excluded && strncmp(fp->excluded[i], real, len) == 0;
	     i++) {
		const char *next = fp->excluded[i] + len;
		cleanup_free char *comp = NULL;
		const char *key;
		struct stat cs;

		if (next[0] != '/' || next[1] == '\0')
			continue;
		comp = moat_xstrndup(next + 1, strcspn(next + 1, "/"));
		key = comp;
		if (strcmp(comp, name) == 0 || (ascii && ascii_name(comp) && name_casecmp(&key, &name) != 0))
			continue;
		if (fstatat(dir, comp, &cs, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue;
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s/%s (is it %s/%s under another case?)",
					      real, comp, real, name);
		}
		if (cs.st_dev == st->st_dev && cs.st_ino == st->st_ino) {
			*alias = fp->excluded[i];
			return 1;
		}
	}
	return 0;
}

/* Give the grant's rules to each entry of `dir` (the descriptor of a
 * directory at `real`) instead of to the directory, leaving out what is
 * excluded and expanding again each entry with an excluded path below it.
 * Links are recorded as FS_LINK (the view shows them; no rule follows them:
 * their targets are judged by their own grants). */
static int expand(struct fs_plan *fp, size_t grant, int dir, const char *real, int depth, struct moat_error *err)
{
	enum fs_role role = fp->obj[grant].role;
	cleanup_close int rd = -1;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (depth > FS_MAX_DEPTH)
		return moat_error_set(err, MOAT_E_USAGE, 0, "%s: too deep to expand around the denied paths below it",
				      real);
	/* Inside an excluded directory every entry is excluded: nothing to
	 * give.  Outside one, an entry is excluded only by its own name: the
	 * directories above it are `real`'s, just asked (one lookup an entry
	 * instead of one for each level above it). */
	if (fs_is_excluded(fp, real))
		return 0;
	rd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* A directory this uid cannot list (/root as uid 65534 under
	 * `--read /` with HOME=/root) has no entries to grant: nothing below
	 * it is granted, which is no more than the uid could reach by
	 * listing, and fails closed for names it could open (0711). */
	if (rd < 0 && errno == EACCES)
		return 0;
	if (rd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "listing %s (to grant it around a denied path)",
				      real);
	d = fdopendir(rd);
	if (!d)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "listing %s", real);
	rd = -1; /* owned by d */
	while ((e = readdir(d)) != NULL && rc == 0) {
		cleanup_free char *child = NULL;
		struct stat st;
		struct fs_obj *o;
		const char *alias = NULL;
		int efd, alias_rc;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		child = path_join(real, e->d_name);
		if (excluded_has(fp, child, strlen(child)))
			continue;
		efd = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (efd < 0) {
			int open_err = errno;
			if (open_err == ENOENT)
				continue; /* gone since readdir */
			rc = moat_error_set(err, MOAT_E_SYSTEM, open_err, "%s", child);
			if (open_err == EMFILE)
				moat_error_fd_hint(err, "%s holds a denied path, so each of its entries is granted on its own, "
						     "with a descriptor each: raise the hard open-file limit (ulimit -Hn), "
						     "or grant a directory below it",
						real);
			break;
		}
		if (fstat(efd, &st) != 0) {
			rc = moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", child);
			close(efd);
			break;
		}
		alias_rc = excluded_alias_of(fp, dirfd(d), real, e->d_name, &st, &alias, err);
		if (alias_rc != 0) {
			size_t rlen = strcmp(real, "/") == 0 ? 0 : strlen(real);

			if (alias_rc < 0 || excluded_has(fp, alias, rlen + 1 + strcspn(alias + rlen + 1, "/"))) {
				close(efd); /* the excluded object itself: not granted */
				rc = alias_rc < 0 ? -1 : 0;
				if (rc < 0)
					break;
				continue;
			}
			/* A directory above an excluded path: expanded under
			 * the excluded spelling, which its lookups share, so
			 * the names below compare as the excluded ones. */
			free(child);
			child = moat_xstrndup(alias, rlen + 1 + strcspn(alias + rlen + 1, "/"));
		}
		o = obj_add(fp, S_ISLNK(st.st_mode) ? FS_LINK : role, child);
		o->parent = (int)grant;
		o->present = true;
		o->fd = efd;
		o->real = moat_xstrdup(child);
		o->dev = st.st_dev;
		o->ino = st.st_ino;
		o->mode = st.st_mode;
		if (S_ISLNK(st.st_mode)) {
			char text[PATH_MAX];
			ssize_t n = readlinkat(efd, "", text, sizeof(text) - 1);
			if (n < 0) {
				rc = moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", child);
				break;
			}
			text[n] = '\0';
			o->link_text = moat_xstrdup(text);
		} else if (S_ISDIR(st.st_mode) && fs_has_excluded_below(fp, child)) {
			o->chain = true;
			rc = expand(fp, grant, efd, child, depth + 1, err);
		}
	}
	closedir(d);
	return rc;
}

/* --- protected entries --------------------------------------------------- */

/* --- the objects by real path ---------------------------------------------
 * A write grant over a folder of repositories holds a few entries in each
 * (about 5 a repository, 1000 for 200), and each new one asks whether its
 * path, or a directory above it, is held already: a pass over the plan
 * each time made planning quadratic.  The table answers from the entries'
 * real paths; it is filled when asked, with every object added since
 * (their real path is set as they are added), and an object whose real
 * path is not set yet is looked at by a pass over the few after it. */

static uint64_t real_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void by_real_put(struct fs_plan *fp, size_t i)
{
	size_t mask, h;

	if (2 * (fp->by_real_n + 1) > fp->by_real_cap) {
		size_t old_cap = fp->by_real_cap, k;
		size_t *old = fp->by_real;

		fp->by_real_cap = old_cap ? 2 * old_cap : 256;
		fp->by_real = moat_xcalloc(fp->by_real_cap, sizeof(*fp->by_real));
		fp->by_real_n = 0;
		for (k = 0; k < old_cap; k++)
			if (old[k])
				by_real_put(fp, old[k] - 1);
		free(old);
	}
	mask = fp->by_real_cap - 1;
	for (h = real_hash(fp->obj[i].real) & mask; fp->by_real[h]; h = (h + 1) & mask)
		;
	fp->by_real[h] = i + 1;
	fp->by_real_n++;
}

typedef bool (*obj_test)(const struct fs_obj *o);

/* The first object (in table order) whose real path is `real` and that
 * passes `test`, or NULL. */
static struct fs_obj *find_at(struct fs_plan *fp, const char *real, obj_test test)
{
	size_t i;

	while (fp->by_real_upto < fp->n && fp->obj[fp->by_real_upto].real)
		by_real_put(fp, fp->by_real_upto++);
	if (fp->by_real_cap) {
		size_t mask = fp->by_real_cap - 1, h;
		for (h = real_hash(real) & mask; fp->by_real[h]; h = (h + 1) & mask) {
			struct fs_obj *o = &fp->obj[fp->by_real[h] - 1];
			if (strcmp(o->real, real) == 0 && test(o))
				return o;
		}
	}
	for (i = fp->by_real_upto; i < fp->n; i++)
		if (fp->obj[i].real && strcmp(fp->obj[i].real, real) == 0 && test(&fp->obj[i]))
			return &fp->obj[i];
	return NULL;
}

static bool is_protect(const struct fs_obj *o)
{
	return o->role == FS_PROTECT;
}

static bool is_pin(const struct fs_obj *o)
{
	return o->role == FS_PIN;
}

static bool is_held(const struct fs_obj *o)
{
	return o->role == FS_PROTECT || o->role == FS_PIN;
}

/* A directory this run pins read-only whole (what is below it cannot be
 * written or created). */
static bool is_pinned_dir(const struct fs_obj *o)
{
	return o->role == FS_PROTECT && o->present && !o->lifted && S_ISDIR(o->mode);
}

static bool is_write_grant(const struct fs_obj *o)
{
	return o->role == FS_WRITE && o->rule && !o->rule->from_profile && o->present && !o->dropped;
}

static bool protect_known(struct fs_plan *fp, const char *real)
{
	return find_at(fp, real, is_held) != NULL;
}

/* Inside a protected directory this run pins read-only whole: nothing
 * there can be written or created, so nothing more to pin.  Asked of each
 * directory above `real`. */
static bool inside_pinned(struct fs_plan *fp, const char *real)
{
	char up[PATH_MAX];
	size_t len = strlen(real);
	char *slash;

	if (len >= sizeof(up) || real[0] != '/')
		return false;
	memcpy(up, real, len + 1);
	while ((slash = strrchr(up, '/')) != NULL && len > 1) {
		if (slash == up)
			slash[1] = '\0';
		else
			*slash = '\0';
		len = strlen(up);
		if (find_at(fp, up, is_pinned_dir))
			return true;
		if (len == 1)
			break;
	}
	return false;
}

static bool lifted(const struct moat_policy *p, const char *lexical, const char *real, bool *used)
{
	size_t i;
	bool hit = false;

	for (i = 0; i < p->n_unprotect; i++)
		if (path_within(lexical, p->unprotect[i].path) || path_within(real, p->unprotect[i].path)) {
			used[i] = true;
			hit = true;
		}
	return hit;
}


/* An explicit write grant of exactly this object: the user asked for it. */
static bool granted_write_exactly(struct fs_plan *fp, const char *real)
{
	return find_at(fp, real, is_write_grant) != NULL;
}

/* Could the command create an entry in the directory `dirfd`?  It runs
 * with this process's uid and no capabilities: it can if this process may
 * (the effective ids; root's capabilities count), and also if this uid owns
 * the directory, whatever its mode now -- the owner may chmod it (a run
 * before this one may have left `chmod 000 .git` for the next).  Not on a
 * read-only file system. */
static bool can_create_in(int dirfd)
{
	struct statvfs sv;
	struct stat st;

	if (fstatvfs(dirfd, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		return false;
	if (fstat(dirfd, &st) == 0 && st.st_uid == geteuid())
		return true;
	return faccessat(dirfd, ".", W_OK | X_OK, AT_EACCESS) == 0;
}

/* The directory can be written only after a chmod: this uid owns it, its
 * mode says no.  The command could chmod it back and create there; moat,
 * this uid too, could not make a placeholder in it (EACCES). */
static bool writable_only_after_chmod(int dirfd)
{
	struct stat st;

	return fstat(dirfd, &st) == 0 && st.st_uid == geteuid() &&
	       faccessat(dirfd, ".", W_OK | X_OK, AT_EACCESS) != 0 && errno == EACCES;
}

/* The directories from the grant down to (not including) `real`: pinned,
 * because renaming one would carry the protected entry away with it and
 * leave its name free (`mv .git .git-old; mkdir .git`). */
static int pin_between(struct fs_plan *fp, size_t grant, const char *real, struct moat_error *err)
{
	const struct fs_obj *g = &fp->obj[grant];
	size_t glen = strlen(g->real);
	const char *p = real + glen + (strcmp(g->real, "/") == 0 ? 0 : 1), *slash;
	cleanup_close int cur = -1;
	char at[PATH_MAX];

	if (!strchr(p, '/'))
		return 0; /* in the grant's own directory: nothing between */
	if ((cur = fcntl(g->fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", g->real);
	snprintf(at, sizeof(at), "%s", g->real);
	while ((slash = strchr(p, '/')) != NULL) {
		cleanup_free char *comp = moat_xstrndup(p, (size_t)(slash - p));
		cleanup_free char *next = path_join(at, comp);
		struct stat st;
		struct fs_obj *o;
		int fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st) != 0) {
			if (fd >= 0)
				close(fd);
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", next);
		}
		snprintf(at, sizeof(at), "%s", next);
		p = slash + 1;
		close(cur);
		cur = fd;
		if (protect_known(fp, at))
			continue;
		o = obj_add(fp, FS_PIN, at);
		o->real = moat_xstrdup(at);
		o->present = true;
		o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (o->fd < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", at);
		o->dev = st.st_dev;
		o->ino = st.st_ino;
		o->mode = st.st_mode;
		o->parent = (int)grant;
	}
	return 0;
}

/* A pinned directory keeps this run's shared lock (`lock_fd`, or -1); one
 * that is another run's placeholder is adopted: this run removes it too,
 * when it is the last to hold it, from its directory (resolve/sharedlock.h). */
static void hold_pinned(struct fs_obj *o, int lock_fd)
{
	o->lock_fd = lock_fd;
	o->adopted = lock_fd >= 0 && shared_is_placeholder(lock_fd);
	if (o->adopted && o->dirfd < 0)
		o->dirfd = openat(o->fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* A link or listing `path` not read for `e`: recorded (the first), and
 * the plan fails in protect_links rather than leave its target open. */
static void unread(struct fs_plan *fp, int e, const char *path)
{
	if (fp->unread_errno)
		return;
	fp->unread_errno = e ? e : EIO;
	fp->unread_path = moat_xstrdup(path);
}

/* A protected name that is a link but excluded (a deny went through it):
 * no entry of its own, but its target is followed (protect_links). */
static void follow_add(struct fs_plan *fp, int link_fd, const char *real)
{
	char text[PATH_MAX];
	ssize_t n = readlinkat(link_fd, "", text, sizeof(text) - 1);
	size_t i;

	/* EINVAL: not a link (a hooks directory's DT_UNKNOWN file). */
	if (n < 0 && errno != EINVAL)
		unread(fp, errno, real);
	if (n <= 0)
		return;
	text[n] = '\0';
	for (i = 0; i < fp->n_follow; i++)
		if (strcmp(fp->follow[i].real, real) == 0)
			return;
	fp->follow = moat_xgrow(fp->follow, &fp->cap_follow, fp->n_follow, sizeof(*fp->follow));
	fp->follow[fp->n_follow].real = moat_xstrdup(real);
	fp->follow[fp->n_follow].text = moat_xstrdup(text);
	fp->follow[fp->n_follow++].for_deny = true;
}

/* --- a write grant's top directory, listed once -----------------------------
 * Every write grant has ~100 protected names looked up from its root
 * (policy/protected.c), most of them absent in a given project, and the
 * walk finds each absent with system calls of its own (an openat2, a
 * per-component openat, and more for a missing directory on the way).
 * Instead the grant's root is listed once, as the deny tree lists a
 * directory many denied names branch in ("denied paths, a directory at a
 * time"): a name whose first component the listing lacks is absent, at
 * the grant's root, without a system call -- its anchor the grant, its
 * first missing name that component, as the walk would find them.  Only
 * absence is taken from the listing; a name it holds is walked as before,
 * so links, files where a directory is expected and everything below are
 * what the walk says they are.
 *
 * A name made after the listing is the race a name made after the walk
 * is, for the same actors (planning runs before the command starts: only
 * the host or another run can make it) and with the same outcome: a
 * placeholder's name is made with RENAME_NOREPLACE, and one taken since
 * planning is pinned as what it is (fs_placeholders_make); a watched name
 * is looked at after the run either way; an ignored one gets nothing
 * either way.  A name removed after the listing is walked and found
 * absent, as before.  A name the listing holds in another case is walked
 * (name_casecmp).  A root that cannot be listed (not readable, a listing
 * that fails part-way), is too large to be worth it, or holds a name not
 * in ASCII is walked name by name, as before. */

/* Past this many entries a listing costs more than walking the names: it
 * costs about a fifth of a system call an entry (ext4 reads its index for
 * each, measured for the deny tree), against 5-7 calls saved for each of
 * the ~80 names that begin at the root. */
#define GRANT_LIST_MAX 2048

struct grant_listing {
	bool tried;  /* listed or not, once (after the run: look_again_watched) */
	bool listed; /* else every name is walked */
	char **names; /* the root's names, sorted ignoring case (name_casecmp) */
	size_t n, cap;
};

static void grant_listing_free(struct grant_listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

/* List the directory `dir_fd` (the grant's, O_PATH) into `l`: listed, or
 * not (l->listed false: the names are walked). */
static void grant_list(struct grant_listing *l, int dir_fd)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_closedir DIR *d = NULL;

	memset(l, 0, sizeof(*l));
	if (fd < 0)
		return;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	/* Failed part-way, too large, or not ASCII: the names are walked. */
	l->listed = list_names_ascii(d, GRANT_LIST_MAX, &l->names, &l->n, &l->cap) == 0;
}

/* Does the listing `l` (or NULL) lack the first component of `rel`? */
static bool listing_lacks(const struct grant_listing *l, const char *rel)
{
	size_t len = strcspn(rel, "/");
	cleanup_free char *comp = NULL;
	const char *key;

	if (!l || !l->listed || len == 0 || (rel[0] == '.' && (len == 1 || (len == 2 && rel[1] == '.'))))
		return false;
	comp = moat_xstrndup(rel, len);
	key = comp;
	return !l->n || !bsearch(&key, l->names, l->n, sizeof(char *), name_casecmp);
}

/* `rel` (below the grant `g`) is absent by the grant's listing: *w filled
 * as walk_from fills it for a name missing at the root, except that no
 * descriptor is held (parent_fd -1: protect_one_try takes the grant's
 * when it needs one).  False when the listing does not say. */
static bool absent_listed(const struct grant_listing *l, const struct fs_obj *g, const char *rel, struct walk_out *w)
{
	cleanup_free char *comp = NULL;

	if (!listing_lacks(l, rel))
		return false;
	comp = moat_xstrndup(rel, strcspn(rel, "/"));
	memset(w, 0, sizeof(*w));
	w->fd = w->parent_fd = -1;
	w->anchor = moat_xstrdup(g->real);
	w->first_missing = path_join(g->real, comp);
	w->real = path_resolve_lexical(rel, g->real, NULL);
	return true;
}

/* Returns 1, before it added anything to the plan, when a directory it
 * was about to pin was removed while it waited for its lock (another run
 * removing its placeholder): the caller looks again. */
static int protect_one_try(struct fs_plan *fp, const struct moat_policy *p, size_t grant,
			   const struct grant_listing *top, const char *name, enum protected_absent absent, bool *used,
			   struct moat_error *err)
{
	const struct fs_obj *g = &fp->obj[grant];
	size_t nlen = strlen(name);
	bool is_dir = nlen > 0 && name[nlen - 1] == '/';
	cleanup_free char *rel = moat_xstrndup(name, is_dir ? nlen - 1 : nlen);
	cleanup_free char *lexical = path_join(g->path, rel);
	cleanup_close int lock_fd = -1;
	struct walk_out w;
	struct fs_obj *o;
	bool watch_deep = false, watched;

	/* Inside the grant nothing is followed: a link on the way is itself
	 * what is protected (it cannot be swapped), and a file where a
	 * directory was expected (.git as a worktree's pointer file) too.
	 * Absent by the grant's listing: as the walk finds it, anchored at
	 * the grant. */
	if (!absent_listed(top, g, rel, &w) && walk_from(fp, g->fd, g->real, rel, false, false, false, &w, err) < 0)
		return moat_error_wrap(err, "protected entries of the write grant %s", g->real);
	if (inside_pinned(fp, w.real)) {
		walk_out_free(&w);
		return 0;
	}
	/* A directory to pin: held against removal by another run for as
	 * long as this one runs (resolve/sharedlock.h). */
	if (w.present && S_ISDIR(w.st.st_mode) && (lock_fd = shared_lock_take(w.fd)) == -2) {
		walk_out_free(&w);
		return 1;
	}
	if (!w.present && w.first_missing && strcmp(w.first_missing, w.real) != 0) {
		/* An intermediate component is missing, or is not a
		 * directory: stop there. */
		struct stat st;
		cleanup_free char *comp_real = moat_xstrdup(w.first_missing);
		const char *base = strrchr(comp_real, '/') + 1;
		/* No descriptor: the listing lacks it (absent_listed). */
		if (w.parent_fd >= 0 && fstatat(w.parent_fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			/* A file (or link) where the directory would be. */
			int fd = openat(w.parent_fd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			walk_out_free(&w);
			if (fd < 0)
				return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", comp_real);
			if (protect_known(fp, comp_real) || fs_is_excluded(fp, comp_real)) {
				if (S_ISLNK(st.st_mode) && fs_is_excluded(fp, comp_real))
					follow_add(fp, fd, comp_real);
				close(fd);
				return 0;
			}
			if (lifted(p, lexical, comp_real, used) || granted_write_exactly(fp, comp_real)) {
				close(fd);
				o = obj_add(fp, FS_PROTECT, comp_real);
				o->real = moat_xstrdup(comp_real);
				o->parent = (int)grant;
				o->protect_name = name;
				o->lifted = true;
				return 0;
			}
			if (pin_between(fp, grant, comp_real, err) < 0) {
				close(fd);
				return -1;
			}
			o = obj_add(fp, FS_PROTECT, comp_real);
			o->fd = fd;
			o->present = true;
			o->real = moat_xstrdup(comp_real);
			o->dev = st.st_dev;
			o->ino = st.st_ino;
			o->mode = st.st_mode;
			o->parent = (int)grant;
			o->protect_name = name;
			return 0;
		}
		if (absent == PROTECTED_ABSENT_WATCH_DEEP && !is_dir) {
			/* A program the repository's config names, in a
			 * directory not made yet (core.fsmonitor =
			 * scripts/git/fsm before scripts/ is): a placeholder
			 * directory on the way would stop a build making it,
			 * so the program itself is watched, by its name
			 * below the grant (fs_plan_made_watched).  Skipped,
			 * the command made it and the host's next git ran
			 * it, with fs.write said enforced. */
			watch_deep = true;
		} else {
			/* Missing: the placeholder is the first missing
			 * directory. */
			free(w.real);
			w.real = moat_xstrdup(w.first_missing);
			is_dir = true;
		}
	}
	/* Absent, in a directory of the grant that is itself a placeholder
	 * (another run's `.git`, empty and read-only: moat cannot make
	 * `.git/hooks` in it) or that this uid could write only after a chmod
	 * (an earlier run's `chmod 000 .git`): that directory is what is
	 * protected, pinned read-only whole -- then nothing can be created in
	 * it, and no chmod made inside, on a read-only mount. */
	if (!w.present && w.parent_fd >= 0 && w.anchor && strcmp(w.anchor, g->real) != 0 &&
	    !protect_known(fp, w.anchor)) {
		cleanup_close int lk = shared_lock_take(w.parent_fd);
		struct stat st;
		int rc = 0;

		if (lk == -2) {
			walk_out_free(&w);
			return 1;
		}
		if ((lk >= 0 && shared_is_placeholder(lk)) || writable_only_after_chmod(w.parent_fd)) {
			if (fstat(w.parent_fd, &st) != 0)
				rc = moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", w.anchor);
			else if ((rc = pin_between(fp, grant, w.anchor, err)) == 0) {
				o = obj_add(fp, FS_PROTECT, w.anchor);
				o->parent = (int)grant;
				o->protect_name = name;
				o->present = true;
				o->real = steal_ptr(&w.anchor);
				o->fd = steal_fd(&w.parent_fd);
				o->dev = st.st_dev;
				o->ino = st.st_ino;
				o->mode = st.st_mode;
				hold_pinned(o, steal_fd(&lk));
			}
			walk_out_free(&w);
			return rc;
		}
	}
	if (protect_known(fp, w.real) || fs_is_excluded(fp, w.real)) {
		struct fs_obj *po;

		if (w.present && S_ISLNK(w.st.st_mode) && fs_is_excluded(fp, w.real) && !lifted(p, lexical, w.real, used))
			follow_add(fp, w.fd, w.real);
		/* Pinned already, as a directory on the way to another entry
		 * (a protected link's target in it): that pin only holds the
		 * name; this entry is protected whole, read-only. */
		po = find_at(fp, w.real, is_pin);
		if (po && !find_at(fp, w.real, is_protect) && !lifted(p, lexical, w.real, used) &&
		    !granted_write_exactly(fp, w.real)) {
			po->role = FS_PROTECT;
			po->protect_name = name;
			po->parent = (int)grant;
			if (po->lock_fd < 0 && lock_fd >= 0)
				hold_pinned(po, steal_fd(&lock_fd));
		}
		walk_out_free(&w);
		return 0;
	}
	if (lifted(p, lexical, w.real, used) || granted_write_exactly(fp, w.real)) {
		o = obj_add(fp, FS_PROTECT, w.real);
		o->real = steal_ptr(&w.real);
		o->parent = (int)grant;
		o->protect_name = name;
		o->lifted = true;
		walk_out_free(&w);
		return 0;
	}
	if (!w.present && absent == PROTECTED_ABSENT_IGNORED) {
		walk_out_free(&w);
		return 0;
	}
	watched = (absent == PROTECTED_ABSENT_WATCH || absent == PROTECTED_ABSENT_WATCH_DEEP) && !is_dir;
	/* Absent by the grant's listing, with a placeholder to make: in the
	 * grant's own directory (its anchor), whose descriptor it keeps. */
	if (!w.present && !watched && w.parent_fd < 0 &&
	    (w.parent_fd = fcntl(fp->obj[grant].fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		int e = errno;

		walk_out_free(&w);
		return moat_error_set(err, MOAT_E_SYSTEM, e, "%s", fp->obj[grant].real);
	}
	/* The directories that exist on the way are pinned: up to the
	 * anchor, for a watched name whose own directory is not made yet. */
	if (pin_between(fp, grant, watch_deep ? w.first_missing : w.real, err) < 0) {
		walk_out_free(&w);
		return -1;
	}
	/* A write grant names its real path (no link on the way), so the
	 * real path is also the name the policy would use. */
	o = obj_add(fp, FS_PROTECT, w.real);
	o->parent = (int)grant;
	o->protect_name = name;
	if (w.present) {
		fill_present(o, &w);
		hold_pinned(o, steal_fd(&lock_fd));
		if (S_ISLNK(o->mode)) {
			char text[PATH_MAX];
			ssize_t n = readlinkat(o->fd, "", text, sizeof(text) - 1);
			if (n >= 0) {
				text[n] = '\0';
				o->link_text = moat_xstrdup(text);
			} else {
				/* Its target, which the shell reads for
				 * it, would go unprotected. */
				unread(fp, errno, o->real);
			}
		}
	} else if (watched) {
		/* Nothing can stand in for it (policy/protected.c): whether
		 * it was made is looked up after the run. */
		o->real = steal_ptr(&w.real);
		o->anchor = steal_ptr(&w.anchor);
		o->watch = true;
	} else if (!can_create_in(w.parent_fd)) {
		/* The caller cannot create it there, so neither can the
		 * command (the same uid, without capabilities): nothing to
		 * hold in its place. */
		o->real = steal_ptr(&w.real);
		o->anchor = steal_ptr(&w.anchor);
	} else {
		o->real = steal_ptr(&w.real);
		o->anchor = steal_ptr(&w.anchor);
		o->dirfd = steal_fd(&w.parent_fd); /* the directory to make it in */
		o->placeholder = true;
		/* An empty, read-only directory, even where a file would be:
		 * it blocks the file as well, and git, editors and `git add
		 * -A` ignore an empty directory, where an empty .mcp.json or
		 * .envrc would be picked up (and committed).  Except for a
		 * config file git reads, where a directory makes git fail and
		 * an empty file is an empty config. */
		o->placeholder_dir = is_dir || absent != PROTECTED_ABSENT_FILE;
	}
	walk_out_free(&w);
	return 0;
}

/* The protected entry `name` of the write grant `grant`; `top`, the
 * grant's listing or NULL, tells the names absent at its root. */
static int protect_one_listed(struct fs_plan *fp, const struct moat_policy *p, size_t grant,
			      const struct grant_listing *top, const char *name, enum protected_absent absent,
			      bool *used, struct moat_error *err)
{
	int tries, rc = 1;

	for (tries = 0; tries < 5 && rc == 1; tries++)
		rc = protect_one_try(fp, p, grant, top, name, absent, used, err);
	if (rc == 1)
		return moat_error_set(err, MOAT_E_SYSTEM, EAGAIN,
				      "%s/%s: removed and made again while moat planned (another run's placeholder)",
				      fp->obj[grant].real, name);
	return rc;
}

static int protect_one(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *name,
		       enum protected_absent absent, bool *used, struct moat_error *err)
{
	return protect_one_listed(fp, p, grant, NULL, name, absent, used, err);
}

/* A name made for this plan, kept as long as the plan (protect_name). */
static const char *plan_name(struct fs_plan *fp, char *name)
{
	fp->names = moat_xgrow(fp->names, &fp->cap_names, fp->n_names, sizeof(char *));
	return fp->names[fp->n_names++] = name;
}

static bool is_write_grant_dir(const struct fs_obj *g)
{
	return g->role == FS_WRITE && g->rule && g->present && !g->dropped && S_ISDIR(g->mode);
}

/* The entry at `real` (a directory when `dir`), protected in the write
 * grant `grant` when it lies below it. */
static int protect_at(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *real, bool dir,
		      enum protected_absent absent, bool *used, struct moat_error *err)
{
	const char *groot = fp->obj[grant].real;
	size_t glen = strlen(groot);

	if (strcmp(real, groot) == 0 || !path_within(real, groot))
		return 0;
	return protect_one(fp, p, grant, plan_name(fp, moat_xasprintf("%s%s", real + glen + (glen > 1), dir ? "/" : "")),
			   absent, used, err);
}

/* HOME's protected entries wherever the grant holds them: at HOME's place
 * in a grant that holds HOME (`--write /home`), and those below a grant
 * inside HOME (`--write ~/.config` holds ~/.config/moat and git's config).
 * A grant inside one of them (`--write ~/.config/moat/x`) asked for it. */
static int protect_home(struct fs_plan *fp, const struct moat_policy *p, size_t grant,
			const struct grant_listing *top, bool *used, struct moat_error *err)
{
	size_t j, nh;
	const char *const *home_names = policy_protected_home_names(&nh);

	if (!fp->home_real || (!path_within(fp->home_real, fp->obj[grant].real) &&
			       !path_within(fp->obj[grant].real, fp->home_real)))
		return 0;
	for (j = 0; j < nh; j++) {
		size_t len = strlen(home_names[j]);
		bool dir = home_names[j][len - 1] == '/';
		cleanup_free char *real = moat_xasprintf("%s/%.*s", fp->home_real, (int)(len - dir), home_names[j]);
		enum protected_absent absent = policy_protected_home_when_absent(home_names[j]);

		if (strcmp(fp->obj[grant].real, fp->home_real) == 0) {
			if (protect_one_listed(fp, p, grant, top, home_names[j], absent, used, err) < 0)
				return -1;
		} else if (protect_at(fp, p, grant, real, dir, absent, used, err) < 0) {
			return -1;
		}
	}
	return 0;
}

/* What the repository whose work tree is `top` (`top_fd`) names as code in
 * its pinned .git/config and .gitmodules (resolve/gitcode.h), protected in
 * every write grant it lies in. */
static int protect_code_list(struct fs_plan *fp, const struct moat_policy *p, const struct git_code *gc, bool *used,
			     struct moat_error *err)
{
	size_t i, k, n_grants = fp->n;
	int rc = 0;

	for (i = 0; i < gc->n && rc == 0; i++) {
		const struct git_code_path *c = &gc->p[i];
		/* A directory (hooks) or a gitfile: an empty directory
		 * stands in; a config git includes: an empty file. */
		enum protected_absent absent =
			c->dir || c->gitfile ? PROTECTED_ABSENT_PLACEHOLDER : PROTECTED_ABSENT_FILE;
		cleanup_free char *path = moat_xstrdup(c->path);
		bool dir = c->dir;
		struct stat st;

		/* A program a command of the config runs: held when there;
		 * absent, watched, also where its directory is not made yet
		 * (a placeholder directory on the way would stop a build
		 * making it): protect_one_try. */
		if (c->program && lstat(path, &st) != 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				continue;
			absent = PROTECTED_ABSENT_WATCH_DEEP;
		}

		/* A submodule not checked out (`git clone` without
		 * --recurse-submodules: its directory empty): anything at
		 * sub/.git makes git die there ("not recognized as a git
		 * repository") -- the empty directory itself is held. */
		if (c->gitfile && lstat(path, &st) != 0 && errno == ENOENT) {
			*strrchr(path, '/') = '\0';
			dir = true;
		}
		for (k = 0; k < n_grants && rc == 0; k++)
			if (is_write_grant_dir(&fp->obj[k]))
				rc = protect_at(fp, p, k, path, dir, absent, used, err);
		/* core.hooksPath's directory: its links are followed too. */
		for (k = 0; c->dir && k < fp->n; k++)
			if (fp->obj[k].role == FS_PROTECT && strcmp(fp->obj[k].real, c->path) == 0)
				fp->obj[k].hooks = true;
	}
	return rc;
}

static int protect_git_code(struct fs_plan *fp, const struct moat_policy *p, int top_fd, const char *top, bool *used,
			    struct moat_error *err)
{
	struct git_code gc = {0};
	int rc;

	git_code_paths(top_fd, top, fp->home_real, &gc);
	rc = gc.failed ? moat_error_set(err, MOAT_E_SYSTEM, gc.failed, "reading %s/.git's configuration", top)
		       : protect_code_list(fp, p, &gc, used, err);
	git_code_free(&gc);
	return rc;
}

/* A protected entry that is a symlink (a dotfile manager's `~/.bashrc ->
 * dotfiles/bashrc`) is held, so it cannot be replaced; but what it points
 * to is what the shell reads.  Its target, and every link on the way
 * there (`dotfiles` itself a link), are protected too wherever they lie
 * inside a write grant: a link on the way is then held in turn, and its own
 * target followed by the caller's loop.  An absent target: a placeholder at
 * the first missing name (or the file standing where a directory would
 * be), since what the rest leads to is the kernel's to resolve once that
 * name exists (`d/nodir/../bashrc`, `nodir` made a link), and at the end as
 * the rest reads, for a `..` right after it.  A cycle has its links held. */
static int protect_link_target(struct fs_plan *fp, const struct moat_policy *p, const char *link_real,
			       const char *link_text, bool *used, struct moat_error *err)
{
	cleanup_free char *real = moat_xstrdup(link_real);
	cleanup_free char *text = moat_xstrdup(link_text);
	cleanup_free char *path = NULL;
	cleanup_close int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct fs_link *saved = fp->links, *walked;
	size_t saved_n = fp->n_links, saved_cap = fp->cap_links, n_walked, n_recorded, i, k, n_grants = fp->n;
	char *slash = strrchr(real, '/');
	const char *steps[2];
	size_t n_steps = 0;
	struct walk_out w;
	int rc = 0, wrc;

	if (root < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "opening / to follow the protected link %s", real);
	if (text[0] == '/')
		path = moat_xstrdup(text);
	else
		path = moat_xasprintf("%.*s/%s", slash == real ? 0 : (int)(slash - real), real, text);
	/* The walk records the links it goes through in fp->links, one of each
	 * name: this walk's own, all of them, go to a list of their own (a
	 * link a grant or a deny went through is in fp's already). */
	fp->links = NULL;
	fp->n_links = fp->cap_links = 0;
	for (i = 0; i < fp->n_dotdot; i++)
		free(fp->dotdot[i]);
	fp->n_dotdot = 0;
	fp->record_dotdot = true;
	wrc = walk_from(fp, root, "/", path, true, true, false, &w, err);
	fp->record_dotdot = false;
	walked = fp->links;
	n_walked = n_recorded = fp->n_links;
	fp->links = saved;
	fp->n_links = saved_n;
	fp->cap_links = saved_cap;
	if (wrc < 0) {
		memset(&w, 0, sizeof(w));
		w.fd = w.parent_fd = -1;
		if (err->kind != MOAT_E_USAGE || err->errnum != ELOOP) {
			rc = moat_error_wrap(err, "following the protected link %s (-> %s)", real, text);
			n_walked = 0;
		} else {
			/* A cycle (or more links than FS_MAX_LINKS): it leads
			 * nowhere, and stays so while none of its links can be
			 * replaced: each one in a write grant is held. */
			memset(err, 0, sizeof(*err));
		}
	} else if (w.present) {
		steps[n_steps++] = w.real;
	} else {
		if (w.first_missing)
			steps[n_steps++] = w.first_missing;
		if (!w.first_missing || strcmp(w.first_missing, w.real) != 0)
			steps[n_steps++] = w.real;
	}
	/* Through /proc (/proc/self/cwd, /dev/fd): what the link reaches
	 * depends on the process that reads it, not on anything moat can
	 * hold. */
	for (i = 0; i <= n_walked && rc == 0; i++) {
		const char *at = i < n_walked ? walked[i].real : (w.real ? w.real : "");
		if (path_within(at, "/proc")) {
			moat_error_set(err, MOAT_E_USAGE, 0,
				       "the protected link %s (-> %s) leads through /proc (%s): what it reaches depends "
				       "on the process that reads it, so moat cannot protect it",
				       real, text, at);
			rc = moat_error_hint(err, "point the link at a file, or lift it with --unprotect %s", real);
		}
	}
	/* A directory the text leaves by `..` (`d/sub/../bashrc`): replaced
	 * by a link, its `..` would be that link's target's parent; pinned
	 * against it. */
	for (i = 0; i < fp->n_dotdot && rc == 0; i++)
		for (k = 0; k < n_grants && rc == 0; k++)
			if (is_write_grant_dir(&fp->obj[k]) && strcmp(fp->dotdot[i], fp->obj[k].real) != 0 &&
			    path_within(fp->dotdot[i], fp->obj[k].real)) {
				cleanup_free char *below = moat_xasprintf("%s/_", fp->dotdot[i]);
				rc = pin_between(fp, k, below, err);
			}
	/* The links on the way: held; the target beyond each is protected by
	 * itself and its directory pinned, so the link's whole target need
	 * not be (on_the_way). */
	for (i = 0; i < n_walked && rc == 0; i++) {
		size_t before = fp->n;

		for (k = 0; k < n_grants && rc == 0; k++)
			if (is_write_grant_dir(&fp->obj[k]))
				rc = protect_at(fp, p, k, walked[i].real, false, PROTECTED_ABSENT_IGNORED, used, err);
		for (k = before; k < fp->n; k++)
			if (fp->obj[k].role == FS_PROTECT && strcmp(fp->obj[k].real, walked[i].real) == 0)
				fp->obj[k].on_the_way = true;
	}
	for (i = 0; i < n_steps && rc == 0; i++)
		for (k = 0; k < n_grants && rc == 0; k++) {
			if (!is_write_grant_dir(&fp->obj[k]))
				continue;
			/* The target is a write grant's root: the user granted
			 * it whole, as `--write` of exactly a protected entry
			 * lifts it; the report says so. */
			if (strcmp(steps[i], fp->obj[k].real) == 0 && !protect_known(fp, steps[i])) {
				struct fs_obj *o = obj_add(fp, FS_PROTECT, steps[i]);
				o->real = moat_xstrdup(steps[i]);
				o->parent = (int)k;
				o->protect_name = "(a protected link's target)";
				o->lifted = true;
				continue;
			}
			rc = protect_at(fp, p, k, steps[i], false, PROTECTED_ABSENT_PLACEHOLDER, used, err);
		}
	walk_out_free(&w);
	for (i = 0; i < n_recorded; i++) {
		free(walked[i].real);
		free(walked[i].text);
	}
	free(walked);
	return rc;
}

/* Bounds the links protect_links follows in all, against pathological
 * trees (a cycle ends each walk by itself). */
#define PROTECT_MAX_LINKS 1024

static int protect_links(struct fs_plan *fp, const struct moat_policy *p, bool *used, struct moat_error *err)
{
	size_t i = 0, j = 0, followed = 0;

	if (fp->unread_errno)
		return moat_error_set(err, MOAT_E_SYSTEM, fp->unread_errno,
				      "reading %s (a protected link, or a hooks directory's links)", fp->unread_path);
	/* fp->n and fp->n_follow grow as targets are protected: the new
	 * links are followed in turn. */
	while (i < fp->n || j < fp->n_follow) {
		cleanup_free char *real = NULL, *text = NULL;

		if (i < fp->n) {
			const struct fs_obj *o = &fp->obj[i++];
			if (o->role != FS_PROTECT || !o->present || o->lifted || o->on_the_way || !S_ISLNK(o->mode) ||
			    !o->link_text)
				continue;
			real = moat_xstrdup(o->real);
			text = moat_xstrdup(o->link_text);
		} else {
			real = moat_xstrdup(fp->follow[j].real);
			text = moat_xstrdup(fp->follow[j++].text);
		}
		if (++followed > PROTECT_MAX_LINKS)
			return moat_error_set(err, MOAT_E_USAGE, ELOOP, "more than %d protected symlinks to follow (at %s)",
					      PROTECT_MAX_LINKS, real);
		if (protect_link_target(fp, p, real, text, used, err) < 0)
			return -1;
	}
	return 0;
}

/* What a directory holds of git's, for the user's git run there on the
 * host: a work tree's `.git` (a directory, a gitfile naming the git
 * directory, or a link to one), or the directory itself a bare repository
 * (HEAD, objects/, refs/: what git's is_git_directory checks). */
enum repo_kind { REPO_NONE, REPO_GITDIR, REPO_GITFILE, REPO_GITLINK, REPO_BARE };

/* A stat's errno that says nothing of what is there (out of memory or
 * descriptors, an I/O error), as ENOENT or ELOOP do. */
static bool stat_unknown(int e)
{
	return moat_errno_out_of_resources(e) || e == EIO;
}

/* The kind of the repository at `name` in `dirfd` ("." for the directory
 * itself).  -1 with errno when that cannot be told: EACCES, a directory
 * this uid may not search; ENOMEM, EIO. */
static int repo_kind(int dirfd, const char *name, enum repo_kind *kind)
{
	cleanup_free char *git = moat_xasprintf("%s/.git", name);
	cleanup_free char *head = moat_xasprintf("%s/HEAD", name);
	cleanup_free char *objects = moat_xasprintf("%s/objects", name);
	struct stat st;

	*kind = REPO_NONE;
	if (fstatat(dirfd, git, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		*kind = S_ISDIR(st.st_mode) ? REPO_GITDIR : S_ISLNK(st.st_mode) ? REPO_GITLINK : REPO_GITFILE;
		return 0;
	}
	if (errno != ENOENT && errno != ENOTDIR)
		return -1;
	/* A stat refused for want of memory, or EIO, says nothing of a bare
	 * repository there: -1, not REPO_NONE. */
	if (fstatat(dirfd, head, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return stat_unknown(errno) ? -1 : 0;
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return 0;
	if (fstatat(dirfd, objects, &st, 0) != 0)
		return stat_unknown(errno) ? -1 : 0;
	if (S_ISDIR(st.st_mode))
		*kind = REPO_BARE;
	return 0;
}

/* The git directory a gitfile `top/.git` names ("gitdir: PATH", relative
 * to `top`), lexically normalised; NULL when it names none, or (errno
 * EMFILE, ENFILE, ENOMEM, or read's EIO; else 0) when moat ran out of
 * descriptors or memory opening it or could not read it: the git
 * directory it names would go unprotected. */
static char *gitfile_target(int top_fd, const char *top)
{
	char buf[PATH_MAX + 16];
	cleanup_close int fd = openat(top_fd, ".git", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;
	char *nl;

	if (fd < 0 && moat_errno_out_of_resources(errno))
		return NULL;
	errno = 0;
	if (fd < 0) {
		errno = 0;
		return NULL;
	}
	/* A read that failed (EIO) is not an empty gitfile: errno kept. */
	while ((n = read(fd, buf, sizeof(buf) - 1)) < 0 && errno == EINTR)
		;
	if (n <= 0) {
		if (n == 0)
			errno = 0;
		return NULL;
	}
	buf[n] = '\0';
	if (strncmp(buf, "gitdir: ", 8) != 0)
		return NULL;
	if ((nl = strpbrk(buf, "\r\n")))
		*nl = '\0';
	/* A name too long to be a directory git could use names none (and
	 * must not stop the next run: the command writes this file). */
	if (!buf[8] || strlen(top) + strlen(buf + 8) + 64 >= PATH_MAX)
		return NULL;
	return path_resolve_lexical(buf + 8, top, NULL);
}

/* The kernel's name for the object `fd` is open on; NULL when it cannot be
 * told (no /proc, or not a path). */
static char *fd_real(int fd)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, buf, sizeof(buf) - 1)) <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return moat_xstrdup(buf);
}

/* Where `name` in `dirfd` leads, every link followed; NULL when it cannot
 * be told. */
static char *real_of(int dirfd, const char *name)
{
	cleanup_close int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? NULL : fd_real(fd);
}

/* What git takes code from in the git directory `gitdir` of the work tree
 * `top` (a gitfile's target, a bare repository: `top` the same), wherever
 * it lies in a write grant: its hooks (a placeholder when absent), config
 * (an empty file), config.worktree, commondir (watched when absent), and
 * what its config names (resolve/gitcode.h).  A commondir there (a linked
 * work tree's) names the directory git takes config and hooks from
 * instead: that one too, once. */
static int protect_in_gitdir(struct fs_plan *fp, const struct moat_policy *p, const char *top, const char *gitdir,
			     bool follow_common, bool *used, struct moat_error *err)
{
	static const struct {
		const char *name;
		enum protected_absent absent;
	} names[] = {{"hooks/", PROTECTED_ABSENT_PLACEHOLDER},
		     {"config", PROTECTED_ABSENT_FILE},
		     {"commondir", PROTECTED_ABSENT_WATCH},
		     {"config.worktree", PROTECTED_ABSENT_IGNORED}};
	struct git_code gc = {0};
	size_t i, k, n_grants = fp->n;
	int rc = 0;

	for (i = 0; i < ARRAY_LEN(names) && rc == 0; i++) {
		size_t len = strlen(names[i].name);
		bool dir = names[i].name[len - 1] == '/';
		cleanup_free char *real = moat_xasprintf("%s/%.*s", gitdir, (int)(len - dir), names[i].name);

		/* hooks/: marked as a hooks directory by its name
		 * (protect_grants). */
		for (k = 0; k < n_grants && rc == 0; k++)
			if (is_write_grant_dir(&fp->obj[k]))
				rc = protect_at(fp, p, k, real, dir, names[i].absent, used, err);
	}
	if (rc < 0)
		return -1;
	git_code_paths_gitdir(top, gitdir, fp->home_real, &gc);
	rc = gc.failed ? moat_error_set(err, MOAT_E_SYSTEM, gc.failed, "reading %s's configuration", gitdir)
		       : protect_code_list(fp, p, &gc, used, err);
	git_code_free(&gc);
	if (rc == 0 && follow_common) {
		cleanup_free char *path = moat_xasprintf("%s/commondir", gitdir);
		cleanup_free char *common = NULL;
		cleanup_close int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		char buf[PATH_MAX];
		ssize_t n;

		if (fd < 0 && moat_errno_out_of_resources(errno))
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "reading %s", path);
		/* A read that failed (EIO): the common directory, and what
		 * git runs from it, unknown. */
		if (fd >= 0 && (n = read(fd, buf, sizeof(buf) - 1)) < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "reading %s", path);
		if (fd >= 0 && n > 0) {
			buf[n] = '\0';
			buf[strcspn(buf, "\r\n")] = '\0';
			if (buf[0] && (common = path_resolve_lexical(buf, gitdir, NULL)) && strlen(common) < PATH_MAX - 64)
				rc = protect_in_gitdir(fp, p, top, common, false, used, err);
		}
	}
	return rc;
}

/* Keep the directory at `prefix` of the write grant from being left a bare
 * repository: git falls back to that when the directory's .git is not a
 * repository (the command moved .git/refs away), or while it climbs from a
 * repository below whose .git is broken, and then reads the command's
 * `config` there (core.pager runs at a terminal's `git log`).  git's test
 * (is_git_directory) wants a HEAD there first.  HEAD is watched: absent, a
 * HEAD made during the run is removed after it, and fs.write reported
 * missing.  Nothing can stand in for it without a cost: a placeholder at
 * HEAD makes `git diff HEAD` ambiguous ("both revision and filename"), and
 * one at `objects` or `refs` is a directory that Python's setuptools takes
 * for a package of a flat layout, and a build may mean to write. */
static int block_bare(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *prefix, bool *used,
		      struct moat_error *err)
{
	return protect_one(fp, p, grant, plan_name(fp, moat_xasprintf("%sHEAD", prefix)), PROTECTED_ABSENT_WATCH, used,
			   err);
}

/* A push or fetch names a repository by a path P, and git takes the first
 * of P/.git, P, P.git/.git and P.git that is one (enter_repo): for a
 * repository X one level below, a command that breaks X (junk in its
 * HEAD) and makes `X.git` beside it has a push to X go there.  `X.git` is
 * watched when absent: one made during the run counts when X is then no
 * repository (a bare mirror beside a sound X is ordinary). */
static int watch_siblings(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *prefix, bool *used,
			  struct moat_error *err)
{
	size_t k, len = strlen(prefix) - 1; /* without its '/' */
	cleanup_free char *name = moat_xasprintf("%.*s.git", (int)len, prefix);
	cleanup_free char *real = NULL;
	const char *x = plan_name(fp, moat_xstrndup(prefix, len));
	struct stat st;

	/* One there already is the project's own: a repository, protected
	 * on its own turn, or none. */
	if (strchr(x, '/') || fstatat(fp->obj[grant].fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return 0;
	if (protect_one(fp, p, grant, plan_name(fp, moat_xstrdup(name)), PROTECTED_ABSENT_WATCH, used, err) < 0)
		return -1;
	real = path_join(fp->obj[grant].real, name);
	for (k = 0; k < fp->n; k++)
		if (fp->obj[k].role == FS_PROTECT && fp->obj[k].watch && fp->obj[k].real && strcmp(fp->obj[k].real, real) == 0)
			fp->obj[k].sibling_of = x;
	return 0;
}

/* Git's admin directories of a git directory, `rel` (".../worktrees" or
 * ".../modules") in the write grant, held entry by entry rather than whole
 * (policy_protected_by_entry):
 *   - worktrees/ID: its commondir (where the linked work tree takes config
 *     and hooks from; watched when absent) and config.worktree (an empty
 *     file when absent), and its own modules/ (the submodules checked out
 *     in that work tree); its index, HEAD and logs stay writable;
 *   - modules/NAME (NAME may hold '/', and parts starting with '.'): each
 *     submodule's git directory as protect_in_gitdir, with its work tree
 *     taken from its core.worktree, and its own modules/ and worktrees/.
 * Deeper than ADMIN_MAX_DEPTH a directory is held whole.  A new ID or NAME
 * is used only through a gitfile that names it, and a gitfile the command
 * writes is in a directory it made. */
#define ADMIN_MAX_DEPTH 24
static int protect_admin_dir(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *rel,
			     bool worktrees, int depth, bool *used, struct moat_error *err);

/* The admin directories of the git directory `sub` (relative). */
static int protect_admin_of(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *sub, bool with_worktrees,
			    int depth, bool *used, struct moat_error *err)
{
	cleanup_free char *mods = moat_xasprintf("%s/modules", sub);
	cleanup_free char *wts = moat_xasprintf("%s/worktrees", sub);

	if (protect_admin_dir(fp, p, grant, mods, false, depth + 1, used, err) < 0)
		return -1;
	return with_worktrees ? protect_admin_dir(fp, p, grant, wts, true, depth + 1, used, err) : 0;
}

/* Whether `name` (HEAD, config) is there in `dirfd`: 1, 0 (ENOENT,
 * ENOTDIR), or -1 with errno when that cannot be told. */
static int admin_probe(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

static int protect_admin_dir(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *rel,
			     bool worktrees, int depth, bool *used, struct moat_error *err)
{
	cleanup_closedir DIR *d = NULL;
	struct dirent *e;
	int fd, rc = 0;

	if (depth > ADMIN_MAX_DEPTH) /* held whole, as before */
		return protect_one(fp, p, grant, plan_name(fp, moat_xstrdup(rel)), PROTECTED_ABSENT_IGNORED, used, err);
	fd = moat_openat2(fp->obj[grant].fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			  MOAT_RESOLVE_NO_SYMLINKS | MOAT_RESOLVE_NO_MAGICLINKS | MOAT_RESOLVE_BENEATH);
	if (fd < 0 && errno == ENOSYS)
		fd = openat(fp->obj[grant].fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;
		int e0 = errno;

		/* Out of descriptors or memory: what it holds is unknown. */
		if (moat_errno_out_of_resources(e0))
			return moat_error_set(err, MOAT_E_SYSTEM, e0, "listing %s/%s", fp->obj[grant].real, rel);
		/* Absent: nothing git would use.  Behind a directory this uid
		 * may not search (an earlier run's chmod 000 .git): that
		 * directory is what the protected entries' walk pins, read-only
		 * whole (protect_one_try's writable_only_after_chmod). */
		if (fstatat(fp->obj[grant].fd, rel, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT || errno == ENOTDIR || errno == EACCES)
				return 0;
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "looking at %s/%s", fp->obj[grant].real, rel);
		}
		/* Something else there (a link, a file), or a directory moat
		 * could not open (EACCES: this uid's own, mode 0, which the
		 * command could chmod and fill; EIO): held as it is, whole. */
		return protect_one(fp, p, grant, plan_name(fp, moat_xstrdup(rel)), PROTECTED_ABSENT_IGNORED, used, err);
	}
	if (!(d = fdopendir(fd))) {
		close(fd);
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "listing %s/%s", fp->obj[grant].real, rel);
	}
	for (errno = 0; rc == 0 && (e = readdir(d)); errno = 0) {
		cleanup_free char *sub = NULL;
		struct stat st;

		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		sub = moat_xasprintf("%s/%s", rel, e->d_name);
		/* Not looked at (ENOMEM, EIO): a submodule's git directory,
		 * its hooks, would go unprotected.  Gone since the listing:
		 * nothing there. */
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				continue;
			rc = moat_error_set(err, MOAT_E_SYSTEM, errno, "looking at %s/%s", fp->obj[grant].real, sub);
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			/* A link or file where an admin directory would be:
			 * held as it is. */
			rc = protect_one(fp, p, grant, plan_name(fp, steal_ptr(&sub)), PROTECTED_ABSENT_IGNORED, used, err);
			continue;
		}
		if (worktrees) {
			rc = protect_one(fp, p, grant, plan_name(fp, moat_xasprintf("%s/commondir", sub)),
					 PROTECTED_ABSENT_WATCH, used, err);
			if (rc == 0)
				rc = protect_one(fp, p, grant, plan_name(fp, moat_xasprintf("%s/config.worktree", sub)),
						 PROTECTED_ABSENT_FILE, used, err);
			if (rc == 0)
				rc = protect_admin_of(fp, p, grant, sub, false, depth, used, err);
		} else {
			cleanup_free char *probe = moat_xasprintf("%s/HEAD", e->d_name);
			cleanup_free char *probe2 = moat_xasprintf("%s/config", e->d_name);
			int gitdir_like = admin_probe(dirfd(d), probe);

			if (gitdir_like == 0)
				gitdir_like = admin_probe(dirfd(d), probe2);
			if (gitdir_like < 0 && errno == EACCES) {
				/* Not searchable by this uid, whose own it may
				 * be (the command could chmod it): held whole. */
				rc = protect_one(fp, p, grant, plan_name(fp, steal_ptr(&sub)), PROTECTED_ABSENT_IGNORED, used,
						 err);
			} else if (gitdir_like < 0) {
				/* HEAD or config not looked at (ENOMEM, EIO):
				 * whether this is a git directory, whose hooks
				 * git runs, is unknown. */
				rc = moat_error_set(err, MOAT_E_SYSTEM, errno, "looking at %s/%s", fp->obj[grant].real, sub);
			} else if (gitdir_like) {
				/* A submodule's git directory. */
				cleanup_free char *gitdir = path_join(fp->obj[grant].real, sub);
				rc = protect_in_gitdir(fp, p, NULL, gitdir, false, used, err);
				if (rc == 0)
					rc = protect_admin_of(fp, p, grant, sub, true, depth, used, err);
			} else {
				/* A part of a name with '/' (.git/modules/libs/foo). */
				rc = protect_admin_dir(fp, p, grant, sub, false, depth + 1, used, err);
			}
		}
	}
	if (rc == 0 && errno)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "listing %s/%s", fp->obj[grant].real, rel);
	return rc;
}

/* protect_admin_dir for each of a repository's admin directories. */
static int protect_admin_dirs(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *prefix,
			      bool *used, struct moat_error *err)
{
	cleanup_free char *git = moat_xasprintf("%s.git", prefix);

	return protect_admin_of(fp, p, grant, git, true, 0, used, err);
}

/* The repository at `prefix` ("" for the grant's root, "proj/" below it)
 * of the write grant `grant`, of `kind`: what makes the host's git run
 * code there, protected.
 *   - not a bare repository, at the top: block_bare;
 *   - `.git` a directory: its hooks, config and the rest of
 *     protected_names' .git entries, and what its config names
 *     (resolve/gitcode.h); a gitfile: held, and the git directory it names
 *     (`git init --separate-git-dir`, a linked work tree, and that one's
 *     common directory) as protect_in_gitdir; a link: held, and its target
 *     followed (protect_links);
 *   - a bare repository: as protect_in_gitdir (`git push` to it runs its
 *     hooks). */
static int protect_repo(struct fs_plan *fp, const struct moat_policy *p, size_t grant, const char *prefix,
			enum repo_kind kind, bool *used, struct moat_error *err)
{
	size_t n_names;
	const char *const *names = policy_protected_names(&n_names);
	cleanup_free char *top = prefix[0] ? path_join(fp->obj[grant].real, prefix) : moat_xstrdup(fp->obj[grant].real);
	cleanup_close int top_fd = -1;
	size_t k;

	if (kind == REPO_NONE)
		return 0;
	if (strlen(top) > 1 && top[strlen(top) - 1] == '/')
		top[strlen(top) - 1] = '\0';
	if (prefix[0] && watch_siblings(fp, p, grant, prefix, used, err) < 0)
		return -1;
	if (kind == REPO_BARE) {
		/* git tries PATH/.git before PATH (discovery, and
		 * receive-pack's enter_repo for a push to it): an empty
		 * directory there is no repository, and the command cannot
		 * make one of its own. */
		if (protect_one(fp, p, grant, plan_name(fp, moat_xasprintf("%s.git", prefix)), PROTECTED_ABSENT_PLACEHOLDER,
				used, err) < 0)
			return -1;
		return protect_in_gitdir(fp, p, top, top, false, used, err);
	}
	if (block_bare(fp, p, grant, prefix, used, err) < 0)
		return -1;
	/* The grant's own root has protected_names already. */
	if (prefix[0]) {
		if (kind == REPO_GITDIR) {
			/* protected_names' .git entries (the others, .envrc,
			 * .vscode and the like, only at the grant's root). */
			for (k = 0; k < n_names; k++)
				if (strncmp(names[k], ".git/", 5) == 0 && !policy_protected_by_entry(names[k]) &&
				    protect_one(fp, p, grant, plan_name(fp, moat_xasprintf("%s%s", prefix, names[k])),
						policy_protected_when_absent(names[k]), used, err) < 0)
					return -1;
			if (protect_admin_dirs(fp, p, grant, prefix, used, err) < 0)
				return -1;
		} else if (protect_one(fp, p, grant, plan_name(fp, moat_xasprintf("%s.git", prefix)),
				       PROTECTED_ABSENT_IGNORED, used, err) < 0) {
			return -1;
		}
	}
	top_fd = openat(fp->obj[grant].fd, prefix[0] ? prefix : ".", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top_fd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", top);
	if (kind == REPO_GITDIR && prefix[0])
		return protect_git_code(fp, p, top_fd, top, used, err);
	if (kind == REPO_GITFILE) {
		cleanup_free char *gitdir = gitfile_target(top_fd, top);
		if (gitdir)
			return protect_in_gitdir(fp, p, top, gitdir, true, used, err);
		if (errno)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "reading %s/.git (a gitfile)", top);
	}
	return 0;
}

/* Is `dir` a farm found already (a grant in node_modules/.pnpm lies in
 * two farms' directories: it is named once)? */
static bool farm_named(const struct fs_plan *fp, const char *dir)
{
	for (size_t i = 0; i < fp->n_farms; i++)
		if (strcmp(fp->farms[i].dir, dir) == 0)
			return true;
	return false;
}

/* The hard-link farms (resolve/linkfarm.h) of the directory `prefix`
 * below write grant `grant` (its root: ""; a repository one level below:
 * "NAME/"; `bare`: a bare one), each found recorded in fp->farms.  A farm
 * the policy denies is out of the command's reach.  -1 (err set) when moat
 * ran out of descriptors or memory sampling one. */
static int find_link_farms(struct fs_plan *fp, size_t grant, const char *prefix, bool bare, struct moat_error *err)
{
	const struct fs_obj *g = &fp->obj[grant];
	cleanup_free char *top = path_join(g->real, prefix);
	size_t k, len = strlen(top);

	if (len > 1 && top[len - 1] == '/')
		top[len - 1] = '\0';
	for (k = 0; k < link_farm_count(); k++) {
		const char *dir = link_farm_dir_below(k, top, bare);
		cleanup_free char *rel = NULL, *real = NULL, *file = NULL;
		nlink_t nlink;
		int found;

		if (!dir)
			continue;
		/* "." (the grant is the farm's first component): the top. */
		rel = strcmp(dir, ".") ? moat_xasprintf("%s%s", prefix, dir)
				       : prefix[0] ? moat_xstrndup(prefix, strlen(prefix) - 1) : moat_xstrdup(".");
		real = strcmp(rel, ".") ? path_join(g->real, rel) : moat_xstrdup(g->real);
		if (fs_is_excluded(fp, real) || farm_named(fp, real))
			continue;
		found = link_farm_sample(g->fd, k, rel, &file, &nlink);
		if (found < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "looking for a farm of hard links in %s", real);
		if (!found)
			continue;
		fp->farms = moat_xgrow(fp->farms, &fp->cap_farms, fp->n_farms, sizeof(*fp->farms));
		fp->farms[fp->n_farms++] =
		    (struct fs_farm){.kind = k, .dir = steal_ptr(&real), .file = path_join(g->real, file), .nlink = nlink};
	}
	return 0;
}

/* A grant root this uid may not list: moat cannot tell what it holds.
 * Its own, the command could chmod it and write there; another's, it may
 * still write there by a name it knows. */
static int unsearchable(struct moat_error *err, const char *path, bool own)
{
	moat_error_set(err, MOAT_E_USAGE, EACCES,
		       own ? "%s: moat cannot look in it for a repository, and the command could chmod it and write there"
			   : "%s: moat cannot list it to find the repositories in it, and the command could write there",
		       path);
	return own ? moat_error_hint(err, "chmod u+rx %s, or grant a directory that does not hold it", path)
		   : moat_error_hint(err, "grant a directory below %s that this user can list", path);
}

/* The repositories one level below a write grant's root (`--write ~/src`,
 * a folder of projects; a project with a repository of its own in a
 * subdirectory), and the grant's root itself: protect_repo; and the root
 * kept from being taken for a bare repository when it or one below it is a
 * repository (git climbs from a broken one).  A project folder that is a
 * symlink to a repository is held (the command would put a repository of
 * its own in its place), and the repository it leads to protected where it
 * lies in a write grant.  Deeper repositories are not looked for: every
 * level is a directory listing per subdirectory at every start
 * (docs/filesystem.md). */
static int protect_repos(struct fs_plan *fp, const struct moat_policy *p, size_t grant, bool *used,
			 struct moat_error *err)
{
	cleanup_closedir DIR *d = NULL;
	struct dirent *e;
	enum repo_kind root_kind, kind;
	bool found = false;
	struct stat gst;
	int rd;

	if (repo_kind(fp->obj[grant].fd, ".", &root_kind) < 0 ||
	    (rd = openat(fp->obj[grant].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		if (errno == EACCES)
			return unsearchable(err, fp->obj[grant].real,
					    fstat(fp->obj[grant].fd, &gst) != 0 || gst.st_uid == geteuid());
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "listing %s", fp->obj[grant].real);
	}
	if (!(d = fdopendir(rd))) {
		int e0 = errno;
		close(rd);
		return moat_error_set(err, MOAT_E_SYSTEM, e0, "listing %s", fp->obj[grant].real);
	}
	if (protect_repo(fp, p, grant, "", root_kind, used, err) < 0)
		return -1;
	if (find_link_farms(fp, grant, "", root_kind == REPO_BARE, err) < 0)
		return -1;
	for (errno = 0; (e = readdir(d)); errno = 0) {
		cleanup_free char *prefix = NULL, *path = NULL;
		struct stat st;

		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (strcmp(e->d_name, ".git") == 0 ||
		    (e->d_type != DT_DIR && e->d_type != DT_LNK && e->d_type != DT_UNKNOWN))
			continue;
		path = path_join(fp->obj[grant].real, e->d_name);
		/* A folder not looked at (ENOMEM, EIO) may hold a repository
		 * whose hooks would go unprotected: the plan fails. */
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				continue; /* gone since the listing */
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "looking for a repository in %s", path);
		}
		if (S_ISLNK(st.st_mode)) {
			/* A project folder that is a link: held when it leads
			 * to a repository, which is protected where it lies. */
			cleanup_free char *target = NULL;
			size_t k, n_grants = fp->n;
			int rc = 0;

			if (fstatat(dirfd(d), e->d_name, &st, 0) != 0) {
				if (stat_unknown(errno))
					return moat_error_set(err, MOAT_E_SYSTEM, errno, "looking for a repository in %s",
							      path);
				continue; /* leads nowhere (ENOENT, ELOOP, EACCES) */
			}
			if (!S_ISDIR(st.st_mode))
				continue;
			if (repo_kind(dirfd(d), e->d_name, &kind) < 0) {
				if (errno != EACCES)
					return moat_error_set(err, MOAT_E_SYSTEM, errno, "looking for a repository in %s",
							      path);
				continue;
			}
			if (kind == REPO_NONE)
				continue;
			found = true;
			if (protect_one(fp, p, grant, plan_name(fp, moat_xstrdup(e->d_name)), PROTECTED_ABSENT_IGNORED,
					used, err) < 0)
				return -1;
			for (k = 0; k < fp->n; k++)
				if (fp->obj[k].role == FS_PROTECT && fp->obj[k].real && strcmp(fp->obj[k].real, path) == 0)
					fp->obj[k].on_the_way = true;
			if (!(target = real_of(dirfd(d), e->d_name)))
				continue;
			for (k = 0; k < n_grants && rc == 0; k++)
				if (is_write_grant_dir(&fp->obj[k]) && path_within(target, fp->obj[k].real)) {
					const char *rel = target + strlen(fp->obj[k].real);
					cleanup_free char *pre = NULL;
					rel += *rel == '/';
					if (!*rel)
						continue; /* the grant's root: done by its own turn */
					pre = moat_xasprintf("%s/", rel);
					rc = protect_repo(fp, p, k, plan_name(fp, steal_ptr(&pre)), kind, used, err);
				}
			if (rc < 0)
				return -1;
			continue;
		}
		if (!S_ISDIR(st.st_mode) || fs_is_excluded(fp, path))
			continue; /* a denied one is out of the command's reach */
		if (repo_kind(dirfd(d), e->d_name, &kind) < 0) {
			if (errno != EACCES)
				return moat_error_set(err, MOAT_E_SYSTEM, errno, "looking for a repository in %s", path);
			/* A folder of this uid's own it may not search
			 * (mode 644): what it holds is unknown, and the
			 * command could chmod it -- held read-only whole,
			 * which nothing could write into anyway.  Another's
			 * is closed to the command too. */
			if (errno == EACCES && st.st_uid == geteuid() &&
			    protect_one(fp, p, grant, plan_name(fp, moat_xstrdup(e->d_name)), PROTECTED_ABSENT_IGNORED,
					used, err) < 0)
				return -1;
			continue;
		}
		if (kind == REPO_NONE)
			continue;
		found = true;
		prefix = moat_xasprintf("%s/", e->d_name);
		if (find_link_farms(fp, grant, prefix, kind == REPO_BARE, err) < 0)
			return -1;
		if (protect_repo(fp, p, grant, plan_name(fp, steal_ptr(&prefix)), kind, used, err) < 0)
			return -1;
	}
	if (errno)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "listing %s", fp->obj[grant].real);
	/* A repository below, the root none: git climbs to the root from a
	 * broken one. */
	if (found && root_kind == REPO_NONE)
		return block_bare(fp, p, grant, "", used, err);
	return 0;
}

/* A repository's hooks may be links into its work tree (a project's
 * `tools/pre-commit` linked from .git/hooks): each link in a protected
 * hooks directory is followed as a protected link is (protect_links), so
 * what it leads to in a write grant is held too. */
static void follow_hook_links(struct fs_plan *fp)
{
	size_t i, n = fp->n;

	for (i = 0; i < n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		cleanup_closedir DIR *d = NULL;
		struct dirent *e;
		int rd;

		cleanup_free char *dir_real = NULL;

		if (o->role != FS_PROTECT || !o->hooks || !o->present || o->lifted || o->fd < 0 ||
		    (!S_ISDIR(o->mode) && !S_ISLNK(o->mode)))
			continue;
		/* The directory itself a link (`.git/hooks -> ../githooks`):
		 * held, its target protected whole (protect_links), and the
		 * links in that target followed here. */
		rd = S_ISLNK(o->mode) ? open(o->real, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
				      : openat(o->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		/* Not there, or not a directory (a link to nothing): no
		 * links to follow.  Out of descriptors or memory, or EIO:
		 * its links unknown. */
		if (rd < 0) {
			if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP && errno != EACCES)
				unread(fp, errno, o->real);
			continue;
		}
		if (!(dir_real = fd_real(rd)) || !(d = fdopendir(rd))) {
			unread(fp, errno, o->real);
			close(rd);
			continue;
		}
		for (errno = 0; (e = readdir(d)); errno = 0) {
			cleanup_close int lfd = -1;
			cleanup_free char *real = NULL;

			if (e->d_type != DT_LNK && e->d_type != DT_UNKNOWN)
				continue;
			lfd = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			real = path_join(dir_real, e->d_name);
			if (lfd >= 0)
				follow_add(fp, lfd, real);
			else if (errno != ENOENT)
				unread(fp, errno, real);
		}
		if (errno)
			unread(fp, errno, o->real); /* listed part-way */
	}
}

static int protect_grants(struct fs_plan *fp, const struct moat_policy *p, struct moat_error *err)
{
	cleanup_free bool *used = moat_xcalloc(p->n_unprotect + 1, sizeof(bool));
	size_t i, j, n_grants = fp->n, nn;
	const char *const *names = policy_protected_names(&nn);
	char loc[512];

	for (i = 0; i < n_grants; i++) {
		__attribute__((cleanup(grant_listing_free))) struct grant_listing top = {0};

		if (!is_write_grant_dir(&fp->obj[i]))
			continue;
		grant_list(&top, fp->obj[i].fd);
		for (j = 0; j < nn; j++)
			if (!policy_protected_by_entry(names[j]) &&
			    protect_one_listed(fp, p, i, &top, names[j], policy_protected_when_absent(names[j]), used,
					       err) < 0)
				return -1;
		if (protect_admin_dirs(fp, p, i, "", used, err) < 0)
			return -1;
		if (protect_home(fp, p, i, &top, used, err) < 0 ||
		    protect_git_code(fp, p, fp->obj[i].fd, fp->obj[i].real, used, err) < 0 ||
		    protect_repos(fp, p, i, used, err) < 0)
			return -1;
	}
	for (i = 0; i < fp->n; i++) {
		struct fs_obj *o = &fp->obj[i];
		size_t len = o->protect_name ? strlen(o->protect_name) : 0;
		if (o->role == FS_PROTECT && len >= 6 && strcmp(o->protect_name + len - 6, "hooks/") == 0)
			o->hooks = true;
	}
	follow_hook_links(fp);
	if (protect_links(fp, p, used, err) < 0)
		return -1;
	for (i = 0; i < p->n_unprotect; i++) {
		if (used[i])
			continue;
		moat_error_set(err, MOAT_E_USAGE, 0, "%s: %s %s: not a protected entry of any write grant",
			       moat_origin_text(&p->unprotect[i].origin, loc, sizeof(loc)),
			       p->unprotect[i].origin.line > 0 ? "unprotect" : "--unprotect", p->unprotect[i].path);
		return moat_error_hint(err, "protected inside a write grant: .git/hooks, .git/config, .mcp.json, .vscode, "
					    "... (`moat profiles` lists them)");
	}
	return 0;
}

/* --- the plan ------------------------------------------------------------ */

/* HOME's real path, when it is a directory.  A HOME that cannot be
 * resolved is no HOME (no skeleton, no protected dotfiles), but running out
 * of descriptors or memory says nothing about HOME: that is an error, or a
 * granted HOME would lose its protected entries. */
static int resolve_home(struct fs_plan *fp, const char *home, struct moat_error *err)
{
	struct moat_error why = {0};
	struct walk_out w;
	cleanup_free char *norm = NULL;
	size_t first = fp->n_links, i;

	if (!home || home[0] != '/')
		return 0;
	norm = path_resolve_lexical(home, "/", NULL);
	if (!norm || strcmp(norm, "/") == 0)
		return 0;
	if (walk(fp, norm, false, &w, &why) < 0) {
		if (!moat_errno_out_of_resources(why.errnum))
			return 0;
		*err = why;
		return moat_error_wrap(err, "HOME");
	}
	if (w.present && S_ISDIR(w.st.st_mode)) {
		fp->home_real = steal_ptr(&w.real);
		/* The links this walk went through (the first walk of the
		 * plan: every link it records is HOME's). */
		for (i = first; i < fp->n_links; i++)
			fp->links[i].for_home = true;
	}
	walk_out_free(&w);
	return 0;
}

/* Room for every object's descriptor: moat's soft limit up to the hard one,
 * the caller's soft limit remembered for the command (fsplan.h). */
static void raise_nofile(struct fs_plan *fp)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	fp->nofile_soft = (unsigned long long)rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max > (1 << 20) ? (1 << 20) : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		fp->nofile_soft = 0;
}

int fs_plan_build(const struct moat_policy *p, const char *home, struct fs_plan *fp, struct moat_error *err)
{
	struct deny_tree dt;
	size_t i, n_rules;

	fs_plan_init(fp);
	deny_tree_init(&dt, p);
	raise_nofile(fp);
	if (resolve_home(fp, home, err) < 0)
		goto fail;
	for (i = 0; i < p->n_paths; i++)
		if (resolve_rule(fp, p, &p->paths[i], &dt, err) < 0)
			goto fail;
	for (i = 0; i < p->n_terminal; i++)
		if (resolve_rule(fp, p, &p->terminal[i], &dt, err) < 0)
			goto fail;
	deny_tree_free(&dt);
	if (fs_find_linked_denies(fp, err) < 0) {
		fs_plan_free(fp); /* dt freed above */
		return -1;
	}
	moat_timeline_mark("fs.rules");
	/* Links a deny was reached through are excluded too: replacing one
	 * would move the denied name somewhere else. */
	for (i = 0; i < fp->n_links; i++)
		if (fp->links[i].for_deny)
			excluded_add(fp, fp->links[i].real);
	if (exclude_other_mounts(fp, err) < 0)
		goto fail;
	if (check_conflicts(fp, err) < 0)
		goto fail;
	moat_timeline_mark("fs.conflicts");
	n_rules = fp->n;
	for (i = 0; i < n_rules; i++) {
		struct fs_obj *g = &fp->obj[i];

		if ((g->role != FS_READ && g->role != FS_WRITE) || !g->present || g->dropped || !S_ISDIR(g->mode) ||
		    !fs_has_excluded_below(fp, g->real))
			continue;
		g->expanded = true;
		if (expand(fp, i, g->fd, g->real, 0, err) < 0)
			goto fail;
	}
	moat_timeline_mark("fs.expanded");
	if (protect_grants(fp, p, err) < 0)
		goto fail;
	return 0;
fail:
	deny_tree_free(&dt);
	fs_plan_free(fp);
	return -1;
}

/* --- placeholders -------------------------------------------------------- */

void fs_placeholder_temp_name(const struct fs_plan *fp, char *buf, size_t len, pid_t pid, size_t index)
{
	snprintf(buf, len, ".moat-placeholder-%d-%zu-%s", (int)pid, index, fp->placeholder_tag);
}

int fs_placeholders_make(struct fs_plan *fp, fs_placeholder_made_fn made, void *ctx, struct moat_error *err)
{
	size_t i;

	for (i = 0; i < fp->n; i++) {
		struct fs_obj *o = &fp->obj[i];
		char tmp[96];
		const char *base;
		struct stat st;
		int fd, e;

		if (o->role != FS_PROTECT || !o->placeholder || o->present)
			continue;
		base = strrchr(o->real, '/') + 1;
		fs_placeholder_temp_name(fp, tmp, sizeof(tmp), getpid(), i);
		/* The directory descriptor came from the grant's own: no
		 * name outside it is followed, and O_NOFOLLOW|O_EXCL refuse a
		 * link planted at the name. */
		if (o->placeholder_dir) {
			/* Marked as moat's while still writable (a user xattr
			 * needs write access), then read-only, and held from
			 * before it has its name: another run finds it held
			 * (resolve/sharedlock.h). */
			if (mkdirat(o->dirfd, tmp, 0700) != 0)
				goto fail;
			fd = openat(o->dirfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				shared_mark_placeholder(fd);
			/* 0500: no other user can open it, so none can hold a
			 * lock on it that makes moat leave it behind. */
			if (fd < 0 || fchmod(fd, 0500) != 0 || flock(fd, LOCK_SH) != 0) {
				e = errno;
				if (fd >= 0)
					close(fd);
				(void)unlinkat(o->dirfd, tmp, AT_REMOVEDIR);
				errno = e;
				goto fail;
			}
			o->lock_fd = fd;
		} else {
			fd = openat(o->dirfd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
			if (fd < 0)
				goto fail;
			close(fd);
		}
		if (fstatat(o->dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) != 0)
			goto fail;
		if (made)
			made(ctx, i, st.st_dev, st.st_ino);
		/* Into place only if the name is still free; made by someone
		 * else since planning, the object there is what gets pinned. */
		if (renameat2(o->dirfd, tmp, o->dirfd, base, RENAME_NOREPLACE) == 0) {
			o->placeholder_made = true;
		} else if (errno == EEXIST) {
			(void)unlinkat(o->dirfd, tmp, o->placeholder_dir ? AT_REMOVEDIR : 0);
			moat_closep(&o->lock_fd);
			o->lock_fd = -1;
		} else {
			(void)unlinkat(o->dirfd, tmp, o->placeholder_dir ? AT_REMOVEDIR : 0);
			goto fail;
		}
		fd = openat(o->dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) != 0) {
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		o->dev = st.st_dev;
		o->ino = st.st_ino;
		o->mode = st.st_mode;
		o->present = true;
		o->fd = fd;
		/* Made by someone else since planning: held too, and adopted
		 * when it is another run's placeholder. */
		if (!o->placeholder_made && S_ISDIR(st.st_mode)) {
			int lk = shared_lock_take(fd);
			if (lk == -2) {
				errno = EAGAIN;
				goto fail;
			}
			hold_pinned(o, lk);
		}
		continue;
fail:
		e = errno;
		moat_error_set(err, MOAT_E_SYSTEM, e, "making the placeholder %s (a protected entry of a write grant)",
			       o->real);
		fs_placeholders_remove(fp, getpid(), NULL, NULL);
		if (e == EACCES)
			/* Its directory is this user's (can_create_in) but
			 * not writable now: the command could chmod it. */
			return moat_error_hint(err, "its directory is yours but not writable (mode changed by an earlier "
						    "run?): make it writable (chmod u+wx), or lift the protection with "
						    "--unprotect %s",
					       o->path);
		return moat_error_hint(err, "lift the protection with --unprotect %s if the command must create it",
				       o->path);
	}
	return 0;
}

/* Remove `name` in `dirfd` if it is the object dev/ino (any: whatever is
 * there), still empty: 1 removed, 0 not there or not that object, -1 that
 * object but not empty (or not removable). */
static int remove_if_ours(int dirfd, const char *name, dev_t dev, ino_t ino, bool any)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || (!any && (st.st_dev != dev || st.st_ino != ino)))
		return 0; /* replaced by the host meanwhile: not ours */
	if (S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 ? 1 : -1; /* only when still empty */
	if (S_ISREG(st.st_mode) && st.st_size == 0)
		return unlinkat(dirfd, name, 0) == 0 ? 1 : -1;
	return -1;
}

size_t fs_placeholders_remove(struct fs_plan *fp, pid_t pid, fs_leftover_fn each, void *ctx)
{
	size_t i, left = 0;

	for (i = 0; i < fp->n; i++) {
		struct fs_obj *o = &fp->obj[i];
		char tmp[96];
		int rc;

		if (o->role != FS_PROTECT || o->dirfd < 0)
			continue;
		/* Another run's placeholder this run held: removed by the
		 * last run that holds it (resolve/sharedlock.h). */
		if (o->adopted) {
			o->adopted = false;
			/* The last run to hold it, which could not remove it
			 * (the command filled it: ENOTEMPTY): left, and said,
			 * as this run's own would be. */
			if (shared_remove_placeholder(o->dirfd, strrchr(o->real, '/') + 1, o->dev, o->ino, o->lock_fd) < 0) {
				left++;
				if (each)
					each(ctx, o->real, NULL);
			}
			continue;
		}
		if (!o->placeholder)
			continue;
		/* A temporary name is this run's alone (its tag is random):
		 * what is there is a placeholder moat died before renaming
		 * into place. */
		fs_placeholder_temp_name(fp, tmp, sizeof(tmp), pid, i);
		(void)remove_if_ours(o->dirfd, tmp, 0, 0, true);
		if (!o->placeholder_made)
			continue;
		o->placeholder_made = false;
		if (o->placeholder_dir)
			rc = shared_remove_placeholder(o->dirfd, strrchr(o->real, '/') + 1, o->dev, o->ino, o->lock_fd);
		else
			rc = remove_if_ours(o->dirfd, strrchr(o->real, '/') + 1, o->dev, o->ino, false);
		if (rc < 0) {
			left++;
			if (each)
				each(ctx, o->real, NULL);
		}
	}
	return left;
}

/* --- after the run ---------------------------------------------------------- */

/* Is `o` still what its name in its write grant leads to?  No link is
 * followed from the grant's own descriptor (openat2 RESOLVE_BENEATH, where
 * the kernel has it). */
/* What `o`'s name in its write grant leads to now: 0 and `st`, -1 when
 * nothing (or not below its grant: 1).  No link is followed from the
 * grant's own descriptor (openat2 RESOLVE_BENEATH, where the kernel has
 * it). */
static int look_again(const struct fs_plan *fp, const struct fs_obj *o, struct stat *st)
{
	const struct fs_obj *g = &fp->obj[o->parent];
	size_t glen = strlen(g->real);
	const char *rel = o->real + glen + (strcmp(g->real, "/") == 0 ? 0 : 1);
	int fd, rc;

	if (strncmp(o->real, g->real, glen) != 0 || !*rel)
		return 1;
	fd = moat_open_beneath_nolinks(g->fd, rel);
	if (fd < 0 && errno == ENOSYS)
		return fstatat(g->fd, rel, st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -1;
	if (fd < 0)
		return -1;
	rc = fstat(fd, st) == 0 ? 0 : -1;
	close(fd);
	return rc;
}

/* The watched entries (~40 a write grant, most never made) are looked for
 * twice after the run, each with a lookup of its own: instead the grant's
 * root is listed once (grant_list, `ls` one slot a grant, filled when
 * first asked), and a watched name whose first component it lacks is not
 * there (ENOENT), as its lookup would have said.  A name made after the
 * listing is one made after its own lookup would have been: missed either
 * way.  The listing is used only when the root can be searched as well as
 * read: one the command left readable but not searchable makes every
 * lookup fail with EACCES, which fs_plan_changed_pins reports, and so it
 * still does. */
static int look_again_watched(const struct fs_plan *fp, const struct fs_obj *o, struct grant_listing *ls,
			      struct stat *st)
{
	const struct fs_obj *g = &fp->obj[o->parent];
	struct grant_listing *l = &ls[o->parent];
	size_t glen = strlen(g->real);

	if (!o->watch || o->present || strncmp(o->real, g->real, glen) != 0)
		return look_again(fp, o, st);
	if (!l->tried) {
		if (faccessat(g->fd, ".", X_OK, AT_EACCESS) == 0)
			grant_list(l, g->fd);
		l->tried = true;
	}
	if (listing_lacks(l, o->real + glen + (strcmp(g->real, "/") == 0 ? 0 : 1))) {
		errno = ENOENT;
		return -1;
	}
	return look_again(fp, o, st);
}

static void after_listings_free(const struct fs_plan *fp, struct grant_listing *ls)
{
	size_t i;

	for (i = 0; i < fp->n; i++)
		grant_listing_free(&ls[i]);
	free(ls);
}

/* Is `name` in `dirfd` a git directory as git would take it, by a test
 * stricter than git's (is_git_directory): HEAD a regular file holding a
 * ref or an object id, `objects` and `refs` directories its owner and this
 * user may search, no `commondir`, HEAD no other file's hard link.
 * Anything else is no repository --
 * which can only make moat report more. */
static bool gitdir_valid(int dirfd, const char *name)
{
	cleanup_free char *head = moat_xasprintf("%s/HEAD", name);
	cleanup_free char *common = moat_xasprintf("%s/commondir", name);
	cleanup_close int fd = openat(dirfd, head, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	static const char *const dirs[] = {"objects", "refs"};
	char buf[257];
	struct stat st;
	ssize_t n;
	size_t i, hex;

	/* HEAD with another hard link (X/.git/COMMIT_EDITMSG) changes when
	 * git rewrites that file in place: no repository to count on. */
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[n] = '\0';
	hex = strspn(buf, "0123456789abcdef");
	if (strncmp(buf, "ref: refs/", 10) != 0 && !((hex == 40 || hex == 64) && (buf[hex] == '\n' || !buf[hex])))
		return false;
	if (fstatat(dirfd, common, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return false;
	for (i = 0; i < ARRAY_LEN(dirs); i++) {
		cleanup_free char *d = moat_xasprintf("%s/%s", name, dirs[i]);
		if (fstatat(dirfd, d, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || !(st.st_mode & 0100) ||
		    faccessat(dirfd, d, X_OK, AT_EACCESS) != 0)
			return false;
	}
	return true;
}

/* The repository `name` in `dirfd` is still one: its .git, or itself
 * (git tries X/.git, then X: a bare repository's .git placeholder, empty,
 * may not be gone yet).  A gitfile there: no repository to count on. */
static bool repo_still_valid(int dirfd, const char *name)
{
	cleanup_free char *git = moat_xasprintf("%s/.git", name);
	struct stat st;

	if (fstatat(dirfd, git, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode))
			return false;
		if (gitdir_valid(dirfd, git))
			return true;
	} else if (errno != ENOENT) {
		return false;
	}
	return gitdir_valid(dirfd, name);
}

/* The directory that holds `o`'s name now (O_PATH), opened below its
 * grant with no link followed, as look_again looks; -1 when there is
 * none. */
static int open_parent_again(const struct fs_plan *fp, const struct fs_obj *o)
{
	const struct fs_obj *g = &fp->obj[o->parent];
	size_t glen = strlen(g->real);
	const char *rel = o->real + glen + (strcmp(g->real, "/") == 0 ? 0 : 1);
	const char *slash = strrchr(o->real, '/');
	int fd;

	if (strncmp(o->real, g->real, glen) != 0 || !*rel || !slash)
		return -1;
	if (slash < rel)
		return fcntl(g->fd, F_DUPFD_CLOEXEC, 3); /* in the grant itself */
	cleanup_free char *dir = moat_xstrndup(rel, (size_t)(slash - rel));
	fd = moat_open_beneath_nolinks(g->fd, dir);
	if (fd < 0 && errno == ENOSYS)
		fd = openat(g->fd, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* Moves the watched entry `base` of `dirfd` aside, to `base`.moat-set-
 * aside-TAG in the same directory, where nothing takes it from (git reads
 * .git/commondir and a program its config names by their exact names), with
 * a file's execute and group/other bits dropped: what the command made is
 * kept for the user to look at, not deleted (it may be a legitimate file an
 * `npm install` made).  The name taken (never replaced) goes to `aside`.
 * Where no such name fits, or the file system cannot rename without
 * replacing, it is removed as before: 0 moved, 1 removed, -1 neither. */
static int set_aside(int dirfd, const char *base, const struct stat *st, const char *tag, char *aside, size_t len)
{
	/* A long name keeps its first 200 bytes: the new one fits NAME_MAX. */
	int n = snprintf(aside, len, "%.200s.moat-set-aside-%s", base, tag);

	if (n > 0 && (size_t)n < len && n <= NAME_MAX) {
		if (renameat2(dirfd, base, dirfd, aside, RENAME_NOREPLACE) == 0) {
			/* The execute and group/other bits of a file moat may
			 * change: one of its own uid with no other name.  A
			 * hard link the command made to another file (the
			 * user's build.sh, another user's) keeps its mode;
			 * the new name alone takes it out of git's way.
			 * AT_SYMLINK_NOFOLLOW: a link swapped in meanwhile is
			 * not followed to a host file. */
			if (S_ISREG(st->st_mode) && st->st_nlink == 1 && st->st_uid == geteuid() &&
			    fchmodat(dirfd, aside, st->st_mode & 0600, AT_SYMLINK_NOFOLLOW) != 0)
				errno = 0; /* kept with its mode: see above */
			return 0;
		}
		if (errno != EINVAL)
			return -1;
	}
	aside[0] = '\0';
	return unlinkat(dirfd, base, 0) == 0 ? 1 : -1;
}

size_t fs_plan_made_watched(const struct fs_plan *fp, fs_leftover_fn each, void *ctx, size_t *n_left)
{
	struct grant_listing *ls = moat_xcalloc(fp->n + 1, sizeof(*ls));
	size_t i, n = 0;
	struct stat st;

	*n_left = 0;
	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		cleanup_close int dirfd = -1;
		const char *base = strrchr(o->real ? o->real : "", '/');
		struct stat again;

		if (o->role != FS_PROTECT || !o->watch || o->lifted || o->parent < 0 || fp->obj[o->parent].fd < 0 ||
		    !base || look_again_watched(fp, o, ls, &st) != 0)
			continue;
		base++;
		/* What was looked at is what is removed: the directory that
		 * holds the name now, by the same walk below the grant, not
		 * one held from before the run -- without a mount namespace
		 * the command can rename that away and make a new one at the
		 * name (a bare repository with its own config), and an unlink
		 * in the old one removed nothing while moat said "removed". */
		dirfd = open_parent_again(fp, o);
		/* `X.git` made beside a repository X that is still one: git
		 * finds X first (a `git clone --bare X X.git` is no news). */
		if (o->sibling_of && dirfd >= 0 && repo_still_valid(dirfd, o->sibling_of))
			continue;
		n++;
		/* Moved aside: git never makes it there itself, and left in
		 * place it runs what it points at from the next `git status`
		 * on.  A directory there only makes git fail (or is a
		 * repository of its own: left, and said); so is what could not
		 * be moved. */
		char aside[NAME_MAX + 1];
		bool left = S_ISDIR(st.st_mode) || dirfd < 0 || fstatat(dirfd, base, &again, AT_SYMLINK_NOFOLLOW) != 0 ||
			    again.st_dev != st.st_dev || again.st_ino != st.st_ino ||
			    set_aside(dirfd, base, &again, fp->placeholder_tag, aside, sizeof(aside)) < 0;
		if (left)
			(*n_left)++; /* (a FIFO is moved too: left, it would hang git) */
		if (each)
			each(ctx, o->real, left ? NULL : aside);
	}
	after_listings_free(fp, ls);
	return n;
}

size_t fs_plan_changed_pins(const struct fs_plan *fp, char *first, size_t len, int *why)
{
	struct grant_listing *ls = moat_xcalloc(fp->n + 1, sizeof(*ls));
	size_t i, n = 0;

	*why = 0;
	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		struct stat st;
		int rc, e;

		if ((o->role != FS_PROTECT && o->role != FS_PIN) || o->lifted || o->parent < 0 ||
		    fp->obj[o->parent].fd < 0 || (!o->present && !o->watch))
			continue;
		rc = look_again_watched(fp, o, ls, &st);
		e = rc < 0 ? errno : 0;
		if (!o->present) {
			/* A watched entry (fs_plan_made_watched): only a
			 * lookup that could not tell counts here -- a
			 * directory on the way the command chmod'ed to 000
			 * hides what it made there from this uid. */
			if (rc == 0 || e == ENOENT || e == ENOTDIR)
				continue;
		} else if (rc == 1 || (rc == 0 && st.st_dev == o->dev && st.st_ino == o->ino)) {
			continue;
		}
		if (!n++) {
			if (len)
				snprintf(first, len, "%s", o->real);
			*why = e == ENOENT || e == ENOTDIR ? 0 : e;
		}
	}
	after_listings_free(fp, ls);
	return n;
}
