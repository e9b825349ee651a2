/* The firejail backend: the policy compiled into a firejail argv
 * (docs/backends.md, "firejail").
 *
 * Trust model: firejail is setuid root, so the trusted base is firejail
 * itself, and /etc/firejail/firejail.users decides who may run it (without
 * that file every user but `nobody` may; with it, only the users it lists
 * and root).  moat must not set no_new_privs before it (that would stop
 * the setuid); firejail sets it itself (--nonewprivs).
 *
 * firejail runs as root on the caller's input, outside the sandbox: it gets
 * moat's minimal environment (backend.h), never the command's.  The command
 * runs as `moat __init --env-fd E --seccomp-fd S --keep-fds ... --kill-rest
 * PIDNS -- CMD`, moat's own binary executed through an inherited descriptor
 * (/proc/self/fd/X: the --private-tmp view may not show moat's path): it
 * reads the command's exact environment from a memfd -- firejail adds
 * container=firejail, SHELL, PROMPT_COMMAND, SHLVL, QT_*, ... to what it
 * executes, and --env=NAME=VALUE would put every value into firejail's
 * argv, which every user can read -- loads moat's own seccomp program (the
 * native backend's: firejail's list has no rule against a setuid bit, so
 * root's command could leave a setuid-root binary in a write grant), closes
 * every fd but the declared ones, and forks the command, whose end ends the
 * sandbox (what it left is killed).
 *
 * What it cannot give, measured with 0.9.72 (and reported missing, never
 * claimed): a read allow-list (the host file system stays visible; only
 * the denied paths are blacklisted). */
#include "backends/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/hints.h"
#include "policy/verdict.h"
#include "util/account.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/mem.h"
#include "util/path.h"

#define FIREJAIL_USERS "/etc/firejail/firejail.users"
#define HINT_SECCOMP HOST_HINT_SECCOMP
#define HINT_OTHER "use --backend bwrap or native"

/* Is `name` a line of firejail.users?  (One user name a line, # comments.) */
static bool users_file_lists(FILE *f, const char *name)
{
	char line[256];

	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\r\n#")] = '\0';
		if (strcmp(line, name) == 0)
			return true;
	}
	return false;
}

/* Would firejail run for this user?  false with the reason when it would
 * refuse ("Error: the user is not allowed to use Firejail"). */
static bool firejail_user_allowed(const struct moat_host *h, char *why, size_t len)
{
	cleanup_fclose FILE *f = NULL;
	char name[256];

	if (h->uid == 0)
		return true;
	if (!account_name(h->uid, name, sizeof(name))) {
		snprintf(why, len, "firejail refuses uid %u: it has no passwd entry", (unsigned)h->uid);
		return false;
	}
	/* Measured with 0.9.72: `nobody` is refused even when listed. */
	if (h->uid == 65534 || strcmp(name, "nobody") == 0) {
		snprintf(why, len, "firejail (setuid root) refuses the user nobody");
		return false;
	}
	f = fopen(FIREJAIL_USERS, "re");
	if (f && !users_file_lists(f, name)) {
		snprintf(why, len, "firejail (setuid root) refuses %.64s: " FIREJAIL_USERS " does not list it", name);
		return false;
	}
	return true;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Grants under /tmp would vanish under --private-tmp: firejail's
 * --whitelist brings them back (made read-only again below, because a
 * whitelisted path is writable whatever --read-only=/ said). */
static bool under_private_tmp(const struct moat_policy *p, const char *path)
{
	return p->private_tmp && path_within(path, "/tmp") && strcmp(path, "/tmp") != 0;
}

static void emit_filesystem(struct backend_plan *bp, const struct moat_policy *p, size_t *n_denied,
			    size_t *n_writable)
{
	size_t i;

	if (p->private_tmp)
		backend_argv_add(bp, "--private-tmp");
	backend_argv_add(bp, "--private-dev");
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY && under_private_tmp(p, p->paths[i].path) &&
		    exists(p->paths[i].path))
			backend_argv_addf(bp, "--whitelist=%s", p->paths[i].path);
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY && exists(p->paths[i].path)) {
			backend_argv_addf(bp, "--blacklist=%s", p->paths[i].path);
			(*n_denied)++;
		}
	backend_argv_add(bp, "--read-only=/");
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_READ && under_private_tmp(p, p->paths[i].path) &&
		    exists(p->paths[i].path))
			backend_argv_addf(bp, "--read-only=%s", p->paths[i].path);
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_WRITE && exists(p->paths[i].path) &&
		    !path_within(p->paths[i].path, "/dev") && !(p->private_tmp && strcmp(p->paths[i].path, "/tmp") == 0)) {
			backend_argv_addf(bp, "--read-write=%s", p->paths[i].path);
			(*n_writable)++;
		}
}

