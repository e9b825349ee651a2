/* Notes before a run on what the sandbox hides (sources/runnotes.h). */
#include "sources/runnotes.h"

#include <ctype.h>
#include <string.h>
#include <sys/stat.h>

#include "sources/config_common.h"
#include "policy/profiles.h"
#include "sources/mcp_clients.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

/* The command starts in the sandbox's private /tmp (or /dev/shm): `cd /tmp
 * && moat run -- ls` lists an empty directory, silently, since the exec
 * profile's grant of the current directory cannot be that one (it is the
 * sandbox's own).  Said on stderr; the run goes on.  A directory below it
 * is granted like any other (and left out like any other under strict). */
static void note_private_tmp(const struct moat_policy *p, struct netset_notes *notes)
{
	static const char *const private_dirs[] = {"/tmp", "/dev/shm"};
	cleanup_free char *line = NULL;
	size_t i;

	if (!p->private_tmp || !p->cwd)
		return;
	for (i = 0; i < ARRAY_LEN(private_dirs); i++) {
		if (strcmp(p->cwd, private_dirs[i]) != 0)
			continue;
		line = moat_xasprintf("note: the current directory, %s, is the sandbox's private %s, which starts "
				      "empty: the command sees none of the host's files there; run from another "
				      "directory, or grant one below %s and run there",
				      p->cwd, p->cwd, p->cwd);
		netset_notes_add(notes, line);
	}
}

/* The current directory lies in a denied path (`cd ~/.aws && moat run --
 * ls`): the command sees it empty, or cannot list it, and should be told
 * why rather than wonder. */
static void note_cwd_denied(const struct moat_policy *p, struct netset_notes *notes)
{
	if (!p->cwd)
		return;
	for (size_t i = 0; i < p->n_paths; i++) {
		cleanup_free char *line = NULL;

		if (p->paths[i].access != MOAT_ACCESS_DENY || !path_within(p->cwd, p->paths[i].path))
			continue;
		line = moat_xasprintf("note: the current directory, %s, lies in the denied %s (%s): the command "
				      "sees nothing of it",
				      p->cwd, p->paths[i].path, p->paths[i].origin.source);
		netset_notes_add(notes, line);
		return;
	}
}

/* The work tree is writable but the git directory it keeps elsewhere (a
 * linked work tree's MAIN/.git, a submodule's SUPER/.git/modules/NAME)
 * is not: `git add` and `git commit` would fail inside on "index.lock:
 * Read-only file system", which names no fix.  That directory lies outside
 * what the user granted, so it stays read-only; the note says how to
 * grant it (its hooks and config stay protected in a write grant). */
static void note_git_dir_readonly(const struct moat_policy *p, struct netset_notes *notes)
{
	cleanup_free char *line = NULL;
	bool tree_written = false;

	if (!p->git_dir_outside || !p->git_work_tree)
		return;
	for (size_t i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];

		if (r->access != MOAT_ACCESS_WRITE)
			continue;
		if (path_within(p->git_dir_outside, r->path))
			return; /* granted: git can commit */
		if (path_within(p->git_work_tree, r->path) || path_within(r->path, p->git_work_tree))
			tree_written = true;
	}
	if (!tree_written)
		return;
	line = moat_xasprintf("note: %s keeps its git directory outside it, in %s, which stays read-only: `git "
			      "add` and `git commit` fail inside (Read-only file system); to let the command commit, "
			      "add --write %s (its hooks and config stay read-only)",
			      p->git_work_tree, p->git_dir_outside, p->git_dir_outside);
	netset_notes_add(notes, line);
}

/* The work tree's `.git` file names a git directory elsewhere that does
 * not name it back (profiles.c, names_back): a cloned repository's planted
 * file, or a `git init --separate-git-dir`, which writes no link back.  It
 * is not granted, and git inside says only "not a git repository"; the
 * note names it and the grant for a repository that is the user's. */
