/* The `moat run` pipeline, end to end: sources -> policy -> plan -> launch
 * -> report.  Exported as moat_run_main() (include/moat/moat.h); the CLI is
 * a thin caller of it. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "api/run.h"
#include "api/runner.h"
#include "backends/backend.h"
#include "backends/native.h"
#include "launch/launch.h"
#include "moat/moat.h"
#include "host/host.h"
#include "plan/plan.h"
#include "resolve/limits.h"
#include "policy/policy.h"
#include "policy/protected.h"
#include "report/dest.h"
#include "report/report.h"
#include "sources/cli.h"
#include "sources/config.h"
#include "sources/size.h"
#include "launch/cgroup.h"
#include "launch/guard.h"
#include "launch/signals.h"
#include "launch/term.h"
#include "util/stacklimit.h"
#include "util/stdfds.h"
#include "util/umask.h"
#include "util/timeline.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/helperthread.h"
#include "util/jsontext.h"
#include "util/mem.h"
#include "util/path.h"
#include "util/rmtree.h"
#include "util/mkdirs.h"

#ifndef MOAT_VERSION
#define MOAT_VERSION "0.0.0"
#endif

extern char **environ;

/* The selected server's metadata from the config (name, install hint, ...),
 * when the command came from one. */
/* The server's own words, and what moat said on stderr before the run
 * (`notes`: a project's config loosening the default, a destination set's
 * gaps, ...): an embedder reads the report, not moat's stderr. */
static void add_server(json_t *report, const struct moat_server_meta *meta, const struct netset_notes *notes)
{
	if (meta->name)
		json_object_set_new(report, "server", config_server_meta_json(meta));
	if (report && notes->n) {
		json_t *a = json_array();

		for (size_t i = 0; i < notes->n; i++)
			json_array_append_new(a, json_text(notes->v[i]));
		json_object_set_new(report, "notes", a);
	}
}

const char *moat_version(void)
{
	return MOAT_VERSION;
}

/* Each missing property, and its hint: a hint said already for one above
 * (the namespaces' sysctl line, for four properties) is not said again. */
static void say_missing(const struct moat_plan *plan, const char *prefix)
{
	const char *said[MOAT_P__COUNT];
	size_t n_said = 0;
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++) {
		const struct moat_verdict *v = &plan->props[i];
		if (!v->requested || v->enforced)
			continue;
		char head[96];
		bool again = false;

		snprintf(head, sizeof(head), "moat: %s %s: ", prefix, moat_property_name((enum moat_property)i));
		moat_say(head, v->reason);
		for (size_t k = 0; k < n_said && !again; k++)
			again = strcmp(said[k], v->hint) == 0;
		if (v->hint[0] && !again) {
			moat_say("moat:   hint: ", v->hint);
			said[n_said++] = v->hint;
		}
	}
}

static void say_backend_absent(const struct moat_plan *plan, const char *cmd)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++) {
		const struct moat_verdict *v = &plan->props[i];
		if (!v->requested || v->enforced)
			continue;
		char head[96];

		snprintf(head, sizeof(head), "moat: backend %s cannot run here: ", plan->backend);
		moat_say(head, v->reason);
		if (v->hint[0])
			moat_say("moat:   hint: ", v->hint);
		break;
	}
	cleanup_free char *shown = moat_text_shown(cmd);

	fprintf(stderr, "moat: refusing to run %s (in every mode: running it bare would be --mode off); "
			"--backend auto picks one that is here\n",
		shown);
}

/* fs.write, found missing after the run: the run's status degraded, and
 * said on stderr. */
static void say_write_not_held(struct moat_plan *plan)
{
	if (plan->status == MOAT_STATUS_ENFORCED)
		plan->status = MOAT_STATUS_DEGRADED;
	moat_say("moat: fs.write was not held for the whole run: ", plan->props[MOAT_P_FS_WRITE].reason);
}

/* A write grant with a denied path below it (HOME with ~/.ssh) is granted
 * entry by entry: its files and directories stay writable, but the grant
 * itself is not (neither Landlock nor a bind can give "create here" on a
 * directory without giving it in the denied one below), so creating,
 * renaming or removing an entry directly in it fails (EROFS, EACCES).  An
 * MCP server given --write ~ failed every write_file there, which writes a
 * temporary file and renames it, with a report saying fs.write enforced
 * and nothing on stderr.  Said before the run. */
static void note_expanded_writes(const struct moat_plan *plan)
{
	const struct fs_plan *fp = &plan->fs;

	if (plan->status == MOAT_STATUS_OFF)
		return;
	for (size_t i = 0; i < fp->n; i++) {
		const struct fs_obj *g = &fp->obj[i];
		const char *first = NULL;
		size_t n = 0;

		if (g->role != FS_WRITE || !g->rule || !g->present || !g->expanded || g->dropped)
			continue;
		for (size_t j = 0; j < fp->n; j++) {
			const struct fs_obj *d = &fp->obj[j];
			if (d->role == FS_DENY && d->present && strcmp(d->real, g->real) != 0 &&
			    path_within(d->real, g->real) && n++ == 0)
				first = d->real;
		}
		if (!first)
			continue;
		cleanup_free char *line = moat_xasprintf(
		    "note: the write grant %s holds %s%s, which stay%s denied: the rest stays writable, but nothing "
		    "can be created, renamed or removed directly in %s, or in a directory on the way to a denied "
		    "path; grant a directory below it for that",
		    g->real, first, n > 1 ? " and other denied paths" : "", n > 1 ? "" : "s", g->real);
		moat_say("moat: ", line);
	}
}

/* An absent start-up file of a granted HOME (~/.bash_profile, ~/.gitconfig)
 * is held by a placeholder, an empty read-only directory, for the whole run
 * (docs/filesystem.md, section 6): the host sees it too.  A login shell
 * then stops on "~/.bash_profile: is a directory" and skips ~/.profile, and
 * git on "unable to access ~/.gitconfig" -- for as long as an MCP server
 * given --write ~ runs, with no word of why.  Said before the run. */
