/* JSON configs (Claude Desktop's `{"mcpServers": {...}}`, VS Code's
 * `{"servers": {...}}`, Gemini CLI's settings.json, with the comments those
 * two allow) in the shape of the TOML tree, so that one schema checker
 * serves both formats.
 *
 * jansson parses and validates the text (duplicate keys are refused), and
 * its error gives line and column.  jansson keeps no positions for values,
 * so a second, trusting walk over the same text, in step with jansson's
 * tree (objects iterate in document order), records where every key and
 * value starts, and the bytes each value spans: every later error can then
 * say file:line:col, and `moat mcp wrap` can replace a value in place. */
#include <jansson.h>
#include <string.h>

#include "sources/config_common.h"
#include "sources/config_json.h"
#include "util/cleanup.h"
#include "util/mem.h"

struct scan {
	const char *start, *p, *end;
	int line, col;
	const char *file;
	struct moat_error *err;
};

static void adv(struct scan *s)
{
	unsigned char c = (unsigned char)*s->p++;

	/* Columns count characters, as the TOML parser and jansson do. */
	if (c == '\n') {
		s->line++;
		s->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		s->col++;
	}
}

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		adv(s);
}

static struct toml_pos here(const struct scan *s)
{
	return (struct toml_pos){.line = s->line, .col = s->col};
}

/* The text was accepted by jansson: a mismatch here is moat's own bug. */
static int lost(struct scan *s)
{
	return moat_error_set(s->err, MOAT_E_CONFIG, 0, "%s:%d:%d: internal error reading the JSON text", s->file,
			      s->line, s->col);
}

static int expect(struct scan *s, char c)
{
	skip_ws(s);
	if (s->p >= s->end || *s->p != c)
		return lost(s);
	adv(s);
	return 0;
}

static int skip_string(struct scan *s)
{
	if (s->p >= s->end || *s->p != '"')
		return lost(s);
	adv(s);
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\' && s->p + 1 < s->end)
			adv(s);
		adv(s);
	}
	if (s->p >= s->end)
		return lost(s);
	adv(s);
	return 0;
}

static void skip_scalar(struct scan *s)
{
	while (s->p < s->end && ((*s->p >= '0' && *s->p <= '9') || (*s->p >= 'a' && *s->p <= 'z') || *s->p == '-' ||
				 *s->p == '+' || *s->p == '.' || *s->p == 'E'))
		adv(s);
}

static size_t offset(const struct scan *s)
{
	return (size_t)(s->p - s->start);
}

static struct toml_value *node(enum toml_type type, struct toml_pos pos, size_t off)
{
	struct toml_value *v = moat_xcalloc(1, sizeof(*v));

	v->type = type;
	v->pos = pos;
	v->off = off;
	return v;
}

static int convert(struct scan *s, json_t *j, const char *key, int depth, struct toml_value **out)
{
	struct toml_value *v = NULL;
	struct toml_pos pos;
	size_t off;

	skip_ws(s);
	pos = here(s);
	off = offset(s);
	if (depth > TOML_MAX_DEPTH)
		return moat_error_set(s->err, MOAT_E_CONFIG, 0, "%s:%d:%d: nesting deeper than %d levels", s->file,
				      pos.line, pos.col, TOML_MAX_DEPTH);
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *child;
		size_t n = json_object_size(j), i = 0;

		if (expect(s, '{') < 0)
			return -1;
		v = node(TOML_TABLE, pos, off);
		v->u.tab.items = moat_xcalloc(n ? n : 1, sizeof(*v->u.tab.items));
		v->u.tab.cap = n;
		json_object_foreach(j, k, child)
		{
			struct toml_keyval *kv = &v->u.tab.items[i];
			cleanup_free char *kp = config_keypath(key, k, strlen(k));

			if (i > 0 && expect(s, ',') < 0)
				goto fail;
			skip_ws(s);
			kv->pos = here(s);
			kv->off = offset(s);
			kv->key = moat_xstrdup(k);
			kv->key_len = strlen(k);
			v->u.tab.len = ++i;
			if (skip_string(s) < 0 || expect(s, ':') < 0 ||
			    convert(s, child, kp, depth + 1, &kv->value) < 0)
				goto fail;
		}
		if (expect(s, '}') < 0)
			goto fail;
		break;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(j), i;

		if (expect(s, '[') < 0)
			return -1;
		v = node(TOML_ARRAY, pos, off);
		v->u.arr.items = moat_xcalloc(n ? n : 1, sizeof(*v->u.arr.items));
		v->u.arr.cap = n;
		for (i = 0; i < n; i++) {
			if (i > 0 && expect(s, ',') < 0)
				goto fail;
			if (convert(s, json_array_get(j, i), key, depth + 1, &v->u.arr.items[i]) < 0)
				goto fail;
			v->u.arr.len = i + 1;
		}
		if (expect(s, ']') < 0)
			goto fail;
		break;
	}
	case JSON_STRING:
		if (skip_string(s) < 0)
			return -1;
		v = node(TOML_STRING, pos, off);
		v->u.str.len = json_string_length(j);
		v->u.str.ptr = moat_xstrndup(json_string_value(j), v->u.str.len);
		break;
	case JSON_INTEGER:
		skip_scalar(s);
		v = node(TOML_INTEGER, pos, off);
		v->u.integer = (int64_t)json_integer_value(j);
		break;
	case JSON_REAL:
		skip_scalar(s);
		v = node(TOML_FLOAT, pos, off);
		v->u.flt = json_real_value(j);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		skip_scalar(s);
		v = node(TOML_BOOL, pos, off);
		v->u.boolean = json_is_true(j);
		break;
	case JSON_NULL:
		/* Clients write null in settings of their own; the schema
		 * refuses it for a key moat reads. */
		skip_scalar(s);
		v = node(TOML_NULL, pos, off);
		break;
	}
	v->end = offset(s);
	*out = v;
	return 0;
