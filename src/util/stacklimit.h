/* The stack moat needs.  Its run path needs ~110 KiB (~130 KiB in the
 * sanitizer build), a config nested as deep as the JSON reader allows
 * ~250 KiB; under a smaller RLIMIT_STACK moat died of SIGSEGV before a
 * word, exit 139, which says the command was killed by signal 11.  Checked
 * first, in a small frame, before any deep one. */
#ifndef MOAT_UTIL_STACKLIMIT_H
#define MOAT_UTIL_STACKLIMIT_H

#include "util/err.h"

/* The floor: four times the deepest path measured, an eighth of the usual
 * 8 MiB. */
#define MOAT_STACK_MIN_KIB 1024

/* 0 when the soft RLIMIT_STACK is at least MOAT_STACK_MIN_KIB (or
 * unlimited); else -1 with err naming the limit and how to raise it. */
int stack_limit_check(struct moat_error *err);

#endif
