#include "util/stdfds.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int stdfds_ensure(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* The lowest free number is fd itself: 0..fd-1 are open. */
		got = open("/dev/null", O_RDWR | O_NOCTTY);
		if (got < 0)
			return -errno;
		if (got != fd) {
			close(got);
			return -EBADF;
		}
	}
	return 0;
}
