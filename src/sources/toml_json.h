/* toml-test's tagged JSON form of a TOML document: tables become objects,
 * arrays arrays, and every scalar {"type": T, "value": "text"} with T a
 * toml_type_name().  Used by `moat config decode`, the toml-test runner and
 * the fuzzer. */
#ifndef MOAT_SOURCES_TOML_JSON_H
#define MOAT_SOURCES_TOML_JSON_H

#include <stdio.h>

#include "sources/toml.h"

/* Write `v` as tagged JSON, followed by a newline.  Returns 0, or -1 if
 * writing failed (errno set by stdio). */
int toml_write_json(FILE *out, const struct toml_value *v);

/* Read all of `in`, parse it as TOML and print the tagged JSON to `out`:
 * returns 0.  If reading or parsing fails, prints one line
 * "toml: line L, col C: message" to `errout` and returns 1. */
int toml_decode_stream(FILE *in, FILE *out, FILE *errout);

#endif
