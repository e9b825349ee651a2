/* The user's global git configuration, sanitized (sources/gitconfig.h).
 * Read with git's own syntax (util/gitcfg.h), refusing what git refuses,
 * so that what moat keeps is exactly what git would have read.  What is kept is a list:
 * anything not on it, a section moat does not know included, is dropped. */
#include "sources/gitconfig.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sources/config_common.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/gitcfg.h"
#include "util/mem.h"

/* A file larger than this is not a configuration anyone wrote by hand. */
#define GITCONFIG_MAX (1 << 20)

/* The sections kept, and in some only these keys (NULL: every key).  Left
 * out, with what they may hold: credential.* (helpers, usernames), http.*
 * and https.* (extraHeader with a token, a proxy URL with a password),
 * sendemail.* (smtpPass), github.*, gitlab.*, hub.* (tokens), include.* and
 * includeIf.* (files moat has not read), remote.* and every other section. */
struct kept_section {
	const char *name;
	const char *const *keys;
};

static const char *const identity_keys[] = {"name", "email", NULL};
static const char *const user_keys[] = {"name", "email", "useconfigonly", NULL};
static const char *const url_keys[] = {"insteadof", "pushinsteadof", NULL};

static const struct kept_section kept_sections[] = {
    {"advice", NULL},
    {"alias", NULL},
    {"am", NULL},
    {"apply", NULL},
    {"author", identity_keys},
    {"blame", NULL},
    {"branch", NULL},
    {"checkout", NULL},
    {"clean", NULL},
    {"clone", NULL},
    {"color", NULL},
    {"column", NULL},
    {"commit", NULL},
    {"committer", identity_keys},
    {"core", NULL},
    {"diff", NULL},
    {"difftool", NULL},
    {"fetch", NULL},
    {"filter", NULL},
    {"format", NULL},
    {"gc", NULL},
    {"gpg", NULL},
    {"grep", NULL},
    {"help", NULL},
    {"index", NULL},
    {"init", NULL},
    {"interactive", NULL},
    {"log", NULL},
    {"merge", NULL},
    {"mergetool", NULL},
    {"pack", NULL},
    {"pager", NULL},
    {"protocol", NULL},
    {"pull", NULL},
    {"push", NULL},
    {"rebase", NULL},
    {"rerere", NULL},
    {"safe", NULL},
    {"status", NULL},
    {"submodule", NULL},
    {"tag", NULL},
    {"trailer", NULL},
    {"transfer", NULL},
    {"url", url_keys},
    {"user", user_keys},
};

/* core.* but these: programs that ask for or carry credentials. */
static const char *const core_dropped[] = {"askpass", "sshcommand", NULL};

static bool in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* Does `s` hold a URL with credentials: userinfo in an http(s) or ftp(s)
 * URL (`https://TOKEN@host`, `https://user:pass@host`), or a password in any
 * other (`ssh://git:pw@host`)?  `ssh://git@host` and `git@host:path` name a
 * user only. */
static bool carries_credentials(const char *s)
{
	const char *p = s;

	while ((p = strstr(p, "://")) != NULL) {
		const char *scheme = p, *auth = p + 3, *end = auth + strcspn(auth, "/?#"), *at = NULL;
		size_t sl;

		while (scheme > s && (isalnum((unsigned char)scheme[-1]) || strchr("+.-", scheme[-1])))
			scheme--;
		sl = (size_t)(p - scheme);
		for (const char *c = auth; c < end; c++)
			if (*c == '@')
				at = c;
		if (at) {
			bool web = (sl == 4 && strncasecmp(scheme, "http", 4) == 0) ||
				   (sl == 5 && strncasecmp(scheme, "https", 5) == 0) ||
				   (sl == 3 && strncasecmp(scheme, "ftp", 3) == 0) ||
				   (sl == 4 && strncasecmp(scheme, "ftps", 4) == 0);
			if (web || memchr(auth, ':', (size_t)(at - auth)))
				return true;
		}
		p = auth;
	}
	return false;
}

