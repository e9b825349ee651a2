#include "plan/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/env.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/timeline.h"

extern char **environ;

const char *moat_status_name(enum moat_status s)
{
	switch (s) {
	case MOAT_STATUS_ENFORCED:
		return "enforced";
	case MOAT_STATUS_DEGRADED:
		return "degraded";
	case MOAT_STATUS_UNAVAILABLE:
		return "unavailable";
	case MOAT_STATUS_OFF:
		return "off";
	}
	return "?";
}


/* Which properties does this policy ask for?  Derived from its rules, so a
 * report can never list a guarantee the policy did not mean to give. */
static void mark_requested(const struct moat_policy *p, struct moat_plan *plan)
{
	size_t i;
	bool any_deny = false;

	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY)
			any_deny = true;

	plan->props[MOAT_P_FS_READ].requested = true;
	plan->props[MOAT_P_FS_WRITE].requested = true;
	plan->props[MOAT_P_FS_SECRETS].requested = any_deny || p->secrets_masked;
	plan->props[MOAT_P_FS_TMP].requested = p->private_tmp;
	plan->props[MOAT_P_NET_NONE].requested = p->net == MOAT_NET_NONE;
	plan->props[MOAT_P_NET_LOOPBACK].requested = p->net == MOAT_NET_LOOPBACK;
	plan->props[MOAT_P_NET_ALLOW].requested = p->net == MOAT_NET_ALLOW;
	plan->props[MOAT_P_IPC_ABSTRACT].requested = true;
	/* --unix-sockets gives pathname sockets to the command on purpose. */
	plan->props[MOAT_P_IPC_UNIX].requested = !p->unix_sockets;
	plan->props[MOAT_P_PROC_PID].requested = true;
	plan->props[MOAT_P_PROC_PTRACE].requested = true;
	plan->props[MOAT_P_PROC_TREE].requested = true;
	plan->props[MOAT_P_SYS_FILTER].requested = true;
	plan->props[MOAT_P_TTY_INJECT].requested = true;
	plan->props[MOAT_P_ENV_CURATED].requested = true;
	plan->props[MOAT_P_FD_CLEAN].requested = true;
	plan->props[MOAT_P_RES_LIMITS].requested = true;
	for (i = 0; i < MOAT_P__COUNT; i++)
		if (p->require & MOAT_PBIT(i))
			plan->props[i].requested = true;
}

/* Requested properties the verdicts leave missing: how many, and their
 * names (comma-separated) in `names`. */
static size_t missing_names(const struct moat_verdict *props, char *names, size_t len)
{
	size_t n = 0, used = 0;
	int i;

	if (len)
		names[0] = '\0';
	for (i = 0; i < MOAT_P__COUNT; i++) {
		if (!props[i].requested || props[i].enforced)
			continue;
		if (used < len) {
			int w = snprintf(names + used, len - used, "%s%s", n ? ", " : "",
					 moat_property_name((enum moat_property)i));
			used += w > 0 ? (size_t)w : 0;
		}
		n++;
	}
	return n;
}

static void reset_verdicts(struct moat_verdict *props)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++) {
		bool requested = props[i].requested;
		memset(&props[i], 0, sizeof(props[i]));
		props[i].requested = requested;
	}
}

/* One candidate backend, compiled into its own plan: what it compiled and
 * its verdicts, some 36 KB (the verdicts with their texts).  The first one
 * a plan compiles goes straight into the plan's own (on a host where it
 * enforces everything, the only one: auto stops there); a later one, when
 * auto looks further, into a store on the heap, copied into the plan when it
 * wins.  A copy of that size on the stack, or one more on the heap, stays
 * resident for the whole run (docs/performance.md, section 4). */
struct candidate_store {
	struct backend_plan compiled;
	struct moat_verdict props[MOAT_P__COUNT];
};

struct candidate {
	const char *name;
	struct backend_plan *compiled; /* the plan's own, or a store's */
	struct moat_verdict *props;    /* MOAT_P__COUNT of them */
};

static void candidate_in_plan(struct candidate *c, struct moat_plan *plan)
{
	*c = (struct candidate){.compiled = &plan->compiled, .props = plan->props};
}

