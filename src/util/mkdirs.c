#include "util/mkdirs.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/mem.h"

int mkdirs(const char *path, mode_t mode, struct moat_error *err)
{
	cleanup_free char *buf = moat_xstrdup(path);
	struct stat st;
	char *s;

	if (buf[0] != '/')
		return moat_error_set(err, MOAT_E_USAGE, 0, "%s: not an absolute path", path);
	/* Each prefix in turn, "/a", "/a/b", ..., then the whole path. */
	for (s = buf + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "making the directory %s", buf);
		if (stat(buf, &st) != 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", buf);
		if (!S_ISDIR(st.st_mode))
			return moat_error_set(err, MOAT_E_USAGE, ENOTDIR, "%s", buf);
		if (c == '\0')
			return 0;
		*s = c;
	}
}
