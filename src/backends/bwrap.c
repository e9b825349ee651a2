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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/native.h"
#include "host/hints.h"
#include "kernel/seccomp.h"
#include "policy/verdict.h"
#include "resolve/view.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

#define HINT_SECCOMP HOST_HINT_SECCOMP

/* In argv.json when exporting: the fd is made by the run, not by export. */
#define EXPORT_FD_PLACEHOLDER "FD"

/* Device nodes bwrap's --dev makes itself: binds of them add nothing. */
static bool bwrap_dev_node(const char *path)
{
	static const char *const nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
					    "/dev/tty"};
	size_t i;

	for (i = 0; i < ARRAY_LEN(nodes); i++)
		if (strcmp(path, nodes[i]) == 0)
			return true;
	return false;
}

/* A bind of an object.  From its descriptor when one can be passed: bwrap
 * then checks that what it mounted is that object (device and inode), so a
 * name swapped between moat's planning and bwrap's mount fails the start
 * instead of widening it.  By path when exporting (no descriptor exists),
 * and for placeholders, made after this argv. */
static int emit_bind(const struct backend_ctx *ctx, struct backend_plan *bp, const struct view_op *op, bool pin,
		     struct moat_error *err)
{
	const struct fs_obj *o = &ctx->fs->obj[op->obj];
	bool by_fd = !ctx->exporting && o->fd >= 0 && !o->placeholder;

	if (op->device) {
		backend_argv_add(bp, "--dev-bind");
		backend_argv_add(bp, o->real);
		backend_argv_add(bp, op->dest);
		if (op->read_only) {
			backend_argv_add(bp, "--remount-ro");
			backend_argv_add(bp, op->dest);
		}
		return 0;
	}
	if (by_fd) {
		/* No fallback to the path: bwrap would bind whatever the name
		 * leads to then, not the object moat planned from. */
		int fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "passing %s to bwrap", o->real);
		backend_argv_add(bp, op->read_only ? "--ro-bind-fd" : "--bind-fd");
		backend_argv_addf(bp, "%d", backend_pass_fd(bp, fd));
		backend_argv_add(bp, op->dest);
		return 0;
	}
	backend_argv_add(bp, op->read_only ? "--ro-bind" : "--bind");
	backend_argv_add(bp, pin ? op->dest : o->real);
	backend_argv_add(bp, op->dest);
	return 0;
}

static int emit_op(const struct backend_ctx *ctx, struct backend_plan *bp, const struct view_op *op,
		   struct moat_error *err)
{
	switch (op->kind) {
	case VIEW_PROC:
		backend_argv_add(bp, "--proc");
		backend_argv_add(bp, op->dest);
		break;
	case VIEW_DEV:
		backend_argv_add(bp, "--dev");
		backend_argv_add(bp, op->dest);
		break;
	case VIEW_TMPFS:
	case VIEW_SKELETON:
		backend_argv_add(bp, "--perms");
		backend_argv_addf(bp, "%04o", op->mode);
		if (op->kind == VIEW_TMPFS && op->size > 0) {
			backend_argv_add(bp, "--size");
			backend_argv_addf(bp, "%lld", (long long)op->size);
		}
		backend_argv_add(bp, "--tmpfs");
		backend_argv_add(bp, op->dest);
		break;
	case VIEW_BIND:
		/* The command's pty (launch/term.h) is its stdio: bwrap's
		 * /dev/pts is a devpts of its own, with no entry to bind it on. */
		if (op->device && (bwrap_dev_node(op->dest) || path_within(op->dest, "/dev/pts")))
			break;
		return emit_bind(ctx, bp, op, false, err);
	case VIEW_PIN:
		return emit_bind(ctx, bp, op, true, err);
	case VIEW_MASK:
		if (op->dir) {
			backend_argv_add(bp, "--perms");
			backend_argv_add(bp, "0000");
			backend_argv_add(bp, "--tmpfs");
			backend_argv_add(bp, op->dest);
			backend_argv_add(bp, "--remount-ro");
			backend_argv_add(bp, op->dest);
		} else {
			backend_argv_add(bp, "--ro-bind");
			backend_argv_add(bp, "/dev/null");
			backend_argv_add(bp, op->dest);
		}
		break;
	case VIEW_DIR:
		backend_argv_add(bp, "--dir");
		backend_argv_add(bp, op->dest);
		break;
	case VIEW_SYMLINK:
		backend_argv_add(bp, "--symlink");
		backend_argv_add(bp, op->text);
		backend_argv_add(bp, op->dest);
		break;
	}
	return 0;
}

