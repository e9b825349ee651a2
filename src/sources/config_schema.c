/* The schema of configuration files (docs/config.md): the tree from the
 * TOML parser (or from JSON, converted to the same shape) is checked key by
 * key against one schema and compiled into struct moat_config.  Nothing
 * here touches the host. */
#include "sources/config_schema.h"

#include "policy/backend_names.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/properties.h"
#include "policy/env.h"
#include "policy/netdest.h"
#include "sources/netsets.h"
#include "policy/profiles.h"
#include "sources/config_common.h"
#include "sources/size.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

/* ---- the schema ---- */

/* moat's keys at the top of a file: the names clients give their servers
 * (Codex and darnit `mcp_servers`, Claude, Cursor and Gemini CLI
 * `mcpServers`, VS Code `servers`) and moat's own tables. */
static const char *const top_keys[] = {"mcp_servers", "mcpServers", "servers", "sandbox", "profiles", NULL};
/* The keys of a server entry moat reads: the command in each client's form,
 * what the clients say about running it (`type`, Codex's `enabled`,
 * Windsurf's and Cline's `disabled`, a remote server's address), darnit's
 * own, and moat's sandbox. */
static const char *const server_keys[] = {
    "command",	"args", "env",	   "env_vars",	"cwd",	    "type",	    "enabled",
    "disabled", "url",	"httpUrl", "serverUrl", "optional", "install_hint", "trusted_publisher",
    "sandbox",	NULL};
static const char *const remote_keys[] = {"url", "httpUrl", "serverUrl", NULL};

/* What the clients document that moat has no use for is accepted and
 * ignored.  The lists name the keys moat knows to be a client's (tests/
 * configs/README.md says where each list comes from); a key in no list is
 * taken as a client's too, unless it is one moat reads in other letter
 * case or within two edits of one (check_client_keys).
 *
 * A server entry: Codex's timeouts, tool filters and a remote server's
 * auth; VS Code's envFile, dev, sandboxEnabled and a remote server's
 * headers and oauth; Gemini CLI's timeout, trust, tool filters and auth;
 * Windsurf's tool filter. */
static const char *const client_server_keys[] = {"startup_timeout_sec",
						 "startup_timeout_ms",
						 "tool_timeout_sec",
						 "enabled_tools",
						 "disabled_tools",
						 "bearer_token_env_var",
						 "http_headers",
						 "env_http_headers",
						 "envFile",
						 "dev",
						 "sandboxEnabled",
						 "headers",
						 "oauth",
						 "timeout",
						 "trust",
						 "description",
						 "includeTools",
						 "excludeTools",
						 "authProviderType",
						 "targetAudience",
						 "targetServiceAccount",
						 "disabledTools",
						 NULL};
/* Codex's settings (docs/config.md's reference table and
 * docs/example-config.md in openai/codex), at the top of its config.toml
 * and, "profile-scoped overrides of the same keys", in its
 * [profiles.NAME]: a profile table holding only these is Codex's. */
static const char *const codex_keys[] = {"model",
					 "review_model",
					 "model_provider",
					 "model_providers",
					 "model_context_window",
					 "model_auto_compact_token_limit",
					 "model_max_output_tokens",
					 "tool_output_token_limit",
					 "model_reasoning_effort",
					 "model_reasoning_summary",
					 "model_verbosity",
					 "model_supports_reasoning_summaries",
					 "model_reasoning_summary_format",
					 "developer_instructions",
					 "instructions",
					 "compact_prompt",
					 "experimental_instructions_file",
					 "experimental_compact_prompt_file",
					 "experimental_use_exec_command_tool",
					 "experimental_use_freeform_apply_patch",
					 "include_apply_patch_tool",
					 "tools_web_search",
					 "tools_view_image",
					 "approval_policy",
					 "sandbox_mode",
					 "sandbox_workspace_write",
					 "shell_environment_policy",
					 "history",
					 "file_opener",
					 "tui",
					 "notify",
					 "notice",
					 "hide_agent_reasoning",
					 "show_raw_agent_reasoning",
					 "check_for_update_on_startup",
					 "cli_auth_credentials_store",
					 "chatgpt_base_url",
					 "forced_chatgpt_workspace_id",
					 "forced_login_method",
					 "mcp_oauth_credentials_store",
					 "project_doc_max_bytes",
					 "project_doc_fallback_filenames",
					 "tools",
					 "features",
					 "profile",
					 "projects",
					 "otel",
					 "oss_provider",
					 "ghost_snapshot",
					 NULL};
/* Gemini CLI's top-level `sandbox` (true, or the tool it sandboxes with),
 * which is not moat's [sandbox] table. */
static const char *const gemini_sandbox_tools[] = {"docker", "podman", "sandbox-exec", NULL};

static const char *const sandbox_keys[] = {"backend", "mode",	"profile",  "read",	"write",
					   "deny",    "unprotect", "unix_sockets", "net",	"network", "env_pass",
					   "require", "memory",	"pids",	    "files",	"cpu",
					   "address_space", "tmp_size", "timeout", NULL};
static const char *const profile_keys[] = {"extends", "backend",   "mode",	   "read",   "write",
					   "deny",    "unprotect", "unix_sockets", "net",    "network", "env_pass",
					   "require", "memory",	   "pids",	   "files",  "cpu",
					   "address_space", "tmp_size", "timeout", NULL};
static const char *const mode_names[] = {"require", "prefer", "off", NULL};
static const char *const net_names[] = {"none", "loopback", "all", "allow", NULL};
static const char *const network_keys[] = {"allow", "resolve", NULL};
/* Kept in step with src/policy/profiles.c (profile_apply refuses others). */
static const char *const builtin_profiles[] = {"strict", "exec", "mcp", "network", NULL};

static bool in_list(const char *word, const char *const *list)
{
	size_t i;

	for (i = 0; list[i]; i++)
		if (strcmp(word, list[i]) == 0)
			return true;
	return false;
}

/* "a, b, c" */
static char *join_plain(const char *const *list)
{
	size_t i, n = 1;
	char *out;

	for (i = 0; list[i]; i++)
		n += strlen(list[i]) + 2;
	out = moat_xmalloc(n);
	out[0] = '\0';
	for (i = 0; list[i]; i++) {
		if (i)
			strcat(out, ", ");
		strcat(out, list[i]);
	}
	return out;
}

/* "\"a\", \"b\" or \"c\"" */
static char *join_quoted(const char *const *list)
{
	size_t i, n = 1, count;
	char *out;

	for (count = 0; list[count]; count++)
		n += strlen(list[count]) + 6;
	out = moat_xmalloc(n);
	out[0] = '\0';
	for (i = 0; i < count; i++) {
		if (i)
			strcat(out, i + 1 == count ? " or " : ", ");
		strcat(out, "\"");
		strcat(out, list[i]);
		strcat(out, "\"");
	}
	return out;
}

/* ---- problems and notes ---- */

/* More are of no use to anyone reading them. */
#define MAX_PROBLEMS 200

void config_add_problem(struct moat_config *c, const struct moat_error *e)
{
	size_t i;

	for (i = 0; i < c->n_problems; i++)
		if (strcmp(c->problems[i].message, e->message) == 0)
			return;
	if (c->n_problems >= MAX_PROBLEMS)
		return;
	c->problems = moat_xrealloc(c->problems, (c->n_problems + 1) * sizeof(*c->problems));
	c->problems[c->n_problems++] = *e;
}

/* ---- the loader ---- */

/* A function that finds a problem fills L->err and returns -1, as
 * everywhere in moat; the function that goes on past it (to the next key,
 * item or server) keeps it among the file's problems, which clears L->err.
 * keep() of an empty error does nothing, so keeping twice is harmless. */
struct loader {
	struct moat_config *c;
	const char *home;
	struct moat_error *err;
};

static void keep(const struct loader *L)
{
	if (L->err->kind == MOAT_E_NONE && !L->err->message[0])
		return;
	config_add_problem(L->c, L->err);
	memset(L->err, 0, sizeof(*L->err));
}

static struct moat_origin at(const struct loader *L, struct toml_pos pos)
{
	return (struct moat_origin){.source = L->c->file, .line = pos.line, .col = pos.col};
}

