/* cleanup_json: a jansson reference released at the end of its scope, as
 * util/cleanup.h does for memory and descriptors (apart, so that only the
 * files that use jansson include it). */
#ifndef MOAT_UTIL_CLEANUP_JSON_H
#define MOAT_UTIL_CLEANUP_JSON_H

#include <jansson.h>

static inline void moat_json_decrefp(json_t **j)
{
	json_decref(*j); /* NULL is fine */
}
#define cleanup_json __attribute__((cleanup(moat_json_decrefp)))

#endif
