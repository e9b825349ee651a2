#include "kernel/landlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

/* The kernel structs, declared here so that newer fields (net, scoped)
 * exist whatever the installed headers say.  Layout is the kernel ABI. */
struct moat_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct moat_ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define FS_READ_ABI1                                                                                                   \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_WRITE_ABI1                                                                                                  \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |             \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |                  \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |               \
	 LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Rights that only make sense on directories: the kernel refuses a rule
 * that grants them on a file. */
#define FS_DIR_ONLY                                                                                                    \
	(LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |              \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |                  \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |               \
	 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)

void landlock_plan_init(struct native_landlock *l)
{
	memset(l, 0, sizeof(*l));
	l->ruleset_fd = -1;
}

void landlock_plan_free(struct native_landlock *l)
{
	if (l->ruleset_fd >= 0)
		close(l->ruleset_fd);
	landlock_plan_init(l);
}

/* `mode` is the object's st_mode when the caller has it (the plan's
 * objects: fstat of this same descriptor, whose type cannot change), or 0
 * to look: one fstat per rule was ~190 system calls of every start. */
static int add_rule_fd(const struct native_landlock *l, int fd, mode_t mode, uint64_t rights)
{
	struct moat_ll_path_beneath pb = {.allowed_access = rights & l->handled_fs, .parent_fd = fd};
	struct stat st;

	if (mode == 0) {
		if (fstat(fd, &st) != 0)
			return -errno;
		mode = st.st_mode;
	}
	if (!S_ISDIR(mode))
		pb.allowed_access &= ~(uint64_t)FS_DIR_ONLY;
	/* IOCTL_DEV on a non-device is harmless but pointless; keep it only
	 * for character devices (ttys, /dev/null) where it matters. */
	if (!S_ISCHR(mode) && !S_ISBLK(mode) && !S_ISDIR(mode))
		pb.allowed_access &= ~(uint64_t)LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (landlock_sys_add_rule(l->ruleset_fd, MOAT_LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
		return -errno;
	return 0;
}

uint64_t landlock_rights_for_abi(int abi, uint64_t *read_out, uint64_t *write_out)
{
	uint64_t fs = FS_READ_ABI1 | FS_WRITE_ABI1, rd = FS_READ_ABI1, wr = FS_READ_ABI1 | FS_WRITE_ABI1;

	if (abi >= 2) {
		fs |= LANDLOCK_ACCESS_FS_REFER;
		wr |= LANDLOCK_ACCESS_FS_REFER;
	}
	if (abi >= 3) {
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
		wr |= LANDLOCK_ACCESS_FS_TRUNCATE;
	}
	if (abi >= 5) {
		/* ioctl on devices: granted with write (ttys need it), never
		 * with read alone. */
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
		wr |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	}
	*read_out = rd;
	*write_out = wr;
	return fs;
}

int landlock_compile(const struct moat_policy *p, const struct fs_plan *fp, int abi, int extra_write_fd,
		     struct native_landlock *l, struct moat_error *err)
{
	struct moat_ll_ruleset_attr attr = {0};
	size_t attr_size, i;
	int fd, rc;

	landlock_plan_init(l);
	if (abi <= 0)
		return 0;
	attr.handled_access_fs = landlock_rights_for_abi(abi, &l->read_rights, &l->write_rights);
	/* TCP: without network, handle bind and connect and grant no port; the
	 * seccomp filter and the network namespace refuse the rest. */
	if (abi >= 4 && p->net != MOAT_NET_ALL)
		attr.handled_access_net = MOAT_LANDLOCK_ACCESS_NET_BIND_TCP | MOAT_LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (abi >= 6)
		attr.scoped = MOAT_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | MOAT_LANDLOCK_SCOPE_SIGNAL;
	/* Older kernels reject a struct larger than they know (E2BIG). */
	attr_size = abi >= 6 ? sizeof(attr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
	if (p->net == MOAT_NET_LOOPBACK && abi >= 4)
		attr.handled_access_net = 0; /* loopback is the network namespace's job */

	fd = landlock_sys_create_ruleset(&attr, attr_size, 0);
	if (fd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "landlock_create_ruleset (ABI %d)", abi);
	l->ruleset_fd = fd;
	l->abi = abi;
	l->handled_fs = attr.handled_access_fs;
	l->handled_net = attr.handled_access_net;
	l->scoped = attr.scoped;

	/* One rule per granted object, on its descriptor.  A grant with a
	 * denied path below it has none of its own: its entries have them
	 * (fsplan.h), so nothing created, renamed or replaced later in the
	 * directories leading to a deny is covered. */
	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		enum fs_role role = o->rule ? o->role : o->parent >= 0 ? fp->obj[o->parent].role : o->role;

		if ((o->role != FS_READ && o->role != FS_WRITE) || !o->present || o->dropped || o->expanded ||
		    o->chain || o->fd < 0)
			continue;
		rc = add_rule_fd(l, o->fd, o->mode, role == FS_WRITE ? l->write_rights : l->read_rights);
		if (rc < 0) {
			moat_error_set(err, MOAT_E_SYSTEM, -rc, "landlock_add_rule %s", o->real);
			landlock_plan_free(l);
			return -1;
		}
		l->n_rules++;
		l->expanded = l->expanded || o->parent >= 0;
	}
	if (extra_write_fd >= 0 && (rc = add_rule_fd(l, extra_write_fd, 0, l->write_rights)) < 0) {
		moat_error_set(err, MOAT_E_SYSTEM, -rc, "landlock_add_rule for the private tmp");
		landlock_plan_free(l);
		return -1;
	}
	return 0;
}

int landlock_child_add(const struct native_landlock *l, const char *path, uint64_t rights)
{
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = add_rule_fd(l, fd, 0, rights);
	close(fd);
	return rc;
}

int landlock_child_restrict(const struct native_landlock *l)
{
	if (syscall(SYS_landlock_restrict_self, l->ruleset_fd, 0) != 0)
		return -errno;
	return 0;
}
