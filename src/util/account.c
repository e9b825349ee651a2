#include "util/account.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/file.h"
#include "util/mem.h"

/* /etc/passwd is small; a larger one is read through the user database. */
#define PASSWD_MAX (4u << 20)

/* The home field of uid's first line in the passwd text (as glibc's files
 * module: the first match wins; NIS "+"/"-" lines are not entries), or
 * NULL. */
static char *home_in_passwd(const char *text, uid_t uid)
{
	const char *line = text;

	while (line && *line) {
		const char *end = strchr(line, '\n'), *f[7];
		size_t n = 0;

		if (!end)
			end = line + strlen(line);
		f[n++] = line;
		for (const char *c = line; c < end && n < 7; c++)
			if (*c == ':')
				f[n++] = c + 1;
		if (n == 7 && line[0] != '+' && line[0] != '-') {
			char *num_end;
			unsigned long id = strtoul(f[2], &num_end, 10);
			size_t dir_len = (size_t)(f[6] - 1 - f[5]);

			if (num_end == f[3] - 1 && num_end != f[2] && id == (unsigned long)uid)
				return dir_len > 0 && f[5][0] == '/' ? moat_xstrndup(f[5], dir_len) : NULL;
		}
		line = *end ? end + 1 : NULL;
	}
	return NULL;
}

static char *lookup(const char *home_env)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	struct moat_error err;
	struct stat st;
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (file_read_at(AT_FDCWD, "/etc/passwd", "/etc/passwd", PASSWD_MAX, true, &text, &len, &st, &err) == 0 &&
	    strlen(text) == len) {
		char *home = home_in_passwd(text, getuid());
		if (home)
			return home;
	}
	if (home_env && home_env[0] == '/')
		return NULL;
	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_dir && res->pw_dir[0] == '/')
		return moat_xstrdup(res->pw_dir);
	return NULL;
}

const char *account_home(const char *home_env)
{
	static bool done;
	static char *home;

	if (!done) {
		home = lookup(home_env);
		done = true;
	}
	return home;
}