static bool home_file_name(const char *name)
{
	size_t n;
	const char *const *names = policy_protected_home_names(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static void note_home_placeholders(const struct moat_plan *plan)
{
	const struct fs_plan *fp = &plan->fs;
	char shown[256] = "";
	size_t n = 0, at = 0, hl;

	if (plan->status == MOAT_STATUS_OFF || !fp->home_real)
		return;
	hl = strlen(fp->home_real);
	for (size_t i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		const char *name;

		if (o->role != FS_PROTECT || !o->placeholder || o->present || !o->placeholder_dir || !o->protect_name ||
		    o->protect_name[strlen(o->protect_name) - 1] == '/' || strncmp(o->real, fp->home_real, hl) != 0 ||
		    o->real[hl] != '/' || strchr(o->real + hl + 1, '/'))
			continue;
		name = o->real + hl + 1;
		if (!home_file_name(name))
			continue; /* a project's (.mcp.json, .envrc): no program of the host reads HOME's */
		if (n++ < 3 && at < sizeof(shown))
			at += (size_t)snprintf(shown + at, sizeof(shown) - at, "%s~/%s", at ? ", " : "", name);
	}
	if (!n)
		return;
	cleanup_free char *more = n > 3 ? moat_xasprintf(" and %zu more", n - 3) : moat_xstrdup("");
	cleanup_free char *line = moat_xasprintf(
	    "note: while the command runs, the host sees %s%s as empty read-only directories (placeholders: the "
	    "command must not create them), where the host's own programs that read them (a login shell, git, an "
	    "editor) find a directory instead of no file, until it ends; grant a directory below HOME instead",
	    shown, more);
	moat_say("moat: ", line);
}

/* A grant bound to the object a check judged (a CA bundle named in moat's
 * environment, an interpreter's installation: moat_path_rule.bound) whose
 * name led elsewhere when the plan resolved it: dropped (fsplan.c), and the
 * report says `granted: false`; this says it where the user looks, since
 * the command's TLS, or its interpreter, then fails for no reason it can
 * see.  Said before the run. */
static void note_dropped_bound(const struct moat_plan *plan)
{
	const struct fs_plan *fp = &plan->fs;

	if (plan->status == MOAT_STATUS_OFF)
		return;
	for (size_t i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];

		if (!o->swapped || !o->rule)
			continue;
		cleanup_free char *shown = moat_text_shown(o->rule->path);
		cleanup_free char *line = moat_xasprintf(
		    "note: %s (%s) is no longer the %s moat checked: it changed between the check and the plan, "
		    "so it is not granted; run again, and look at who may write where it lies",
		    shown, o->rule->origin.source ? o->rule->origin.source : "a checked grant",
		    o->rule->bound_dir ? "directory" : "file");
		moat_say("moat: ", line);
	}
}

/* The host removed, renamed or replaced a pinned entry of a write grant
 * during the run: its pin was detached, and from then on the command
 * could write that name.  fs.write was not held for the whole run, and the
 * report must not say it was. */
static void note_changed_pins(struct moat_plan *plan)
{
	struct moat_verdict *v = &plan->props[MOAT_P_FS_WRITE];
	char first[PATH_MAX];
	size_t n;
	int why;

	if (plan->status == MOAT_STATUS_OFF || !v->requested || !v->enforced)
		return;
	n = fs_plan_changed_pins(&plan->fs, first, sizeof(first), &why);
	if (!n)
		return;
	if (why)
		verdict_missing(v, "look at that repository's directories (ls -la; a mode the command set) before running git there",
				"moat could not look up %s%s again after the run (%s): a directory on the way no longer "
				"lets this user in (the command may have changed its mode), so what it holds now is "
				"unknown, and nothing the command made there (a watched entry among it) was removed",
				first, n > 1 ? " (and other protected entries)" : "", strerror(why));
	else
		verdict_missing(v, "leave protected entries alone on the host while a sandbox writes there, or run again",
				"the host removed, renamed or replaced %s%s during the run: its read-only pin was "
				"detached, and from then on the command could write that name",
				first, n > 1 ? " (and other protected entries)" : "");
	say_write_not_held(plan);
}

/* fs_leftover_fn: into the run's result, for the report (run.left_on_host). */
struct leftover_ctx {
	struct moat_launch_result *r;
	const char *what;
};
static void add_leftover(void *ctx, const char *path, const char *kept_as)
{
	struct leftover_ctx *c = ctx;
	struct moat_launch_result *r = c->r;

	r->left = moat_xrealloc(r->left, (r->n_left + 1) * sizeof(*r->left));
	r->left[r->n_left++] = (struct moat_leftover){
	    .path = moat_xstrdup(path), .kept_as = kept_as ? moat_xstrdup(kept_as) : NULL, .what = c->what};
}

/* The placeholders go before the report is written, not after with the
 * rest of the clean-up (host_cleanup), so that one that could not be
 * removed is in the report as well as on stderr: an embedder reads the
 * report, not moat's stderr. */
static void remove_placeholders_now(struct moat_plan *plan, struct moat_launch_result *r)
{
	struct leftover_ctx c = {r, "placeholder"};
	size_t before = r->n_left, left;

	if (plan->status == MOAT_STATUS_OFF)
		return;
	left = fs_placeholders_remove(&plan->fs, getpid(), add_leftover, &c);
	if (left)
		say_placeholders_left(r->left[before].path, left);
}

/* The per-run TMPDIR (no mount namespace) goes before the report too: its
 * removal once came after the report was written, and one that failed (a
 * tree of more entries than moat removes in one go, util/rmtree.h) was said
 * on stderr alone, with fs.tmp "per-run TMPDIR, removed afterwards" and no
 * run.left_on_host in the report. */
static void remove_private_tmp_now(struct moat_plan *plan, struct moat_launch_result *r)
{
	struct native_plan *np = plan->compiled.in_child;
	struct moat_verdict *v = &plan->props[MOAT_P_FS_TMP];
	struct leftover_ctx c = {r, "tmpdir"};
	int rc;

	if (plan->status == MOAT_STATUS_OFF || !np || !np->private_tmp_dir)
		return;
	rc = native_remove_tmp(np);
	if (rc == 0)
		return;
	add_leftover(&c, np->private_tmp_dir, NULL);
	if (!v->enforced)
		return;
	verdict_missing(v, "look at what the command left there, and remove it (rm -rf)",
			"the per-run TMPDIR %s is left on the host: it could not be removed after the run (%s)",
			np->private_tmp_dir, rc == -E2BIG ? "more entries than moat removes in one go" : strerror(-rc));
	if (plan->status == MOAT_STATUS_ENFORCED)
		plan->status = MOAT_STATUS_DEGRADED;
}

/* The tree's cgroups and the backend's work directory go before the report
 * too: one that could not be removed was said after the report was written,
 * on stderr alone (the work directory) or nowhere (a cgroup, left busy or
 * refused), so the report an embedder reads did not say what the run left
 * on the host.  host_cleanup tries the cgroups again (what is gone is
 * skipped) and finds the work directory no longer the plan's. */
static void add_cgroup_left(void *ctx, const char *path, int errnum)
{
	add_leftover(ctx, path, NULL);
	rmtree_warn("the run's cgroup", path, -errnum);
}

static void remove_run_dirs_now(struct moat_plan *plan, struct moat_launch_result *r)
{
	struct leftover_ctx cgroup = {r, "cgroup"}, work_dir = {r, "workdir"};

	if (limits_uses_cgroup(&plan->limits))
		(void)tree_cgroup_destroy(&plan->limits, add_cgroup_left, &cgroup);
	if (backend_remove_work_dir(&plan->compiled) < 0)
		add_leftover(&work_dir, plan->compiled.work_dir, NULL);
}

/* What the run made on the host, removed before the report is built so that
 * what is left is in it. */
static void remove_now(struct moat_plan *plan, struct moat_launch_result *r)
{
	remove_placeholders_now(plan, r);
	remove_private_tmp_now(plan, r);
	remove_run_dirs_now(plan, r);
}

/* A watched entry (.git/commondir, a repository's top's HEAD, .yarnrc.yml,
 * a hook manager's config: nothing can stand in for an absent one without
 * breaking git or a project's tools) exists after the run: made during it,
 * by the command or the host, and moved aside by fs_plan_made_watched
 * (kept, not deleted: it can be the user's own, made by an `npm install`).
 * While it was there, git or the tool that reads it on the host could run
 * what the command chose: fs.write was not held for the whole run. */
/* Each watched entry made during the run, what became of it: "PATH (moved
 * aside to NAME)", "PATH (left in place)", "PATH (removed)", the first
 * WATCHED_SHOWN of them.  The note once named the first alone, "(and other
 * watched entries)": which others the user could not know, nor where they
 * went. */
#define WATCHED_SHOWN 8
static char *watched_made_list(const struct moat_launch_result *r, size_t from, size_t n)
{
	char *list = moat_xstrdup("");

	for (size_t i = 0; i < n && i < WATCHED_SHOWN; i++) {
		const struct moat_leftover *l = &r->left[from + i];
		cleanup_free char *fate = !l->kept_as	   ? moat_xstrdup("left in place")
					  : l->kept_as[0] ? moat_xasprintf("moved aside to %s beside it", l->kept_as)
							  : moat_xstrdup("removed");
		char *longer = moat_xasprintf("%s%s%s (%s)", list, i ? ", " : "", l->path, fate);

		free(list);
		list = longer;
	}
	if (n > WATCHED_SHOWN) {
		char *longer = moat_xasprintf("%s, and %zu more (the report's run.left_on_host lists them)", list,
					      n - WATCHED_SHOWN);

		free(list);
		list = longer;
	}
	return list;
}

/* A watched entry (.git/commondir, a repository's top's HEAD, .yarnrc.yml,
 * a hook manager's config: nothing can stand in for an absent one without
 * breaking git or a project's tools) exists after the run: made during it,
 * by the command or the host, and moved aside by fs_plan_made_watched
 * (kept, not deleted: it can be the user's own, made by an `npm install`).
 * While it was there, git or the tool that reads it on the host could run
 * what the command chose: fs.write was not held for the whole run. */
static void note_made_watched(struct moat_plan *plan, struct moat_launch_result *r)
{
	struct moat_verdict *v = &plan->props[MOAT_P_FS_WRITE];
	struct leftover_ctx c = {r, "watched"};
	size_t n, n_left, before = r->n_left;

	if (plan->status == MOAT_STATUS_OFF || !v->requested)
		return;
	n = fs_plan_made_watched(&plan->fs, add_leftover, &c, &n_left);
	if (!n)
		return;
	/* The names are the command's to choose: moat_say escapes them. */
	if (n == 1) {
		const struct moat_leftover *first = &r->left[before];
		cleanup_free char *moved =
		    first->kept_as && first->kept_as[0]
			? moat_xasprintf("moved aside to %s beside it (kept for you to look at; rename it back if it "
					 "is yours)",
					 first->kept_as)
			: moat_xstrdup("removed");
		cleanup_free char *text = moat_xasprintf(
		    "%s was made during the run (with it git, or the tool that reads it, could run what the "
		    "command chose): %s",
		    first->path,
		    n_left ? "left in place (a directory, or moat could not move it): look at it before running "
			     "git or the tool that reads it there"
			   : moved);
		moat_say("moat: ", text);
	} else {
		cleanup_free char *list = watched_made_list(r, before, n);
		cleanup_free char *text = moat_xasprintf(
		    "%zu watched entries were made during the run (with them git, or the tools that read them, could "
		    "run what the command chose): %s; %s",
		    n, list,
		    n_left ? "look at what is left in place before running git or the tool that reads it there"
			   : "kept for you to look at: rename one back if it is yours");
		moat_say("moat: ", text);
	}
	if (!v->enforced)
		return;
	cleanup_free char *others =
	    n > 1 ? moat_xasprintf(" (and %zu other watched entries: the report's run.left_on_host lists them)", n - 1)
		  : moat_xstrdup("");
	verdict_missing(v,
			"do not run git, or the tool that reads it, in that project while a sandbox writes there, or lift it "
			"with --unprotect",
			"%s%s was made during the run: absent, it could not be held (nothing stands in for it without "
			"breaking git or a project's tools), and git or the tool that reads it on the host could read it "
			"until the run ended%s",
			r->left[before].path, others,
			n_left ? ", and what was made there is still there" : " (moat moved it aside then)");
	say_write_not_held(plan);
}

/* The host's SysV IPC objects that appeared during a run without an IPC
 * namespace and that moat left (launch/sysvipc.h): possibly the command's,
 * which outlive it with their memory; ipcrm removes them. */
static void say_ipc_left(const struct moat_launch_result *r)
{
	char ids[256] = "";
	size_t used = 0, n = 0;

	for (size_t i = 0; i < r->n_left; i++) {
		const struct moat_leftover *l = &r->left[i];

		if (!l->ipc || l->kept_as)
			continue;
		if (n++ < 8 && used < sizeof(ids))
			used += (size_t)snprintf(ids + used, sizeof(ids) - used, "%s%s %d", used ? ", " : "",
						 l->what + strlen("sysv_"), l->ipc_id);
	}
	if (!n)
		return;
	fprintf(stderr,
		"moat: %zu System V IPC object%s appeared on the host during the run under uid %d and %s left there "
		"(%s%s): the command's, which outlive it without an IPC namespace, or another process's of this "
		"user; `ipcs` lists them, `ipcrm` removes them\n",
		n, n > 1 ? "s" : "", (int)geteuid(), n > 1 ? "are" : "is", ids, n > 8 ? ", ..." : "");
}

/* The host's proxy refused some of the command's connections: the command
 * saw ECONNREFUSED, or moat's proxy mode's 502, and not why; said here,
 * with the way out where there is one (a 407 asking for NTLM or
 * Negotiate, which moat does not speak). */
static void say_upstream_refused(const struct moat_launch_result *r)
{
	const struct upstream_refusals *f = &r->fence.upstream_refused, *x = &r->proxy.upstream_refused;
	const struct upstream_refusals *last = x->count ? x : f;
	bool auth = !last->socks && last->status == 407;
	bool other_scheme = auth && last->auth_scheme[0] && strcasecmp(last->auth_scheme, "Basic") != 0;
	char what[96];

	if (!r->fenced || f->count + x->count == 0)
		return;
	if (last->socks)
		snprintf(what, sizeof(what), "SOCKS%d reply %d", last->socks, last->status);
	else if (other_scheme)
		snprintf(what, sizeof(what), "HTTP 407: it asks for %s authentication, and moat speaks only Basic",
			 last->auth_scheme);
	else if (auth)
		snprintf(what, sizeof(what), "HTTP 407: the credentials in its URL were refused, or there are none");
	else
		snprintf(what, sizeof(what), "HTTP %d", last->status);
	fprintf(stderr, "moat: the host's proxy refused %lu of the command's connections (%s)\n", f->count + x->count,
		what);
	if (other_scheme)
		fprintf(stderr, "moat: hint: run a local bridge that speaks %s to it (cntlm, px) and point moat's "
				"HTTPS_PROXY at the bridge\n",
			last->auth_scheme);
	else if (auth)
		fprintf(stderr, "moat: hint: give user:password in the proxy's URL (http://user:password@proxy:port, "
				"percent-escaped)\n");
}

/* --mkdir: the write grants the user named that do not exist yet are made
 * (mkdir -p), before the plan resolves them.  A dry run makes nothing: it
 * shows them as not granted, and says they would be made.  Made one
 * component at a time without following a symlink (util/mkdirs.h): the
 * plan refuses a write grant through one, but only after this, and a link
 * an earlier run planted in its grant (`ln -s /etc build`) would have had
 * moat make `--write ./build/out` wherever it leads. */
/* What --mkdir made, to take back when the command never runs (a require
 * refusal, a backend that cannot run here): each grant's path and the
 * length of the part of it that existed before. */
struct made_dirs {
	char **path;
	size_t *existed;
	size_t n;
};

/* The length of `path`'s longest prefix that exists (lstat), at a '/'. */
static size_t existing_prefix(const char *path)
{
	cleanup_free char *p = moat_xstrdup(path);
	struct stat st;
	char *slash;

	while ((slash = strrchr(p, '/')) != NULL && slash != p) {
		*slash = '\0';
		if (lstat(p, &st) == 0)
			return strlen(p);
	}
	return 1; /* "/" */
}

/* The directories --mkdir made, deepest first, each only if still empty
 * (rmdir): nothing the user or another process put there is lost.  Said
 * on stderr, as their making was. */
static void unmake_write_dirs(struct made_dirs *m)
{
	for (size_t i = 0; i < m->n; i++) {
		cleanup_free char *p = moat_xstrdup(m->path[i]);
		cleanup_free char *shown = moat_text_shown(m->path[i]);
		bool all = true;
		char *slash;

		while (strlen(p) > m->existed[i]) {
			if (rmdir(p) != 0) {
				all = false;
				break;
			}
			if (!(slash = strrchr(p, '/')))
				break;
			*slash = '\0';
		}
		fprintf(stderr, "moat: --mkdir: %s %s (the command did not run)\n", all ? "removed" : "left", shown);
	}
}

static void made_dirs_free(struct made_dirs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->path[i]);
	free(m->path);
	free(m->existed);
	*m = (struct made_dirs){0};
}

