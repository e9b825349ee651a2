#include "plan/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/env.h"
#include "util/cleanup.h"
#include "util/mem.h"

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

void verdict_enforce(struct moat_verdict *v, const char *fmt, ...)
{
	va_list ap;

	v->enforced = true;
	v->reason[0] = '\0';
	v->hint[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(v->mechanism, sizeof(v->mechanism), fmt, ap);
	va_end(ap);
}

void verdict_missing(struct moat_verdict *v, const char *hint, const char *fmt, ...)
{
	va_list ap;

	v->enforced = false;
	v->mechanism[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
	snprintf(v->hint, sizeof(v->hint), "%s", hint ? hint : "");
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
	plan->props[MOAT_P_IPC_ABSTRACT].requested = true;
	plan->props[MOAT_P_IPC_UNIX].requested = true;
	plan->props[MOAT_P_PROC_PID].requested = true;
	plan->props[MOAT_P_PROC_PTRACE].requested = true;
	plan->props[MOAT_P_SYS_FILTER].requested = true;
	plan->props[MOAT_P_TTY_INJECT].requested = true;
	plan->props[MOAT_P_ENV_CURATED].requested = true;
	plan->props[MOAT_P_FD_CLEAN].requested = true;
	plan->props[MOAT_P_RES_LIMITS].requested = true;
	for (i = 0; i < MOAT_P__COUNT; i++)
		if (p->require & MOAT_PBIT(i))
			plan->props[i].requested = true;
}

int plan_build(const struct moat_policy *p, const struct moat_host *h, struct moat_plan *plan,
	       struct moat_error *err)
{
	bool missing = false;
	size_t i;

	memset(plan, 0, sizeof(*plan));
	native_plan_init(&plan->native);
	if (env_build(p, environ, &plan->envp, &plan->env_names, err) < 0)
		return -1;

	if (p->mode == MOAT_MODE_OFF || strcmp(p->backend, "none") == 0) {
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
		plan->backend = "none";
		plan->status = MOAT_STATUS_OFF;
		return 0;
	}
	if (strcmp(p->backend, "auto") != 0 && strcmp(p->backend, "native") != 0) {
		moat_error_set(err, MOAT_E_USAGE, 0, "backend '%s' is not available in this build", p->backend);
		return moat_error_hint(err, "use --backend native or auto");
	}
	plan->backend = "native";
	mark_requested(p, plan);
	if (native_compile(p, h, &plan->native, plan->props, err) < 0)
		return -1;
	/* Without a mount namespace the private tmp is a per-run directory:
	 * programs find it through TMPDIR. */
	if (plan->native.private_tmp_dir)
		env_strv_set(&plan->envp, &plan->env_names, "TMPDIR", plan->native.private_tmp_dir);

	for (i = 0; i < MOAT_P__COUNT; i++)
		if (plan->props[i].requested && !plan->props[i].enforced)
			missing = true;
	if (!missing)
		plan->status = MOAT_STATUS_ENFORCED;
	else if (p->mode == MOAT_MODE_PREFER)
		plan->status = MOAT_STATUS_DEGRADED;
	else
		plan->status = MOAT_STATUS_UNAVAILABLE;
	return 0;
}

void plan_free(struct moat_plan *plan)
{
	env_strv_free(plan->envp);
	env_strv_free(plan->env_names);
	native_plan_free(&plan->native);
	memset(plan, 0, sizeof(*plan));
}
