/* The nono backend: the policy compiled into one `nono run` argv
 * (docs/platforms.md, "nono").
 *
 * nono (https://github.com/always-further/nono, a Rust CLI) sandboxes a
 * command with Landlock on Linux (Seatbelt on macOS).  The argv is
 *
 *   nono --silent run [--read DIR | --read-file FILE]...
 *        [--allow DIR | --allow-file FILE]... [--net-block] -- EXE ARGS...
 *
 * The flags, as nono documents them (docs/cli/usage/flags.mdx and the clap
 * definitions in crates/nono-cli/src/cli.rs): --silent (-s, global)
 * suppresses nono's banner and summary, so stderr is the command's; --read
 * and --read-file grant read-only access to a directory (recursive) or a
 * single file; --allow and --allow-file grant read+write (nono's --write is
 * write-only, which is not moat's write); --net-block blocks the network
 * (releases since 0.17 call it --block-net and keep --net-block as an
 * alias); `--` ends nono's options.  nono canonicalises every path
 * (symlinks resolved) and refuses one that does not exist, so only existing
 * grants are passed; a directory gets the directory flag, anything else the
 * file flag.
 *
 * What nono cannot give, from its own documentation and policy, and so is
 * reported missing, never claimed:
 *   - an exact allow-list: nono always adds its "base groups"
 *     (crates/nono-cli/data/policy.json): system_read_linux grants reads of
 *     /etc, /proc, /sys, /run, /tmp, /dev/pts, ...; system_write_linux
 *     writes to /tmp, $TMPDIR and /dev/tty; user_tools ~/.local/state;
 *   - denied paths inside a grant: Landlock is allow-only ("Profiles &
 *     Groups", Platform Differences), and nono's CLI has no deny flag;
 *   - net.none: --net-block is Landlock TCP bind/connect filtering (ABI 4,
 *     Linux 6.7; docs/cli/features/networking.mdx); UDP and raw sockets
 *     are not covered.  No private loopback, no private /tmp, no pid
 *     namespace (nono uses none: docs/cli/internals/security-model.mdx), no
 *     syscall filter, and pathname unix sockets are not restricted by
 *     Landlock at all;
 *   - the exact environment: nono drops LD_*, DYLD_*, PYTHONPATH,
 *     NODE_OPTIONS, ... (exec_strategy/env_sanitization.rs) and may set
 *     variables of its own; and the fds: in its default (monitor) and
 *     supervised modes nono stays the command's parent and may hand it
 *     descriptors of its own.
 * What it gives: the Landlock domain itself, which confines ptrace and
 * process_vm_* to processes of the same or a nested domain (the kernel's
 * hook_ptrace_access_check, security/landlock/task.c); moat's own setsid
 * (tty.inject, unless root) and rlimits, inherited through nono's exec.
 *
 * nono also blocks some commands by name (rm, cp, mv, chmod, kill, pip,
 * ...: its dangerous_commands groups); moat passes no --allow-command, so
 * such a command fails under nono.
 *
 * Trust model: nono is not setuid; it runs as the caller, so moat may set
 * no_new_privs before it (Landlock needs it anyway).  The trusted base is
 * nono and its built-in policy, which moat does not control: nono also
 * reads options from NONO_* environment variables (clap `env = ...`), so a
 * policy whose environment sets one is refused. */
#include "backends/backend.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/verdict.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

#define HINT_OTHER "use --backend native or bwrap"

/* moat's grant as nono flags; false when nono cannot be given it (the path
 * does not exist: nono would refuse to start). */
static bool emit_grant(struct backend_plan *bp, const struct moat_path_rule *r)
{
	struct stat st;
	bool dir;

	if (stat(r->path, &st) != 0)
		return false;
	dir = S_ISDIR(st.st_mode);
	if (r->access == MOAT_ACCESS_READ)
		backend_argv_add(bp, dir ? "--read" : "--read-file");
	else
		backend_argv_add(bp, dir ? "--allow" : "--allow-file");
	backend_argv_add(bp, r->path);
	return true;
}

/* nono splits --allow at ',' (clap value_delimiter in current releases):
 * "/a,/etc" would grant /a and /etc.  And it reads NONO_* variables as
 * options (NONO_ALLOW, NONO_PROFILE, ...).  Either makes the policy
 * inexpressible: false, with the reason. */
