/* The fetch phase of a package runner (api/runner.h). */
#include "api/runner.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "launch/guard.h"
#include "policy/env.h"
#include "policy/netdest.h"
#include "report/report.h"
#include "util/cleanup.h"
#include "util/jsontext.h"
#include "util/mem.h"
#include "util/ownfile.h"
#include "util/path.h"

extern char **environ;

/* What the fetch printed that moat keeps to read and to show: its end. */
#define FETCH_OUTPUT_MAX (256 * 1024)

void runner_run_free(struct runner_run *rr)
{
	runner_call_free(&rr->call);
	for (size_t i = 0; i < rr->argc; i++)
		free(rr->argv[i]);
	free(rr->argv);
	json_decref(rr->fetch);
	memset(rr, 0, sizeof(*rr));
}

/* The fetch's stdio while it runs: stdin /dev/null and stdout and stderr a
 * memory file.  stdin and stdout belong to the server (an MCP client speaks
 * JSON-RPC on them): the fetch must neither read the client's first
 * request nor write a byte the client would parse.  What it printed is
 * shown on stderr afterwards, and read for the cause when it failed. */
struct quiet_stdio {
	int saved[3];
	int mem;
};

static int stdio_quiet(struct quiet_stdio *q, struct moat_error *err)
{
	cleanup_close int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int i;

	q->mem = memfd_create("moat-fetch-output", MFD_CLOEXEC);
	if (null < 0 || q->mem < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "the fetch phase's output file");
	for (i = 0; i < 3; i++)
		q->saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
	if (q->saved[0] < 0 || q->saved[1] < 0 || q->saved[2] < 0 || dup2(null, 0) < 0 || dup2(q->mem, 1) < 0 ||
	    dup2(q->mem, 2) < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "the fetch phase's stdio");
	return 0;
}

/* stdio back as it was; what the fetch printed (its last FETCH_OUTPUT_MAX
 * bytes), NUL-terminated. */
static char *stdio_restore(struct quiet_stdio *q)
{
	off_t size;
	size_t want;
	char *out;
	ssize_t n;

	for (int i = 0; i < 3; i++)
		if (q->saved[i] >= 0) {
			dup2(q->saved[i], i);
			close(q->saved[i]);
			q->saved[i] = -1;
		}
	if (q->mem < 0)
		return moat_xstrdup("");
	size = lseek(q->mem, 0, SEEK_END);
	want = size > FETCH_OUTPUT_MAX ? FETCH_OUTPUT_MAX : size > 0 ? (size_t)size : 0;
	out = moat_xmalloc(want + 1);
	n = pread(q->mem, out, want, size - (off_t)want);
	out[n > 0 ? (size_t)n : 0] = '\0';
	close(q->mem);
	q->mem = -1;
	return out;
}

/* The fetch phase, as run.c runs a command: the guard, the placeholders,
 * the launch, the clean-up. */
static int fetch_launch(struct moat_policy *fp, struct moat_plan *plan, long long start_ns,
			struct moat_launch_result *res, char **output, struct moat_error *err)
{
	struct moat_guard guard = {.pid = -1, .fd = -1};
	struct quiet_stdio q = {.saved = {-1, -1, -1}, .mem = -1};
	int rc = -1;

	if (guard_start(&guard, plan, err) < 0)
		return -1;
	if (stdio_quiet(&q, err) == 0 && (plan->status == MOAT_STATUS_OFF ||
					  fs_placeholders_make(&plan->fs, guard_placeholder_made, &guard, err) == 0))
		rc = launch_run(fp, plan, NULL, start_ns, -1, guard.pid, res, err);
	*output = stdio_restore(&q);
	host_cleanup(plan, getpid(), false);
	guard_done(&guard);
	return rc;
}

static void say_output(const char *output)
{
	size_t n = strlen(output);

	if (n) {
		fputs(output, stderr);
		if (output[n - 1] != '\n')
			fputc('\n', stderr);
	}
}

/* The server's run that did not start, because the fetch did not end
 * well: `code` and why. */
