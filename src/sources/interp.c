/* The command and the interpreters it needs, against what the policy grants
 * (sources/interp.h).  Read in the parent, before anything runs: a link is
 * read with readlink, a `#!` line with one read of the file's start, a
 * pyvenv.cfg line by line.  Nothing here is trusted to widen the sandbox
 * beyond an interpreter's own installation: a project can plant a link or
 * a pyvenv.cfg naming any path, so what is granted must exist, be an
 * executable named as an interpreter is, and lie outside HOME's own
 * directory, the root, the private /tmp and every denied path; of a tree
 * HOME shares among tools (~/.local, ~/.config, ~/.cache) only the
 * interpreter's own directory and its lib/ are granted, not the tree. */
#include "sources/interp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/profiles.h"
#include "sources/config_common.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/path.h"

/* Links and `#!` lines followed from one start: the kernel takes at most 40
 * links and 4 interpreters. */
#define MAX_STEPS 48

struct walker {
	struct moat_policy *p;
	const char *home;
	char *home_real; /* HOME through its links, when that differs */
	const char *path_env;
	struct netset_notes *notes; /* NULL: a problem is an error */
	struct moat_error *err;
	char **canon; /* the grants' real paths, filled on first need */
	bool *canon_done;
	size_t n_canon;
};

static void walker_free(struct walker *w)
{
	for (size_t i = 0; i < w->n_canon; i++)
		free(w->canon[i]);
	free(w->canon);
	free(w->canon_done);
	free(w->home_real);
}

/* The directory entry `name` is, through the links of its directory:
 * where the view would have to hold it.  NULL when its directory does not
 * exist (nothing can be said). */
