/* Helpers shared by the backends' compilers. */
#include "backends/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/filter.h>

#include "backends/native.h"
#include "kernel/landlock.h"
#include "host/hints.h"
#include "kernel/seccomp.h"
#include "policy/verdict.h"
#include "resolve/linkfarm.h"
#include "resolve/linkscan.h"
#include "resolve/sharedlock.h"
#include "resolve/view.h"
#include "util/stale.h"

/* Every hint of host/hints.h fits the verdicts' and the limits' hint
 * fields whole: one was once cut at 256 bytes, mid-word, in `moat probe`. */
#define HINT_FITS(h)                                                                                                   \
	_Static_assert(sizeof(h) <= sizeof(((struct moat_verdict *)0)->hint), #h " is longer than a verdict's hint")
HINT_FITS(HOST_HINT_LANDLOCK);
HINT_FITS(HOST_HINT_LANDLOCK_ABI);
HINT_FITS(HOST_HINT_USERNS);
HINT_FITS(HOST_HINT_USERNS_ROOT);
HINT_FITS(HOST_HINT_USERNS_FILTER);
HINT_FITS(HOST_HINT_PROC);
HINT_FITS(HOST_HINT_DELEGATE);
HINT_FITS(HOST_HINT_SECCOMP);
HINT_FITS(HOST_HINT_SECCOMP_NEWER);
HINT_FITS(HOST_HINT_NET_FENCE);
HINT_FITS(HOST_HINT_LIMIT);
HINT_FITS(HOST_HINT_CGROUP2);
#include "policy/env.h"
#include "util/cleanup.h"
#include "util/rmtree.h"
#include "util/mem.h"
#include "util/path.h"
#include "util/projpath.h"

void backend_plan_init(struct backend_plan *bp)
{
	memset(bp, 0, sizeof(*bp));
	bp->fd_remap_from = bp->fd_remap_to = -1;
	bp->work_dir_lock = -1;
	bp->lifeline_to = -1;
	bp->started_to = -1;
	bp->stderr_to = -1;
}

/* A sandbox tool is not looked up on PATH in the project around the
 * current directory (util/projpath.h): a cloned repository's `bwrap` there
 * would run as the sandbox, outside it. */
static char *find_in(const char *dirs, const char *tool, const struct project_roots *pr)
{
	const char *d = dirs;

	while (d && *d) {
		const char *end = strchr(d, ':');
		size_t len = end ? (size_t)(end - d) : strlen(d);
		if (len > 0 && d[0] == '/') {
			char path[4096];
			struct stat st;
			cleanup_free char *dir = moat_xstrndup(d, len);

			snprintf(path, sizeof(path), "%.*s/%s", (int)len, d, tool);
			if (!project_roots_hold(pr, dir) && stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
				return moat_xstrdup(path);
		}
		d = end ? end + 1 : NULL;
	}
	return NULL;
}

char *backend_find_tool(const struct moat_backend *b, const char **which)
{
	const char *path_env = getenv("PATH");
	struct project_roots pr;
	char cwd[4096];
	size_t i;

	project_roots_init(&pr, getcwd(cwd, sizeof(cwd)), getenv("HOME"));
	for (i = 0; i < ARRAY_LEN(b->tools) && b->tools[i]; i++) {
		char *found = find_in(path_env, b->tools[i], &pr);
		if (!found)
			found = find_in("/usr/bin:/usr/sbin:/bin:/sbin", b->tools[i], NULL);
		if (found) {
			if (which)
				*which = b->tools[i];
			project_roots_free(&pr);
			return found;
		}
	}
	project_roots_free(&pr);
	return NULL;
}

bool backend_plan_runs_tool(const struct backend_plan *bp)
{
	return bp->tool_path != NULL;
}

int backend_shared_dir(struct backend_plan *bp, const char *path, bool made, char *why, size_t why_len)
{
	cleanup_close int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct backend_shared_dir *d;
	struct stat st;
	bool held = false;
	int lock;

	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(why, why_len, "%.160s: %s", path, strerror(errno));
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, why_len, "%.160s belongs to uid %u (mode %04o), not to this user alone", path,
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	/* Another moat's run holds it (shared): it is moat's, and whichever
	 * run ends last removes it. */
	if (!made) {
		held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
		if (!held)
			flock(fd, LOCK_UN);
	}
	lock = shared_lock_take(fd);
	if (lock == -2)
		return 1;
	if (lock < 0) {
		snprintf(why, why_len, "%.160s: cannot be locked", path);
		return -1;
	}
	bp->shared_dirs = moat_xgrow(bp->shared_dirs, &bp->cap_shared_dirs, bp->n_shared_dirs, sizeof(*d));
	d = &bp->shared_dirs[bp->n_shared_dirs++];
	*d = (struct backend_shared_dir){
	    .path = moat_xstrdup(path), .lock_fd = lock, .dev = st.st_dev, .ino = st.st_ino, .ours = made || held};
	return 0;
}

/* Each shared directory that is this run's to remove, deepest first, and
 * only when empty and no other run holds it (resolve/sharedlock.h). */
static void shared_dirs_cleanup(struct backend_plan *bp)
{
	while (bp->n_shared_dirs > 0) {
		struct backend_shared_dir *d = &bp->shared_dirs[--bp->n_shared_dirs];
		char *slash = strrchr(d->path, '/');

		if (d->ours && slash && slash != d->path) {
			cleanup_close int parent = -1;
			*slash = '\0';
			parent = open(d->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (parent >= 0)
				shared_remove_placeholder(parent, slash + 1, d->dev, d->ino, d->lock_fd);
		}
		if (d->lock_fd >= 0)
			close(d->lock_fd);
		free(d->path);
	}
}

int backend_remove_work_dir(struct backend_plan *bp)
{
	int rc = 0;

	/* By descriptors: never follow a link or enter a mount that the tool
	 * or the sandbox left in the work dir (util/rmtree.h). */
	if (bp->owns_work_dir && bp->work_dir) {
		rc = rmtree(bp->work_dir);
		rmtree_warn("the backend's work directory", bp->work_dir, rc);
	}
	bp->owns_work_dir = false;
	return rc;
}

void backend_plan_cleanup(struct backend_plan *bp)
{
	(void)backend_remove_work_dir(bp);
	moat_closep(&bp->work_dir_lock); /* gone: a sweep may pass there */
	bp->work_dir_lock = -1;
	shared_dirs_cleanup(bp);
	if (bp->in_child)
		native_cleanup(bp->in_child);
}

void backend_plan_free(struct backend_plan *bp)
{
	size_t i;

	for (i = 0; bp->argv && i < bp->argc; i++)
		free(bp->argv[i]);
	free(bp->argv);
	for (i = 0; i < bp->n_pass_fds; i++)
		if (bp->pass_fds[i] >= 0)
			close(bp->pass_fds[i]);
	free(bp->pass_fds);
	if (bp->fd_remap_from >= 0)
		close(bp->fd_remap_from);
	backend_plan_cleanup(bp);
	free(bp->shared_dirs);
	if (bp->in_child) {
		native_plan_free(bp->in_child);
		free(bp->in_child);
	}
	free(bp->work_dir);
	backend_strv_free(bp->cleanup_argv);
	free(bp->cleanup_wait_state);
	free(bp->cleanup_cgroup);
	free(bp->tool_path);
	free(bp->runtime);
	for (i = 0; i < bp->n_env_set; i++)
		free(bp->env_set[i]);
	free(bp->env_set);
	for (i = 0; i < bp->n_tool_env; i++)
		free(bp->tool_env[i]);
	free(bp->tool_env);
	for (i = 0; i < bp->n_bound; i++)
		free(bp->bound[i].dest);
	free(bp->bound);
	free(bp->bound_file);
	/* As backend_plan_init leaves it: a second free, or a compile into
	 * it, finds no descriptor to close (0 would be stdin). */
	backend_plan_init(bp);
}

void backend_tool_env(struct backend_plan *bp, const char *name, const char *value)
{
	bp->tool_env = moat_xgrow(bp->tool_env, &bp->cap_tool_env, bp->n_tool_env + 1, sizeof(char *));
	bp->tool_env[bp->n_tool_env++] = moat_xasprintf("%s=%s", name, value);
	bp->tool_env[bp->n_tool_env] = NULL;
}

bool backend_env_via_tool(const struct backend_ctx *ctx, struct backend_plan *bp, const char *tool, char *why,
			  size_t len)
{
	size_t i;

	for (i = 0; ctx->envp && ctx->envp[i]; i++) {
		size_t n = strcspn(ctx->envp[i], "=");
		cleanup_free char *name = moat_xstrndup(ctx->envp[i], n);
		if (env_is_hook(name)) {
			snprintf(why, len, "%s gets the command's environment, and %.64s in it would act on %s "
					   "itself, outside the sandbox",
				 tool, name, tool);
			return false;
		}
	}
	bp->env_via_tool = true;
	return true;
}

void backend_env_set(struct backend_plan *bp, const char *name, const char *value)
{
	bp->env_set = moat_xgrow(bp->env_set, &bp->cap_env_set, bp->n_env_set, sizeof(char *));
	bp->env_set[bp->n_env_set++] = moat_xasprintf("%s=%s", name, value);
}

void backend_argv_add(struct backend_plan *bp, const char *arg)
{
	bp->argv = moat_xgrow(bp->argv, &bp->cap_argv, bp->argc + 2, sizeof(char *));
	bp->argv[bp->argc++] = moat_xstrdup(arg);
	bp->argv[bp->argc] = NULL;
}

void backend_argv_addf(struct backend_plan *bp, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = moat_xvasprintf(fmt, ap);
	va_end(ap);
	backend_argv_add(bp, s);
	free(s);
}

void backend_argv_add_command(struct backend_plan *bp, const struct moat_policy *p, const char *sep)
{
	size_t i;

	if (sep)
		backend_argv_add(bp, sep);
	backend_argv_add(bp, p->exe);
	for (i = 1; i < p->argc; i++)
		backend_argv_add(bp, p->argv[i]);
}

int backend_highest_fd(const struct moat_policy *p, const struct backend_plan *bp)
{
	int max_fd = 2;
	size_t i;

	for (i = 0; i < p->n_keep_fds; i++)
		if (p->keep_fds[i] > max_fd)
			max_fd = p->keep_fds[i];
	for (i = 0; i < bp->n_pass_fds; i++)
		if (bp->pass_fds[i] > max_fd)
			max_fd = bp->pass_fds[i];
	if (bp->fd_remap_to > max_fd)
		max_fd = bp->fd_remap_to;
	if (bp->lifeline_to > max_fd)
		max_fd = bp->lifeline_to;
	if (bp->started_to > max_fd)
		max_fd = bp->started_to;
	if (bp->stderr_to > max_fd)
		max_fd = bp->stderr_to;
	return max_fd;
}

char *backend_keep_fds_list(const struct moat_policy *p)
{
	size_t cap = 0, len = 0, i;
	char *s = NULL;

	for (i = 0; i < p->n_keep_fds; i++) {
		s = moat_xgrow(s, &cap, len + 16, 1);
		len += (size_t)snprintf(s + len, cap - len, "%s%d", i ? "," : "", p->keep_fds[i]);
	}
	return s ? s : moat_xstrdup("");
}

int backend_pass_fd(struct backend_plan *bp, int fd)
{
	size_t pos;

	/* Sorted, so the child can keep them without allocating. */
	bp->pass_fds = moat_xgrow(bp->pass_fds, &bp->cap_pass_fds, bp->n_pass_fds, sizeof(int));
	for (pos = bp->n_pass_fds; pos > 0 && bp->pass_fds[pos - 1] > fd; pos--)
		bp->pass_fds[pos] = bp->pass_fds[pos - 1];
	bp->pass_fds[pos] = fd;
	bp->n_pass_fds++;
	return fd;
}

const struct limits_plan *backend_limits(const struct backend_ctx *ctx, struct backend_plan *bp)
{
	/* An export runs later without moat: no cgroup of moat's, and only
	 * the rlimits its own files apply (each backend's caps.rlimits). */
	bp->caps.exported = ctx->exporting;
	limits_decide(ctx->policy, ctx->host, ctx->cgroup, &bp->caps, &bp->limits);
	return &bp->limits;
}

size_t backend_rlimits(const struct moat_policy *p, const struct limits_plan *lp,
		       struct backend_rlimit out[BACKEND_MAX_RLIMITS])
{
	size_t n = 0;

	/* 1, not 0: at 1 the kernel aborts a dump to a pipe core_pattern too
	 * (kernel/seccomp.c, add_rlimit_rules, which keeps it there). */
	out[n++] = (struct backend_rlimit){RLIMIT_CORE, 1, 1, "RLIMIT_CORE"};
	if (lp->lim[LIM_ADDRESS_SPACE].declared && lp->lim[LIM_ADDRESS_SPACE].enforced) {
		unsigned long long as = (unsigned long long)p->limits.address_space_bytes;
		out[n++] = (struct backend_rlimit){RLIMIT_AS, as, as, "RLIMIT_AS"};
	}
	if (lp->nproc_rlimit) {
		unsigned long long np = (unsigned long long)p->limits.pids;
		out[n++] = (struct backend_rlimit){RLIMIT_NPROC, np, np, "RLIMIT_NPROC"};
	}
	if (p->limits.files != MOAT_LIMIT_UNSET) {
		unsigned long long nf = (unsigned long long)p->limits.files;
		out[n++] = (struct backend_rlimit){RLIMIT_NOFILE, nf, nf, "RLIMIT_NOFILE"};
	}
	/* At the soft limit the kernel sends SIGXCPU, whose name says why the
	 * process died (a shell prints "CPU time limit exceeded"); at the hard
	 * one SIGKILL, for a process that handles SIGXCPU. */
	if (p->limits.cpu_seconds != MOAT_LIMIT_UNSET) {
		unsigned long long cpu = (unsigned long long)p->limits.cpu_seconds;
		out[n++] = (struct backend_rlimit){RLIMIT_CPU, cpu, cpu + 1, "RLIMIT_CPU"};
	}
	return n;
}

static int write_all(int fd, const void *data, size_t len, const char *what, struct moat_error *err)
{
	const char *c = data;

	while (len > 0) {
		ssize_t n = write(fd, c, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return moat_error_set(err, MOAT_E_SYSTEM, n < 0 ? errno : EIO, "writing %s", what);
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static int backend_write_path(const char *path, const void *data, size_t len, mode_t mode, struct moat_error *err)
{
	cleanup_close int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);

	if (fd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "writing %s", path);
	/* An existing file keeps its mode through O_CREAT: set it. */
	if (fchmod(fd, mode) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "chmod %s", path);
	return write_all(fd, data, len, path, err);
}

int backend_write_file(const char *dir, const char *name, const void *data, size_t len, struct moat_error *err)
{
	cleanup_free char *path = moat_xasprintf("%s/%s", dir, name);

	return backend_write_path(path, data, len, 0644, err);
}

int backend_write_private_file(const char *dir, const char *name, const void *data, size_t len,
			       struct moat_error *err)
{
	cleanup_free char *path = moat_xasprintf("%s/%s", dir, name);

	return backend_write_path(path, data, len, 0600, err);
}

int backend_memfd(const char *name, const void *data, size_t len, struct moat_error *err)
{
	cleanup_close int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "memfd_create for %s", name);
	if (write_all(fd, data, len, name, err) < 0)
		return -1;
	if (lseek(fd, 0, SEEK_SET) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "rewinding %s", name);
	return steal_fd(&fd);
}

int backend_seccomp_program(const struct backend_ctx *ctx, struct backend_plan *bp, int *fd, unsigned short *len,
			    char *why, size_t why_len, struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	struct moat_seccomp_opts so = {.net = p->net, .allow_ptrace = false, .allow_unix = p->unix_sockets};
	struct moat_error serr = {0};
	struct moat_bpf bpf = {0};
	int mfd = -1;

	if (!ctx->host->seccomp) {
		snprintf(why, why_len, "%.200s",
			 ctx->host->seccomp_why[0] ? ctx->host->seccomp_why : "seccomp filters are not available");
		return 0;
	}
	if (moat_seccomp_compile(&so, &bpf, &serr) < 0) {
		if (serr.kind == MOAT_E_UNAVAIL) {
			snprintf(why, why_len, "%.200s", serr.message);
			return 0;
		}
		*err = serr;
		return moat_error_wrap(err, "compiling the seccomp filter");
	}
	if (!ctx->exporting) {
		mfd = backend_memfd("moat-seccomp", bpf.insns, (size_t)bpf.len * sizeof(struct sock_filter), err);
		if (mfd < 0) {
			moat_bpf_free(&bpf);
			return -1;
		}
		backend_pass_fd(bp, mfd);
	} else if (ctx->work_dir && backend_write_file(ctx->work_dir, BACKEND_EXPORT_SECCOMP, bpf.insns,
						       (size_t)bpf.len * sizeof(struct sock_filter), err) < 0) {
		/* An export: the program beside argv.json, for its run.sh. */
		moat_bpf_free(&bpf);
		return -1;
	}
	*fd = mfd;
	*len = bpf.len;
	moat_bpf_free(&bpf);
	return 1;
}

const char *backend_fds_kept(const struct moat_policy *p, char *buf, size_t len)
{
	size_t i, o;

	if (!p->n_keep_fds)
		return "only 0, 1 and 2 stay open";
	o = (size_t)snprintf(buf, len, "only 0, 1, 2 and --keep-fd ");
	for (i = 0; i < p->n_keep_fds && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? ", " : "", p->keep_fds[i]);
	if (o < len)
		snprintf(buf + o, len - o, " stay open");
	return buf;
}

void backend_verdict_moat_owned(const struct backend_ctx *ctx, struct backend_plan *bp, const char *tool,
				bool env_passed_through, bool fds_closed_or_passed, struct moat_verdict *props)
{
	const struct moat_policy *p = ctx->policy;

	if (env_passed_through)
		verdict_enforce(&props[MOAT_P_ENV_CURATED], "exact environment built by moat, passed on by %s", tool);
	else
		verdict_missing(&props[MOAT_P_ENV_CURATED], "use --backend native or bwrap",
				"%s changes the environment moat gives it", tool);
	char kept[200];

	if (fds_closed_or_passed)
		verdict_enforce(&props[MOAT_P_FD_CLEAN], "close_range before %s: %s", tool,
				backend_fds_kept(p, kept, sizeof(kept)));
	else
		verdict_missing(&props[MOAT_P_FD_CLEAN], "use --backend native or bwrap",
				"%s may hand the command descriptors of its own", tool);
	if (!bp->caps.runtime)
		bp->caps.runtime = tool;
	limits_verdicts(backend_limits(ctx, bp), &props[MOAT_P_RES_LIMITS], &props[MOAT_P_PROC_TREE]);
}

int backend_work_dir(const struct moat_backend *b, struct backend_plan *bp, struct moat_error *err)
{
	cleanup_free char *prefix = NULL;

	if (bp->work_dir)
		return 0;
	/* Named after this moat and locked for the whole run: one left by a
	 * moat killed before its guard started is swept by a later run
	 * (util/stale.h). */
	prefix = moat_xasprintf("moat-%s", b->name);
	bp->work_dir = stale_mkdtemp(prefix, true, &bp->work_dir_lock, err);
	if (!bp->work_dir)
		return moat_error_wrap(err, "the %s backend's work directory", b->name);
	bp->owns_work_dir = true;
	return 0;
}

void backend_cannot_run(struct backend_plan *bp, struct moat_verdict *props, const char *hint, const char *reason)
{
	size_t i;

	for (i = 0; bp->argv && i < bp->argc; i++)
		free(bp->argv[i]);
	free(bp->argv);
	bp->argv = NULL;
	bp->argc = 0;
	backend_verdict_all_missing(props, hint, reason);
}

bool backend_init_has_room(const struct backend_ctx *ctx, const char *tool, struct moat_verdict *props)
{
	size_t i;

	for (i = 0; ctx->fs && i < ctx->fs->n; i++) {
		const struct fs_obj *o = &ctx->fs->obj[i];
		char reason[200];

		if ((o->role != FS_READ && o->role != FS_WRITE) || !o->rule || !o->present || o->dropped ||
		    strcmp(o->real, "/") != 0)
			continue;
		snprintf(reason, sizeof(reason),
			 "the whole root is granted (%s /), and %s's view then has no directory of its own at /.moat "
			 "for moat's init",
			 o->role == FS_WRITE ? "--write" : "--read", tool);
		backend_verdict_all_missing(props,
					    "grant the directories the command needs instead of /, or use --backend "
					    "native, which needs no such directory",
					    reason);
		return false;
	}
	return true;
}

bool backend_userns_or_root(const struct moat_host *h, const char *tool, struct moat_verdict *props)
{
	char reason[256];

	if (h->userns || h->root)
		return true;
	snprintf(reason, sizeof(reason), "%s needs unprivileged user namespaces when moat is not root: %.160s", tool,
		 h->userns_why[0] ? h->userns_why : "not available here");
	backend_verdict_all_missing(props, host_userns_hint(h, true), reason);
	return false;
}

void backend_verdict_all_missing(struct moat_verdict *props, const char *hint, const char *reason)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		verdict_missing(&props[i], hint, "%s", reason);
}

void backend_verdict_ipc(const struct moat_policy *p, bool seccomp, const char *via, const char *netns,
			 const char *reachable, struct moat_verdict *props)
{
	const char *hint_seccomp = HOST_HINT_SECCOMP;

	if (seccomp && !p->unix_sockets)
		verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "seccomp (%s): socket(AF_UNIX) refused%s%s", via,
				p->net != MOAT_NET_ALL ? "; " : "", p->net != MOAT_NET_ALL ? netns : "");
	else if (p->net != MOAT_NET_ALL)
		verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "%s: abstract sockets are per network namespace", netns);
	else
		verdict_missing(&props[MOAT_P_IPC_ABSTRACT], "use --net loopback or none, or --backend native",
				"with net all the host's network namespace, and its abstract sockets, are shared");
	if (seccomp && !p->unix_sockets)
		verdict_enforce(&props[MOAT_P_IPC_UNIX], "seccomp (%s): socket(AF_UNIX) refused (connected socketpairs "
							 "only)",
				via);
	else
		verdict_missing(&props[MOAT_P_IPC_UNIX], p->unix_sockets ? "drop --unix-sockets" : hint_seccomp,
				"%s: %s stays reachable",
				p->unix_sockets ? "--unix-sockets lets the command make unix sockets"
						: "without seccomp socket(AF_UNIX) cannot be refused",
				reachable);
}

bool backend_verdict_policy_tmp(const struct moat_policy *p, struct moat_verdict *props)
{
	if (p->private_tmp)
		return true;
	verdict_missing(&props[MOAT_P_FS_TMP], "drop the option that shares /tmp", "the policy shares the host's /tmp");
	return false;
}

bool backend_verdict_policy_net_none(const struct moat_policy *p, struct moat_verdict *props)
{
	if (p->net == MOAT_NET_NONE)
		return true;
	if (p->net == MOAT_NET_ALLOW)
		verdict_missing(&props[MOAT_P_NET_NONE], "drop --allow-net: net.none needs --net none",
				"the policy allows destinations (net allow)");
	else
		verdict_missing(&props[MOAT_P_NET_NONE],
				"drop --net (or use a profile without network): net.none needs --net none",
				"the policy opens the network (net %s)", moat_net_name(p->net));
	return false;
}

/* Only moat's native backend has the fence (docs/network.md); under net
 * allow every other backend keeps the network closed. */
void backend_verdict_net_allow(struct moat_verdict *props)
{
	verdict_missing(&props[MOAT_P_NET_ALLOW], HINT_NET_ALLOW,
			"this backend does not enforce per-destination rules (moat's native backend does, with its "
			"fence); the network stays closed");
}

void backend_bound_add(struct backend_plan *bp, const char *dest, int obj)
{
	struct backend_bound *last = bp->n_bound ? &bp->bound[bp->n_bound - 1] : NULL;

	if (last && strcmp(last->dest, dest) == 0) {
		last->obj = obj;
		return;
	}
	bp->bound = moat_xgrow(bp->bound, &bp->cap_bound, bp->n_bound, sizeof(*bp->bound));
	bp->bound[bp->n_bound++] = (struct backend_bound){.dest = moat_xstrdup(dest), .obj = obj};
}

int backend_bound_write(const struct backend_plan *bp, const struct fs_plan *fp, struct moat_error *err)
{
	cleanup_free char *buf = NULL;
	size_t cap = 0, len = 0, i;

	if (!bp->bound_file)
		return 0;
	for (i = 0; i < bp->n_bound; i++) {
		const struct fs_obj *o = &fp->obj[bp->bound[i].obj];
		size_t need = strlen(bp->bound[i].dest) + 48;

		buf = moat_xgrow(buf, &cap, len + need, 1);
		len += (size_t)snprintf(buf + len, cap - len, "%llu:%llu:%s", (unsigned long long)o->dev,
					(unsigned long long)o->ino, bp->bound[i].dest) + 1;
	}
	return backend_write_path(bp->bound_file, buf ? buf : "", len, 0644, err);
}

void backend_strv_add(char ***v, size_t *n, const char *s)
{
	*v = moat_xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = moat_xstrdup(s);
	(*v)[*n] = NULL;
}

void backend_strv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int backend_landlock_layer(const struct backend_ctx *ctx, struct backend_plan *bp, const struct view *v,
			   bool any_fd, char ***args, size_t *n_args, struct moat_error *err)
{
	struct native_landlock l;
	char buf[4200];
	size_t i;
	int abi = ctx->host->landlock_abi, at;

	if (ctx->exporting || abi <= 0)
		return 0;
	if (landlock_compile(ctx->policy, ctx->fs, abi, -1, &l, err) < 0)
		return -1;
	/* The fd goes to the tool (and through it to __init); the plan owns
	 * it from here.  For bwrap (any_fd) as it is; an OCI runtime passes
	 * only 3..N, so it is moved right above the declared fds. */
	if (any_fd) {
		at = backend_pass_fd(bp, l.ruleset_fd);
	} else {
		at = 2;
		for (i = 0; i < ctx->policy->n_keep_fds; i++)
			if (ctx->policy->keep_fds[i] > at)
				at = ctx->policy->keep_fds[i];
		at++;
		bp->fd_remap_from = l.ruleset_fd;
		bp->fd_remap_to = at;
	}
	backend_strv_add(args, n_args, "/.moat/init");
	backend_strv_add(args, n_args, "__init");
	backend_strv_add(args, n_args, "--landlock");
	snprintf(buf, sizeof(buf), "%d:%d", at, l.abi);
	backend_strv_add(args, n_args, buf);
	backend_strv_add(args, n_args, "--ll");
	backend_strv_add(args, n_args, "l:/");
	for (i = 0; i < v->n; i++) {
		const struct view_op *op = &v->v[i];
		char right = op->kind == VIEW_TMPFS ? 'w' : op->kind == VIEW_PROC ? 'r' : 0;

		/* Device nodes: the tool makes (or binds) its own. */
		if (op->kind == VIEW_BIND && op->device && path_within(op->dest, "/dev"))
			right = op->read_only ? 'r' : 'w';
		if (!right)
			continue;
		snprintf(buf, sizeof(buf), "%c:%s", right, op->dest);
		backend_strv_add(args, n_args, "--ll");
		backend_strv_add(args, n_args, buf);
	}
	l.ruleset_fd = -1; /* passed: closed with the plan */
	bp->fs_landlock_abi = abi;
	bp->landlock_scoped = l.scoped;
	landlock_plan_free(&l);
	return abi;
}

void backend_verdict_fs(const char *tool, size_t n_bound, size_t n_pins, size_t n_unpinned, int landlock_abi,
			size_t n_expanded, size_t n_links_unheld, const char *link_unheld, struct moat_verdict *props)
{
	verdict_enforce(&props[MOAT_P_FS_READ], "%s: empty read-only root, %zu objects bound%s", tool, n_bound,
			landlock_abi ? "; moat's landlock rules on their inodes (moat __init)" : "");
	if (n_unpinned)
		verdict_missing(&props[MOAT_P_FS_WRITE], "run it with moat run, which makes them",
				"%zu absent protected entries of the write grants (.git, .mcp.json, ...) can be created: "
				"an export has no placeholders for them",
				n_unpinned);
	else
		verdict_enforce(&props[MOAT_P_FS_WRITE], "%s: read-only binds outside the write grants, read-only "
							 "root; %zu protected entries pinned read-only",
				tool, n_pins);
	if (n_links_unheld && props[MOAT_P_FS_WRITE].enforced)
		verdict_missing(&props[MOAT_P_FS_WRITE], "use --backend native, which holds the link itself",
				"%zu protected entries are symlinks (%s%s): %s mounts only on what a link leads to, so "
				"the command could replace them",
				n_links_unheld, link_unheld, n_links_unheld > 1 ? ", ..." : "", tool);
	if (landlock_abi)
		verdict_enforce(&props[MOAT_P_FS_SECRETS], "landlock ABI %d (moat __init): rules only on the entries "
							   "around the denied paths (inode-bound); masks in the view",
				landlock_abi);
	else
		verdict_enforce(&props[MOAT_P_FS_SECRETS], "%s: denied paths left out of the view (%zu grants mounted "
							   "entry by entry)",
				tool, n_expanded);
}

/* An export binds by name when it runs, later, and nothing there checks
 * what it finds: a protected entry of a write grant (.vscode, .git/hooks)
 * that a pulled commit replaced by a symlink since the export mounts what
 * the link leads to -- HOME, ~/.ssh with it -- while the export's report
 * said fs.read and fs.secrets enforced.  moat run binds each object it
 * planned (bwrap by descriptor; runc and crun checked inside by __init). */
void backend_verdict_export_names(const struct backend_ctx *ctx, size_t n_pins, struct moat_verdict *props)
{
	static const enum moat_property fs_props[] = {MOAT_P_FS_READ, MOAT_P_FS_SECRETS, MOAT_P_FS_WRITE};

	if (!ctx->exporting || n_pins == 0)
		return;
	for (size_t i = 0; i < ARRAY_LEN(fs_props); i++)
		if (props[fs_props[i]].enforced)
			verdict_missing(&props[fs_props[i]],
					"run it with moat run, which binds the objects it planned; or export again right "
					"before each run",
					"the export binds %zu protected entries of the write grants by their names when it "
					"runs: one replaced by a symlink since the export (a pulled commit's .vscode -> "
					"../..) mounts what it leads to, HOME included, and nothing checks it",
					n_pins);
}

static const char *socket_family_name(int family)
{
	switch (family) {
	case AF_UNIX:
		return "AF_UNIX";
	case AF_INET:
		return "AF_INET";
	case AF_INET6:
		return "AF_INET6";
	case AF_NETLINK:
		return "AF_NETLINK";
	case AF_PACKET:
		return "AF_PACKET";
	case AF_VSOCK:
		return "AF_VSOCK";
	default:
		return NULL;
	}
}

static const char *socket_type_name(int type)
{
	switch (type) {
	case SOCK_STREAM:
		return "stream";
	case SOCK_DGRAM:
		return "datagram";
	case SOCK_SEQPACKET:
		return "seqpacket";
	case SOCK_RAW:
		return "raw";
	default:
		return "other";
	}
}

/* What the plan reads of a declared socket; -1 where getsockopt failed. */
struct kept_socket {
	int family, type, listening;
	bool connected;
};

/* 0; 1 when `fd` is no socket object (an O_PATH descriptor of a socket's
 * inode names one socket, as a connected one does); -1 when moat could not
 * read its family, which is then judged as every family at once. */
static int kept_socket_read(int fd, struct kept_socket *ks)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(int);

	*ks = (struct kept_socket){.family = -1, .type = -1, .listening = -1};
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &ks->family, &len) != 0)
		return errno == ENOTSOCK ? 1 : -1;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &ks->type, &len) != 0)
		ks->type = -1;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &ks->listening, &len) != 0)
		ks->listening = -1;
	len = sizeof(peer);
	ks->connected = getpeername(fd, (struct sockaddr *)&peer, &len) == 0;
	return 0;
}

