#include "launch/signals.h"

#include <stddef.h>

#include "util/cleanup.h"

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
/* Besides the forwarded ones, what the command gets as the caller had it. */
static const int restored[] = {SIGPIPE, SIGCHLD};

static sigset_t caller_ignored, caller_mask;
static bool captured;

static bool was_ignored(int sig)
{
	struct sigaction old;

	return sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN;
}

void signals_capture_caller(void)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, dfl = {.sa_handler = SIG_DFL};
	size_t i;

	if (captured)
		return;
	captured = true;
	sigprocmask(SIG_BLOCK, NULL, &caller_mask);
	sigemptyset(&caller_ignored);
	for (i = 0; i < ARRAY_LEN(forwarded); i++)
		if (was_ignored(forwarded[i]))
			sigaddset(&caller_ignored, forwarded[i]);
	for (i = 0; i < ARRAY_LEN(restored); i++)
		if (was_ignored(restored[i]))
			sigaddset(&caller_ignored, restored[i]);
	sigaction(SIGPIPE, &ign, NULL);
	sigaction(SIGCHLD, &dfl, NULL);
}

void signals_hold(void)
{
	sigset_t set;

	signals_forwarded_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

void signals_release(void)
{
	if (captured)
		sigprocmask(SIG_SETMASK, &caller_mask, NULL);
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

void signals_forwarded_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < ARRAY_LEN(forwarded); i++)
		if (!signals_caller_ignores(forwarded[i]))
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
