/* Unit tests: every path resolved once to an object (resolve/fsplan.c), and
 * the view planned from the objects (resolve/view.c).  Plain data on a tree
 * this test makes under a temporary directory: no sandbox is run. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "resolve/fsplan.h"
#include "resolve/view.h"
#include "policy/policy.h"
#include "tap.h"
#include "util/cleanup.h"
#include "util/mem.h"

static char T[256];

static char *at(const char *rel)
{
	return moat_xasprintf("%s/%s", T, rel);
}

/* fs_placeholders_make's announcement: the final name must not exist yet. */
static int made_calls, made_early;
static void count_made(void *ctx, size_t index, dev_t dev, ino_t ino)
{
	const struct fs_plan *fp = ctx;
	const struct fs_obj *o = &fp->obj[index];
	char tmp[96];
	struct stat st;

	made_calls++;
	fs_placeholder_temp_name(fp, tmp, sizeof(tmp), getpid(), index);
	/* The announced object is at the temporary name, not yet at its own. */
	if (fstatat(o->dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev && st.st_ino == ino &&
	    fstatat(o->dirfd, strrchr(o->real, '/') + 1, &st, AT_SYMLINK_NOFOLLOW) != 0)
		made_early++;
}

static void mkfile(const char *rel, const char *text)
{
	char *p = at(rel);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(p);
}

static void mkd(const char *rel)
{
	char *p = at(rel);
	mkdir(p, 0755);
	free(p);
}

static void mklink(const char *target, const char *rel)
{
	char *p = at(rel);
	if (symlink(target, p) != 0)
		perror(p);
	free(p);
}

static void add(struct moat_policy *p, const char *rel, enum moat_access a)
{
	char *path = at(rel);
	struct moat_origin o = {.source = "test"};
	policy_add_path(p, path, a, false, o);
	free(path);
}

static const struct fs_obj *find(const struct fs_plan *fp, enum fs_role role, const char *rel)
{
	char *path = at(rel);
	const struct fs_obj *hit = NULL;
	size_t i;

	for (i = 0; i < fp->n && !hit; i++)
		if (fp->obj[i].role == role && (strcmp(fp->obj[i].path, path) == 0 || strcmp(fp->obj[i].real, path) == 0))
			hit = &fp->obj[i];
	free(path);
	return hit;
}

static const struct view_op *op_at(const struct view *v, const char *rel, enum view_kind kind)
{
	char *path = at(rel);
	const struct view_op *hit = NULL;
	size_t i;

	for (i = 0; i < v->n && !hit; i++)
		if (v->v[i].kind == kind && strcmp(v->v[i].dest, path) == 0)
			hit = &v->v[i];
	free(path);
	return hit;
}

static void policy_fresh(struct moat_policy *p)
{
	policy_init(p);
	p->private_tmp = true;
	p->cwd = moat_xstrdup(T);
}

/* The kinds of the ops at the absolute `dest`, one bit each. */
static unsigned kinds_at(const struct view *v, const char *dest)
{
	unsigned kinds = 0;
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->v[i].dest, dest) == 0)
			kinds |= 1U << v->v[i].kind;
	return kinds;
}

/* The view's ops at the cwd, with `cwd` (owned) as the policy's cwd. */
static unsigned cwd_kinds(struct moat_policy *p, const struct fs_plan *fp, char *cwd)
{
	struct view_opts vo = {.landlock = true, .private_tmp = true};
	struct view v;
	unsigned kinds;

	free(p->cwd);
	p->cwd = cwd;
	view_build(p, fp, &vo, &v);
	kinds = kinds_at(&v, cwd);
	view_free(&v);
	return kinds;
}

/* The cwd is entered even when nothing grants it: an empty directory that
 * is read-only wherever it lies.  Below a private tmpfs a directory made
 * there would be writable (what the command wrote "in its project" lost at
 * exit): it gets a skeleton of its own.  The tmpfs itself as the cwd is
 * the private tmp, and a granted cwd is its grant. */
static void test_cwd_view(void)
{
	static const char *const ungranted[] = {"/tmp/moat-nowhere/proj", "/dev/shm/a/b", "/run/user/x"};
	struct moat_policy p;
	struct fs_plan fp;
	struct moat_error err = {0};
	size_t i;

	policy_fresh(&p);
	add(&p, "data", MOAT_ACCESS_READ);
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "plan of one read grant (%s)", err.message);
	ok(cwd_kinds(&p, &fp, moat_xstrdup(T)) == 1U << VIEW_DIR,
	   "an ungranted cwd in the read-only root: an empty directory made there");
	for (i = 0; i < ARRAY_LEN(ungranted); i++)
		ok(cwd_kinds(&p, &fp, moat_xstrdup(ungranted[i])) == 1U << VIEW_SKELETON,
		   "an ungranted cwd below a private tmpfs (%s): a read-only skeleton, not a directory of the tmpfs",
		   ungranted[i]);
	ok(cwd_kinds(&p, &fp, moat_xstrdup("/tmp")) == 1U << VIEW_TMPFS,
	   "the private /tmp itself as the cwd: the tmpfs, nothing over it");
	ok(cwd_kinds(&p, &fp, at("data")) == 1U << VIEW_BIND, "a granted cwd: its grant's bind, nothing else");
	fs_plan_free(&fp);
	policy_free(&p);
}

