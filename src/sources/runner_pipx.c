/* `pipx run` in two phases (sources/runners.h; docs/policy.md, "Package
 * runners"): the fetch phase makes a virtualenv in moat's cache and has pip
 * install the package into it; the server phase runs the package's console
 * script from that venv, read-only.  pipx itself runs in neither: its own
 * cache (~/.local/pipx/.cache) is shared by every package it ever ran, and
 * it removes and rewrites venvs there on each start. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sources/config_common.h"
#include "sources/netsets.h"
#include "sources/resolve.h"
#include "sources/runner_parts.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/mem.h"

/* What pipx run's own options are to moat (pipx 1.1, commands/run.py and
 * main.py's run parser): those that change what pip installs or how moat
 * could find it are left to pipx, in one phase. */
static const char *const pipx_unsplit[] = {"--python",	 "--system-site-packages", "--editable", "-e",
					   "--pip-args", "--pypackages",	   "--path"};

/* ---- the spec ---- */

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A requirement of the index (PEP 508 without markers or a URL):
 * NAME[EXTRAS][SPECIFIERS].  The name's length into *name_len, the
 * specifiers (or "") into *version.  A path, a URL, a VCS link, `NAME @
 * URL` or environment markers are not. */
static bool pip_spec(const char *spec, size_t *name_len, const char **version)
{
	const char *c = spec, *v;

	if (!name_char(*c))
		return false;
	while (name_char(*c) || ((*c == '-' || *c == '_' || *c == '.') && name_char(c[1])))
		c++;
	*name_len = (size_t)(c - spec);
	if (*c == '[') {
		c += strcspn(c, "]");
		if (*c != ']')
			return false;
		c++;
	}
	while (*c == ' ')
		c++;
	*version = c;
	for (v = c; *v; v++)
		if (!name_char(*v) && !strchr("<>=!~.,*+ ", *v))
			return false;
	return *c == '\0' || strchr("<>=!~", *c);
}

/* PEP 503's normalised name: lower case, each run of -_. one '-'. */
static char *normal_name(const char *name, size_t len)
{
	char *out = moat_xmalloc(len + 1), *o = out;

	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (c == '-' || c == '_' || c == '.') {
			if (o == out || o[-1] != '-')
				*o++ = '-';
		} else {
			*o++ = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		}
	}
	*o = '\0';
	return out;
}

/* "==VERSION" alone (no wildcard, no second clause): the one version that
 * satisfies it, or NULL. */
static char *pinned_version(const char *specifiers)
{
	const char *v = specifiers;
	size_t n;

	if (strncmp(v, "==", 2) != 0 || v[2] == '=')
		return NULL;
	v += 2;
	while (*v == ' ')
		v++;
	n = strcspn(v, " ");
	if (n == 0 || v[n + strspn(v + n, " ")] != '\0' || memchr(v, '*', n) || memchr(v, ',', n))
		return NULL;
	return moat_xstrndup(v, n);
}

/* ---- detect ---- */

int pipx_detect(const struct moat_policy *p, size_t first, char *const *env, struct runner_call *rc,
		struct moat_error *err)
{
	cleanup_free char *spec = NULL;
	const char *app = NULL, *version;
	size_t i, name_len;

