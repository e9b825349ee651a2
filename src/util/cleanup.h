/* Scope cleanup, in the manner of crun and systemd: a variable declared with
 * one of these is released when it goes out of scope, so an early `return`
 * on an error path cannot leak.  Ownership leaves a scope only through
 * steal_ptr() / steal_fd(), which makes the hand-over visible. */
#ifndef MOAT_UTIL_CLEANUP_H
#define MOAT_UTIL_CLEANUP_H

#include <errno.h>
#include <signal.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void moat_freep(void *p)
{
	free(*(void **)p);
}

static inline void moat_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void moat_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* A child that is still ours at scope exit is killed and reaped, so an
 * error path never leaves a half-set-up sandbox running. */
static inline void moat_killp(pid_t *pid)
{
	if (*pid > 0) {
		int saved = errno;
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		errno = saved;
	}
}

#define cleanup_free __attribute__((cleanup(moat_freep)))
#define cleanup_close __attribute__((cleanup(moat_closep)))
#define cleanup_fclose __attribute__((cleanup(moat_fclosep)))

static inline void moat_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define cleanup_closedir __attribute__((cleanup(moat_closedirp)))
#define cleanup_pid __attribute__((cleanup(moat_killp)))

static inline void *moat_steal_ptr(void *pp)
{
	void **p = pp;
	void *v = *p;
	*p = NULL;
	return v;
}

static inline int moat_steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

#define steal_ptr(pp) moat_steal_ptr(pp)
#define steal_fd(fdp) moat_steal_fd(fdp)

#define MOAT_UNUSED __attribute__((unused))
#define MOAT_WUR __attribute__((warn_unused_result))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
