/* Unit tests of the TOML parser's API: positions, error positions, limits
 * and lookups.  Conformance is toml-test's job (tests/toml/run-toml-test). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/config_json.h"
#include "sources/toml.h"
#include "sources/toml_json.h"
#include "tap.h"

static struct toml_value *parse_ok(const char *doc)
{
	struct toml_value *root = NULL;
	struct toml_error err;

	if (toml_parse(doc, strlen(doc), &root, &err) < 0) {
		printf("# unexpected error %d:%d: %s\n", err.line, err.col, err.msg);
		return NULL;
	}
	return root;
}

/* Parse a document that must fail; checks the error position and that the
 * message contains `want`. */
static void check_error(const char *doc, size_t len, int line, int col, const char *want, const char *what)
{
	struct toml_value *root = (struct toml_value *)&root; /* must stay untouched */
	struct toml_value *const sentinel = root;
	struct toml_error err;
	int r = toml_parse(doc, len, &root, &err);

	ok(r == -1 && root == sentinel, "%s: rejected, *out untouched", what);
	ok(err.line == line && err.col == col, "%s: at %d:%d (got %d:%d: %s)", what, line, col, err.line, err.col,
	   err.msg);
	ok(strstr(err.msg, want) != NULL, "%s: message has \"%s\" (got \"%s\")", what, want, err.msg);
}

static void test_positions(void)
{
	const char *doc = "# comment\n"
			  "name = \"moat\"\n"
			  "  [server]\n"
			  "  argv = [ \"a\",\n"
			  "           'b' ]\n"
			  "  \"quoted key\" = 1\n"
			  "  env.HOME.x = true\n"
			  "\"h\xc3\xa9\" = 2\n"; /* multi-byte: columns count characters */
	struct toml_value *root = parse_ok(doc), *server, *argv, *v;
	const struct toml_keyval *kv;

	ok(root != NULL, "positions document parses");
	if (!root)
		return;
	kv = toml_table_entry(root, "name");
	ok(kv && kv->pos.line == 2 && kv->pos.col == 1, "key 'name' at 2:1");
	ok(kv && kv->value->pos.line == 2 && kv->value->pos.col == 8, "value of 'name' at 2:8");

	server = toml_table_get(root, "server");
	ok(server && server->type == TOML_TABLE, "[server] is a table");
	ok(server && server->pos.line == 3 && server->pos.col == 3, "[server] header at 3:3");
	kv = toml_table_entry(root, "server");
	ok(kv && kv->pos.line == 3 && kv->pos.col == 4, "key 'server' at 3:4");

	argv = toml_table_get(server, "argv");
	ok(argv && argv->type == TOML_ARRAY && toml_array_len(argv) == 2, "argv has two items");
	ok(argv && argv->pos.line == 4 && argv->pos.col == 10, "argv array at 4:10");
	v = toml_array_at(argv, 1);
	ok(v && v->pos.line == 5 && v->pos.col == 12, "argv[1] at 5:12");
	is_str(v ? v->u.str.ptr : NULL, "b", "argv[1] is 'b'");
	ok(toml_array_at(argv, 2) == NULL, "argv[2] is out of range");

	kv = toml_table_entry(server, "quoted key");
	ok(kv && kv->pos.line == 6 && kv->pos.col == 3, "quoted key at 6:3 (its opening quote)");
	ok(kv && kv->value->pos.line == 6 && kv->value->pos.col == 18, "its value at 6:18");

	kv = toml_table_entry(toml_table_get(server, "env"), "HOME");
	ok(kv && kv->pos.line == 7 && kv->pos.col == 7, "dotted part 'HOME' at 7:7");
	kv = toml_table_entry(kv ? kv->value : NULL, "x");
	ok(kv && kv->pos.line == 7 && kv->pos.col == 12, "dotted part 'x' at 7:12");
	ok(kv && kv->value->pos.line == 7 && kv->value->pos.col == 16, "value of env.HOME.x at 7:16");

	kv = toml_table_entry(server, "h\xc3\xa9");
	ok(kv && kv->value->pos.line == 8 && kv->value->pos.col == 8, "value after a 2-byte char at 8:6");
	toml_free(root);
}

/* The bytes a value spans, as text. */
static int span_is(const char *doc, const struct toml_value *v, const char *want)
{
	return v && v->end >= v->off && strlen(want) == v->end - v->off &&
	       memcmp(doc + v->off, want, strlen(want)) == 0;
}

