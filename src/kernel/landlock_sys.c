/* The two Landlock system calls planning makes (landlock.h), alone in this
 * object: tests/unit/fake_landlock.c defines the same two functions, and a
 * test linked with it before libmoat.a never pulls this object in, so it can
 * plan for a Landlock ABI this kernel lacks.  Detection (host/host.c) does
 * not come through here: it always asks the real kernel, so no fake can make
 * a run believe in more Landlock than the kernel has. */
#include "kernel/landlock.h"

#include <sys/syscall.h>
#include <unistd.h>

int landlock_sys_create_ruleset(const void *attr, size_t size, uint32_t flags)
{
	return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

int landlock_sys_add_rule(int ruleset_fd, int rule_type, const void *rule_attr, uint32_t flags)
{
	return (int)syscall(SYS_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags);
}