/* A write grant through a link is refused, naming the target; a read grant
 * through one grants the target and records the link. */
static void test_symlinks(void)
{
	struct moat_policy p;
	struct fs_plan fp;
	struct moat_error err = {0};
	const struct fs_obj *o;
	char *want;

	policy_fresh(&p);
	add(&p, "lnk-data", MOAT_ACCESS_WRITE);
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0, "a write grant through a symlink is refused");
	ok(strstr(err.message, "passes through a symlink") != NULL, "  the message says why (%s)", err.message);
	want = at("data");
	ok(strstr(err.hint, want) != NULL, "  the hint names the target (%s)", err.hint);
	free(want);
	policy_free(&p);

	policy_fresh(&p);
	add(&p, "lnk-data", MOAT_ACCESS_READ);
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "a read grant through a symlink is accepted");
	o = find(&fp, FS_READ, "lnk-data");
	want = at("data");
	ok(o && o->present && o->via_symlink && strcmp(o->real, want) == 0, "  it grants the target");
	free(want);
	ok(fp.n_links == 1 && !fp.links[0].for_deny && strcmp(fp.links[0].text, "data") == 0,
	   "  the link is recorded for the view");
	fs_plan_free(&fp);
	policy_free(&p);

	/* A profile's grant bound to a tree (the Nix profile: `within` the
	 * store): dropped when its links lead elsewhere as the plan walks
	 * them, whatever the profile saw before. */
	policy_fresh(&p);
	add(&p, "lnk-data", MOAT_ACCESS_READ);
	p.paths[p.n_paths - 1].from_profile = true;
	p.paths[p.n_paths - 1].within = "/nix/store";
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "a grant through a link bound to a tree that it leaves: planned");
	o = find(&fp, FS_READ, "lnk-data");
	ok(o && o->dropped, "  but dropped: its target is not below the tree");
	fs_plan_free(&fp);
	policy_free(&p);
	policy_fresh(&p);
	add(&p, "lnk-data", MOAT_ACCESS_READ);
	p.paths[p.n_paths - 1].from_profile = true;
	p.paths[p.n_paths - 1].within = T;
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0 && (o = find(&fp, FS_READ, "lnk-data")) && o->present && !o->dropped,
	   "  control: bound to the tree it leads into, it is granted");
	fs_plan_free(&fp);
	policy_free(&p);

	policy_fresh(&p);
	add(&p, "lnk-home-ssh", MOAT_ACCESS_READ);
	add(&p, "home/.ssh", MOAT_ACCESS_DENY);
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0 && strstr(err.message, "inside the denied"),
	   "a read grant that resolves into a denied path is refused");
	policy_free(&p);

	policy_fresh(&p);
	add(&p, ".", MOAT_ACCESS_READ);
	add(&p, "cyc-a", MOAT_ACCESS_DENY);
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0 && strstr(err.hint, "cycle"), "a deny through a symlink cycle is refused");
	policy_free(&p);
}

/* A grant holding a deny is expanded: its rules go to its entries; the
 * entry on the way to the deny is expanded in turn, the deny left out. */
