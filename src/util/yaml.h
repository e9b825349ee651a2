/* A JSON value written as block-style YAML, for manifests people read
 * (the Kubernetes export, backends/k8s.c).  Deterministic: objects in their
 * order (build them with insertion order, which jansson keeps), every
 * string value double-quoted with escapes (so no value is ever read as a
 * number, a boolean, null or YAML syntax: "on", "0755", "- x", "a: b"), keys
 * plain only when they cannot be read as anything but a string.  Output is
 * ASCII: other characters are written as \uXXXX escapes. */
#ifndef MOAT_UTIL_YAML_H
#define MOAT_UTIL_YAML_H

#include <jansson.h>

/* The YAML text of `v` (an object or array), newline-terminated; malloc'd. */
char *yaml_dump(const json_t *v);

#endif
