/* What an external backend would run, written to a directory instead of
 * run.  For oci and gvisor that is an OCI bundle (config.json and its
 * rootfs) that crun, runc or runsc run as they are -- the bridge to
 * container platforms; for the others it is the tool's argv (argv.json) and
 * the files it reads (seatbelt's profile.sb).  Golden tests compare these
 * files (tests/golden/). */
#include "api/export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "backends/backend.h"
#include "host/host.h"
#include "policy/env.h"
#include "plan/plan.h"
#include "report/report.h"
#include "sources/cli.h"
#include "sources/config.h"
#include "util/cleanup.h"
#include "util/jsontext.h"
#include "util/mem.h"
#include "util/mkdirs.h"

extern char **environ;

/* One directory from -o DIR up to the root (`name` says which).  moat
 * writes what will run there (run.sh, config.json, the seccomp program) by
 * name, as root too.  Another user who owns DIR or a directory above it,
 * or may write DIR, can put a FIFO at a name first (the write blocks for
 * ever), replace run.sh after the export (the caller then runs theirs), or
 * swap DIR for a link, through which moat would truncate and write
 * whatever it leads to.  So DIR must be moat's user's and writable by
 * nobody else, sticky or not (`-o /tmp`: any user makes names there
 * first), and those above it moat's user's or root's and writable by no
 * one else either unless sticky, as ssh and sudo check a secure path: in a
 * 0777 directory above DIR without the sticky bit any user can rename the
 * directory below it away and put their own in its place between this check
 * and the writes.  In a sticky one only the owner of the entry below (moat's
 * user or root, checked the step before) can.  With every directory on the
 * way so, no one but moat's user and root can change what the path names
 * after the check, so the backends' files written by name under DIR land
 * where the check was made.  (The test suites export below a sticky scratch
 * directory.) */
struct export_walk {
	const char *dir; /* -o as given */
	char *name;	 /* the directory reached, for messages */
	bool top;	 /* DIR itself */
	struct moat_error *err;
};

static int export_dir_visit(const struct stat *st, void *arg)
{
	struct export_walk *w = arg;

	if (st->st_uid != geteuid() && (w->top || st->st_uid != 0)) {
		moat_error_set(w->err, MOAT_E_USAGE, 0,
			       "-o %s: the directory %s belongs to uid %u, not to moat's user (uid %u): they could "
			       "replace what moat writes there",
			       w->dir, w->name, (unsigned)st->st_uid, (unsigned)geteuid());
		return 1;
	}
	if (w->top && (st->st_mode & (S_IWGRP | S_IWOTH))) {
		moat_error_set(w->err, MOAT_E_USAGE, 0,
			       "-o %s: the directory %s is writable by %s: they could replace what moat writes there",
			       w->dir, w->name, (st->st_mode & S_IWOTH) ? "every user" : "its group");
		return 1;
	}
	if (!w->top && (st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX)) {
		moat_error_set(w->err, MOAT_E_USAGE, 0,
			       "-o %s: the directory %s above it is writable by %s and not sticky: they could rename "
			       "what is below it away and put their own directory in its place",
			       w->dir, w->name, (st->st_mode & S_IWOTH) ? "every user" : "its group");
		return 1;
	}
	w->top = false;
	dir_parent_name(w->name);
	return 0;
}

static int export_dir_link(const char *dir, size_t stop, struct moat_error *err)
{
	moat_error_set(err, MOAT_E_USAGE, 0, "-o %s: %.*s is a symbolic link: moat writes an export only through real "
					     "directories",
		       dir, (int)stop, dir);
	return moat_error_hint(err, "name the real directory, or export into a new one");
}

/* The directories from `fd` up, checked (`top`: fd is DIR itself). */
static int export_dir_check(const char *dir, int fd, bool top, struct moat_error *err)
{
	cleanup_free char *real = NULL, *name = NULL;
	struct export_walk w = {.dir = dir, .top = top, .err = err};
	int rc;

	real = realpath(dir, NULL); /* for messages only */
	name = moat_xstrdup(real ? real : dir);
	if (!top)
		dir_parent_name(name);
	w.name = name;
	rc = dir_walk_up(fd, export_dir_visit, &w);
	if (rc > 0)
		return moat_error_hint(err, "export into a directory only you can write (chmod go-w it), below "
					    "directories only you or root own and no one else can write unless sticky "
					    "(mkdir -m 700 ~/export; -o ~/export)");
	if (rc < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "-o %s: walking up from it (at %s)", dir, w.name);
	return 0;
}

/* -o DIR, reached without following a symlink (one planted at a name on the
 * way could be swapped during the export) and checked by export_dir_visit
 * up to the root; made when it is missing (not its parents), only after its
 * parent passed those checks, so nothing is made in another user's place.
 * `*made` says it was made here: a failed export removes it again
 * (unmake_dir). */
