/* The view, applied by the child (kernel/mounts.h).  No allocation here:
 * the child runs between clone and execve. */
#include "kernel/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/mem.h"
#include "util/openat2.h"

/* The new mount API (Linux 5.2; mount_setattr 5.12), declared here for
 * older headers. */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#define M_OPEN_TREE_CLONE 1
#define M_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define M_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define M_FSOPEN_CLOEXEC 0x01
#define M_FSMOUNT_CLOEXEC 0x01
#define M_FSCONFIG_SET_STRING 1
#define M_FSCONFIG_CMD_CREATE 6
#define M_ATTR_RDONLY 0x01ULL
#define M_ATTR_NOSUID 0x02ULL
#define M_ATTR_NODEV 0x04ULL
#define M_ATTR_NOEXEC 0x08ULL
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct m_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

void native_mounts_init(struct native_mounts *m)
{
	memset(m, 0, sizeof(*m));
}

void native_mounts_plan(struct native_mounts *m, const struct moat_policy *p, const struct fs_plan *fp, bool landlock)
{
	struct view_opts o = {.landlock = landlock, .private_tmp = p->private_tmp};
	size_t i;

	m->enabled = true;
	view_build(p, fp, &o, &m->view);
	m->fds = moat_xcalloc(m->view.n + 1, sizeof(int));
	m->mfds = moat_xcalloc(m->view.n + 1, sizeof(int));
	for (i = 0; i <= m->view.n; i++)
		m->fds[i] = m->mfds[i] = -1;
}

void native_mounts_free(struct native_mounts *m)
{
	view_free(&m->view);
	free(m->fds);
	free(m->mfds);
	memset(m, 0, sizeof(*m));
}

/* --- child helpers ------------------------------------------------------- */

static int say(char *what, size_t len, int rc, const char *step, const char *path)
{
	snprintf(what, len, "%s %s", step, path);
	return rc;
}

static int set_attr(int fd, uint64_t set, bool recursive)
{
	struct m_attr a = {.attr_set = set};

	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) != 0)
		return -errno;
	return 0;
}

static int move_onto(int tree, int target)
{
	if (syscall(SYS_move_mount, tree, "", target, "", M_MOVE_MOUNT_F_EMPTY_PATH | M_MOVE_MOUNT_T_EMPTY_PATH) != 0)
		return -errno;
	return 0;
}

/* A fresh tmpfs (or proc), detached; the caller moves it into place.  size
 * and inodes: 0 for the kernel's default. */
