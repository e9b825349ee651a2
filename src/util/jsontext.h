/* Host strings -- paths, arguments, names, reasons that quote them: any
 * bytes but NUL -- as JSON strings, which must be UTF-8.  jansson refuses
 * a string that is not (json_string returns NULL, json_pack fails whole),
 * and the object that held it was left out of the report without a word:
 * a grant whose name was Latin-1 dropped the report's whole "policy", an
 * argument that was not UTF-8 vanished from "command.argv".
 *
 * A string that is UTF-8 is kept as it is.  One that is not is shown with
 * each byte outside a valid sequence as the four characters \xNN, and each
 * backslash of it as \\, so that such a string reads back to its bytes
 * (docs/report.md).  The forms cannot be told apart from a UTF-8 string
 * that holds those characters itself. */
#ifndef MOAT_UTIL_JSONTEXT_H
#define MOAT_UTIL_JSONTEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* s is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), as jansson checks it. */
bool utf8_valid(const char *s, size_t len);

/* s as a JSON string (never NULL for a non-NULL s); NULL s: JSON null. */
json_t *json_text(const char *s);

#endif