static int make_write_dirs(struct moat_policy *p, bool dry_run, struct made_dirs *made, struct moat_error *err)
{
	for (size_t i = 0; i < p->n_paths; i++) {
		struct moat_path_rule *r = &p->paths[i];
		struct stat st;
		cleanup_free char *shown = NULL;

		if (r->access != MOAT_ACCESS_WRITE || r->optional || r->from_profile || lstat(r->path, &st) == 0 ||
		    errno != ENOENT)
			continue;
		/* A grant's path may come from a server's config file. */
		shown = moat_text_shown(r->path);
		if (dry_run) {
			r->optional = true;
			fprintf(stderr, "moat: --mkdir: %s does not exist: the run makes it (this dry run does not)\n",
				shown);
			continue;
		}
		/* The caller's directories, made as mkdir -p would under the
		 * caller's umask (util/umask.h). */
		size_t existed = existing_prefix(r->path);
		mode_t own = umask(umask_caller());
		int rc = mkdirs(r->path, 0777, "--mkdir --write", err);
		umask(own);
		if (rc < 0)
			return moat_error_wrap(err, "--mkdir");
		fprintf(stderr, "moat: --mkdir: made %s\n", shown);
		made->path = moat_xrealloc(made->path, (made->n + 1) * sizeof(*made->path));
		made->existed = moat_xrealloc(made->existed, (made->n + 1) * sizeof(*made->existed));
		made->path[made->n] = moat_xstrdup(r->path);
		made->existed[made->n++] = existed;
	}
	return 0;
}

