/* libmoat's public API.  Everything else in the library is hidden
 * (-fvisibility=hidden); only what is marked MOAT_EXPORT is exported from
 * libmoat.so.  The API is deliberately small: embedders either run `moat`
 * as a program (see docs/integration.md) or call the same entry point. */
#ifndef MOAT_MOAT_H
#define MOAT_MOAT_H

#define MOAT_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* The version string, e.g. "0.1.0". */
MOAT_EXPORT const char *moat_version(void);

/* `moat run ARGS...`: argv[0] is "run"; argv holds argc strings (a NULL
 * among them is refused: 125, naming its index).  Builds the policy, the plan and the
 * sandbox, runs the command and returns what `moat` would exit with (the
 * command's status, 124, 125, 126, 127 or 128+N; see README.md).
 * Diagnostics go to stderr; stdout belongs to the command.
 *
 * Call it from the process's only thread: it blocks SIGCHLD and the
 * signals it forwards in the calling thread and reads them from a
 * signalfd, so another thread could take the command's SIGCHLD (the run
 * would wait forever) or a signal meant for the command.  From a process
 * with more than one thread it returns 125 at once, saying so on stderr.
 * moat's own threads do not count: a name lookup of --allow-net (a thread
 * named "moat-helper", every signal blocked) can outlive the call that
 * started it, until its resolver's timeout.
 * It blocks them once its plan is made: while it parses and plans (which
 * can block on a hung mount) they act as the caller's dispositions say,
 * and nothing has run yet.
 *
 * Only the native backend runs from here (and none, with --mode off):
 * bwrap, firejail, oci, gvisor and nsjail start moat's own binary as the
 * sandbox's init, and this process is not moat.  --backend auto skips
 * them; asked for by name, every property is missing with that reason
 * (exit 125 in require mode).
 *
 * The caller's own children, started before the call, are left alone: moat
 * neither kills nor reaps them (their statuses stay the caller's), only
 * what the command leaves behind.  The caller's signal mask, its umask
 * (the command's too), its SIGPIPE and SIGCHLD dispositions, its
 * PR_SET_CHILD_SUBREAPER flag and its soft RLIMIT_NOFILE (raised while
 * planning, the command's too) are as they were when it returns; a SIGCHLD for the caller's own child that arrives
 * during the run is held, and raised again when it returns (one for any
 * number), so the caller's handler hears of it then. */
MOAT_EXPORT int moat_run_main(int argc, char **argv);

/* `moat probe --json`: what this host offers, which external sandbox tools
 * are installed and what each backend enforces here, as the "moat.probe/1"
 * JSON document (docs/degradation.md), indented by 2 with sorted keys and
 * without a trailing newline: exactly what `moat probe --json` prints.
 * MOAT_HOST_LIMIT lowers it as it lowers a run.
 *
 * It forks (a user namespace, a fresh /proc and each tool's `--version`
 * are tried in children, bounded by a 2 s timeout per tool) and waits for
 * exactly those children, with SIGCHLD at its default meanwhile (the
 * caller's handling, SIG_IGN or a handler, is back when it returns); call
 * it where forking is safe.
 *
 * flags: none are defined yet; pass 0 (anything else: NULL, errno EINVAL).
 *
 * The result is owned by the caller: a NUL-terminated string from
 * malloc, freed with moat_free() (the library's free, so a caller with
 * another allocator frees it correctly).  NULL when no probe can be made:
 * a malformed MOAT_HOST_LIMIT (errno EINVAL; the reason is printed to
 * stderr as `moat probe` prints it) or no memory (ENOMEM).
 *
 * Why a JSON string and not a struct: the document is already a
 * versioned, documented format (the schema name changes when it does), so
 * the ABI is two functions that never need to change while the probe
 * grows fields; a struct would freeze its layout into the ABI, and every
 * binding (Python, shell) reads JSON anyway. */
MOAT_EXPORT char *moat_probe_json(int flags);

/* Free what a moat_* function returned for the caller to free; NULL is
 * allowed. */
MOAT_EXPORT void moat_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
