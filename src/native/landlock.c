#include "native/landlock.h"

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

/* Expansion of a granted parent around a denied child recurses one level
 * per path component; bound it so a hostile tree cannot blow the stack. */
#define EXPAND_MAX_DEPTH 32

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

static int add_rule_fd(const struct native_landlock *l, int fd, uint64_t rights)
{
	struct moat_ll_path_beneath pb = {.allowed_access = rights & l->handled_fs, .parent_fd = fd};
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= ~(uint64_t)FS_DIR_ONLY;
	/* IOCTL_DEV on a non-device is harmless but pointless; keep it only
	 * for character devices (ttys, /dev/null) where it matters. */
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISDIR(st.st_mode))
		pb.allowed_access &= ~(uint64_t)LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (syscall(SYS_landlock_add_rule, l->ruleset_fd, MOAT_LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
		return -errno;
	return 0;
}

static int add_rule_path(struct native_landlock *l, const char *path, uint64_t rights, bool optional,
			 struct moat_error *err)
{
	cleanup_close int fd = open(path, O_PATH | O_CLOEXEC);
	int rc;

	if (fd < 0) {
		if (optional && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
			return 0;
		moat_error_set(err, MOAT_E_USAGE, errno, "%s", path);
		return moat_error_hint(err, "the path must exist for moat to grant it (mode require)");
	}
	rc = add_rule_fd(l, fd, rights);
	if (rc < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "landlock_add_rule %s", path);
	l->n_rules++;
	return 0;
}

static bool denied_below(const struct moat_policy *p, const char *dir)
{
	size_t i;

	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY && path_within(p->paths[i].path, dir))
			return true;
	return false;
}

static bool is_denied(const struct moat_policy *p, const char *path)
{
	size_t i;

	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_DENY && path_within(path, p->paths[i].path))
			return true;
	return false;
}

/* Grant `dir` minus the denied paths below it: every entry is granted on its
 * own, and entries with a denied path below are expanded in turn.  Entries
 * created later directly in an expanded directory are not covered (the
 * trade-off documented in docs/policy.md); a mount namespace avoids it. */
static int grant_expanded(struct native_landlock *l, const struct moat_policy *p, const char *dir, uint64_t rights,
			  int depth, struct moat_error *err)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (depth > EXPAND_MAX_DEPTH)
		return moat_error_set(err, MOAT_E_SYSTEM, 0, "%s: too deep to expand around denied paths", dir);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : moat_error_set(err, MOAT_E_SYSTEM, errno, "expanding %s", dir);
	l->expanded = true;
	while ((e = readdir(d)) != NULL) {
		cleanup_free char *child = NULL;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		child = strcmp(dir, "/") == 0 ? moat_xasprintf("/%s", e->d_name)
					      : moat_xasprintf("%s/%s", dir, e->d_name);
		if (is_denied(p, child))
			continue;
		/* A symlink is not granted: its target is judged by its own
		 * rules, so a planted link cannot widen a grant. */
		if (lstat(child, &st) != 0 || S_ISLNK(st.st_mode))
			continue;
		if (S_ISDIR(st.st_mode) && denied_below(p, child))
			rc = grant_expanded(l, p, child, rights, depth + 1, err);
		else
			rc = add_rule_path(l, child, rights, true, err);
		if (rc < 0)
			break;
	}
	closedir(d);
	return rc;
}

static uint64_t rights_for_abi(int abi, uint64_t *read_out, uint64_t *write_out)
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

int landlock_compile(const struct moat_policy *p, int abi, bool expand_denies, const char *extra_write,
		     struct native_landlock *l, struct moat_error *err)
{
	struct moat_ll_ruleset_attr attr = {0};
	size_t attr_size, i;
	int fd;

	landlock_plan_init(l);
	if (abi <= 0)
		return 0;
	attr.handled_access_fs = rights_for_abi(abi, &l->read_rights, &l->write_rights);
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

	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (fd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "landlock_create_ruleset (ABI %d)", abi);
	l->ruleset_fd = fd;
	l->abi = abi;
	l->handled_fs = attr.handled_access_fs;
	l->handled_net = attr.handled_access_net;
	l->scoped = attr.scoped;

	for (i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];
		uint64_t rights;
		char real[PATH_MAX];
		int rc;

		if (r->access == MOAT_ACCESS_DENY)
			continue;
		rights = r->access == MOAT_ACCESS_WRITE ? l->write_rights : l->read_rights;
		/* Deny wins: a grant whose real path is denied, or that is a
		 * link into a denied path, is dropped. */
		if (realpath(r->path, real) && (is_denied(p, real) || is_denied(p, r->path)))
			continue;
		if (expand_denies && denied_below(p, r->path))
			rc = grant_expanded(l, p, r->path, rights, 0, err);
		else
			rc = add_rule_path(l, r->path, rights, r->optional, err);
		if (rc < 0) {
			landlock_plan_free(l);
			return -1;
		}
	}
	if (extra_write && add_rule_path(l, extra_write, l->write_rights, false, err) < 0) {
		landlock_plan_free(l);
		return -1;
	}
	return 0;
}

int landlock_child_add(const struct native_landlock *l, const char *path, bool write)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = add_rule_fd(l, fd, write ? l->write_rights : l->read_rights);
	close(fd);
	return rc;
}

int landlock_child_restrict(const struct native_landlock *l)
{
	if (syscall(SYS_landlock_restrict_self, l->ruleset_fd, 0) != 0)
		return -errno;
	return 0;
}
