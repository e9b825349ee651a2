#include "util/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Noreturn void out_of_memory(void)
{
	static const char msg[] = "moat: out of memory\n";
	/* write(2), not stdio: stdio may itself need memory. */
	ssize_t unused = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)unused;
	_exit(125);
}

void *moat_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *moat_xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *moat_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		out_of_memory();
	return q;
}

void *moat_xgrow_uninit(void *p, size_t *cap, size_t need, size_t size)
{
	size_t ncap;

	if (need < *cap)
		return p;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap <= need)
		ncap *= 2;
	if (ncap > ((size_t)-1) / size)
		out_of_memory();
	p = moat_xrealloc(p, ncap * size);
	*cap = ncap;
	return p;
}

void *moat_xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t old = *cap;

	p = moat_xgrow_uninit(p, cap, need, size);
	if (*cap > old)
		memset((char *)p + old * size, 0, (*cap - old) * size);
	return p;
}

char *moat_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		out_of_memory();
	return p;
}

char *moat_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		out_of_memory();
	return p;
}

char *moat_xmemdup(const char *s, size_t n)
{
	char *p = moat_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *moat_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		out_of_memory();
	return p;
}

char *moat_xvasprintf(const char *fmt, va_list ap)
{
	char *p = NULL;

	if (vasprintf(&p, fmt, ap) < 0)
		out_of_memory();
	return p;
}