/* Byte spans of keys and values, and the sections of headers: what a
 * byte-preserving edit (moat mcp wrap) splices. */
static void test_spans(void)
{
	const char *doc = "\xef\xbb\xbf# top\n"
			  "model = \"h\xc3\xa9\" # comment\n"
			  "\n"
			  "[mcp_servers.docs]\n"
			  "command = \"node\"   # the runtime\n"
			  "args = [\n"
			  "  \"server.js\",  # first\n"
			  "  '--stdio',\n"
			  "]\n"
			  "env = { A = \"1\", B = { c = 2.5e0 } }\n"
			  "\n"
			  "# next\n"
			  "  [[list]]\n"
			  "x = 1979-05-27T07:32:00Z\n"
			  "[[list]]\n"
			  "y = \"\"\"\nmulti\"\"\"\n"
			  "[mcp_servers.docs.sub]\n"
			  "dotted.k = true";
	struct toml_value *root = parse_ok(doc), *servers, *docs, *args, *env, *list;
	const struct toml_keyval *kv;

	ok(root != NULL, "spans document parses");
	if (!root)
		return;
	ok(root->off == 0 && root->end == strlen(doc), "the root spans the input");
	kv = toml_table_entry(root, "model");
	ok(kv && kv->off == 9 && span_is(doc, kv->value, "\"h\xc3\xa9\""), "a string with its quotes, after the BOM");
	servers = toml_table_get(root, "mcp_servers");
	ok(servers && servers->end == servers->off && memcmp(doc + servers->off, "mcp_servers", 11) == 0,
	   "a table only implied by a header: empty, where it is first named");
	docs = toml_table_get(servers, "docs");
	ok(span_is(doc, docs,
		   "[mcp_servers.docs]\ncommand = \"node\"   # the runtime\nargs = [\n  \"server.js\",  # first\n"
		   "  '--stdio',\n]\nenv = { A = \"1\", B = { c = 2.5e0 } }\n\n# next\n"),
	   "a header's table spans its section, to the line of the next header");
	kv = toml_table_entry(docs, "command");
	ok(kv && memcmp(doc + kv->off, "command =", 9) == 0 && span_is(doc, kv->value, "\"node\""),
	   "a key's offset, and its string value without the comment after it");
	args = toml_table_get(docs, "args");
	ok(span_is(doc, args, "[\n  \"server.js\",  # first\n  '--stdio',\n]"), "a multi-line array with its comments");
	ok(span_is(doc, toml_array_at(args, 1), "'--stdio'"), "a literal string");
	env = toml_table_get(docs, "env");
	ok(span_is(doc, env, "{ A = \"1\", B = { c = 2.5e0 } }"), "an inline table");
	ok(span_is(doc, toml_table_get(toml_table_get(env, "B"), "c"), "2.5e0"), "a float as written");
	list = toml_table_get(root, "list");
	ok(list && toml_array_len(list) == 2 &&
	       span_is(doc, toml_array_at(list, 0), "[[list]]\nx = 1979-05-27T07:32:00Z\n"),
	   "an array of tables' element spans its section, from the '[' after the indent");
	ok(span_is(doc, toml_table_get(toml_array_at(list, 0), "x"), "1979-05-27T07:32:00Z"), "a date-time");
	ok(span_is(doc, toml_table_get(toml_array_at(list, 1), "y"), "\"\"\"\nmulti\"\"\""), "a multi-line string");
	ok(span_is(doc, toml_table_get(docs, "sub"), "[mcp_servers.docs.sub]\ndotted.k = true"),
	   "the last section ends with the input");
	kv = toml_table_entry(toml_table_get(toml_table_get(docs, "sub"), "dotted"), "k");
	ok(kv && memcmp(doc + kv->off, "k = true", 8) == 0 && span_is(doc, kv->value, "true"),
	   "a dotted key's offset is its last part's");
	toml_free(root);
}

