#include "native/native.h"

#include <errno.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/plan.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

#define HINT_USERNS NATIVE_HINT_USERNS
#define HINT_LANDLOCK                                                                                                  \
	"use a kernel >= 6.7 with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= boot parameter "           \
	"(check /sys/kernel/security/lsm); Debian: linux-image from bookworm-backports"
#define HINT_SECCOMP "use a kernel built with CONFIG_SECCOMP_FILTER=y"

/* Sockets and agents live under /run; when the network is on, /run holds
 * the resolver's files too, so only the socket directories are masked. */
static const char *const run_sockets[] = {
	"/run/dbus", "/run/docker.sock", "/run/docker", "/run/containerd", "/run/podman", "/run/user",
	"/run/systemd/private", "/run/systemd/journal", "/var/run/docker.sock", "/run/snapd.socket",
};

/* The device nodes of the sandbox's minimal /dev. */
static const char *const dev_nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};

void native_plan_init(struct native_plan *np)
{
	memset(np, 0, sizeof(*np));
	landlock_plan_init(&np->landlock);
}

void native_plan_free(struct native_plan *np)
{
	mounts_free(&np->mounts);
	landlock_plan_free(&np->landlock);
	moat_bpf_free(&np->bpf);
	free(np->private_tmp_dir);
	memset(np, 0, sizeof(*np));
	np->landlock.ruleset_fd = -1;
}

static void add_rlimit(struct native_plan *np, int resource, rlim_t value)
{
	if (np->n_rlimits < ARRAY_LEN(np->rlimits)) {
		np->rlimits[np->n_rlimits].resource = resource;
		np->rlimits[np->n_rlimits].value = value;
		np->n_rlimits++;
	}
}

