/* Protected entries shared between concurrent runs on one project.
 *
 * Two runs with write grants on the same directory (two MCP servers of one
 * project, an agent and its CI job) see each other's placeholders: the
 * second run finds `.mcp.json` present -- the first run's empty read-only
 * directory -- and pins it.  When the first run ended it removed its
 * placeholder, and the kernel detached the second run's pin from the name
 * with it (a mount on a removed dentry goes away in every namespace): the
 * second command could create `.mcp.json` while the report said fs.write
 * enforced.
 *
 * So every run holds a shared flock(2) on each protected directory it pins
 * (placeholders it made included) for as long as it runs, and a
 * placeholder is removed only under an exclusive lock taken without
 * waiting: one another run holds is left in place.  That run, seeing moat's
 * mark on it (an xattr, PLACEHOLDER_XATTR), adopts it and removes it in
 * turn when it ends and nobody else holds it.  On a file system without
 * user xattrs a placeholder cannot be marked: it is still never removed
 * from under another run, and the last run leaves it behind.
 *
 * flock, not fcntl locks: fcntl locks belong to the process and vanish
 * with any close of the file; flock's belong to the open file description,
 * which moat, its sandbox's init and its guard share as they should. */
#ifndef MOAT_RESOLVE_SHAREDLOCK_H
#define MOAT_RESOLVE_SHAREDLOCK_H

#include <stdbool.h>
#include <sys/types.h>

#define PLACEHOLDER_XATTR "user.moat.placeholder"

/* Take a shared lock on the directory `obj` (any descriptor of it, O_PATH
 * included).  Returns the locked descriptor (O_RDONLY, close-on-exec),
 * -1 when the directory cannot be opened for reading (a mode 000 one: not
 * a placeholder of moat's, nothing to share), or -2 when it was removed
 * while moat waited for the lock (the caller looks at the name again).
 * Waits at most ~250 ms for a run that is removing it. */
int shared_lock_take(int obj);

/* Is the directory behind the locked `fd` a placeholder of moat's (this
 * run's or another's): an empty directory of this uid, mode 0500 (0555
 * from an older moat), with moat's mark? */
bool shared_is_placeholder(int fd);

/* Mark a placeholder just made (fd: O_RDONLY of it).  A file system
 * without user xattrs leaves it unmarked (see above). */
void shared_mark_placeholder(int fd);

/* Remove the placeholder `name` in `dirfd` if it is still dev/ino, empty,
 * and no other run holds it.  `lock_fd`: this process's own shared lock on
 * it, or -1 (moat's guard, after moat died: then the sandbox's processes
 * may take a moment to end and drop moat's lock, so it retries for ~200
 * ms).  Returns 1 when removed; 0 when it is not there, not that object, or
 * another run holds it (then it is that run's to remove); -errno when it
 * is ours but could not be removed (ENOTEMPTY: something was made in it;
 * EACCES: its mode was changed; ENOLCK, EMFILE, ENOMEM: it could not be
 * locked or opened to know). */
int shared_remove_placeholder(int dirfd, const char *name, dev_t dev, ino_t ino, int lock_fd);

#endif