static void note_git_dir_unlinked(const struct moat_policy *p, struct netset_notes *notes)
{
	cleanup_free char *line = NULL;

	if (!p->git_dir_unlinked || !p->git_work_tree)
		return;
	for (size_t i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY && path_within(p->git_dir_unlinked, p->paths[i].path))
			return; /* granted by the user */
	line = moat_xasprintf("note: %s/.git names the git directory %s, which does not name this work tree back "
			      "(no linked work tree's gitdir file, no submodule's core.worktree): not granted, so a "
			      "cloned repository cannot show the command another one of yours; git inside fails (not a "
			      "git repository); if it is this work tree's own (git init --separate-git-dir), add --read "
			      "%s",
			      p->git_work_tree, p->git_dir_unlinked, p->git_dir_unlinked);
	netset_notes_add(notes, line);
}

/* The command runs a container (`docker run`): the sandbox holds the
 * engine's client, which cannot reach what starts the container.  Said
 * before the engine's own "Cannot connect to the Docker daemon". */
static void note_container(const struct moat_policy *p, struct netset_notes *notes)
{
	const char *engine = mcp_container_engine(p->argv, p->argc);
	cleanup_free char *line = NULL;

	if (!engine)
		return;
	line = moat_xasprintf("note: %s runs the container %s, which the sandbox does not allow: the container "
			      "is isolated by its engine, not by moat; run the program itself under moat, or the "
			      "container with --mode off and its own isolation (--read-only, --network none, "
			      "--cap-drop ALL)",
			      engine,
			      strcmp(engine, "podman") == 0 ? "in new namespaces"
							    : "through its daemon's socket (root on the host)");
	netset_notes_add(notes, line);
}

/* The sandbox's own /tmp or /dev/shm holds `path`. */
static bool in_private_tmp(const struct moat_policy *p, const char *path)
{
	return p->private_tmp && (path_within(path, "/tmp") || path_within(path, "/dev/shm"));
}

/* Is `path` in the sandbox: within a grant, or in what the sandbox makes
 * of its own (/tmp, /dev, /proc, /run)?  *deny: the denied path that
 * hides it, when one does. */
static bool path_shown(const struct moat_policy *p, const char *path, const struct moat_path_rule **deny)
{
	static const char *const own[] = {"/dev", "/proc", "/sys", "/run"};
	bool shown = false;

	*deny = NULL;
	for (size_t i = 0; i < ARRAY_LEN(own); i++)
		if (path_within(path, own[i]))
			return true;
	if (in_private_tmp(p, path))
		return true;
	/* A deny wins over every grant (policy.md: a denied path is never
	 * granted); else any grant shows it. */
	for (size_t i = 0; i < p->n_paths; i++) {
		if (!path_within(path, p->paths[i].path))
			continue;
		if (p->paths[i].access == MOAT_ACCESS_DENY) {
			*deny = &p->paths[i];
			return false;
		}
		shown = true;
	}
	return shown;
}

/* A grant below the private /tmp shows the host's directory there (one
 * of /tmp itself is not bound). */
static bool granted_in_private_tmp(const struct moat_policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];

		if (r->access != MOAT_ACCESS_DENY && in_private_tmp(p, r->path) && strcmp(r->path, "/tmp") != 0 &&
		    strcmp(r->path, "/dev/shm") != 0 && path_within(path, r->path))
			return true;
	}
	return false;
}

/* A grant lies below `dir`: the view shows part of it (`sh -c '...' sh
 * REPO` with REPO/.git granted). */
static bool grant_below(const struct moat_policy *p, const char *dir)
{
	for (size_t i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY && strcmp(p->paths[i].path, dir) != 0 &&
		    path_within(p->paths[i].path, dir))
			return true;
	return false;
}

/* An argument written as a relative path: `.`, `..`, `./x`, `../x`, or
 * one with a `/` inside that is not an option or a scoped package
 * (`@scope/name`).  A bare word (`stdio`, a package name) is not taken
 * for one, whatever the current directory holds. */
