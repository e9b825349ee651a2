/* The children of this process, as the kernel lists them
 * (/proc/self/task/TID/children, every thread's), zombies included.  moat
 * records the ones that exist before it starts the command -- an
 * embedder's own children, a shell's background job that then exec'd moat
 * -- and never kills, waits for or reaps those: they are not moat's. */
#ifndef MOAT_LAUNCH_CHILDREN_H
#define MOAT_LAUNCH_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct child_set {
	pid_t *pids;
	size_t n, cap;
};

/* Replaces *s with the children there are now.  false (errno set) when
 * /proc/self/task cannot be read, or not whole (no /proc, out of
 * descriptors or memory, a listing or a thread's file cut short): *s then
 * holds the children that were read, which are children (a reap can end
 * them), but not all of them -- a set of the caller's own children read
 * so would take the ones it lacks for none. */
bool child_set_read(struct child_set *s);
bool child_set_has(const struct child_set *s, pid_t pid);
void child_set_free(struct child_set *s);
#define cleanup_child_set __attribute__((cleanup(child_set_free)))

#endif
