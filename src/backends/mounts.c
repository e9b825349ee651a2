/* The mount planner shared by the bwrap and oci backends (mounts.h). */
#include "backends/mounts.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "native/native.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

/* Socket directories of /run, masked when /run is visible (net all). */
static const char *const run_sockets[] = {
	"/run/dbus", "/run/docker.sock", "/run/docker", "/run/containerd", "/run/podman", "/run/user",
	"/run/systemd/private", "/run/systemd/journal", "/var/run/docker.sock", "/run/snapd.socket",
};

/* Device nodes a fresh /dev already has (bwrap's --dev, an OCI runtime's
 * default devices): grants of them add nothing. */
static const char *const dev_nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
					"/dev/tty"};

void mount_plan_free(struct mount_plan *o)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		free(o->v[i].dest);
		free(o->v[i].src);
		free(o->v[i].src_real);
	}
	free(o->v);
	memset(o, 0, sizeof(*o));
}

bool mount_is_bind(enum mount_kind k)
{
	return k == MOUNT_BIND_RO || k == MOUNT_BIND_RW || k == MOUNT_DEV_BIND;
}

static struct mount_op *ops_find(struct mount_plan *o, const char *dest)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (strcmp(o->v[i].dest, dest) == 0)
			return &o->v[i];
	return NULL;
}

static struct mount_op *ops_add(struct mount_plan *o, enum mount_kind kind, const char *dest, const char *src)
{
	struct mount_op *op;

	o->v = moat_xgrow(o->v, &o->cap, o->n + 1, sizeof(*o->v));
	op = &o->v[o->n++];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->dest = moat_xstrdup(dest);
	op->src = src ? moat_xstrdup(src) : NULL;
	return op;
}

const struct mount_op *mount_plan_cover(const struct mount_plan *o, const char *path)
{
	const struct mount_op *best = NULL;
	size_t i;

	for (i = 0; i < o->n; i++) {
		const struct mount_op *op = &o->v[i];
		if (op->kind >= MOUNT_MASK_DIR || !path_within(path, op->dest))
			continue;
		if (!best || strlen(op->dest) > strlen(best->dest))
			best = op;
	}
	return best;
}

static int cmp_op(const void *x, const void *y)
{
	const struct mount_op *a = x, *b = y;
	int c = strcmp(a->dest, b->dest);

	return c ? c : (int)a->kind - (int)b->kind;
}

static bool is_dev_node(const char *path)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(dev_nodes); i++)
		if (strcmp(path, dev_nodes[i]) == 0)
			return true;
	return false;
}

/* Is `real` shown by a grant that is not itself a symlink? */
static bool real_path_granted(const struct moat_policy *p, const char *real)
{
	size_t i;

	for (i = 0; i < p->n_paths; i++) {
		struct stat st;
		if (p->paths[i].access != MOAT_ACCESS_DENY && path_within(real, p->paths[i].path) &&
		    lstat(p->paths[i].path, &st) == 0 && !S_ISLNK(st.st_mode))
			return true;
	}
	return false;
}

/* Paths the sandbox makes fresh itself: a grant of exactly one of them
 * means the fresh one (as in the native backend). */
static bool is_fresh_dir(const struct moat_policy *p, const char *path, const char *home)
{
	return (p->private_tmp && (strcmp(path, "/tmp") == 0 || strcmp(path, "/dev/shm") == 0)) ||
	       strcmp(path, "/dev") == 0 || (home && strcmp(path, home) == 0) ||
	       (p->net != MOAT_NET_ALL && strcmp(path, "/run") == 0);
}

/* One grant.  A symlink whose target is granted stays a symlink (/bin ->
 * usr/bin on Debian), so that one view, and one set of masks, shows the
 * files; any other link is bound through, like Landlock follows it. */