/* The same spans from the JSON reader, comments (JSONC) included. */
static void test_json_spans(void)
{
	const char *doc = "{\n"
			  "  // a comment \"with\" quotes\n"
			  "  \"mcpServers\": {\n"
			  "    \"fs\": {\"command\": \"np\\\"x\", /* {x} */ \"args\": [\"-y\",\n      \"p\xc3\xa9\"],\n"
			  "      \"n\": -1.5e3, \"t\": true, \"z\": null}\n"
			  "  }\n"
			  "}\n";
	struct toml_value *root = NULL, *fs;
	struct moat_error err = {0};
	const struct toml_keyval *kv;

	ok(config_json_parse("t.json", doc, strlen(doc), false, &root, &err) == 0, "JSON with comments parses (%s)",
	   err.message);
	if (!root)
		return;
	ok(root->off == 0 && root->end == strlen(doc) - 1, "the top object spans its braces");
	fs = toml_table_get(toml_table_get(root, "mcpServers"), "fs");
	ok(fs && doc[fs->off] == '{' && doc[fs->end - 1] == '}', "an object spans its braces");
	kv = toml_table_entry(fs, "command");
	ok(kv && memcmp(doc + kv->off, "\"command\"", 9) == 0 && span_is(doc, kv->value, "\"np\\\"x\""),
	   "a key's offset at its quote, a string with an escaped quote");
	ok(span_is(doc, toml_table_get(fs, "args"), "[\"-y\",\n      \"p\xc3\xa9\"]"), "an array over two lines");
	ok(span_is(doc, toml_table_get(fs, "n"), "-1.5e3"), "a number");
	ok(span_is(doc, toml_table_get(fs, "t"), "true"), "true");
	ok(span_is(doc, toml_table_get(fs, "z"), "null"), "null");
	toml_free(root);
}

/* VS Code's JSON with comments takes a comma after the last item: read
 * with trailing_commas, the spans are the file's own (the commas in
 * neither), and without it the same text is refused where the comma is. */
static void test_json_trailing_commas(void)
{
	const char *doc = "{\"servers\": {\"a\": {\"command\": \"x,}\", \"args\": [\"1\", /* c */ ],},\n},}";
	struct toml_value *root = NULL, *a;
	struct moat_error err = {0};

	ok(config_json_parse("t.json", doc, strlen(doc), true, &root, &err) == 0,
	   "JSON with trailing commas parses when they are allowed (%s)", err.message);
	if (!root)
		return;
	a = toml_table_get(toml_table_get(root, "servers"), "a");
	ok(span_is(doc, toml_table_get(a, "command"), "\"x,}\""), "  a comma before } inside a string is kept");
	ok(span_is(doc, toml_table_get(a, "args"), "[\"1\", /* c */ ]"), "  an array spans its brackets, comma and comment");
	ok(a && doc[a->end - 1] == '}' && doc[a->end] == ',', "  an object ends at its brace, before its trailing comma");
	toml_free(root);
	root = NULL;
	ok(config_json_parse("t.json", doc, strlen(doc), false, &root, &err) < 0 && strstr(err.message, "t.json:1:"),
	   "  refused where they are not (%s)", err.message);
	toml_free(root);
}

static void test_order_and_lookup(void)
{
	char doc[64 * 40];
	size_t n = 0, i;
	struct toml_value *root;
	bool in_order = true, found_all = true;

	/* Enough keys to use the hash index. */
	for (i = 0; i < 64; i++)
		n += (size_t)snprintf(doc + n, sizeof(doc) - n, "k%zu = %zu\n", 63 - i, i);
	root = parse_ok(doc);
	ok(root && toml_table_len(root) == 64, "64 keys");
	for (i = 0; root && i < 64; i++) {
		char key[16];
		const struct toml_keyval *kv = toml_table_at(root, i);
		struct toml_value *v;

		snprintf(key, sizeof(key), "k%zu", 63 - i);
		if (!kv || strcmp(kv->key, key) != 0)
			in_order = false;
		v = toml_table_get(root, key);
		if (!v || v->type != TOML_INTEGER || v->u.integer != (int64_t)i)
			found_all = false;
	}
	ok(in_order, "keys iterate in document order");
	ok(found_all, "every key is found by toml_table_get");
	ok(toml_table_get(root, "k64") == NULL, "a missing key is NULL");
	ok(toml_table_at(root, 64) == NULL, "index past the end is NULL");
	ok(toml_table_get(NULL, "x") == NULL && toml_table_len(NULL) == 0, "NULL table is empty");
	ok(toml_table_get(toml_table_get(root, "k0"), "x") == NULL, "lookup in a non-table is NULL");
	toml_free(root);

	root = parse_ok("\"a\\u0000b\" = 1\na = 2\n");
	ok(root && toml_table_getn(root, "a\0b", 3) && toml_table_getn(root, "a\0b", 3)->u.integer == 1,
	   "a key containing NUL is found with toml_table_getn");
	ok(root && toml_table_get(root, "a") && toml_table_get(root, "a")->u.integer == 2,
	   "and does not shadow its prefix");
	toml_free(root);
}

