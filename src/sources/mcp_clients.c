/* The MCP clients' files for `moat mcp`: where they are, their server
 * entries with the bytes of each command and args, and the splice that
 * changes what an entry runs (sources/mcp_clients.h). */
#include "sources/mcp_clients.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/config.h"
#include "sources/config_common.h"
#include "sources/config_json.h"
#include "util/cleanup.h"
#include "util/mem.h"

/* ---- the clients and their files ---- */

static const struct {
	const char *id, *name;
} clients[] = {
    [MCP_CLAUDE_DESKTOP] = {"claude-desktop", "Claude Desktop"},
    [MCP_CLAUDE_CODE] = {"claude-code", "Claude Code"},
    [MCP_CODEX] = {"codex", "Codex"},
    [MCP_CURSOR] = {"cursor", "Cursor"},
    [MCP_VSCODE] = {"vscode", "VS Code"},
    [MCP_GEMINI] = {"gemini", "Gemini CLI"},
    [MCP_WINDSURF] = {"windsurf", "Windsurf"},
    [MCP_OTHER] = {"file", "a config file"},
};

const char *mcp_client_id(enum mcp_client c)
{
	return clients[c].id;
}

const char *mcp_client_name(enum mcp_client c)
{
	return clients[c].name;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0 && (n == t || tail[0] == '/' || s[n - t - 1] == '/');
}

enum mcp_client mcp_client_of(const char *path)
{
	/* The names each client gives its file, most specific first. */
	static const struct {
		const char *tail;
		enum mcp_client client;
	} names[] = {
	    {"claude_desktop_config.json", MCP_CLAUDE_DESKTOP},
	    {".claude.json", MCP_CLAUDE_CODE},
	    {"/.claude/.config.json", MCP_CLAUDE_CODE},
	    {".mcp.json", MCP_CLAUDE_CODE},
	    {"/.codex/config.toml", MCP_CODEX},
	    {"/.cursor/mcp.json", MCP_CURSOR},
	    {"/.vscode/mcp.json", MCP_VSCODE},
	    {"/User/mcp.json", MCP_VSCODE},
	    {"/.gemini/settings.json", MCP_GEMINI},
	    {"mcp_config.json", MCP_WINDSURF},
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(names); i++)
		if (ends_with(path, names[i].tail))
			return names[i].client;
	return MCP_OTHER;
}

static void add_location(struct mcp_location **v, size_t *n, size_t *cap, enum mcp_client c, char *path,
			 const char *scope)
{
	size_t i;

	/* A project that is HOME names HOME's files again. */
	for (i = 0; i < *n; i++) {
		if (strcmp((*v)[i].path, path) == 0) {
			free(path);
			return;
		}
	}
	*v = moat_xgrow(*v, cap, *n, sizeof(**v));
	(*v)[(*n)++] = (struct mcp_location){.client = c, .path = path, .scope = scope};
}

/* Claude Code's own file: ~/.claude.json, in CLAUDE_CONFIG_DIR when that is
 * set, or .config.json in its config directory when that exists (as
 * Claude Code itself looks for it). */
static char *claude_code_file(const char *home, char *const *env)
{
	const char *dir = config_getenv(env, "CLAUDE_CONFIG_DIR");
	cleanup_free char *legacy = NULL;

	legacy = dir && *dir ? moat_xasprintf("%s/.config.json", dir) : moat_xasprintf("%s/.claude/.config.json", home);
	if (access(legacy, F_OK) == 0)
		return steal_ptr(&legacy);
	return moat_xasprintf("%s/.claude.json", dir && *dir ? dir : home);
}