	for (i = first; i < p->argc && runner_is_option(p, &i); i++) {
		const char *a = p->argv[i], *val;
		size_t klen = strcspn(a, "=");

		val = a[klen] == '=' ? a + klen + 1 : NULL;
		if (strcmp(a, "--verbose") == 0)
			continue;
		if (strcmp(a, "--no-cache") == 0) {
			runner_as_written(rc, false, "pipx run --no-cache asks for a fresh install at each run: as written");
			return 0;
		}
		if ((klen == 6 && strncmp(a, "--spec", 6) == 0) || (klen == 11 && strncmp(a, "--index-url", 11) == 0) ||
		    strcmp(a, "-i") == 0) {
			if (!val && i + 1 >= p->argc) {
				runner_as_written(rc, true, "%s: %s needs a value", rc->name, a);
				return 0;
			}
			val = val ? val : p->argv[++i];
			if (a[2] == 's') {
				free(spec);
				spec = moat_xstrdup(val);
			} else {
				free(rc->registry);
				rc->registry = moat_xstrdup(val);
			}
			continue;
		}
		for (size_t k = 0; k < ARRAY_LEN(pipx_unsplit); k++)
			if (klen == strlen(pipx_unsplit[k]) && strncmp(a, pipx_unsplit[k], klen) == 0) {
				runner_as_written(rc, true,
						  "%s %s changes what pip installs or where: moat leaves it to pipx, in "
						  "one phase, as written",
						  rc->name, pipx_unsplit[k]);
				return 0;
			}
		runner_as_written(rc, true,
				  "%s: moat does not know the option %s (nor whether it takes a value), so it cannot "
				  "tell the package from the rest",
				  rc->name, a);
		return 0;
	}
	if (i >= p->argc) {
		runner_as_written(rc, false, "%s has nothing to run", rc->name);
		return 0;
	}
	app = p->argv[i];
	rc->args_at = i + 1;
	if (strstr(app, "://")) {
		runner_as_written(rc, false, "pipx run of a URL downloads a script and runs it: as written");
		return 0;
	}
	if (!spec && (!pip_spec(app, &name_len, &version) || *version || app[name_len] != '\0')) {
		runner_as_written(rc, true,
				  "%s %s: pipx takes the word after its options as the command's name; name the package "
				  "with --spec (`pipx run --spec %s COMMAND`)",
				  rc->name, app, app);
		return 0;
	}
	if (spec && (!pip_spec(spec, &name_len, &version) || strchr(app, '/'))) {
		runner_as_written(rc, true,
				  "%s is not a package of the index (a path, a URL or a requirement with markers): %s runs "
				  "as written",
				  spec, rc->name);
		return 0;
	}
	runner_add_package(rc, spec ? spec : app);
	if (spec)
		rc->cmd = moat_xstrdup(app);
	if (runner_cache_state(rc, p, env, "pipx", pipx_registries, err) < 0)
		return -1;
	rc->state = pipx_find_install(rc) && pipx_install_current(rc) ? RUNNER_CACHED : RUNNER_FETCH;
	return 0;
}

/* ---- what is installed ---- */

/* A dist-info's METADATA (an egg-info's PKG-INFO, from an sdist pip
 * installed with `setup.py install`): its Name and Version headers.  The
 * package wrote it (an sdist's build runs its own code), so it is read for
 * at most 4096 header lines of 511 bytes: a file of zeros, sparse and a
 * terabyte long, has no blank line to end them. */
static bool read_metadata(const char *file, char **name, char **version)
{
	cleanup_fclose FILE *f = file_open_regular(file, INT64_MAX);
	char line[512];
	int lines = 0;

	*name = *version = NULL;
	while (f && lines++ < 4096 && fgets(line, sizeof(line), f) && line[0] != '\n' && line[0] != '\r') {
		char **to = strncasecmp(line, "Name:", 5) == 0 ? name : strncasecmp(line, "Version:", 8) == 0 ? version : NULL;
		const char *v = strchr(line, ':') + 1;

		if (!to || *to)
			continue;
		v += strspn(v, " \t");
		*to = moat_xstrndup(v, strcspn(v, "\r\n"));
	}
	if (*name && *version)
		return true;
	free(*name);
	free(*version);
	*name = *version = NULL;
	return false;
}

/* The console scripts of a dist-info's entry_points.txt: how many, and
 * whether `want` (or NULL) is one; the only one into *only. */
static size_t console_scripts(const char *file, const char *want, bool *has_want, char **only)
{
	cleanup_fclose FILE *f = file_open_regular(file, 16 * FILE_SMALL_MAX);
	char line[512];
	bool in = false;
	size_t n = 0;

	*has_want = false;
	*only = NULL;
	while (f && fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t"), *e;
		size_t len;

		if (*s == '[') {
			in = strncmp(s, "[console_scripts]", 17) == 0;
			continue;
		}
		if (!in || !(e = strchr(s, '=')))
			continue;
		len = (size_t)(e - s);
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		if (len == 0)
			continue;
		n++;
		*has_want |= want && strlen(want) == len && strncmp(s, want, len) == 0;
		free(*only);
		*only = n == 1 ? moat_xstrndup(s, len) : NULL;
	}
	return n;
}

