/* Reading a small file whole, and replacing one atomically: what `moat mcp`
 * needs to edit a client's config file and moat's own policy file without
 * ever leaving half a file, following a symlink it did not resolve itself,
 * or overwriting a change another program made in between. */
#ifndef MOAT_UTIL_FILE_H
#define MOAT_UTIL_FILE_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "util/err.h"

/* The regular file `name` in the directory `dirfd` (AT_FDCWD: the current
 * one), at most `max` bytes, into a new NUL-terminated buffer; *st is its
 * stat.  A symlink at the name is followed only with `follow`.  `shown`
 * names it in messages.  MOAT_E_CONFIG when it cannot be read (errno
 * ENOENT when it does not exist). */
int file_read_at(int dirfd, const char *name, const char *shown, size_t max, bool follow, char **out, size_t *len,
		 struct stat *st, struct moat_error *err);

/* `path` opened for reading as a stdio stream, only when it is a regular
 * file of at most `max` bytes: moat reads files the command may have made
 * (a project's pyvenv.cfg, `.git` files, a script's `#!` line) before the
 * sandbox starts, and a FIFO there would block the open, and a read, for
 * ever; a sparse file of a terabyte would be read for hours.  NULL with
 * errno (EINVAL: not a regular file; EFBIG: larger than `max`). */
FILE *file_open_regular(const char *path, off_t max);

/* The same as a descriptor (O_RDONLY, close-on-exec), or -1 with errno. */
int file_open_regular_fd(const char *path, off_t max);

/* The directory `name` in `dirfd` ("." of an O_PATH descriptor: the
 * directory itself) open for listing, close-on-exec, its link followed as
 * open(2) does; NULL with errno. */
DIR *file_opendir_at(int dirfd, const char *name);

/* The `max` for a file of a few lines (pyvenv.cfg, a `.git` file). */
#define FILE_SMALL_MAX ((off_t)64 * 1024)

/* Replace `name` in `dirfd` with `len` bytes of `buf`: written to a new
 * temporary file in the same directory (mode `mode`, and the owner of
 * `like` when moat may give it), flushed to disk, then renamed over the
 * name, so that a reader sees the old file or the new one, never a part.
 * With `like`, the file at the name must still be the one `like`
 * describes (the same inode, size and modification time): another program
 * that wrote it since would otherwise lose its change, and nothing is
 * replaced.  Without `like`, nothing may be at the name yet unless
 * `replace_any`.  On failure nothing at the name has changed. */
int file_replace_at(int dirfd, const char *name, const char *shown, const char *buf, size_t len, mode_t mode,
		    const struct stat *like, bool replace_any, struct moat_error *err);

/* All `len` bytes of `buf` into fd.  On a descriptor whose O_NONBLOCK
 * someone else set (a caller's event loop: the flag belongs to the shared
 * open file), a full pipe or socket is waited for with poll, as a blocking
 * write would wait, never busily.  0, or -1 with errno (EPIPE: the reader
 * is gone). */
int file_write_all(int fd, const void *buf, size_t len);

#endif
