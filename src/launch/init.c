/* pid 1 of an OCI container: see init.h. */
#include "launch/init.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/signals.h"

int moat_init_main(int argc, char **argv)
{
	extern char **environ;
	sigset_t set, saved;
	pid_t cmd;
	int sfd;

	if (argc < 3 || strcmp(argv[1], "--") != 0) {
		fprintf(stderr, "moat: __init is internal: moat __init -- COMMAND [ARGS...]\n");
		return 125;
	}
	signals_forwarded_set(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &saved) != 0)
		return 125;
	/* Blocked before the fork, so no signal or exit is lost before the
	 * signalfd reads it. */
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "moat: init: signalfd: %s\n", strerror(errno));
		return 125;
	}
	cmd = fork();
	if (cmd < 0) {
		fprintf(stderr, "moat: init: fork: %s\n", strerror(errno));
		return 125;
	}
	if (cmd == 0) {
		signals_reset_for_exec(&saved);
		execve(argv[2], argv + 2, environ);
		fprintf(stderr, "moat: execve %s: %s\n", argv[2], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		int status;
		pid_t w;

		if (n != (ssize_t)sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			kill(cmd, SIGKILL);
			return 125;
		}
		if (si.ssi_signo != SIGCHLD) {
			kill(cmd, (int)si.ssi_signo);
			continue;
		}
		while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
			if (w != cmd)
				continue; /* an orphan, reaped */
			if (WIFSIGNALED(status))
				_exit(128 + WTERMSIG(status));
			_exit(WEXITSTATUS(status));
		}
	}
}
