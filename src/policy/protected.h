/* The protected entries of a write grant: part of what the policy means by
 * a write grant (resolve/fsplan.c holds them read-only; `moat profiles` and
 * the docs list them). */
#ifndef MOAT_POLICY_PROTECTED_H
#define MOAT_POLICY_PROTECTED_H

#include <stddef.h>

/* Names relative to the root of every write grant, and those that apply
 * only to a granted HOME; a name ending in '/' is a directory. */
const char *const *policy_protected_names(size_t *n);
const char *const *policy_protected_home_names(size_t *n);

#endif