static char *canon_entry(const char *name)
{
	cleanup_free char *dir = moat_xstrdup(name);
	char *slash = strrchr(dir, '/'), real[PATH_MAX];
	const char *base = slash ? slash + 1 : name;

	if (!slash)
		return NULL;
	if (slash == dir)
		return moat_xstrdup(name);
	*slash = '\0';
	if (!realpath(dir, real))
		return NULL;
	return moat_xasprintf("%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
}

static const char *rule_canon(struct walker *w, size_t i)
{
	char real[PATH_MAX];

	if (i >= w->n_canon) {
		size_t n = w->p->n_paths;
		w->canon = moat_xrealloc(w->canon, n * sizeof(*w->canon));
		w->canon_done = moat_xrealloc(w->canon_done, n * sizeof(*w->canon_done));
		for (size_t k = w->n_canon; k < n; k++) {
			w->canon[k] = NULL;
			w->canon_done[k] = false;
		}
		w->n_canon = n;
	}
	if (!w->canon_done[i]) {
		w->canon_done[i] = true;
		if (realpath(w->p->paths[i].path, real) && strcmp(real, w->p->paths[i].path) != 0)
			w->canon[i] = moat_xstrdup(real);
	}
	return w->canon[i];
}

/* The private /tmp and /dev/shm are the sandbox's own: a grant of either
 * is not bound (resolve/fsplan.c), one below it is. */
static bool private_dir(const struct moat_policy *p, const char *path)
{
	return p->private_tmp && (strcmp(path, "/tmp") == 0 || strcmp(path, "/dev/shm") == 0);
}

static bool in_private_dir(const struct moat_policy *p, const char *path)
{
	return p->private_tmp && (path_within(path, "/tmp") || path_within(path, "/dev/shm"));
}

/* The deny that covers `canon`, as written or with HOME through its links. */
static bool deny_covers(const struct walker *w, const char *canon, const char *deny)
{
	size_t hl;

	if (path_within(canon, deny))
		return true;
	if (!w->home_real || !w->home || !path_within(deny, w->home))
		return false;
	hl = strlen(w->home);
	cleanup_free char *moved = moat_xasprintf("%s%s", w->home_real, deny + hl);
	return path_within(canon, moved);
}

/* The deny `canon` lies in, or NULL. */
static const struct moat_path_rule *denied_by(const struct walker *w, const char *canon)
{
	const struct moat_policy *p = w->p;

	for (size_t i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY && deny_covers(w, canon, p->paths[i].path))
			return &p->paths[i];
	return NULL;
}

/* Would the sandbox hold the entry `name`?  The most specific grant that
 * covers it (as written, else through its links), unless a deny covers it
 * too: a built-in one always wins, and so does one of the user's that is as
 * specific (docs/filesystem.md, section 7).  A name whose directory is
 * missing counts as visible: there is nothing to grant. */
static bool visible(struct walker *w, const char *name)
{
	const struct moat_policy *p = w->p;
	cleanup_free char *canon = canon_entry(name);
	const struct moat_path_rule *best = NULL;
	size_t best_len = 0;

	if (!canon)
		return true;
	for (int pass = 0; pass < 2 && !best; pass++)
		for (size_t i = 0; i < p->n_paths; i++) {
			const struct moat_path_rule *r = &p->paths[i];
			const char *c = pass ? rule_canon(w, i) : r->path;
			size_t len;

			if (r->access == MOAT_ACCESS_DENY || !c || private_dir(p, r->path) || private_dir(p, c) ||
			    !path_within(canon, c))
				continue;
			/* Below the private /tmp only what a grant there holds. */
			if (in_private_dir(p, canon) && !in_private_dir(p, c))
				continue;
			len = strlen(c);
			if (len >= best_len) {
				best = r;
				best_len = len;
			}
		}
	if (!best)
		return false;
	for (size_t i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *d = &p->paths[i];

		if (d->access != MOAT_ACCESS_DENY || !deny_covers(w, canon, d->path))
			continue;
		if (d->from_profile || best->from_profile || strlen(d->path) >= best_len)
			return false;
	}
	return true;
}

/* A whole home (or the root) is never granted implicitly. */
static bool too_broad(const struct walker *w, const char *dir)
{
	return strcmp(dir, "/") == 0 || (w->home && path_within(w->home, dir)) ||
	       (w->home_real && path_within(w->home_real, dir));
}

/* For a message: `dir` too broad as named, or where its links lead now. */
static bool too_broad_shown(const struct walker *w, const char *dir)
{
	char real[PATH_MAX];

	return too_broad(w, dir) || (realpath(dir, real) && too_broad(w, real));
}

/* The directory a program is installed in, by its name: /x/bin/prog gives
 * /x (its lib/ comes along), anything else its own directory. */
static char *install_dir(const char *name)
{
	char *dir = moat_xstrdup(name), *slash = strrchr(dir, '/'), *up;

	if (!slash || slash == dir) {
		free(dir);
		return moat_xstrdup("/");
	}
	*slash = '\0';
	up = strrchr(dir, '/');
	if ((strcmp(up + 1, "bin") == 0 || strcmp(up + 1, "sbin") == 0 || strcmp(up + 1, "shims") == 0) && up != dir)
		*up = '\0';
	return dir;
}

/* The narrowest grant worth suggesting for `name`: its install dir, else
 * its directory, else the file itself -- whichever first is neither too
 * broad nor the private /tmp. */
static char *suggest_dir(const struct walker *w, const char *name)
{
	char *d = install_dir(name);

	if (!too_broad_shown(w, d) && !private_dir(w->p, d))
		return d;
	free(d);
	d = moat_xstrdup(name);
	*strrchr(d, '/') = '\0';
	if (*d && !too_broad_shown(w, d) && !private_dir(w->p, d))
		return d;
	free(d);
	return moat_xstrdup(name);
}

/* `path` as the user would type it: ~/... under HOME. */
static char *tilde(const struct walker *w, const char *path)
{
	if (w->home && strcmp(w->home, "/") != 0 && path_within(path, w->home))
		return moat_xasprintf("~%s", path + strlen(w->home));
	return moat_xstrdup(path);
}

/* Why moat did not grant `name` on its own, for a message: `dir` is what
 * it would have granted, its `dir_word` ("install dir", "directory"). */
static const char *why_not_granted(const struct walker *w, const char *name, const char *dir, const char *dir_word,
				   char *buf, size_t len)
{
	if (denied_by(w, name))
		return "it lies inside a denied path";
	if (in_private_dir(w->p, name))
		return "the sandbox's /tmp is its own";
	if (strcmp(dir, "/") == 0)
		snprintf(buf, len, "its %s would be the root, which moat never grants on its own", dir_word);
	else if (too_broad(w, dir))
		snprintf(buf, len, "its %s would be %s, which moat never grants on its own", dir_word,
			 w->home && strcmp(dir, w->home) == 0 ? "HOME" : "a directory that contains HOME");
	else if (too_broad_shown(w, dir))
		snprintf(buf, len, "its %s %s leads to HOME or a directory that contains it, which moat never "
			 "grants on its own", dir_word, dir);
	else
		return "no grant covers it";
	return buf;
}

/* A snap (/snap/bin/node -> /usr/bin/snap, Ubuntu's `snap install node`)
 * starts through snap-confine, a setuid-root program: the sandbox's
 * no_new_privs keeps it from gaining root, and it stops with a message
 * about its own confinement.  Refused before the run, with what works. */
static int refuse_snap(struct walker *w, const char *name)
{
	moat_error_set(w->err, MOAT_E_USAGE, 0,
		       "%s: a snap, which starts through snap-confine, a setuid-root program that the sandbox "
		       "(no_new_privs) does not let gain root",
		       name);
	return moat_error_hint(w->err, "install it another way (Debian's or the upstream package, a version manager "
				       "such as nvm or pyenv) and run that, or run the snap with --mode off and its own "
				       "confinement");
}

/* Which list denies it: the built-in secrets (where a tool's variable
 * moved a store, that variable: "built-in secrets, moved by GNUPGHOME"),
 * or --deny. */
static const char *deny_origin(const struct moat_path_rule *d)
{
	if (!d->from_profile)
		return "--deny";
	return d->origin.source ? d->origin.source : "built-in secrets";
}

/* The command itself, or the script its interpreter runs (`script`), is
 * not visible. */
static int refuse(struct walker *w, const char *name, bool script)
{
	cleanup_free char *dir = script ? moat_xstrdup(name) : install_dir(name);
	cleanup_free char *fix = suggest_dir(w, name);
	cleanup_free char *shown = tilde(w, fix);
	const struct moat_path_rule *d = denied_by(w, name);
	char why[160];

	if (script)
		*strrchr(dir, '/') = '\0';
	moat_error_set(
	    w->err, MOAT_E_USAGE, 0, "%s: the sandbox would not see %s: %s", name,
	    script ? "the script the interpreter runs" : "the command",
	    why_not_granted(w, name, *dir ? dir : "/", script ? "directory" : "install dir", why, sizeof(why)));
	if (d)
		return moat_error_hint(w->err, "%s is denied (%s); run a copy kept elsewhere", d->path, deny_origin(d));
	return moat_error_hint(w->err, "grant it: --read %s", shown);
}

/* The interpreter `name` that `pointer` points at (`how`) is not visible
 * and not granted on its own: an error, or a note for a virtualenv found
 * in the current directory (the command may not use it). */
static int refuse_interp(struct walker *w, const char *name, const char *pointer, const char *how, const char *why)
{
	cleanup_free char *fix = suggest_dir(w, name);
	cleanup_free char *shown = tilde(w, fix);
	const struct moat_path_rule *d = denied_by(w, name);

	if (w->notes) {
		cleanup_free char *line = NULL;
		if (d)
			line = moat_xasprintf("note: %s points at %s (%s), which lies in the denied %s: a shell that "
					      "activates it will not find its python",
					      pointer, name, how, d->path);
		else
			line = moat_xasprintf("note: %s points at %s (%s), which no grant covers (%s): a shell that "
					      "activates it will not find its python; --read %s grants it",
					      pointer, name, how, why, shown);
		netset_notes_add(w->notes, line);
		return 0;
	}
	moat_error_set(w->err, MOAT_E_USAGE, 0, "%s: the sandbox would not see the interpreter it runs, %s (%s): %s",
		       pointer, name, how, why);
	if (d)
		return moat_error_hint(w->err, "%s is denied (%s); use an interpreter installed elsewhere", d->path,
				       deny_origin(d));
	return moat_error_hint(w->err, "grant it: --read %s", shown);
}

/* Whether the installation `dir` of the interpreter `name` can be
 * granted: the one judgement grant_interp acts on and env's lookups ask
 * about beforehand. */
enum interp_judgement {
	INTERP_GONE,	   /* leads nowhere: fails inside as it would outside */
	INTERP_NOT_ONE,	   /* not an executable file named as an interpreter */
	INTERP_HELD_BACK,  /* its installation is HOME or above, denied, or in the private /tmp */
	INTERP_GRANTABLE,
};

/* `name` below its installation `dir` (install_dir's: a prefix of it). */
static const char *below_dir(const char *name, const char *dir)
{
	return strcmp(dir, "/") == 0 ? name + 1 : name + strlen(dir) + 1;
}

/* Judge the installation `dir` of the interpreter `name` by the objects
 * they are now, not by their names: `dir` opened once, and the interpreter
 * reached through that descriptor, each judged by its real path.  The grant
 * is then bound to that object (profile_grant_install), so a directory on
 * the way swapped for a link before the plan walks the name again (by
 * whoever may write there: a shared directory, a link of another user's)
 * grants nothing, rather than the directory the link leads to, unjudged.
 * *dir_fd (when not NULL) takes the descriptor of a grantable one. */
static enum interp_judgement interp_judge(struct walker *w, const char *name, const char *dir, int *dir_fd)
{
	cleanup_close int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int ffd = -1;
	char real_dir[PATH_MAX], real[PATH_MAX], exe[64];
	struct stat st;

	if (dfd < 0 || !path_of_fd(dfd, real_dir, sizeof(real_dir)))
		return INTERP_GONE;
	ffd = openat(dfd, below_dir(name, dir), O_PATH | O_CLOEXEC);
	if (ffd < 0 || fstat(ffd, &st) != 0 || !path_of_fd(ffd, real, sizeof(real)))
		return INTERP_GONE;
	/* access(2) through the descriptor's link: this object's mode. */
	snprintf(exe, sizeof(exe), "/proc/self/fd/%d", ffd);
	if (!S_ISREG(st.st_mode) || access(exe, X_OK) != 0 ||
	    !(profile_interpreter_named(name) || profile_interpreter_named(real)))
		return INTERP_NOT_ONE;
	if (denied_by(w, name) || denied_by(w, real) || denied_by(w, real_dir) || too_broad(w, dir) ||
	    too_broad(w, real_dir) || in_private_dir(w->p, dir))
		return INTERP_HELD_BACK;
	if (dir_fd)
		*dir_fd = steal_fd(&dfd);
	return INTERP_GRANTABLE;
}

/* Would grant_interp grant `name`? */
static bool interp_grantable(struct walker *w, const char *name)
{
	cleanup_free char *dir = install_dir(name);

	return interp_judge(w, name, dir, NULL) == INTERP_GRANTABLE;
}

/* Grant the installation of the interpreter `name` (not visible) that the
 * visible `pointer` points at, or refuse. */
static int grant_interp(struct walker *w, const char *name, const char *pointer, const char *how)
{
	cleanup_free char *dir = install_dir(name);
	cleanup_close int dir_fd = -1;
	char why[160];

	switch (interp_judge(w, name, dir, &dir_fd)) {
	case INTERP_GONE:
		return 0;
	case INTERP_NOT_ONE:
		return refuse_interp(w, name, pointer, how,
				     "no grant covers it, and its name is not an interpreter's "
				     "(python3, node, ...), whose installation moat would grant");
	case INTERP_HELD_BACK:
		return refuse_interp(w, name, pointer, how,
				     why_not_granted(w, name, dir, "installation", why, sizeof(why)));
	case INTERP_GRANTABLE:
		break;
	}
	{
		cleanup_free char *text = moat_xasprintf("the interpreter %s points at (%s)", pointer, how);

		(void)profile_grant_install(w->p, dir_fd, dir, name, w->home, w->home_real, config_intern(text));
	}
	if (!visible(w, name))
		return refuse_interp(w, name, pointer, how,
				     why_not_granted(w, name, dir, "installation", why, sizeof(why)));
	return 0;
}

/* The interpreter of a `#!` line, in `out`: the path, or for `#!/usr/bin/env
 * [-S] [NAME=VALUE...] NAME` the NAME, with *via_env set.  0 when the file
 * has none (or cannot be read: execve would say why). */
static int shebang(const char *file, char *out, size_t len, bool *via_env)
{
	char buf[256], *s, *e;
	cleanup_close int fd = file_open_regular_fd(file, INT64_MAX); /* only its first line is read */
	ssize_t n;

	*via_env = false;
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	buf[n] = '\0';
	if ((e = strchr(buf, '\n')))
		*e = '\0';
	s = buf + 2;
	s += strspn(s, " \t");
	e = s + strcspn(s, " \t");
	if (e == s)
		return 0;
	if (e - s >= 4 && strncmp(e - 4, "/env", 4) == 0) {
		/* env's own options and assignments, then the name. */
		for (s = e; *s;) {
			s += strspn(s, " \t");
			e = s + strcspn(s, " \t");
			if (e == s)
				return 0;
			if (*s != '-' && !memchr(s, '=', (size_t)(e - s)))
				break;
			s = e;
		}
		if (!*s)
			return 0;
		*via_env = true;
	}
	if ((size_t)(e - s) >= len)
		return 0;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	return 1;
}

/* The PATH the command gets: the policy's (--env PATH=...), else moat's. */
static const char *command_path(const struct walker *w)
{
	const struct moat_env_rule *r = policy_find_env(w->p, "PATH");

	return r && r->value ? r->value : w->path_env && *w->path_env ? w->path_env : "/usr/bin:/bin";
}

/* DIR/NAME when it is an executable file, as env and execvp take one
 * (a relative DIR is none of moat's to follow); NULL otherwise. */
static char *path_candidate(const char *dir, const char *name)
{
	char *cand;
	struct stat st;

	if (*dir != '/')
		return NULL;
	cand = moat_xasprintf("%s/%s", dir, name);
	if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
		return cand;
	free(cand);
	return NULL;
}

/* `env NAME` inside: the first PATH entry that has NAME and that the
 * sandbox holds (env tries each in turn); else the first that has it. */
static char *env_lookup(struct walker *w, const char *name)
{
	cleanup_free char *copy = moat_xstrdup(command_path(w));
	char *first = NULL, *dir;

	for (char *rest = copy; (dir = strsep(&rest, ":")) != NULL;) {
		cleanup_free char *cand = path_candidate(dir, name);

		if (!cand)
			continue;
		/* The first on PATH, as env on the host takes it, when the
		 * sandbox shows it or it is an interpreter whose installation
		 * the walk can grant (nvm's node before the system's: env inside
		 * would pass over the one it cannot see, without a word).  Else
		 * the first the sandbox holds. */
		if (visible(w, cand) || (!first && interp_grantable(w, cand))) {
			free(first);
			return steal_ptr(&cand);
		}
		if (!first)
			first = steal_ptr(&cand);
	}
	return first;
}

/* A virtualenv's interpreter: `name` is DIR/bin/X and DIR/pyvenv.cfg names
 * the directory of the Python it was made from (`home = ...`).  The path of
 * that Python in `out` (home/python3, or home/python), the pyvenv.cfg's in
 * `cfg`; 0 when there is none. */
static int venv_home(const char *name, char *out, size_t len, char *cfg, size_t cfg_len)
{
	cleanup_free char *dir = moat_xstrdup(name);
	cleanup_fclose FILE *f = NULL;
	char line[PATH_MAX + 64], *slash;
	struct stat st;

	if (!(slash = strrchr(dir, '/')))
		return 0;
	*slash = '\0';
	if (!(slash = strrchr(dir, '/')) || strcmp(slash + 1, "bin") != 0)
		return 0;
	*slash = '\0';
	if ((size_t)snprintf(cfg, cfg_len, "%s/pyvenv.cfg", *dir ? dir : "") >= cfg_len)
		return 0;
	if (!(f = file_open_regular(cfg, FILE_SMALL_MAX)))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *k = line + strspn(line, " \t"), *v = strchr(k, '=');
		size_t kl;

		if (!v)
			continue;
		kl = (size_t)(v - k);
		while (kl && (k[kl - 1] == ' ' || k[kl - 1] == '\t'))
			kl--;
		if (kl != 4 || strncmp(k, "home", 4) != 0)
			continue;
		v++;
		v += strspn(v, " \t");
		v[strcspn(v, "\r\n")] = '\0';
		for (size_t l = strlen(v); l > 1 && (v[l - 1] == ' ' || v[l - 1] == '/'); l--)
			v[l - 1] = '\0';
		if (*v != '/')
			return 0;
		for (int i = 0; i < 2; i++) {
			if ((size_t)snprintf(out, len, "%s/%s", v, i ? "python" : "python3") >= len)
				return 0;
			if (stat(out, &st) == 0)
				return 1;
		}
		return 0;
	}
	return 0;
}

