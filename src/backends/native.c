#include "backends/native.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "kernel/netproxy.h"
#include "host/hints.h"
#include "policy/properties.h"
#include "policy/verdict.h"
#include "util/cleanup.h"
#include "util/stale.h"
#include "util/mem.h"
#include "util/path.h"

#define HINT_USERNS host_userns_hint(h, false)
#define HINT_LANDLOCK HOST_HINT_LANDLOCK
#define HINT_SECCOMP HOST_HINT_SECCOMP

static size_t count_role(const struct fs_plan *fp, enum fs_role role, bool only_present)
{
	size_t i, n = 0;

	for (i = 0; i < fp->n; i++)
		n += fp->obj[i].role == role && (!only_present || fp->obj[i].present) && !fp->obj[i].lifted;
	return n;
}

static size_t count_denies(const struct fs_plan *fp)
{
	return count_role(fp, FS_DENY, false);
}

/* What the native backend offers for limits: moat applies the rlimits,
 * puts the first child in its cgroup, sizes the private tmpfs it mounts,
 * and with a pid namespace the tree dies with its init. */
static void native_caps(const struct moat_policy *p, const struct native_plan *np, bool netns, struct limit_caps *c)
{
	c->rlimits = true;
	c->in_cgroup = true;
	c->runtime = "native";
	c->tmp_size = np->mounts.enabled;
	c->pid_tree = np->pid_init;
	c->own_mount_ns = (np->clone_flags & CLONE_NEWNS) != 0;
	c->core_pinned = np->use_seccomp;
	/* Without a mount namespace and without Landlock the command sees
	 * the host's /sys/fs/cgroup writable, and moat's cgroup is its uid's.
	 * Without a mount namespace and without seccomp (which refuses clone3)
	 * clone3(CLONE_INTO_CGROUP) with an O_PATH fd of any cgroup directory
	 * the user owns starts a child there: no cgroup file is opened, so
	 * Landlock does not see it. */
	if (!np->mounts.enabled && np->landlock.abi == 0)
		c->cgroup_open = "without a mount namespace or Landlock the command, as the same user, could raise its own "
				 "cgroup's limits or move itself out of it";
	else if (!np->mounts.enabled && !np->use_seccomp)
		c->cgroup_open = "without a mount namespace or seccomp the command, as the same user, could start a "
				 "process in another cgroup its user owns with clone3(CLONE_INTO_CGROUP), which Landlock "
				 "does not govern";
	/* With a mount namespace too: the view shows /sys/fs/cgroup read-only,
	 * but CLONE_INTO_CGROUP takes an O_PATH descriptor of the directory,
	 * and the kernel checks cgroup.procs' mode bits, not the mount: a
	 * command run as root (0 is 0 on the host's files) started a child in
	 * the host's root cgroup, out of the tree's limits (red-team, seccomp=0). */
	else if (!np->use_seccomp)
		c->cgroup_open = "without seccomp (which refuses clone3) the command could start a process in another "
				 "cgroup its user may write, with clone3(CLONE_INTO_CGROUP) and a descriptor of that "
				 "directory, which neither the view's read-only mount nor Landlock governs";
	/* Outside a pid namespace only Landlock's signal scope (ABI 6) keeps
	 * the command, as moat's uid, from stopping moat and its guard. */
	if (!np->pid_init && !(np->landlock.scoped & MOAT_LANDLOCK_SCOPE_SIGNAL))
		c->moat_signalable = "the command can signal moat and its guard (the same uid, no pid namespace): it can "
				     "stop them (SIGSTOP) and run on unwatched; Landlock ABI 6 scopes signals";
	snprintf(c->tree_mechanism, sizeof(c->tree_mechanism),
		 "pid namespace: its init dies with moat (PR_SET_PDEATHSIG), and when it ends the kernel kills the "
		 "rest");
	/* TCP and UDP sockets that carry data: under none, seccomp refuses
	 * them, and a network namespace has no interface up; under allow the
	 * sandbox's own lo carries them. */
	if (p->net == MOAT_NET_NONE)
		c->inet = np->use_seccomp || netns ? LIMIT_INET_NO : LIMIT_INET_YES;
	else
		c->inet = LIMIT_INET_YES;
	if (np->net_fence)
		c->sockets_moat = "under net allow the fence connects each allowed destination with a socket of moat's "
				  "own, whose buffers are charged to moat's cgroup, not the tree's";
}

