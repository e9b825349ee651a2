/* openat2(2) where the C library has no wrapper (glibc 2.36 has none): one
 * call that resolves a whole path under rules the kernel enforces, instead
 * of a component walk of three calls a level. */
#ifndef MOAT_UTIL_OPENAT2_H
#define MOAT_UTIL_OPENAT2_H

#include <stdint.h>

#define MOAT_RESOLVE_NO_XDEV 0x01
#define MOAT_RESOLVE_NO_MAGICLINKS 0x02
#define MOAT_RESOLVE_NO_SYMLINKS 0x04
#define MOAT_RESOLVE_BENEATH 0x08

/* openat2(dirfd, path, {flags, 0, resolve}): a descriptor, or -1 with
 * errno (ENOSYS before Linux 5.6: the caller walks instead). */
int moat_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve);

/* The object at `rel` below the directory `dirfd`, O_PATH|O_NOFOLLOW, when
 * no component of `rel` is a link (a trailing one is returned itself, as
 * O_NOFOLLOW gives) and no ".." climbs out of `dirfd`: what a component
 * walk that stops at links would reach, in one call.  -1 with errno
 * otherwise (ELOOP: a link on the way; ENOENT; EXDEV; ENOSYS...): the
 * caller walks, and decides. */
int moat_open_beneath_nolinks(int dirfd, const char *rel);

#endif