/* A socket keeps the namespace it was made in: the sandbox's network
 * namespace does not apply to the caller's, and the seccomp rule refuses
 * only socket(2), not connect or sendto on one that exists.  So a declared
 * socket is judged by what the command can still aim it at:
 *   - any family but AF_UNIX: the host's network, whatever its state.
 *     Datagram and raw sockets sendto(2) any address.  A TCP socket is no
 *     pipe either: connect(AF_UNSPEC) dissolves a connection, shutdown(2)
 *     a listener, and the socket connects again; Landlock's TCP rules
 *     refuse that connect but not, on every kernel, a MSG_FASTOPEN send
 *     (landlock-lsm/linux#41), and net loopback has no TCP rules at all.
 *     A listener also serves whoever reaches the host's port.
 *   - AF_UNIX, unconnected (or datagram: sendto takes an address even when
 *     connected): connect(2) to any socket it names, a host abstract one
 *     (@/tmp/.X11-unix/X0, D-Bus) included, as the abstract namespace is
 *     the socket's network namespace's; Landlock's abstract-socket scope
 *     (ABI 6) still refuses that, nothing refuses a pathname.
 *   - AF_UNIX stream or seqpacket, connected or listening: a pipe to the
 *     peer the caller chose, or the caller's socket activation.  Neither
 *     connects again (EISCONN, EINVAL; AF_UNSPEC is no disconnect for
 *     them), and what reaches a listener is what the caller exposed. */
