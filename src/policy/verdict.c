/* A property's verdict: see verdict.h. */
#include "policy/verdict.h"

#include <stdarg.h>
#include <stdio.h>

void verdict_enforce(struct moat_verdict *v, const char *fmt, ...)
{
	va_list ap;

	v->enforced = true;
	v->reason[0] = '\0';
	v->hint[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(v->mechanism, sizeof(v->mechanism), fmt, ap);
	va_end(ap);
}

void verdict_missing(struct moat_verdict *v, const char *hint, const char *fmt, ...)
{
	va_list ap;

	v->enforced = false;
	v->mechanism[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
	snprintf(v->hint, sizeof(v->hint), "%s", hint ? hint : "");
}
