/* Where the report goes (docs/report.md, "Knowing a report is moat's").
 *
 * The report is the attestation, so nobody but moat may put it where the
 * caller reads it: not the command (it could claim a sandbox it did not
 * have), and not another user sharing the directory.  A destination is
 * checked before anything runs and held from the check to the write:
 *
 *   - --report-fd N: a pipe or socket, or a regular file moat's user owns;
 *     close-on-exec, and no descriptor the command inherits may be the
 *     same object;
 *   - --report FILE: its directory is opened without following a symlink
 *     and held (an O_PATH descriptor); neither it nor any directory above
 *     it may be a write grant (compared by device and inode) or writable
 *     by others without the sticky bit, and the command's writes must be
 *     confined at all.  The report is written at the end into a fresh
 *     temporary file there and renamed over the name, which replaces a
 *     symlink instead of following it. */
#ifndef MOAT_REPORT_DEST_H
#define MOAT_REPORT_DEST_H

#include <jansson.h>
#include <stdbool.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "util/err.h"

struct report_dest {
	int fd;	    /* --report-fd: the caller's descriptor (never closed here), or -1 */
	int dirfd;  /* --report FILE: its directory (O_PATH, owned), or -1 */
	char *path; /* --report FILE as given, for messages */
	char *dir;  /* its directory as given ("." for a bare name) */
	char *name; /* the file's name in dirfd */
};

void report_dest_init(struct report_dest *d);
/* Closes the directory; the caller's --report-fd stays open. */
void report_dest_free(struct report_dest *d);
bool report_dest_wanted(const struct report_dest *d);

/* --report-fd N, at start: refuses a descriptor that is not a pipe, a
 * socket or a regular file owned by the effective uid, one not open for
 * writing, and one the command would inherit (a --keep-fd, stdio) or that
 * is the same object as one it inherits.  Marks it close-on-exec. */
int report_dest_use_fd(struct report_dest *d, int fd, const struct moat_policy *p, struct moat_error *err);

/* The same checks for another descriptor of moat's own output, named by its
 * option (--events-fd) in the messages; marks it close-on-exec. */
int report_fd_check(int fd, const char *opt, const struct moat_policy *p, struct moat_error *err);

/* After the plan: a --report-fd or --events-fd that is a file or a named
 * FIFO whose name lies in a write grant is refused (MOAT_E_USAGE, with a
 * hint): the command could replace the file at that name, or write into
 * the FIFO first.  Best effort: a descriptor without a name (a pipe, a
 * deleted file) passes. */
int report_fd_check_grants(int fd, const char *opt, const struct moat_plan *plan, struct moat_error *err);

/* --report-fd and --events-fd, both given: refused when they are the same
 * pipe, socket or file (`4>&3`; compared by device and inode). */
int report_fds_apart(int report_fd, int events_fd, struct moat_error *err);

/* --report FILE, after the plan and before anything runs (never for a dry
 * run: it touches nothing).  Refusals are MOAT_E_USAGE, naming the path,
 * with a hint. */
int report_dest_open(struct report_dest *d, const char *path, const struct moat_plan *plan, struct moat_error *err);

/* After the run: write j (and a newline).  For a file: into a new
 * temporary file in the held directory, renamed over the name; on any
 * failure the temporary file is removed and what was at the name is left
 * as it was. */
int report_dest_write(const struct report_dest *d, json_t *j, struct moat_error *err);

#endif
