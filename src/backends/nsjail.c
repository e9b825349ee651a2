/* The nsjail backend: the policy compiled into nsjail's own configuration,
 * a protobuf text file in moat's private work directory (docs/backends.md,
 * "nsjail"), run as
 *
 *   nsjail --config WORK/nsjail.cfg
 *
 * A file, not an argv: the command's environment is in it (envar), and
 * every user of the host can read an argv in /proc/PID/cmdline while it
 * runs (`--env NAME=VALUE` would publish a token passed with --env-pass);
 * nsjail's `--env NAME` without a value would take it from nsjail's own
 * environment, which then had to be the command's, loader hooks included.
 * The kafel policy is a second file beside it (seccomp_policy_file), so the
 * two can be read, diffed and checked apart.
 *
 * What the configuration holds, from nsjail 3.6's config.proto and what
 * its code does with it (google/nsjail at d6454b4, the version measured):
 *
 *   - the mounts of resolve/view.c, explicit: nsjail's root is an empty
 *     tmpfs, read-only at the end; read grants are read-only binds, write
 *     grants read-write ones, /proc fresh and read-only, /dev a tmpfs with
 *     the granted device nodes bound in, /tmp, /dev/shm and /run private
 *     tmpfs with their size limits.  nsjail binds with MS_REC but remounts
 *     only the top of each bind read-only (mnt_legacy.cc remountPt, as the
 *     issue measured `-R /`: /sys/power/state and cgroup files writable),
 *     so every mount point below a bind, as this host's mountinfo lists
 *     them when moat plans, is bound again on its own, read-only under a
 *     read grant, and nosuid, nodev under every grant;
 *   - the namespaces nsjail makes by default (user, mount, pid, ipc, uts,
 *     net, cgroup), net shared only for net all, the user namespace left
 *     out only where moat is root and the host has none;
 *   - nsjail's own defaults that would surprise the command, overridden:
 *     the 600 s wall-clock limit (time_limit 0: moat's --timeout owns it),
 *     its rlimits (file size 1 MiB, 32 open files, 4 GiB of address space,
 *     600 s of CPU: disable_rl, and moat sets the policy's own before it
 *     executes nsjail, which passes them on), nice 19 (nice_level: moat's
 *     own niceness), the hostname NSJAIL ("moat", as the OCI bundle's).
 *     nsjail also raises its own soft RLIMIT_NOFILE to 8192 at start
 *     (nsjail.cc setFDLimit), which the jail inherits: moat __init puts the
 *     caller's back (--nofile-soft);
 *   - the exact environment (envar; nsjail clears its own first), the fds
 *     to keep (pass_fd: nsjail marks every other close-on-exec), and moat's
 *     seccomp rules as a kafel policy (kernel/seccomp_kafel.c);
 *   - pid 1 is moat itself: /.moat/init, moat's binary bound read-only,
 *     `__init [--landlock ...] --started-fd --lifeline --stderr-fd -- CMD`,
 *     as under bwrap: nsjail's command is pid 1 and has no init otherwise.
 *     Signals go to __init through the lifeline, never to nsjail, which
 *     answers SIGTERM with a SIGKILL of the jail.  nsjail's jailed process
 *     dies with nsjail (PR_SET_PDEATHSIG), and nsjail with moat.
 *
 * nsjail leaves its work directories behind (mnt.cc findWorkDir:
 * /run/user/UID/nsjail/{root,tmp}, /run/user/nsjail.UID.*, /tmp/nsjail.UID.*,
 * /dev/shm/nsjail.UID.*, the first it can make): moat makes the one nsjail
 * will take before the run, refuses one another user owns or could write
 * (nsjail would mount over whatever is at the name), and removes it after
 * the run when no other run uses it (backend_shared_dir). */
#include "backends/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/hints.h"
#include "kernel/seccomp.h"
#include "policy/verdict.h"
#include "resolve/view.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/mountinfo.h"
#include "util/path.h"