static bool relative_path_arg(const char *a)
{
	if (a[0] == '/' || a[0] == '-' || a[0] == '@' || !a[0])
		return false;
	return strcmp(a, ".") == 0 || strcmp(a, "..") == 0 || strncmp(a, "./", 2) == 0 || strncmp(a, "../", 3) == 0 ||
	       strchr(a, '/') != NULL;
}

/* The arguments of the command that are directories of the host the
 * sandbox does not show: `npx -y @modelcontextprotocol/server-filesystem
 * ~/proj` under the mcp profile (or a wrapped entry with no grant of it)
 * stops on "None of the specified directories are accessible", with no
 * word of moat's.  An absolute path, as the argument is whole, or a
 * relative one (relative_path_arg) taken against the command's working
 * directory: a project's `.mcp.json` gives the filesystem server `.`,
 * which its client starts in the project, and the mcp profile grants none
 * of it -- the server then lists an empty directory, silently.  Only one
 * that is a directory here: a file argument is as often data the command
 * is meant not to reach (`cat ~/.ssh/id_rsa`), and a denied one is named
 * as such; one that a grant below shows in part is left alone. */
size_t run_hidden_args(const struct moat_policy *p, struct hidden_arg **out)
{
	struct hidden_arg *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	/* A sandbox that is off hides nothing. */
	if (p->mode == MOAT_MODE_OFF || strcmp(p->backend, "none") == 0)
		return 0;
	for (size_t i = 1; p->argv && i < p->argc; i++) {
		const char *a = p->argv[i];
		const struct moat_path_rule *deny = NULL;
		cleanup_free char *path = NULL;
		enum hidden_why why;
		struct stat st;

		bool relative = relative_path_arg(a) && p->cwd && p->cwd[0] == '/';

		if ((a[0] != '/' && !relative) || !(path = path_resolve_lexical(a, relative ? p->cwd : "/", NULL)) ||
		    stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || grant_below(p, path))
			continue;
		if (in_private_tmp(p, path)) {
			if (granted_in_private_tmp(p, path))
				continue;
			why = HIDDEN_PRIVATE_TMP;
		} else if (path_shown(p, path, &deny)) {
			continue;
		} else {
			why = deny ? HIDDEN_DENIED : HIDDEN_OUTSIDE;
		}
		v = moat_xgrow(v, &cap, n, sizeof(*v));
		v[n++] = (struct hidden_arg){.path = steal_ptr(&path),
					     .relative = relative ? moat_xstrdup(a) : NULL,
					     .why = why,
					     .deny = deny ? moat_xstrdup(deny->path) : NULL,
					     .deny_source = deny ? moat_xstrdup(deny->origin.source) : NULL};
	}
	*out = v;
	return n;
}

void hidden_args_free(struct hidden_arg *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].relative);
		free(v[i].variable);
		free(v[i].deny);
		free(v[i].deny_source);
	}
	free(v);
}

char *hidden_arg_text(const struct hidden_arg *a, const char *whose, const char *who)
{
	/* A relative one with what it names there: `.` alone says nothing. */
	cleanup_free char *arg = a->relative ? moat_xasprintf("%s (%s)", a->relative, a->path) : moat_xstrdup(a->path);

	/* A variable's: "WHOSE MEM names PATH" ("" for a run's note). */
	if (a->variable) {
		const char *own = whose;

		if (a->why == HIDDEN_DENIED)
			return moat_xasprintf("%s%s%s names %s, in the denied %s (%s): %s cannot read it", own,
					      *own ? " " : "", a->variable, a->path, a->deny, a->deny_source, who);
		return moat_xasprintf("%s%s%s names %s, outside every grant: %s can neither read nor write it", own,
				      *own ? " " : "", a->variable, a->path, who);
	}

	if (a->why == HIDDEN_PRIVATE_TMP)
		return moat_xasprintf("%s argument %s lies in the sandbox's private /tmp, which starts empty: %s sees "
				      "none of the host's files there",
				      whose, arg, who);
	if (a->why == HIDDEN_DENIED)
		return moat_xasprintf("%s argument %s lies in the denied %s (%s): %s sees nothing of it", whose, arg,
				      a->deny, a->deny_source, who);
	return moat_xasprintf("%s argument %s is a directory outside every grant: %s sees nothing of it", whose, arg,
			      who);
}