static int walk(struct walker *w, const char *start, const char *pointer, const char *how, int *steps);

/* Follow `name` -- links, a virtualenv's home, `#!` lines -- checking each
 * name on the way.  `pointer` (NULL for the command itself) and `how` say
 * what led here. */
static int walk(struct walker *w, const char *start, const char *pointer, const char *how, int *steps)
{
	cleanup_free char *name = moat_xstrdup(start);
	cleanup_free char *from = pointer ? moat_xstrdup(pointer) : NULL;
	char link[PATH_MAX], next[PATH_MAX], cfg[PATH_MAX];
	const char *via = how;
	struct stat st;
	bool via_env;
	ssize_t n;

	/* The command itself as a snap: refused with what works instead. */
	if (!pointer && path_within(start, "/snap/bin"))
		return refuse_snap(w, start);
	while ((*steps)++ < MAX_STEPS) {
		if (!visible(w, name)) {
			if (!from)
				return refuse(w, name, false);
			if (grant_interp(w, name, from, via) < 0)
				return -1;
			if (!visible(w, name))
				return 0; /* said in a note */
		}
		if (lstat(name, &st) != 0)
			return 0;
		if (S_ISLNK(st.st_mode)) {
			cleanup_free char *dir = moat_xstrdup(name);
			char *resolved;

			n = readlink(name, link, sizeof(link) - 1);
			if (n <= 0)
				return 0;
			link[n] = '\0';
			*strrchr(dir, '/') = '\0';
			resolved = path_resolve_lexical(link, *dir ? dir : "/", NULL);
			if (!resolved)
				return 0;
			free(from);
			from = steal_ptr(&name);
			name = resolved;
			via = "a symlink";
			continue;
		}
		if (!S_ISREG(st.st_mode))
			return 0;
		/* A program, not a script.  A virtualenv made with --copies
		 * has a python of its own that still loads the base one's
		 * library: its home must be visible too. */
		if (!shebang(name, link, sizeof(link), &via_env)) {
			if (venv_home(name, next, sizeof(next), cfg, sizeof(cfg)))
				return walk(w, next, cfg, "pyvenv.cfg's home", steps);
			return 0;
		}
		if (via_env) {
			cleanup_free char *found = strchr(link, '/') ? NULL : env_lookup(w, link);
			if (!found)
				return 0;
			snprintf(next, sizeof(next), "%s", found);
		} else if (link[0] == '/') {
			snprintf(next, sizeof(next), "%s", link);
		} else {
			return 0; /* relative: execve takes it against the cwd */
		}
		free(from);
		from = steal_ptr(&name);
		name = moat_xstrdup(next);
		via = via_env ? "its #! line, through PATH" : "its #! line";
	}
	return 0;
}

