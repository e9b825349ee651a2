#include "policy/backend_names.h"

#include <string.h>

static const char *const names[] = {"auto", "native", "bwrap", "gvisor", "oci", "nsjail", "firejail", "nono",
				    "seatbelt", "none", NULL};

const char *const *policy_backend_names(void)
{
	return names;
}

bool policy_backend_name_valid(const char *name)
{
	size_t i;

	for (i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}