#define HINT_SECCOMP HOST_HINT_SECCOMP
#define CONFIG_NAME  "nsjail.cfg"
#define KAFEL_NAME   "seccomp.kafel"
#define INIT_PATH    "/.moat/init"
/* What __init checks nsjail's binds against (--bound-file; backend.h,
 * bound_file), bound read-only from the work dir. */
#define BOUND_PATH   "/.moat/bound"
#define BOUND_NAME   "bound"

struct nsjail_facts {
	bool seccomp;
	char seccomp_why[256];
	struct moat_kafel_stats kafel;
	size_t n_grants, n_expanded, n_pins, n_unpinned, n_submounts;
	int landlock_abi; /* moat's ruleset applied inside by __init, or 0 */
	size_t n_masks_left; /* denied files left to Landlock alone */
	size_t n_links_unheld;  /* protected symlinks in a bound host directory */
	char link_unheld[256];  /* the first of them */
};

/* Whether this user can open `path` for reading, as nsjail will to mount
 * on it (a path that is not there is nsjail's to make). */
static bool can_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT;
	close(fd);
	return true;
}

/* --- protobuf text format ------------------------------------------------------ */

/* A string literal: '"' and '\' escaped, every byte outside printable
 * ASCII as an octal escape (the text format's own). */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\%03o", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void put_field(FILE *f, const char *name, const char *value)
{
	fprintf(f, "%s: ", name);
	put_str(f, value);
	fputc('\n', f);
}

/* One MountPt of config.proto, on one line, with a note. */
struct mnt {
	const char *src, *dst, *fstype, *options, *note;
	bool bind, symlink, rw, nosuid, nodev, noexec;
	int is_dir; /* -1: nsjail decides; else false or true */
};

static void put_mount(FILE *f, const struct mnt *m)
{
	fputs("mount {", f);
	if (m->src) {
		fputs(" src: ", f);
		put_str(f, m->src);
	}
	fputs(" dst: ", f);
	put_str(f, m->dst);
	if (m->fstype)
		fprintf(f, " fstype: \"%s\"", m->fstype);
	if (m->options)
		fprintf(f, " options: \"%s\"", m->options);
	if (m->bind)
		fputs(" is_bind: true", f);
	if (m->symlink)
		fputs(" is_symlink: true", f);
	if (m->rw)
		fputs(" rw: true", f);
	if (m->is_dir >= 0)
		fprintf(f, " is_dir: %s", m->is_dir ? "true" : "false");
	if (m->nosuid)
		fputs(" nosuid: true", f);
	if (m->nodev)
		fputs(" nodev: true", f);
	if (m->noexec)
		fputs(" noexec: true", f);
	fputs(" }", f);
	if (m->note)
		fprintf(f, "  # %s", m->note);
	fputc('\n', f);
}

/* A tmpfs of the view: writable, or read-only once what lies below it is
 * mounted (nsjail mounts everything writable, then remounts); `empty`:
 * nothing is ever below it (a mask, an empty directory), noexec too. */
static void put_tmpfs(FILE *f, const char *dst, const char *options, bool rw, bool empty, const char *note)
{
	struct mnt m = {.dst = dst, .fstype = "tmpfs", .options = options, .note = note, .is_dir = -1};

	m.rw = rw;
	m.nosuid = m.nodev = true;
	m.noexec = empty;
	put_mount(f, &m);
}

/* A bind mount of a host object: nosuid always, nodev unless it is a
 * device node, its kind told (nsjail would stat the name again). */
static void put_bind(FILE *f, const char *src, const char *dst, bool rw, bool device, bool dir, const char *note)
{
	struct mnt m = {.src = src, .dst = dst, .note = note, .is_dir = dir};

	m.bind = m.nosuid = true;
	m.rw = rw;
	m.nodev = !device;
	put_mount(f, &m);
}

static void put_symlink(FILE *f, const char *target, const char *dst)
{
	put_mount(f, &(struct mnt){.src = target, .dst = dst, .symlink = true, .is_dir = -1});
}

/* --- the view -------------------------------------------------------------------- */

/* Every mount point strictly below `src` that the view shows through `op`
 * (no later op covers it), bound again onto itself: nsjail's MS_REC bind
 * brought it along with the host's flags, and nsjail remounts only the
 * top.  Returns how many. */