/* `program`: moat's own seccomp program is loaded (by __init, before the
 * command's execve). */
static void emit_isolation(struct backend_plan *bp, const struct moat_policy *p, bool seccomp, bool program)
{
	if (p->net != MOAT_NET_ALL)
		backend_argv_add(bp, "--net=none"); /* a network namespace with only lo (up) */
	if (seccomp) {
		/* firejail's own default list, plus io_uring (not in it), which
		 * bypasses the filter's view of file and socket calls, and kcmp
		 * (compares other processes' kernel objects; the conformance
		 * suite found it reached). */
		backend_argv_add(bp, "--seccomp=io_uring_setup,io_uring_enter,io_uring_register,kcmp");
		backend_argv_add(bp, "--seccomp.block-secondary");
	}
	/* moat's program refuses all that --protocol and --restrict-namespaces
	 * would (the socket families the policy does not open; unshare, setns,
	 * clone's namespace flags, clone3), and its answer is the one the
	 * command gets (of equal actions the filter loaded last wins).  firejail
	 * builds each of those filters in helper processes of its own: ~1.8 and
	 * ~3 ms a run (alternated, 0.9.72).  Without the program they are the
	 * only ones; --restrict-namespaces also makes clone3 ENOSYS, so glibc
	 * falls back to clone, whose flags the filter sees. */
	if (seccomp && !program) {
		backend_argv_add(bp, p->net == MOAT_NET_NONE || p->net == MOAT_NET_ALLOW ? "--protocol=unix" : "--protocol=unix,inet,inet6,netlink");
		backend_argv_add(bp, "--restrict-namespaces");
	}
	backend_argv_add(bp, "--caps.drop=all");
	backend_argv_add(bp, "--nonewprivs");
	backend_argv_add(bp, "--noroot");
	backend_argv_add(bp, "--nogroups");
}

/* What moat __init inside firejail is given: descriptors of moat's binary,
 * of the command's environment and, when the host has seccomp, of moat's
 * program. */
struct init_fds {
	bool placeholders; /* an export: no descriptor exists, "FD" stands for each */
	bool seccomp;      /* moat's program is passed */
	unsigned short seccomp_len;
	char seccomp_why[256];
	int exe, env, program;
	unsigned long long pidns; /* the inode of moat's own pid namespace */
};

/* The command's environment as moat __init --env-fd reads it:
 * NUL-terminated NAME=VALUE entries, in a memfd the tool inherits. */
static int environment_fd(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_error *err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0, cap = 0, i, n;
	int fd;

	for (i = 0; ctx->envp && ctx->envp[i]; i++) {
		n = strlen(ctx->envp[i]) + 1;
		buf = moat_xgrow(buf, &cap, len + n, 1);
		memcpy(buf + len, ctx->envp[i], n);
		len += n;
	}
	fd = backend_memfd("moat-firejail-env", buf ? buf : "", len, err);
	return fd < 0 ? -1 : backend_pass_fd(bp, fd);
}

/* The descriptors, made here because everything that can fail fails while
 * planning; none in an export. */
static int init_fds_make(const struct backend_ctx *ctx, struct backend_plan *bp, struct init_fds *f,
			 struct moat_error *err)
{
	int rc = backend_seccomp_program(ctx, bp, &f->program, &f->seccomp_len, f->seccomp_why,
					 sizeof(f->seccomp_why), err);
	struct stat st;

	if (rc < 0)
		return -1;
	f->seccomp = rc > 0;
	f->placeholders = ctx->exporting;
	if (ctx->exporting)
		return 0;
	if (stat("/proc/self/ns/pid", &st) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "reading moat's pid namespace (/proc/self/ns/pid)");
	f->pidns = (unsigned long long)st.st_ino;
	/* firejail executes moat as /proc/self/fd/N: its --private-tmp view
	 * need not show moat's path, and a path could be swapped.  O_PATH:
	 * execve needs no read permission, and the descriptor reads nothing. */
	f->exe = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (f->exe < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "opening moat's own binary (/proc/self/exe)");
	backend_pass_fd(bp, f->exe);
	f->env = environment_fd(ctx, bp, err);
	return f->env < 0 ? -1 : 0;
}

