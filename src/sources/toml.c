/* TOML 1.0 parser: a hand-written recursive-descent parser over the whole
 * buffer.  See toml.h for the contract.
 *
 * Recursion happens only through parse_value() (arrays and inline tables)
 * and in toml_free(); both are bounded because every container is created
 * with its depth checked against TOML_MAX_DEPTH.
 *
 * Table rules, as TOML 1.0 and toml-test read them: a table may be defined
 * by a [header] once; a table first created as the parent of another header
 * may later get its own header; a table created by a dotted key belongs to
 * the dotted keys of that section (a header may pass through it to define a
 * sub-table, but may not define it); dotted keys may not reach into tables
 * made by headers; inline tables and static arrays are closed once written. */
#include "sources/toml.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/utf8.h"

enum {
	F_EXPLICIT = 1u << 0, /* table defined by its own [header] */
	F_DOTTED = 1u << 1,   /* table created by a dotted key */
	F_INLINE = 1u << 2,   /* inline table: closed once written */
	F_AOT = 1u << 3,      /* array made by [[header]]: more may be appended */
};

/* Tables with more keys than this get a hash index, so that a file with many
 * keys in one table cannot make parsing quadratic. */
#define TABLE_INDEX_MIN 8

struct parser {
	const char *start, *p, *end;
	int line, col;
	struct toml_value *root;
	struct toml_value *cur;	    /* table that key/value lines go into */
	struct toml_value *section; /* the table the last header defined */
	struct toml_error *err;
	size_t values; /* parsed so far: at most TOML_MAX_VALUES */
};

struct buf {
	char *p;
	size_t len, cap;
};

struct key_part {
	char *s;
	size_t len;
	struct toml_pos pos;
	size_t off;
};

struct key {
	struct key_part *parts;
	size_t n, cap;
};

/* A short description of something for an error message. */
struct desc {
	char s[112];
};

/* ---- cursor ---- */

static int peek(const struct parser *ps)
{
	return ps->p < ps->end ? (unsigned char)*ps->p : -1;
}

static int peek_at(const struct parser *ps, size_t k)
{
	return (size_t)(ps->end - ps->p) > k ? (unsigned char)ps->p[k] : -1;
}

static void advance(struct parser *ps)
{
	unsigned char c = (unsigned char)*ps->p++;

	if (c == '\n') {
		ps->line++;
		ps->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		/* Columns count characters: continuation bytes do not move. */
		ps->col++;
	}
}

static void advance_n(struct parser *ps, size_t n)
{
	while (n-- > 0)
		advance(ps);
}

static struct toml_pos here(const struct parser *ps)
{
	return (struct toml_pos){ps->line, ps->col};
}

/* The cursor as a byte offset into the input. */
static size_t offset(const struct parser *ps)
{
	return (size_t)(ps->p - ps->start);
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_bare_key_char(int c)
{
	return is_alpha(c) || is_digit(c) || c == '_' || c == '-';
}

static bool at_newline(const struct parser *ps)
{
	int c = peek(ps);

	return c == '\n' || (c == '\r' && peek_at(ps, 1) == '\n');
}

static void skip_newline(struct parser *ps)
{
	if (peek(ps) == '\r')
		advance(ps);
	advance(ps);
}

static void skip_ws(struct parser *ps)
{
	while (peek(ps) == ' ' || peek(ps) == '\t')
		advance(ps);
}

/* ---- errors ---- */

__attribute__((format(printf, 3, 4))) static int fail_at(struct parser *ps, struct toml_pos pos, const char *fmt, ...)
{
	va_list ap;

	ps->err->line = pos.line;
	ps->err->col = pos.col;
	va_start(ap, fmt);
	vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

#define fail(ps, ...) fail_at((ps), here(ps), __VA_ARGS__)

/* Position `off` bytes into an ASCII token starting at `pos`. */
static struct toml_pos pos_plus(struct toml_pos pos, size_t off)
{
	pos.col += (int)off;
	return pos;
}

/* What is at the cursor, for "expected X, found Y". */
static struct desc found(const struct parser *ps)
{
	struct desc d;
	uint32_t cp;
	int c = peek(ps);

	if (c < 0)
		snprintf(d.s, sizeof(d.s), "end of input");
	else if (at_newline(ps))
		snprintf(d.s, sizeof(d.s), "end of line");
	else if (c < 0x20 || c == 0x7f)
		snprintf(d.s, sizeof(d.s), "control character U+%04X", (unsigned)c);
	else if (c < 0x80)
		snprintf(d.s, sizeof(d.s), "'%c'", c);
	else if (utf8_seq((const unsigned char *)ps->p, (size_t)(ps->end - ps->p), &cp))
		snprintf(d.s, sizeof(d.s), "U+%04X", (unsigned)cp);
	else
		snprintf(d.s, sizeof(d.s), "byte 0x%02X", (unsigned)c);
	return d;
}

/* Append a key to a message, quoted and made printable; long keys are cut
 * at a character boundary. */
static size_t show_key_into(char *out, size_t cap, size_t at, const char *k, size_t len)
{
	static const size_t max_shown = 48;
	size_t i = 0;

	while (i < len && at + 8 < cap) {
		unsigned char c = (unsigned char)k[i];
		uint32_t cp;
		size_t n;

		if (i >= max_shown) {
			at += (size_t)snprintf(out + at, cap - at, "...");
			break;
		}
		if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') {
			at += (size_t)snprintf(out + at, cap - at, c == '\'' || c == '\\' ? "\\%c" : "\\x%02X",
					       (unsigned)c);
			i++;
			continue;
		}
		n = utf8_seq((const unsigned char *)k + i, len - i, &cp);
		if (n == 0 || at + n + 8 >= cap)
			break;
		memcpy(out + at, k + i, n);
		at += n;
		i += n;
	}
	out[at] = '\0';
	return at;
}

/* The first n parts of a dotted key, as 'a.b.c'. */
static struct desc show_path(const struct key *k, size_t n)
{
	struct desc d;
	size_t i, at = 1;

	d.s[0] = '\'';
	for (i = 0; i < n && at + 8 < sizeof(d.s) - 2; i++) {
		if (i > 0)
			d.s[at++] = '.';
		at = show_key_into(d.s, sizeof(d.s) - 2, at, k->parts[i].s, k->parts[i].len);
	}
	d.s[at++] = '\'';
	d.s[at] = '\0';
	return d;
}

static const char *article_type(const struct toml_value *v)
{
	switch (v->type) {
	case TOML_STRING:
		return "a string";
	case TOML_INTEGER:
		return "an integer";
	case TOML_FLOAT:
		return "a float";
	case TOML_BOOL:
		return "a boolean";
	case TOML_DATETIME:
	case TOML_DATETIME_LOCAL:
	case TOML_DATE_LOCAL:
	case TOML_TIME_LOCAL:
		return "a date/time";
	case TOML_ARRAY:
		return v->flags & F_AOT ? "an array of tables" : "an array";
	case TOML_TABLE:
		return v->flags & F_INLINE ? "an inline table" : "a table";
	case TOML_NULL:
		break;
	}
	return "a value";
}

/* ---- growable byte buffer ---- */

static void buf_put(struct buf *b, const char *s, size_t n)
{
	/* moat_xgrow makes index `need` fit: room for the bytes and a NUL. */
	b->p = moat_xgrow(b->p, &b->cap, b->len + n, 1);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void buf_putc(struct buf *b, char c)
{
	buf_put(b, &c, 1);
}

static void buf_put_cp(struct buf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	buf_put(b, u, n);
}

/* Hand over the contents, NUL-terminated; the buffer is left empty. */
static char *buf_finish(struct buf *b, size_t *len)
{
	char *p;

	b->p = moat_xgrow(b->p, &b->cap, b->len, 1);
	b->p[b->len] = '\0';
	*len = b->len;
	p = b->p;
	memset(b, 0, sizeof(*b));
	return p;
}

static void buf_freep(struct buf *b)
{
	free(b->p);
}

#define cleanup_buf __attribute__((cleanup(buf_freep)))

/* ---- the tree ---- */

static struct toml_value *value_new(enum toml_type type, struct toml_pos pos, int depth)
{
	struct toml_value *v = moat_xcalloc(1, sizeof(*v));

	v->type = type;
	v->pos = pos;
	v->depth = depth;
	return v;
}

void toml_free(struct toml_value *v)
{
	size_t i;

	if (!v)
		return;
	switch (v->type) {
	case TOML_STRING:
		free(v->u.str.ptr);
		break;
	case TOML_ARRAY:
		for (i = 0; i < v->u.arr.len; i++)
			toml_free(v->u.arr.items[i]);
		free(v->u.arr.items);
		break;
	case TOML_TABLE:
		for (i = 0; i < v->u.tab.len; i++) {
			free(v->u.tab.items[i].key);
			toml_free(v->u.tab.items[i].value);
		}
		free(v->u.tab.items);
		free(v->u.tab.index);
		break;
	default:
		break;
	}
	free(v);
}

static void valuep_free(struct toml_value **v)
{
	toml_free(*v);
}

#define cleanup_value __attribute__((cleanup(valuep_free)))

/* FNV-1a: keys are short; flooding a config file's own tables is not a
 * threat worth a keyed hash. */
static size_t hash_key(const char *k, size_t len)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)k[i];
		h *= 1099511628211ull;
	}
	return (size_t)h;
}