static void test_values(void)
{
	struct toml_value *root = parse_ok("min = -9223372036854775808\n"
					   "max = 0x7fffffffffffffff\n"
					   "bin = 0b1010\n"
					   "f = 6.02e23\n"
					   "ninf = -inf\n"
					   "nan = nan\n"
					   "odt = 1979-05-27 07:32:00.999999999999-07:30\n"
					   "ld = 2024-02-29\n"
					   "lt = 23:59:60\n"
					   "ml = \"\"\"\\\n    joined \\\n    line\"\"\"\n");
	struct toml_value *v;

	ok(root != NULL, "values document parses");
	if (!root)
		return;
	v = toml_table_get(root, "min");
	ok(v && v->type == TOML_INTEGER && v->u.integer == INT64_MIN, "INT64_MIN");
	v = toml_table_get(root, "max");
	ok(v && v->u.integer == INT64_MAX, "hex INT64_MAX");
	v = toml_table_get(root, "bin");
	ok(v && v->u.integer == 10, "binary");
	v = toml_table_get(root, "f");
	ok(v && v->type == TOML_FLOAT && v->u.flt == 6.02e23, "float");
	v = toml_table_get(root, "ninf");
	ok(v && isinf(v->u.flt) && v->u.flt < 0, "-inf");
	v = toml_table_get(root, "nan");
	ok(v && isnan(v->u.flt), "nan");
	v = toml_table_get(root, "odt");
	ok(v && v->type == TOML_DATETIME, "offset date-time");
	is_str(v ? v->u.dt.text : NULL, "1979-05-27T07:32:00.999999999-07:30", "normalised, truncated to ns");
	ok(v && v->u.dt.nanosecond == 999999999 && v->u.dt.offset_minutes == -450 && v->u.dt.hour == 7,
	   "date-time fields");
	v = toml_table_get(root, "ld");
	ok(v && v->type == TOML_DATE_LOCAL && v->u.dt.day == 29, "leap day");
	v = toml_table_get(root, "lt");
	ok(v && v->type == TOML_TIME_LOCAL && v->u.dt.second == 60, "leap second");
	v = toml_table_get(root, "ml");
	is_str(v ? v->u.str.ptr : NULL, "joined line", "line-ending backslash trims");
	is_str(toml_type_name(TOML_DATETIME_LOCAL), "datetime-local", "type names are toml-test's");
	toml_free(root);
}

static void test_errors(void)
{
	check_error("a = 1\nb 2\n", 11, 2, 3, "expected '=' after key", "missing '='");
	check_error("a = 1\na = 2\n", 12, 2, 1, "duplicate key 'a'", "duplicate key");
	check_error("s = \"x\\qy\"\n", 11, 1, 7, "invalid escape '\\q'", "bad escape");
	check_error("[a]\n[a]\n", 8, 2, 2, "defined twice", "table twice");
	check_error("t = {x = 1}\nt.y = 2\n", 20, 2, 1, "inline table", "inline table is closed");
	check_error("i = 9223372036854775808\n", 24, 1, 5, "64 bits", "integer overflow");
	check_error("d = 2023-02-29\n", 15, 1, 13, "day 29", "not a leap year");
	check_error("s = \"\\uD800\"\n", 13, 1, 6, "surrogate", "surrogate escape");
	check_error("x = 1\n  y = \"\xff\"\n", 15, 2, 8, "invalid UTF-8", "bad UTF-8, with position");
	check_error("a = 1\r\nb = 2\rc = 3\n", 19, 2, 6, "U+000D", "bare CR");
	check_error("a = \"x\0y\"\n", 10, 1, 7, "U+0000", "NUL in a string");
	check_error("a = [1,\n2,\n  {x = }]\n", 21, 3, 8, "expected a value", "error inside an array");
	check_error("\xef\xbb\xbf"
		    "a = ?\n",
		    9, 1, 5, "expected a value", "BOM takes no column");
	check_error("[[a]]\n[a]\n", 10, 2, 2, "array of tables", "table over array of tables");
}