static void add_grant(struct mount_plan *o, const struct moat_policy *p, const struct moat_path_rule *r, const char *home)
{
	bool rw = r->access == MOAT_ACCESS_WRITE;
	char real[PATH_MAX], link[PATH_MAX];
	struct stat lst, st;
	struct mount_op *op;
	ssize_t n;

	if (path_within(r->path, "/proc") || is_fresh_dir(p, r->path, home) || is_dev_node(r->path))
		return;
	if (lstat(r->path, &lst) != 0 || stat(r->path, &st) != 0 || !realpath(r->path, real))
		return; /* absent: nothing to show (a required one was refused by the plan) */
	if (S_ISLNK(lst.st_mode) && real_path_granted(p, real) && (n = readlink(r->path, link, sizeof(link) - 1)) > 0) {
		link[n] = '\0';
		if (!ops_find(o, r->path))
			ops_add(o, MOUNT_SYMLINK, r->path, link);
		return;
	}
	op = ops_find(o, r->path);
	if (op && op->kind == MOUNT_SYMLINK)
		return;
	if (op) {
		/* The same path granted twice: the wider access wins. */
		if (rw && op->kind == MOUNT_BIND_RO)
			op->kind = MOUNT_BIND_RW;
		op->read_only = op->read_only && !rw;
		return;
	}
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		op = ops_add(o, MOUNT_DEV_BIND, r->path, r->path);
	else
		op = ops_add(o, rw ? MOUNT_BIND_RW : MOUNT_BIND_RO, r->path, r->path);
	op->read_only = !rw;
	op->src_real = moat_xstrdup(real);
}

static void add_tmpfs(struct mount_plan *o, const char *dest, unsigned mode)
{
	ops_add(o, MOUNT_TMPFS, dest, NULL)->mode = mode;
}

/* Mask the denied host path at every place the sandbox shows it: for each
 * bind whose source holds it and which is what shows that place. */
static size_t add_mask(struct mount_plan *o, const char *denied)
{
	char real[PATH_MAX];
	struct stat st;
	size_t i, n = o->n, added = 0;

	if (stat(denied, &st) != 0 || !realpath(denied, real))
		return 0;
	for (i = 0; i < n; i++) {
		const struct mount_op *b = &o->v[i];
		cleanup_free char *loc = NULL;
		const struct mount_op *cover;

		if (!mount_is_bind(b->kind) || !b->src_real || !path_within(real, b->src_real))
			continue;
		loc = moat_xasprintf("%s%s", strcmp(b->dest, "/") == 0 ? "" : b->dest,
				     real + (strcmp(b->src_real, "/") == 0 ? 0 : strlen(b->src_real)));
		if (loc[0] == '\0') {
			free(loc);
			loc = moat_xstrdup("/");
		}
		cover = mount_plan_cover(o, loc);
		if (cover != &o->v[i] || ops_find(o, loc))
			continue;
		ops_add(o, S_ISDIR(st.st_mode) ? MOUNT_MASK_DIR : MOUNT_MASK_FILE, loc, NULL);
		added++;
	}
	return added;
}

void mount_plan_build(const struct moat_policy *p, struct mount_plan *o)
{
	const char *home = native_private_home(p);
	const struct mount_op *cover;
	size_t i;

	memset(o, 0, sizeof(*o));
	ops_add(o, MOUNT_PROC, "/proc", NULL);
	ops_add(o, MOUNT_DEV, "/dev", NULL);
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY)
			add_grant(o, p, &p->paths[i], home);
	if (p->private_tmp) {
		add_tmpfs(o, "/tmp", 01777);
		add_tmpfs(o, "/dev/shm", 01777);
	}
	/* HOME, unless granted as a whole: an empty tmpfs with only the grants
	 * below it bound back (agent sockets live there). */
	if (home)
		add_tmpfs(o, home, 0700);
	/* /run only matters when a grant above it (`--read /`) shows it. */
	cover = mount_plan_cover(o, "/run");
	if (p->net != MOAT_NET_ALL && cover && mount_is_bind(cover->kind))
		add_tmpfs(o, "/run", 0755);
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY)
			o->n_masks += add_mask(o, p->paths[i].path);
	if (p->net == MOAT_NET_ALL)
		for (i = 0; i < ARRAY_LEN(run_sockets); i++)
			o->n_masks += add_mask(o, run_sockets[i]);
	/* The cwd is entered even when not granted: then it is empty (the
	 * native child makes it the same way). */
	cover = mount_plan_cover(o, p->cwd);
	if (!cover || !(mount_is_bind(cover->kind) || cover->kind == MOUNT_SYMLINK))
		ops_add(o, MOUNT_DIR, p->cwd, NULL);
	qsort(o->v, o->n, sizeof(*o->v), cmp_op);
}
