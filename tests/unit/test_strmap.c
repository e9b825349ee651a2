/* util/strmap.c: the map the dedupe of a project's files goes through
 * (sources/netsets.c): a key found with its value, replaced, told from a
 * key it does not hold after many growths, and a collision-heavy mix of
 * keys that share their prefixes. */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "util/strmap.h"

int main(void)
{
	struct strmap m = {0};
	char key[32];
	size_t v = 0, wrong = 0, i;

	ok(!strmap_get(&m, "x", &v), "an empty map holds nothing");
	ok(!strmap_seen(&m, "@a:registry", 7), "a new key: not seen before");
	ok(strmap_seen(&m, "@a:registry", 9), "the same key again: seen");
	ok(strmap_get(&m, "@a:registry", &v) && v == 7, "its value is the first one's (%zu)", v);
	strmap_put(&m, "@a:registry", 3);
	ok(strmap_get(&m, "@a:registry", &v) && v == 3 && m.n == 1, "put replaces the value, still one key");
	for (i = 0; i < 50000; i++) {
		snprintf(key, sizeof(key), "global.k%zu", i);
		strmap_put(&m, key, i);
	}
	for (i = 0; i < 50000; i++) {
		snprintf(key, sizeof(key), "global.k%zu", i);
		if (!strmap_get(&m, key, &v) || v != i)
			wrong++;
	}
	ok(wrong == 0 && m.n == 50001, "50000 keys through its growths: each found with its value (%zu wrong)", wrong);
	ok(!strmap_get(&m, "global.k50000", NULL) && !strmap_get(&m, "", NULL) && !strmap_get(&m, "global.k", NULL),
	   "keys it does not hold are not found, the empty one and a prefix included");
	strmap_free(&m);
	ok(m.n == 0 && m.cap == 0 && !strmap_get(&m, "@a:registry", NULL), "freed: empty again");
	return tap_done();
}