#define FIREJAIL_MAX_ARGS 128
/* firejail's MAX_ARG_LEN (PATH_MAX + 32), measured with 0.9.72: an argument
 * of 4128 bytes is refused, one of 4127 runs. */
#define FIREJAIL_MAX_ARG_LEN 4128

static void add_fd(struct backend_plan *bp, const struct init_fds *f, const char *prefix, int fd)
{
	if (f->placeholders)
		backend_argv_addf(bp, "%sFD", prefix);
	else
		backend_argv_addf(bp, "%s%d", prefix, fd);
}

/* The kept fds (the declared ones and __init's), then the command as moat
 * __init's.  No "--" before moat's path: firejail would then run the
 * command line through the user's shell (`bash -c '...'`, measured with
 * 0.9.72), rebuilt as one quoted string; without it firejail executes the
 * argv as given (the path never starts with '-', so firejail takes it for
 * the program). */
static void emit_command(struct backend_plan *bp, const struct moat_policy *p, const struct init_fds *f)
{
	cleanup_free char *list = backend_keep_fds_list(p);
	size_t i;

	/* The started pipe, above every fd firejail is given: __init says 'e'
	 * right before the command's execve, so firejail's own refusals (it
	 * exits 1) are a set-up failure, exit 125, not the command's status. */
	if (!f->placeholders)
		bp->started_to = backend_highest_fd(p, bp) + 1;
	for (i = 0; i < p->n_keep_fds; i++)
		backend_argv_addf(bp, "--keep-fd=%d", p->keep_fds[i]);
	add_fd(bp, f, "--keep-fd=", f->exe);
	add_fd(bp, f, "--keep-fd=", f->env);
	if (f->seccomp)
		add_fd(bp, f, "--keep-fd=", f->program);
	if (bp->started_to >= 0)
		backend_argv_addf(bp, "--keep-fd=%d", bp->started_to);
	add_fd(bp, f, "/proc/self/fd/", f->exe);
	backend_argv_add(bp, "__init");
	if (bp->started_to >= 0) {
		backend_argv_add(bp, "--started-fd");
		backend_argv_addf(bp, "%d", bp->started_to);
	}
	/* firejail keeps the caller's working directory, and starts the
	 * command in HOME where its view lacks it (its private /tmp and
	 * /var/tmp): __init enters it, or refuses to run. */
	backend_argv_add(bp, "--chdir");
	backend_argv_add(bp, p->cwd);
	backend_argv_add(bp, "--env-fd");
	add_fd(bp, f, "", f->env);
	if (f->seccomp) {
		backend_argv_add(bp, "--seccomp-fd");
		add_fd(bp, f, "", f->program);
	}
	/* Every fd but the declared ones is closed inside: moat's binary, the
	 * environment's and the program's descriptors are __init's only. */
	backend_argv_add(bp, "--keep-fds");
	backend_argv_add(bp, list);
	/* The command's end is the sandbox's (launch/init.h, --kill-rest): what
	 * it leaves is killed when it ends, in firejail's pid namespace, which
	 * __init checks is not moat's own (its inode; "PIDNS" in an export). */
	backend_argv_add(bp, "--kill-rest");
	if (f->placeholders)
		backend_argv_add(bp, "PIDNS");
	else
		backend_argv_addf(bp, "%llu", f->pidns);
	backend_argv_add_command(bp, p, "--");
}

/* firejail refuses a path option whose path holds a control character or
 * one of its shell meta characters (0.9.72, util.c reject_meta_chars:
 * "Error: \"PATH\" is an invalid filename: rejected character: \",\""),
 * and exits 1 before it runs anything: the report said the command ran
 * and exited 1.  The glob characters *?[] it takes as a pattern (glob(3)
 * in --read-write, --blacklist and --read-only, measured): a write grant
 * of /p/a* made /p/ab writable too, and one of /p/b[c] made /p/bc
 * writable and not itself.  The first path moat would give firejail with
 * either, the character in `bad` and whether firejail refuses it (else it
 * would take a pattern); NULL when there is none. */