static void candidate_in_store(struct candidate *c, struct candidate_store *s)
{
	*c = (struct candidate){.compiled = &s->compiled, .props = s->props};
}

static void candidate_free(struct candidate *c)
{
	backend_plan_free(c->compiled);
}

/* A backend whose tool is absent here (or whose OS this is not) compiled
 * nothing to run: no argv, or no in-child program.  (none compiles nothing
 * by design; its plan is off.) */
static bool compiled_nothing(const struct backend_plan *bp)
{
	return backend_plan_runs_tool(bp) ? bp->argv == NULL : bp->in_child == NULL;
}

static int candidate_compile(struct candidate *c, const char *name, const struct moat_policy *p,
			     const struct moat_host *h, struct moat_plan *plan, const char *export_dir,
			     struct moat_error *err)
{
	const struct moat_backend *b = backend_lookup(name);
	struct moat_cgroup_info *cg = &plan->cgroup;
	int rc;

	backend_plan_free(c->compiled); /* nothing held: a fresh or freed one */
	c->name = NULL;
	if (!b) /* a name of policy/backend_names.h without a table entry */
		return moat_error_set(err, MOAT_E_USAGE, 0, "backend '%s' is not built into this moat", name);
	/* The requested marks, from the plan (mark_requested). */
	if (c->props != plan->props)
		memcpy(c->props, plan->props, sizeof(plan->props));
	reset_verdicts(c->props);
	c->name = b->name;
	rc = backend_prepare(b, p, &plan->fs, h, cg, plan->envp, export_dir, c->compiled, c->props, err);
	if (rc == 0) {
		backend_verdict_kept_dirs(p, c->compiled, c->props);
		backend_verdict_kept_sockets(p, c->compiled, c->props);
		backend_verdict_linked_protected(&plan->fs, c->props);
		backend_verdict_link_farms(&plan->fs, c->props);
		backend_verdict_linked_secret(&plan->fs, c->props);
	}
	/* The cgroup verdicts were decided from files moat could not open:
	 * they would blame the host for moat's own shortage. */
	if (rc == 0 && cg->probed && cg->open_errno) {
		candidate_free(c);
		return moat_error_set(err, MOAT_E_SYSTEM, cg->open_errno, "reading the host's cgroups: %s",
				      cg->open_errno_at);
	}
	return rc;
}

/* The plan takes the candidate: a store's contents move into it. */
static void candidate_adopt(struct moat_plan *plan, struct candidate *c)
{
	plan->backend = c->name;
	if (c->props != plan->props) {
		memcpy(plan->props, c->props, sizeof(plan->props));
		backend_plan_free(&plan->compiled);
		plan->compiled = *c->compiled;
		backend_plan_init(c->compiled); /* moved: the plan owns it */
	}
	plan->limits = plan->compiled.limits;
}

static void appendf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t len, const char *fmt, ...)
{
	cleanup_free char *part = NULL, *all = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&part, fmt, ap);
	va_end(ap);
	if (n < 0) {
		part = NULL;
		return;
	}
	/* Never cut silently: a reason that does not fit loses its middle,
	 * marked, and keeps its end ("... misses the fewest"). */
	all = moat_xasprintf("%s%s", buf, part);
	moat_text_fit(buf, len, "", all, "");
}

/* Why a backend that compiled nothing (not installed, wrong OS) cannot be
 * used: the reason its verdicts give. */
static const char *first_reason(const struct moat_verdict *props)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		if (props[i].requested && !props[i].enforced)
			return props[i].reason;
	return "";
}

/* The properties users run moat for: their files unread (credentials
 * first), nothing written outside the grants, no network beyond what was
 * declared, no tokens in the environment.  A backend missing one of these
 * is weaker than one missing any number of the others (a host's SysV IPC
 * or pids visible): counted first when none enforces everything. */
static bool property_is_core(enum moat_property i)
{
	switch (i) {
	case MOAT_P_FS_READ:
	case MOAT_P_FS_WRITE:
	case MOAT_P_FS_SECRETS:
	case MOAT_P_NET_NONE:
	case MOAT_P_NET_LOOPBACK:
	case MOAT_P_NET_ALLOW:
	case MOAT_P_ENV_CURATED:
		return true;
	default:
		return false;
	}
}

