#include "launch/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends/native.h"
#include "launch/cgroup.h"
#include "launch/runtime_cgroup.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/mem.h"
#include "util/pause.h"
#include "util/stale.h"

/* One message on the pipe: moat made a placeholder (the guard learns its
 * object, to remove exactly it), or moat is done.  Smaller than PIPE_BUF:
 * each write is atomic. */
struct guard_msg {
	char kind; /* 'P' placeholder made, 'D' done */
	unsigned index;
	dev_t dev;
	ino_t ino;
};

static bool any_placeholder(const struct fs_plan *fp)
{
	size_t i;

	for (i = 0; i < fp->n; i++)
		if (fp->obj[i].role == FS_PROTECT &&
		    ((fp->obj[i].placeholder && !fp->obj[i].present) || fp->obj[i].adopted))
			return true;
	return false;
}

bool guard_needed(const struct moat_plan *plan)
{
	if (plan->status == MOAT_STATUS_OFF)
		return false;
	return limits_uses_cgroup(&plan->limits) || plan->compiled.owns_work_dir || plan->compiled.cleanup_argv ||
	       (plan->compiled.in_child && plan->compiled.in_child->private_tmp_dir) || any_placeholder(&plan->fs);
}

/* The backend's own clean-up command (`runc delete --force ID`), with a
 * fixed environment and a bounded wait. */
static void run_cleanup_argv(char *const *argv)
{
	static char path[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	char *const env[] = {path, NULL};
	pid_t pid = fork();
	int i, status;

	if (pid < 0)
		return;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		syscall(SYS_close_range, 3U, ~0U, 0);
		/* The runtime gets neither the guard's ignored signals nor
		 * moat's blocked ones. */
		{
			struct sigaction dfl = {.sa_handler = SIG_DFL};
			sigset_t none;
			sigaction(SIGINT, &dfl, NULL);
			sigaction(SIGHUP, &dfl, NULL);
			sigaction(SIGPIPE, &dfl, NULL);
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
		}
		execve(argv[0], argv, env);
		_exit(127);
	}
	for (i = 0; i < 1000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return;
		moat_pause_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* The start time (field 22 of /proc/PID/stat, in clock ticks) of pid: p
 * starts at the end of field 2, each step moves to the space before the
 * next field. */
static long long proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	cleanup_fclose FILE *f = NULL;
	long long start = -1;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")) || !fgets(buf, sizeof(buf), f) || !(p = strrchr(buf, ')')))
		return -1;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%lld", &start) != 1)
		return -1;
	return start;
}

/* Wait up to 2 s for the container's init (named by runc's state.json) to
 * end by itself: moat's lifeline hung up when moat died, so it is ending
 * already, and its pid namespace with it.  `runc delete --force` on a live
 * container freezes its cgroup first, which can catch the tree mid-exit and
 * keep it (frozen) for seconds.  Only a wait: the pid is checked against
 * its start time and a pidfd, never signalled from here. */
static void wait_container_init(const char *state_json)
{
	json_t *j = json_load_file(state_json, 0, NULL);
	json_int_t pid = 0, start = -1;
	int pfd;

	if (!j)
		return;
	pid = json_integer_value(json_object_get(j, "init_process_pid"));
	start = json_integer_value(json_object_get(j, "init_process_start"));
	json_decref(j);
	if (pid <= 1 || pid > INT_MAX)
		return;
	pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pfd < 0)
		return; /* gone already */
	/* The pidfd is for whatever process has that pid now: it is the
	 * container's init only if it started when the state file says. */
	if (proc_start_time((pid_t)pid) == (long long)start) {
		struct pollfd p = {.fd = pfd, .events = POLLIN};
		while (poll(&p, 1, 2000) < 0 && errno == EINTR)
			;
	}
	close(pfd);
}

void say_placeholders_left(const char *first, size_t n)
{
	cleanup_free char *text =
	    moat_xasprintf("%s%s, which moat made for the run as a placeholder of a protected entry, could not be "
			   "removed: something was made in it, its mode changed, or moat ran out of locks, descriptors or "
			   "memory removing it; look at what it holds before "
			   "running git or an editor there",
			   first, n > 1 ? " (and other placeholders)" : "");
	moat_say("moat: warning: ", text);
}

/* fs_leftover_fn: the first path, into a PATH_MAX buffer. */
static void keep_first_path(void *ctx, const char *path, const char *kept_as)
{
	char *first = ctx;

	(void)kept_as;
	if (!first[0])
		snprintf(first, PATH_MAX, "%s", path);
}

