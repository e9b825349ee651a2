/* The child of a launch.  Everything that can be computed was computed by
 * the parent (plan/, backends/native.c, kernel/); here only the irreversible steps happen, in
 * this order, each for a reason:
 *
 *   1. die with moat (PR_SET_PDEATHSIG), and check moat did not die first;
 *      with a cgroup for the tree, wait until moat has put this process
 *      in it (launch/cgroup.h);
 *   2. user namespace maps (only our own uid/gid: no privilege is gained);
 *   3. the view (kernel/mounts.h): a new root holding only the grants, each
 *      bound from the object the parent planned (checked again here), the
 *      private /tmp, /dev/shm, /run and HOME, a fresh /proc, a minimal
 *      /dev, masks and pins; the old root detached;
 *   4. with a pid namespace, this process is its init: it forks the
 *      command and stays behind to reap and forward signals;
 *   5. in the command: setsid() (no controlling terminal: no TIOCSTI into
 *      the caller's terminal), or, when it gets a terminal, setsid() and
 *      its own pty as the controlling terminal of that session
 *      (launch/term.h: TIOCSTI reaches only the pty); chdir;
 *   6. PR_SET_NO_NEW_PRIVS, then Landlock (which needs NNP when there is
 *      no CAP_SYS_ADMIN; NNP before it costs nothing);
 *   7. drop every capability (bounding, ambient, effective, permitted,
 *      inheritable) and lock the securebits, so that even a command run by
 *      root, mapped to root in its user namespace, has no CAP_DAC_OVERRIDE
 *      or CAP_FOWNER over host files owned by root, and execve cannot give
 *      them back; close every fd but 0, 1, 2, the declared ones and the
 *      error pipe; then the rlimits (core dumps off), once nothing of the
 *      setup needs a descriptor any more;
 *   8. seccomp last, so the filter need not allow anything the steps above
 *      use; then execve of the path resolved in the parent, with the exact
 *      environment the plan built.
 *
 * When the backend runs a tool (backends/backend.h) the tool makes the
 * sandbox: after step 1 the child goes straight to the same preamble
 * (exec_sandboxed: steps 5, 6 without Landlock, the fd cleanup and the
 * rlimits of 7) -- what moat keeps owning -- and executes the tool.
 *
 * No allocation after the fork: the parent may have held malloc's lock. */
#include "launch/child.h"
#include "util/timeline.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/userns.h"
#include "kernel/netfence.h"
#include "kernel/netproxy.h"
#include "launch/reaper.h"
#include "launch/signals.h"
#include "util/path.h"
#include "util/cleanup.h"
#include "util/umask.h"

