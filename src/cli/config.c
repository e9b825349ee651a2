/* `moat config ...`: how moat reads configuration files. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#if __has_include("sources/toml_json.h")
#include "sources/toml_json.h"
#define HAVE_TOML 1
#endif

int cmd_config(int argc, char **argv)
{
#ifdef HAVE_TOML
	if (argc >= 2 && strcmp(argv[1], "decode") == 0)
		return toml_decode_stream(stdin, stdout, stderr) == 0 ? 0 : 1;
#else
	(void)argc;
	(void)argv;
#endif
	fprintf(stderr, "moat: usage: moat config decode < FILE.toml\n");
	return 125;
}