static size_t missing_core(const struct moat_verdict *props)
{
	size_t n = 0;
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		if (props[i].requested && !props[i].enforced && property_is_core((enum moat_property)i))
			n++;
	return n;
}

/* A lower-ranked backend whose never_enforces (backend.h) already misses
 * more core properties than the best so far -- or as many, and as many in
 * all -- cannot be chosen: not compiled (firejail's compile was ~0.3 ms of
 * every start on a host without user namespaces).  names: what it never
 * enforces of what is requested. */
static bool cannot_beat(const char *name, const struct moat_policy *p, const struct moat_verdict *requested,
			size_t best_core, size_t best_missing, char *names, size_t len)
{
	const struct moat_backend *b = backend_lookup(name);
	size_t core = 0, all = 0, used = 0;
	uint32_t never;
	int i;

	if (!b || !b->never_enforces)
		return false;
	never = b->never_enforces(p);
	names[0] = '\0';
	for (i = 0; i < MOAT_P__COUNT; i++) {
		if (!requested[i].requested || !(never & MOAT_PBIT(i)))
			continue;
		all++;
		core += property_is_core((enum moat_property)i);
		if (used < len) {
			int w = snprintf(names + used, len - used, "%s%s", used ? ", " : "",
					 moat_property_name((enum moat_property)i));
			used += w > 0 ? (size_t)w : 0;
		}
	}
	return core > best_core || (core == best_core && all >= best_missing);
}

/* `auto`: the first backend in the ranking (registry.c, docs/backends.md)
 * that enforces every requested property; when none does, the one that
 * misses the fewest of the core properties above, then the fewest in all,
 * the higher-ranked on a tie (a count alone once chose firejail, missing
 * fs.read and fs.secrets, over native missing fs.write's metadata, the
 * host's IPC and its pids, on a host without user namespaces).  The
 * ranking is walked only as far as needed: on a host where native
 * enforces everything, no other backend is looked at (no cost). */
static int choose_auto(const struct moat_policy *p, const struct moat_host *h, struct moat_plan *plan,
		       struct moat_error *err)
{
	const char *const *rank = backend_ranking();
	cleanup_free struct candidate_store *store = NULL;
	struct candidate in_plan, in_store, *best = NULL, *cand;
	size_t best_missing = (size_t)-1, best_core = (size_t)-1, i;
	char names[256];

	candidate_in_plan(&in_plan, plan);
	plan->backend_reason[0] = '\0';
	for (i = 0; rank[i]; i++) {
		size_t missing, core;

		if (best_missing != (size_t)-1 && cannot_beat(rank[i], p, plan->props, best_core, best_missing, names,
							      sizeof(names))) {
			appendf(plan->backend_reason, sizeof(plan->backend_reason),
				"; %s cannot enforce %s (not compiled: it would not miss fewer)", rank[i], names);
			continue;
		}
		/* Into whichever of the two slots does not hold the best so far:
		 * the plan's own first, the store only once the plan's holds it. */
		if (best != &in_plan) {
			cand = &in_plan;
		} else {
			if (!store) {
				store = moat_xmalloc(sizeof(*store));
				backend_plan_init(&store->compiled);
			}
			candidate_in_store(&in_store, store);
			cand = &in_store;
		}
		if (candidate_compile(cand, rank[i], p, h, plan, NULL, err) < 0) {
			if (best == &in_store)
				candidate_free(best);
			return -1;
		}
		missing = missing_names(cand->props, names, sizeof(names));
		core = missing_core(cand->props);
		if (missing == 0)
			appendf(plan->backend_reason, sizeof(plan->backend_reason),
				"%s%s enforces every requested property", i ? "; " : "", cand->name);
		else if (compiled_nothing(cand->compiled))
			appendf(plan->backend_reason, sizeof(plan->backend_reason), "%s%s", i ? "; " : "",
				first_reason(cand->props));
		else
			appendf(plan->backend_reason, sizeof(plan->backend_reason), "%s%s lacks %s", i ? "; " : "",
				cand->name, names);
		if (core < best_core || (core == best_core && missing < best_missing)) {
			if (best)
				candidate_free(best); /* its slot is free for the next one */
			best = cand;
			best_missing = missing;
			best_core = core;
		} else {
			candidate_free(cand);
		}
		if (missing == 0)
			break;
	}
	if (best_missing > 0)
		appendf(plan->backend_reason, sizeof(plan->backend_reason),
			"; none enforces every requested property: %s misses the fewest (of the file, network "
			"and environment properties first)",
			best ? best->name : "no backend");
	candidate_adopt(plan, best ? best : &in_plan); /* none: an empty ranking */
	return 0;
}