/* Each such argument, noted before the run with the grant to add. */
static void note_arg_dirs(const struct moat_policy *p, struct netset_notes *notes)
{
	struct hidden_arg *v;
	size_t n = run_hidden_args(p, &v);

	for (size_t i = 0; i < n; i++) {
		cleanup_free char *text = hidden_arg_text(&v[i], "the command's", "the command");
		const char *grant =
		    v[i].why == HIDDEN_DENIED	    ? ""
		    : v[i].why == HIDDEN_PRIVATE_TMP ? "; grant it (--read or --write) if the command uses it"
						     : "; grant it (--read or --write, or read or write in the config's "
						       "profile) if the command uses it";

		cleanup_free char *line = moat_xasprintf("note: %s%s", text, grant);

		netset_notes_add(notes, line);
	}
	hidden_args_free(v, n);
}

/* Does some directory of `path` below `/`, or the path, exist on the
 * host? */
static bool exists_in_part(const char *path)
{
	cleanup_free char *dir = moat_xstrdup(path);
	struct stat st;
	char *slash;

	for (;;) {
		if (stat(dir, &st) == 0)
			return true;
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return false;
		*slash = '\0';
	}
}

/* A variable the user declared (--env, --env-pass, a config's env,
 * env_pass and env_vars) names an absolute path the sandbox does not show:
 * MEMORY_FILE_PATH=~/.local/share/mem/memory.jsonl in a client's config,
 * and the server fails on ENOENT with no word of moat's.  Only a value
 * that is one path of which some directory below `/` exists (not
 * BASE_PATH=/api, nor a list with ':'); moat's own variables (the safe
 * set, the caches, GOCACHE) are left out, by their origin. */
size_t run_hidden_env(const struct moat_policy *p, char *const *environ_in, struct hidden_arg **out)
{
	struct hidden_arg *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (p->mode == MOAT_MODE_OFF || strcmp(p->backend, "none") == 0)
		return 0;
	for (size_t i = 0; i < p->n_env; i++) {
		const struct moat_env_rule *r = &p->env[i];
		const char *value = r->value ? r->value : config_getenv(environ_in, r->name);
		const struct moat_path_rule *deny = NULL;
		cleanup_free char *path = NULL;
		bool later = false;

		if (r->origin.line <= 0 && !moat_origin_is_command_line(&r->origin))
			continue;
		for (size_t j = i + 1; j < p->n_env && !later; j++)
			later = strcmp(p->env[j].name, r->name) == 0;
		if (later || !value || value[0] != '/' || strchr(value, ':') ||
		    !(path = path_resolve_lexical(value, "/", NULL)) || path_shown(p, path, &deny) ||
		    !exists_in_part(path))
			continue;
		v = moat_xgrow(v, &cap, n, sizeof(*v));
		v[n++] = (struct hidden_arg){.path = steal_ptr(&path),
					     .variable = moat_xstrdup(r->name),
					     .why = deny ? HIDDEN_DENIED : HIDDEN_OUTSIDE,
					     .deny = deny ? moat_xstrdup(deny->path) : NULL,
					     .deny_source = deny ? moat_xstrdup(deny->origin.source) : NULL};
	}
	*out = v;
	return n;
}

static void note_env_paths(const struct moat_policy *p, char *const *environ_in, struct netset_notes *notes)
{
	struct hidden_arg *v;
	size_t n = run_hidden_env(p, environ_in, &v);

	for (size_t i = 0; i < n; i++) {
		cleanup_free char *text = hidden_arg_text(&v[i], "", "the command");
		cleanup_free char *line = moat_xasprintf(
		    "note: %s%s", text,
		    v[i].why == HIDDEN_DENIED ? ""
					      : "; grant it or its directory (--read or --write, or read or write in the "
						"config's profile) if the command uses it");

		netset_notes_add(notes, line);
	}
	hidden_args_free(v, n);
}