/* run.sh's refusal of descriptor `fd` when `test -TEST` holds for it at
 * run time: the export's report judged it as it was when exported. */
static char *refuse_at_run(char *text, size_t *cap, size_t *len, int fd, char test, const char *what)
{
	text = moat_xgrow(text, cap, *len + 256, 1);
	*len +=
	    (size_t)snprintf(text + *len, *cap - *len,
			     "\tif [ -%c /proc/$$/fd/%d ]; then\n\t\techo \"run.sh: descriptor %d is %s: the export's "
			     "report says it was not\" >&2\n\t\treturn 125\n\tfi\n",
			     test, fd, fd, what);
	return text;
}

/* run.sh's rlimits: what moat sets before bwrap in a run (backend_rlimits),
 * with bash's ulimit, so that the export's report (limits, res.limits)
 * holds when run.sh runs without moat.  A limit that cannot be set refuses
 * the run.  ulimit -v counts KiB. */
static char *set_rlimits(const struct backend_ctx *ctx, const struct backend_plan *bp, char *text, size_t *cap,
			 size_t *len)
{
	static const struct {
		int resource;
		char letter;
		unsigned long long unit;
	} letters[] = {{RLIMIT_CORE, 'c', 1}, {RLIMIT_AS, 'v', 1024}, {RLIMIT_NPROC, 'u', 1},
		       {RLIMIT_NOFILE, 'n', 1}, {RLIMIT_CPU, 't', 1}};
	struct backend_rlimit rl[BACKEND_MAX_RLIMITS];
	size_t n = backend_rlimits(ctx->policy, &bp->limits, rl);

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ARRAY_LEN(letters); k++) {
			unsigned long long soft = rl[i].value / letters[k].unit, hard = rl[i].hard / letters[k].unit;

			if (letters[k].resource != rl[i].resource)
				continue;
			/* bash counts -c in KiB: it cannot say the 1 byte a run
			 * sets (resolve/limits.h, core_pinned), so no core file
			 * (0) is what run.sh can hold. */
			if (rl[i].resource == RLIMIT_CORE)
				soft = hard = 0;
			text = moat_xgrow(text, cap, *len + 320, 1);
			if (soft == hard)
				*len += (size_t)snprintf(text + *len, *cap - *len, "\tulimit -S -H -%c %llu", letters[k].letter,
							 soft);
			else /* the soft one first: it must stay below the hard one */
				*len += (size_t)snprintf(text + *len, *cap - *len, "\t{ ulimit -S -%c %llu && ulimit -H -%c %llu; }",
							 letters[k].letter, soft, letters[k].letter, hard);
			*len += (size_t)snprintf(text + *len, *cap - *len,
						 " || { echo \"run.sh: cannot set %s to %llu, which the export's report "
						 "counts on\" >&2; return 125; }\n",
						 rl[i].oci_name, soft * letters[k].unit);
		}
	return text;
}

/* Where argv.json says FD for bwrap's --args and --seccomp (0: not there).
 * Only there: the command's own words after "--" are its own, and an
 * "--args FD" among them once became "--args 3" in run.sh. */
struct export_fds {
	size_t args_at, seccomp_at;
};

/* run.sh beside argv.json: argv.json as a shell command, with the export's
 * env.args and seccomp.bpf on descriptors 3 and 4 where argv.json says FD
 * (bwrap reads each, then closes it). */