/* A limit ended the run: said, since the status alone (137) reads like
 * any SIGKILL, an OOM kill's too. */
/* The sandbox could not be made (launch_run failed): nothing ran and no
 * property held, so the report must not keep the plan's "enforced", which
 * an embedder would trust.  Unavailable, as for a backend that cannot run
 * here, with each requested property missing for the failure's reason
 * (docs/report.md). */
static void not_made(struct moat_plan *plan, const struct moat_error *err)
{
	int i;

	if (plan->status == MOAT_STATUS_OFF)
		return;
	plan->status = MOAT_STATUS_UNAVAILABLE;
	for (i = 0; i < MOAT_P__COUNT; i++)
		if (plan->props[i].requested)
			verdict_missing(&plan->props[i], err->hint[0] ? err->hint : NULL,
					"the sandbox could not be made: %.400s", err->message);
		else
			plan->props[i].enforced = false; /* not asked for, and not there either */
}

/* --memory: the kernel's OOM killer ended processes of the tree.  When it
 * ended the command itself (SIGKILL, or under a tool such as runsc the
 * tool's 137), so the 137 is not a mystery; when it ended another process
 * of the tree (a worker, a child of a shell), so the command's own failure,
 * or a success with part of its work gone, is not one either.  The report
 * has the count and the peak (limits.memory.hits, run.oom_kills,
 * memory_peak_bytes). */
