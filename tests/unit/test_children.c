/* Unit tests: launch/children.c reads this process's children from
 * /proc/self/task/TID/children, every thread's.  moat keeps the children it
 * had before a launch out of the command's tree by that set (an embedder's
 * own, a shell's background job that exec'd moat), so a child missing from
 * it would be killed, and one too many never reaped.  The file is read in
 * 4 KiB pieces: 900 children (~6 digits and a space each) take two reads.
 * (The kernel's seq_file hands out whole "PID " records, so no number is
 * cut at a piece's edge here; the reader joins one anyway.) */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/children.h"
#include "tap.h"

#define MANY 900

static pid_t kids[MANY];
static size_t n_kids;

static pid_t spawn_idle(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void reap_all(void)
{
	for (size_t i = 0; i < n_kids; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	n_kids = 0;
}

/* Every child in the set, and nothing else. */
static bool set_is_kids(const struct child_set *s, size_t *missing, size_t *extra)
{
	*missing = *extra = 0;
	for (size_t i = 0; i < n_kids; i++)
		*missing += !child_set_has(s, kids[i]);
	for (size_t i = 0; i < s->n; i++) {
		bool ours = false;
		for (size_t j = 0; j < n_kids && !ours; j++)
			ours = s->pids[i] == kids[j];
		*extra += !ours;
	}
	return *missing == 0 && *extra == 0 && s->n == n_kids;
}

static void test_none(void)
{
	cleanup_child_set struct child_set s = {0};

	child_set_read(&s);
	ok(s.n == 0, "no children: the set is empty (%zu)", s.n);
}

static void test_many(void)
{
	cleanup_child_set struct child_set s = {0};
	size_t missing, extra;

	for (n_kids = 0; n_kids < MANY; n_kids++) {
		kids[n_kids] = spawn_idle();
		if (kids[n_kids] < 0)
			break;
	}
	ok(n_kids == MANY, "%d children forked (%s)", MANY, n_kids == MANY ? "ok" : strerror(errno));
	child_set_read(&s);
	ok(set_is_kids(&s, &missing, &extra), "%zu children: all in the set, nothing else (%zu missing, %zu extra)",
	   n_kids, missing, extra);
	/* A second read replaces the set (moat reads it again and again). */
	kill(kids[n_kids - 1], SIGKILL);
	waitpid(kids[n_kids - 1], NULL, 0);
	n_kids--;
	child_set_read(&s);
	ok(set_is_kids(&s, &missing, &extra), "read again after one is reaped: %zu (%zu missing, %zu extra)", s.n,
	   missing, extra);
	reap_all();
}

struct on_thread {
	pid_t pid;
	int hold[2]; /* the thread waits on hold[0] until the set is read */
};

static void *fork_on_thread(void *arg)
{
	struct on_thread *o = arg;
	char c;

	__atomic_store_n(&o->pid, spawn_idle(), __ATOMIC_SEQ_CST);
	while (read(o->hold[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* A child belongs to the thread that forked it (its own children file):
 * the set has every live thread's. */
static void test_thread(void)
{
	cleanup_child_set struct child_set s = {0};
	struct on_thread o = {.pid = 0};
	pthread_t t;
	size_t missing, extra;

	if (pipe(o.hold) != 0 || pthread_create(&t, NULL, fork_on_thread, &o) != 0) {
		ok(0, "pipe, pthread_create: %s", strerror(errno));
		return;
	}
	kids[n_kids++] = spawn_idle();
	for (int i = 0; i < 2000 && !__atomic_load_n(&o.pid, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	kids[n_kids++] = o.pid;
	child_set_read(&s);
	ok(o.pid > 0 && set_is_kids(&s, &missing, &extra),
	   "a child of another (live) thread is in the set (%zu missing, %zu extra)", missing, extra);
	if (write(o.hold[1], "x", 1) != 1)
		ok(0, "releasing the thread");
	pthread_join(t, NULL);
	close(o.hold[0]);
	close(o.hold[1]);
	reap_all();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_none();
	test_many();
	test_thread();
	return tap_done();
}
