/* Sizes, for the config's memory, address_space and tmp_size and for
 * --memory, --address-space and --tmp-size. */
#include "sources/size.h"

#include <errno.h>
#include <stdlib.h>

int moat_parse_size(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned long long mul = 1;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'K':
	case 'k':
		mul = 1ULL << 10;
		break;
	case 'M':
	case 'm':
		mul = 1ULL << 20;
		break;
	case 'G':
	case 'g':
		mul = 1ULL << 30;
		break;
	default:
		return -1;
	}
	if (*end && end[1] != '\0' && !(end[1] == 'i' && end[2] == 'B' && end[3] == '\0') &&
	    !(end[1] == 'B' && end[2] == '\0'))
		return -1;
	if (v > (unsigned long long)INT64_MAX / mul)
		return -1;
	*out = (int64_t)(v * mul);
	return 0;
}