size_t mcp_locations(const char *home, const char *project, char *const *env, struct mcp_location **out)
{
	const char *xdg = config_getenv(env, "XDG_CONFIG_HOME"), *codex = config_getenv(env, "CODEX_HOME");
	struct mcp_location *v = NULL;
	size_t n = 0, cap = 0;
	cleanup_free char *conf = NULL;

	if (home && *home) {
		conf = xdg && xdg[0] == '/' ? moat_xstrdup(xdg) : moat_xasprintf("%s/.config", home);
		add_location(&v, &n, &cap, MCP_CLAUDE_DESKTOP,
			     moat_xasprintf("%s/Claude/claude_desktop_config.json", conf), "user");
		add_location(&v, &n, &cap, MCP_CLAUDE_CODE, claude_code_file(home, env), "user");
		add_location(&v, &n, &cap, MCP_CODEX,
			     codex && *codex ? moat_xasprintf("%s/config.toml", codex)
					     : moat_xasprintf("%s/.codex/config.toml", home),
			     "user");
		add_location(&v, &n, &cap, MCP_CURSOR, moat_xasprintf("%s/.cursor/mcp.json", home), "user");
		add_location(&v, &n, &cap, MCP_VSCODE, moat_xasprintf("%s/Code/User/mcp.json", conf), "user");
		add_location(&v, &n, &cap, MCP_VSCODE, moat_xasprintf("%s/Code - Insiders/User/mcp.json", conf),
			     "user");
		add_location(&v, &n, &cap, MCP_GEMINI, moat_xasprintf("%s/.gemini/settings.json", home), "user");
		add_location(&v, &n, &cap, MCP_WINDSURF, moat_xasprintf("%s/.codeium/windsurf/mcp_config.json", home),
			     "user");
	}
	if (project && *project) {
		const char *p = strcmp(project, "/") == 0 ? "" : project;

		add_location(&v, &n, &cap, MCP_CLAUDE_CODE, moat_xasprintf("%s/.mcp.json", p), "project");
		add_location(&v, &n, &cap, MCP_CODEX, moat_xasprintf("%s/.codex/config.toml", p), "project");
		add_location(&v, &n, &cap, MCP_CURSOR, moat_xasprintf("%s/.cursor/mcp.json", p), "project");
		add_location(&v, &n, &cap, MCP_VSCODE, moat_xasprintf("%s/.vscode/mcp.json", p), "project");
		add_location(&v, &n, &cap, MCP_GEMINI, moat_xasprintf("%s/.gemini/settings.json", p), "project");
	}
	*out = v;
	return n;
}

void mcp_locations_free(struct mcp_location *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(l[i].path);
	free(l);
}

/* ---- moat inside an entry's command line ---- */

static const char *base_name(const char *w)
{
	const char *slash = strrchr(w, '/');

	return slash ? slash + 1 : w;
}

static bool in_list(const char *w, const char *const *list)
{
	size_t i;

	for (i = 0; list[i]; i++)
		if (strcmp(w, list[i]) == 0)
			return true;
	return false;
}

/* moat itself: its name, a package runner's "moat@VERSION", or this moat. */
static bool is_moat(const char *w, const char *self)
{
	const char *b = base_name(w);

	return (self && strcmp(w, self) == 0) || strcmp(b, "moat") == 0 || strncmp(b, "moat@", 5) == 0;
}

/* Programs that run another command named after their own options: moat
 * behind one of them is still moat. */
static const char *const launchers[] = {
    "env",  "sudo", "doas", "nice", "ionice", "nohup", "setsid", "stdbuf", "timeout", "chrt", "taskset", "exec", "npx",
    "pnpx", "bunx", "uvx",  "npm",  "pnpm",   "yarn",  "bun",	 "uv",	   "pipx",    "deno", "command", NULL,
};
/* What stands between a launcher and the command it runs. */
static const char *const subcommands[] = {"exec", "dlx", "run", "tool", "x", "--", NULL};
static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", NULL};

/* An option, a VAR=VALUE, a number (nice -n 5, timeout 10s) or a launcher's
 * subcommand: not the command the launcher runs. */
static bool not_the_command(const char *w)
{
	const char *eq = strchr(w, '='), *slash = strchr(w, '/');

	return w[0] == '-' || (eq && (!slash || eq < slash)) || (w[0] >= '0' && w[0] <= '9') || in_list(w, subcommands);
}

/* A shell's -c script: each of its commands (split on ; & | and
 * parentheses), its words split on blanks. */
