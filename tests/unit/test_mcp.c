/* Unit tests of sources/mcp_clients.c: the client files' entries, moat found
 * behind launchers, and the splice that changes what an entry runs --
 * written in the file's own layout, and undone by the same splice back to
 * the original command line, byte for byte. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/protected.h"
#include "sources/mcp_clients.h"
#include "tap.h"
#include "util/cleanup.h"
#include "util/mem.h"

#define MOAT "/usr/local/bin/moat"

static struct mcp_file *parse(const char *path, const char *text)
{
	struct mcp_file *f = NULL;
	struct moat_error err = {0};

	if (mcp_file_parse(path, mcp_client_of(path), moat_xstrdup(text), strlen(text), "/home/you/app", MOAT, &f,
			   &err) < 0)
		printf("# %s: %s\n", path, err.message);
	return f;
}

static const struct mcp_entry *entry(const struct mcp_file *f, const char *name)
{
	size_t i;

	for (i = 0; f && i < f->n_entries; i++)
		if (strcmp(f->entries[i].name, name) == 0)
			return &f->entries[i];
	return NULL;
}

/* The text of f with entry NAME running argv. */
static char *rewrite(const struct mcp_file *f, const char *name, char *const *argv, size_t argc)
{
	const struct mcp_entry *e = entry(f, name);
	struct mcp_splice s = {0};
	struct moat_error err = {0};
	size_t len;
	char *out;

	if (!e || mcp_entry_rewrite(f, e, argv, argc, &s, &err) < 0) {
		printf("# rewrite %s: %s\n", name, e ? err.message : "no such entry");
		return NULL;
	}
	out = mcp_splices_apply(f->text, f->len, &s, 1, &len);
	mcp_splice_free(&s);
	return out;
}

static size_t count(char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

static bool same_argv(const struct mcp_entry *e, char *const *want)
{
	size_t i, n = count(want);

	if (!e || e->argc != n)
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(e->argv[i], want[i]) != 0)
			return false;
	return true;
}

/* Wrap NAME of (path, text) as moat mcp wrap does, check the wrapped text
 * is `want` and reads back as wrapped, then put the original command line
 * back and check the text is the original, byte for byte when `exact` (a
 * layout the rewrite writes itself; elsewhere moat mcp unwrap puts back the
 * bytes it recorded). */
static void round_trip(const char *path, const char *text, const char *name, const char *want, bool exact,
		       const char *what)
{
	struct mcp_file *f = parse(path, text), *w = NULL, *back = NULL;
	const struct mcp_entry *e = entry(f, name);
	char *argv[64] = {MOAT, "run", "--config", "/p/servers.toml", "--profile", "x.y", "--"};
	char *wrapped = NULL, *restored = NULL;
	size_t i;

	ok(e && e->state == MCP_UNWRAPPED && !e->skip, "%s: %s read, not under moat", what, name);
	if (!e) {
		mcp_file_free(f);
		return;
	}
	for (i = 0; i < e->argc; i++)
		argv[MCP_WRAP_ARGS + i] = e->argv[i];
	argv[MCP_WRAP_ARGS + i] = NULL;
	wrapped = rewrite(f, name, argv, MCP_WRAP_ARGS + e->argc);
	is_str(wrapped, want, "%s: wrapped in the file's layout, every other byte kept", what);
	w = wrapped ? parse(path, wrapped) : NULL;
	e = entry(w, name);
	ok(e && e->state == MCP_WRAPPED && same_argv(e, argv) && strcmp(e->profile, "x.y") == 0 &&
	       strcmp(e->policies, "/p/servers.toml") == 0,
	   "%s: reads back as wrapped, the original command line after --", what);
	if (e)
		restored = rewrite(w, name, e->argv + MCP_WRAP_ARGS, e->argc - MCP_WRAP_ARGS);
	back = restored ? parse(path, restored) : NULL;
	if (!exact)
		ok(back && same_argv(entry(back, name), argv + MCP_WRAP_ARGS), "%s: the command line put back", what);
	else
		is_str(restored, text, "%s: the command line put back gives the original bytes", what);
	free(wrapped);
	free(restored);
	mcp_file_free(f);
	mcp_file_free(w);
	mcp_file_free(back);
}

