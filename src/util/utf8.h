/* UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing
 * above U+10FFFF (what jansson accepts, and what TOML requires of a
 * document).  One decoder for the TOML parser and for moat's JSON text. */
#ifndef MOAT_UTIL_UTF8_H
#define MOAT_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (1-4) of the well-formed sequence at s, `avail` bytes left,
 * with its code point in *cp (cp may be NULL); 0 for an invalid sequence
 * or one cut short by the end of the buffer. */
size_t utf8_seq(const unsigned char *s, size_t avail, uint32_t *cp);

#endif
