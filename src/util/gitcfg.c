#include "util/gitcfg.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/mem.h"

/* A growing NUL-terminated string. */
struct buf {
	char *text;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		b->cap = (b->len + len + 1) * 2;
		b->text = moat_xrealloc(b->text, b->cap);
	}
	memcpy(b->text + b->len, s, len);
	b->len += len;
	b->text[b->len] = '\0';
}

static void buf_addc(struct buf *b, int c)
{
	char ch = (char)c;

	buf_add(b, &ch, 1);
}

/* The parser's position: git reads "\r\n" as "\n" and the end as a last
 * "\n". */
struct reader {
	const char *s, *end;
	int line;
	bool eof;
};

static int next_char(struct reader *r)
{
	int c;

	if (r->s >= r->end) {
		r->eof = true;
		return '\n';
	}
	c = (unsigned char)*r->s++;
	if (c == '\r' && r->s < r->end && *r->s == '\n')
		c = (unsigned char)*r->s++;
	if (c == '\n')
		r->line++;
	return c;
}

/* The rest of a value, as git's parse_value; NULL (error) for an unknown
 * escape or an unclosed quote. */
static char *parse_value(struct reader *r)
{
	struct buf v = {0};
	int quote = 0, comment = 0, space = 0;

	buf_add(&v, "", 0);
	for (;;) {
		int c = next_char(r);

		if (c == '\n') {
			if (quote) {
				free(v.text);
				return NULL;
			}
			return v.text;
		}
		if (comment)
			continue;
		if (isspace(c) && !quote) {
			if (v.len)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = 1;
			continue;
		}
		for (; space; space--)
			buf_add(&v, " ", 1);
		if (c == '\\') {
			c = next_char(r);
			switch (c) {
			case '\n':
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				free(v.text);
				return NULL;
			}
			buf_addc(&v, c);
			continue;
		}
		if (c == '"') {
			quote = 1 - quote;
			continue;
		}
		buf_addc(&v, c);
	}
}

/* "[section]", "[section "sub"]" or the old "[section.sub]", after the
 * '['; *sub NULL when there is none. */
static int parse_header(struct reader *r, char **section, char **sub)
{
	struct buf name = {0}, s = {0};
	int c;

	buf_add(&name, "", 0);
	for (;;) {
		c = next_char(r);
		if (r->eof)
			goto bad;
		if (c == ']')
			break;
		if (isspace(c)) {
			/* an extended header: spaces, "subsection", ] */
			do
				c = next_char(r);
			while (!r->eof && c != '\n' && isspace(c));
			if (c != '"')
				goto bad;
			buf_add(&s, "", 0);
			for (;;) {
				c = next_char(r);
				if (r->eof || c == '\n')
					goto bad;
				if (c == '"')
					break;
				if (c == '\\') {
					c = next_char(r);
					if (r->eof || c == '\n')
						goto bad;
				}
				buf_addc(&s, c);
			}
			if (next_char(r) != ']')
				goto bad;
			break;
		}
		if (!isalnum(c) && c != '.' && c != '-')
			goto bad;
		buf_addc(&name, tolower(c));
	}
	if (!name.len)
		goto bad;
	if (!s.text) {
		/* [section.sub]: the part after the first dot */
		char *dot = strchr(name.text, '.');
		if (dot) {
			s.text = moat_xstrdup(dot + 1);
			*dot = '\0';
		}
	} else if (strchr(name.text, '.')) {
		goto bad;
	}
	*section = name.text;
	*sub = s.text;
	return 0;
bad:
	free(name.text);
	free(s.text);
	return -1;
}

int gitcfg_parse(const char *text, size_t len, const char *file, gitcfg_fn fn, void *ctx, char *bad, size_t bad_len)
{
	struct reader r = {.s = text, .end = text + len, .line = 1};
	cleanup_free char *section = NULL, *sub = NULL;
	int c;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		r.s += 3;
	for (;;) {
		c = next_char(&r);
		if (r.eof)
			return 0;
		if (c == '\n' || isspace(c))
			continue;
		if (c == '#' || c == ';') {
			while (!r.eof && c != '\n')
				c = next_char(&r);
			continue;
		}
		if (c == '[') {
			int line = r.line;

			free(section);
			free(sub);
			section = sub = NULL;
			if (parse_header(&r, &section, &sub) < 0) {
				snprintf(bad, bad_len, "%s:%d: a bad section header", file, line);
				return -1;
			}
			continue;
		}
		if (!isalpha(c)) {
			snprintf(bad, bad_len, "%s:%d: a line that is neither a section nor a key", file, r.line);
			return -1;
		}
		{
			struct buf key = {0};
			cleanup_free char *value = NULL;
			int line = r.line;

			buf_addc(&key, tolower(c));
			for (;;) {
				c = next_char(&r);
				if (r.eof || !(isalnum(c) || c == '-'))
					break;
				buf_addc(&key, tolower(c));
			}
			while (c == ' ' || c == '\t')
				c = next_char(&r);
			if (c == '=') {
				value = parse_value(&r);
				if (!value) {
					free(key.text);
					snprintf(bad, bad_len, "%s:%d: a bad value (an unclosed quote or unknown escape)",
						 file, line);
					return -1;
				}
			} else if (c != '\n') {
				free(key.text);
				snprintf(bad, bad_len, "%s:%d: a key without '='", file, line);
				return -1;
			}
			if (!section) {
				free(key.text);
				snprintf(bad, bad_len, "%s:%d: a key before any section", file, line);
				return -1;
			}
			fn(ctx, section, sub, key.text, value);
			free(key.text);
		}
	}
}