static int fail(const struct loader *L, struct toml_pos pos, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(const struct loader *L, struct toml_pos pos, const char *key, const char *fmt, ...)
{
	struct moat_origin o = at(L, pos);
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return config_fail(L->err, &o, key, "%s", msg);
}

/* Type names as the file's own format calls them. */
static const char *type_phrase(const struct loader *L, enum toml_type t)
{
	if (L->c->json) {
		switch (t) {
		case TOML_TABLE:
			return "an object";
		case TOML_BOOL:
			return "a boolean";
		case TOML_INTEGER:
		case TOML_FLOAT:
			return "a number";
		default:
			break;
		}
	}
	switch (t) {
	case TOML_STRING:
		return "a string";
	case TOML_INTEGER:
		return "an integer";
	case TOML_FLOAT:
		return "a float";
	case TOML_BOOL:
		return "a bool";
	case TOML_DATETIME:
		return "a datetime";
	case TOML_DATETIME_LOCAL:
		return "a local datetime";
	case TOML_DATE_LOCAL:
		return "a local date";
	case TOML_TIME_LOCAL:
		return "a local time";
	case TOML_ARRAY:
		return "an array";
	case TOML_TABLE:
		return "a table";
	case TOML_NULL:
		return "null";
	}
	return "a value";
}

/* "FILE:LINE:COL: KEY: what", for `moat config check`. */
static void note(const struct loader *L, struct toml_pos pos, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void note(const struct loader *L, struct toml_pos pos, const char *key, const char *fmt, ...)
{
	struct moat_config *c = L->c;
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->notes = moat_xrealloc(c->notes, (c->n_notes + 1) * sizeof(*c->notes));
	c->notes[c->n_notes++] = moat_xasprintf("%s:%d:%d: %s: %s", c->file, pos.line, pos.col, key, msg);
}

static const char *table_word(const struct loader *L)
{
	return L->c->json ? "an object" : "a table";
}

static int wrong_type(const struct loader *L, const struct toml_value *v, const char *key, const char *expected)
{
	if (v->type == TOML_NULL)
		return fail(L, v->pos, key, "expected %s, got null; leave the key out instead", expected);
	/* "pids": 64.0 (json.dumps of a float): the number is shown, and what
	 * is wrong with it, not only "a number". */
	if (v->type == TOML_FLOAT && strstr(expected, "whole number")) {
		double f = v->u.flt;

		/* (No libm in the static moat: the cast tells a whole number.) */
		if (isfinite(f) && f < 1e15 && f > -1e15 && f == (double)(long long)f)
			return fail(L, v->pos, key, "expected %s, got %.1f, a number written with a point; write %.0f",
				    expected, f, f);
		return fail(L, v->pos, key, "expected %s, got %g, a number with a fraction part", expected, f);
	}
	return fail(L, v->pos, key, "expected %s, got %s", expected, type_phrase(L, v->type));
}

static bool key_in(const struct toml_keyval *kv, const char *const *list)
{
	return kv->key_len == strlen(kv->key) && in_list(kv->key, list);
}

/* A Codex setting that may also be one of a Codex profile's (all but the
 * name of the active profile). */
static bool codex_setting(const struct toml_keyval *kv)
{
	return key_in(kv, codex_keys) && strcmp(kv->key, "profile") != 0;
}

static int unknown_key(const struct loader *L, const struct toml_keyval *kv, const char *key, const char *const *known)
{
	cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);
	cleanup_free char *list = join_plain(known);
	bool hidden;
	/* Compared as an editor shows it: "sandbox" and a zero-width space
	 * is three bytes from "sandbox", but reads as it. */
	cleanup_free char *seen = config_key_visible(kv->key, kv->key_len, &hidden);
	const char *s;

	if (hidden) {
		fail(L, kv->pos, kp, "unknown key holding a character no editor shows (a NUL or a format character, "
				     "written here \\uXXXX); expected one of %s",
		     list);
		if ((s = config_suggest(seen, known)))
			return moat_error_hint(L->err, "did you mean '%s'? remove the invisible characters", s);
		return moat_error_hint(L->err, "retype the key: no key of moat's or of a client's holds one");
	}
	fail(L, kv->pos, kp, "unknown key; expected one of %s", list);
	if (codex_setting(kv))
		return moat_error_hint(L->err,
				       "%s is a Codex setting: a table holds Codex's settings or moat's, and moat's "
				       "need one of their own",
				       kv->key);
	if ((s = config_suggest(kv->key, known)))
		return moat_error_hint(L->err, "did you mean '%s'?%s", s,
				       strcasecmp(s, kv->key) == 0 ? " (keys are case-sensitive)" : "");
	return -1;
}

/* A table of moat's own: every key must be known.  Every unknown key is a
 * problem of its own (kept); -1 when there was one. */
static int check_keys(const struct loader *L, const struct toml_value *t, const char *key, const char *const *known)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);

		if (key_in(kv, known))
			continue;
		unknown_key(L, kv, key, known);
		keep(L);
		rc = -1;
	}
	return rc;
}

/* A table shared with a client (the top of a file, a server entry): moat
 * reads the `known` keys, a key in `client` is a client's and is ignored,
 * and so is any other key -- unless it is one moat reads in other letter
 * case (`SANDBOX`) or within two edits of one (`sandbx`), or it holds a
 * character no editor shows (a NUL, a zero-width space: `sandbox\u200b`
 * reads as moat's key): that is more likely a typo of it than a client's
 * setting, and ignoring it could drop a sandbox or a grant silently, so it
 * is an error.  `noted`: say in `moat config check` which unlisted keys
 * were ignored.  -1 when there was a problem (kept). */
static int check_client_keys(const struct loader *L, const struct toml_value *t, const char *key,
			     const char *const *known, const char *const *client, bool noted)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = NULL;

		bool hidden;
		cleanup_free char *seen = config_key_visible(kv->key, kv->key_len, &hidden);

		if (key_in(kv, known) || key_in(kv, client))
			continue;
		if (hidden || config_suggest(seen, known)) {
			unknown_key(L, kv, key, known);
			keep(L);
			rc = -1;
			continue;
		}
		if (noted) {
			kp = config_keypath(key, kv->key, kv->key_len);
			note(L, kv->pos, kp, "not a key moat or the clients it knows use: ignored");
		}
	}
	return rc;
}

/* A string without NUL bytes (they would cut it short in C). */
static int get_string(const struct loader *L, const struct toml_value *v, const char *key, const char *expected,
		      const char **out)
{
	if (v->type != TOML_STRING)
		return wrong_type(L, v, key, expected);
	if (strlen(v->u.str.ptr) != v->u.str.len)
		return fail(L, v->pos, key, "expected %s without NUL characters", expected);
	*out = v->u.str.ptr;
	return 0;
}

static int get_nonempty(const struct loader *L, const struct toml_value *v, const char *key, const char *expected,
			const char **out)
{
	if (get_string(L, v, key, expected, out) < 0)
		return -1;
	if (!**out)
		return fail(L, v->pos, key, "expected %s, got an empty string", expected);
	return 0;
}

static int get_enum(const struct loader *L, const struct toml_value *v, const char *key, const char *const *names,
		    size_t *index)
{
	cleanup_free char *list = join_quoted(names);
	const char *s, *sug;
	size_t i;

	if (v->type != TOML_STRING)
		return fail(L, v->pos, key, "expected %s, got %s", list, type_phrase(L, v->type));
	s = v->u.str.ptr;
	for (i = 0; names[i]; i++)
		if (strcmp(s, names[i]) == 0 && strlen(s) == v->u.str.len) {
			*index = i;
			return 0;
		}
	fail(L, v->pos, key, "expected %s, got \"%s\"", list, s);
	if ((sug = config_suggest(s, names)))
		moat_error_hint(L->err, "did you mean \"%s\"?", sug);
	return -1;
}

static int get_array(const struct loader *L, const struct toml_value *v, const char *key, const char *expected)
{
	if (v->type != TOML_ARRAY)
		return wrong_type(L, v, key, expected);
	return 0;
}

/* `read = "."` where a list is expected: the one value, written as the
 * list it should be, in the file's own syntax.  `what` is "an array of
 * paths (strings)", or "strings". */
static int hint_one_item_list(const struct loader *L, const struct toml_value *v, const char *key, const char *what)
{
	const char *leaf = strrchr(key, '.'), *noun = what, *cut;
	const char *q = L->c->json ? "\"" : "";
	cleanup_free char *value = NULL;
	char *o;

	leaf = leaf ? leaf + 1 : key;
	if (strncmp(noun, "an array of ", 12) == 0)
		noun += 12;
	cut = strstr(noun, " (");
	/* Quoted as TOML's basic string and JSON's string are: \ and ". */
	value = o = moat_xmalloc(2 * strlen(v->u.str.ptr) + 1);
	for (const char *p = v->u.str.ptr; *p; p++) {
		if (*p == '"' || *p == '\\')
			*o++ = '\\';
		*o++ = *p;
	}
	*o = '\0';
	return moat_error_hint(L->err, "%s%s%s takes a list of %.*s, even of one: %s%s%s%s [\"%s\"]", q, leaf, q,
			       (int)(cut ? (size_t)(cut - noun) : strlen(noun)), noun, q, leaf, q,
			       L->c->json ? ":" : " =", value);
}

/* `args = "-l --all"`: a client's args are one string each, and a string
 * where the list goes is most often the command line as a shell would
 * split it.  The hint writes it so when that split is plain (words
 * between spaces, nothing a shell would read differently); otherwise it
 * is the one value as a list of one, as for every other list. */
