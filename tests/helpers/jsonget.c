/* jsonget [--null-json] FILE EXPR: what tests/lib/tap.sh's json_get prints,
 * without a Python start-up per query.
 *
 * json_get was `python3 -c 'd = json.load(...); print(eval("d" + EXPR))'`:
 * on a kernel with page-table isolation a Python start-up costs 40-90 ms,
 * more than the moat run whose report it reads, and the black-box suites
 * asked it thousands of times.  This answers the common case, EXPR a chain
 * of subscripts (["key"] or [N], N may be negative), and prints exactly what
 * Python would: a string as is, an integer in decimal, True, False, None,
 * and an object or array as json.dumps writes it (", " and ": ", non-ASCII
 * escaped).  --null-json prints a null as json.dumps does ("null"), for
 * the suites whose helper printed None that way.
 *
 * Anything it cannot answer exactly (another expression, a missing key or
 * index, a float, a non-ASCII byte inside an object or array, a document
 * jansson refuses) exits 3 having printed nothing, and json_get asks Python,
 * whose answer or traceback is then the test's. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ASK_PYTHON = 3 };

struct buf {
	char *data;
	size_t len, cap;
};

static int buf_put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 256) + n;
		char *p = realloc(b->data, cap);
		if (!p)
			return -1;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

static int buf_str(struct buf *b, const char *s) { return buf_put(b, s, strlen(s)); }

/* A string as json.dumps(ensure_ascii=True) writes it; -1 for a byte
 * outside printable ASCII that is not one of the short escapes (Python
 * writes those as \uXXXX from the decoded code point: left to it). */
static int dump_string(struct buf *b, const char *s, size_t n)
{
	if (buf_put(b, "\"", 1) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char hex[8];
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		default:
			if (c >= 0x7f)
				return -1;
			if (c < 0x20) {
				snprintf(hex, sizeof hex, "\\u%04x", c);
				esc = hex;
			}
		}
		if (esc ? buf_str(b, esc) < 0 : buf_put(b, (const char *)&s[i], 1) < 0)
			return -1;
	}
	return buf_put(b, "\"", 1);
}

/* json.dumps(v) with Python's default separators; -1 where it cannot be
 * matched exactly (a float: Python's shortest repr is left to Python). */
static int dump_json(struct buf *b, json_t *v)
{
	char num[32];
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *item;
		int first = 1;
		if (buf_put(b, "{", 1) < 0)
			return -1;
		json_object_foreach(v, key, item) {
			if ((!first && buf_str(b, ", ") < 0) || dump_string(b, key, strlen(key)) < 0 ||
			    buf_str(b, ": ") < 0 || dump_json(b, item) < 0)
				return -1;
			first = 0;
		}
		return buf_put(b, "}", 1);
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *item;
		if (buf_put(b, "[", 1) < 0)
			return -1;
		json_array_foreach(v, i, item) {
			if ((i && buf_str(b, ", ") < 0) || dump_json(b, item) < 0)
				return -1;
		}
		return buf_put(b, "]", 1);
	}
	case JSON_STRING:
		return dump_string(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf_str(b, num);
	case JSON_TRUE: return buf_str(b, "true");
	case JSON_FALSE: return buf_str(b, "false");
	case JSON_NULL: return buf_str(b, "null");
	default: return -1; /* JSON_REAL */
	}
}

/* The next subscript of EXPR at *p: a quoted key without escapes, or an
 * integer.  0 at the end, 1 for a subscript, -1 for anything else. */
static int next_subscript(const char **p, char **key, long *index)
{
	const char *s = *p;
	if (*s == '\0')
		return 0;
	if (*s++ != '[')
		return -1;
	if (*s == '"' || *s == '\'') {
		char quote = *s++;
		const char *end = strchr(s, quote);
		if (!end || memchr(s, '\\', (size_t)(end - s)) || end[1] != ']')
			return -1;
		*key = strndup(s, (size_t)(end - s));
		if (!*key)
			return -1;
		*p = end + 2;
		return 1;
	}
	char *end;
	if (!(*s == '-' || (*s >= '0' && *s <= '9')))
		return -1;
	*index = strtol(s, &end, 10);
	if (end == s || *end != ']')
		return -1;
	*key = NULL;
	*p = end + 1;
	return 1;
}

int main(int argc, char **argv)
{
	int null_json = argc > 1 && strcmp(argv[1], "--null-json") == 0;
	argv += null_json;
	argc -= null_json;
	if (argc != 3) {
		fprintf(stderr, "usage: jsonget [--null-json] FILE EXPR\n");
		return 2;
	}
	json_error_t err;
	json_t *doc = json_load_file(argv[1], JSON_DECODE_ANY, &err);
	if (!doc)
		return ASK_PYTHON;
	json_t *v = doc;
	const char *p = argv[2];
	char *key;
	long index;
	int r;
	while ((r = next_subscript(&p, &key, &index)) == 1) {
		if (key) {
			v = json_is_object(v) ? json_object_get(v, key) : NULL;
			free(key);
		} else if (json_is_array(v)) {
			long n = (long)json_array_size(v);
			v = (index >= -n && index < n) ? json_array_get(v, (size_t)(index < 0 ? index + n : index)) : NULL;
		} else {
			v = NULL;
		}
		if (!v)
			return ASK_PYTHON;
	}
	if (r < 0)
		return ASK_PYTHON;

	struct buf out = {0};
	char num[32];
	int fail = 0;
	switch (json_typeof(v)) {
	case JSON_STRING:
		fail = buf_put(&out, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		fail = buf_str(&out, num);
		break;
	case JSON_TRUE: fail = buf_str(&out, "True"); break;
	case JSON_FALSE: fail = buf_str(&out, "False"); break;
	case JSON_NULL: fail = buf_str(&out, null_json ? "null" : "None"); break;
	default: fail = dump_json(&out, v);
	}
	if (fail < 0 || buf_put(&out, "\n", 1) < 0)
		return ASK_PYTHON;
	/* A string holding a NUL is Python's to print (jansson refuses one
	 * without JSON_ALLOW_NUL, so it does not reach here). */
	if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0)
		return 1;
	free(out.data);
	json_decref(doc);
	return 0;
}
