/* `moat mcp list|wrap|unwrap` (docs/clients.md, "moat mcp list, wrap,
 * unwrap"): the clients' files found (sources/mcp_clients.c), their
 * entries listed with a dry run's verdict each, and rewritten to run
 * through moat and back.
 *
 * An edit is a splice of the bytes of an entry's command and args, nothing
 * else, and it is checked before anything is written: the new text must
 * read back with the entry running what was meant, and the new policy must
 * load and build as `moat run` will build it.  Each file is then replaced
 * atomically (util/file.h) after a copy of it is kept beside it
 * (FILE.moat-backup), and only if no other program changed it since moat
 * read it.  wrap writes the policy file first and puts it back if the
 * client's file cannot be written, so that no entry ever names a profile
 * that is not there.  unwrap puts back the exact bytes wrap replaced when
 * they are still what wrap wrote; when the user or the client changed
 * them since, it restores the entry's command line from the entry itself
 * and says so. */
#include "api/mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/host.h"
#include "launch/guard.h"
#include "plan/plan.h"
#include "policy/env.h"
#include "policy/policy.h"
#include "policy/profiles.h"
#include "sources/cli.h"
#include "sources/config.h"
#include "sources/config_common.h"
#include "sources/config_schema.h"
#include "sources/mcp_clients.h"
#include "sources/mcp_policies.h"
#include "sources/resolve.h"
#include "sources/runnotes.h"
#include "util/jsontext.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/mkdirs.h"
#include "util/path.h"

extern char **environ;

#define BACKUP_SUFFIX ".moat-backup"

/* ---- files ---- */

/* A file as read, with where it really is: a symlink at its name is
 * followed once, here, and the file it leads to is the one read and
 * replaced, in its own directory (a user's dotfiles are often links into
 * a repository: replacing the link by a file would fork them). */
struct source {
	char *shown; /* as named, absolute */
	char *real;  /* what it leads to */
	char *name;  /* real's last name */
	int dirfd;   /* real's directory */
	struct stat st;
	bool exists;
	char *text;
	size_t len;
};

static void source_free(struct source *s)
{
	free(s->shown);
	free(s->real);
	free(s->name);
	moat_closep(&s->dirfd);
	free(s->text);
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
}

/* Read `path`; a file that does not exist is s->exists false (and the
 * directory it would be in must exist when `need_dir`). */
static int source_read(const char *path, bool need_dir, struct source *s, struct moat_error *err)
{
	char here[PATH_MAX], real[PATH_MAX];
	cleanup_free char *dir = NULL;
	char *slash;

	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	s->text = moat_xstrdup("");
	if (path[0] != '/' && resolve_cwd(here, sizeof(here), err) < 0)
		return moat_error_wrap(err, "%s is relative", path);
	s->shown = path_resolve_lexical(path, path[0] == '/' ? "/" : here, NULL);
	if (!s->shown)
		return moat_error_set(err, MOAT_E_USAGE, 0, "%s: cannot make the path absolute", path);
	if (realpath(s->shown, real)) {
		s->real = moat_xstrdup(real);
		s->exists = true;
	} else if (errno == ENOENT) {
		struct stat lst;

		if (lstat(s->shown, &lst) == 0)
			return moat_error_set(err, MOAT_E_CONFIG, 0, "%s: a symlink to nothing", s->shown);
		if (!need_dir)
			return 0;
		slash = strrchr(s->shown, '/');
		dir = moat_xstrndup(s->shown, (size_t)(slash - s->shown));
		if (!realpath(dir[0] ? dir : "/", real))
			return 0; /* made when written */
		s->real = moat_xasprintf("%s/%s", strcmp(real, "/") == 0 ? "" : real, slash + 1);
	} else {
		return moat_error_set(err, MOAT_E_CONFIG, errno, "%s", s->shown);
	}
	slash = strrchr(s->real, '/');
	s->name = moat_xstrdup(slash + 1);
	free(dir); /* the named directory of a file to be made */
	dir = moat_xstrndup(s->real, (size_t)(slash - s->real));
	s->dirfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0)
		return moat_error_set(err, MOAT_E_CONFIG, errno, "%s: opening its directory %s", s->shown,
				      dir[0] ? dir : "/");
	if (!s->exists)
		return 0;
	free(steal_ptr(&s->text));
	return file_read_at(s->dirfd, s->name, s->shown, TOML_MAX_INPUT, false, &s->text, &s->len, &s->st, err);
}

/* Another user who owns a directory on the way to a file moat writes (the
 * client's file, the policy file), or a link there, could swap an entry for
 * a link to any file of moat's user's between the read and the write: root's
 * `moat mcp wrap` with another user's HOME followed their ~/.config link and
 * wrote moat/servers.toml where it led.  Checked on the path as named and as
 * it resolves, on the directories only: the file itself is replaced by a
 * rename, keeping its owner (util/file.h). */
static int foreign_check(const char *shown, const char *path, struct moat_error *err)
{
	cleanup_free char *dir = moat_xstrdup(path);
	char *slash = strrchr(dir, '/');
	struct stat st;
	uid_t owner;
	size_t bad;

	if (slash)
		slash[slash == dir] = '\0';
	bad = path_foreign_on_way(dir, &owner);
	/* A link at the file's own name is followed once (docs/clients.md):
	 * only one of moat's user's or root's. */
	if (!bad && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0) {
		bad = strlen(path);
		owner = st.st_uid;
	}
	if (!bad)
		return 0;
	moat_error_set(err, MOAT_E_CONFIG, 0,
		       "%s: %.*s belongs to uid %u, neither moat's user (uid %u) nor root: they could swap it for a "
		       "link, and moat would write where it leads",
		       shown, (int)bad, path, (unsigned)owner, (unsigned)geteuid());
	return moat_error_hint(err, "run moat mcp as that user; nothing was written");
}

static int source_foreign_check(const struct source *s, struct moat_error *err)
{
	if (foreign_check(s->shown, s->shown, err) < 0)
		return -1;
	return s->real ? foreign_check(s->shown, s->real, err) : 0;
}

/* mkdir -p, new directories 0700 (the policy file's: whoever can write it
 * decides what the servers may do). */
static int make_dirs(const char *dir, struct moat_error *err)
{
	cleanup_free char *copy = moat_xstrdup(dir);
	char *p;

	for (p = copy + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdir(copy, 0700) != 0 && errno != EEXIST)
				return moat_error_set(err, MOAT_E_SYSTEM, errno, "creating %s", copy);
			*p = c;
			if (c == '\0')
				return 0;
		}
	}
}

/* ---- the request's context ---- */

struct loaded {
	struct source src;
	struct mcp_file *f;
	enum mcp_client client;
	const char *scope;
	struct moat_error error; /* it could not be read (list says so) */
	/* The file as moat's config loader reads it, for the moat settings
	 * of its entries (client_config), once. */
	struct moat_config *cfg;
	struct moat_error cfg_err;
	bool cfg_tried;
};

struct ctx {
	const struct api_mcp_request *r;
	const char *home;
	char cwd[PATH_MAX];
	char *policies; /* --policies FILE, else the default policy file; NULL without either */
	char *default_policies; /* $XDG_CONFIG_HOME/moat/servers.toml (~/.config/...), NULL without HOME */
	struct loaded *files;
	size_t n_files;
};

static void ctx_free(struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->n_files; i++) {
		config_free(c->files[i].cfg);
		mcp_file_free(c->files[i].f);
		source_free(&c->files[i].src);
	}
	free(c->files);
	free(c->policies);
	free(c->default_policies);
}

static int ctx_init(struct ctx *c, const struct api_mcp_request *r, struct moat_error *err)
{
	const char *xdg = config_getenv(environ, "XDG_CONFIG_HOME");

	memset(c, 0, sizeof(*c));
	c->r = r;
	c->home = config_getenv(environ, "HOME");
	if (resolve_cwd(c->cwd, sizeof(c->cwd), err) < 0)
		return -1;
	if (xdg && xdg[0] == '/')
		c->default_policies = moat_xasprintf("%s/moat/servers.toml", xdg);
	else if (c->home && c->home[0] == '/')
		c->default_policies = moat_xasprintf("%s/.config/moat/servers.toml", c->home);
	if (r->policies)
		c->policies = path_resolve_lexical(r->policies, c->cwd, c->home);
	else if (c->default_policies)
		c->policies = moat_xstrdup(c->default_policies);
	return 0;
}

static void recognise_wrapped(const struct ctx *c, struct loaded *l);

static int load(struct ctx *c, const char *path, enum mcp_client client, const char *scope, bool named,
		struct moat_error *err)
{
	struct loaded *l;
	struct source src;
	struct moat_error e = {0};

	if (source_read(path, false, &src, &e) < 0 || !src.exists) {
		if (!src.exists && e.kind == MOAT_E_NONE)
			moat_error_set(&e, MOAT_E_CONFIG, ENOENT, "%s", src.shown ? src.shown : path);
		source_free(&src);
		if (named) {
			*err = e;
			return -1;
		}
		if (e.errnum == ENOENT)
			return 0;
	}
	/* A project's file is the repository's, links included: git keeps
	 * them, so `.mcp.json -> ../../.claude.json` in a clone would have wrap
	 * and unwrap edit a file of the user's (or, run by root, another
	 * user's) that the repository chose.  One that leads out of the
	 * project is refused, named; the user names it with --config when it
	 * is his. */
	if (e.kind == MOAT_E_NONE && src.exists && strcmp(scope, "project") == 0) {
		char project[PATH_MAX];

		if (!realpath(c->cwd, project) || !path_within(src.real, project)) {
			moat_error_set(&e, MOAT_E_CONFIG, 0,
				       "%s is a link to %s, outside the project (%s): a repository chooses where its "
				       "links lead, so moat neither reads nor edits it as the project's",
				       src.shown, src.real, c->cwd);
			moat_error_hint(&e, "if that file is yours to change, name it: --config %s", src.real);
		}
	}
	c->files = moat_xrealloc(c->files, (c->n_files + 1) * sizeof(*c->files));
	l = &c->files[c->n_files++];
	memset(l, 0, sizeof(*l));
	l->src = src;
	l->client = client;
	l->scope = scope;
	l->error = e;
	if (e.kind != MOAT_E_NONE)
		return 0;
	l->src.text = NULL; /* the parser's now */
	if (mcp_file_parse(src.shown, client, src.text, src.len, c->cwd, c->r->moat, &l->f, &l->error) < 0) {
		if (named)
			return (*err = l->error, -1);
		return 0;
	}
	recognise_wrapped(c, l);
	return 0;
}

