/* Source: the user's global git configuration, sanitized for the sandbox
 * (docs/policy.md, "git repositories").  HOME is not granted, so git inside
 * would find no identity ("Author identity unknown"); granting ~/.gitconfig
 * would hand over what it may carry besides: credential helpers and their
 * usernames, tokens in `url.<base>.insteadOf` bases and `http.extraHeader`,
 * `github.token`, `sendemail.smtpPass`, and files it includes.  So moat reads
 * the files as git does and keeps only what the list below names, written
 * anew (no line of the original is copied); api/run.c writes it to a file
 * of the run's that git reads through GIT_CONFIG_GLOBAL. */
#ifndef MOAT_SOURCES_GITCONFIG_H
#define MOAT_SOURCES_GITCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "sources/netsets.h"

/* Filter one file's text (`file` names it in *bad): the kept entries are
 * appended to g (git's syntax, every value quoted), the keys of kept and
 * dropped entries listed.  -1 on a line git would refuse: then nothing of
 * the file is kept, and `bad` says where (FILE:LINE: what). */
int gitconfig_filter(const char *text, size_t len, const char *file, struct moat_git_config *g, char *bad,
		     size_t bad_len);

/* The global configuration git would read with moat's environment --
 * $GIT_CONFIG_GLOBAL alone when set, else $XDG_CONFIG_HOME/git/config (by
 * default ~/.config/git/config), then ~/.gitconfig -- filtered into a new
 * *out (NULL when there is no such file).  A file that cannot be read or
 * parsed is left out, with a line in `notes`. */
void gitconfig_load(const char *home, char *const *env, struct moat_git_config **out, struct netset_notes *notes);

#endif
