/* The init's loop: see reaper.h. */
#include "launch/reaper.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/signals.h"

int reaper_signalfd(sigset_t *saved)
{
	sigset_t set;

	signals_forwarded_set(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, saved) != 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC);
}

/* Every exited child reaped; true when one of them was the command. */
static bool reap(pid_t cmd, int *status)
{
	int st;
	pid_t w;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0)
		if (w == cmd) {
			*status = st;
			return true;
		}
	return false;
}

enum reaper_end reaper_run(pid_t cmd, int sfd, int lifeline, int *status)
{
	for (;;) {
		struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN}, {.fd = lifeline, .events = POLLIN}};
		struct signalfd_siginfo si;
		ssize_t n;

		if (poll(pfd, lifeline >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return REAPER_FAILED;
		}
		if (lifeline >= 0 && (pfd[1].revents & (POLLHUP | POLLERR | POLLIN))) {
			unsigned char sigs[64];
			ssize_t got = read(lifeline, sigs, sizeof(sigs));

			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				return REAPER_MOAT_GONE;
			for (n = 0; n < got; n++) {
				int sig = sigs[n] & ~SIGNALS_TYPED;

				if (sig <= 0 || sig >= NSIG || sig == SIGCHLD || sig == SIGKILL)
					continue;
				if (sigs[n] & SIGNALS_TYPED)
					signals_deliver_typed(cmd, sig);
				else
					signals_deliver_in_tree(cmd, sig);
			}
			continue;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		n = read(sfd, &si, sizeof(si));
		if (n != (ssize_t)sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			return REAPER_FAILED;
		}
		if (si.ssi_signo != SIGCHLD)
			signals_deliver_in_tree(cmd, (int)si.ssi_signo);
		else if (reap(cmd, status))
			return REAPER_EXITED;
	}
}
