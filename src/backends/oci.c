/* The oci and gvisor backends: the policy compiled into an OCI bundle (a
 * config.json and an empty root directory), run by crun, runc or runsc
 * (docs/backends.md, "oci" and "gvisor").
 *
 * The bundle holds the view planned for every backend (resolve/view.h, without
 * Landlock): the root is an empty directory of the work dir, read-only,
 * with only the grants bound into it -- a grant holding a denied path
 * mounted entry by entry, so the denied objects are not there -- fresh
 * /proc, /dev, /tmp, /run and HOME, and the protected entries of write
 * grants bound read-only onto themselves.
 * Symlinks and the empty cwd are made in that directory before the run,
 * since OCI has no symlink mount.  The namespaces are pid, ipc, uts,
 * mount, cgroup, network (unless net all) and user (mapping the caller's
 * uid and gid to themselves, as the native backend does).  No capability
 * is kept, no_new_privs is set, the rlimits are process.rlimits, and moat's
 * own seccomp filter is written as linux.seccomp rules, which the runtime
 * compiles with its own libseccomp.
 *
 * pid 1 inside is moat itself (`moat __init`, launch/init.h), bound into the
 * bundle read-only: without it the command would be pid 1 and survive its
 * own SIGTERM.
 *
 * The same bundle is what `moat oci export -o DIR` writes, for container
 * platforms: there the runtime's own argv (argv.json) is for reference, and
 * the init mount points at this host's moat binary. */
#include "backends/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <jansson.h>

#include "backends/native.h"
#include "backends/seccomp_json.h"
#include "host/hints.h"
#include "kernel/seccomp.h"
#include "policy/verdict.h"
#include "resolve/view.h"
#include "policy/env.h"
#include "util/jsontext.h"
#include "util/cleanup.h"
#include "util/cleanup_json.h"
#include "util/mem.h"
#include "util/path.h"

#define HINT_SECCOMP HOST_HINT_SECCOMP
#define INIT_PATH "/.moat/init"
/* What __init checks the runtime's binds against (--bound-file): a file
 * of the bundle's root, written by the launcher (backend.h, bound_file). */
#define BOUND_PATH "/.moat/bound"
/* process.cwd when the cwd lies in a host directory the view binds: a link
 * in the bundle's root to the cwd (compile_bundle). */
#define CWD_LINK "/.moat/cwd"
#define ROOTFS "rootfs"

/* Which runtime runs the bundle: they differ in flags and in what they can
 * do unprivileged. */
enum runtime { RT_CRUN, RT_RUNC, RT_RUNSC };

static const char *const runtime_names[] = {"crun", "runc", "runsc"};

struct oci_facts {
	enum runtime rt;
	bool userns;       /* a user namespace is made */
	bool seccomp;      /* linux.seccomp is in the bundle and applied */
	char seccomp_why[256];
	size_t n_rules, n_unknown;
	size_t n_grants, n_expanded, n_pins, n_unpinned;
	size_t n_links_unheld;  /* protected symlinks in a bound host directory */
	char link_unheld[256];  /* the first of them */
	int landlock_abi; /* moat's ruleset applied inside by __init, or 0 */
	int lifeline_to;  /* where __init finds moat's lifeline, or -1 */
	int started_to;   /* where __init finds the started pipe, or -1 */
	int stderr_to;    /* where __init finds the caller's stderr, or -1 */
	const struct limits_plan *lp; /* the limits, decided from bp->caps */
	bool cwd_link;    /* process.cwd is CWD_LINK */
	bool check_binds; /* __init checks every bind against the plan */
	char **links;     /* __init --symlink TEXT PATH pairs: the view's links
			   * on a private tmpfs (NULL-terminated, owned) */
	size_t n_links;
	const char *cgroups_path; /* linux.cgroupsPath, or NULL: none */
};

/* --- the root directory ---------------------------------------------------- */

/* The bundle's root directory: open, and its name for messages.  Every
 * directory and link of it is made relative to that descriptor, one
 * component at a time, following no link: an export writes into a
 * directory of the caller's, where a link planted at DIR/rootfs or below
 * it (by a sandboxed run that could write the project) had moat make the
 * bundle's directories and links wherever it pointed, as root. */
struct bundle_root {
	int fd;           /* O_PATH */
	const char *path; /* DIR/rootfs */
};

static int not_a_dir(struct moat_error *err, const char *what, const char *top, int len, const char *rel)
{
	moat_error_set(err, MOAT_E_USAGE, 0, "%s%.*s is a symlink or not a directory: moat makes %s there, and "
					     "follows no link",
		       top, len, rel, what);
	return moat_error_hint(err, "remove %s%.*s, or export into a new directory", top, len, rel);
}

/* `name` (rootfs, state) in the bundle's directory `dir`, made when
 * missing: a directory of moat's user, not a link. */
static int bundle_dir(const char *dir, const char *name, mode_t mode, struct moat_error *err)
{
	cleanup_close int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int fd = -1;
	cleanup_free char *shown = moat_xasprintf("%s/%s", dir, name);
	cleanup_free char *what = moat_xasprintf("the bundle's %s", name);
	struct stat st;

	if (dfd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "opening the bundle's directory %s", dir);
	if (mkdirat(dfd, name, mode) != 0 && errno != EEXIST)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "creating %s", shown);
	fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return not_a_dir(err, what, shown, 0, "");
	if (fd < 0 || fstat(fd, &st) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "opening %s", shown);
	if (st.st_uid != geteuid()) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s belongs to uid %u, not to moat's user (uid %u)", shown,
			       (unsigned)st.st_uid, (unsigned)geteuid());
		return moat_error_hint(err, "remove %s, or export into a new directory", shown);
	}
	return steal_fd(&fd);
}

/* mkdir -p of `rel` (absolute inside the sandbox) below the root: the last
 * directory, opened (O_PATH), or -1. */
static int dirs_below(const struct bundle_root *r, const char *rel, struct moat_error *err)
{
	cleanup_free char *copy = moat_xstrdup(rel);
	cleanup_close int cur = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
	char *comp, *save = NULL;

	if (cur < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "opening %s", r->path);
	for (comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		int len = (int)(comp - copy + (ptrdiff_t)strlen(comp)), next;

		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0)
			return moat_error_set(err, MOAT_E_SYSTEM, EINVAL, "creating %s%s in the bundle", r->path, rel);
		if (mkdirat(cur, comp, 0755) != 0 && errno != EEXIST)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "creating %s%.*s in the bundle", r->path, len,
					      rel);
		next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && (errno == ELOOP || errno == ENOTDIR))
			return not_a_dir(err, "a directory of the bundle", r->path, len, rel);
		if (next < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "opening %s%.*s in the bundle", r->path, len,
					      rel);
		close(cur);
		cur = next;
	}
	return steal_fd(&cur);
}

