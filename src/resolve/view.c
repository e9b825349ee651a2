/* The sandbox's file-system view, planned from the objects (view.h). */
#include "resolve/view.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

const char *view_kind_name(enum view_kind k)
{
	switch (k) {
	case VIEW_PROC:
		return "proc";
	case VIEW_DEV:
		return "dev";
	case VIEW_TMPFS:
		return "tmpfs";
	case VIEW_SKELETON:
		return "skeleton";
	case VIEW_BIND:
		return "bind";
	case VIEW_PIN:
		return "pin";
	case VIEW_MASK:
		return "mask";
	case VIEW_DIR:
		return "dir";
	case VIEW_SYMLINK:
		return "symlink";
	}
	return "?";
}

void view_free(struct view *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		free(v->v[i].dest);
		free(v->v[i].text);
	}
	free(v->v);
	memset(v, 0, sizeof(*v));
}

static struct view_op *op_add(struct view *v, enum view_kind kind, const char *dest, int obj)
{
	struct view_op *op;

	v->v = moat_xgrow(v->v, &v->cap, v->n, sizeof(*v->v));
	op = &v->v[v->n++];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->dest = moat_xstrdup(dest);
	op->obj = obj;
	return op;
}

static bool is_mount(enum view_kind k)
{
	return k <= VIEW_MASK;
}

static bool shows_host(enum view_kind k)
{
	return k == VIEW_BIND || k == VIEW_PIN;
}

/* The covering mount of `path`, ignoring op `skip` (or none: v->n). */
static const struct view_op *cover_except(const struct view *v, const char *path, size_t skip)
{
	const struct view_op *best = NULL;
	size_t i, best_len = 0;

	for (i = 0; i < v->n; i++) {
		const struct view_op *op = &v->v[i];
		size_t len = strlen(op->dest);

		if (i == skip || !is_mount(op->kind) || !path_within(path, op->dest))
			continue;
		if (!best || len > best_len || (len == best_len && op->kind > best->kind)) {
			best = op;
			best_len = len;
		}
	}
	return best;
}

const struct view_op *view_cover(const struct view *v, const char *path)
{
	return cover_except(v, path, v->n);
}

/* The covering mount of what holds `path`: of its parent directory. */
static const struct view_op *parent_cover(const struct view *v, const char *path)
{
	cleanup_free char *parent = moat_xstrdup(path);
	char *slash = strrchr(parent, '/');

	if (!slash || slash == parent)
		return view_cover(v, "/") && strcmp(path, "/") != 0 ? view_cover(v, "/") : NULL;
	*slash = '\0';
	return view_cover(v, parent);
}

const char *view_private_home(const struct fs_plan *fp)
{
	size_t i;

	if (!fp->home_real)
		return NULL;
	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *g = &fp->obj[i];
		if ((g->role == FS_READ || g->role == FS_WRITE) && g->rule && g->present && !g->dropped &&
		    S_ISDIR(g->mode) && path_within(fp->home_real, g->real))
			return NULL;
	}
	return fp->home_real;
}

static int cmp_op(const void *x, const void *y)
{
	const struct view_op *a = x, *b = y;
	int c = strcmp(a->dest, b->dest);

	return c ? c : (int)a->kind - (int)b->kind;
}

static void sort_ops(struct view *v)
{
	if (v->n > 1)
		qsort(v->v, v->n, sizeof(*v->v), cmp_op);
}

static void remove_op(struct view *v, size_t i)
{
	free(v->v[i].dest);
	free(v->v[i].text);
	memmove(&v->v[i], &v->v[i + 1], (v->n - i - 1) * sizeof(*v->v));
	v->n--;
}

static bool below_tmpfs(const struct view *v, const char *real)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (v->v[i].kind == VIEW_TMPFS && strcmp(real, v->v[i].dest) != 0 && path_within(real, v->v[i].dest))
			return true;
	return false;
}

/* Paths the sandbox makes itself: a host object there would be hidden by
 * the sandbox's own mount, or hide it. */
static bool sandbox_made(const struct moat_policy *p, const char *real)
{
	return path_within(real, "/proc") || strcmp(real, "/dev") == 0 || strcmp(real, "/run") == 0 ||
	       (p->private_tmp && (strcmp(real, "/tmp") == 0 || strcmp(real, "/dev/shm") == 0));
}

static void add_bind(struct view *v, const struct fs_obj *o, int idx, bool write)
{
	struct view_op *op = op_add(v, VIEW_BIND, o->real, idx);

	op->read_only = !write;
	op->device = S_ISCHR(o->mode) || S_ISBLK(o->mode);
}

