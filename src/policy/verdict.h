/* A property's verdict: the vocabulary every stage shares.  A backend
 * (native included) fills one per property while it compiles; the plan
 * gathers them, the report prints them.  Below the plan and the backends,
 * so that neither calls the other for it. */
#ifndef MOAT_POLICY_VERDICT_H
#define MOAT_POLICY_VERDICT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct moat_verdict {
	bool requested;        /* the policy asks for it */
	bool enforced;         /* the backend will apply it */
	char mechanism[256];   /* what enforces it, when enforced */
	char reason[512];      /* why not, when missing */
	char hint[512];        /* how to get it, when known (the longest, host/hints.h, is ~460) */
};

/* Enforced, with the mechanism; or missing, with the reason and a hint
 * (NULL: none). */
void verdict_enforce(struct moat_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void verdict_missing(struct moat_verdict *v, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* vsnprintf into a verdict's text field; a text that does not fit loses
 * its middle, marked "[... N bytes ...]" (moat_text_fit), not its end: a
 * reason naming a long path lost, without a sign, the part after it that
 * says what to do. */
void verdict_vformat(char *buf, size_t len, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
void verdict_format(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
