/* Lexical path helpers: no file system access, so they are unit-testable and
 * cannot be raced.  Symlinks are resolved later, by the plan, with O_PATH. */
#ifndef MOAT_UTIL_PATH_H
#define MOAT_UTIL_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* Make `path` absolute and normalised: "~" and "~/" expand to `home`, a
 * relative path is taken against `base`, and ".", ".." and repeated slashes
 * are folded.  Returns a new string, or NULL when "~" is used with no home
 * or `base` is not absolute. */
char *path_resolve_lexical(const char *path, const char *base, const char *home);

/* Where path_resolve_lexical's folding of `path` (taken as it takes it)
 * may not be the kernel's: the first prefix that is a symbolic link and is
 * followed by "..", which the kernel takes to the link's target's parent
 * and the folding to the link's own parent (`--read /p/link/..` granted
 * all of /p where it named the target's parent).  A new string, or NULL
 * when there is none, when both ways lead to one object, or when `path`
 * cannot be made absolute. */
char *path_link_before_dotdot(const char *path, const char *base, const char *home);

/* Is `path` absolute and normalised: no empty, "." or ".." component and
 * no trailing '/' ("/" itself is)? */
bool path_is_normalised(const char *path);

/* The absolute `path` with its empty and "." components and a trailing
 * '/' dropped, its ".." kept: a ".." is the kernel's to resolve (after a
 * link it leads to the link's target's parent), and the plan's walk does
 * so.  A new string. */
char *path_tidy(const char *path) __attribute__((returns_nonnull));

/* HOME (the environment's, as given) as the rules built from it want it:
 * absolute and normalised, or NULL when it is not absolute.  A ".." in it
 * is left to the kernel (realpath), not folded by text: /x/link/../home is
 * where the link's target's parent holds home, and the command's $HOME
 * resolves there (when realpath fails, path_tidy's).  Without this a HOME of /a//home gave denies of
 * /a//home/.ssh, which no grant of /a/home was found to hold, and the
 * grant covered them. */
char *path_home_for_rules(const char *home);

/* The first place where `path` holds a form that a shell or an MCP client
 * would expand and moat does not (it expands "~" and "~/" only), or NULL:
 * "~NAME" at the start (~root, ~+); "${" anywhere (${HOME}, ${env:HOME},
 * ${workspaceFolder}); "$NAME" or "$(" opening a component ($HOME/x,
 * /home/$USER); "%NAME%" opening a component (%USERPROFILE%).  Taken
 * literally such a path is made relative to a base, names nothing, and a
 * deny of it denies nothing without a word.  A "$" or "%" inside a name
 * stays literal (a$b, 50%, a%20b): file names hold them.  *len is the
 * form's length. */
const char *path_unexpanded(const char *path, size_t *len);

/* "dir/name" as a new string; "/name" when dir is "/".  A concatenation,
 * not a printf: planning joins a path for every entry of an expanded
 * directory and every absent denied path (~300 a start), where
 * asprintf's two formatting passes were ~0.05 ms. */
char *path_join(const char *dir, const char *name) __attribute__((returns_nonnull));

/* Is `inner` equal to `outer` or below it?  Both normalised. */
bool path_within(const char *inner, const char *outer);

/* `path`, which is `from` or below it, with `from` replaced by `to`: a new
 * string ("/a/b/c", "/a", "/m" -> "/m/b/c"; "/a", "/a", "/m" -> "/m").
 * All three normalised. */
char *path_rebase(const char *path, const char *from, const char *to) __attribute__((returns_nonnull));

/* Where the object open at `fd` is, every link resolved (its
 * /proc/self/fd link), in `buf`: a check that judges this judges the
 * object, not a name that may lead elsewhere by the time it is walked
 * again.  False when it cannot be read (no /proc, too long). */
bool path_of_fd(int fd, char *buf, size_t len);

#endif
