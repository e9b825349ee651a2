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

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/filter.h>

#include "native/native.h"
#include "native/seccomp.h"
#include "plan/plan.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

#define HINT_USERNS NATIVE_HINT_USERNS "; or run moat as root"
#define HINT_SECCOMP "use a kernel built with CONFIG_SECCOMP_FILTER=y"

/* In argv.json when exporting: the fd is made by the run, not by export. */
#define EXPORT_FD_PLACEHOLDER "FD"

/* Socket directories of /run, masked when /run is visible (net all). */
static const char *const run_sockets[] = {
	"/run/dbus", "/run/docker.sock", "/run/docker", "/run/containerd", "/run/podman", "/run/user",
	"/run/systemd/private", "/run/systemd/journal", "/var/run/docker.sock", "/run/snapd.socket",
};

/* Device nodes bwrap's --dev already provides: grants of them add nothing. */
static const char *const dev_nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
					"/dev/tty"};

/* In the order they are emitted when two share a destination. */
enum op_kind {
	OP_PROC,      /* --proc */
	OP_DEV,       /* --dev */
	OP_TMPFS,     /* --perms MODE --tmpfs: /tmp, /dev/shm, HOME, /run */
	OP_BIND_RO,   /* --ro-bind */
	OP_BIND_RW,   /* --bind */
	OP_DEV_BIND,  /* --dev-bind (+ --remount-ro for a read grant) */
	OP_SYMLINK,   /* --symlink: a granted link whose target is granted too */
	OP_MASK_DIR,  /* --perms 0000 --tmpfs, --remount-ro */
	OP_MASK_FILE, /* --ro-bind /dev/null: nodev, so open(2) is EACCES */
	OP_DIR,       /* --dir: the cwd when nothing shows it */
};

struct op {
	enum op_kind kind;
	char *dest;     /* path inside the sandbox */
	char *src;      /* bind source, symlink target */
	char *src_real; /* binds: the host directory the view shows */
	bool read_only; /* OP_DEV_BIND */
	unsigned mode;  /* OP_TMPFS */
};

struct ops {
	struct op *v;
	size_t n, cap;
};

static void ops_free(struct ops *o)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		free(o->v[i].dest);
		free(o->v[i].src);
		free(o->v[i].src_real);
	}
	free(o->v);
	memset(o, 0, sizeof(*o));
}

static bool is_bind(enum op_kind k)
{
	return k == OP_BIND_RO || k == OP_BIND_RW || k == OP_DEV_BIND;
}

static struct op *ops_find(struct ops *o, const char *dest)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (strcmp(o->v[i].dest, dest) == 0)
			return &o->v[i];
	return NULL;
}

static struct op *ops_add(struct ops *o, enum op_kind kind, const char *dest, const char *src)
{
	struct op *op;

	o->v = moat_xgrow(o->v, &o->cap, o->n + 1, sizeof(*o->v));
	op = &o->v[o->n++];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->dest = moat_xstrdup(dest);
	op->src = src ? moat_xstrdup(src) : NULL;
	return op;
}

/* The op whose destination is the longest ancestor-or-equal of `path`
 * (masks and --dir excluded): what shows `path` in the sandbox, or NULL
 * when only the root tmpfs does. */
static const struct op *ops_cover(const struct ops *o, const char *path)
{
	const struct op *best = NULL;
	size_t i;

	for (i = 0; i < o->n; i++) {
		const struct op *op = &o->v[i];
		if (op->kind >= OP_MASK_DIR || !path_within(path, op->dest))
			continue;
		if (!best || strlen(op->dest) > strlen(best->dest))
			best = op;
	}
	return best;
}

static int cmp_op(const void *x, const void *y)
{
	const struct op *a = x, *b = y;
	int c = strcmp(a->dest, b->dest);

	return c ? c : (int)a->kind - (int)b->kind;
}

static bool is_dev_node(const char *path)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(dev_nodes); i++)
		if (strcmp(path, dev_nodes[i]) == 0)
			return true;
	return false;
}

/* Is `real` shown by a grant that is not itself a symlink? */
static bool real_path_granted(const struct moat_policy *p, const char *real)
{
	size_t i;

	for (i = 0; i < p->n_paths; i++) {
		struct stat st;
		if (p->paths[i].access != MOAT_ACCESS_DENY && path_within(real, p->paths[i].path) &&
		    lstat(p->paths[i].path, &st) == 0 && !S_ISLNK(st.st_mode))
			return true;
	}
	return false;
}