static void test_layouts(void)
{
	round_trip("/h/.config/Claude/claude_desktop_config.json",
		   "{\n  \"mcpServers\": {\n    \"filesystem\": {\n      \"command\": \"npx\",\n      \"args\": [\n"
		   "        \"-y\",\n        \"@modelcontextprotocol/server-filesystem\"\n      ]\n    }\n  },\n"
		   "  \"globalShortcut\": \"Ctrl+Space\"\n}\n",
		   "filesystem",
		   "{\n  \"mcpServers\": {\n    \"filesystem\": {\n      \"command\": \"" MOAT
		   "\",\n      \"args\": [\n"
		   "        \"run\",\n        \"--config\",\n        \"/p/servers.toml\",\n        \"--profile\",\n"
		   "        \"x.y\",\n        \"--\",\n        \"npx\",\n        \"-y\",\n"
		   "        \"@modelcontextprotocol/server-filesystem\"\n      ]\n    }\n  },\n"
		   "  \"globalShortcut\": \"Ctrl+Space\"\n}\n",
		   true, "Claude Desktop, args over lines");
	round_trip("/h/.codex/config.toml",
		   "# Codex\nmodel = \"o4\"\n\n[mcp_servers.docs]   # docs\ncommand = 'node' # runtime\n"
		   "args = [ \"s\\\"q.js\", # first\n  \"--stdio\",\n]\nenv = { A = \"1\" }\n\n[tui]\nx = 1\n",
		   "docs",
		   "# Codex\nmodel = \"o4\"\n\n[mcp_servers.docs]   # docs\ncommand = \"" MOAT "\" # runtime\n"
		   "args = [\"run\", \"--config\", \"/p/servers.toml\", \"--profile\", \"x.y\", \"--\", \"node\", "
		   "\"s\\\"q.js\", \"--stdio\"]\nenv = { A = \"1\" }\n\n[tui]\nx = 1\n",
		   false, "Codex TOML, comments, a literal string, an item on the bracket's line: args on one line");
	round_trip("/h/.codex/config.toml",
		   "[mcp_servers.docs]\ncommand = \"node\"\nargs = [\n    \"s.js\",\n    \"--stdio\",\n  ]\n", "docs",
		   "[mcp_servers.docs]\ncommand = \"" MOAT "\"\nargs = [\n    \"run\",\n    \"--config\",\n"
		   "    \"/p/servers.toml\",\n    \"--profile\",\n    \"x.y\",\n    \"--\",\n    \"node\",\n"
		   "    \"s.js\",\n    \"--stdio\",\n  ]\n",
		   true, "Codex TOML, an item a line with a trailing comma");
	round_trip("/h/.cursor/mcp.json", "{\"mcpServers\": {\"a\": {\"args\": [ \"x\" ], \"command\": \"uvx\"}}}", "a",
		   "{\"mcpServers\": {\"a\": {\"args\": [ \"run\", \"--config\", \"/p/servers.toml\", \"--profile\", "
		   "\"x.y\", \"--\", \"uvx\", \"x\" ], \"command\": \"" MOAT "\"}}}",
		   true, "JSON on one line, args before command");
	round_trip("/h/.gemini/settings.json",
		   "{\n  // comment\n  \"mcpServers\": {\n    \"t\": {\n      \"command\": \"/bin/t\",\n"
		   "      \"trust\": false\n    }\n  }\n}\n",
		   "t",
		   "{\n  // comment\n  \"mcpServers\": {\n    \"t\": {\n      \"command\": \"" MOAT "\",\n"
		   "      \"args\": [\"run\", \"--config\", \"/p/servers.toml\", \"--profile\", \"x.y\", \"--\", "
		   "\"/bin/t\"],\n"
		   "      \"trust\": false\n    }\n  }\n}\n",
		   false, "JSON, args inserted on a line of its own");
	round_trip("/h/x/config.toml", "[mcp_servers.t]\r\n  command = \"t\" # c\r\n  cwd = \".\"\r\n", "t",
		   "[mcp_servers.t]\r\n  command = \"" MOAT "\" # c\r\n"
		   "  args = [\"run\", \"--config\", \"/p/servers.toml\", \"--profile\", \"x.y\", \"--\", \"t\"]\r\n"
		   "  cwd = \".\"\r\n",
		   false, "TOML with CRLF, args inserted on the next line with the indent");
	round_trip(
	    "/h/x/config.toml", "mcp_servers.t.command = \"t\"", "t",
	    "mcp_servers.t.command = \"" MOAT "\"\n"
	    "mcp_servers.t.args = [\"run\", \"--config\", \"/p/servers.toml\", \"--profile\", \"x.y\", \"--\", \"t\"]",
	    false, "TOML dotted keys, args inserted with the same prefix");
	round_trip("/h/x/config.toml", "[mcp_servers]\nt = { command = \"t\", enabled = false }\n", "t",
		   "[mcp_servers]\nt = { command = \"" MOAT "\", args = [\"run\", \"--config\", \"/p/servers.toml\", "
		   "\"--profile\", \"x.y\", \"--\", \"t\"], enabled = false }\n",
		   false, "TOML inline table, args inserted in it");
	round_trip("/h/audit.toml", "[mcp_servers.s]\ncommand = [\n    \"scorecard-mcp\",\n    \"--stdio\"\n]\n", "s",
		   "[mcp_servers.s]\ncommand = [\n    \"" MOAT "\",\n    \"run\",\n    \"--config\",\n"
		   "    \"/p/servers.toml\",\n    \"--profile\",\n    \"x.y\",\n    \"--\",\n    \"scorecard-mcp\",\n"
		   "    \"--stdio\"\n]\n",
		   true, "darnit's command array");
}

