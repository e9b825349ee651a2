/* SHA-256 (FIPS 180-4), for the policy digest in reports. */
#ifndef MOAT_UTIL_SHA256_H
#define MOAT_UTIL_SHA256_H

#include <stddef.h>

/* Hex digest of data into out (65 bytes with the NUL). */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