static void say_memory_hit(const struct moat_policy *p, const struct moat_launch_result *r)
{
	char limit[32];
	bool command_killed = r->signal == SIGKILL || (r->signal == 0 && r->exit_code == 128 + SIGKILL);

	if (p->limits.memory_bytes == MOAT_LIMIT_UNSET || r->oom_kills < 1 ||
	    (r->limit_hit && command_killed))
		return;
	moat_size_text(limit, sizeof(limit), p->limits.memory_bytes);
	fprintf(stderr, "moat: memory limit reached (--memory %s): the OOM killer ended %lld process%s of the tree",
		limit, (long long)r->oom_kills, r->oom_kills == 1 ? "" : "es");
	if (command_killed && !r->timed_out)
		fprintf(stderr, "; the command was killed by SIGKILL (exit %d)\n", r->exit_code);
	else
		fprintf(stderr, " (the command's exit: %d)\n", r->exit_code);
	fprintf(stderr, "moat: hint: give the tree more memory with a higher --memory%s\n",
		strcmp(p->backend, "gvisor") == 0 ? " (under gvisor it covers gVisor's own kernel too, ~55 MiB)" : "");
}

/* --pids: the tree's cgroup refused forks or threads (the command saw
 * EAGAIN: "Cannot fork", "Resource temporarily unavailable"). */
static void say_pids_hit(const struct moat_policy *p, const struct moat_launch_result *r)
{
	if (p->limits.pids == MOAT_LIMIT_UNSET || r->pids_refused < 1)
		return;
	fprintf(stderr,
		"moat: process limit reached (--pids %lld): the tree's cgroup refused %lld fork%s or thread%s (EAGAIN)\n",
		(long long)p->limits.pids, (long long)r->pids_refused, r->pids_refused == 1 ? "" : "s",
		r->pids_refused == 1 ? "" : "s");
	fprintf(stderr, "moat: hint: give the tree more processes and threads with a higher --pids\n");
}

/* What holds an enforced --pids or --memory whose counter moat cannot read
 * (the report's hits is null), for the note below. */
static const char *uncounted_holder(const struct limits_plan *lp, enum limit_kind k, char *buf, size_t len)
{
	if (k == LIM_PIDS && lp->nproc_rlimit)
		return "RLIMIT_NPROC (no cgroup of moat's)";
	if ((k == LIM_PIDS && lp->oci_pids) || (k == LIM_MEMORY && lp->oci_memory)) {
		snprintf(buf, len, "%s's own cgroup", lp->runtime ? lp->runtime : "the runtime");
		return buf;
	}
	return "a cgroup that is not moat's own";
}

/* --pids or --memory held by a mechanism that counts nothing moat can read
 * (RLIMIT_NPROC; runc's cgroup, gone with the container; the cgroup holding
 * moat): the kernel refuses forks or OOM-kills past it, but moat cannot tell.
 * A command that failed is told the limit may be why, rather than nothing. */
static void say_uncounted_maybe(const struct moat_policy *p, const struct moat_plan *plan,
				const struct moat_launch_result *r)
{
	const struct limits_plan *lp = &plan->limits;
	char holder[64];

	if (r->exit_code == 0 || !r->executed)
		return;
	if (p->limits.pids != MOAT_LIMIT_UNSET && lp->lim[LIM_PIDS].enforced && r->pids_refused < 0) {
		fprintf(stderr,
			"moat: note: --pids %lld is held by %s, which counts nothing moat can read: if the command "
			"failed to start a process or thread (EAGAIN, \"Resource temporarily unavailable\"), that limit "
			"may be why\n",
			(long long)p->limits.pids, uncounted_holder(lp, LIM_PIDS, holder, sizeof(holder)));
		fprintf(stderr, "moat: hint: give it a higher --pids, or run moat in a cgroup of its own (docs/limits.md)\n");
	}
	if (p->limits.memory_bytes != MOAT_LIMIT_UNSET && lp->lim[LIM_MEMORY].enforced && r->oom_kills < 0 &&
	    (r->signal == SIGKILL || r->exit_code == 128 + SIGKILL)) {
		char limit[32];

		moat_size_text(limit, sizeof(limit), p->limits.memory_bytes);
		fprintf(stderr,
			"moat: note: --memory %s is held by %s, which moat cannot read: the SIGKILL may be its OOM "
			"killer\n",
			limit, uncounted_holder(lp, LIM_MEMORY, holder, sizeof(holder)));
		fprintf(stderr, "moat: hint: give it a higher --memory\n");
	}
}

static void say_limit_hit(const struct moat_policy *p, const struct moat_plan *plan,
			  const struct moat_launch_result *r)
{
	char used[64] = "";

	if (r->timed_out)
		/* 124, as coreutils' timeout, which says nothing: a caller
		 * reading moat's stderr learns why. */
		fprintf(stderr,
			"moat: time limit reached (--timeout %g): the command was sent SIGTERM, and the tree SIGKILL "
			"%d s later if still there (exit %d)\n",
			p->limits.timeout_s, MOAT_TIMEOUT_GRACE_MS / 1000, r->exit_code);
	say_memory_hit(p, r);
	say_pids_hit(p, r);
	say_uncounted_maybe(p, plan, r);
	if (!r->limit_hit || strcmp(r->limit_hit, "cpu") != 0)
		return;
	if (r->cpu_usec >= 0)
		snprintf(used, sizeof(used), ": the tree used %.2f s", (double)r->cpu_usec / 1e6);
	if (r->signal && sigabbrev_np(r->signal))
		fprintf(stderr,
			"moat: CPU time limit reached (--cpu %lld)%s; the command was killed by SIG%s (exit %d)\n",
			(long long)p->limits.cpu_seconds, used, sigabbrev_np(r->signal), r->exit_code);
	else
		fprintf(stderr, "moat: CPU time limit reached (--cpu %lld)%s; the tree was killed (exit %d)\n",
			(long long)p->limits.cpu_seconds, used, r->exit_code);
	fprintf(stderr, "moat: hint: give the tree more CPU time with a higher --cpu\n");
}

