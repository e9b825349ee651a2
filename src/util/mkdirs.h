/* mkdir -p: the directories a run needs made on the host (a --write grant
 * under --mkdir; moat's own caches are util/ownfile.h's own_dir_at). */
#ifndef MOAT_UTIL_MKDIRS_H
#define MOAT_UTIL_MKDIRS_H

#include <sys/types.h>

#include "util/err.h"

/* Make the absolute directory `path` and every missing directory above it,
 * with `mode` (less the umask).  A name that exists and is not a directory
 * (or a link to one) fails with ENOTDIR, naming it. */
int mkdirs(const char *path, mode_t mode, struct moat_error *err);

#endif