static _Noreturn void fail(const struct child_args *a, int exit_code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static _Noreturn void fail(const struct child_args *a, int exit_code, int errnum, const char *fmt, ...)
{
	struct child_failure f;
	va_list ap;
	ssize_t unused;

	memset(&f, 0, sizeof(f));
	f.errnum = errnum;
	f.exit_code = exit_code;
	va_start(ap, fmt);
	vsnprintf(f.what, sizeof(f.what), fmt, ap);
	va_end(ap);
	unused = write(a->err_fd, &f, sizeof(f));
	(void)unused;
	_exit(exit_code);
}

static void map_ids(const struct child_args *a)
{
	const struct native_plan *np = a->plan->compiled.in_child;
	const char *failed;
	int rc = userns_map_ids(np->outer_uid, np->outer_gid, &failed);

	if (rc < 0)
		fail(a, 125, -rc, "writing %s", failed);
}

/* A new network namespace starts with lo down; loopback mode wants it up. */
static void loopback_up(const struct child_args *a)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		fail(a, 125, errno, "socket for bringing lo up");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		fail(a, 125, errno, "SIOCGIFFLAGS lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		fail(a, 125, errno, "SIOCSIFFLAGS lo");
	close(s);
}

/* mkdir -p of the directories above `path` (no allocation). */
static int make_parents(const char *path)
{
	char buf[PATH_MAX];
	size_t i, len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (i = 1; i < len; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		buf[i] = '/';
	}
	return 0;
}

/* net allow: the command's resolver asks the fenced DNS on 127.0.0.1
 * (kernel/netfence.h), and nothing else.  Three files are moat's in the
 * view, each written to the view's private /run and bound read-only over
 * the host's:
 *   - resolv.conf names 127.0.0.1;
 *   - hosts names localhost only: a name of the host's /etc/hosts would
 *     resolve in the command to an address the fence never handed out,
 *     which the fence then refuses (the rule is by name);
 *   - nsswitch.conf is the host's with its hosts line "files dns": an NSS
 *     module (systemd-resolved's, mDNS) would ask a service the sandbox
 *     cannot reach, or not ask the fence.
 * A file that is a link (to systemd-resolved's file in /run, say) gets its
 * target made in the private /run first.  A file the view does not have
 * is left out (glibc asks 127.0.0.1 without a resolv.conf).  Whatever the
 * command writes here changes only its own resolver: the fence answers
 * for the allowed names alone.  No allocation: buffers on the stack. */
static const char *const fence_files[] = {"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"};

static void fence_bind_file(const struct child_args *a, const char *path, const char *text, size_t len)
{
	char staged[64], target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, rc;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return;
		fail(a, 125, errno, "net allow: %s", path);
	}
	snprintf(staged, sizeof(staged), "/run/.moat-%s", strrchr(path, '/') + 1);
	fd = open(staged, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		fail(a, 125, errno, "net allow: %s", staged);
	n = write(fd, text, len);
	close(fd);
	if (n != (ssize_t)len)
		fail(a, 125, n < 0 ? errno : EIO, "net allow: writing %s", staged);
	if (S_ISLNK(st.st_mode)) {
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			fail(a, 125, n < 0 ? errno : EINVAL, "net allow: reading the link %s", path);
		target[n] = '\0';
		if (stat(path, &st) != 0) {
			/* Its target is not in the view: make it, where the view is
			 * moat's own (the private /run), or refuse. */
			if (strncmp(target, "/run/", 5) != 0 || strstr(target, "/../"))
				fail(a, 125, 0, "net allow: %s links to %s, which is not in the sandbox", path, target);
			if ((rc = make_parents(target)) < 0)
				fail(a, 125, -rc, "net allow: %s", target);
			fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd < 0)
				fail(a, 125, errno, "net allow: %s", target);
			close(fd);
		}
	}
	if (mount(staged, path, NULL, MS_BIND, NULL) != 0)
		fail(a, 125, errno, "net allow: binding the fenced %s", path);
	if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
		fail(a, 125, errno, "net allow: the fenced %s read-only", path);
}

/* The host's nsswitch.conf with its "hosts:" line made "hosts: files
 * dns" (added when it has none); its length in out. */
static size_t fence_nsswitch(char *out, size_t cap)
{
	static const char hosts[] = "hosts: files dns\n";
	char in[8192];
	size_t o = 0, i = 0;
	ssize_t n = -1;
	bool had = false;
	int fd = open("/etc/nsswitch.conf", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, in, sizeof(in) - 1);
		close(fd);
	}
	while (n > 0 && i < (size_t)n) {
		size_t e = i;
		while (e < (size_t)n && in[e] != '\n')
			e++;
		size_t l = e - i + (e < (size_t)n ? 1 : 0);
		const char *line = in + i;
		size_t k = 0;
		while (k < l && (line[k] == ' ' || line[k] == '\t'))
			k++;
		if (l - k >= 6 && strncmp(line + k, "hosts:", 6) == 0) {
			line = hosts;
			l = sizeof(hosts) - 1;
			had = true;
		}
		if (o + l + 1 >= cap)
			break;
		memcpy(out + o, line, l);
		o += l;
		if (line[l - 1] != '\n')
			out[o++] = '\n';
		i = e + 1;
	}
	if (!had && o + sizeof(hosts) < cap) {
		memcpy(out + o, hosts, sizeof(hosts) - 1);
		o += sizeof(hosts) - 1;
	}
	return o;
}