const char *native_private_home(const struct moat_policy *p)
{
	const char *home = getenv("HOME");
	struct stat st;
	size_t i;

	if (!home || home[0] != '/' || strcmp(home, "/") == 0 || stat(home, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY && path_within(home, p->paths[i].path))
			return NULL;
	return home;
}

static void plan_masks(const struct moat_policy *p, struct native_plan *np)
{
	const char *home;
	size_t i;

	for (i = 0; i < p->n_paths; i++) {
		struct stat st;

		if (p->paths[i].access != MOAT_ACCESS_DENY || stat(p->paths[i].path, &st) != 0)
			continue;
		mounts_add(&np->mounts, S_ISDIR(st.st_mode) ? NATIVE_MOUNT_MASK_DIR : NATIVE_MOUNT_MASK_FILE,
			   p->paths[i].path);
	}
	/* HOME, unless granted as a whole: an empty tmpfs with only the grants
	 * below it bound back.  Agent sockets live there (~/.1password,
	 * ~/.gnupg, editors' and password managers' sockets), and Landlock
	 * before ABI 9 does not govern connect(2): hiding is the only defence. */
	home = native_private_home(p);
	if (home)
		mounts_add(&np->mounts, NATIVE_MOUNT_TMPFS, home);
	/* A minimal /dev (before /dev/shm, which is mounted inside it). */
	for (i = 0; i < ARRAY_LEN(dev_nodes); i++)
		if (access(dev_nodes[i], F_OK) == 0)
			mounts_add(&np->mounts, NATIVE_MOUNT_KEEP, dev_nodes[i]);
	mounts_add(&np->mounts, NATIVE_MOUNT_DEV, "/dev");
	if (p->private_tmp) {
		mounts_add(&np->mounts, NATIVE_MOUNT_TMPFS, "/tmp");
		if (access("/dev/shm", F_OK) == 0)
			mounts_add(&np->mounts, NATIVE_MOUNT_TMPFS, "/dev/shm");
	}
	/* Granted paths below a directory replaced by a tmpfs are bound back
	 * into it, so `--write /tmp/x` still means /tmp/x.
	 * Fix: not the cwd.  Below the private tmpfs Landlock's rule for /tmp
	 * covers whatever is bound there, so binding an ungranted cwd exposed
	 * it read-write; a granted cwd comes with its grant, and an ungranted
	 * one is made as an empty directory by the child (launch/child.c). */
	for (i = 0; i < p->n_paths; i++) {
		const char *path = p->paths[i].path;
		if (p->paths[i].access == MOAT_ACCESS_DENY)
			continue;
		if ((p->private_tmp && (path_within(path, "/tmp") || path_within(path, "/dev/shm"))) ||
		    (path_within(path, "/dev") && !path_within(path, "/dev/shm")) ||
		    (home && path_within(path, home)) || (p->net != MOAT_NET_ALL && path_within(path, "/run")))
			if (strcmp(path, "/tmp") != 0 && strcmp(path, "/run") != 0 && strcmp(path, "/dev/shm") != 0 &&
			    strcmp(path, "/dev") != 0 && !(home && strcmp(path, home) == 0) &&
			    access(path, F_OK) == 0)
				mounts_add(&np->mounts, NATIVE_MOUNT_KEEP, path);
	}
	/* Write grants (directories and regular files: device nodes can be
	 * written on a read-only mount) are re-opened for writing last. */
	for (i = 0; i < p->n_paths; i++) {
		struct stat st;

		if (p->paths[i].access == MOAT_ACCESS_WRITE && stat(p->paths[i].path, &st) == 0 &&
		    (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			mounts_add(&np->mounts, NATIVE_MOUNT_WRITABLE, p->paths[i].path);
	}
	if (p->net != MOAT_NET_ALL) {
		mounts_add(&np->mounts, NATIVE_MOUNT_TMPFS, "/run");
	} else {
		for (i = 0; i < ARRAY_LEN(run_sockets); i++) {
			struct stat st;
			if (stat(run_sockets[i], &st) == 0)
				mounts_add(&np->mounts, S_ISDIR(st.st_mode) ? NATIVE_MOUNT_MASK_DIR
									    : NATIVE_MOUNT_MASK_FILE,
					   run_sockets[i]);
		}
	}
}

static size_t count_denies(const struct moat_policy *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->n_paths; i++)
		n += p->paths[i].access == MOAT_ACCESS_DENY;
	return n;
}

int native_compile(const struct moat_policy *p, const struct moat_host *h, struct native_plan *np,
		   struct moat_verdict *props, struct moat_error *err)
{
	bool ns = h->userns || h->root;
	/* A network namespace costs ~1.5 ms to create (and can stall under
	 * load).  With no network at all, seccomp (AF_UNIX only) and Landlock's
	 * abstract-socket scope (ABI >= 6) already give net.none and
	 * ipc.abstract, so it is made only when it adds something: loopback
	 * mode, or a host without one of those two. */
	bool netns = ns && (p->net == MOAT_NET_LOOPBACK ||
			    (p->net == MOAT_NET_NONE && !(h->seccomp && h->landlock_abi >= 6)));
	int abi = h->landlock_abi;
	const char *tmp_extra = NULL;
	char rl[160];

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
		np->mounts.enabled = true;
		plan_masks(p, np);
		mounts_add(&np->mounts, NATIVE_MOUNT_PROC, "/proc");
	} else if (p->private_tmp && abi > 0) {
		char tmpl[] = "/tmp/moat-tmp.XXXXXX";
		if (!mkdtemp(tmpl))
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "creating a private tmp under /tmp");
		np->private_tmp_dir = moat_xstrdup(tmpl);
		tmp_extra = np->private_tmp_dir;
	}

	if (abi > 0 && landlock_compile(p, abi, !np->mounts.enabled, tmp_extra, &np->landlock, err) < 0)
		return -1;

	if (h->seccomp) {
		struct moat_seccomp_opts so = {.net = p->net, .allow_ptrace = false};
		if (moat_seccomp_compile(&so, &np->bpf, err) < 0)
			return moat_error_wrap(err, "compiling the seccomp filter");
		np->use_seccomp = true;
	}

	add_rlimit(np, RLIMIT_CORE, 0);
	snprintf(rl, sizeof(rl), "setrlimit: core 0");
	if (p->limits.memory_bytes != MOAT_LIMIT_UNSET)
		add_rlimit(np, RLIMIT_AS, (rlim_t)p->limits.memory_bytes);
	if (p->limits.pids != MOAT_LIMIT_UNSET)
		add_rlimit(np, RLIMIT_NPROC, (rlim_t)p->limits.pids);
	if (p->limits.files != MOAT_LIMIT_UNSET)
		add_rlimit(np, RLIMIT_NOFILE, (rlim_t)p->limits.files);
	if (p->limits.cpu_seconds != MOAT_LIMIT_UNSET)
		add_rlimit(np, RLIMIT_CPU, (rlim_t)p->limits.cpu_seconds);
	if (np->n_rlimits > 1)
		snprintf(rl, sizeof(rl), "setrlimit: core 0 and %zu declared limits", np->n_rlimits - 1);

	/* Verdicts, from what was compiled above and nothing else. */
	if (np->landlock.abi > 0)
		verdict_enforce(&props[MOAT_P_FS_READ], "landlock ABI %d, %zu rules", np->landlock.abi,
				np->landlock.n_rules);
	else
		verdict_missing(&props[MOAT_P_FS_READ], HINT_LANDLOCK, "Landlock is not available on this kernel");

	/* Landlock governs contents, not metadata: chmod, chown, utimes and
	 * xattrs outside the write grants are refused only by the read-only
	 * mount view (native/mounts.c), so without a mount namespace fs.write
	 * is not claimed. */
	if (np->landlock.abi >= 3 && np->mounts.enabled)
		verdict_enforce(&props[MOAT_P_FS_WRITE], "landlock ABI %d; read-only mount view outside the write grants",
				np->landlock.abi);
	else if (np->landlock.abi >= 3)
		verdict_missing(&props[MOAT_P_FS_WRITE], HINT_USERNS,
				"Landlock does not govern chmod, chown, utimes or xattrs; without a mount namespace "
				"(%s) files outside the write grants can have their metadata changed",
				h->userns_why[0] ? h->userns_why : "none here");
	else if (np->landlock.abi > 0)
		verdict_missing(&props[MOAT_P_FS_WRITE], HINT_LANDLOCK,
				"Landlock ABI %d cannot refuse truncate(2); ABI 3 is needed", np->landlock.abi);
	else
		verdict_missing(&props[MOAT_P_FS_WRITE], HINT_LANDLOCK, "Landlock is not available on this kernel");

	if (np->mounts.enabled && np->landlock.abi > 0)
		verdict_enforce(&props[MOAT_P_FS_SECRETS], "mount masks over %zu denied paths, landlock",
				count_denies(p));
	else if (np->landlock.abi > 0)
		verdict_enforce(&props[MOAT_P_FS_SECRETS], "landlock: grants expanded around %zu denied paths",
				count_denies(p));
	else
		verdict_missing(&props[MOAT_P_FS_SECRETS], HINT_LANDLOCK,
				"neither Landlock nor a mount namespace is available");

	if (np->mounts.enabled && p->private_tmp)
		verdict_enforce(&props[MOAT_P_FS_TMP], "tmpfs on /tmp and /dev/shm in a mount namespace");
	else if (np->private_tmp_dir)
		verdict_enforce(&props[MOAT_P_FS_TMP], "per-run TMPDIR, removed afterwards (landlock)");
	else
		verdict_missing(&props[MOAT_P_FS_TMP], HINT_USERNS, "no mount namespace and no Landlock");

	if (p->net != MOAT_NET_NONE)
		verdict_missing(&props[MOAT_P_NET_NONE], "drop --net (or use a profile without network): net.none "
							 "needs --net none",
				"the policy opens the network (net %s)", moat_net_name(p->net));
	else if (netns && np->use_seccomp)
		verdict_enforce(&props[MOAT_P_NET_NONE], "network namespace; seccomp: socket() AF_UNIX only");
	else if (np->use_seccomp)
		verdict_enforce(&props[MOAT_P_NET_NONE], "seccomp: socket() AF_UNIX only");
	else if (netns)
		verdict_enforce(&props[MOAT_P_NET_NONE], "network namespace without interfaces");
	else
		verdict_missing(&props[MOAT_P_NET_NONE], HINT_SECCOMP, "neither seccomp nor a network namespace");

	if (netns)
		verdict_enforce(&props[MOAT_P_NET_LOOPBACK], "network namespace with only lo");
	else
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], ns ? "use --net loopback" : HINT_USERNS,
				"loopback-only needs a network namespace%s%s", ns ? ", made only for --net loopback" : ": ",
				ns ? "" : h->userns_why);

	verdict_missing(&props[MOAT_P_NET_ALLOW], "--net all gives the whole network, unfiltered; --net loopback or "
						  "none are enforced",
			"the native backend has no per-destination network rules");

	if (netns)
		verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "network namespace%s",
				np->landlock.scoped ? ", landlock scope" : "");
	else if (np->landlock.scoped & MOAT_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)
		verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "landlock ABI %d abstract-socket scope", np->landlock.abi);
	else
		verdict_missing(&props[MOAT_P_IPC_ABSTRACT], HINT_USERNS,
				"needs a network namespace or Landlock ABI 6");

	if (np->mounts.enabled)
		verdict_enforce(&props[MOAT_P_IPC_UNIX],
				"mount namespace: private /tmp, /run%s masked; sockets inside granted paths stay "
				"reachable (Landlock before ABI 9 does not govern connect)",
				p->net == MOAT_NET_ALL ? " socket dirs" : "");
	else
		verdict_missing(&props[MOAT_P_IPC_UNIX], HINT_USERNS,
				"Landlock before ABI 9 does not govern connect(2) to unix sockets; a mount namespace "
				"is needed: %s",
				h->userns_why);

	if (np->pid_init)
		verdict_enforce(&props[MOAT_P_PROC_PID], "pid namespace with a fresh /proc");
	else
		verdict_missing(&props[MOAT_P_PROC_PID], HINT_USERNS, "no pid namespace: %s", h->userns_why);

	if (np->use_seccomp && (np->landlock.abi > 0 || np->pid_init))
		verdict_enforce(&props[MOAT_P_PROC_PTRACE], "seccomp: ptrace, process_vm_* refused; %s",
				np->landlock.abi > 0 ? "landlock ptrace scoping" : "pid namespace");
	else
		verdict_missing(&props[MOAT_P_PROC_PTRACE], HINT_SECCOMP,
				"needs seccomp and Landlock or a pid namespace");

	if (np->use_seccomp)
		verdict_enforce(&props[MOAT_P_SYS_FILTER], "seccomp-bpf, %u instructions", np->bpf.len);
	else
		verdict_missing(&props[MOAT_P_SYS_FILTER], HINT_SECCOMP, "seccomp filters are not available");

	if (np->use_seccomp)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid; seccomp: TIOCSTI, TIOCLINUX refused");
	else if (h->userns || !h->root)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid: no controlling terminal, no CAP_SYS_ADMIN");
	else
		verdict_missing(&props[MOAT_P_TTY_INJECT], HINT_SECCOMP,
				"root keeps TIOCSTI on any terminal without seccomp or a user namespace");

	verdict_enforce(&props[MOAT_P_ENV_CURATED], "exact environment built by moat");
	verdict_enforce(&props[MOAT_P_FD_CLEAN], "close_range: 0, 1, 2 and %zu declared", p->n_keep_fds);
	/* The kernel never applies RLIMIT_NPROC to uid 0 (INIT_USER), even
	 * inside a user namespace where uid 0 is mapped to itself: as root a
	 * process limit would be a claim without enforcement. */
	if (p->limits.pids != MOAT_LIMIT_UNSET && h->uid == 0)
		verdict_missing(&props[MOAT_P_RES_LIMITS], "run moat as an unprivileged user for --pids",
				"--pids: RLIMIT_NPROC does not apply to uid 0, and moat has no cgroup support yet");
	else
		verdict_enforce(&props[MOAT_P_RES_LIMITS], "%s", rl);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void native_cleanup(struct native_plan *np)
{
	/* FTW_PHYS: never follow a link the sandbox planted in its tmp. */
	if (np->private_tmp_dir)
		nftw(np->private_tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
