/* git's configuration syntax, read as git itself reads it (git's config.c:
 * get_base_var, get_value, parse_value): sections, "subsections", keys,
 * quoting, escapes, line continuations, comments, "\r\n" as "\n", a
 * leading BOM.  One parser for what moat reads of git's files: the user's
 * global configuration it sanitizes (sources/gitconfig.c), and a
 * repository's own, for the paths git takes code from
 * (resolve/gitcode.c). */
#ifndef MOAT_UTIL_GITCFG_H
#define MOAT_UTIL_GITCFG_H

#include <stddef.h>

/* Each variable in order: the section and key lower-cased, the
 * subsection as written (NULL when there is none), the value unquoted and
 * unescaped (NULL for a bare key, which git takes as true). */
typedef void (*gitcfg_fn)(void *ctx, const char *section, const char *subsection, const char *key,
			  const char *value);

/* 0 when git would read the whole text; -1 where git refuses it, with
 * "FILE:LINE: what" in bad (the variables before that line have been
 * given to fn already: a caller that must take a file whole or not at all
 * collects them aside). */
int gitcfg_parse(const char *text, size_t len, const char *file, gitcfg_fn fn, void *ctx, char *bad, size_t bad_len);

#endif
