#include "policy/env.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/cleanup.h"
#include "util/mem.h"

/* The one list of variables that make a loader, an interpreter or a shell
 * run code (or load a module) chosen by whoever set them, before the
 * program's own -- or a tool the program runs (git, npm) run a program
 * they name: each entry says how.  Names only; the families are below. */
static const char *const hook_names[] = {
	"GCONV_PATH",        /* glibc: iconv(3) loads the .so modules named there */
	"BASH_ENV",          /* bash: a non-interactive shell sources this file first */
	"ENV",               /* sh, dash, bash --posix: an interactive shell sources it */
	"ZDOTDIR",           /* zsh: where .zshenv, sourced by every zsh, is read from */
	"PROMPT_COMMAND",    /* bash: run before every prompt */
	"PS0", "PS1", "PS2", "PS4", /* bash: prompts undergo command substitution
				     * (PS4 with set -x, in scripts too) */
	"PYTHONSTARTUP",     /* python: an interactive interpreter runs this file */
	"PYTHONPATH",        /* python: modules found there shadow the stdlib's */
	"PYTHONHOME",        /* python: the whole standard library from there */
	"PYTHONUSERBASE",    /* python: its site-packages' .pth files run at start */
	"PYTHONPLATLIBDIR",  /* python: where the stdlib's compiled modules load from */
	"PYTHONWARNINGS",    /* python: a warning category is imported by its name */
	"PYTHONBREAKPOINT",  /* python: breakpoint() imports and calls it */
	"NODE_OPTIONS",      /* node: --require / --import a module first */
	"NODE_PATH",         /* node: modules found there before the program's */
	"PERL5OPT",          /* perl: options such as -M (load a module) */
	"PERL5LIB", "PERLLIB", /* perl: modules found there first */
	"PERL5DB",           /* perl: the debugger code run under -d */
	"RUBYOPT",           /* ruby: options such as -r (require a library) */
	"RUBYLIB",           /* ruby: libraries found there first */
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", /* the JVM: -javaagent
								   * runs an agent */
	"DOTNET_STARTUP_HOOKS", /* .NET: assemblies whose hook runs before Main */
	"LUA_PATH", "LUA_CPATH", /* lua: modules (and C modules) found there first */
	"PHPRC", "PHP_INI_SCAN_DIR", /* php: an ini's auto_prepend_file runs first */
	"ERL_AFLAGS", "ERL_FLAGS", "ERL_ZFLAGS", /* erlang: -eval, -s run code at start */
	"OPENSSL_CONF",      /* OpenSSL: its config loads engines and providers (.so) */
	"OPENSSL_ENGINES", "OPENSSL_MODULES", /* OpenSSL: where those .so are loaded from */
	"GLIBC_TUNABLES",    /* glibc's loader, as LD_*: how every program's libc works
			      * (hwcaps pick the library builds that load) */
	"SHELLOPTS", "BASHOPTS", /* bash: the options every bash starts with (set -o,
				  * shopt): xtrace expands PS4, posix reads ENV */
	"CLASSPATH",         /* the JVM: classes found there first shadow the program's */
	"GIT_CONFIG_COUNT",  /* git: with GIT_CONFIG_KEY_n/VALUE_n (below), settings as -c
			      * gives them: core.fsmonitor, core.sshCommand, core.pager,
			      * diff.external run programs at every git call (mcp-server-git) */
	"GIT_CONFIG_PARAMETERS", /* git: the same, in the form git passes -c on to itself */
	"GIT_SSH", "GIT_SSH_COMMAND", /* git: run for every ssh remote */
	"GIT_EXEC_PATH",     /* git: where its subcommands (git-remote-https, ...) run from */
	"GIT_EXTERNAL_DIFF", /* git: run by git diff in place of its own */
	"GIT_PROXY_COMMAND", /* git: run for every git:// remote */
	"GIT_ASKPASS", "SSH_ASKPASS", /* git, ssh: run to ask for a password without a tty */
};

/* Names a tool reads in any letter case: npm (and pnpm) takes every
 * npm_config_KEY of the environment as its setting KEY, lowercased.  Those
 * of its settings that run code: node-options is copied into NODE_OPTIONS
 * for all npm runs (npx and npm exec: how most MCP servers start);
 * script-shell runs the scripts and npm exec's command; userconfig and
 * globalconfig name an .npmrc, which can set the others; onload-script is
 * a module npm 6 loads.  Not the whole family: npm_config_registry,
 * npm_config_cache and the CA bundle are settings, and moat sets some. */
static const char *const hook_names_anycase[] = {
	"npm_config_node_options", "npm_config_script_shell", "npm_config_userconfig",
	"npm_config_globalconfig", "npm_config_onload_script", "pnpm_config_node_options",
	"pnpm_config_script_shell",
};

