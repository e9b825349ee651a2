/* The caller's umask, and moat's own.  What moat makes for itself (the
 * view's directories, a grant's placeholders, the per-run TMPDIR, its
 * caches) has the modes moat gives it: under the caller's `umask 0777`
 * (or 0177, which scripts set before writing secrets) they were 000
 * (0600), and neither moat nor the command could use them.  The caller's
 * umask stays the command's (launch/child.c gives it back before execve)
 * and applies to what moat makes for the caller: the report, --mkdir. */
#ifndef MOAT_UTIL_UMASK_H
#define MOAT_UTIL_UMASK_H

#include <sys/types.h>

/* Record the caller's umask and set moat's own, 022.  Once, at start. */
void umask_take_own(void);

/* Give the caller's back to this process (the end of moat_run_main: an
 * embedder's later files keep its umask). */
void umask_give_back(void);

/* The caller's umask (022 before umask_take_own). */
mode_t umask_caller(void);

#endif