static int mkdirs_below(const struct bundle_root *r, const char *rel, struct moat_error *err)
{
	int fd = dirs_below(r, rel, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* A link `dest` -> `target` below the root.  One there already (a second
 * export into the same directory) must be that same link. */
static int symlink_below(const struct bundle_root *r, const char *dest, const char *target, struct moat_error *err)
{
	cleanup_free char *dir = moat_xstrdup(dest);
	cleanup_close int dfd = -1;
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	char have[PATH_MAX];
	ssize_t n;

	if (slash)
		*slash = '\0';
	if ((dfd = dirs_below(r, slash ? dir : "", err)) < 0)
		return -1;
	if (symlinkat(target, dfd, base) == 0)
		return 0;
	if (errno != EEXIST)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "creating the symlink %s%s in the bundle", r->path,
				      dest);
	n = readlinkat(dfd, base, have, sizeof(have) - 1);
	if (n >= 0 && (size_t)n == strlen(target) && memcmp(have, target, (size_t)n) == 0)
		return 0;
	moat_error_set(err, MOAT_E_USAGE, 0, "%s%s exists and is not the link moat makes there (-> %s)", r->path, dest,
		       target);
	return moat_error_hint(err, "remove %s%s, or export into a new directory", r->path, dest);
}

/* --- mounts ------------------------------------------------------------------ */

static json_t *strs(const char *first, ...)
{
	json_t *a = json_array();
	va_list ap;
	const char *s;

	va_start(ap, first);
	for (s = first; s; s = va_arg(ap, const char *))
		json_array_append_new(a, json_string(s));
	va_end(ap);
	return a;
}

static void add_mount(json_t *mounts, const char *dest, const char *type, const char *src, json_t *options)
{
	json_array_append_new(mounts, json_pack("{s:s, s:s, s:s, s:o}", "destination", dest, "type", type, "source",
						src, "options", options));
}

static void add_bind(json_t *mounts, const struct oci_facts *f, const char *src, const char *dest, bool ro,
		     bool dev)
{
	/* runsc has no recursive read-only (rro): there a plain, non-recursive
	 * bind, whose submounts are then not shown at all (stricter). */
	bool recursive = f->rt != RT_RUNSC;
	json_t *o = strs(recursive ? "rbind" : "bind", NULL);

	if (ro)
		json_array_append_new(o, json_string(recursive ? "rro" : "ro"));
	else
		json_array_append_new(o, json_string("rw"));
	json_array_append_new(o, json_string("nosuid"));
	if (!dev)
		json_array_append_new(o, json_string("nodev"));
	add_mount(mounts, dest, "bind", src, o);
}

/* `inodes`: bound the file count too (view_tmpfs_inodes); not under runsc,
 * whose tmpfs takes its own options. */
static void add_tmpfs(json_t *mounts, const char *dest, unsigned mode, bool ro, int64_t size, bool inodes)
{
	char m[32];
	json_t *o = strs("nosuid", "nodev", NULL);

	snprintf(m, sizeof(m), "mode=%04o", mode);
	json_array_append_new(o, json_string(m));
	if (size > 0) {
		snprintf(m, sizeof(m), "size=%lld", (long long)size);
		json_array_append_new(o, json_string(m));
		if (inodes) {
			snprintf(m, sizeof(m), "nr_inodes=%lld", (long long)view_tmpfs_inodes(size));
			json_array_append_new(o, json_string(m));
		}
	}
	if (ro) {
		json_array_append_new(o, json_string("ro"));
		json_array_append_new(o, json_string("noexec"));
		json_array_append_new(o, json_string("size=4k"));
	}
	add_mount(mounts, dest, "tmpfs", "tmpfs", o);
}

/* Is `dest` in the bundle's root directory itself: covered by nothing, or
 * by skeletons that are themselves directories of it? */
static bool in_rootfs(const struct view *v, const char *dest)
{
	const struct view_op *c = view_cover(v, dest);

	while (c && c->kind == VIEW_SKELETON) {
		cleanup_free char *parent = moat_xstrdup(c->dest);
		char *slash = strrchr(parent, '/');
		if (!slash || slash == parent)
			return true;
		*slash = '\0';
		c = view_cover(v, parent);
	}
	return c == NULL;
}

/* Does the view make a link below `dest`?  __init makes it after the
 * runtime's mounts: a tmpfs there cannot be read-only then (the runtime
 * makes its own mount points in a read-only tmpfs). */
static bool links_below(const struct view *v, const char *dest)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		const struct view_op *op = &v->v[i];
		if (op->kind == VIEW_SYMLINK && strcmp(op->dest, dest) != 0 && path_within(op->dest, dest))
			return true;
	}
	return false;
}

/* Does the view show `cwd` from a host directory (a grant's bind)?  Then
 * a directory made there is made on the host. */
static bool cwd_on_host(const struct view *v, const char *cwd)
{
	const struct view_op *c = view_cover(v, cwd);

	return c && (c->kind == VIEW_BIND || c->kind == VIEW_PIN);
}

/* A host object bound by its name: the runtime resolves the source again
 * when it starts, so __init checks what it bound (launch/initview.h). */
static void add_checked_bind(json_t *mounts, struct backend_plan *bp, struct oci_facts *f, const char *src,
			     const struct view_op *op)
{
	add_bind(mounts, f, src, op->dest, op->read_only, op->kind == VIEW_BIND && op->device);
	if (f->check_binds)
		backend_bound_add(bp, op->dest, op->obj);
}

/* Every mount of the view, in its order.  Directories and symlinks the
 * view makes in the root are made in the root directory before the run
 * (OCI has no symlink mount); where a private tmpfs holds them, a
 * directory is a tiny tmpfs and __init makes the symlink (--symlink).
 * Binding the link's target instead showed the whole target -- HOME for
 * /tmp/x/h -> HOME, where only HOME/docs was granted -- and Landlock's rule
 * for the tmpfs covered all of it. */
static json_t *build_mounts(const struct backend_ctx *ctx, struct backend_plan *bp, const struct view *vp,
			    const struct bundle_root *rootfs, const char *self_exe, struct oci_facts *f,
			    struct moat_error *err)
{
	const struct view v = *vp;
	cleanup_json json_t *mounts = json_array();
	size_t i;
	int rc = 0;