static int fetch_failed(struct moat_launch_result *result, int code, const char *msg)
{
	memset(result, 0, sizeof(*result));
	result->exit_code = code;
	snprintf(result->failure, sizeof(result->failure), "the fetch phase: %s", msg);
	moat_say("moat: ", result->failure);
	return 1;
}

/* How to do without the fetch phase: install PKG in a directory where the
 * network is open, and run it from there. */
static void say_install_hint(const struct runner_run *rr)
{
	const struct runner_call *rc = &rr->call;
	/* The package's name and the command come from a server's config. */
	cleanup_free char *pkg = moat_text_shown(rc->packages[0]);
	cleanup_free char *cmd = moat_text_shown(rr->argv[0]);

	if (rc->kind == RUNNER_KIND_PIPX)
		fprintf(stderr,
			"moat: hint: install it where the network is open, then run it from there: `python3 -m venv DIR "
			"&& DIR/bin/pip install %s`, and `moat run --read DIR ... -- DIR/bin/COMMAND ...`\n",
			pkg);
	else if (rc->kind == RUNNER_KIND_NPM)
		fprintf(stderr,
			"moat: hint: install it where the network is open, then run it from there: `npm install "
			"--prefix DIR %s`, and `moat run --cwd DIR --read DIR ... -- %s ...`\n",
			pkg, cmd);
	else /* pnpm dlx and bunx install afresh: the command itself */
		fprintf(stderr,
			"moat: hint: install it where the network is open, then run it from there: `npm install "
			"--prefix DIR %s`, and `moat run --read DIR ... -- DIR/node_modules/.bin/COMMAND ...`\n",
			pkg);
}

/* One refused destination more in "a, b, c": the first few shown. */
#define REFUSALS_SHOWN 3
static void refusal_add(char *buf, size_t len, size_t *n, const char *text)
{
	size_t at = strlen(buf);

	if ((*n)++ < REFUSALS_SHOWN && at < len)
		snprintf(buf + at, len - at, "%s%s", at ? ", " : "", text);
}

/* The destinations of the fetch that its fence did not let through --
 * names it denied, connections it refused or kept on the sandbox's own
 * loopback (nothing of the host's listens there), requests its proxy
 * refused -- "a, b and N more" into buf; how many.  Only the registry is
 * let through, and a package whose install script downloads from elsewhere
 * (puppeteer's browser, a prebuilt binary) fails on that, while npm says
 * nothing of it. */
static size_t fetch_refusals(const struct netlog *l, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN], text[INET6_ADDRSTRLEN + 300];
	size_t n = 0, at;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n_names; i++)
		if (l->names[i].denied)
			refusal_add(buf, len, &n, l->names[i].name);
	for (size_t i = 0; i < l->n_conns; i++) {
		const struct netlog_conn *c = &l->conns[i];

		if (!c->refused && !c->local)
			continue;
		net_addr_text(c->addr.family, c->addr.family == AF_INET ? (const void *)&c->addr.v4 : (const void *)&c->addr.v6,
			      addr, sizeof(addr));
		snprintf(text, sizeof(text), "%s:%u", addr, c->port);
		refusal_add(buf, len, &n, text);
	}
	for (size_t i = 0; i < l->n_proxied; i++)
		if (l->proxied[i].refused || l->proxied[i].sni_refused) {
			snprintf(text, sizeof(text), "%.256s:%u", l->proxied[i].host, l->proxied[i].port);
			refusal_add(buf, len, &n, text);
		}
	at = strlen(buf);
	if (n > REFUSALS_SHOWN && at < len)
		snprintf(buf + at, len - at, " and %zu more", n - REFUSALS_SHOWN);
	return n;
}

/* The fetch phase is refused on this host (mode require, something its
 * policy asks for is missing: the network fence, usually). */
static int fetch_refused(const struct runner_run *rr, const struct moat_plan *fplan, struct moat_launch_result *result)
{
	const struct runner_call *rc = &rr->call;
	char msg[MOAT_ERR_MSG_MAX] = "";

	/* The network first: without it nothing can be fetched at all. */
	for (int k = -1; k < MOAT_P__COUNT && !msg[0]; k++) {
		int i = k < 0 ? MOAT_P_NET_ALLOW : k;
		const struct moat_verdict *v = &fplan->props[i];
		if (v->requested && !v->enforced) {
			snprintf(msg, sizeof(msg), "cannot fetch %s in a sandbox of its own here: %s: %s",
				 rc->packages[0], moat_property_name((enum moat_property)i), v->reason);
			break;
		}
	}
	fetch_failed(result, 125, msg);
	say_install_hint(rr);
	return 1;
}