static void fence_resolver_files(const struct child_args *a)
{
	static const char resolv[] = "# moat: net allow, the fenced DNS\nnameserver 127.0.0.1\n";
	static const char hosts[] = "# moat: net allow: every other name goes to the fenced DNS\n"
				    "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
	char nss[8192];
	size_t nss_len = fence_nsswitch(nss, sizeof(nss));

	fence_bind_file(a, fence_files[0], resolv, sizeof(resolv) - 1);
	fence_bind_file(a, fence_files[1], hosts, sizeof(hosts) - 1);
	fence_bind_file(a, fence_files[2], nss, nss_len);
}

/* Step 7.  PR_CAPBSET_DROP and the securebits need CAP_SETPCAP: without it
 * (an unprivileged run without namespaces) there is nothing to drop there,
 * and EPERM is expected.  capset to nothing is always allowed. */
static void drop_capabilities(const struct child_args *a)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];
	int cap;

	/* The kernel checks CAP_SETPCAP before the number (cap_prctl_drop):
	 * EPERM on one means EPERM on all, and EINVAL is the first number past
	 * the kernel's last capability (they are numbered without gaps), so
	 * either ends the loop: 41 calls as root here, 1 unprivileged, not 64. */
	for (cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
			if (errno == EINVAL || errno == EPERM)
				break;
			fail(a, 125, errno, "PR_CAPBSET_DROP %d", cap);
		}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		fail(a, 125, errno, "PR_CAP_AMBIENT_CLEAR_ALL");
	/* uid 0 must not regain capabilities at execve. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED,
		  0, 0, 0) != 0 &&
	    errno != EPERM)
		fail(a, 125, errno, "PR_SET_SECUREBITS");
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) != 0)
		fail(a, 125, errno, "capset");
}

/* The smallest fd above `after` that must stay open: a declared one, one
 * the backend passes to its tool, or the error pipe; INT_MAX when none.
 * No allocation (the child runs between clone and execve): the lists are
 * short, so a scan per kept fd is fine. */
static int next_kept(const struct child_args *a, int after)
{
	const struct moat_policy *p = a->policy;
	int best = a->err_fd > after ? a->err_fd : INT_MAX;
	size_t i;

	for (i = 0; i < p->n_keep_fds; i++)
		if (p->keep_fds[i] > after && p->keep_fds[i] < best)
			best = p->keep_fds[i];
	const struct backend_plan *bp = &a->plan->compiled;
	const int placed[] = {bp->fd_remap_to, bp->lifeline_to, bp->started_to, bp->stderr_to};

	for (i = 0; i < bp->n_pass_fds; i++)
		if (bp->pass_fds[i] > after && bp->pass_fds[i] < best)
			best = bp->pass_fds[i];
	/* -1 when not placed (every in-child program has them so). */
	for (i = 0; i < ARRAY_LEN(placed); i++)
		if (placed[i] > after && placed[i] < best)
			best = placed[i];
	return best;
}

/* Close everything above 2 except the kept fds, with close_range over the
 * gaps; the kept ones lose FD_CLOEXEC so they survive execve. */
static void close_fds(const struct child_args *a)
{
	unsigned int from = 3;
	int k = 2;

	while ((k = next_kept(a, k)) != INT_MAX) {
		if ((unsigned)k > from && syscall(SYS_close_range, from, (unsigned)k - 1, 0) != 0)
			fail(a, 125, errno, "close_range");
		from = (unsigned)k + 1;
		if (k != a->err_fd) {
			int fl = fcntl(k, F_GETFD);
			if (fl < 0 || fcntl(k, F_SETFD, fl & ~FD_CLOEXEC) < 0)
				fail(a, 125, errno, "--keep-fd %d", k);
		}
	}
	if (syscall(SYS_close_range, from, ~0U, 0) != 0)
		fail(a, 125, errno, "close_range");
}

/* The caller's soft RLIMIT_NOFILE, which moat raised for its own
 * descriptors while planning (resolve/fsplan.h); a declared --files, applied
 * after this, wins. */
