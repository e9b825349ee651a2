/* `moat __init [--bound-file PATH] [--symlink TEXT PATH]... [--landlock FD:ABI] [--ll r|w|l:PATH]... [--keep-fds N,...] [--env-fd N]
 * [--unsetenv NAME]... [--seccomp-fd N] [--nofile-soft N] [--kill-rest PIDNS] -- COMMAND [ARGS...]`:
 * moat's own helper inside an external sandbox (the bwrap, oci, gvisor and
 * nsjail backends bind moat's binary read-only at /.moat/init; firejail runs
 * it through an inherited fd).
 *
 * --bound-file PATH: a file of moat's (NUL-terminated "DEV:INO:DEST"
 * records): each destination the tool bound, looked up without following a
 * link, must be the object moat planned; otherwise nothing runs (125).  The
 * tool resolved each source again by its name (launch/initview.h).
 *
 * --symlink TEXT PATH: make the symlink PATH -> TEXT (and the directories
 * above it) on the sandbox's own tmpfs, where the tool has no way to.
 *
 * --landlock: restrict itself, and so the command, with the Landlock
 * ruleset the parent built from the planned objects (inherited as fd FD,
 * built for ABI), after adding rules for the tool's own mounts that only
 * this side can name (--ll: r read, w write, l list, for a path inside).
 * The rules are on inodes, so a name the tool resolved again -- a bind
 * source swapped since moat planned it -- gains nothing, and a denied path
 * stays denied whatever is renamed or replaced around it.
 *
 * --keep-fds N,...: close every fd above 2 but these (an OCI runtime passes
 * 3..N, contiguous: moat's launcher filled the gaps with /dev/null).
 *
 * --env-fd N: the command's exact environment, read from fd N (NUL-separated
 * NAME=VALUE), instead of what the tool gave __init: firejail adds variables
 * of its own, and values must not be in any argv.
 *
 * --unsetenv NAME: remove what the runtime added (runc and runsc set HOME
 * when the environment has none), so the command sees moat's environment.
 *
 * --seccomp-fd N (with --kill-rest): load moat's own seccomp program, read
 * from fd N, in the command's process right before its execve (firejail
 * cannot load it).
 *
 * --nofile-soft N: lower the soft RLIMIT_NOFILE to N, the caller's, where
 * the tool raised its own and the command would inherit it (nsjail raises
 * it to 8192 at start).
 *
 * --kill-rest PIDNS: under firejail, whose own monitor is the pid
 * namespace's pid 1: fork the command, forward the signals __init gets to
 * it, and when it ends kill (SIGKILL) and reap every other process of the
 * namespace, what the command left, then exit with its status (128+N for a
 * signal N).  PIDNS is the inode of moat's own pid namespace: __init
 * refuses to run in that one, where kill(-1) would reach every process of
 * the user.  __init is undumpable and the subreaper of the command's tree.
 *
 * --lifeline N: moat's pipe.  A byte on it is a signal moat forwards (moat
 * does not signal the tool: bwrap would die of it); end of file is moat
 * gone, and __init exits, which ends the namespace.
 *
 * --started-fd N: 'e' right before the command's execve, 'f' after a
 * failed one (backend.h, started_to).
 *
 * Otherwise it is pid 1 of an OCI container or of bwrap's namespace
 * (bwrap --as-pid-1):
 *
 * Why: in a pid namespace the kernel ignores every signal sent to pid 1
 * that pid 1 has no handler for, its own kill(getpid(), SIGTERM) included,
 * and orphans are re-parented to pid 1, which must reap them.  A command
 * that is pid 1 itself would outlive a SIGTERM and collect zombies.  crun,
 * runc and runsc have no init of their own (docker's --init is tini), so
 * moat brings the one its native backend uses: fork the command, forward
 * the signals moat forwards (SIGTSTP as a SIGSTOP of the whole namespace,
 * SIGCONT to all of it), reap everything, and exit with the command's
 * status -- 128+N when a signal N ended it (pid 1 cannot die of a default
 * signal, so the number is passed on as an exit status, which is what
 * moat's exit status contract says for a signal anyway). */
#ifndef MOAT_LAUNCH_INIT_H
#define MOAT_LAUNCH_INIT_H

/* argv[0] is "__init"; the options, then "--" and the absolute path
 * executed.  Returns only on an error (125, 126, 127). */
int moat_init_main(int argc, char **argv);

#endif
