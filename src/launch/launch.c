#include "launch/launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "launch/cgroup.h"
#include "util/timeline.h"
#include "launch/child.h"
#include "launch/children.h"
#include "launch/fence.h"
#include "launch/signals.h"
#include "launch/sysvipc.h"
#include "launch/term.h"
#include "util/cleanup.h"
#include "util/mem.h"

long long moat_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Kill and reap whatever is left of the tree after the command ended:
 * without a pid namespace, moat is a subreaper, so orphans (double-forked
 * daemons) are reparented to it and can be found as its children.  The
 * children moat had before the launch (`before`: the caller's own, and
 * `spare`, the guard) are not the tree's: left alone, unreaped. */
static void reap_orphans(pid_t spare, const struct child_set *before)
{
	cleanup_child_set struct child_set now = {0};
	int round;

	for (round = 0; round < 100; round++) {
		int found = 0;
		size_t i;

		child_set_read(&now);
		for (i = 0; i < now.n; i++) {
			pid_t pid = now.pids[i];

			if (pid == spare || child_set_has(before, pid))
				continue;
			kill(pid, SIGKILL);
			waitpid(pid, NULL, WNOHANG);
			found = 1;
		}
		if (!found)
			return;
		usleep(1000);
	}
}

/* Reap what of moat's children has ended, but those in `before`: the
 * command (its status into *child_status, *child_done set) and the orphans
 * re-parented to moat.  The command is waited for by its pid, not found in
 * the list of children: a list that could not be read (out of descriptors)
 * left it a zombie and moat polling forever. */
static void reap_ended(pid_t child, const struct child_set *before, struct child_set *now, bool *child_done,
		       int *child_status)
{
	size_t i;
	int status;

	if (!*child_done && waitpid(child, &status, WNOHANG) == child) {
		*child_done = true;
		*child_status = status;
	}
	child_set_read(now);
	for (i = 0; i < now->n; i++) {
		pid_t pid = now->pids[i];

		if (pid != child && !child_set_has(before, pid))
			waitpid(pid, &status, WNOHANG);
	}
}

/* PR_SET_CHILD_SUBREAPER back to what the caller had (an embedder's
 * process outlives the run); -1: moat did not change it. */
static void restore_subreaper(int *was)
{
	if (*was >= 0)
		prctl(PR_SET_CHILD_SUBREAPER, (unsigned long)*was, 0, 0, 0);
}

/* Both ends of a pipe, closed at scope exit unless already closed (-1). */
static void close_pair(int (*pair)[2])
{
	moat_closep(&(*pair)[0]);
	moat_closep(&(*pair)[1]);
}
#define cleanup_pair __attribute__((cleanup(close_pair)))

static void close_end(int *fd)
{
	moat_closep(fd);
	*fd = -1;
}

/* moat's signal mask as it was before launch_run blocked the forwarded
 * signals: restored on every way out. */
static void restore_mask(sigset_t *saved)
{
	sigprocmask(SIG_SETMASK, saved, NULL);
}

static void decode_status(int status, struct moat_launch_result *r)
{
	if (WIFEXITED(status)) {
		r->exited = true;
		r->exit_status = WEXITSTATUS(status);
		r->exit_code = r->exit_status;
	} else if (WIFSIGNALED(status)) {
		r->signal = WTERMSIG(status);
		r->exit_code = 128 + r->signal;
	}
}

/* What the tool wrote to its stderr (backend.h, stderr_to): copied to
 * moat's own stderr as it comes, the last TOOL_WORDS_MAX bytes kept for
 * the report. */
#define TOOL_WORDS_MAX 600
struct tool_words {
	char text[TOOL_WORDS_MAX];
	size_t len;
};

/* One read: > 0 bytes read, 0 end of file, < 0 nothing now (or an error). */
static ssize_t tool_words_read(struct tool_words *t, int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && errno != EAGAIN && errno != EINTR)
		return 0; /* unreadable: done with it */
	if (n <= 0)
		return n;
	if (write(2, buf, (size_t)n) != n) {
		/* best effort: the report keeps it anyway */
	}
	if ((size_t)n >= sizeof(t->text)) {
		memcpy(t->text, buf + n - (ssize_t)sizeof(t->text), sizeof(t->text));
		t->len = sizeof(t->text);
	} else {
		size_t keep = t->len + (size_t)n > sizeof(t->text) ? sizeof(t->text) - (size_t)n : t->len;
		memmove(t->text, t->text + t->len - keep, keep);
		memcpy(t->text + keep, buf, (size_t)n);
		t->len = keep + (size_t)n;
	}
	return n;
}

/* The tool ended before moat __init ran the command: its own set-up failed
 * (bwrap: a mount, a namespace, a limit).  Its exit status is not the
 * command's: 125 with the tool's status in the failure; a tool killed by a
 * signal keeps 128+N. */
static void tool_setup_failed(const struct moat_plan *plan, int status, const struct tool_words *said,
			      struct moat_launch_result *r)
{
	const char *tool = plan->compiled.tool_path ? plan->compiled.tool_path : plan->backend;
	char words[TOOL_WORDS_MAX + 1];
	size_t i, n = 0;