/* The site-packages of a venv (lib/pythonX.Y/site-packages), or NULL. */
static char *site_packages(const char *venv)
{
	cleanup_free char *lib = moat_xasprintf("%s/lib", venv);
	cleanup_closedir DIR *d = opendir(lib);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, "python", 6) == 0) {
			char *sp = moat_xasprintf("%s/%s/site-packages", lib, e->d_name);
			if (access(sp, F_OK) == 0)
				return sp;
			free(sp);
		}
	return NULL;
}

/* pipx's choice of the script (commands/run.py): the command named (the
 * app, with --spec) when the venv has it; else, for `pipx run PKG`, PKG's
 * script named PKG, or its only console script.  The venv, what moat reads
 * of it and the script resolve inside the cache, as npm's installs must
 * (runner_inside_cache): the fetch wrote them, and a venv linked to
 * ~/.local would have the server granted that, as "the venv". */
bool pipx_find_install(struct runner_call *rc)
{
	cleanup_free char *lexical = moat_xasprintf("%s/venv", rc->cache), *venv = runner_inside_cache(rc, lexical),
			  *sp = venv ? site_packages(venv) : NULL, *want = NULL;
	cleanup_closedir DIR *d = NULL;
	struct dirent *e;
	const char *version_part;
	size_t name_len;

	if (!sp || !runner_within_cache(rc, sp) || !pip_spec(rc->packages[0], &name_len, &version_part))
		return false;
	want = normal_name(rc->packages[0], name_len);
	d = opendir(sp);
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		cleanup_free char *meta = NULL, *name = NULL, *version = NULL, *norm = NULL, *eps = NULL, *only = NULL,
				  *bin = NULL;
		bool has_app;

		bool dist = len > 10 && strcmp(e->d_name + len - 10, ".dist-info") == 0;
		bool egg = len > 9 && strcmp(e->d_name + len - 9, ".egg-info") == 0;

		if (!dist && !egg)
			continue;
		meta = moat_xasprintf("%s/%s/%s", sp, e->d_name, dist ? "METADATA" : "PKG-INFO");
		if (!read_metadata(meta, &name, &version))
			continue;
		norm = normal_name(name, strlen(name));
		if (strcmp(norm, want) != 0)
			continue;
		eps = moat_xasprintf("%s/%s/entry_points.txt", sp, e->d_name);
		if (rc->cmd) {
			bin = moat_xasprintf("%s/bin/%s", venv, rc->cmd);
		} else if (console_scripts(eps, rc->packages[0], &has_app, &only) > 0) {
			bin = moat_xasprintf("%s/bin/%s", venv, has_app ? rc->packages[0] : only ? only : "");
		}
		/* The names come from files the fetch wrote: a script is a file
		 * of the venv's bin (not empty, not starting with '.'), never a
		 * path out of it. */
		if (!bin || strchr(bin + strlen(venv) + 5, '/') || strchr(".", bin[strlen(venv) + 5]) ||
		    access(bin, X_OK) != 0 || !runner_within_cache(rc, bin))
			return false;
		return runner_found(rc, &venv, &bin, &version);
	}
	return false;
}

bool pipx_install_current(const struct runner_call *rc)
{
	cleanup_free char *pin = NULL;
	const char *version_part;
	size_t name_len;

	if (!pip_spec(rc->packages[0], &name_len, &version_part))
		return false;
	if (!*version_part)
		return true; /* a name alone: any version installed */
	pin = pinned_version(version_part);
	return pin && rc->version && strcmp(pin, rc->version) == 0; /* a range: the index decides */
}

/* ---- the fetch phase ---- */

/* Before the venv (whose pip alone takes seconds to install): the index's
 * page of the package, fetched once.  Only a connection that fails (or a
 * proxy's 502-504) ends the phase here, with a line runner_fetch_failure
 * reads; any answer, even an error, is left to pip, which knows the index's
 * certificates and login. */
