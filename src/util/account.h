/* The accounts moat looks up: its own home directory, and the name of a
 * uid (for messages and reports).
 *
 * The home of the account moat runs as (getuid()) comes from the user
 * database rather than $HOME.  The credential paths moat denies
 * (fs.secrets) lie under a home, and $HOME is only what the caller's
 * environment says: unset (env -i, some service managers), or set to a
 * scratch directory by an MCP client's "env", it would leave the real
 * home's ~/.ssh undenied while the report said fs.secrets held.
 *
 * Neither calls glibc's getpwuid: /etc/passwd is read first (a few µs),
 * and only for a uid it lacks is the whole user database asked (LDAP,
 * sssd, systemd's synthesized and dynamic users), by running the host's
 * `getent passwd UID` (util-linux's neighbour in libc-bin, on every glibc
 * system).  getpwuid itself would load the NSS modules nsswitch.conf names
 * into moat; the moat binary is linked statically (the Makefile, STATIC),
 * and a module loaded into a static program brings a second libc with it
 * (Debian's "passwd: files systemd" crashed such a moat:
 * tests/blackbox/nss.sh).  A separate process keeps every module out. */
#ifndef MOAT_UTIL_ACCOUNT_H
#define MOAT_UTIL_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The account's home (absolute), or NULL when it has none that is known.
 * Only when the uid is not in /etc/passwd and `home_env` (the caller's
 * $HOME) is not an absolute path is the user database asked.  A uid that
 * /etc/passwd lacks, with an absolute $HOME, keeps that $HOME
 * (docs/filesystem.md).  The answer is kept for the process's life. */
const char *account_home(const char *home_env);

/* uid's name into buf (NUL-terminated, cut to len - 1): true when the
 * user database has one, from /etc/passwd or else getent; false (buf "")
 * when it has none. */
bool account_name(uid_t uid, char *buf, size_t len);

#endif
