/* Source: what the command needs to start, found on this host in the
 * parent, as the PATH lookup is (sources/resolve.h): the command itself,
 * the script an interpreter is given, and the interpreters they point at --
 * through a symlink (a virtualenv's bin/python), a `#!` line (`#!/usr/bin/env
 * node` through PATH) or a virtualenv's pyvenv.cfg `home` -- each checked
 * against what the policy grants (docs/policy.md, "Commands and
 * interpreters").
 *
 * An interpreter that a granted file points at is granted read-only, its
 * installation (the directory above its bin/), as a command's own install
 * dir is: never HOME, a directory containing it, the root or the private
 * /tmp, never inside a denied path, and only for a file named as an
 * interpreter is (python3.11, node, ...).  Whatever else no grant covers is
 * refused before the run, with the grant to add.  A command reached
 * through a directory link no grant holds as written is executed by its
 * real directory; PATH's link entries in the sandbox's own /tmp or /run are
 * given as the directories they lead to. */
#ifndef MOAT_SOURCES_INTERP_H
#define MOAT_SOURCES_INTERP_H

#include "policy/policy.h"
#include "sources/netsets.h"
#include "util/err.h"

/* Check p->exe, its script and their interpreters against p's grants,
 * adding the interpreters' installations (origin: what points at them, for
 * the dry run); then the virtualenvs a granted current directory holds
 * (the directory itself, .venv, venv), whose interpreter a shell that
 * sources their activate script runs: granted the same way, or a line in
 * `notes` when it cannot be.  `home` may be NULL; `path_env` is moat's
 * PATH (the command's unless --env sets one).  -1 with *err (MOAT_E_USAGE)
 * naming the file and the grant that would make it visible. */
int interp_check(struct moat_policy *p, const char *home, const char *path_env, struct netset_notes *notes,
		 struct moat_error *err);

#endif
