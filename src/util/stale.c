#include "util/stale.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/rmtree.h"

void stale_sweep(const char *prefix)
{
	cleanup_closedir DIR *d = opendir("/tmp");
	size_t plen = strlen(prefix);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX], *end;
		struct stat st;
		long pid;

		if (strncmp(e->d_name, prefix, plen) != 0 || e->d_name[plen] != '.')
			continue;
		errno = 0;
		pid = strtol(e->d_name + plen + 1, &end, 10);
		if (errno || pid <= 0 || *end != '.' || strlen(end) != 7)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* its moat runs (or is not ours to ask about) */
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
		rmtree(path);
	}
}

char *stale_mkdtemp(const char *prefix, bool sweep, struct moat_error *err)
{
	char tmpl[PATH_MAX];

	if (sweep)
		stale_sweep(prefix);
	snprintf(tmpl, sizeof(tmpl), "/tmp/%s.%d.XXXXXX", prefix, (int)getpid());
	if (!mkdtemp(tmpl)) {
		moat_error_set(err, MOAT_E_SYSTEM, errno, "creating a per-run directory under /tmp");
		return NULL;
	}
	return moat_xstrdup(tmpl);
}
