/* Where a repository's own files say git takes code from, beyond the
 * protected names (policy/protected.h): what its .git/config names
 * (core.hooksPath, include.path, includeIf.*.path, and config.worktree when
 * extensions.worktreeConfig is set; the programs of the commands it sets,
 * core.fsmonitor, core.pager, filters, drivers, `!` aliases, ...) and the
 * gitfiles of the submodules its .gitmodules lists.  resolve/fsplan.c protects those that lie inside a
 * write grant.  Read once, when the run is planned: .git/config and
 * .gitmodules are pinned for the run, so what they name cannot change. */
#ifndef MOAT_RESOLVE_GITCODE_H
#define MOAT_RESOLVE_GITCODE_H

#include <stdbool.h>
#include <stddef.h>

struct git_code_path {
	char *path;    /* absolute, lexically normalised */
	bool dir;      /* a directory (hooks), else a file */
	bool gitfile;  /* a submodule's `.git` in its work tree */
	bool program;  /* a program a command the config names runs
			* (core.fsmonitor = tools/fsm): held when present,
			* watched when absent in a directory that is there */
};

struct git_code {
	struct git_code_path *p;
	size_t n, cap;
	int failed; /* EMFILE, ENFILE, ENOMEM: a file not opened for want of
		     * them; or a file opened and not read whole (EIO from
		     * read, a listing cut short): the list may lack what it
		     * names (the caller fails the plan); else 0 */
};

/* The code paths of the repository whose work tree is `top` (its .git a
 * directory there), read through `top_fd` (a descriptor of `top`).  `home`
 * expands "~/"; NULL: such values are skipped.  Unreadable files add
 * nothing (git reads none of them either); one moat could not open for
 * want of descriptors or memory, or could not read whole, sets
 * `out->failed`. */
void git_code_paths(int top_fd, const char *top, const char *home, struct git_code *out);
/* The same for a git directory that is not `top`/.git: the one a gitfile
 * names (`git init --separate-git-dir`, a linked work tree's, with its
 * common directory read apart), or a bare repository (`top` the same).
 * Its config is read by its path, the last component not followed; a
 * relative core.hooksPath is taken against `top`, where git runs hooks --
 * NULL: the work tree its core.worktree names (a submodule's). */
void git_code_paths_gitdir(const char *top, const char *gitdir, const char *home, struct git_code *out);
void git_code_free(struct git_code *gc);

#endif
