/* The init's loop, one for every init moat brings: moat's own pid 1 of the
 * native backend's pid namespace (child.c) and moat __init inside a tool's
 * sandbox (init.c).  It forwards the signals moat forwards to the command
 * (signals_deliver_in_tree: SIGTSTP and SIGCONT to the whole namespace),
 * reaps every process re-parented to it, and returns when the command
 * ended. */
#ifndef MOAT_LAUNCH_REAPER_H
#define MOAT_LAUNCH_REAPER_H

#include <signal.h>
#include <sys/types.h>

/* The forwarded signals and SIGCHLD, blocked (the previous mask into
 * *saved when not NULL), read from the returned signalfd (close-on-exec);
 * -1 with errno.  Blocked before the fork of the command, so that no
 * signal and no exit is lost before the loop reads it. */
int reaper_signalfd(sigset_t *saved);

enum reaper_end {
	REAPER_EXITED = 0,   /* the command ended: *status is its wait status */
	REAPER_MOAT_GONE = 1, /* the lifeline hung up */
	REAPER_FAILED = -1,  /* the loop cannot read its descriptors */
};

/* `lifeline`: -1, or moat's pipe: a byte on it is a signal moat forwards,
 * end of file is moat gone. */
enum reaper_end reaper_run(pid_t cmd, int sfd, int lifeline, int *status);

#endif