void backend_verdict_kept_sockets(const struct moat_policy *p, const struct backend_plan *bp,
				  struct moat_verdict *props)
{
	static const enum moat_property net_props[] = {MOAT_P_NET_NONE, MOAT_P_NET_LOOPBACK, MOAT_P_NET_ALLOW};
	bool scoped = bp->landlock_scoped & MOAT_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
	size_t i, j;

	for (i = 0; i < p->n_keep_fds; i++) {
		int fd = p->keep_fds[i], rc;
		struct kept_socket ks;
		struct stat st;
		const char *family, *type, *state;
		char family_buf[32];

		if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
			continue;
		rc = kept_socket_read(fd, &ks);
		if (rc == 1)
			continue;
		family = socket_family_name(ks.family);
		if (!family) {
			snprintf(family_buf, sizeof(family_buf), "AF %d", ks.family);
			family = rc < 0 ? "AF unknown" : family_buf;
		}
		type = socket_type_name(ks.type);
		state = ks.listening > 0 ? "listening" : ks.connected ? "connected" : "unconnected";
		if (ks.family != AF_UNIX) {
			const char *can = ks.type != SOCK_STREAM ? "send anywhere"
					  : ks.listening > 0
					      ? "serve the host's network on it, and after shutdown(2) connect anywhere"
					  : ks.connected ? "disconnect it (connect AF_UNSPEC) and connect anywhere"
							 : "connect anywhere";

			for (j = 0; j < ARRAY_LEN(net_props); j++)
				if (props[net_props[j]].enforced)
					verdict_missing(
					    &props[net_props[j]],
					    "pass a unix socket (socketpair(2)) or a pipe and relay on the "
					    "host's side, or let the command make its own connections "
					    "(--allow-net HOST:PORT)",
					    "--keep-fd %d is an %s %s socket (%s) of the host's network: the "
					    "command can %s through it, whatever the sandbox's network "
					    "namespace and seccomp refuse",
					    fd, family, type, state, can);
			if (rc == 0)
				continue;
		}
		if ((ks.type == SOCK_STREAM || ks.type == SOCK_SEQPACKET) && (ks.connected || ks.listening > 0))
			continue;
		if (props[MOAT_P_IPC_UNIX].enforced)
			verdict_missing(&props[MOAT_P_IPC_UNIX],
					"pass a connected socket (socketpair(2)) or a listening one instead",
					"--keep-fd %d is an AF_UNIX %s socket (%s) of the host: the command can %s any "
					"unix socket it names through it (a pathname in its view, an abstract name of "
					"the host's), which socket(AF_UNIX) refused does not stop",
					fd, type, state, ks.type == SOCK_DGRAM ? "send to" : "connect to");
		if (props[MOAT_P_IPC_ABSTRACT].enforced && !scoped)
			verdict_missing(
			    &props[MOAT_P_IPC_ABSTRACT],
			    "pass a connected socket (socketpair(2)) or a listening one instead; "
			    "or " HOST_HINT_LANDLOCK_ABI,
			    "--keep-fd %d is an AF_UNIX %s socket (%s) of the host's network namespace: the "
			    "command can %s the host's abstract sockets through it (@/tmp/.X11-unix/X0, "
			    "D-Bus), which only Landlock's abstract-socket scope (ABI 6) refuses",
			    fd, type, state, ks.type == SOCK_DGRAM ? "send to" : "connect to");
	}
}

