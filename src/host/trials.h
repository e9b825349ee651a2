/* Facts only `moat probe` asks for (host/trials.c), beside the cheap
 * per-run probe of host/host.h. */
#ifndef MOAT_HOST_TRIALS_H
#define MOAT_HOST_TRIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "host/host.h"

/* Facts only `moat probe` asks for: they fork, create namespaces or read
 * mount tables, which is too costly for every run.  Each honours the
 * MOAT_HOST_LIMIT already applied to h: it never reports more than h does,
 * and never tries a mechanism the limit turned off. */

/* Can a user namespace really be created (in a forked child)?  false with
 * the reason in why when h->userns is false or unshare(2) fails. */
bool host_try_userns(const struct moat_host *h, char *why, size_t len);

/* Can a fresh /proc be mounted the way the native backend does it (new
 * user (unless root without userns), mount and pid namespaces; in a forked
 * child)?  `how` says which namespaces were used. */
bool host_try_proc_mount(const struct moat_host *h, char *how, size_t how_len, char *why, size_t len);

#endif