/* Under one of the sandbox's own directories, which its view makes anew
 * (the private /tmp and /dev/shm, and /run): a link there on the host is
 * not in the sandbox. */
static bool in_sandbox_made(const struct moat_policy *p, const char *path)
{
	return in_private_dir(p, path) || (p->private_tmp && path_within(path, "/run"));
}

/* Is `path` below a grant as written, not only as its links resolve?
 * The view shows the links of a grant's own path (`--read /opt/app` with
 * /opt/app -> app-1.2), not those of other paths into it. */
static bool granted_as_written(const struct moat_policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];

		if (r->access != MOAT_ACCESS_DENY && !private_dir(p, r->path) &&
		    !(in_sandbox_made(p, r->path) && !in_private_dir(p, r->path)) && path_within(path, r->path))
			return true;
	}
	return false;
}

/* The virtualenv `python` is the interpreter of (DIR/bin/python with
 * DIR/pyvenv.cfg), or NULL. */
static char *venv_of(const char *python)
{
	cleanup_free char *dir = moat_xstrdup(python);
	char *slash = strrchr(dir, '/');
	struct stat st;

	if (!slash)
		return NULL;
	*slash = '\0'; /* DIR/bin */
	if (!(slash = strrchr(dir, '/')) || slash == dir)
		return NULL;
	*slash = '\0'; /* DIR */
	{
		cleanup_free char *cfg = moat_xasprintf("%s/pyvenv.cfg", dir);
		if (stat(cfg, &st) != 0 || !S_ISREG(st.st_mode))
			return NULL;
	}
	return steal_ptr(&dir);
}

