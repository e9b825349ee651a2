/* A short sleep for bounded retry loops. */
#ifndef MOAT_UTIL_PAUSE_H
#define MOAT_UTIL_PAUSE_H

/* Sleep `ms` milliseconds, the whole of it even when a signal interrupts. */
void moat_pause_ms(long ms);

#endif