	/* Its words on one line: newlines become "; ", the last one dropped,
	 * control bytes dropped. */
	for (i = 0; i < said->len && n < sizeof(words) - 3; i++) {
		unsigned char c = (unsigned char)said->text[i];
		if (c == '\n') {
			if (i + 1 < said->len) {
				words[n++] = ';';
				words[n++] = ' ';
			}
		} else if (c >= 0x20 && c != 0x7f) {
			words[n++] = (char)c;
		}
	}
	words[n] = '\0';
	if (WIFSIGNALED(status)) {
		snprintf(r->failure, sizeof(r->failure), "%s was killed by signal %d before the command started%s%s", tool,
			 WTERMSIG(status), n ? ": " : "", words);
		return;
	}
	if (n)
		snprintf(r->failure, sizeof(r->failure),
			 "%s failed to set up the sandbox (it exited %d before the command started): %s", tool,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, words);
	else
		snprintf(r->failure, sizeof(r->failure), "%s failed to set up the sandbox (it exited %d before the "
							 "command started%s)",
			 tool, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 plan->compiled.stderr_to >= 0 ? ", saying nothing" : "; its message is on stderr");
	r->exited = false;
	r->exit_status = 0;
	r->exit_code = 125;
}

/* --cpu: how often the tree's CPU time is read.  The tree may overrun the
 * limit by this much wall time per CPU. */
#define CPU_POLL_MS 50

/* --pids held by moat's cgroup: the first fork or thread it refuses is said
 * while the run goes on, not only at its end.  A runtime that cannot start
 * a thread may wait forever (node under --pids 5 sat in futex_wait until
 * killed), and a message at the end came only once someone killed it.  A
 * v2 pids.events wakes moat's poll (POLLPRI); a v1 one notifies nothing
 * and is read this often instead, only while the limit was not reached. */
#define PIDS_POLL_MS 1000

struct pids_watch {
	const struct tree_counters *c;
	bool said;
	long long next_ns; /* v1: the next read */
};

static bool pids_watching(const struct pids_watch *w, bool child_done)
{
	return w->c->pids_events >= 0 && !w->said && !child_done;
}

/* The poll timeout, lowered to the next v1 read. */
static void pids_watch_timeout(const struct pids_watch *w, long long now, int *timeout_ms)
{
	int ms;

	if (w->c->pids_notify)
		return;
	ms = w->next_ns > now ? (int)((w->next_ns - now) / 1000000LL) + 1 : 0;
	if (*timeout_ms < 0 || *timeout_ms > ms)
		*timeout_ms = ms;
}

static void pids_watch_check(struct pids_watch *w, const struct moat_policy *p, short revents, bool raw)
{
	long long now = moat_now_ns();
	int64_t refused;

	if (w->c->pids_notify ? !revents : now < w->next_ns)
		return;
	w->next_ns = now + PIDS_POLL_MS * 1000000LL;
	if ((refused = tree_cgroup_pids_refused(w->c)) < 1)
		return;
	w->said = true;
	/* In raw mode the caller's terminal does not return the carriage. */
	fprintf(stderr,
		"%smoat: warning: process limit reached (--pids %lld): the tree's cgroup refused a fork or thread; "
		"the command runs on, but may fail or wait forever (a runtime such as node that cannot start its "
		"threads hangs); a higher --pids gives it more%s",
		raw ? "\r\n" : "", (long long)p->limits.pids, raw ? "\r\n" : "\n");
}

/* How a signal of moat's reaches the tree (launch_run's loop). */
struct tree_route {
	const struct moat_plan *plan;
	pid_t child;       /* moat's child; -1 once reaped (its pid may be
			    * another's then) */
	pid_t group;       /* its process group (its pid, from its setsid):
			    * no pid is reused while it names a group, so
			    * this stays valid after the child is reaped */
	int *lifeline;     /* the write end, with signals_via_lifeline */
	bool via_lifeline; /* moat __init inside passes them on (backend.h) */
	bool pid_init;     /* native: the child is the pid namespace's init */
	bool own_group;    /* the child is the command, leading its own
			    * session (native without a pid namespace) */
	bool can_stop;     /* job control can stop the whole tree */
};

static struct tree_route tree_route_of(const struct moat_plan *plan, pid_t child, int *lifeline)
{
	bool sandboxed = plan->status != MOAT_STATUS_OFF;
	const struct backend_plan *bp = &plan->compiled;
	struct tree_route t = {.plan = plan, .child = child, .group = child, .lifeline = lifeline};

	t.via_lifeline = sandboxed && bp->lifeline_to >= 0 && bp->signals_via_lifeline;
	t.pid_init = sandboxed && bp->in_child && bp->in_child->pid_init;
	t.own_group = sandboxed && bp->in_child && !bp->in_child->pid_init;
	/* Unsandboxed, the command shares moat's process group: SIGTSTP
	 * stops it as it stops moat.  firejail and runsc have no way in. */
	t.can_stop = !sandboxed || t.via_lifeline || bp->in_child;
	return t;
}

/* Without a pid namespace the command's process group is not the whole
 * tree: a process of it that leads a session of its own (setsid, a
 * daemon) is outside it, and ran on while moat was stopped -- past
 * --timeout and --cpu, which moat watches.  The tree's cgroup, where
 * proc.tree has one, is frozen with the group stopped and thawed before
 * the group continues.  false when the freeze did not take. */
static bool tree_freeze(const struct tree_route *t, bool on)
{
	const struct limits_plan *lp = &t->plan->limits;

	if (!t->own_group || lp->tree_kill == CG_KILL_NONE)
		return true;
	return tree_cgroup_freeze(lp, on) == 0;
}