static size_t put_submounts(FILE *f, const struct view *v, const struct view_op *op, const char *src,
			    char *const *points)
{
	size_t n = 0, i, len = strlen(src);

	for (i = 0; points && points[i]; i++) {
		const char *p = points[i];
		cleanup_free char *dest = NULL;
		struct stat st;

		if (strcmp(p, src) == 0 || !path_within(p, src))
			continue;
		dest = moat_xasprintf("%s%s", strcmp(op->dest, "/") == 0 ? "" : op->dest,
				      strcmp(src, "/") == 0 ? p : p + len);
		/* A later mount of the view covers it: that one decides. */
		if (view_cover(v, dest) != op)
			continue;
		/* Out of this user's reach: the command cannot reach it either. */
		if (stat(p, &st) != 0)
			continue;
		put_bind(f, p, dest, !op->read_only, false, S_ISDIR(st.st_mode),
			 "a mount below the grant, bound again: nsjail remounts only the top");
		n++;
	}
	return n;
}

static void put_op(FILE *f, const struct backend_ctx *ctx, const struct view *v, const struct view_op *op,
		   char *const *points, struct nsjail_facts *facts)
{
	static const char *const dev_links[][2] = {
	    {"/proc/self/fd", "/dev/fd"},
	    {"/proc/self/fd/0", "/dev/stdin"},
	    {"/proc/self/fd/1", "/dev/stdout"},
	    {"/proc/self/fd/2", "/dev/stderr"},
	};
	const struct fs_obj *o = op->obj >= 0 ? &ctx->fs->obj[op->obj] : NULL;
	char opts[96];
	size_t i;

	switch (op->kind) {
	case VIEW_PROC:
		put_mount(f, &(struct mnt){.dst = op->dest,
					   .fstype = "proc",
					   .nosuid = true,
					   .nodev = true,
					   .noexec = true,
					   .is_dir = -1,
					   .note = "fresh, read-only"});
		break;
	case VIEW_DEV:
		/* As native's: nosuid and noexec; the nodes are binds. */
		put_mount(f, &(struct mnt){.dst = op->dest,
					   .fstype = "tmpfs",
					   .options = "mode=0755,size=65536k",
					   .rw = true,
					   .nosuid = true,
					   .noexec = true,
					   .is_dir = -1,
					   .note = "the minimal /dev: the granted nodes are bound in"});
		for (i = 0; i < ARRAY_LEN(dev_links); i++)
			put_symlink(f, dev_links[i][0], dev_links[i][1]);
		break;
	case VIEW_TMPFS:
		snprintf(opts, sizeof(opts), "mode=%04o,size=%lld,nr_inodes=%lld", op->mode, (long long)op->size,
			 (long long)view_tmpfs_inodes(op->size));
		put_tmpfs(f, op->dest, opts, true, false, "private");
		break;
	case VIEW_SKELETON:
		put_tmpfs(f, op->dest, "mode=0755", false, false, "read-only once what lies below is mounted");
		break;
	case VIEW_BIND:
		if (op->device) {
			put_bind(f, o->real, op->dest, !op->read_only, true, false, "device");
			break;
		}
		facts->n_grants++;
		put_bind(f, o->real, op->dest, !op->read_only, false, S_ISDIR(o->mode),
			 op->read_only ? "read grant" : "write grant");
		facts->n_submounts += put_submounts(f, v, op, o->real, points);
		break;
	case VIEW_PIN:
		put_bind(f, op->dest, op->dest, !op->read_only, false,
			 S_ISDIR(o->mode) || (o->placeholder && o->placeholder_dir),
			 op->read_only ? "protected entry, pinned read-only" : "pinned");
		facts->n_submounts += put_submounts(f, v, op, op->dest, points);
		break;
	case VIEW_MASK:
		if (op->dir)
			put_tmpfs(f, op->dest, "mode=0000,size=4k", false, true, "mask");
		else if (facts->landlock_abi > 0 && !can_open(op->dest)) {
			/* nsjail opens a mount point (O_CREAT | O_RDONLY) before
			 * it mounts there and gives up on EACCES (mnt_legacy.cc,
			 * createMountTarget): /etc/shadow as uid 65534.  Landlock
			 * refuses the file on its inode all the same. */
			fputs("# ", f);
			put_str(f, op->dest);
			fputs(": no mask, nsjail cannot open it to mount on; moat's Landlock rules refuse it\n", f);
			facts->n_masks_left++;
		} else
			put_bind(f, "/dev/null", op->dest, false, false, false, "mask");
		break;
	case VIEW_DIR:
		/* nsjail has no mkdir of its own: an empty read-only tmpfs.
		 * One in a host directory the view binds exists already. */
		if (op->made_here)
			put_tmpfs(f, op->dest, "mode=0755,size=4k", false, true, "an empty directory");
		break;
	case VIEW_SYMLINK:
		if (op->made_here)
			put_symlink(f, op->text, op->dest);
		break;
	}
}