/* The proxy mode (kernel/netproxy.h) in the command's environment: the
 * variables proxy-aware clients read, both cases (curl reads only the lower
 * case http_proxy, CGI-minded code only the upper).  ALL_PROXY is socks5h:
 * the client hands moat the name, never resolving it itself.  NO_PROXY
 * keeps the sandbox's own loopback direct.  NODE_USE_ENV_PROXY=1 has Node
 * (22.21 and 24.5 on) honour them in fetch and http.get; older ones ignore
 * it, and the transparent fence serves them.  A value the policy sets itself
 * (--env NAME=VALUE) wins; one passed through from moat's environment does
 * not: that proxy is the host's, which the sandbox cannot reach. */
static void proxy_mode_env(const struct moat_policy *p, struct backend_plan *bp)
{
	char http[64], socks[64];
	const char *const names[][2] = {
	    {"http_proxy", http},
	    {"HTTP_PROXY", http},
	    {"https_proxy", http},
	    {"HTTPS_PROXY", http},
	    {"all_proxy", socks},
	    {"ALL_PROXY", socks},
	    {"no_proxy", "localhost,127.0.0.1,::1"},
	    {"NO_PROXY", "localhost,127.0.0.1,::1"},
	    {"NODE_USE_ENV_PROXY", "1"},
	};

	snprintf(http, sizeof(http), "http://127.0.0.1:%d", NETPROXY_HTTP_PORT);
	snprintf(socks, sizeof(socks), "socks5h://127.0.0.1:%d", NETPROXY_SOCKS_PORT);
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		const struct moat_env_rule *r = policy_find_env(p, names[i][0]);
		if (!r || !r->value)
			backend_env_set(bp, names[i][0], names[i][1]);
	}
}

#define HINT_TMP_UNWRITABLE                                                                                            \
	"give /tmp a writable file system (in a container: --tmpfs /tmp; Kubernetes: an emptyDir volume at /tmp), or " \
	"user namespaces, whose mount namespace brings its own /tmp"

