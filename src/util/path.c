#include "util/path.h"

#include <string.h>

#include <stdlib.h>

#include "util/mem.h"

static char *normalise(const char *abs)
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
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
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
	out = normalise(joined);
	free(joined);
	return out;
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