static const char *firejail_refused_path(const struct backend_plan *bp, char *bad, bool *refused)
{
	static const char *const path_opts[] = {"--whitelist=", "--blacklist=", "--read-only=", "--read-write="};

	for (size_t i = 0; i < bp->argc; i++)
		for (size_t k = 0; k < ARRAY_LEN(path_opts); k++) {
			size_t n = strlen(path_opts[k]);
			const char *path = bp->argv[i] + n, *c;

			if (strncmp(bp->argv[i], path_opts[k], n) != 0)
				continue;
			for (c = path; *c; c++) {
				*refused = (unsigned char)*c < 0x20 || *c == 0x7f || strchr("\\&!\"<>%^{};,", *c);
				if (*refused || strchr("*?[]", *c)) {
					*bad = *c;
					return path;
				}
			}
		}
	return NULL;
}

/* What firejail never enforces, whatever the host: it has no read
 * allow-list, and its blacklist holds denied paths by their names.  The
 * verdicts below say the same; `auto` asks this without compiling. */
static uint32_t firejail_never(const struct moat_policy *p)
{
	uint32_t never = MOAT_PBIT(MOAT_P_FS_READ);
	size_t i;

	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY)
			return never | MOAT_PBIT(MOAT_P_FS_SECRETS);
	return never;
}