/* Grant the virtualenv `venv` of the command's python, read-only, judged
 * by the object it is now (its real path, by its descriptor: not HOME or
 * above it, nor in a denied path) and bound to that object, as an
 * interpreter's installation is (grant_interp). */
static void grant_venv(struct walker *w, const char *venv)
{
	cleanup_close int fd = open(venv, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct moat_origin o = {.source = "the command's virtualenv"};
	char real[PATH_MAX];
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0 || !path_of_fd(fd, real, sizeof(real)) || too_broad(w, venv) ||
	    too_broad(w, real) || denied_by(w, venv) || denied_by(w, real) || in_sandbox_made(w->p, venv))
		return;
	policy_add_path(w->p, venv, MOAT_ACCESS_READ, false, o);
	w->p->paths[w->p->n_paths - 1].from_profile = true;
	policy_path_bind(&w->p->paths[w->p->n_paths - 1], &st);
}

/* The command reached through a link outside every grant -- a directory
 * link (fnm's /run/user/UID/fnm_multishells/ID/bin/node, SDKMAN's
 * candidates/java/current/bin/java, /srv/tool -> /opt/tool-1.2) or the file
 * itself (~/.local/bin/tool -> /opt/tool/bin/tool, bun's ~/.bun/bin/x ->
 * its global node_modules): its installation is granted where the link
 * leads, and the path as typed is not in the sandbox, so execve failed
 * inside ("No such file or directory", 127) or moat refused it.  It is
 * executed by its real path instead, the same file (argv[0] is left as
 * given), and what it needs is checked from there. */