static void restore_nofile(const struct child_args *a)
{
	struct rlimit rl;

	if (!a->plan->fs.nofile_soft || getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	rl.rlim_cur = (rlim_t)a->plan->fs.nofile_soft;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		fail(a, 125, errno, "restoring RLIMIT_NOFILE");
}

/* After close_fds: every fd from 3 to the highest kept one open, the gaps
 * on /dev/null (open(2) takes the lowest free number, so the fillers land
 * exactly in the gaps); the error pipe is above them all (launch.c). */
static void fill_fd_gaps(const struct child_args *a)
{
	int top = 2, k = 2, fd;

	while ((k = next_kept(a, k)) != INT_MAX)
		if (k != a->err_fd && k > top)
			top = k;
	for (;;) {
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0)
			fail(a, 125, errno, "/dev/null (filling fds below %d)", top);
		if (fd >= top) {
			close(fd);
			return;
		}
	}
}

/* File systems the view mounted in step 3 are new inodes: their Landlock
 * rules can only be added now.  The root (and so every directory of the
 * view) may be listed, which shows only what is granted; the private tmpfs
 * are writable; /proc is readable. */
static void landlock_view_rules(const struct child_args *a)
{
	const struct native_plan *np = a->plan->compiled.in_child;
	const struct view *v = &np->mounts.view;
	size_t i;
	int rc;

	if ((rc = landlock_child_add(&np->landlock, "/", LANDLOCK_CHILD_LIST)) < 0)
		fail(a, 125, -rc, "landlock rule for the root");
	for (i = 0; i < v->n; i++) {
		const char *what = v->v[i].dest;
		uint64_t rights;

		if (v->v[i].kind == VIEW_TMPFS)
			rights = np->landlock.write_rights;
		else if (v->v[i].kind == VIEW_PROC)
			rights = np->landlock.read_rights;
		else
			continue;
		if ((rc = landlock_child_add(&np->landlock, what, rights)) < 0)
			fail(a, 125, -rc, "landlock rule for %s", what);
	}
	/* The fenced resolver files are files of the private /run bound over
	 * the host's: Landlock skips a hidden mount point on its way up, so
	 * the rule of /etc's entry does not cover them: each needs its own. */
	for (i = 0; np->net_fence && i < ARRAY_LEN(fence_files); i++)
		if ((rc = landlock_child_add(&np->landlock, fence_files[i], np->landlock.read_rights)) < 0 &&
		    rc != -ENOENT)
			fail(a, 125, -rc, "landlock rule for the fenced %s", fence_files[i]);
}

/* Where a tool is given moat's pipes and its own descriptor
 * (backends/backend.h): dup2 to the numbers the plan chose, which launch.c
 * kept free (launch_run); the backend's fd goes first, since its number may
 * be one of moat's.  Before --files lowers RLIMIT_NOFILE: dup2 may not make
 * a descriptor above the limit. */
static void place_tool_fds(const struct child_args *a, const struct backend_plan *bp)
{
	if (bp->fd_remap_from >= 0 && dup2(bp->fd_remap_from, bp->fd_remap_to) < 0)
		fail(a, 125, errno, "dup2 %d to %d", bp->fd_remap_from, bp->fd_remap_to);
	if (bp->started_to >= 0 && dup2(a->started_fd, bp->started_to) < 0)
		fail(a, 125, errno, "dup2 the started pipe to %d", bp->started_to);
	if (bp->lifeline_to >= 0 && dup2(a->lifeline_fd, bp->lifeline_to) < 0)
		fail(a, 125, errno, "dup2 the lifeline to %d", bp->lifeline_to);
	/* The caller's stderr waits for the command at stderr_to; the tool
	 * speaks into moat's pipe.  Nothing reports through fd 2 after this
	 * but the tool: fail() writes to the error pipe. */
	if (bp->stderr_to >= 0 && (dup2(2, bp->stderr_to) < 0 || dup2(a->tool_err_fd, 2) < 0))
		fail(a, 125, errno, "dup2 the caller's stderr to %d", bp->stderr_to);
}

