/* The home directory of the account moat runs as (getuid()), from the
 * user database rather than $HOME.  The credential paths moat denies
 * (fs.secrets) lie under a home, and $HOME is only what the caller's
 * environment says: unset (env -i, some service managers), or set to a
 * scratch directory by an MCP client's "env", it would leave the real
 * home's ~/.ssh undenied while the report said fs.secrets held. */
#ifndef MOAT_UTIL_ACCOUNT_H
#define MOAT_UTIL_ACCOUNT_H

/* The account's home (absolute), or NULL when it has none that is known.
 * /etc/passwd is read first (a few µs: glibc's getpwuid costs ~0.1 ms,
 * and for a uid /etc/passwd lacks, with Debian's "passwd: files systemd",
 * 0.5-1 ms for loading the systemd module); only when the uid is not there
 * and `home_env` (the caller's $HOME) is not an absolute path is the user
 * database asked (LDAP, sssd, systemd-userdb).  A uid that /etc/passwd
 * lacks, with an absolute $HOME, keeps that $HOME (docs/filesystem.md).
 * The answer is kept for the process's life. */
const char *account_home(const char *home_env);

#endif