static void exe_by_real_path(struct walker *w)
{
	struct moat_policy *p = w->p;
	char real[PATH_MAX];
	cleanup_free char *venv = NULL;

	/* As written first: no realpath for /usr/bin/true.  A snap's link
	 * leads to /usr/bin/snap, which runs nothing without its name: the
	 * walk refuses it. */
	if (!p->exe || p->exe[0] != '/' || granted_as_written(p, p->exe) || path_within(p->exe, "/snap/bin"))
		return;
	/* A virtualenv's python (/p/.venv/bin/python -> /usr/bin/python3,
	 * what a client's config names for a Python server): python finds
	 * its pyvenv.cfg, and so its packages, by the path it was run by, not
	 * by its real one.  The virtualenv is that python's installation:
	 * granted read-only (the walk then follows the link, granting the
	 * base python), never HOME or above it, nor inside a denied path. */
	if ((venv = venv_of(p->exe)) != NULL) {
		grant_venv(w, venv);
		return;
	}
	if (!realpath(p->exe, real) || strcmp(real, p->exe) == 0 || in_sandbox_made(p, real) || !visible(w, real))
		return;
	free(p->exe);
	p->exe = moat_xstrdup(real);
}

/* The program `env` runs, when the command is env (`/usr/bin/env node
 * server.js`, a client config's way to name a server by PATH): its first
 * word that is not an option nor NAME=VALUE (the first word of -S's
 * string).  NULL when there is none, when it has a '/', or when env is
 * given a PATH of its own. */