static bool report_wanted(const struct moat_run_options *o)
{
	return !o->dry_run && (o->report_fd >= 0 || o->report_path);
}

/* moat stops at `err`.  A command that was not found (or is not
 * executable) is said first, as when it was the first thing checked; and
 * when its run was to be reported, the report is missing now, which is
 * 125 whatever the command did (README, exit status). */
static int stop(const struct moat_run_options *o, const struct moat_error *err)
{
	int code;

	if (o->exe_err.kind == MOAT_E_NONE)
		return moat_error_print(err);
	code = moat_error_print(&o->exe_err);
	if (!report_wanted(o))
		return code;
	moat_error_print(err);
	fprintf(stderr, "moat: the command could not start (%d); exiting 125 since the report is missing\n", code);
	return 125;
}

/* The command was not found or is not executable: nothing runs, and the
 * report says so (run.executed false, run.failure the reason, the exit
 * status 127 or 126), as for a command whose execve failed in the child. */
static json_t *report_not_started(struct moat_policy *policy, const struct moat_host *host, struct moat_plan *plan,
				  const struct moat_run_options *o, struct moat_launch_result *result, int code)
{
	memset(result, 0, sizeof(*result));
	result->exit_code = code;
	snprintf(result->failure, sizeof(result->failure), "%s", o->exe_err.message);
	/* It names no file: the report's exe is null. */
	free(policy->exe);
	policy->exe = NULL;
	return report_build(policy, host, plan, result);
}

/* Whether the process exits right after the run (run_main_exiting): a
 * sanitizer build frees everything all the same (api/run.h). */
#if defined(__SANITIZE_ADDRESS__)
#define FREE_AT_EXIT true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FREE_AT_EXIT true
#endif
#endif
#ifndef FREE_AT_EXIT
#define FREE_AT_EXIT false
#endif

/* The threads of this process, from /proc/self/status; 0 when unknown. */
static long thread_count(void)
{
	cleanup_fclose FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long n = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %ld", &n) == 1)
			break;
	return n;
}

/* moat_run_main needs the process to itself: it blocks the signals it
 * forwards and SIGCHLD in the calling thread only and reads them from a
 * signalfd, so another thread would take the command's SIGCHLD (the run
 * then waits forever) or die of a SIGTERM meant for the command.  moat's
 * own helper threads, which an earlier call may have left (a name lookup
 * still waiting for its resolver), block every signal and do not count
 * (util/helperthread.h).  true: refused, said on stderr. */
static bool refuse_threads(void)
{
	long n = thread_count();

	if ((pid_t)syscall(SYS_gettid) == getpid() && (n <= 1 || helper_threads_foreign() == 0))
		return false;
	fprintf(stderr,
		"moat: moat_run_main must be called from the process's only thread (this process has %ld threads%s)\n"
		"moat: hint: call it before starting any thread, or run the moat program as a child process\n",
		n, (pid_t)syscall(SYS_gettid) == getpid() ? "" : ", and this is not its main thread");
	return true;
}

/* What an editor did to a script's #! line that execve names only as
 * ENOENT or ENOEXEC: a carriage return at its end (Windows line endings:
 * the kernel looks for an interpreter whose name ends in "\r"), or a byte
 * order mark before it (the kernel sees no #!).  NULL when neither. */
static const char *script_line_problem(const char *exe)
{
	cleanup_close int fd = exe ? file_open_regular_fd(exe, INT64_MAX) : -1;
	char buf[256];
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	char *nl;

	if (n >= 5 && memcmp(buf, "\xef\xbb\xbf#!", 5) == 0)
		return "starts with a byte order mark (EF BB BF) before its #!, so the kernel does not see one; "
		       "remove it with `sed -i '1s/^\\xEF\\xBB\\xBF//'";
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return NULL;
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	if (nl && nl > buf && nl[-1] == '\r')
		return "has a #! line that ends in a carriage return (Windows line endings), so the kernel looks for "
		       "an interpreter whose name ends in \\r; convert it with `sed -i 's/\\r$//'";
	return NULL;
}

/* Planning raises this process's soft RLIMIT_NOFILE to hold every object
 * open (resolve/fsplan.c, raise_nofile).  An embedder gets its own back
 * when moat_run_main returns: left raised, its later select(2) calls could
 * meet descriptors past FD_SETSIZE, and its next call's command got the
 * raised limit instead of the caller's (tests/blackbox/library.sh). */
static void nofile_give_back(const struct rlimit *caller, bool known)
{
	struct rlimit now;

	if (known && getrlimit(RLIMIT_NOFILE, &now) == 0 && now.rlim_cur != caller->rlim_cur) {
		now.rlim_cur = caller->rlim_cur;
		(void)setrlimit(RLIMIT_NOFILE, &now);
	}
}

