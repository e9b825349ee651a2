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

/* The one trial of every run, and only where it is needed: when moat
 * itself already runs under a seccomp filter (a container's profile, such
 * as Docker's default, or moat inside moat) the sysctls host_probe reads
 * may say namespaces can be made while the filter refuses unshare and
 * clone.  Then unshare is tried in a forked child: refused, h->userns
 * (and h->root's namespaces without one) become false, with the reason in
 * h->userns_why, so that the plan is made without them (--mode prefer
 * runs degraded, require says what is missing) instead of failing at
 * clone.  Nothing is forked when no filter is there. */
void host_check_ns_under_filter(struct moat_host *h);

#endif
