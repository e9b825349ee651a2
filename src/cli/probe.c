/* `moat probe`: what this host offers, and what the native backend can
 * enforce here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "plan/host.h"

int cmd_probe(int argc, char **argv)
{
	struct moat_error err = {0};
	struct moat_host h;
	bool as_json = argc > 1 && strcmp(argv[1], "--json") == 0;

	if (host_probe(&h, &err) < 0)
		return cli_report_error(&err);
	if (as_json) {
		json_t *j = json_pack("{s:s, s:s, s:i, s:b, s:b, s:s, s:b, s:i, s:s}", "kernel", h.kernel, "machine",
				      h.machine, "landlock_abi", h.landlock_abi, "seccomp", h.seccomp, "userns",
				      h.userns, "userns_blocked_by", h.userns_why, "root", h.root, "yama_ptrace_scope",
				      h.yama_ptrace_scope, "limited_by", h.limited_by);
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("%s\n", s);
		free(s);
		json_decref(j);
		return 0;
	}
	printf("kernel            %s (%s)\n", h.kernel, h.machine);
	printf("landlock          %s (ABI %d)\n", h.landlock_abi > 0 ? "yes" : "no", h.landlock_abi);
	printf("seccomp           %s\n", h.seccomp ? "yes" : "no");
	printf("user namespaces   %s%s%s\n", h.userns ? "yes" : "no", h.userns ? "" : ": ", h.userns_why);
	if (h.limited_by[0])
		printf("limited by        MOAT_HOST_LIMIT=%s\n", h.limited_by);
	return 0;
}
