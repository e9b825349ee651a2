/* JSON -> block-style YAML (yaml.h). */
#include "util/yaml.h"

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "util/cleanup.h"
#include "util/mem.h"

/* The text being written: grown as needed. */
struct ybuf {
	char *s;
	size_t len, cap;
};

static void yput(struct ybuf *b, const char *s)
{
	size_t n = strlen(s);

	b->s = moat_xgrow(b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

static void yputc(struct ybuf *b, char c)
{
	char s[2] = {c, '\0'};

	yput(b, s);
}

static void yputf(struct ybuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void yputf(struct ybuf *b, const char *fmt, ...)
{
	va_list ap;
	cleanup_free char *s;

	va_start(ap, fmt);
	s = moat_xvasprintf(fmt, ap);
	va_end(ap);
	yput(b, s);
}

static void put_quoted(struct ybuf *f, const char *s, size_t len)
{
	/* jansson's escapes are YAML's too; ENSURE_ASCII makes everything
	 * past 0x7f a \u escape, and DEL, which JSON leaves alone but YAML
	 * does not count as printable, is escaped here. */
	json_t *j = json_stringn_nocheck(s, len);
	cleanup_free char *q = json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
	const char *c;

	json_decref(j);
	for (c = q ? q : "\"\""; *c; c++) {
		if (*c == 0x7f)
			yput(f, "\\x7F");
		else
			yputc(f, *c);
	}
}

/* A key that every YAML reader takes as this plain string: letters first,
 * then letters, digits and . _ / -, and none of YAML 1.1's booleans and
 * nulls. */
static bool plain_key(const char *k)
{
	static const char *const reserved[] = {"y", "yes", "n", "no", "on", "off", "true", "false", "null"};
	const char *c;
	size_t i;

	if (!((k[0] >= 'a' && k[0] <= 'z') || (k[0] >= 'A' && k[0] <= 'Z')))
		return false;
	for (c = k; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      strchr("._/-", *c)))
			return false;
	for (i = 0; i < ARRAY_LEN(reserved); i++)
		if (strcasecmp(k, reserved[i]) == 0)
			return false;
	return true;
}

static void put_key(struct ybuf *f, const char *k)
{
	if (plain_key(k))
		yput(f, k);
	else
		put_quoted(f, k, strlen(k));
}

static bool is_block(const json_t *v)
{
	return (json_is_object(v) && json_object_size(v) > 0) || (json_is_array(v) && json_array_size(v) > 0);
}

static void put_scalar(struct ybuf *f, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		put_quoted(f, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		yputf(f, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL: {
		cleanup_free char *r = json_dumps(v, JSON_ENCODE_ANY);
		yput(f, r ? r : "0");
		break;
	}
	case JSON_TRUE:
		yput(f, "true");
		break;
	case JSON_FALSE:
		yput(f, "false");
		break;
	case JSON_OBJECT:
		yput(f, "{}");
		break;
	case JSON_ARRAY:
		yput(f, "[]");
		break;
	default:
		yput(f, "null");
		break;
	}
}

static void put_block(struct ybuf *f, const json_t *v, int indent, bool first_inline);

/* The value after "key:" or "- ": a scalar on the same line, a mapping or
 * sequence on the lines below (a mapping in a sequence starts on the dash's
 * line). */
static void put_value(struct ybuf *f, const json_t *v, int indent)
{
	if (!is_block(v)) {
		yputc(f, ' ');
		put_scalar(f, v);
		yputc(f, '\n');
		return;
	}
	yputc(f, '\n');
	put_block(f, v, indent, false);
}

static void put_block(struct ybuf *f, const json_t *v, int indent, bool first_inline)
{
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		bool first = true;

		json_object_foreach((json_t *)v, k, x) {
			if (!(first && first_inline))
				yputf(f, "%*s", indent, "");
			first = false;
			put_key(f, k);
			yputc(f, ':');
			put_value(f, x, indent + 2);
		}
		return;
	}
	{
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x) {
			yputf(f, "%*s-", indent, "");
			if (json_is_object(x) && json_object_size(x) > 0) {
				yputc(f, ' ');
				put_block(f, x, indent + 2, true);
			} else {
				put_value(f, x, indent + 2);
			}
		}
	}
}

char *yaml_dump(const json_t *v)
{
	struct ybuf b = {0};

	if (is_block(v))
		put_block(&b, v, 0, false);
	else {
		put_scalar(&b, v);
		yputc(&b, '\n');
	}
	return b.s ? b.s : moat_xstrdup("");
}