static int hint_args_list(const struct loader *L, const struct toml_value *v, const char *key)
{
	const char *s = v->u.str.ptr, *q = L->c->json ? "\"" : "";
	cleanup_free char *words = NULL;
	char *o;

	if (!s[0])
		return moat_error_hint(L->err, "%sargs%s takes a list of strings; none: %sargs%s%s []", q, q, q, q,
				       L->c->json ? ":" : " =");
	if (strpbrk(s, "\"'\\$`;&|<>()*?[]{}~#\t\n\r") || !strchr(s, ' '))
		return hint_one_item_list(L, v, key, "an array of strings");
	words = o = moat_xmalloc(4 * strlen(s) + 1);
	for (const char *p = s; *p;) {
		size_t n;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		n = strcspn(p, " ");
		o += sprintf(o, "%s\"%.*s\"", o == words ? "" : ", ", (int)n, p);
		p += n;
	}
	return moat_error_hint(L->err, "%sargs%s takes a list of strings, one for each argument: %sargs%s%s [%s]", q, q, q,
			       q, L->c->json ? ":" : " =", words);
}

/* A path with a form moat does not expand (~root, $HOME, ${VAR}, %VAR%)
 * is refused: taken literally, under the file's directory, it names
 * nothing, and a deny of it would deny nothing while the report says
 * enforced.  The clients expand some of these in their own keys, and the
 * file's `env` values expand $VAR, so a user may well expect it here. */
static int check_unexpanded(const struct loader *L, const struct toml_value *v, const char *key, const char *s)
{
	size_t len;
	const char *form = path_unexpanded(s, &len);

	if (!form)
		return 0;
	fail(L, v->pos, key, "\"%s\": %.*s is not expanded in a path", s, (int)len, form);
	return moat_error_hint(L->err, "only ~ and ~/ are expanded (to HOME): write the absolute path%s",
			       s[0] == '~' ? " (a name that really begins with ~: ./~NAME)" : "");
}

static char *resolve_path(const struct loader *L, const struct toml_value *v, const char *key, const char *s)
{
	char *abs;

	if (check_unexpanded(L, v, key, s) < 0)
		return NULL;
	abs = path_resolve_lexical(s, L->c->dir, L->home);

	if (!abs)
		fail(L, v->pos, key, "cannot expand \"%s\": HOME is not set", s);
	return abs;
}

/* An array whose items are loaded one by one by `item`: a bad item is a
 * problem of its own (kept), and the next one is read.  -1 when the value
 * is no array or an item was bad. */
typedef int (*item_fn)(const struct loader *L, const struct toml_value *item, const char *key, const char *what,
		       void *ctx);

static int load_items(const struct loader *L, const struct toml_value *v, const char *key, const char *what, item_fn fn,
		      void *ctx)
{
	size_t i;
	int rc = 0;

	if (get_array(L, v, key, what) < 0) {
		if (v->type == TOML_STRING)
			hint_one_item_list(L, v, key, what);
		return -1;
	}
	for (i = 0; i < toml_array_len(v); i++) {
		const struct toml_value *item = toml_array_at(v, i);

		if (item->type != TOML_STRING)
			fail(L, item->pos, key, "expected %s, got %s in the array", what, type_phrase(L, item->type));
		else if (fn(L, item, key, what, ctx) == 0)
			continue;
		keep(L);
		rc = -1;
	}
	return rc;
}

/* A grant or deny whose ".." follows a symbolic link: folded by text, it
 * would be of the link's own directory, where the kernel goes to the
 * target's parent (as on the command line, sources/cli.c). */
static int dotdot_after_link(const struct loader *L, const struct toml_value *v, const char *key, const char *s)
{
	cleanup_free char *link = path_link_before_dotdot(s, L->c->dir, L->home);

	if (!link)
		return 0;
	fail(L, v->pos, key,
	     "\"%s\": %s is a symbolic link, and the \"..\" after it is its target's parent, where moat would fold it "
	     "by text to the link's own directory",
	     s, link);
	return moat_error_hint(L->err, "write the path without \"..\", naming the directory you mean");
}

struct path_list {
	struct config_path **list;
	size_t *n;
	enum moat_access access;
};

static int path_item(const struct loader *L, const struct toml_value *item, const char *key, const char *what,
		     void *ctx)
{
	struct path_list *pl = ctx;
	struct config_path *r;
	const char *s;
	char *abs;

	(void)what;
	if (get_nonempty(L, item, key, "a path", &s) < 0)
		return -1;
	if (dotdot_after_link(L, item, key, s) < 0 || !(abs = resolve_path(L, item, key, s)))
		return -1;
	*pl->list = moat_xrealloc(*pl->list, (*pl->n + 1) * sizeof(**pl->list));
	r = &(*pl->list)[(*pl->n)++];
	r->path = abs;
	r->access = pl->access;
	r->key = moat_xstrdup(key);
	r->origin = at(L, item->pos);
	return 0;
}

static int load_paths_into(const struct loader *L, struct config_path **list, size_t *n, const struct toml_value *v,
			   const char *key, enum moat_access access)
{
	struct path_list pl = {.list = list, .n = n, .access = access};

	return load_items(L, v, key, "an array of paths (strings)", path_item, &pl);
}

static int load_paths(const struct loader *L, struct config_layer *layer, const struct toml_value *v, const char *key,
		      enum moat_access access)
{
	return load_paths_into(L, &layer->paths, &layer->n_paths, v, key, access);
}

/* Variable names for pass-through (`env_pass`, `env_vars`): valid, and
 * never a loader or interpreter hook, as with --env-pass. */
struct name_list {
	struct config_name **list;
	size_t *n;
};

static int name_item(const struct loader *L, const struct toml_value *item, const char *key, const char *what,
		     void *ctx)
{
	struct name_list *nl = ctx;
	struct config_name *e;
	const char *s;

	(void)what;
	if (get_string(L, item, key, "a variable name", &s) < 0)
		return -1;
	if (!env_name_valid(s))
		return fail(L, item->pos, key, "expected a variable name ([A-Za-z_][A-Za-z0-9_]*), got \"%s\"", s);
	if (env_is_hook(s)) {
		fail(L, item->pos, key, "refusing to pass the loader or interpreter hook %s through", s);
		return moat_error_hint(L->err,
				       "it would run code before the program's own; if it is really wanted, "
				       "give its value on the command line: --env %s=VALUE",
				       s);
	}
	*nl->list = moat_xrealloc(*nl->list, (*nl->n + 1) * sizeof(**nl->list));
	e = &(*nl->list)[(*nl->n)++];
	e->name = moat_xstrdup(s);
	e->key = moat_xstrdup(key);
	e->origin = at(L, item->pos);
	return 0;
}

static int load_names(const struct loader *L, const struct toml_value *v, const char *key, struct config_name **list,
		      size_t *n)
{
	struct name_list nl = {.list = list, .n = n};

	return load_items(L, v, key, "an array of variable names", name_item, &nl);
}

static int require_item(const struct loader *L, const struct toml_value *item, const char *key, const char *what,
			void *ctx)
{
	struct config_layer *layer = ctx;
	const char *names[MOAT_P__COUNT + 1];
	const char *s, *sug;
	size_t i;
	int prop;

	(void)what;
	if (get_string(L, item, key, "a property name", &s) < 0)
		return -1;
	prop = moat_property_parse(s);
	if (prop < 0) {
		for (i = 0; i < MOAT_P__COUNT; i++)
			names[i] = moat_property_name((enum moat_property)i);
		names[MOAT_P__COUNT] = NULL;
		fail(L, item->pos, key, "expected a property name (fs.read, net.none, ...), got \"%s\"", s);
		if ((sug = config_suggest(s, names)))
			return moat_error_hint(L->err, "did you mean \"%s\"?", sug);
		return moat_error_hint(L->err, "see `moat help properties` for the names");
	}
	layer->require |= MOAT_PBIT(prop);
	return 0;
}

static int load_require(const struct loader *L, struct config_layer *layer, const struct toml_value *v, const char *key)
{
	return load_items(L, v, key, "an array of property names", require_item, layer);
}