static bool inputs_expressible(const struct backend_ctx *ctx, char *why, size_t len)
{
	const struct moat_policy *p = ctx->policy;
	size_t i;

	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY && strchr(p->paths[i].path, ',')) {
			snprintf(why, len, "nono cannot be given the path %.160s: it splits path options at ','",
				 p->paths[i].path);
			return false;
		}
	for (i = 0; ctx->envp && ctx->envp[i]; i++)
		if (strncmp(ctx->envp[i], "NONO_", 5) == 0) {
			size_t n = strcspn(ctx->envp[i], "=");
			snprintf(why, len, "the environment sets %.*s, which nono reads as an option of its own",
				 (int)(n > 64 ? 64 : n), ctx->envp[i]);
			return false;
		}
	return true;
}

/* The first denied path that lies inside a grant, and that grant. */
static bool deny_inside_grant(const struct moat_policy *p, const char **denied, const char **grant)
{
	size_t i, j;

	for (i = 0; i < p->n_paths; i++) {
		if (p->paths[i].access != MOAT_ACCESS_DENY)
			continue;
		for (j = 0; j < p->n_paths; j++)
			if (p->paths[j].access != MOAT_ACCESS_DENY && path_within(p->paths[i].path, p->paths[j].path)) {
				*denied = p->paths[i].path;
				*grant = p->paths[j].path;
				return true;
			}
	}
	return false;
}

static void verdicts(const struct backend_ctx *ctx, struct backend_plan *bp, size_t n_read, size_t n_write,
		     struct moat_verdict *props)
{
	const struct moat_policy *p = ctx->policy;
	const struct moat_host *h = ctx->host;
	const char *denied, *grant;

	verdict_missing(&props[MOAT_P_FS_READ], HINT_OTHER,
			"%zu read grants passed, but nono always adds its base groups: reads of /etc, /proc, /sys, "
			"/run, /tmp, /dev/pts, ~/.local/bin and more",
			n_read);
	verdict_missing(&props[MOAT_P_FS_WRITE], HINT_OTHER,
			"%zu write grants passed, but nono's base groups add writes to the host's /tmp, $TMPDIR, "
			"/dev/tty and ~/.local/state",
			n_write);
	if (deny_inside_grant(p, &denied, &grant))
		verdict_missing(&props[MOAT_P_FS_SECRETS], HINT_OTHER,
				"Landlock (nono) is allow-only: the denied %.80s stays readable inside the grant %.80s",
				denied, grant);
	else
		verdict_missing(&props[MOAT_P_FS_SECRETS], HINT_OTHER,
				"Landlock (nono) is allow-only and nono's base groups grant /etc, /tmp, /run, ...: a "
				"denied path under them stays readable");
	if (backend_verdict_policy_tmp(p, props))
		verdict_missing(&props[MOAT_P_FS_TMP], HINT_OTHER,
				"nono has no private /tmp: its system_write_linux group grants the host's /tmp");
	if (backend_verdict_policy_net_none(p, props))
		verdict_missing(&props[MOAT_P_NET_NONE], HINT_OTHER,
				"nono --net-block filters TCP bind/connect with Landlock (ABI 4+): UDP and raw sockets "
				"still work");
	if (p->net == MOAT_NET_ALL)
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], "use --net loopback", "the policy opens the network (net all)");
	else
		verdict_missing(&props[MOAT_P_NET_LOOPBACK], HINT_OTHER,
				"nono has no private loopback: the host's is shared, and --net-block (applied) also "
				"blocks TCP to it");
	backend_verdict_net_allow(props);
	verdict_missing(&props[MOAT_P_IPC_ABSTRACT], HINT_OTHER,
			"nono's command line does not ask Landlock to scope abstract unix sockets");
	verdict_missing(&props[MOAT_P_IPC_UNIX], HINT_OTHER,
			"Landlock does not restrict connect() to pathname unix sockets, and nono grants /run and /tmp");
	verdict_missing(&props[MOAT_P_PROC_PID], HINT_OTHER,
			"nono uses no pid namespace: other processes stay visible and, with the same uid, signalable");
	verdict_enforce(&props[MOAT_P_PROC_PTRACE], "Landlock domain applied by nono: ptrace, process_vm_* only "
						    "on processes in the same or a nested domain");
	verdict_missing(&props[MOAT_P_SYS_FILTER], HINT_OTHER, "nono loads no general system call filter");
	if (!h->root)
		verdict_enforce(&props[MOAT_P_TTY_INJECT], "setsid before nono: no controlling terminal; no "
							   "CAP_SYS_ADMIN");
	else
		verdict_missing(&props[MOAT_P_TTY_INJECT], "run moat as an unprivileged user, or use --backend "
							   "native or bwrap",
				"nono keeps root's CAP_SYS_ADMIN: TIOCSTI works on any terminal");
	/* The rlimits moat sets before exec are inherited through nono's
	 * fork and exec (it is not setuid and documents no limit of its own). */
	/* (The rlimits are moat's, set before the tool: an export's argv sets none.) */
	bp->caps = (struct limit_caps){.rlimits = bp->apply_rlimits && !ctx->exporting,
				       .in_cgroup = true, .runtime = "nono",
				       .tree_missing = "nono makes no pid namespace, and moat has no cgroup here to hold "
						       "the tree"};
	backend_verdict_moat_owned(ctx, bp, "nono", false, false, props);
	verdict_missing(&props[MOAT_P_ENV_CURATED], HINT_OTHER,
			"nono drops LD_*, DYLD_*, PYTHONPATH, NODE_OPTIONS and more from the environment, and may "
			"set variables of its own");
}