/* --- nsjail's work directories ----------------------------------------------------- */

/* The directories nsjail makes for its root and its scratch tmpfs: the
 * first of its candidates it can make (mnt.cc findWorkDir; nsjail gets no
 * TMPDIR from moat, so that candidate is not among them), made here first
 * and held for the run. */
static int work_dirs(struct backend_plan *bp, char *why, size_t len)
{
	static const char *const purposes[] = {"root", "tmp"};
	unsigned uid = (unsigned)getuid();
	size_t i, c;

	for (i = 0; i < ARRAY_LEN(purposes); i++) {
		char cand[4][128];
		bool chosen = false;

		snprintf(cand[0], sizeof(cand[0]), "/run/user/%u/nsjail/%s", uid, purposes[i]);
		snprintf(cand[1], sizeof(cand[1]), "/run/user/nsjail.%u.%s", uid, purposes[i]);
		snprintf(cand[2], sizeof(cand[2]), "/tmp/nsjail.%u.%s", uid, purposes[i]);
		snprintf(cand[3], sizeof(cand[3]), "/dev/shm/nsjail.%u.%s", uid, purposes[i]);
		for (c = 0; c < ARRAY_LEN(cand) && !chosen; c++) {
			char parent[128];
			struct stat st;
			bool made;
			int rc, tries;

			snprintf(parent, sizeof(parent), "%.127s", cand[c]);
			*strrchr(parent, '/') = '\0';
			for (tries = 0; tries < 2; tries++) {
				/* nsjail makes the parent too (/run/user). */
				if (mkdir(parent, 0755) == 0 && backend_shared_dir(bp, parent, true, why, len) < 0)
					return -1;
				made = mkdir(cand[c], 0755) == 0;
				if (!made && errno != EEXIST &&
				    !(errno == EROFS && stat(cand[c], &st) == 0 && S_ISDIR(st.st_mode)))
					break;
				if (access(cand[c], R_OK) != 0)
					break;
				rc = backend_shared_dir(bp, cand[c], made, why, len);
				if (rc < 0)
					return -1;
				if (rc == 0) {
					chosen = true;
					break;
				}
			}
		}
		if (!chosen) {
			snprintf(why, len, "nsjail can make none of its work directories for its %s (%s, ...)",
				 purposes[i], cand[2]);
			return -1;
		}
	}
	return 0;
}

/* --- the configuration --------------------------------------------------------------- */

