/* A property's verdict: see verdict.h. */
#include "policy/verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/err.h"

void verdict_vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
	char *full = NULL;
	va_list again;
	int n;

	if (len == 0)
		return;
	va_copy(again, ap);
	n = vsnprintf(buf, len, fmt, ap);
	if (n >= 0 && (size_t)n >= len && vasprintf(&full, fmt, again) >= 0) {
		moat_text_fit(buf, len, "", full, "");
		free(full);
	} else if (n < 0) {
		buf[0] = '\0';
	}
	va_end(again);
}

void verdict_format(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verdict_vformat(buf, len, fmt, ap);
	va_end(ap);
}

void verdict_enforce(struct moat_verdict *v, const char *fmt, ...)
{
	va_list ap;

	v->enforced = true;
	v->reason[0] = '\0';
	v->hint[0] = '\0';
	va_start(ap, fmt);
	verdict_vformat(v->mechanism, sizeof(v->mechanism), fmt, ap);
	va_end(ap);
}

void verdict_missing(struct moat_verdict *v, const char *hint, const char *fmt, ...)
{
	va_list ap;

	v->enforced = false;
	v->mechanism[0] = '\0';
	va_start(ap, fmt);
	verdict_vformat(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
	verdict_format(v->hint, sizeof(v->hint), "%s", hint ? hint : "");
}
