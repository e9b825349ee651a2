/* Sizes, for the config's memory, address_space and tmp_size and for
 * --memory, --address-space and --tmp-size. */
#include "sources/size.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The unit's multiplier, 0 for an unknown unit. */
static unsigned long long unit_of(char c)
{
	switch (c) {
	case '\0':
		return 1;
	case 'K':
	case 'k':
		return 1ULL << 10;
	case 'M':
	case 'm':
		return 1ULL << 20;
	case 'G':
	case 'g':
		return 1ULL << 30;
	case 'T':
	case 't':
		return 1ULL << 40;
	default:
		return 0;
	}
}

/* -1 not a size, -2 an unknown unit, -3 more than INT64_MAX bytes, -4 a
 * fraction ("1.5G" read as an unknown unit ".5G" said nothing useful). */
static int parse(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v, mul;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	if ((*end == '.' || *end == ',') && end[1] >= '0' && end[1] <= '9')
		return -4;
	mul = unit_of(*end);
	if (!mul)
		return *end >= '0' && *end <= '9' ? -1 : -2;
	if (*end && end[1] != '\0' && !(end[1] == 'i' && end[2] == 'B' && end[3] == '\0') &&
	    !(end[1] == 'B' && end[2] == '\0'))
		return -2;
	if (errno == ERANGE || v > (unsigned long long)INT64_MAX / mul)
		return -3;
	*out = (int64_t)(v * mul);
	return 0;
}

int moat_parse_size(const char *s, int64_t *out)
{
	return parse(s, out) < 0 ? -1 : 0;
}

int moat_parse_size_min(const char *s, int64_t *out, struct size_problem *pb)
{
	int64_t v;

	switch (parse(s, &v)) {
	case 0:
		if (v >= MOAT_SIZE_MIN) {
			*out = v;
			return 0;
		}
		*pb = (struct size_problem){"less than 1M, too little for a program to start",
					    "give at least 1M (e.g. 512M, 2G)"};
		return -1;
	case -2:
		*pb = (struct size_problem){"unknown unit", "write the number, then K, M, G or T (e.g. 512M, 2G)"};
		return -1;
	case -4:
		*pb = (struct size_problem){"a fraction: a size is a whole number of its unit",
					    "write it in a smaller unit (1536M, not 1.5G)"};
		return -1;
	case -3:
		*pb = (struct size_problem){"too large: the largest size is 8388607T (2^63 - 1 bytes)",
					    "give what the sandbox may use, e.g. 512M or 2G"};
		return -1;
	default:
		*pb = (struct size_problem){"not a size", "write the number, then K, M, G or T (e.g. 512M, 2G)"};
		return -1;
	}
}

void moat_size_text(char *buf, size_t len, int64_t bytes)
{
	static const char units[] = "TGMK";
	size_t i;

	for (i = 0; i < sizeof(units) - 1; i++) {
		unsigned long long mul = unit_of(units[i]);

		if (bytes > 0 && (unsigned long long)bytes % mul == 0) {
			snprintf(buf, len, "%lld%c", (long long)((unsigned long long)bytes / mul), units[i]);
			return;
		}
	}
	snprintf(buf, len, "%lld", (long long)bytes);
}
