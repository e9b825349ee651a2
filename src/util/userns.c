#include "util/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 0 or -errno; a short write is -EIO. */
static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int userns_map_ids(uid_t uid, gid_t gid, const char **failed)
{
	char line[64];
	int rc;

	*failed = "/proc/self/setgroups";
	rc = write_text(*failed, "deny");
	if (rc < 0 && rc != -ENOENT)
		return rc;
	*failed = "/proc/self/uid_map";
	snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if ((rc = write_text(*failed, line)) < 0)
		return rc;
	*failed = "/proc/self/gid_map";
	snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if ((rc = write_text(*failed, line)) < 0)
		return rc;
	*failed = NULL;
	return 0;
}