static int native_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			  struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	const struct moat_host *h = ctx->host;
	const struct fs_plan *fp = ctx->fs;
	struct native_plan *np = bp->in_child = moat_xcalloc(1, sizeof(*bp->in_child));
	bool ns = h->userns || h->root;
	/* A network namespace whenever namespaces can be made and the policy
	 * does not share the host's network: besides refusing the network, it
	 * gives the sandbox its own /proc/net, so the host's sockets
	 * (/proc/net/unix lists every bound path) and connections are not
	 * listed inside. */
	bool netns = ns && p->net != MOAT_NET_ALL;
	int abi = h->landlock_abi;
	size_t n_denies = count_denies(fp), n_protected = count_role(fp, FS_PROTECT, false);
	char seccomp_why[256];
	const char *fence_why = NULL; /* under net allow: why there is no fence */
	const char *seccomp_hint = HINT_SECCOMP;
	char tmp_why[320] = "";

	native_plan_init(np);
	np->outer_uid = h->uid;
	np->outer_gid = h->gid;

	/* Namespaces.  As root without user namespaces the others can still
	 * be made; with them, even root is mapped into one, so that the
	 * sandbox holds no capability over the host. */
	if (ns) {
		np->clone_flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
		if (h->userns)
			np->clone_flags |= CLONE_NEWUSER;
		if (netns)
			np->clone_flags |= CLONE_NEWNET;
		np->pid_init = true;
		native_mounts_plan(&np->mounts, p, fp, abi > 0);
	} else if (p->private_tmp && abi > 0) {
		/* Locked for the whole run, by moat and its guard: a directory
		 * whose moat is gone (SIGKILLed before its guard started) is
		 * swept by the next run's guard, which runs beside the command
		 * (launch/guard.c; util/stale.h). */
		struct moat_error tmp_err = {0};

		np->private_tmp_dir = stale_mkdtemp(NATIVE_TMP_PREFIX, false, &np->private_tmp_lock, &tmp_err);
		/* A /tmp this user cannot write (a container's read-only root
		 * without a tmpfs there, Kubernetes' readOnlyRootFilesystem): no
		 * private tmp, fs.tmp missing with the cause, and the command
		 * gets no TMPDIR of moat's nor any /tmp to write. */
		if (!np->private_tmp_dir && !moat_errno_cannot_make(tmp_err.errnum)) {
			*err = tmp_err;
			return moat_error_wrap(err, "a private tmp");
		}
		if (!np->private_tmp_dir) {
			snprintf(tmp_why, sizeof(tmp_why), "no mount namespace, and no per-run directory for TMPDIR: %.200s",
				 tmp_err.message);
		} else {
			np->private_tmp_fd = open(np->private_tmp_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (np->private_tmp_fd < 0)
				return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", np->private_tmp_dir);
		}
	}

	if (abi > 0 && landlock_compile(p, fp, abi, np->private_tmp_fd, &np->landlock, err) < 0)
		return -1;

	snprintf(seccomp_why, sizeof(seccomp_why), "%.200s",
		 h->seccomp_why[0] ? h->seccomp_why : "seccomp filters are not available");
	/* net allow: the fence (kernel/netfence.h) makes every TCP connect
	 * outside the sandbox itself.  It holds only with all of its parts: a
	 * network namespace (nothing leaves but what the fence installs), the
	 * mount view (the fenced resolv.conf; the host's sockets hidden), user
	 * notification with ADDFD, and Landlock's TCP rules, which refuse the
	 * command's own connect and bind (the fence lets the kernel finish only
	 * non-INET connects, and Landlock holds those should a host socket be
	 * swapped under the number).  Any part missing: no fence at all, the
	 * network stays closed, and net.allow is missing. */
	if (p->net == MOAT_NET_ALLOW) {
		if (!netns)
			fence_why = "the fenced allowlist needs a network namespace";
		else if (!np->mounts.enabled)
			fence_why = "the fenced allowlist needs a mount namespace";
		else if (!h->net_fence)
			fence_why = h->net_fence_why;
		else if (np->landlock.abi < 4 ||
			 !(np->landlock.handled_net & MOAT_LANDLOCK_ACCESS_NET_CONNECT_TCP) ||
			 !(np->landlock.handled_net & MOAT_LANDLOCK_ACCESS_NET_BIND_TCP))
			fence_why = "the fenced allowlist needs Landlock ABI 4 (TCP rules)";
		else if (!h->seccomp)
			fence_why = seccomp_why;
	}
	if (h->seccomp) {
		/* Under the fence the main filter lets inet sockets be made, as
		 * for loopback: the fence decides each connect. */
		struct moat_seccomp_opts so = {.net = p->net == MOAT_NET_ALLOW && !fence_why ? MOAT_NET_LOOPBACK : p->net,
					       .allow_ptrace = false,
					       .allow_unix = p->unix_sockets};
		struct moat_error serr = {0};
		/* A filter moat has not reviewed for this architecture is a
		 * missing sys.filter (and what rests on it), not a failed run. */
		if (moat_seccomp_compile(&so, &np->bpf, &serr) == 0) {
			np->use_seccomp = true;
		} else if (serr.kind == MOAT_E_UNAVAIL) {
			snprintf(seccomp_why, sizeof(seccomp_why), "%.200s", serr.message);
			seccomp_hint = "none on this architecture yet: moat's seccomp filter is reviewed for x86_64 only";
		} else {
			*err = serr;
			return moat_error_wrap(err, "compiling the seccomp filter");
		}
	}

	np->net_fence = p->net == MOAT_NET_ALLOW && !fence_why && np->use_seccomp;
	if (p->net == MOAT_NET_ALLOW && !fence_why && !np->use_seccomp)
		fence_why = seccomp_why;
	if (np->net_fence)
		proxy_mode_env(p, bp);

	/* moat applies the rlimits itself (backend_rlimits: RLIMIT_CPU is
	 * each process's share, besides the tree's total in launch/cgroup.c,
	 * so the kernel stops one busy process on its own). */
	native_caps(p, np, netns, &bp->caps);
	bp->apply_rlimits = true;
	bp->no_new_privs = true;

	/* Verdicts, from what was compiled above and nothing else. */
	bp->fs_landlock_abi = np->landlock.abi;
	bp->landlock_scoped = np->landlock.scoped;
	if (np->landlock.abi > 0 && np->mounts.enabled)
		verdict_enforce(&props[MOAT_P_FS_READ], "a view with only the grants (%zu binds); landlock ABI %d, %zu "
							"rules on their inodes",
				np->mounts.view.n_binds, np->landlock.abi, np->landlock.n_rules);
	else if (np->landlock.abi > 0)
		verdict_enforce(&props[MOAT_P_FS_READ], "landlock ABI %d, %zu rules on the granted inodes",
				np->landlock.abi, np->landlock.n_rules);
	else if (np->mounts.enabled)
		verdict_enforce(&props[MOAT_P_FS_READ], "a view with only the grants (%zu binds; no Landlock)",
				np->mounts.view.n_binds);
	else
		verdict_missing(&props[MOAT_P_FS_READ], HINT_LANDLOCK, "neither Landlock nor a mount namespace here");

	/* Writes outside the grants: read-only binds (contents and metadata)
	 * with a mount namespace; Landlock alone governs contents but not
	 * chmod, chown, utimes or xattrs, and cannot hold the protected
	 * entries of a write grant (.git/hooks, ...) read-only. */
	if (np->mounts.enabled)
		verdict_enforce(&props[MOAT_P_FS_WRITE], "read-only binds outside the write grants, read-only root%s; "
							 "%zu protected entries pinned read-only",
				np->landlock.abi >= 3 ? "; landlock" : "", n_protected);
	else if (np->landlock.abi >= 3 && n_protected)
		verdict_missing(&props[MOAT_P_FS_WRITE], HINT_USERNS,
				"without a mount namespace (%s) files outside the write grants can have their metadata "
				"changed (Landlock does not govern chmod, chown, utimes or xattrs), and the %zu protected "
				"entries of the write grants (.git/hooks, ...) stay writable",
				h->userns_why[0] ? h->userns_why : "none here", n_protected);
	else if (np->landlock.abi >= 3)
		verdict_missing(&props[MOAT_P_FS_WRITE], HINT_USERNS,
				"without a mount namespace (%s) files outside the write grants can have their metadata "
				"changed (Landlock does not govern chmod, chown, utimes or xattrs)",
				h->userns_why[0] ? h->userns_why : "none here");
	else if (np->landlock.abi > 0)
		verdict_missing(&props[MOAT_P_FS_WRITE], HINT_LANDLOCK,
				"Landlock ABI %d cannot refuse truncate(2); ABI 3 is needed", np->landlock.abi);
	else
		verdict_missing(&props[MOAT_P_FS_WRITE], HINT_LANDLOCK, "Landlock is not available on this kernel");

	/* Denies are bound to inodes: no rule covers a directory on the way
	 * to a denied path (its entries are granted one by one), so a rename,
	 * a replacement or a file created there later is not granted; the
	 * mount view hides the denied names, or leaves them out. */
	if (np->mounts.enabled && np->landlock.abi > 0)
		verdict_enforce(&props[MOAT_P_FS_SECRETS], "%zu denied paths: landlock rules only on the entries "
							   "around them (inode-bound); masks or absent in the view",
				n_denies);
	else if (np->landlock.abi > 0)
		verdict_enforce(&props[MOAT_P_FS_SECRETS], "%zu denied paths: landlock rules only on the entries "
							   "around them (inode-bound)",
				n_denies);
	else if (np->mounts.enabled)
		verdict_enforce(&props[MOAT_P_FS_SECRETS], "%zu denied paths left out of the view: grants holding them "
							   "mounted entry by entry (%zu)",
				n_denies, np->mounts.view.n_expanded);
	else
		verdict_missing(&props[MOAT_P_FS_SECRETS], HINT_LANDLOCK,
				"neither Landlock nor a mount namespace is available");

	if (!backend_verdict_policy_tmp(p, props))
		; /* the policy shares the host's /tmp */
	else if (np->mounts.enabled)
		verdict_enforce(&props[MOAT_P_FS_TMP], "tmpfs on /tmp and /dev/shm in a mount namespace");
	else if (np->private_tmp_dir)
		verdict_enforce(&props[MOAT_P_FS_TMP], "per-run TMPDIR, removed afterwards (landlock)");
	else if (tmp_why[0])
		verdict_missing(&props[MOAT_P_FS_TMP], HINT_TMP_UNWRITABLE, "%s", tmp_why);
	else
		verdict_missing(&props[MOAT_P_FS_TMP], HINT_USERNS, "no mount namespace and no Landlock");

	/* net allow is as closed as none (the seccomp filter refuses inet
	 * sockets there too, kernel/seccomp.c), but net.none is asked for, and
	 * judged, under none only. */
	if (backend_verdict_policy_net_none(p, props)) {
		if (netns && np->use_seccomp)
			verdict_enforce(&props[MOAT_P_NET_NONE], "network namespace; seccomp: no inet sockets");
		else if (np->use_seccomp)
			verdict_enforce(&props[MOAT_P_NET_NONE], "seccomp: no inet sockets");
		else if (netns)
			verdict_enforce(&props[MOAT_P_NET_NONE], "network namespace without interfaces");
		else
			verdict_missing(&props[MOAT_P_NET_NONE], seccomp_hint, "neither seccomp nor a network namespace");
	}

	/* The fence opens the namespace: the command reaches the allowed
	 * destinations through host sockets, the host's own loopback among
	 * them (localhost:PORT, 127.0.0.1, a CIDR holding it). */
	if (np->net_fence)
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], "use --net loopback",
				"net allow reaches the allowed destinations from the host, its loopback included");
	else if (netns)
		verdict_enforce(&props[MOAT_P_NET_LOOPBACK], "network namespace with only lo");
	else
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], ns ? "use --net loopback" : HINT_USERNS,
				"loopback-only needs a network namespace%s%s", ns ? " (the policy shares the host's)" : ": ",
				ns ? "" : h->userns_why);

	if (np->net_fence)
		verdict_enforce(&props[MOAT_P_NET_ALLOW],
				"network namespace; seccomp user notification: moat makes each TCP connect to an allowed "
				"destination itself and hands over the socket, refuses the rest; DNS answered by moat for "
				"the allowed names only; landlock: no TCP connect or bind of the command's own (moat binds "
				"the command's sockets in the sandbox's namespace, never a host socket)");
	else if (p->net == MOAT_NET_ALLOW)
		verdict_missing(&props[MOAT_P_NET_ALLOW],
				!netns ? HINT_USERNS : np->landlock.abi < 4 ? HINT_LANDLOCK : HINT_NET_ALLOW, "%s; %s",
				fence_why,
				netns || np->use_seccomp ? "the network stays closed"
				: np->landlock.abi >= 4
				    ? "nor is the network closed without seccomp: landlock refuses TCP connect and bind, but "
				      "UDP and other protocols reach the host's network"
				    : "nor is the network closed: neither seccomp nor a network namespace is there");
	else
		verdict_missing(&props[MOAT_P_NET_ALLOW], HINT_NET_ALLOW, "the policy lists no destinations");

	if (np->use_seccomp && !p->unix_sockets)
		verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "seccomp: socket(AF_UNIX) refused%s%s",
				netns ? "; network namespace" : "", np->landlock.scoped ? "; landlock scope" : "");
	else if (netns)
		verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "network namespace%s",
				np->landlock.scoped ? ", landlock scope" : "");
	else if (np->landlock.scoped & MOAT_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)
		verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "landlock ABI %d abstract-socket scope", np->landlock.abi);
	else
		verdict_missing(&props[MOAT_P_IPC_ABSTRACT], HINT_USERNS,
				"needs seccomp, a network namespace or Landlock ABI 6");

	/* Pathname sockets: Landlock before ABI 9 does not govern connect(2)
	 * on them, and a read-only mount does not either, so any socket inside
	 * a granted path -- or bound there by the host during the run -- would
	 * be reachable.  Only refusing the command unix sockets of its own
	 * holds for every path. */
	if (np->use_seccomp && !p->unix_sockets && (np->clone_flags & CLONE_NEWIPC))
		verdict_enforce(&props[MOAT_P_IPC_UNIX], "seccomp: socket(AF_UNIX) refused (connected socketpairs "
							 "only); IPC namespace%s",
				np->mounts.enabled ? "; the view has no host /run, /var, /tmp or HOME" : "");
	else if (!(np->clone_flags & CLONE_NEWIPC))
		verdict_missing(&props[MOAT_P_IPC_UNIX], HINT_USERNS,
				"without an IPC namespace (%s) the host's SysV shared memory, semaphores and message "
				"queues are reachable",
				h->userns_why[0] ? h->userns_why : "none here");
	else if (p->unix_sockets)
		verdict_missing(&props[MOAT_P_IPC_UNIX], "drop --unix-sockets",
				"--unix-sockets lets the command make unix sockets: a host socket inside a granted "
				"path stays reachable");
	else
		verdict_missing(&props[MOAT_P_IPC_UNIX], seccomp_hint,
				"without seccomp, socket(AF_UNIX) cannot be refused: a host socket inside a granted "
				"path stays reachable (Landlock before ABI 9 does not govern connect)");

	if (np->pid_init)
		verdict_enforce(&props[MOAT_P_PROC_PID], "pid namespace with a fresh /proc");
	else
		verdict_missing(&props[MOAT_P_PROC_PID], HINT_USERNS, "no pid namespace: %s", h->userns_why);

	if (np->use_seccomp && (np->landlock.abi > 0 || np->pid_init))
		verdict_enforce(&props[MOAT_P_PROC_PTRACE], "seccomp: ptrace, process_vm_* refused; %s",
				np->landlock.abi > 0 ? "landlock ptrace scoping" : "pid namespace");
	else if (!np->use_seccomp)
		verdict_missing(&props[MOAT_P_PROC_PTRACE], seccomp_hint,
				"without seccomp, ptrace and process_vm_* cannot be refused: %s", seccomp_why);
	else /* the hint names the missing piece, not seccomp, which is here */
		verdict_missing(&props[MOAT_P_PROC_PTRACE], HINT_USERNS,
				"seccomp refuses ptrace and process_vm_*, but /proc/PID/mem and environ of the user's other "
				"processes stay open: that needs Landlock (its ptrace restriction; %s) or a pid "
				"namespace (%s)",
				h->landlock_why[0] ? h->landlock_why : "not available here",
				h->userns_why[0] ? h->userns_why : "none here");

	if (np->use_seccomp)
		verdict_enforce(&props[MOAT_P_SYS_FILTER], "seccomp-bpf, %u instructions", np->bpf.len);
	else
		verdict_missing(&props[MOAT_P_SYS_FILTER], seccomp_hint, "%s", seccomp_why);

	/* With a terminal (launch/term.h) the command's controlling terminal
	 * is a pty of its own, which moat relays: TIOCSTI reaches only that.
	 * Without one, a terminal among fds 0-2 is the caller's, and setsid
	 * alone does not keep it: a session leader takes a terminal that is no
	 * session's controlling terminal with TIOCSCTTY.  The seccomp filter
	 * lets TIOCSCTTY be (script, tmux and node-pty make a pty of their
	 * own their terminal) and refuses TIOCSTI, which is what injects. */
	int caller_tty = -1;
	for (int fd = 0; fd <= 2 && !p->n_terminal && caller_tty < 0; fd++)
		if (isatty(fd))
			caller_tty = fd;
	if (np->use_seccomp && p->n_terminal)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid, a pty of its own as its terminal (relayed by "
							   "moat); seccomp: TIOCSTI, TIOCLINUX, TIOCSETD refused");
	else if (np->use_seccomp)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid; seccomp: TIOCSTI, TIOCLINUX, TIOCSETD refused");
	else if (caller_tty >= 0)
		verdict_missing(&props[MOAT_P_TTY_INJECT], seccomp_hint,
				"fd %d is a terminal the command shares (not a pty of moat's): without seccomp, should it "
				"be no session's controlling terminal, the command can take it (TIOCSCTTY) and type into "
				"it (TIOCSTI)",
				caller_tty);
	else if ((h->userns || !h->root) && p->n_terminal)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid, a pty of its own as its terminal (relayed by "
							   "moat): TIOCSTI reaches only it; no CAP_SYS_ADMIN");
	else if (h->userns || !h->root)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid: no controlling terminal, no CAP_SYS_ADMIN");
	else
		verdict_missing(&props[MOAT_P_TTY_INJECT], seccomp_hint,
				"root keeps TIOCSTI on any terminal without seccomp or a user namespace");

	verdict_enforce(&props[MOAT_P_ENV_CURATED], "exact environment built by moat");
	{
		char kept[200];
		verdict_enforce(&props[MOAT_P_FD_CLEAN], "close_range: %s", backend_fds_kept(p, kept, sizeof(kept)));
	}
	limits_verdicts(backend_limits(ctx, bp), &props[MOAT_P_RES_LIMITS], &props[MOAT_P_PROC_TREE]);
	return 0;
}

const struct moat_backend backend_native = {
    .name = "native",
    .summary = "moat's own: namespaces, a mount view, Landlock and seccomp applied in the child",
    .install_hint = NULL,
    .os = "linux",
    .compile = native_compile,
};
