#include "resolve/limits.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/verdict.h"
#include "resolve/view.h"
#include "util/cleanup.h"

static const char *const names[LIM__COUNT] = {
    [LIM_MEMORY] = "memory",	       [LIM_PIDS] = "pids",   [LIM_CPU] = "cpu",
    [LIM_ADDRESS_SPACE] = "address_space", [LIM_FILES] = "files", [LIM_TMP] = "tmp_size",
};

/* Where the fix is known.  Unprivileged, systemd sets limits on a scope that
 * holds moat and its whole tree; moat then finds them as the enclosing
 * cgroup's (host_cgroup.c) and says so. */
#define HINT_CGROUP_MEMORY                                                                                   \
	"run moat as root, or inside a scope that carries the limit: `systemd-run --user --scope -p "      \
	"MemoryMax=SIZE -p MemorySwapMax=0 moat run --memory SIZE ...`"
#define HINT_CGROUP_PIDS                                                                                     \
	"run moat as root, or inside a scope that carries the limit: `systemd-run --user --scope -p "      \
	"TasksMax=N moat run --pids N ...`"
#define HINT_CGROUP_TREE                                                                                     \
	"run moat as root, with user namespaces enabled, or in a cgroup it may write: `systemd-run --user " \
	"--scope -p Delegate=yes moat run ...`"
#define HINT_NATIVE "use --backend native (or bwrap), which run the tree in moat's own cgroup"
#define HINT_CORE_PIPE                                                                                                 \
	"set kernel.core_pattern to a file name (`sudo sysctl -w kernel.core_pattern=core`, which moat's core "     \
	"limit turns off) or to systemd-coredump, which honours the limit; apport keeps out of the sandbox's crashes where "  \
	"the sandbox has a mount namespace of its own (user namespaces: `moat probe`)"
#define HINT_EXPORT "run the command with moat run, which holds the tree in a cgroup of its own and sets the rlimits"
#define HINT_CGROUP_OPEN                                                                                     \
	"with seccomp (it refuses clone3) and either user namespaces or Landlock, moat keeps the command away from " \
	"its cgroup's files and from clone3(CLONE_INTO_CGROUP)"
#define HINT_SOCKETS_V1                                                                                      \
	"a host with cgroup v2 (boot with systemd.unified_cgroup_hierarchy=1), whose memory.max counts socket "   \
	"buffers; or --net none"
#define HINT_SOCKETS_MOAT                                                                                     \
	"keep the allowlist and take memory as missing (--mode prefer), or leave out --memory; only a network "     \
	"without the fence (--net loopback, or --net all, which drops the allowlist) keeps the sockets the tree's " \
	"own, and then only cgroup v2 counts them"
#define HINT_SIGNAL_SCOPE                                                                                    \
	"enable user namespaces (a pid namespace), or a kernel with Landlock ABI 6 (Linux 6.12), which keeps the " \
	"command's signals inside the sandbox"

/* The missing text when the tree is not in a cgroup moat can hold it in. */
static const char *outside_why(const struct limit_caps *caps, char *buf, size_t len)
{
	if (caps->exported)
		snprintf(buf, len, "an export runs later without moat: no cgroup of moat's holds the tree %s runs",
			 caps->runtime);
	else if (caps->cgroup_open)
		return caps->cgroup_open;
	else
		snprintf(buf, len, "%s runs the tree outside any cgroup moat makes", caps->runtime);
	return buf;
}

/* ... and its hint. */
static const char *outside_hint(const struct limit_caps *caps)
{
	return caps->exported ? HINT_EXPORT : caps->cgroup_open ? HINT_CGROUP_OPEN : HINT_NATIVE;
}

/* Why the rlimits are not applied. */
static const char *no_rlimits_why(const struct limit_caps *caps)
{
	return caps->exported ? "the export's files apply no rlimits (moat sets them before the tool in a run)"
			      : "this backend does not apply rlimits";
}

const char *limit_name(enum limit_kind k)
{
	return (unsigned)k < LIM__COUNT ? names[k] : "?";
}

