/* The probe behind `moat probe` and moat_probe_json() (include/moat/moat.h):
 * what this host offers, which external sandboxes are installed, and what
 * each backend can enforce here, as the moat.probe/1 JSON document
 * (docs/degradation.md).
 *
 * Everything below reads the host through host_probe() (so MOAT_HOST_LIMIT
 * lowers it exactly as it lowers a run), plus a few checks that fork and are
 * too costly for every run (a real user namespace, a fresh /proc, cgroups,
 * `X --version`).  Those honour the limit too: the probe never reports more
 * than a run would get.  Every missing feature carries the reason and the
 * fix for Debian/Ubuntu and Fedora (and macOS where it matters). */
#include "api/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "backends/backend.h"
#include "host/hints.h"
#include "host/host.h"
#include "host/trials.h"
#include "launch/launch.h"
#include "launch/signals.h"
#include "moat/moat.h"
#include "plan/plan.h"
#include "policy/properties.h"
#include "policy/policy.h"
#include "policy/profiles.h"
#include "util/jsontext.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/mem.h"

#ifndef MOAT_VERSION
#define MOAT_VERSION "0.0.0"
#endif

#define PROBE_SCHEMA	   "moat.probe/1"
#define VERSION_TIMEOUT_MS 2000

enum {
	F_LANDLOCK,
	F_LANDLOCK_TRUNCATE,
	F_LANDLOCK_TCP,
	F_LANDLOCK_SCOPE,
	F_SECCOMP,
	F_SECCOMP_NOTIF,
	F_SECCOMP_TSYNC,
	F_SECCOMP_LOG,
	F_NET_FENCE,
	F_USERNS,
	F_PROC,
	F_CGROUP2,
	F_CGROUP_DELEGATION,
	F__COUNT
};

/* The features in the order of F_*: the JSON key and the table label. */
static const struct {
	const char *name, *label;
} feature_names[F__COUNT] = {
    [F_LANDLOCK] = {"landlock", "landlock"},
    [F_LANDLOCK_TRUNCATE] = {"landlock_truncate", "  truncate"},
    [F_LANDLOCK_TCP] = {"landlock_tcp", "  tcp"},
    [F_LANDLOCK_SCOPE] = {"landlock_scope", "  scoping"},
    [F_SECCOMP] = {"seccomp", "seccomp filters"},
    [F_SECCOMP_NOTIF] = {"seccomp_user_notif", "  user notification"},
    [F_SECCOMP_TSYNC] = {"seccomp_tsync", "  tsync"},
    [F_SECCOMP_LOG] = {"seccomp_log", "  log"},
    [F_NET_FENCE] = {"net_fence", "  net allow fence"},
    [F_USERNS] = {"userns", "user namespaces"},
    [F_PROC] = {"proc_mount", "mount /proc"},
    [F_CGROUP2] = {"cgroup_v2", "cgroup v2"},
    [F_CGROUP_DELEGATION] = {"cgroup_delegation", "cgroup delegation"},
};

struct feature {
	const char *name; /* JSON key */
	bool available;
	char detail[1024];
	char why[1024];
	const char *hint;
};

static void feature_set(struct feature *f, int idx, bool available, const char *hint)
{
	memset(f, 0, sizeof(*f));
	f->name = feature_names[idx].name;
	f->available = available;
	f->hint = available ? NULL : hint;
}

/* The limit's own wording, when the limit is what removed the feature. */
static const char *hint_for(const char *why, const char *hint)
{
	return why && strstr(why, "MOAT_HOST_LIMIT") ? HOST_HINT_LIMIT : hint;
}

/* ---- seccomp actions ---- */

static char *read_small_file(const char *path)
{
	cleanup_fclose FILE *f = fopen(path, "re");
	char buf[1024];
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return moat_xstrdup(buf);
}