static char *env_program(const struct moat_policy *p)
{
	for (size_t i = 1; i < p->argc && p->argv[i]; i++) {
		const char *a = p->argv[i];

		if (strcmp(a, "--") == 0) {
			a = i + 1 < p->argc ? p->argv[i + 1] : NULL;
			return a && !strchr(a, '/') ? moat_xstrdup(a) : NULL;
		}
		if (strcmp(a, "-S") == 0 || strcmp(a, "--split-string") == 0 || strncmp(a, "--split-string=", 15) == 0 ||
		    (a[0] == '-' && a[1] == 'S' && a[2])) {
			const char *s = NULL;
			size_t n;

			if (a[1] == 'S' && a[2])
				s = a + 2; /* -Sstring */
			else if (strchr(a, '='))
				s = strchr(a, '=') + 1; /* --split-string=string */
			else if (i + 1 < p->argc)
				s = p->argv[i + 1];
			if (!s)
				return NULL;
			s += strspn(s, " \t");
			n = strcspn(s, " \t");
			/* Its first word, when that is a program's name. */
			return n && s[0] != '-' && !memchr(s, '/', n) && !memchr(s, '=', n) ? moat_xstrndup(s, n) : NULL;
		}
		if (strcmp(a, "-u") == 0 || strcmp(a, "--unset") == 0 || strcmp(a, "-C") == 0 ||
		    strcmp(a, "--chdir") == 0) {
			i++;
			continue;
		}
		if (a[0] == '-')
			continue; /* -i, -0, -v, --unset=NAME, --chdir=DIR, ... */
		if (strchr(a, '=')) {
			if (strncmp(a, "PATH=", 5) == 0)
				return NULL; /* looked up in a PATH moat does not follow */
			continue;
		}
		return strchr(a, '/') ? NULL : moat_xstrdup(a);
	}
	return NULL;
}

/* `env node server.js` as the command: env inside finds node on the
 * command's PATH, in order, and a node it cannot see is passed over for
 * the next one -- the system's, silently, where nvm's comes first on the
 * user's PATH.  The first one on that PATH is taken, as env on the host
 * would, when it is an interpreter (its installation is then granted, as
 * for a #! line); anything else is left to env, as before. */