static void enforce(struct limit_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void enforce(struct limit_verdict *v, const char *fmt, ...)
{
	va_list ap;

	v->enforced = true;
	va_start(ap, fmt);
	verdict_vformat(v->mechanism, sizeof(v->mechanism), fmt, ap);
	va_end(ap);
}

static void missing(struct limit_verdict *v, const char *hint, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void missing(struct limit_verdict *v, const char *hint, const char *fmt, ...)
{
	va_list ap;

	v->enforced = false;
	snprintf(v->hint, sizeof(v->hint), "%s", hint);
	va_start(ap, fmt);
	verdict_vformat(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
}

/* Is `ctl` among the space-separated controllers a child of our v2 cgroup has? */
static bool v2_has(const struct moat_cgroup_info *cg, const char *ctl)
{
	size_t n = strlen(ctl);
	const char *s = cg->subtree;

	while ((s = strstr(s, ctl)) != NULL) {
		if ((s == cg->subtree || s[-1] == ' ') && (s[n] == ' ' || s[n] == '\0'))
			return true;
		s += n;
	}
	return false;
}

static bool v2_usable(const struct moat_cgroup_info *cg)
{
	return cg && cg->v2 && cg->delegated;
}

static bool v1_usable(const struct moat_cgroup_info *cg, enum cg_v1_controller c)
{
	return cg && cg->v1[c].path[0] && cg->v1[c].writable;
}

/* Why no cgroup of moat's can hold controller `ctl`: the v2 and the v1 side. */
static void why_no_controller(const struct moat_cgroup_info *cg, const char *ctl, enum cg_v1_controller c, char *buf,
			      size_t len)
{
	char v2[300];

	if (!cg) {
		verdict_format(buf, len, "cgroups were not probed");
		return;
	}
	if (!cg->v2)
		verdict_format(v2, sizeof(v2), "cgroup v2: %s", cg->why);
	else if (!cg->delegated)
		verdict_format(v2, sizeof(v2), "cgroup v2: %s", cg->why);
	else
		verdict_format(v2, sizeof(v2),
		    "cgroup v2: a child of %s has no %s controller (its cgroup.subtree_control is \"%s\"; the kernel "
		    "enables none in a cgroup that holds processes, moat's own included)",
		    cg->path, ctl, cg->subtree);
	verdict_format(buf, len, "%s; cgroup v1: %s", v2, cg->v1[c].why);
}

/* Socket buffers a memory limit would not count, or NULL.  cgroup v1
 * charges TCP and UDP buffers to a counter of their own (memory.kmem.tcp),
 * not to memory.limit_in_bytes; v2 counts them in memory.max.  A tree with
 * a network held 160 MiB in loopback sockets under a v1 --memory 64M
 * (tests/blackbox/limits_tree.sh).  Under net allow the allowed
 * connections are moat's sockets, charged to moat's cgroup.  The v1 rule
 * is said first: it holds whoever makes the sockets, so making the fence's
 * in the tree's cgroup would not help there (moat inside a v1 cgroup of
 * 64 MiB passed 160 MiB through its fence's sockets:
 * tests/blackbox/limits_fence.sh). */
static const char *uncounted_sockets(const struct moat_policy *p, const struct moat_host *h,
				     const struct limit_caps *caps, bool v1, char *buf, size_t len)
{
	bool inet = caps->inet == LIMIT_INET_POLICY ? p->net != MOAT_NET_NONE || !h->seccomp
						     : caps->inet == LIMIT_INET_YES;

	if (v1 && inet) {
		verdict_format(buf, len,
			       "cgroup v1 charges TCP and UDP socket buffers apart from memory.limit_in_bytes (to "
			       "memory.kmem.tcp), whichever process makes the socket, and the tree can make such "
			       "sockets (net %s%s%s): it could hold more than %lld bytes in them",
			       moat_net_name(p->net), p->net == MOAT_NET_NONE ? ", without seccomp" : "",
			       caps->sockets_moat ? "; the fence's sockets, which moat makes for it, are no exception" : "",
			       (long long)p->limits.memory_bytes);
		return buf;
	}
	if (caps->sockets_moat) {
		verdict_format(buf, len, "%s: the tree could hold more than %lld bytes in them", caps->sockets_moat,
			       (long long)p->limits.memory_bytes);
		return buf;
	}
	return NULL;
}

static void decide_memory(const struct moat_policy *p, const struct moat_host *h, const struct moat_cgroup_info *cg,
			  const struct limit_caps *caps, struct limits_plan *o)
{
	struct limit_verdict *v = &o->lim[LIM_MEMORY];
	int64_t n = p->limits.memory_bytes;
	char why[600];
	const char *sockets;
	bool v1 = false; /* the mechanism is a cgroup v1 memory limit */

	bool no_swap = cg && !cg->host_swap;

	if (caps->oci_resources && (no_swap || (cg && (cg->swap_limit_v2 || cg->swap_limit_v1)))) {
		o->oci_memory = true;
		v1 = cg && strcmp(cg->layout, "unified") != 0; /* the runtime's cgroups are v1 on a hybrid host */
		enforce(v, "cgroup made by %s: linux.resources.memory limit %lld, %s", caps->runtime, (long long)n,
			no_swap ? "no swap on this host" : "swap 0");
	} else if (caps->in_cgroup && v2_usable(cg) && v2_has(cg, "memory") && (no_swap || cg->swap_limit_v2)) {
		o->cg_v2 = o->v2_memory = true;
		enforce(v, "moat's cgroup v2 below %s: memory.max %lld, %s", cg->path, (long long)n,
			cg->swap_limit_v2 ? "memory.swap.max 0" : "no swap on this host");
	} else if (caps->in_cgroup && v1_usable(cg, CGV1_MEMORY) && (no_swap || cg->swap_limit_v1)) {
		o->cg_v1[CGV1_MEMORY] = v1 = true;
		enforce(v, "moat's cgroup v1 below %s: memory.limit_in_bytes %lld, %s", cg->v1[CGV1_MEMORY].path,
			(long long)n, cg->swap_limit_v1 ? "memory.memsw.limit_in_bytes the same" : "no swap on this host");
	} else if (cg && cg->host_swap && (caps->oci_resources || caps->in_cgroup) &&
		   ((v2_usable(cg) && v2_has(cg, "memory")) || v1_usable(cg, CGV1_MEMORY))) {
		missing(v, "enable swap accounting (cgroup v1: boot with swapaccount=1), or turn swap off (swapoff -a)",
			"the kernel does not account swap in a cgroup here: a memory limit would bound RAM only, and "
			"the tree could swap beyond %lld bytes", (long long)n);
	} else if (caps->in_cgroup && cg && cg->enclosing_memory != CG_UNLIMITED && cg->enclosing_memory <= n) {
		v1 = cg->enclosing_memory_v1;
		enforce(v, "the cgroup holding moat and the tree, %s, limits memory to %lld", cg->enclosing_memory_at,
			(long long)cg->enclosing_memory);
	} else if (!caps->in_cgroup) {
		missing(v, outside_hint(caps), "%s", outside_why(caps, why, sizeof(why)));
	} else {
		why_no_controller(cg, "memory", CGV1_MEMORY, why, sizeof(why));
		missing(v, HINT_CGROUP_MEMORY, "no memory cgroup moat can make: %s", why);
	}
	/* decide_memory runs first: nothing else has asked for a v2 cgroup yet. */
	if (v->enforced && (sockets = uncounted_sockets(p, h, caps, v1, why, sizeof(why))) != NULL) {
		o->oci_memory = o->cg_v2 = o->v2_memory = o->cg_v1[CGV1_MEMORY] = false;
		missing(v, caps->sockets_moat ? HINT_SOCKETS_MOAT : HINT_SOCKETS_V1, "%s", sockets);
	}
}

static void decide_pids(const struct moat_policy *p, const struct moat_host *h, const struct moat_cgroup_info *cg,
			const struct limit_caps *caps, struct limits_plan *o)
{
	struct limit_verdict *v = &o->lim[LIM_PIDS];
	int64_t n = p->limits.pids;
	char why[600];

	if (caps->no_pids) {
		missing(v, HINT_NATIVE, "%s", caps->no_pids);
	} else if (caps->oci_resources) {
		o->oci_pids = true;
		enforce(v, "cgroup made by %s: linux.resources.pids limit %lld", caps->runtime, (long long)n);
	} else if (caps->in_cgroup && v2_usable(cg) && v2_has(cg, "pids")) {
		o->cg_v2 = o->v2_pids = true;
		enforce(v, "moat's cgroup v2 below %s: pids.max %lld", cg->path, (long long)n);
	} else if (caps->in_cgroup && v1_usable(cg, CGV1_PIDS)) {
		o->cg_v1[CGV1_PIDS] = true;
		enforce(v, "moat's cgroup v1 below %s: pids.max %lld", cg->v1[CGV1_PIDS].path, (long long)n);
	} else if (caps->in_cgroup && cg && cg->enclosing_pids != CG_UNLIMITED && cg->enclosing_pids <= n) {
		enforce(v, "the cgroup holding moat and the tree, %s, limits processes to %lld", cg->enclosing_pids_at,
			(long long)cg->enclosing_pids);
	} else if (caps->rlimits && h->uid != 0) {
		/* The kernel never applies RLIMIT_NPROC to uid 0. */
		o->nproc_rlimit = true;
		enforce(v, "setrlimit RLIMIT_NPROC %lld: every process of uid %u on the host counts, the tree's included",
			(long long)n, (unsigned)h->uid);
	} else if (caps->exported) {
		missing(v, HINT_EXPORT, "%s (and RLIMIT_NPROC %s)", outside_why(caps, why, sizeof(why)),
			h->uid == 0 ? "does not apply to uid 0" : "is not applied by the export's files");
	} else {
		why_no_controller(cg, "pids", CGV1_PIDS, why, sizeof(why));
		missing(v, HINT_CGROUP_PIDS, "no pids cgroup moat can make (and RLIMIT_NPROC %s): %s",
			h->uid == 0 ? "does not apply to uid 0" : "is not applied by this backend", why);
	}
}

static void decide_cpu(const struct moat_policy *p, const struct moat_cgroup_info *cg, const struct limit_caps *caps,
		       struct limits_plan *o)
{
	struct limit_verdict *v = &o->lim[LIM_CPU];
	long long n = (long long)p->limits.cpu_seconds;
	char why[600];

	/* The watch is moat's loop: a command that can stop moat runs on. */
	if (caps->in_cgroup && caps->moat_signalable) {
		missing(v, HINT_SIGNAL_SCOPE, "%s: no limit on its total CPU time (RLIMIT_CPU is per process)",
			caps->moat_signalable);
	} else if (caps->in_cgroup && v2_usable(cg)) {
		o->cg_v2 = o->v2_cpu_watch = true;
		enforce(v, "moat's cgroup v2 below %s: cpu.stat usage of the tree, SIGKILL at %lld s", cg->path, n);
	} else if (caps->in_cgroup && v1_usable(cg, CGV1_CPUACCT)) {
		o->cg_v1[CGV1_CPUACCT] = true;
		enforce(v, "moat's cgroup v1 below %s: cpuacct.usage of the tree, SIGKILL at %lld s",
			cg->v1[CGV1_CPUACCT].path, n);
	} else if (!caps->in_cgroup) {
		char out[300];
		missing(v, outside_hint(caps), "%s: no limit on its total CPU time (RLIMIT_CPU is per process)",
			outside_why(caps, out, sizeof(out)));
	} else {
		why_no_controller(cg, "cpu", CGV1_CPUACCT, why, sizeof(why));
		missing(v, HINT_CGROUP_TREE,
			"no cgroup moat can make to count the tree's CPU time (RLIMIT_CPU is per process: N "
			"processes get N times the time): %s",
			why);
	}
}

static void decide_tree(const struct moat_host *h, const struct moat_cgroup_info *cg, const struct limit_caps *caps,
			struct limits_plan *o)
{
	if (caps->pid_tree) {
		o->tree_enforced = true;
		snprintf(o->tree_mechanism, sizeof(o->tree_mechanism), "%s", caps->tree_mechanism);
		return;
	}
	/* The cgroup's kill is done by moat and its guard: not by a stopped one. */
	if (caps->in_cgroup && caps->moat_signalable) {
		o->tree_enforced = false;
		snprintf(o->tree_hint, sizeof(o->tree_hint), "%s", HINT_SIGNAL_SCOPE);
		verdict_format(o->tree_reason, sizeof(o->tree_reason),
			       "%s: a process of the command's outlives it, --timeout and moat", caps->moat_signalable);
		return;
	}
	if (caps->in_cgroup && v2_usable(cg) && (cg->v2_kill || cg->v2_freeze)) {
		o->cg_v2 = true;
		o->tree_kill = cg->v2_kill ? CG_KILL_V2 : CG_KILL_V2_FREEZE;
		verdict_format(o->tree_mechanism, sizeof(o->tree_mechanism),
		    "moat's cgroup v2 below %s: %s when the command ends, at --timeout, and by moat's guard when moat "
		    "dies",
		    cg->path, cg->v2_kill ? "cgroup.kill" : "cgroup.freeze, then SIGKILL to each process");
		o->tree_enforced = true;
		return;
	}
	if (caps->in_cgroup && v1_usable(cg, CGV1_FREEZER)) {
		o->cg_v1[CGV1_FREEZER] = true;
		o->tree_kill = CG_KILL_V1_FREEZER;
		verdict_format(o->tree_mechanism, sizeof(o->tree_mechanism),
		    "moat's cgroup v1 below %s: frozen, then SIGKILL to each process, when the command ends, at "
		    "--timeout, and by moat's guard when moat dies",
		    cg->v1[CGV1_FREEZER].path);
		o->tree_enforced = true;
		return;
	}
	o->tree_enforced = false;
	snprintf(o->tree_hint, sizeof(o->tree_hint), "%s", caps->in_cgroup ? HINT_CGROUP_TREE : outside_hint(caps));
	if (caps->tree_missing) {
		snprintf(o->tree_reason, sizeof(o->tree_reason), "%s", caps->tree_missing);
	} else {
		char why[600];
		why_no_controller(cg, "freezer", CGV1_FREEZER, why, sizeof(why));
		verdict_format(o->tree_reason, sizeof(o->tree_reason),
		    "no pid namespace (%s) and no cgroup moat can make (%s): what the command starts outlives a "
		    "SIGKILLed moat, and a chain of processes too deep for moat's bounded kill (it finds one level "
		    "a round), or one forking too fast, outlives the command and --timeout",
		    h->userns_why[0] ? h->userns_why : "not available", why);
	}
}

/* The program a pipe pattern runs ("|/usr/share/apport/apport -p%p ..."),
 * and its last path component. */
static void core_pipe_program(const char *pattern, char *prog, size_t len, const char **base)
{
	const char *p = pattern + 1;
	size_t n;

	p += strspn(p, " \t");
	n = strcspn(p, " \t");
	snprintf(prog, len, "%.*s", (int)n, p);
	*base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
}

bool limits_core_held(const char *pattern, bool own_mount_ns, bool pinned, char *text, size_t len)
{
	char prog[192];
	const char *base;

	text[0] = '\0';
	/* '@' (Linux 6.16): the dump goes to a socket's server, which runs
	 * outside the sandbox; the kernel checks no RLIMIT_CORE on that path
	 * (not even the pipe's 1), so neither the limit nor the pin holds. */
	if (pattern[0] == '@') {
		snprintf(text, len,
			 "kernel.core_pattern hands a crash to the socket %s, whose server runs outside the sandbox "
			 "and gets the dump whatever RLIMIT_CORE says: what it keeps, moat cannot tell",
			 pattern + strspn(pattern, "@"));
		return false;
	}
	if (pattern[0] != '|')
		return true;
	core_pipe_program(pattern, prog, sizeof(prog), &base);
	/* At RLIMIT_CORE 1 the kernel aborts a dump to a pipe before it runs
	 * the program; pinned, the command cannot lower it to 0, where the
	 * program gets its dumps again (kernel/seccomp.c, add_rlimit_rules). */
	if (pinned) {
		snprintf(text, len,
			 "core_pattern pipes to %s: at RLIMIT_CORE 1 the kernel aborts the dump, and seccomp keeps "
			 "the limit there",
			 prog[0] ? prog : "a program");
		return true;
	}
	/* Not pinned: what the program does at a limit of 0, to which the
	 * command may lower it. */
	if (strcmp(base, "systemd-coredump") == 0) {
		snprintf(text, len, "core_pattern: systemd-coredump, which keeps nothing at that limit");
		return true;
	}
	if (strcmp(base, "false") == 0 || strcmp(base, "true") == 0) {
		snprintf(text, len, "core_pattern: %s, which keeps nothing", base);
		return true;
	}
	/* apport compares namespaces only when the kernel gives it the global
	 * pid (%P); without it, it takes the crash as the host's. */
	if (strcmp(base, "apport") == 0 && own_mount_ns && strstr(pattern, "%P")) {
		snprintf(text, len, "core_pattern: apport, which ignores another mount namespace's crash");
		return true;
	}
	if (strcmp(base, "apport") == 0)
		snprintf(text, len,
			 "kernel.core_pattern pipes a crash to %s, which the kernel runs as root outside the sandbox "
			 "whatever RLIMIT_CORE says; without a mount namespace of the sandbox's, apport keeps a report "
			 "with the core of a packaged program (/var/crash) whatever the limit",
			 prog);
	else
		snprintf(text, len,
			 "kernel.core_pattern pipes a crash to %s, which the kernel runs as root outside the sandbox "
			 "and hands the whole dump whatever RLIMIT_CORE says: what it keeps, moat cannot tell",
			 prog[0] ? prog : "a program");
	return false;
}

void limits_decide(const struct moat_policy *p, const struct moat_host *h, struct moat_cgroup_info *cache,
		   const struct limit_caps *caps, struct limits_plan *o)
{
	const struct moat_limits *l = &p->limits;
	const struct moat_cgroup_info *cg;
	const int64_t values[LIM__COUNT] = {l->memory_bytes, l->pids, l->cpu_seconds, l->address_space_bytes,
					    l->files, l->tmp_bytes};
	struct limit_caps open_caps;
	int k;

	/* The host's cgroups are read only when something needs them: a tree
	 * limit, or a tree without a pid namespace; their memory and pids
	 * files only for a memory or pids limit. */
	bool want_limits = l->memory_bytes != MOAT_LIMIT_UNSET || l->pids != MOAT_LIMIT_UNSET;
	if (cache && (want_limits || l->cpu_seconds != MOAT_LIMIT_UNSET || !caps->pid_tree) &&
	    (!cache->probed || (want_limits && !cache->limits_read)))
		host_probe_cgroup(h, want_limits, cache);
	cg = cache && cache->probed ? cache : NULL;
	/* A cgroup the command can write is no limit, and an export has no
	 * moat around it to make one: decide as if the tree were outside any
	 * (limits.h, cgroup_open, exported). */
	if (caps->cgroup_open || caps->exported) {
		open_caps = *caps;
		open_caps.in_cgroup = false;
		if (!open_caps.tree_missing && caps->cgroup_open && !caps->exported)
			open_caps.tree_missing = caps->cgroup_open;
		caps = &open_caps;
	}
	memset(o, 0, sizeof(*o));
	o->core0 = caps->rlimits;
	o->core_held = limits_core_held(h->core_pattern, caps->own_mount_ns, caps->core_pinned, o->core_text,
					sizeof(o->core_text));
	o->runtime = caps->runtime;
	o->exported = caps->exported;
	for (k = 0; k < LIM__COUNT; k++) {
		o->lim[k].declared = values[k] != MOAT_LIMIT_UNSET;
		o->lim[k].value = values[k];
	}
	if (o->lim[LIM_MEMORY].declared)
		decide_memory(p, h, cg, caps, o);
	if (o->lim[LIM_PIDS].declared)
		decide_pids(p, h, cg, caps, o);
	if (o->lim[LIM_CPU].declared)
		decide_cpu(p, cg, caps, o);
	if (o->lim[LIM_ADDRESS_SPACE].declared) {
		if (caps->no_address_space)
			missing(&o->lim[LIM_ADDRESS_SPACE], HINT_NATIVE, "%s", caps->no_address_space);
		else if (caps->rlimits)
			enforce(&o->lim[LIM_ADDRESS_SPACE], "setrlimit RLIMIT_AS %lld, each process",
				(long long)l->address_space_bytes);
		else
			missing(&o->lim[LIM_ADDRESS_SPACE], outside_hint(caps), "%s", no_rlimits_why(caps));
	}
	if (o->lim[LIM_FILES].declared) {
		if (caps->rlimits)
			enforce(&o->lim[LIM_FILES], "setrlimit RLIMIT_NOFILE %lld, each process", (long long)l->files);
		else
			missing(&o->lim[LIM_FILES], outside_hint(caps), "%s", no_rlimits_why(caps));
	}
	/* The private tmpfs always has a size; a default one is listed only
	 * where it is applied (it is moat's choice, not a declared limit). */
	o->tmp_bytes = l->tmp_bytes != MOAT_LIMIT_UNSET ? l->tmp_bytes : MOAT_TMP_SIZE_DEFAULT;
	if (p->private_tmp && caps->tmp_size) {
		o->lim[LIM_TMP].declared = true;
		o->lim[LIM_TMP].value = o->tmp_bytes;
		if (caps->tmp_files_unbounded)
			enforce(&o->lim[LIM_TMP], "tmpfs size=%lld for /tmp, /dev/shm and /run%s; file data only: %s",
				(long long)o->tmp_bytes, l->tmp_bytes == MOAT_LIMIT_UNSET ? " (the default)" : "",
				caps->tmp_files_unbounded);
		else
			enforce(&o->lim[LIM_TMP], "tmpfs size=%lld nr_inodes=%lld for /tmp, /dev/shm and /run%s",
				(long long)o->tmp_bytes, (long long)view_tmpfs_inodes(o->tmp_bytes),
				l->tmp_bytes == MOAT_LIMIT_UNSET ? " (the default)" : "");
	} else if (o->lim[LIM_TMP].declared) {
		missing(&o->lim[LIM_TMP], "use --backend native with a mount namespace (user namespaces or root)",
			"%s", p->private_tmp ? "the private /tmp here is not a tmpfs moat makes (no mount namespace)"
					     : "the policy has no private /tmp");
	}
	decide_tree(h, cg, caps, o);
}

bool limits_uses_cgroup(const struct limits_plan *lp)
{
	int i;

	if (lp->cg_v2)
		return true;
	for (i = 0; i < CGV1__COUNT; i++)
		if (lp->cg_v1[i])
			return true;
	return false;
}

static bool any_cgroup_exists(const struct limits_plan *lp)
{
	struct stat st;
	int i;

	if (lp->cg_path_v2[0] && lstat(lp->cg_path_v2, &st) == 0)
		return true;
	for (i = 0; i < CGV1__COUNT; i++)
		if (lp->cg_path_v1[i][0] && lstat(lp->cg_path_v1[i], &st) == 0)
			return true;
	return false;
}

/* moat-PID-N, with the first N whose cgroup exists in no hierarchy.  One
 * that exists is not this run's: a dead moat's whose pid this one reuses
 * (left behind where it could not be removed), or a moat's in another pid
 * namespace.  It is never used, killed or removed from here; named before
 * the guard forks, so the guard knows the name the run uses.  At creation
 * a name that appeared since is still refused (launch/cgroup.c). */
void limits_name_cgroup(struct limits_plan *lp, struct moat_cgroup_info *cg)
{
	static unsigned seq;
	char name[64];
	int i, tries;

	for (tries = 0; tries < 64; tries++) {
		snprintf(name, sizeof(name), "moat-%d-%u", (int)getpid(), seq++);
		if (lp->cg_v2 && cg)
			snprintf(lp->cg_path_v2, sizeof(lp->cg_path_v2), "%s/%s", cg->path, name);
		for (i = 0; i < CGV1__COUNT; i++)
			if (lp->cg_v1[i] && cg)
				snprintf(lp->cg_path_v1[i], sizeof(lp->cg_path_v1[i]), "%s/%s", cg->v1[i].path, name);
		if (!any_cgroup_exists(lp))
			break;
	}
}

void limits_verdicts(const struct limits_plan *lp, struct moat_verdict *res, struct moat_verdict *tree)
{
	char mech[sizeof(res->mechanism)];
	size_t used;
	int k, n_missing = 0, first = -1;

	if (tree) {
		if (lp->tree_enforced)
			verdict_enforce(tree, "%s", lp->tree_mechanism);
		else
			verdict_missing(tree, lp->tree_hint, "%s", lp->tree_reason);
	}
	if (!res)
		return;
	if (!lp->core0) {
		if (lp->exported)
			verdict_missing(res, HINT_EXPORT, "an export of %s applies no rlimits: core dumps stay on",
					lp->runtime);
		else
			verdict_missing(res, HINT_NATIVE, "%s does not apply rlimits: core dumps stay on", lp->runtime);
		return;
	}
	if (!lp->core_held) {
		verdict_missing(res, HINT_CORE_PIPE, "%s", lp->core_text);
		return;
	}
	for (k = 0; k < LIM__COUNT; k++)
		if (lp->lim[k].declared && !lp->lim[k].enforced && n_missing++ == 0)
			first = k;
	if (first >= 0) {
		verdict_missing(res, lp->lim[first].hint, "%s%s: %s", n_missing > 1 ? "of the declared limits, " : "",
				limit_name((enum limit_kind)first), lp->lim[first].reason);
		return;
	}
	used = (size_t)snprintf(mech, sizeof(mech), "core off%s%s%s", lp->core_text[0] ? " (" : "", lp->core_text,
				lp->core_text[0] ? ")" : "");
	for (k = 0; k < LIM__COUNT && used < sizeof(mech); k++)
		if (lp->lim[k].declared)
			used += (size_t)snprintf(mech + used, sizeof(mech) - used, ", %s", limit_name((enum limit_kind)k));
	verdict_enforce(res, "%s (each limit's mechanism under \"limits\")", mech);
}
