/* What the config sources share (sources/config_common.c). */
#ifndef MOAT_SOURCES_CONFIG_COMMON_H
#define MOAT_SOURCES_CONFIG_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "util/err.h"

/* The word of the NULL-terminated `known` that `word` is a typo of -- the
 * same but for letter case, else the closest within 2 edits -- for a "did
 * you mean" hint; NULL when none is close. */
const char *config_suggest(const char *word, const char *const *known);
/* The bytes at key[i] that no editor shows: a NUL, or a character of
 * Unicode's format class a key may hide (a zero-width space or joiner, a
 * byte order mark, a soft hyphen, a bidi control); 0 when none is there.
 * *cp: the code point. */
size_t config_invisible_at(const char *key, size_t len, size_t i, unsigned *cp);
/* The key without those characters (a C string); *hidden: whether it held
 * any. */
char *config_key_visible(const char *key, size_t len, bool *hidden);
/* `parent` + "." + key, the key quoted when it is not a bare TOML key (its
 * control and invisible characters written \uXXXX). */
char *config_keypath(const char *parent, const char *key, size_t key_len);
/* The file name, kept for the life of the process (origins point at it). */
const char *config_intern(const char *s);
/* "FILE:LINE:COL: KEY: message" (KEY may be NULL), MOAT_E_CONFIG; -1. */
int config_fail(struct moat_error *err, const struct moat_origin *o, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* NAME's value in a NULL-terminated "NAME=VALUE" array, or NULL. */
const char *config_getenv(char *const *env, const char *name);
/* $NAME, ${NAME} and $$ in env values: with `env`, the expansion in *out
 * (unset names give ""); *has_ref: whether a variable was named.  A bad
 * reference gives -1 and its place, s[*bad_at .. *bad_at + *bad_len]. */
int config_expand_vars(const char *s, char *const *env, char **out, bool *has_ref, size_t *bad_at, size_t *bad_len);

/* What is wrong with a limit's value, for "OPTION VALUE: why" and its hint
 * `fix`; why[0] == '\0' when nothing is. */
struct limit_problem {
	char why[200];
	char fix[160];
};
/* --timeout / timeout: seconds, above 0 and at most a billion (31 years). */
void config_timeout_problem(double t, struct limit_problem *pb);
/* --cpu / cpu: seconds of CPU time, at most a billion as a timeout is
 * (moat counts the tree's time in microseconds, in 64 bits: a larger value
 * overflowed that count and killed the command at once). */
void config_cpu_problem(long long n, struct limit_problem *pb);
/* --pids / pids: at most the kernel's PID_MAX_LIMIT (4194304), which
 * pids.max refuses to exceed: a larger one failed only at run time, with
 * a hint about cgroups. */
void config_pids_problem(long long n, struct limit_problem *pb);
/* --files / files: more than the three descriptors every process starts
 * with, and no more than the hard limit moat runs under (no process of the
 * sandbox may raise its own past it). */
void config_files_problem(long long n, struct limit_problem *pb);

#endif
