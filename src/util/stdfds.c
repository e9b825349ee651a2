#include "util/stdfds.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int stdfds_ensure(struct moat_error *err)
{
	static const char *const names[] = {"standard input", "standard output", "standard error"};
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* The lowest free number is fd itself: 0..fd-1 are open. */
		got = open("/dev/null", O_RDWR | O_NOCTTY);
		if (got >= 0 && got != fd) {
			close(got);
			got = -1;
			errno = EBADF;
		}
		if (got < 0) {
			/* Said on stderr, which is open unless it is the one
			 * closed (then nothing can be said anywhere). */
			moat_error_set(err, MOAT_E_SYSTEM, errno,
				       "%s (fd %d) is closed, and /dev/null cannot be opened in its place", names[fd], fd);
			return moat_error_hint(err, "start moat with descriptors 0, 1 and 2 open (`0</dev/null`), or give "
						    "this system a /dev/null (a chroot or container without /dev)");
		}
	}
	return 0;
}
