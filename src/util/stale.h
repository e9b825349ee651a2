/* Per-run directories under /tmp named after the moat that made them
 * (/tmp/PREFIX.PID.XXXXXX), so that one whose moat died before its guard
 * could remove it (a SIGKILL between planning and the guard's start) is
 * removed by a later run instead of staying behind.
 *
 * Whether its moat still runs is said by a lock, not by the pid: the
 * maker holds an exclusive flock on the directory for the whole run (its
 * descriptor is inherited by moat's guard, so the lock lasts until the
 * directory is removed, also after moat died), and a sweep removes only a
 * directory whose lock it can take.  A pid says nothing across pid
 * namespaces: two moats of one user sharing /tmp, one in a container, see
 * each other's pids as gone, and the sweep deleted a live run's tmp.  The
 * pid stays in the name for people, and as a first filter: a directory
 * whose pid runs here is left alone without looking further (a moat of an
 * older version held no lock). */
#ifndef MOAT_UTIL_STALE_H
#define MOAT_UTIL_STALE_H

#include <stdbool.h>

#include "util/err.h"

/* Make /tmp/PREFIX.PID.XXXXXX (mode 0700) for this process and lock it,
 * after removing this user's stale ones (stale_sweep) when `sweep` (false:
 * the caller has stale_sweep run elsewhere -- reading /tmp is ~0.2 ms with
 * a few hundred entries there).  PREFIX ends without the dot ("moat-tmp",
 * "moat-oci").  *lock_fd: the locked descriptor (O_RDONLY, close-on-exec),
 * which the caller keeps open until it has removed the directory -- and
 * which no sandboxed command may inherit.  Returns the new path (the
 * caller's to free), or NULL with err. */
char *stale_mkdtemp(const char *prefix, bool sweep, int *lock_fd, struct moat_error *err);

/* Only the sweep: this user's /tmp/PREFIX.PID.XXXXXX whose PID does not run
 * in this pid namespace and whose lock nobody holds: locked, checked to be
 * still the directory at that name, then removed.  `stop` (may be NULL) is
 * asked before each batch of /tmp's entries: true ends the sweep there,
 * and what it did not reach is left to a later sweep. */
void stale_sweep(const char *prefix, bool (*stop)(void *), void *arg);

#endif
