/* A fake of the kernel's Landlock ruleset calls, for unit tests that plan
 * for a Landlock ABI this kernel may lack (fake_landlock.c).  Linked before
 * libmoat.a, it replaces src/kernel/landlock_sys.c, and only in the tests
 * whose Makefile rule names it. */
#ifndef MOAT_TESTS_FAKE_LANDLOCK_H
#define MOAT_TESTS_FAKE_LANDLOCK_H

#include <stdint.h>

/* The ABI the fake kernel has (0: no Landlock: every call is EOPNOTSUPP,
 * as a kernel with Landlock disabled answers). */
extern int fake_landlock_abi;

/* What planning asked of it since the last fake_landlock_reset(). */
struct fake_landlock_log {
	unsigned creates, rules;  /* successful calls */
	unsigned refused;         /* calls the fake kernel refused */
	uint64_t handled_fs, handled_net, scoped; /* of the last ruleset */
	char first_refusal[160];  /* why the first refused call was refused */
};
extern struct fake_landlock_log fake_landlock_log;

void fake_landlock_reset(int abi);

#endif