/* A protected file with another hard link (fs_obj.hard_linked) can be
 * written through that name, wherever it lies, whatever holds this one:
 * fs.write missing, naming it. */
void backend_verdict_linked_protected(const struct fs_plan *fp, struct moat_verdict *props)
{
	size_t i, n = 0;
	const char *first = NULL;

	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		if (o->role == FS_PROTECT && o->present && !o->lifted && o->hard_linked && !n++)
			first = o->real;
	}
	if (n && props[MOAT_P_FS_WRITE].enforced)
		verdict_missing(&props[MOAT_P_FS_WRITE], "remove the other link (ls -li finds it), or lift it with --unprotect",
				"%s%s has another hard link: the file can be written through that name, whatever holds "
				"this one read-only",
				first, n > 1 ? " (and other protected files)" : "");
}

/* A hard-link farm in a write grant (fs_plan.farms, resolve/linkfarm.h):
 * its files are also files outside the grants (a package store, another
 * clone), which a write through the grant's name changes: the rules and
 * the view hold names, not files.  fs.write missing, naming the farm,
 * what it shares its files with, and how to make it of copies. */
void backend_verdict_link_farms(const struct fs_plan *fp, struct moat_verdict *props)
{
	const struct fs_farm *f = fp->n_farms ? &fp->farms[0] : NULL;
	const struct link_farm *lf = f ? link_farm_get(f->kind) : NULL;

	if (!lf || !props[MOAT_P_FS_WRITE].enforced)
		return;
	verdict_missing(&props[MOAT_P_FS_WRITE], lf->hint,
			"%s is a farm of hard links (%s has %ju names): a write through the grant's name changes the same "
			"file outside the write grants, in %s%s",
			f->dir, f->file, (uintmax_t)f->nlink, lf->shares,
			fp->n_farms > 1 ? " (and other hard-link farms in the write grants)" : "");
}

