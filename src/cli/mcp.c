/* `moat mcp ...`: the MCP clients' own files, listed and rewritten to run
 * their servers through moat (docs/clients.md, "moat mcp list, wrap,
 * unwrap").  The work is the library's (api/mcp.c); this parses the
 * arguments and prints what it returns.
 *
 *   moat mcp list   [--config FILE] [--server NAME] [--policies FILE] [--json]
 *   moat mcp wrap   [--config FILE] [--server NAME] [--policies FILE] [--moat PATH]
 *                   [--profile NAME] [POLICY OPTIONS]
 *   moat mcp unwrap [--config FILE] [--server NAME]
 *
 * unwrap, and list, use the policy file each wrapped entry names; list and
 * wrap take an entry for wrapped only when that file is the default one or
 * --policies FILE and holds wrap's record of the entry. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/mcp.h"
#include "cli/commands.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

static int usage(FILE *out)
{
	fprintf(out, "usage: moat mcp list   [--config FILE] [--server NAME] [--policies FILE] [--json]\n"
		     "       moat mcp wrap   [--config FILE] [--server NAME] [--policies FILE] [--moat PATH]\n"
		     "                       [--profile NAME] [POLICY OPTIONS]\n"
		     "       moat mcp unwrap [--config FILE] [--server NAME]\n\n"
		     "The MCP clients' files of HOME and this directory (Claude Desktop, Claude Code, Codex, Cursor,\n"
		     "VS Code, Gemini CLI, Windsurf), or --config FILE alone: list their servers with whether each\n"
		     "runs under moat, its policy and a dry run's verdict here; wrap rewrites entries to run\n"
		     "through moat, with one profile each in the policy file (~/.config/moat/servers.toml);\n"
		     "unwrap puts them back as they were.  An entry is wrapped only when the policy file it names is\n"
		     "moat's (or --policies FILE) and holds wrap's record of it.  POLICY OPTIONS are moat run's\n"
		     "--read, --write, --deny, --unprotect, --net, --allow-net, --resolve, --env-pass,\n"
		     "--unix-sockets, --mode, --backend, --require, --memory, --pids, --cpu, --address-space,\n"
		     "--files, --tmp-size and --timeout.\n");
	return out == stdout ? 0 : 125;
}

/* A usage error naming `a`, a word of the command line: shown escaped
 * (util/err.h). */
static int bad(const char *fmt, const char *a)
{
	cleanup_free char *shown = moat_text_shown(a);

	fprintf(stderr, "moat: ");
	fprintf(stderr, fmt, shown);
	fprintf(stderr, "\n");
	return usage(stderr);
}

/* ---- list ---- */

/* A string of the result, as moat shows it on a terminal: a server's name
 * or a path comes from a client's config, maybe a repository's own
 * `.mcp.json`, and its control characters are escaped (util/err.h).  An
 * escaped copy lives as long as the command (a caller may hold it across
 * a loop); only text with something to escape gets one. */
static const char *str(const json_t *o, const char *key)
{
	static char **kept;
	static size_t n_kept, cap_kept;
	const char *s = json_string_value(json_object_get(o, key));
	char *shown;

	if (!s)
		return "";
	shown = moat_text_shown(s);
	if (strcmp(shown, s) == 0) {
		free(shown);
		return s;
	}
	kept = moat_xgrow(kept, &cap_kept, n_kept, sizeof(*kept));
	kept[n_kept++] = shown;
	return shown;
}

/* A value as a person reads it: a string bare, anything else as JSON.  A
 * string escaped as str() escapes one: a profile's path can be a
 * directory a repository named (`--write "REPO/\e]0;...\a"`, the grant
 * list's own hint gives). */
static void put_value(FILE *f, const json_t *v)
{
	char *t;

	if (json_is_string(v)) {
		cleanup_free char *shown = moat_text_shown(json_string_value(v));

		fprintf(f, "%s", shown);
		return;
	}
	t = json_dumps(v, JSON_ENCODE_ANY);
	fprintf(f, "%s", t ? t : "?");
	free(t);
}

/* The keys of a profile: "key v1 v2", a table's as "table.key v", the
 * profile it extends first and bare. */