	f->n_expanded = v.n_expanded;
	f->n_pins = v.n_pins;
	f->n_unpinned = v.n_unpinned;
	f->n_links_unheld = v.n_links_unheld;
	if (v.link_unheld)
		snprintf(f->link_unheld, sizeof(f->link_unheld), "%s", v.link_unheld);
	for (i = 0; i < v.n && rc == 0; i++) {
		const struct view_op *op = &v.v[i];
		const struct fs_obj *o = op->obj >= 0 ? &ctx->fs->obj[op->obj] : NULL;

		switch (op->kind) {
		case VIEW_PROC:
			add_mount(mounts, "/proc", "proc", "proc", strs("nosuid", "noexec", "nodev", NULL));
			break;
		case VIEW_DEV:
			/* The runtime makes the standard nodes (null, zero, full,
			 * random, urandom, tty) in it: binds of the host's in a
			 * user namespace. */
			add_mount(mounts, "/dev", "tmpfs", "tmpfs",
				  strs("nosuid", "strictatime", "mode=0755", "size=65536k", NULL));
			add_mount(mounts, "/dev/pts", "devpts", "devpts",
				  strs("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL));
			break;
		case VIEW_TMPFS:
			add_tmpfs(mounts, op->dest, op->mode, false, op->size, f->rt != RT_RUNSC);
			break;
		case VIEW_SKELETON:
			/* A directory of the read-only root directory where
			 * nothing else covers it; below a private tmpfs, a tmpfs
			 * of its own, read-only (an ungranted cwd there:
			 * resolve/view.c; HOME's skeleton) unless __init is to
			 * make a link in it. */
			if (in_rootfs(&v, op->dest))
				rc = mkdirs_below(rootfs, op->dest, err);
			else
				add_tmpfs(mounts, op->dest, 0755, !links_below(&v, op->dest), 0, false);
			break;
		case VIEW_BIND:
			/* runsc cannot bind the host's /sys mounts (EINVAL for
			 * the cgroup tmpfs): under gVisor they are left out, which
			 * only hides more. */
			if (f->rt == RT_RUNSC && path_within(op->dest, "/sys"))
				break;
			if (op->device && path_within(op->dest, "/dev"))
				break; /* the runtime's own /dev has the standard nodes */
			add_checked_bind(mounts, bp, f, o->real, op);
			f->n_grants++;
			break;
		case VIEW_PIN:
			add_checked_bind(mounts, bp, f, op->dest, op);
			break;
		case VIEW_MASK:
			if (op->dir)
				add_tmpfs(mounts, op->dest, 0, true, 0, false);
			else
				add_mount(mounts, op->dest, "bind", "/dev/null",
					  strs("bind", "ro", "nosuid", "nodev", "noexec", NULL));
			break;
		case VIEW_DIR:
		case VIEW_SYMLINK:
			if (in_rootfs(&v, op->dest)) {
				rc = op->kind == VIEW_DIR ? mkdirs_below(rootfs, op->dest, err)
							  : symlink_below(rootfs, op->dest, op->text, err);
			} else if (op->kind == VIEW_DIR) {
				/* Read-only, unless __init is to make a link in it
				 * (it runs after the runtime's mounts): then like
				 * the private tmpfs it lies in, which holds
				 * nothing of the host's. */
				add_tmpfs(mounts, op->dest, 0755, !links_below(&v, op->dest), 0, false);
			} else {
				backend_strv_add(&f->links, &f->n_links, op->text);
				backend_strv_add(&f->links, &f->n_links, op->dest);
			}
			break;
		}
	}
	if (rc < 0)
		return NULL;
	/* Last, so nothing the grants show can hide it. */
	if (self_exe)
		add_mount(mounts, INIT_PATH, "bind", self_exe, strs("bind", "ro", "nosuid", "nodev", NULL));
	return steal_ptr(&mounts);
}

/* --- seccomp ------------------------------------------------------------------ */

static json_t *build_seccomp(const struct moat_policy *p, struct oci_facts *f, struct moat_error *err)
{
	struct moat_seccomp_opts so = {.net = p->net, .allow_ptrace = false, .allow_unix = p->unix_sockets};
	struct seccomp_json_counts counts;
	struct moat_error serr = {0};
	json_t *j = seccomp_json_build(&so, &counts, &serr);

	if (!j) {
		if (serr.kind != MOAT_E_UNAVAIL) {
			*err = serr;
			return NULL;
		}
		snprintf(f->seccomp_why, sizeof(f->seccomp_why), "%.200s", serr.message);
		return json_null();
	}
	f->seccomp = true;
	f->n_rules = counts.n_rules;
	f->n_unknown = counts.n_unknown;
	return j;
}

/* --- config.json ----------------------------------------------------------- */

/* The ids inside.  Rootless runc and runsc need the container's root
 * mapped ("no user mapping found" otherwise): unprivileged, the caller is
 * uid 0 inside, with no capability; as root the ids stay what they are. */
static unsigned inner_uid(const struct backend_ctx *ctx)
{
	(void)ctx; /* 0 either way */
	return 0;
}

static unsigned inner_gid(const struct backend_ctx *ctx)
{
	return ctx->host->uid == 0 ? ctx->host->gid : 0;
}

static json_t *build_process(const struct backend_ctx *ctx, const struct oci_facts *f, char *const *init_args)
{
	const struct moat_policy *p = ctx->policy;
	struct backend_rlimit rl[BACKEND_MAX_RLIMITS];
	json_t *args = json_array(), *env = json_array(), *rlimits = json_array();
	size_t i, n = backend_rlimits(p, f->lp, rl);

	if (init_args) {
		for (i = 0; init_args[i]; i++)
			json_array_append_new(args, json_string(init_args[i]));
	} else {
		json_array_append_new(args, json_string(INIT_PATH));
		json_array_append_new(args, json_string("__init"));
	}
	if (f->lifeline_to >= 0) {
		char num[16];
		snprintf(num, sizeof(num), "%d", f->lifeline_to);
		json_array_append_new(args, json_string("--lifeline"));
		json_array_append_new(args, json_string(num));
	}
	if (f->started_to >= 0) {
		char num[16];
		snprintf(num, sizeof(num), "%d", f->started_to);
		json_array_append_new(args, json_string("--started-fd"));
		json_array_append_new(args, json_string(num));
	}
	if (f->stderr_to >= 0) {
		char num[16];
		snprintf(num, sizeof(num), "%d", f->stderr_to);
		json_array_append_new(args, json_string("--stderr-fd"));
		json_array_append_new(args, json_string(num));
	}
	/* The runtime passes 3..N: the gaps between the declared fds are
	 * filled with /dev/null by the launcher, and closed again by __init. */
	if (p->n_keep_fds && f->rt != RT_RUNSC) {
		cleanup_free char *list = backend_keep_fds_list(p);
		json_array_append_new(args, json_string("--keep-fds"));
		json_array_append_new(args, json_string(list));
	}
	/* runc and runsc (measured: 1.1.5, 20221219) set HOME from the
	 * container's passwd when process.env has none; __init takes it away
	 * again, so the command sees exactly moat's environment. */
	if (!env_strv_get(ctx->envp, "HOME")) {
		json_array_append_new(args, json_string("--unsetenv"));
		json_array_append_new(args, json_string("HOME"));
	}
	if (f->check_binds) {
		json_array_append_new(args, json_string("--bound-file"));
		json_array_append_new(args, json_string(BOUND_PATH));
	}
	for (i = 0; i + 1 < f->n_links; i += 2) {
		json_array_append_new(args, json_string("--symlink"));
		json_array_append_new(args, json_string(f->links[i]));
		json_array_append_new(args, json_string(f->links[i + 1]));
	}
	json_array_append_new(args, json_string("--"));
	json_array_append_new(args, json_string(p->exe));
	for (i = 1; p->argv[i]; i++)
		json_array_append_new(args, json_string(p->argv[i]));
	for (i = 0; ctx->envp && ctx->envp[i]; i++)
		json_array_append_new(env, json_string(ctx->envp[i]));
	for (i = 0; i < n; i++)
		json_array_append_new(rlimits, json_pack("{s:s, s:I, s:I}", "type", rl[i].oci_name, "hard",
							 (json_int_t)rl[i].hard, "soft", (json_int_t)rl[i].value));
	(void)f;
	return json_pack("{s:b, s:{s:i, s:i}, s:o, s:o, s:s, s:b, s:{s:[], s:[], s:[], s:[], s:[]}, s:o}", "terminal",
			 0, "user", "uid", (int)inner_uid(ctx), "gid", (int)inner_gid(ctx), "args", args, "env", env,
			 "cwd", f->cwd_link ? CWD_LINK : p->cwd, "noNewPrivileges", 1, "capabilities", "bounding", "effective", "inheritable",
			 "permitted", "ambient", "rlimits", rlimits);
}

static json_t *build_linux(const struct backend_ctx *ctx, const struct oci_facts *f, json_t *seccomp)
{
	const struct moat_policy *p = ctx->policy;
	json_t *ns = json_array();
	json_t *linux_ = json_object();

	json_array_append_new(ns, json_pack("{s:s}", "type", "pid"));
	json_array_append_new(ns, json_pack("{s:s}", "type", "ipc"));
	json_array_append_new(ns, json_pack("{s:s}", "type", "uts"));
	json_array_append_new(ns, json_pack("{s:s}", "type", "mount"));
	json_array_append_new(ns, json_pack("{s:s}", "type", "cgroup"));
	if (p->net != MOAT_NET_ALL)
		json_array_append_new(ns, json_pack("{s:s}", "type", "network"));
	if (f->userns) {
		json_array_append_new(ns, json_pack("{s:s}", "type", "user"));
		json_object_set_new(linux_, "uidMappings",
				    json_pack("[{s:i, s:i, s:i}]", "containerID", (int)inner_uid(ctx), "hostID",
					      (int)ctx->host->uid, "size", 1));
		json_object_set_new(linux_, "gidMappings",
				    json_pack("[{s:i, s:i, s:i}]", "containerID", (int)inner_gid(ctx), "hostID",
					      (int)ctx->host->gid, "size", 1));
	}
	json_object_set_new(linux_, "namespaces", ns);
	if (f->cgroups_path)
		json_object_set_new(linux_, "cgroupsPath", json_string(f->cgroups_path));
	/* The tree limits the runtime's own cgroup holds (runc as root). */
	if (f->lp->oci_memory || f->lp->oci_pids) {
		json_t *res = json_object();
		if (f->lp->oci_memory)
			json_object_set_new(res, "memory",
					    json_pack("{s:I, s:I}", "limit", (json_int_t)p->limits.memory_bytes, "swap",
						      (json_int_t)p->limits.memory_bytes));
		if (f->lp->oci_pids)
			json_object_set_new(res, "pids", json_pack("{s:I}", "limit", (json_int_t)p->limits.pids));
		json_object_set_new(linux_, "resources", res);
	}
	/* What `crun spec` masks in /proc and /sys: kernel state that says
	 * more about the host than a command needs. */
	json_object_set_new(linux_, "maskedPaths",
			    strs("/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
				 "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
				 "/sys/firmware", NULL));
	json_object_set_new(linux_, "readonlyPaths",
			    strs("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL));
	if (seccomp && !json_is_null(seccomp))
		json_object_set(linux_, "seccomp", seccomp);
	return linux_;
}

/* --- runtime and verdicts --------------------------------------------------- */

/* Does runc run rootless: not euid 0, or in a user namespace (its own test:
 * the uid map is not the whole initial one)?  Then it ignores a cgroup it
 * may not make only when linux.cgroupsPath is not set ("permission denied"
 * otherwise), and makes none where it may not. */
static bool runc_rootless(void)
{
	char map[128] = "";
	unsigned long inside, outside, count;
	cleanup_fclose FILE *f = NULL;

	if (geteuid() != 0)
		return true;
	f = fopen("/proc/self/uid_map", "re");
	if (!f || !fgets(map, sizeof(map), f))
		return false; /* no user namespaces in this kernel */
	return sscanf(map, "%lu %lu %lu", &inside, &outside, &count) != 3 || inside != 0 || outside != 0 ||
	       count != 4294967295UL;
}

/* crun 1.8 refuses to start any container on a hybrid cgroup host whose
 * cgroup2 hierarchy (/sys/fs/cgroup/unified) has controllers ("cgroups in
 * hybrid mode not supported, drop all controllers from cgroupv2"), even
 * with --cgroup-manager=disabled.  Same test as crun's. */
static bool crun_refuses_host(char *why, size_t len)
{
	struct statfs root, unified;
	char controllers[256] = "";
	cleanup_fclose FILE *f = NULL;

	if (statfs("/sys/fs/cgroup", &root) != 0 || root.f_type == CGROUP2_SUPER_MAGIC)
		return false;
	if (statfs("/sys/fs/cgroup/unified", &unified) != 0 || unified.f_type != CGROUP2_SUPER_MAGIC)
		return false;
	f = fopen("/sys/fs/cgroup/unified/cgroup.controllers", "re");
	if (!f || !fgets(controllers, sizeof(controllers), f))
		return false;
	controllers[strcspn(controllers, "\n")] = '\0';
	if (!controllers[0])
		return false;
	snprintf(why, len, "crun refuses this hybrid cgroup host: the cgroup2 hierarchy has controllers (%.80s)",
		 controllers);
	return true;
}

/* MOAT_OCI_RUNTIME=crun|runc|runsc picks the runtime of --backend oci (the
 * test suite runs the bundle under each); otherwise the one found. */
static int pick_runtime(const struct moat_backend *self, const struct backend_ctx *ctx, struct backend_plan *bp,
			enum runtime *rt, char *why, size_t why_len)
{
	const char *want = getenv("MOAT_OCI_RUNTIME");
	const char *base;
	size_t i;

	if (strcmp(self->name, "gvisor") == 0) {
		*rt = RT_RUNSC;
		return 0;
	}
	if (want && *want) {
		struct moat_backend one = {.name = want, .tools = {want}};
		char *found;
		for (i = 0; i < ARRAY_LEN(runtime_names); i++)
			if (strcmp(want, runtime_names[i]) == 0)
				break;
		if (i == ARRAY_LEN(runtime_names)) {
			snprintf(why, why_len, "MOAT_OCI_RUNTIME=%.40s: not one of crun, runc, runsc", want);
			return -1;
		}
		*rt = (enum runtime)i;
		if (*rt == RT_CRUN && !ctx->exporting && crun_refuses_host(why, why_len))
			return -1;
		found = backend_find_tool(&one, NULL);
		if (!found && !ctx->exporting) {
			snprintf(why, why_len, "MOAT_OCI_RUNTIME=%s, which is not installed", want);
			return -1;
		}
		free(bp->tool_path);
		bp->tool_path = found ? found : moat_xstrdup(want);
		return 0;
	}
	base = strrchr(bp->tool_path, '/');
	base = base ? base + 1 : bp->tool_path;
	*rt = strcmp(base, "runc") == 0 ? RT_RUNC : RT_CRUN;
	/* An export names runc too where crun refuses this host and runc is
	 * here: its argv.json is what runs the bundle on the host it was made
	 * on (crun's there failed with "cgroups in hybrid mode not
	 * supported").  Elsewhere it names crun, which another host may run. */
	if (*rt == RT_CRUN && crun_refuses_host(why, why_len)) {
		struct moat_backend runc = {.name = "runc", .tools = {"runc"}};
		char *found = backend_find_tool(&runc, NULL);
		if (!found) {
			if (!ctx->exporting)
				return -1;
			why[0] = '\0';
			return 0;
		}
		why[0] = '\0';
		free(bp->tool_path);
		bp->tool_path = found;
		*rt = RT_RUNC;
	}
	return 0;
}

static void runtime_argv(struct backend_plan *bp, const struct backend_ctx *ctx, const struct oci_facts *f,
			 const char *id)
{
	const struct moat_policy *p = ctx->policy;
	int max_fd = backend_highest_fd(p, bp);
	backend_argv_add(bp, runtime_names[f->rt]);
	backend_argv_addf(bp, "--root=%s/state", bp->work_dir);
	switch (f->rt) {
	case RT_CRUN:
		/* moat's run has no cgroup of its own yet; unprivileged there
		 * may be no delegated one to make. */
		backend_argv_add(bp, "--cgroup-manager=disabled");
		break;
	case RT_RUNC:
		break;
	case RT_RUNSC:
		/* net none and loopback: gVisor's own stack with only lo. */
		backend_argv_addf(bp, "--network=%s", p->net == MOAT_NET_ALL ? "host" : "none");
		backend_argv_add(bp, "--ignore-cgroups");
		if (f->seccomp)
			backend_argv_add(bp, "--oci-seccomp");
		break;
	}
	backend_argv_add(bp, "run");
	backend_argv_add(bp, "--bundle");
	backend_argv_add(bp, bp->work_dir);
	/* The declared fds, 3..max: moat closed every other one before. */
	if (max_fd > 2 && f->rt != RT_RUNSC) {
		backend_argv_addf(bp, "--preserve-fds=%d", max_fd - 2);
		bp->fill_fd_gaps = true;
	}
	if (f->rt == RT_RUNC)
		backend_argv_add(bp, "--no-new-keyring");
	backend_argv_add(bp, id);
}

static void verdicts(const struct backend_ctx *ctx, struct backend_plan *bp, const struct oci_facts *f,
		     struct moat_verdict *props)
{
	const struct moat_policy *p = ctx->policy;
	const char *rt = runtime_names[f->rt];
	bool gvisor = f->rt == RT_RUNSC;
	bool netns = p->net != MOAT_NET_ALL;

	backend_verdict_fs(rt, f->n_grants, f->n_pins, f->n_unpinned, f->landlock_abi, f->n_expanded,
			   f->n_links_unheld, f->link_unheld, props);
	backend_verdict_export_names(ctx, f->n_pins, props);
	if (gvisor && !ctx->exporting) {
		/* runsc's gofer opens each bind source by its name when the
		 * sandbox starts, following links: a name swapped after moat
		 * planned it (a link to ~/.ssh planted where a granted directory
		 * was) is what gets bound.  runc and crun are checked inside
		 * by __init (device and inode); gVisor's kernel numbers its own
		 * files (measured, runsc 20221219: /usr/bin is 9:8 inside), so
		 * nothing inside can tell, and no Landlock holds the objects. */
		static const enum moat_property fs_props[] = {MOAT_P_FS_READ, MOAT_P_FS_WRITE, MOAT_P_FS_SECRETS};
		size_t i;
		for (i = 0; i < ARRAY_LEN(fs_props); i++)
			if (props[fs_props[i]].enforced)
				verdict_missing(&props[fs_props[i]], "use --backend native, bwrap or oci, which bind the objects moat planned",
						"runsc binds each grant by its name, resolved again when it starts: a name "
						"swapped since moat planned it (a link to ~/.ssh planted) would be bound "
						"instead, and gVisor's own inode numbers leave moat no way to check inside");
	}
	if (backend_verdict_policy_tmp(p, props))
		verdict_enforce(&props[MOAT_P_FS_TMP], "%s: tmpfs on /tmp and /dev/shm", rt);

	if (!backend_verdict_policy_net_none(p, props)) {
		/* missing: the policy opens the network */
	} else if (f->seccomp)
		verdict_enforce(&props[MOAT_P_NET_NONE], "%s; seccomp: socket() AF_UNIX only",
				gvisor ? "runsc --network=none" : "network namespace");
	else
		verdict_missing(&props[MOAT_P_NET_NONE], HINT_SECCOMP,
				"the sandbox has its own loopback: without seccomp, inet sockets work (to it)");
	if (netns)
		verdict_enforce(&props[MOAT_P_NET_LOOPBACK], "%s", gvisor ? "runsc --network=none: gVisor's stack "
									    "with only lo"
									  : "network namespace with only lo");
	else
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], "use --net loopback", "the policy opens the network (net all)");
	backend_verdict_net_allow(props);
	{
		char via[32];
		snprintf(via, sizeof(via), "via %s", rt);
		backend_verdict_ipc(p, f->seccomp, via, gvisor ? "gVisor's own network stack" : "network namespace",
				    "a host socket inside a granted path", props);
	}
	verdict_enforce(&props[MOAT_P_PROC_PID], "%s: pid namespace with a fresh /proc", rt);
	if (gvisor)
		verdict_enforce(&props[MOAT_P_PROC_PTRACE], "gVisor: ptrace works only inside its own kernel; pid "
							    "namespace");
	else if (f->seccomp)
		verdict_enforce(&props[MOAT_P_PROC_PTRACE], "seccomp (via %s): ptrace, process_vm_* refused; pid "
							    "namespace",
				rt);
	else
		verdict_missing(&props[MOAT_P_PROC_PTRACE], HINT_SECCOMP, "needs seccomp: %s", f->seccomp_why);
	if (f->seccomp)
		verdict_enforce(&props[MOAT_P_SYS_FILTER], "moat's seccomp rules as OCI linux.seccomp (%zu rules, %zu "
							   "names unknown to libseccomp left out), applied by %s",
				f->n_rules, f->n_unknown, gvisor ? "runsc --oci-seccomp inside gVisor" : rt);
	else
		verdict_missing(&props[MOAT_P_SYS_FILTER], HINT_SECCOMP, "%s", f->seccomp_why);
	/* process.terminal false: the runtime runs the container in a new
	 * session, without the caller's terminal as controlling tty, but fds
	 * 0-2 may still be that terminal, and TIOCSTI on it works unless the
	 * filter refuses it.  gVisor implements ioctls itself: not measured. */
	if (f->seccomp && !gvisor)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "seccomp (via %s): TIOCSTI, TIOCLINUX, TIOCSETD refused", rt);
	else if (gvisor && p->n_terminal)
		/* Every fd of 0-2 that was the caller's terminal is moat's
		 * pty instead (launch/term.h): TIOCSTI reaches only that. */
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "a pty of moat's in place of the caller's terminal on fds "
							   "0-2 (relayed by moat)");
	else if (gvisor && !isatty(STDIN_FILENO) && !isatty(STDOUT_FILENO) && !isatty(STDERR_FILENO))
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "gVisor: no host terminal is passed in (none of fds 0-2 is "
							   "a terminal), and no controlling terminal");
	else if (gvisor)
		verdict_missing(&props[MOAT_P_TTY_INJECT], "use --backend native or bwrap",
				"gVisor passes a host terminal on fds 0-2 through; TIOCSTI on it is not refused by a "
				"filter moat checked");
	else
		verdict_missing(&props[MOAT_P_TTY_INJECT], HINT_SECCOMP, "needs seccomp: %s", f->seccomp_why);
	/* The runtime gives process.env exactly (measured: crun 1.8.1, runc
	 * 1.1.5, runsc 20221219 add nothing when HOME and PATH are set), the
	 * fds moat leaves open (0-2 and, but for runsc, the declared ones),
	 * and applies process.rlimits. */
	backend_verdict_moat_owned(ctx, bp, rt, true, true, props);
}