static int write_run_script(const struct backend_ctx *ctx, const struct backend_plan *bp, bool seccomp,
			    const struct export_fds *fds, struct moat_error *err)
{
	cleanup_free char *text = NULL;
	size_t len = 0, cap = 0;

	const struct moat_policy *p = ctx->policy;

	text = moat_xgrow(text, &cap, 2048, 1);
	/* bwrap hands the command every descriptor it is given, and a
	 * directory among them leads out of any view (docs/backends.md,
	 * "Declared descriptors"); `moat run --backend bwrap` closes them
	 * before bwrap, so the script does too, as the report says (fd.clean).
	 * bash: POSIX sh redirects only descriptors 0 to 9.  The work is in a
	 * function, read whole before it runs, since closing the descriptor
	 * bash reads the script from ends the reading.  Its directory is $0's
	 * text up to the last '/': $(dirname "$0") drops the trailing newlines
	 * of a directory's name ("out\n"), and run.sh then read env.args --
	 * bwrap options, any of them -- from the directory "out" beside it. */
	len = (size_t)snprintf(
	    text, cap,
	    "#!/bin/bash\n# Written by moat export: argv.json, with this directory's %s and %s\n"
	    "# on descriptors 3 and 4 where argv.json says FD.  Run it as: bash run.sh\n"
	    "# bwrap hands the command every descriptor it is given (a directory among them\n"
	    "# leads out of the view): all but 0, 1, 2 and --keep-fd's are closed first.\n"
	    "[ -n \"$BASH_VERSION\" ] || exec bash \"$0\" \"$@\"\n"
	    "run() {\n\tlocal d fd\n\tcase $0 in */*) d=${0%%/*} ;; *) d=. ;; esac\n\tfor fd in /proc/$$/fd/*; do\n\t\tfd=${fd##*/}\n"
	    "\t\tcase \" 0 1 2 ",
	    BACKEND_EXPORT_ENV_ARGS, BACKEND_EXPORT_SECCOMP);
	for (size_t i = 0; i < p->n_keep_fds; i++)
		len += (size_t)snprintf(text + len, cap - len, "%d ", p->keep_fds[i]);
	len += (size_t)snprintf(text + len, cap - len,
				"\" in *\" $fd \"*) continue ;; esac\n\t\teval \"exec $fd>&-\"\n\tdone\n");
	/* A --keep-fd that was no directory when exported is reported so
	 * (backend_verdict_kept_dirs): a directory there at run time leads out
	 * of the view, which the report did not say -- refused.  Likewise a
	 * socket where the export had none: one of the host's leads out of the
	 * sandbox's network namespace (backend_verdict_kept_sockets).  A
	 * socket there when exported was judged as it was then; which one
	 * run.sh gets is the caller's to keep the same. */
	for (size_t i = 0; i < p->n_keep_fds; i++) {
		struct stat st;
		bool known = fstat(p->keep_fds[i], &st) == 0;

		/* (a directory when exported: the report says missing already) */
		if (bp->fs_landlock_abi == 0 && !(known && S_ISDIR(st.st_mode)))
			text = refuse_at_run(text, &cap, &len, p->keep_fds[i], 'd',
					     "a directory, which leads out of the view");
		if (!(known && S_ISSOCK(st.st_mode)))
			text = refuse_at_run(text, &cap, &len, p->keep_fds[i], 'S',
					     "a socket, which leads out of the sandbox's network");
	}
	text = set_rlimits(ctx, bp, text, &cap, &len);
	text = moat_xgrow(text, &cap, len + 16, 1);
	len += (size_t)snprintf(text + len, cap - len, "\texec");
	for (size_t i = 0; bp->argv[i]; i++) {
		const char *a = bp->argv[i];

		if (i > 0 && i == fds->args_at)
			a = "3";
		else if (i > 0 && i == fds->seccomp_at)
			a = "4";
		text = moat_xgrow(text, &cap, len + 4 * strlen(a) + 4, 1);
		text[len++] = ' ';
		text[len++] = '\'';
		for (const char *c = a; *c; c++) {
			if (*c == '\'') {
				memcpy(text + len, "'\\''", 4);
				len += 4;
			} else {
				text[len++] = *c;
			}
		}
		text[len++] = '\'';
	}
	text = moat_xgrow(text, &cap, len + 128, 1);
	len += (size_t)snprintf(text + len, cap - len, "%s%s\n}\nrun \"$@\"\n",
				ctx->envp && ctx->envp[0] ? " 3<\"$d/" BACKEND_EXPORT_ENV_ARGS "\"" : "",
				seccomp ? " 4<\"$d/" BACKEND_EXPORT_SECCOMP "\"" : "");
	return backend_write_file(ctx->work_dir, BACKEND_EXPORT_RUN, text, len, err);
}

/* The command's environment, through a descriptor: bwrap --clearenv, then
 * --args FD, whose NUL-separated "--setenv NAME VALUE" triples bwrap reads
 * (and closes) while it parses its arguments.  A value -- a token passed
 * with --env-pass -- must not be in bwrap's argv, which every user of the
 * host can read in /proc/PID/cmdline while it runs; and bwrap itself runs
 * with moat's minimal environment (backend.h, tool_env), so no variable
 * of the command's acts on bwrap outside the sandbox.  bwrap sets PWD
 * itself after --chdir (env_set). */
