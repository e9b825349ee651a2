/* moat's standard descriptors.  A caller may start moat with 0, 1 or 2
 * closed; the next descriptor moat opens would then take that number and be
 * mistaken for a standard stream (the report written where diagnostics go,
 * bwrap's seccomp program read as its stdin).  Run first, before anything
 * is opened. */
#ifndef MOAT_UTIL_STDFDS_H
#define MOAT_UTIL_STDFDS_H

#include "util/err.h"

/* Opens /dev/null on each of 0, 1 and 2 that is closed.  0, or -1 with err
 * naming the descriptor if /dev/null cannot be opened (a chroot or a
 * container without /dev): moat then stops, saying so. */
int stdfds_ensure(struct moat_error *err);

#endif
