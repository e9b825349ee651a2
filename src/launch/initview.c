/* moat __init's look at the view the tool mounted: see initview.h. */
#include "launch/initview.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/mounts.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/mem.h"

static const char *rel_of(const char *path)
{
	while (*path == '/')
		path++;
	return path;
}

/* The object at `dest`, reached from the root without following a link:
 * 0 with *st, or -errno. */
static int stat_beneath_root(const char *dest, struct stat *st)
{
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd, rc = 0;

	if (root < 0)
		return -errno;
	fd = *rel_of(dest) ? mounts_open_beneath(root, rel_of(dest), false, false) : fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (fd == -1)
		fd = -errno;
	close(root);
	if (fd < 0)
		return fd;
	if (fstat(fd, st) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

int initview_check_bound(const char *records, size_t len)
{
	size_t at = 0;

	while (at < len) {
		const char *rec = records + at;
		unsigned long long dev, ino;
		struct stat st;
		int used = 0, rc;

		at += strlen(rec) + 1;
		if (sscanf(rec, "%llu:%llu:%n", &dev, &ino, &used) != 2 || used == 0 || rec[used] != '/') {
			fprintf(stderr, "moat: init: --bound-file: a malformed record (%.80s)\n", rec);
			return 125;
		}
		rc = stat_beneath_root(rec + used, &st);
		if (rc == 0 && (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino)
			continue;
		{
			/* The path is a name on the host (an entry of a granted
			 * directory): moat_say escapes its control characters. */
			cleanup_free char *text =
			    rc < 0 ? moat_xasprintf("%s, which moat planned to bind there: %s", rec + used, strerror(-rc))
				   : moat_xasprintf("%s changed since moat planned it (replaced, or a link swapped in): the "
						    "runtime bound another object there (device %llu inode %llu, planned "
						    "%llu %llu); nothing was run",
						    rec + used, (unsigned long long)st.st_dev,
						    (unsigned long long)st.st_ino, dev, ino);
			moat_say("moat: init: ", text);
		}
		return 125;
	}
	return 0;
}

int initview_make_link(const char *text, const char *dest)
{
	char parent[4096];
	const char *base = strrchr(dest, '/');
	cleanup_free char *shown = moat_text_shown(dest); /* a path the host's files named */
	int root, dir, rc = 0;

	if (!base || dest[0] != '/' || !base[1] || (size_t)(base - dest) >= sizeof(parent)) {
		fprintf(stderr, "moat: init: --symlink %s: not an absolute path\n", shown);
		return 125;
	}
	memcpy(parent, dest, (size_t)(base - dest));
	parent[base - dest] = '\0';
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	dir = root < 0		  ? -errno
	      : *rel_of(parent) ? mounts_open_beneath(root, rel_of(parent), true, true)
				  : fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (dir == -1)
		dir = -errno;
	if (root >= 0)
		close(root);
	if (dir < 0) {
		fprintf(stderr, "moat: init: making the directories of the symlink %s: %s\n", shown, strerror(-dir));
		return 125;
	}
	if (symlinkat(text, dir, base + 1) != 0 && errno != EEXIST) {
		fprintf(stderr, "moat: init: making the symlink %s: %s\n", shown, strerror(errno));
		rc = 125;
	}
	close(dir);
	return rc;
}
