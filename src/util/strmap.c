#include "util/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

/* FNV-1a: the keys are a file's words, not chosen to collide with a seed
 * nobody knows; a collision costs a probe, not a wrong answer. */
static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static size_t slot_of(const struct strmap *m, const char *key)
{
	size_t i = hash(key) & (m->cap - 1);

	while (m->keys[i] && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

bool strmap_get(const struct strmap *m, const char *key, size_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = slot_of(m, key);
	if (!m->keys[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

/* Twice the slots, at half full: probes stay short. */
static void grow(struct strmap *m)
{
	struct strmap bigger = {.cap = m->cap ? m->cap * 2 : 16};

	bigger.keys = moat_xcalloc(bigger.cap, sizeof(*bigger.keys));
	bigger.vals = moat_xcalloc(bigger.cap, sizeof(*bigger.vals));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i]) {
			size_t j = slot_of(&bigger, m->keys[i]);

			bigger.keys[j] = m->keys[i];
			bigger.vals[j] = m->vals[i];
		}
	bigger.n = m->n;
	free(m->keys);
	free(m->vals);
	*m = bigger;
}

void strmap_put(struct strmap *m, const char *key, size_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	i = slot_of(m, key);
	if (!m->keys[i]) {
		m->keys[i] = moat_xstrdup(key);
		m->n++;
	}
	m->vals[i] = val;
}

bool strmap_seen(struct strmap *m, const char *key, size_t val)
{
	if (strmap_get(m, key, NULL))
		return true;
	strmap_put(m, key, val);
	return false;
}

void strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
