#include "util/helperthread.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"

/* The name each helper thread carries (its /proc/self/task/TID/comm). */
#define HELPER_NAME "moat-helper"

int helper_thread_start(void *(*fn)(void *), void *arg, size_t stack)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, saved;
	int rc;

	/* Signals stay the calling thread's (moat's signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	rc = pthread_attr_init(&attr);
	if (rc == 0) {
		if (stack)
			(void)pthread_attr_setstacksize(&attr, stack);
		(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, fn, arg);
		pthread_attr_destroy(&attr);
		/* Named before this returns: a later count sees the name. */
		if (rc == 0)
			(void)pthread_setname_np(t, HELPER_NAME);
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return rc;
}

/* Whether task `tid` is one of moat's helpers; a task gone meanwhile is
 * counted as one (it is no thread any more). */
static int is_helper(int task_dir, const char *tid)
{
	char path[NAME_MAX + 8], comm[32] = "";
	cleanup_close int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/comm", tid);
	fd = openat(task_dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	n = read(fd, comm, sizeof(comm) - 1);
	if (n <= 0)
		return 1;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, HELPER_NAME) == 0;
}

long helper_threads_foreign(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long self = (long)syscall(SYS_gettid), n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strtol(e->d_name, NULL, 10) == self)
			continue;
		if (!is_helper(dirfd(d), e->d_name))
			n++;
	}
	closedir(d);
	return n;
}
