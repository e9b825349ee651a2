/* The bwrap backend: the policy compiled into one bubblewrap argv that
 * mirrors the native backend's view (docs/backends.md, "bwrap").
 *
 * The root is bwrap's own empty tmpfs, made read-only at the end, so only
 * granted paths exist: read grants are --ro-bind, write grants --bind,
 * denied paths are masked after the grant that shows them, /tmp, /dev/shm
 * and HOME are fresh tmpfs.  The mounts are emitted sorted by destination,
 * so a parent is always mounted before what lies below it.  moat's own
 * seccomp program is handed to bwrap through a memfd (--seccomp FD); bwrap
 * reads it, closes the fd and loads it just before executing the command.
 *
 * Verified with bubblewrap 0.8.0 (tests/blackbox/golden_bwrap_firejail.sh
 * checks the argv; the lead's backends.sh runs it): bwrap passes the
 * environment and the rlimits through unchanged, keeps the fds moat leaves
 * open and adds none, drops every capability (--cap-drop ALL, also as
 * root) and sets no_new_privs itself. */
#include "backends/backend.h"
#include "backends/mounts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/filter.h>

#include "native/native.h"
#include "native/seccomp.h"
#include "plan/plan.h"
#include "util/cleanup.h"
#include "util/mem.h"

#define HINT_USERNS NATIVE_HINT_USERNS "; or run moat as root"
#define HINT_SECCOMP "use a kernel built with CONFIG_SECCOMP_FILTER=y"

/* In argv.json when exporting: the fd is made by the run, not by export. */
#define EXPORT_FD_PLACEHOLDER "FD"

static void emit_op(struct backend_plan *bp, const struct mount_op *op)
{
	switch (op->kind) {
	case MOUNT_PROC:
		backend_argv_add(bp, "--proc");
		backend_argv_add(bp, op->dest);
		break;
	case MOUNT_DEV:
		backend_argv_add(bp, "--dev");
		backend_argv_add(bp, op->dest);
		break;
	case MOUNT_TMPFS:
		backend_argv_add(bp, "--perms");
		backend_argv_addf(bp, "%04o", op->mode);
		backend_argv_add(bp, "--tmpfs");
		backend_argv_add(bp, op->dest);
		break;
	case MOUNT_BIND_RO:
	case MOUNT_BIND_RW:
		backend_argv_add(bp, op->kind == MOUNT_BIND_RO ? "--ro-bind" : "--bind");
		backend_argv_add(bp, op->src);
		backend_argv_add(bp, op->dest);
		break;
	case MOUNT_DEV_BIND:
		backend_argv_add(bp, "--dev-bind");
		backend_argv_add(bp, op->src);
		backend_argv_add(bp, op->dest);
		if (op->read_only) {
			backend_argv_add(bp, "--remount-ro");
			backend_argv_add(bp, op->dest);
		}
		break;
	case MOUNT_SYMLINK:
		backend_argv_add(bp, "--symlink");
		backend_argv_add(bp, op->src);
		backend_argv_add(bp, op->dest);
		break;
	case MOUNT_MASK_DIR:
		backend_argv_add(bp, "--perms");
		backend_argv_add(bp, "0000");
		backend_argv_add(bp, "--tmpfs");
		backend_argv_add(bp, op->dest);
		backend_argv_add(bp, "--remount-ro");
		backend_argv_add(bp, op->dest);
		break;
	case MOUNT_MASK_FILE:
		backend_argv_add(bp, "--ro-bind");
		backend_argv_add(bp, "/dev/null");
		backend_argv_add(bp, op->dest);
		break;
	case MOUNT_DIR:
		backend_argv_add(bp, "--dir");
		backend_argv_add(bp, op->dest);
		break;
	}
}

/* moat's seccomp program in a memfd, for --seccomp: the raw sock_filter
 * array, which is what bwrap reads.  Returns the fd (close-on-exec: the
 * launcher clears that for pass_fds only), or -1 with err. */