static int emit_environment(const struct backend_ctx *ctx, struct backend_plan *bp, size_t *placeholder_at,
			    struct moat_error *err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0, cap = 0, i;
	int fd;

	backend_argv_add(bp, "--clearenv");
	if (!ctx->envp || !ctx->envp[0])
		return 0;
	backend_argv_add(bp, "--args");
	for (i = 0; ctx->envp[i]; i++) {
		const char *kv = ctx->envp[i];
		size_t n = strlen(kv), eq = strcspn(kv, "=");

		buf = moat_xgrow(buf, &cap, len + n + sizeof("--setenv") + 2, 1);
		memcpy(buf + len, "--setenv", sizeof("--setenv"));
		len += sizeof("--setenv");
		memcpy(buf + len, kv, n + 1);
		if (eq < n)
			buf[len + eq] = '\0'; /* NAME\0VALUE\0 */
		len += n + 1;
	}
	if (ctx->exporting) {
		/* Beside argv.json, for its run.sh; the values are the
		 * command's (tokens among them): the caller's alone. */
		*placeholder_at = bp->argc;
		backend_argv_add(bp, EXPORT_FD_PLACEHOLDER);
		if (!ctx->work_dir)
			return 0;
		return backend_write_private_file(ctx->work_dir, BACKEND_EXPORT_ENV_ARGS, buf, len, err);
	}
	fd = backend_memfd("moat-bwrap-env", buf, len, err);
	if (fd < 0)
		return -1;
	backend_argv_addf(bp, "%d", backend_pass_fd(bp, fd));
	return 0;
}

/* The namespaces: the user namespace only when moat may make one (as root
 * without it, bwrap makes the others with root's own privilege). */
static void emit_namespaces(const struct backend_ctx *ctx, struct backend_plan *bp)
{
	const struct moat_policy *p = ctx->policy;
	const struct moat_host *h = ctx->host;

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
	/* A run: moat __init is the namespace's pid 1 and ends it when moat's
	 * lifeline hangs up (bwrap_compile).  bwrap's own --die-with-parent
	 * would kill bwrap's parent half before it lets the child go, and the
	 * child would wait on its eventfd forever.  An export has no moat
	 * around it: there bwrap's own tie to its parent is all there is. */
	if (ctx->exporting)
		backend_argv_add(bp, "--die-with-parent");
	else
		backend_argv_add(bp, "--as-pid-1");
	backend_argv_add(bp, "--new-session");
	backend_argv_add(bp, "--cap-drop");
	backend_argv_add(bp, "ALL");
}

struct bwrap_facts {
	bool seccomp;
	unsigned short seccomp_len;
	char seccomp_why[256];
	size_t n_grants, n_expanded, n_pins, n_unpinned;
	size_t n_links_unheld;   /* protected symlinks bwrap cannot mount on */
	char link_unheld[256];   /* the first of them */
	int landlock_abi; /* moat's ruleset applied inside by __init, or 0 */
};

/* moat's own binary, read-only at /.moat/init: the sandbox's init. */
static int emit_self(struct backend_plan *bp, struct moat_error *err)
{
	int fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);

	if (fd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "opening moat's own binary (/proc/self/exe)");
	backend_argv_add(bp, "--ro-bind-fd");
	backend_argv_addf(bp, "%d", backend_pass_fd(bp, fd));
	backend_argv_add(bp, "/.moat/init");
	return 0;
}

static void verdicts(const struct backend_ctx *ctx, struct backend_plan *bp, const struct bwrap_facts *f,
		     struct moat_verdict *props)
{
	const struct moat_policy *p = ctx->policy;
	const struct moat_host *h = ctx->host;
	bool netns = p->net != MOAT_NET_ALL;