static int make_dir(const char *dir, bool *made, struct moat_error *err)
{
	cleanup_close int fd = -1, parent = -1;
	cleanup_free char *up = NULL;
	size_t stop, base;

	fd = dir_walk_nofollow(dir, false, 0, &stop);
	if (fd < 0 && errno == ENOENT && dir[stop + strspn(dir + stop, "/")] == '\0') {
		for (base = stop; base > 0 && dir[base - 1] != '/'; base--)
			;
		up = moat_xstrndup(dir, base);
		parent = base ? dir_walk_nofollow(up, false, 0, &stop) : open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0 && errno == ELOOP)
			return export_dir_link(dir, stop, err);
		if (parent < 0)
			return moat_error_set(err, MOAT_E_USAGE, errno, "-o %s", dir);
		if (export_dir_check(dir, parent, false, err) < 0)
			return -1;
		if (mkdirat(parent, dir + base, 0755) == 0)
			*made = true;
		else if (errno != EEXIST)
			return moat_error_set(err, MOAT_E_USAGE, errno, "-o %s", dir);
		fd = dir_walk_nofollow(dir, false, 0, &stop);
	}
	if (fd < 0 && errno == ELOOP)
		return export_dir_link(dir, stop, err);
	if (fd < 0)
		return moat_error_set(err, MOAT_E_USAGE, errno, "-o %s", dir);
	return export_dir_check(dir, fd, true, err);
}

/* A failed export leaves no -o DIR it made: `moat export -o ~/export -- cmd`
 * refused for a missing --backend once left an empty ~/export behind an
 * exit 125.  rmdir removes only an empty directory, and not through a link
 * at its name. */
static void unmake_dir(const char *dir, bool made)
{
	if (made)
		(void)rmdir(dir);
}

/* Every export writes these; its backend's own files besides them are
 * moat_backend.export_files. */
static const char *const export_common[] = {"argv.json", "report.json"};

/* `backend`'s own export files (NULL-terminated), none for a name that is
 * no backend. */
static const char *const *backend_export_files(const char *backend)
{
	static const char *const none[] = {NULL};
	const struct moat_backend *b = backend ? backend_lookup(backend) : NULL;

	return b ? b->export_files : none;
}

/* Does `backend`'s export write `name`? */
static bool export_writes(const char *backend, const char *name)
{
	const char *const *own = backend_export_files(backend);

	if (!backend)
		return false;
	for (size_t i = 0; i < ARRAY_LEN(export_common); i++)
		if (strcmp(export_common[i], name) == 0)
			return true;
	for (size_t i = 0; own[i]; i++)
		if (strcmp(own[i], name) == 0)
			return true;
	return false;
}

/* The backend of the earlier export DIR holds, or NULL: its report.json is
 * moat's, of no run (a run's or a refusal's has "run": `moat run --report
 * report.json` in a project is no export, and taken for one its backend's
 * names, the project's own config.json, went), and its argv.json is
 * there. */