static const char pipx_index_probe[] =
    "import socket, sys, urllib.error, urllib.request\n"
    "try:\n"
    "    urllib.request.urlopen(sys.argv[1], timeout=30).close()\n"
    "except urllib.error.HTTPError as e:\n"
    "    if e.code in (502, 503, 504):\n"
    "        sys.exit('moat-index-probe: HTTP %d' % e.code)\n"
    "except urllib.error.URLError as e:\n"
    "    r = e.reason\n"
    "    if isinstance(r, (ConnectionError, TimeoutError, socket.gaierror, socket.timeout)) or (\n"
    "            isinstance(r, OSError) and r.errno in (101, 113)):\n"
    "        sys.exit('moat-index-probe: %s' % (r.strerror or r))\n"
    "except (ConnectionError, TimeoutError) as e:\n"
    "    sys.exit('moat-index-probe: %s' % (e.strerror or e))\n";

/* The python pipx would make its venvs with: PIPX_DEFAULT_PYTHON, else the
 * one pipx runs on (its #! line: /usr/bin/python3 for Debian's pipx), else
 * python3 on PATH outside the project (a `#!/usr/bin/env python3` pipx
 * under direnv's `layout python` would find the project's). */
static char *pipx_python(const struct moat_policy *server, char *const *env, const char *path_env)
{
	const struct moat_env_rule *r = policy_find_env(server, "PIPX_DEFAULT_PYTHON");
	const char *v = r && r->value ? r->value : config_getenv(env, "PIPX_DEFAULT_PYTHON"),
		   *home = config_getenv(env, "HOME");
	cleanup_fclose FILE *f = NULL;
	struct moat_error ignored = {0};
	char line[PATH_MAX + 3];

	if (v && v[0] == '/' && access(v, X_OK) == 0)
		return moat_xstrdup(v);
	if (v && *v && !strchr(v, '/'))
		return runner_lookup(v, path_env, server->cwd, home, &ignored);
	f = file_open_regular(server->exe, INT64_MAX); /* only its first line is read */
	if (f && fgets(line, sizeof(line), f) && strncmp(line, "#!", 2) == 0) {
		char *s = line + 2 + strspn(line + 2, " \t");
		size_t n = strcspn(s, " \t\r\n");

		s[n] = '\0';
		if (s[0] == '/' && !strstr(s, "/env") && access(s, X_OK) == 0)
			return moat_xstrdup(s);
	}
	return runner_lookup("python3", path_env, server->cwd, home, &ignored);
}

/* The index pip is told when nothing names one: its own default. */
#define PIP_DEFAULT_INDEX "https://pypi.org/simple"

/* The indexes: pip's part of @pypi as pip reads it here (PIP_INDEX_URL,
 * PIP_EXTRA_INDEX_URL, pip.conf), the index given to pipx (--index-url) or
 * to the server (--env PIP_INDEX_URL) over its index-url. */
int pipx_registries(struct runner_call *rc, const struct moat_policy *server, char *const *env, struct moat_error *err)
{
	const struct moat_env_rule *idx = policy_find_env(server, "PIP_INDEX_URL");
	struct netset_host h = {.env = env, .cwd = server->cwd};
	struct moat_origin o = {.source = RUNNER_FETCH_ORIGIN};
	struct moat_policy scratch;
	const char *index = NULL, *from = NULL;
	int ret;

	policy_init(&scratch);
	netset_urls_free(&rc->fetch_urls);
	ret = netset_pip_expand(&h, o, &scratch, NULL, &rc->fetch_urls, err);
	policy_free(&scratch);
	if (ret < 0)
		return moat_error_wrap(err, "%s: the index to fetch %s from", rc->name, rc->packages[0]);
	if (rc->registry) {
		index = rc->registry;
		from = "pipx's --index-url";
	} else if (idx && idx->value) {
		index = idx->value;
		from = "--env PIP_INDEX_URL";
	}
	for (size_t i = 0; i < rc->fetch_urls.n && !index; i++)
		if (strcmp(rc->fetch_urls.keys[i], "index-url") == 0)
			index = rc->fetch_urls.urls[i];
	free(rc->fetch_registry);
	free(rc->fetch_registry_from);
	rc->fetch_registry = moat_xstrdup(index ? index : PIP_DEFAULT_INDEX);
	rc->fetch_registry_from = from ? moat_xstrdup(from) : NULL;
	return 0;
}

/* `sh -c` with pipx's own steps (venv.py: create_venv, install_package),
 * without pipx, whose cache is every package's: the probe (unless there are
 * extra indexes, which pip tries as well), the venv, pip install. */
