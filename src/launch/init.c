/* moat's helper inside an external sandbox: see init.h. */
#include "launch/init.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/signals.h"
#include "native/landlock.h"

static int usage(void)
{
	fprintf(stderr, "moat: __init is internal: moat __init [--landlock FD:ABI] [--ll r|w|l:PATH]... [--keep-fds "
			"N,...] [--exec] -- COMMAND [ARGS...]\n");
	return 125;
}

/* The ruleset the parent built from the planned objects (their inodes),
 * the rules for the sandbox tool's own mounts (its root, /tmp, /proc: new
 * inodes only this side can name), then restrict.  The ruleset fd is
 * closed: the command does not inherit it. */
static int apply_landlock(const char *spec, char **rules, int n_rules)
{
	struct native_landlock l;
	char *end;
	long fd, abi;
	int i, rc;

	fd = strtol(spec, &end, 10);
	if (end == spec || *end != ':' || fd < 3)
		return -EINVAL;
	abi = strtol(end + 1, &end, 10);
	if (*end || abi < 1 || abi > 64)
		return -EINVAL;
	landlock_plan_init(&l);
	l.ruleset_fd = (int)fd;
	l.abi = (int)abi;
	l.handled_fs = landlock_rights_for_abi(l.abi, &l.read_rights, &l.write_rights);
	for (i = 0; i < n_rules; i++) {
		const char *r = rules[i];
		uint64_t rights = r[0] == 'w' ? l.write_rights : r[0] == 'r' ? l.read_rights : LANDLOCK_CHILD_LIST;

		if ((r[0] != 'w' && r[0] != 'r' && r[0] != 'l') || r[1] != ':')
			return -EINVAL;
		rc = landlock_child_add(&l, r + 2, rights);
		if (rc < 0 && rc != -ENOENT) {
			fprintf(stderr, "moat: init: landlock rule for %s: %s\n", r + 2, strerror(-rc));
			return rc;
		}
	}
	/* no_new_privs is the tool's (bwrap and the OCI runtimes set it); set
	 * again here, it costs nothing and landlock_restrict_self needs it. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	rc = landlock_child_restrict(&l);
	close(l.ruleset_fd);
	return rc;
}

/* --keep-fds LIST: every fd above 2 but these is closed (the runtime
 * passed 3..N, the gaps filled by moat's launcher).  NULL: keep all. */
static int close_unkept(const char *list, int also)
{
	unsigned from = 3;

	if (!list)
		return 0;
	for (;;) {
		const char *p = list;
		char *end;
		long best = -1;

		/* The smallest listed fd at or above `from`. */
		while (*p) {
			long v = strtol(p, &end, 10);
			if (end == p || (*end && *end != ','))
				return -EINVAL;
			if (v >= (long)from && (best < 0 || v < best))
				best = v;
			p = *end ? end + 1 : end;
		}
		if (also >= (int)from && (best < 0 || also < best))
			best = also;
		if (best < 0)
			break;
		if ((unsigned)best > from && syscall(SYS_close_range, from, (unsigned)best - 1, 0) != 0)
			return -errno;
		from = (unsigned)best + 1;
	}
	if (syscall(SYS_close_range, from, ~0U, 0) != 0)
		return -errno;
	return 0;
}

int moat_init_main(int argc, char **argv)
{
	extern char **environ;
	sigset_t set, saved;
	const char *landlock = NULL, *keep = NULL;
	char **rules;
	int n_rules = 0, i, cmd_at = -1, rc, lifeline = -1;
	bool exec_only = false;
	pid_t cmd;
	int sfd;

	rules = calloc((size_t)argc + 1, sizeof(char *));
	if (!rules)
		return 125;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			cmd_at = i + 1;
			break;
		}
		if (strcmp(argv[i], "--landlock") == 0 && i + 1 < argc)
			landlock = argv[++i];
		else if (strcmp(argv[i], "--ll") == 0 && i + 1 < argc)
			rules[n_rules++] = argv[++i];
		else if (strcmp(argv[i], "--exec") == 0)
			exec_only = true;
		else if (strcmp(argv[i], "--keep-fds") == 0 && i + 1 < argc)
			keep = argv[++i];
		else if (strcmp(argv[i], "--lifeline") == 0 && i + 1 < argc)
			lifeline = atoi(argv[++i]);
		else
			return usage();
	}
	if (cmd_at < 0 || cmd_at >= argc)
		return usage();
	if (landlock && (rc = apply_landlock(landlock, rules, n_rules)) < 0) {
		fprintf(stderr, "moat: init: landlock: %s\n", strerror(-rc));
		return 125;
	}
	free(rules);
	/* The lifeline is moat's, not the command's: close-on-exec. */
	if (lifeline >= 3 && fcntl(lifeline, F_SETFD, FD_CLOEXEC) != 0) {
		fprintf(stderr, "moat: init: --lifeline %d: %s\n", lifeline, strerror(errno));
		return 125;
	}
	if ((rc = close_unkept(keep, lifeline)) < 0) {
		fprintf(stderr, "moat: init: --keep-fds %s: %s\n", keep, strerror(-rc));
		return 125;
	}
	/* Under bwrap, which is an init already: become the command. */
	if (exec_only) {
		execve(argv[cmd_at], argv + cmd_at, environ);
		fprintf(stderr, "moat: execve %s: %s\n", argv[cmd_at], strerror(errno));
		return errno == ENOENT ? 127 : 126;
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
		execve(argv[cmd_at], argv + cmd_at, environ);
		fprintf(stderr, "moat: execve %s: %s\n", argv[cmd_at], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	for (;;) {
		struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN}, {.fd = lifeline, .events = POLLIN}};
		struct signalfd_siginfo si;
		ssize_t n;
		int status;
		pid_t w;

		if (poll(pfd, lifeline >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			kill(cmd, SIGKILL);
			return 125;
		}
		/* moat is gone (its lifeline hung up): end the sandbox.  As pid 1
		 * of the container, exiting takes every process of it along. */
		if (lifeline >= 0 && (pfd[1].revents & (POLLHUP | POLLERR | POLLIN)))
			_exit(137);
		if (!(pfd[0].revents & POLLIN))
			continue;
		n = read(sfd, &si, sizeof(si));
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
