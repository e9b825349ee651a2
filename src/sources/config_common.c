/* What the config sources share: the file names policy origins point at,
 * the "did you mean" suggestion, the "FILE:LINE:COL: KEY: message" error,
 * key paths for messages, and the environment lookups and $VAR expansion
 * of env values (the command line looks up PATH and HOME with
 * config_getenv too). */
#include "sources/config_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "policy/env.h"
#include "util/mem.h"

/* ---- interned file names ---- */

/* Policy origins (struct moat_origin) point at the file name for as long
 * as the policy lives, which is longer than the config: the names are kept
 * for the life of the process.  One entry per distinct file. */
static struct {
	char **names;
	size_t n, cap;
} interned;

const char *config_intern(const char *s)
{
	size_t i;

	for (i = 0; i < interned.n; i++)
		if (strcmp(interned.names[i], s) == 0)
			return interned.names[i];
	interned.names = moat_xgrow(interned.names, &interned.cap, interned.n, sizeof(char *));
	interned.names[interned.n] = moat_xstrdup(s);
	return interned.names[interned.n++];
}

/* ---- suggestions ---- */

/* Levenshtein distance, for "did you mean"; long words are never close. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[65];

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* The known word `word` spells in other letter case ("SANDBOX"), else
 * the closest within 2 edits: a key in capitals is as far from moat's as
 * its length, but no less a typo of it. */
const char *config_suggest(const char *word, const char *const *known)
{
	const char *best = NULL;
	size_t best_d = 3, i;

	for (i = 0; known[i]; i++)
		if (strcasecmp(word, known[i]) == 0)
			return known[i];
	for (i = 0; known[i]; i++) {
		size_t d = edit_distance(word, known[i]);
		if (d < best_d) {
			best_d = d;
			best = known[i];
		}
	}
	return best;
}

/* ---- errors, the environment, key paths ---- */

int config_fail(struct moat_error *err, const struct moat_origin *o, const char *key, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key)
		return moat_error_set(err, MOAT_E_CONFIG, 0, "%s:%d:%d: %s: %s", o->source, o->line, o->col, key, msg);
	return moat_error_set(err, MOAT_E_CONFIG, 0, "%s:%d:%d: %s", o->source, o->line, o->col, msg);
}