static bool script_runs_moat(const char *script, const char *self)
{
	cleanup_free char *copy = moat_xstrdup(script);
	char *words[64], *p = copy;
	size_t n = 0;

	for (;;) {
		bool sep = *p == '\0' || strchr(";&|()\n", *p);

		if (sep || *p == ' ' || *p == '\t') {
			char c = *p;

			*p = '\0';
			if (sep && n > 0 && mcp_moat_index(words, n, self) >= 0)
				return true;
			if (sep)
				n = 0;
			if (c == '\0')
				return false;
		} else if ((p == copy || p[-1] == '\0') && n < ARRAY_LEN(words)) {
			words[n++] = p;
		}
		p++;
	}
}

const char *mcp_container_engine(char *const *argv, size_t argc)
{
	static const char *const engines[] = {"docker", "podman", "nerdctl"};
	static const char *const starts[] = {"run", "exec", "start", "compose"};
	const char *base;

	if (argc < 2 || !argv[0])
		return NULL;
	base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (size_t k = 0; k < ARRAY_LEN(engines); k++) {
		if (strcmp(base, engines[k]) != 0)
			continue;
		for (size_t i = 1; i < argc; i++)
			for (size_t j = 0; j < ARRAY_LEN(starts); j++)
				if (strcmp(argv[i], starts[j]) == 0)
					return engines[k];
		return NULL;
	}
	return NULL;
}

long mcp_moat_index(char *const *argv, size_t argc, const char *self)
{
	const char *b;
	size_t i;

	if (argc == 0)
		return -1;
	if (is_moat(argv[0], self))
		return 0;
	b = base_name(argv[0]);
	if (in_list(b, shells)) {
		for (i = 1; i + 1 < argc; i++)
			if (strcmp(argv[i], "-c") == 0)
				return script_runs_moat(argv[i + 1], self) ? (long)(i + 1) : -1;
		return -1;
	}
	if (!in_list(b, launchers))
		return -1;
	for (i = 1; i < argc; i++) {
		long j;

		if (is_moat(argv[i], self))
			return (long)i;
		if (not_the_command(argv[i]))
			continue;
		/* The command the launcher runs: moat, or behind it. */
		j = mcp_moat_index(argv + i, argc - i, self);
		return j < 0 ? -1 : (long)i + j;
	}
	return -1;
}

/* ---- the entries of a file ---- */

static void entry_free(struct mcp_entry *e)
{
	size_t i;

	free(e->name);
	free(e->key);
	for (i = 0; i < e->argc; i++)
		free(e->argv[i]);
	free(e->argv);
	for (i = 0; i < e->n_env; i++)
		free(e->env_names[i]);
	free(e->env_names);
}

void mcp_file_free(struct mcp_file *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n_entries; i++)
		entry_free(&f->entries[i]);
	free(f->entries);
	toml_free(f->root);
	free(f->text);
	free(f->path);
	free(f);
}

static bool plain_string(const struct toml_value *v)
{
	return v && v->type == TOML_STRING && strlen(v->u.str.ptr) == v->u.str.len;
}

static void push_arg(struct mcp_entry *e, const char *s)
{
	e->argv = moat_xrealloc(e->argv, (e->argc + 2) * sizeof(*e->argv));
	e->argv[e->argc++] = moat_xstrdup(s);
	e->argv[e->argc] = NULL;
}

/* The strings of an array onto argv; false when one is not a string. */
static bool push_args(struct mcp_entry *e, const struct toml_value *a)
{
	size_t i;

	if (a->type != TOML_ARRAY)
		return false;
	for (i = 0; i < toml_array_len(a); i++) {
		if (!plain_string(toml_array_at(a, i)))
			return false;
		push_arg(e, toml_array_at(a, i)->u.str.ptr);
	}
	return true;
}

static void push_env(struct mcp_entry *e, const char *name)
{
	e->env_names = moat_xrealloc(e->env_names, (e->n_env + 1) * sizeof(*e->env_names));
	e->env_names[e->n_env++] = moat_xstrdup(name);
}