/* A protected entry holds `real` read-only: it is one, or lies inside one
 * pinned whole.  An entry of an expanded write grant bound there, writable,
 * would cover the pin (~/.config/git/config inside ~/.config/git, when
 * ~/.config/git/credentials makes the grant go entry by entry). */
static bool held_read_only(const struct fs_plan *fp, const char *real)
{
	for (size_t i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		if (o->role == FS_PROTECT && !o->lifted && (o->present || o->placeholder) && path_within(real, o->real))
			return true;
	}
	return false;
}

static void add_grants(struct view *v, const struct moat_policy *p, const struct fs_plan *fp,
		       const struct view_opts *vo)
{
	size_t i, j;

	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *g = &fp->obj[i];
		bool write = g->role == FS_WRITE;

		if ((g->role != FS_READ && g->role != FS_WRITE) || !g->rule || !g->present || g->dropped ||
		    sandbox_made(p, g->real))
			continue;
		if (!g->expanded || (vo->landlock && !below_tmpfs(v, g->real))) {
			add_bind(v, g, (int)i, write);
			continue;
		}
		/* Entry by entry: the denied objects are not in the view. */
		op_add(v, VIEW_SKELETON, g->real, (int)i)->mode = 0755;
		v->n_expanded++;
		for (j = 0; j < fp->n; j++) {
			const struct fs_obj *e = &fp->obj[j];

			if (e->parent != (int)i || e->rule || (e->role != FS_LINK && e->role != g->role) ||
			    sandbox_made(p, e->real) || (write && held_read_only(fp, e->real)))
				continue;
			if (e->role == FS_LINK)
				op_add(v, VIEW_SYMLINK, e->real, (int)j)->text = moat_xstrdup(e->link_text);
			else if (e->chain)
				op_add(v, VIEW_DIR, e->real, (int)j);
			else
				add_bind(v, e, (int)j, write);
		}
	}
}

/* Two binds of one destination: one op, the wider access. */
static void merge_binds(struct view *v)
{
	size_t i = 1;

	while (i < v->n) {
		struct view_op *a = &v->v[i - 1], *b = &v->v[i];
		if (a->kind == VIEW_BIND && b->kind == VIEW_BIND && strcmp(a->dest, b->dest) == 0) {
			a->read_only = a->read_only && b->read_only;
			remove_op(v, i);
			continue;
		}
		i++;
	}
}

/* A bind that the bind above it shows already, with at least its access,
 * adds nothing (/usr/bin below /usr).  Kept when it sits in a denied path:
 * the user's more specific grant inside a deny must survive the mask. */
static void drop_covered_binds(struct view *v, const struct fs_plan *fp)
{
	size_t i = 0;

	while (i < v->n) {
		const struct view_op *op = &v->v[i], *c;
		if (op->kind == VIEW_BIND && strcmp(op->dest, "/") != 0 && !fs_is_excluded(fp, op->dest)) {
			c = cover_except(v, op->dest, i);
			if (c && c->kind == VIEW_BIND && (!c->read_only || op->read_only) && c->device == op->device &&
			    strcmp(c->dest, op->dest) != 0) {
				remove_op(v, i);
				continue;
			}
		}
		i++;
	}
}

/* Masks: each denied object that a bound host directory shows.  A deny
 * with the user's grants inside it gets a skeleton instead, so those can
 * be mounted in it. */
static void add_masks(struct view *v, const struct fs_plan *fp)
{
	size_t i, j, n = v->n;

	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *d = &fp->obj[i];
		const struct view_op *c;
		bool nested = false;

		if (d->role != FS_DENY || !d->present)
			continue;
		c = view_cover(v, d->real);
		if (!c || !shows_host(c->kind) || strcmp(c->dest, d->real) == 0)
			continue;
		for (j = 0; j < n && !nested; j++)
			nested = v->v[j].kind == VIEW_BIND && strcmp(v->v[j].dest, d->real) != 0 &&
				 path_within(v->v[j].dest, d->real);
		if (nested) {
			op_add(v, VIEW_SKELETON, d->real, (int)i)->mode = 0755;
		} else {
			struct view_op *m = op_add(v, VIEW_MASK, d->real, (int)i);
			m->dir = S_ISDIR(d->mode);
			v->n_masks++;
		}
	}
}

/* Does the view make the directory at `real` itself (a skeleton, or a
 * directory in one)? */
static bool made_dir(const struct view *v, const char *real)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if ((v->v[i].kind == VIEW_DIR || v->v[i].kind == VIEW_SKELETON) && strcmp(v->v[i].dest, real) == 0)
			return true;
	return false;
}