/* Paths the sandbox makes fresh itself: a grant of exactly one of them
 * means the fresh one (as in the native backend). */
static bool is_fresh_dir(const struct moat_policy *p, const char *path, const char *home)
{
	return (p->private_tmp && (strcmp(path, "/tmp") == 0 || strcmp(path, "/dev/shm") == 0)) ||
	       strcmp(path, "/dev") == 0 || (home && strcmp(path, home) == 0) ||
	       (p->net != MOAT_NET_ALL && strcmp(path, "/run") == 0);
}

/* One grant.  A symlink whose target is granted stays a symlink (/bin ->
 * usr/bin on Debian), so that one view, and one set of masks, shows the
 * files; any other link is bound through, like Landlock follows it. */
static void add_grant(struct ops *o, const struct moat_policy *p, const struct moat_path_rule *r, const char *home)
{
	bool rw = r->access == MOAT_ACCESS_WRITE;
	char real[PATH_MAX], link[PATH_MAX];
	struct stat lst, st;
	struct op *op;
	ssize_t n;

	if (path_within(r->path, "/proc") || is_fresh_dir(p, r->path, home) || is_dev_node(r->path))
		return;
	if (lstat(r->path, &lst) != 0 || stat(r->path, &st) != 0 || !realpath(r->path, real))
		return; /* absent: nothing to show (a required one was refused by the plan) */
	if (S_ISLNK(lst.st_mode) && real_path_granted(p, real) && (n = readlink(r->path, link, sizeof(link) - 1)) > 0) {
		link[n] = '\0';
		if (!ops_find(o, r->path))
			ops_add(o, OP_SYMLINK, r->path, link);
		return;
	}
	op = ops_find(o, r->path);
	if (op && op->kind == OP_SYMLINK)
		return;
	if (op) {
		/* The same path granted twice: the wider access wins. */
		if (rw && op->kind == OP_BIND_RO)
			op->kind = OP_BIND_RW;
		op->read_only = op->read_only && !rw;
		return;
	}
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		op = ops_add(o, OP_DEV_BIND, r->path, r->path);
	else
		op = ops_add(o, rw ? OP_BIND_RW : OP_BIND_RO, r->path, r->path);
	op->read_only = !rw;
	op->src_real = moat_xstrdup(real);
}

static void add_tmpfs(struct ops *o, const char *dest, unsigned mode)
{
	ops_add(o, OP_TMPFS, dest, NULL)->mode = mode;
}

/* Mask the denied host path at every place the sandbox shows it: for each
 * bind whose source holds it and which is what shows that place. */
static size_t add_mask(struct ops *o, const char *denied)
{
	char real[PATH_MAX];
	struct stat st;
	size_t i, n = o->n, added = 0;

	if (stat(denied, &st) != 0 || !realpath(denied, real))
		return 0;
	for (i = 0; i < n; i++) {
		const struct op *b = &o->v[i];
		cleanup_free char *loc = NULL;
		const struct op *cover;

		if (!is_bind(b->kind) || !b->src_real || !path_within(real, b->src_real))
			continue;
		loc = moat_xasprintf("%s%s", strcmp(b->dest, "/") == 0 ? "" : b->dest,
				     real + (strcmp(b->src_real, "/") == 0 ? 0 : strlen(b->src_real)));
		if (loc[0] == '\0') {
			free(loc);
			loc = moat_xstrdup("/");
		}
		cover = ops_cover(o, loc);
		if (cover != &o->v[i] || ops_find(o, loc))
			continue;
		ops_add(o, S_ISDIR(st.st_mode) ? OP_MASK_DIR : OP_MASK_FILE, loc, NULL);
		added++;
	}
	return added;
}