/* A deny of the user's (a flag, a file) that names nothing, where the same
 * path without the blanks at its end names something: `deny =
 * ["d/sub\n"]` denied nothing, without a word, while d/sub stayed
 * readable (red-team 3 fuzz). */
static void note_deny_blank(const struct moat_policy *p, struct netset_notes *notes)
{
	for (size_t i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];
		size_t n = strlen(r->path);
		struct stat st;

		if (r->access != MOAT_ACCESS_DENY || r->from_profile || !n || !isspace((unsigned char)r->path[n - 1]))
			continue;
		while (n && isspace((unsigned char)r->path[n - 1]))
			n--;
		cleanup_free char *trimmed = moat_xstrndup(r->path, n);
		if (lstat(r->path, &st) == 0 || lstat(trimmed, &st) != 0)
			continue;
		/* moat_say shows a newline escaped, as \x0a. */
		cleanup_free char *line = moat_xasprintf("note: the deny of \"%s\" names nothing: it ends in blanks (a "
							 "newline, a space); %s, without them, exists and is not denied",
							 r->path, trimmed);
		netset_notes_add(notes, line);
	}
}

/* A CA bundle variable whose file or directory does not look like one
 * (policy/cabundle.h): passed, not granted; the tool will say it cannot
 * read it, and this says why and how to grant it. */
static void note_ca_not_granted(const struct moat_policy *p, char *const *environ_in, struct netset_notes *notes)
{
	for (size_t i = 0; i < p->n_env; i++) {
		const struct moat_env_rule *r = &p->env[i];
		const char *value = config_getenv(environ_in, r->name);
		cleanup_free char *line = NULL;

		if (!r->origin.source || strcmp(r->origin.source, PROFILE_CA_NOT_GRANTED) != 0 || !value)
			continue;
		line = moat_xasprintf("note: %s names %s, which does not look like a CA bundle (a file of certificates "
				      "only, or a directory of them by their names): it passes, but is not granted; "
				      "grant it with --read if the command must read it",
				      r->name, value);
		netset_notes_add(notes, line);
	}
}

/* Under gVisor --memory holds gVisor's own kernel too (its sentry and
 * gofer, ~55 MiB here): a limit near that leaves the command a few MiB,
 * and at the limit the sandbox can thrash (its own pages reclaimed and
 * read back) for minutes instead of meeting the OOM killer (seen in
 * tests/blackbox/limits_tree.sh). */
#define GVISOR_MEMORY_FLOOR (INT64_C(128) << 20)

static void note_gvisor_memory(const struct moat_policy *p, struct netset_notes *notes)
{
	cleanup_free char *line = NULL;

	if (strcmp(p->backend, "gvisor") != 0 || p->limits.memory_bytes == MOAT_LIMIT_UNSET ||
	    p->limits.memory_bytes >= GVISOR_MEMORY_FLOOR)
		return;
	line = moat_xasprintf("note: --memory %lld MiB under gvisor holds gVisor's own kernel too (~55 MiB): the "
			      "command gets what is left, and near the limit gVisor can thrash for minutes rather "
			      "than be OOM-killed; give it 128M or more",
			      (long long)(p->limits.memory_bytes >> 20));
	netset_notes_add(notes, line);
}

void run_notes_add(const struct moat_policy *p, char *const *environ_in, struct netset_notes *notes)
{
	if (p->mode == MOAT_MODE_OFF || strcmp(p->backend, "none") == 0)
		return;
	note_private_tmp(p, notes);
	note_cwd_denied(p, notes);
	note_git_dir_readonly(p, notes);
	note_git_dir_unlinked(p, notes);
	note_container(p, notes);
	note_env_paths(p, environ_in, notes);
	note_arg_dirs(p, notes);
	note_ca_not_granted(p, environ_in, notes);
	note_deny_blank(p, notes);
	note_gvisor_memory(p, notes);
}