static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while (list && (p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

/* ---- external sandbox programs ---- */

/* One executable of an external backend (the backend registry's tools[],
 * for every backend in ranking order: crun and runc both for oci). */
struct tool_info {
	const struct moat_backend *backend;
	const char *name;
	bool installed;
	char path[PATH_MAX];
	char output[256];  /* first line of `X --version` */
	char version[128]; /* the version number found in it */
	char why[256];	   /* when the version could not be read */
};

#define PROBE_TOOLS_MAX 16

static long long now_ms(void)
{
	return moat_now_ns() / 1000000;
}

/* The version number in a line such as "bubblewrap 0.8.0", "runc version
 * 1.1.5" or "runsc version release-20240212.0": the first word that starts
 * with a digit (or v+digit), or names a release. */
static void extract_version(const char *line, char *out, size_t len)
{
	cleanup_free char *copy = moat_xstrdup(line);
	char *save = NULL, *w;

	out[0] = '\0';
	for (w = strtok_r(copy, " \t,;()", &save); w; w = strtok_r(NULL, " \t,;()", &save)) {
		if ((w[0] >= '0' && w[0] <= '9') || (w[0] == 'v' && w[1] >= '0' && w[1] <= '9') ||
		    strncmp(w, "release-", 8) == 0) {
			snprintf(out, len, "%s", w);
			return;
		}
	}
}

/* `path --version`: stdin /dev/null, stdout captured, stderr dropped, in its
 * own process group, killed after VERSION_TIMEOUT_MS. */
static void tool_version(const char *path, const char *name, struct tool_info *t)
{
	char buf[4096];
	size_t got = 0;
	int fds[2], status;
	long long deadline = now_ms() + VERSION_TIMEOUT_MS;
	bool timed_out = false;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(t->why, sizeof(t->why), "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(t->why, sizeof(t->why), "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

		setpgid(0, 0);
		if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(fds[1], STDOUT_FILENO) < 0 ||
		    dup2(devnull, STDERR_FILENO) < 0)
			_exit(127);
		execl(path, name, "--version", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	setpgid(pid, pid); /* as the child does: whichever runs first */
	for (;;) {
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0) {
			timed_out = true;
			break;
		}
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!pfd.revents)
			continue;
		n = read(fds[0], buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got >= sizeof(buf) - 1)
			break;
	}
	close(fds[0]);
	/* The tool and anything it started in its group (gone already when
	 * it exited on its own). */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (strlen(buf) >= sizeof(t->output))
		buf[sizeof(t->output) - 1] = '\0'; /* keep only what the report holds */
	memcpy(t->output, buf, strlen(buf) + 1);
	extract_version(t->output, t->version, sizeof(t->version));
	if (timed_out)
		snprintf(t->why, sizeof(t->why), "`%s --version` did not answer within %d ms", name,
			 VERSION_TIMEOUT_MS);
	else if (!t->output[0])
		snprintf(t->why, sizeof(t->why), "`%s --version` printed nothing on stdout", name);
}

/* Where the tool is, found as a run finds it (backend_find_tool), and
 * what its --version says. */
static void probe_tool(const struct moat_backend *b, const char *name, struct tool_info *t)
{
	struct moat_backend one = {.name = b->name, .tools = {name}};
	cleanup_free char *found = backend_find_tool(&one, NULL);

	memset(t, 0, sizeof(*t));
	t->backend = b;
	t->name = name;
	t->installed = found != NULL;
	if (found) {
		snprintf(t->path, sizeof(t->path), "%s", found);
		tool_version(t->path, name, t);
	}
}

/* ---- the native backend: a plan for the strict profile on this host ---- */

struct native_probe {
	bool ok;
	char error[MOAT_ERR_MSG_MAX];
	struct moat_verdict props[MOAT_P__COUNT];
	struct limits_plan limits; /* of a plan with the tree limits declared */
};

/* The limits the probe declares for its "limits" table, so that it says what
 * a run with --memory, --pids and --cpu gets here: the same decision a run
 * makes (resolve/limits.h), so probe and run agree. */
#define PROBE_MEMORY (INT64_C(1) << 30)
#define PROBE_PIDS   4096
#define PROBE_CPU    3600

/* The verdicts of a plan for the strict profile with network `net`, under
 * `backend`; with `limits`, the tree limits are declared and what holds
 * them is returned there. */
static int plan_strict(const struct moat_host *h, const char *backend, enum moat_net net, struct moat_verdict *props,
		       struct limits_plan *limits, struct moat_error *err)
{
	struct moat_policy p;
	struct moat_plan plan;
	char cwd[PATH_MAX];
	const char *exe = access("/bin/true", X_OK) == 0 ? "/bin/true" : "/usr/bin/true";
	char *argv[] = {(char *)"true", NULL};
	struct profile_context ctx;
	cleanup_free char *home = NULL;
	int rc = -1;

	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	policy_init(&p);
	policy_set_argv(&p, argv, 1);
	p.exe = moat_xstrdup(exe);
	p.cwd = moat_xstrdup(cwd);
	home = path_home_for_rules(getenv("HOME")); /* util/path.h */
	ctx = (struct profile_context){.home = home, .cwd = p.cwd, .exe = p.exe, .argv = p.argv};
	if (profile_apply(&p, "strict", &ctx, err) < 0)
		goto out;
	p.net = net;
	if (limits) {
		p.limits.memory_bytes = PROBE_MEMORY;
		p.limits.pids = PROBE_PIDS;
		p.limits.cpu_seconds = PROBE_CPU;
	}
	free(p.backend);
	p.backend = moat_xstrdup(backend);
	/* prefer: the plan is computed in full whatever is missing. */
	p.mode = MOAT_MODE_PREFER;
	if (plan_build(&p, h, &plan, err) < 0)
		goto out;
	if (props)
		memcpy(props, plan.props, sizeof(plan.props));
	if (limits)
		*limits = plan.limits;
	plan_free(&plan);
	rc = 0;
out:
	policy_free(&p);
	return rc;
}

/* What a backend enforces here: the verdicts of the plan for the strict
 * profile (no network), and net.loopback from the same profile with --net
 * loopback, which is the only policy that asks for it. */
static void probe_backend(const struct moat_host *h, const char *backend, struct native_probe *np)
{
	struct moat_verdict loop[MOAT_P__COUNT];
	struct moat_error err = {0};
	int i;

	memset(np, 0, sizeof(*np));
	if (plan_strict(h, backend, MOAT_NET_NONE, np->props, NULL, &err) < 0 ||
	    plan_strict(h, backend, MOAT_NET_LOOPBACK, loop, NULL, &err) < 0 ||
	    plan_strict(h, backend, MOAT_NET_NONE, NULL, &np->limits, &err) < 0) {
		snprintf(np->error, sizeof(np->error), "%s", err.message);
		return;
	}
	np->props[MOAT_P_NET_LOOPBACK] = loop[MOAT_P_NET_LOOPBACK];
	for (i = 0; i < MOAT_P__COUNT; i++) {
		struct moat_verdict *v = &np->props[i];
		if (!v->enforced && !v->reason[0]) {
			snprintf(v->reason, sizeof(v->reason), "the %s backend does not implement %s", backend,
				 moat_property_name((enum moat_property)i));
			snprintf(v->hint, sizeof(v->hint), "%s",
				 i == MOAT_P_NET_ALLOW ? "--net all gives the whole network, unfiltered; --net "
							 "loopback or none are enforced"
						       : "");
		}
	}
	np->ok = true;
}

/* ---- gathering ---- */

struct probe {
	struct moat_host h;
	struct moat_cgroup_info cg;
	char *actions; /* /proc/sys/kernel/seccomp/actions_avail, or NULL */
	struct feature f[F__COUNT];
	struct tool_info t[PROBE_TOOLS_MAX];
	size_t n_tools;
	struct native_probe native;
	struct native_probe ext[12]; /* the external backends, in ranking order */
	const char *ext_name[12];
	size_t n_ext;
};

static void landlock_abi_feature(struct probe *pr, int idx, int need, const char *what)
{
	struct feature *f = &pr->f[idx];
	int abi = pr->h.landlock_abi;

	feature_set(f, idx, abi >= need, HOST_HINT_LANDLOCK_ABI);
	snprintf(f->detail, sizeof(f->detail), "%s (Landlock ABI %d)", what, need);
	if (abi == 0) {
		snprintf(f->why, sizeof(f->why), "no Landlock: %s", pr->h.landlock_why);
		f->hint = hint_for(pr->h.landlock_why, HOST_HINT_LANDLOCK);
	} else if (abi < need) {
		snprintf(f->why, sizeof(f->why), "Landlock ABI %d is below %d%s", abi, need,
			 pr->h.limited_by[0] ? " (MOAT_HOST_LIMIT may have lowered it)" : "");
		if (pr->h.limited_by[0] && strstr(pr->h.limited_by, "landlock"))
			f->hint = HOST_HINT_LIMIT;
	}
}

static void gather(struct probe *pr)
{
	struct moat_host *h = &pr->h;
	struct feature *f;
	char how[128];
	size_t i;

	/* Landlock */
	f = &pr->f[F_LANDLOCK];
	feature_set(f, F_LANDLOCK, h->landlock_abi > 0, hint_for(h->landlock_why, HOST_HINT_LANDLOCK));
	if (h->landlock_abi > 0) {
		if (h->landlock_errata >= 0)
			snprintf(f->detail, sizeof(f->detail), "ABI %d, errata 0x%x", h->landlock_abi,
				 (unsigned)h->landlock_errata);
		else
			snprintf(f->detail, sizeof(f->detail), "ABI %d, errata unknown", h->landlock_abi);
	} else {
		snprintf(f->why, sizeof(f->why), "%s", h->landlock_why);
	}
	landlock_abi_feature(pr, F_LANDLOCK_TRUNCATE, 3, "refuses truncate(2)");
	landlock_abi_feature(pr, F_LANDLOCK_TCP, 4, "TCP bind/connect rules");
	landlock_abi_feature(pr, F_LANDLOCK_SCOPE, 6, "abstract unix socket and signal scoping");

	/* seccomp: the syscall answers, and the sysctl list must agree (AND:
	 * never more than either says). */
	f = &pr->f[F_SECCOMP];
	feature_set(f, F_SECCOMP, h->seccomp, hint_for(h->seccomp_why, HOST_HINT_SECCOMP));
	if (h->seccomp)
		snprintf(f->detail, sizeof(f->detail), "actions: %s", pr->actions ? pr->actions : "(list unreadable)");
	else
		snprintf(f->why, sizeof(f->why), "%s", h->seccomp_why);

	{
		static const struct {
			int idx;
			const char *action, *what;
		} sub[] = {
		    {F_SECCOMP_NOTIF, "user_notif", "SECCOMP_RET_USER_NOTIF"},
		    {F_SECCOMP_TSYNC, NULL, "SECCOMP_FILTER_FLAG_TSYNC"},
		    {F_SECCOMP_LOG, "log", "SECCOMP_RET_LOG"},
		};
		for (i = 0; i < ARRAY_LEN(sub); i++) {
			bool have = sub[i].idx == F_SECCOMP_NOTIF   ? h->seccomp_user_notif
				    : sub[i].idx == F_SECCOMP_TSYNC ? h->seccomp_tsync
								    : h->seccomp_log;
			bool listed = !sub[i].action || !pr->actions || word_in(pr->actions, sub[i].action);

			f = &pr->f[sub[i].idx];
			feature_set(f, sub[i].idx, have && listed, HOST_HINT_SECCOMP_NEWER);
			snprintf(f->detail, sizeof(f->detail), "%s", sub[i].what);
			if (!h->seccomp) {
				snprintf(f->why, sizeof(f->why), "no seccomp: %s", h->seccomp_why);
				f->hint = hint_for(h->seccomp_why, HOST_HINT_SECCOMP);
			} else if (!have) {
				snprintf(f->why, sizeof(f->why), "the kernel does not accept %s", sub[i].what);
			} else if (!listed) {
				snprintf(f->why, sizeof(f->why),
					 "'%s' is not in /proc/sys/kernel/seccomp/actions_avail", sub[i].action);
			}
		}
	}

	/* The fence of net allow (kernel/netfence.h): what the kernel has for
	 * it; the native backend also needs namespaces and Landlock ABI 4,
	 * which its net.allow verdict below says. */
	f = &pr->f[F_NET_FENCE];
	feature_set(f, F_NET_FENCE, h->net_fence, hint_for(h->net_fence_why, HOST_HINT_NET_FENCE));
	if (h->net_fence)
		snprintf(f->detail, sizeof(f->detail), "user notification with ADDFD, pidfd_getfd");
	else
		snprintf(f->why, sizeof(f->why), "%s", h->net_fence_why);

	/* user namespaces: the knobs (host_probe) and a real unshare. */
	f = &pr->f[F_USERNS];
	feature_set(f, F_USERNS, false, NULL);
	f->available = host_try_userns(h, f->why, sizeof(f->why));
	f->hint = f->available ? NULL : hint_for(f->why, host_userns_hint(&pr->h, false));
	snprintf(f->detail, sizeof(f->detail), "%s",
		 f->available ? (h->root ? "usable (probed as root)" : "usable unprivileged") : "");

	f = &pr->f[F_PROC];
	feature_set(f, F_PROC, false, NULL);
	f->available = host_try_proc_mount(h, how, sizeof(how), f->why, sizeof(f->why));
	f->hint = f->available ? NULL : hint_for(f->why, h->userns_filtered ? HOST_HINT_USERNS_FILTER : HOST_HINT_PROC);
	if (f->available)
		snprintf(f->detail, sizeof(f->detail), "a fresh /proc in new %s", how);

	/* cgroup v2 */
	host_probe_cgroup(h, true, &pr->cg);
	f = &pr->f[F_CGROUP2];
	feature_set(f, F_CGROUP2, pr->cg.v2, hint_for(pr->cg.why, HOST_HINT_CGROUP2));
	if (pr->cg.v2)
		snprintf(f->detail, sizeof(f->detail), "%s layout, mounted at %s", pr->cg.layout, pr->cg.mount);
	else
		snprintf(f->why, sizeof(f->why), "%s", pr->cg.why);
	f = &pr->f[F_CGROUP_DELEGATION];
	feature_set(f, F_CGROUP_DELEGATION, pr->cg.delegated,
		    pr->cg.v2 ? hint_for(pr->cg.why, HOST_HINT_DELEGATE) : hint_for(pr->cg.why, HOST_HINT_CGROUP2));
	if (pr->cg.delegated)
		snprintf(f->detail, sizeof(f->detail), "%s is writable (controllers: %s)", pr->cg.path,
			 pr->cg.controllers[0] ? pr->cg.controllers : "none");
	else
		snprintf(f->why, sizeof(f->why), "%s%s", pr->cg.v2 ? "" : "no cgroup v2: ", pr->cg.why);

	/* The external backends, in ranking order: each one's tools, then
	 * what it enforces. */
	probe_backend(h, "native", &pr->native);
	{
		const char *const *rank = backend_ranking();
		size_t k, n;
		for (k = 0; rank[k] && pr->n_ext < ARRAY_LEN(pr->ext); k++) {
			const struct moat_backend *b = backend_lookup(rank[k]);
			if (!b)
				continue; /* native */
			for (n = 0; n < ARRAY_LEN(b->tools) && b->tools[n] && pr->n_tools < ARRAY_LEN(pr->t); n++)
				probe_tool(b, b->tools[n], &pr->t[pr->n_tools++]);
			pr->ext_name[pr->n_ext] = rank[k];
			probe_backend(h, rank[k], &pr->ext[pr->n_ext++]);
		}
	}
}

/* ---- output ---- */

static json_t *feature_json(const struct feature *f)
{
	json_t *o = json_pack("{s:b, s:o}", "available", f->available, "detail", json_text(f->detail));

	if (!f->available) {
		json_object_set_new(o, "reason", json_text(f->why));
		json_object_set_new(o, "hint", json_text(f->hint ? f->hint : ""));
	}
	return o;
}

static json_t *actions_json(const char *actions)
{
	json_t *a = json_array();
	cleanup_free char *copy = actions ? moat_xstrdup(actions) : NULL;
	char *save = NULL, *w;

	for (w = copy ? strtok_r(copy, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save))
		json_array_append_new(a, json_text(w));
	return a;
}

static json_t *native_json(const struct native_probe *np)
{
	json_t *o = json_object(), *props = json_object(), *enf = json_array(), *miss = json_array();
	int i;

	json_object_set_new(o, "available", json_boolean(np->ok));
	json_object_set_new(o, "policy", json_text("profile strict; net.loopback with --net loopback"));
	if (!np->ok) {
		json_object_set_new(o, "reason", json_text(np->error));
		json_decref(props);
		json_decref(enf);
		json_decref(miss);
		return o;
	}
	for (i = 0; i < MOAT_P__COUNT; i++) {
		const struct moat_verdict *v = &np->props[i];
		const char *name = moat_property_name((enum moat_property)i);

		if (v->enforced) {
			json_object_set_new(
			    props, name,
			    json_pack("{s:s, s:o}", "status", "enforced", "mechanism", json_text(v->mechanism)));
			json_array_append_new(enf, json_text(name));
		} else {
			json_object_set_new(props, name,
					    json_pack("{s:s, s:o, s:o}", "status", "missing", "reason",
						      json_text(v->reason), "hint", json_text(v->hint)));
			json_array_append_new(miss, json_text(name));
		}
	}
	json_object_set_new(o, "enforced", enf);
	json_object_set_new(o, "missing", miss);
	json_object_set_new(o, "properties", props);
	{
		json_t *lim = json_object();
		for (i = 0; i < LIM__COUNT; i++) {
			const struct limit_verdict *l = &np->limits.lim[i];
			if (!l->declared)
				continue;
			json_object_set_new(lim, limit_name((enum limit_kind)i),
					    l->enforced ? json_pack("{s:s, s:o}", "status", "enforced", "mechanism",
								    json_text(l->mechanism))
							: json_pack("{s:s, s:o, s:o}", "status", "missing", "reason",
								    json_text(l->reason), "hint", json_text(l->hint)));
		}
		json_object_set_new(o, "limits", lim);
	}
	return o;
}

static json_t *probe_json(const struct probe *pr)
{
	const struct moat_host *h = &pr->h;
	json_t *j = json_object(), *feat = json_object(), *tl = json_object(), *be = json_object();
	size_t i;

	/* The flat host facts first: the same names as the report's "host". */
	json_object_set_new(j, "schema", json_text(PROBE_SCHEMA));
	json_object_set_new(j, "moat_version", json_text(MOAT_VERSION));
	json_object_set_new(j, "kernel", json_text(h->kernel));
	json_object_set_new(j, "machine", json_text(h->machine));
	json_object_set_new(j, "landlock_abi", json_integer(h->landlock_abi));
	json_object_set_new(j, "landlock_errata",
			    h->landlock_errata >= 0 ? json_integer(h->landlock_errata) : json_null());
	json_object_set_new(j, "seccomp", json_boolean(h->seccomp));
	json_object_set_new(j, "seccomp_actions", actions_json(h->seccomp ? pr->actions : NULL));
	json_object_set_new(j, "userns", json_boolean(pr->f[F_USERNS].available));
	json_object_set_new(j, "userns_blocked_by", json_text(pr->f[F_USERNS].available ? "" : pr->f[F_USERNS].why));
	json_object_set_new(j, "root", json_boolean(h->root));
	json_object_set_new(j, "uid", json_integer((json_int_t)h->uid));
	json_object_set_new(j, "gid", json_integer((json_int_t)h->gid));
	json_object_set_new(j, "yama_ptrace_scope", json_integer(h->yama_ptrace_scope));
	json_object_set_new(j, "limited_by", json_text(h->limited_by));

	for (i = 0; i < F__COUNT; i++)
		json_object_set_new(feat, pr->f[i].name, feature_json(&pr->f[i]));
	json_object_set_new(j, "features", feat);
	json_object_set_new(j, "cgroup",
			    json_pack("{s:s, s:o, s:o, s:o, s:b, s:b}", "layout", pr->cg.layout, "mount",
				      json_text(pr->cg.mount), "path", json_text(pr->cg.path), "controllers",
				      json_text(pr->cg.controllers), "v2", pr->cg.v2, "delegated", pr->cg.delegated));

	for (i = 0; i < pr->n_tools; i++) {
		const struct tool_info *t = &pr->t[i];
		json_t *o = json_pack("{s:b, s:s, s:b}", "installed", t->installed, "what", t->backend->summary,
				      "backend_in_this_build", true);

		if (t->installed) {
			json_object_set_new(o, "path", json_text(t->path));
			json_object_set_new(o, "version", t->version[0] ? json_text(t->version) : json_null());
			json_object_set_new(o, "version_output", json_text(t->output));
			if (t->why[0])
				json_object_set_new(o, "reason", json_text(t->why));
		} else {
			json_object_set_new(o, "reason", json_text("not found in PATH"));
			json_object_set_new(o, "hint", json_text(t->backend->install_hint));
		}
		json_object_set_new(tl, t->name, o);
	}
	json_object_set_new(j, "tools", tl);

	json_object_set_new(be, "native", native_json(&pr->native));
	for (i = 0; i < pr->n_ext; i++)
		json_object_set_new(be, pr->ext_name[i], native_json(&pr->ext[i]));
	json_object_set_new(be, "none",
			    json_pack("{s:b, s:s, s:[], s:[], s:{}}", "available", true, "policy",
				      "--mode off / --backend none: runs unsandboxed", "enforced", "missing",
				      "properties"));
	json_object_set_new(j, "backends", be);
	return j;
}

/* The table labels of the features, by JSON key, in the order of F_*. */
const char *probe_feature_label(const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(feature_names); i++)
		if (strcmp(feature_names[i].name, key) == 0)
			return feature_names[i].label;
	return key;
}