/* The package list's cache, ROOT/npx/KEY: each directory from ROOT down
 * moat's own, made 0700 and opened without following a link (a link
 * planted there is refused, never written through). */
static int make_cache(const struct runner_call *rc, struct moat_error *err)
{
	cleanup_free char *root = runner_cache_root(environ);
	cleanup_close int rfd = -1, fd = -1;
	size_t n = root ? strlen(root) : 0;

	if (!root || strncmp(rc->cache, root, n) != 0 || rc->cache[n] != '/')
		return moat_error_set(err, MOAT_E_SYSTEM, 0, "%s is not below moat's cache directory", rc->cache);
	rfd = runner_cache_open(root, err);
	if (rfd < 0)
		return -1;
	fd = own_dirs_at(rfd, rc->cache + n + 1, root, err);
	return fd < 0 ? -1 : 0;
}

/* Not inlined: its plan (some 50 KB) would sit in runner_prepare's frame on
 * every run, and every frame below it (the runner's detection, the
 * interpreter's walk) would touch stack pages that stay resident for the
 * whole run (docs/performance.md, section 4). */
__attribute__((noinline)) static int do_fetch(struct moat_policy *p, const struct moat_host *host, bool dry_run,
					      struct runner_run *rr, struct moat_launch_result *result,
					      struct moat_error *err)
{
	struct runner_call *rc = &rr->call;
	struct moat_policy fp;
	struct moat_plan fplan;
	struct moat_launch_result fres = {0};
	char refused[512];
	struct netset_notes notes = {0};
	cleanup_free char *output = NULL;
	const char *reg;
	char msg[MOAT_ERR_MSG_MAX];
	long long t0;
	int rc_code = 125, ret = -1;
	bool have_plan = false;