static void index_add(struct toml_value *t, size_t item)
{
	const struct toml_keyval *kv = &t->u.tab.items[item];
	size_t mask = t->u.tab.index_cap - 1;
	size_t i = hash_key(kv->key, kv->key_len) & mask;

	while (t->u.tab.index[i] != 0)
		i = (i + 1) & mask;
	t->u.tab.index[i] = item + 1; /* 0 marks an empty slot */
}

static void index_rebuild(struct toml_value *t)
{
	size_t cap = 16, i;

	while (cap < 2 * (t->u.tab.len + 1))
		cap *= 2;
	free(t->u.tab.index);
	t->u.tab.index = moat_xcalloc(cap, sizeof(*t->u.tab.index));
	t->u.tab.index_cap = cap;
	for (i = 0; i < t->u.tab.len; i++)
		index_add(t, i);
}

static const struct toml_keyval *table_find(const struct toml_value *t, const char *key, size_t len)
{
	size_t i;

	if (t->u.tab.index) {
		size_t mask = t->u.tab.index_cap - 1;

		for (i = hash_key(key, len) & mask; t->u.tab.index[i] != 0; i = (i + 1) & mask) {
			const struct toml_keyval *kv = &t->u.tab.items[t->u.tab.index[i] - 1];

			if (kv->key_len == len && memcmp(kv->key, key, len) == 0)
				return kv;
		}
		return NULL;
	}
	for (i = 0; i < t->u.tab.len; i++) {
		const struct toml_keyval *kv = &t->u.tab.items[i];

		if (kv->key_len == len && memcmp(kv->key, key, len) == 0)
			return kv;
	}
	return NULL;
}

/* Tables and arrays start small and double: most hold a handful of
 * entries, and a document of many tiny tables must not cost hundreds of
 * bytes per table (moat_xgrow starts at 8). */
static void *grow_items(void *p, size_t *cap, size_t need, size_t size)
{
	size_t ncap;

	if (need < *cap)
		return p;
	ncap = *cap ? *cap * 2 : 1;
	while (ncap <= need)
		ncap *= 2;
	/* Cannot happen (counts are bounded by TOML_MAX_INPUT); if it did,
	 * SIZE_MAX is an allocation that fails the way every other does. */
	p = moat_xrealloc(p, ncap > SIZE_MAX / size ? SIZE_MAX : ncap * size);
	*cap = ncap;
	return p;
}

/* Takes ownership of key and value.  The caller has checked that the key is
 * new.  Keyval pointers into the table are invalid afterwards. */
static void table_insert(struct toml_value *t, char *key, size_t len, struct toml_pos pos, size_t off,
			 struct toml_value *v)
{
	struct toml_keyval *kv;

	t->u.tab.items = grow_items(t->u.tab.items, &t->u.tab.cap, t->u.tab.len, sizeof(*t->u.tab.items));
	kv = &t->u.tab.items[t->u.tab.len++];
	kv->key = key;
	kv->key_len = len;
	kv->pos = pos;
	kv->off = off;
	kv->value = v;
	if (t->u.tab.index && 2 * t->u.tab.len <= t->u.tab.index_cap)
		index_add(t, t->u.tab.len - 1);
	else if (t->u.tab.len > TABLE_INDEX_MIN)
		index_rebuild(t);
}

static void array_push(struct toml_value *a, struct toml_value *v)
{
	a->u.arr.items = grow_items(a->u.arr.items, &a->u.arr.cap, a->u.arr.len, sizeof(*a->u.arr.items));
	a->u.arr.items[a->u.arr.len++] = v;
}

static int check_depth(struct parser *ps, struct toml_pos pos, int depth)
{
	if (depth > TOML_MAX_DEPTH)
		return fail_at(ps, pos, "nested too deeply (more than %d levels of tables and arrays)", TOML_MAX_DEPTH);
	return 0;
}

