/* The seatbelt backend: the policy compiled into an SBPL profile for macOS
 * Seatbelt, run by `sandbox-exec -f WORKDIR/profile.sb -- EXE ARGS...`
 * (docs/platforms.md, "seatbelt").
 *
 * sandbox-exec(1): `sandbox-exec [-f profile-file] ... command [arguments
 * ...]` enters the sandbox the profile describes and executes the command;
 * it parses its options with getopt, so `--` ends them (OpenAI Codex runs
 * it the same way).  It is always /usr/bin/sandbox-exec: a copy found
 * earlier in PATH is not trusted.
 *
 * The profile is deny-by-default; every rule below is an exception:
 *
 *   (version 1) (deny default)
 *   process-fork; signals and process-info only inside the sandbox;
 *   sysctl-read; the directory service lookup (getpwuid); file metadata
 *   everywhere (what Landlock leaves readable to the native backend too);
 *   read and map the few system paths the loader needs to start anything;
 *   each grant, parents first: read grants file-read*, write grants
 *   file-read* file-write*, both process-exec and file-map-executable (a
 *   read grant inside a write grant also denies writes again);
 *   with a private /tmp, a per-run TMPDIR inside the work directory;
 *   network: AF_UNIX sockets only (none), plus localhost (loopback), or
 *   every IP address and mDNSResponder's socket for DNS (all);
 *   last, a deny of everything for each denied path: for the same
 *   operation SBPL lets the later rule win, so the denies beat the grants.
 *
 * Seatbelt matches the path the kernel resolved (/etc is /private/etc on
 * macOS), so every path is written as given and, when it differs, as its
 * realpath (of the longest existing prefix, for a path not yet created).
 * Strings are written as SBPL string literals: '"' and '\' are escaped,
 * and a path with a control character is refused, so no path can end its
 * string and add a rule of its own.
 *
 * What Seatbelt cannot give is reported missing, never claimed: a private
 * /tmp (Seatbelt filters, it cannot remount), a private loopback, a pid
 * namespace, a system call filter.  moat does not run macOS in its test
 * suite: the profile is checked by golden tests
 * (tests/blackbox/golden_nono_seatbelt.sh) on Linux, where the backend
 * is unavailable. */
#include "backends/backend.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/verdict.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"
#define HINT_LINUX "run on Linux with --backend native or bwrap"

/* Read and mapped by dyld for any program: the system frameworks, the
 * dyld shared cache (in the Preboot cryptex since macOS 13) and libSystem. */
static const char *const loader_paths[] = {
	"/System/Library", "/System/Volumes/Preboot/Cryptexes", "/System/Cryptexes", "/usr/lib", "/private/var/db/dyld",
};


/* An SBPL string literal: "..." with '"' and '\' escaped.  The caller has
 * refused control characters (has_control). */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return true;
	return false;
}

/* The path as the kernel names it: realpath of the path, or of its longest
 * existing prefix with the rest appended.  A new string. */
static char *resolved(const char *path)
{
	cleanup_free char *prefix = moat_xstrdup(path);
	char real[PATH_MAX];
	char *slash;

	for (;;) {
		if (realpath(prefix, real)) {
			const char *rest = path + strlen(prefix);
			if (strcmp(real, "/") == 0 && *rest == '/')
				return moat_xstrdup(rest);
			return moat_xasprintf("%s%s", real, rest);
		}
		slash = strrchr(prefix, '/');
		if (!slash || slash == prefix)
			return moat_xstrdup(path);
		*slash = '\0';
	}
}

struct seatbelt_facts {
	size_t n_read, n_write, n_deny;
	bool private_tmpdir;
	bool unwritable; /* a resolved path holds a control character */
};

/* (VERB OPS (FILTER "path")), for the path and, when it differs, for its
 * resolved form. */
static void rule(FILE *f, struct seatbelt_facts *facts, const char *verb, const char *ops, const char *filter,
		 const char *path)
{
	cleanup_free char *real = resolved(path);

	fprintf(f, "(%s %s (%s ", verb, ops, filter);
	put_string(f, path);
	fputs("))\n", f);
	if (has_control(real)) {
		facts->unwritable = true; /* a symlink's target: the profile is not used */
		return;
	}
	if (strcmp(real, path) != 0) {
		fprintf(f, "(%s %s (%s ", verb, ops, filter);
		put_string(f, real);
		fputs("))\n", f);
	}
}