static int build(const struct moat_policy *p, const struct moat_host *h, const char *export_dir,
		 struct moat_plan *plan, struct moat_error *err)
{
	bool missing = false;
	size_t i;

	memset(plan, 0, sizeof(*plan));
	backend_plan_init(&plan->compiled);
	plan->backend_asked = p->backend;
	if (env_build(p, environ, &plan->envp, &plan->env_names, err) < 0)
		return -1;
	moat_timeline_mark("plan.env");

	if (!export_dir && (p->mode == MOAT_MODE_OFF || strcmp(p->backend, "none") == 0)) {
		/* Unsandboxed: moat's own environment, with the policy's
		 * explicit --env values on top (they are what the user asked
		 * the command to see, sandbox or not). */
		env_strv_free(plan->envp);
		env_strv_free(plan->env_names);
		plan->envp = moat_xcalloc(1, sizeof(char *));
		plan->env_names = moat_xcalloc(1, sizeof(char *));
		for (i = 0; environ && environ[i]; i++) {
			const char *eq = strchr(environ[i], '=');
			cleanup_free char *name = eq ? moat_xstrndup(environ[i], (size_t)(eq - environ[i])) : NULL;
			if (name)
				env_strv_set(&plan->envp, &plan->env_names, name, eq + 1);
		}
		for (i = 0; i < p->n_env; i++)
			if (p->env[i].value)
				env_strv_set(&plan->envp, &plan->env_names, p->env[i].name, p->env[i].value);
		{
			struct candidate c;
			candidate_in_plan(&c, plan);
			if (candidate_compile(&c, backend_none.name, p, h, plan, NULL, err) < 0)
				return -1;
			candidate_adopt(plan, &c);
		}
		snprintf(plan->backend_reason, sizeof(plan->backend_reason), "%s",
			 p->mode == MOAT_MODE_OFF ? "mode off" : "--backend none");
		plan->status = MOAT_STATUS_OFF;
		return 0;
	}
	if (!policy_backend_name_valid(p->backend)) {
		moat_error_set(err, MOAT_E_USAGE, 0, "unknown backend '%s'", p->backend);
		return moat_error_hint(
		    err, "backends: auto, native, bwrap, gvisor, oci, nsjail, firejail, nono, seatbelt, none");
	}
	mark_requested(p, plan);
	/* Every path, once, to its object: what each backend compiles from. */
	if (fs_plan_build(p, env_strv_get(plan->envp, "HOME"), &plan->fs, err) < 0)
		return -1;
	moat_timeline_mark("plan.fs");
	if (export_dir) {
		struct candidate c;
		const struct moat_backend *b = backend_lookup(p->backend);
		if (!b || !backend_runs_tool(b)) {
			moat_error_set(err, MOAT_E_USAGE, 0, "moat export needs an external backend, not '%s'",
				       p->backend);
			return moat_error_hint(err, "--backend bwrap, firejail, gvisor, oci, nsjail, nono or seatbelt");
		}
		candidate_in_plan(&c, plan);
		if (candidate_compile(&c, p->backend, p, h, plan, export_dir, err) < 0)
			return -1;
		candidate_adopt(plan, &c);
		snprintf(plan->backend_reason, sizeof(plan->backend_reason), "exported with --backend %s", p->backend);
	} else if (strcmp(p->backend, "auto") == 0) {
		if (choose_auto(p, h, plan, err) < 0)
			return -1;
	} else {
		struct candidate c;
		candidate_in_plan(&c, plan);
		if (candidate_compile(&c, p->backend, p, h, plan, NULL, err) < 0)
			return -1;
		candidate_adopt(plan, &c);
		snprintf(plan->backend_reason, sizeof(plan->backend_reason), "--backend %s", p->backend);
	}
	if (!export_dir && limits_uses_cgroup(&plan->limits))
		limits_name_cgroup(&plan->limits, &plan->cgroup);
	/* What the tool adds to the command's environment is listed as moat's
	 * own, so envp and the report say exactly what the command sees. */
	for (i = 0; i < plan->compiled.n_env_set; i++) {
		const char *kv = plan->compiled.env_set[i], *eq = strchr(kv, '=');
		cleanup_free char *name = moat_xstrndup(kv, (size_t)(eq - kv));
		env_strv_set(&plan->envp, &plan->env_names, name, eq + 1);
	}
	/* Without a mount namespace the private tmp is a per-run directory:
	 * programs find it through TMPDIR. */
	if (plan->compiled.in_child && plan->compiled.in_child->private_tmp_dir)
		env_strv_set(&plan->envp, &plan->env_names, "TMPDIR", plan->compiled.in_child->private_tmp_dir);
	/* go's build cache is in the private /tmp (sources/gotool.h): there,
	 * the per-run directory; where nothing keeps /tmp private, none of
	 * moat's -- the host's /tmp is anyone's, and a cache another user
	 * planted there would be what go links. */
	if (p->go_cache_in_tmp) {
		if (plan->compiled.in_child && plan->compiled.in_child->private_tmp_dir) {
			cleanup_free char *dir =
			    moat_xasprintf("%s/go-build", plan->compiled.in_child->private_tmp_dir);
			env_strv_set(&plan->envp, &plan->env_names, "GOCACHE", dir);
		} else if (!plan->props[MOAT_P_FS_TMP].enforced) {
			env_strv_unset(plan->envp, plan->env_names, "GOCACHE");
		}
	}