static int load_limit(const struct loader *L, struct config_layer *layer, const char *name, const struct toml_value *v,
		      const char *key)
{
	struct moat_limits *lim = &layer->limits;
	int64_t *size_slot = strcmp(name, "memory") == 0	? &lim->memory_bytes
			     : strcmp(name, "address_space") == 0 ? &lim->address_space_bytes
			     : strcmp(name, "tmp_size") == 0	? &lim->tmp_bytes
								: NULL;

	struct limit_problem pb;

	if (size_slot) {
		const char *what = "a size of at least 1M (e.g. \"512M\", \"2G\") or a number of bytes";
		struct size_problem sp;
		int64_t bytes = -1;

		if (v->type == TOML_STRING) {
			if (strlen(v->u.str.ptr) != v->u.str.len)
				return fail(L, v->pos, key, "expected %s, got a string with a NUL byte", what);
			if (moat_parse_size_min(v->u.str.ptr, &bytes, &sp) < 0) {
				fail(L, v->pos, key, "\"%s\": %s", v->u.str.ptr, sp.why);
				return moat_error_hint(L->err, "%s", sp.fix);
			}
		} else if (v->type == TOML_INTEGER) {
			bytes = v->u.integer;
			if (bytes < MOAT_SIZE_MIN)
				return fail(L, v->pos, key, "expected %s, got %lld", what, (long long)v->u.integer);
		} else {
			return wrong_type(L, v, key, what);
		}
		*size_slot = bytes;
		return 0;
	}
	if (strcmp(name, "timeout") == 0) {
		double t;

		if (v->type == TOML_INTEGER)
			t = (double)v->u.integer;
		else if (v->type == TOML_FLOAT)
			t = v->u.flt;
		else
			return wrong_type(L, v, key, "a positive number of seconds");
		if (!isfinite(t) || t <= 0)
			return fail(L, v->pos, key, "expected a positive number of seconds, got %g", t);
		config_timeout_problem(t, &pb);
		if (pb.why[0]) {
			fail(L, v->pos, key, "%g: %s", t, pb.why);
			return moat_error_hint(L->err, "%s", pb.fix);
		}
		lim->timeout_s = t;
		return 0;
	}
	if (v->type != TOML_INTEGER)
		return wrong_type(L, v, key, "a positive whole number");
	if (v->u.integer < 1)
		return fail(L, v->pos, key, "expected a positive whole number, got %lld", (long long)v->u.integer);
	if (strcmp(name, "files") == 0)
		config_files_problem(v->u.integer, &pb);
	else if (strcmp(name, "pids") == 0)
		config_pids_problem(v->u.integer, &pb);
	else
		config_cpu_problem(v->u.integer, &pb);
	if (pb.why[0]) {
		fail(L, v->pos, key, "%lld: %s", (long long)v->u.integer, pb.why);
		return moat_error_hint(L->err, "%s", pb.fix);
	}
	if (strcmp(name, "files") == 0)
		lim->files = v->u.integer;
	else if (strcmp(name, "pids") == 0)
		lim->pids = v->u.integer;
	else
		lim->cpu_seconds = v->u.integer;
	return 0;
}

struct net_list {
	struct config_layer *layer;
	bool pins;
};

static int net_item(const struct loader *L, const struct toml_value *item, const char *key, const char *what, void *ctx)
{
	struct net_list *nl = ctx;
	struct config_layer *layer = nl->layer;
	struct net_parse_error pe;
	struct moat_net_dest d;
	struct moat_net_pin pin;
	const char *s;
	int rc;

	(void)what;
	if (get_string(L, item, key, nl->pins ? "\"NAME=IP\"" : "a destination", &s) < 0)
		return -1;
	if (!nl->pins && netset_named(s)) {
		unsigned mask;
		struct config_netset *ns;

		if (netset_parse(s, &mask, &pe) < 0) {
			fail(L, item->pos, key, "%s", pe.msg);
			return moat_error_hint(L->err, "%s", pe.hint);
		}
		layer->net_sets = moat_xrealloc(layer->net_sets, (layer->n_net_sets + 1) * sizeof(*ns));
		ns = &layer->net_sets[layer->n_net_sets++];
		*ns = (struct config_netset){
		    .mask = mask, .text = moat_xstrdup(s), .key = moat_xstrdup(key), .origin = at(L, item->pos)};
		return 0;
	}
	rc = nl->pins ? net_pin_parse(s, &pin, &pe) : net_dest_parse(s, &d, &pe);
	if (rc < 0) {
		fail(L, item->pos, key, "\"%s\": %s", s, pe.msg);
		return pe.hint[0] ? moat_error_hint(L->err, "%s", pe.hint) : -1;
	}
	if (nl->pins) {
		pin.origin = at(L, item->pos);
		layer->net_pins = moat_xrealloc(layer->net_pins, (layer->n_net_pins + 1) * sizeof(pin));
		layer->net_pins[layer->n_net_pins++] = pin;
	} else {
		d.origin = at(L, item->pos);
		layer->net_allow = moat_xrealloc(layer->net_allow, (layer->n_net_allow + 1) * sizeof(d));
		layer->net_allow[layer->n_net_allow++] = d;
	}
	return 0;
}

/* network.allow (destinations and sets) and network.resolve ("NAME=IP"
 * pins): arrays of strings, each parsed as --allow-net and --resolve parse
 * theirs.  A set is kept by name, for config_build to expand. */
static int load_net_list(const struct loader *L, struct config_layer *layer, const struct toml_value *v,
			 const char *key, bool pins)
{
	struct net_list nl = {.layer = layer, .pins = pins};

	return load_items(L, v, key, pins ? "an array of \"NAME=IP\" strings" : "an array of destinations (strings)",
			  net_item, &nl);
}

static int load_network(const struct loader *L, struct config_layer *layer, const struct toml_value *t,
			const char *key)
{
	size_t i;
	int rc;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, key,
				  L->c->json ? "an object (allow, resolve)" : "a table (allow, resolve)");
	rc = check_keys(L, t, key, network_keys);
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);

		if (key_in(kv, network_keys) &&
		    load_net_list(L, layer, kv->value, kp, strcmp(kv->key, "resolve") == 0) < 0) {
			keep(L);
			rc = -1;
		}
	}
	return rc;
}

static void layer_init(struct config_layer *l)
{
	memset(l, 0, sizeof(*l));
	limits_init(&l->limits);
}

/* A sandbox table (`profile` allowed) or a profile table (`extends`).
 * Every problem of it is kept, and marks it broken; -1 then. */
static int load_layer(const struct loader *L, struct config_layer *layer, const struct toml_value *t, const char *key,
		      bool is_profile)
{
	const char *const *known = is_profile ? profile_keys : sandbox_keys;
	size_t i, idx;

	layer_init(layer);
	layer->present = true;
	layer->key = moat_xstrdup(key);
	layer->origin = at(L, t->pos);
	if (t->type != TOML_TABLE) {
		wrong_type(L, t, key, table_word(L));
		keep(L);
		layer->broken = true;
		return -1;
	}
	layer->broken = check_keys(L, t, key, known) < 0;
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		const struct toml_value *v = kv->value;
		cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);
		const char *k = kv->key, *s;
		int rc = 0;

		if (!key_in(kv, known)) {
			continue;
		} else if (strcmp(k, "backend") == 0) {
			if ((rc = get_enum(L, v, kp, policy_backend_names(), &idx)) == 0) {
				layer->backend = moat_xstrdup(policy_backend_names()[idx]);
				layer->backend_origin = at(L, v->pos);
			}
		} else if (strcmp(k, "mode") == 0) {
			if ((rc = get_enum(L, v, kp, mode_names, &idx)) == 0) {
				layer->has_mode = true;
				moat_mode_parse(mode_names[idx], &layer->mode);
				layer->mode_origin = at(L, v->pos);
			}
		} else if (strcmp(k, "net") == 0) {
			if ((rc = get_enum(L, v, kp, net_names, &idx)) == 0) {
				layer->has_net = true;
				moat_net_parse(net_names[idx], &layer->net);
				layer->net_origin = at(L, v->pos);
			}
		} else if (strcmp(k, "network") == 0) {
			rc = load_network(L, layer, v, kp);
		} else if (strcmp(k, "profile") == 0 || strcmp(k, "extends") == 0) {
			if ((rc = get_nonempty(L, v, kp, "a profile name", &s)) == 0) {
				layer->profile = moat_xstrdup(s);
				layer->profile_origin = at(L, v->pos);
			}
		} else if (strcmp(k, "read") == 0) {
			rc = load_paths(L, layer, v, kp, MOAT_ACCESS_READ);
		} else if (strcmp(k, "write") == 0) {
			rc = load_paths(L, layer, v, kp, MOAT_ACCESS_WRITE);
		} else if (strcmp(k, "deny") == 0) {
			rc = load_paths(L, layer, v, kp, MOAT_ACCESS_DENY);
		} else if (strcmp(k, "unprotect") == 0) {
			rc = load_paths_into(L, &layer->unprotect, &layer->n_unprotect, v, kp, MOAT_ACCESS_WRITE);
		} else if (strcmp(k, "unix_sockets") == 0) {
			if (v->type != TOML_BOOL)
				rc = wrong_type(L, v, kp, L->c->json ? "true or false" : "true or false (a bool)");
			else
				layer->has_unix_sockets = true, layer->unix_sockets = v->u.boolean;
		} else if (strcmp(k, "env_pass") == 0) {
			rc = load_names(L, v, kp, &layer->env_pass, &layer->n_env_pass);
		} else if (strcmp(k, "require") == 0) {
			rc = load_require(L, layer, v, kp);
		} else {
			rc = load_limit(L, layer, k, v, kp);
		}
		if (rc < 0) {
			keep(L);
			layer->broken = true;
		}
	}
	return layer->broken ? -1 : 0;
}

