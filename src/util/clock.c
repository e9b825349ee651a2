#include "util/clock.h"

#include <time.h>

int64_t moat_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int moat_poll_ms_until(int64_t deadline)
{
	int64_t now = moat_mono_ns(), ms;

	if (deadline == INT64_MAX)
		return -1;
	if (deadline <= now)
		return 0;
	ms = (deadline - now + 999999) / 1000000;
	return ms > 60000 ? 60000 : (int)ms;
}
