#include "launch/children.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"

/* Read with open/read and getdents64 into buffers on the stack, not stdio
 * and opendir: the set is read before the launch and twice after it, on
 * the way to and from the command, and fopen, fscanf and opendir's 32 KiB
 * buffer were ~0.04 ms of every start without a pid namespace. */

static void child_set_add(struct child_set *s, pid_t pid)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->pids = moat_xrealloc(s->pids, s->cap * sizeof(*s->pids));
	}
	s->pids[s->n++] = pid;
}

/* One thread's children: a child belongs to the thread that forked it,
 * and an orphan re-parented to a subreaper to any live thread of it.  The
 * file is pids separated by spaces; a number may straddle two reads.
 * false (errno set) when the file could not be read whole (out of
 * descriptors or memory, EIO): its children unknown.  A thread gone
 * since the listing has none. */
static bool read_task(struct child_set *s, int task_dir, const char *tid)
{
	char path[300], buf[4096];
	cleanup_close int fd = -1;
	long pid = 0;
	bool in_number = false;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/children", tid);
	fd = openat(task_dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				pid = pid * 10 + (buf[i] - '0');
				in_number = pid <= INT32_MAX;
				if (!in_number)
					pid = INT32_MAX + 1L; /* not a pid: dropped */
				continue;
			}
			if (in_number)
				child_set_add(s, (pid_t)pid);
			pid = 0;
			in_number = false;
		}
	if (n < 0 && errno != ESRCH)
		return false;
	if (in_number)
		child_set_add(s, (pid_t)pid);
	return true;
}

bool child_set_read(struct child_set *s)
{
	cleanup_close int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096] __attribute__((aligned(8)));
	long n;
	int failed = 0;

	s->n = 0;
	if (dir < 0)
		return false;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(void *)(buf + off);

			if (e->d_name[0] != '.' && !read_task(s, dir, e->d_name) && !failed)
				failed = errno;
			off += e->d_reclen;
		}
	/* A listing cut short (ENOMEM): the threads past it unknown. */
	if (n < 0 && !failed)
		failed = errno;
	if (failed) {
		errno = failed;
		return false;
	}
	return true;
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
