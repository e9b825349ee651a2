/* Where a repository's own files say git takes code from (gitcode.h). */
#include "resolve/gitcode.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/gitcfg.h"
#include "util/mem.h"
#include "util/path.h"

/* git's own bound on nested includes (MAX_INCLUDE_DEPTH); and moat's on
 * the files read, the size of one, and the linked work trees listed. */
#define GIT_INCLUDE_DEPTH 10
#define GIT_MAX_FILES 64
#define GIT_MAX_SIZE (1 << 20)
#define GIT_MAX_WORKTREES 256

/* --- the paths ----------------------------------------------------------- */

struct reader {
	const char *top, *home;
	struct git_code *out;
	size_t files;
	const char *dir;   /* of the file being read: where its relative includes are */
	int depth;
	bool worktree_config;
	bool modules;      /* reading .gitmodules */
	bool find_worktree; /* only core.worktree, into `worktree` */
	char *worktree;
};

static void add(struct git_code *gc, char *path, bool dir, bool gitfile)
{
	gc->p = moat_xgrow(gc->p, &gc->cap, gc->n, sizeof(*gc->p));
	gc->p[gc->n++] = (struct git_code_path){.path = path, .dir = dir, .gitfile = gitfile};
}

static void read_config(struct reader *r, int fd);

/* An open that failed: out of descriptors or memory is recorded (what the
 * file names is then not known); any other failure is the file's own (git
 * cannot read it either).  Returns fd. */
static int opened(struct git_code *gc, int fd)
{
	if (fd < 0 && !gc->failed && moat_errno_out_of_resources(errno))
		gc->failed = errno;
	return fd;
}

/* A file opened but not read whole (fstat, read or a listing failed: EIO,
 * ENOMEM): what it names is unknown, as for one not opened. */
static void failed(struct git_code *gc, int e)
{
	if (!gc->failed)
		gc->failed = e ? e : EIO;
}

/* A path value as git takes it: "~/" from HOME, relative to `base`. */
static char *value_path(const struct reader *r, const char *value, const char *base)
{
	if (!value || !*value || ((value[0] == '~') && !r->home))
		return NULL;
	return path_resolve_lexical(value, base, r->home);
}

static void include(struct reader *r, const char *path)
{
	cleanup_close int fd = -1;
	const char *saved = r->dir;
	cleanup_free char *dir = NULL;
	char *slash;

	if (r->depth >= GIT_INCLUDE_DEPTH || r->files >= GIT_MAX_FILES)
		return;
	fd = opened(r->out, open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
	if (fd < 0)
		return;
	dir = moat_xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	r->dir = dir;
	r->depth++;
	read_config(r, fd);
	r->depth--;
	r->dir = saved;
}

/* Does section.key (subsection any) name a command git runs?  core.fsmonitor
 * at a status, core.pager at a terminal, the filters at a checkout, the
 * drivers at a diff or merge, an alias starting with '!'. */
static bool names_command(const char *sec, const char *sub, const char *key, const char *value)
{
	static const char *const keys[][2] = {
	    {"core", "fsmonitor"},   {"core", "pager"},	       {"core", "editor"},
	    {"core", "sshcommand"},  {"core", "askpass"},      {"sequence", "editor"},
	    {"credential", "helper"}, {"gpg", "program"},      {"diff", "external"},
	    {"diff", "command"},     {"diff", "textconv"},     {"merge", "driver"},
	    {"filter", "clean"},     {"filter", "smudge"},     {"filter", "process"},
	    {"interactive", "difffilter"}, {"difftool", "cmd"}, {"mergetool", "cmd"},
	    {"remote", "receivepack"}, {"remote", "uploadpack"}, {"browser", "cmd"},
	};
	size_t i;

	if (!value)
		return false;
	if (strcmp(sec, "pager") == 0)
		return true;
	if (strcmp(sec, "alias") == 0)
		return value[0] == '!';
	if (strcmp(sec, "gpg") == 0 && sub && strcmp(key, "program") == 0)
		return true; /* gpg.ssh.program, gpg.x509.program */
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(sec, keys[i][0]) == 0 && strcmp(key, keys[i][1]) == 0)
			return true;
	return false;
}

