#include "util/utf8.h"

size_t utf8_seq(const unsigned char *s, size_t avail, uint32_t *cp)
{
	uint32_t v, min;
	size_t n, i;

	if (avail == 0)
		return 0;
	if (s[0] < 0x80) {
		v = s[0];
		n = 1;
		goto done;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		n = 2;
		v = s[0] & 0x1Fu;
		min = 0x80;
	} else if ((s[0] & 0xF0) == 0xE0) {
		n = 3;
		v = s[0] & 0x0Fu;
		min = 0x800;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		n = 4;
		v = s[0] & 0x07u;
		min = 0x10000;
	} else {
		return 0; /* a continuation byte, an overlong lead (C0, C1), or F5..FF */
	}
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3Fu);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
done:
	if (cp)
		*cp = v;
	return n;
}
