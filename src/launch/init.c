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
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/filter.h>

#include "launch/initview.h"
#include "launch/reaper.h"
#include "launch/signals.h"
#include "kernel/landlock.h"
#include "kernel/seccomp.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/mem.h"

/* The command's name may come from a server's config: shown escaped. */
static void say_exec_failed(const char *cmd, int e)
{
	cleanup_free char *text = moat_xasprintf("%s: %s", cmd, strerror(e));

	moat_say("moat: execve ", text);
}

static int usage(void)
{
	fprintf(stderr,
		"moat: __init is internal: moat __init [--bound-file PATH] [--symlink TEXT PATH]... [--landlock "
		"FD:ABI] [--ll r|w|l:PATH]... [--keep-fds N,...] [--env-fd N] [--unsetenv NAME]... [--seccomp-fd N] [--nofile-soft N] [--kill-rest PIDNS] "
		"[--chdir DIR] "
		"-- COMMAND "
		"[ARGS...]\n");
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
			cleanup_free char *shown = moat_text_shown(r + 2);

			fprintf(stderr, "moat: init: landlock rule for %s: %s\n", shown, strerror(-rc));
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

/* --keep-fds LIST: every fd above 2 but these and `also` is closed (the
 * runtime passed 3..N, the gaps filled by moat's launcher).  NULL: keep
 * all. */
static int close_unkept(const char *list, const int *also, size_t n_also)
{
	unsigned from = 3;
	size_t i;

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
		for (i = 0; i < n_also; i++)
			if (also[i] >= (int)from && (best < 0 || also[i] < best))
				best = also[i];
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

/* All of a descriptor moat filled (a memfd), then closed: the command does
 * not inherit it.  NULL on error (errno set). */
static char *read_fd_all(int fd, size_t *len_out)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *grown;
	ssize_t n;

	while (buf) {
		if (len + 1 >= cap) {
			grown = realloc(buf, cap * 2);
			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (n == 0) {
			close(fd);
			buf[len] = '\0';
			*len_out = len;
			return buf;
		}
		len += (size_t)n;
	}
	free(buf);
	close(fd);
	return NULL;
}

/* --env-fd N: the command's exact environment, NUL-separated NAME=VALUE
 * entries.  Under firejail, which adds variables of its own (container,
 * SHELL, PROMPT_COMMAND, ...) to what it executes, and gets only moat's
 * minimal environment itself, this is how the command gets exactly moat's
 * without any value in an argv.  NULL on error. */
static char **read_environment(int fd)
{
	size_t len = 0, n = 0, i;
	char *buf = read_fd_all(fd, &len), **env;

	if (!buf)
		return NULL;
	for (i = 0; i < len; i++)
		n += buf[i] == '\0';
	/* The strings stay in buf, which lives until execve (one more slot
	 * for a last entry without its NUL: read_fd_all terminates buf). */
	env = calloc(n + 2, sizeof(char *));
	for (i = 0, n = 0; env && i < len; i += strlen(buf + i) + 1)
		env[n++] = buf + i;
	if (!env || !env[0])
		free(buf); /* nothing points into it */
	return env;
}

/* --seccomp-fd N: moat's own filter (the raw sock_filter program that
 * bwrap's --seccomp reads), for a tool that cannot load it itself
 * (firejail).  Loaded right before execve. */
static int read_seccomp(int fd, struct moat_bpf *bpf)
{
	size_t len = 0;
	char *buf = read_fd_all(fd, &len);

	if (!buf)
		return -errno;
	if (len == 0 || len % sizeof(struct sock_filter) != 0 || len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		free(buf);
		return -EINVAL;
	}
	bpf->insns = (struct sock_filter *)(void *)buf;
	bpf->len = (unsigned short)(len / sizeof(struct sock_filter));
	return 0;
}

struct init_opts {
	const char *landlock, *keep, *bound_file, *chdir_to;
	char **rules, **unset, **links; /* links: TEXT, PATH pairs */
	int n_rules, n_unset, n_links, cmd_at, lifeline, env_fd, seccomp_fd, started_fd, stderr_fd;
	long long nofile_soft; /* -1: leave RLIMIT_NOFILE as it is */
	long long kill_rest;   /* --kill-rest PIDNS, or -1 */
};

static int fd_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return end != s && !*end && v >= 3 && v < 65536 ? (int)v : -1;
}

static long long count_arg(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	return end != s && !*end && v >= 0 ? v : -1;
}

/* The options before "--"; false on a usage error. */
static bool parse_opts(int argc, char **argv, struct init_opts *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		bool more = i + 1 < argc;

		if (strcmp(argv[i], "--") == 0) {
			o->cmd_at = i + 1;
			return o->cmd_at < argc;
		}
		if (strcmp(argv[i], "--landlock") == 0 && more)
			o->landlock = argv[++i];
		else if (strcmp(argv[i], "--ll") == 0 && more)
			o->rules[o->n_rules++] = argv[++i];
		else if (strcmp(argv[i], "--bound-file") == 0 && more)
			o->bound_file = argv[++i];
		else if (strcmp(argv[i], "--chdir") == 0 && more)
			o->chdir_to = argv[++i];
		else if (strcmp(argv[i], "--symlink") == 0 && i + 2 < argc) {
			o->links[o->n_links++] = argv[++i];
			o->links[o->n_links++] = argv[++i];
		} else if (strcmp(argv[i], "--unsetenv") == 0 && more)
			o->unset[o->n_unset++] = argv[++i];
		else if (strcmp(argv[i], "--keep-fds") == 0 && more)
			o->keep = argv[++i];
		else if (strcmp(argv[i], "--lifeline") == 0 && more && (o->lifeline = fd_arg(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--env-fd") == 0 && more && (o->env_fd = fd_arg(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--seccomp-fd") == 0 && more && (o->seccomp_fd = fd_arg(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--started-fd") == 0 && more && (o->started_fd = fd_arg(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--stderr-fd") == 0 && more && (o->stderr_fd = fd_arg(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--nofile-soft") == 0 && more &&
			 (o->nofile_soft = count_arg(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--kill-rest") == 0 && more && (o->kill_rest = count_arg(argv[i + 1])) > 0)
			i++;
		else
			return false;
	}
	return false;
}

/* --bound-file PATH: every bind the tool made is the object moat planned
 * (launch/initview.h).  0, or 125 with the reason on stderr. */
static int check_bound(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc;
	size_t len = 0;
	char *buf = fd < 0 ? NULL : read_fd_all(fd, &len);

	if (!buf) {
		fprintf(stderr, "moat: init: --bound-file %s: %s\n", path, strerror(errno));
		return 125;
	}
	rc = initview_check_bound(buf, len);
	free(buf);
	return rc;
}

/* --chdir DIR: the command's working directory, for a tool that does not
 * set it.  firejail keeps the caller's, and where its view lacks it (under
 * its private /tmp or /var/tmp) starts the command in HOME without a word:
 * a `rm -rf build` there was HOME's.  0, or 125 with the reason. */
static int enter_cwd(const char *dir)
{
	cleanup_free char *text = NULL;

	if (chdir(dir) == 0)
		return 0;
	text = moat_xasprintf("the working directory %s is not in the sandbox's view (%s): nothing was run; grant it, "
			      "or use --backend native or bwrap, which make it",
			      dir, strerror(errno));
	moat_say("moat: init: ", text);
	return 125;
}

/* Every step before the command, in order: the view checked and its
 * symlinks made, the command's environment, moat's filter read, Landlock,
 * the descriptors.  0, or 125 with the reason on stderr. */
static int init_setup(struct init_opts *o, struct moat_bpf *bpf)
{
	extern char **environ;
	int i, rc;

	if (o->bound_file && (rc = check_bound(o->bound_file)) != 0)
		return rc;
	if (o->chdir_to && (rc = enter_cwd(o->chdir_to)) != 0)
		return rc;
	for (i = 0; i + 1 < o->n_links; i += 2)
		if ((rc = initview_make_link(o->links[i], o->links[i + 1])) != 0)
			return rc;
	if (o->env_fd >= 0 && !(environ = read_environment(o->env_fd))) {
		fprintf(stderr, "moat: init: --env-fd %d: %s\n", o->env_fd, strerror(errno));
		return 125;
	}
	/* What the runtime added (runc and runsc set HOME when the
	 * environment has none): the command sees moat's environment only. */
	for (i = 0; i < o->n_unset; i++)
		unsetenv(o->unset[i]);
	if (o->seccomp_fd >= 0 && (rc = read_seccomp(o->seccomp_fd, bpf)) < 0) {
		fprintf(stderr, "moat: init: --seccomp-fd %d: %s\n", o->seccomp_fd, strerror(-rc));
		return 125;
	}
	/* --nofile-soft N: the caller's soft RLIMIT_NOFILE back, under a tool
	 * that raised its own and passed it on (nsjail raises it to 8192). */
	if (o->nofile_soft >= 0) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rlim_t)o->nofile_soft < rl.rlim_cur) {
			rl.rlim_cur = (rlim_t)o->nofile_soft;
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
				fprintf(stderr, "moat: init: --nofile-soft %lld: %s\n", o->nofile_soft,
					strerror(errno));
				return 125;
			}
		}
	}
	if (o->landlock && (rc = apply_landlock(o->landlock, o->rules, o->n_rules)) < 0) {
		fprintf(stderr, "moat: init: landlock: %s\n", strerror(-rc));
		return 125;
	}
	/* The lifeline is moat's, not the command's: close-on-exec. */
	if (o->lifeline >= 3 && fcntl(o->lifeline, F_SETFD, FD_CLOEXEC) != 0) {
		fprintf(stderr, "moat: init: --lifeline %d: %s\n", o->lifeline, strerror(errno));
		return 125;
	}
	/* So is the started pipe (become_command). */
	if (o->started_fd >= 3 && fcntl(o->started_fd, F_SETFD, FD_CLOEXEC) != 0) {
		fprintf(stderr, "moat: init: --started-fd %d: %s\n", o->started_fd, strerror(errno));
		return 125;
	}
	/* moat's own descriptors stay too: the lifeline, the started pipe and
	 * the caller's stderr, which goes back on 2 after the set-up. */
	if ((rc = close_unkept(o->keep, (const int[]){o->lifeline, o->started_fd, o->stderr_fd}, 3)) < 0) {
		fprintf(stderr, "moat: init: --keep-fds %s: %s\n", o->keep, strerror(-rc));
		return 125;
	}
	return 0;
}

static void say_started(int fd, char c)
{
	if (fd >= 0 && write(fd, &c, 1) != 1) {
		/* moat is gone or not listening: nothing to tell */
	}
}

/* --started-fd N: one byte to moat, 'e' right before execve (the tool's set-up
 * is over: what follows is the command's) and 'f' if execve failed; moat
 * reads a tool that ends without 'e' as a set-up failure (exit 125).
 *
 * The command's process under firejail (--kill-rest): become the command.
 * The filter last, so it need not allow what the steps before do;
 * no_new_privs is the tool's, set again because loading needs it. */
static int become_command(char **cmd, struct moat_bpf *bpf, int started_fd)
{
	extern char **environ;
	int rc = !bpf->len ? 0 : prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ? -errno : moat_seccomp_load(bpf);

	if (rc < 0) {
		fprintf(stderr, "moat: init: loading the seccomp filter: %s\n", strerror(-rc));
		rc = 125;
	} else {
		int e;

		say_started(started_fd, 'e');
		execve(cmd[0], cmd, environ);
		e = errno;
		say_started(started_fd, 'f');
		say_exec_failed(cmd[0], e);
		rc = e == ENOENT ? 127 : 126;
	}
	moat_bpf_free(bpf);
	return rc;
}

/* --kill-rest PIDNS (firejail): __init is not the namespace's pid 1 (the
 * tool's own monitor is), forks the command and, when it has ended, kills
 * every other process of the pid namespace -- what a `daemon &` left --
 * and reaps them, so the run ends with the command, as it does where
 * __init is pid 1.  (firejail's --deterministic-shutdown does that too, but
 * sleeps 100 ms between its SIGTERM and its SIGKILL, whether anything is
 * left or not.)  kill(-1) reaches only the caller's pid namespace: PIDNS is
 * the inode of moat's own, and __init refuses to start in that one (a tool
 * that made none), where kill(-1) would reach every process of the user.
 * __init is made undumpable before the fork: the command, a process of the
 * same user, cannot open its memory (/proc/PID/mem) to act outside moat's
 * filter, which is loaded in the command's process only.  It is the
 * subreaper of the command's tree, so what is left is its to reap. */
static int run_then_kill_rest(char **cmd_argv, struct moat_bpf *bpf, unsigned long long host_pidns, int started_fd)
{
	struct stat ns = {0};
	sigset_t saved;
	int sfd, status = 0;
	pid_t cmd;

	if (stat("/proc/self/ns/pid", &ns) != 0 || (unsigned long long)ns.st_ino == host_pidns) {
		fprintf(stderr, "moat: init: --kill-rest: %s\n",
			(unsigned long long)ns.st_ino == host_pidns ? "the tool made no pid namespace"
								    : strerror(errno));
		moat_bpf_free(bpf);
		return 125;
	}
	/* From here on __init ends with _exit, as pid 1 does: a sanitizer's
	 * exit-time check cannot inspect an undumpable process. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		fprintf(stderr, "moat: init: prctl: %s\n", strerror(errno));
		_exit(125);
	}
	signals_capture_caller();
	sfd = reaper_signalfd(&saved);
	cmd = sfd < 0 ? -1 : fork();
	if (cmd < 0) {
		fprintf(stderr, "moat: init: %s: %s\n", sfd < 0 ? "signalfd" : "fork", strerror(errno));
		_exit(125);
	}
	if (cmd == 0) {
		signals_reset_for_exec(&saved);
		_exit(become_command(cmd_argv, bpf, started_fd));
	}
	if (reaper_run(cmd, sfd, -1, &status) != REAPER_EXITED) {
		kill(cmd, SIGKILL);
		status = 125 << 8;
	}
	/* Every process of the tree is a descendant of this subreaper: once
	 * none is left to reap, none is left.  A fork racing the kill either is
	 * in the list it walks or fails for the pending SIGKILL. */
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0) {
	}
	_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
}

int moat_init_main(int argc, char **argv)
{
	extern char **environ;
	struct init_opts o = {.lifeline = -1, .env_fd = -1, .seccomp_fd = -1, .started_fd = -1, .stderr_fd = -1,
			      .cmd_at = -1, .nofile_soft = -1, .kill_rest = -1};
	struct moat_bpf bpf = {0};
	sigset_t saved;
	int rc, lifeline;
	pid_t cmd;
	int sfd, status = 0;

	o.rules = calloc((size_t)argc + 1, sizeof(char *));
	o.unset = calloc((size_t)argc + 1, sizeof(char *));
	o.links = calloc((size_t)argc + 1, sizeof(char *));
	if (!o.rules || !o.unset || !o.links)
		return 125;
	/* The filter is loaded only where __init is not pid 1 and forks the
	 * command (--kill-rest): a tool that loads none of moat's (firejail). */
	if (!parse_opts(argc, argv, &o) || (o.seccomp_fd >= 0 && o.kill_rest < 0))
		return usage();
	rc = init_setup(&o, &bpf);
	free(o.rules);
	free(o.unset);
	free(o.links);
	if (rc)
		return rc; /* its reason went to the tool's stderr: moat's report */
	/* The caller's stderr back on 2, for the command (and for what this
	 * init says from now on). */
	if (o.stderr_fd >= 0) {
		if (dup2(o.stderr_fd, 2) < 0) {
			fprintf(stderr, "moat: init: --stderr-fd %d: %s\n", o.stderr_fd, strerror(errno));
			return 125;
		}
		close(o.stderr_fd);
	}
	if (o.kill_rest >= 0)
		return run_then_kill_rest(argv + o.cmd_at, &bpf, (unsigned long long)o.kill_rest, o.started_fd);
	lifeline = o.lifeline;
	/* What the runtime left ignored stays so for the command. */
	signals_capture_caller();
	sfd = reaper_signalfd(&saved);
	if (sfd < 0) {
		fprintf(stderr, "moat: init: signalfd: %s\n", strerror(errno));
		return 125;
	}
	/* moat died while the tool set the sandbox up (bwrap is not tied to
	 * moat: backend.h, outlives_moat): the command does not start. */
	if (lifeline >= 0) {
		struct pollfd gone = {.fd = lifeline, .events = POLLIN};
		if (poll(&gone, 1, 0) > 0 && (gone.revents & (POLLHUP | POLLERR)))
			_exit(137);
	}
	/* Undumpable before the fork, as run_then_kill_rest is: the command, a
	 * process of the same user in the same Landlock domain, opened
	 * /proc/1/fd/N -- the lifeline pipe -- for writing, and holding that
	 * writer kept the pipe from hanging up when moat was SIGKILLed: the
	 * tree outlived moat with proc.tree said enforced (bwrap).  Now those
	 * files are not the command's to open (nor /proc/1/mem).  From here on
	 * __init ends with _exit: a sanitizer's exit-time check cannot inspect
	 * an undumpable process. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		fprintf(stderr, "moat: init: prctl: %s\n", strerror(errno));
		_exit(125);
	}
	cmd = fork();
	if (cmd < 0) {
		fprintf(stderr, "moat: init: fork: %s\n", strerror(errno));
		_exit(125);
	}
	if (cmd == 0) {
		int e;

		signals_reset_for_exec(&saved);
		say_started(o.started_fd, 'e');
		execve(argv[o.cmd_at], argv + o.cmd_at, environ);
		e = errno;
		say_started(o.started_fd, 'f');
		say_exec_failed(argv[o.cmd_at], e);
		_exit(e == ENOENT ? 127 : 126);
	}
	if (o.started_fd >= 0)
		close(o.started_fd);
	switch (reaper_run(cmd, sfd, lifeline, &status)) {
	case REAPER_EXITED:
		/* pid 1 cannot die of a default signal: a signal's end is
		 * passed on as 128+N, as moat's exit status contract says. */
		_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
	case REAPER_MOAT_GONE:
		/* As pid 1, exiting takes every process of the namespace
		 * along. */
		_exit(137);
	case REAPER_FAILED:
		break;
	}
	kill(cmd, SIGKILL);
	_exit(125);
}