char **mcp_entry_environ(const struct mcp_entry *e, char *const *base)
{
	const struct toml_value *env = e->table ? toml_table_get(e->table, "env") : NULL;
	size_t n_env = env && env->type == TOML_TABLE ? toml_table_len(env) : 0, n_base = 0, n = 0;
	char **out;

	while (base && base[n_base])
		n_base++;
	out = moat_xcalloc(n_env + n_base + 1, sizeof(*out));
	for (size_t i = 0; i < n_env; i++) {
		const struct toml_keyval *kv = toml_table_at(env, i);

		if (plain_string(kv->value) && !strchr(kv->key, '='))
			out[n++] = moat_xasprintf("%s=%s", kv->key, kv->value->u.str.ptr);
	}
	/* The entry's value wins: config_getenv takes the first. */
	for (size_t i = 0; i < n_base; i++)
		out[n++] = moat_xstrdup(base[i]);
	return out;
}

void mcp_environ_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

static bool is_true(const struct toml_value *v)
{
	return v && v->type == TOML_BOOL && v->u.boolean;
}

static bool is_false(const struct toml_value *v)
{
	return v && v->type == TOML_BOOL && !v->u.boolean;
}

static bool remote(const struct toml_value *t)
{
	static const char *const types[] = {"http", "sse", "streamable-http", NULL};
	const struct toml_value *type = toml_table_get(t, "type");

	return toml_table_get(t, "url") || toml_table_get(t, "httpUrl") || toml_table_get(t, "serverUrl") ||
	       (plain_string(type) && in_list(type->u.str.ptr, types));
}

bool mcp_wrap_form(char *const *a, size_t argc)
{
	return argc > MCP_WRAP_ARGS && strcmp(a[1], "run") == 0 && strcmp(a[2], "--config") == 0 &&
	       strcmp(a[4], "--profile") == 0 && strcmp(a[6], "--") == 0;
}

void mcp_entry_wrapped(struct mcp_entry *e, const char *self)
{
	char **a = e->argv, **cmd = a + MCP_WRAP_ARGS;
	size_t n = e->argc - MCP_WRAP_ARGS;

	e->state = MCP_WRAPPED;
	e->policies = a[3];
	e->profile = a[5];
	/* moat again after its `--`: by this moat's name or path, or by the
	 * path the entry runs moat by (wrap --moat PATH). */
	if (mcp_moat_index(cmd, n, self) >= 0 || mcp_moat_index(cmd, n, a[0]) >= 0)
		e->state = MCP_NESTED;
}

/* What moat runs in place of the entry, and whether it does already. */
static void entry_state(struct mcp_entry *e, const char *self)
{
	char **a = e->argv;
	long at = mcp_moat_index(a, e->argc, self);
	size_t i;

	e->state = MCP_UNWRAPPED;
	if (at < 0)
		return;
	if (at == 0 && mcp_wrap_form(a, e->argc)) {
		mcp_entry_wrapped(e, self);
		return;
	}
	e->state = MCP_BY_HAND;
	for (i = (size_t)at + 1; i < e->argc; i++)
		if (strcmp(a[i], "--") == 0 && mcp_moat_index(a + i + 1, e->argc - i - 1, self) >= 0)
			e->state = MCP_NESTED;
}

/* An entry with a command is a local server, whatever else it names: a
 * client may run the command beside a url (Claude Code 2.1.197 runs it
 * beside "url", "httpUrl" or "serverUrl" without a type, and with "type":
 * "stdio"), so a url is no proof that nothing runs here.  Wrapping a
 * command its client ignores for the url changes nothing.  Likewise
 * sandboxEnabled is VS Code's key alone: in another client's file (a
 * cloned project's .mcp.json) it is a word that sandboxes nothing. */