static char *earlier_export(int dfd)
{
	cleanup_close int fd = openat(dfd, "report.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	json_t *j;
	const char *schema, *backend;
	char *out = NULL;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (16 << 20))
		return NULL;
	if (fstatat(dfd, "argv.json", &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	if (!(j = json_loadfd(fd, 0, NULL)))
		return NULL;
	schema = json_string_value(json_object_get(j, "schema"));
	backend = json_string_value(json_object_get(j, "backend"));
	if (schema && strncmp(schema, "moat.report/", 12) == 0 && backend && !json_object_get(j, "run"))
		out = moat_xstrdup(backend);
	json_decref(j);
	return out;
}

/* Every name `backend`'s export writes, removed from DIR (a link at one is
 * removed, not followed; a directory stays, and the write then fails). */
static void remove_export_files(int dfd, const char *backend)
{
	const char *const *own = backend_export_files(backend);

	for (size_t i = 0; i < ARRAY_LEN(export_common); i++)
		(void)unlinkat(dfd, export_common[i], 0);
	for (size_t i = 0; own[i]; i++)
		(void)unlinkat(dfd, own[i], 0);
}

/* An export into DIR is one export, whole, and loses nothing of the
 * user's.  The earlier export DIR holds (another backend's run.sh, another
 * policy's) must not stay beside this one's report, which does not describe
 * it: its files go first.  A file at a name this export writes that no
 * export wrote (`-o .` in a project with a config.json or run.sh of its
 * own) would be replaced: the export is refused instead. */
static int prepare_export_dir(int dfd, const char *dir, const char *backend, struct moat_error *err)
{
	const char *const *own = backend_export_files(backend);
	cleanup_free char *earlier = earlier_export(dfd);
	const char *names[ARRAY_LEN(export_common) + BACKEND_EXPORT_FILES_MAX];
	size_t n = 0;
	struct stat st;

	for (size_t i = 0; i < ARRAY_LEN(export_common); i++)
		names[n++] = export_common[i];
	for (size_t i = 0; own[i]; i++)
		names[n++] = own[i];
	for (size_t i = 0; i < n; i++)
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && !export_writes(earlier, names[i])) {
			moat_error_set(err, MOAT_E_USAGE, 0,
				       "-o %s: %s/%s is there and no moat export wrote it: the %s export would replace it",
				       dir, dir, names[i], backend);
			return moat_error_hint(err, "export into a new or empty directory (-o %s/moat-export), or move "
						    "%s away",
					       dir, names[i]);
		}
	if (earlier)
		remove_export_files(dfd, earlier);
	return 0;
}

/* argv.json is JSON, whose strings are UTF-8: an argument that is not
 * cannot be written as it is, and json_string() of it is NULL, which the
 * array once dropped without a word (the argv then was not run.sh's). */
static int argv_json(const struct moat_plan *plan, json_t **out, struct moat_error *err)
{
	json_t *a = json_array();

	for (size_t i = 0; i < plan->compiled.argc; i++) {
		const char *arg = plan->compiled.argv[i];

		if (!utf8_valid(arg, strlen(arg))) {
			/* Shown as the report shows it: each stray byte \xNN. */
			json_t *as_text = json_text(arg);
			cleanup_free char *shown = moat_text_shown(json_string_value(as_text));

			json_decref(as_text);
			json_decref(a);
			moat_error_set(err, MOAT_E_USAGE, 0,
				       "argument %zu of %s's argv (%s) is not UTF-8, which argv.json must be", i,
				       plan->backend, shown);
			return moat_error_hint(err, "export a command, paths and variables that are UTF-8 text, or "
						    "run it with moat run --backend %s",
					       plan->backend);
		}
		json_array_append_new(a, json_string(arg));
	}
	*out = a;
	return 0;
}

static int write_json(const char *dir, const char *name, json_t *j, struct moat_error *err)
{
	cleanup_free char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	cleanup_free char *with_nl = moat_xasprintf("%s\n", text ? text : "null");

	return backend_write_file(dir, name, with_nl, strlen(with_nl), err);
}

int api_export(int n, char **args, const char *dir, struct api_export_result *out, struct moat_error *err)
{
	struct moat_policy policy;
	struct moat_run_options opts;
	struct moat_server_meta meta = {0};
	struct moat_host host;
	struct moat_plan plan;
	bool have_plan = false, prepared = false, made = false;
	json_t *argv = NULL, *report = NULL;
	cleanup_close int dfd = -1;
	int rc = -1;

	policy_init(&policy);
	run_options_init(&opts);
	if (cli_parse_run_meta(n, args, environ, &policy, &opts, &meta, err) < 0 || make_dir(dir, &made, err) < 0 ||
	    host_probe(&host, err) < 0)
		goto out;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		moat_error_set(err, MOAT_E_USAGE, errno, "-o %s", dir);
		goto out;
	}
	if (prepare_export_dir(dfd, dir, policy.backend, err) < 0)
		goto out;
	prepared = true;
	if (plan_build_export(&policy, &host, dir, &plan, err) < 0)
		goto out;
	have_plan = true;
	if (argv_json(&plan, &argv, err) < 0)
		goto out;
	report = report_build(&policy, &host, &plan, NULL);
	if (write_json(dir, "argv.json", argv, err) < 0 || write_json(dir, "report.json", report, err) < 0)
		goto out;
	snprintf(out->backend, sizeof(out->backend), "%s", plan.backend);
	snprintf(out->status, sizeof(out->status), "%s", moat_status_name(plan.status));
	rc = 0;
out:
	/* A failed export leaves nothing runnable: no run.sh without its
	 * report.  What is at its names it wrote (prepare_export_dir). */
	if (rc < 0 && prepared)
		remove_export_files(dfd, policy.backend);
	if (rc < 0)
		unmake_dir(dir, made);
	json_decref(argv);
	json_decref(report);
	if (have_plan)
		plan_free(&plan);
	policy_free(&policy);
	run_options_free(&opts);
	config_server_meta_free(&meta);
	return rc;
}

int api_export_k8s(int n, char **args, const char *dir, struct k8s_options *opts, json_t **report_out,
		   struct moat_error *err)
{
	struct moat_policy policy;
	struct moat_run_options run_opts;
	struct moat_server_meta meta = {0};
	char **envp = NULL, **names = NULL;
	bool made = false;
	int rc = -1;

	policy_init(&policy);
	run_options_init(&run_opts);
	run_opts.for_another_host = true;
	/* The image is checked first: without it nothing can be written. */
	if (k8s_options_check(opts, err) < 0 ||
	    cli_parse_run_meta(n, args, environ, &policy, &run_opts, &meta, err) < 0 ||
	    env_build(&policy, environ, &envp, &names, err) < 0 || make_dir(dir, &made, err) < 0)
		goto out;
	if (policy.mode == MOAT_MODE_OFF) {
		moat_error_set(err, MOAT_E_USAGE, 0, "--format k8s: the policy asks for no sandbox (mode off): there is "
						     "nothing to export");
		moat_error_hint(err, "drop --mode off (or mode = \"off\" in the config)");
		goto out;
	}
	opts->server = meta.name;
	rc = k8s_export(&policy, envp, opts, dir, report_out, err);
	opts->server = NULL;
out:
	if (rc < 0)
		unmake_dir(dir, made);
	env_strv_free(envp);
	env_strv_free(names);
	policy_free(&policy);
	run_options_free(&run_opts);
	config_server_meta_free(&meta);
	return rc;
}
