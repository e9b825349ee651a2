/* Per-run directories under /tmp named after the moat that made them
 * (/tmp/PREFIX.PID.XXXXXX), so that one whose moat died before its guard
 * could remove it (a SIGKILL between planning and the guard's start) is
 * removed by a later run instead of staying behind. */
#ifndef MOAT_UTIL_STALE_H
#define MOAT_UTIL_STALE_H

#include <stdbool.h>

#include "util/err.h"

/* Make /tmp/PREFIX.PID.XXXXXX (mode 0700) for this process, after removing
 * this user's /tmp/PREFIX.PID.XXXXXX whose PID no longer runs when `sweep`
 * (false: the caller has stale_sweep run elsewhere -- reading /tmp is
 * ~0.2 ms with a few hundred entries there).  PREFIX ends without the dot
 * ("moat-tmp", "moat-oci").  Returns the new path (the caller's to free),
 * or NULL with err. */
char *stale_mkdtemp(const char *prefix, bool sweep, struct moat_error *err);

/* Only the sweep: this user's /tmp/PREFIX.PID.XXXXXX whose PID is gone. */
void stale_sweep(const char *prefix);

#endif