json_t *probe_document(struct moat_error *err)
{
	struct probe *pr = moat_xcalloc(1, sizeof(*pr));
	json_t *j;

	if (host_probe(&pr->h, err) < 0) {
		free(pr);
		return NULL;
	}
	pr->actions = read_small_file("/proc/sys/kernel/seccomp/actions_avail");
	gather(pr);
	j = probe_json(pr);
	free(pr->actions);
	free(pr);
	return j;
}

char *probe_document_text(const json_t *doc)
{
	return json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
}

char *moat_probe_json(int flags)
{
	struct moat_error err = {0};
	json_t *j;
	char *s;

	if (flags != 0) {
		errno = EINVAL;
		return NULL;
	}
	/* The trials fork and wait for their children: under an embedder's
	 * SIGCHLD at SIG_IGN the kernel reaped them first, and its handler
	 * that reaps with waitpid(-1) took them, and the wait's ECHILD read
	 * as "no user namespaces", "no fresh /proc".  SIGCHLD at its default
	 * meanwhile, and the caller's handling back after (launch/signals.h:
	 * a SIGCHLD for the caller's own child is raised again). */
	signals_capture_caller();
	j = probe_document(&err);
	signals_release();
	if (!j) {
		moat_error_print(&err);
		errno = EINVAL;
		return NULL;
	}
	s = probe_document_text(j);
	json_decref(j);
	if (!s)
		errno = ENOMEM;
	return s;
}

void moat_free(void *p)
{
	free(p);
}