	policy_init(&fp);
	/* Until the fetch ran well (or a dry run planned it): a fetch refused
	 * before it started (a registry the project may not name) is no
	 * command run as written. */
	rr->outcome = "failed";
	/* The cache must exist to be granted; a dry run makes nothing. */
	if (!dry_run && make_cache(rc, err) < 0) {
		moat_error_wrap(err, "%s: moat's cache for %s", rc->name, rc->packages[0]);
		/* A directory of moat's that is not its own has its fix. */
		if (!err->hint[0])
			moat_error_hint(err, "moat keeps fetched packages under $XDG_CACHE_HOME/moat (else "
					     "~/.cache/moat): set XDG_CACHE_HOME to a directory of yours");
		goto out;
	}
	if (runner_fetch_policy(rc, p, environ, &fp, &notes, err) < 0)
		goto out;
	for (size_t i = 0; i < notes.n; i++)
		moat_say("moat: ", notes.v[i]);
	/* A dry run shows a cache it did not make as not granted yet (made
	 * when the fetch runs), and so nothing in it to unprotect. */
	if (dry_run && access(rc->cache, F_OK) != 0) {
		for (size_t i = 0; i < fp.n_paths; i++)
			if (strcmp(fp.paths[i].path, rc->cache) == 0)
				fp.paths[i].optional = true;
		for (size_t i = 0; i < fp.n_unprotect; i++)
			free(fp.unprotect[i].path);
		fp.n_unprotect = 0;
	}
	if (plan_build(&fp, host, &fplan, err) < 0) {
		moat_error_wrap(err, "%s: the fetch phase for %s", rc->name, rc->packages[0]);
		goto out;
	}
	have_plan = true;
	if (dry_run) {
		rr->fetch = report_build(&fp, host, &fplan, NULL);
		rr->outcome = "would fetch";
		ret = 0;
		goto out;
	}
	/* The fetch's network is the fence to its registry.  Where the fence
	 * cannot be made (no network namespace), mode prefer would run the
	 * fetch with the network closed, and npm said only that the registry
	 * could not be reached, sending the user to debug a registry that
	 * works. */
	if (fplan.status == MOAT_STATUS_UNAVAILABLE ||
	    (fplan.props[MOAT_P_NET_ALLOW].requested && !fplan.props[MOAT_P_NET_ALLOW].enforced)) {
		rr->fetch = report_build(&fp, host, &fplan, NULL);
		rr->outcome = "failed";
		ret = fetch_refused(rr, &fplan, result);
		goto out;
	}
	reg = runner_registry_shown(rc, &fp);
	{
		char *text = moat_xasprintf("%s: fetching %s from %s into %s (a sandbox of its own: that registry, "
					    "that cache)",
					    rc->name, rc->packages[0], reg, rc->cache);
		moat_say("moat: ", text); /* names from a server's config */
		free(text);
	}
	t0 = moat_now_ns();
	if (fetch_launch(&fp, &fplan, t0, &fres, &output, err) < 0) {
		say_output(output);
		goto out;
	}
	say_output(output);
	rr->fetch = report_build(&fp, host, &fplan, &fres);
	if (fres.signal && !fres.timed_out) {
		/* moat was told to stop (a forwarded SIGTERM): the server does
		 * not start either. */
		rr->outcome = "failed";
		snprintf(msg, sizeof(msg), "%s ended by signal %d", rc->packages[0], fres.signal);
		ret = fetch_failed(result, fres.exit_code, msg);
		goto out;
	}
	if (fres.timed_out) {
		rr->outcome = "failed";
		snprintf(msg, sizeof(msg), "fetching %s took longer than %.0f s", rc->packages[0], fp.limits.timeout_s);
		ret = fetch_failed(result, 125, msg);
		goto out;
	}
	if (!fres.executed || fres.exit_code != 0 || !runner_find_install(rc)) {
		rr->outcome = "failed";
		if (!fres.executed)
			snprintf(msg, sizeof(msg), "%s did not start: %.900s", rc->tool, fres.failure);
		else if (fres.exit_code != 0)
			rc_code = runner_fetch_failure(rc, output, reg, msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "%s ended well but %s has no command %s in moat's cache (%s)",
				 rc->tool, rc->packages[0], rc->cmd ? rc->cmd : "of its own", rc->cache);
		ret = fetch_failed(result, fres.executed && fres.exit_code != 0 ? rc_code : 125, msg);
		if (fres.executed && fres.exit_code != 0 && fetch_refusals(&fres.netlog, refused, sizeof(refused))) {
			cleanup_free char *line = moat_xasprintf(
			    "the fetch's network is the registry alone, and the install reached for %s, which it does "
			    "not let through: an install script that downloads from elsewhere fails so",
			    refused);

			moat_say("moat: ", line); /* names the command asked for */
			say_install_hint(rr);
		}
		goto out;
	}
	rr->outcome = "fetched";
	ret = 0;
out:
	launch_result_free(&fres);
	if (have_plan) {
		plan_free(&fplan);
	}
	netset_notes_free(&notes);
	policy_free(&fp);
	return ret;
}

/* `npx tsc` run from below its project (repo/src) with the command in the
 * project's node_modules/.bin: that node_modules, read-only, is where npx
 * finds its project and the command (without it, npx asked the registry
 * for the package "tsc", another program).  The plan is made again with it,
 * only when no grant covers it already. */
static int local_tree_visible(struct moat_policy *p, const struct moat_host *host, struct moat_plan *plan,
			      const struct runner_call *rc, struct moat_error *err)
{
	struct moat_origin o = {.source = "the project's node_modules, where the package runner finds the command"};
	cleanup_free struct moat_plan *again = NULL;
	char real[PATH_MAX];

	/* Only a node_modules that is a directory of the project's, not a link
	 * a repository planted to have a grant of somewhere else (HOME). */
	if (!rc->local_tree || !realpath(rc->local_tree, real) || strcmp(real, rc->local_tree) != 0)
		return 0;
	for (size_t i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY && path_within(rc->local_tree, p->paths[i].path))
			return 0;
	policy_add_path(p, rc->local_tree, MOAT_ACCESS_READ, false, o);
	p->paths[p->n_paths - 1].from_profile = true;
	again = moat_xmalloc(sizeof(*again));
	if (plan_build(p, host, again, err) < 0)
		return moat_error_wrap(err, "%s: %s", rc->name, rc->local_tree);
	plan_free(plan);
	*plan = *again;
	return 0;
}