/* Whole families: every LD_* variable is read by the dynamic loader
 * (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH load libraries; the others change
 * what it does), DYLD_* by macOS's; bash imports every BASH_FUNC_NAME%%
 * as the function NAME, which then shadows the command NAME; LUA_INIT and
 * LUA_INIT_5_4 (...) are code lua runs before the script; git reads
 * GIT_CONFIG_KEY_0, _1, ... as the settings GIT_CONFIG_COUNT counts. */
static const char *const hook_prefixes[] = {"LD_",	  "DYLD_",	      "BASH_FUNC_",
					    "LUA_INIT", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"};

bool env_is_hook(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(hook_names); i++)
		if (strcmp(name, hook_names[i]) == 0)
			return true;
	for (i = 0; i < ARRAY_LEN(hook_names_anycase); i++)
		if (strcasecmp(name, hook_names_anycase[i]) == 0)
			return true;
	for (i = 0; i < ARRAY_LEN(hook_prefixes); i++)
		if (strncmp(name, hook_prefixes[i], strlen(hook_prefixes[i])) == 0)
			return true;
	return false;
}

bool env_name_valid(const char *name)
{
	const char *c;

	if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') || name[0] == '_'))
		return false;
	for (c = name + 1; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	return true;
}

/* Variables that name a CA bundle -- a file of PEM certificates, or a
 * directory of them -- that a TLS client trusts besides (or instead of) the
 * system's.  Behind a proxy that intercepts TLS, the host's tools work only
 * with the proxy's CA, and so does the command: these pass by default when
 * what they name exists (profiles.c grants it read-only).  Names only; the
 * tool that reads each one. */
static const char *const ca_bundle_names[] = {
	"SSL_CERT_FILE",       /* OpenSSL's default file: curl, Python, Ruby, git, Go, uv */
	"SSL_CERT_DIR",        /* OpenSSL's default directories (':'-separated), Go */
	"NODE_EXTRA_CA_CERTS", /* node: added to its built-in roots */
	"REQUESTS_CA_BUNDLE",  /* Python requests (and pip, conda through it) */
	"CURL_CA_BUNDLE",      /* curl; requests reads it too */
	"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", /* git over https */
	"PIP_CERT",            /* pip */
	"AWS_CA_BUNDLE",       /* the AWS CLI and SDKs */
	"CARGO_HTTP_CAINFO",   /* cargo */
	"NPM_CONFIG_CAFILE", "npm_config_cafile", /* npm */
	"DENO_CERT",           /* deno */
	"BUNDLE_SSL_CA_CERT",  /* bundler */
	"COMPOSER_CAFILE",     /* composer */
	"HEX_CACERTS_PATH",    /* hex (Elixir) */
	"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", /* gRPC's C core (Python, Ruby, PHP) */
	"NIX_SSL_CERT_FILE",   /* nix */
	"HTTPLIB2_CA_CERTS",   /* httplib2 (Google's older Python clients) */
	"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", /* gcloud */
};

const char *env_ca_bundle_name(size_t i)
{
	return i < ARRAY_LEN(ca_bundle_names) ? ca_bundle_names[i] : NULL;
}

void env_add_safe_set(struct moat_policy *p)
{
	/* TERM names the terminal type, which a program needs to drive the
	 * terminal it is given (launch/term.h): less, vi and top are "not
	 * fully functional" without it.  A name, no path: terminfo's
	 * directories come from TERMINFO and TERMINFO_DIRS, which do not pass.
	 * TZ and LANGUAGE are the locale's, as LANG and LC_*: without TZ a
	 * server in a container whose zone is set only there (TZ=Europe/Berlin,
	 * /etc/localtime UTC) tells the time hours off.  COLORTERM and NO_COLOR
	 * say what the terminal shows, as TERM.  No path in them is granted:
	 * a TZ=:/FILE is read inside, from what the view holds. */
	static const char *const safe[] = {"PATH",  "HOME",	     "LANG", "LANGUAGE", "LC_*",    "TZ",
					   "SSL_CERT_FILE", "TERM", "COLORTERM", "NO_COLOR", "XDG_*"};
	struct moat_origin o = {.source = "safe environment set"};
	size_t i;

	for (i = 0; i < ARRAY_LEN(safe); i++)
		policy_add_env(p, safe[i], NULL, o);
}

static bool env_is_hook_n(const char *name, size_t len)
{
	char buf[256];

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return env_is_hook(buf);
}

static bool name_matches(const char *pattern, const char *name, size_t name_len)
{
	size_t pl = strlen(pattern);

	if (pl > 0 && pattern[pl - 1] == '*')
		return name_len >= pl - 1 && strncmp(pattern, name, pl - 1) == 0;
	return pl == name_len && strncmp(pattern, name, pl) == 0;
}

/* One variable being built: later rules replace earlier values. */
struct env_slot {
	char *name;
	char *value;
};

static void slot_set(struct env_slot **slots, size_t *n, size_t *cap, const char *name, size_t name_len,
		     const char *value)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strlen((*slots)[i].name) == name_len && strncmp((*slots)[i].name, name, name_len) == 0) {
			free((*slots)[i].value);
			(*slots)[i].value = moat_xstrdup(value);
			return;
		}
	}
	*slots = moat_xgrow(*slots, cap, *n, sizeof(**slots));
	(*slots)[*n].name = moat_xstrndup(name, name_len);
	(*slots)[*n].value = moat_xstrdup(value);
	(*n)++;
}