/* Is `real` in a mount the sandbox makes its own (the private /tmp, /run,
 * /dev, /proc), with no host directory bound there?  The host's object at
 * that path is not in the view. */
static bool in_private_mount(const struct view *v, const char *real)
{
	const struct view_op *c = view_cover(v, real);

	return c && (c->kind == VIEW_TMPFS || c->kind == VIEW_PROC || c->kind == VIEW_DEV);
}

static void add_pins(struct view *v, const struct fs_plan *fp, bool no_placeholders)
{
	size_t i;

	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];

		/* A protected entry, or a directory on the way to one, that
		 * the sandbox's private /tmp hides (`--write /` with HOME in
		 * /tmp): the host's object is not in the view, and a pin there
		 * found the private tmpfs where it expected the host's /tmp
		 * and refused the run ("changed since moat planned it"). */
		if ((o->role == FS_PIN || o->role == FS_PROTECT) && in_private_mount(v, o->real))
			continue;

		/* A directory on the way to a protected entry that the view
		 * makes itself, in a read-only skeleton, cannot be renamed
		 * away: it needs no pin.  Binding the host's directory there
		 * would cover the skeleton, which shows only its allowed
		 * entries, with the live directory, where a credential the host
		 * makes, replaces or renames in during the run is no longer
		 * behind a mask (the masks hold the old entries). */
		if (o->role == FS_PIN && made_dir(v, o->real))
			continue;
		if (o->role == FS_PIN) {
			op_add(v, VIEW_PIN, o->real, (int)i);
		} else if (o->role == FS_PROTECT && !o->lifted && (o->placeholder || o->watch) && no_placeholders) {
			/* An export: no placeholder made, and no look after the
			 * run at what was watched. */
			v->n_unpinned++;
		} else if (o->role == FS_PROTECT && !o->lifted && (o->present || o->placeholder)) {
			op_add(v, VIEW_PIN, o->real, (int)i)->read_only = true;
			v->n_pins++;
		}
	}
}

/* Symlinks a read grant was reached through, where the view has a place
 * of its own for them (the root, a skeleton, a private tmpfs); inside a
 * bound host directory they are there already. */
static void add_links(struct view *v, const struct fs_plan *fp)
{
	size_t i;

	for (i = 0; i < fp->n_links; i++) {
		const struct fs_link *l = &fp->links[i];
		/* HOME's own links too, though denies below HOME went through
		 * them: without them $HOME (/home/u, /home -> var/home) led
		 * nowhere in the view, and every tool that reads its files
		 * through HOME failed.  Made in the view's read-only root,
		 * the command cannot replace them; where a bound host
		 * directory holds one, it is the host's (settle_made). */
		if (l->for_home || (!l->for_deny && !fs_is_excluded(fp, l->real)))
			op_add(v, VIEW_SYMLINK, l->real, -1)->text = moat_xstrdup(l->text);
	}
}

/* Made-here ops whose place is a host directory cannot be made: the host
 * already has what is there.  Two ops of one made destination: the first
 * (mounts sort before dirs and links) wins. */
static void settle_made(struct view *v)
{
	size_t i = 0;

	while (i < v->n) {
		struct view_op *op = &v->v[i];
		const struct view_op *pc = parent_cover(v, op->dest);
		bool ours = !pc || pc->kind == VIEW_TMPFS || pc->kind == VIEW_SKELETON || pc->kind == VIEW_DEV;

		if (op->kind == VIEW_DIR || op->kind == VIEW_SYMLINK) {
			const struct view_op *c = view_cover(v, op->dest);
			bool taken = (c && strcmp(c->dest, op->dest) == 0) ||
				     (i > 0 && strcmp(v->v[i - 1].dest, op->dest) == 0);
			if (!ours || taken) {
				remove_op(v, i);
				continue;
			}
		}
		/* A directory on the way to a protected entry (FS_PIN), in a
		 * skeleton: the expanded grant's entry is bound there already,
		 * writable, on a mount point the read-only skeleton keeps in
		 * place: nothing to add (made read-only, it took the whole
		 * directory from the grant: `--write ~` with HOME expanded
		 * left ~/.config read-only for ~/.config/git's sake). */
		if (op->kind == VIEW_PIN && ours && !op->read_only &&
		    ((i > 0 && v->v[i - 1].kind == VIEW_BIND && strcmp(v->v[i - 1].dest, op->dest) == 0) ||
		     (i + 1 < v->n && v->v[i + 1].kind == VIEW_BIND && strcmp(v->v[i + 1].dest, op->dest) == 0))) {
			remove_op(v, i);
			continue;
		}
		/* A pin in a skeleton (a protected entry of an expanded write
		 * grant, made since the entries were listed): a bind of the
		 * object, on a mount point made there; read-only for a
		 * protected entry. */
		if (op->kind == VIEW_PIN && ours)
			op->kind = VIEW_BIND;
		op->made_here = ours && op->kind != VIEW_PIN && op->kind != VIEW_MASK && strcmp(op->dest, "/") != 0;
		i++;
	}
}

