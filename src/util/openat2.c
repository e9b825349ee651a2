#include "util/openat2.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

struct moat_open_how {
	uint64_t flags, mode, resolve;
};

int moat_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct moat_open_how how = {.flags = flags, .resolve = resolve};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

int moat_open_beneath_nolinks(int dirfd, const char *rel)
{
	return moat_openat2(dirfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			    MOAT_RESOLVE_BENEATH | MOAT_RESOLVE_NO_SYMLINKS | MOAT_RESOLVE_NO_MAGICLINKS);
}
