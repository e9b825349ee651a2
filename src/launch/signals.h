/* The signals moat forwards to the command, and the mask handling around
 * fork: moat blocks them and reads them with signalfd; the command gets
 * them unblocked and with default dispositions. */
#ifndef MOAT_LAUNCH_SIGNALS_H
#define MOAT_LAUNCH_SIGNALS_H

#include <signal.h>

#include <stdbool.h>
#include <sys/types.h>

/* Records which signals the caller left ignored (nohup ignores SIGHUP, a
 * shell's background job SIGINT and SIGQUIT), its mask and its SIGPIPE and
 * SIGCHLD handling, on every call, before moat changes any disposition;
 * then sets moat's own: SIGPIPE ignored (a broken stderr or
 * report pipe is an error to report, not a death) and SIGCHLD default
 * (ignored, children would be reaped away from moat's wait).  Called first
 * by moat_run_main and by moat __init. */
void signals_capture_caller(void);

/* Blocks the forwarded signals (and SIGTTOU, SIGTTIN: signals.c) once the
 * plan is made, before moat changes
 * what only it can undo (a per-run directory made while planning is swept
 * by a later run if moat dies: util/stale.h): a SIGTERM, SIGINT or SIGHUP
 * then cannot end moat between a change it makes (a placeholder, the
 * tree's cgroup, the report's file) and the code that undoes it.  One that
 * arrives is forwarded to the command once it runs (launch reads it from
 * its signalfd), or acts when signals_release() restores the caller's
 * mask.  Before it (parsing, probing, planning, which can block on a hung
 * mount) they act as on any program: the command never starts. */
void signals_hold(void);
/* SIGTTOU and SIGTTIN as the caller had them (unblocked unless it blocked
 * them), for a run whose command shares moat's process group and terminal
 * (--mode off): the kernel then stops the whole job, moat with it. */
void signals_tty_stops_release(void);
/* Puts back the caller's mask and its SIGPIPE and SIGCHLD handling. */
void signals_release(void);

/* The signal mask the caller started moat with (what the command gets). */
void signals_caller_mask(sigset_t *mask);

/* The caller had sig ignored when moat started. */
bool signals_caller_ignores(int sig);

/* The caller had sig ignored or blocked when moat started: for SIGTTOU
 * and SIGTTIN, the kernel would not have stopped moat (a background write
 * under `stty tostop` goes through), so moat does not stop itself either. */
bool signals_caller_exempt(int sig);

/* SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGTSTP,
 * SIGCONT, less those the caller ignores: those stay ignored, in moat and in
 * the command; and less those pending, blocked by the caller, when it
 * called: those stay pending for it (an embedder's, sent before the run). */
void signals_forwarded_set(sigset_t *set);

/* The dispositions the command gets: what the caller had for the forwarded
 * signals, SIGPIPE and SIGCHLD (ignored if the caller ignored them, else
 * default), and the mask moat started with.  Async-signal-safe. */
void signals_reset_for_exec(const sigset_t *saved_mask);

/* In a sandbox's init (moat's native pid 1, moat __init): pass a forwarded
 * signal on to the command, SIGTSTP as SIGSTOP and SIGCONT to the whole
 * namespace when the caller is its pid 1, else to cmd alone. */
void signals_deliver_in_tree(pid_t cmd, int sig);

/* A signal typed at the command's terminal where no process group gets it
 * from the pty (launch/term.h): a terminal sends it to its whole
 * foreground process group, so the command's children get it too (a
 * shell waits for its foreground child, and goes only when that child
 * died of it).  To every process of the namespace when the caller is its
 * pid 1, else to cmd alone.  On the lifeline a byte of its own:
 * SIGNALS_TYPED + sig. */
#define SIGNALS_TYPED 0x80
void signals_deliver_typed(pid_t cmd, int sig);

/* Job control for moat itself, once it stopped the tree: stop as a
 * default `sig` would (SIGTSTP: the shell sees a stopped job, status 148;
 * SIGTTOU: "Stopped (tty output)"), and return when continued.  `sig`
 * stays blocked (SIGTSTP for moat's signalfd; SIGTTOU and SIGTTIN are held
 * while moat supervises: signals_hold).  false when moat did not stop (a
 * process group without a parent in the session, an orphaned one, does
 * not stop on these). */
bool signals_stop_self(int sig);

#endif