static void set_fetch_argv(struct moat_policy *out, const struct runner_call *rc, const char *python, const char *venv)
{
	const char *base = rc->fetch_registry;
	cleanup_free char *name = NULL, *page = NULL;
	const char *version_part;
	size_t name_len = 0, i;
	char **argv = moat_xcalloc(9, sizeof(char *));
	bool extra = false;

	for (i = 0; i < rc->fetch_urls.n; i++)
		extra |= strcmp(rc->fetch_urls.keys[i], "extra-index-url") == 0;
	pip_spec(rc->packages[0], &name_len, &version_part);
	name = normal_name(rc->packages[0], name_len);
	page = extra || strchr(base, ' ') ? moat_xstrdup("")
					   : moat_xasprintf("%s%s%s/", base, base[strlen(base) - 1] == '/' ? "" : "/", name);
	argv[0] = moat_xstrdup("/bin/sh");
	argv[1] = moat_xstrdup("-c");
	argv[2] = moat_xstrdup("{ [ -z \"$5\" ] || \"$1\" -c \"$4\" \"$5\"; } && \"$1\" -m venv \"$2\" && "
			       "exec \"$2/bin/python\" -m pip install --no-input -- \"$3\"");
	argv[3] = moat_xstrdup("sh");
	argv[4] = moat_xstrdup(python);
	argv[5] = moat_xstrdup(venv);
	argv[6] = moat_xstrdup(rc->packages[0]);
	argv[7] = moat_xstrdup(pipx_index_probe);
	argv[8] = steal_ptr(&page);
	policy_set_argv(out, argv, 9);
	runner_free_strs(argv, 9);
}

int pipx_fetch_policy(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
		      struct moat_policy *out, struct netset_notes *notes, struct moat_error *err)
{
	const char *path_env = config_getenv(env, "PATH"), *home = config_getenv(env, "HOME");
	struct netset_host h = {.env = env, .cwd = server->cwd};
	struct netset_urls urls = {0};
	struct moat_origin o = {.source = RUNNER_FETCH_ORIGIN};
	cleanup_free char *python = pipx_python(server, env, path_env), *venv = NULL;
	int ret = -1;
	size_t i;

	if (!python) {
		moat_error_set(err, MOAT_E_NOTFOUND, 0, "%s: fetching %s needs python3, and none is on PATH", rc->name,
			       rc->packages[0]);
		return moat_error_hint(err, "install python3 (and python3-venv), or set PIPX_DEFAULT_PYTHON");
	}
	venv = moat_xasprintf("%s/venv", rc->cache);
	out->exe = moat_xstrdup("/bin/sh");
	if (runner_fetch_sandbox(rc, server, home, out, err) < 0)
		return -1;
	runner_grant_install(out, python, home && home[0] == '/' ? home : NULL,
			     "package runner: the python that makes the venv");

	/* The network: pip's index here (@pypi's pip part: PIP_INDEX_URL,
	 * pip.conf), and the one given to pipx (--index-url) or to the server
	 * (--env PIP_INDEX_URL).  What pip is told is what pipx_registries
	 * read before the cache was named (the cache's key), not `urls`. */
	if (netset_pip_expand(&h, o, out, notes, &urls, err) < 0) {
		moat_error_wrap(err, "%s: the index to fetch %s from", rc->name, rc->packages[0]);
		goto out;
	}
	if (rc->fetch_registry_from && runner_allow_url(out, rc->fetch_registry, rc->fetch_registry_from, err) < 0)
		goto out;
	runner_fetch_pins(out, server);
	set_fetch_argv(out, rc, python, venv);