/* `s` with the userinfo of each URL masked, for the dry run's key names. */
static char *masked(const char *s)
{
	/* Each userinfo of at least one byte becomes "***": at most 3 bytes
	 * more per "://". */
	size_t n = 0, o = 0;
	const char *p = s;
	char *out;

	while ((p = strstr(p, "://")) != NULL) {
		n++;
		p += 3;
	}
	out = moat_xmalloc(strlen(s) + 3 * n + 1);
	for (p = s; *p;) {
		const char *sep = strstr(p, "://"), *auth, *end, *at = NULL;

		if (!sep) {
			strcpy(out + o, p);
			return out;
		}
		auth = sep + 3;
		end = auth + strcspn(auth, "/?#");
		for (const char *c = auth; c < end; c++)
			if (*c == '@')
				at = c;
		memcpy(out + o, p, (size_t)(auth - p));
		o += (size_t)(auth - p);
		if (at) {
			memcpy(out + o, "***", 3);
			o += 3;
			p = at;
		} else {
			p = auth;
		}
	}
	out[o] = '\0';
	return out;
}

static void strv_add(char ***v, size_t *n, size_t *cap, char *s)
{
	*v = moat_xgrow(*v, cap, *n, sizeof(**v));
	(*v)[(*n)++] = s;
}

static void out_add(struct moat_git_config *g, const char *s, size_t len)
{
	if (g->len + len + 1 > g->cap) {
		g->cap = (g->len + len + 1) * 2;
		g->text = moat_xrealloc(g->text, g->cap);
	}
	memcpy(g->text + g->len, s, len);
	g->len += len;
	g->text[g->len] = '\0';
}

static void out_addf(struct moat_git_config *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_addf(struct moat_git_config *g, const char *fmt, ...)
{
	cleanup_free char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	s = moat_xvasprintf(fmt, ap);
	va_end(ap);
	out_add(g, s, strlen(s));
}

/* `s` between double quotes, escaped as git's parser reads it back: in a
 * value \n, \t and \b too; in a subsection a backslash escapes any byte,
 * so only '\\' and '"' are escaped (a subsection holds no newline). */
static void out_quoted(struct moat_git_config *g, const char *s, bool sub)
{
	out_add(g, "\"", 1);
	for (; *s; s++) {
		if (sub && *s != '\\' && *s != '"') {
			out_add(g, s, 1);
			continue;
		}
		switch (*s) {
		case '\\':
			out_add(g, "\\\\", 2);
			break;
		case '"':
			out_add(g, "\\\"", 2);
			break;
		case '\n':
			out_add(g, "\\n", 2);
			break;
		case '\t':
			out_add(g, "\\t", 2);
			break;
		case '\b':
			out_add(g, "\\b", 2);
			break;
		default:
			out_add(g, s, 1);
		}
	}
	out_add(g, "\"", 1);
}

static bool keep_entry(const char *section, const char *sub, const char *key, const char *value)
{
	const struct kept_section *k = NULL;

	for (size_t i = 0; i < ARRAY_LEN(kept_sections); i++)
		if (strcmp(kept_sections[i].name, section) == 0)
			k = &kept_sections[i];
	if (!k || (k->keys && !in_list(key, k->keys)))
		return false;
	if (strcmp(section, "core") == 0 && in_list(key, core_dropped))
		return false;
	/* user.name has no subsection; url.<base>.insteadOf must have one. */
	if ((k->keys && strcmp(section, "url") != 0 && sub) || (strcmp(section, "url") == 0 && !sub))
		return false;
	return !(sub && carries_credentials(sub)) && !(value && carries_credentials(value));
}

/* One entry read: kept (written) or dropped (listed). */
static void entry(struct moat_git_config *g, const char *section, const char *sub, const char *key, const char *value)
{
	cleanup_free char *shown = sub && carries_credentials(sub) ? masked(sub) : NULL;
	char *name = moat_xasprintf("%s%s%s.%s", section, sub ? "." : "", shown ? shown : sub ? sub : "", key);

	if (!keep_entry(section, sub, key, value)) {
		strv_add(&g->dropped, &g->n_dropped, &g->cap_dropped, name);
		return;
	}
	strv_add(&g->kept, &g->n_kept, &g->cap_kept, name);
	{
		struct moat_git_config h = {0};
		out_addf(&h, "[%s", section);
		if (sub) {
			out_add(&h, " ", 1);
			out_quoted(&h, sub, true);
		}
		out_add(&h, "]\n", 2);
		if (!g->header || strcmp(g->header, h.text) != 0) {
			out_add(g, h.text, h.len);
			free(g->header);
			g->header = steal_ptr(&h.text);
		}
		free(h.text);
	}
	out_addf(g, "\t%s", key);
	if (value) {
		out_add(g, " = ", 3);
		out_quoted(g, value, false);
	}
	out_add(g, "\n", 1);
}

static void take_entry(void *ctx, const char *section, const char *sub, const char *key, const char *value)
{
	entry(ctx, section, sub, key, value);
}

int gitconfig_filter(const char *text, size_t len, const char *file, struct moat_git_config *g, char *bad,
		     size_t bad_len)
{
	struct moat_git_config tmp = {0};

	/* Into a scratch copy: a file git would refuse gives nothing. */
	tmp.header = g->header ? moat_xstrdup(g->header) : NULL;
	if (gitcfg_parse(text, len, file, take_entry, &tmp, bad, bad_len) < 0) {
		git_config_clear(&tmp);
		return -1;
	}
	/* Appended whole. */
	if (tmp.len)
		out_add(g, tmp.text, tmp.len);
	for (size_t i = 0; i < tmp.n_kept; i++)
		strv_add(&g->kept, &g->n_kept, &g->cap_kept, tmp.kept[i]);
	for (size_t i = 0; i < tmp.n_dropped; i++)
		strv_add(&g->dropped, &g->n_dropped, &g->cap_dropped, tmp.dropped[i]);
	free(g->header);
	g->header = tmp.header;
	free(tmp.text);
	free(tmp.kept);
	free(tmp.dropped);
	return 0;
}

/* The file's text (at most GITCONFIG_MAX bytes), or NULL with errno. */
static char *read_file(const char *path, size_t *len)
{
	cleanup_fclose FILE *f = file_open_regular(path, GITCONFIG_MAX);
	struct stat st;
	char *buf;

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) != 0)
		return NULL;
	if (!S_ISREG(st.st_mode) || st.st_size > GITCONFIG_MAX) {
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		return NULL;
	}
	buf = moat_xmalloc((size_t)st.st_size + 1);
	*len = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	buf[*len] = '\0';
	return buf;
}

