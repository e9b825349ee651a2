/* libFuzzer harness for the TOML parser: parse, print the tagged JSON (which
 * walks the whole tree) to /dev/null, free.  Besides ASan/UBSan's checks it
 * asserts what callers rely on: an error always has a position inside the
 * input and a one-line message; a success has a table at the root. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/toml.h"
#include "sources/toml_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

static void check_error(const uint8_t *data, size_t size, const struct toml_error *err)
{
	size_t lines = 1, i;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (err->line < 1 || err->col < 1 || (size <= TOML_MAX_INPUT && (size_t)err->line > lines))
		abort();
	if (!memchr(err->msg, '\0', sizeof(err->msg)) || err->msg[0] == '\0' || strchr(err->msg, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct toml_value *root = NULL;
	struct toml_error err;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	/* libFuzzer's buffer is exactly `size` bytes: the parser must not rely
	 * on a terminator, and ASan sees any read past the end. */
	if (toml_parse((const char *)data, size, &root, &err) < 0) {
		if (root)
			abort(); /* *out must be untouched on failure */
		check_error(data, size, &err);
		return 0;
	}
	if (!root || root->type != TOML_TABLE)
		abort();
	if (devnull)
		toml_write_json(devnull, root);
	toml_free(root);
	return 0;
}
