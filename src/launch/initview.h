/* What `moat __init` checks and makes of the view an external tool (an OCI
 * runtime, nsjail) mounted from moat's plan, before anything of the
 * command's runs (launch/init.h: --bound-file, --symlink).
 *
 * The tool binds each source by its name, resolved again when it starts:
 * a name swapped after moat planned it (a directory renamed, a link to
 * ~/.ssh planted) would show another object at the grant's place.  So
 * each destination is looked up here, inside, without following a link,
 * and must be the object moat planned, device and inode -- as the native
 * child checks its own binds (kernel/mounts.h).  The same kernel, the same
 * superblocks: the numbers are the host's (not under gVisor, whose kernel
 * numbers its own files, so the gvisor backend does not ask for it).
 *
 * And the symlinks a read grant passed through where they lie on the
 * sandbox's own tmpfs (/tmp/x/h -> HOME): OCI has no symlink mount, and
 * binding the link's target would show all of it, not the grant. */
#ifndef MOAT_LAUNCH_INITVIEW_H
#define MOAT_LAUNCH_INITVIEW_H

#include <stddef.h>

/* `records`: `len` bytes of NUL-terminated "DEV:INO:DEST" records, as
 * backends/backend.h's backend_bound_write writes them.  0, or 125 with
 * the reason on stderr (the first destination that is not its object). */
int initview_check_bound(const char *records, size_t len);

/* Make the symlink `dest` -> `text`, and the directories above it, on
 * the sandbox's own tmpfs, following no link.  0, or 125 with the reason
 * on stderr. */
int initview_make_link(const char *text, const char *dest);

#endif