#define OPS_READ "file-read* file-map-executable process-exec"
#define OPS_WRITE "file-read* file-write* file-map-executable process-exec"
#define OPS_DENY "file-read* file-write* file-map-executable process-exec"

static size_t depth(const char *path)
{
	size_t n = 0;

	for (; *path; path++)
		n += *path == '/';
	return n;
}

/* Fewer components (a parent) first, then policy order (the rules are one
 * array): a nested grant comes after its parent and so wins. */
static int by_depth(const void *a, const void *b)
{
	const struct moat_path_rule *ra = *(const struct moat_path_rule *const *)a;
	const struct moat_path_rule *rb = *(const struct moat_path_rule *const *)b;
	size_t da = depth(ra->path), db = depth(rb->path);

	if (da != db)
		return da < db ? -1 : 1;
	return ra < rb ? -1 : ra > rb;
}

/* The grants that exist here, parents first. */
static void emit_grants(FILE *f, const struct moat_policy *p, struct seatbelt_facts *facts)
{
	cleanup_free const struct moat_path_rule **g = moat_xcalloc(p->n_paths + 1, sizeof(*g));
	size_t n = 0, i, j;

	for (i = 0; i < p->n_paths; i++) {
		struct stat st;
		if (p->paths[i].access != MOAT_ACCESS_DENY && stat(p->paths[i].path, &st) == 0)
			g[n++] = &p->paths[i];
	}
	qsort(g, n, sizeof(*g), by_depth);
	fputs("\n; the policy's grants, parents first\n", f);
	for (i = 0; i < n; i++) {
		struct stat st;
		const char *filter = stat(g[i]->path, &st) == 0 && S_ISDIR(st.st_mode) ? "subpath" : "literal";
		if (g[i]->access == MOAT_ACCESS_READ) {
			rule(f, facts, "allow", OPS_READ, filter, g[i]->path);
			/* Read-only inside a writable parent, as a read-only
			 * bind mount over it would be. */
			for (j = 0; j < i; j++)
				if (g[j]->access == MOAT_ACCESS_WRITE && strcmp(g[j]->path, g[i]->path) != 0 &&
				    path_within(g[i]->path, g[j]->path)) {
					rule(f, facts, "deny", "file-write*", filter, g[i]->path);
					break;
				}
			facts->n_read++;
		} else {
			rule(f, facts, "allow", OPS_WRITE, filter, g[i]->path);
			facts->n_write++;
		}
	}
}

static void emit_network(FILE *f, enum moat_net net)
{
	fprintf(f, "\n; network: %s\n", moat_net_name(net));
	switch (net) {
	case MOAT_NET_NONE:
	case MOAT_NET_ALLOW: /* closed until per-destination rules are compiled */
		fputs("(allow system-socket (socket-domain AF_UNIX))\n", f);
		break;
	case MOAT_NET_LOOPBACK:
		fputs("(allow system-socket (socket-domain AF_UNIX) (socket-domain AF_INET) (socket-domain AF_INET6))\n"
		      "(allow network-outbound (remote ip \"localhost:*\"))\n"
		      "(allow network-bind network-inbound (local ip \"localhost:*\"))\n",
		      f);
		break;
	case MOAT_NET_ALL:
		fputs("(allow system-socket)\n"
		      "(allow network-outbound (remote ip \"*:*\"))\n"
		      "(allow network-bind network-inbound (local ip \"*:*\"))\n"
		      "(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))\n",
		      f);
		break;
	}
}

/* The whole profile into `text` (a new string).  -1 with err when the
 * memory stream fails. */