static void test_limits(void)
{
	char *doc;
	size_t n, i;
	struct toml_value *root;

	/* Arrays nested to the limit parse; one more level is refused. */
	doc = malloc(2 * (TOML_MAX_DEPTH + 2) + 8);
	n = (size_t)sprintf(doc, "a = ");
	for (i = 0; i < TOML_MAX_DEPTH; i++)
		doc[n++] = '[';
	for (i = 0; i < TOML_MAX_DEPTH; i++)
		doc[n++] = ']';
	doc[n] = '\0';
	root = parse_ok(doc);
	ok(root != NULL, "arrays nested to depth %d parse", TOML_MAX_DEPTH);
	toml_free(root);
	n = (size_t)sprintf(doc, "a = ");
	for (i = 0; i < TOML_MAX_DEPTH + 1; i++)
		doc[n++] = '[';
	doc[n] = '\0';
	check_error(doc, n, 1, 5 + TOML_MAX_DEPTH, "nested too deeply", "arrays one level too deep");
	free(doc);

	/* Deeper than any stack could take: refused, not crashed. */
	n = 1000000;
	doc = malloc(n + 8);
	memcpy(doc, "a = ", 4);
	for (i = 0; i + 3 <= n; i += 3)
		memcpy(doc + 4 + i, "{a=", 3);
	check_error(doc, n + 4, 1, 5 + 3 * TOML_MAX_DEPTH, "nested too deeply", "'{a=' repeated");
	memset(doc + 4, '[', n);
	check_error(doc, n + 4, 1, 5 + TOML_MAX_DEPTH, "nested too deeply", "a million '['");
	free(doc);

	/* Dotted keys build depth too. */
	doc = malloc(4 * (TOML_MAX_DEPTH + 2) + 16);
	n = 0;
	for (i = 0; i < TOML_MAX_DEPTH + 1; i++)
		n += (size_t)sprintf(doc + n, "%sa", i ? "." : "");
	n += (size_t)sprintf(doc + n, " = 1\n");
	check_error(doc, n, 1, 2 * TOML_MAX_DEPTH + 1, "more than", "key with too many dotted parts");
	n = 0;
	for (i = 0; i < 100; i++)
		n += (size_t)sprintf(doc + n, "%sa", i ? "." : "");
	n += (size_t)sprintf(doc + n, " = {");
	for (i = 0; i < 100; i++)
		n += (size_t)sprintf(doc + n, "%sb", i ? "." : "");
	n += (size_t)sprintf(doc + n, " = 1}\n");
	check_error(doc, n, 1, 204 + 2 * (TOML_MAX_DEPTH - 100), "nested too deeply", "dotted keys in inline tables");
	free(doc);

	/* Size limit: checked before anything is read. */
	n = (size_t)TOML_MAX_INPUT + 1;
	doc = malloc(n);
	memset(doc, '#', n);
	check_error(doc, n, 1, 1, "larger than", "input over the size limit");
	doc[0] = 'a';
	doc[1] = '=';
	doc[2] = '1';
	doc[3] = '#';
	root = NULL;
	{
		struct toml_error err;

		ok(toml_parse(doc, n - 1, &root, &err) == 0, "input at the size limit parses");
		toml_free(root);
	}
	free(doc);
}

static void test_json(void)
{
	struct toml_value *root = parse_ok("s = \"q\\\"\\u0001\"\nf = 0.1\n[t]\narr = [1, 2.5]\n");
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ok(root && f && toml_write_json(f, root) == 0, "JSON written");
	fclose(f);
	ok(out && strstr(out, "\"s\": {\"type\": \"string\", \"value\": \"q\\\"\\u0001\"}") != NULL, "strings escaped");
	ok(out && strstr(out, "{\"type\": \"float\", \"value\": \"0.1\"}") != NULL, "shortest float");
	ok(out && strstr(out, "{\"type\": \"integer\", \"value\": \"1\"}") != NULL, "integer tagged");
	free(out);
	toml_free(root);
}

int main(void)
{
	test_positions();
	test_spans();
	test_json_spans();
	test_json_trailing_commas();
	test_order_and_lookup();
	test_values();
	test_errors();
	test_limits();
	test_json();
	return tap_done();
}
