/* toml-test decoder: TOML on stdin, tagged JSON on stdout, one error line on
 * stderr.  Built against libmoat so this suite does not depend on the CLI:
 *   cc -std=c11 -Isrc -o build/tests/toml-decode tests/toml/decode-main.c \
 *      build/libmoat.a -ljansson -lseccomp */
#include <stdio.h>

#include "sources/toml_json.h"

int main(void)
{
	return toml_decode_stream(stdin, stdout, stderr);
}
