/* The nono backend: the policy compiled into a `nono run` argv
 * (docs/platforms.md, "nono").
 *
 * nono (github.com/always-further/nono) is a capability sandbox: on Linux a
 * Landlock allow-list of paths, on macOS Seatbelt.  Its documented CLI
 * (nono-cli 0.30 and later: `nono run --read P --write P --block-net --
 * CMD`) is what moat emits.  nono is not packaged for Debian and is not
 * installed on the machines moat is tested on, so only what its
 * documentation states and a Landlock allow-list can give is claimed --
 * fs.read and fs.write -- and tests/blackbox/backends.sh attacks those
 * wherever nono is installed.  Everything else is missing with the reason.
 * moat applies the rlimits before nono's execve (Landlock does not touch
 * them). */
#include "backends/backend.h"

#include <string.h>

#include "plan/plan.h"
#include "util/path.h"

#define HINT_OTHER "use --backend native or bwrap"

/* Is a denied path inside a grant?  Landlock cannot carve it out again. */
static bool deny_under_grant(const struct moat_policy *p)
{
	size_t i, j;

	for (i = 0; i < p->n_paths; i++) {
		if (p->paths[i].access != MOAT_ACCESS_DENY)
			continue;
		for (j = 0; j < p->n_paths; j++)
			if (p->paths[j].access != MOAT_ACCESS_DENY && path_within(p->paths[i].path, p->paths[j].path))
				return true;
	}
	return false;
}

static void verdicts(const struct backend_ctx *ctx, const struct backend_plan *bp, struct moat_verdict *props)
{
	const struct moat_policy *p = ctx->policy;

	verdict_enforce(&props[MOAT_P_FS_READ], "nono --read/--write: Landlock allow-list of the grants");
	verdict_enforce(&props[MOAT_P_FS_WRITE], "nono --write only for the write grants (Landlock)");
	if (deny_under_grant(p))
		verdict_missing(&props[MOAT_P_FS_SECRETS], HINT_OTHER,
				"a denied path lies inside a grant, and a Landlock allow-list cannot take it out again");
	else
		verdict_enforce(&props[MOAT_P_FS_SECRETS], "no denied path lies inside a grant: the allow-list leaves "
							   "them out");
	verdict_missing(&props[MOAT_P_FS_TMP], HINT_OTHER, "nono makes no private /tmp");
	verdict_missing(&props[MOAT_P_NET_NONE], HINT_OTHER,
			"nono --block-net on Linux is Landlock's TCP rules: other socket types are not refused");
	verdict_missing(&props[MOAT_P_NET_LOOPBACK], HINT_OTHER, "nono has no loopback-only network");
	verdict_missing(&props[MOAT_P_NET_ALLOW], HINT_OTHER, "nono's per-host proxy is not driven by moat");
	verdict_missing(&props[MOAT_P_IPC_ABSTRACT], HINT_OTHER, "no network namespace: abstract sockets are shared");
	verdict_missing(&props[MOAT_P_IPC_UNIX], HINT_OTHER, "not verified: nono is not installed where moat is tested");
	verdict_missing(&props[MOAT_P_PROC_PID], HINT_OTHER, "nono makes no pid namespace");
	verdict_missing(&props[MOAT_P_PROC_PTRACE], HINT_OTHER, "nono loads no seccomp filter moat checked");
	verdict_missing(&props[MOAT_P_SYS_FILTER], HINT_OTHER, "nono loads no seccomp filter moat checked");
	verdict_missing(&props[MOAT_P_TTY_INJECT], HINT_OTHER, "nono keeps the caller's terminal and session");
	backend_verdict_moat_owned(ctx, bp, "nono", false, false, true, props);
	/* res.limits from the call above; env and fds with the real reason. */
	verdict_missing(&props[MOAT_P_ENV_CURATED], HINT_OTHER,
			"not verified: nono may change the environment (not installed where moat is tested)");
	verdict_missing(&props[MOAT_P_FD_CLEAN], HINT_OTHER,
			"not verified: nono may hand the command fds of its own (not installed where moat is tested)");
}

static int nono_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			struct moat_error *err)
{
	const struct moat_policy *p = ctx->policy;
	size_t i;

	(void)err;
	bp->no_new_privs = true;
	bp->apply_rlimits = true;
	backend_argv_add(bp, "nono");
	backend_argv_add(bp, "run");
	for (i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];
		if (r->access == MOAT_ACCESS_DENY)
			continue;
		backend_argv_add(bp, r->access == MOAT_ACCESS_WRITE ? "--allow" : "--read");
		backend_argv_add(bp, r->path);
	}
	if (p->net != MOAT_NET_ALL)
		backend_argv_add(bp, "--block-net");
	backend_argv_add_command(bp, p, "--");
	verdicts(ctx, bp, props);
	return 0;
}

const struct moat_backend backend_nono = {
	.name = "nono",
	.tools = {"nono"},
	.summary = "nono: a Landlock (Linux) / Seatbelt (macOS) capability sandbox",
	.install_hint = "cargo install nono-cli, or brew install nono (not packaged for Debian; "
			"github.com/always-further/nono)",
	.os = "linux",
	.compile = nono_compile,
};
