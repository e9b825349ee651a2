#include "util/timeline.h"

#ifdef MOAT_TIMELINE
#include <stdio.h>
#include <unistd.h>

#include "util/clock.h"

void moat_timeline_mark(const char *label)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "moat-timeline %d %s %lld\n", (int)getpid(), label,
			 (long long)moat_mono_ns());
	ssize_t unused;

	if (n > 0 && (size_t)n < sizeof(line))
		unused = write(STDERR_FILENO, line, (size_t)n);
	(void)unused;
}
#else
/* ISO C: a translation unit must declare something. */
typedef int moat_timeline_unused;
#endif