/* The first reason moat cannot run a server is the one it gives. */
static void skip_server(const struct loader *L, struct config_server *srv, struct toml_pos pos, const char *key,
			const char *hint, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void skip_server(const struct loader *L, struct config_server *srv, struct toml_pos pos, const char *key,
			const char *hint, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (srv->skip)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	srv->skip = moat_xstrdup(msg);
	srv->skip_hint = moat_xstrdup(hint);
	srv->skip_key = moat_xstrdup(key);
	srv->skip_origin = at(L, pos);
}

/* VS Code's `${input:ID}`: a value VS Code prompts the user for, which only
 * VS Code can fill in.  Its length in *len. */
static const char *input_variable(const char *s, size_t *len)
{
	const char *p = strstr(s, "${input:"), *close;

	if (!p)
		return NULL;
	close = strchr(p, '}');
	*len = close ? (size_t)(close - p) + 1 : strlen(p);
	return p;
}

static void check_input_variable(const struct loader *L, struct config_server *srv, const struct toml_value *v,
				 const char *key)
{
	const char *var;
	size_t len;

	if (v->type == TOML_STRING && (var = input_variable(v->u.str.ptr, &len)))
		skip_server(L, srv, v->pos, key,
			    "give the value in moat's environment and write ${NAME} instead, or leave this server to "
			    "VS Code",
			    "%.*s is a value VS Code prompts for: moat cannot fill it in", (int)len, var);
}

/* A variable VS Code (and Cursor) fills in from the editor's state --
 * ${workspaceFolder}, ${userHome}, ... -- written as ${NAME}, which moat's
 * expansion would take from its environment: unset there, it became ""
 * without a word, and a server given an empty root may take it for "no
 * restriction".  The first one moat's environment lacks, its length in
 * *len; NULL when there is none. */
static const char *client_variable(const char *s, size_t *len)
{
	static const char *const names[] = {"workspaceFolder", "workspaceFolderBasename", "workspaceRoot", "userHome",
					    "cwd", "file", "fileBasename", "fileDirname", "fileWorkspaceFolder",
					    "relativeFile", "execPath", "pathSeparator", "/"};
	const char *p;

	for (p = strstr(s, "${"); p; p = strstr(p + 2, "${")) {
		const char *close = strchr(p + 2, '}');
		size_t n = close ? (size_t)(close - (p + 2)) : 0;

		for (size_t i = 0; close && i < ARRAY_LEN(names); i++) {
			char name[64];

			if (strlen(names[i]) != n || strncmp(p + 2, names[i], n) != 0)
				continue;
			snprintf(name, sizeof(name), "%.*s", (int)n, p + 2);
			if (getenv(name))
				break;
			*len = n + 3;
			return p;
		}
	}
	return NULL;
}

static int env_var(const struct loader *L, struct config_server *srv, const struct toml_keyval *kv, const char *kp)
{
	struct config_env *e;
	const char *val;
	size_t bad_at = 0, bad_len = 0;

	if (kv->key_len != strlen(kv->key) || !env_name_valid(kv->key))
		return fail(L, kv->pos, kp, "expected a variable name ([A-Za-z_][A-Za-z0-9_]*) as the key");
	/* A hook runs code before the program's own -- and in the sandbox
	 * tool itself, which runs outside the sandbox, when a backend's tool
	 * got the command's environment.  A config file is often a
	 * repository's (.mcp.json), written by whoever wrote the repository:
	 * only the command line may set one. */
	if (env_is_hook(kv->key)) {
		fail(L, kv->pos, kp, "refusing the loader or interpreter hook %s from a config file", kv->key);
		return moat_error_hint(L->err,
				       "it would run code before the program's own; remove it from the file, and "
				       "if it is really wanted give it on the command line: --env %s=VALUE",
				       kv->key);
	}
	if (get_string(L, kv->value, kp, "a string", &val) < 0)
		return -1;
	if (input_variable(val, &bad_len)) {
		check_input_variable(L, srv, kv->value, kp);
		return 0;
	}
	{
		const char *var = client_variable(val, &bad_len);
		if (var) {
			skip_server(L, srv, kv->value->pos, kp, "write the value itself (the path) instead",
				    "%.*s is a value the editor fills in, and moat's environment has no %.*s: it would "
				    "be empty",
				    (int)bad_len, var, (int)bad_len - 3, var + 2);
			return 0;
		}
	}
	if (config_expand_vars(val, NULL, NULL, NULL, &bad_at, &bad_len) < 0)
		return fail(L, kv->value->pos, kp,
			    "bad variable reference \"%.*s\"; expected $NAME, ${NAME}, ${NAME:-DEFAULT} or $$ (a "
			    "literal $)",
			    (int)bad_len, val + bad_at);
	srv->env = moat_xrealloc(srv->env, (srv->n_env + 1) * sizeof(*srv->env));
	e = &srv->env[srv->n_env++];
	e->name = moat_xstrdup(kv->key);
	e->value = moat_xstrdup(val);
	e->key = moat_xstrdup(kp);
	e->origin = at(L, kv->value->pos);
	return 0;
}

static int load_env(const struct loader *L, struct config_server *srv, const struct toml_value *t, const char *key)
{
	size_t i;
	int rc = 0;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, key, L->c->json ? "an object of variables" : "a table of variables");
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);

		if (env_var(L, srv, kv, kp) < 0) {
			keep(L);
			rc = -1;
		}
	}
	return rc;
}

static void push_arg(struct config_server *srv, const char *s)
{
	srv->argv = moat_xrealloc(srv->argv, (srv->argc + 2) * sizeof(char *));
	srv->argv[srv->argc++] = moat_xstrdup(s);
	srv->argv[srv->argc] = NULL;
}

static int arg_item(const struct loader *L, const struct toml_value *item, const char *key, const char *what, void *ctx)
{
	struct config_server *srv = ctx;
	const char *s;

	(void)what;
	if (get_string(L, item, key, "a string", &s) < 0)
		return -1;
	check_input_variable(L, srv, item, key);
	push_arg(srv, s);
	return 0;
}

static bool is_bool(const struct loader *L, const struct toml_value *v, const char *key)
{
	if (v->type == TOML_BOOL)
		return true;
	wrong_type(L, v, key, L->c->json ? "true or false" : "true or false (a bool)");
	return false;
}

/* `command`: a string (Codex, Claude, VS Code, ...) with `args`, or an
 * array (darnit): the program and its arguments. */
static int load_command(const struct loader *L, struct config_server *srv, const struct toml_value *t, const char *key)
{
	const struct toml_keyval *kv = toml_table_entry(t, "command");
	cleanup_free char *kp = config_keypath(key, "command", 7);
	const struct toml_value *v;
	const char *what = "a program name or an array of strings (the program and its arguments)", *s;
	size_t i;
	int rc = 0;

	if (!kv) {
		/* A misspelt `command` was named already. */
		for (i = 0; i < toml_table_len(t); i++) {
			const char *sug = config_suggest(toml_table_at(t, i)->key, server_keys);
			if (sug && strcmp(sug, "command") == 0)
				return -1;
		}
		return config_fail(L->err, &srv->origin, key, "missing key \"command\" (the program to run)");
	}
	v = kv->value;
	srv->command_origin = at(L, v->pos);
	if (v->type == TOML_STRING) {
		if (get_nonempty(L, v, kp, "a program name", &s) < 0)
			return -1;
		check_input_variable(L, srv, v, kp);
		push_arg(srv, s);
	} else if (v->type == TOML_ARRAY) {
		const struct toml_value *first = toml_array_at(v, 0);

		if (!first)
			return fail(L, v->pos, kp, "expected %s, got an empty array", what);
		if (load_items(L, v, kp, "strings", arg_item, srv) < 0)
			return -1;
		if (!srv->argv[0][0])
			return fail(L, first->pos, kp, "expected a program name, got an empty string");
	} else {
		return wrong_type(L, v, kp, what);
	}
	if ((kv = toml_table_entry(t, "args"))) {
		cleanup_free char *ka = config_keypath(key, "args", 4);

		if (v->type == TOML_ARRAY)
			fail(L, kv->pos, ka, "not allowed when command is an array; put the arguments in command");
		else if (get_array(L, kv->value, ka, "an array of strings") == 0 &&
			 load_items(L, kv->value, ka, "strings", arg_item, srv) == 0)
			return 0;
		else if (kv->value->type == TOML_STRING)
			hint_args_list(L, kv->value, ka);
		keep(L);
		rc = -1;
	}
	return rc;
}

/* What the clients write for a server moat does not run itself: a remote
 * server (`url`, `httpUrl`, `serverUrl`, `type` "http" or "sse").  Returns
 * true when the entry is one (skipped, or a problem kept). */
