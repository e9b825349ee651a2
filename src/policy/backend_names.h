/* The names --backend and the configs accept: part of the policy's
 * vocabulary, so the sources can check a name without knowing the backends
 * (backends/registry.c has one entry for each name but "auto"; the unit
 * test test_policy checks that they agree). */
#ifndef MOAT_POLICY_BACKEND_NAMES_H
#define MOAT_POLICY_BACKEND_NAMES_H

#include <stdbool.h>

/* NULL-terminated: auto, native, the backends that run a tool, none. */
const char *const *policy_backend_names(void);
bool policy_backend_name_valid(const char *name);

#endif
