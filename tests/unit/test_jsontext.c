/* util/jsontext.c: any host string reaches the report as a JSON string --
 * UTF-8 as it is, anything else with its stray bytes as \xNN -- where
 * jansson alone refused it and the report lost the object holding it. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util/jsontext.h"

/* json_text(in) as the string it holds, "(not a string)" otherwise. */
static char *shown(const char *in)
{
	json_t *j = json_text(in);
	char *s = strdup(json_is_string(j) ? json_string_value(j) : "(not a string)");

	json_decref(j);
	return s;
}

static void check(const char *in, const char *want, const char *what)
{
	char *got = shown(in);

	is_str(got, want, "%s", what);
	free(got);
}

int main(void)
{
	json_t *j;
	char *text;

	check("/usr/bin", "/usr/bin", "ASCII stays as it is");
	check("caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80", "UTF-8 (2 and 4 bytes) stays as it is");
	check("a\\b", "a\\b", "a backslash in a UTF-8 string stays single");
	check("d\xffir", "d\\xffir", "a byte outside UTF-8 is shown as \\xNN");
	check("x\xff\\y", "x\\xff\\\\y", "in such a string a backslash is doubled, so the bytes read back");
	check("\xc0\xaf", "\\xc0\\xaf", "an overlong form is not UTF-8");
	check("\xed\xa0\x80", "\\xed\\xa0\\x80", "a surrogate is not UTF-8");
	check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "above U+10FFFF is not UTF-8");
	check("ok\xe2\x82", "ok\\xe2\\x82", "a sequence cut short at the end is not UTF-8");
	check("\xe2\x82\xac\x80", "\xe2\x82\xac\\x80", "a stray continuation byte after a valid sequence");
	ok(!utf8_valid("\xff", 1) && utf8_valid("\xe2\x82\xac", 3) && utf8_valid("", 0), "utf8_valid agrees");

	j = json_text(NULL);
	ok(json_is_null(j), "NULL is JSON null");
	json_decref(j);

	/* The point: an object holding such a string serializes. */
	j = json_pack("{s:o}", "path", json_text("/tmp/\xe9t\xe9"));
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	is_str(text ? text : "(failed)", "{\"path\":\"/tmp/\\\\xe9t\\\\xe9\"}",
	       "a Latin-1 path in an object serializes");
	free(text);
	json_decref(j);
	return tap_done();
}
