/* moat's own threads: the name lookups of net allow (launch/fence.c) and
 * the connects it makes for the command (kernel/netfence.c).  They block
 * every signal, so moat's signalfd gets all of them, and they may outlive
 * the run that started them (a getaddrinfo the command no longer waits for
 * goes on to its resolver's timeout).  In an embedder that is a thread left
 * in its process after moat_run_main returned, and moat_run_main, which
 * refuses to run beside another thread (api/run.c), refused every later
 * call (tests/blackbox/library.sh).  Started here, each is named so that
 * the count of the caller's threads leaves them out: they take no signal,
 * and the child moat clones allocates nothing (launch/child.c), so a lock
 * one of them holds cannot stop it. */
#ifndef MOAT_UTIL_HELPERTHREAD_H
#define MOAT_UTIL_HELPERTHREAD_H

#include <stddef.h>

/* Start fn(arg) in a detached thread with every signal blocked and a stack
 * of `stack` bytes (0: the default).  0, or pthread_create's error. */
int helper_thread_start(void *(*fn)(void *), void *arg, size_t stack);

/* The threads of this process other than the calling one and moat's
 * helpers; -1 when /proc/self/task cannot be read. */
long helper_threads_foreign(void);

#endif