void gitconfig_load(const char *home, char *const *env, struct moat_git_config **out, struct netset_notes *notes)
{
	const char *global = config_getenv(env, "GIT_CONFIG_GLOBAL");
	const char *xdg = config_getenv(env, "XDG_CONFIG_HOME");
	char *paths[2] = {NULL, NULL};
	struct moat_git_config *g = NULL;

	*out = NULL;
	if (global && *global) {
		paths[0] = moat_xstrdup(global);
	} else {
		if (xdg && *xdg == '/')
			paths[0] = moat_xasprintf("%s/git/config", xdg);
		else if (home)
			paths[0] = moat_xasprintf("%s/.config/git/config", home);
		if (home)
			paths[1] = moat_xasprintf("%s/.gitconfig", home);
	}
	for (size_t i = 0; i < ARRAY_LEN(paths); i++) {
		cleanup_free char *text = NULL;
		char bad[PATH_MAX + 128];
		size_t len = 0;

		if (!paths[i])
			continue;
		text = read_file(paths[i], &len);
		if (!text) {
			if (errno != ENOENT && errno != ENOTDIR) {
				cleanup_free char *line = moat_xasprintf(
				    "note: %s: %s; git inside does not get it", paths[i],
				    errno == EINVAL ? "not a regular file" : strerror(errno));
				netset_notes_add(notes, line);
			}
			continue;
		}
		if (!g)
			g = moat_xcalloc(1, sizeof(*g));
		if (gitconfig_filter(text, len, paths[i], g, bad, sizeof(bad)) < 0) {
			cleanup_free char *line =
			    moat_xasprintf("note: %s, as git would refuse it: git inside does not "
					   "get this file",
					   bad);
			netset_notes_add(notes, line);
			continue;
		}
		strv_add(&g->files, &g->n_files, &g->cap_files, moat_xstrdup(paths[i]));
	}
	free(paths[0]);
	free(paths[1]);
	if (g && !g->n_files) {
		git_config_free(g);
		g = NULL;
	}
	*out = g;
}