	/* bwrap binds by descriptor, and checks that what it mounted is that
	 * object. */
	backend_verdict_fs("bwrap", f->n_grants, f->n_pins, f->n_unpinned, f->landlock_abi, f->n_expanded,
			   f->n_links_unheld, f->link_unheld, props);
	backend_verdict_export_names(ctx, f->n_pins, props);
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
	backend_verdict_net_allow(props);
	backend_verdict_ipc(p, f->seccomp, "via bwrap", "bwrap --unshare-net", "a host socket inside a granted path",
			    props);
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
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "bwrap --new-session; seccomp: TIOCSTI, TIOCLINUX, TIOCSETD refused");
	else if (h->userns || !h->root)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "bwrap --new-session: no controlling terminal; user "
							   "namespace, no capability");
	else
		verdict_missing(&props[MOAT_P_TTY_INJECT], HINT_SECCOMP,
				"root keeps TIOCSTI on any terminal without seccomp or a user namespace");
	/* Measured with 0.8.0: the environment and the rlimits reach the
	 * command unchanged, the --seccomp fd is closed, no fd is added. */
	bp->caps = (struct limit_caps){.rlimits = bp->apply_rlimits, .in_cgroup = true, .runtime = "bwrap", .own_mount_ns = true,
				       .tmp_size = ctx->policy->private_tmp, .pid_tree = true,
				       .tmp_files_unbounded = "bwrap has no nr_inodes: an empty file's ~1 KiB of kernel memory is "
							      "outside size= (--memory counts it)",
				       .cgroup_open = f->seccomp ? NULL : BACKEND_CGROUP_OPEN_NO_SECCOMP};
	snprintf(bp->caps.tree_mechanism, sizeof(bp->caps.tree_mechanism), "%s",
		 ctx->exporting ? "bwrap --unshare-pid --die-with-parent: the namespace ends with the command and "
				  "with bwrap's parent"
				: "bwrap --unshare-pid --as-pid-1: its pid 1, moat __init, ends the namespace with the "
				  "command and when moat's lifeline hangs up");
	backend_verdict_moat_owned(ctx, bp, "bwrap", true, true, props);
}

/* bwrap parses at most 9000 options, those read through --args included
 * (bubblewrap.c, MAX_ARGS): a policy over that would fail in bwrap at
 * start, after the dry run said it runs. */
#define BWRAP_MAX_ARGS 9000

static bool too_many_args(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props)
{
	size_t n = 0, i;
	char why[160];

	for (i = 1; i < bp->argc && strcmp(bp->argv[i], "--") != 0; i++)
		n++;
	for (i = 0; ctx->envp && ctx->envp[i]; i++)
		n += 3; /* --setenv NAME VALUE */
	if (n <= BWRAP_MAX_ARGS)
		return false;
	snprintf(why, sizeof(why), "this policy needs %zu bwrap options, more than the %d bwrap accepts", n,
		 BWRAP_MAX_ARGS);
	backend_cannot_run(bp, props, "grant a common parent instead of many paths, or use --backend native, which has "
				      "no such limit",
			   why);
	return true;
}