static void test_expansion(void)
{
	struct moat_policy p;
	struct fs_plan fp;
	struct moat_error err = {0};
	const struct fs_obj *g, *conf, *gh, *notes;
	struct view v;
	struct view_opts vo = {.landlock = true, .private_tmp = true};

	policy_fresh(&p);
	add(&p, "home", MOAT_ACCESS_READ);
	add(&p, "home/.config/gh", MOAT_ACCESS_DENY);
	add(&p, "home/.pgpass", MOAT_ACCESS_DENY); /* absent */
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "plan with denies inside a grant (%s)", err.message);
	g = find(&fp, FS_READ, "home");
	ok(g && g->expanded, "the grant holding denies is expanded");
	conf = find(&fp, FS_READ, "home/.config");
	ok(conf && conf->chain && conf->parent >= 0, "  the directory on the way to a deny is a chain entry");
	gh = find(&fp, FS_READ, "home/.config/gh");
	ok(gh == NULL, "  the denied directory is no entry");
	notes = find(&fp, FS_READ, "home/notes");
	ok(notes && !notes->chain && notes->fd >= 0, "  a sibling is an entry with its own descriptor");
	ok(fs_is_excluded(&fp, T) == false, "the scratch dir itself is not excluded");
	{
		char *pg = at("home/.pgpass");
		ok(fs_is_excluded(&fp, pg), "an absent denied name is excluded (nothing created later is granted)");
		free(pg);
	}

	view_build(&p, &fp, &vo, &v);
	ok(op_at(&v, "home", VIEW_BIND) != NULL, "with Landlock the grant is bound whole");
	ok(op_at(&v, "home/.config/gh", VIEW_MASK) != NULL, "  and the present deny is masked");
	view_free(&v);
	vo.landlock = false;
	view_build(&p, &fp, &vo, &v);
	ok(op_at(&v, "home", VIEW_SKELETON) != NULL, "without Landlock the grant is a skeleton");
	ok(op_at(&v, "home/notes", VIEW_BIND) != NULL, "  its entries are bound one by one");
	ok(op_at(&v, "home/.config/gh", VIEW_BIND) == NULL && op_at(&v, "home/.config/gh", VIEW_MASK) == NULL,
	   "  and the denied directory is not in the view at all");
	ok(op_at(&v, "home/.config/app", VIEW_BIND) != NULL, "  the chain's other entries are bound");
	view_free(&v);
	fs_plan_free(&fp);
	policy_free(&p);

	/* Below the private /tmp, whose own Landlock rule would cover what is
	 * mounted beneath it: entry by entry even with Landlock. */
	{
		char tdir[] = "/tmp/moat-fsplan-tmp.XXXXXX";
		char *sub, *deny;
		struct moat_origin o = {.source = "test"};

		if (mkdtemp(tdir)) {
			sub = moat_xasprintf("%s/secret", tdir);
			mkdir(sub, 0755);
			deny = moat_xstrdup(sub);
			policy_fresh(&p);
			policy_add_path(&p, tdir, MOAT_ACCESS_READ, false, o);
			policy_add_path(&p, deny, MOAT_ACCESS_DENY, false, o);
			vo.landlock = true;
			ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "plan with a deny in a grant below /tmp");
			view_build(&p, &fp, &vo, &v);
			{
				size_t i;
				bool skeleton = false, mask = false;
				for (i = 0; i < v.n; i++) {
					skeleton |= v.v[i].kind == VIEW_SKELETON && strcmp(v.v[i].dest, tdir) == 0;
					mask |= v.v[i].kind == VIEW_MASK && strcmp(v.v[i].dest, deny) == 0;
				}
				ok(skeleton && !mask, "  below the private /tmp it is mounted entry by entry, even with Landlock");
			}
			view_free(&v);
			fs_plan_free(&fp);
			policy_free(&p);
			rmdir(sub);
			rmdir(tdir);
			free(sub);
			free(deny);
		}
	}
}

/* Protected entries of a write grant: present ones pinned read-only with
 * their directories pinned, absent ones a placeholder, lifted ones kept
 * for the report. */