static int seccomp_memfd(const struct moat_bpf *bpf, struct moat_error *err)
{
	cleanup_close int fd = memfd_create("moat-seccomp", MFD_CLOEXEC);
	const char *c = (const char *)bpf->insns;
	size_t len = (size_t)bpf->len * sizeof(struct sock_filter);

	if (fd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "memfd_create for the seccomp program");
	while (len > 0) {
		ssize_t n = write(fd, c, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return moat_error_set(err, MOAT_E_SYSTEM, n < 0 ? errno : EIO, "writing the seccomp program");
		c += n;
		len -= (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "rewinding the seccomp program");
	return steal_fd(&fd);
}

/* The namespaces: the user namespace only when moat may make one (as root
 * without it, bwrap makes the others with root's own privilege). */
static void emit_namespaces(struct backend_plan *bp, const struct moat_policy *p, const struct moat_host *h)
{
	if (h->userns)
		backend_argv_add(bp, "--unshare-user");
	backend_argv_add(bp, "--unshare-pid");
	backend_argv_add(bp, "--unshare-ipc");
	backend_argv_add(bp, "--unshare-uts");
	backend_argv_add(bp, "--unshare-cgroup-try");
	if (p->net != MOAT_NET_ALL)
		backend_argv_add(bp, "--unshare-net");
	/* Nested user namespaces are refused by moat's seccomp filter too;
	 * this keeps them away when seccomp is off. */
	if (h->userns)
		backend_argv_add(bp, "--disable-userns");
	backend_argv_add(bp, "--die-with-parent");
	backend_argv_add(bp, "--new-session");
	backend_argv_add(bp, "--cap-drop");
	backend_argv_add(bp, "ALL");
}

struct bwrap_facts {
	bool seccomp;
	unsigned short seccomp_len;
	char seccomp_why[256];
	size_t n_grants, n_masks;
};

static void verdicts(const struct backend_ctx *ctx, const struct backend_plan *bp, const struct bwrap_facts *f,
		     struct moat_verdict *props)
{
	const struct moat_policy *p = ctx->policy;
	const struct moat_host *h = ctx->host;
	bool netns = p->net != MOAT_NET_ALL;

	verdict_enforce(&props[MOAT_P_FS_READ], "bwrap: empty read-only tmpfs root, %zu grants bound", f->n_grants);
	verdict_enforce(&props[MOAT_P_FS_WRITE], "bwrap: read-only binds outside the write grants, read-only root");
	verdict_enforce(&props[MOAT_P_FS_SECRETS], "bwrap: %zu masks over denied paths (empty, unreadable)",
			f->n_masks);
	if (backend_verdict_policy_tmp(p, props))
		verdict_enforce(&props[MOAT_P_FS_TMP], "bwrap: tmpfs on /tmp and /dev/shm");

	if (!backend_verdict_policy_net_none(p, props)) {
		/* missing: the policy opens the network */
	} else if (f->seccomp)
		verdict_enforce(&props[MOAT_P_NET_NONE], "bwrap --unshare-net; seccomp: socket() AF_UNIX only");
	else
		verdict_missing(&props[MOAT_P_NET_NONE], HINT_SECCOMP,
				"bwrap brings lo up in its network namespace: without seccomp, inet sockets work "
				"(to the sandbox's own loopback)");
	if (netns)
		verdict_enforce(&props[MOAT_P_NET_LOOPBACK], "bwrap --unshare-net: network namespace with only lo");
	else
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], "use --net loopback", "the policy opens the network (net all)");
	verdict_missing(&props[MOAT_P_NET_ALLOW], "--net all gives the whole network, unfiltered; --net loopback or "
						  "none are enforced",
			"bwrap has no per-destination network rules");
	if (netns)
		verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "bwrap --unshare-net: abstract sockets are per network "
							     "namespace");
	else
		verdict_missing(&props[MOAT_P_IPC_ABSTRACT], "use --net loopback or none, or --backend native",
				"with net all bwrap shares the host's network namespace, and its abstract sockets");
	verdict_enforce(&props[MOAT_P_IPC_UNIX], "bwrap: only granted paths exist, private /tmp%s; sockets inside "
						 "granted paths stay reachable",
			p->net == MOAT_NET_ALL ? ", /run socket dirs masked" : "");
	verdict_enforce(&props[MOAT_P_PROC_PID], "bwrap --unshare-pid with a fresh /proc");
	if (f->seccomp)
		verdict_enforce(&props[MOAT_P_PROC_PTRACE], "seccomp (via bwrap): ptrace, process_vm_* refused; pid "
							    "namespace");
	else
		verdict_missing(&props[MOAT_P_PROC_PTRACE], HINT_SECCOMP, "needs seccomp: %s", f->seccomp_why);
	if (f->seccomp)
		verdict_enforce(&props[MOAT_P_SYS_FILTER], "moat's seccomp-bpf via bwrap --seccomp, %u instructions",
				f->seccomp_len);
	else
		verdict_missing(&props[MOAT_P_SYS_FILTER], HINT_SECCOMP, "%s", f->seccomp_why);
	if (f->seccomp)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "bwrap --new-session; seccomp: TIOCSTI, TIOCLINUX refused");
	else if (h->userns || !h->root)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "bwrap --new-session: no controlling terminal; user "
							   "namespace, no capability");
	else
		verdict_missing(&props[MOAT_P_TTY_INJECT], HINT_SECCOMP,
				"root keeps TIOCSTI on any terminal without seccomp or a user namespace");
	/* Measured with 0.8.0: the environment and the rlimits reach the
	 * command unchanged, the --seccomp fd is closed, no fd is added. */
	backend_verdict_moat_owned(ctx, bp, "bwrap", true, true, bp->apply_rlimits, props);
}