static int bwrap_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			 struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	struct bwrap_facts f = {0};
	struct export_fds export_fds = {0};
	int rc, seccomp_fd = -1;
	/* With Landlock, moat's own ruleset (inode-bound, as the native
	 * backend's) is applied inside by moat __init, and denied paths are
	 * masked in a view that binds each grant whole; without it (or when
	 * exporting, where no descriptor can be handed over), a grant holding a
	 * denied path is mounted entry by entry so the denied objects are not
	 * in the view at all. */
	bool landlock = !ctx->exporting && ctx->host->landlock_abi > 0;
	struct view_opts vo = {.landlock = landlock,
			       .private_tmp = p->private_tmp,
			       .no_placeholders = ctx->exporting,
			       .links_as_text = true};
	char **init_args = NULL;
	size_t n_init = 0;
	struct view v;
	bool can_run;
	size_t i;

	bp->no_new_privs = true;
	bp->apply_rlimits = true;
	can_run = backend_userns_or_root(ctx->host, "bwrap", props) && backend_init_has_room(ctx, "bwrap", props);
	if (!can_run && !ctx->exporting)
		return 0; /* no argv: nothing to run */

	rc = backend_seccomp_program(ctx, bp, &seccomp_fd, &f.seccomp_len, f.seccomp_why, sizeof(f.seccomp_why), err);
	if (rc < 0)
		return -1;
	f.seccomp = rc > 0;

	backend_argv_add(bp, "bwrap");
	emit_namespaces(ctx, bp);
	if (emit_environment(ctx, bp, &export_fds.args_at, err) < 0)
		return -1;
	if (f.seccomp) {
		backend_argv_add(bp, "--seccomp");
		if (ctx->exporting) {
			export_fds.seccomp_at = bp->argc;
			backend_argv_add(bp, EXPORT_FD_PLACEHOLDER);
		} else {
			backend_argv_addf(bp, "%d", seccomp_fd);
		}
	}

	view_build(p, ctx->fs, &vo, &v);
	if (landlock) {
		int abi = backend_landlock_layer(ctx, bp, &v, true, &init_args, &n_init, err);
		if (abi < 0) {
			view_free(&v);
			return -1;
		}
		f.landlock_abi = abi;
	}
	/* A run (not an export): moat __init is pid 1 inside (--as-pid-1),
	 * with moat's lifeline.  It ends the namespace when moat dies, at any
	 * moment (bwrap itself is not tied to moat: outlives_moat), gets moat's
	 * signals through the lifeline, and reaps. */
	if (!ctx->exporting && !n_init) {
		init_args = moat_xcalloc(3, sizeof(char *));
		init_args[n_init++] = moat_xstrdup("/.moat/init");
		init_args[n_init++] = moat_xstrdup("__init");
	}
	f.n_expanded = v.n_expanded;
	f.n_pins = v.n_pins;
	f.n_unpinned = v.n_unpinned;
	f.n_links_unheld = v.n_links_unheld;
	if (v.link_unheld)
		snprintf(f.link_unheld, sizeof(f.link_unheld), "%s", v.link_unheld);
	for (i = 0; i < v.n; i++) {
		const struct view_op *op = &v.v[i];

		f.n_grants += op->kind == VIEW_BIND;
		if (emit_op(ctx, bp, op, err) < 0) {
			view_free(&v);
			backend_strv_free(init_args);
			return -1;
		}
	}
	if (n_init && emit_self(bp, err) < 0) {
		view_free(&v);
		backend_strv_free(init_args);
		return -1;
	}
	/* Last: the skeletons, /dev and the root tmpfs (where the mount points
	 * were made) read-only.  bwrap's --dev is a tmpfs of no size limit the
	 * command could fill past --tmp-size where Landlock is absent;
	 * --remount-ro is not recursive, so /dev/shm and /dev/pts keep theirs,
	 * and writes to the device nodes go to their drivers. */
	for (i = 0; i < v.n; i++)
		if (v.v[i].kind == VIEW_SKELETON || v.v[i].kind == VIEW_DEV) {
			backend_argv_add(bp, "--remount-ro");
			backend_argv_add(bp, v.v[i].dest);
		}
	view_free(&v);
	backend_argv_add(bp, "--remount-ro");
	backend_argv_add(bp, "/");
	backend_argv_add(bp, "--chdir");
	backend_argv_add(bp, p->cwd);
	/* bwrap sets PWD to the --chdir directory, whatever the environment
	 * said (0.8.0, measured). */
	backend_env_set(bp, "PWD", p->cwd);
	backend_argv_add(bp, "--");
	for (i = 0; i < n_init; i++)
		backend_argv_add(bp, init_args[i]);
	if (n_init) {
		/* Above every fd the tool is given: bwrap passes them through. */
		bp->started_to = backend_highest_fd(p, bp) + 1;
		backend_argv_add(bp, "--started-fd");
		backend_argv_addf(bp, "%d", bp->started_to);
		bp->lifeline_to = backend_highest_fd(p, bp) + 1;
		backend_argv_add(bp, "--lifeline");
		backend_argv_addf(bp, "%d", bp->lifeline_to);
		bp->signals_via_lifeline = true;
		bp->outlives_moat = true;
		bp->stderr_to = backend_highest_fd(p, bp) + 1;
		backend_argv_add(bp, "--stderr-fd");
		backend_argv_addf(bp, "%d", bp->stderr_to);
	}
	if (n_init)
		backend_argv_add(bp, "--");
	backend_strv_free(init_args);
	backend_argv_add_command(bp, p, NULL);
	if (!ctx->exporting && too_many_args(ctx, bp, props))
		return 0;
	if (can_run)
		verdicts(ctx, bp, &f, props);
	/* After the verdicts, which decide the limits run.sh applies. */
	if (ctx->exporting && ctx->work_dir && write_run_script(ctx, bp, f.seccomp, &export_fds, err) < 0)
		return -1;
	return 0;
}

static bool bwrap_host_rules_out(const struct moat_host *h, struct moat_verdict *props)
{
	return !backend_userns_or_root(h, "bwrap", props);
}

const struct moat_backend backend_bwrap = {
	.name = "bwrap",
	.runs_moat_init = true,
	.tools = {"bwrap"},
	.summary = "bubblewrap: namespaces and bind mounts, with moat's own seccomp program",
	.install_hint = "Debian/Ubuntu: `sudo apt install bubblewrap`; Fedora: `sudo dnf install bubblewrap`",
	.os = "linux",
	.needs_work_dir = false,
	.export_files = {BACKEND_EXPORT_RUN, BACKEND_EXPORT_ENV_ARGS, BACKEND_EXPORT_SECCOMP, NULL},
	.host_rules_out = bwrap_host_rules_out,
	.compile = bwrap_compile,
};