	/* pip inside reads neither HOME's pip.conf nor the project: it is
	 * told the index (always, its default too: pip.conf files it could
	 * read inside are not to decide it), and not to wait.  One retry, not
	 * none: with PIP_RETRIES=0 pip reports an index it cannot reach as a
	 * package with no versions, which would be "no such package". */
	for (i = 0; i < rc->fetch_urls.n; i++)
		if (strcmp(rc->fetch_urls.keys[i], "index-url") != 0) {
			cleanup_free char *name = moat_xasprintf("PIP_%s", rc->fetch_urls.keys[i]);
			for (char *c = name; *c; c++)
				*c = *c == '-' ? '_' : (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
			runner_fetch_env(out, name, rc->fetch_urls.urls[i]);
		}
	runner_fetch_env(out, "PIP_INDEX_URL", rc->fetch_registry);
	runner_fetch_env(out, "PIP_RETRIES", "1");
	runner_fetch_env(out, "PIP_TIMEOUT", "30");
	runner_fetch_env(out, "PIP_NO_INPUT", "1");
	runner_fetch_env(out, "PIP_NO_CACHE_DIR", "1");
	runner_fetch_env(out, "PIP_DISABLE_PIP_VERSION_CHECK", "1");
	/* An index on the host's loopback: direct, through the fence (pip's
	 * requests and the probe's urllib read no_proxy), so that one that is
	 * down is a refused connection, not the proxy's 502. */
	runner_fetch_no_proxy(out, "localhost,127.0.0.1,::1");
	ret = runner_fetch_finish(out, server, rc, err);
out:
	netset_urls_free(&urls);
	return ret;
}

/* ---- the server phase ---- */

void pipx_server_policy(struct moat_policy *p, const struct runner_call *rc, char *const *env)
{
	const char *home = config_getenv(env, "HOME");
	/* The venv's python is a link to the interpreter that made it (a pyenv
	 * one under HOME, say), whose installation the server needs.  That link
	 * is the fetch phase's to write, so what is granted is the installation
	 * of the python the fetch was given, found as it was (before the
	 * command stops being pipx), never where the link points. */
	cleanup_free char *python = pipx_python(p, env, config_getenv(env, "PATH")),
			  *bin_dir = moat_xasprintf("%s/bin", rc->tree);

	/* As pipx runs it: the venv's bin first on PATH. */
	runner_server_command(p, rc, env, bin_dir);
	runner_grant_install(p, python, home && home[0] == '/' ? home : NULL,
			     "package runner: the python of the fetched venv");
}

/* ---- a failed fetch ---- */

/* "[Errno N] TEXT" in pip's retry warning: TEXT. */
static bool errno_text(const char *out, char *text, size_t len)
{
	const char *s = strstr(out, "[Errno ");
	size_t n;

	if (!s || !(s = strchr(s, ']')))
		return false;
	s += 1 + strspn(s + 1, " ");
	n = strcspn(s, "')\r\n");
	snprintf(text, len, "%.*s", (int)(n < len ? n : len - 1), s);
	return n > 0;
}

int pipx_fetch_failure(const struct runner_call *rc, const char *output, const char *registry, char *msg,
		       size_t len)
{
	static const char *const unreachable[] = {"NewConnectionError",	  "Failed to establish a new connection",
						  "ConnectTimeoutError",  "Read timed out",
						  "NameResolutionError",  "ProxyError",
						  "Max retries exceeded", "SSLError",
						  "Could not fetch URL"};
	const char *probe = strstr(output, "moat-index-probe: ");
	char why[128];

	if (probe) {
		probe += strlen("moat-index-probe: ");
		snprintf(msg, len, "the index %s could not be reached (%.*s)", registry, (int)strcspn(probe, "\r\n"),
			 probe);
		return 125;
	}
	for (size_t i = 0; i < ARRAY_LEN(unreachable); i++)
		if (strstr(output, unreachable[i])) {
			if (!errno_text(output, why, sizeof(why)))
				snprintf(why, sizeof(why), "%s", unreachable[i]);
			snprintf(msg, len, "the index %s could not be reached (pip: %s)", registry, why);
			return 125;
		}
	if (strstr(output, "No matching distribution found for")) {
		if (strstr(output, "(from versions: none)"))
			snprintf(msg, len, "the index %s has no package %s (pip: no matching distribution)", registry,
				 rc->packages[0]);
		else
			snprintf(msg, len, "the index %s has no version of %s that matches (pip: no matching distribution)",
				 registry, rc->packages[0]);
		return 127;
	}
	if (strstr(output, "ensurepip is not available") || strstr(output, "No module named venv"))
		snprintf(msg, len, "python cannot make a venv with pip here, for %s (install python3-venv)",
			 rc->packages[0]);
	else
		snprintf(msg, len, "pip could not install %s (its output is above)", rc->packages[0]);
	return 125;
}

/* ---- uvx ---- */

/* uvx's options (uv 0.5-0.9, `uvx --help`) that take a value, and those
 * that do not: only to find the package for the hint. */
static const char *const uvx_valued[] = {
    "--from",	       "--with",	  "-w",		    "--with-editable",	"--with-requirements",
    "--python",	       "-p",		  "--index",	    "--default-index",	"--index-url",
    "-i",	       "--extra-index-url", "--find-links", "-f",		"--constraint",
    "-c",	       "--override",	  "--build-constraint", "--index-strategy", "--keyring-provider",
    "--resolution",    "--prerelease",	  "--exclude-newer", "--config-setting", "-C",
    "--link-mode",     "--cache-dir",	  "--directory",    "--project",	"--config-file",
    "--color",	       "--allow-insecure-host", "--env-file", "--upgrade-package", "-P",
    "--reinstall-package", "--refresh-package", "--python-platform"};
static const char *const uvx_switches[] = {
    "-q",	 "--quiet",   "-v",	     "--verbose",     "--offline",	    "--no-cache", "-n",
    "--isolated", "--upgrade", "-U",	     "--reinstall",   "--refresh",	    "--no-progress",
    "--native-tls", "--no-build-isolation", "--no-python-downloads", "--managed-python", "--no-managed-python",
    "--no-config", "--no-build", "--no-binary", "--compile-bytecode", "--no-sources", "--no-env-file"};

static bool in_words(const char *a, size_t len, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && strncmp(a, list[i], len) == 0)
			return true;
	return false;
}