static void verdicts(const struct backend_ctx *ctx, struct backend_plan *bp, const struct init_fds *f,
		     size_t n_denied, size_t n_writable, struct moat_verdict *props)
{
	bool seccomp = f->seccomp; /* moat's program, and firejail's list */
	const struct moat_policy *p = ctx->policy;
	bool netns = p->net != MOAT_NET_ALL;

	verdict_missing(&props[MOAT_P_FS_READ], HINT_OTHER,
			"firejail has no read allow-list: the host file system stays visible, only denied paths "
			"are blacklisted");
	/* firejail takes paths and resolves them again when it starts, and
	 * its read-only and blacklist options are mounts on names: they hold
	 * neither against a rename of a directory above them nor against the
	 * host replacing a file during the run, and cannot refuse a file
	 * created after start (docs/filesystem.md). */
	if (n_writable == 0)
		verdict_enforce(&props[MOAT_P_FS_WRITE], "firejail --read-only=/ (no write grant)");
	else
		verdict_missing(&props[MOAT_P_FS_WRITE], HINT_OTHER,
				"firejail binds the %zu write grants by name (resolved again at its start) and cannot "
				"keep their protected entries (.git/hooks, .mcp.json, ...) read-only",
				n_writable);
	{
		size_t i, n_deny_rules = 0;
		for (i = 0; i < p->n_paths; i++)
			n_deny_rules += p->paths[i].access == MOAT_ACCESS_DENY;
		if (!(firejail_never(p) & MOAT_PBIT(MOAT_P_FS_SECRETS)))
			verdict_enforce(&props[MOAT_P_FS_SECRETS], "no denied path");
		else
			verdict_missing(&props[MOAT_P_FS_SECRETS], HINT_OTHER,
					"firejail --blacklist is a mount on a name (%zu of the %zu denied paths exist): a "
					"denied file the host replaces during the run, one created after start, or one "
					"under a directory the command renames is not covered",
					n_denied, n_deny_rules);
	}
	if (backend_verdict_policy_tmp(p, props))
		verdict_enforce(&props[MOAT_P_FS_TMP], "firejail --private-tmp");
	if (!backend_verdict_policy_net_none(p, props)) {
		/* missing: the policy opens the network */
	} else if (seccomp)
		verdict_enforce(&props[MOAT_P_NET_NONE], "firejail --net=none; moat's seccomp program: socket() AF_UNIX "
							  "only");
	else
		verdict_missing(&props[MOAT_P_NET_NONE], HINT_SECCOMP,
				"firejail --net=none brings lo up: without seccomp, inet sockets work (to the "
				"sandbox's own loopback)");
	if (netns)
		verdict_enforce(&props[MOAT_P_NET_LOOPBACK], "firejail --net=none: network namespace with only lo");
	else
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], "use --net loopback", "the policy opens the network (net all)");
	backend_verdict_net_allow(props);
	/* moat's program refuses socket(AF_UNIX), as under bwrap: the host's
	 * sockets the visible file system shows cannot be connected to. */
	backend_verdict_ipc(p, seccomp, "moat __init in firejail", "firejail --net=none",
			    "any host socket in the file system, which stays visible", props);
	verdict_enforce(&props[MOAT_P_PROC_PID], "firejail: pid namespace with a fresh /proc");
	if (seccomp) {
		verdict_enforce(&props[MOAT_P_PROC_PTRACE], "seccomp: moat's program (moat __init) and firejail's "
							    "default list refuse ptrace, process_vm_*; pid namespace");
		verdict_enforce(&props[MOAT_P_SYS_FILTER], "moat's seccomp-bpf loaded by moat __init inside firejail, "
							   "%u instructions; over firejail's own list (+io_uring, kcmp, "
							   "block-secondary)",
				f->seccomp_len);
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid before firejail: no controlling terminal; "
							   "--caps.drop=all; seccomp: TIOCSTI, TIOCLINUX, TIOCSETD refused");
	} else {
		verdict_missing(&props[MOAT_P_PROC_PTRACE], HINT_SECCOMP, "needs seccomp: %s", f->seccomp_why);
		verdict_missing(&props[MOAT_P_SYS_FILTER], HINT_SECCOMP, "%s", f->seccomp_why);
		/* TIOCSTI is refused by the kernel: moat's setsid leaves no
		 * controlling terminal and --caps.drop=all removes
		 * CAP_SYS_ADMIN. */
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid before firejail: no controlling terminal; "
							   "--caps.drop=all");
	}
	/* firejail's pid namespace is not shown to end with moat, so the tree is
	 * held by moat's cgroup (launch/cgroup.h) where there is one. */
	/* (The rlimits are moat's, set before the tool: an export's argv sets none.) */
	bp->caps = (struct limit_caps){.rlimits = bp->apply_rlimits && !ctx->exporting,
				       .in_cgroup = true, .runtime = "firejail", .own_mount_ns = true,
				       .cgroup_open = seccomp ? NULL : BACKEND_CGROUP_OPEN_NO_SECCOMP};
	backend_verdict_moat_owned(ctx, bp, "firejail", true, true, props);
	/* Measured with 0.9.72: firejail adds container=firejail, SHELL,
	 * PROMPT_COMMAND, SHLVL, QT_*, ... to what it executes; __init drops
	 * them all. */
	verdict_enforce(&props[MOAT_P_ENV_CURATED], "exact environment built by moat, read by moat __init inside "
						    "firejail from a descriptor (what firejail adds is dropped)");
	/* An export's argv.json names moat's descriptors as FD (the program,
	 * the environment, moat's own executable), and nothing gives them to
	 * firejail and __init when it is run as written: firejail refuses
	 * --keep-fd=FD.  What they carry is not the export's to claim. */
	if (ctx->exporting) {
		static const enum moat_property by_moat[] = {
		    MOAT_P_ENV_CURATED, MOAT_P_SYS_FILTER, MOAT_P_FD_CLEAN,  MOAT_P_PROC_TREE, MOAT_P_PROC_PTRACE,
		    MOAT_P_TTY_INJECT,  MOAT_P_NET_NONE,   MOAT_P_IPC_UNIX, MOAT_P_IPC_ABSTRACT};
		for (size_t i = 0; i < ARRAY_LEN(by_moat); i++)
			if (props[by_moat[i]].enforced)
				verdict_missing(&props[by_moat[i]], "run it with moat run --backend firejail",
						"the export's argv.json names moat's descriptors as FD (its seccomp "
						"program, the environment, moat __init), which nothing gives firejail when "
						"it is run as written");
	}
}

/* A path firejail would refuse, or take as a pattern, makes the backend
 * unavailable, naming it (an export too: its argv.json would not run). */
static bool refuse_path(struct backend_plan *bp, struct moat_verdict *props)
{
	char bad = 0, why[512];
	bool refused = false;
	const char *path = firejail_refused_path(bp, &bad, &refused);
	cleanup_free char *shown = NULL, *c = NULL;

	if (!path)
		return false;
	shown = moat_text_shown(path);
	c = moat_text_shown((char[]){bad, 0});
	if (refused)
		snprintf(why, sizeof(why), "firejail refuses the path %.400s: it takes no '%s' in a file name", shown, c);
	else
		snprintf(why, sizeof(why),
			 "firejail would take the path %.400s as a pattern ('%s'), which names other files than it, "
			 "or none",
			 shown, c);
	backend_cannot_run(bp, props, "rename it, or use --backend native or bwrap, which take any name", why);
	return true;
}

