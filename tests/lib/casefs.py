#!/usr/bin/python3
"""A case-insensitive FUSE file system for casefold.sh: BACKING seen at
MOUNTPOINT, each name looked up ignoring case (the exact name first; Python's
str.lower, so Unicode's too: U+212A KELVIN SIGN is k),
listings giving the names as stored -- what ext4/f2fs casefold, vfat, exfat,
CIFS and ciopfs do.  Read-only is enough for the tests.

    casefs.py BACKING MOUNTPOINT [allow_other]   (stays in the foreground)
"""
import errno
import os
import sys

from fusepy import FUSE, FuseOSError, Operations


class CaseFold(Operations):
    def __init__(self, root):
        self.root = os.path.realpath(root)

    def _real(self, path):
        cur = self.root
        for name in [n for n in path.split('/') if n]:
            exact = os.path.join(cur, name)
            if os.path.lexists(exact):
                cur = exact
                continue
            try:
                hits = [e for e in os.listdir(cur) if e.lower() == name.lower()]
            except OSError as e:
                raise FuseOSError(e.errno)
            if not hits:
                raise FuseOSError(errno.ENOENT)
            cur = os.path.join(cur, sorted(hits)[0])
        return cur

    def getattr(self, path, fh=None):
        st = os.lstat(self._real(path))
        return {k: getattr(st, k) for k in ('st_mode', 'st_nlink', 'st_uid', 'st_gid', 'st_size',
                                           'st_atime', 'st_mtime', 'st_ctime', 'st_ino')}

    def access(self, path, mode):
        if not os.access(self._real(path), mode):
            raise FuseOSError(errno.EACCES)

    def readdir(self, path, fh):
        return ['.', '..'] + os.listdir(self._real(path))

    def readlink(self, path):
        return os.readlink(self._real(path))

    def open(self, path, flags):
        return os.open(self._real(path), flags & ~(os.O_CREAT | os.O_TRUNC))

    def read(self, path, size, offset, fh):
        os.lseek(fh, offset, os.SEEK_SET)
        return os.read(fh, size)

    def release(self, path, fh):
        os.close(fh)

    def statfs(self, path):
        st = os.statvfs(self._real(path))
        return {k: getattr(st, k) for k in ('f_bavail', 'f_bfree', 'f_blocks', 'f_bsize', 'f_favail',
                                           'f_ffree', 'f_files', 'f_flag', 'f_frsize', 'f_namemax')}


if __name__ == '__main__':
    opts = {'foreground': True, 'ro': True, 'use_ino': True}
    if len(sys.argv) > 3 and sys.argv[3] == 'allow_other':
        opts['allow_other'] = True
    FUSE(CaseFold(sys.argv[1]), sys.argv[2], **opts)
