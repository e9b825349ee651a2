/* The signals moat forwards to the command, and the mask handling around
 * fork: moat blocks them and reads them with signalfd; the command gets
 * them unblocked and with default dispositions. */
#ifndef MOAT_LAUNCH_SIGNALS_H
#define MOAT_LAUNCH_SIGNALS_H

#include <signal.h>

/* SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH. */
void signals_forwarded_set(sigset_t *set);

/* Back to default dispositions for the forwarded signals, and the mask
 * moat started with.  Async-signal-safe. */
void signals_reset_for_exec(const sigset_t *saved_mask);

#endif