/* For a backend that cannot mount on a symlink (view_opts.links_as_text):
 * a protected entry that is a link, made in the sandbox's own tmpfs, is
 * made there with its text, where nothing can replace it; one in a bound
 * host directory is left out and counted, for fs.write to say the command
 * could replace it (its target is protected on its own: resolve/fsplan.c).
 * Bound instead, the tool would resolve the link and bind its target on
 * itself (or, in a cycle, fail the run). */
static void links_as_text(struct view *v, const struct fs_plan *fp)
{
	size_t i = 0;

	while (i < v->n) {
		struct view_op *op = &v->v[i];
		const struct fs_obj *o = op->obj >= 0 ? &fp->obj[op->obj] : NULL;

		if ((op->kind != VIEW_BIND && op->kind != VIEW_PIN) || !o || o->role != FS_PROTECT || !o->present ||
		    !S_ISLNK(o->mode)) {
			i++;
			continue;
		}
		if (op->made_here && o->link_text) {
			op->kind = VIEW_SYMLINK;
			op->text = moat_xstrdup(o->link_text);
			op->obj = -1;
			op->read_only = false;
			i++;
			continue;
		}
		if (!v->n_links_unheld++)
			v->link_unheld = o->real;
		remove_op(v, i);
	}
}

void view_build(const struct moat_policy *p, const struct fs_plan *fp, const struct view_opts *vo, struct view *v)
{
	size_t i;

	memset(v, 0, sizeof(*v));
	v->home = view_private_home(fp);
	op_add(v, VIEW_PROC, "/proc", -1);
	op_add(v, VIEW_DEV, "/dev", -1)->mode = 0755;
	/* /run holds the host's sockets (D-Bus, docker, agents) and runtime
	 * state: private, always. */
	op_add(v, VIEW_TMPFS, "/run", -1)->mode = 0755;
	if (vo->private_tmp) {
		op_add(v, VIEW_TMPFS, "/tmp", -1)->mode = 01777;
		op_add(v, VIEW_TMPFS, "/dev/shm", -1)->mode = 01777;
	}
	/* Each private tmpfs is bounded: unbounded, each could take half of the
	 * host's memory (resolve/limits.h). */
	for (i = 0; i < v->n; i++)
		if (v->v[i].kind == VIEW_TMPFS)
			v->v[i].size = p->limits.tmp_bytes != MOAT_LIMIT_UNSET ? p->limits.tmp_bytes : MOAT_TMP_SIZE_DEFAULT;
	/* HOME, unless granted whole: a read-only skeleton showing only the
	 * grants below it (agent sockets and every credential live there). */
	if (v->home)
		op_add(v, VIEW_SKELETON, v->home, -1)->mode = 0755;
	add_grants(v, p, fp, vo);
	add_links(v, fp);
	add_pins(v, fp, vo->no_placeholders);
	/* The cwd is entered even when nothing grants it: then it is empty,
	 * and read-only like the rest of what is not granted.  Below a
	 * private tmpfs (cd /tmp/build, under strict) a directory made there
	 * would be writable: what the command wrote to "its project" would
	 * vanish with the tmpfs, silently.  A skeleton of its own is the
	 * read-only empty directory a cwd gets anywhere else.  The private
	 * tmpfs itself as the cwd (cd /tmp) is the private tmp, said on
	 * stderr (sources/cli.c). */
	if (p->cwd) {
		const struct view_op *c = view_cover(v, p->cwd);
		bool in_private = c && c->kind == VIEW_TMPFS && strcmp(c->dest, p->cwd) != 0;

		if (in_private)
			op_add(v, VIEW_SKELETON, p->cwd, -1)->mode = 0755;
		else
			op_add(v, VIEW_DIR, p->cwd, -1);
	}
	sort_ops(v);
	merge_binds(v);
	drop_covered_binds(v, fp);
	add_masks(v, fp);
	sort_ops(v);
	settle_made(v);
	if (vo->links_as_text)
		links_as_text(v, fp);
	for (i = 0; i < v->n; i++)
		v->n_binds += v->v[i].kind == VIEW_BIND;
}