/* Step 5, with a terminal (launch/term.h): the pty moat made becomes the
 * command's fds that were the caller's terminal (all three with --tty),
 * then, under moat's in-child program, the controlling terminal of the
 * session setsid just made: a session has at most one, so neither
 * TIOCSTI nor /dev/tty can reach the caller's.  A tool gets the pty as its
 * stdio only: bwrap --new-session and the OCI runtimes make a session of
 * their own for the command, and the pty's signals would go to the tool
 * (moat sends the typed ones itself then: term.c, typed_signals). */
static void take_terminal(const struct child_args *a, bool tool)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if ((a->tty_fds & (1u << fd)) && dup2(a->tty_fd, fd) < 0)
			fail(a, 125, errno, "dup2 the command's terminal to fd %d", fd);
	if (!tool && ioctl(a->tty_fd, TIOCSCTTY, 0) != 0)
		fail(a, 125, errno, "TIOCSCTTY: the pty as the command's controlling terminal");
	close(a->tty_fd);
}

/* Step 5 onwards, written once for the command under moat's in-child
 * program and for a tool: what moat owns in either case -- a new session,
 * the cwd, no_new_privs (unless the tool is setuid), only the declared fds
 * (and the backend's own, such as bwrap's seccomp program), the rlimits --
 * with the in-child program's Landlock, capabilities and seccomp in their
 * places.  A tool gets an environment of its own, never the command's
 * (backend.h, tool_env). */
static _Noreturn void exec_sandboxed(const struct child_args *a)
{
	const struct moat_plan *plan = a->plan;
	const struct backend_plan *bp = &plan->compiled;
	const struct native_plan *np = bp->in_child;
	bool tool = backend_plan_runs_tool(bp);
	int dns_udp = -1, dns_tcp = -1, px_http = -1, px_socks = -1;
	size_t i;
	int rc;

	moat_timeline_mark("child.exec_steps");
	if (setsid() < 0)
		fail(a, 125, errno, "setsid");
	/* Before the tool's fds are placed: moat's copy of the pty may be at
	 * one of their numbers. */
	if (a->tty_fd >= 0)
		take_terminal(a, tool);
	if (chdir(a->policy->cwd) != 0)
		fail(a, 125, errno, "chdir %s", a->policy->cwd);
	if (tool)
		place_tool_fds(a, bp);
	if (bp->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		fail(a, 125, errno, "PR_SET_NO_NEW_PRIVS");
	/* net allow: the fenced DNS binds port 53 while this process still
	 * has its capabilities in the namespace, and before Landlock, which
	 * refuses the command TCP binds of its own (the fence binds the
	 * command's TCP sockets for it, from the fence filter on). */
	if (np && np->net_fence && (rc = netfence_child_dns(&dns_udp, &dns_tcp)) < 0)
		fail(a, 125, -rc, "net allow: binding the fenced DNS on 127.0.0.1:53");
	/* The proxy mode's listeners likewise (kernel/netproxy.h): the ports
	 * are the sandbox's own, bound before Landlock refuses TCP binds;
	 * taken first, the command's binds of them fail (EADDRINUSE). */
	if (np && np->net_fence && (rc = netproxy_child_listen(&px_http, &px_socks)) < 0)
		fail(a, 125, -rc, "net allow: binding the proxy mode on 127.0.0.1:%d and :%d", NETPROXY_HTTP_PORT,
		     NETPROXY_SOCKS_PORT);
	if (np) {
		if (np->landlock.ruleset_fd >= 0) {
			if (np->mounts.enabled)
				landlock_view_rules(a);
			if ((rc = landlock_child_restrict(&np->landlock)) < 0)
				fail(a, 125, -rc, "landlock_restrict_self");
		}
		moat_timeline_mark("child.landlocked");
		drop_capabilities(a);
	}
	/* The fence's filter before moat's main one, its listener and the DNS
	 * sockets to moat, none of them left to the command. */
	if (np && np->net_fence) {
		int listener = -1;
		if ((rc = netfence_child_install(&listener)) < 0)
			fail(a, 125, -rc, "net allow: loading the fence's seccomp filter");
		int fds[5] = {listener, dns_udp, dns_tcp, px_http, px_socks};
		if ((rc = netfence_child_sendv(a->fence_fd, fds, ARRAY_LEN(fds))) < 0)
			fail(a, 125, -rc, "net allow: handing the fence to moat");
		for (i = 0; i < ARRAY_LEN(fds); i++)
			close(fds[i]);
	}
	close_fds(a);
	if (bp->fill_fd_gaps)
		fill_fd_gaps(a);
	/* After the steps that open files (Landlock's own rules, the fds
	 * still open until close_fds, the fillers): --files 12 must bind the
	 * command, not moat's setup. */
	restore_nofile(a);
	for (i = 0; i < bp->n_rlimits; i++) {
		struct rlimit rl = {.rlim_cur = (rlim_t)bp->rlimits[i].value, .rlim_max = (rlim_t)bp->rlimits[i].hard};
		if (setrlimit(bp->rlimits[i].resource, &rl) != 0)
			fail(a, 125, errno, "setrlimit(%s)", bp->rlimits[i].oci_name);
	}
	/* Signals moat blocked for itself must not stay blocked in the
	 * command: the mask survives execve.  So does the umask: moat made
	 * the view with its own (util/umask.h), the caller's is the
	 * command's. */
	signals_reset_for_exec(&a->saved_mask);
	umask(umask_caller());
	moat_timeline_mark("child.fds_limits");
	if (np && np->use_seccomp && (rc = moat_seccomp_load(&np->bpf)) < 0)
		fail(a, 125, -rc, "loading the seccomp filter");
	moat_timeline_mark("child.execve");
	if (!tool) {
		execve(a->policy->exe, a->policy->argv, plan->envp);
		fail(a, errno == ENOENT ? 127 : 126, errno, "execve %s", a->policy->exe);
	}
	/* Not killed with moat (backend.h): __init ends the sandbox on the
	 * lifeline, which this process checked was up after its own prctl. */
	if (bp->outlives_moat && prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) != 0)
		fail(a, 125, errno, "PR_SET_PDEATHSIG");
	/* The tool runs outside the sandbox: its own minimal environment; the
	 * command's reaches the command through the tool (backend.h). */
	execve(bp->tool_path, bp->argv, bp->env_via_tool ? plan->envp : bp->tool_env);
	fail(a, errno == ENOENT ? 127 : 126, errno, "execve %s", bp->tool_path);
}