static void slots_free(struct env_slot *slots, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(slots[i].name);
		free(slots[i].value);
	}
	free(slots);
}

static int cmp_slot(const void *a, const void *b)
{
	return strcmp(((const struct env_slot *)a)->name, ((const struct env_slot *)b)->name);
}

/* Is the variable at environ_in[k] the first of its name?  getenv, and so
 * moat's own reading of HOME and PATH (config_getenv), takes the first of
 * two entries of one name; the command must get the same one, or the
 * credentials moat denies under the first HOME are not those of the HOME
 * the command uses. */
static bool first_of_name(char *const *environ_in, size_t k, size_t len)
{
	size_t j;

	for (j = 0; j < k; j++)
		if (strncmp(environ_in[j], environ_in[k], len) == 0 && environ_in[j][len] == '=')
			return false;
	return true;
}

int env_build(const struct moat_policy *p, char *const *environ_in, char ***envp_out, char ***names_out,
	      struct moat_error *err)
{
	struct env_slot *slots = NULL;
	size_t n = 0, cap = 0, i;
	char **envp, **names;

	for (i = 0; i < p->n_env; i++) {
		const struct moat_env_rule *r = &p->env[i];
		char *const *e;

		if (r->value) {
			slot_set(&slots, &n, &cap, r->name, strlen(r->name), r->value);
			continue;
		}
		/* The safe set is built in, so it never passes a hook even if
		 * one were added to it by mistake; user pass-through rules were
		 * checked when parsed, and are checked again here. */
		if (env_is_hook(r->name) && strchr(r->name, '*') == NULL) {
			slots_free(slots, n);
			moat_error_set(err, MOAT_E_USAGE, 0, "refusing to pass %s through from moat's environment",
				       r->name);
			return moat_error_hint(err, "it can run code before the program's own; set it explicitly "
						    "with --env %s=VALUE if it is really wanted",
					       r->name);
		}
		for (e = environ_in; e && *e; e++) {
			const char *eq = strchr(*e, '=');
			size_t len;

			if (!eq)
				continue;
			len = (size_t)(eq - *e);
			if (name_matches(r->name, *e, len) && !env_is_hook_n(*e, len) &&
			    first_of_name(environ_in, (size_t)(e - environ_in), len))
				slot_set(&slots, &n, &cap, *e, len, eq + 1);
		}
	}

	if (n > 1) /* qsort(NULL, 0) is undefined */
		qsort(slots, n, sizeof(*slots), cmp_slot);
	envp = moat_xcalloc(n + 1, sizeof(char *));
	names = moat_xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		envp[i] = moat_xasprintf("%s=%s", slots[i].name, slots[i].value);
		names[i] = slots[i].name;
		free(slots[i].value);
	}
	free(slots);
	*envp_out = envp;
	*names_out = names;
	return 0;
}

void env_strv_free(char **v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

static size_t strv_len(char **v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

const char *env_strv_get(char *const *envp, const char *name)
{
	size_t len = strlen(name), i;

	for (i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
			return envp[i] + len + 1;
	return NULL;
}

/* Remove the entry of v for which at(v[i]) names `name`, keeping the order. */
static void strv_remove(char **v, const char *name, bool kv)
{
	size_t len = strlen(name);

	for (size_t i = 0; v && v[i]; i++) {
		if (strncmp(v[i], name, len) != 0 || v[i][len] != (kv ? '=' : '\0'))
			continue;
		free(v[i]);
		memmove(v + i, v + i + 1, (strv_len(v + i + 1) + 1) * sizeof(char *));
		return;
	}
}

void env_strv_unset(char **envp, char **names, const char *name)
{
	strv_remove(envp, name, true);
	strv_remove(names, name, false);
}

void env_strv_set(char ***envp, char ***names, const char *name, const char *value)
{
	size_t n = strv_len(*envp), len = strlen(name), i, pos;
	char **e = *envp, **nm = *names;

	for (i = 0; i < n; i++) {
		if (strncmp(e[i], name, len) == 0 && e[i][len] == '=') {
			free(e[i]);
			e[i] = moat_xasprintf("%s=%s", name, value);
			return;
		}
	}
	e = moat_xrealloc(e, (n + 2) * sizeof(char *));
	e[n] = moat_xasprintf("%s=%s", name, value);
	e[n + 1] = NULL;
	nm = moat_xrealloc(nm, (n + 2) * sizeof(char *));
	for (pos = 0; pos < n && strcmp(nm[pos], name) < 0; pos++)
		;
	memmove(nm + pos + 1, nm + pos, (n - pos + 1) * sizeof(char *));
	nm[pos] = moat_xstrdup(name);
	*envp = e;
	*names = nm;
}