/* runsc as anything but root: measured with runsc 20221219 as uid 65534,
 * --rootless: "cannot create gofer process: fork/exec /proc/self/exe:
 * operation not permitted". */
static bool runsc_unprivileged(const struct moat_host *h, struct moat_verdict *props)
{
	if (h->uid == 0)
		return false;
	backend_verdict_all_missing(props, "run moat as root for --backend gvisor, or use --backend bwrap",
				    "runsc cannot start its sandbox unprivileged here (its gofer fails with EPERM)");
	return true;
}

static bool no_userns_nor_root(const struct moat_host *h, const char *runtime, struct moat_verdict *props)
{
	char reason[256];

	if (h->userns || h->root)
		return false;
	snprintf(reason, sizeof(reason), "%s needs unprivileged user namespaces when moat is not root: %.160s", runtime,
		 h->userns_why[0] ? h->userns_why : "not available here");
	backend_verdict_all_missing(props, host_userns_hint(h, true), reason);
	return true;
}

static bool can_run(const struct backend_ctx *ctx, struct oci_facts *f, struct moat_verdict *props)
{
	const struct moat_host *h = ctx->host;

	f->userns = h->userns;
	if (f->rt == RT_RUNSC && runsc_unprivileged(h, props))
		return false;
	if (!backend_init_has_room(ctx, runtime_names[f->rt], props))
		return false;
	return !no_userns_nor_root(h, runtime_names[f->rt], props);
}