/* A denied file with another hard link (fs_obj.linked_secret) is readable
 * through that name wherever a grant holds it: the rules and the view hold
 * names, not the inode.  fs.secrets missing, naming it.  Where the bounded
 * walk stopped (fs_obj.link_unchecked), the mechanism says so: the claim
 * states how far it was checked. */
void backend_verdict_linked_secret(const struct fs_plan *fp, struct moat_verdict *props)
{
	size_t i, n = 0, n_unchecked = 0;
	const char *first = NULL, *unchecked = NULL;
	bool unlistable = false;

	for (i = 0; i < fp->n; i++) {
		if (fp->obj[i].role != FS_DENY)
			continue;
		if (fp->obj[i].linked_secret && !n++)
			first = fp->obj[i].linked_secret;
		if (fp->obj[i].link_unchecked && !n_unchecked++) {
			unchecked = fp->obj[i].link_unchecked;
			unlistable = fp->obj[i].link_unlistable;
		}
	}
	if (!n && n_unchecked && props[MOAT_P_FS_SECRETS].enforced) {
		char was[sizeof(props->mechanism)];

		memcpy(was, props[MOAT_P_FS_SECRETS].mechanism, sizeof(was));
		verdict_enforce(&props[MOAT_P_FS_SECRETS],
				"%s; hard links not looked for below %s%s (%s)", was, unchecked,
				n_unchecked > 1 ? " and more" : "",
				unlistable ? "not listable by this uid" : "walk bound");
	}
	if (n && props[MOAT_P_FS_SECRETS].enforced)
		verdict_missing(&props[MOAT_P_FS_SECRETS],
				"list its names with `find / -xdev -samefile FILE` and remove the one you did not mean "
				"(or move the secret out of the denied path)",
				"%s%s has another hard link: the file can be read through that name wherever a grant "
				"holds it, whatever denies this one (the rules and the view hold names, not the file)",
				first, n > 1 ? " (and other denied files)" : "");
}