static void put_keys(FILE *f, const char *prefix, const json_t *obj, const char **sep)
{
	const char *key;
	char *shown_key;
	json_t *v, *item;
	size_t i;

	json_object_foreach((json_t *)obj, key, v)
	{
		if (json_is_object(v)) {
			char sub[256];

			shown_key = moat_text_shown(key);
			snprintf(sub, sizeof(sub), "%s%s.", prefix, shown_key);
			free(shown_key);
			put_keys(f, sub, v, sep);
			continue;
		}
		fprintf(f, "%s", *sep);
		*sep = "; ";
		if (!*prefix && strcmp(key, "extends") == 0) {
			put_value(f, v);
			continue;
		}
		shown_key = moat_text_shown(key);
		fprintf(f, "%s%s", prefix, shown_key);
		free(shown_key);
		if (!json_is_array(v)) {
			fputc(' ', f);
			put_value(f, v);
		}
		json_array_foreach(v, i, item)
		{
			fputc(' ', f);
			put_value(f, item);
		}
	}
}

/* "ID (mcp; write /x /y; network.allow api.github.com)", from the
 * profile's own keys. */
static char *policy_text(const json_t *s)
{
	const json_t *policy = json_object_get(s, "policy");
	const char *state = str(s, "state"), *sep = " (";
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (strcmp(state, "by-hand") == 0)
		return moat_xstrdup("by hand");
	if (strcmp(state, "unvouched") == 0)
		return moat_xasprintf("not vouched for: %s", str(s, "policies"));
	if (strcmp(state, "wrapped") != 0)
		return moat_xstrdup("-");
	f = open_memstream(&buf, &len);
	if (!f)
		return moat_xstrdup("?");
	fprintf(f, "%s", str(s, "profile"));
	if (!json_is_object(policy)) {
		fprintf(f, " (not in %s)", str(s, "policies"));
	} else {
		put_keys(f, "", policy, &sep);
		fprintf(f, ")");
	}
	fclose(f);
	return buf;
}

/* "enforced", "unavailable (missing: net.none)", "if wrapped: enforced;
 * npx: not found", "error: ...", or why moat does not wrap it. */
static char *verdict_text(const json_t *s)
{
	const json_t *v = json_object_get(s, "verdict"), *m, *missing;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	if (json_is_string(json_object_get(s, "skip")))
		return moat_xasprintf("not wrapped: %s", str(s, "skip"));
	if (!v)
		return moat_xstrdup("-");
	f = open_memstream(&buf, &len);
	if (!f)
		return moat_xstrdup("?");
	/* What the entry runs under, first: not a verdict of its own. */
	if (json_is_object(json_object_get(s, "unvouched"))) {
		fprintf(f, "%s", str(json_object_get(s, "unvouched"), "why"));
		if (strcmp(str(v, "status"), "unvouched") == 0) {
			fclose(f);
			return buf;
		}
		fprintf(f, "; ");
	}
	if (json_is_true(json_object_get(v, "if_wrapped")))
		fprintf(f, "if wrapped (profile mcp): ");
	if (strcmp(str(v, "status"), "error") == 0) {
		fprintf(f, "error: %s", str(v, "error"));
	} else {
		fprintf(f, "%s", str(v, "status"));
		missing = json_object_get(v, "missing");
		json_array_foreach(missing, i, m) fprintf(f, "%s%s", i == 0 ? " (missing: " : ", ", str(m, "property"));
		if (json_array_size(missing) > 0)
			fprintf(f, ")");
		if (json_is_string(json_object_get(v, "command")))
			fprintf(f, "; %s", str(v, "command"));
	}
	fclose(f);
	return buf;
}

/* What the server's sandbox hides from it that its arguments name, below
 * its row (the verdict stays short): a note, and how to grant it. */
static void put_notes(const json_t *notes, int indent)
{
	const json_t *n;
	size_t i;

	json_array_foreach(notes, i, n)
	{
		printf("%*snote: %s\n", indent, "", str(n, "note"));
		if (json_is_string(json_object_get(n, "hint")))
			printf("%*shint: %s\n", indent, "", str(n, "hint"));
	}
}

