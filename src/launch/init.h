/* `moat __init [--landlock FD:ABI] [--ll r|w|l:PATH]... [--keep-fds N,...] [--exec] -- COMMAND
 * [ARGS...]`: moat's own helper inside an external sandbox (the bwrap, oci
 * and gvisor backends bind moat's binary read-only at /.moat/init).
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
 * --exec: only that, then become the command (bwrap is an init already).
 *
 * Otherwise it is pid 1 of an OCI container:
 *
 * Why: in a pid namespace the kernel ignores every signal sent to pid 1
 * that pid 1 has no handler for, its own kill(getpid(), SIGTERM) included,
 * and orphans are re-parented to pid 1, which must reap them.  A command
 * that is pid 1 itself would outlive a SIGTERM and collect zombies.  crun,
 * runc and runsc have no init of their own (docker's --init is tini), so
 * moat brings the one its native backend uses: fork the command, forward
 * the signals moat forwards, reap everything, and exit with the command's
 * status -- 128+N when a signal N ended it (pid 1 cannot die of a default
 * signal, so the number is passed on as an exit status, which is what
 * moat's exit status contract says for a signal anyway). */
#ifndef MOAT_LAUNCH_INIT_H
#define MOAT_LAUNCH_INIT_H

/* argv[0] is "__init"; the options, then "--" and the absolute path
 * executed.  Returns only on an error (125, 126, 127). */
int moat_init_main(int argc, char **argv);

#endif