/* A word as the shell reads it: as it is when it needs no quotes, else in
 * single quotes ('\'' for one inside). */
static char *shell_word(const char *w)
{
	char *out, *o;

	if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-=@+/:,") == strlen(w))
		return moat_xstrdup(w);
	out = o = moat_xmalloc(4 * strlen(w) + 3);
	*o++ = '\'';
	for (; *w; w++)
		if (*w == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *w;
		}
	*o++ = '\'';
	*o = '\0';
	return out;
}

void uvx_as_written(const struct moat_policy *p, size_t first, struct runner_call *rc)
{
	cleanup_free char *from = NULL, *spec = NULL, *cmd = NULL, *hint = NULL;
	size_t i;

	for (i = first; i < p->argc && runner_is_option(p, &i); i++) {
		const char *a = p->argv[i];
		size_t klen = strcspn(a, "=");

		if (in_words(a, klen, uvx_valued, ARRAY_LEN(uvx_valued))) {
			const char *val = a[klen] == '=' ? a + klen + 1 : i + 1 < p->argc ? p->argv[++i] : NULL;
			if (val && strncmp(a, "--from", klen) == 0 && klen == 6) {
				free(from);
				from = moat_xstrdup(val);
			}
		} else if (!in_words(a, klen, uvx_switches, ARRAY_LEN(uvx_switches))) {
			i = p->argc; /* an option moat does not know: no package to name */
		}
	}
	if (i < p->argc) {
		/* uvx NAME@VERSION is NAME==VERSION to uv tool install;
		 * NAME@latest is NAME. */
		const char *word = p->argv[i], *at = strchr(word, '@');

		cmd = moat_xstrndup(word, from ? strlen(word) : strcspn(word, "@[=<>~! "));
		if (from)
			spec = moat_xstrdup(from);
		else if (at && strcmp(at + 1, "latest") == 0)
			spec = moat_xstrndup(word, (size_t)(at - word));
		else if (at)
			spec = moat_xasprintf("%.*s==%s", (int)(at - word), word, at + 1);
		else
			spec = moat_xstrdup(word);
	}
	if (spec && *cmd) {
		cleanup_free char *s = shell_word(spec), *c = shell_word(cmd);
		hint = moat_xasprintf("`uv tool install %s`, then `moat run ... -- %s` (uv links it into ~/.local/bin)", s,
				      c);
	} else {
		hint = moat_xstrdup("`uv tool install PACKAGE`, then `moat run ... -- COMMAND` (uv links it into "
				    "~/.local/bin)");
	}
	runner_as_written(rc, false,
			  "moat runs %s as written, in one phase under the policy given: it fetches in a sandbox of its "
			  "own only for npx, npm exec, pnpm dlx, bunx and pipx run, so uv's download and the package's "
			  "build run under this policy; install the package first where the network is open: %s",
			  rc->name, hint);
}