static void test_protected(void)
{
	struct moat_policy p;
	struct fs_plan fp;
	struct moat_error err = {0};
	const struct fs_obj *cfg, *hooks, *mcp, *dotgit, *vs;
	struct view v;
	struct view_opts vo = {.landlock = true, .private_tmp = true};
	struct moat_origin o = {.source = "test"};
	char *lift = at("repo/.vscode");

	policy_fresh(&p);
	add(&p, "repo", MOAT_ACCESS_WRITE);
	policy_add_unprotect(&p, lift, o);
	free(lift);
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "plan with a write grant (%s)", err.message);
	cfg = find(&fp, FS_PROTECT, "repo/.git/config");
	ok(cfg && cfg->present && !cfg->placeholder, ".git/config is protected as it is");
	hooks = find(&fp, FS_PROTECT, "repo/.git/hooks");
	ok(hooks && hooks->placeholder && hooks->placeholder_dir, "an absent .git/hooks gets a placeholder directory");
	dotgit = find(&fp, FS_PIN, "repo/.git");
	ok(dotgit && dotgit->present, "  .git, between the grant and them, is pinned");
	mcp = find(&fp, FS_PROTECT, "repo/.mcp.json");
	ok(mcp && mcp->placeholder && mcp->placeholder_dir, "an absent .mcp.json gets a placeholder (a directory)");
	vs = find(&fp, FS_PROTECT, "repo/.vscode");
	ok(vs && vs->lifted, "--unprotect .vscode lifts it (kept for the report)");
	view_build(&p, &fp, &vo, &v);
	ok(op_at(&v, "repo/.git/config", VIEW_PIN) && op_at(&v, "repo/.git/config", VIEW_PIN)->read_only,
	   "the view pins .git/config read-only");
	ok(op_at(&v, "repo/.git", VIEW_PIN) && !op_at(&v, "repo/.git", VIEW_PIN)->read_only,
	   "  and .git read-write (it only cannot move)");
	ok(op_at(&v, "repo/.vscode", VIEW_PIN) == NULL, "  a lifted entry is not pinned");
	view_free(&v);
	vo.no_placeholders = true;
	view_build(&p, &fp, &vo, &v);
	ok(op_at(&v, "repo/.mcp.json", VIEW_PIN) == NULL && v.n_unpinned > 0,
	   "an export has no placeholders, and counts what it cannot pin (%zu)", v.n_unpinned);
	view_free(&v);
	made_calls = made_early = 0;
	ok(fs_placeholders_make(&fp, count_made, &fp, &err) == 0, "placeholders are made at launch");
	ok(made_calls > 0 && made_early == made_calls,
	   "  each is announced (%d) while still under its temporary name, before it takes its own", made_calls);
	{
		char *pm = at("repo/.mcp.json"), tmp[96];
		struct stat st;
		size_t k;
		ok(stat(pm, &st) == 0 && S_ISDIR(st.st_mode), "  .mcp.json is an empty directory for the run");
		/* moat killed between making one and renaming it: its
		 * temporary name is left, and is this process's alone. */
		for (k = 0; k < fp.n && !(fp.obj[k].role == FS_PROTECT && fp.obj[k].placeholder); k++)
			;
		fs_placeholder_temp_name(&fp, tmp, sizeof(tmp), getpid(), k);
		ok(k < fp.n && mkdirat(fp.obj[k].dirfd, tmp, 0555) == 0, "  (a temporary name left by a killed moat)");
		fs_placeholders_remove(&fp, getpid(), NULL, NULL);
		ok(stat(pm, &st) != 0 && errno == ENOENT, "  and it is gone after");
		ok(fstatat(fp.obj[k].dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT,
		   "  and so is a temporary name left behind");
		free(pm);
	}
	fs_plan_free(&fp);
	policy_free(&p);

	policy_fresh(&p);
	{
		char *nothing = at("repo/nothing");
		add(&p, "repo", MOAT_ACCESS_WRITE);
		policy_add_unprotect(&p, nothing, o);
		free(nothing);
	}
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0 && strstr(err.message, "not a protected entry"),
	   "--unprotect of a path that is no protected entry is an error");
	policy_free(&p);
}

static void test_refusals(void)
{
	struct moat_policy p;
	struct fs_plan fp;
	struct moat_error err = {0};
	struct moat_origin o = {.source = "command line"};

	policy_fresh(&p);
	policy_add_path(&p, "/dev/shm", MOAT_ACCESS_WRITE, false, o);
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0 && strstr(err.message, "private"),
	   "--write /dev/shm is refused: the sandbox's is private");
	policy_free(&p);

	policy_fresh(&p);
	add(&p, ".", MOAT_ACCESS_READ);
	add(&p, "repo/*.key", MOAT_ACCESS_DENY);
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0 && strstr(err.message, "globs are not supported"),
	   "a deny with a glob that does not exist is refused");
	policy_free(&p);

	policy_fresh(&p);
	add(&p, "home", MOAT_ACCESS_READ);
	add(&p, "home", MOAT_ACCESS_DENY);
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0 && strstr(err.message, "both granted"),
	   "a path both granted and denied is an error");
	policy_free(&p);

	policy_fresh(&p);
	add(&p, "home", MOAT_ACCESS_DENY);
	add(&p, "home/.config/app", MOAT_ACCESS_WRITE);
	memset(&err, 0, sizeof(err));
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "a user's write grant inside his own deny is accepted%s",
	   err.message);
	fs_plan_free(&fp);
	policy_free(&p);

	/* A built-in secret granted by name, or a path inside one. */
	policy_fresh(&p);
	add(&p, "home/.ssh", MOAT_ACCESS_DENY);
	p.paths[p.n_paths - 1].from_profile = true;
	add(&p, "home/.ssh", MOAT_ACCESS_READ);
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0 && strstr(err.message, "it is ") &&
	       strstr(err.message, "which moat always denies") && strstr(err.hint, "does not grant credentials"),
	   "a grant of exactly a built-in secret says moat does not grant credentials: %s", err.message);
	policy_free(&p);
	policy_fresh(&p);
	add(&p, "home/.ssh", MOAT_ACCESS_DENY);
	p.paths[p.n_paths - 1].from_profile = true;
	add(&p, "home/.ssh/key", MOAT_ACCESS_READ);
	ok(fs_plan_build(&p, NULL, &fp, &err) < 0 && strstr(err.message, "it lies inside") &&
	       strstr(err.hint, "does not grant credentials"),
	   "  and so does a grant inside one: %s", err.message);
	policy_free(&p);
}

