/* Start-up timeline marks, for bench/run's "where the time goes": built
 * only with -DMOAT_TIMELINE (bench/run makes such a moat apart, in its own
 * build directory); in every other build each mark is an empty inline
 * function and costs nothing.
 *
 * A mark writes one line to stderr with a single write(2):
 *   moat-timeline PID LABEL NS
 * (NS: CLOCK_MONOTONIC, shared by moat, its child and the sandbox's init,
 * so that the steps of the three processes fall on one time line).  It
 * allocates nothing and takes no lock: it is called between clone and
 * execve too. */
#ifndef MOAT_UTIL_TIMELINE_H
#define MOAT_UTIL_TIMELINE_H

#ifdef MOAT_TIMELINE
void moat_timeline_mark(const char *label);
#else
static inline void moat_timeline_mark(const char *label)
{
	(void)label;
}
#endif

#endif