/* One forwarded signal to the tree. */
static void tree_signal(const struct tree_route *t, int sig)
{
	if (t->via_lifeline) {
		unsigned char b = (unsigned char)sig;

		/* The tool stops with the tree: runc copies the terminal's
		 * input to the container, and would go on reading what the
		 * user types at the shell while the job is stopped. */
		if (sig == SIGCONT && t->child > 0)
			kill(t->child, SIGCONT);
		/* Non-blocking: a full pipe (64 KiB of signals unread) drops
		 * this one rather than stall moat. */
		if (*t->lifeline >= 0 && write(*t->lifeline, &b, 1) != 1) {
			/* __init is gone or not reading: nothing to deliver to */
		}
		if (sig == SIGTSTP && t->child > 0)
			kill(t->child, SIGSTOP);
		return;
	}
	if (t->child <= 0)
		return;
	if ((sig == SIGTSTP || sig == SIGCONT) && t->own_group) {
		/* The command leads an orphaned process group, where the
		 * kernel drops SIGTSTP: stop (or continue) the group. */
		int how = sig == SIGTSTP ? SIGSTOP : SIGCONT;
		if (sig == SIGCONT)
			tree_freeze(t, false);
		kill(-t->group, how);
		kill(t->child, how);
		return;
	}
	kill(t->child, sig);
}

/* Ctrl-C or Ctrl-\ typed where no process group gets it from the pty
 * (term.h): through moat __init, to the whole tree, as a terminal sends it
 * to its foreground group (signals.h, signals_deliver_typed); where moat
 * has no way in (firejail, gVisor), to its child, as any forwarded one. */
static void tree_signal_typed(const struct tree_route *t, int sig)
{
	unsigned char b = (unsigned char)(SIGNALS_TYPED | sig);

	if (!t->via_lifeline) {
		tree_signal(t, sig);
		return;
	}
	if (*t->lifeline >= 0 && write(*t->lifeline, &b, 1) != 1) {
		/* __init is gone or not reading: nothing to deliver to */
	}
}

/* Ctrl-Z (a SIGTSTP to moat, or typed at the command's terminal where
 * the kernel would drop it: term.h): the tree stops, then moat, as any job
 * would; when the shell continues moat (fg, bg), the tree continues.
 * Where the tree cannot be stopped, moat does not stop either: the shell
 * must not get its prompt back while the command writes to the terminal.
 * The caller's terminal is the shell's again while moat is stopped.  moat
 * stops by `sig`: SIGTSTP, or SIGTTOU for output due from the background
 * under `stty tostop` (the shell says "tty output").  false when moat did
 * not stop: the tree cannot, or moat's process group is orphaned. */
static bool tree_job_stop(const struct tree_route *t, struct term *term, int sig)
{
	bool stopped;

	if (!t->can_stop)
		return false;
	tree_signal(t, SIGTSTP);
	if (!tree_freeze(t, true)) {
		/* A part of the tree would run on unwatched: neither stops. */
		tree_signal(t, SIGCONT);
		return false;
	}
	term_restore(term);
	stopped = signals_stop_self(sig);
	term_raw(term);
	tree_signal(t, SIGCONT);
	return stopped;
}

/* --timeout: SIGTERM to the tree (and to its process group when the
 * command leads one: what it started there too). */
static void tree_terminate(const struct tree_route *t, bool child_done)
{
	if (t->via_lifeline) {
		tree_signal(t, SIGTERM);
		return;
	}
	if (!child_done)
		kill(t->child, SIGTERM);
	if (!t->pid_init)
		kill(-t->group, SIGTERM);
}

/* The tree ends: through its cgroup, by killing the pid namespace's init,
 * or, when moat __init is that init inside a tool (bwrap), by hanging up
 * its lifeline, which __init answers by ending the namespace; the tool
 * then exits by itself, and is killed only if it has not after
 * MOAT_TOOL_GRACE_MS (*tool_kill_ns).  A tool killed first could strand
 * its own half-made sandbox (backend.h, outlives_moat). */
#define MOAT_TOOL_GRACE_MS 2000
static void end_tree(const struct tree_route *t, bool child_done, long long *tool_kill_ns)
{
	if (t->via_lifeline && *t->lifeline >= 0) {
		close_end(t->lifeline);
		if (!child_done)
			*tool_kill_ns = moat_now_ns() + (long long)MOAT_TOOL_GRACE_MS * 1000000LL;
	} else if (!child_done && !t->via_lifeline) {
		kill(t->child, SIGKILL);
	}
	if (t->plan->limits.tree_kill != CG_KILL_NONE)
		tree_cgroup_kill(&t->plan->limits);
}

/* What serves net allow: the fence (kernel/netfence.h) and the proxy mode
 * (kernel/netproxy.h), with the rules of the policy (launch/fence.h). */
struct served {
	struct netfence *fence;
	struct netproxy *proxy;
};

/* The command handed the fence and the proxy's listeners over (child.c):
 * serve them from now on.  The socket is done with either way. */