static void print_table(const json_t *doc)
{
	const json_t *files = json_object_get(doc, "files"), *fj, *s;
	size_t i, k;

	if (json_array_size(files) == 0)
		printf("no MCP client files in HOME or %s\n", str(doc, "project"));
	json_array_foreach(files, i, fj)
	{
		const json_t *servers = json_object_get(fj, "servers");
		int wn = 6, wk = 4, ws = 9, wp = 6;

		printf("%s%s (%s): %s", i ? "\n" : "", str(fj, "client_name"), str(fj, "scope"), str(fj, "file"));
		if (json_is_string(json_object_get(fj, "symlink_to")))
			printf(" -> %s", str(fj, "symlink_to"));
		printf("\n");
		if (json_is_string(json_object_get(fj, "error"))) {
			printf("  cannot read it: %s\n", str(fj, "error"));
			if (json_is_string(json_object_get(fj, "hint")))
				printf("  hint: %s\n", str(fj, "hint"));
			continue;
		}
		if (json_array_size(servers) == 0) {
			printf("  no servers\n");
			continue;
		}
		json_array_foreach(servers, k, s)
		{
			cleanup_free char *p = policy_text(s);
			char where[32];

			snprintf(where, sizeof(where), ":%d", (int)json_integer_value(json_object_get(s, "line")));
			if ((int)strlen(str(s, "name")) > wn)
				wn = (int)strlen(str(s, "name"));
			if ((int)strlen(where) > wk)
				wk = (int)strlen(where);
			if ((int)strlen(p) > wp)
				wp = (int)strlen(p);
		}
		printf("  %-*s %-*s %-8s %-*s %-*s %s\n", wn, "SERVER", wk, "LINE", "KIND", ws, "MOAT", wp, "POLICY",
		       "VERDICT");
		json_array_foreach(servers, k, s)
		{
			cleanup_free char *p = policy_text(s), *v = verdict_text(s);
			char where[32];

			snprintf(where, sizeof(where), ":%d", (int)json_integer_value(json_object_get(s, "line")));
			printf("  %-*s %-*s %-8s %-*s %-*s %s\n", wn, str(s, "name"), wk, where, str(s, "kind"), ws,
			       json_is_string(json_object_get(s, "skip")) ? "-" : str(s, "state"), wp, p, v);
			put_notes(json_object_get(json_object_get(s, "verdict"), "notes"), wn + 3);
		}
	}
}

/* ---- wrap and unwrap ---- */

static void print_edits(const json_t *doc, const char *verb, bool failed)
{
	const json_t *fj, *s;
	size_t i, k;
	bool changed = false;

	json_array_foreach(json_object_get(doc, "files"), i, fj)
	{
		const char *file = str(fj, "file");
		const json_t *servers = json_object_get(fj, "servers");

		if (json_is_string(json_object_get(fj, "error"))) {
			printf("%s: not read: %s\n", file, str(fj, "error"));
			continue;
		}
		json_array_foreach(servers, k, s)
		{
			const char *action = str(s, "action"), *why = str(s, "why");
			const json_t *alone = json_object_get(s, "policies_left_alone");

			if (strcmp(action, "wrapped") == 0) {
				printf("%s: wrapped %s (profile %s in %s)%s%s\n", file, str(s, "name"), str(s, "profile"),
				       str(doc, "policies"), *why ? ": " : "", why);
				put_notes(json_object_get(s, "notes"), 2);
			}
			else if (strcmp(action, "unwrapped") == 0 && !*why)
				printf("%s: unwrapped %s: its bytes are as they were before wrap\n", file,
				       str(s, "name"));
			else if (strcmp(action, "unwrapped") == 0)
				printf("%s: unwrapped %s: %s\n", file, str(s, "name"), why);
			else
				printf("%s: %s: %s: %s%s%s%s\n", file, str(s, "name"), action, why,
				       json_is_string(json_object_get(s, "profile")) ? " (profile " : "",
				       str(s, "profile"), json_is_string(json_object_get(s, "profile")) ? ")" : "");
			/* A file the entry names that unwrap did not touch,
			 * and why: on stderr, where a script looks. */
			if (alone)
				fprintf(stderr, "moat: %s: %s: the policy file it names, %s, is left as it is: %s\n", file,
					str(s, "name"), str(alone, "file"), str(alone, "why"));
			/* A policy moat does not vouch for: said where a
			 * script looks, whatever was done. */
			if (json_is_string(json_object_get(s, "unvouched")))
				fprintf(stderr, "moat: %s: %s: %s %s\n", file, str(s, "name"),
					strcmp(action, "wrapped") == 0 ? "as found, it" : "it", str(s, "unvouched"));
		}
		if (json_is_true(json_object_get(fj, "changed"))) {
			changed = true;
			if (json_is_string(json_object_get(fj, "symlink_to")))
				printf("%s: a symlink: the file it leads to, %s, was changed\n", file,
				       str(fj, "symlink_to"));
			printf("%s: the file as it was before is %s\n", file, str(fj, "backup"));
		}
		if (json_is_string(json_object_get(fj, "policies_left")))
			printf("%s: left in the policy file: %s\n", file, str(fj, "policies_left"));
	}
	if (!changed && failed)
		printf("no file was changed: moat stopped at the problem it names on stderr\n");
	else if (!changed)
		printf("nothing to %s: no file was changed\n", verb);
}