static int build_profile(const struct backend_ctx *ctx, const char *tmpdir, struct seatbelt_facts *facts,
			 char **text, size_t *len, struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	FILE *f = open_memstream(text, len);
	size_t i;

	if (!f)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "building the SBPL profile");
	fputs("(version 1)\n"
	      "; generated by moat (src/backends/seatbelt.c) from one policy; the later rule wins\n"
	      "(deny default)\n"
	      "\n; processes: fork; signals and process information only inside the sandbox\n"
	      "(allow process-fork)\n"
	      "(allow signal (target same-sandbox))\n"
	      "(allow process-info* (target same-sandbox))\n"
	      "(allow sysctl-read)\n"
	      "(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\"))\n"
	      "\n; file metadata (stat) everywhere, contents only where granted\n"
	      "(allow file-read-metadata)\n"
	      "\n; what the loader reads and maps to start any program\n",
	      f);
	for (i = 0; i < ARRAY_LEN(loader_paths); i++) {
		fputs("(allow file-read* file-map-executable (subpath ", f);
		put_string(f, loader_paths[i]);
		fputs("))\n", f);
	}
	emit_grants(f, p, facts);
	if (tmpdir) {
		fputs("\n; the private TMPDIR of this run (Seatbelt cannot replace /tmp)\n", f);
		rule(f, facts, "allow", OPS_WRITE, "subpath", tmpdir);
	}
	emit_network(f, p->net);
	fputs("\n; denied paths, after every grant so that they win\n", f);
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY) {
			rule(f, facts, "deny", OPS_DENY, "subpath", p->paths[i].path);
			facts->n_deny++;
		}
	if (ferror(f)) {
		fclose(f);
		return moat_error_set(err, MOAT_E_SYSTEM, ENOMEM, "building the SBPL profile");
	}
	if (fclose(f) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "building the SBPL profile");
	return 0;
}

static void verdicts(const struct backend_ctx *ctx, struct backend_plan *bp,
		     const struct seatbelt_facts *facts, struct moat_verdict *props)
{
	const struct moat_policy *p = ctx->policy;

	verdict_enforce(&props[MOAT_P_FS_READ], "Seatbelt (deny default): reads under %zu grants and %zu macOS "
						"loader paths; metadata everywhere",
			facts->n_read + facts->n_write, ARRAY_LEN(loader_paths));
	verdict_enforce(&props[MOAT_P_FS_WRITE], "Seatbelt: writes only under %zu write grants%s", facts->n_write,
			facts->private_tmpdir ? " and a private TMPDIR" : "");
	verdict_enforce(&props[MOAT_P_FS_SECRETS], "Seatbelt: %zu deny rules after every grant (the later rule "
						   "wins)",
			facts->n_deny);
	if (backend_verdict_policy_tmp(p, props))
		verdict_missing(&props[MOAT_P_FS_TMP], "point the command at $TMPDIR, or " HINT_LINUX,
				"Seatbelt cannot replace /tmp: it stays the host's and unwritable; TMPDIR is a private "
				"directory removed after the run");
	if (backend_verdict_policy_net_none(p, props)) {
		verdict_enforce(&props[MOAT_P_NET_NONE], "Seatbelt (deny default): AF_UNIX sockets only, no "
							 "connect or bind");
		verdict_enforce(&props[MOAT_P_NET_LOOPBACK], "Seatbelt (deny default): no network at all");
	} else {
		if (p->net == MOAT_NET_LOOPBACK)
			verdict_missing(&props[MOAT_P_NET_LOOPBACK], HINT_LINUX,
					"the loopback is the host's: Seatbelt allows localhost:*, where host services "
					"listen");
		else if (p->net == MOAT_NET_ALLOW)
			verdict_enforce(&props[MOAT_P_NET_LOOPBACK], "Seatbelt (deny default): no network at all "
								     "(net allow is kept closed)");
		else
			verdict_missing(&props[MOAT_P_NET_LOOPBACK], "use --net loopback",
					"the policy opens the network (net all)");
	}
	backend_verdict_net_allow(props);
	verdict_enforce(&props[MOAT_P_IPC_ABSTRACT], "macOS has no abstract unix socket namespace");
	if (p->net == MOAT_NET_ALL)
		verdict_missing(&props[MOAT_P_IPC_UNIX], "use --net loopback or none",
				"with net all the command may connect to mDNSResponder's socket (DNS)");
	else
		verdict_enforce(&props[MOAT_P_IPC_UNIX], "Seatbelt: connect to no pathname unix socket at all");
	verdict_missing(&props[MOAT_P_PROC_PID], HINT_LINUX,
			"Seatbelt has no pid namespace: other processes stay visible (ps, sysctl kern.proc)");
	verdict_missing(&props[MOAT_P_PROC_PTRACE], HINT_LINUX,
			"moat has not verified that the profile refuses ptrace(PT_ATTACH) and task_for_pid on "
			"processes outside");
	verdict_missing(&props[MOAT_P_SYS_FILTER], HINT_LINUX,
			"Seatbelt mediates operations, not system calls: no system call filter");
	if (!ctx->host->root)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid before sandbox-exec: no controlling terminal; no "
							   "file-ioctl allowed");
	else
		verdict_missing(&props[MOAT_P_TTY_INJECT], "run moat as an unprivileged user",
				"root may use TIOCSTI on any terminal");
	/* sandbox-exec applies the profile to itself and execs the command:
	 * moat's environment, fds and rlimits reach it unchanged. */
	/* (The rlimits are moat's, set before the tool: an export's argv sets none.) */
	bp->caps = (struct limit_caps){.rlimits = bp->apply_rlimits && !ctx->exporting,
				       .runtime = "sandbox-exec",
				       .tree_missing = "macOS has no pid namespace or cgroup: a process that forks "
						       "fast enough outlives the command"};
	backend_verdict_moat_owned(ctx, bp, "sandbox-exec", true, true, props);
}

