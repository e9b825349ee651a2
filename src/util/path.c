#include "util/path.h"

#include <limits.h>
#include <string.h>

#include <stdlib.h>

#include "util/mem.h"

/* `abs` without empty and "." components; a ".." folded by text when
 * `fold_dotdot` (the lexical rules), kept otherwise (path_tidy). */
static char *normalise(const char *abs, bool fold_dotdot)
{
	size_t len = strlen(abs);
	char *out = moat_xmalloc(len + 2);
	size_t o = 0;
	const char *p = abs;

	out[o++] = '/';
	while (*p) {
		const char *seg;
		size_t n;

		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - seg);
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (fold_dotdot && n == 2 && seg[0] == '.' && seg[1] == '.') {
			/* "/.." is "/": drop back to the previous slash. */
			if (o > 1) {
				o--;
				while (o > 1 && out[o - 1] != '/')
					o--;
				if (o > 1)
					o--;
			}
			continue;
		}
		if (o > 1)
			out[o++] = '/';
		memcpy(out + o, seg, n);
		o += n;
	}
	out[o] = '\0';
	return out;
}

bool path_is_normalised(const char *path)
{
	const char *p = path;

	if (path[0] != '/')
		return false;
	if (path[1] == '\0')
		return true;
	while (*p == '/') {
		const char *seg = ++p;

		while (*p && *p != '/')
			p++;
		if (p == seg || (p - seg == 1 && seg[0] == '.') || (p - seg == 2 && seg[0] == '.' && seg[1] == '.'))
			return false;
	}
	return true;
}

/* Has `path` a ".." component? */
static bool has_dotdot(const char *path)
{
	for (const char *p = strstr(path, ".."); p; p = strstr(p + 1, ".."))
		if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return true;
	return false;
}

char *path_tidy(const char *path)
{
	return normalise(path, false);
}

char *path_home_for_rules(const char *home)
{
	char real[PATH_MAX];

	if (!home || home[0] != '/')
		return NULL;
	if (!has_dotdot(home))
		return normalise(home, true);
	if (realpath(home, real))
		return moat_xstrdup(real);
	return path_tidy(home);
}

char *path_resolve_lexical(const char *path, const char *base, const char *home)
{
	char *joined, *out;

	if (path[0] == '~' && (path[1] == '\0' || path[1] == '/')) {
		if (!home || home[0] != '/')
			return NULL;
		joined = moat_xasprintf("%s/%s", home, path + 1);
	} else if (path[0] == '/') {
		joined = moat_xstrdup(path);
	} else {
		if (!base || base[0] != '/')
			return NULL;
		joined = moat_xasprintf("%s/%s", base, path);
	}
	out = normalise(joined, true);
	free(joined);
	return out;
}

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* The length of what closes at `close` from s (all of s if it never does:
 * an unclosed ${HOME is no literal name either). */
static size_t span_to(const char *s, char close)
{
	const char *e = strchr(s, close);

	return e ? (size_t)(e - s) + 1 : strlen(s);
}

/* A variable reference opening the component at s, or 0. */
static size_t component_ref(const char *s)
{
	size_t n = 1;

	if (s[0] == '$' && (s[1] == '{' || s[1] == '('))
		return span_to(s, s[1] == '{' ? '}' : ')');
	if (s[0] == '$' && name_start(s[1])) {
		while (name_char(s[n]))
			n++;
		return n;
	}
	if (s[0] == '%' && name_start(s[1])) {
		while (name_char(s[n]))
			n++;
		return s[n] == '%' ? n + 1 : 0;
	}
	return 0;
}

const char *path_unexpanded(const char *path, size_t *len)
{
	const char *c;

	if (path[0] == '~' && path[1] != '\0' && path[1] != '/') {
		*len = strcspn(path, "/");
		return path;
	}
	for (c = path; *c; c++) {
		if (c[0] == '$' && c[1] == '{') {
			*len = span_to(c, '}');
			return c;
		}
		if ((c == path || c[-1] == '/') && (*len = component_ref(c)) > 0)
			return c;
	}
	return NULL;
}

bool path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);

	if (strcmp(outer, "/") == 0)
		return inner[0] == '/';
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

char *path_rebase(const char *path, const char *from, const char *to)
{
	/* "" or "/...": what lies below `from` */
	const char *rest = strcmp(from, "/") != 0 ? path + strlen(from) : strcmp(path, "/") == 0 ? "" : path;

	if (!*rest)
		return moat_xstrdup(to);
	return path_join(to, rest + 1);
}

char *path_join(const char *dir, const char *name)
{
	size_t dlen = strcmp(dir, "/") == 0 ? 0 : strlen(dir), nlen = strlen(name);
	char *out = moat_xmalloc(dlen + nlen + 2);

	memcpy(out, dir, dlen);
	out[dlen] = '/';
	memcpy(out + dlen + 1, name, nlen + 1);
	return out;
}
