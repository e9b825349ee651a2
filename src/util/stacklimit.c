#include "util/stacklimit.h"

#include <sys/resource.h>

int stack_limit_check(struct moat_error *err)
{
	struct rlimit rl;
	unsigned long long cur_kib, max_kib;

	if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= MOAT_STACK_MIN_KIB * 1024ULL)
		return 0;
	cur_kib = (unsigned long long)rl.rlim_cur / 1024;
	moat_error_set(err, MOAT_E_SYSTEM, 0,
		       "the stack limit is %llu KiB (RLIMIT_STACK, ulimit -s), and moat needs %d KiB: it would crash",
		       cur_kib, MOAT_STACK_MIN_KIB);
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= MOAT_STACK_MIN_KIB * 1024ULL)
		return moat_error_hint(err, "raise it: ulimit -s 8192 (the usual default) in the shell or script that "
					    "starts moat");
	max_kib = (unsigned long long)rl.rlim_max / 1024;
	return moat_error_hint(err, "raise it: ulimit -s 8192 (the usual default); its hard limit is %llu KiB, which only "
				    "root or the service that starts moat (systemd's LimitSTACK=) can raise",
			       max_kib);
}