/* The deny of `rel` is absent, anchored at `anchor`, and `excluded` (its
 * first missing name) is excluded. */
/* After the command started (launch.c): the read grants', entries', links'
 * and denied objects' descriptors go; what host_cleanup and
 * fs_plan_changed_pins need stays, and still works. */
static void test_close_launched(void)
{
	struct moat_policy p;
	struct fs_plan fp;
	struct moat_error err = {0};
	int why = 0;
	char first[256] = "", *cfg = at("repo/.git/config"), *moved = at("repo/.git/config.moved");
	size_t i, n_closed = 0, n_kept = 0;
	bool wrong = false;

	policy_fresh(&p);
	add(&p, "repo", MOAT_ACCESS_WRITE);
	add(&p, "home", MOAT_ACCESS_READ);
	add(&p, "home/.ssh", MOAT_ACCESS_DENY);
	add(&p, "lnk-data", MOAT_ACCESS_READ);
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "plan with read, write and denied paths (%s)", err.message);
	{
		/* What the kernel holds, not only the plan's bookkeeping: the
		 * closed ones are gone (close_range over runs of them), no kept
		 * one with them. */
		int gone[512], kept[512];
		size_t n_gone = 0, n_still = 0, bad = 0;

		for (i = 0; i < fp.n && n_gone < 512 && n_still < 512; i++) {
			const struct fs_obj *o = &fp.obj[i];
			if (o->fd < 0)
				continue;
			if (o->role == FS_READ || o->role == FS_DENY || o->role == FS_LINK)
				gone[n_gone++] = o->fd;
			else
				kept[n_still++] = o->fd;
		}
		fs_plan_close_launched(&fp);
		for (i = 0; i < n_gone; i++)
			bad += fcntl(gone[i], F_GETFD) != -1 || errno != EBADF;
		for (i = 0; i < n_still; i++)
			bad += fcntl(kept[i], F_GETFD) == -1;
		ok(bad == 0 && n_gone > 3 && n_still > 0, "the kernel closed the %zu descriptors and kept the %zu others",
		   n_gone, n_still);
	}
	for (i = 0; i < fp.n; i++) {
		const struct fs_obj *o = &fp.obj[i];
		bool goes = o->role == FS_READ || o->role == FS_DENY || o->role == FS_LINK;

		if (goes && o->fd >= 0)
			wrong = true;
		n_closed += goes && o->present;
		n_kept += !goes && o->present && o->fd >= 0;
		if (o->role == FS_WRITE && o->present && o->fd < 0)
			wrong = true;
	}
	ok(!wrong && n_closed > 3 && n_kept > 0,
	   "the read grants', entries', links' and denied objects' descriptors are closed (%zu), the write "
	   "grants', pins' and protected entries' kept (%zu)",
	   n_closed, n_kept);
	ok(fs_plan_changed_pins(&fp, first, sizeof(first), &why) == 0, "  the pins are still found unchanged");
	ok(rename(cfg, moved) == 0 && fs_plan_changed_pins(&fp, first, sizeof(first), &why) == 1 && strstr(first, ".git/config") && why == 0,
	   "  and one moved away is still seen (%s)", first);
	ok(rename(moved, cfg) == 0, "  (moved back)");
	ok(fs_placeholders_make(&fp, count_made, &fp, &err) == 0, "  the placeholders are made as at launch");
	for (i = 0, n_kept = 0; i < fp.n; i++)
		n_kept += fp.obj[i].lock_fd >= 0;
	fs_plan_release_locks(&fp);
	for (i = 0, wrong = false; i < fp.n; i++)
		wrong = wrong || fp.obj[i].lock_fd >= 0;
	ok(n_kept > 0 && !wrong, "fs_plan_release_locks lets go of the locks the placeholders hold (%zu)", n_kept);
	fs_placeholders_remove(&fp, getpid(), NULL, NULL);
	fs_plan_free(&fp);
	policy_free(&p);
	free(cfg);
	free(moved);
}

static bool absent_deny(const struct fs_plan *fp, const char *rel, const char *anchor, const char *excluded)
{
	const struct fs_obj *o = find(fp, FS_DENY, rel);
	char *want = at(anchor), *path = at(excluded);
	bool yes = o && !o->present && o->anchor && strcmp(o->anchor, want) == 0 && fs_is_excluded(fp, path);

	free(want);
	free(path);
	return yes;
}