static bool load_remote(const struct loader *L, struct config_server *srv, const struct toml_value *t, const char *key,
			bool remote_type, struct toml_pos type_pos)
{
	const struct toml_keyval *url = NULL, *kv;
	size_t i;

	for (i = 0; remote_keys[i]; i++)
		if ((kv = toml_table_entry(t, remote_keys[i])) && !url)
			url = kv;
	if (!url && !remote_type)
		return false;
	if (url) {
		cleanup_free char *kp = config_keypath(key, url->key, url->key_len);
		const char *s;

		if (get_nonempty(L, url->value, kp, "the server's URL", &s) < 0) {
			keep(L);
			srv->broken = true;
			return true;
		}
		if ((kv = toml_table_entry(t, "command"))) {
			fail(L, kv->pos, key,
			     "both a command and %s: expected one of the two (a local server is started from its "
			     "command, a remote one is reached at its URL)",
			     url->key);
			keep(L);
			srv->broken = true;
			return true;
		}
		skip_server(L, srv, url->value->pos, key,
			    "moat sandboxes the servers it starts (stdio); the client reaches a remote one itself",
			    "a remote server (%s = \"%s\"): there is nothing to run or sandbox on this machine",
			    url->key, s);
	} else {
		skip_server(L, srv, type_pos, key,
			    "moat sandboxes the servers it starts (stdio); the client reaches a remote one itself",
			    "a remote server (type \"%s\"): there is nothing to run or sandbox on this machine",
			    toml_table_entry(t, "type")->value->u.str.ptr);
	}
	return true;
}

/* `type`: "stdio", or a remote server's transport.  *remote is set. */
static int load_type(const struct loader *L, const struct toml_value *t, const char *key, bool *remote,
		     struct toml_pos *pos)
{
	static const char *const types[] = {"stdio", "http", "sse", "streamable-http", NULL};
	const struct toml_keyval *kv = toml_table_entry(t, "type");
	cleanup_free char *kp = NULL;
	size_t idx;

	*remote = false;
	if (!kv)
		return 0;
	kp = config_keypath(key, "type", 4);
	*pos = kv->value->pos;
	if (get_enum(L, kv->value, kp, types, &idx) < 0)
		return -1;
	*remote = idx > 0;
	return 0;
}

/* Codex's `enabled = false`, Windsurf's and Cline's `disabled = true`. */
static int load_disabled(const struct loader *L, struct config_server *srv, const struct toml_value *t, const char *key)
{
	static const char *const names[] = {"enabled", "disabled"};
	size_t i;
	int rc = 0;

	for (i = 0; i < 2; i++) {
		const struct toml_keyval *kv = toml_table_entry(t, names[i]);
		cleanup_free char *kp = NULL;

		if (!kv)
			continue;
		kp = config_keypath(key, names[i], strlen(names[i]));
		if (!is_bool(L, kv->value, kp)) {
			keep(L);
			rc = -1;
			continue;
		}
		if (kv->value->u.boolean != (i == 0) && !srv->disabled) {
			srv->disabled = true;
			srv->disabled_key = steal_ptr(&kp);
			srv->disabled_origin = at(L, kv->value->pos);
		}
	}
	return rc;
}

/* A `sandbox` object in VS Code's shape: `filesystem` and `network` rules,
 * the network's being `allowedDomains` and `deniedDomains`.  Anything else
 * is moat's sandbox, checked key by key: a moat rule is never dropped for
 * VS Code's because a key of the two is the same. */
static bool vscode_sandbox_table(const struct toml_value *v)
{
	static const char *const keys[] = {"filesystem", "network", NULL};
	static const char *const net_keys[] = {"allowedDomains", "deniedDomains", NULL};
	const struct toml_keyval *net;
	size_t i;

	if (v->type != TOML_TABLE || toml_table_len(v) == 0)
		return false;
	for (i = 0; i < toml_table_len(v); i++)
		if (!key_in(toml_table_at(v, i), keys))
			return false;
	if (!(net = toml_table_entry(v, "network")))
		return true;
	if (net->value->type != TOML_TABLE)
		return false;
	for (i = 0; i < toml_table_len(net->value); i++)
		if (!key_in(toml_table_at(net->value, i), net_keys))
			return false;
	return toml_table_entry(v, "filesystem") || toml_table_len(net->value) > 0;
}

/* VS Code's own sandbox for a server: `"sandboxEnabled": true`, with rules
 * in a `sandbox` object.  On, it is a reason not to run the server: VS
 * Code would confine it by rules moat does not translate, and running it
 * under moat's policy instead could grant what those rules deny.  Returns
 * true when the entry's `sandbox` is VS Code's (then not moat's). */
static bool vscode_sandbox(const struct loader *L, struct config_server *srv, const struct toml_value *t,
			   const char *key)
{
	const struct toml_keyval *on = toml_table_entry(t, "sandboxEnabled"), *box = toml_table_entry(t, "sandbox");
	bool theirs = box && vscode_sandbox_table(box->value);

	if (on && on->value->type == TOML_BOOL && on->value->u.boolean) {
		cleanup_free char *kp = config_keypath(key, "sandboxEnabled", 14);

		skip_server(L, srv, on->value->pos, kp,
			    "remove sandboxEnabled to run it under moat's policy (docs/config.md), or leave it to VS "
			    "Code",
			    "VS Code's own sandbox is on for this server: moat does not translate its rules");
	} else if (theirs) {
		cleanup_free char *kp = config_keypath(key, "sandbox", 7);

		note(L, box->pos, kp, "VS Code's sandbox settings, off (sandboxEnabled is not true): ignored");
	}
	return theirs;
}

static void load_server(const struct loader *L, struct config_server *srv, const struct toml_value *t, const char *key)
{
	const struct toml_keyval *kv;
	struct toml_pos type_pos = {0, 0};
	bool remote = false, theirs;
	const char *s;
	int bad = 0;

	if (t->type != TOML_TABLE) {
		wrong_type(L, t, key,
			   L->c->json ? "an object (the server's command, args, env, ...)"
				      : "a table (the server's command, args, env, ...)");
		keep(L);
		srv->broken = true;
		return;
	}
	bad |= check_client_keys(L, t, key, server_keys, client_server_keys, true);
	if (load_type(L, t, key, &remote, &type_pos) < 0) {
		keep(L);
		bad = -1;
	}
	bad |= load_disabled(L, srv, t, key);
	if (load_remote(L, srv, t, key, remote, type_pos))
		goto out;
	theirs = vscode_sandbox(L, srv, t, key);
	if (load_command(L, srv, t, key) < 0) {
		keep(L);
		bad = -1;
	}
	if ((kv = toml_table_entry(t, "env"))) {
		cleanup_free char *kp = config_keypath(key, "env", 3);
		if (load_env(L, srv, kv->value, kp) < 0) {
			keep(L);
			bad = -1;
		}
	}
	if ((kv = toml_table_entry(t, "env_vars"))) {
		cleanup_free char *kp = config_keypath(key, "env_vars", 8);
		if (load_names(L, kv->value, kp, &srv->env_vars, &srv->n_env_vars) < 0) {
			keep(L);
			bad = -1;
		}
	}
	if ((kv = toml_table_entry(t, "envFile"))) {
		cleanup_free char *kp = config_keypath(key, "envFile", 7);
		note(L, kv->pos, kp,
		     "not read by moat: the server gets the variables env, env_vars and --env/--env-pass give it");
	}
	if ((kv = toml_table_entry(t, "cwd"))) {
		cleanup_free char *kp = config_keypath(key, "cwd", 3);
		if (get_nonempty(L, kv->value, kp, "a directory", &s) < 0 ||
		    !(srv->cwd = resolve_path(L, kv->value, kp, s))) {
			keep(L);
			bad = -1;
		} else {
			srv->cwd_key = steal_ptr(&kp);
			srv->cwd_origin = at(L, kv->value->pos);
		}
	}
	if ((kv = toml_table_entry(t, "optional"))) {
		cleanup_free char *kp = config_keypath(key, "optional", 8);
		if (is_bool(L, kv->value, kp)) {
			srv->optional = kv->value->u.boolean;
		} else {
			keep(L);
			bad = -1;
		}
	}
	if ((kv = toml_table_entry(t, "install_hint"))) {
		cleanup_free char *kp = config_keypath(key, "install_hint", 12);
		if (get_string(L, kv->value, kp, "a string", &s) < 0) {
			keep(L);
			bad = -1;
		} else {
			srv->install_hint = moat_xstrdup(s);
		}
	}
	if ((kv = toml_table_entry(t, "trusted_publisher"))) {
		cleanup_free char *kp = config_keypath(key, "trusted_publisher", 17);
		if (get_string(L, kv->value, kp, "a string", &s) < 0) {
			keep(L);
			bad = -1;
		} else {
			srv->trusted_publisher = moat_xstrdup(s);
		}
	}
	if ((kv = toml_table_entry(t, "sandbox")) && !theirs) {
		cleanup_free char *kp = config_keypath(key, "sandbox", 7);
		const struct toml_value *v = kv->value;
		size_t idx;

		if (v->type == TOML_STRING) {
			layer_init(&srv->sandbox);
			srv->sandbox.present = true;
			srv->sandbox.key = moat_xstrdup(kp);
			srv->sandbox.origin = at(L, v->pos);
			if (get_enum(L, v, kp, policy_backend_names(), &idx) < 0) {
				keep(L);
				bad = -1;
			} else {
				srv->sandbox.backend = moat_xstrdup(policy_backend_names()[idx]);
				srv->sandbox.backend_origin = srv->sandbox.origin;
			}
		} else if (v->type == TOML_TABLE) {
			if (load_layer(L, &srv->sandbox, v, kp, false) < 0)
				bad = -1;
		} else {
			cleanup_free char *list = join_quoted(policy_backend_names());
			cleanup_free char *what = moat_xasprintf("%s, or %s of sandbox settings", list, table_word(L));
			wrong_type(L, v, kp, what);
			keep(L);
			bad = -1;
		}
	}
out:
	srv->broken |= bad != 0;
	if (srv->skip)
		note(L, (struct toml_pos){srv->skip_origin.line, srv->skip_origin.col}, srv->skip_key, "skipped: %s",
		     srv->skip);
	else if (srv->disabled)
		note(L, (struct toml_pos){srv->disabled_origin.line, srv->disabled_origin.col}, srv->disabled_key,
		     "disabled in its client: checked, but `moat run --server %s` refuses it", srv->name);
}

