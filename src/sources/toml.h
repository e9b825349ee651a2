/* A TOML 1.0 parser (https://toml.io/en/v1.0.0) for moat's config files.
 *
 * toml_parse() turns a buffer into a tree of `struct toml_value`: the root is
 * a table; tables keep their keys in document order.  Every key and every
 * value remembers where it starts in the source (1-based line and column,
 * columns counted in characters), so the config loader can point at
 * `file:line:col` when a key or value is wrong, and the bytes it spans, so
 * that `moat mcp wrap` can replace a value and keep every other byte.
 *
 * The parser trusts nothing in its input: the size is capped, nesting depth
 * is capped (so no input can exhaust the stack, here or in code walking the
 * tree), the text must be valid UTF-8, and every rule of TOML 1.0 is
 * enforced.  The first error stops parsing and is reported with its
 * position; no partial tree is returned. */
#ifndef MOAT_SOURCES_TOML_H
#define MOAT_SOURCES_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Inputs above this are refused: a config file has no business being larger,
 * and it keeps every line and column within an int. */
#define TOML_MAX_INPUT (16u * 1024 * 1024)
/* And at most this many values (a JSON file's too: sources/config_json.c):
 * 16 MB of `[1,1,1,...]` made ~1 GB of tree (red-team 3 fuzz), and a
 * cloned repository's .mcp.json is read by `moat mcp list`.  A real
 * config has thousands. */
#define TOML_MAX_VALUES 1000000u

/* Deepest tree allowed: the root table is depth 0, each table, array or
 * inline table below it one more.  Keys with many dots count too, since they
 * create nested tables. */
#define TOML_MAX_DEPTH 128

enum toml_type {
	TOML_STRING,
	TOML_INTEGER,
	TOML_FLOAT,
	TOML_BOOL,
	TOML_DATETIME,	     /* offset date-time: 1979-05-27T07:32:00Z */
	TOML_DATETIME_LOCAL, /* 1979-05-27T07:32:00 */
	TOML_DATE_LOCAL,     /* 1979-05-27 */
	TOML_TIME_LOCAL,     /* 07:32:00 */
	TOML_ARRAY,
	TOML_TABLE,
	TOML_NULL, /* JSON's null, in a JSON config's tree; the TOML parser makes none */
};

struct toml_pos {
	int line, col; /* 1-based */
};

struct toml_error {
	int line, col; /* where the problem is, 1-based */
	char msg[256]; /* what was expected, e.g. "expected '=' after key" */
};

/* Any of the four date/time types.  Fields a type does not have are 0. */
struct toml_datetime {
	int year, month, day;
	int hour, minute, second;
	int nanosecond;	    /* fractional seconds, truncated to nanoseconds */
	int offset_minutes; /* TOML_DATETIME only: east of UTC; Z is 0 */
	/* Normalised spelling: 'T' between date and time, 'Z' for UTC, the
	 * fraction digits as written, e.g. "1979-05-27T07:32:00.5-07:00". */
	char text[40];
};

struct toml_value;

/* One entry of a table. */
struct toml_keyval {
	char *key;	     /* NUL-terminated; may also contain NUL (from \u0000) */
	size_t key_len;	     /* bytes, without the terminator */
	struct toml_pos pos; /* where the key starts (its last part for a.b.c) */
	size_t off;	     /* the same, in bytes from the start of the input */
	struct toml_value *value;
};

struct toml_value {
	enum toml_type type;
	struct toml_pos pos; /* where the value starts; for a table defined by a
			      * header, the header; for an implicit one, where it
			      * was first named */
	/* The bytes of the value in the input, [off, end): a string with its
	 * quotes, an array or inline table with its brackets.  A table
	 * defined by a [header] or [[header]] spans its section: from the
	 * header's '[' to the start of the line of the next header (or the
	 * end of the input).  A table that was only implied (by a dotted key,
	 * or as the parent of a header) has end == off, where it was first
	 * named; the root spans the whole input. */
	size_t off, end;
	union {
		struct {
			char *ptr; /* NUL-terminated UTF-8; may contain NUL */
			size_t len;
		} str;
		int64_t integer;
		double flt;
		bool boolean;
		struct toml_datetime dt;
		struct {
			struct toml_value **items;
			size_t len, cap;
		} arr;
		struct {
			struct toml_keyval *items; /* in document order */
			size_t len, cap;
			size_t *index; /* private: hash index for large tables */
			size_t index_cap;
		} tab;
	} u;
	unsigned int flags; /* private to the parser */
	int depth;	    /* private to the parser */
};

/* Parse `len` bytes of `buf` (need not be NUL-terminated).  On success
 * stores the root table in *out (free it with toml_free) and returns 0; on
 * failure fills *err and returns -1, leaving *out untouched. */
int toml_parse(const char *buf, size_t len, struct toml_value **out, struct toml_error *err);

void toml_free(struct toml_value *v);

/* The value of `key` in `table`, or NULL if absent or `table` is not a table.
 * toml_table_getn takes a key that may contain NUL. */
struct toml_value *toml_table_get(const struct toml_value *table, const char *key);
struct toml_value *toml_table_getn(const struct toml_value *table, const char *key, size_t key_len);
/* The entry for `key`, with the key's own position; NULL if absent. */
const struct toml_keyval *toml_table_entry(const struct toml_value *table, const char *key);

/* Iteration: entries 0 .. toml_table_len()-1 in document order; items of an
 * array likewise.  Out-of-range indexes and wrong types give 0 / NULL. */
size_t toml_table_len(const struct toml_value *table);
const struct toml_keyval *toml_table_at(const struct toml_value *table, size_t i);
size_t toml_array_len(const struct toml_value *array);
struct toml_value *toml_array_at(const struct toml_value *array, size_t i);

/* "string", "integer", "float", "bool", "datetime", "datetime-local",
 * "date-local", "time-local", "array", "table": toml-test's names, also
 * good in messages ("expected a string, got an integer" is the caller's). */
const char *toml_type_name(enum toml_type type);

#endif
