#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int moat_error_set(struct moat_error *err, enum moat_error_kind kind, int errnum, const char *fmt, ...)
{
	va_list ap;
	int n;

	err->kind = kind;
	err->errnum = errnum;
	err->hint[0] = '\0';
	va_start(ap, fmt);
	n = vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	if (errnum != 0 && n >= 0 && (size_t)n < sizeof(err->message))
		snprintf(err->message + n, sizeof(err->message) - (size_t)n, ": %s", strerror(errnum));
	return -1;
}

int moat_error_hint(struct moat_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
	return -1;
}

int moat_error_wrap(struct moat_error *err, const char *fmt, ...)
{
	char old[MOAT_ERR_MSG_MAX];
	va_list ap;
	int n;

	memcpy(old, err->message, sizeof(old));
	va_start(ap, fmt);
	n = vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n + 3 < sizeof(err->message)) {
		size_t room = sizeof(err->message) - (size_t)n - 3, len = strlen(old);

		memcpy(err->message + n, ": ", 2);
		if (len > room)
			len = room;
		memcpy(err->message + n + 2, old, len);
		err->message[(size_t)n + 2 + len] = '\0';
	}
	return -1;
}

int moat_error_exit_status(const struct moat_error *err)
{
	switch (err->kind) {
	case MOAT_E_NOEXEC:
		return 126;
	case MOAT_E_NOTFOUND:
		return 127;
	default:
		return 125;
	}
}

int moat_error_print(const struct moat_error *err)
{
	fprintf(stderr, "moat: %s\n", err->message);
	if (err->hint[0])
		fprintf(stderr, "moat: hint: %s\n", err->hint);
	return moat_error_exit_status(err);
}
