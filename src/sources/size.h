/* Sizes (sources/size.c). */
#ifndef MOAT_SOURCES_SIZE_H
#define MOAT_SOURCES_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* The smallest size a limit takes: 1M. */
#define MOAT_SIZE_MIN (INT64_C(1) << 20)

/* "512M", "2G", "1T", "1048576", "1GiB": bytes.  Shared with the command
 * line. */
int moat_parse_size(const char *s, int64_t *out);

/* The other way: bytes as the shortest size moat_parse_size reads back
 * exactly ("64M", "1G", "1536K", "1000"), for messages that quote a limit. */
void moat_size_text(char *buf, size_t len, int64_t bytes);

/* What is wrong with a size: `why` for the message ("--memory 9X: unknown
 * unit"), `fix` for its hint.  Static strings. */
struct size_problem {
	const char *why;
	const char *fix;
};

/* A size of at least MOAT_SIZE_MIN: 0 and *out, or -1 and *pb. */
int moat_parse_size_min(const char *s, int64_t *out, struct size_problem *pb);

#endif