/* The file named with --config, or every client's file of HOME and this
 * project that exists. */
static int load_files(struct ctx *c, struct moat_error *err)
{
	struct mcp_location *locs = NULL;
	size_t n, i;
	int rc = 0;

	if (c->r->config) {
		/* The client by the whole path: .vscode/mcp.json is VS Code's. */
		cleanup_free char *abs = path_resolve_lexical(c->r->config, c->cwd, c->home);

		return load(c, c->r->config, mcp_client_of(abs ? abs : c->r->config), "named", true, err);
	}
	n = mcp_locations(c->home && c->home[0] == '/' ? c->home : NULL, c->cwd, environ, &locs);
	for (i = 0; i < n && rc == 0; i++)
		rc = load(c, locs[i].path, locs[i].client, locs[i].scope, false, err);
	mcp_locations_free(locs, n);
	return rc;
}

/* ---- the entries' own moat settings ---- */

/* The client's file as moat's config loader reads it: what `moat run
 * --config FILE --server NAME` applies to a server.  NULL when it does
 * not load (l->cfg_err). */
static const struct moat_config *client_config(const struct ctx *c, struct loaded *l)
{
	bool parse_failed;

	if (!l->cfg_tried) {
		l->cfg_tried = true;
		if (config_load_buffer_all(l->src.shown, l->f->text, l->f->len, c->home, &l->cfg, &parse_failed,
					   &l->cfg_err) < 0)
			l->cfg = NULL;
	}
	return l->cfg;
}

/* Where a layer of the loaded file is in the client's file's tree. */
static const struct toml_value *layer_table(const struct moat_config *cfg, const struct loaded *l,
					    const struct mcp_entry *e, const struct config_server *srv,
					    const struct config_layer *layer)
{
	size_t i;

	if (layer == &cfg->defaults)
		return toml_table_get(l->f->root, "sandbox");
	if (srv && layer == &srv->sandbox)
		return toml_table_get(e->table, "sandbox");
	for (i = 0; i < cfg->n_profiles; i++)
		if (layer == &cfg->profiles[i].layer)
			return toml_table_get(toml_table_get(l->f->root, "profiles"), cfg->profiles[i].name);
	return NULL;
}

/* The file does not load as a moat config: an entry with moat settings
 * (its own, or the file's) cannot have them carried faithfully. */
static int carried_unread(const struct loaded *l, const struct mcp_entry *e, struct moat_error *err)
{
	if (!toml_table_get(e->table, "sandbox") && !toml_table_get(l->f->root, "sandbox"))
		return 0;
	moat_error_set(err, MOAT_E_CONFIG, 0,
		       "%s:%d:%d: %s: not wrapped: the file has moat sandbox settings, but does not load as moat's "
		       "config (%s), so wrap cannot carry them into the server's profile",
		       l->src.shown, e->pos.line, e->pos.col, e->key, l->cfg_err.message);
	return moat_error_hint(err, "moat config check %s says what is wrong; fix it and run moat mcp wrap again",
			       l->src.shown);
}

/* A key of entry e's, or at the top of its file, that the loader takes for
 * a typo of one of moat's (`Sandbox`, `sandbx`, `sandbox` and a zero-width
 * space): what it holds was meant for moat, and wrapping the entry without
 * it would drop a deny or a limit while list says enforced.  -1 with the
 * loader's own error for it (what `moat config check` says), at the key. */
static int entry_typo(const struct loaded *l, const struct mcp_entry *e, struct moat_error *err)
{
	if (config_client_keys_check(l->src.shown, l->f->json, l->f->root, NULL, err) < 0)
		return -1;
	return config_client_keys_check(l->src.shown, l->f->json, e->table, e->key, err);
}

/* entry_typo, as wrap refuses the entry. */
static int entry_typo_refused(const struct loaded *l, const struct mcp_entry *e, struct moat_error *err)
{
	struct moat_error k = {0};

	if (entry_typo(l, e, &k) == 0)
		return 0;
	moat_error_set(err, MOAT_E_CONFIG, 0, "%s; %s: not wrapped: wrap would run it without what that key holds",
		       k.message, e->key);
	return moat_error_hint(err, "fix the key (moat config check %s says the same), then run moat mcp wrap again%s%s",
			       l->src.shown, k.hint[0] ? ": " : "", k.hint);
}

/* The tables of moat settings of the client's file that apply to entry e,
 * base first, as config_build applies them to `moat run --config FILE
 * --server NAME` (config_collect_layers), for wrap to carry into the
 * server's profile (sources/mcp_policies.h); and the built-in profile
 * they sit on, when wrap's --profile names none.  *out holds pointers
 * into l; free it alone.  A setting that cannot be carried is an error
 * naming it: the entry is not wrapped without it. */
static int entry_carried(const struct ctx *c, struct loaded *l, const struct mcp_entry *e, struct mcp_carried **out,
			 size_t *n, const char **builtin, struct moat_error *err)
{
	const struct moat_config *cfg = client_config(c, l);
	const struct config_server *srv;
	cleanup_free const struct config_layer **layers = NULL;
	const char *profile, *found = NULL;
	size_t n_layers = 0, i;

	*out = NULL;
	*n = 0;
	*builtin = MOAT_SERVER_DEFAULT_PROFILE;
	if (entry_typo_refused(l, e, err) < 0)
		return -1;
	if (!cfg)
		return carried_unread(l, e, err);
	srv = config_find_server(cfg, e->name);
	if (srv && strcmp(srv->key, e->key) != 0)
		srv = NULL;
	if (!srv && toml_table_get(e->table, "sandbox")) {
		moat_error_set(err, MOAT_E_CONFIG, 0,
			       "%s:%d:%d: %s.sandbox: not wrapped: moat run --config does not read this entry, so wrap "
			       "cannot tell how its sandbox settings apply",
			       l->src.shown, e->pos.line, e->pos.col, e->key);
		return moat_error_hint(err, "remove them and give them to moat mcp wrap as flags (--deny, --memory, ...)");
	}
	/* wrap's --profile is the policy file's or a built-in: it takes the
	 * place of the client's profile chain, as --profile does for moat run,
	 * and only [sandbox] and the entry's sandbox go on it. */
	profile = c->r->profile ? MOAT_SERVER_DEFAULT_PROFILE : config_server_profile(cfg, srv);
	layers = moat_xcalloc(cfg->n_profiles + 3, sizeof(*layers));
	if (config_collect_layers(cfg, srv, profile, layers, &n_layers, &found, err) < 0)
		return moat_error_wrap(err, "%s: %s", l->src.shown, e->key);
	/* A project's file comes with the repository: its settings may loosen
	 * (mode = "off", a write grant of HOME, the whole network), and what
	 * wrap writes is the user's own policy file, which list vouches for.
	 * So they are not taken in unseen: the user gives what they want of
	 * them as wrap's flags. */
	if (n_layers && strcmp(l->scope, "project") == 0) {
		moat_error_set(err, MOAT_E_CONFIG, 0,
			       "%s:%d:%d: %s: not wrapped: this project's file gives the server moat settings (%s), and "
			       "wrap does not take a project's settings into your policy unseen: they may loosen it",
			       l->src.shown, e->pos.line, e->pos.col, e->key, layers[n_layers - 1]->key);
		return moat_error_hint(err, "review them, give what you want of them to moat mcp wrap as flags (--deny, "
					    "--memory, ...), and remove them from the file; or wrap the others with --server NAME");
	}
	*builtin = found;
	*out = moat_xcalloc(n_layers + 1, sizeof(**out));
	for (i = 0; i < n_layers; i++) {
		const struct toml_value *t = layer_table(cfg, l, e, srv, layers[i]);

		if (layers[i]->broken || !t) {
			moat_error_set(err, MOAT_E_CONFIG, 0,
				       "%s:%d:%d: %s: not wrapped: the server's moat settings at %s have a problem, "
				       "and wrap does not wrap it without them",
				       l->src.shown, layers[i]->origin.line, layers[i]->origin.col, e->key,
				       layers[i]->key);
			free(steal_ptr(out));
			return moat_error_hint(err, "moat config check %s says what it is", l->src.shown);
		}
		(*out)[(*n)++] = (struct mcp_carried){
		    .table = t, .key = layers[i]->key, .file = l->src.shown, .dir = cfg->dir, .home = c->home};
	}
	return 0;
}

/* The carried settings as wrap writes them for entry e now ("" for none),
 * or NULL with err. */
static char *entry_carried_text(const struct ctx *c, struct loaded *l, const struct mcp_entry *e,
				struct moat_error *err)
{
	cleanup_free struct mcp_carried *cv = NULL;
	const char *builtin;
	size_t n;

	if (entry_carried(c, l, e, &cv, &n, &builtin, err) < 0)
		return NULL;
	return mcp_carried_text(cv, n, err);
}

/* ---- the policy file ---- */

struct policies {
	struct source src;
	struct mcp_policies *p;
	struct moat_error error;
};

