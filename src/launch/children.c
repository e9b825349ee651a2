#include "launch/children.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/cleanup.h"
#include "util/mem.h"

static void child_set_add(struct child_set *s, pid_t pid)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->pids = moat_xrealloc(s->pids, s->cap * sizeof(*s->pids));
	}
	s->pids[s->n++] = pid;
}

/* One thread's children: a child belongs to the thread that forked it,
 * and an orphan re-parented to a subreaper to any live thread of it. */
static void read_task(struct child_set *s, const char *tid)
{
	char path[300];
	cleanup_fclose FILE *f = NULL;
	int pid;

	snprintf(path, sizeof(path), "/proc/self/task/%s/children", tid);
	f = fopen(path, "re");
	while (f && fscanf(f, "%d", &pid) == 1)
		child_set_add(s, (pid_t)pid);
}

void child_set_read(struct child_set *s)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	s->n = 0;
	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			read_task(s, e->d_name);
	closedir(d);
}

bool child_set_has(const struct child_set *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->pids[i] == pid)
			return true;
	return false;
}

void child_set_free(struct child_set *s)
{
	free(s->pids);
	s->pids = NULL;
	s->n = s->cap = 0;
}