/* Many denied paths in one directory (the built-in secrets in HOME): the
 * directory is listed once, and each absent path gets the anchor and the
 * excluded first missing name the walk would give; what the listing cannot
 * answer (a present path, a link, a file where a directory would be) is
 * walked as before.  The excluded set answers by whole names. */
static void test_many_denies(void)
{
	struct moat_policy p;
	struct fs_plan fp;
	struct moat_error err = {0};
	const struct fs_obj *o;
	char rel[64], *path;
	int i, bad = 0;
	size_t k;
	bool link_for_deny = false;

	policy_fresh(&p);
	add(&p, "many", MOAT_ACCESS_READ);
	for (i = 0; i < 30; i++) {
		snprintf(rel, sizeof(rel), "many/d/n%d", i);
		add(&p, rel, MOAT_ACCESS_DENY);
	}
	add(&p, "many/d/p0", MOAT_ACCESS_DENY);
	add(&p, "many/d/sub/x/y", MOAT_ACCESS_DENY);
	add(&p, "many/absent-dir/file", MOAT_ACCESS_DENY);
	add(&p, "many/lnk/n5", MOAT_ACCESS_DENY);
	add(&p, "many/d/p0/x", MOAT_ACCESS_DENY);
	for (i = 0; i < 24; i++) {
		snprintf(rel, sizeof(rel), "many/empty/e%d", i);
		add(&p, rel, MOAT_ACCESS_DENY);
	}
	ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "plan with 59 denies in one grant (%s)", err.message);

	for (i = 0; i < 30; i++) {
		snprintf(rel, sizeof(rel), "many/d/n%d", i);
		bad += !absent_deny(&fp, rel, "many/d", rel);
	}
	ok(bad == 0, "30 absent denies in a listed directory: absent, anchored there, excluded (%d wrong)", bad);
	for (i = 0, bad = 0; i < 24; i++) {
		snprintf(rel, sizeof(rel), "many/empty/e%d", i);
		bad += !absent_deny(&fp, rel, "many/empty", rel);
	}
	ok(bad == 0, "  and 24 in an empty directory, listed too (%d wrong)", bad);
	o = find(&fp, FS_DENY, "many/d/p0");
	ok(o && o->present && o->fd >= 0 && S_ISREG(o->mode), "  a present one is its object");
	ok(absent_deny(&fp, "many/d/sub/x/y", "many/d/sub", "many/d/sub/x"),
	   "  one whose parent is missing below a present directory: anchored there, the missing name excluded");
	ok(absent_deny(&fp, "many/absent-dir/file", "many", "many/absent-dir"),
	   "  one whose first directory is missing: anchored above it, the directory excluded");
	path = at("many/lnk");
	for (k = 0; k < fp.n_links; k++)
		link_for_deny |= strcmp(fp.links[k].real, path) == 0 && fp.links[k].for_deny;
	ok(link_for_deny && fs_is_excluded(&fp, path), "  one through a link: the link is recorded and excluded");
	free(path);
	path = at("many/d/p0");
	ok(fs_is_excluded(&fp, path), "  one below a file: the file is excluded");
	free(path);

	o = find(&fp, FS_READ, "many/d");
	ok(o && o->chain, "the listed directory is a chain entry of the grant");
	o = find(&fp, FS_READ, "many/d-x");
	path = at("many/d-x");
	ok(o && !o->chain && !fs_is_excluded(&fp, path) && !fs_has_excluded_below(&fp, path),
	   "  d-x, which sorts among d's excluded paths, is an entry of its own with nothing excluded");
	free(path);
	path = at("many/d");
	ok(fs_has_excluded_below(&fp, path) && !fs_is_excluded(&fp, path), "  d holds excluded paths and is not one");
	free(path);
	mkfile("many/d/n3", "made after planning\n");
	ok(find(&fp, FS_READ, "many/d/n3") == NULL, "a denied name made after planning is no entry of the grant");
	fs_plan_free(&fp);
	policy_free(&p);
}

/* Denied paths in directories this uid cannot read or search: the secrets
 * of a HOME that is not the caller's (`sudo -u` keeping HOME, a run as uid
 * 65534 under root's HOME).  What the walk finds there -- a name it cannot
 * open is absent, anchored at the directory, the name excluded -- the tree
 * must find too, with one open for a directory it cannot search instead of
 * one for each path (resolve/fsplan.c, deny_by_tree), and a directory it
 * can search but not list still gives a present file as its object.  Run
 * as uid 65534 (a child process, when the test runs as root), since root
 * reads every directory. */