static void policies_free(struct policies *p)
{
	mcp_policies_free(p->p);
	source_free(&p->src);
}

static int policies_read(const char *path, struct policies *out, struct moat_error *err)
{
	memset(out, 0, sizeof(*out));
	if (source_read(path, true, &out->src, err) < 0)
		return -1;
	if (mcp_policies_parse(out->src.shown, out->src.text, out->src.len, out->src.exists, &out->p, err) < 0)
		return -1;
	out->src.text = NULL;
	return 0;
}

/* ---- list ---- */

static json_t *strings_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_text(v[i]));
	return a;
}

/* A profile's keys as they are written, for people to read. */
static json_t *value_json(const struct toml_value *v)
{
	json_t *j;
	size_t i;

	switch (v->type) {
	case TOML_STRING:
		return json_stringn(v->u.str.ptr, v->u.str.len);
	case TOML_INTEGER:
		return json_integer(v->u.integer);
	case TOML_FLOAT:
		return json_real(v->u.flt);
	case TOML_BOOL:
		return json_boolean(v->u.boolean);
	case TOML_ARRAY:
		j = json_array();
		for (i = 0; i < toml_array_len(v); i++)
			json_array_append_new(j, value_json(toml_array_at(v, i)));
		return j;
	case TOML_TABLE:
		j = json_object();
		for (i = 0; i < toml_table_len(v); i++)
			json_object_set_new(j, toml_table_at(v, i)->key, value_json(toml_table_at(v, i)->value));
		return j;
	default:
		return json_null();
	}
}

/* Where a note's hint grants: the directory a variable names, or the one
 * its file is in (MEMORY_FILE_PATH's memory.jsonl, made at the first
 * write); an argument's own directory. */