static int fence_take(struct served *sv, const struct fence_rules *fr, int *sock, struct moat_error *err)
{
	int fds[5];
	size_t n = 0;

	if (netfence_recv_fdv(*sock, fds, ARRAY_LEN(fds), &n, err) < 0) {
		if (err->errnum == EAGAIN)
			return 0;
		close_end(sock);
		/* End of file: the command failed before it handed the fence
		 * over, and says why on the error pipe. */
		return err->errnum ? moat_error_wrap(err, "net allow: the fence") : 0;
	}
	close_end(sock);
	if (n != ARRAY_LEN(fds)) {
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		return moat_error_set(err, MOAT_E_SYSTEM, EPROTO, "net allow: the child sent %zu fds, not 5", n);
	}
	sv->fence = netfence_new(fds[0], fds[1], fds[2], &fr->rules, err);
	if (!sv->fence) {
		close(fds[3]);
		close(fds[4]);
		return moat_error_wrap(err, "net allow: the fence");
	}
	/* A buffer copy: splice(2) through pipes relayed no faster here, and
	 * takes four more descriptors a connection (docs/network.md). */
	sv->proxy = netproxy_new(fds[3], fds[4], &fr->proxy_rules, false, err);
	return sv->proxy ? 0 : moat_error_wrap(err, "net allow: the proxy mode");
}

static void fence_end(struct served *sv, struct moat_launch_result *r)
{
	if (sv->proxy) {
		netproxy_get_stats(sv->proxy, &r->proxy);
		netproxy_free(sv->proxy);
		sv->proxy = NULL;
	}
	if (!sv->fence)
		return;
	r->fenced = true;
	netfence_get_stats(sv->fence, &r->fence);
	netfence_free(sv->fence);
	sv->fence = NULL;
}

/* sysv_found_fn: into the run's result (run.left_on_host). */
static void add_ipc_leftover(void *ctx, enum sysv_kind kind, int id, int key, bool removed)
{
	struct moat_launch_result *r = ctx;

	r->left = moat_xrealloc(r->left, (r->n_left + 1) * sizeof(*r->left));
	r->left[r->n_left++] = (struct moat_leftover){.path = moat_xasprintf("/proc/sysvipc/%s", sysv_kind_name(kind)),
						      .kept_as = removed ? moat_xstrdup("") : NULL,
						      .what = sysv_kind_report(kind),
						      .ipc = true,
						      .ipc_id = id,
						      .ipc_key = key};
}

void launch_result_free(struct moat_launch_result *r)
{
	netlog_free(&r->netlog);
	for (size_t i = 0; i < r->n_left; i++) {
		free(r->left[i].path);
		free(r->left[i].kept_as);
	}
	free(r->left);
	r->left = NULL;
	r->n_left = 0;
}

/* The caller's terminal back as it was, on every way out of launch_run. */
static void term_restore_p(struct term **t)
{
	if (*t)
		term_restore(*t);
}

/* After the command's end, the relay goes on until the pty hangs up (every
 * process inside closed it) and its output is out; without a pid
 * namespace, a process the command left behind may hold it open until
 * reap_orphans: then until nothing has come for TERM_QUIET_MS, and never
 * longer than TERM_DRAIN_MS. */
#define TERM_QUIET_MS 100
#define TERM_DRAIN_MS 2000

/* moat's loop's own slots, before the relay's, the fence's and the
 * proxy's. */
#define LOOP_SLOTS 6

/* clone3's arguments (linux/sched.h), declared here as landlock.c does its
 * structs: the installed headers may predate the cgroup field. */
struct moat_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
	    cgroup;
};
#define MOAT_CLONE_INTO_CGROUP 0x200000000ULL

/* The sandbox's first process: like fork with the namespace flags applied,
 * so that it is pid 1 of a new pid namespace.  Given the tree's v2 cgroup
 * (cg_fd), clone3 starts it there (*in_cgroup): writing its pid to
 * cgroup.procs afterwards is a migration, which waits for an RCU grace
 * period in the kernel (cgroup_threadgroup_rwsem) -- milliseconds, the
 * largest part of the fallback's start-up.  A kernel or a container's
 * filter without clone3 (ENOSYS, EPERM), or one refusing the cgroup
 * (EINVAL, EOPNOTSUPP, ...) gets the raw clone, and tree_cgroup_add moves
 * the child as before. */
static pid_t clone_child(int flags, int cg_fd, bool *in_cgroup)
{
	*in_cgroup = false;
	if (cg_fd >= 0) {
		struct moat_clone_args ca = {.flags = (uint64_t)(unsigned)flags | MOAT_CLONE_INTO_CGROUP,
					     .exit_signal = SIGCHLD,
					     .cgroup = (uint64_t)cg_fd};
		pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));

		if (pid >= 0) {
			*in_cgroup = pid > 0;
			return pid;
		}
	}
	/* Raw clone, not clone(3): it behaves like fork. */
	return (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, 0UL);
}