static int run_main(int argc, char **argv, bool exiting)
{
	long long start_ns = moat_now_ns();
	struct moat_policy policy;
	struct moat_run_options opts;
	struct moat_host host;
	struct moat_plan plan;
	struct moat_launch_result result = {0};
	struct made_dirs made = {0};
	struct moat_error err = {0};
	struct moat_server_meta meta = {0};
	struct runner_run rr = {0};
	struct moat_guard guard = {.pid = -1, .fd = -1};
	struct report_dest dest;
	struct term term;
	json_t *report = NULL;
	int code = 125, ran;
	bool have_plan = false;
	int was_dumpable;
	struct rlimit caller_nofile;
	bool nofile_known = getrlimit(RLIMIT_NOFILE, &caller_nofile) == 0;

	/* Before anything is opened or any disposition changed (util/stdfds.h,
	 * launch/signals.h). */
	if (stdfds_ensure(&err) < 0)
		return moat_error_print(&err);
	if (!exiting && refuse_threads())
		return 125;
	umask_take_own();
	signals_capture_caller();
	/* Not dumpable while it runs: a command moat does not confine (mode
	 * off, or no Landlock and no namespaces) runs as the same user and
	 * could otherwise open /proc/MOAT/fd/N -- the --report-fd pipe -- or
	 * ptrace moat.  The child makes itself dumpable again (child.c). */
	was_dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	policy_init(&policy);
	run_options_init(&opts);
	opts.defer_exe_err = true;
	report_dest_init(&dest);
	term_init(&term);
	moat_timeline_mark("main");
	if (host_probe(&host, &err) < 0 || cli_parse_run_meta(argc, argv, environ, &policy, &opts, &meta, &err) < 0) {
		code = stop(&opts, &err);
		goto out;
	}
	/* What a destination set (--allow-net @go) had to leave out. */
	for (size_t i = 0; i < opts.notes.n; i++)
		moat_say("moat: ", opts.notes.v[i]);
	if (opts.help) {
		cli_run_usage(stdout);
		code = 0;
		goto out;
	}
	/* A command that cannot start is reported when a report is asked
	 * for; otherwise its error is all there is to say. */
	if (opts.exe_err.kind != MOAT_E_NONE && !report_wanted(&opts)) {
		code = stop(&opts, &err);
		goto out;
	}
	/* A dry run writes to stdout and runs nothing: neither destination
	 * is checked or touched. */
	if (opts.report_fd >= 0 && !opts.dry_run && report_dest_use_fd(&dest, opts.report_fd, &policy, &err) < 0) {
		code = stop(&opts, &err);
		goto out;
	}
	if (opts.events_fd >= 0 && !opts.dry_run &&
	    (report_fd_check(opts.events_fd, "--events-fd", &policy, &err) < 0 ||
	     report_fds_apart(opts.report_fd, opts.events_fd, &err) < 0)) {
		code = stop(&opts, &err);
		goto out;
	}
	/* A package manager under a closed network fails at once rather than
	 * retry for a minute (sources/runners.h). */
	runner_fail_fast_env(&policy);
	if (opts.mkdir && make_write_dirs(&policy, opts.dry_run, &made, &err) < 0) {
		code = stop(&opts, &err);
		goto out;
	}
	/* The command's terminal, if it gets one, is made before planning:
	 * the plan grants it (launch/term.h).  A dry run makes none. */
	if (!opts.dry_run && term_open(&term, &policy, &err) < 0) {
		code = stop(&opts, &err);
		goto out;
	}
	moat_timeline_mark("parsed");
	if (plan_build(&policy, &host, &plan, &err) < 0) {
		code = stop(&opts, &err);
		goto out;
	}
	have_plan = true;
	/* Until here moat has made nothing a later run would not sweep (a
	 * backend's per-run directory in /tmp, flock-held while this run
	 * lives: util/stale.h), and a step of planning can block (a stat on
	 * a hung NFS or FUSE mount): a SIGTERM, SIGINT or SIGHUP ends moat
	 * as it would any program, and the command never starts.  From here
	 * on they are held (launch/signals.h). */
	signals_hold();
	moat_timeline_mark("planned");
	note_expanded_writes(&plan);
	note_home_placeholders(&plan);
	note_dropped_bound(&plan);

	if (opts.dry_run) {
		/* A package runner: both phases' plans. */
		if (opts.exe_err.kind == MOAT_E_NONE &&
		    runner_prepare(&policy, &host, &plan, true, start_ns, &rr, &result, &err) < 0) {
			code = stop(&opts, &err);
			goto out;
		}
		report = report_build(&policy, &host, &plan, NULL);
		add_server(report, &meta, &opts.notes);
		runner_report_add(report, &rr);
		if (report_write_fd(report, STDOUT_FILENO, &err) < 0)
			code = moat_error_print(&err);
		else
			code = plan.status == MOAT_STATUS_UNAVAILABLE ? 125 : 0;
		goto out;
	}
	/* The report's destination, now that the write grants are known and
	 * before anything runs: a refusal leaves the command unstarted. */
	if ((opts.report_path && report_dest_open(&dest, opts.report_path, &plan, &err) < 0) ||
	    report_fd_check_grants(opts.report_fd, "--report-fd", &plan, &err) < 0 ||
	    report_fd_check_grants(opts.events_fd, "--events-fd", &plan, &err) < 0) {
		code = stop(&opts, &err);
		goto out;
	}
	if (opts.exe_err.kind != MOAT_E_NONE) {
		code = moat_error_print(&opts.exe_err);
		report = report_not_started(&policy, &host, &plan, &opts, &result, code);
		add_server(report, &meta, &opts.notes);
		goto write_report;
	}
	/* A package runner that needs its package: the fetch phase runs now,
	 * and the policy and the plan become the server phase's
	 * (api/runner.h). */
	ran = runner_prepare(&policy, &host, &plan, false, start_ns, &rr, &result, &err);
	if (ran != 0) {
		if (ran < 0) {
			code = moat_error_print(&err);
			memset(&result, 0, sizeof(result));
			result.exit_code = code;
			snprintf(result.failure, sizeof(result.failure), "%s", err.message);
		}
		code = result.exit_code;
		report = report_build(&policy, &host, &plan, &result);
		add_server(report, &meta, &opts.notes);
		goto write_report;
	}
	if (plan_backend_absent(&plan)) {
		/* The backend's tool is absent, the host rules it out (no user
		 * namespaces), or this is not its OS: one line for the cause,
		 * not one per property. */
		say_backend_absent(&plan, policy.argv[0]);
		memset(&result, 0, sizeof(result));
		result.exit_code = 125;
		snprintf(result.failure, sizeof(result.failure), "backend %s cannot run on this host", plan.backend);
		report = report_build(&policy, &host, &plan, &result);
		add_server(report, &meta, &opts.notes);
		code = 125;
		goto write_report;
	}
	if (plan.status == MOAT_STATUS_UNAVAILABLE) {
		cleanup_free char *shown_cmd = moat_text_shown(policy.argv[0]);

		say_missing(&plan, "cannot enforce");
		fprintf(stderr, "moat: refusing to run %s (mode require); --mode prefer runs with what this host "
				"has, and says so\n",
			shown_cmd);
		memset(&result, 0, sizeof(result));
		result.exit_code = 125;
		snprintf(result.failure, sizeof(result.failure), "required protections unavailable");
		report = report_build(&policy, &host, &plan, &result);
		add_server(report, &meta, &opts.notes);
		code = 125;
		goto write_report;
	}
	if (plan.status == MOAT_STATUS_DEGRADED)
		say_missing(&plan, "degraded: missing");
	else if (plan.status == MOAT_STATUS_OFF) {
		cleanup_free char *shown_cmd = moat_text_shown(policy.argv[0]);

		fprintf(stderr, "moat: sandbox off (%s): running %s unsandboxed\n", plan.backend_reason, shown_cmd);
	}

	/* From here on moat changes the host (a dry run or a refusal above
	 * touches nothing but the backend's work directory, which planning
	 * made, which moat removes on its way out, and which a moat killed
	 * before this point leaves to the next run's sweep: util/stale.h):
	 * the guard first, which undoes those changes if moat dies without
	 * doing it itself (launch/guard.h); then the placeholders
	 * for absent protected entries of the write grants, removed after the
	 * run; then the tree's cgroup and the run (launch_run). */
	if (guard_start(&guard, &plan, &err) < 0 ||
	    (plan.status != MOAT_STATUS_OFF && fs_placeholders_make(&plan.fs, guard_placeholder_made, &guard, &err) < 0) ||
	    launch_run(&policy, &plan, &term, start_ns, opts.events_fd, guard.pid, &result, &err) < 0) {
		/* The sandbox could not be created: still say so in the report,
		 * so an embedder sees an error, not a missing file. */
		code = moat_error_print(&err);
		launch_result_free(&result);
		memset(&result, 0, sizeof(result));
		result.exit_code = code;
		snprintf(result.failure, sizeof(result.failure), "%s", err.message);
		not_made(&plan, &err);
		remove_now(&plan, &result);
		report = report_build(&policy, &host, &plan, &result);
		add_server(report, &meta, &opts.notes);
		goto write_report;
	}
	if (!result.executed) {
		const char *hint = moat_failure_hint(result.failure), *problem;
		const char *tool = plan.compiled.tool_path ? plan.compiled.tool_path : plan.backend;
		cleanup_free char *shown_tool = moat_text_shown(strrchr(tool, '/') ? strrchr(tool, '/') + 1 : tool);

		moat_say("moat: ", result.failure);
		if (policy.limits.files != MOAT_LIMIT_UNSET && backend_plan_runs_tool(&plan.compiled) &&
		    strcasestr(result.failure, "too many open files"))
			/* The rlimits are set before the tool is executed: it
			 * sets the sandbox up under --files too. */
			fprintf(stderr,
				"moat: hint: --files %lld binds %s as well while it sets the sandbox up: give a "
				"higher --files, or use --backend native, where it binds the command alone\n",
				(long long)policy.limits.files, shown_tool);
		else if (hint && (problem = script_line_problem(policy.exe))) {
			cleanup_free char *text = moat_xasprintf("%s %s %s`", policy.exe, problem, policy.exe);
			moat_say("moat: hint: ", text);
		} else if (hint) {
			moat_say("moat: hint: ", hint);
		}
	}
	moat_timeline_mark("ran");
	code = result.exit_code;
	say_limit_hit(&policy, &plan, &result);
	say_upstream_refused(&result);
	note_changed_pins(&plan);
	note_made_watched(&plan, &result);
	say_ipc_left(&result);
	remove_now(&plan, &result);
	if (!report_dest_wanted(&dest))
		goto out; /* no report asked for: do not build one (~0.3 ms) */
	report = report_build(&policy, &host, &plan, &result);
	add_server(report, &meta, &opts.notes);
write_report:
	runner_report_add(report, &rr);
	/* A caller that asked for a report reads the run from it: without one,
	 * the command's own status would pass for a run moat vouches for. */
	if (report_dest_wanted(&dest) && report_dest_write(&dest, report, &err) < 0) {
		moat_error_print(&err);
		if (code != 125)
			fprintf(stderr, "moat: the command's exit status was %d; exiting 125 since the report is missing\n",
				code);
		code = 125;
	}
out:
	term_close(&term);
	json_decref(report);
	launch_result_free(&result);
	if (have_plan) {
		host_cleanup(&plan, getpid(), false);
		guard_done(&guard);
		if (exiting && !FREE_AT_EXIT)
			fs_plan_release_locks(&plan.fs); /* the rest goes with the process */
		else
			plan_free(&plan);
	}
	/* After the plan's cleanup, which takes its placeholders out of them. */
	if (made.n && !result.executed)
		unmake_write_dirs(&made);
	made_dirs_free(&made);
	report_dest_free(&dest); /* the caller's --report-fd stays open */
	if (!exiting || FREE_AT_EXIT)
		policy_free(&policy);
	run_options_free(&opts);
	config_server_meta_free(&meta);
	runner_run_free(&rr);
	if (was_dumpable > 0)
		prctl(PR_SET_DUMPABLE, was_dumpable, 0, 0, 0);
	umask_give_back();
	nofile_give_back(&caller_nofile, nofile_known);
	signals_release();
	moat_timeline_mark("done");
	return code;
}