static void read_entry(struct mcp_entry *e, const struct toml_value *t, enum mcp_client client, const char *self)
{
	const struct toml_value *cmd = toml_table_get(t, "command"), *args = toml_table_get(t, "args");
	const struct toml_value *env = toml_table_get(t, "env"), *vars = toml_table_get(t, "env_vars");
	size_t i;

	e->table = t;
	if (!cmd && remote(t)) {
		e->kind = MCP_REMOTE;
		e->skip = "a remote server: the client reaches it over the network, nothing runs here";
	} else if (is_false(toml_table_get(t, "enabled")) || is_true(toml_table_get(t, "disabled"))) {
		e->kind = MCP_DISABLED;
	}
	if (!e->skip && client == MCP_VSCODE && is_true(toml_table_get(t, "sandboxEnabled")))
		e->skip = "VS Code's own sandbox is on (sandboxEnabled): moat in it would be a sandbox in a sandbox";
	if (env && env->type == TOML_TABLE)
		for (i = 0; i < toml_table_len(env); i++)
			push_env(e, toml_table_at(env, i)->key);
	if (vars && vars->type == TOML_ARRAY)
		for (i = 0; i < toml_array_len(vars); i++)
			if (plain_string(toml_array_at(vars, i)))
				push_env(e, toml_array_at(vars, i)->u.str.ptr);
	if (!cmd) {
		if (!e->skip)
			e->skip = "no command";
		return;
	}
	e->command = cmd;
	e->command_key_off = toml_table_entry(t, "command")->off;
	if (cmd->type == TOML_ARRAY) {
		e->argv_command = true;
		if (toml_array_len(cmd) == 0 || !push_args(e, cmd) || args)
			goto bad;
	} else if (plain_string(cmd) && cmd->u.str.len > 0) {
		push_arg(e, cmd->u.str.ptr);
		if (args && !push_args(e, args))
			goto bad;
		e->args = args;
	} else {
		goto bad;
	}
	entry_state(e, self);
	return;
bad:
	if (!e->skip)
		e->skip = "its command and args are not a list of strings moat can read";
}

/* -1 (err set) past CONFIG_MAX_SERVERS: each entry is planned for list's
 * verdict, and a cloned repository's `.mcp.json` is read unasked. */
static int read_servers(struct mcp_file *f, const struct toml_value *servers, const char *parent, const char *self,
			struct moat_error *err)
{
	size_t i;

	if (!servers || servers->type != TOML_TABLE)
		return 0;
	for (i = 0; i < toml_table_len(servers); i++) {
		const struct toml_keyval *kv = toml_table_at(servers, i);
		struct mcp_entry *e;

		if (f->n_entries == CONFIG_MAX_SERVERS) {
			cleanup_free char *kp = config_keypath(parent, kv->key, kv->key_len);

			moat_error_set(err, MOAT_E_CONFIG, 0, "%s:%d:%d: %s: more than %d servers: the most moat reads "
				       "in one file", f->path, kv->pos.line, kv->pos.col, kp, CONFIG_MAX_SERVERS);
			return moat_error_hint(err, "a client's file holds a few servers: moat reads none of this one's");
		}
		f->entries = moat_xrealloc(f->entries, (f->n_entries + 1) * sizeof(*f->entries));
		e = &f->entries[f->n_entries++];
		memset(e, 0, sizeof(*e));
		e->name = moat_xstrndup(kv->key, strlen(kv->key));
		e->key = config_keypath(parent, kv->key, kv->key_len);
		e->pos = kv->pos;
		if (kv->value->type != TOML_TABLE) {
			e->skip = "not a table of settings";
			continue;
		}
		read_entry(e, kv->value, f->client, self);
	}
	return 0;
}