static void test_unreadable_denies(void)
{
	char rel[64], *ux = at("locked/ux"), *nx = at("locked/nx");
	int i, status = 0, bits = 0;
	pid_t pid;

	mkd("locked");
	mkd("locked/ux");
	mkfile("locked/ux/p", "present\n");
	mkd("locked/nx");
	mkd("locked/nx/a");
	mkfile("locked/nx/a/b", "hidden\n");
	chmod(T, 0755);
	chmod(ux, 0111); /* searchable, not readable */
	chmod(nx, 0);    /* neither */
	pid = fork();
	if (pid == 0) {
		struct moat_policy p;
		struct fs_plan fp;
		struct moat_error err = {0};
		const struct fs_obj *o;
		int got = 0, bad = 0;

		if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
				       setresuid(65534, 65534, 65534) != 0))
			_exit(100);
		policy_fresh(&p);
		for (i = 0; i < 30; i++) {
			snprintf(rel, sizeof(rel), "locked/ux/n%d", i);
			add(&p, rel, MOAT_ACCESS_DENY);
			snprintf(rel, sizeof(rel), "locked/nx/n%d", i);
			add(&p, rel, MOAT_ACCESS_DENY);
		}
		add(&p, "locked/ux/p", MOAT_ACCESS_DENY);
		add(&p, "locked/nx/a/b", MOAT_ACCESS_DENY);
		if (fs_plan_build(&p, NULL, &fp, &err) != 0)
			_exit(101);
		got |= 1;
		for (i = 0; i < 30; i++) {
			snprintf(rel, sizeof(rel), "locked/ux/n%d", i);
			bad += !absent_deny(&fp, rel, "locked/ux", rel);
		}
		if (bad == 0)
			got |= 2;
		for (i = 0, bad = 0; i < 30; i++) {
			snprintf(rel, sizeof(rel), "locked/nx/n%d", i);
			bad += !absent_deny(&fp, rel, "locked/nx", rel);
		}
		if (bad == 0)
			got |= 4;
		if (absent_deny(&fp, "locked/nx/a/b", "locked/nx", "locked/nx/a"))
			got |= 8;
		o = find(&fp, FS_DENY, "locked/ux/p");
		if (o && o->present && o->fd >= 0 && S_ISREG(o->mode))
			got |= 16;
		fs_plan_free(&fp);
		/* The same denies under a read grant of "locked": its entries
		 * get the rules, and the two it cannot list get none (nor do
		 * their entries: nothing there is granted). */
		add(&p, "locked", MOAT_ACCESS_READ);
		if (fs_plan_build(&p, NULL, &fp, &err) == 0) {
			size_t k, below = 0, chains = 0;
			for (k = 0; k < fp.n; k++) {
				const struct fs_obj *e = &fp.obj[k];
				if (e->role != FS_READ || e->parent < 0)
					continue;
				if (strstr(e->real, "/locked/ux/") || strstr(e->real, "/locked/nx/"))
					below++;
				else if (e->chain)
					chains++;
			}
			if (below == 0 && chains == 2)
				got |= 32;
			fs_plan_free(&fp);
		}
		policy_free(&p);
		_exit(got);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		bits = WEXITSTATUS(status);
	chmod(ux, 0755);
	chmod(nx, 0755);
	ok(bits != 100 && bits != 101 && (bits & 1), "denies in directories uid %d cannot list or search: planned (%d)",
	   geteuid() == 0 ? 65534 : (int)geteuid(), bits);
	ok(bits & 2, "  30 absent in a directory it can search but not list (0111): absent, anchored there, excluded");
	ok(bits & 16, "  and a file there that exists is its object, though the directory cannot be listed");
	ok(bits & 4, "  30 in a directory it cannot search (000): absent, anchored there, excluded");
	ok(bits & 8, "  one two levels down in it: anchored there, its first name excluded");
	ok(bits & 32, "  under a read grant: planned, the two it cannot list are chains with nothing granted below");
	free(ux);
	free(nx);
}

/* A link at the end of a path with no other link on the way is followed
 * from its own directory (resolve/fsplan.c, follow_trailing) instead of
 * walking from "/" again: what it gives must be what the component walk
 * gives, for every kind of link text, and the text it leaves to the walk
 * (".", "..", "//", a trailing "/") must still be followed right. */
