/* `moat config ...`: how moat reads configuration files. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "sources/toml_json.h"

int cmd_config(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "decode") == 0)
		return toml_decode_stream(stdin, stdout, stderr) == 0 ? 0 : 1;
	fprintf(stderr, "moat: usage: moat config decode < FILE.toml\n");
	return 125;
}
