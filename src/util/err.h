/* moat's one error convention (see docs/errors.md).
 *
 * A function that can fail returns an int: >= 0 on success, -1 on failure.
 * On failure it has filled the caller's `struct moat_error` with a message
 * (one line, naming the path or file:line:col) and, where the fix is known,
 * a hint.  Callers add context with moat_error_wrap(); only main() turns an
 * error into output on stderr and an exit status.  Out-parameters are written
 * only on success. */
#ifndef MOAT_UTIL_ERR_H
#define MOAT_UTIL_ERR_H

#include <stdbool.h>
#include <stddef.h>

#define MOAT_ERR_MSG_MAX 1024
#define MOAT_ERR_HINT_MAX 512

/* What kind of failure it was: decides moat's exit status (README). */
enum moat_error_kind {
	MOAT_E_NONE = 0,
	MOAT_E_USAGE,      /* bad command line or config: 125 */
	MOAT_E_CONFIG,     /* config file error: 125 */
	MOAT_E_UNAVAIL,    /* a required protection is missing: 125 */
	MOAT_E_SYSTEM,     /* a system call failed while setting up: 125 */
	MOAT_E_NOEXEC,     /* command found but not executable: 126 */
	MOAT_E_NOTFOUND,   /* command not found: 127 */
};

struct moat_error {
	enum moat_error_kind kind;
	int errnum; /* errno at the failure, or 0 */
	char message[MOAT_ERR_MSG_MAX];
	char hint[MOAT_ERR_HINT_MAX];
};

/* Write `head` and then `text` to stderr as one line, in one write: `text`
 * with the terminal's control characters shown as \xHH (C0 with tab, DEL,
 * and C1 as UTF-8 encodes them).  A path in moat's message may come from a
 * file a command made (a #! line, a link's target, a directory's name):
 * written raw, its escape sequences would retitle the window, move the
 * cursor or overwrite what moat said above it, and a tab would shift the
 * rest of the line to another column. */
void moat_say(const char *head, const char *text);

/* `text` as moat_say shows it, in a new string (for a name in a line moat
 * builds itself: a server's name from a client's config, a file's name or
 * a word of moat's command line). */
char *moat_text_shown(const char *text);

/* Fit `head` + `body` + `tail` into `out` (`len` bytes): when too long,
 * the middle of `body` goes ("[... N bytes ...]"), never `head` or `tail`,
 * and so never the end of a text, which says what to do.  UTF-8 sequences
 * are not cut.  For every fixed-size text moat shows: error messages,
 * verdicts (policy/verdict.h). */
void moat_text_fit(char *out, size_t len, const char *head, const char *body, const char *tail);

/* Fill err and return -1.  errnum != 0 appends ": strerror(errnum)";
 * EMFILE and ENFILE instead lead the message ("moat ran out of file
 * descriptors (RLIMIT_NOFILE N): what") and set a hint, since the path
 * being opened then is not the cause.  A message over MOAT_ERR_MSG_MAX
 * loses the middle of what was formatted ("[... N bytes ...]"), never the
 * errno's text. */
int moat_error_set(struct moat_error *err, enum moat_error_kind kind, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Attach a hint to an error already set; returns -1 for tail calls.  An
 * EMFILE/ENFILE error keeps the hint moat_error_set gave it. */
int moat_error_hint(struct moat_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After a fork or clone that failed with EAGAIN: the hint when this uid's
 * process limit (RLIMIT_NPROC, ulimit -u) is what refused it, naming the
 * limit; nothing for another cause (a cgroup's pids.max, the kernel's
 * threads-max).  Returns -1, as moat_error_hint. */
int moat_error_hint_nproc(struct moat_error *err);

/* The hint of an EMFILE/ENFILE error, more precise than the default one. */
int moat_error_fd_hint(struct moat_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefix the message with context ("loading policy: ..."); returns -1.
 * The cause of an EMFILE/ENFILE error stays first. */
int moat_error_wrap(struct moat_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* EMFILE or ENFILE: the process or the system is out of descriptors. */
bool moat_errno_is_fd_exhaustion(int errnum);

/* Out of descriptors or memory (EMFILE, ENFILE, ENOMEM): a failure that
 * says nothing about what was being opened.  A check that decides a verdict
 * must not take it for "nothing there" (docs/errors.md). */
bool moat_errno_out_of_resources(int errnum);

/* An errno of mkdir(2) that says nothing can be made there (a read-only or
 * full file system, no permission, no parent), as opposed to something
 * made there already: for what moat makes as a convenience, and goes on
 * without. */
bool moat_errno_cannot_make(int errnum);

/* The hint for an EMFILE or ENFILE error, else NULL. */
const char *moat_errno_fd_hint(int errnum);

/* "what: strerror(errnum)" into buf, as moat_error_set words it (the cause
 * first for EMFILE/ENFILE; shortened in the middle, never the errno's
 * text); errnum 0: just what.  For failures that travel as text (the
 * child's, launch/child.h). */
void moat_failure_text(char *buf, size_t len, const char *what, int errnum);

/* The hint for a text moat_failure_text made, when it knows one. */
const char *moat_failure_hint(const char *text);

/* Print "moat: message" and "moat: hint: ..." to stderr; return the exit
 * status for the error.  For entry points only (main, moat_run_main). */
int moat_error_print(const struct moat_error *err);

/* The exit status main() uses for an error of this kind. */
int moat_error_exit_status(const struct moat_error *err);

#endif
