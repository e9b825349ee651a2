/* A map from strings to indexes, by hash: the dedupe of what a file of a
 * project may hold by the ten thousand (an npmrc's scopes, a pip.conf's
 * keys and index URLs, a destination set's entries).  Each of those once
 * compared a new name with every one before it, and a 1 MiB file kept moat
 * busy for seconds before the command started. */
#ifndef MOAT_UTIL_STRMAP_H
#define MOAT_UTIL_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

struct strmap {
	char **keys; /* owned; NULL: a free slot */
	size_t *vals;
	size_t cap, n; /* cap: 0 or a power of two */
};

/* `key`'s value in *val (val may be NULL): whether it is there. */
bool strmap_get(const struct strmap *m, const char *key, size_t *val);
/* `key` set to `val`, added or replaced. */
void strmap_put(struct strmap *m, const char *key, size_t val);
/* Added with `val` unless already there: whether it was already. */
bool strmap_seen(struct strmap *m, const char *key, size_t val);
void strmap_free(struct strmap *m);

#endif
