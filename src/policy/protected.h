/* The protected entries of a write grant: part of what the policy means by
 * a write grant (resolve/fsplan.c holds them read-only; `moat profiles` and
 * the docs list them). */
#ifndef MOAT_POLICY_PROTECTED_H
#define MOAT_POLICY_PROTECTED_H

#include <stdbool.h>
#include <stddef.h>

/* Names relative to the root of every write grant, and those that apply
 * only to a granted HOME; a name ending in '/' is a directory. */
const char *const *policy_protected_names(size_t *n);

/* What stands in for a protected entry absent at the start of a run. */
enum protected_absent {
	PROTECTED_ABSENT_PLACEHOLDER, /* an empty read-only directory */
	PROTECTED_ABSENT_FILE,        /* an empty read-only file: a git config
				       * git reads (a directory makes it fail) */
	PROTECTED_ABSENT_WATCH,       /* nothing can: looked up again after the
				       * run, fs.write missing if it was made;
				       * in a directory that is absent too, a
				       * placeholder at the first one */
	PROTECTED_ABSENT_WATCH_DEEP,  /* as WATCH, but watched also in a
				       * directory not made yet (a program the
				       * repository's config names: a
				       * placeholder would stop a build) */
	PROTECTED_ABSENT_IGNORED,     /* harmless while absent */
};
enum protected_absent policy_protected_when_absent(const char *name);
/* The same for protected_home_names. */
enum protected_absent policy_protected_home_when_absent(const char *name);
/* A directory of git's admin directories (.git/modules/, .git/worktrees/):
 * held entry by entry -- what in each makes git run code -- not whole, so
 * that git can work in them (a commit in a linked work tree writes its
 * index there). */
bool policy_protected_by_entry(const char *name);
const char *const *policy_protected_home_names(size_t *n);

#endif