static void test_entries(void)
{
	struct mcp_file *f = parse(
	    "/home/you/.claude.json",
	    "{\"mcpServers\": {\"u\": {\"type\": \"stdio\", \"command\": \"u\", \"env\": {\"TOKEN\": \"x\"}},\n"
	    " \"r\": {\"type\": \"http\", \"url\": \"https://x\"}, \"d\": {\"command\": \"d\", \"disabled\": true},\n"
	    " \"v\": {\"command\": \"v\", \"sandboxEnabled\": true}, \"n\": {\"args\": [\"x\"]},\n"
	    " \"b\": {\"command\": \"env\", \"args\": [\"A=1\", \"moat\", \"run\", \"--\", \"srv\"]},\n"
	    " \"nest\": {\"command\": \"moat\", \"args\": [\"run\", \"--config\", \"c\", \"--profile\", \"p\", "
	    "\"--\",\n"
	    "   \"npx\", \"-y\", \"moat@1\", \"run\", \"--\", \"x\"]},\n"
	    " \"bad\": {\"command\": \"x\", \"args\": [1]}},\n"
	    " \"projects\": {\"/home/you/app\": {\"mcpServers\": {\"local\": {\"command\": \"l\"}}},\n"
	    "   \"/other\": {\"mcpServers\": {\"elsewhere\": {\"command\": \"e\"}}}}}");
	const struct mcp_entry *e;

	ok(f && f->client == MCP_CLAUDE_CODE && f->n_entries == 9, "~/.claude.json: 8 entries and this project's one");
	e = entry(f, "u");
	ok(e && e->kind == MCP_LOCAL && !e->skip && e->n_env == 1 && strcmp(e->env_names[0], "TOKEN") == 0 &&
	       e->pos.line == 1,
	   "a local server, the names of its env");
	e = entry(f, "r");
	ok(e && e->kind == MCP_REMOTE && e->skip, "a remote one is skipped");
	e = entry(f, "d");
	ok(e && e->kind == MCP_DISABLED && !e->skip, "a disabled one can be wrapped");
	e = entry(f, "v");
	ok(e && e->kind == MCP_LOCAL && !e->skip,
	   "sandboxEnabled in Claude Code's file: VS Code's key, no sandbox there: wrapped like any other");
	e = entry(f, "n");
	ok(e && e->skip && strcmp(e->skip, "no command") == 0, "no command");
	e = entry(f, "bad");
	ok(e && e->skip && strstr(e->skip, "list of strings"), "a number in args");
	e = entry(f, "b");
	ok(e && e->state == MCP_BY_HAND, "moat behind env: under moat by hand");
	e = entry(f, "nest");
	ok(e && e->state == MCP_NESTED, "npx moat inside a wrapped entry: nested");
	e = entry(f, "local");
	ok(e && strcmp(e->key, "projects.\"/home/you/app\".mcpServers.local") == 0,
	   "the project's own server, with its key path");
	ok(!entry(f, "elsewhere"), "another project's servers are not this project's");
	mcp_file_free(f);

	f = parse("/p/.vscode/mcp.json", "{\"servers\": {\"v\": {\"command\": \"v\", \"sandboxEnabled\": true},\n"
					  " \"cu\": {\"command\": \"c\", \"url\": \"https://x\"}}}");
	e = entry(f, "v");
	ok(e && e->skip && strstr(e->skip, "sandboxEnabled"), "VS Code's sandbox, in VS Code's file: skipped, saying why");
	e = entry(f, "cu");
	ok(e && e->kind == MCP_LOCAL && !e->skip, "a command beside a url: local, wrapped (a client may run the command)");
	mcp_file_free(f);
}

