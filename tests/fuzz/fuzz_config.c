/* libFuzzer target: the config loader (TOML or JSON by the first byte), with
 * its strict validation, on arbitrary input.  Nothing it reads may crash,
 * leak or hang moat; every rejection must carry a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_config *cfg = NULL;
	struct moat_error err;
	const char *name = size > 0 && data[0] == '{' ? "/fuzz/config.json" : "/fuzz/config.toml";

	memset(&err, 0, sizeof(err));
	if (config_load_buffer(name, (const char *)data, size, "/nonexistent-home", &cfg, &err) == 0) {
		config_free(cfg);
	} else if (err.message[0] == '\0') {
		abort(); /* a rejection without a message */
	}
	return 0;
}