/* A declared directory descriptor (--keep-fd N, a directory or an O_PATH
 * of one) is a way out of every mount view: openat(N, "..") and
 * /proc/self/fd/N/.. walk the host's own tree from it, whatever the
 * sandbox's mount namespace shows.  Only Landlock, bound to inodes, still
 * refuses what the grants do not name (measured: the conformance probe
 * fd-dir-escape read a secret beside the directory under native, bwrap,
 * nsjail and oci with MOAT_HOST_LIMIT=landlock=0, each claiming fs.read).
 * Without it the file system properties the view gave are missing. */
void backend_verdict_kept_dirs(const struct moat_policy *p, const struct backend_plan *bp, struct moat_verdict *props)
{
	static const enum moat_property fs_props[] = {MOAT_P_FS_READ, MOAT_P_FS_WRITE, MOAT_P_FS_SECRETS};
	size_t i, j;

	if (bp->fs_landlock_abi > 0)
		return;
	for (i = 0; i < p->n_keep_fds; i++) {
		char link[64], path[PATH_MAX];
		struct stat st;
		ssize_t n;

		if (fstat(p->keep_fds[i], &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", p->keep_fds[i]);
		n = readlink(link, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = '\0';
		for (j = 0; j < ARRAY_LEN(fs_props); j++)
			if (props[fs_props[j]].enforced)
				verdict_missing(&props[fs_props[j]],
						"pass a file, a pipe or a connected unix socket instead, or grant the "
						"directory (--read or --write PATH) and let the command open it",
						"--keep-fd %d is a directory (%s): without Landlock the command reaches the host's "
						"whole file system from it (openat(%d, \"..\"))",
						p->keep_fds[i], n > 0 ? path : "?", p->keep_fds[i]);
		return;
	}
}