/* Unsandboxed (mode off, --backend none): the command as moat's child, in
 * the caller's session, with moat's blocked signals unblocked. */
static _Noreturn void exec_bare(const struct child_args *a)
{
	if (chdir(a->policy->cwd) != 0)
		fail(a, 125, errno, "chdir %s", a->policy->cwd);
	signals_reset_for_exec(&a->saved_mask);
	umask(umask_caller());
	execve(a->policy->exe, a->policy->argv, a->plan->envp);
	fail(a, errno == ENOENT ? 127 : 126, errno, "execve %s", a->policy->exe);
}

/* No memory in a core dump of the tree: coredump_filter 0, which fork and
 * execve keep (core(5)).  RLIMIT_CORE 1 (step 7) keeps a core file from
 * being written, but a pipe core_pattern gets the whole dump whatever the
 * limit, and its program decides what to keep (resolve/limits.h,
 * limits_core_held): with the filter it gets the registers and the notes,
 * not the memory.  Set here, before the view and Landlock, after which the
 * command cannot open the file for writing to raise it again.  Best
 * effort (a /proc without it: no report claims it). */
static void no_memory_in_cores(void)
{
	int fd = open("/proc/self/coredump_filter", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "0", 1) != 1) {
		/* left as it was: RLIMIT_CORE 1 still holds for a file */
	}
	close(fd);
}

/* pid 1 of the new pid namespace.  When it exits the kernel kills every
 * process left in the namespace, double-forked daemons included; it is
 * itself killed (PR_SET_PDEATHSIG) when moat dies, even by SIGKILL. */
