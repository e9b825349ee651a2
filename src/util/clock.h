/* The monotonic clock, and poll(2) timeouts from deadlines on it: what
 * every non-blocking module driven by moat's loop (kernel/netfence.h,
 * kernel/netproxy.h) tells the loop. */
#ifndef MOAT_UTIL_CLOCK_H
#define MOAT_UTIL_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t moat_mono_ns(void);

/* The poll timeout until `deadline` (CLOCK_MONOTONIC ns), rounded up to
 * whole ms and at most 60 s (the caller asks again); 0 when it is past;
 * -1 for INT64_MAX, no deadline at all. */
int moat_poll_ms_until(int64_t deadline);

#endif