int mcp_file_parse(const char *path, enum mcp_client client, char *text, size_t len, const char *project,
		   const char *self, struct mcp_file **out, struct moat_error *err)
{
	static const char *const containers[] = {"mcpServers", "mcp_servers", "servers", NULL};
	struct mcp_file *f = moat_xcalloc(1, sizeof(*f));
	size_t i;

	f->client = client;
	f->path = moat_xstrdup(path);
	f->text = text;
	f->len = len;
	f->json = config_looks_like_json(path, text, len);
	/* VS Code reads its mcp.json as JSON with comments and trailing
	 * commas; the other clients' JSON takes no trailing comma. */
	f->trailing_commas = !f->json || client == MCP_VSCODE;
	if (f->json) {
		if (config_json_parse(path, text, len, client == MCP_VSCODE, &f->root, err) < 0) {
			struct toml_value *lax = NULL;
			struct moat_error ignored = {0};

			/* Where only a trailing comma is wrong, say so. */
			if (client != MCP_VSCODE && config_json_parse(path, text, len, true, &lax, &ignored) == 0)
				moat_error_hint(err, "a comma after the last item of an array or object: moat reads %s%s "
						     "as JSON with comments but without those (VS Code's mcp.json alone "
						     "may have them): remove it",
						client == MCP_OTHER ? "this file" : mcp_client_name(client),
						client == MCP_OTHER ? "" : "'s file");
			toml_free(lax);
			goto fail;
		}
	} else {
		struct toml_error te;

		if (toml_parse(text, len, &f->root, &te) < 0) {
			moat_error_set(err, MOAT_E_CONFIG, 0, "%s:%d:%d: %s", path, te.line, te.col, te.msg);
			goto fail;
		}
	}
	for (i = 0; i < toml_table_len(f->root); i++) {
		const struct toml_keyval *kv = toml_table_at(f->root, i);

		if (in_list(kv->key, containers) && read_servers(f, kv->value, kv->key, self, err) < 0)
			goto fail;
	}
	/* Claude Code keeps a project's own servers (its "local" scope) in
	 * ~/.claude.json under the project's path. */
	if (client == MCP_CLAUDE_CODE && project) {
		const struct toml_value *p = toml_table_get(toml_table_get(f->root, "projects"), project);
		cleanup_free char *kp = config_keypath("projects", project, strlen(project));
		cleanup_free char *servers = config_keypath(kp, "mcpServers", 10);

		if (read_servers(f, toml_table_get(p, "mcpServers"), servers, self, err) < 0)
			goto fail;
	}
	*out = f;
	return 0;
fail:
	mcp_file_free(f);
	return -1;
}

/* ---- writing values ---- */

struct text {
	char *p;
	size_t len, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	t->p = moat_xgrow(t->p, &t->cap, t->len + n, 1);
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

char *mcp_quote(const char *s, bool json)
{
	struct text t = {0};

	puts_(&t, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(&t, esc, 2);
		} else if (c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\b' ? 'b' : 'f';
			put(&t, esc, 2);
		} else if (c < 0x20 || (c == 0x7f && !json)) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			puts_(&t, esc);
		} else {
			put(&t, (const char *)&c, 1);
		}
	}
	puts_(&t, "\"");
	return t.p;
}

static void put_quoted(struct text *t, const char *s, bool json)
{
	cleanup_free char *q = mcp_quote(s, json);

	puts_(t, q);
}

/* The blanks before position `at` on its line, when only blanks are there;
 * *nl is the line break before them ("\n" or "\r\n"). */
static bool indent_before(const char *text, size_t at, size_t *from, const char **nl)
{
	size_t i = at;

	while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t'))
		i--;
	if (i == 0 || text[i - 1] != '\n')
		return false;
	*from = i;
	*nl = i >= 2 && text[i - 2] == '\r' ? "\r\n" : "\n";
	return true;
}

/* An array of strings laid out as `old` is (NULL: on one line): when it
 * spans lines with ']' on a line of its own, one item a line with the old
 * items' indent (two blanks more than the ']' when it had none) and its
 * trailing comma; else on one line, with blanks inside the brackets if it
 * had them. */
static void put_array(struct text *t, const struct mcp_file *f, const struct toml_value *old, char *const *items,
		      size_t n, bool json)
{
	const char *text = f->text, *nl = "\n", *item_nl = "\n";
	const struct toml_value *first = old ? toml_array_at(old, 0) : NULL;
	size_t close_from = 0, item_from = 0, i, k;
	bool lines = false, trailing = false, pad = false;

	if (old && old->type == TOML_ARRAY && n > 0 && memchr(text + old->off, '\n', old->end - old->off))
		lines = indent_before(text, old->end - 1, &close_from, &nl) &&
			(!first || indent_before(text, first->off, &item_from, &item_nl));
	if (lines) {
		for (k = old->end - 1; k > old->off && strchr(" \t\r\n", text[k - 1]); k--)
			;
		trailing = f->trailing_commas && first && text[k - 1] == ',';
	} else if (old && old->type == TOML_ARRAY && old->end - old->off > 2) {
		pad = text[old->off + 1] == ' ' && text[old->end - 2] == ' ';
	}
	if (!lines) {
		puts_(t, pad ? "[ " : "[");
		for (i = 0; i < n; i++) {
			if (i > 0)
				puts_(t, ", ");
			put_quoted(t, items[i], json);
		}
		puts_(t, pad ? " ]" : "]");
		return;
	}
	puts_(t, "[");
	for (i = 0; i < n; i++) {
		puts_(t, first ? item_nl : nl);
		if (first) {
			put(t, text + item_from, first->off - item_from);
		} else {
			put(t, text + close_from, old->end - 1 - close_from);
			puts_(t, "  ");
		}
		put_quoted(t, items[i], json);
		if (i + 1 < n || trailing)
			puts_(t, ",");
	}
	puts_(t, nl);
	put(t, text + close_from, old->end - 1 - close_from);
	puts_(t, "]");
}