static void put_header(FILE *f, const struct backend_ctx *ctx, const struct backend_plan *bp)
{
	const struct moat_policy *p = ctx->policy;
	const struct moat_host *h = ctx->host;
	struct backend_rlimit rl[BACKEND_MAX_RLIMITS];
	size_t i, n_rl = backend_rlimits(p, &bp->limits, rl);
	int nice_now;

	fputs("# moat's policy for nsjail (config.proto, text format), written by moat: src/backends/nsjail.c and\n"
	      "# docs/backends.md, \"nsjail\", say why each line is here.\n"
	      "name: \"moat\"\n"
	      "mode: ONCE\n"
	      "hostname: \"moat\"\n",
	      f);
	put_field(f, "cwd", p->cwd);
	fputs("# nsjail's defaults, overridden: no wall-clock limit of its own (moat's --timeout), no rlimits of its\n"
	      "# own but the ones it inherits, the caller's niceness, not 19.\n"
	      "# The rlimits moat sets before nsjail:",
	      f);
	for (i = 0; i < n_rl; i++)
		fprintf(f, " %s=%llu", rl[i].oci_name, rl[i].value);
	fputs("\ntime_limit: 0\n"
	      "disable_rl: true\n",
	      f);
	errno = 0;
	nice_now = getpriority(PRIO_PROCESS, 0);
	fprintf(f, "nice_level: %d\n", errno ? 0 : nice_now);
	fputs("log_level: ERROR\n", f);
	if (p->net == MOAT_NET_ALL)
		fputs("clone_newnet: false\n", f);
	/* As root without user namespaces nsjail makes the others with
	 * root's own privilege, as bwrap does. */
	if (!h->userns && h->root)
		fputs("clone_newuser: false\n", f);
	fputs("# The command's exact environment: nsjail clears its own.\n", f);
	for (i = 0; ctx->envp && ctx->envp[i]; i++)
		put_field(f, "envar", ctx->envp[i]);
}

/* The fds nsjail leaves open: the declared ones, the backend's, moat's
 * pipes for __init. */
static void put_fds(FILE *f, const struct moat_policy *p, const struct backend_plan *bp)
{
	int mine[] = {bp->lifeline_to, bp->started_to, bp->stderr_to};
	size_t i;

	for (i = 0; i < p->n_keep_fds; i++)
		fprintf(f, "pass_fd: %d\n", p->keep_fds[i]);
	for (i = 0; i < bp->n_pass_fds; i++)
		fprintf(f, "pass_fd: %d\n", bp->pass_fds[i]);
	for (i = 0; i < ARRAY_LEN(mine); i++)
		if (mine[i] >= 0)
			fprintf(f, "pass_fd: %d\n", mine[i]);
}

static void put_exec(FILE *f, const struct moat_policy *p, char **init_args)
{
	size_t i;

	fputs("exec_bin {\n", f);
	fputs("  path: ", f);
	put_str(f, INIT_PATH);
	fputc('\n', f);
	for (i = 1; init_args[i]; i++) {
		fputs("  arg: ", f);
		put_str(f, init_args[i]);
		fputc('\n', f);
	}
	fputs("  arg: \"--\"\n  arg: ", f);
	put_str(f, p->exe);
	fputc('\n', f);
	for (i = 1; i < p->argc; i++) {
		fputs("  arg: ", f);
		put_str(f, p->argv[i]);
		fputc('\n', f);
	}
	fputs("}\n", f);
}

/* Append NAME and the number N. */
static void add_number_arg(char ***args, size_t *n, const char *name, long long value)
{
	char num[24];

	snprintf(num, sizeof(num), "%lld", value);
	backend_strv_add(args, n, name);
	backend_strv_add(args, n, num);
}

/* __init's arguments after "__init": moat's pipes (a run), the caller's
 * soft RLIMIT_NOFILE when nsjail's raise would reach the command. */
static void init_pipes(const struct backend_ctx *ctx, struct backend_plan *bp, char ***args, size_t *n)
{
	const struct moat_policy *p = ctx->policy;

	if (!ctx->exporting) {
		/* Above every fd nsjail is told to keep. */
		bp->started_to = backend_highest_fd(p, bp) + 1;
		add_number_arg(args, n, "--started-fd", bp->started_to);
		bp->lifeline_to = backend_highest_fd(p, bp) + 1;
		add_number_arg(args, n, "--lifeline", bp->lifeline_to);
		bp->signals_via_lifeline = true;
		bp->stderr_to = backend_highest_fd(p, bp) + 1;
		add_number_arg(args, n, "--stderr-fd", bp->stderr_to);
	}
	if (!ctx->exporting && p->limits.files == MOAT_LIMIT_UNSET && ctx->fs->nofile_soft)
		add_number_arg(args, n, "--nofile-soft", (long long)ctx->fs->nofile_soft);
}