/* What verdicts() above reports missing whatever the policy and host:
 * `auto` need not look nono up in PATH (~0.02 ms of every start where
 * native misses something) when it could not miss fewer. */
static uint32_t nono_never(const struct moat_policy *p)
{
	(void)p;
	return MOAT_PBIT(MOAT_P_FS_READ) | MOAT_PBIT(MOAT_P_FS_WRITE) | MOAT_PBIT(MOAT_P_FS_SECRETS) |
	       MOAT_PBIT(MOAT_P_FS_TMP) | MOAT_PBIT(MOAT_P_NET_NONE) | MOAT_PBIT(MOAT_P_NET_LOOPBACK) |
	       MOAT_PBIT(MOAT_P_NET_ALLOW) | MOAT_PBIT(MOAT_P_IPC_ABSTRACT) | MOAT_PBIT(MOAT_P_IPC_UNIX) |
	       MOAT_PBIT(MOAT_P_PROC_PID) | MOAT_PBIT(MOAT_P_SYS_FILTER) | MOAT_PBIT(MOAT_P_ENV_CURATED);
}

static int nono_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	size_t i, n_read = 0, n_write = 0;
	bool can_run = ctx->host->landlock_abi > 0;
	char why[256];

	/* Not runnable at all: unavailable in every mode (no argv), and an
	 * error for `moat export`, which must not write a wrong argv.  nono has
	 * no option that sets the command's environment: it hands on its own,
	 * so no hook may be in it. */
	if (!inputs_expressible(ctx, why, sizeof(why)) || !backend_env_via_tool(ctx, bp, "nono", why, sizeof(why))) {
		if (ctx->exporting) {
			moat_error_set(err, MOAT_E_USAGE, 0, "%s", why);
			return moat_error_hint(err, "rename the path or drop the variable, or %s", HINT_OTHER);
		}
		backend_verdict_all_missing(props, "rename the path or drop the variable, or " HINT_OTHER, why);
		return 0;
	}
	bp->no_new_privs = true;
	bp->apply_rlimits = true;
	if (!can_run) {
		snprintf(why, sizeof(why), "nono needs Landlock on Linux: %.200s",
			 ctx->host->landlock_why[0] ? ctx->host->landlock_why : "not available here");
		backend_verdict_all_missing(props, "use a kernel with Landlock (5.13+, lsm=landlock), or "
						   "--backend bwrap",
					    why);
		if (!ctx->exporting)
			return 0; /* no argv: nothing to run */
	}

	backend_argv_add(bp, "nono");
	backend_argv_add(bp, "--silent");
	backend_argv_add(bp, "run");
	for (i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];
		if (r->access == MOAT_ACCESS_DENY || !emit_grant(bp, r))
			continue;
		if (r->access == MOAT_ACCESS_READ)
			n_read++;
		else
			n_write++;
	}
	/* nono's network is all or (TCP) nothing: loopback gets nothing too,
	 * which fails closed (and is reported missing). */
	if (p->net != MOAT_NET_ALL)
		backend_argv_add(bp, "--net-block");
	backend_argv_add_command(bp, p, "--");

	if (can_run)
		verdicts(ctx, bp, n_read, n_write, props);
	return 0;
}

const struct moat_backend backend_nono = {
	.name = "nono",
	.tools = {"nono"},
	.summary = "nono: a Landlock (Linux) and Seatbelt (macOS) capability sandbox CLI, with base grants of its own",
	.install_hint = "nono is not packaged for Debian: `cargo install nono-cli` or `brew install nono` (macOS "
			"and Linux); see https://github.com/always-further/nono",
	.os = "linux",
	.needs_work_dir = false,
	.compile = nono_compile,
	.never_enforces = nono_never,
};