/* Not strndup: a key may contain NUL (from \u0000). */
static char *dup_bytes(const char *s, size_t len)
{
	char *p = moat_xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* A new sub-table of t under key part kp; the key's text is copied. */
static struct toml_value *table_add_table(struct parser *ps, struct toml_value *t, const struct key_part *kp,
					  unsigned int flags)
{
	struct toml_value *nt;

	if (check_depth(ps, kp->pos, t->depth + 1) < 0)
		return NULL;
	nt = value_new(TOML_TABLE, kp->pos, t->depth + 1);
	nt->flags = flags;
	nt->off = nt->end = kp->off;
	table_insert(t, dup_bytes(kp->s, kp->len), kp->len, kp->pos, kp->off, nt);
	return nt;
}

/* ---- comments and line ends ---- */

static int skip_comment(struct parser *ps)
{
	advance(ps); /* '#' */
	for (;;) {
		int c = peek(ps);

		if (c < 0 || at_newline(ps))
			return 0;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(ps, "control character U+%04X is not allowed in a comment", (unsigned)c);
		advance(ps);
	}
}

/* Blank space inside an array: whitespace, newlines and comments. */
static int skip_ws_nl_comments(struct parser *ps)
{
	for (;;) {
		skip_ws(ps);
		if (peek(ps) == '#') {
			if (skip_comment(ps) < 0)
				return -1;
		} else if (at_newline(ps)) {
			skip_newline(ps);
		} else {
			return 0;
		}
	}
}

static int expect_eol(struct parser *ps, const char *after)
{
	skip_ws(ps);
	if (peek(ps) == '#' && skip_comment(ps) < 0)
		return -1;
	if (peek(ps) < 0)
		return 0;
	if (at_newline(ps)) {
		skip_newline(ps);
		return 0;
	}
	return fail(ps, "expected end of line after %s, found %s", after, found(ps).s);
}

/* ---- strings ---- */

static int hex_val(int c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_control(int c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

static int parse_unicode_escape(struct parser *ps, struct buf *b, struct toml_pos pos)
{
	int letter = peek(ps), ndigits = letter == 'u' ? 4 : 8, i;
	uint32_t cp = 0;

	advance(ps);
	for (i = 0; i < ndigits; i++) {
		int d = hex_val(peek(ps));

		if (d < 0)
			return fail(ps, "expected %d hex digits after '\\%c', found %s", ndigits, letter, found(ps).s);
		cp = (cp << 4) | (uint32_t)d;
		advance(ps);
	}
	if (cp >= 0xD800 && cp <= 0xDFFF)
		return fail_at(ps, pos, "invalid escape '\\%c%0*X': surrogate code points are not allowed", letter,
			       ndigits, (unsigned)cp);
	if (cp > 0x10FFFF)
		return fail_at(ps, pos, "invalid escape '\\%c%0*X': beyond U+10FFFF", letter, ndigits, (unsigned)cp);
	buf_put_cp(b, cp);
	return 0;
}

static int parse_escape(struct parser *ps, struct buf *b)
{
	struct toml_pos pos = here(ps);
	int c;

	advance(ps); /* '\\' */
	c = peek(ps);
	switch (c) {
	case 'b':
		buf_putc(b, '\b');
		break;
	case 't':
		buf_putc(b, '\t');
		break;
	case 'n':
		buf_putc(b, '\n');
		break;
	case 'f':
		buf_putc(b, '\f');
		break;
	case 'r':
		buf_putc(b, '\r');
		break;
	case '"':
		buf_putc(b, '"');
		break;
	case '\\':
		buf_putc(b, '\\');
		break;
	case 'u':
	case 'U':
		return parse_unicode_escape(ps, b, pos);
	default:
		if (c > 0x20 && c < 0x7f)
			return fail_at(ps, pos, "invalid escape '\\%c'", c);
		return fail_at(ps, pos, "invalid escape: '\\' followed by %s", found(ps).s);
	}
	advance(ps);
	return 0;
}

static int parse_basic_string(struct parser *ps, struct buf *b)
{
	struct toml_pos start = here(ps);

	advance(ps); /* '"' */
	for (;;) {
		int c = peek(ps);

		if (c == '"') {
			advance(ps);
			return 0;
		}
		if (c == '\\') {
			if (parse_escape(ps, b) < 0)
				return -1;
			continue;
		}
		if (c < 0 || at_newline(ps))
			return fail_at(ps, start, "unterminated string: expected '\"' before %s", found(ps).s);
		if (is_control(c))
			return fail(ps, "control character U+%04X must be escaped in a string", (unsigned)c);
		buf_putc(b, (char)c);
		advance(ps);
	}
}

static int parse_literal_string(struct parser *ps, struct buf *b)
{
	struct toml_pos start = here(ps);

	advance(ps); /* '\'' */
	for (;;) {
		int c = peek(ps);

		if (c == '\'') {
			advance(ps);
			return 0;
		}
		if (c < 0 || at_newline(ps))
			return fail_at(ps, start, "unterminated literal string: expected \"'\" before %s", found(ps).s);
		if (is_control(c))
			return fail(ps, "control character U+%04X is not allowed in a literal string", (unsigned)c);
		buf_putc(b, (char)c);
		advance(ps);
	}
}

static size_t run_of(const struct parser *ps, int c)
{
	size_t n = 0;

	while (peek_at(ps, n) == c)
		n++;
	return n;
}

/* At the quote run that may end a multi-line string delimited by q: up to
 * two quotes right before the closing three belong to the string.  Returns
 * 1 when the string ended, 0 when the quotes were content. */
static int ml_quotes(struct parser *ps, struct buf *b, char q)
{
	size_t n = run_of(ps, q), i;

	if (n > 5) {
		advance_n(ps, 5);
		return fail(ps, "too many %s at the end of a multi-line string", q == '"' ? "'\"'" : "\"'\"");
	}
	if (n >= 3) {
		for (i = 3; i < n; i++)
			buf_putc(b, q);
		advance_n(ps, n);
		return 1;
	}
	for (i = 0; i < n; i++)
		buf_putc(b, q);
	advance_n(ps, n);
	return 0;
}

/* A '\' that ends a line (trailing whitespace allowed) trims the newline and
 * all whitespace and newlines after it. */
static bool line_ending_backslash(const struct parser *ps)
{
	size_t k = 1;

	while (peek_at(ps, k) == ' ' || peek_at(ps, k) == '\t')
		k++;
	return peek_at(ps, k) == '\n' || (peek_at(ps, k) == '\r' && peek_at(ps, k + 1) == '\n');
}

/* A newline in a multi-line string: LF, or CRLF normalised to LF. */
static int ml_newline(struct parser *ps, struct buf *b)
{
	if (!at_newline(ps))
		return fail(ps, "carriage return must be followed by a newline");
	skip_newline(ps);
	buf_putc(b, '\n');
	return 0;
}

static int parse_ml_string(struct parser *ps, struct buf *b, char q)
{
	struct toml_pos start = here(ps);
	int r;

	advance_n(ps, 3);
	/* A newline right after the opening delimiter is not part of it. */
	if (at_newline(ps))
		skip_newline(ps);
	for (;;) {
		int c = peek(ps);

		if (c < 0)
			return fail_at(ps, start, "unterminated multi-line string: expected %s",
				       q == '"' ? "'\"\"\"'" : "\"'''\"");
		if (c == q) {
			r = ml_quotes(ps, b, q);
			if (r != 0)
				return r < 0 ? -1 : 0;
			continue;
		}
		if (c == '\\' && q == '"') {
			if (!line_ending_backslash(ps)) {
				if (parse_escape(ps, b) < 0)
					return -1;
				continue;
			}
			advance(ps);
			while (peek(ps) == ' ' || peek(ps) == '\t' || at_newline(ps))
				advance(ps);
			continue;
		}
		if (c == '\n' || c == '\r') {
			if (ml_newline(ps, b) < 0)
				return -1;
			continue;
		}
		if (is_control(c))
			return fail(ps, "control character U+%04X is not allowed in a%s string", (unsigned)c,
				    q == '"' ? " multi-line" : " multi-line literal");
		buf_putc(b, (char)c);
		advance(ps);
	}
}

/* Any of the four string forms at the cursor. */
static int parse_string(struct parser *ps, struct buf *b)
{
	int q = peek(ps);

	if (peek_at(ps, 1) == q && peek_at(ps, 2) == q)
		return parse_ml_string(ps, b, (char)q);
	return q == '"' ? parse_basic_string(ps, b) : parse_literal_string(ps, b);
}

/* ---- keys ---- */

static void key_free(struct key *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->parts[i].s);
	free(k->parts);
}

#define cleanup_key __attribute__((cleanup(key_free)))

static int parse_simple_key(struct parser *ps, struct key_part *kp)
{
	cleanup_buf struct buf b = {0};
	int c = peek(ps);

	kp->pos = here(ps);
	kp->off = offset(ps);
	if (c == '"' || c == '\'') {
		if (peek_at(ps, 1) == c && peek_at(ps, 2) == c)
			return fail(ps, "a key cannot be a multi-line string");
		if ((c == '"' ? parse_basic_string(ps, &b) : parse_literal_string(ps, &b)) < 0)
			return -1;
	} else if (is_bare_key_char(c)) {
		while (is_bare_key_char(peek(ps))) {
			buf_putc(&b, (char)peek(ps));
			advance(ps);
		}
	} else {
		return fail(ps, "expected a key, found %s", found(ps).s);
	}
	kp->s = buf_finish(&b, &kp->len);
	return 0;
}

/* A key, possibly dotted: simple keys joined by '.', with optional
 * whitespace around the dots. */
static int parse_key(struct parser *ps, struct key *k)
{
	for (;;) {
		skip_ws(ps);
		if (k->n >= TOML_MAX_DEPTH)
			return fail(ps, "key has more than %d dotted parts", TOML_MAX_DEPTH);
		k->parts = moat_xgrow(k->parts, &k->cap, k->n, sizeof(*k->parts));
		if (parse_simple_key(ps, &k->parts[k->n]) < 0)
			return -1;
		k->n++;
		skip_ws(ps);
		if (peek(ps) != '.')
			return 0;
		advance(ps);
	}
}

/* ---- numbers ---- */

static int digit_val(int c, int base)
{
	int d = hex_val(c);

	return d >= 0 && d < base ? d : -1;
}

/* Digits of `base` from tok[*i], which is a digit, copied to out without
 * underscores.  An underscore must sit between two digits.  On failure *i
 * is the offset of the bad underscore. */
static int scan_digits(const char *tok, size_t n, size_t *i, int base, struct buf *out)
{
	while (*i < n) {
		int c = (unsigned char)tok[*i];

		if (digit_val(c, base) >= 0) {
			buf_putc(out, (char)c);
			(*i)++;
		} else if (c == '_') {
			if (*i + 1 >= n || digit_val((unsigned char)tok[*i + 1], base) < 0)
				return -1;
			(*i)++;
		} else {
			break;
		}
	}
	return 0;
}

/* Accumulate digits (no underscores) into an int64 that must stay within
 * [-2^63, 2^63-1]. */
static bool digits_to_int(const char *d, size_t len, int base, bool neg, int64_t *out)
{
	uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t dv = (uint64_t)digit_val((unsigned char)d[i], base);

		if (v > (limit - dv) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + dv;
	}
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return true;
}

static bool is_number_char(int c)
{
	return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '+' || c == '-';
}

static int parse_radix_int(struct parser *ps, struct toml_pos pos, const char *tok, size_t n, struct toml_value *v)
{
	static const char *const names[] = {['x'] = "hexadecimal", ['o'] = "octal", ['b'] = "binary"};
	static const char *const articles[] = {['x'] = "a", ['o'] = "an", ['b'] = "a"};
	cleanup_buf struct buf digits = {0};
	int letter = tok[1];
	int base = letter == 'x' ? 16 : letter == 'o' ? 8 : 2;
	size_t i = 2;

	if (i >= n || digit_val((unsigned char)tok[i], base) < 0)
		return fail_at(ps, pos_plus(pos, i), "expected %s %s digit after '0%c'", articles[letter],
			       names[letter], letter);
	if (scan_digits(tok, n, &i, base, &digits) < 0)
		return fail_at(ps, pos_plus(pos, i), "'_' in a number must be between two digits");
	if (i < n)
		return fail_at(ps, pos_plus(pos, i), "invalid %s digit '%c'", names[letter], tok[i]);
	if (!digits_to_int(digits.p, digits.len, base, false, &v->u.integer))
		return fail_at(ps, pos, "integer '%.*s' does not fit in 64 bits", (int)n, tok);
	v->type = TOML_INTEGER;
	return 0;
}

/* Decimal integer or float, from tok[i] (after any sign). */
static int parse_decimal(struct parser *ps, struct toml_pos pos, const char *tok, size_t n, size_t i,
			 struct toml_value *v)
{
	cleanup_buf struct buf clean = {0};
	bool is_float = false;
	size_t int_start = i, int_digits;
	char *end;

	if (i < n && (tok[i] == '+' || tok[i] == '-'))
		return fail_at(ps, pos_plus(pos, i), "a number can have only one sign");
	if (i >= n || !is_digit((unsigned char)tok[i]))
		return fail_at(ps, pos_plus(pos, i), "expected a digit in number '%.*s'", (int)n, tok);
	if (i > 0)
		buf_putc(&clean, tok[0]);
	if (scan_digits(tok, n, &i, 10, &clean) < 0)
		return fail_at(ps, pos_plus(pos, i), "'_' in a number must be between two digits");
	int_digits = clean.len - (int_start > 0);
	if (int_digits > 1 && tok[int_start] == '0')
		return fail_at(ps, pos_plus(pos, int_start), "leading zeros are not allowed in '%.*s'", (int)n, tok);
	if (i < n && tok[i] == '.') {
		is_float = true;
		buf_putc(&clean, '.');
		i++;
		if (i >= n || !is_digit((unsigned char)tok[i]))
			return fail_at(ps, pos_plus(pos, i), "expected a digit after '.' in '%.*s'", (int)n, tok);
		if (scan_digits(tok, n, &i, 10, &clean) < 0)
			return fail_at(ps, pos_plus(pos, i), "'_' in a number must be between two digits");
	}
	if (i < n && (tok[i] == 'e' || tok[i] == 'E')) {
		is_float = true;
		buf_putc(&clean, 'e');
		i++;
		if (i < n && (tok[i] == '+' || tok[i] == '-'))
			buf_putc(&clean, tok[i++]);
		if (i >= n || !is_digit((unsigned char)tok[i]))
			return fail_at(ps, pos_plus(pos, i), "expected a digit in the exponent of '%.*s'", (int)n, tok);
		if (scan_digits(tok, n, &i, 10, &clean) < 0)
			return fail_at(ps, pos_plus(pos, i), "'_' in a number must be between two digits");
	}
	if (i < n)
		return fail_at(ps, pos_plus(pos, i), "unexpected '%c' in number '%.*s'", tok[i], (int)n, tok);

	buf_putc(&clean, '\0');
	if (!is_float) {
		bool neg = tok[0] == '-';
		const char *d = clean.p + (int_start > 0);

		if (!digits_to_int(d, int_digits, 10, neg, &v->u.integer))
			return fail_at(ps, pos, "integer '%.*s' does not fit in 64 bits", (int)n, tok);
		v->type = TOML_INTEGER;
		return 0;
	}
	/* strtod follows LC_NUMERIC: toml_parse runs under the C locale. */
	errno = 0;
	v->u.flt = strtod(clean.p, &end);
	if (end != clean.p + clean.len - 1)
		return fail_at(ps, pos, "invalid float '%.*s'", (int)n, tok);
	if (errno == ERANGE && isinf(v->u.flt))
		return fail_at(ps, pos, "float '%.*s' is out of range", (int)n, tok);
	v->type = TOML_FLOAT;
	return 0;
}

static int parse_number(struct parser *ps, struct toml_value *v)
{
	struct toml_pos pos = here(ps);
	const char *tok = ps->p;
	size_t n = 0, i = 0;
	int r;

	while (is_number_char(peek_at(ps, n)))
		n++;
	if (tok[0] == '+' || tok[0] == '-')
		i = 1;
	if (n - i == 3 && (memcmp(tok + i, "inf", 3) == 0 || memcmp(tok + i, "nan", 3) == 0)) {
		v->type = TOML_FLOAT;
		v->u.flt = tok[i] == 'i' ? INFINITY : NAN;
		if (tok[0] == '-')
			v->u.flt = -v->u.flt;
		advance_n(ps, n);
		return 0;
	}
	if (n - i >= 2 && tok[i] == '0' && (tok[i + 1] == 'x' || tok[i + 1] == 'o' || tok[i + 1] == 'b')) {
		if (i > 0)
			return fail_at(ps, pos, "a sign is not allowed on hexadecimal, octal or binary integers");
		r = parse_radix_int(ps, pos, tok, n, v);
	} else if (n > i && is_alpha((unsigned char)tok[i])) {
		return fail_at(ps, pos, "invalid value '%.*s' (expected a number)", (int)(n > 40 ? 40 : n), tok);
	} else {
		r = parse_decimal(ps, pos, tok, n, i, v);
	}
	if (r < 0)
		return -1;
	advance_n(ps, n);
	return 0;
}

/* ---- dates and times ---- */

static bool digits_at(const struct parser *ps, size_t k, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_digit(peek_at(ps, k + i)))
			return false;
	return true;
}

static bool looks_like_date(const struct parser *ps)
{
	return digits_at(ps, 0, 4) && peek_at(ps, 4) == '-';
}

static bool looks_like_time_at(const struct parser *ps, size_t k)
{
	return digits_at(ps, k, 2) && peek_at(ps, k + 2) == ':';
}

/* Exactly n digits, as a number. */
static int read_fixed(struct parser *ps, size_t n, const char *what, int *out)
{
	size_t i;

	*out = 0;
	if (!digits_at(ps, 0, n))
		return fail(ps, "expected %zu-digit %s, found %s", n, what, found(ps).s);
	for (i = 0; i < n; i++) {
		*out = *out * 10 + (peek(ps) - '0');
		advance(ps);
	}
	return 0;
}

static int expect_char(struct parser *ps, int c, const char *after)
{
	if (peek(ps) != c)
		return fail(ps, "expected '%c' after %s, found %s", c, after, found(ps).s);
	advance(ps);
	return 0;
}

static int days_in_month(int year, int month)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

static int parse_date(struct parser *ps, struct toml_datetime *dt)
{
	struct toml_pos pos;

	if (read_fixed(ps, 4, "year", &dt->year) < 0 || expect_char(ps, '-', "the year") < 0)
		return -1;
	pos = here(ps);
	if (read_fixed(ps, 2, "month", &dt->month) < 0)
		return -1;
	if (dt->month < 1 || dt->month > 12)
		return fail_at(ps, pos, "month %02d is out of range (01-12)", dt->month);
	if (expect_char(ps, '-', "the month") < 0)
		return -1;
	pos = here(ps);
	if (read_fixed(ps, 2, "day", &dt->day) < 0)
		return -1;
	if (dt->day < 1 || dt->day > days_in_month(dt->year, dt->month))
		return fail_at(ps, pos, "day %02d is out of range for %04d-%02d", dt->day, dt->year, dt->month);
	return 0;
}

static int parse_time(struct parser *ps, struct toml_datetime *dt, char *frac, size_t frac_cap)
{
	struct toml_pos pos = here(ps);
	size_t nfrac = 0;

	if (read_fixed(ps, 2, "hour", &dt->hour) < 0)
		return -1;
	if (dt->hour > 23)
		return fail_at(ps, pos, "hour %02d is out of range (00-23)", dt->hour);
	if (expect_char(ps, ':', "the hour") < 0)
		return -1;
	pos = here(ps);
	if (read_fixed(ps, 2, "minute", &dt->minute) < 0)
		return -1;
	if (dt->minute > 59)
		return fail_at(ps, pos, "minute %02d is out of range (00-59)", dt->minute);
	if (peek(ps) != ':')
		return fail(ps, "expected ':' and seconds after the minute (times are HH:MM:SS), found %s",
			    found(ps).s);
	advance(ps);
	pos = here(ps);
	if (read_fixed(ps, 2, "second", &dt->second) < 0)
		return -1;
	/* 60 is a leap second, which RFC 3339 allows. */
	if (dt->second > 60)
		return fail_at(ps, pos, "second %02d is out of range (00-60)", dt->second);
	if (peek(ps) == '.') {
		advance(ps);
		if (!is_digit(peek(ps)))
			return fail(ps, "expected digits after '.' in the seconds, found %s", found(ps).s);
		/* Precision beyond nanoseconds is truncated, as TOML asks. */
		while (is_digit(peek(ps))) {
			if (nfrac < 9) {
				frac[nfrac++] = (char)peek(ps);
				dt->nanosecond = dt->nanosecond * 10 + (peek(ps) - '0');
			}
			advance(ps);
		}
		for (size_t k = nfrac; k < 9; k++)
			dt->nanosecond *= 10;
	}
	frac[nfrac < frac_cap ? nfrac : frac_cap - 1] = '\0';
	return 0;
}

/* Returns 1 if an offset was read, 0 if there is none. */
static int parse_offset(struct parser *ps, struct toml_datetime *dt, char *sign)
{
	struct toml_pos pos;
	int c = peek(ps), h, m;

	if (c == 'Z' || c == 'z') {
		advance(ps);
		*sign = 'Z';
		return 1;
	}
	if (c != '+' && c != '-')
		return 0;
	*sign = (char)c;
	advance(ps);
	pos = here(ps);
	if (read_fixed(ps, 2, "offset hour", &h) < 0)
		return -1;
	if (h > 23)
		return fail_at(ps, pos, "offset hour %02d is out of range (00-23)", h);
	if (expect_char(ps, ':', "the offset hour") < 0)
		return -1;
	pos = here(ps);
	if (read_fixed(ps, 2, "offset minute", &m) < 0)
		return -1;
	if (m > 59)
		return fail_at(ps, pos, "offset minute %02d is out of range (00-59)", m);
	dt->offset_minutes = (c == '-' ? -1 : 1) * (h * 60 + m);
	return 1;
}

static int parse_datetime(struct parser *ps, struct toml_value *v)
{
	struct toml_datetime *dt = &v->u.dt;
	bool has_date = false, has_time = true;
	char frac[10] = "", sign = 0;
	int n = 0, r;

	if (looks_like_date(ps)) {
		if (parse_date(ps, dt) < 0)
			return -1;
		has_date = true;
		if (peek(ps) == 'T' || peek(ps) == 't') {
			advance(ps);
			if (!looks_like_time_at(ps, 0))
				return fail(ps, "expected a time (HH:MM:SS) after 'T', found %s", found(ps).s);
		} else if (peek(ps) == ' ' && looks_like_time_at(ps, 1)) {
			advance(ps);
		} else {
			has_time = false;
		}
	}
	if (has_time && parse_time(ps, dt, frac, sizeof(frac)) < 0)
		return -1;
	if (has_date && has_time) {
		r = parse_offset(ps, dt, &sign);
		if (r < 0)
			return -1;
	}
	if (is_number_char(peek(ps)) || peek(ps) == ':')
		return fail(ps, "unexpected %s after date/time", found(ps).s);

	v->type = !has_time   ? TOML_DATE_LOCAL
		  : !has_date ? TOML_TIME_LOCAL
		  : sign      ? TOML_DATETIME
			      : TOML_DATETIME_LOCAL;
	if (has_date)
		n += snprintf(dt->text + n, sizeof(dt->text) - (size_t)n, "%04d-%02d-%02d%s", dt->year, dt->month,
			      dt->day, has_time ? "T" : "");
	if (has_time)
		n += snprintf(dt->text + n, sizeof(dt->text) - (size_t)n, "%02d:%02d:%02d%s%s", dt->hour, dt->minute,
			      dt->second, frac[0] ? "." : "", frac);
	if (sign == 'Z')
		snprintf(dt->text + n, sizeof(dt->text) - (size_t)n, "Z");
	else if (sign)
		snprintf(dt->text + n, sizeof(dt->text) - (size_t)n, "%c%02d:%02d", sign, abs(dt->offset_minutes) / 60,
			 abs(dt->offset_minutes) % 60);
	return 0;
}

/* ---- values ---- */

static int parse_value(struct parser *ps, int depth, struct toml_value **out);
static int parse_keyval(struct parser *ps, struct toml_value *table);

static int parse_array(struct parser *ps, int depth, struct toml_value **out)
{
	cleanup_value struct toml_value *a = NULL;
	struct toml_pos pos = here(ps);

	if (check_depth(ps, pos, depth) < 0)
		return -1;
	a = value_new(TOML_ARRAY, pos, depth);
	a->off = offset(ps);
	advance(ps); /* '[' */
	for (;;) {
		struct toml_value *item;

		if (skip_ws_nl_comments(ps) < 0)
			return -1;
		if (peek(ps) == ']')
			break;
		if (parse_value(ps, depth + 1, &item) < 0)
			return -1;
		array_push(a, item);
		if (skip_ws_nl_comments(ps) < 0)
			return -1;
		if (peek(ps) == ',') {
			advance(ps);
			continue;
		}
		if (peek(ps) != ']')
			return fail(ps, "expected ',' or ']' after an array element, found %s", found(ps).s);
		break;
	}
	advance(ps); /* ']' */
	a->end = offset(ps);
	*out = steal_ptr(&a);
	return 0;
}

static int parse_inline_table(struct parser *ps, int depth, struct toml_value **out)
{
	cleanup_value struct toml_value *t = NULL;
	struct toml_pos pos = here(ps);

	if (check_depth(ps, pos, depth) < 0)
		return -1;
	t = value_new(TOML_TABLE, pos, depth);
	t->flags = F_INLINE;
	t->off = offset(ps);
	advance(ps); /* '{' */
	skip_ws(ps);
	if (peek(ps) != '}') {
		for (;;) {
			skip_ws(ps);
			if (at_newline(ps))
				return fail(ps, "an inline table must be on one line (TOML 1.0)");
			if (parse_keyval(ps, t) < 0)
				return -1;
			skip_ws(ps);
			if (peek(ps) == '}')
				break;
			if (peek(ps) != ',')
				return fail(ps,
					    "expected ',' or '}' after a key/value pair in an inline table, found %s",
					    found(ps).s);
			advance(ps);
			skip_ws(ps);
			if (peek(ps) == '}')
				return fail(ps, "trailing comma is not allowed in an inline table");
		}
	}
	advance(ps); /* '}' */
	t->end = offset(ps);
	*out = steal_ptr(&t);
	return 0;
}

static int parse_scalar_word(struct parser *ps, struct toml_value *v)
{
	struct toml_pos pos = here(ps);
	size_t n = 0;

	while (is_number_char(peek_at(ps, n)))
		n++;
	if (n == 4 && memcmp(ps->p, "true", 4) == 0) {
		v->type = TOML_BOOL;
		v->u.boolean = true;
	} else if (n == 5 && memcmp(ps->p, "false", 5) == 0) {
		v->type = TOML_BOOL;
		v->u.boolean = false;
	} else if (n == 3 && (memcmp(ps->p, "inf", 3) == 0 || memcmp(ps->p, "nan", 3) == 0)) {
		return parse_number(ps, v);
	} else {
		return fail_at(ps, pos, "invalid value '%.*s' (expected true, false, inf, nan, a number or a string)",
			       (int)(n > 40 ? 40 : n), ps->p);
	}
	advance_n(ps, n);
	return 0;
}

static int parse_value(struct parser *ps, int depth, struct toml_value **out)
{
	cleanup_value struct toml_value *v = NULL;
	cleanup_buf struct buf b = {0};
	int c = peek(ps), r;

	if (++ps->values > TOML_MAX_VALUES)
		return fail(ps, "more than %u values: the most moat reads in one file", TOML_MAX_VALUES);
	if (c == '[')
		return parse_array(ps, depth, out);
	if (c == '{')
		return parse_inline_table(ps, depth, out);
	/* A type that owns no memory until the real one is known, so that
	 * freeing a half-parsed value is safe. */
	v = value_new(TOML_BOOL, here(ps), depth);
	v->off = offset(ps);
	if (c == '"' || c == '\'') {
		if (parse_string(ps, &b) < 0)
			return -1;
		v->type = TOML_STRING;
		v->u.str.ptr = buf_finish(&b, &v->u.str.len);
		r = 0;
	} else if (is_alpha(c)) {
		r = parse_scalar_word(ps, v);
	} else if (is_digit(c) && (looks_like_date(ps) || looks_like_time_at(ps, 0))) {
		r = parse_datetime(ps, v);
	} else if (is_digit(c) || c == '+' || c == '-') {
		r = parse_number(ps, v);
	} else {
		return fail(ps, "expected a value, found %s", found(ps).s);
	}
	if (r < 0)
		return -1;
	v->end = offset(ps);
	*out = steal_ptr(&v);
	return 0;
}

/* key = value, into `table`: the current section's table or an inline
 * table being read. */
static int parse_keyval(struct parser *ps, struct toml_value *table)
{
	cleanup_key struct key k = {0};
	struct toml_value *t = table, *v;
	const struct toml_keyval *kv;
	struct key_part *last;
	size_t i;

	if (parse_key(ps, &k) < 0)
		return -1;
	if (peek(ps) != '=')
		return fail(ps, "expected '=' after key %s, found %s", show_path(&k, k.n).s, found(ps).s);
	advance(ps);
	skip_ws(ps);

	for (i = 0; i + 1 < k.n; i++) {
		kv = table_find(t, k.parts[i].s, k.parts[i].len);
		if (!kv) {
			t = table_add_table(ps, t, &k.parts[i], F_DOTTED);
			if (!t)
				return -1;
			continue;
		}
		v = kv->value;
		if (v->type == TOML_TABLE && (v->flags & F_INLINE))
			return fail_at(ps, k.parts[i].pos, "cannot add keys to inline table %s",
				       show_path(&k, i + 1).s);
		if (v->type == TOML_TABLE && !(v->flags & F_DOTTED))
			return fail_at(
			    ps, k.parts[i].pos,
			    "cannot add keys to table %s with a dotted key: it is defined by a [table] header",
			    show_path(&k, i + 1).s);
		if (v->type != TOML_TABLE)
			return fail_at(ps, k.parts[i].pos, "key %s is already defined as %s, not a table",
				       show_path(&k, i + 1).s, article_type(v));
		t = v;
	}
	last = &k.parts[k.n - 1];
	if (table_find(t, last->s, last->len))
		return fail_at(ps, last->pos, "duplicate key %s", show_path(&k, k.n).s);
	if (parse_value(ps, t->depth + 1, &v) < 0)
		return -1;
	table_insert(t, steal_ptr(&last->s), last->len, last->pos, last->off, v);
	return 0;
}

/* [a.b.c] or [[a.b.c]]: find or create the table that the following
 * key/value lines go into. */
static int parse_header(struct parser *ps)
{
	cleanup_key struct key k = {0};
	struct toml_pos pos = here(ps);
	struct toml_value *t = ps->root, *v;
	const struct toml_keyval *kv;
	struct key_part *last;
	size_t start = offset(ps);
	bool aot;
	size_t i;

	advance(ps); /* '[' */
	aot = peek(ps) == '[';
	if (aot)
		advance(ps);
	if (parse_key(ps, &k) < 0)
		return -1;
	if (peek(ps) != ']' || (aot && peek_at(ps, 1) != ']'))
		return fail(ps, "expected '%s' to close the table header, found %s", aot ? "]]" : "]", found(ps).s);
	advance_n(ps, aot ? 2 : 1);

	for (i = 0; i + 1 < k.n; i++) {
		kv = table_find(t, k.parts[i].s, k.parts[i].len);
		if (!kv) {
			t = table_add_table(ps, t, &k.parts[i], 0);
			if (!t)
				return -1;
			continue;
		}
		v = kv->value;
		if (v->type == TOML_ARRAY && (v->flags & F_AOT)) {
			/* [[a]] then [a.b]: b goes into the latest element of a. */
			t = v->u.arr.items[v->u.arr.len - 1];
		} else if (v->type == TOML_TABLE && !(v->flags & F_INLINE)) {
			t = v;
		} else {
			return fail_at(ps, k.parts[i].pos, "cannot define a table inside %s: it is %s",
				       show_path(&k, i + 1).s, article_type(v));
		}
	}

	last = &k.parts[k.n - 1];
	kv = table_find(t, last->s, last->len);
	if (aot) {
		struct toml_value *arr, *elem;

		if (kv && !(kv->value->type == TOML_ARRAY && (kv->value->flags & F_AOT)))
			return fail_at(ps, last->pos, "cannot define array of tables %s: it is already %s",
				       show_path(&k, k.n).s, article_type(kv->value));
		if (kv) {
			arr = kv->value;
		} else {
			if (check_depth(ps, last->pos, t->depth + 1) < 0)
				return -1;
			arr = value_new(TOML_ARRAY, pos, t->depth + 1);
			arr->flags = F_AOT;
			arr->off = arr->end = start;
			table_insert(t, steal_ptr(&last->s), last->len, last->pos, last->off, arr);
		}
		if (check_depth(ps, pos, arr->depth + 1) < 0)
			return -1;
		elem = value_new(TOML_TABLE, pos, arr->depth + 1);
		elem->flags = F_EXPLICIT;
		elem->off = start;
		array_push(arr, elem);
		ps->cur = ps->section = elem;
		return 0;
	}
	if (!kv) {
		t = table_add_table(ps, t, last, F_EXPLICIT);
		if (!t)
			return -1;
		t->pos = pos;
		t->off = start;
		ps->cur = ps->section = t;
		return 0;
	}
	v = kv->value;
	if (v->type != TOML_TABLE || (v->flags & F_INLINE))
		return fail_at(ps, last->pos, "cannot define table %s: it is already %s", show_path(&k, k.n).s,
			       article_type(v));
	if (v->flags & F_EXPLICIT)
		return fail_at(ps, last->pos, "table %s is defined twice", show_path(&k, k.n).s);
	if (v->flags & F_DOTTED)
		return fail_at(ps, last->pos, "cannot define table %s: it is already defined by dotted keys",
			       show_path(&k, k.n).s);
	/* It was only implied by an earlier [a.b.c]: this is its definition. */
	v->flags |= F_EXPLICIT;
	v->pos = pos;
	v->off = start;
	ps->cur = ps->section = v;
	return 0;
}

/* The section of the last header ends where the line `at` begins. */
static void end_section(struct parser *ps, size_t at)
{
	if (ps->section)
		ps->section->end = at;
	ps->section = NULL;
}

static int parse_document(struct parser *ps)
{
	for (;;) {
		size_t line_start = offset(ps);
		int c;

		skip_ws(ps);
		c = peek(ps);
		if (c < 0) {
			end_section(ps, offset(ps));
			return 0;
		}
		if (at_newline(ps)) {
			skip_newline(ps);
			continue;
		}
		if (c == '#') {
			if (expect_eol(ps, "comment") < 0)
				return -1;
			continue;
		}
		if (c == '[') {
			end_section(ps, line_start);
			if (parse_header(ps) < 0 || expect_eol(ps, "table header") < 0)
				return -1;
			continue;
		}
		if (parse_keyval(ps, ps->cur) < 0 || expect_eol(ps, "value") < 0)
			return -1;
	}
}

/* The whole input must be UTF-8: checked first, so that everything after
 * can copy multi-byte characters without looking at them. */
static int check_utf8(struct parser *ps)
{
	const unsigned char *s = (const unsigned char *)ps->p;
	size_t len = (size_t)(ps->end - ps->p), i = 0;
	int line = 1, col = 1;
	uint32_t cp;

	while (i < len) {
		size_t n = utf8_seq(s + i, len - i, &cp);

		if (n == 0) {
			ps->err->line = line;
			ps->err->col = col;
			snprintf(ps->err->msg, sizeof(ps->err->msg), "invalid UTF-8 (byte 0x%02X)", (unsigned)s[i]);
			return -1;
		}
		if (cp == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
		i += n;
	}
	return 0;
}

int toml_parse(const char *buf, size_t len, struct toml_value **out, struct toml_error *err)
{
	struct parser ps = {0};
	locale_t c_locale, old = (locale_t)0;
	int r;

	memset(err, 0, sizeof(*err));
	ps.err = err;
	if (len > TOML_MAX_INPUT) {
		err->line = 1;
		err->col = 1;
		snprintf(err->msg, sizeof(err->msg), "input is larger than the limit of %u bytes", TOML_MAX_INPUT);
		return -1;
	}
	ps.start = ps.p = len ? buf : "";
	ps.end = ps.p + len;
	ps.line = 1;
	ps.col = 1;
	if (check_utf8(&ps) < 0)
		return -1;
	/* A byte order mark is allowed at the very start, and is invisible. */
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		ps.p += 3;

	ps.root = value_new(TOML_TABLE, here(&ps), 0);
	ps.root->flags = F_EXPLICIT;
	ps.root->end = len;
	ps.cur = ps.root;

	/* Floats are read with strtod, which follows LC_NUMERIC: whatever
	 * locale the program runs in, TOML's decimal point is '.'. */
	c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (c_locale)
		old = uselocale(c_locale);
	r = parse_document(&ps);
	if (c_locale) {
		uselocale(old);
		freelocale(c_locale);
	}
	if (r < 0) {
		toml_free(ps.root);
		return -1;
	}
	*out = ps.root;
	return 0;
}

/* ---- lookup ---- */

struct toml_value *toml_table_getn(const struct toml_value *table, const char *key, size_t key_len)
{
	const struct toml_keyval *kv;

	if (!table || table->type != TOML_TABLE || !key)
		return NULL;
	kv = table_find(table, key, key_len);
	return kv ? kv->value : NULL;
}

struct toml_value *toml_table_get(const struct toml_value *table, const char *key)
{
	return key ? toml_table_getn(table, key, strlen(key)) : NULL;
}

const struct toml_keyval *toml_table_entry(const struct toml_value *table, const char *key)
{
	if (!table || table->type != TOML_TABLE || !key)
		return NULL;
	return table_find(table, key, strlen(key));
}

size_t toml_table_len(const struct toml_value *table)
{
	return table && table->type == TOML_TABLE ? table->u.tab.len : 0;
}

const struct toml_keyval *toml_table_at(const struct toml_value *table, size_t i)
{
	return i < toml_table_len(table) ? &table->u.tab.items[i] : NULL;
}

size_t toml_array_len(const struct toml_value *array)
{
	return array && array->type == TOML_ARRAY ? array->u.arr.len : 0;
}

struct toml_value *toml_array_at(const struct toml_value *array, size_t i)
{
	return i < toml_array_len(array) ? array->u.arr.items[i] : NULL;
}

const char *toml_type_name(enum toml_type type)
{
	switch (type) {
	case TOML_STRING:
		return "string";
	case TOML_INTEGER:
		return "integer";
	case TOML_FLOAT:
		return "float";
	case TOML_BOOL:
		return "bool";
	case TOML_DATETIME:
		return "datetime";
	case TOML_DATETIME_LOCAL:
		return "datetime-local";
	case TOML_DATE_LOCAL:
		return "date-local";
	case TOML_TIME_LOCAL:
		return "time-local";
	case TOML_ARRAY:
		return "array";
	case TOML_TABLE:
		return "table";
	case TOML_NULL:
		return "null";
	}
	return "unknown";
}