static int write_kafel(const struct backend_ctx *ctx, struct backend_plan *bp, struct nsjail_facts *facts,
		       struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	struct moat_seccomp_opts so = {.net = p->net, .allow_ptrace = false, .allow_unix = p->unix_sockets};
	struct moat_error serr = {0};
	cleanup_free char *text = NULL;

	if (!ctx->host->seccomp) {
		snprintf(facts->seccomp_why, sizeof(facts->seccomp_why), "%.200s",
			 ctx->host->seccomp_why[0] ? ctx->host->seccomp_why : "seccomp filters are not available");
		return 0;
	}
	if (moat_seccomp_kafel(&so, &text, &facts->kafel, &serr) < 0) {
		if (serr.kind == MOAT_E_UNAVAIL) {
			snprintf(facts->seccomp_why, sizeof(facts->seccomp_why), "%.200s", serr.message);
			return 0;
		}
		*err = serr;
		return moat_error_wrap(err, "writing the kafel policy");
	}
	if (backend_write_file(bp->work_dir, KAFEL_NAME, text, strlen(text), err) < 0)
		return -1;
	facts->seccomp = true;
	return 0;
}

static int write_config(const struct backend_ctx *ctx, struct backend_plan *bp, const struct view *v,
			struct nsjail_facts *facts, char **init_args, const char *self_exe, struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	cleanup_free char *text = NULL;
	size_t len = 0, n_points = 0, i;
	char **points;
	FILE *f;

	points = mountinfo_points(&n_points);
	if (!points)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "reading /proc/self/mountinfo");
	f = open_memstream(&text, &len);
	if (!f) {
		backend_strv_free(points);
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "writing nsjail's configuration");
	}
	put_header(f, ctx, bp);
	put_fds(f, p, bp);
	fputs("# The view (resolve/view.c), parents first; the root is nsjail's own empty tmpfs, read-only at the "
	      "end.\n",
	      f);
	for (i = 0; i < v->n; i++)
		put_op(f, ctx, v, &v->v[i], points, facts);
	backend_strv_free(points);
	/* Last, so nothing the grants show can hide it. */
	put_bind(f, self_exe, INIT_PATH, false, false, false, "moat itself: pid 1 (moat __init)");
	if (bp->bound_file)
		put_bind(f, bp->bound_file, BOUND_PATH, false, false, false,
			 "the objects moat planned, which __init checks each bind against");
	if (facts->seccomp) {
		cleanup_free char *kafel = moat_xasprintf("%s/%s", bp->work_dir, KAFEL_NAME);
		put_field(f, "seccomp_policy_file", kafel);
	}
	put_exec(f, p, init_args);
	if (fclose(f) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "writing nsjail's configuration");
	return backend_write_file(bp->work_dir, CONFIG_NAME, text, len, err);
}

/* --- verdicts -------------------------------------------------------------------------- */

static void verdicts(const struct backend_ctx *ctx, struct backend_plan *bp, const struct nsjail_facts *f,
		     struct moat_verdict *props)
{
	const struct moat_policy *p = ctx->policy;
	const struct moat_host *h = ctx->host;
	bool netns = p->net != MOAT_NET_ALL;

	backend_verdict_fs("nsjail", f->n_grants, f->n_pins, f->n_unpinned, f->landlock_abi, f->n_expanded,
			   f->n_links_unheld, f->link_unheld, props);
	backend_verdict_export_names(ctx, f->n_pins, props);
	if (f->n_masks_left && props[MOAT_P_FS_SECRETS].enforced)
		verdict_enforce(&props[MOAT_P_FS_SECRETS],
				"landlock ABI %d (moat __init): rules only on the entries around the denied paths "
				"(inode-bound); masks in the view, but for %zu files this user cannot open (nsjail "
				"cannot mount on them)",
				f->landlock_abi, f->n_masks_left);
	if (props[MOAT_P_FS_WRITE].enforced)
		verdict_enforce(
		    &props[MOAT_P_FS_WRITE],
		    "nsjail: read-only binds outside the write grants, read-only root; %zu mounts below the "
		    "grants bound again on their own (nsjail remounts only a bind's top); %zu protected "
		    "entries pinned read-only",
		    f->n_submounts, f->n_pins);
	if (backend_verdict_policy_tmp(p, props))
		verdict_enforce(&props[MOAT_P_FS_TMP], "nsjail: tmpfs on /tmp and /dev/shm");