/* A policy that cannot be written as a profile: unavailable in every mode
 * (no argv), and an error for `moat export`, which must not write it. */
static int refuse(const struct backend_ctx *ctx, struct moat_verdict *props, struct moat_error *err,
		  const char *why)
{
	if (ctx->exporting) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s", why);
		return moat_error_hint(err, "rename the path, or %s", HINT_LINUX);
	}
	backend_verdict_all_missing(props, "rename the path, or " HINT_LINUX, why);
	return 0;
}

static int seatbelt_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			    struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	struct seatbelt_facts facts = {0};
	cleanup_free char *text = NULL, *tmpdir = NULL, *profile = NULL;
	size_t len = 0, i;
	char why[256];

	bp->no_new_privs = true;
	bp->apply_rlimits = true;
	/* A control character could end an SBPL line or literal in ways no
	 * escape is documented for. */
	for (i = 0; i < p->n_paths; i++)
		if (has_control(p->paths[i].path))
			return refuse(ctx, props, err, "a path of the policy contains a control character: it "
						       "cannot be written into an SBPL profile");
	/* sandbox-exec hands its own environment on to the command: no hook
	 * may be in it (an export writes no environment). */
	if (!ctx->exporting && !backend_env_via_tool(ctx, bp, "sandbox-exec", why, sizeof(why))) {
		backend_verdict_all_missing(props, "drop the variable, or " HINT_LINUX, why);
		return 0;
	}
	if (has_control(ctx->work_dir))
		return moat_error_set(err, MOAT_E_SYSTEM, 0, "the work directory %s contains a control character",
				      ctx->work_dir);
	if (!ctx->exporting) {
		/* Only the system's own copy, whatever PATH says. */
		if (access(SANDBOX_EXEC, X_OK) != 0) {
			backend_verdict_all_missing(props, "sandbox-exec is part of macOS (" SANDBOX_EXEC ")",
						    SANDBOX_EXEC " is missing or not executable");
			return 0;
		}
		free(bp->tool_path);
		bp->tool_path = moat_xstrdup(SANDBOX_EXEC);
	}
	if (p->private_tmp) {
		tmpdir = moat_xasprintf("%s/tmp", ctx->work_dir);
		if (mkdir(tmpdir, 0700) != 0 && errno != EEXIST)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "creating %s", tmpdir);
		facts.private_tmpdir = true;
	}
	if (build_profile(ctx, tmpdir, &facts, &text, &len, err) < 0)
		return -1;
	if (facts.unwritable)
		return refuse(ctx, props, err, "a path of the policy resolves (through a symlink) to a name with a "
					       "control character: it cannot be written into an SBPL profile");
	if (backend_write_file(ctx->work_dir, "profile.sb", text, len, err) < 0)
		return -1;
	if (tmpdir)
		backend_env_set(bp, "TMPDIR", tmpdir);

	profile = moat_xasprintf("%s/profile.sb", ctx->work_dir);
	backend_argv_add(bp, "sandbox-exec");
	backend_argv_add(bp, "-f");
	backend_argv_add(bp, profile);
	backend_argv_add_command(bp, p, "--");
	verdicts(ctx, bp, &facts, props);
	return 0;
}

const struct moat_backend backend_seatbelt = {
	.name = "seatbelt",
	.tools = {"sandbox-exec"},
	.summary = "macOS Seatbelt: an SBPL profile generated from the policy, run by sandbox-exec",
	.install_hint = "macOS only: sandbox-exec is part of the base system (" SANDBOX_EXEC "); there is no "
			"Linux version",
	.os = "macos",
	.needs_work_dir = true,
	.export_files = {"profile.sb", NULL},
	.compile = seatbelt_compile,
};
