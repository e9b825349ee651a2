#include "sources/resolve.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/path.h"

/* 0: executable regular file; else the errno execve would give. */
static int check_exec(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0)
		return EACCES;
	return 0;
}

/* A regular file without an execute bit (a script just written, a file
 * copied off a zip): "Permission denied" names no fix.  The hint gives the
 * chmod, or the interpreter its #! line names. */
static void hint_not_executable(const char *abs, const char *cmd, struct moat_error *err)
{
	cleanup_fclose FILE *f = NULL;
	struct stat st;
	char line[256];

	if (stat(abs, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return;
	/* Not fopen: a FIFO put there since the stat would wait for a writer. */
	if ((f = file_open_regular(abs, 1 << 20)) && fgets(line, sizeof(line), f) && strncmp(line, "#!", 2) == 0) {
		char *interp = line + 2 + strspn(line + 2, " \t");

		interp[strcspn(interp, " \t\r\n")] = '\0';
		if (*interp) {
			moat_error_hint(err, "it has no execute bit (mode %04o): chmod +x %s, or run it with the "
					     "interpreter its #! line names: moat run -- %s %s",
					(unsigned)(st.st_mode & 07777), cmd, interp, cmd);
			return;
		}
	}
	moat_error_hint(err, "it has no execute bit (mode %04o): chmod +x %s, if it is a program",
			(unsigned)(st.st_mode & 07777), cmd);
}

char *resolve_command(const char *cmd, const char *path_env, const char *cwd, struct moat_error *err)
{
	cleanup_free char *copy = NULL;
	char *dir;
	int first_denied = 0;

	if (cmd[0] == '\0') {
		moat_error_set(err, MOAT_E_USAGE, 0, "empty command: nothing to run");
		return NULL;
	}
	if (strchr(cmd, '/')) {
		char *abs = path_resolve_lexical(cmd, cwd, NULL);
		int e;

		if (!abs) {
			moat_error_set(err, MOAT_E_NOTFOUND, 0, "%s: cannot make the path absolute", cmd);
			return NULL;
		}
		e = check_exec(abs);
		if (e == 0)
			return abs;
		moat_error_set(err, e == ENOENT || e == ENOTDIR ? MOAT_E_NOTFOUND : MOAT_E_NOEXEC, e, "%s", abs);
		if (e == EACCES)
			hint_not_executable(abs, cmd, err);
		free(abs);
		return NULL;
	}
	copy = moat_xstrdup(path_env && *path_env ? path_env : "/usr/bin:/bin");
	/* strsep, not strtok: an empty PATH entry means the cwd. */
	for (char *rest = copy; (dir = strsep(&rest, ":")) != NULL;) {
		cleanup_free char *cand = NULL;
		char *abs;
		int e;

		cand = moat_xasprintf("%s/%s", *dir ? dir : ".", cmd);
		abs = path_resolve_lexical(cand, cwd, NULL);
		if (!abs)
			continue;
		e = check_exec(abs);
		if (e == 0)
			return abs;
		if (e == EACCES && !first_denied)
			first_denied = 1;
		free(abs);
	}
	if (first_denied) {
		moat_error_set(err, MOAT_E_NOEXEC, 0, "%s: found in PATH but not executable", cmd);
		return NULL;
	}
	moat_error_set(err, MOAT_E_NOTFOUND, 0, "%s: command not found in PATH", cmd);
	moat_error_hint(err, "give the absolute path, or check PATH (%s)", path_env ? path_env : "unset");
	return NULL;
}

int resolve_cwd(char *buf, size_t len, struct moat_error *err)
{
	if (getcwd(buf, len))
		return 0;
	if (errno == ENOENT) {
		/* The directory was removed while the caller stood in it. */
		moat_error_set(err, MOAT_E_USAGE, 0, "the current directory was deleted (getcwd: %s)",
			       strerror(ENOENT));
		return moat_error_hint(err, "cd to a directory that exists, or name one with --cwd DIR");
	}
	if (errno == ERANGE || errno == ENAMETOOLONG) {
		moat_error_set(err, MOAT_E_USAGE, ENAMETOOLONG, "the current directory's path is longer than %zu bytes",
			       len - 1);
		return moat_error_hint(err, "run moat from a directory with a shorter path (a path over PATH_MAX, "
					    "%d bytes, cannot be granted or entered by name)",
				       PATH_MAX);
	}
	return moat_error_set(err, MOAT_E_SYSTEM, errno, "cannot read the current directory");
}
