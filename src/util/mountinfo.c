/* Mount points from /proc/self/mountinfo: see mountinfo.h. */
#include "util/mountinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/mem.h"

void mountinfo_unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

struct mountinfo_entry *mountinfo_entries(size_t *n_out)
{
	cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
	cleanup_free char *line = NULL;
	size_t len = 0, n = 0, cap = 0;
	struct mountinfo_entry *v = NULL;

	if (!f)
		return NULL;
	/* id parent major:minor root mountpoint options ... */
	while (getline(&line, &len, f) > 0) {
		char *save = NULL, *field[5];
		unsigned int major, minor;
		int k;

		for (k = 0; k < 5; k++)
			if (!(field[k] = strtok_r(k ? NULL : line, " ", &save)))
				break;
		/* A root need not be a path: a bound namespace file's is
		 * "net:[4026531840]" (it then nests in no other). */
		if (k < 5 || sscanf(field[2], "%u:%u", &major, &minor) != 2 || field[4][0] != '/')
			continue;
		mountinfo_unescape(field[3]);
		mountinfo_unescape(field[4]);
		v = moat_xgrow(v, &cap, n, sizeof(*v));
		v[n++] = (struct mountinfo_entry){major, minor, moat_xstrdup(field[3]), moat_xstrdup(field[4])};
	}
	if (ferror(f)) {
		int e = errno;
		mountinfo_entries_free(v, n);
		errno = e;
		return NULL;
	}
	*n_out = n;
	return v ? v : moat_xcalloc(1, sizeof(*v));
}

void mountinfo_entries_free(struct mountinfo_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].root);
		free(e[i].point);
	}
	free(e);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **mountinfo_points(size_t *n_out)
{
	size_t n = 0, i, kept = 0;
	struct mountinfo_entry *e = mountinfo_entries(&n);
	char **v;

	if (!e)
		return NULL;
	v = moat_xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++)
		v[i] = steal_ptr(&e[i].point);
	mountinfo_entries_free(e, n);
	qsort(v, n, sizeof(char *), by_name);
	for (i = 0; i < n; i++) {
		if (kept && strcmp(v[kept - 1], v[i]) == 0)
			free(v[i]);
		else
			v[kept++] = v[i];
	}
	v[kept] = NULL;
	*n_out = kept;
	return v;
}
