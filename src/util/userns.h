/* The identity maps of a new user namespace: the one function that writes
 * them, for the native child (launch/child.c) and the probe's trial
 * (host/trials.c). */
#ifndef MOAT_UTIL_USERNS_H
#define MOAT_UTIL_USERNS_H

#include <sys/types.h>

/* For the calling process, just after it entered a new user namespace:
 * "deny" to /proc/self/setgroups (required before an unprivileged gid_map
 * is accepted, CVE-2014-8989; a kernel without the file, before 3.19, is
 * fine), then "UID UID 1" to uid_map and "GID GID 1" to gid_map: the
 * caller's own ids, mapped to themselves.
 *
 * Allocates nothing and takes no lock: it runs between clone and execve.
 * Returns 0, or -errno with *failed naming the file that could not be
 * written ("/proc/self/uid_map", ...). */
int userns_map_ids(uid_t uid, gid_t gid, const char **failed);

#endif
