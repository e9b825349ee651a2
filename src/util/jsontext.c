#include "util/jsontext.h"

#include <stdio.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/utf8.h"

bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		if (!(n = utf8_seq(p + i, len - i, NULL)))
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
		n = utf8_seq(p + i, len - i, NULL);
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