void host_cleanup(struct moat_plan *plan, pid_t moat_pid, bool moat_died)
{
	if (limits_uses_cgroup(&plan->limits))
		tree_cgroup_destroy(&plan->limits, NULL, NULL);
	/* After a normal run the runtime removed its container itself (runc
	 * run); after moat died, the runtime was killed before it could. */
	if (moat_died && plan->compiled.cleanup_argv) {
		if (plan->compiled.cleanup_wait_state)
			wait_container_init(plan->compiled.cleanup_wait_state);
		run_cleanup_argv(plan->compiled.cleanup_argv);
	}
	/* A runtime killed before it wrote its state left `delete` nothing
	 * to go by: its cgroups, and the processes in them, by their name. */
	if (moat_died && plan->compiled.cleanup_cgroup)
		runtime_cgroups_remove(plan->compiled.cleanup_cgroup);
	{
		char first[PATH_MAX] = "";
		size_t left = fs_placeholders_remove(&plan->fs, moat_pid, keep_first_path, first);

		/* Without a mount namespace the command can chmod a
		 * placeholder and fill it (.vscode/tasks.json, .git/hooks/
		 * pre-commit): fs.write says so, but what stays on the host
		 * after the run was said nowhere.  (The guard, after moat
		 * died, has no stderr.) */
		if (left && !moat_died)
			say_placeholders_left(first, left);
	}
	backend_plan_cleanup(&plan->compiled);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close every descriptor but the guard's pipe, the directories the
 * placeholders were made in (fs_placeholders_remove works from them) and
 * the locks of the per-run directories (held until the guard removed
 * them, util/stale.h): no pipe or file of the caller's stays open in the
 * guard.  The guard is a process of its own (moat is single-threaded): it
 * may allocate. */
static void close_all_but_kept(struct moat_plan *plan, int pipe_fd)
{
	int *kept = calloc(plan->fs.n + 3, sizeof(int));
	size_t n = 0, i;
	unsigned from = 3;

	if (!kept)
		_exit(125);
	kept[n++] = pipe_fd;
	if (plan->compiled.work_dir_lock >= 3)
		kept[n++] = plan->compiled.work_dir_lock;
	if (plan->compiled.in_child && plan->compiled.in_child->private_tmp_lock >= 3)
		kept[n++] = plan->compiled.in_child->private_tmp_lock;
	for (i = 0; i < plan->fs.n; i++)
		if (plan->fs.obj[i].role == FS_PROTECT && plan->fs.obj[i].dirfd >= 3)
			kept[n++] = plan->fs.obj[i].dirfd;
	qsort(kept, n, sizeof(int), cmp_int);
	for (i = 0; i < n; i++) {
		if ((unsigned)kept[i] > from)
			syscall(SYS_close_range, from, (unsigned)kept[i] - 1, 0);
		if ((unsigned)kept[i] + 1 > from)
			from = (unsigned)kept[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
	free(kept);
	/* moat's locks on pinned directories and on the tool's shared
	 * directories were among them: the guard takes its own when it
	 * removes (resolve/sharedlock.h). */
	for (i = 0; i < plan->fs.n; i++)
		plan->fs.obj[i].lock_fd = -1;
	for (i = 0; i < plan->compiled.n_shared_dirs; i++)
		plan->compiled.shared_dirs[i].lock_fd = -1;
}

/* The guard is a fork of moat: its /proc/PID/cmdline would still be moat's,
 * the command's argv included, and a scan for the command would find it.
 * Overwrite that memory (our own copy, after the fork) with "moat-guard". */
static void retitle(void)
{
	cleanup_fclose FILE *f = fopen("/proc/self/stat", "re");
	char buf[1024], *p;
	unsigned long long start = 0, end = 0;
	int field;

	if (!f || !fgets(buf, sizeof(buf), f) || !(p = strrchr(buf, ')')))
		return;
	/* Fields 48 and 49 are arg_start and arg_end; p is in field 2. */
	for (field = 2; field < 48 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu %llu", &start, &end) != 2 || end <= start || end - start > (1u << 20))
		return;
	memset((void *)(uintptr_t)start, 0, end - start);
	snprintf((char *)(uintptr_t)start, end - start, "moat-guard");
}

/* What moat has said so far (struct guard_msg): still running, done, or
 * gone (end of file: it died). */
struct guard_inbox {
	struct moat_plan *plan;
	int fd;
	enum { GUARD_RUNNING, GUARD_DONE, GUARD_GONE } state;
};

/* One message from moat, read (blocking): a placeholder's object noted,
 * 'D' or the end of the pipe recorded. */
static void guard_take(struct guard_inbox *in)
{
	struct guard_msg m;
	ssize_t n;

	do
		n = read(in->fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(m) && m.kind == 'D') {
		in->state = GUARD_DONE;
	} else if (n == (ssize_t)sizeof(m) && m.kind == 'P' && m.index < in->plan->fs.n) {
		struct fs_obj *o = &in->plan->fs.obj[m.index];
		o->placeholder_made = true;
		o->dev = m.dev;
		o->ino = m.ino;
	} else {
		in->state = GUARD_GONE; /* end of file (or garbage): moat is gone */
	}
}

/* Take moat's messages for up to `ms` milliseconds (0: those already
 * there): true while moat still runs. */
static bool guard_still_running(struct guard_inbox *in, int ms)
{
	struct pollfd p = {.fd = in->fd, .events = POLLIN};
	struct timespec now;
	long long deadline;

	clock_gettime(CLOCK_MONOTONIC, &now);
	deadline = now.tv_sec * 1000LL + now.tv_nsec / 1000000 + ms;
	while (in->state == GUARD_RUNNING) {
		long long left;
		int n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = deadline - (now.tv_sec * 1000LL + now.tv_nsec / 1000000);
		n = poll(&p, 1, left > 0 ? (int)left : 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		guard_take(in);
	}
	return in->state == GUARD_RUNNING;
}

/* The sweep's stop (util/stale.h): once moat is done, or gone, the sweep
 * ends; what it did not reach, a longer run's guard sweeps. */
static bool guard_sweep_stop(void *arg)
{
	return !guard_still_running(arg, 0);
}

/* The sweep of stale per-run tmps begins this long after the guard, if moat
 * still runs by then.  Reading /tmp costs ~0.2 ms of CPU with some hundred
 * names there: beside moat's own start-up, on a machine with two CPUs, it
 * slowed every run that has a per-run tmp (the fallback without
 * namespaces), and moat waits for its guard before it exits, so a short
 * command waited for the rest of the sweep.  A command that runs this long
 * (an MCP server, a build) gets the sweep, after the start-up. */
#define GUARD_SWEEP_DELAY_MS 50

static _Noreturn void guard_main(struct moat_plan *plan, int fd, pid_t moat_pid)
{
	struct guard_inbox in = {.plan = plan, .fd = fd, .state = GUARD_RUNNING};
	int null;

	setsid();
	prctl(PR_SET_NAME, "moat-guard", 0, 0, 0);
	retitle();
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	}
	close_all_but_kept(plan, fd);
	/* The per-run tmps of moats that died before their guard could remove
	 * them: swept here, beside the command, not on moat's way to it (util/
	 * stale.h), once the command has run for a while, and only while it
	 * runs.  This run's own carries a live pid and stays. */
	if (plan->compiled.in_child && plan->compiled.in_child->private_tmp_dir &&
	    guard_still_running(&in, GUARD_SWEEP_DELAY_MS))
		stale_sweep(NATIVE_TMP_PREFIX, guard_sweep_stop, &in);
	while (in.state == GUARD_RUNNING)
		guard_take(&in);
	if (in.state == GUARD_DONE)
		_exit(0);
	host_cleanup(plan, moat_pid, true);
	_exit(0);
}

int guard_start(struct moat_guard *g, struct moat_plan *plan, struct moat_error *err)
{
	int p[2];
	pid_t pid, self;

	g->pid = -1;
	g->fd = -1;
	if (!guard_needed(plan))
		return 0;
	if (pipe2(p, O_CLOEXEC) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "pipe2 for moat's guard");
	/* moat's pid from moat itself: after the fork, getppid() would give
	 * whoever reaped the guard if moat had died already, and the
	 * placeholders' temporary names carry moat's pid. */
	self = getpid();
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		moat_error_set(err, MOAT_E_SYSTEM, errno, "forking moat's guard");
		return moat_error_hint_nproc(err);
	}
	if (pid == 0) {
		close(p[1]);
		guard_main(plan, p[0], self);
	}
	close(p[0]);
	g->pid = pid;
	g->fd = p[1];
	return 0;
}

void guard_placeholder_made(void *ctx, size_t index, dev_t dev, ino_t ino)
{
	struct moat_guard *g = ctx;
	struct guard_msg m = {.kind = 'P', .index = (unsigned)index, .dev = dev, .ino = ino};

	if (g->fd >= 0 && write(g->fd, &m, sizeof(m)) != (ssize_t)sizeof(m)) {
		/* The guard is gone: moat removes the placeholders itself. */
	}
}

void guard_done(struct moat_guard *g)
{
	struct guard_msg m = {.kind = 'D'};
	int status;

	if (g->fd >= 0) {
		if (write(g->fd, &m, sizeof(m)) != (ssize_t)sizeof(m)) {
			/* The guard is gone already: nothing to tell. */
		}
		close(g->fd);
		g->fd = -1;
	}
	if (g->pid > 0) {
		waitpid(g->pid, &status, 0);
		g->pid = -1;
	}
}
