#include "util/account.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/mem.h"

/* /etc/passwd is small; a larger one is not read (the user database is
 * asked instead). */
#define PASSWD_MAX (4u << 20)
/* getent's answer: one line. */
#define GETENT_MAX 65536
/* How long getent may take: a directory service that does not answer
 * leaves the account unknown, as a lookup that failed does. */
#define GETENT_MS 10000

enum { F_NAME = 0, F_HOME = 5 };

/* Field `field` (F_NAME or F_HOME) of uid's first line in the passwd text
 * (as glibc's files module: the first match wins; NIS "+"/"-" lines are
 * not entries), allocated, or NULL.  A home must be absolute. */
static char *field_in_passwd(const char *text, uid_t uid, int field)
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

			if (num_end == f[3] - 1 && num_end != f[2] && id == (unsigned long)uid) {
				if (field == F_NAME) {
					size_t len = (size_t)(f[1] - 1 - f[0]);
					return len > 0 ? moat_xstrndup(f[0], len) : NULL;
				}
				size_t dir_len = (size_t)(f[6] - 1 - f[5]);
				return dir_len > 0 && f[5][0] == '/' ? moat_xstrndup(f[5], dir_len) : NULL;
			}
		}
		line = *end ? end + 1 : NULL;
	}
	return NULL;
}

static char *from_passwd_file(uid_t uid, int field)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	struct moat_error err;
	struct stat st;

	if (file_read_at(AT_FDCWD, "/etc/passwd", "/etc/passwd", PASSWD_MAX, true, &text, &len, &st, &err) == 0 &&
	    strlen(text) == len)
		return field_in_passwd(text, uid, field);
	return NULL;
}

/* `getent passwd UID`'s line, or NULL: run with no environment, its
 * standard input and error on /dev/null, its signals at their defaults
 * (moat's own mask blocks some), and killed after GETENT_MS. */
static char *getent_line(uid_t uid)
{
	static const char *const paths[] = {"/usr/bin/getent", "/bin/getent"};
	char num[24], arg0[] = "getent", arg1[] = "passwd", env0[] = "LC_ALL=C";
	char *argv[] = {arg0, arg1, num, NULL}, *envp[] = {env0, NULL};
	cleanup_close int rd = -1;
	cleanup_pid pid_t pid = -1;
	cleanup_free char *out = NULL;
	int pipefd[2];
	size_t n = 0;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int64_t deadline = moat_mono_ns() + (int64_t)GETENT_MS * 1000000;
	int rc = -1;

	snprintf(num, sizeof(num), "%lu", (unsigned long)uid);
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return NULL;
	rd = pipefd[0];
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	for (size_t i = 0; i < ARRAY_LEN(paths) && rc != 0; i++)
		if (access(paths[i], X_OK) == 0)
			rc = posix_spawn(&pid, paths[i], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(pipefd[1]);
	if (rc != 0) {
		pid = -1;
		return NULL;
	}
	out = moat_xmalloc(GETENT_MAX + 1);
	for (;;) {
		int64_t left = (deadline - moat_mono_ns()) / 1000000;
		struct pollfd p = {.fd = rd, .events = POLLIN};
		ssize_t got;

		if (left <= 0 || n >= GETENT_MAX)
			break;
		if (poll(&p, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got = read(rd, out + n, GETENT_MAX - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			int st;
			/* At end of file getent has exited, or is about to. */
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			pid = -1;
			if (got < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				return NULL;
			out[n] = '\0';
			return strlen(out) == n ? steal_ptr(&out) : NULL;
		}
		n += (size_t)got;
	}
	return NULL; /* too slow or too long: cleanup_pid kills it */
}

static char *from_getent(uid_t uid, int field)
{
	cleanup_free char *line = getent_line(uid);

	return line ? field_in_passwd(line, uid, field) : NULL;
}

const char *account_home(const char *home_env)
{
	static bool done;
	static char *home;

	if (!done) {
		uid_t uid = getuid();
		home = from_passwd_file(uid, F_HOME);
		if (!home && !(home_env && home_env[0] == '/'))
			home = from_getent(uid, F_HOME);
		done = true;
	}
	return home;
}

bool account_name(uid_t uid, char *buf, size_t len)
{
	char *v = from_passwd_file(uid, F_NAME);
	cleanup_free char *name = v ? v : from_getent(uid, F_NAME);

	snprintf(buf, len, "%s", name ? name : "");
	return name != NULL;
}
