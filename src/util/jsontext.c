#include "util/jsontext.h"

#include <stdio.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/mem.h"

/* The length of the valid UTF-8 sequence at s (avail bytes left), or 0. */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0; /* a continuation byte, an overlong lead (C0, C1), or F5..FF */
	/* The second byte's range rules out overlong forms, surrogates and
	 * what lies above U+10FFFF. */
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return n;
}

bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		if (!(n = utf8_seq_len(p + i, len - i)))
			return false;
		i += n;
	}
	return true;
}

json_t *json_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len, i = 0, o = 0, n;
	cleanup_free char *out = NULL;

	if (!s)
		return json_null();
	len = strlen(s);
	if (utf8_valid(s, len))
		return json_stringn(s, len);
	out = moat_xmalloc(len * 4 + 1); /* at most \xNN for each byte */
	while (i < len) {
		n = utf8_seq_len(p + i, len - i);
		if (!n) {
			snprintf(out + o, 5, "\\x%02x", p[i]);
			o += 4;
			i++;
		} else if (p[i] == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
			i++;
		} else {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		}
	}
	out[o] = '\0';
	return json_stringn(out, o);
}