const char *config_getenv(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

size_t config_invisible_at(const char *key, size_t len, size_t i, unsigned *cp)
{
	const unsigned char *k = (const unsigned char *)key + i;
	size_t left = len - i;

	*cp = 0;
	if (left >= 1 && k[0] == 0)
		return 1;
	if (left >= 2 && k[0] == 0xC2 && k[1] == 0xAD) {
		*cp = 0xAD;
		return 2;
	}
	if (left < 3)
		return 0;
	*cp = ((unsigned)(k[0] & 0x0F) << 12) | ((unsigned)(k[1] & 0x3F) << 6) | (k[2] & 0x3F);
	if ((k[0] & 0xF0) != 0xE0 || (k[1] & 0xC0) != 0x80 || (k[2] & 0xC0) != 0x80) {
		*cp = 0;
		return 0;
	}
	/* U+180E Mongolian vowel separator, U+200B-U+200F (zero-width
	 * space, non-joiner, joiner, LTR/RTL marks), U+202A-U+202E (bidi
	 * embeddings and overrides), U+2060-U+2064 (word joiner, invisible
	 * operators), U+2066-U+206F (bidi isolates, deprecated format
	 * characters), U+FEFF (byte order mark, zero-width no-break space). */
	if (*cp == 0x180E || (*cp >= 0x200B && *cp <= 0x200F) || (*cp >= 0x202A && *cp <= 0x202E) ||
	    (*cp >= 0x2060 && *cp <= 0x2064) || (*cp >= 0x2066 && *cp <= 0x206F) || *cp == 0xFEFF)
		return 3;
	*cp = 0;
	return 0;
}

char *config_key_visible(const char *key, size_t len, bool *hidden)
{
	char *out = moat_xmalloc(len + 1);
	size_t i = 0, o = 0, n;
	unsigned cp;

	*hidden = false;
	while (i < len) {
		if ((n = config_invisible_at(key, len, i, &cp))) {
			*hidden = true;
			i += n;
		} else {
			out[o++] = key[i++];
		}
	}
	out[o] = '\0';
	return out;
}

static bool bare_key(const char *k, size_t len)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

char *config_keypath(const char *parent, const char *key, size_t key_len)
{
	size_t plen = parent ? strlen(parent) : 0, i, o = 0;
	char *out = moat_xmalloc(plen + 4 + key_len * 6 + 1);

	if (plen) {
		memcpy(out, parent, plen);
		o = plen;
		out[o++] = '.';
	}
	if (bare_key(key, key_len)) {
		memcpy(out + o, key, key_len);
		o += key_len;
	} else {
		out[o++] = '"';
		for (i = 0; i < key_len; i++) {
			unsigned char c = (unsigned char)key[i];
			unsigned cp;
			size_t n = config_invisible_at(key, key_len, i, &cp);

			/* Written raw, the key would read as one of moat's. */
			if (n > 1) {
				o += (size_t)snprintf(out + o, 7, "\\u%04x", cp);
				i += n - 1;
			} else if (c == '"' || c == '\\') {
				out[o++] = '\\';
				out[o++] = (char)c;
			} else if (c < 0x20 || c == 0x7f) {
				o += (size_t)snprintf(out + o, 7, "\\u%04x", c);
			} else {
				out[o++] = (char)c;
			}
		}
		out[o++] = '"';
	}
	out[o] = '\0';
	return out;
}

/* "$NAME", "${NAME}" and "$$" (a literal '$'): the syntax of env values,
 * with the clients' "${NAME:-DEFAULT}" (Claude Code: DEFAULT, as written,
 * when NAME is unset or empty) and "${env:NAME}" (VS Code, Cursor).  With
 * `env` non-NULL the expansion is stored in *out (unset variables give "");
 * *has_ref says whether any variable was named.  On a syntax error returns
 * -1 with the bad reference at s[*bad_at .. + *bad_len]. */
int config_expand_vars(const char *s, char *const *env, char **out, bool *has_ref, size_t *bad_at, size_t *bad_len)
{
	size_t i = 0, len = strlen(s), o = 0, cap = len + 1;
	char *buf = out ? moat_xmalloc(cap) : NULL;
	bool refs = false;

	while (i < len) {
		const char *name, *val, *dflt = NULL;
		size_t nlen, skip, vlen, dlen = 0;

		if (s[i] != '$') {
			if (buf)
				buf[o++] = s[i];
			i++;
			continue;
		}
		if (s[i + 1] == '$') {
			if (buf)
				buf[o++] = '$';
			i += 2;
			continue;
		}
		if (s[i + 1] == '{') {
			const char *close = strchr(s + i + 2, '}');
			if (!close)
				goto bad_to_end;
			name = s + i + 2;
			nlen = (size_t)(close - name);
			skip = nlen + 3;
			if (nlen > 4 && strncmp(name, "env:", 4) == 0) {
				name += 4;
				nlen -= 4;
			}
			if ((dflt = memmem(name, nlen, ":-", 2))) {
				nlen = (size_t)(dflt - name);
				dflt += 2;
				dlen = (size_t)(close - dflt);
			}
		} else {
			name = s + i + 1;
			nlen = 0;
			while ((name[nlen] >= 'a' && name[nlen] <= 'z') || (name[nlen] >= 'A' && name[nlen] <= 'Z') ||
			       name[nlen] == '_' || (nlen > 0 && name[nlen] >= '0' && name[nlen] <= '9'))
				nlen++;
			skip = nlen + 1;
		}
		{
			char tmp[256];
			bool valid = nlen > 0 && nlen < sizeof(tmp);

			if (valid) {
				memcpy(tmp, name, nlen);
				tmp[nlen] = '\0';
				valid = env_name_valid(tmp);
			}
			if (!valid) {
				if (bad_at)
					*bad_at = i;
				if (bad_len)
					*bad_len = s[i + 1] == '{' ? skip : (s[i + 1] ? 2 : 1);
				free(buf);
				return -1;
			}
			refs = true;
			val = env ? config_getenv(env, tmp) : NULL;
		}
		vlen = val ? strlen(val) : 0;
		if (dflt && vlen == 0) {
			val = dflt;
			vlen = dlen;
		}
		if (buf && vlen) {
			if (o + vlen + (len - i) + 1 > cap) {
				cap = o + vlen + (len - i) + 1;
				buf = moat_xrealloc(buf, cap);
			}
			memcpy(buf + o, val, vlen);
			o += vlen;
		}
		i += skip;
	}
	if (buf) {
		buf[o] = '\0';
		*out = buf;
	}
	if (has_ref)
		*has_ref = refs;
	return 0;
bad_to_end:
	if (bad_at)
		*bad_at = i;
	if (bad_len)
		*bad_len = len - i;
	free(buf);
	return -1;
}

/* ---- limits the command line and the files share ---- */

void config_timeout_problem(double t, struct limit_problem *pb)
{
	pb->why[0] = pb->fix[0] = '\0';
	if (isnan(t) || t <= 0) {
		snprintf(pb->why, sizeof(pb->why), "expected a positive number of seconds");
		snprintf(pb->fix, sizeof(pb->fix), "give the seconds the command may run, e.g. 30 or 0.5");
	} else if (t > 1e9) {
		snprintf(pb->why, sizeof(pb->why), "more than 1000000000 seconds (31 years), the longest timeout");
		snprintf(pb->fix, sizeof(pb->fix), "give at most 1000000000, or no timeout for none");
	}
}

/* `n` above `max`: "more than MAX, WHAT", and the way out. */
static void above_max(long long n, long long max, const char *what, const char *none, struct limit_problem *pb)
{
	pb->why[0] = pb->fix[0] = '\0';
	if (n <= max)
		return;
	snprintf(pb->why, sizeof(pb->why), "more than %lld%s", max, what);
	snprintf(pb->fix, sizeof(pb->fix), "give at most %lld, or %s for none", max, none);
}

void config_cpu_problem(long long n, struct limit_problem *pb)
{
	above_max(n, 1000000000LL, " seconds (31 years) of CPU time, the largest limit moat counts", "no CPU limit",
		  pb);
}

void config_pids_problem(long long n, struct limit_problem *pb)
{
	above_max(n, 4194304LL, ", the most processes and threads the kernel has (PID_MAX_LIMIT)", "no --pids", pb);
}

void config_files_problem(long long n, struct limit_problem *pb)
{
	struct rlimit rl;

	pb->why[0] = pb->fix[0] = '\0';
	if (n <= 3) {
		snprintf(pb->why, sizeof(pb->why),
			 "a process starts with stdin, stdout and stderr open: it could not open one file more, not "
			 "even its libraries");
		snprintf(pb->fix, sizeof(pb->fix),
			 "give at least 4: the limit counts every descriptor, stdio included (most programs need 64 or "
			 "more)");
	} else if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
		   (unsigned long long)n > (unsigned long long)rl.rlim_max) {
		/* The child sets it after dropping its capabilities: the hard
		 * limit moat runs under is the most it may set. */
		snprintf(pb->why, sizeof(pb->why), "more than the hard limit moat runs under (ulimit -Hn: %llu)",
			 (unsigned long long)rl.rlim_max);
		snprintf(pb->fix, sizeof(pb->fix),
			 "give at most %llu; a hard limit is raised only by root, before moat starts",
			 (unsigned long long)rl.rlim_max);
	}
}
