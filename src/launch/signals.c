#include "launch/signals.h"

#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"

/* SIGTSTP and SIGCONT: job control.  The command is in a session of its
 * own, so a terminal's Ctrl-Z reaches only moat; moat stops the tree, then
 * itself, and continues the tree when it is continued (launch.c). */
static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGTSTP, SIGCONT};
/* Besides the forwarded ones, what the command gets as the caller had it. */
static const int restored[] = {SIGPIPE, SIGCHLD};
/* The kernel's stops for a background job at its terminal: blocked while
 * moat holds the forwarded ones, never read.  moat supervises a tree that
 * does not stop with it; stopped by one (a write with `stty tostop`, a
 * tcsetattr from the background), it left the tree running unwatched, past
 * --timeout.  Blocked, they are never sent for moat's own terminal calls
 * (the kernel lets them pass, as for a shell's tcsetpgrp); where such a
 * stop is due the relay stops the tree, then moat (launch.c). */
static const int tty_stops[] = {SIGTTOU, SIGTTIN};

static sigset_t caller_ignored, caller_mask;
/* The forwarded signals pending, blocked by the caller, when it called:
 * they arrived before the run and are the caller's (an embedder that
 * blocks SIGTERM to take it from a signalfd of its own).  moat's signalfd
 * read them, and the caller's was gone after the call; left out of the
 * forwarded set, they stay pending for the caller. */
static sigset_t caller_pending;
/* The caller's SIGPIPE and SIGCHLD handling, put back by signals_release:
 * an embedder's process goes on after moat_run_main. */
static struct sigaction caller_actions[ARRAY_LEN(restored)];
static bool captured;

static bool was_ignored(int sig)
{
	struct sigaction old;

	return sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN;
}

void signals_capture_caller(void)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, dfl = {.sa_handler = SIG_DFL};
	sigset_t pending;
	size_t i;

	/* Every call: an embedder may change its mask or dispositions between
	 * two runs. */
	captured = true;
	sigprocmask(SIG_BLOCK, NULL, &caller_mask);
	if (sigpending(&pending) != 0)
		sigemptyset(&pending);
	sigemptyset(&caller_ignored);
	sigemptyset(&caller_pending);
	for (i = 0; i < ARRAY_LEN(forwarded); i++) {
		if (was_ignored(forwarded[i]))
			sigaddset(&caller_ignored, forwarded[i]);
		if (sigismember(&caller_mask, forwarded[i]) == 1 && sigismember(&pending, forwarded[i]) == 1)
			sigaddset(&caller_pending, forwarded[i]);
	}
	for (i = 0; i < ARRAY_LEN(tty_stops); i++)
		if (was_ignored(tty_stops[i]))
			sigaddset(&caller_ignored, tty_stops[i]);
	for (i = 0; i < ARRAY_LEN(restored); i++) {
		if (was_ignored(restored[i]))
			sigaddset(&caller_ignored, restored[i]);
		sigaction(restored[i], NULL, &caller_actions[i]);
	}
	sigaction(SIGPIPE, &ign, NULL);
	sigaction(SIGCHLD, &dfl, NULL);
}

