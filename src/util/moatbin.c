#include "util/moatbin.h"

/* Set only by src/cli/main.c, which is not part of libmoat: an embedder
 * cannot have it set by linking the library. */
static bool is_moat;

void moatbin_mark_self(void)
{
	is_moat = true;
}

bool moatbin_is_self(void)
{
	return is_moat;
}
