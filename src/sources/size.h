/* Sizes (sources/size.c). */
#ifndef MOAT_SOURCES_SIZE_H
#define MOAT_SOURCES_SIZE_H

#include <stdint.h>

/* "512M", "2G", "1048576", "1GiB": bytes.  Shared with the command line. */
int moat_parse_size(const char *s, int64_t *out);

#endif