/* bwrap is not setuid here: it needs a user namespace unless moat is
 * root.  Returns false (and every verdict missing) when it cannot run. */
static bool bwrap_can_run(const struct moat_host *h, struct moat_verdict *props)
{
	char reason[256];

	if (h->userns || h->root)
		return true;
	snprintf(reason, sizeof(reason), "bwrap is not setuid and needs unprivileged user namespaces: %.180s",
		 h->userns_why[0] ? h->userns_why : "not available here");
	backend_verdict_all_missing(props, HINT_USERNS, reason);
	return false;
}

static int bwrap_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			 struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	struct bwrap_facts f = {0};
	struct moat_bpf bpf = {0};
	struct mount_plan o = {0};
	bool can_run;
	size_t i;

	bp->no_new_privs = true;
	bp->apply_rlimits = true;
	can_run = bwrap_can_run(ctx->host, props);
	if (!can_run && !ctx->exporting)
		return 0; /* no argv: nothing to run */

	if (ctx->host->seccomp) {
		struct moat_seccomp_opts so = {.net = p->net, .allow_ptrace = false};
		struct moat_error serr = {0};
		if (moat_seccomp_compile(&so, &bpf, &serr) == 0) {
			f.seccomp = true;
			f.seccomp_len = bpf.len;
		} else if (serr.kind == MOAT_E_UNAVAIL) {
			snprintf(f.seccomp_why, sizeof(f.seccomp_why), "%.200s", serr.message);
		} else {
			*err = serr;
			return moat_error_wrap(err, "compiling the seccomp filter");
		}
	} else {
		snprintf(f.seccomp_why, sizeof(f.seccomp_why), "%.200s",
			 ctx->host->seccomp_why[0] ? ctx->host->seccomp_why : "seccomp filters are not available");
	}

	backend_argv_add(bp, "bwrap");
	emit_namespaces(bp, p, ctx->host);
	if (f.seccomp) {
		backend_argv_add(bp, "--seccomp");
		if (ctx->exporting) {
			backend_argv_add(bp, EXPORT_FD_PLACEHOLDER);
		} else {
			int fd = seccomp_memfd(&bpf, err);
			if (fd < 0) {
				moat_bpf_free(&bpf);
				return -1;
			}
			backend_argv_addf(bp, "%d", backend_pass_fd(bp, fd));
		}
	}
	moat_bpf_free(&bpf);

	mount_plan_build(p, &o);
	f.n_masks = o.n_masks;
	for (i = 0; i < o.n; i++) {
		f.n_grants += mount_is_bind(o.v[i].kind) || o.v[i].kind == MOUNT_SYMLINK;
		emit_op(bp, &o.v[i]);
	}
	mount_plan_free(&o);
	/* Last: the root tmpfs (where the mount points were made) read-only. */
	backend_argv_add(bp, "--remount-ro");
	backend_argv_add(bp, "/");
	backend_argv_add(bp, "--chdir");
	backend_argv_add(bp, p->cwd);
	/* bwrap sets PWD to the --chdir directory, whatever the environment
	 * said (0.8.0, measured). */
	backend_env_set(bp, "PWD", p->cwd);
	backend_argv_add_command(bp, p, "--");

	if (can_run)
		verdicts(ctx, bp, &f, props);
	return 0;
}

const struct moat_backend backend_bwrap = {
	.name = "bwrap",
	.tools = {"bwrap"},
	.summary = "bubblewrap: namespaces and bind mounts, with moat's own seccomp program",
	.install_hint = "apt-get install bubblewrap",
	.os = "linux",
	.needs_work_dir = false,
	.compile = bwrap_compile,
};