fail:
	toml_free(v);
	return -1;
}

/* The index just past the string that starts at b[i] (a '"'). */
static size_t past_string(const char *b, size_t len, size_t i)
{
	for (i++; i < len && b[i] != '"'; i++)
		if (b[i] == '\\' && i + 1 < len)
			i++;
	return i + 1;
}

/* VS Code's mcp.json and Gemini CLI's settings.json are JSON with comments:
 * each comment becomes spaces (its line breaks kept), so that jansson reads
 * the rest and every line stays where it was in the file (a column after a
 * block comment holding non-ASCII text on the same line moves right by its
 * extra bytes).  An unterminated comment is blanked to the end, where
 * jansson then stops. */
static void blank_comments(char *b, size_t len)
{
	size_t i = 0, k;

	while (i < len) {
		if (b[i] == '"') {
			i = past_string(b, len, i);
		} else if (b[i] == '/' && i + 1 < len && b[i + 1] == '/') {
			for (; i < len && b[i] != '\n'; i++)
				b[i] = ' ';
		} else if (b[i] == '/' && i + 1 < len && b[i + 1] == '*') {
			b[i++] = ' ';
			b[i++] = ' ';
			for (; i < len && !(b[i] == '*' && i + 1 < len && b[i + 1] == '/'); i++)
				if (b[i] != '\n')
					b[i] = ' ';
			for (k = 0; k < 2 && i < len; k++)
				b[i++] = ' ';
		} else {
			i++;
		}
	}
}

/* VS Code reads its JSON with comments allowing a comma after the last
 * item of an array or object too: each such comma becomes a space, after
 * the comments are blanks, so that every offset stays the file's. */
static void blank_trailing_commas(char *b, size_t len)
{
	size_t i = 0, k;

	while (i < len) {
		if (b[i] == '"') {
			i = past_string(b, len, i);
			continue;
		}
		if (b[i] == ',') {
			for (k = i + 1; k < len && (b[k] == ' ' || b[k] == '\t' || b[k] == '\r' || b[k] == '\n'); k++)
				;
			if (k < len && (b[k] == ']' || b[k] == '}'))
				b[i] = ' ';
		}
		i++;
	}
}

/* Arrays, objects and the commas between their items, outside strings: at
 * least the number of values but one. */
static size_t json_items(const char *buf, size_t len)
{
	size_t n = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == ',' || c == '[' || c == '{') {
			n++;
		}
	}
	return n;
}

int config_json_parse(const char *file, const char *text, size_t len, bool trailing_commas, struct toml_value **out,
		      struct moat_error *err)
{
	cleanup_free char *buf = moat_xmalloc(len + 1);
	json_error_t jerr;
	json_t *j;
	struct scan s = {.start = buf, .p = buf, .end = buf + len, .line = 1, .col = 1, .file = file, .err = err};
	struct toml_value *root = NULL;
	const char *nul = memchr(text, '\0', len);
	int rc;

	/* A NUL byte is no text, and jansson reads a comment's away when the
	 * comment is blanked: refused wherever it is, as TOML refuses it, so
	 * that no later copy of the text (a C string) reads it shorter. */
	if (nul) {
		/* Counted as an editor shows it: a byte order mark is no column. */
		s.p = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? text + 3 : text;
		while (s.p < nul)
			adv(&s);
		return moat_error_set(err, MOAT_E_CONFIG, 0,
				      "%s:%d:%d: a NUL byte (at offset %zu): a JSON file holds text, and JSON writes "
				      "it as \\u0000 inside a string",
				      file, s.line, s.col, (size_t)(nul - text));
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	/* A byte order mark (Notepad's "UTF-8"), which jansson refuses:
	 * blanked, as TOML's is skipped, so that offsets stay the file's. */
	bool bom = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0;

	if (bom)
		memset(buf, ' ', 3);
	blank_comments(buf, len);
	if (trailing_commas)
		blank_trailing_commas(buf, len);
	/* Counted before jansson builds its tree, which is what grows. */
	if (json_items(buf, len) > TOML_MAX_VALUES)
		return moat_error_set(err, MOAT_E_CONFIG, 0, "%s: more than %u values: the most moat reads in one file",
				      file, TOML_MAX_VALUES);
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	/* The mark is no column an editor shows. */
	if (!j && bom && jerr.line == 1)
		jerr.column -= 3;
	if (!j) {
		moat_error_set(err, MOAT_E_CONFIG, 0, "%s:%d:%d: %s", file, jerr.line < 1 ? 1 : jerr.line,
			       jerr.column < 1 ? 1 : jerr.column, jerr.text);
		/* jansson's words for a trailing comma ("string or '}'
		 * expected near '}'") do not say what to change: when the
		 * text parses without its trailing commas, the hint does. */
		if (!trailing_commas) {
			json_t *lax;

			blank_trailing_commas(buf, len);
			lax = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
			if (lax)
				moat_error_hint(err, "a comma after the last item of an array or object, which JSON does "
						     "not allow: remove it");
			json_decref(lax);
		}
		return -1;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		skip_ws(&s);
		return moat_error_set(err, MOAT_E_CONFIG, 0, "%s:%d:%d: expected an object at the top, got an array",
				      file, s.line, s.col);
	}
	rc = convert(&s, j, NULL, 0, &root);
	json_decref(j);
	if (rc < 0)
		return -1;
	*out = root;
	return 0;
}