void signals_hold(void)
{
	sigset_t set;
	size_t i;

	signals_forwarded_set(&set);
	for (i = 0; i < ARRAY_LEN(tty_stops); i++)
		sigaddset(&set, tty_stops[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

void signals_tty_stops_release(void)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < ARRAY_LEN(tty_stops); i++)
		if (!captured || sigismember(&caller_mask, tty_stops[i]) != 1)
			sigaddset(&set, tty_stops[i]);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* A SIGTTOU or SIGTTIN someone sent moat while they were held: the run it
 * would have stopped has ended; it does not stop moat now. */
static void drop_held_tty_stops(void)
{
	const struct timespec now = {0, 0};
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < ARRAY_LEN(tty_stops); i++)
		if (!sigismember(&caller_mask, tty_stops[i]))
			sigaddset(&set, tty_stops[i]);
	while (sigtimedwait(&set, NULL, &now) > 0) {
	}
}

/* A child of the caller's that ended (or stopped) during the run sent its
 * SIGCHLD while moat held it for its signalfd: the caller's handler never
 * heard of it.  moat's own children are all reaped by now (children.h), so
 * a child that can be waited for is the caller's: SIGCHLD is raised again
 * for it, under the caller's own mask (pending if it blocks it).  One
 * signal stands for any number, as the kernel's own do. */
static void raise_callers_sigchld(void)
{
	const struct sigaction *a = NULL;
	siginfo_t si = {0};
	int flags = WEXITED | WNOHANG | WNOWAIT;
	size_t i;

	for (i = 0; i < ARRAY_LEN(restored); i++)
		if (restored[i] == SIGCHLD)
			a = &caller_actions[i];
	if (!a)
		return;
	if (!(a->sa_flags & SA_SIGINFO) && (a->sa_handler == SIG_DFL || a->sa_handler == SIG_IGN))
		return;
	if (!(a->sa_flags & SA_NOCLDSTOP))
		flags |= WSTOPPED | WCONTINUED;
	if (waitid(P_ALL, 0, &si, flags) == 0 && si.si_pid != 0)
		raise(SIGCHLD);
}

void signals_release(void)
{
	size_t i;

	if (!captured)
		return;
	for (i = 0; i < ARRAY_LEN(restored); i++)
		sigaction(restored[i], &caller_actions[i], NULL);
	drop_held_tty_stops();
	sigprocmask(SIG_SETMASK, &caller_mask, NULL);
	raise_callers_sigchld();
}

void signals_caller_mask(sigset_t *mask)
{
	if (captured)
		*mask = caller_mask;
	else
		sigprocmask(SIG_BLOCK, NULL, mask);
}

bool signals_caller_ignores(int sig)
{
	return captured && sigismember(&caller_ignored, sig) == 1;
}

bool signals_caller_exempt(int sig)
{
	return signals_caller_ignores(sig) || (captured && sigismember(&caller_mask, sig) == 1);
}

void signals_forwarded_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < ARRAY_LEN(forwarded); i++)
		if (!signals_caller_ignores(forwarded[i]) && !(captured && sigismember(&caller_pending, forwarded[i]) == 1))
			sigaddset(set, forwarded[i]);
}

void signals_reset_for_exec(const sigset_t *saved_mask)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, ign = {.sa_handler = SIG_IGN};
	size_t i;

	for (i = 0; i < ARRAY_LEN(forwarded); i++)
		sigaction(forwarded[i], signals_caller_ignores(forwarded[i]) ? &ign : &dfl, NULL);
	for (i = 0; i < ARRAY_LEN(restored); i++)
		sigaction(restored[i], signals_caller_ignores(restored[i]) ? &ign : &dfl, NULL);
	sigprocmask(SIG_SETMASK, saved_mask, NULL);
}

void signals_deliver_in_tree(pid_t cmd, int sig)
{
	bool init = getpid() == 1;

	/* The command leads a session of its own, an orphaned process group:
	 * the kernel drops a SIGTSTP sent to it, so the tree is stopped with
	 * SIGSTOP.  Only pid 1 of a pid namespace may say -1: there it means
	 * every process of the namespace but itself. */
	if (sig == SIGTSTP || sig == SIGCONT) {
		int how = sig == SIGTSTP ? SIGSTOP : SIGCONT;

		if (init)
			kill(-1, how);
		else
			kill(cmd, how);
		return;
	}
	kill(cmd, sig);
}

void signals_deliver_typed(pid_t cmd, int sig)
{
	kill(getpid() == 1 ? -1 : cmd, sig);
}

bool signals_stop_self(int sig)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
	sigset_t one, pending;

	sigemptyset(&one);
	sigaddset(&one, sig);
	sigaction(sig, &dfl, &old);
	raise(sig); /* blocked: pending until the unblock below */
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	/* Here once continued (or at once: a process group without a parent
	 * in the session, an orphaned one, does not stop on SIGTSTP). */
	sigprocmask(SIG_BLOCK, &one, NULL);
	sigaction(sig, &old, NULL);
	/* Continued, the kernel sent SIGCONT, which waits for the signalfd. */
	return signals_caller_ignores(SIGCONT) || (sigpending(&pending) == 0 && sigismember(&pending, SIGCONT) == 1);
}
