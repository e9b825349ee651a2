/* JSON configs in the shape of the TOML tree (sources/config_json.c). */
#ifndef MOAT_SOURCES_CONFIG_JSON_H
#define MOAT_SOURCES_CONFIG_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "sources/toml.h"
#include "util/err.h"

/* Parse JSON text into the TOML tree shape (objects as tables), with the
 * position of every key and value and the bytes each value spans (off and
 * end of struct toml_value: a string with its quotes, an object or array
 * with its brackets; comments are outside every value).  Duplicate keys
 * are errors.  `trailing_commas`: a comma after the last item of an array
 * or object is allowed, as VS Code reads its files (it is then in the
 * span of neither). */
int config_json_parse(const char *file, const char *buf, size_t len, bool trailing_commas, struct toml_value **out,
		      struct moat_error *err);

#endif