static void test_trailing_links(void)
{
	static const struct {
		const char *name, *text; /* text: NULL is T/data (absolute) */
		int links;		 /* links recorded on the way */
	} cases[] = {
		{"tl-rel", "data", 1},	      {"tl-abs", NULL, 1},	   {"tl-dot", "./data", 1},
		{"tl-dotdot", "../@/data", 1}, {"tl-double", "tl-rel//", 2}, {"tl-chain", "tl-rel", 2},
		{"tl-slash", "data/", 1},      {"tl-chain3", "tl-chain", 3},
	};
	char *want = at("data"), *base = strrchr(T, '/') + 1;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cleanup_free char *text = cases[i].text ? moat_xstrdup(cases[i].text) : at("data");
		/* "../@/data": @ is the test directory's own name (only in the
		 * case's own text: mkdtemp's suffix may hold any letter) */
		char *x = cases[i].text ? strchr(text, '@') : NULL;

		if (x) {
			char *t = moat_xasprintf("%.*s%s%s", (int)(x - text), text, base, x + 1);
			free(text);
			text = t;
		}
		mklink(text, cases[i].name);
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct moat_policy p;
		struct fs_plan fp;
		struct moat_error err = {0};
		const struct fs_obj *o;

		policy_fresh(&p);
		add(&p, cases[i].name, MOAT_ACCESS_READ);
		ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "--read %s (-> %s) (%s)", cases[i].name,
		   cases[i].text ? cases[i].text : "/abs/data", err.message);
		o = find(&fp, FS_READ, cases[i].name);
		ok(o && o->present && o->via_symlink && strcmp(o->real, want) == 0 && o->fd >= 0,
		   "  it grants the target %s (%s)", want, o ? o->real : "none");
		ok(fp.n_links == (size_t)cases[i].links, "  %d link(s) recorded on the way (%zu)", cases[i].links,
		   fp.n_links);
		fs_plan_free(&fp);
		policy_free(&p);
	}
	/* A denied path through a trailing link: the target is denied, and
	 * the link is recorded for the deny (it is excluded too). */
	{
		struct moat_policy p;
		struct fs_plan fp;
		struct moat_error err = {0};
		const struct fs_obj *o;
		char *lnk = at("tl-rel");

		policy_fresh(&p);
		add(&p, ".", MOAT_ACCESS_READ);
		add(&p, "tl-rel", MOAT_ACCESS_DENY);
		ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "--deny through a trailing link (%s)", err.message);
		o = find(&fp, FS_DENY, "tl-rel");
		ok(o && o->present && strcmp(o->real, want) == 0 && fs_is_excluded(&fp, want) && fs_is_excluded(&fp, lnk),
		   "  the target and the link are excluded");
		ok(fp.n_links == 1 && fp.links[0].for_deny, "  the link is recorded for the deny");
		fs_plan_free(&fp);
		policy_free(&p);
		free(lnk);
	}
	/* A dangling trailing link: absent, anchored where the target would be. */
	{
		struct moat_policy p;
		struct fs_plan fp;
		struct moat_error err = {0};
		const struct fs_obj *o;
		char *anchor = at("data");

		mklink("data/none/x", "tl-dangling");
		policy_fresh(&p);
		add(&p, ".", MOAT_ACCESS_READ);
		add(&p, "tl-dangling", MOAT_ACCESS_DENY);
		ok(fs_plan_build(&p, NULL, &fp, &err) == 0, "--deny of a dangling trailing link (%s)", err.message);
		o = find(&fp, FS_DENY, "tl-dangling");
		ok(o && !o->present && o->anchor && strcmp(o->anchor, anchor) == 0,
		   "  absent, anchored at the target's nearest directory (%s)", o && o->anchor ? o->anchor : "none");
		fs_plan_free(&fp);
		policy_free(&p);
		free(anchor);
	}
	free(want);
}

int main(void)
{
	char cmd[512];

	/* Not below /tmp: the view makes /tmp a private tmpfs, and a grant
	 * below it is always mounted entry by entry (checked on its own). */
	snprintf(T, sizeof(T), "/var/tmp/moat-fsplan.XXXXXX");
	if (!mkdtemp(T))
		return 1;
	mkd("data");
	mkfile("data/f", "data\n");
	mklink("data", "lnk-data");
	mkd("home");
	mkd("home/.ssh");
	mkfile("home/.ssh/key", "key\n");
	mkd("home/.config");
	mkd("home/.config/gh");
	mkd("home/.config/app");
	mkfile("home/notes", "notes\n");
	mklink("home/.ssh", "lnk-home-ssh");
	mklink("cyc-b", "cyc-a");
	mklink("cyc-a", "cyc-b");
	mkd("repo");
	mkd("repo/.git");
	mkfile("repo/.git/config", "[core]\n");
	mkd("many");
	mkd("many/d");
	mkd("many/d/sub");
	mkd("many/d-x");
	mkd("many/empty");
	mkfile("many/d/p0", "present\n");
	mkfile("many/d/other", "other\n");
	mklink("d", "many/lnk");

	test_symlinks();
	test_expansion();
	test_protected();
	test_close_launched();
	test_refusals();
	test_many_denies();
	test_unreadable_denies();
	test_trailing_links();
	test_cwd_view();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", T);
	return tap_done();
}