/* Every mount of the sandbox, sorted; *n_masks receives the masks' count. */
static void plan_ops(const struct moat_policy *p, struct ops *o, size_t *n_masks)
{
	const char *home = native_private_home(p);
	const struct op *cover;
	size_t i;

	*n_masks = 0;
	ops_add(o, OP_PROC, "/proc", NULL);
	ops_add(o, OP_DEV, "/dev", NULL);
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY)
			add_grant(o, p, &p->paths[i], home);
	if (p->private_tmp) {
		add_tmpfs(o, "/tmp", 01777);
		add_tmpfs(o, "/dev/shm", 01777);
	}
	/* HOME, unless granted as a whole: an empty tmpfs with only the grants
	 * below it bound back (agent sockets live there). */
	if (home)
		add_tmpfs(o, home, 0700);
	/* /run only matters when a grant above it (`--read /`) shows it. */
	cover = ops_cover(o, "/run");
	if (p->net != MOAT_NET_ALL && cover && is_bind(cover->kind))
		add_tmpfs(o, "/run", 0755);
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY)
			*n_masks += add_mask(o, p->paths[i].path);
	if (p->net == MOAT_NET_ALL)
		for (i = 0; i < ARRAY_LEN(run_sockets); i++)
			*n_masks += add_mask(o, run_sockets[i]);
	/* The cwd is entered even when not granted: then it is empty (the
	 * native child makes it the same way). */
	cover = ops_cover(o, p->cwd);
	if (!cover || !(is_bind(cover->kind) || cover->kind == OP_SYMLINK))
		ops_add(o, OP_DIR, p->cwd, NULL);
	qsort(o->v, o->n, sizeof(*o->v), cmp_op);
}

static void emit_op(struct backend_plan *bp, const struct op *op)
{
	switch (op->kind) {
	case OP_PROC:
		backend_argv_add(bp, "--proc");
		backend_argv_add(bp, op->dest);
		break;
	case OP_DEV:
		backend_argv_add(bp, "--dev");
		backend_argv_add(bp, op->dest);
		break;
	case OP_TMPFS:
		backend_argv_add(bp, "--perms");
		backend_argv_addf(bp, "%04o", op->mode);
		backend_argv_add(bp, "--tmpfs");
		backend_argv_add(bp, op->dest);
		break;
	case OP_BIND_RO:
	case OP_BIND_RW:
		backend_argv_add(bp, op->kind == OP_BIND_RO ? "--ro-bind" : "--bind");
		backend_argv_add(bp, op->src);
		backend_argv_add(bp, op->dest);
		break;
	case OP_DEV_BIND:
		backend_argv_add(bp, "--dev-bind");
		backend_argv_add(bp, op->src);
		backend_argv_add(bp, op->dest);
		if (op->read_only) {
			backend_argv_add(bp, "--remount-ro");
			backend_argv_add(bp, op->dest);
		}
		break;
	case OP_SYMLINK:
		backend_argv_add(bp, "--symlink");
		backend_argv_add(bp, op->src);
		backend_argv_add(bp, op->dest);
		break;
	case OP_MASK_DIR:
		backend_argv_add(bp, "--perms");
		backend_argv_add(bp, "0000");
		backend_argv_add(bp, "--tmpfs");
		backend_argv_add(bp, op->dest);
		backend_argv_add(bp, "--remount-ro");
		backend_argv_add(bp, op->dest);
		break;
	case OP_MASK_FILE:
		backend_argv_add(bp, "--ro-bind");
		backend_argv_add(bp, "/dev/null");
		backend_argv_add(bp, op->dest);
		break;
	case OP_DIR:
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
	if (p->private_tmp)
		verdict_enforce(&props[MOAT_P_FS_TMP], "bwrap: tmpfs on /tmp and /dev/shm");
	else
		verdict_missing(&props[MOAT_P_FS_TMP], "drop the option that shares /tmp",
				"the policy shares the host's /tmp");

	if (p->net != MOAT_NET_NONE)
		verdict_missing(&props[MOAT_P_NET_NONE], "drop --net (or use a profile without network): net.none "
							 "needs --net none",
				"the policy opens the network (net %s)", moat_net_name(p->net));
	else if (f->seccomp)
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
	struct ops o = {0};
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

	plan_ops(p, &o, &f.n_masks);
	for (i = 0; i < o.n; i++) {
		f.n_grants += is_bind(o.v[i].kind) || o.v[i].kind == OP_SYMLINK;
		emit_op(bp, &o.v[i]);
	}
	ops_free(&o);
	/* Last: the root tmpfs (where the mount points were made) read-only. */
	backend_argv_add(bp, "--remount-ro");
	backend_argv_add(bp, "/");
	backend_argv_add(bp, "--chdir");
	backend_argv_add(bp, p->cwd);
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