	if (!backend_verdict_policy_net_none(p, props)) {
		/* missing: the policy opens the network */
	} else if (f->seccomp)
		verdict_enforce(&props[MOAT_P_NET_NONE], "nsjail's network namespace; seccomp (kafel): socket() "
							 "AF_UNIX only");
	else
		verdict_missing(&props[MOAT_P_NET_NONE], HINT_SECCOMP,
				"nsjail brings lo up in its network namespace: without seccomp, inet sockets work (to "
				"the sandbox's own loopback)");
	if (netns)
		verdict_enforce(&props[MOAT_P_NET_LOOPBACK], "nsjail's network namespace with only lo");
	else
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], "use --net loopback",
				"the policy opens the network (net all)");
	backend_verdict_net_allow(props);
	backend_verdict_ipc(p, f->seccomp, "kafel, loaded by nsjail", "nsjail's network namespace",
			    "a host socket inside a granted path", props);
	verdict_enforce(&props[MOAT_P_PROC_PID], "nsjail's pid namespace with a fresh /proc");
	if (f->seccomp)
		verdict_enforce(&props[MOAT_P_PROC_PTRACE], "seccomp (kafel): ptrace, process_vm_* refused; pid "
							    "namespace");
	else
		verdict_missing(&props[MOAT_P_PROC_PTRACE], HINT_SECCOMP, "needs seccomp: %s", f->seccomp_why);
	if (f->seccomp)
		verdict_enforce(
		    &props[MOAT_P_SYS_FILTER],
		    "moat's seccomp rules as a kafel policy (%zu rules; %zu x32 numbers killed; kafel kills "
		    "i386), compiled and loaded by nsjail",
		    f->kafel.n_rules, f->kafel.n_x32);
	else
		verdict_missing(&props[MOAT_P_SYS_FILTER], HINT_SECCOMP, "%s", f->seccomp_why);
	if (f->seccomp)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid (moat, nsjail); seccomp (kafel): TIOCSTI, "
							   "TIOCLINUX, TIOCSETD refused");
	else if (h->userns || !h->root)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid (moat, nsjail): no controlling terminal; user "
							   "namespace, no capability");
	else
		verdict_missing(&props[MOAT_P_TTY_INJECT], HINT_SECCOMP,
				"root keeps TIOCSTI on any terminal without seccomp or a user namespace");
	/* nsjail 3.6's code: the environment is exactly envar, every fd but
	 * 0-2 and pass_fd is closed on exec, the rlimits are the parent's with
	 * disable_rl (the soft RLIMIT_NOFILE put back by __init); bp->caps:
	 * nsjail_compile. */
	backend_verdict_moat_owned(ctx, bp, "nsjail", true, true, props);
}