static void test_moat_index(void)
{
	static const struct {
		const char *argv[8];
		long want;
	} cases[] = {
	    {{"moat", "run"}, 0},
	    {{"/opt/bin/moat"}, 0},
	    {{MOAT}, 0},
	    {{"env", "-i", "A=1", "/usr/bin/moat", "run"}, 3},
	    {{"npx", "-y", "moat@0.3", "run"}, 2},
	    {{"npm", "exec", "--", "moat"}, 3},
	    {{"sudo", "-E", "nice", "-n", "5", "moat"}, 5},
	    {{"sh", "-c", "cd /x && exec moat run -- y"}, 2},
	    {{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/src/moat"}, -1},
	    {{"node", "moat"}, -1},
	    {{"uvx", "mcp-server-fetch"}, -1},
	    {{"bash", "-c", "node server.js moat"}, -1},
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(cases); i++) {
		size_t n = 0;

		while (n < 8 && cases[i].argv[n])
			n++;
		ok(mcp_moat_index((char *const *)cases[i].argv, n, MOAT) == cases[i].want, "moat in %s %s ...: %ld",
		   cases[i].argv[0], cases[i].argv[1] ? cases[i].argv[1] : "", cases[i].want);
	}
}

static void test_locations(void)
{
	char *env[] = {"XDG_CONFIG_HOME=/x", "CODEX_HOME=/c", NULL};
	struct mcp_location *l = NULL;
	size_t n = mcp_locations("/h", "/h", env, &l), i;
	bool desktop = false, codex = false, dup = false;

	for (i = 0; i < n; i++) {
		desktop |= strcmp(l[i].path, "/x/Claude/claude_desktop_config.json") == 0;
		codex |= strcmp(l[i].path, "/c/config.toml") == 0 && l[i].client == MCP_CODEX;
		dup |= strcmp(l[i].path, "/h/.gemini/settings.json") == 0 && strcmp(l[i].scope, "project") == 0;
	}
	ok(desktop && codex, "XDG_CONFIG_HOME and CODEX_HOME are followed");
	ok(!dup, "a project that is HOME does not list HOME's files twice");
	mcp_locations_free(l, n);
	ok(mcp_client_of("/h/.config/Code/User/mcp.json") == MCP_VSCODE &&
	       mcp_client_of("/p/.mcp.json") == MCP_CLAUDE_CODE &&
	       mcp_client_of("/h/.codeium/windsurf/mcp_config.json") == MCP_WINDSURF &&
	       mcp_client_of("/p/my.mcp.json") == MCP_OTHER,
	   "clients told by their file's name");
}

/* The protected name of `names` at or above `rel`, or NULL. */
static const char *covering(const char *rel, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		bool dir = names[i][len - 1] == '/';

		if (dir ? strncmp(rel, names[i], len) == 0 || (strncmp(rel, names[i], len - 1) == 0 && !rel[len - 1])
			: strcmp(rel, names[i]) == 0)
			return names[i];
	}
	return NULL;
}

/* Every file a client reads its servers from, as `moat mcp` knows them, is
 * a protected entry of a write grant (or below one): of any grant for a
 * project's, of a granted HOME for a user's.  A client added to
 * mcp_locations without its protected entry fails here. */
static void check_locations_protected(const char *home, const char *project, char **env, const char *what)
{
	size_t nn, nh, n, i, bad = 0;
	const char *const *names = policy_protected_names(&nn);
	const char *const *home_names = policy_protected_home_names(&nh);
	struct mcp_location *l = NULL;

	n = mcp_locations(home, project, env, &l);
	for (i = 0; i < n; i++) {
		bool user = strcmp(l[i].scope, "user") == 0;
		const char *root = user ? home : project;
		size_t rlen = strlen(root);
		const char *rel = l[i].path + rlen + 1, *by = NULL;

		if (strncmp(l[i].path, root, rlen) == 0 && l[i].path[rlen] == '/') {
			by = covering(rel, names, nn);
			if (!by && user)
				by = covering(rel, home_names, nh);
		}
		if (!by) {
			printf("# %s (%s, %s): not a protected entry\n", l[i].path, mcp_client_name(l[i].client),
			       l[i].scope);
			bad++;
		}
	}
	ok(n >= 12 && bad == 0, "%s: all %zu client files are protected inside a write grant (%zu not)", what, n, bad);
	mcp_locations_free(l, n);
}

static void test_locations_protected(void)
{
	char *none[] = {NULL};
	char *xdg_default[] = {"XDG_CONFIG_HOME=/h/.config", "CODEX_HOME=/h/.codex", "CLAUDE_CONFIG_DIR=/h/.claude",
			       NULL};
	char tmpl[] = "/tmp/moat-test-mcp.XXXXXX";
	char *dir = mkdtemp(tmpl);
	cleanup_free char *legacy_dir = NULL, *legacy = NULL;
	FILE *f;

	check_locations_protected("/h", "/p", none, "HOME and a project");
	check_locations_protected("/h", "/p", xdg_default, "XDG_CONFIG_HOME, CODEX_HOME, CLAUDE_CONFIG_DIR in HOME");
	/* Claude Code's older ~/.claude/.config.json, used when it exists. */
	if (!dir) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	legacy_dir = moat_xasprintf("%s/.claude", dir);
	legacy = moat_xasprintf("%s/.config.json", legacy_dir);
	if (mkdir(legacy_dir, 0700) == 0 && (f = fopen(legacy, "w")) != NULL)
		fclose(f);
	check_locations_protected(dir, "/p", none, "a HOME with ~/.claude/.config.json");
	unlink(legacy);
	rmdir(legacy_dir);
	rmdir(dir);
	/* The check itself: a file outside every protected entry is caught. */
	{
		static const char *const names[] = {".gemini/", ".mcp.json"};
		ok(covering(".gemini/settings.json", names, 2) && covering(".gemini", names, 2) &&
		       covering(".mcp.json", names, 2) && !covering(".geminix/settings.json", names, 2) &&
		       !covering(".mcp.json.bak", names, 2) && !covering("src/.mcp.json", names, 2),
		   "the check: a file at or below a protected name is covered, another name is not");
	}
}

int main(void)
{
	test_layouts();
	test_entries();
	test_moat_index();
	test_locations();
	test_locations_protected();
	return tap_done();
}
