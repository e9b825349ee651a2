/* Allocation helpers.  moat is a short-lived launcher: running out of memory
 * while building a sandbox cannot be recovered from safely, so these print
 * one line and exit 125 (moat's own failure) instead of returning NULL. */
#ifndef MOAT_UTIL_MEM_H
#define MOAT_UTIL_MEM_H

#include <stdarg.h>
#include <stddef.h>

void *moat_xmalloc(size_t n) __attribute__((malloc, returns_nonnull));
void *moat_xcalloc(size_t count, size_t size) __attribute__((malloc, returns_nonnull));
void *moat_xrealloc(void *p, size_t n) __attribute__((returns_nonnull));
/* Grow an array of `*cap` items of `size` bytes so that index `need` fits. */
void *moat_xgrow(void *p, size_t *cap, size_t need, size_t size) __attribute__((returns_nonnull));
/* The same, leaving the new items unset: for an array whose every item is
 * set as it is added (zeroing ahead faulted in pages before they were
 * used, and again at each doubling). */
void *moat_xgrow_uninit(void *p, size_t *cap, size_t need, size_t size) __attribute__((returns_nonnull));
char *moat_xstrdup(const char *s) __attribute__((malloc, returns_nonnull));
char *moat_xstrndup(const char *s, size_t n) __attribute__((malloc, returns_nonnull));
/* n bytes of s and a terminating NUL: a copy of text whose length is
 * known, which strndup would cut at a NUL within it. */
char *moat_xmemdup(const char *s, size_t n) __attribute__((malloc, returns_nonnull));
char *moat_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2), malloc, returns_nonnull));
char *moat_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0), malloc, returns_nonnull));

#endif
