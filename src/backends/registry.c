/* The backends moat knows, the names --backend accepts, and the ranking
 * `auto` follows.  Why this order: docs/backends.md, "auto". */
#include "backends/backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/verdict.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/moatbin.h"

/* none: the command runs bare (the status is off), what --backend none and
 * mode off give.  Nothing to compile: the plan has no tool and no in-child
 * program, and no property is claimed. */
static int none_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			struct moat_error *err)
{
	(void)ctx, (void)bp, (void)props, (void)err;
	return 0;
}

const struct moat_backend backend_none = {
    .name = "none",
    .summary = "no sandbox: the command runs as moat's child, unconfined",
    .os = NULL,
    .compile = none_compile,
};

/* Every backend, in the order `moat help` and the probe list them. */
static const struct moat_backend *const backends[] = {
    &backend_native,   &backend_bwrap, &backend_gvisor,	  &backend_oci,	 &backend_nsjail,
    &backend_firejail, &backend_nono,  &backend_seatbelt, &backend_none,
};

/* Strongest first.  native leads: moat compiles and checks every one of its
 * mechanisms itself (Landlock, seccomp, namespaces), trusts no further
 * binary, and enforces the most properties on a current kernel.  bwrap
 * next: the same kernel mechanisms with moat's own seccomp program, and
 * file-system rules that do not need Landlock.  gVisor's own kernel is the
 * strongest wall against kernel bugs, but a sandbox start costs ~100x more;
 * the OCI runtimes are below it; nsjail claims what they claim, but its
 * filter is kafel's compile of moat's rules, which lets an x32 call of an
 * unnamed syscall through, and the read-only flags of mounts below a grant
 * hold for the mounts moat saw when it planned; firejail is setuid root (a
 * larger trusted base); nono and seatbelt last. */
static const char *const ranking[] = {"native",	  "bwrap", "gvisor",   "oci", "nsjail",
				      "firejail", "nono",  "seatbelt", NULL};

const struct moat_backend *backend_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

bool backend_runs_tool(const struct moat_backend *b)
{
	return b->tools[0] != NULL;
}

const char *const *backend_ranking(void)
{
	return ranking;
}

static const char *this_os(void)
{
#ifdef __APPLE__
	return "macos";
#else
	return "linux";
#endif
}

/* An embedder of libmoat asked for a backend whose init is moat's own
 * binary (moat_backend.runs_moat_init): /proc/self/exe is the embedder's,
 * which would run as the sandbox's pid 1 in place of moat __init. */
static void backend_verdict_not_moat(struct moat_verdict *props)
{
	char exe[256] = "unknown";
	char reason[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0)
		exe[n] = '\0';
	snprintf(reason, sizeof(reason),
		 "from libmoat only the native backend runs: the others start moat's own binary as the sandbox's "
		 "init, and this process is not moat (it is %s)",
		 exe);
	backend_verdict_all_missing(props, "run the moat program, or use --backend native", reason);
}

int backend_prepare(const struct moat_backend *b, const struct moat_policy *p, const struct fs_plan *fs,
		    const struct moat_host *h, struct moat_cgroup_info *cg, char *const *envp,
		    const char *export_dir, struct backend_plan *bp, struct moat_verdict *props, struct moat_error *err)
{
	struct backend_ctx ctx = {
	    .policy = p, .fs = fs, .host = h, .cgroup = cg, .envp = envp, .exporting = export_dir != NULL};
	cleanup_free char *tool = NULL;
	bool runs_here = !b->os || strcmp(b->os, this_os()) == 0;
	char reason[256];

	backend_plan_init(bp);
	if (!backend_runs_tool(b)) {
		/* moat's own program, or nothing: no tool to find. */
		if (!runs_here) {
			snprintf(reason, sizeof(reason), "the %s backend runs only on %s; this is %s", b->name, b->os,
				 this_os());
			backend_verdict_all_missing(props, b->install_hint, reason);
			return 0;
		}
	} else if (!ctx.exporting) {
		if (!runs_here) {
			snprintf(reason, sizeof(reason), "the %s backend runs only on %s; this is %s", b->name, b->os,
				 this_os());
			backend_verdict_all_missing(props, b->install_hint, reason);
			return 0;
		}
		if (b->runs_moat_init && !moatbin_is_self()) {
			backend_verdict_not_moat(props);
			return 0;
		}
		if (b->host_rules_out && b->host_rules_out(h, props))
			return 0;
		tool = backend_find_tool(b, NULL);
		if (!tool) {
			snprintf(reason, sizeof(reason), "%s is not installed (looked for %s%s%s in PATH)", b->name,
				 b->tools[0], b->tools[1] ? " or " : "", b->tools[1] ? b->tools[1] : "");
			backend_verdict_all_missing(props, b->install_hint, reason);
			return 0;
		}
	} else if (runs_here) {
		tool = backend_find_tool(b, NULL);
	}
	ctx.tool_path = tool;
	if (export_dir) {
		/* An export's files go beside its argv.json (bwrap's env.args,
		 * seccomp.bpf and run.sh; OCI's config.json), for any backend:
		 * the directory is the caller's, never removed. */
		bp->work_dir = moat_xstrdup(export_dir);
		ctx.work_dir = bp->work_dir;
	} else if (b->needs_work_dir) {
		if (!b->work_dir_lazy && backend_work_dir(b, bp, err) < 0)
			return -1;
		ctx.work_dir = bp->work_dir;
	}
	if (backend_runs_tool(b)) {
		bp->tool_path = tool ? steal_ptr(&tool) : moat_xstrdup(b->tools[0]);
		backend_tool_env(bp, "PATH", BACKEND_TOOL_PATH);
	}
	if (b->compile(&ctx, bp, props, err) < 0) {
		backend_plan_free(bp);
		return moat_error_wrap(err, "backend %s", b->name);
	}
	if (bp->apply_rlimits)
		bp->n_rlimits = backend_rlimits(p, &bp->limits, bp->rlimits);
	return 0;
}