/* The paths in a command's words: each word with a '/' that is no option
 * or URL, relative to the work tree's top (where git runs it) -- the
 * program first, and a script it is given. */
static void command_paths(struct reader *r, const char *value)
{
	cleanup_free char *copy = moat_xstrdup(value + (value[0] == '!'));
	char *save = NULL, *w;
	int words = 0;

	for (w = strtok_r(copy, " \t", &save); w && words < 16; w = strtok_r(NULL, " \t", &save), words++) {
		size_t len = strlen(w);
		char *p;

		if (len >= 2 && (w[0] == '"' || w[0] == '\'') && w[len - 1] == w[0]) {
			w[len - 1] = '\0';
			w++;
		}
		if (w[0] == '-' || !strchr(w, '/') || strstr(w, "://") || strpbrk(w, "$`;|&<>(){}*?"))
			continue;
		if ((p = value_path(r, w, r->top)) != NULL) {
			add(r->out, p, false, false);
			r->out->p[r->out->n - 1].program = true;
		}
	}
}

static void on_variable(void *ctx, const char *sec, const char *sub, const char *key, const char *value)
{
	struct reader *r = ctx;
	char *p;

	(void)sub; /* includeIf's condition: whatever it is, it may hold */
	if (r->find_worktree) {
		if (strcmp(sec, "core") == 0 && strcmp(key, "worktree") == 0 && value && *value) {
			free(r->worktree);
			r->worktree = moat_xstrdup(value);
		}
		return;
	}
	if (r->modules) {
		/* submodule.NAME.path: git refuses an absolute one, or one
		 * with "..", and so does this. */
		if (strcmp(sec, "submodule") == 0 && strcmp(key, "path") == 0 && value && value[0] != '/' &&
		    strcmp(value, "..") != 0 && strncmp(value, "../", 3) != 0 && !strstr(value, "/../") &&
		    (p = path_resolve_lexical(value, r->top, NULL)) != NULL) {
			if (strcmp(p, r->top) != 0 && path_within(p, r->top)) {
				add(r->out, moat_xasprintf("%s/.git", p), false, true);
			}
			free(p);
		}
		return;
	}
	if (names_command(sec, sub, key, value))
		command_paths(r, value);
	if (strcmp(sec, "core") == 0 && strcmp(key, "hookspath") == 0) {
		/* Relative: to where hooks run, the work tree's top. */
		if ((p = value_path(r, value, r->top)) != NULL)
			add(r->out, p, true, false);
	} else if ((strcmp(sec, "include") == 0 || strcmp(sec, "includeif") == 0) && strcmp(key, "path") == 0) {
		if ((p = value_path(r, value, r->dir)) != NULL) {
			add(r->out, p, false, false);
			include(r, p);
		}
	} else if (strcmp(sec, "extensions") == 0 && strcmp(key, "worktreeconfig") == 0) {
		r->worktree_config = !value || strcasecmp(value, "true") == 0 || strcasecmp(value, "yes") == 0 ||
				     strcasecmp(value, "on") == 0 || (value[0] >= '1' && value[0] <= '9');
	}
}

static void read_config(struct reader *r, int fd)
{
	struct stat st;
	cleanup_free char *buf = NULL;
	ssize_t got;
	size_t n = 0;

	r->files++;
	if (fstat(fd, &st) != 0) {
		failed(r->out, errno);
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > GIT_MAX_SIZE)
		return;
	buf = moat_xmalloc((size_t)st.st_size + 1);
	while (n < (size_t)st.st_size && (got = read(fd, buf + n, (size_t)st.st_size - n)) != 0) {
		/* A read that failed (EIO) is not the file's end: what the
		 * rest names (core.hooksPath) would go unprotected. */
		if (got < 0) {
			if (errno == EINTR)
				continue;
			failed(r->out, errno);
			return;
		}
		n += (size_t)got;
	}
	{
		char bad[256];
		/* What git refuses it reads nothing of (and runs nothing);
		 * what came before the bad line is protected all the same. */
		(void)gitcfg_parse(buf, n, "", on_variable, r, bad, sizeof(bad));
	}
}

