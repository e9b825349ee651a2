/* `moat __init -- COMMAND [ARGS...]`: pid 1 inside an OCI container (the
 * oci and gvisor backends bind moat's own binary into the bundle and run
 * the command under it).
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

/* argv[0] is "__init"; argv[1] must be "--"; argv[2] is the absolute path
 * executed.  Returns only on a usage error (125). */
int moat_init_main(int argc, char **argv);

#endif
