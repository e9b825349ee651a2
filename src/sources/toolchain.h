/* Source: the toolchain of the project around the current directory
 * (docs/policy.md, "A project's toolchain").
 *
 * `make`, `just`, `sh -c 'go test ./...'`, `npm run build`, a CI script: a
 * command that is not the toolchain itself runs it by its name, from PATH,
 * and the sandbox would hide it when it is installed under HOME (rustup's
 * ~/.cargo/bin, pyenv's shims, nvm's node, ~/sdk/go1.22) -- the shell then
 * finds the system's python3 or node instead, without a word -- or break
 * it (go's build cache).  Where the current directory is a Go module
 * (go.mod, go.work), a Cargo package (Cargo.toml), a Python project
 * (pyproject.toml, setup.py, requirements.txt, .python-version) or a
 * Node.js project (package.json, .nvmrc), and the policy grants the
 * current directory, moat grants the go, cargo, python3 or node PATH finds
 * there as it grants the command's own: its installation read-only, with a
 * rustup proxy's ~/.rustup; and for go, what sources/gotool.h gives the go
 * command.
 *
 * Looked for by name, at every start: one open of a directory and a lookup
 * per marker, no PATH search unless a marker is there.  In the current
 * directory; when it lies in a git work tree, in each directory above it
 * up to the root (cargo, go and npm look upwards for their file); when it
 * is the root, in each of its directories (a monorepo's parts), up to 64. */
#ifndef MOAT_SOURCES_TOOLCHAIN_H
#define MOAT_SOURCES_TOOLCHAIN_H

#include <stdbool.h>

#include "policy/policy.h"

/* Grant the project's toolchain as above (nothing when the command is that
 * toolchain: the profile granted it already).  `home` may be NULL; `env`
 * is moat's environment, whose PATH is the command's unless the policy
 * sets one.  True when the project is a Go module and go was found: the
 * caller then gives it gotool_add's environment. */
bool toolchain_add(struct moat_policy *p, const char *home, char *const *env);

#endif
