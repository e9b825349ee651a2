/* util/yaml.c: JSON written as block YAML -- every string value quoted, keys
 * plain only when nothing else can be read from them, empty containers as
 * [] and {}, sequences of mappings on the dash's line, ASCII out. */
#include <stdlib.h>

#include <jansson.h>

#include "tap.h"
#include "util/yaml.h"

static void check(const char *json, const char *want, const char *what)
{
	json_t *j = json_loads(json, JSON_DECODE_ANY, NULL);
	char *got = j ? yaml_dump(j) : NULL;

	is_str(got, want, "%s", what);
	free(got);
	json_decref(j);
}

int main(void)
{
	check("{\"a\": \"x\", \"n\": 3, \"t\": true, \"f\": false, \"z\": null}",
	      "a: \"x\"\n\"n\": 3\nt: true\nf: false\nz: null\n",
	      "scalars: strings quoted, numbers and booleans plain (the key n is YAML 1.1's false)");
	check("{\"on\": \"on\", \"yes\": \"0755\", \"Off\": \"- x\", \"a b\": \"a: b\", \"1x\": \"#c\", \"\": \"\"}",
	      "\"on\": \"on\"\n\"yes\": \"0755\"\n\"Off\": \"- x\"\n\"a b\": \"a: b\"\n\"1x\": \"#c\"\n\"\": \"\"\n",
	      "keys YAML 1.1 reads as booleans, with blanks, a leading digit or empty are quoted");
	check("{\"app.kubernetes.io/name\": \"v\", \"k8s:x\": \"v\"}",
	      "app.kubernetes.io/name: \"v\"\n\"k8s:x\": \"v\"\n", "a label key stays plain; a colon is quoted");
	check("{\"s\": \"\\u00e9\\u20ac\\n\\t\\\"\\\\\\u007f\"}", "s: \"\\u00E9\\u20AC\\n\\t\\\"\\\\\\x7F\"\n",
	      "escapes: UTF-8 as \\u, newline, tab, quote, backslash, DEL");
	check("{\"e\": [], \"o\": {}, \"l\": [[], {}]}", "e: []\no: {}\nl:\n  - []\n  - {}\n",
	      "empty containers inline");
	check("{\"l\": [{\"a\": 1, \"b\": {\"c\": [\"x\"]}}, \"y\", [\"z\"]]}",
	      "l:\n  - a: 1\n    b:\n      c:\n        - \"x\"\n  - \"y\"\n  -\n    - \"z\"\n",
	      "a mapping in a sequence starts on the dash's line; a sequence in one below it");
	check("[1, \"a\"]", "- 1\n- \"a\"\n", "a sequence at the top");
	check("\"s\"", "\"s\"\n", "a scalar at the top");
	return tap_done();
}