static int firejail_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			    struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	size_t n_denied = 0, n_writable = 0;
	struct init_fds fds = {.exe = -1, .env = -1, .program = -1};
	bool allowed;
	char why[256];

	/* setuid root: no_new_privs would make the kernel ignore the setuid
	 * bit.  The rlimits are inherited through the setuid exec and reach
	 * the command (measured: nofile, core, as). */
	bp->no_new_privs = false;
	bp->apply_rlimits = true;
	allowed = firejail_user_allowed(ctx->host, why, sizeof(why));
	if (!allowed) {
		cleanup_free char *hint = moat_xasprintf("as root, add the user to " FIREJAIL_USERS
							 " (a user other than nobody); or %s",
							 HINT_OTHER);
		backend_verdict_all_missing(props, hint, why);
		if (!ctx->exporting)
			return 0; /* no argv: nothing to run */
	}

	if (init_fds_make(ctx, bp, &fds, err) < 0)
		return -1;
	backend_argv_add(bp, "firejail");
	backend_argv_add(bp, "--quiet");
	backend_argv_add(bp, "--noprofile");
	/* The command's status: by default firejail exits with the status of
	 * the last process to end (0 from `sleep 3 & exit 3`); its first one
	 * is moat __init, which exits with the command's.  By default firejail
	 * also waits for every process left (a `daemon &` kept the run going
	 * as long as it lived): __init kills them when the command ends
	 * (--kill-rest), not firejail's --deterministic-shutdown, which waits
	 * 100 ms after the command on every run (measured with 0.9.72: 151
	 * against 50 ms for /bin/true, alternated). */
	backend_argv_add(bp, "--deterministic-exit-code");
	emit_filesystem(bp, p, &n_denied, &n_writable);
	emit_isolation(bp, p, ctx->host->seccomp, fds.seccomp);
	emit_command(bp, p, &fds);
	/* firejail refuses an argv of FIREJAIL_MAX_ARGS or more (0.9.72:
	 * "too many arguments"), after the dry run would have said it runs. */
	if (bp->argc >= FIREJAIL_MAX_ARGS && !ctx->exporting) {
		char over[160];
		snprintf(over, sizeof(over), "this policy needs %zu firejail arguments, and firejail takes fewer than %d",
			 bp->argc, FIREJAIL_MAX_ARGS);
		backend_cannot_run(bp, props,
				   "grant a common parent instead of many paths, keep fewer fds, or use --backend native "
				   "or bwrap",
				   over);
		return 0;
	}
	/* It refuses an argument of FIREJAIL_MAX_ARG_LEN bytes or more too
	 * ("too long arguments"): the command never ran, and the report said
	 * it had, with firejail's exit 1 as the command's. */
	for (size_t i = 0; i < bp->argc && !ctx->exporting; i++) {
		if (strlen(bp->argv[i]) < FIREJAIL_MAX_ARG_LEN)
			continue;
		char over[160];
		snprintf(over, sizeof(over), "argument %zu of firejail is %zu bytes, and firejail takes fewer than %d", i,
			 strlen(bp->argv[i]), FIREJAIL_MAX_ARG_LEN);
		backend_cannot_run(bp, props, "use --backend native or bwrap", over);
		return 0;
	}
	if (refuse_path(bp, props))
		return 0;
	if (allowed)
		verdicts(ctx, bp, &fds, n_denied, n_writable, props);
	return 0;
}

const struct moat_backend backend_firejail = {
	.name = "firejail",
	.runs_moat_init = true,
	.tools = {"firejail"},
	.summary = "firejail: a setuid-root sandbox (namespaces, blacklists, its own seccomp list)",
	.install_hint = "Debian/Ubuntu: `sudo apt install firejail`; Fedora: `sudo dnf install firejail`",
	.os = "linux",
	.needs_work_dir = false,
	.export_files = {BACKEND_EXPORT_SECCOMP, NULL},
	.never_enforces = firejail_never,
	.compile = firejail_compile,
};