/* A linked work tree's gitfile: .git/worktrees/ID/gitdir names it. */
static void linked_worktrees(struct reader *r, int top_fd)
{
	int dfd = opened(r->out, openat(top_fd, ".git/worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;
	size_t seen = 0;

	if (dfd < 0)
		return;
	if (!(d = fdopendir(dfd))) {
		opened(r->out, -1); /* ENOMEM */
		close(dfd);
		return;
	}
	for (errno = 0; (de = readdir(d)) != NULL && seen++ < GIT_MAX_WORKTREES; errno = 0) {
		cleanup_free char *rel = NULL;
		cleanup_close int fd = -1;
		char text[4096];
		ssize_t got;

		if (de->d_name[0] == '.')
			continue;
		rel = moat_xasprintf("%s/gitdir", de->d_name);
		fd = opened(r->out, openat(dirfd(d), rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
		if (fd < 0)
			continue;
		if ((got = read(fd, text, sizeof(text) - 1)) < 0) {
			failed(r->out, errno);
			return;
		}
		text[got] = '\0';
		text[strcspn(text, "\r\n")] = '\0';
		if (text[0] == '/')
			add(r->out, path_resolve_lexical(text, "/", NULL), false, true);
	}
	/* A listing cut short: the work trees past that point unknown. */
	if (!de && errno)
		failed(r->out, errno);
}

void git_code_paths(int top_fd, const char *top, const char *home, struct git_code *out)
{
	cleanup_free char *gitdir = moat_xasprintf("%s/.git", top);
	struct reader r = {.top = top, .home = home, .out = out, .dir = gitdir};
	cleanup_close int fd = opened(out, openat(top_fd, ".git/config", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	cleanup_close int mfd = -1;

	if (fd < 0)
		return; /* no repository here (or its .git a gitfile: its config lies elsewhere) */
	read_config(&r, fd);
	if (r.worktree_config)
		add(out, moat_xasprintf("%s/config.worktree", gitdir), false, false);
	mfd = opened(out, openat(top_fd, ".gitmodules", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	if (mfd >= 0) {
		r.modules = true;
		r.dir = top;
		read_config(&r, mfd);
	}
	linked_worktrees(&r, top_fd);
}

void git_code_paths_gitdir(const char *top, const char *gitdir, const char *home, struct git_code *out)
{
	struct reader r = {.top = top, .home = home, .out = out, .dir = gitdir};
	cleanup_free char *config = moat_xasprintf("%s/config", gitdir);
	cleanup_free char *wt_top = NULL;
	cleanup_close int fd = opened(out, open(config, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));

	if (fd < 0)
		return;
	if (!top) {
		/* A submodule's git directory: its work tree is what its
		 * core.worktree says (relative to the git directory), where
		 * a relative core.hooksPath is taken; without one, the git
		 * directory itself stands in (a directory more protected). */
		struct reader w = {.top = gitdir, .home = home, .out = out, .dir = gitdir, .find_worktree = true};
		read_config(&w, fd);
		if (w.worktree)
			wt_top = path_resolve_lexical(w.worktree, gitdir, NULL);
		free(w.worktree);
		r.top = wt_top ? wt_top : gitdir;
		r.files = 0;
		if (lseek(fd, 0, SEEK_SET) != 0)
			return;
	}
	read_config(&r, fd);
	if (r.worktree_config)
		add(out, moat_xasprintf("%s/config.worktree", gitdir), false, false);
}

void git_code_free(struct git_code *gc)
{
	for (size_t i = 0; i < gc->n; i++)
		free(gc->p[i].path);
	free(gc->p);
	memset(gc, 0, sizeof(*gc));
}
