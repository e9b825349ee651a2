#include "util/umask.h"

#include <sys/stat.h>

static mode_t caller = 022;

void umask_take_own(void)
{
	caller = umask(022);
}

void umask_give_back(void)
{
	umask(caller);
}

mode_t umask_caller(void)
{
	return caller;
}