static void layer_free(struct config_layer *l)
{
	size_t i;

	free(l->key);
	free(l->backend);
	free(l->profile);
	for (i = 0; i < l->n_paths; i++) {
		free(l->paths[i].path);
		free(l->paths[i].key);
	}
	free(l->paths);
	for (i = 0; i < l->n_unprotect; i++) {
		free(l->unprotect[i].path);
		free(l->unprotect[i].key);
	}
	free(l->unprotect);
	for (i = 0; i < l->n_env_pass; i++) {
		free(l->env_pass[i].name);
		free(l->env_pass[i].key);
	}
	free(l->env_pass);
	for (i = 0; i < l->n_net_allow; i++)
		net_dest_free(&l->net_allow[i]);
	free(l->net_allow);
	for (i = 0; i < l->n_net_pins; i++)
		net_pin_free(&l->net_pins[i]);
	free(l->net_pins);
	for (i = 0; i < l->n_net_sets; i++) {
		free(l->net_sets[i].text);
		free(l->net_sets[i].key);
	}
	free(l->net_sets);
	memset(l, 0, sizeof(*l));
}

static void server_free(struct config_server *s)
{
	size_t i;

	free(s->name);
	free(s->key);
	for (i = 0; i < s->argc; i++)
		free(s->argv[i]);
	free(s->argv);
	free(s->cwd);
	free(s->cwd_key);
	for (i = 0; i < s->n_env; i++) {
		free(s->env[i].name);
		free(s->env[i].value);
		free(s->env[i].key);
	}
	free(s->env);
	for (i = 0; i < s->n_env_vars; i++) {
		free(s->env_vars[i].name);
		free(s->env_vars[i].key);
	}
	free(s->env_vars);
	free(s->install_hint);
	free(s->trusted_publisher);
	free(s->disabled_key);
	free(s->skip);
	free(s->skip_hint);
	free(s->skip_key);
	layer_free(&s->sandbox);
}

void config_free(struct moat_config *c)
{
	size_t i;

	if (!c)
		return;
	free(c->dir);
	layer_free(&c->defaults);
	for (i = 0; i < c->n_profiles; i++) {
		free(c->profiles[i].name);
		layer_free(&c->profiles[i].layer);
	}
	free(c->profiles);
	for (i = 0; i < c->n_servers; i++)
		server_free(&c->servers[i]);
	free(c->servers);
	free(c->problems);
	for (i = 0; i < c->n_notes; i++)
		free(c->notes[i]);
	free(c->notes);
	for (i = 0; i < 2 * c->n_project_servers; i++)
		free(c->project_servers[i]);
	free(c->project_servers);
	free(c);
}

size_t config_local_servers(const struct moat_config *c)
{
	size_t i, n = 0;

	for (i = 0; i < c->n_servers; i++)
		n += c->servers[i].skip == NULL;
	return n;
}

const struct config_server *config_find_server(const struct moat_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_servers; i++)
		if (strcmp(c->servers[i].name, name) == 0)
			return &c->servers[i];
	return NULL;
}

/* `mcp_servers`, `mcpServers` or `servers`: each server is loaded on its
 * own, its problems kept.  -1 when the value is not a table of servers. */
static int load_servers(const struct loader *L, const struct toml_keyval *top)
{
	cleanup_free char *key = config_keypath(NULL, top->key, top->key_len);
	const struct toml_value *t = top->value;
	size_t i;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, key, L->c->json ? "an object of servers" : "a table of servers");
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);
		const struct config_server *prev;
		struct config_server *srv;

		if (kv->key_len == 0 || kv->key_len != strlen(kv->key)) {
			fail(L, kv->pos, kp, "expected a server name, without NUL characters");
			keep(L);
			continue;
		}
		if ((prev = config_find_server(L->c, kv->key))) {
			fail(L, kv->pos, kp, "server \"%s\" is defined twice (first at %d:%d as %s)", kv->key,
			     prev->origin.line, prev->origin.col, prev->key);
			moat_error_hint(L->err, "keep one of them, or give the other another name");
			keep(L);
			continue;
		}
		if (L->c->n_servers == CONFIG_MAX_SERVERS) {
			fail(L, kv->pos, kp, "more than %d servers: the most moat reads in one file", CONFIG_MAX_SERVERS);
			moat_error_hint(L->err, "a client's file holds a few; split the rest into files of their own");
			keep(L);
			return 0;
		}
		L->c->servers = moat_xrealloc(L->c->servers, (L->c->n_servers + 1) * sizeof(*L->c->servers));
		srv = &L->c->servers[L->c->n_servers++];
		memset(srv, 0, sizeof(*srv));
		srv->name = moat_xstrdup(kv->key);
		srv->key = moat_xstrdup(kp);
		srv->origin = at(L, kv->pos);
		load_server(L, srv, kv->value, kp);
	}
	return 0;
}

const struct config_profile *config_find_profile(const struct moat_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_profiles; i++)
		if (strcmp(c->profiles[i].name, name) == 0)
			return &c->profiles[i];
	return NULL;
}

/* Codex's [profiles.NAME] share the name with moat's: a table that holds
 * Codex settings and none of moat's profile keys is Codex's, and ignored.
 * Any other is moat's, with every key checked (a Codex setting in it is
 * named as one). */
static bool codex_profile(const struct toml_value *t)
{
	bool codex = false;
	size_t i;

	if (t->type != TOML_TABLE)
		return false;
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);

		if (key_in(kv, profile_keys))
			return false;
		codex |= codex_setting(kv);
	}
	return codex;
}

static int load_profiles(const struct loader *L, const struct toml_keyval *top)
{
	const struct toml_value *t = top->value;
	size_t i;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, "profiles", L->c->json ? "an object of profiles" : "a table of profiles");
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = config_keypath("profiles", kv->key, kv->key_len);
		struct config_profile *pr;

		if (codex_profile(kv->value))
			continue;
		if (kv->key_len == 0 || kv->key_len != strlen(kv->key)) {
			fail(L, kv->pos, kp, "expected a profile name, without NUL characters");
			keep(L);
			continue;
		}
		if (profile_is_builtin(kv->key)) {
			fail(L, kv->pos, kp,
			     "\"%s\" is a built-in profile; expected another name (a profile can extend it: extends = "
			     "\"%s\")",
			     kv->key, kv->key);
			keep(L);
			continue;
		}
		if (L->c->n_profiles == CONFIG_MAX_PROFILES) {
			fail(L, kv->pos, kp, "more than %d profiles: the most moat reads in one file",
			     CONFIG_MAX_PROFILES);
			moat_error_hint(L->err, "split them into files of their own");
			keep(L);
			return 0;
		}
		L->c->profiles = moat_xrealloc(L->c->profiles, (L->c->n_profiles + 1) * sizeof(*L->c->profiles));
		pr = &L->c->profiles[L->c->n_profiles++];
		memset(pr, 0, sizeof(*pr));
		pr->name = moat_xstrdup(kv->key);
		load_layer(L, &pr->layer, kv->value, kp, true);
	}
	return 0;
}

/* Every profile name in the file must be a built-in or a [profiles] entry:
 * a layer naming another is broken, its problem kept. */
static void check_profile_name(const struct loader *L, struct config_layer *layer, bool is_profile)
{
	cleanup_free char *kp = NULL, *known = NULL;
	cleanup_free const char **names = NULL;
	const char *sug;
	char list[1024];
	size_t i, o, n = 0;

	if (!layer->profile || profile_is_builtin(layer->profile) || config_find_profile(L->c, layer->profile))
		return;
	known = join_plain(builtin_profiles);
	o = (size_t)snprintf(list, sizeof(list), "%s", known);
	names = moat_xcalloc(ARRAY_LEN(builtin_profiles) + L->c->n_profiles, sizeof(*names));
	for (i = 0; builtin_profiles[i]; i++)
		names[n++] = builtin_profiles[i];
	for (i = 0; i < L->c->n_profiles; i++) {
		names[n++] = L->c->profiles[i].name;
		if (o < sizeof(list))
			o += (size_t)snprintf(list + o, sizeof(list) - o, ", %s", L->c->profiles[i].name);
	}
	kp = moat_xasprintf("%s.%s", layer->key, is_profile ? "extends" : "profile");
	config_fail(L->err, &layer->profile_origin, kp,
		    "unknown profile \"%s\"; expected a built-in profile or one defined under [profiles]",
		    layer->profile);
	if ((sug = config_suggest(layer->profile, names)))
		moat_error_hint(L->err, "did you mean \"%s\"? Known profiles: %s", sug, list);
	else
		moat_error_hint(L->err, "known profiles: %s", list);
	keep(L);
	layer->broken = true;
}