static int new_fs(const char *type, const char *mode, int64_t size, int64_t inodes, uint64_t attrs)
{
	int fs = (int)syscall(SYS_fsopen, type, M_FSOPEN_CLOEXEC), m, e;
	char size_text[24], inodes_text[24];

	if (fs < 0)
		return -errno;
	snprintf(size_text, sizeof(size_text), "%lld", (long long)size);
	snprintf(inodes_text, sizeof(inodes_text), "%lld", (long long)inodes);
	if ((mode && syscall(SYS_fsconfig, fs, M_FSCONFIG_SET_STRING, "mode", mode, 0) != 0) ||
	    (size > 0 && syscall(SYS_fsconfig, fs, M_FSCONFIG_SET_STRING, "size", size_text, 0) != 0) ||
	    (inodes > 0 && syscall(SYS_fsconfig, fs, M_FSCONFIG_SET_STRING, "nr_inodes", inodes_text, 0) != 0) ||
	    syscall(SYS_fsconfig, fs, M_FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0) {
		e = errno;
		close(fs);
		return -e;
	}
	m = (int)syscall(SYS_fsmount, fs, M_FSMOUNT_CLOEXEC, attrs);
	e = errno;
	close(fs);
	return m < 0 ? -e : m;
}

int mounts_open_beneath(int root, const char *rel, bool make, bool dir)
{
	char comp[256];
	int cur;
	const char *p = rel;

	/* Most targets exist, with no link on the way: one openat2 reaches
	 * what the walk below would (a trailing link itself, as O_NOFOLLOW
	 * gives), instead of three calls a level.  Anything else -- absent,
	 * a link on the way, no openat2 -- is the walk's to decide. */
	if (*rel && *rel != '/' && (cur = moat_open_beneath_nolinks(root, rel)) >= 0)
		return cur;
	cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return -errno;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		bool last = !slash || !slash[1];
		struct stat st;
		int next;

		if (n == 0 || n >= sizeof(comp)) {
			close(cur);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && make) {
			if (!last || dir) {
				if (mkdirat(cur, comp, 0755) != 0 && errno != EEXIST)
					goto fail;
			} else {
				int f = openat(cur, comp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
				if (f < 0 && errno != EEXIST)
					goto fail;
				if (f >= 0)
					close(f);
			}
			next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0)
			goto fail;
		close(cur);
		cur = next;
		if (!last) {
			if (fstat(cur, &st) != 0)
				goto fail;
			if (!S_ISDIR(st.st_mode)) {
				close(cur);
				return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
			}
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return cur;
fail: {
	int e = errno;
	close(cur);
	return -e;
}
}

static bool same_object(int fd, const struct fs_obj *o)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == o->dev && st.st_ino == o->ino &&
	       (st.st_mode & S_IFMT) == (o->mode & S_IFMT);
}

/* The object as the parent planned it, opened again here (a bind's source
 * must belong to this mount namespace).  Whatever path the kernel took,
 * only the planned object is accepted. */
static int open_planned(const struct fs_obj *o)
{
	int fd = open(o->real, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (!same_object(fd, o)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static const char *rel_of(const char *dest)
{
	while (*dest == '/')
		dest++;
	return dest;
}

/* The target of an op: made on the sandbox's own tmpfs, or an existing
 * entry of a bound host directory that must be the object itself. */
static int open_target(int root, const struct view_op *op, const struct fs_plan *fp, bool dir)
{
	int fd;

	if (strcmp(op->dest, "/") == 0) {
		fd = fcntl(root, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	fd = mounts_open_beneath(root, rel_of(op->dest), op->made_here, dir);
	if (fd < 0)
		return fd;
	if (!op->made_here && op->obj >= 0 && fp && !same_object(fd, &fp->obj[op->obj])) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Bind `src` (or, for a pin, the target itself) onto the target. */
static int bind_at(int root, const struct view_op *op, const struct fs_plan *fp, int src)
{
	const struct fs_obj *o = &fp->obj[op->obj];
	uint64_t attrs = M_ATTR_NOSUID | (op->device ? 0 : M_ATTR_NODEV) | (op->read_only ? M_ATTR_RDONLY : 0);
	int target, tree, rc;

	target = open_target(root, op, fp, S_ISDIR(o->mode));
	if (target < 0)
		return target;
	tree = (int)syscall(SYS_open_tree, src >= 0 ? src : target, "",
			    M_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0) {
		rc = -errno;
		close(target);
		return rc;
	}
	rc = set_attr(tree, attrs, true);
	if (rc == 0)
		rc = move_onto(tree, target);
	close(tree);
	close(target);
	return rc;
}

static int mask_at(int root, const struct view_op *op, const struct fs_plan *fp, int mask_dir, int mask_file)
{
	int target = open_target(root, op, fp, op->dir), tree, rc;

	if (target < 0)
		return target;
	tree = (int)syscall(SYS_open_tree, op->dir ? mask_dir : mask_file, "",
			    M_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0) {
		rc = -errno;
		close(target);
		return rc;
	}
	rc = move_onto(tree, target); /* read-only already: make_staging */
	close(tree);
	close(target);
	return rc;
}

/* The /dev tmpfs holds names only (mount points, symlinks, directories):
 * no data, a few inodes per granted device. */
#define DEV_TMPFS_BYTES (1LL << 20)
#define DEV_TMPFS_INODES 4096

static int fs_at(int root, const struct view_op *op, const struct fs_plan *fp, const char *type, const char *mode,
		 uint64_t attrs, int *keep)
{
	int target = open_target(root, op, fp, true), m, rc;

	if (target < 0)
		return target;
	m = op->kind == VIEW_DEV ? new_fs(type, mode, DEV_TMPFS_BYTES, DEV_TMPFS_INODES, attrs)
				 : new_fs(type, mode, op->kind == VIEW_TMPFS ? op->size : 0,
				       op->kind == VIEW_TMPFS ? view_tmpfs_inodes(op->size) : 0, attrs);
	if (m < 0) {
		close(target);
		return m;
	}
	rc = move_onto(m, target);
	close(target);
	if (rc == 0 && keep)
		*keep = m;
	else
		close(m);
	return rc;
}

/* A minimal /dev, as bubblewrap makes it: no disks, no /dev/kvm, no
 * /dev/mem, nothing to mknod into.  The device nodes are binds of their
 * own (the grants of /dev/null, ...).  The tmpfs itself is sealed
 * read-only with the skeletons (*keep): writable, it was storage of no size
 * limit that only Landlock kept the command from (a `dd` into /dev/big past
 * --tmp-size).  Writes to the device nodes go to their drivers, and
 * /dev/shm is a mount of its own, so neither is affected.  Small, too, in
 * case it is ever written: it holds only names. */
static int make_dev(int root, const struct view_op *op, int *keep)
{
	static const char *const links[][2] = {
		{"fd", "/proc/self/fd"},
		{"stdin", "/proc/self/fd/0"},
		{"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"},
	};
	int rc = fs_at(root, op, NULL, "tmpfs", "0755", M_ATTR_NOSUID | M_ATTR_NOEXEC, keep), dev;
	size_t i;

	if (rc < 0)
		return rc;
	dev = mounts_open_beneath(root, rel_of(op->dest), false, true);
	if (dev < 0)
		return dev;
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) != 0 && errno != EEXIST) {
			rc = -errno;
			break;
		}
	close(dev);
	return rc;
}

static int symlink_at(int root, const struct view_op *op)
{
	char parent[4096];
	const char *base = strrchr(op->dest, '/') + 1;
	size_t n = (size_t)(base - op->dest);
	int dir, rc = 0;

	if (n >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, op->dest, n);
	parent[n] = '\0';
	dir = mounts_open_beneath(root, rel_of(parent), true, true);
	if (dir < 0)
		return dir;
	if (symlinkat(op->text, dir, base) != 0 && errno != EEXIST)
		rc = -errno;
	close(dir);
	return rc;
}

/* The staging tmpfs: holds the mask sources and the new root's mount
 * point, and goes away with the old root.  Its first candidate that is a
 * plain directory: covering it hides nothing still needed, since every
 * object was opened before. */
static const char *const staging_candidates[] = {"/tmp", "/mnt", "/media", "/srv", "/opt", "/var/tmp", "/dev"};

static int make_staging(int *stage, int *mask_dir, int *mask_file, char *what, size_t len)
{
	size_t i;
	int rc, f;

	for (i = 0; i < sizeof(staging_candidates) / sizeof(staging_candidates[0]); i++) {
		struct stat st;
		if (lstat(staging_candidates[i], &st) == 0 && S_ISDIR(st.st_mode))
			break;
	}
	if (i == sizeof(staging_candidates) / sizeof(staging_candidates[0]))
		return say(what, len, -ENOENT, "no directory to stage the new root on:", "/tmp");
	if (mount("moat-stage", staging_candidates[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") != 0)
		return say(what, len, -errno, "staging tmpfs on", staging_candidates[i]);
	*stage = open(staging_candidates[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*stage < 0)
		return say(what, len, -errno, "opening", staging_candidates[i]);
	/* Masks: an empty file and an empty directory, both mode 0, never
	 * visible themselves (the staging tmpfs is detached with the old
	 * root); their binds stay read-only and empty. */
	f = openat(*stage, "mask", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (f < 0 || mkdirat(*stage, "mask-dir", 0) != 0 || mkdirat(*stage, "root", 0755) != 0) {
		rc = -errno;
		if (f >= 0)
			close(f);
		return say(what, len, rc, "making the mask sources in", staging_candidates[i]);
	}
	close(f);
	*mask_file = openat(*stage, "mask", O_PATH | O_CLOEXEC);
	*mask_dir = openat(*stage, "mask-dir", O_PATH | O_CLOEXEC);
	if (*mask_file < 0 || *mask_dir < 0)
		return say(what, len, -errno, "opening the mask sources in", staging_candidates[i]);
	/* Read-only from here on (nothing more is made in it; the new root is
	 * a mount of its own on "root"): a clone of a mount keeps its flags,
	 * so every mask is read-only, nosuid, nodev and noexec as it is
	 * cloned, with no mount_setattr of its own (one call a mask). */
	if ((rc = set_attr(*stage, M_ATTR_RDONLY | M_ATTR_NOSUID | M_ATTR_NODEV | M_ATTR_NOEXEC, false)) < 0)
		return say(what, len, rc, "making the mask sources read-only in", staging_candidates[i]);
	return 0;
}

/* --- the view ------------------------------------------------------------ */

int mounts_apply(const struct native_mounts *m, const struct fs_plan *fp, char *what, size_t len)
{
	const struct view *v = &m->view;
	int stage = -1, mask_dir = -1, mask_file = -1, root = -1, rc;
	bool root_is_host = false;
	size_t i;

	/* 1.  Nothing mounted here may reach the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return say(what, len, -errno, "making mounts private:", "/");

	/* 2.  Every source, by its real path, checked against the plan. */
	for (i = 0; i < v->n; i++) {
		const struct view_op *op = &v->v[i];

		if (op->kind != VIEW_BIND || op->obj < 0)
			continue;
		m->fds[i] = open_planned(&fp->obj[op->obj]);
		if (m->fds[i] < 0)
			return say(what, len, m->fds[i],
				   m->fds[i] == -ESTALE ? "changed since moat planned it (replaced, or a link swapped in):"
							: "opening",
				   fp->obj[op->obj].real);
		if (strcmp(op->dest, "/") == 0)
			root_is_host = true;
	}

	/* 3.  The new root, on the staging tmpfs. */
	if ((rc = make_staging(&stage, &mask_dir, &mask_file, what, len)) < 0)
		return rc;
	{
		int slot = openat(stage, "root", O_PATH | O_DIRECTORY | O_CLOEXEC), mnt;
		if (slot < 0)
			return say(what, len, -errno, "opening the new root's", "mount point");
		if (!root_is_host) {
			mnt = new_fs("tmpfs", "0755", 0, 0, M_ATTR_NOSUID | M_ATTR_NODEV);
			if (mnt < 0 || (rc = move_onto(mnt, slot)) < 0) {
				rc = mnt < 0 ? mnt : rc;
				close(slot);
				return say(what, len, rc, "mounting the new root", "(tmpfs)");
			}
			m->mfds[v->n] = mnt; /* sealed read-only at the end */
		}
		close(slot);
		root = openat(stage, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			return say(what, len, -errno, "opening the new root", "");
	}

	for (i = 0; i < v->n; i++) {
		const struct view_op *op = &v->v[i];

		switch (op->kind) {
		case VIEW_PROC:
			rc = fs_at(root, op, NULL, "proc", NULL, M_ATTR_NOSUID | M_ATTR_NODEV | M_ATTR_NOEXEC, NULL);
			break;
		case VIEW_DEV:
			rc = make_dev(root, op, &m->mfds[i]);
			break;
		case VIEW_TMPFS: {
			char mode[8];
			snprintf(mode, sizeof(mode), "%o", op->mode);
			rc = fs_at(root, op, NULL, "tmpfs", mode, M_ATTR_NOSUID | M_ATTR_NODEV, NULL);
			break;
		}
		case VIEW_SKELETON:
			rc = fs_at(root, op, fp, "tmpfs", "0755", M_ATTR_NOSUID | M_ATTR_NODEV, &m->mfds[i]);
			break;
		case VIEW_BIND:
			if (strcmp(op->dest, "/") == 0) {
				/* The host's root, granted whole: it is the new
				 * root (attached under the staging tmpfs). */
				int slot = openat(stage, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
				int tree = slot < 0 ? -1
						    : (int)syscall(SYS_open_tree, m->fds[i], "",
								   M_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
				/* nodev as every bind: device nodes outside the
				 * sandbox's own /dev (a chroot's, a container's)
				 * must not open. */
				rc = tree < 0 ? -errno
					      : set_attr(tree,
							 M_ATTR_NOSUID | M_ATTR_NODEV | (op->read_only ? M_ATTR_RDONLY : 0),
							 true);
				if (rc == 0)
					rc = move_onto(tree, slot);
				if (tree >= 0)
					close(tree);
				if (slot >= 0)
					close(slot);
				if (rc == 0) {
					close(root);
					root = openat(stage, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
					rc = root < 0 ? -errno : 0;
				}
				break;
			}
			rc = bind_at(root, op, fp, m->fds[i]);
			break;
		case VIEW_PIN:
			rc = bind_at(root, op, fp, -1);
			break;
		case VIEW_MASK:
			rc = mask_at(root, op, fp, mask_dir, mask_file);
			break;
		case VIEW_DIR: {
			int d = mounts_open_beneath(root, rel_of(op->dest), true, true);
			rc = d < 0 ? d : 0;
			if (d >= 0)
				close(d);
			break;
		}
		case VIEW_SYMLINK:
			rc = symlink_at(root, op);
			break;
		default:
			rc = -EINVAL;
		}
		if (rc < 0)
			return say(what, len, rc,
				   rc == -ESTALE ? "changed since moat planned it (replaced, or a link swapped in):"
				   : rc == -ELOOP ? "a symlink where moat planned a directory:"
						  : view_kind_name(op->kind),
				   op->dest);
	}

	/* 4.  Skeletons, /dev and the root read-only (the superblock of each: the
	 * mounts below keep their own flags), then the new root is the root. */
	for (i = 0; i <= v->n; i++)
		if (m->mfds[i] >= 0 && (rc = set_attr(m->mfds[i], M_ATTR_RDONLY, false)) < 0)
			return say(what, len, rc, "making read-only:", i < v->n ? v->v[i].dest : "/");
	if (fchdir(root) != 0)
		return say(what, len, -errno, "entering the new root", "");
	if (syscall(SYS_pivot_root, ".", ".") != 0)
		return say(what, len, -errno, "pivot_root", "");
	/* The old root now sits on top of the new one: detach it, and with
	 * it every host mount and the staging tmpfs. */
	if (umount2(".", MNT_DETACH) != 0)
		return say(what, len, -errno, "detaching the old root", "");
	if (chdir("/") != 0)
		return say(what, len, -errno, "chdir", "/");
	close(root);
	close(stage);
	close(mask_dir);
	close(mask_file);
	for (i = 0; i <= v->n; i++) {
		if (m->fds[i] >= 0)
			close(m->fds[i]);
		if (m->mfds[i] >= 0)
			close(m->mfds[i]);
	}
	return 0;
}
