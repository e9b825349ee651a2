/* The probe behind `moat probe` (src/api/probe.c).  Its result is the
 * moat.probe/1 document that moat_probe_json() (include/moat/moat.h)
 * returns as text; this header adds what moat's own front end needs to
 * print that document as a table too. */
#ifndef MOAT_API_PROBE_H
#define MOAT_API_PROBE_H

#include <jansson.h>

#include "util/err.h"

/* The document, each object's keys in the table's order (the features as
 * probed, the tools and backends in ranking order, the properties and
 * limits in theirs); the caller json_decref()s it.  NULL with err only for
 * a malformed MOAT_HOST_LIMIT. */
json_t *probe_document(struct moat_error *err);

/* Its text as moat_probe_json() returns it (keys sorted, indented by 2),
 * malloc'd; NULL without memory. */
char *probe_document_text(const json_t *doc);

/* The table label of the feature with this key of the document's
 * "features" object ("  truncate" for "landlock_truncate"), or the key
 * itself when it names no feature. */
const char *probe_feature_label(const char *key);

#endif