int runner_prepare(struct moat_policy *p, const struct moat_host *host, struct moat_plan *plan, bool dry_run,
		   long long start_ns, struct runner_run *rr, struct moat_launch_result *result, struct moat_error *err)
{
	struct runner_call *rc = &rr->call;
	cleanup_free struct moat_plan *server = NULL; /* on the heap: see do_fetch */
	int ret;

	(void)start_ns;
	memset(rr, 0, sizeof(*rr));
	/* A sandbox that is off, or refused anyway: nothing to split. */
	if (plan->status == MOAT_STATUS_OFF || plan->status == MOAT_STATUS_UNAVAILABLE)
		return 0;
	if (runner_detect(p, environ, rc, err) < 0)
		return -1;
	if (!rc->name)
		return 0;
	rr->argc = p->argc;
	rr->argv = moat_xcalloc(p->argc + 1, sizeof(char *));
	for (size_t i = 0; i < p->argc; i++)
		rr->argv[i] = moat_xstrdup(p->argv[i]);
	if (rc->state == RUNNER_AS_WRITTEN) {
		rr->outcome = "as written";
		if (rc->note)
			moat_say("moat: ", rc->why);
		return local_tree_visible(p, host, plan, rc, err);
	}
	if (rc->state == RUNNER_FETCH) {
		ret = do_fetch(p, host, dry_run, rr, result, err);
		if (ret != 0 || dry_run)
			return ret;
	} else {
		rr->outcome = "cached";
	}
	runner_server_policy(p, rc, environ);
	server = moat_xmalloc(sizeof(*server));
	if (plan_build(p, host, server, err) < 0)
		return moat_error_wrap(err, "%s: the server phase", rc->name);
	plan_free(plan);
	*plan = *server;
	return 0;
}

void runner_report_add(json_t *report, const struct runner_run *rr)
{
	const struct runner_call *rc = &rr->call;
	json_t *o, *a;

	if (!report || !rc->name)
		return;
	o = json_object();
	json_object_set_new(o, "name", json_string(rc->name));
	a = json_array();
	for (size_t i = 0; i < rr->argc; i++)
		json_array_append_new(a, json_string(rr->argv[i]));
	json_object_set_new(o, "argv", a);
	a = json_array();
	for (size_t i = 0; i < rc->n_packages; i++)
		json_array_append_new(a, json_string(rc->packages[i]));
	json_object_set_new(o, "packages", a);
	json_object_set_new(o, "phases", json_integer(rc->state == RUNNER_AS_WRITTEN ? 1 : 2));
	json_object_set_new(o, "outcome", json_string(rr->outcome ? rr->outcome : "as written"));
	if (rc->why)
		json_object_set_new(o, "why", json_string(rc->why));
	if (rc->cache)
		json_object_set_new(o, "cache", json_string(rc->cache));
	if (rc->state != RUNNER_AS_WRITTEN) {
		struct netset_urls regs;

		runner_cache_registries(rc, &regs);
		a = json_array();
		for (size_t i = 0; i < regs.n; i++)
			json_array_append_new(a, json_pack("{s:o, s:o}", "key", json_text(regs.keys[i]), "url",
								     json_text(regs.urls[i])));
		if (regs.n)
			json_object_set_new(o, "registries", a);
		else
			json_decref(a);
		netset_urls_free(&regs);
	}
	if (rc->bin && rc->state != RUNNER_AS_WRITTEN) {
		json_object_set_new(o, "installed", json_string(rc->tree));
		json_object_set_new(o, "version", json_string(rc->version));
	}
	json_object_set_new(report, "runner", o);
	if (rr->fetch)
		json_object_set(report, "fetch", rr->fetch);
}