/* The longest `extends` chain: longer ones are refused.  Each step looks
 * a profile up by name, and every profile's chain is walked: 2,000
 * profiles extending each other in a line took config check 31 s
 * (red-team 3), where no real policy needs more than a few levels. */
#define EXTENDS_MAX 32

static struct config_profile *extended(const struct moat_config *c, const struct config_profile *pr)
{
	return pr->layer.profile ? (struct config_profile *)config_find_profile(c, pr->layer.profile) : NULL;
}

/* `extends` chains end in a built-in profile, within EXTENDS_MAX
 * profiles; a chain that comes back to itself would never end.  Each
 * cycle is named once, and every profile on it is broken; so is each
 * profile whose chain is too long, the first one named. */
static void check_profiles(const struct loader *L)
{
	struct moat_config *c = L->c;
	cleanup_free bool *on_cycle = moat_xcalloc(c->n_profiles + 1, sizeof(bool));
	bool deep_said = false, said = false;
	size_t i, j;

	for (i = 0; i < c->n_profiles; i++)
		check_profile_name(L, &c->profiles[i].layer, true);
	for (i = 0; i < c->n_profiles; i++) {
		struct config_profile *pr = &c->profiles[i], *start;
		cleanup_free char *kp = NULL;
		char chain[1024];
		size_t o;

		for (j = 0; pr && j < EXTENDS_MAX; j++)
			pr = extended(c, pr);
		if (!pr)
			continue;
		/* Past the cap: a cycle, or a chain too long.  Walked on to
		 * n_profiles + 1 steps, where a chain with a cycle is on it
		 * (from the profile again when the cap walked further), to
		 * tell which -- in a file of more than EXTENDS_MAX profiles
		 * only until a first problem is said, each step a lookup. */
		if (deep_said || (said && c->n_profiles > EXTENDS_MAX)) {
			c->profiles[i].layer.broken = true;
			continue;
		}
		if (j > c->n_profiles) {
			pr = &c->profiles[i];
			j = 0;
		}
		for (; pr && j <= c->n_profiles; j++)
			pr = extended(c, pr);
		said = true;
		if (!pr) {
			c->profiles[i].layer.broken = true;
			deep_said = true;
			kp = moat_xasprintf("%s.extends", c->profiles[i].layer.key);
			config_fail(L->err, &c->profiles[i].layer.profile_origin, kp,
				    "profile \"%s\": its chain of extends holds more than %d profiles; expected at most %d",
				    c->profiles[i].name, EXTENDS_MAX, EXTENDS_MAX);
			keep(L);
			continue;
		}
		if (on_cycle[pr - c->profiles])
			continue;
		/* pr is on the cycle: name it from there round to itself. */
		start = pr;
		kp = moat_xasprintf("%s.extends", start->layer.key);
		o = (size_t)snprintf(chain, sizeof(chain), "%s", start->name);
		do {
			on_cycle[pr - c->profiles] = true;
			pr->layer.broken = true;
			pr = (struct config_profile *)config_find_profile(c, pr->layer.profile);
			if (o < sizeof(chain))
				o += (size_t)snprintf(chain + o, sizeof(chain) - o, " -> %s", pr->name);
		} while (pr != start);
		config_fail(L->err, &start->layer.profile_origin, kp,
			    "profiles extend each other in a cycle (%s); expected a chain that ends in a built-in "
			    "profile",
			    chain);
		keep(L);
	}
	check_profile_name(L, &c->defaults, false);
	for (i = 0; i < c->n_servers; i++) {
		check_profile_name(L, &c->servers[i].sandbox, false);
		c->servers[i].broken |= c->servers[i].sandbox.broken;
	}
}

/* Gemini CLI's `sandbox`: true or false, or the tool it sandboxes with. */
static bool gemini_sandbox(const struct toml_value *v)
{
	return v->type == TOML_BOOL || (v->type == TOML_STRING && in_list(v->u.str.ptr, gemini_sandbox_tools));
}

/* Claude Code's ~/.claude.json: each project's own servers (its "local"
 * scope, where `claude mcp add` puts them by default), under
 * projects."PATH".mcpServers.  moat run --config reads the file's own
 * servers only; these are named, so that --server NAME of one says where
 * it is and what reads it (moat mcp list and wrap, in that project), and
 * `config check` says it did not check them. */
static void note_project_servers(const struct loader *L, const struct toml_value *root)
{
	const struct toml_value *projects = toml_table_get(root, "projects");

	if (!L->c->json || !projects || projects->type != TOML_TABLE)
		return;
	for (size_t i = 0; i < toml_table_len(projects); i++) {
		const struct toml_keyval *p = toml_table_at(projects, i);
		const struct toml_value *servers = p->value->type == TOML_TABLE ? toml_table_get(p->value, "mcpServers")
										 : NULL;
		cleanup_free char *kp = NULL, *skp = NULL;
		size_t n;

		if (!servers || servers->type != TOML_TABLE || !(n = toml_table_len(servers)))
			continue;
		kp = config_keypath("projects", p->key, p->key_len);
		skp = config_keypath(kp, "mcpServers", 10);
		note(L, toml_table_entry(p->value, "mcpServers")->pos, skp,
		     "Claude Code's servers of the project %s (%zu): not read by moat run --config, nor checked here; "
		     "moat mcp list and wrap read them, run in that project",
		     p->key, n);
		for (size_t k = 0; k < n; k++) {
			struct moat_config *c = L->c;

			c->project_servers = moat_xrealloc(c->project_servers,
							   2 * (c->n_project_servers + 1) * sizeof(*c->project_servers));
			c->project_servers[2 * c->n_project_servers] = moat_xstrdup(toml_table_at(servers, k)->key);
			c->project_servers[2 * c->n_project_servers + 1] = moat_xstrdup(p->key);
			c->n_project_servers++;
		}
	}
}

/* A key of moat's sandbox table written at the top of the file (`read =
 * ["."]`, `deny = [...]`, `net = "none"` above every table) is no
 * client's: ignored as one, it would drop a grant, a deny or the network
 * fence without a word.  An error, with where it goes.  A client's own
 * key of that name (Codex's `profile`) is the client's. */
static void misplaced_sandbox_key(const struct loader *L, const struct toml_keyval *kv)
{
	cleanup_free char *kp = NULL;

	if (!key_in(kv, sandbox_keys) || key_in(kv, codex_keys))
		return;
	kp = config_keypath(NULL, kv->key, kv->key_len);
	fail(L, kv->pos, kp, "a key of moat's sandbox table, at the top of the file, where moat reads no policy: it "
			     "would be ignored");
	if (L->c->json)
		moat_error_hint(L->err, "move it into \"sandbox\": {...} (every server of the file) or a server's "
					"\"sandbox\"");
	else
		moat_error_hint(L->err, "move it under [sandbox] (every server and command of the file), a server's "
					"sandbox, or a [profiles.NAME]");
	keep(L);
}

/* The top of the file: moat's keys are read; the rest is the client's
 * (check_client_keys: silently, a client's settings file holds dozens). */
static void load_tree(struct loader *L, const struct toml_value *root)
{
	size_t i;

	check_client_keys(L, root, NULL, top_keys, codex_keys, false);
	for (i = 0; i < toml_table_len(root); i++) {
		const struct toml_keyval *kv = toml_table_at(root, i);
		int rc = 0;

		misplaced_sandbox_key(L, kv);
		if (!key_in(kv, top_keys))
			continue;
		if (strcmp(kv->key, "sandbox") == 0) {
			if (!gemini_sandbox(kv->value))
				load_layer(L, &L->c->defaults, kv->value, "sandbox", false);
		} else if (strcmp(kv->key, "profiles") == 0) {
			rc = load_profiles(L, kv);
		} else {
			rc = load_servers(L, kv);
		}
		if (rc < 0)
			keep(L);
	}
	note_project_servers(L, root);
	check_profiles(L);
}

int config_client_keys_check(const char *file, bool json, const struct toml_value *t, const char *key,
			     struct moat_error *err)
{
	struct moat_config c = {.file = file, .json = json};
	struct loader L = {.c = &c, .err = err};

	if (key)
		check_client_keys(&L, t, key, server_keys, client_server_keys, false);
	else
		check_client_keys(&L, t, NULL, top_keys, codex_keys, false);
	if (c.n_problems == 0)
		return 0;
	*err = c.problems[0];
	free(c.problems);
	return -1;
}

void config_load_tree(struct moat_config *c, const struct toml_value *root, const char *home)
{
	struct moat_error err = {0};
	struct loader L = {.c = c, .home = home, .err = &err};

	load_tree(&L, root);
	keep(&L);
}
