#include "launch/signals.h"

#include <stddef.h>

#include "util/cleanup.h"

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

void signals_forwarded_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < ARRAY_LEN(forwarded); i++)
		sigaddset(set, forwarded[i]);
}

void signals_reset_for_exec(const sigset_t *saved_mask)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	size_t i;

	for (i = 0; i < ARRAY_LEN(forwarded); i++)
		sigaction(forwarded[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sigprocmask(SIG_SETMASK, saved_mask, NULL);
}
