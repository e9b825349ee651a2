/* util/err.c: the cause of a failure survives -- out of descriptors is said
 * first, and a message too long for the buffer loses its middle, never the
 * errno's text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tap.h"
#include "util/err.h"

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

int main(void)
{
	struct moat_error err = {0};
	struct rlimit rl;
	char want[256], buf[300];
	char *long_path = repeat('d', 5000);

	/* errno text at the end, as before */
	moat_error_set(&err, MOAT_E_SYSTEM, ENOENT, "%s", "/x");
	moat_error_wrap(&err, "loading %s", "policy");
	is_str(err.message, "loading policy: /x: No such file or directory", "ENOENT: context: path: strerror");
	is_str(err.hint, "", "  no hint");

	/* EMFILE: the cause first, context after it, a hint */
	getrlimit(RLIMIT_NOFILE, &rl);
	moat_error_set(&err, MOAT_E_SYSTEM, EMFILE, "%s", "/");
	moat_error_wrap(&err, "built-in secrets: %s", "/etc/shadow");
	snprintf(want, sizeof(want), "moat ran out of file descriptors (RLIMIT_NOFILE %llu): built-in secrets: /etc/shadow: /",
		 (unsigned long long)rl.rlim_cur);
	is_str(err.message, want, "EMFILE: the cause leads, the context follows it");
	ok(strstr(err.hint, "ulimit -n") != NULL, "  the hint says how to raise it (%s)", err.hint);
	ok(strstr(err.message, "Too many open files") == NULL, "  no bare strerror");
	moat_error_hint(&err, "lift the protection with --unprotect .git/hooks");
	ok(strstr(err.hint, "ulimit -n") != NULL, "  a caller's hint about its path does not replace it");
	moat_error_fd_hint(&err, "/etc holds a denied path: raise the hard limit (ulimit -Hn)");
	is_str(err.hint, "/etc holds a denied path: raise the hard limit (ulimit -Hn)", "  a descriptor hint does");
	moat_error_set(&err, MOAT_E_SYSTEM, EACCES, "%s", "/x");
	moat_error_hint(&err, "chmod it");
	is_str(err.hint, "chmod it", "  other errors take the caller's hint");

	moat_error_set(&err, MOAT_E_SYSTEM, ENFILE, "opening %s", "/etc");
	ok(strncmp(err.message, "the system ran out of file descriptors", 38) == 0 && strstr(err.message, "opening /etc"),
	   "ENFILE: the system's table, first (%s)", err.message);
	ok(strstr(err.hint, "fs.file-max") != NULL, "  the hint names fs.file-max");

	/* Too long: the middle goes, the errno stays */
	moat_error_set(&err, MOAT_E_USAGE, ENAMETOOLONG, "%s", long_path);
	ok(strlen(err.message) < MOAT_ERR_MSG_MAX, "a 5000-byte path fits the message (%zu bytes)", strlen(err.message));
	ok(strstr(err.message, ": File name too long") != NULL &&
		   strcmp(err.message + strlen(err.message) - 20, ": File name too long") == 0,
	   "  and ends with the errno's text");
	ok(strstr(err.message, " bytes ...]") != NULL, "  the cut is marked");
	moat_error_wrap(&err, "command line: %s", long_path);
	ok(strncmp(err.message, "command line: ddd", 17) == 0 &&
		   strcmp(err.message + strlen(err.message) - 20, ": File name too long") == 0,
	   "  wrapped again: the context leads, the errno still ends it");
	moat_error_set(&err, MOAT_E_SYSTEM, EMFILE, "%s", long_path);
	moat_error_wrap(&err, "system: %s", long_path);
	ok(strncmp(err.message, "moat ran out of file descriptors", 32) == 0 && strlen(err.message) < MOAT_ERR_MSG_MAX,
	   "EMFILE with a long path: the cause still leads");

	/* UTF-8 is not cut inside a character */
	{
		char *u = malloc(3 * 2000 + 1);
		size_t i, bad = 0;

		for (i = 0; i < 2000; i++)
			memcpy(u + 3 * i, "\xe2\x82\xac", 3); /* EURO SIGN */
		u[3 * 2000] = '\0';
		moat_error_set(&err, MOAT_E_USAGE, ENOENT, "%s", u);
		for (i = 0; err.message[i]; i++) {
			unsigned char c = (unsigned char)err.message[i];
			if (c == 0xe2 && !((unsigned char)err.message[i + 1] == 0x82 && (unsigned char)err.message[i + 2] == 0xac))
				bad++;
			if (c == 0x82 && (i == 0 || (unsigned char)err.message[i - 1] != 0xe2))
				bad++;
		}
		ok(bad == 0, "a long UTF-8 text is cut between characters (%zu broken)", bad);
		free(u);
	}

	/* The child's failures, as text */
	moat_failure_text(buf, sizeof(buf), "mount namespace: opening /etc", EMFILE);
	ok(strncmp(buf, "moat ran out of file descriptors", 32) == 0 && strstr(buf, ": mount namespace: opening /etc"),
	   "child failure, EMFILE: cause first (%s)", buf);
	ok(moat_failure_hint(buf) != NULL, "  and it has a hint");
	moat_failure_text(buf, sizeof(buf), "chdir /x", ENOENT);
	is_str(buf, "chdir /x: No such file or directory", "child failure, ENOENT: as before");
	ok(moat_failure_hint(buf) == NULL, "  no hint");
	moat_failure_text(buf, sizeof(buf), "execve /bin/x", 0);
	is_str(buf, "execve /bin/x", "errno 0: the text alone");

	free(long_path);
	return tap_done();
}
