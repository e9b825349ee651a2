#include "sources/toml_json.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/mem.h"

static void json_string(FILE *out, const char *s, size_t len)
{
	size_t i;

	fputc('"', out);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			/* The parser only produces valid UTF-8, which JSON takes as is;
			 * control characters (NUL from \u0000 included) must be escaped. */
			if (c < 0x20 || c == 0x7f)
				fprintf(out, "\\u%04x", (unsigned)c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

/* The shortest spelling that reads back as the same double. */
static void format_float(char *buf, size_t n, double d)
{
	int prec;

	if (isnan(d)) {
		snprintf(buf, n, "nan");
		return;
	}
	if (isinf(d)) {
		snprintf(buf, n, d < 0 ? "-inf" : "inf");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, n, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
	snprintf(buf, n, "%.17g", d);
}

static void indent(FILE *out, int level)
{
	fputc('\n', out);
	for (int i = 0; i < level; i++)
		fputs("  ", out);
}

static void scalar(FILE *out, const char *type, const char *text, size_t len)
{
	fprintf(out, "{\"type\": \"%s\", \"value\": ", type);
	json_string(out, text, len);
	fputc('}', out);
}

/* Recursion is bounded: the parser refuses trees deeper than TOML_MAX_DEPTH. */
static void write_value(FILE *out, const struct toml_value *v, int level)
{
	char num[64];
	size_t i;

	switch (v->type) {
	case TOML_STRING:
		scalar(out, "string", v->u.str.ptr, v->u.str.len);
		break;
	case TOML_INTEGER:
		snprintf(num, sizeof(num), "%" PRId64, v->u.integer);
		scalar(out, "integer", num, strlen(num));
		break;
	case TOML_FLOAT:
		format_float(num, sizeof(num), v->u.flt);
		scalar(out, "float", num, strlen(num));
		break;
	case TOML_BOOL:
		scalar(out, "bool", v->u.boolean ? "true" : "false", v->u.boolean ? 4 : 5);
		break;
	case TOML_DATETIME:
	case TOML_DATETIME_LOCAL:
	case TOML_DATE_LOCAL:
	case TOML_TIME_LOCAL:
		scalar(out, toml_type_name(v->type), v->u.dt.text, strlen(v->u.dt.text));
		break;
	case TOML_ARRAY:
		if (v->u.arr.len == 0) {
			fputs("[]", out);
			break;
		}
		fputc('[', out);
		for (i = 0; i < v->u.arr.len; i++) {
			if (i > 0)
				fputc(',', out);
			indent(out, level + 1);
			write_value(out, v->u.arr.items[i], level + 1);
		}
		indent(out, level);
		fputc(']', out);
		break;
	case TOML_TABLE:
		if (v->u.tab.len == 0) {
			fputs("{}", out);
			break;
		}
		fputc('{', out);
		for (i = 0; i < v->u.tab.len; i++) {
			const struct toml_keyval *kv = &v->u.tab.items[i];

			if (i > 0)
				fputc(',', out);
			indent(out, level + 1);
			json_string(out, kv->key, kv->key_len);
			fputs(": ", out);
			write_value(out, kv->value, level + 1);
		}
		indent(out, level);
		fputc('}', out);
		break;
	case TOML_NULL:
		fputs("null", out);
		break;
	}
}

int toml_write_json(FILE *out, const struct toml_value *v)
{
	/* printf's %g follows LC_NUMERIC; JSON's decimal point is '.'. */
	locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0), old = (locale_t)0;

	if (c_locale)
		old = uselocale(c_locale);
	write_value(out, v, 0);
	fputc('\n', out);
	if (c_locale) {
		uselocale(old);
		freelocale(c_locale);
	}
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

/* Reads at most `max` + 1 bytes, so that an oversized input is seen as such
 * without reading an endless stream to its end. */
static int read_all(FILE *in, size_t max, char **out, size_t *len)
{
	cleanup_free char *buf = NULL;
	size_t cap = 0, n = 0;

	for (;;) {
		size_t got;

		buf = moat_xgrow(buf, &cap, n + 65536, 1);
		got = fread(buf + n, 1, cap - n - 1, in);
		n += got;
		if (n > max)
			break;
		if (got == 0) {
			if (ferror(in))
				return -1;
			break;
		}
	}
	*len = n;
	*out = steal_ptr(&buf);
	return 0;
}

static void print_error(FILE *errout, const struct toml_error *err)
{
	char msg[sizeof(err->msg)];
	size_t i;

	/* One line, whatever a message might contain. */
	snprintf(msg, sizeof(msg), "%s", err->msg);
	for (i = 0; msg[i]; i++)
		if (msg[i] == '\n' || msg[i] == '\r')
			msg[i] = ' ';
	fprintf(errout, "toml: line %d, col %d: %s\n", err->line, err->col, msg);
}

int toml_decode_stream(FILE *in, FILE *out, FILE *errout)
{
	cleanup_free char *buf = NULL;
	struct toml_value *root;
	struct toml_error err;
	size_t len;

	if (read_all(in, TOML_MAX_INPUT, &buf, &len) < 0) {
		fprintf(errout, "toml: line 1, col 1: reading input: %s\n", strerror(errno));
		return 1;
	}
	if (toml_parse(buf, len, &root, &err) < 0) {
		print_error(errout, &err);
		return 1;
	}
	if (toml_write_json(out, root) < 0) {
		fprintf(errout, "toml: writing output: %s\n", strerror(errno));
		toml_free(root);
		return 1;
	}
	toml_free(root);
	return 0;
}