/* An embedder's argv: argc words, none of them NULL (a ctypes array made
 * from a list holding None, a vector counted one too far).  The parser
 * reads argv[i] for i < argc and crashed on a NULL there. */
static int check_embedder_argv(int argc, char **argv, struct moat_error *err)
{
	int i;

	if (argc > 0 && !argv) {
		moat_error_set(err, MOAT_E_USAGE, 0, "moat_run_main: argv is NULL but argc is %d", argc);
		return moat_error_hint(err, "pass argc words in argv, argv[0] \"run\"");
	}
	for (i = 0; i < argc; i++)
		if (!argv[i]) {
			moat_error_set(err, MOAT_E_USAGE, 0, "moat_run_main: argv[%d] is NULL (argc %d)", i, argc);
			return moat_error_hint(err, "every one of the argc words must be a string; argv[argc] is the "
						    "NULL that ends them");
		}
	return 0;
}

int moat_run_main(int argc, char **argv)
{
	struct moat_error err = {0};

	/* Here, in a small frame: run_main's is the deep one. */
	if (check_embedder_argv(argc, argv, &err) < 0 || stack_limit_check(&err) < 0)
		return moat_error_print(&err);
	return run_main(argc, argv, false);
}

int run_main_exiting(int argc, char **argv)
{
	return run_main(argc, argv, true);
}