static int write_config(const char *dir, json_t *config, struct moat_error *err)
{
	cleanup_free char *text = json_dumps(config, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (!text)
		return moat_error_set(err, MOAT_E_SYSTEM, ENOMEM, "encoding config.json");
	/* process.env holds the environment's values: the owner's alone. */
	return backend_write_private_file(dir, "config.json", text, strlen(text), err);
}

/* config.json is JSON, which is UTF-8: a string that is not (an argument,
 * a variable, a path) cannot be written into it.  jansson refused each one
 * alone, and the bundle lost that argument or that grant's mount without a
 * word.  The first such string, said with what it is and shown (stray
 * bytes as \xNN; of a variable, its name only: the value may be a token),
 * in a new string; NULL when there is none. */
static bool utf8_str(const char *s)
{
	return !s || utf8_valid(s, strlen(s));
}

static char *not_utf8(const struct backend_ctx *ctx)
{
	const struct moat_policy *p = ctx->policy;
	const char *what = NULL, *bad = NULL;
	cleanup_free char *name = NULL, *shown = NULL;
	size_t i;

	if (!utf8_str(p->exe))
		what = "the command's path", bad = p->exe;
	for (i = 0; !bad && i < p->argc; i++)
		if (!utf8_str(p->argv[i]))
			what = "an argument of the command", bad = p->argv[i];
	if (!bad && !utf8_str(p->cwd))
		what = "the working directory", bad = p->cwd;
	for (i = 0; !bad && ctx->envp && ctx->envp[i]; i++)
		if (!utf8_str(ctx->envp[i])) {
			name = moat_xstrndup(ctx->envp[i], strcspn(ctx->envp[i], "="));
			what = utf8_str(name) ? "the value of the variable" : "the name of a variable", bad = name;
		}
	for (i = 0; !bad && ctx->fs && i < ctx->fs->n; i++)
		if (!utf8_str(ctx->fs->obj[i].path) || !utf8_str(ctx->fs->obj[i].real))
			what = "the path", bad = utf8_str(ctx->fs->obj[i].path) ? ctx->fs->obj[i].real : ctx->fs->obj[i].path;
	if (!bad && !utf8_str(ctx->work_dir))
		what = "the bundle's directory", bad = ctx->work_dir;
	if (!bad)
		return NULL;
	{
		cleanup_json json_t *as_text = json_text(bad);
		shown = moat_text_shown(json_string_value(as_text));
	}
	return moat_xasprintf("%s %s", what, shown);
}

static int compile_bundle(const struct moat_backend *self, const struct backend_ctx *ctx, struct backend_plan *bp,
			  struct moat_verdict *props, struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	struct oci_facts f = {0};
	cleanup_free char *rootfs = NULL, *self_exe = NULL, *id = NULL;
	cleanup_close int rootfs_fd = -1;
	struct bundle_root root;
	cleanup_json json_t *mounts = NULL, *seccomp = NULL, *config = NULL;
	char why[256], exe[PATH_MAX];
	struct view_opts vo = {.private_tmp = p->private_tmp, .no_placeholders = ctx->exporting, .links_as_text = true};
	char **init_args = NULL;
	size_t n_init = 0;
	struct view v;
	bool runnable;

	bp->no_new_privs = true;
	bp->apply_rlimits = false; /* process.rlimits: RLIMIT_AS on runc or
				    * runsc (Go) would break the runtime */
	if (pick_runtime(self, ctx, bp, &f.rt, why, sizeof(why)) < 0) {
		backend_verdict_all_missing(props, "install runc (apt-get install runc), or use --backend bwrap", why);
		return 0;
	}
	bp->runtime = moat_xstrdup(runtime_names[f.rt]);
	/* runc makes the container's cgroup itself (linux.resources, as root),
	 * out of moat's; crun (--cgroup-manager=disabled) and runsc
	 * (--ignore-cgroups) leave the tree in the cgroup they start in,
	 * moat's.  The container's pid namespace ends when its init, moat
	 * __init, ends: with the command, or when moat's lifeline hangs up
	 * (runsc: the sandbox ends with runsc, which dies with moat). */
	bp->caps = (struct limit_caps){.rlimits = true, .own_mount_ns = true,
				       .in_cgroup = f.rt != RT_RUNC,
				       .cgroup_open = ctx->host->seccomp ? NULL : BACKEND_CGROUP_OPEN_NO_SECCOMP,
				       .oci_resources = f.rt == RT_RUNC && ctx->host->uid == 0,
				       .runtime = runtime_names[f.rt],
				       .tmp_size = p->private_tmp,
				       .tmp_files_unbounded = f.rt == RT_RUNSC ? "gVisor's tmpfs is given size= only; its files are "
										 "the sentry's memory (counted by --memory)"
									       : NULL,
				       .pid_tree = true,
				       .no_address_space = f.rt == RT_RUNC
								   ? "runc's own init (Go) runs under the container's "
								     "rlimits and fails with RLIMIT_AS"
								   : NULL,
				       .no_pids = f.rt == RT_RUNSC
							  ? "gVisor's processes are tasks of its own kernel, not the "
							    "host's: a host pids cgroup would count gVisor's threads"
							  : NULL};
	snprintf(bp->caps.tree_mechanism, sizeof(bp->caps.tree_mechanism), "%s",
		 f.rt == RT_RUNSC ? "runsc: the sandbox's pid namespace, which ends with runsc (PDEATHSIG from moat)"
				  : ctx->exporting
				      ? "the container's pid namespace: its init, moat __init, ends with the command (not "
					"with a killed runc)"
				      : "the container's pid namespace: its init, moat __init, ends with the command and "
					"when moat's lifeline hangs up");
	f.lp = backend_limits(ctx, bp);
	runnable = can_run(ctx, &f, props);
	if (!runnable && !ctx->exporting)
		return 0; /* no work dir made (work_dir_lazy) */
	{
		cleanup_free char *bad = not_utf8(ctx);
		if (bad && ctx->exporting) {
			moat_error_set(err, MOAT_E_USAGE, 0, "%s is not UTF-8, which an OCI config.json must be", bad);
			return moat_error_hint(err, "export a command, paths and variables that are UTF-8 text");
		}
		if (bad) {
			snprintf(why, sizeof(why), "%s is not UTF-8, which the OCI config.json moat writes must be", bad);
			backend_verdict_all_missing(props, "use --backend native or bwrap, which take any bytes", why);
			return 0;
		}
	}
	if (backend_work_dir(self, bp, err) < 0)
		return -1;

	rootfs = moat_xasprintf("%s/" ROOTFS, bp->work_dir);
	if ((rootfs_fd = bundle_dir(bp->work_dir, ROOTFS, 0755, err)) < 0)
		return -1;
	{
		int state_fd = bundle_dir(bp->work_dir, "state", 0700, err);
		if (state_fd < 0)
			return -1;
		close(state_fd);
	}
	root = (struct bundle_root){.fd = rootfs_fd, .path = rootfs};
	/* moat itself is pid 1 inside (launch/init.h). */
	{
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "reading /proc/self/exe");
		exe[n] = '\0';
		self_exe = moat_xstrdup(exe);
	}
	if (ctx->host->seccomp) {
		seccomp = build_seccomp(p, &f, err);
		if (!seccomp)
			return -1;
	} else {
		snprintf(f.seccomp_why, sizeof(f.seccomp_why), "%.200s",
			 ctx->host->seccomp_why[0] ? ctx->host->seccomp_why : "seccomp filters are not available");
	}
	/* With Landlock (not inside gVisor, whose kernel has none, and not
	 * in an export, which cannot carry a descriptor) moat __init applies
	 * moat's own inode-bound ruleset, and the view binds each grant whole
	 * with masks; otherwise a grant holding a denied path is mounted entry
	 * by entry, so the denied objects are not in the bundle at all. */
	vo.landlock = !ctx->exporting && f.rt != RT_RUNSC && ctx->host->landlock_abi > 0;
	view_build(p, ctx->fs, &vo, &v);
	f.lifeline_to = f.started_to = f.stderr_to = -1;
	if (vo.landlock && (f.landlock_abi = backend_landlock_layer(ctx, bp, &v, false, &init_args, &n_init, err)) < 0) {
		view_free(&v);
		return -1;
	}
	/* moat's lifeline, right above the declared fds and the ruleset: if
	 * moat dies, the runtime dies with it (PDEATHSIG), but the container
	 * would not; __init ends it when the pipe hangs up. */
	if (!ctx->exporting && f.rt != RT_RUNSC) {
		f.lifeline_to = bp->lifeline_to = backend_highest_fd(p, bp) + 1;
		/* Signals too: runc would pass them on itself, but not SIGTSTP
		 * as a stop of the whole container. */
		bp->signals_via_lifeline = true;
		/* And __init says when it starts the command: a runtime that
		 * ends before that failed in its own set-up (exit 125, not the
		 * command's status). */
		f.started_to = bp->started_to = backend_highest_fd(p, bp) + 1;
		/* The runtime's own words go to moat (a set-up failure lands in
		 * the report), the caller's stderr waits for the command at
		 * stderr_to, where __init puts it back on 2: the container's
		 * stdio is the runtime's. */
		f.stderr_to = bp->stderr_to = backend_highest_fd(p, bp) + 1;
	}
	/* Each bind's destination checked inside against the plan, device
	 * and inode: not under gVisor, whose kernel numbers its own files
	 * (verdicts), and not in an export, which runs elsewhere. */
	f.check_binds = !ctx->exporting && f.rt != RT_RUNSC;
	if (f.check_binds) {
		if (mkdirs_below(&root, "/.moat", err) < 0) {
			view_free(&v);
			backend_strv_free(init_args);
			return -1;
		}
		bp->bound_file = moat_xasprintf("%s" BOUND_PATH, rootfs);
	}
	mounts = build_mounts(ctx, bp, &v, &root, self_exe, &f, err);
	/* runc makes process.cwd when it is missing (mkdir -p, inside the
	 * container): a cwd in a bound host directory, deleted while the
	 * sandbox is set up, would be made again on the host, through the
	 * bind.  Given a link to it instead, runc finds the link where its
	 * mkdir would go and fails ("file exists"); chdir follows the link
	 * to the cwd itself. */
	if (mounts && !ctx->exporting && f.rt != RT_RUNSC && cwd_on_host(&v, p->cwd)) {
		if (symlink_below(&root, CWD_LINK, p->cwd, err) < 0) {
			json_decref(mounts);
			mounts = NULL;
		}
		f.cwd_link = true;
	}
	view_free(&v);
	if (!mounts) {
		backend_strv_free(init_args);
		backend_strv_free(f.links);
		return -1;
	}
	/* One container per run: its id is the work dir's name. */
	id = ctx->exporting ? moat_xstrdup("moat") : moat_xstrdup(strrchr(bp->work_dir, '/') + 1);
	/* runc's cgroups (cgroupfs driver) named by moat, relative: below
	 * runc's own cgroup in each hierarchy, where runc puts them anyway
	 * (its default is the id), so the caller's limits still bind them.
	 * Named, the guard finds them when runc dies before its state.  Not
	 * for a rootless runc, which then fails where it may not make them. */
	if (!ctx->exporting && f.rt == RT_RUNC && !runc_rootless())
		f.cgroups_path = id;
	config = json_pack("{s:s, s:{s:s, s:b}, s:s, s:O, s:o, s:o}", "ociVersion", "1.0.2", "root", "path", ROOTFS,
			   "readonly", 1, "hostname", "moat", "mounts", mounts, "process",
			   build_process(ctx, &f, init_args), "linux", build_linux(ctx, &f, seccomp));
	backend_strv_free(init_args);
	backend_strv_free(f.links);
	if (!config)
		return moat_error_set(err, MOAT_E_SYSTEM, ENOMEM, "building config.json");
	if (write_config(bp->work_dir, config, err) < 0)
		return -1;

	runtime_argv(bp, ctx, &f, id);
	/* If moat dies during the run, the runtime dies with it (PDEATHSIG)
	 * and leaves its container's record, and runc its cgroups: moat's
	 * guard deletes them (launch/guard.h), the cgroups by their name too
	 * (runc killed before its state.json leaves delete no record). */
	if (!ctx->exporting) {
		bp->cleanup_argv = moat_xcalloc(6, sizeof(char *));
		bp->cleanup_argv[0] = moat_xstrdup(bp->tool_path);
		bp->cleanup_argv[1] = moat_xasprintf("--root=%s/state", bp->work_dir);
		bp->cleanup_argv[2] = moat_xstrdup("delete");
		bp->cleanup_argv[3] = moat_xstrdup("--force");
		bp->cleanup_argv[4] = moat_xstrdup(id);
		if (f.rt == RT_RUNC)
			bp->cleanup_wait_state = moat_xasprintf("%s/state/%s/state.json", bp->work_dir, id);
		if (f.cgroups_path)
			bp->cleanup_cgroup = moat_xstrdup(f.cgroups_path);
	}
	if (runnable)
		verdicts(ctx, bp, &f, props);
	return 0;
}

