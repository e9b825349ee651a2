/* Built-in profiles: named starting points that fill a policy with rules.
 * Every rule a profile adds is visible in `moat profiles` and in the
 * effective policy (`--dry-run`), so nothing is granted unseen. */
#ifndef MOAT_POLICY_PROFILES_H
#define MOAT_POLICY_PROFILES_H

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"
#include "util/err.h"

/* The profile `moat run` uses when none is named. */
#define MOAT_DEFAULT_PROFILE "exec"

/* The origin of a CA bundle variable that passes without a grant: what it
 * names does not look like a bundle (policy/cabundle.h).  Said in a note
 * (sources/runnotes.c). */
#define PROFILE_CA_NOT_GRANTED "a CA bundle named in moat's environment, not granted"

struct profile_context {
	const char *home; /* absolute, or NULL when unknown */
	const char *cwd;  /* absolute */
	const char *exe;  /* the resolved command */
	char *const *argv;
	/* The sandbox runs on another machine (an export for macOS or
	 * Kubernetes): this one's account, and its home, are not the
	 * command's. */
	bool other_host;
};

/* Add the profile's rules to p (p->exe and p->cwd must be set).  Unknown
 * names are an error that lists the known ones. */
int profile_apply(struct moat_policy *p, const char *name, const struct profile_context *ctx, struct moat_error *err);

/* Add the built-in credential paths under `home` as deny rules, and with
 * account_too under the account's home as well when it is another
 * (util/account.h). */
void profile_add_secrets(struct moat_policy *p, const char *home, bool account_too);

/* Is `exe` (a resolved path) an interpreter that runs the script its first
 * argument names (sh, bash, python3.11, node, ...)?  Only then is that
 * script's directory granted as the command's own. */
bool profile_is_interpreter(const char *exe);

/* Is `path` named as an interpreter is, by its last component alone (no
 * link followed: a check of an object it opened names it by its real
 * path)? */
bool profile_interpreter_named(const char *path);

/* The word of argv that names the program the command runs as its code: an
 * interpreter's script (`node /x/s.js`, `python3 -u /x/s.py`, `node
 * --no-warnings /x/s.js`, `deno run -A /x/s.ts`, `bun run /x/s.ts`) or
 * java's jar (`java -Xmx1g -jar /x/s.jar`).  Options before it are passed
 * over when they take no value (python's value-less flags, node's and
 * bun's `--name=value` and `--no-*` switches, deno's permission switches,
 * java's -X and -D), and with the next word when they are known to take it
 * as their value (`python3 -X utf8`, `node -r dotenv/config`, `java -cp
 * lib.jar`).  NULL: none, or an option moat does not know comes first. */
const char *profile_script_arg(const char *exe, char *const *argv);

/* Is the program `exe` named `name`, or is it through its links
 * (/usr/bin/go -> ../lib/go-1.19/bin/go)? */
bool profile_exe_named(const char *exe, const char *name);

/* The directory a command is installed in (symlinks followed): /x/bin/prog
 * gives /x, so that its lib/ and share/ come along; anything else its own
 * directory.  NULL when it does not resolve. */
char *profile_install_dir(const char *exe);

/* Grant `dir`, the installation of the program `prog`, read-only, for the
 * reason `why` (a string that outlives the policy).  When `dir` is one of
 * the trees HOME (`home`, or `home_real` through its links) shares among
 * tools -- ~/.local, ~/.local/share, ~/.local/state, ~/.config, ~/.cache,
 * GOPATH's ~/go but for the go and gofmt of a toolchain unpacked there,
 * and ~/.cargo but for rustup's proxies -- only `prog`'s own directory and
 * the tree's lib/ and lib64/ are granted.
 *
 * Each grant is bound to the object judged (moat_path_rule.bound): `dir_fd`
 * is `dir` as the caller opened and judged it (-1: opened here), its own
 * directory and lib/ are opened through it, and each is judged by its
 * object's real path (never HOME, a directory containing it, nor the
 * root).  A name swapped between this and the plan's walk of it leads to
 * another object, and the plan drops the grant (said on stderr).  False
 * when `dir` (or, in a shared tree, `prog`'s directory) is not granted. */
bool profile_grant_install(struct moat_policy *p, int dir_fd, const char *dir, const char *prog, const char *home,
			   const char *home_real, const char *why);

/* Grant the program `exe` (resolved on this host) read-only as the
 * command's own is granted: its installation (profile_install_dir and
 * profile_grant_install; never HOME, a directory containing it or the
 * root: false then, and nothing is granted) and, for a rustup proxy,
 * rustup's toolchains in ~/.rustup (for the reason `rustup_why`).  The
 * reasons are strings that outlive the policy. */
bool profile_grant_program(struct moat_policy *p, const struct profile_context *ctx, const char *exe,
			   const char *why, const char *rustup_why);

/* Is `name` one of the built-in profiles? */
bool profile_is_builtin(const char *name);

/* Their names, NULL-terminated. */
const char *const *profile_builtin_names(void);

/* `moat profiles`: every profile with its rules, to `out`. */
void profile_list(FILE *out);

#endif
