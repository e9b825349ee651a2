/* Source: notes said before a run about what the sandbox will hide from
 * the command that the user may not expect -- the current directory being
 * the private /tmp, or denied; a linked work tree's git directory left
 * read-only; a container engine whose daemon is out of reach; a path that
 * a declared variable names, outside every grant.  Each is one line on
 * stderr (sources/netsets.h's notes); the run goes on.  A sandbox that is
 * off hides nothing, and gets none. */
#ifndef MOAT_SOURCES_RUNNOTES_H
#define MOAT_SOURCES_RUNNOTES_H

#include "policy/policy.h"
#include "sources/netsets.h"

/* Add the notes that apply to the policy `p`, finished (after
 * policy_validate); `environ_in` is moat's environment, whose values the
 * variables that pass take. */
void run_notes_add(const struct moat_policy *p, char *const *environ_in, struct netset_notes *notes);

#endif