/* moat's own path: what wrapped entries run. */
static int self_path(const char *given, char *buf, size_t len)
{
	ssize_t n;

	if (given) {
		cleanup_free char *abs = NULL;
		char here[PATH_MAX];

		if (!getcwd(here, sizeof(here)))
			here[0] = '\0';
		abs = path_resolve_lexical(given, given[0] == '/' || !here[0] ? "/" : here, NULL);
		if (!abs || access(abs, X_OK) != 0 || strlen(abs) >= len) {
			cleanup_free char *text = moat_xasprintf("--moat %s: not an executable file", given);

			moat_say("moat: ", text);
			return -1;
		}
		strcpy(buf, abs);
		return 0;
	}
	n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0) {
		fprintf(stderr, "moat: cannot tell moat's own path from /proc/self/exe\n"
				"moat: hint: name it: --moat PATH\n");
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

int cmd_mcp(int argc, char **argv)
{
	struct api_mcp_request r = {0};
	struct moat_error err = {0};
	struct mcp_flag *flags = moat_xcalloc((size_t)argc + 1, sizeof(*flags));
	const char *verb = argc >= 2 ? argv[1] : "", *given_moat = NULL;
	char self[PATH_MAX];
	bool json = false, wrap = strcmp(verb, "wrap") == 0;
	json_t *doc = NULL;
	int i, code = 125, rc;

	if (strcmp(verb, "--help") == 0 || strcmp(verb, "help") == 0) {
		free(flags);
		return usage(stdout);
	}
	if (strcmp(verb, "list") != 0 && !wrap && strcmp(verb, "unwrap") != 0) {
		free(flags);
		return bad("mcp: expected list, wrap or unwrap, got '%s'", verb);
	}
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '='), *val = NULL;
		cleanup_free char *opt = eq && a[0] == '-' ? moat_xstrndup(a, (size_t)(eq - a)) : moat_xstrdup(a);
		const char **slot = NULL, *canon = NULL;
		bool takes = true;

		if (strcmp(opt, "--json") == 0 && !eq && !wrap && strcmp(verb, "list") == 0) {
			json = true;
			continue;
		}
		if (strcmp(opt, "--help") == 0) {
			free(flags);
			return usage(stdout);
		}
		if (strcmp(opt, "--config") == 0)
			slot = &r.config;
		else if (strcmp(opt, "--server") == 0)
			slot = &r.server;
		else if ((wrap || strcmp(verb, "list") == 0) && strcmp(opt, "--policies") == 0)
			slot = &r.policies;
		else if (wrap && strcmp(opt, "--moat") == 0)
			slot = &given_moat;
		else if (wrap && strcmp(opt, "--profile") == 0)
			slot = &r.profile;
		else if (!wrap || !(canon = mcp_policy_flag(opt, &takes))) {
			free(flags);
			return bad("mcp: unknown option '%s'", a);
		}
		if (takes) {
			val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
			if (!val || !*val) {
				free(flags);
				return bad("%s needs a value", opt);
			}
		} else if (eq) {
			free(flags);
			return bad("%s takes no value", opt);
		}
		if (slot) {
			if (*slot) {
				free(flags);
				return bad("%s given twice", opt);
			}
			*slot = val;
		} else {
			flags[r.n_flags].opt = canon;
			flags[r.n_flags].value = val;
			r.n_flags++;
		}
	}
	if (self_path(given_moat, self, sizeof(self)) < 0) {
		free(flags);
		return 125;
	}
	r.moat = self;
	r.flags = flags;
	rc = strcmp(verb, "list") == 0 ? api_mcp_list(&r, &doc, &err)
	     : wrap		       ? api_mcp_wrap(&r, &doc, &err)
				       : api_mcp_unwrap(&r, &doc, &err);
	if (doc && strcmp(verb, "list") != 0)
		print_edits(doc, verb, rc < 0);
	if (rc < 0) {
		code = moat_error_print(&err);
	} else if (json) {
		code = json_dumpf(doc, stdout, JSON_INDENT(2)) == 0 && printf("\n") > 0 ? 0 : 125;
	} else {
		if (strcmp(verb, "list") == 0)
			print_table(doc);
		code = 0;
	}
	/* A client file that could not be read lists none of its servers:
	 * 125, as wrap and unwrap, so that a script auditing the clients
	 * does not take the listing for complete. */
	if (rc >= 0 && strcmp(verb, "list") == 0 && code == 0) {
		const json_t *fj;
		size_t k, unread = 0;

		json_array_foreach(json_object_get(doc, "files"), k, fj) unread += json_is_string(json_object_get(fj, "error"));
		if (unread) {
			fprintf(stderr, "moat: %zu client file%s could not be read: %s servers are not listed\n", unread,
				unread > 1 ? "s" : "", unread > 1 ? "their" : "its");
			code = 125;
		}
	}
	if (fflush(stdout) != 0)
		code = 125;
	json_decref(doc);
	free(flags);
	return code;
}