static char *note_grant(const struct hidden_arg *a)
{
	struct stat st;
	char *slash;
	char *dir = moat_xstrdup(a->path);

	if (!a->variable || (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
		return dir;
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	return dir;
}

static void notes_append(json_t *j, const struct hidden_arg *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *note = hidden_arg_text(&v[i], "its", "the server");
		cleanup_free char *grant = note_grant(&v[i]);
		json_t *o = json_pack("{s:o, s:s, s:o, s:o}", "path", json_text(v[i].path), "why",
				      v[i].why == HIDDEN_DENIED ? "denied" : "not granted", "note", json_text(note),
				      "grant", json_text(grant));

		if (v[i].variable)
			json_object_set_new(o, "variable", json_text(v[i].variable));
		json_array_append_new(j, o);
	}
}

/* What the server's sandbox hides from it that its entry names -- the
 * directories among its arguments, the paths its variables (`env`, with
 * their values from `env_in`) give -- which `moat run` notes on the
 * server's stderr, where only the client's log has it: `notes[]`, each
 * with the `path`, the `variable` for one a variable names, the `note`
 * and the directory to `grant` (the hint, which depends on how the entry
 * runs, is the caller's). */
static json_t *hidden_notes_json(const struct moat_policy *p, char *const *env_in)
{
	struct hidden_arg *v;
	size_t n;
	json_t *j = json_array();

	n = run_hidden_env(p, env_in, &v);
	notes_append(j, v, n);
	hidden_args_free(v, n);
	n = run_hidden_args(p, &v);
	notes_append(j, v, n);
	hidden_args_free(v, n);
	return j;
}

/* A dry run of `moat ARGS...` on this host: the status, and what is
 * missing.  The command not being installed here is said, not an error. */
static json_t *verdict(const struct moat_host *host, char **argv, size_t argc, char *const *env)
{
	struct moat_policy p;
	struct moat_run_options o;
	struct moat_plan plan;
	struct moat_error err = {0};
	json_t *j = json_object(), *missing;
	int i;

	policy_init(&p);
	run_options_init(&o);
	o.defer_exe_err = true;
	if (cli_parse_run((int)argc, argv, env, &p, &o, &err) < 0 || plan_build(&p, host, &plan, &err) < 0) {
		json_object_set_new(j, "status", json_text("error"));
		json_object_set_new(j, "error", json_text(err.message));
		if (err.hint[0])
			json_object_set_new(j, "hint", json_text(err.hint));
		goto out;
	}
	json_object_set_new(j, "status", json_text(moat_status_name(plan.status)));
	json_object_set_new(j, "backend", json_text(plan.backend));
	missing = json_array();
	for (i = 0; i < MOAT_P__COUNT; i++) {
		const struct moat_verdict *v = &plan.props[i];

		if (!v->requested || v->enforced)
			continue;
		json_array_append_new(missing, json_pack("{s:s, s:o, s:o}", "property",
							 moat_property_name((enum moat_property)i), "reason",
							 json_text(v->reason), "hint", json_text(v->hint)));
	}
	json_object_set_new(j, "missing", missing);
	json_object_set_new(j, "notes", hidden_notes_json(&p, env));
	if (o.exe_err.kind != MOAT_E_NONE)
		json_object_set_new(j, "command", json_text(o.exe_err.message));
	host_cleanup(&plan, getpid(), false);
	plan_free(&plan);
out:
	policy_free(&p);
	run_options_free(&o);
	return j;
}

static const char *kind_name(enum mcp_kind k)
{
	return k == MCP_REMOTE ? "remote" : k == MCP_DISABLED ? "disabled" : "local";
}

static const char *state_name(enum mcp_state s)
{
	static const char *const names[] = {"unwrapped", "wrapped", "by-hand", "nested"};

	return names[s];
}

/* The policy file an entry names, read once per path. */
struct policy_cache {
	struct policies *v;
	char **paths;
	size_t n;
};

static struct policies *cached(struct policy_cache *pc, const char *path)
{
	size_t i;

	for (i = 0; i < pc->n; i++)
		if (strcmp(pc->paths[i], path) == 0)
			return &pc->v[i];
	pc->v = moat_xrealloc(pc->v, (pc->n + 1) * sizeof(*pc->v));
	pc->paths = moat_xrealloc(pc->paths, (pc->n + 1) * sizeof(*pc->paths));
	pc->paths[pc->n] = moat_xstrdup(path);
	if (policies_read(path, &pc->v[pc->n], &pc->v[pc->n].error) < 0)
		pc->v[pc->n].p = NULL;
	return &pc->v[pc->n++];
}

static void cache_free(struct policy_cache *pc)
{
	size_t i;

	for (i = 0; i < pc->n; i++) {
		policies_free(&pc->v[i]);
		free(pc->paths[i]);
	}
	free(pc->v);
	free(pc->paths);
}

/* ---- which policy files moat vouches for ---- */

/* Whether `path`, as an entry names it, is a policy file the user gave
 * moat: the default one, or this run's --policies FILE.  By its name, as
 * wrap writes it: a relative name, or one through /proc/self/cwd, is
 * another file when the client starts the server in another directory. */
static bool policy_file_given(const struct ctx *c, const char *path)
{
	return (c->policies && strcmp(path, c->policies) == 0) ||
	       (c->default_policies && strcmp(path, c->default_policies) == 0);
}

static char *not_given(const struct ctx *c)
{
	bool named = c->policies && (!c->default_policies || strcmp(c->policies, c->default_policies) != 0);

	return moat_xasprintf("it is not a policy file moat was given (%s%s%s): wrap's header and a [wrapped] record "
			      "in another file are anyone's words, a cloned project's too; if moat mcp wrap "
			      "--policies wrote it, name it with --policies",
			      c->default_policies ? c->default_policies : "no default one: no HOME",
			      named ? ", or " : "", named ? c->policies : "");
}

enum vouch {
	VOUCH_EDIT,  /* unwrap may remove the entry's profile and record there */
	VOUCH_CLAIM, /* list and wrap may take the entry for wrapped */
};

/* Why the policy file an entry in wrap's form names is not vouched for,
 * or NULL.  An entry's --config and --profile are its client file's words,
 * and a client's file can come from anyone (a cloned project's .mcp.json):
 * they alone must not choose which table of which file unwrap removes --
 * [profiles.work] of ~/.codex/config.toml, or another server's profile in
 * moat's own file, whose entry then fails to start -- nor make list and
 * wrap take the entry for wrapped, when the profile it names is the
 * project's own (mode = "off", write = ["/"]).  The file must be moat's
 * policy file and hold wrap's record of this very entry: [wrapped."ID"]
 * naming this client file (the same file, however it is named) and this
 * server.  Moat's policy file: to edit, one that starts with wrap's header
 * will do (whoever wrote it, only its own tables go); to claim, it must be
 * one the user gave moat (policy_file_given), as anyone can write a header
 * and a record into a file of a project -- at a path as predictable as
 * /workspaces/REPO. */
/* Whether rec, a [wrapped."ID"] record, is wrap's record of entry e of l. */
static bool record_of(const struct toml_value *rec, const struct loaded *l, const struct mcp_entry *e)
{
	const char *file = mcp_record_get(rec, "file"), *server = mcp_record_get(rec, "server");
	char real[PATH_MAX];

	return file && server && strcmp(server, e->name) == 0 && realpath(file, real) && l->src.real &&
	       strcmp(real, l->src.real) == 0;
}

/* An entry in wrap's form whose moat is not named moat (wrap --moat
 * ~/bin/moat-dev) is wrap's when the policy file it names holds wrap's
 * record of it: recognised by what wrap wrote, not by the program's name,
 * so that unwrap restores it and wrap does not wrap moat in moat.  An
 * entry with no such record is left unwrapped: another program may take
 * the same words. */
static void recognise_wrapped(const struct ctx *c, struct loaded *l)
{
	for (size_t i = 0; i < l->f->n_entries; i++) {
		struct mcp_entry *e = &l->f->entries[i];
		struct policies p;
		struct moat_error ignored = {0};

		if (e->state != MCP_UNWRAPPED || !mcp_wrap_form(e->argv, e->argc) || e->argv[3][0] != '/')
			continue;
		if (policies_read(e->argv[3], &p, &ignored) == 0 && p.p->exists &&
		    record_of(mcp_policies_record(p.p, e->argv[5]), l, e))
			mcp_entry_wrapped(e, c->r->moat);
		policies_free(&p);
	}
}

static char *policy_not_ours(const struct ctx *c, const struct loaded *l, const struct mcp_entry *e,
			     struct policy_cache *pc, enum vouch what)
{
	const char *header = mcp_policies_preamble(), *file, *server;
	const struct toml_value *rec;
	const struct policies *p;
	char real[PATH_MAX];
	bool mine;

	if (what == VOUCH_CLAIM && !policy_file_given(c, e->policies))
		return not_given(c);
	p = cached(pc, e->policies);
	if (!p->p)
		return moat_xasprintf("it could not be read (%s)", p->error.message);
	if (!p->p->exists)
		return moat_xstrdup("it does not exist");
	rec = mcp_policies_record(p->p, e->profile);
	file = mcp_record_get(rec, "file");
	server = mcp_record_get(rec, "server");
	mine = record_of(rec, l, e);
	if (what == VOUCH_EDIT && strncmp(p->p->text, header, strlen(header)) != 0 &&
	    !(c->policies && realpath(c->policies, real) && strcmp(real, p->src.real) == 0))
		return moat_xasprintf("it is not moat's policy file: it does not start with the header moat mcp wrap "
				      "writes, and it is not %s%s%s%s",
				      c->policies ? c->policies : "the default one (no HOME)",
				      mine ? " (it holds [wrapped.\"" : "", mine ? e->profile : "",
				      mine ? "\"] of this entry: if moat mcp wrap --policies added it and its profile "
					     "there, remove both by hand)"
					   : "");
	if (!rec)
		return moat_xasprintf("it holds no [wrapped.\"%s\"], wrap's record of the entry", e->profile);
	if (!mine)
		return moat_xasprintf("its [wrapped.\"%s\"] is wrap's record of the server %s in %s, not of this entry",
				      e->profile, server ? server : "(none)", file ? file : "(no file)");
	return NULL;
}

/* What list and wrap say of an entry that runs moat with a policy file
 * moat does not vouch for, or NULL: an entry in wrap's form whose file and
 * record policy_not_ours does not vouch for, or moat written by hand with
 * --config FILE (a project's own file: `moat run --config .mcp.json
 * --server x`) that is not a file the user gave moat.  *path: that file. */
static char *entry_unvouched(const struct ctx *c, const struct loaded *l, const struct mcp_entry *e,
			     struct policy_cache *pc, const char **path)
{
	cleanup_free char *why = NULL;
	long at;

	*path = NULL;
	if (e->state == MCP_WRAPPED) {
		why = policy_not_ours(c, l, e, pc, VOUCH_CLAIM);
		*path = e->policies;
	} else if (e->state == MCP_BY_HAND) {
		at = mcp_moat_index(e->argv, e->argc, c->r->moat);
		if (at >= 0 && (size_t)at + 1 < e->argc && strcmp(e->argv[at + 1], "run") == 0)
			*path = cli_run_config_file((int)(e->argc - (size_t)at - 1), e->argv + at + 1);
		if (*path && !policy_file_given(c, *path)) {
			why = not_given(c);
		} else if (!*path && strcmp(l->scope, "project") == 0) {
			/* Its options are the policy, and a cloned repository
			 * wrote them (`moat run --write ~ --net all -- srv`):
			 * a dry run of them would show the project's choice as
			 * the server's sandbox, "enforced". */
			*path = l->src.shown;
			why = moat_xstrdup("the options of its moat run are the project's own words, which a cloned "
					   "repository chooses: --write ~, --net all, --mode off");
		}
	}
	if (!why)
		return NULL;
	return moat_xasprintf("runs moat with a policy file moat's wrap did not write for it: %s -- not vouched for "
			      "(%s)",
			      *path, why);
}

/* Why wrap leaves an entry as it is, in list and wrap alike: what the
 * client's file says of it (remote, no command, ...), or, not under moat,
 * the container it runs (sources/mcp_clients.h). */
/* The first variable of the entry's environment that is a loader or
 * interpreter hook (policy/env.h): wrap passes the client's variables on
 * to the server (env_pass), and refuses those, as a config file's are. */
static const char *entry_hook(const struct mcp_entry *e)
{
	for (size_t i = 0; i < e->n_env; i++)
		if (env_is_hook(e->env_names[i]))
			return e->env_names[i];
	return NULL;
}

static const char *entry_skip(const struct mcp_entry *e)
{
	if (e->skip)
		return e->skip;
	if (e->state == MCP_UNWRAPPED && mcp_container_engine(e->argv, e->argc))
		return "it runs a container: the engine starts it outside any sandbox around the client's command "
		       "(Docker's daemon, whose socket is root on the host; rootless Podman needs the namespaces the "
		       "sandbox refuses), so the container's own isolation is what holds it (--read-only, --network "
		       "none, --cap-drop ALL); or run the server's own program under moat";
	return NULL;
}

/* Why a wrapped entry's profile lacks moat settings its client's file
 * gives it (its own sandbox, the file's [sandbox]), or NULL: wrap carried
 * them (the record's `carried`), and they have not changed since.  An
 * entry wrapped before wrap carried them, or whose settings were edited
 * after, does not run under them. */
static char *carried_stale(const struct ctx *c, struct loaded *l, const struct mcp_entry *e,
			   const struct toml_value *rec)
{
	struct moat_error err = {0};
	cleanup_free char *now = entry_carried_text(c, l, e, &err);
	const char *then = mcp_record_get(rec, "carried");

	if (!now)
		return moat_xstrdup(err.message);
	if (strcmp(now, then ? then : "") == 0)
		return NULL;
	return moat_xasprintf("the moat settings %s gives %s are not all in its profile %s (they changed since it was "
			      "wrapped, or an older moat wrapped it): they do not apply; run moat mcp unwrap --server "
			      "%s, then moat mcp wrap again",
			      l->src.shown, e->name, e->profile, e->name);
}

/* How to grant each directory the notes name, as the entry runs: wrap's
 * --write for one not wrapped (or wrapped anew), its profile's write for a
 * wrapped one, the entry's own moat run for one by hand.  A denied one is
 * left to the user: moat does not suggest undoing a deny. */
static void hint_notes(const struct ctx *c, const char *server, bool if_wrapped, const char *profile,
		       const char *policies, json_t *notes)
{
	size_t i;
	json_t *n;

	json_array_foreach(notes, i, n)
	{
		const char *path = json_string_value(json_object_get(n, "grant"));
		cleanup_free char *hint = NULL, *make_dir = NULL;
		struct stat st;

		if (strcmp(json_string_value(json_object_get(n, "why")), "denied") == 0)
			continue;
		/* A variable's file in a directory not made yet: a grant must
		 * exist (and wrap has no --mkdir). */
		if (lstat(path, &st) != 0)
			make_dir = moat_xasprintf("mkdir -p %s, then ", path);
		if (if_wrapped)
			hint = moat_xasprintf("%swrap it with the grant: moat mcp wrap%s%s --server %s --write %s (or "
					      "--read %s)",
					      make_dir ? make_dir : "", c->r->config ? " --config " : "",
					      c->r->config ? c->r->config : "", server, path, path);
		else if (profile)
			hint = moat_xasprintf("%sgrant it in the server's profile %s of %s: write = [\"%s\"] (or read); "
					      "the server's next start uses it",
					      make_dir ? make_dir : "", profile, policies, path);
		else
			hint = moat_xasprintf("%sgrant it in the entry's moat run: --write %s (or --read %s)",
					      make_dir ? make_dir : "", path, path);
		json_object_set_new(n, "hint", json_text(hint));
	}
}

static json_t *entry_json(const struct ctx *c, struct loaded *l, const struct mcp_entry *e,
			  const struct moat_host *host, struct policy_cache *pc)
{
	const char *uv_path;
	cleanup_free char *uv = entry_unvouched(c, l, e, pc, &uv_path);
	/* In wrap's form with a policy moat does not vouch for: not wrapped,
	 * whatever the form says. */
	bool unvouched = e->state == MCP_WRAPPED && uv;
	json_t *j = json_pack("{s:o, s:o, s:i, s:i, s:s, s:s}", "name", json_text(e->name), "key", json_text(e->key),
			      "line", e->pos.line, "col", e->pos.col, "kind", kind_name(e->kind), "state",
			      unvouched ? "unvouched" : state_name(e->state));
	char **argv = NULL, *const *cmd = e->argv;
	cleanup_free char *stale = NULL;
	size_t argc = 0, n_cmd = e->argc, i;

	const char *skip = entry_skip(e);

	json_object_set_new(j, "skip", skip ? json_text(skip) : json_null());
	json_object_set_new(j, "command", strings_json(e->argv, e->argc));
	if (uv)
		json_object_set_new(j, "unvouched",
				    json_pack("{s:o, s:o}", "policies", json_text(uv_path), "why", json_text(uv)));
	if (skip)
		return j;
	if (e->state == MCP_WRAPPED) {
		/* Not the profile of a file moat does not vouch for: no one
		 * can tell that it stays the server's policy. */
		struct policies *p = unvouched ? NULL : cached(pc, e->policies);
		const struct toml_value *prof = p && p->p ? mcp_policies_profile(p->p, e->profile) : NULL;

		cmd = e->argv + MCP_WRAP_ARGS;
		n_cmd = e->argc - MCP_WRAP_ARGS;
		json_object_set_new(j, "server_command", strings_json(cmd, n_cmd));
		json_object_set_new(j, "policies", json_text(e->policies));
		json_object_set_new(j, "profile", json_text(e->profile));
		json_object_set_new(j, "policy", prof ? value_json(prof) : json_null());
		if (p && p->p && (stale = carried_stale(c, l, e, mcp_policies_record(p->p, e->profile)))) {
			json_object_set_new(j, "verdict",
					    json_pack("{s:s, s:o}", "status", "error", "error", json_text(stale)));
			return j;
		}
	}
	if (uv && !unvouched) {
		/* moat by hand with another's policy file: a dry run of it
		 * would show that file's policy as the server's. */
		json_object_set_new(j, "verdict", json_pack("{s:s}", "status", "unvouched"));
		return j;
	}
	if (e->state == MCP_NESTED) {
		json_object_set_new(j, "verdict",
				    json_pack("{s:s, s:s}", "status", "error", "error",
					      "moat inside moat: the server's own command line runs moat again"));
		return j;
	}
	if ((e->state == MCP_UNWRAPPED || unvouched) && entry_hook(e)) {
		cleanup_free char *why = moat_xasprintf("wrap would refuse it: its env sets %s, a loader or interpreter "
							"hook moat does not pass from a client's file",
							entry_hook(e));
		json_object_set_new(j, "verdict", json_pack("{s:s, s:o}", "status", "error", "error", json_text(why)));
		return j;
	}
	if (e->state == MCP_UNWRAPPED || unvouched) {
		struct moat_error typo = {0};

		if (entry_typo(l, e, &typo) < 0) {
			cleanup_free char *why = moat_xasprintf("wrap would refuse it: %s%s%s%s", typo.message,
								typo.hint[0] ? " (" : "", typo.hint,
								typo.hint[0] ? ")" : "");

			json_object_set_new(j, "verdict",
					    json_pack("{s:s, s:o}", "status", "error", "error", json_text(why)));
			return j;
		}
	}
	/* What the client starts, as a dry run: the entry's own moat
	 * arguments, or for one not under moat (or under a policy moat does
	 * not vouch for) what wrap would give it. */
	argv = moat_xcalloc(e->argc + 2 * e->n_env + 6, sizeof(*argv));
	if (e->state == MCP_UNWRAPPED || unvouched) {
		argv[argc++] = (char *)"run";
		argv[argc++] = (char *)"--profile";
		argv[argc++] = (char *)MOAT_SERVER_DEFAULT_PROFILE;
		/* What the client sets, wrap passes on (its profile's env_pass),
		 * for the notes of the paths they name.  A name that is none
		 * is wrap's to refuse, as before. */
		for (i = 0; i < e->n_env; i++) {
			if (!env_name_valid(e->env_names[i]))
				continue;
			argv[argc++] = (char *)"--env-pass";
			argv[argc++] = e->env_names[i];
		}
		argv[argc++] = (char *)"--";
		for (i = 0; i < n_cmd; i++)
			argv[argc++] = cmd[i];
	} else {
		/* Wrap's form starts with moat, whatever its name. */
		long at = e->state == MCP_WRAPPED ? 0 : mcp_moat_index(e->argv, e->argc, c->r->moat);

		for (i = (size_t)at + 1; i < e->argc; i++)
			argv[argc++] = e->argv[i];
	}
	if (argc > 0 && strcmp(argv[0], "run") == 0) {
		char **env = mcp_entry_environ(e, environ);
		json_t *v = verdict(host, argv, argc, env);

		mcp_environ_free(env);

		json_object_set_new(v, "if_wrapped", json_boolean(e->state == MCP_UNWRAPPED || unvouched));
		hint_notes(c, e->name, e->state == MCP_UNWRAPPED || unvouched,
			   e->state == MCP_WRAPPED && !unvouched ? e->profile : NULL, e->policies,
			   json_object_get(v, "notes"));
		json_object_set_new(j, "verdict", v);
	} else {
		json_object_set_new(
		    j, "verdict", json_pack("{s:s, s:s}", "status", "error", "error", "moat runs, but not `moat run`"));
	}
	free(argv);
	return j;
}

/* The names of the servers of the files read, "a, b", each once; and how
 * many files could not be read. */
static char *server_names(const struct ctx *c, size_t *unread)
{
	cleanup_free const char **seen = NULL;
	size_t cap = 0, n = 0, len = 0, i, k, j;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	*unread = 0;
	if (!f)
		return moat_xstrdup("?");
	for (i = 0; i < c->n_files; i++) {
		const struct mcp_file *mf = c->files[i].f;

		*unread += !mf;
		for (k = 0; mf && k < mf->n_entries; k++) {
			for (j = 0; j < n && strcmp(seen[j], mf->entries[k].name) != 0; j++)
				;
			if (j < n)
				continue;
			seen = moat_xgrow(seen, &cap, n, sizeof(*seen));
			seen[n] = mf->entries[k].name;
			fprintf(f, "%s%s", n++ ? ", " : "", mf->entries[k].name);
		}
	}
	fclose(f);
	return buf;
}

/* The entries the request names: all, or --server NAME's, which must be
 * in some file: one that is in none is an error naming those there are
 * (list showed an empty listing, and exited 0). */
static int check_named(const struct ctx *c, struct moat_error *err)
{
	cleanup_free char *names = NULL;
	size_t i, k, unread;

	if (!c->r->server)
		return 0;
	for (i = 0; i < c->n_files; i++)
		for (k = 0; c->files[i].f && k < c->files[i].f->n_entries; k++)
			if (strcmp(c->files[i].f->entries[k].name, c->r->server) == 0)
				return 0;
	if (c->r->config)
		moat_error_set(err, MOAT_E_USAGE, 0, "%s: no server named %s", c->r->config, c->r->server);
	else
		moat_error_set(err, MOAT_E_USAGE, 0, "no server named %s in the clients' files of %s and %s",
			       c->r->server, c->home ? c->home : "(no HOME)", c->cwd);
	names = server_names(c, &unread);
	if (unread)
		return moat_error_hint(err, "%zu of the files could not be read (moat mcp list says why)%s%s", unread,
				       *names ? "; the servers of the others: " : "", names);
	if (c->n_files == 0)
		return moat_error_hint(err, "moat found no MCP client's file there; name one with --config FILE");
	if (!*names)
		return moat_error_hint(err, "%s no servers", c->r->config ? "it has" : "they have");
	return moat_error_hint(err, "the servers there: %s", names);
}

int api_mcp_list(const struct api_mcp_request *r, json_t **out, struct moat_error *err)
{
	struct ctx c;
	struct moat_host host;
	struct policy_cache pc = {0};
	json_t *doc = NULL, *files;
	size_t i, k;
	int rc = -1;

	if (ctx_init(&c, r, err) < 0)
		return -1;
	if (load_files(&c, err) < 0 || check_named(&c, err) < 0 || host_probe(&host, err) < 0)
		goto out;
	doc = json_pack("{s:s, s:o, s:o}", "schema", "moat.mcp-list/1", "moat", json_text(r->moat), "project",
			json_text(c.cwd));
	json_object_set_new(doc, "policies", c.policies ? json_text(c.policies) : json_null());
	files = json_array();
	for (i = 0; i < c.n_files; i++) {
		struct loaded *l = &c.files[i];
		json_t *fj = json_pack("{s:s, s:s, s:s, s:o}", "client", mcp_client_id(l->client), "client_name",
				       mcp_client_name(l->client), "scope", l->scope, "file", json_text(l->src.shown));
		json_t *servers = json_array();

		if (l->src.real && strcmp(l->src.real, l->src.shown) != 0)
			json_object_set_new(fj, "symlink_to", json_text(l->src.real));
		if (!l->f) {
			json_object_set_new(fj, "error", json_text(l->error.message));
			if (l->error.hint[0])
				json_object_set_new(fj, "hint", json_text(l->error.hint));
		} else {
			for (k = 0; k < l->f->n_entries; k++) {
				const struct mcp_entry *e = &l->f->entries[k];

				if (r->server && strcmp(e->name, r->server) != 0)
					continue;
				json_array_append_new(servers, entry_json(&c, l, e, &host, &pc));
			}
		}
		json_object_set_new(fj, "servers", servers);
		json_array_append_new(files, fj);
	}
	json_object_set_new(doc, "files", files);
	*out = steal_ptr(&doc);
	rc = 0;
out:
	cache_free(&pc);
	ctx_free(&c);
	return rc;
}

/* ---- wrap and unwrap: what is done, said ---- */

static json_t *file_report(json_t *files, const struct loaded *l)
{
	json_t *fj = json_pack("{s:o, s:s, s:b, s:[]}", "file", json_text(l->src.shown), "client",
			       mcp_client_id(l->client), "changed", 0, "servers");

	if (strcmp(l->src.real, l->src.shown) != 0)
		json_object_set_new(fj, "symlink_to", json_text(l->src.real));
	json_array_append_new(files, fj);
	return fj;
}

/* A found file that could not be read, in the report: its servers are
 * neither wrapped nor unwrapped. */
static void unread_report(json_t *files, const struct loaded *l)
{
	json_array_append_new(files, json_pack("{s:o, s:o, s:[]}", "file", json_text(l->src.shown ? l->src.shown : ""),
					       "error", json_text(l->error.message), "servers"));
}

/* After the files that could be read are done: an error when a found
 * file could not be, so that a script that checks the exit status does
 * not take its servers for wrapped (or unwrapped).  The first is named. */
static int unread_error(const struct ctx *c, const char *done, const char *verb, struct moat_error *err)
{
	const struct loaded *first = NULL;
	size_t i, n = 0;

	for (i = 0; i < c->n_files; i++)
		if (!c->files[i].f && n++ == 0)
			first = &c->files[i];
	if (n == 0)
		return 0;
	moat_error_set(err, MOAT_E_CONFIG, 0, "%zu client file%s could not be read and %s servers are not %s: %s", n,
		       n > 1 ? "s" : "", n > 1 ? "their" : "its", done, first->error.message);
	if (first->error.hint[0])
		return moat_error_hint(err, "%s; then run moat mcp %s again", first->error.hint, verb);
	return moat_error_hint(err, "fix %s (moat mcp list says what is wrong with each file) and run moat mcp %s again",
			       n > 1 ? "them" : "it", verb);
}

static json_t *say(json_t *fj, const struct mcp_entry *e, const char *action, const char *profile, const char *why)
{
	json_t *s = json_pack("{s:o, s:o, s:i, s:s}", "name", json_text(e->name), "key", json_text(e->key), "line",
			      e->pos.line, "action", action);

	if (profile)
		json_object_set_new(s, "profile", json_text(profile));
	if (why)
		json_object_set_new(s, "why", json_text(why));
	json_array_append_new(json_object_get(fj, "servers"), s);
	return s;
}

static bool selected(const struct ctx *c, const struct mcp_entry *e)
{
	return !c->r->server || strcmp(e->name, c->r->server) == 0;
}

/* The entry with `key` in a file parsed again. */
static const struct mcp_entry *find_key(const struct mcp_file *f, const char *key)
{
	size_t i;

	for (i = 0; f && i < f->n_entries; i++)
		if (strcmp(f->entries[i].key, key) == 0)
			return &f->entries[i];
	return NULL;
}

static bool same_argv(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

static int cmp_splice(const void *a, const void *b)
{
	const struct mcp_splice *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Keep a copy of the client's file beside it, then replace it -- if it is
 * still what moat read. */
static int write_client(const struct loaded *l, const char *text, size_t len, json_t *fj, struct moat_error *err)
{
	cleanup_free char *backup = moat_xasprintf("%s" BACKUP_SUFFIX, l->src.name);
	cleanup_free char *shown = moat_xasprintf("%s" BACKUP_SUFFIX, l->src.real);

	if (source_foreign_check(&l->src, err) < 0)
		return -1;

	if (file_replace_at(l->src.dirfd, backup, shown, l->f->text, l->f->len, l->src.st.st_mode, NULL, true, err) < 0)
		return moat_error_wrap(err, "keeping a copy of %s before changing it", l->src.shown);
	if (file_replace_at(l->src.dirfd, l->src.name, l->src.shown, text, len, l->src.st.st_mode, &l->src.st, false,
			    err) < 0)
		return -1;
	json_object_set_new(fj, "changed", json_true());
	json_object_set_new(fj, "backup", json_text(shown));
	return 0;
}

static int write_policies(struct policies *p, const char *text, size_t len, struct moat_error *err)
{
	mode_t mode = p->src.exists ? p->src.st.st_mode : 0600;

	if (source_foreign_check(&p->src, err) < 0)
		return -1;
	if (p->src.dirfd < 0) {
		cleanup_free char *dir = moat_xstrdup(p->src.real ? p->src.real : p->src.shown);

		*strrchr(dir, '/') = '\0';
		if (make_dirs(dir, err) < 0)
			return moat_error_wrap(err, "the policy file %s", p->src.shown);
		p->src.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (p->src.dirfd < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", dir);
		if (!p->src.name)
			p->src.name = moat_xstrdup(strrchr(p->src.shown, '/') + 1);
	}
	return file_replace_at(p->src.dirfd, p->src.name, p->src.shown, text, len, mode,
			       p->src.exists ? &p->src.st : NULL, false, err);
}

/* Read the policy file again after writing it: its new text, stat and
 * tree for what comes next. */
static int policies_reread(struct policies *p, struct moat_error *err)
{
	cleanup_free char *path = moat_xstrdup(p->src.shown);

	policies_free(p);
	return policies_read(path, p, err);
}

/* ---- wrap ---- */

/* The policy file as it was before wrap wrote it (nothing, if there was
 * none): the client's file could not be written, and its entries must not
 * be left without their profiles -- nor profiles without their entries. */
static void undo_policies(struct policies *p, const char *old, bool existed)
{
	struct moat_error ignored = {0};
	struct stat now;

	if (fstatat(p->src.dirfd, p->src.name, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if (!existed)
		unlinkat(p->src.dirfd, p->src.name, 0);
	else
		(void)file_replace_at(p->src.dirfd, p->src.name, p->src.shown, old, strlen(old), p->src.st.st_mode,
				      &now, false, &ignored);
}

/* The policy planned on this host, as a run plans it: what only the plan
 * finds wrong (a grant of /tmp, which is the sandbox's own) is refused
 * before anything is written.  What the host lacks is not an error: the
 * verdict says it, and the mode decides at the run. */
static int plan_check(const struct moat_policy *p, struct moat_error *err)
{
	struct moat_host host;
	struct moat_plan plan;

	if (host_probe(&host, err) < 0 || plan_build(p, &host, &plan, err) < 0)
		return -1;
	host_cleanup(&plan, getpid(), false);
	plan_free(&plan);
	return 0;
}

/* The plan's hint for a write grant that does not exist offers moat run's
 * --mkdir, which wrap does not take ("unknown option", followed): wrap's
 * says the mkdir alone. */
static void drop_mkdir_hint(struct moat_error *err)
{
	static const char offer[] = " (or give --mkdir, and moat creates it)";
	char *at = strstr(err->hint, offer);

	if (at)
		memmove(at, at + strlen(offer), strlen(at + strlen(offer)) + 1);
}

/* moat run's own check of the policy options, before anything is written. */
static int check_flags(const struct api_mcp_request *r, struct moat_error *err)
{
	cleanup_free char **argv = moat_xcalloc(2 * r->n_flags + 6, sizeof(*argv));
	struct moat_policy p;
	struct moat_run_options o;
	size_t argc = 0, i;
	int rc;

	/* The servers' own profile (mcp unless named): moat run's default,
	 * exec, grants the current directory, and would refuse a wrap run
	 * from HOME, where a new terminal starts. */
	argv[argc++] = (char *)"run";
	argv[argc++] = (char *)"--profile";
	argv[argc++] = (char *)(r->profile && profile_is_builtin(r->profile) ? r->profile : MOAT_SERVER_DEFAULT_PROFILE);
	for (i = 0; i < r->n_flags; i++) {
		argv[argc++] = (char *)r->flags[i].opt;
		if (r->flags[i].value)
			argv[argc++] = (char *)r->flags[i].value;
	}
	argv[argc++] = (char *)"--";
	argv[argc++] = (char *)"/bin/true";
	policy_init(&p);
	run_options_init(&o);
	o.defer_exe_err = true;
	rc = cli_parse_run((int)argc, argv, environ, &p, &o, err);
	if (rc == 0)
		rc = plan_check(&p, err);
	policy_free(&p);
	run_options_free(&o);
	if (rc < 0)
		drop_mkdir_hint(err);
	return rc;
}

/* An entry wrap wraps: its new profile's id, the server's own command
 * line (the entry's, or after the `--` of an entry in wrap's form whose
 * policy moat does not vouch for), and the edit. */
struct plan_entry {
	const struct mcp_entry *e;
	char *id;
	char *const *cmd;
	size_t n_cmd;
	struct mcp_splice s;
	json_t *notes; /* directories among its arguments the new profile does not show */
};

/* The new policy file must load, and each new profile build and plan for
 * its server as `moat run --config FILE --profile ID -- COMMAND` will
 * (a command not installed here is no reason to refuse). */
static int check_policies(const char *path, const char *text, size_t len, struct plan_entry *pe, size_t n,
			  const char *home, struct moat_error *err)
{
	struct moat_config *cfg = NULL;
	size_t i;
	int rc = 0;

	if (config_load_buffer(path, text, len, home, &cfg, err) < 0)
		return moat_error_wrap(err, "the policy file as wrap would write it");
	for (i = 0; i < n && rc == 0; i++) {
		struct moat_policy p;
		struct moat_error exe = {0};
		char **env = mcp_entry_environ(pe[i].e, environ);
		struct config_request req = {.argv = (char **)pe[i].cmd,
					     .argc = pe[i].n_cmd,
					     .profile = pe[i].id,
					     .mode = -1,
					     .env = env,
					     .exe_err = &exe};

		policy_init(&p);
		rc = config_build(cfg, &req, &p, NULL, err);
		if (rc == 0)
			rc = policy_validate(&p, err);
		if (rc == 0)
			rc = plan_check(&p, err);
		if (rc == 0)
			pe[i].notes = hidden_notes_json(&p, env);
		if (rc < 0)
			moat_error_wrap(err, "the policy for %s", pe[i].e->name);
		policy_free(&p);
		mcp_environ_free(env);
	}
	config_free(cfg);
	return rc;
}

/* Why an entry is not wrapped, or NULL: it is to be.  *refuse: naming it
 * with --server is an error.  unvouched: its policy is not one moat
 * vouches for (entry_unvouched): in wrap's form, it is wrapped anew. */
static const char *wrap_skip(const struct mcp_entry *e, bool unvouched, bool *refuse)
{
	const char *why = entry_skip(e);

	*refuse = true;
	if (why)
		return why;
	if (e->state == MCP_BY_HAND)
		return "it already runs under moat (written by hand): wrapping it again would run moat inside moat";
	if (e->state == MCP_NESTED)
		return "its command line runs moat inside moat: fix it by hand";
	*refuse = false;
	if (e->state == MCP_WRAPPED && !unvouched)
		return "already wrapped";
	return NULL;
}

/* What wrap says of an entry, in its report: and when its policy is not
 * one moat vouches for, that. */
static json_t *say_wrap(json_t *fj, const struct mcp_entry *e, const char *action, const char *profile,
			const char *why, const char *unvouched)
{
	json_t *s = say(fj, e, action, profile, why);

	if (unvouched)
		json_object_set_new(s, "unvouched", json_text(unvouched));
	return s;
}

static int wrap_file(struct ctx *c, struct loaded *l, struct policies *pol, struct policy_cache *pc, json_t *fj,
		     struct moat_error *err)
{
	const struct api_mcp_request *r = c->r;
	struct plan_entry *pe = moat_xcalloc(l->f->n_entries + 1, sizeof(*pe));
	struct mcp_splice *splices = moat_xcalloc(l->f->n_entries + 1, sizeof(*splices));
	/* What is said of each entry, in the file's order, once done; and
	 * of one whose policy moat does not vouch for, that. */
	cleanup_free const char **whys = moat_xcalloc(l->f->n_entries + 1, sizeof(*whys));
	char **uvs = moat_xcalloc(l->f->n_entries + 1, sizeof(*uvs));
	cleanup_free char *ptext = NULL, *ctext = NULL, *old = NULL;
	struct mcp_file *check = NULL;
	size_t n = 0, plen, clen, i, k;
	bool existed;
	int rc = -1;

	ptext = moat_xstrdup(pol->p->exists ? pol->p->text : mcp_policies_preamble());
	plen = strlen(ptext);
	for (k = 0; k < l->f->n_entries; k++) {
		const struct mcp_entry *e = &l->f->entries[k];
		cleanup_free char **argv = NULL, *rec = NULL, *carried = NULL;
		cleanup_free struct mcp_carried *cv = NULL;
		struct mcp_policies *now = NULL;
		struct mcp_wrap_record wr;
		const char *why, *uv_path, *builtin;
		size_t n_cv;
		bool refuse;

		if (!selected(c, e))
			continue;
		uvs[k] = entry_unvouched(c, l, e, pc, &uv_path);
		why = wrap_skip(e, uvs[k] != NULL, &refuse);
		if (why) {
			whys[k] = why;
			continue;
		}
		/* Said at the entry, before the policy file it would go into
		 * (which is not written) is built. */
		if (entry_hook(e)) {
			moat_error_set(err, MOAT_E_CONFIG, 0,
				       "%s:%d:%d: %s: not wrapped: its env sets %s, a loader or interpreter hook moat "
				       "does not pass from a client's file: it would run code before the server's own",
				       l->src.shown, e->pos.line, e->pos.col, e->key, entry_hook(e));
			moat_error_hint(err, "remove it from the entry, then wrap; if it is really wanted, run the server "
					     "by hand with --env %s=VALUE",
					entry_hook(e));
			goto out;
		}
		/* The server's own command line: in wrap's form under a policy
		 * moat does not vouch for, what follows its `--` -- wrapped
		 * anew, its record keeps the entry's bytes as they are, for
		 * unwrap to put back. */
		pe[n].cmd = e->argv;
		pe[n].n_cmd = e->argc;
		if (e->state == MCP_WRAPPED) {
			pe[n].cmd = e->argv + MCP_WRAP_ARGS;
			pe[n].n_cmd = e->argc - MCP_WRAP_ARGS;
		}
		/* The id, new in the file as it now is (earlier entries of
		 * this file included). */
		if (mcp_policies_parse(pol->src.shown, moat_xmemdup(ptext, plen), plen, true, &now, err) < 0)
			goto out;
		pe[n].e = e;
		pe[n].id = mcp_policies_new_id(now, l->client, e->name);
		mcp_policies_free(now);
		argv = moat_xcalloc(pe[n].n_cmd + MCP_WRAP_ARGS + 1, sizeof(*argv));
		argv[0] = (char *)r->moat;
		argv[1] = (char *)"run";
		argv[2] = (char *)"--config";
		argv[3] = pol->src.shown;
		argv[4] = (char *)"--profile";
		argv[5] = pe[n].id;
		argv[6] = (char *)"--";
		for (i = 0; i < pe[n].n_cmd; i++)
			argv[MCP_WRAP_ARGS + i] = pe[n].cmd[i];
		if (mcp_entry_rewrite(l->f, e, argv, pe[n].n_cmd + MCP_WRAP_ARGS, &pe[n].s, err) < 0)
			goto out;
		/* The entry's own moat settings go along, under wrap's flags. */
		if (entry_carried(c, l, e, &cv, &n_cv, &builtin, err) < 0 ||
		    !(carried = mcp_carried_text(cv, n_cv, err)))
			goto out;
		wr = (struct mcp_wrap_record){
		    .id = pe[n].id,
		    .extends = r->profile ? r->profile : builtin,
		    .flags = r->flags,
		    .n_flags = r->n_flags,
		    .env_pass = e->env_names,
		    .n_env_pass = e->n_env,
		    .cwd = c->cwd,
		    .carried = cv,
		    .n_carried = n_cv,
		    .carried_text = carried,
		    .client = mcp_client_id(l->client),
		    .file = l->src.shown,
		    .server = e->name,
		    .before = moat_xstrndup(l->f->text + pe[n].s.off, pe[n].s.end - pe[n].s.off),
		    .after = pe[n].s.text,
		};
		rec = mcp_record_text(&wr, err);
		free((char *)wr.before);
		if (!rec)
			goto out;
		ptext = moat_xrealloc(ptext, plen + strlen(rec) + 1);
		memcpy(ptext + plen, rec, strlen(rec) + 1);
		plen += strlen(rec);
		splices[n] = pe[n].s;
		n++;
	}
	if (n == 0) {
		rc = 0;
		goto said;
	}
	/* Everything checked before a byte is written. */
	if (check_policies(pol->src.shown, ptext, plen, pe, n, c->home, err) < 0 ||
	    source_foreign_check(&pol->src, err) < 0 || source_foreign_check(&l->src, err) < 0)
		goto out;
	qsort(splices, n, sizeof(*splices), cmp_splice);
	ctext = mcp_splices_apply(l->f->text, l->f->len, splices, n, &clen);
	if (mcp_file_parse(l->src.shown, l->client, moat_xmemdup(ctext, clen), clen, c->cwd, r->moat, &check, err) < 0) {
		moat_error_wrap(err, "moat's own edit does not read back (a bug: nothing was written)");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct mcp_entry *w = find_key(check, pe[i].e->key);

		if (!w || w->state != MCP_WRAPPED || strcmp(w->profile, pe[i].id) != 0 ||
		    strcmp(w->policies, pol->src.shown) != 0 ||
		    !same_argv(w->argv + MCP_WRAP_ARGS, w->argc - MCP_WRAP_ARGS, pe[i].cmd, pe[i].n_cmd)) {
			moat_error_set(err, MOAT_E_CONFIG, 0,
				       "%s: %s: moat's own edit does not read back as wrapped (a bug: nothing was "
				       "written)",
				       l->src.shown, pe[i].e->key);
			goto out;
		}
	}
	/* The policies first: the client's entries name them; and back as
	 * they were when the client's file cannot be written. */
	existed = pol->src.exists;
	old = moat_xstrdup(pol->p->text);
	if (write_policies(pol, ptext, plen, err) < 0)
		goto out;
	if (write_client(l, ctext, clen, fj, err) < 0) {
		undo_policies(pol, old, existed);
		goto out;
	}
	rc = policies_reread(pol, err);
said:
	for (k = 0, i = 0; k < l->f->n_entries; k++) {
		const struct mcp_entry *e = &l->f->entries[k];

		if (i < n && pe[i].e == e) {
			json_t *s = say_wrap(fj, e, "wrapped", pe[i].id,
					     uvs[k] ? "wrapped anew from the server's own command line (after its --); "
						      "unwrap puts the entry back as it was"
						    : NULL,
					     uvs[k]);

			if (json_array_size(pe[i].notes) > 0) {
				hint_notes(c, e->name, false, pe[i].id, pol->src.shown, pe[i].notes);
				json_object_set(s, "notes", pe[i].notes);
			}
			i++;
		} else if (whys[k])
			say_wrap(fj, e, e->state == MCP_WRAPPED ? "unchanged" : "skipped",
				 e->state == MCP_WRAPPED ? e->profile : NULL, whys[k], uvs[k]);
	}
out:
	for (i = 0; i < l->f->n_entries; i++) {
		free(pe[i].id);
		json_decref(pe[i].notes);
		mcp_splice_free(&pe[i].s);
		free(uvs[i]);
	}
	free(uvs);
	free(pe);
	free(splices);
	mcp_file_free(check);
	return rc;
}

int api_mcp_wrap(const struct api_mcp_request *r, json_t **out, struct moat_error *err)
{
	struct ctx c;
	struct policies pol = {0};
	struct policy_cache pc = {0};
	json_t *doc = NULL, *files;
	size_t i, k;
	int rc = -1;

	*out = NULL;
	if (ctx_init(&c, r, err) < 0)
		return -1;
	if (!c.policies) {
		moat_error_set(err, MOAT_E_USAGE, 0, "no HOME: moat cannot tell where its policy file is");
		moat_error_hint(err, "name it: moat mcp wrap --policies FILE");
		goto out;
	}
	if (check_flags(r, err) < 0 || load_files(&c, err) < 0 || check_named(&c, err) < 0)
		goto out;
	/* An entry named with --server that moat does not wrap: refused,
	 * before anything is written. */
	for (i = 0; r->server && i < c.n_files; i++) {
		for (k = 0; c.files[i].f && k < c.files[i].f->n_entries; k++) {
			const struct mcp_entry *e = &c.files[i].f->entries[k];
			cleanup_free char *uv = NULL;
			const char *why, *uv_path;
			bool refuse;

			if (!selected(&c, e))
				continue;
			uv = entry_unvouched(&c, &c.files[i], e, &pc, &uv_path);
			if (!(why = wrap_skip(e, uv != NULL, &refuse)) || !refuse)
				continue;
			moat_error_set(err, MOAT_E_USAGE, 0, "%s:%d:%d: %s: not wrapped: %s", c.files[i].src.shown,
				       e->pos.line, e->pos.col, e->key, why);
			if (uv)
				moat_error_hint(err, "it %s; moat does not run moat inside moat: fix the entry by hand",
						uv);
			else if (e->state == MCP_BY_HAND || e->state == MCP_NESTED)
				moat_error_hint(err, "moat does not run moat inside moat; the entry is left as it is");
			goto out;
		}
	}
	if (policies_read(c.policies, &pol, err) < 0)
		goto out;
	doc = json_pack("{s:s, s:o}", "schema", "moat.mcp-edit/1", "policies", json_text(pol.src.shown));
	files = json_array();
	json_object_set_new(doc, "files", files);
	for (i = 0; i < c.n_files; i++) {
		struct loaded *l = &c.files[i];
		json_t *fj;

		if (!l->f) {
			unread_report(files, l);
			continue;
		}
		fj = file_report(files, l);
		if (wrap_file(&c, l, &pol, &pc, fj, err) < 0) {
			/* Not twice when the message names the file already
			 * (FILE:LINE:COL: an entry's problem). */
			if (strncmp(err->message, l->src.shown, strlen(l->src.shown)) != 0)
				moat_error_wrap(err, "%s", l->src.shown);
			goto out;
		}
	}
	rc = unread_error(&c, "wrapped", "wrap", err);
out:
	*out = doc;
	policies_free(&pol);
	cache_free(&pc);
	ctx_free(&c);
	return rc;
}

/* ---- unwrap ---- */

/* The splice that puts back what wrap replaced: its own bytes when they
 * are still there, else the entry's command line from the entry itself.
 * rec: wrap's record of this entry, NULL when there is none to trust.
 * *why says which, when not exact. */
static int unwrap_splice(const struct loaded *l, const struct mcp_entry *e, const struct toml_value *rec,
			 struct mcp_splice *s, const char **why, struct moat_error *err)
{
	const char *before = mcp_record_get(rec, "before"), *after = mcp_record_get(rec, "after");
	size_t start = e->args && e->args->off < e->command->off ? e->args->off : e->command->off;

	if (before && after && start + strlen(after) <= l->f->len &&
	    memcmp(l->f->text + start, after, strlen(after)) == 0) {
		*s = (struct mcp_splice){.off = start, .end = start + strlen(after), .text = moat_xstrdup(before)};
		*why = NULL;
		return 0;
	}
	*why = rec ? "its bytes changed since wrap (the client or an editor rewrote them): its command line is put "
		     "back from the entry, in the layout the entry has now"
		   : "no record of wrap's for it to go by: its command line is put back from the entry";
	return mcp_entry_rewrite(l->f, e, e->argv + MCP_WRAP_ARGS, e->argc - MCP_WRAP_ARGS, s, err);
}

/* Remove the profiles and records of the entries unwrapped from their
 * policy files: of those whose policy file is theirs (alone[k] NULL), each
 * profile once.  A failure here leaves a profile no entry names: said, not
 * an error. */
static void forget(struct policy_cache *pc, const struct mcp_entry **es, char *const *alone, size_t n, json_t *fj)
{
	size_t i, k, j;

	for (i = 0; i < pc->n; i++) {
		struct policies *p = &pc->v[i];
		struct mcp_splice *s = NULL;
		struct moat_error err = {0};
		cleanup_free char *text = NULL;
		size_t ns = 0, len;
		bool all = true;

		if (!p->p)
			continue;
		for (k = 0; k < n; k++) {
			if (alone[k] || strcmp(es[k]->policies, pc->paths[i]) != 0)
				continue;
			for (j = 0; j < k; j++)
				if (!alone[j] && strcmp(es[j]->policies, pc->paths[i]) == 0 &&
				    strcmp(es[j]->profile, es[k]->profile) == 0)
					break;
			if (j == k)
				all &= mcp_policies_remove(p->p, es[k]->profile, &s, &ns);
		}
		if (ns > 0) {
			mcp_policies_take_blank_lines(p->p, s, ns);
			text = mcp_splices_apply(p->p->text, p->p->len, s, ns, &len);
			if (write_policies(p, text, len, &err) < 0 || policies_reread(p, &err) < 0)
				json_object_set_new(fj, "policies_left", json_text(err.message));
		}
		if (!all)
			json_object_set_new(
			    fj, "policies_left",
			    json_sprintf("%s: a profile or record not written as its own section is left",
					 pc->paths[i]));
		for (k = 0; k < ns; k++)
			mcp_splice_free(&s[k]);
		free(s);
	}
}

static int unwrap_file(struct ctx *c, struct loaded *l, struct policy_cache *pc, json_t *fj, struct moat_error *err)
{
	struct mcp_splice *splices = moat_xcalloc(l->f->n_entries + 1, sizeof(*splices));
	const struct mcp_entry **es = moat_xcalloc(l->f->n_entries + 1, sizeof(*es));
	const char **whys = moat_xcalloc(l->f->n_entries + 1, sizeof(*whys));
	/* Why the policy file each names is left as it is (policy_not_ours). */
	char **alone = moat_xcalloc(l->f->n_entries + 1, sizeof(*alone));
	cleanup_free char *ctext = NULL;
	struct mcp_file *check = NULL;
	size_t n = 0, clen, i, k;
	int rc = -1;

	for (k = 0; k < l->f->n_entries; k++) {
		const struct mcp_entry *e = &l->f->entries[k];
		struct policies *p;

		if (!selected(c, e))
			continue;
		/* moat inside moat in wrap's form is unwrapped only when
		 * named: its server's own command line runs moat too. */
		if (!e->profile || (e->state == MCP_NESTED && !c->r->server)) {
			if (e->state == MCP_BY_HAND)
				say(fj, e, "skipped", NULL,
				    "it runs under moat as written by hand, not by moat mcp wrap");
			else if (e->state == MCP_NESTED)
				say(fj, e, "skipped", NULL,
				    "moat inside moat: left as it is unless named with --server");
			else if (c->r->server)
				say(fj, e, "unchanged", NULL, "not wrapped");
			continue;
		}
		alone[n] = policy_not_ours(c, l, e, pc, VOUCH_EDIT);
		p = cached(pc, e->policies);
		if (unwrap_splice(l, e, alone[n] ? NULL : mcp_policies_record(p->p, e->profile), &splices[n], &whys[n],
				  err) < 0)
			goto out;
		es[n++] = e;
	}
	if (n == 0) {
		rc = 0;
		goto out;
	}
	qsort(splices, n, sizeof(*splices), cmp_splice);
	ctext = mcp_splices_apply(l->f->text, l->f->len, splices, n, &clen);
	if (mcp_file_parse(l->src.shown, l->client, moat_xmemdup(ctext, clen), clen, c->cwd, c->r->moat, &check, err) < 0) {
		moat_error_wrap(err, "moat's own edit does not read back (a bug: nothing was written)");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct mcp_entry *u = find_key(check, es[i]->key);
		/* wrap's exact bytes (whys[i] NULL) may be an entry in wrap's
		 * form themselves: one whose policy moat did not vouch for,
		 * wrapped anew.  It runs the same server. */
		bool form = u && u->state == MCP_WRAPPED && !whys[i];
		size_t skip = form ? MCP_WRAP_ARGS : 0;

		if (!u || (u->profile && !form) ||
		    !same_argv(u->argv + skip, u->argc - skip, es[i]->argv + MCP_WRAP_ARGS,
			       es[i]->argc - MCP_WRAP_ARGS)) {
			moat_error_set(
			    err, MOAT_E_CONFIG, 0,
			    "%s: %s: moat's own edit does not read back as the server's command line (a bug: "
			    "nothing was written)",
			    l->src.shown, es[i]->key);
			goto out;
		}
	}
	if (write_client(l, ctext, clen, fj, err) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		json_t *s = say(fj, es[i], "unwrapped", es[i]->profile, whys[i]);

		if (alone[i])
			json_object_set_new(s, "policies_left_alone",
					    json_pack("{s:o, s:o}", "file", json_text(es[i]->policies), "why",
						      json_text(alone[i])));
	}
	forget(pc, es, alone, n, fj);
	rc = 0;
out:
	for (i = 0; i < n; i++)
		mcp_splice_free(&splices[i]);
	for (i = 0; i <= l->f->n_entries; i++)
		free(alone[i]);
	free(alone);
	free(splices);
	free(es);
	free(whys);
	mcp_file_free(check);
	return rc;
}

int api_mcp_unwrap(const struct api_mcp_request *r, json_t **out, struct moat_error *err)
{
	struct ctx c;
	struct policy_cache pc = {0};
	json_t *doc = NULL, *files;
	size_t i;
	int rc = -1;

	*out = NULL;
	if (ctx_init(&c, r, err) < 0)
		return -1;
	if (load_files(&c, err) < 0 || check_named(&c, err) < 0)
		goto out;
	doc = json_pack("{s:s}", "schema", "moat.mcp-edit/1");
	files = json_array();
	json_object_set_new(doc, "files", files);
	for (i = 0; i < c.n_files; i++) {
		struct loaded *l = &c.files[i];

		if (!l->f) {
			unread_report(files, l);
			continue;
		}
		if (unwrap_file(&c, l, &pc, file_report(files, l), err) < 0) {
			moat_error_wrap(err, "%s", l->src.shown);
			goto out;
		}
	}
	rc = unread_error(&c, "unwrapped", "unwrap", err);
out:
	*out = doc;
	cache_free(&pc);
	ctx_free(&c);
	return rc;
}
