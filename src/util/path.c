#include "util/path.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdlib.h>

#include "util/cleanup.h"
#include "util/mem.h"

/* `abs` without empty and "." components; a ".." folded by text when
 * `fold_dotdot` (the lexical rules), kept otherwise (path_tidy).  With
 * `link_before_dotdot`, the first prefix folded so that is a symbolic link
 * right before a ".." goes there (a new string): the kernel steps out of
 * the link's target, the folding out of the link's own directory. */
static char *normalise(const char *abs, bool fold_dotdot, char **link_before_dotdot)
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
			struct stat st;

			out[o] = '\0';
			if (link_before_dotdot && !*link_before_dotdot && o > 1 && lstat(out, &st) == 0 &&
			    S_ISLNK(st.st_mode))
				*link_before_dotdot = moat_xstrdup(out);
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
	return normalise(path, false, NULL);
}

char *path_home_for_rules(const char *home)
{
	char real[PATH_MAX];

	if (!home || home[0] != '/')
		return NULL;
	if (!has_dotdot(home))
		return normalise(home, true, NULL);
	if (realpath(home, real))
		return moat_xstrdup(real);
	return path_tidy(home);
}

/* `path` made absolute, not normalised: "~" and "~/" under `home`, a
 * relative path under `base`; NULL when that cannot be done. */
static char *absolute(const char *path, const char *base, const char *home)
{
	if (path[0] == '~' && (path[1] == '\0' || path[1] == '/'))
		return home && home[0] == '/' ? moat_xasprintf("%s/%s", home, path + 1) : NULL;
	if (path[0] == '/')
		return moat_xstrdup(path);
	return base && base[0] == '/' ? moat_xasprintf("%s/%s", base, path) : NULL;
}

char *path_resolve_lexical(const char *path, const char *base, const char *home)
{
	cleanup_free char *joined = absolute(path, base, home);

	return joined ? normalise(joined, true, NULL) : NULL;
}

char *path_link_before_dotdot(const char *path, const char *base, const char *home)
{
	cleanup_free char *joined = absolute(path, base, home), *folded = NULL;
	char *link = NULL;
	struct stat kernel, text;

	if (!joined || !has_dotdot(joined))
		return NULL;
	folded = normalise(joined, true, &link);
	/* Both ways to one object: nothing to tell the user. */
	if (link && stat(joined, &kernel) == 0 && stat(folded, &text) == 0 && kernel.st_dev == text.st_dev &&
	    kernel.st_ino == text.st_ino) {
		free(link);
		link = NULL;
	}
	return link;
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

bool path_of_fd(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n <= 0 || (size_t)n >= len - 1 || buf[0] != '/')
		return false;
	buf[n] = '\0';
	return true;
}