	for (i = 0; i < MOAT_P__COUNT; i++)
		if (plan->props[i].requested && !plan->props[i].enforced)
			missing = true;
	/* A backend whose tool is absent here (or whose OS this is not)
	 * compiled nothing to run: it is unavailable in every mode, since
	 * running the command bare under `prefer` would be a silent `off`. */
	if (compiled_nothing(&plan->compiled) && !export_dir)
		plan->status = MOAT_STATUS_UNAVAILABLE;
	else if (!missing)
		plan->status = MOAT_STATUS_ENFORCED;
	else if (p->mode == MOAT_MODE_PREFER)
		plan->status = MOAT_STATUS_DEGRADED;
	else
		plan->status = MOAT_STATUS_UNAVAILABLE;
	return 0;
}

bool plan_backend_absent(const struct moat_plan *plan)
{
	const struct moat_backend *b = plan->backend ? backend_lookup(plan->backend) : NULL;

	return plan->status == MOAT_STATUS_UNAVAILABLE && b && backend_runs_tool(b) && compiled_nothing(&plan->compiled);
}

/* On failure nothing is left for the caller to free. */
static int build_or_free(const struct moat_policy *p, const struct moat_host *h, const char *export_dir,
			 struct moat_plan *plan, struct moat_error *err)
{
	if (build(p, h, export_dir, plan, err) < 0) {
		plan_free(plan);
		return -1;
	}
	return 0;
}

int plan_build(const struct moat_policy *p, const struct moat_host *h, struct moat_plan *plan,
	       struct moat_error *err)
{
	return build_or_free(p, h, NULL, plan, err);
}

int plan_build_export(const struct moat_policy *p, const struct moat_host *h, const char *export_dir,
		      struct moat_plan *plan, struct moat_error *err)
{
	return build_or_free(p, h, export_dir, plan, err);
}

void plan_free(struct moat_plan *plan)
{
	env_strv_free(plan->envp);
	env_strv_free(plan->env_names);
	backend_plan_free(&plan->compiled);
	fs_plan_free(&plan->fs);
	memset(plan, 0, sizeof(*plan));
}