static int env_command(struct walker *w, int *steps)
{
	const char *base = w->p->exe ? strrchr(w->p->exe, '/') : NULL;
	cleanup_free char *prog = NULL, *copy = NULL;
	char *dir;

	/* By its name alone: no realpath at every start for the others. */
	if (!base || strcmp(base + 1, "env") != 0 || !(prog = env_program(w->p)))
		return 0;
	copy = moat_xstrdup(command_path(w));
	for (char *rest = copy; (dir = strsep(&rest, ":")) != NULL;) {
		cleanup_free char *cand = path_candidate(dir, prog);

		if (!cand)
			continue;
		if (visible(w, cand) || !interp_grantable(w, cand))
			return 0;
		return walk(w, cand, w->p->exe, "the program env runs, first on PATH", steps);
	}
	return 0;
}

/* PATH's entries in the sandbox's own directories that are links on the
 * host (fnm puts /run/user/UID/fnm_multishells/ID/bin first): a shell
 * inside would pass over them, to the system's node, without a word.  Each
 * one whose real path the sandbox shows is replaced by that path; the
 * others stay (they fail inside as before).  Only entries there are looked
 * at: a string test each, a realpath for those. */
static void path_by_real_dirs(struct walker *w)
{
	cleanup_free char *copy = NULL, *out = NULL;
	char *entry, *rest, real[PATH_MAX];
	bool changed = false, first = true;

	if (!w->p->private_tmp)
		return;
	copy = moat_xstrdup(command_path(w));
	out = moat_xstrdup("");
	for (rest = copy; (entry = strsep(&rest, ":")) != NULL;) {
		const char *use = entry;
		char *next;

		if (entry[0] == '/' && in_sandbox_made(w->p, entry) && realpath(entry, real) &&
		    strcmp(real, entry) != 0 && !in_sandbox_made(w->p, real)) {
			cleanup_free char *probe = moat_xasprintf("%s/.", real);
			if (visible(w, probe)) {
				use = real;
				changed = true;
			}
		}
		next = moat_xasprintf("%s%s%s", out, first ? "" : ":", use);
		free(out);
		out = next;
		first = false;
	}
	if (changed) {
		struct moat_origin o = {.source = "PATH, its entries in the sandbox's own /run or /tmp that are links "
						  "given as the directories they lead to"};
		policy_add_env(w->p, "PATH", out, o);
	}
}

int interp_check(struct moat_policy *p, const char *home, const char *path_env, struct netset_notes *notes,
		 struct moat_error *err)
{
	struct walker w = {.p = p, .home = home, .path_env = path_env, .err = err};
	static const char *const venv_dirs[] = {"", "/.venv", "/venv"};
	const char *arg;
	char real[PATH_MAX];
	int steps = 0, rc = -1;

	if (home && realpath(home, real) && strcmp(real, home) != 0)
		w.home_real = moat_xstrdup(real);
	exe_by_real_path(&w);
	if (walk(&w, p->exe, NULL, "the command", &steps) < 0)
		goto out;
	steps = 0;
	if (env_command(&w, &steps) < 0)
		goto out;
	/* An interpreter's script (`node /x/server.js`): the script itself. */
	if ((arg = profile_script_arg(p->exe, p->argv))) {
		cleanup_free char *script = path_resolve_lexical(arg, p->cwd, home);
		struct stat st;

		steps = 0;
		if (script && stat(script, &st) == 0 && S_ISREG(st.st_mode) && !visible(&w, script) &&
		    refuse(&w, script, true) < 0)
			goto out;
	}
	/* `. venv/bin/activate && python`: the shell finds the venv's python
	 * by PATH, which moat cannot see; a venv in a granted current
	 * directory has its interpreter granted, or a note says why not. */
	w.notes = notes;
	for (size_t i = 0; p->cwd && i < ARRAY_LEN(venv_dirs); i++) {
		cleanup_free char *python = moat_xasprintf("%s%s/bin/python", p->cwd, venv_dirs[i]);
		cleanup_free char *cfg = moat_xasprintf("%s%s/pyvenv.cfg", p->cwd, venv_dirs[i]);
		struct stat st;

		steps = 0;
		if (lstat(python, &st) == 0 && access(cfg, F_OK) == 0 && visible(&w, python) &&
		    walk(&w, python, NULL, "a virtualenv's python", &steps) < 0)
			goto out;
	}
	path_by_real_dirs(&w);
	rc = 0;
out:
	walker_free(&w);
	return rc;
}
