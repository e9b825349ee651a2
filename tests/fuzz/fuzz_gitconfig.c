/* libFuzzer harness for the git configuration filter (sources/gitconfig.c):
 * filter, then filter what it wrote.  Besides ASan/UBSan's checks it asserts
 * what moat relies on: a refused file leaves nothing behind and says where
 * in one line; what is written reads back, to itself, with the same keys
 * kept and none dropped (the output is git's syntax, every value quoted). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "sources/gitconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_git_config g = {0}, again = {0};
	char bad[256];

	/* libFuzzer's buffer is exactly `size` bytes: the filter must not rely
	 * on a terminator. */
	if (gitconfig_filter((const char *)data, size, "f", &g, bad, sizeof(bad)) < 0) {
		if (g.len || g.n_kept || g.n_dropped || strncmp(bad, "f:", 2) != 0 || strchr(bad, '\n'))
			abort();
		git_config_clear(&g);
		return 0;
	}
	if (gitconfig_filter(g.text ? g.text : "", g.len, "out", &again, bad, sizeof(bad)) < 0)
		abort();
	if (again.len != g.len || (g.len && memcmp(again.text, g.text, g.len) != 0) || again.n_kept != g.n_kept ||
	    again.n_dropped != 0)
		abort();
	for (size_t i = 0; i < g.n_kept; i++)
		if (strcmp(g.kept[i], again.kept[i]) != 0)
			abort();
	git_config_clear(&g);
	git_config_clear(&again);
	return 0;
}