static _Noreturn void run_init(const struct child_args *a, pid_t cmd)
{
	int sfd, status = 0;
	ssize_t unused;

	/* Only the status pipe stays: the plan's descriptors (hundreds with
	 * strict) would otherwise be closed by this process's exit, which moat
	 * waits for; closed now, beside the command.  With them go the error
	 * pipe, the fence's descriptor and the pty (it hangs up when the last
	 * process inside closes it). */
	unsigned keep = a->status_fd >= 3 ? (unsigned)a->status_fd : 2U; /* 0-2 stay anyway */

	if (keep > 3)
		syscall(SYS_close_range, 3U, keep - 1, 0);
	syscall(SYS_close_range, keep + 1, ~0U, 0);
	/* moat blocked the signals before the clone: nothing was lost. */
	sfd = reaper_signalfd(NULL);
	if (sfd < 0 || reaper_run(cmd, sfd, -1, &status) != REAPER_EXITED)
		_exit(125);
	moat_timeline_mark("init.reaped");
	unused = write(a->status_fd, &status, sizeof(status));
	(void)unused;
	_exit(0);
}

_Noreturn void child_main(const struct child_args *a)
{
	const struct native_plan *np = a->plan->compiled.in_child;
	struct pollfd pf = {.fd = a->lifeline_fd, .events = POLLIN};
	pid_t cmd;

	size_t i;

	/* 1. Die with moat.  If moat died before prctl took effect, the
	 * lifeline pipe (whose only writer is moat, once this process closed
	 * its inherited copy) has hung up already. */
	for (i = 0; i < ARRAY_LEN(a->parent_ends); i++)
		if (a->parent_ends[i] >= 0)
			close(a->parent_ends[i]);
	/* moat made itself non-dumpable (api/run.c); this process is the
	 * sandbox's, and writes its own uid_map, which needs it dumpable. */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		fail(a, 125, errno, "PR_SET_PDEATHSIG");
	if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR)))
		_exit(125);
	/* Nothing of the command may run before it is in the tree's cgroup
	 * (its limits, its kill): moat moves this process there, then says
	 * go.  End of file means moat is gone. */
	if (a->go_fd >= 0) {
		char go = 0;
		ssize_t n;
		do
			n = read(a->go_fd, &go, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1 || go != 'g')
			_exit(125);
		close(a->go_fd);
	}

	if (a->plan->status == MOAT_STATUS_OFF)
		exec_bare(a);
	no_memory_in_cores();
	if (!np) {
		/* plan.c never launches a plan that compiled nothing; a sandbox
		 * is never left out silently. */
		if (!backend_plan_runs_tool(&a->plan->compiled))
			fail(a, 125, 0, "the %s backend compiled nothing to run", a->plan->backend);
		/* The lifeline is moved for the tool to pass on, or closed. */
		if (a->plan->compiled.lifeline_to < 0)
			close(a->lifeline_fd);
		exec_sandboxed(a);
	}

	moat_timeline_mark("child.start");
	/* 2. */
	if (np->clone_flags & CLONE_NEWUSER)
		map_ids(a);
	moat_timeline_mark("child.mapped");
	/* 3. */
	if (np->mounts.enabled) {
		char what[200];
		int rc = mounts_apply(&np->mounts, &a->plan->fs, what, sizeof(what));
		if (rc < 0)
			fail(a, 125, rc == -ESTALE ? 0 : -rc, "mount namespace: %s", what);
	}
	if ((np->clone_flags & CLONE_NEWNET) && (a->policy->net == MOAT_NET_LOOPBACK || np->net_fence))
		loopback_up(a);
	moat_timeline_mark("child.mounted");
	if (np->net_fence)
		fence_resolver_files(a);
	if (!np->pid_init) {
		close(a->lifeline_fd);
		exec_sandboxed(a);
	}

	/* 4.  fork, not vfork: with vfork this process, suspended until the
	 * command's execve, closed its copies of the plan's descriptors beside
	 * the running command, and a command sharing its CPU lost ~10% of its
	 * throughput (docs/architecture.md, "Process layout"). */
	cmd = fork();
	if (cmd < 0)
		fail(a, 125, errno, "fork in the pid namespace");
	if (cmd == 0) {
		close(a->status_fd);
		close(a->lifeline_fd);
		exec_sandboxed(a);
	}
	close(a->lifeline_fd);
	run_init(a, cmd);
}