static int oci_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
		       struct moat_error *err)
{
	return compile_bundle(&backend_oci, ctx, bp, props, err);
}

static int gvisor_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			  struct moat_error *err)
{
	return compile_bundle(&backend_gvisor, ctx, bp, props, err);
}

/* Before the runtime is looked for: every runtime needs one or the other
 * (MOAT_OCI_RUNTIME=runsc under oci is asked about in can_run). */
static bool oci_host_rules_out(const struct moat_host *h, struct moat_verdict *props)
{
	return no_userns_nor_root(h, "crun or runc", props);
}

static bool gvisor_host_rules_out(const struct moat_host *h, struct moat_verdict *props)
{
	return runsc_unprivileged(h, props) || no_userns_nor_root(h, "runsc", props);
}

const struct moat_backend backend_oci = {
	.name = "oci",
	.runs_moat_init = true,
	.tools = {"crun", "runc"},
	.summary = "an OCI bundle (moat's mounts, namespaces, seccomp) run by crun or runc",
	.install_hint = "Debian/Ubuntu: `sudo apt install crun` (or runc); Fedora: `sudo dnf install crun` (or runc)",
	.os = "linux",
	.needs_work_dir = true,
	.export_files = {"config.json", NULL},
	.work_dir_lazy = true,
	.host_rules_out = oci_host_rules_out,
	.compile = oci_compile,
};

const struct moat_backend backend_gvisor = {
	.name = "gvisor",
	.runs_moat_init = true,
	.tools = {"runsc"},
	.summary = "gVisor: the OCI bundle run by runsc, under gVisor's own kernel",
	.install_hint = "Debian/Ubuntu: add the gVisor apt repository and `sudo apt install runsc` "
			"(https://gvisor.dev/docs/user_guide/install/); Fedora: the release binary from the same page",
	.os = "linux",
	.needs_work_dir = true,
	.export_files = {"config.json", NULL},
	.work_dir_lazy = true,
	.host_rules_out = gvisor_host_rules_out,
	.compile = gvisor_compile,
};