/* args inserted after a command that has none: in JSON and an inline TOML
 * table after the command's value; in a TOML table on a line of its own
 * after the command's, written as the command's key is (its indent, a
 * dotted key's prefix). */
static size_t put_inserted_args(struct text *t, const struct mcp_file *f, const struct mcp_entry *e, char *const *items,
				size_t n)
{
	const char *text = f->text, *nl = "\n";
	size_t at = e->command->end, line = e->command_key_off, from;

	if (f->json || text[e->table->off] == '{') {
		if (f->json && indent_before(text, e->command_key_off, &from, &nl)) {
			puts_(t, ",");
			puts_(t, nl);
			put(t, text + from, e->command_key_off - from);
		} else {
			puts_(t, ", ");
		}
		puts_(t, f->json ? "\"args\": " : "args = ");
		put_array(t, f, NULL, items, n, f->json);
		return at;
	}
	while (at < f->len && text[at] != '\n')
		at++;
	if (at > e->command->end && at < f->len && text[at - 1] == '\r') {
		at--;
		nl = "\r\n";
	}
	while (line > 0 && text[line - 1] != '\n')
		line--;
	put(t, text + e->command->end, at - e->command->end);
	puts_(t, nl);
	put(t, text + line, e->command_key_off - line);
	puts_(t, "args = ");
	put_array(t, f, NULL, items, n, false);
	return at;
}

int mcp_entry_rewrite(const struct mcp_file *f, const struct mcp_entry *e, char *const *argv, size_t argc,
		      struct mcp_splice *out, struct moat_error *err)
{
	const struct toml_value *cmd = e->command, *args = e->args;
	struct text t = {0};
	size_t end;

	if (!cmd || argc == 0)
		return moat_error_set(err, MOAT_E_CONFIG, 0, "%s: %s: no command to replace", f->path, e->key);
	if (e->argv_command) {
		put_array(&t, f, cmd, argv, argc, f->json);
		end = cmd->end;
	} else if (args) {
		/* Both values, and what lies between them as it is. */
		const struct toml_value *first = cmd->off < args->off ? cmd : args, *second = first == cmd ? args : cmd;

		if (first == cmd)
			put_quoted(&t, argv[0], f->json);
		else
			put_array(&t, f, args, argv + 1, argc - 1, f->json);
		put(&t, f->text + first->end, second->off - first->end);
		if (second == cmd)
			put_quoted(&t, argv[0], f->json);
		else
			put_array(&t, f, args, argv + 1, argc - 1, f->json);
		out->off = first->off;
		out->end = second->end;
		out->text = t.p;
		return 0;
	} else {
		put_quoted(&t, argv[0], f->json);
		end = argc > 1 ? put_inserted_args(&t, f, e, argv + 1, argc - 1) : cmd->end;
	}
	out->off = cmd->off;
	out->end = end;
	out->text = t.p;
	return 0;
}

char *mcp_splices_apply(const char *text, size_t len, const struct mcp_splice *s, size_t n, size_t *out_len)
{
	struct text t = {0};
	size_t at = 0, i;

	puts_(&t, "");
	for (i = 0; i < n; i++) {
		put(&t, text + at, s[i].off - at);
		puts_(&t, s[i].text);
		at = s[i].end;
	}
	put(&t, text + at, len - at);
	*out_len = t.len;
	return t.p;
}

void mcp_splice_free(struct mcp_splice *s)
{
	free(s->text);
	s->text = NULL;
}