static int nsjail_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			  struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	struct nsjail_facts facts = {0};
	struct view_opts vo;
	struct view v;
	char **init_args = NULL, exe[PATH_MAX], why[256];
	size_t n_init = 0;
	bool can_run;
	ssize_t n;
	int rc = -1;

	bp->no_new_privs = true;
	bp->apply_rlimits = true;
	/* The jail stays in the cgroup moat starts nsjail in (no cgroup_*
	 * option is given) and in nsjail's pid namespace.  The rlimits are
	 * moat's, set before nsjail (disable_rl): an export's nsjail.cfg sets
	 * none. */
	bp->caps = (struct limit_caps){
	    .rlimits = !ctx->exporting, .in_cgroup = true, .runtime = "nsjail", .own_mount_ns = true, .tmp_size = p->private_tmp, .pid_tree = true,
	    .cgroup_open = ctx->host->seccomp ? NULL : BACKEND_CGROUP_OPEN_NO_SECCOMP};
	snprintf(bp->caps.tree_mechanism, sizeof(bp->caps.tree_mechanism), "%s",
		 ctx->exporting ? "nsjail's pid namespace: its jail dies with nsjail (PR_SET_PDEATHSIG)"
				: "nsjail's pid namespace: its pid 1 (moat __init) ends it with the command and when "
				  "moat's lifeline hangs up");
	backend_limits(ctx, bp);
	can_run = backend_userns_or_root(ctx->host, "nsjail", props) && backend_init_has_room(ctx, "nsjail", props);
	if (!can_run && !ctx->exporting)
		return 0; /* no argv: nothing to run */
	if (!ctx->exporting && work_dirs(bp, why, sizeof(why)) < 0) {
		backend_cannot_run(bp, props, "remove the directory, or run moat as its owner", why);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "reading /proc/self/exe");
	exe[n] = '\0';
	if (write_kafel(ctx, bp, &facts, err) < 0)
		return -1;

	/* With Landlock (a run), moat's inode-bound ruleset is applied inside
	 * by __init and the view binds each grant whole, with masks;
	 * otherwise a grant holding a denied path is mounted entry by entry. */
	vo = (struct view_opts){.landlock = !ctx->exporting && ctx->host->landlock_abi > 0,
				.private_tmp = p->private_tmp,
				.no_placeholders = ctx->exporting,
				.links_as_text = true};
	view_build(p, ctx->fs, &vo, &v);
	facts.n_expanded = v.n_expanded;
	facts.n_pins = v.n_pins;
	facts.n_unpinned = v.n_unpinned;
	facts.n_links_unheld = v.n_links_unheld;
	if (v.link_unheld)
		snprintf(facts.link_unheld, sizeof(facts.link_unheld), "%s", v.link_unheld);
	if (vo.landlock &&
	    (facts.landlock_abi = backend_landlock_layer(ctx, bp, &v, true, &init_args, &n_init, err)) < 0)
		goto out;
	if (!n_init) {
		backend_strv_add(&init_args, &n_init, INIT_PATH);
		backend_strv_add(&init_args, &n_init, "__init");
	}
	init_pipes(ctx, bp, &init_args, &n_init);
	/* nsjail binds each source by its name, resolved again when it
	 * starts: __init checks that each destination is the planned object
	 * (launch/initview.h).  Not in an export, which runs elsewhere. */
	if (!ctx->exporting) {
		size_t i;
		for (i = 0; i < v.n; i++)
			if ((v.v[i].kind == VIEW_BIND && !v.v[i].device) || v.v[i].kind == VIEW_PIN)
				backend_bound_add(bp, v.v[i].dest, v.v[i].obj);
		bp->bound_file = moat_xasprintf("%s/" BOUND_NAME, bp->work_dir);
		backend_strv_add(&init_args, &n_init, "--bound-file");
		backend_strv_add(&init_args, &n_init, BOUND_PATH);
	}
	if (write_config(ctx, bp, &v, &facts, init_args, exe, err) < 0)
		goto out;

	backend_argv_add(bp, "nsjail");
	backend_argv_add(bp, "--config");
	backend_argv_addf(bp, "%s/%s", bp->work_dir, CONFIG_NAME);
	if (can_run)
		verdicts(ctx, bp, &facts, props);
	rc = 0;
out:
	view_free(&v);
	backend_strv_free(init_args);
	return rc;
}

static bool nsjail_host_rules_out(const struct moat_host *h, struct moat_verdict *props)
{
	return !backend_userns_or_root(h, "nsjail", props);
}

const struct moat_backend backend_nsjail = {
    .name = "nsjail",
    .runs_moat_init = true,
    .tools = {"nsjail"},
    .summary = "nsjail: namespaces, explicit binds and moat's seccomp rules as a kafel policy",
    .install_hint =
	"nsjail is not packaged for Debian: build it from https://github.com/google/nsjail (`make`, "
	"after `apt-get install autoconf bison flex g++ libprotobuf-dev libnl-route-3-dev libtool pkg-config "
	"protobuf-compiler`), or use --backend bwrap",
    .os = "linux",
    .needs_work_dir = true,
    .export_files = {CONFIG_NAME, KAFEL_NAME, NULL},
    .host_rules_out = nsjail_host_rules_out,
    .compile = nsjail_compile,
};