int launch_run(const struct moat_policy *p, struct moat_plan *plan, struct term *term, long long moat_start_ns,
	       int events_fd, pid_t spare, struct moat_launch_result *r, struct moat_error *err)
{
	const struct backend_plan *bp = &plan->compiled;
	const struct native_plan *np = bp->in_child;
	/* Only moat's in-child program makes namespaces itself; a tool makes
	 * its own. */
	bool pid_init = np && np->pid_init;
	const struct limits_plan *lp = &plan->limits;
	bool sandboxed = plan->status != MOAT_STATUS_OFF;
	bool cgroup = sandboxed && limits_uses_cgroup(lp);
	bool cpu_watch = cgroup && lp->lim[LIM_CPU].declared && lp->lim[LIM_CPU].enforced;
	long long cpu_limit_usec = cpu_watch ? (long long)p->limits.cpu_seconds * 1000000LL : 0;
	cleanup_pair int errp[2] = {-1, -1};
	cleanup_pair int statp[2] = {-1, -1};
	cleanup_pair int life[2] = {-1, -1};
	cleanup_pair int go[2] = {-1, -1};
	cleanup_pair int startp[2] = {-1, -1};
	cleanup_pair int toolerr[2] = {-1, -1};
	cleanup_pair int fencep[2] = {-1, -1};
	/* net allow: the fence, served here once the command hands it over
	 * (kernel/netfence.h), with the rules of the policy (launch/fence.h). */
	struct fence_rules fence_rules;
	struct served sv = {0};
	bool fenced = sandboxed && np && np->net_fence;
	/* Where the host reaches out through a proxy, moat's connects do too
	 * (launch/hostproxy.h). */
	__attribute__((cleanup(hostproxy_free))) struct hostproxy hp = {0};
	struct tool_words tool_said = {0};
	bool watch_start = sandboxed && bp->started_to >= 0;
	/* No IPC namespace: what the command makes in the host's SysV IPC
	 * outlives it (launch/sysvipc.h). */
	bool host_ipc = sandboxed && np && !(np->clone_flags & CLONE_NEWIPC);
	__attribute__((cleanup(sysv_snapshot_free))) struct sysv_snapshot ipc_before = {0};
	pid_t command_pid = -1;
	cleanup_close int sfd = -1;
	cleanup_close int cg_fd = -1;
	__attribute__((cleanup(tree_counters_close))) struct tree_counters counters = TREE_COUNTERS_NONE;
	struct pids_watch pids_w = {.c = &counters};
	bool in_cgroup = false;
	sigset_t fwd;
	__attribute__((cleanup(restore_mask))) sigset_t saved;
	struct child_args args;
	sigset_t args_mask;
	long long exec_ns = 0, deadline_ns = 0, kill_ns = 0, tool_kill_ns = 0;
	struct tree_route route;
	/* Raw from the loop's start; put back at every return. */
	__attribute__((cleanup(term_restore_p))) struct term *raw_term = NULL;
	bool relay = sandboxed && term_active(term);
	long long drain_ns = 0;
	bool have_status = false, child_done = false, err_eof = false, tool_failed = false;
	int status = 0, child_status = 0, flags, rc;
	/* Killed and reaped at scope exit if an error leaves it running. */
	cleanup_pid pid_t child = -1;
	/* The children moat had before the launch: not the command's tree
	 * (launch/children.h). */
	cleanup_child_set struct child_set before = {0}, children_now = {0};
	__attribute__((cleanup(restore_subreaper))) int was_subreaper = -1;
	size_t i;

	memset(r, 0, sizeof(*r));
	netlog_init(&r->netlog, fenced ? events_fd : -1, moat_start_ns);
	r->memory_peak = r->oom_kills = r->cpu_usec = r->pids_refused = -1;
	sigprocmask(SIG_BLOCK, NULL, &saved); /* what restore_mask puts back */
	signals_caller_mask(&args_mask);      /* what the command gets */
	if (pipe2(errp, O_CLOEXEC) != 0 || pipe2(statp, O_CLOEXEC) != 0 || pipe2(life, O_CLOEXEC) != 0 ||
	    (cgroup && pipe2(go, O_CLOEXEC) != 0) || (watch_start && pipe2(startp, O_CLOEXEC | O_NONBLOCK) != 0) ||
	    (sandboxed && bp->stderr_to >= 0 && pipe2(toolerr, O_CLOEXEC | O_NONBLOCK) != 0))
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "pipe2");
	if (fenced && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fencep) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "socketpair for the network fence");
	if (fenced && hostproxy_init(&hp, environ, err) < 0)
		return -1;
	for (i = 0; fenced && i < HOSTPROXY_N; i++)
		(void)!hostproxy_text(&hp, (enum hostproxy_var)i, r->upstream[i], sizeof(r->upstream[i]));
	if (cgroup && tree_cgroup_create(&plan->limits, &p->limits, err) < 0)
		return -1;
	/* Now, while nothing of the command runs: launch/cgroup.h. */
	if (cgroup)
		tree_counters_open(lp, &counters);
	/* What moat __init checks the tool's binds against, now that the
	 * placeholders exist (backend.h, bound_file). */
	if (sandboxed && backend_bound_write(bp, &plan->fs, err) < 0)
		return -1;
	/* The child moves an fd of the backend's to a fixed low number before
	 * executing the tool (backend.h, fd_remap_to): moat's own pipes must
	 * not be there. */
	if (bp->fd_remap_to >= 0 || bp->lifeline_to >= 0 || bp->started_to >= 0 || bp->stderr_to >= 0) {
		int *ends[] = {&errp[0], &errp[1], &statp[0], &statp[1], &life[0], &life[1], &go[0], &go[1],
			       &startp[0], &startp[1], &toolerr[0], &toolerr[1]};
		int floor = bp->fd_remap_to > bp->lifeline_to ? bp->fd_remap_to : bp->lifeline_to;
		if (bp->started_to > floor)
			floor = bp->started_to;
		if (bp->stderr_to > floor)
			floor = bp->stderr_to;
		for (i = 0; i < ARRAY_LEN(ends); i++) {
			if (*ends[i] < 0 || *ends[i] > floor)
				continue;
			int moved = fcntl(*ends[i], F_DUPFD_CLOEXEC, floor + 1);
			if (moved < 0)
				return moat_error_set(err, MOAT_E_SYSTEM, errno, "moving a pipe above fd %d", floor);
			close(*ends[i]);
			*ends[i] = moved;
		}
	}

	/* Block the forwarded signals and read them from a signalfd: no
	 * signal can be lost between fork and the loop, and none acts on moat
	 * while they are blocked (run.c holds them from the plan on). */
	signals_forwarded_set(&fwd);
	sigaddset(&fwd, SIGCHLD);
	sigprocmask(SIG_BLOCK, &fwd, &saved);
	/* --mode off: the command stays in moat's process group at moat's
	 * terminal (no setsid: child.c, exec_bare) and no relay writes for
	 * it.  A background read or a write under `stty tostop` makes the
	 * kernel stop that group: held here, moat ran on while the command
	 * sat stopped, and the shell showed the job Running. */
	if (plan->status == MOAT_STATUS_OFF)
		signals_tty_stops_release();
	sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "signalfd");
	/* Unknown, the caller's own children would be taken for the tree's
	 * (killed and reaped at its end). */
	if (!child_set_read(&before))
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "reading moat's children (/proc/self/task)");
	if (!pid_init && prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper, 0, 0, 0) == 0 && !was_subreaper)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	else
		was_subreaper = -1;

	args = (struct child_args){.policy = p, .plan = plan, .saved_mask = args_mask, .err_fd = errp[1],
				   .status_fd = statp[1], .lifeline_fd = life[0], .go_fd = go[0],
				   .started_fd = startp[1], .tool_err_fd = toolerr[1], .fence_fd = fencep[1],
				   .tty_fd = relay ? term->slave : -1, .tty_fds = relay ? term->fds : 0,
				   .parent_ends = {errp[0], statp[0], life[1], go[1], startp[0], toolerr[0], fencep[0],
						   relay ? term->master : -1, relay ? term->in : -1,
						   relay ? term->out : -1}};
	flags = plan->status == MOAT_STATUS_OFF || !np ? 0 : np->clone_flags;
	if (cgroup)
		cg_fd = tree_cgroup_open_v2(lp);
	if (host_ipc)
		sysv_snapshot_take(&ipc_before);
	moat_timeline_mark("clone");
	child = clone_child(flags, cg_fd, &in_cgroup);
	if (child < 0) {
		int e = errno;
		moat_error_set(err, MOAT_E_SYSTEM, e, "creating the sandbox (clone flags 0x%x)", flags);
		/* The host's settings allowed the namespaces (host/host.h), so
		 * what refuses them is likely a seccomp filter: a container's,
		 * or moat's own around a moat nested in it.  --mode prefer
		 * cannot help where it was given: the plan already had them. */
		if ((e == EPERM || e == ENOSPC) && p->mode == MOAT_MODE_PREFER)
			moat_error_hint(err, "namespaces are refused here though the host's settings allow them (a "
					     "seccomp filter: a container's, or a moat this one runs in); "
					     "MOAT_HOST_LIMIT=userns=0,root=0 runs without them, or allow unshare and "
					     "clone (in Docker: --security-opt seccomp=unconfined)");
		else if (e == EPERM || e == ENOSPC)
			moat_error_hint(err, "user namespaces may be restricted here; `moat probe` says why, and "
					     "--mode prefer runs without them");
		else if (e == EAGAIN)
			moat_error_hint_nproc(err);
		return -1;
	}
	if (child == 0)
		child_main(&args);
	command_pid = child;
	moat_timeline_mark("cloned");
	if (relay) {
		term_child_has_it(term);
		raw_term = term;
		term_raw(term);
	}
	route = tree_route_of(plan, child, &life[1]);
	if (route.via_lifeline)
		fcntl(life[1], F_SETFL, O_NONBLOCK);

	close_end(&cg_fd);
	close_end(&errp[1]);
	close_end(&statp[1]);
	close_end(&life[0]);
	close_end(&go[0]);
	close_end(&startp[1]);
	close_end(&toolerr[1]);
	close_end(&fencep[1]);
	if (cgroup) {
		/* The child waits for this before anything else (child.c). */
		if (tree_cgroup_add(lp, child, in_cgroup, err) < 0)
			return -1; /* cleanup_pid kills and reaps it */
		if (write(go[1], "g", 1) != 1)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "starting the sandbox");
		close_end(&go[1]);
	}
	if (p->limits.timeout_s > 0)
		deadline_ns = moat_now_ns() + (long long)(p->limits.timeout_s * 1e9);
	/* The names of the allowlist are looked up now, while the command
	 * sets up: the fence's answers may not wait. */
	if (fenced && fence_rules_init(&fence_rules, p, &r->netlog, &hp, err) < 0)
		return -1; /* cleanup_pid kills and reaps the child */

	for (;;) {
		enum { FIRST = LOOP_SLOTS + TERM_POLLFDS };
		struct pollfd pfd[FIRST + NETFENCE_POLLFDS_MAX + NETPROXY_POLLFDS_MAX] = {
		    {.fd = sfd, .events = POLLIN},
		    {.fd = err_eof ? -1 : errp[0], .events = POLLIN},
		    {.fd = toolerr[0], .events = POLLIN},
		    {.fd = fencep[0], .events = POLLIN},
		    {.fd = fenced ? fence_rules_fd(&fence_rules) : -1, .events = POLLIN},
		    {.fd = pids_watching(&pids_w, child_done) && counters.pids_notify ? counters.pids_events : -1,
		     .events = POLLPRI}};
		size_t n_fence, n_proxy;
		int timeout_ms = -1, fence_ms;
		long long now = moat_now_ns();
		unsigned typed;

		if (child_done && err_eof) {
			/* The pty's last output, then the end. */
			if (!drain_ns)
				drain_ns = now;
			if (!relay || term_drained(term) || now - drain_ns >= TERM_DRAIN_MS * 1000000LL ||
			    (!term->olen && now - (term->last_io_ns > drain_ns ? term->last_io_ns : drain_ns) >=
						TERM_QUIET_MS * 1000000LL))
				break;
		}
		term_pollfds(relay ? term : NULL, pfd + LOOP_SLOTS);
		n_fence = sv.fence ? netfence_pollfds(sv.fence, pfd + FIRST, NETFENCE_POLLFDS_MAX) : 0;
		n_proxy = sv.proxy ? netproxy_pollfds(sv.proxy, pfd + FIRST + n_fence, NETPROXY_POLLFDS_MAX) : 0;

		if (deadline_ns && !r->timed_out) {
			if (now >= deadline_ns) {
				r->timed_out = true;
				tree_terminate(&route, child_done);
				kill_ns = now + (long long)MOAT_TIMEOUT_GRACE_MS * 1000000LL;
			} else {
				timeout_ms = (int)((deadline_ns - now) / 1000000LL) + 1;
			}
		}
		if (kill_ns) {
			if (now >= kill_ns) {
				if (!route.pid_init && !route.via_lifeline)
					kill(-child, SIGKILL);
				end_tree(&route, child_done, &tool_kill_ns);
				kill_ns = 0;
			} else {
				timeout_ms = (int)((kill_ns - now) / 1000000LL) + 1;
			}
		}
		if (cpu_watch && !r->limit_hit) {
			long long used = tree_cgroup_cpu_usec(lp);
			/* Unreadable (the cgroup removed under moat): the limit
			 * can no longer be kept, so it ends the tree. */
			if (used < 0 || used >= cpu_limit_usec) {
				r->limit_hit = "cpu";
				end_tree(&route, child_done, &tool_kill_ns);
			} else if (timeout_ms < 0 || timeout_ms > CPU_POLL_MS) {
				timeout_ms = CPU_POLL_MS;
			}
		}
		if (tool_kill_ns && !child_done) {
			if (now >= tool_kill_ns) {
				kill(child, SIGKILL);
				tool_kill_ns = 0;
			} else if (timeout_ms < 0 || timeout_ms > (int)((tool_kill_ns - now) / 1000000LL) + 1) {
				timeout_ms = (int)((tool_kill_ns - now) / 1000000LL) + 1;
			}
		}
		if (sv.fence && (fence_ms = netfence_timeout_ms(sv.fence)) >= 0 &&
		    (timeout_ms < 0 || fence_ms < timeout_ms))
			timeout_ms = fence_ms;
		if (sv.proxy && (fence_ms = netproxy_timeout_ms(sv.proxy)) >= 0 &&
		    (timeout_ms < 0 || fence_ms < timeout_ms))
			timeout_ms = fence_ms;
		if (pids_watching(&pids_w, child_done))
			pids_watch_timeout(&pids_w, now, &timeout_ms);
		if (drain_ns && (timeout_ms < 0 || timeout_ms > 10))
			timeout_ms = 10;
		if (poll(pfd, FIRST + n_fence + n_proxy, timeout_ms) < 0 && errno != EINTR) {
			moat_error_set(err, MOAT_E_SYSTEM, errno, "poll");
			goto fail_fence;
		}
		if (pids_watching(&pids_w, child_done))
			pids_watch_check(&pids_w, p, pfd[5].revents, raw_term && raw_term->raw);
		if (pfd[2].revents && tool_words_read(&tool_said, toolerr[0]) <= 0)
			close_end(&toolerr[0]);
		if (pfd[3].revents && fence_take(&sv, &fence_rules, &fencep[0], err) < 0)
			goto fail_fence;
		/* The allowlist's names looked up: the queries that waited
		 * for them are answered. */
		if (pfd[4].revents && fence_rules_collect(&fence_rules)) {
			if (sv.fence)
				netfence_dns_ready(sv.fence);
			if (sv.proxy)
				netproxy_names_ready(sv.proxy);
		}
		/* The proxy first: the fence's end ends it too. */
		if (sv.proxy && n_proxy)
			netproxy_handle(sv.proxy, pfd + FIRST + n_fence, n_proxy);
		if (sv.fence && n_fence && (rc = netfence_handle(sv.fence, pfd + FIRST, n_fence, err)) != 0) {
			if (rc < 0)
				goto fail_fence;
			fence_end(&sv, r);
		}

		typed = relay ? term_relay(term, pfd + LOOP_SLOTS) : 0;
		if (typed & TERM_DO_SIGINT)
			tree_signal_typed(&route, SIGINT);
		if (typed & TERM_DO_SIGQUIT)
			tree_signal_typed(&route, SIGQUIT);
		if (typed & TERM_DO_STOP)
			tree_job_stop(&route, raw_term, SIGTSTP);
		/* `stty tostop` and output due from the background: the job
		 * stops, the tree first (signals.c: SIGTTOU is held); where
		 * the caller ignored or blocked SIGTTOU the kernel lets such a
		 * write through, and so does moat. */
		if ((typed & TERM_DO_TTOU) &&
		    (signals_caller_exempt(SIGTTOU) || !tree_job_stop(&route, raw_term, SIGTTOU)))
			term_bg_output_ok(term);

		if (pfd[1].revents) {
			struct child_failure f;
			ssize_t n = read(errp[0], &f, sizeof(f));

			if (n == (ssize_t)sizeof(f)) {
				f.what[sizeof(f.what) - 1] = '\0';
				moat_failure_text(r->failure, sizeof(r->failure), f.what, f.errnum);
			} else if (n == 0) {
				err_eof = true;
				if (!r->failure[0]) {
					r->executed = !child_done;
					exec_ns = moat_now_ns();
					/* The command runs: what only the child
					 * needed goes now, beside it, not after it. */
					fs_plan_close_launched(&plan->fs);
				}
			} else if (n < 0 && errno != EINTR) {
				err_eof = true;
			}
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGTSTP) {
					tree_job_stop(&route, raw_term, SIGTSTP);
					continue;
				}
				/* The pty takes the caller's terminal's new size, and
				 * the kernel signals its foreground process group. */
				if (si.ssi_signo == SIGWINCH && relay && term_winsize(term))
					continue;
				/* Continued after the kernel stopped moat (SIGTTOU:
				 * raw mode set from the background): raw again. */
				if (si.ssi_signo == SIGCONT)
					term_raw(raw_term);
				if (si.ssi_signo != SIGCHLD) {
					tree_signal(&route, (int)si.ssi_signo);
					continue;
				}
				reap_ended(child, &before, &children_now, &child_done, &child_status);
				if (child_done)
					route.child = -1; /* may be another's now */
			}
		}
	}

	moat_timeline_mark("reaped");
	fence_end(&sv, r);
	if (fenced)
		fence_rules_free(&fence_rules);

	/* The exec happened if the error pipe closed without a failure
	 * record; with a pid namespace, the command's own status comes from
	 * the init, and the init's own status says only that it ended. */
	if (r->failure[0])
		r->executed = false;
	else
		r->executed = true;
	/* The tool ran, but did it run the command?  moat __init says 'e'
	 * right before execve, 'f' after a failed one (backend.h, started_to). */
	if (watch_start && r->executed) {
		char said[2] = {0, 0};
		ssize_t n = read(startp[0], said, sizeof(said));

		if (n < 1 || said[0] != 'e') {
			r->executed = false;
			tool_failed = true;
		} else if (n == 2 && said[1] == 'f') {
			r->executed = false;
			snprintf(r->failure, sizeof(r->failure), "executing %s failed (the reason is on stderr)",
				 p->argv[0]);
		}
	}
	/* What the tool said last (it exited: its end is closed). */
	while (toolerr[0] >= 0 && tool_words_read(&tool_said, toolerr[0]) > 0) {
	}
	if (pid_init && plan->status != MOAT_STATUS_OFF &&
	    read(statp[0], &status, sizeof(status)) == (ssize_t)sizeof(status))
		have_status = true;
	close_end(&statp[0]);
	close_end(&errp[0]);
	close_end(&life[1]);
	decode_status(have_status ? status : child_status, r);
	if (tool_failed)
		tool_setup_failed(plan, child_status, &tool_said, r);
	/* Without a pid namespace the command's end is not the tree's: what
	 * it left running dies through the tree's cgroup. */
	if (cgroup && !pid_init && lp->tree_kill != CG_KILL_NONE)
		tree_cgroup_kill(lp);
	if (!pid_init || plan->status == MOAT_STATUS_OFF)
		reap_orphans(spare, &before);
	if (host_ipc)
		sysv_sweep(&ipc_before, command_pid, add_ipc_leftover, r);
	if (cgroup) {
		tree_cgroup_memory_stats(&counters, &r->memory_peak, &r->oom_kills);
		if (p->limits.pids != MOAT_LIMIT_UNSET)
			r->pids_refused = tree_cgroup_pids_refused(&counters);
		r->cpu_usec = tree_cgroup_cpu_usec(lp);
	}

	/* RLIMIT_CPU's SIGXCPU (backends/util.c): --cpu ended the command
	 * before moat's next read of the tree's time saw the limit.  Where the
	 * tree's cgroup counted its time, only if the tree used a good part of
	 * it: `kill -XCPU $$` made moat say the limit was reached after 0.002 s
	 * of 100.  Half, not nearly all: RLIMIT_CPU counts the process's time
	 * by ticks, each charged whole to whoever ran at it, the cgroup by the
	 * nanosecond, and on a busy machine the tick count runs ahead (the
	 * cgroup said 0.97-1.00 s of 1 here with three other busy loops, and
	 * under the suite's parallel lanes once below 0.9: the kill was not
	 * said to be the limit's). */
	if (sandboxed && !r->limit_hit && p->limits.cpu_seconds != MOAT_LIMIT_UNSET && r->signal == SIGXCPU &&
	    (r->cpu_usec < 0 || r->cpu_usec >= (long long)(p->limits.cpu_seconds * 500000LL)))
		r->limit_hit = "cpu";
	r->exec_ms = exec_ns ? (double)(exec_ns - moat_start_ns) / 1e6 : 0;
	r->run_ms = exec_ns ? (double)(moat_now_ns() - exec_ns) / 1e6 : 0;
	if (r->timed_out)
		r->exit_code = MOAT_EXIT_TIMEOUT;
	child = -1; /* reaped in the loop: nothing left for cleanup_pid */
	return 0;

fail_fence:
	/* cleanup_pid kills and reaps the child: without its supervisor the
	 * fence fails closed meanwhile (every connect is ENOSYS). */
	fence_end(&sv, r);
	if (fenced)
		fence_rules_free(&fence_rules);
	return -1;
}
