/* Landlock: file-system rights, TCP ports (ABI >= 4), and abstract-socket
 * and signal scoping (ABI >= 6).  The ruleset is built in the parent, with
 * every rule's path opened there; the child adds the rules for file systems
 * it mounts itself (/tmp, /proc) and then restricts itself. */
#ifndef MOAT_KERNEL_LANDLOCK_H
#define MOAT_KERNEL_LANDLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "resolve/fsplan.h"
#include "policy/policy.h"
#include "util/err.h"

/* Constants Debian 12's <linux/landlock.h> (6.1) lacks. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define MOAT_LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define MOAT_LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define MOAT_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define MOAT_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#define MOAT_LANDLOCK_RULE_PATH_BENEATH 1
#define MOAT_LANDLOCK_RULE_NET_PORT 2

struct native_landlock {
	int abi;          /* the ABI used; 0: Landlock not used */
	int ruleset_fd;   /* -1 when not used */
	uint64_t handled_fs, handled_net, scoped;
	uint64_t read_rights, write_rights; /* for rules the child adds */
	size_t n_rules;   /* rules added in the parent */
	bool expanded;    /* some grant's rules went to its entries */
};

void landlock_plan_init(struct native_landlock *l);
void landlock_plan_free(struct native_landlock *l);

/* The file-system rights moat handles at `abi`, and those it grants for a
 * read and for a write grant. */
uint64_t landlock_rights_for_abi(int abi, uint64_t *read_out, uint64_t *write_out);

/* Build the ruleset: one rule per granted object of `fp`, on its
 * descriptor (expanded grants: per entry).  `extra_write_fd` is a directory
 * to grant write (the per-run tmp without a mount namespace), or -1. */
int landlock_compile(const struct moat_policy *p, const struct fs_plan *fp, int abi, int extra_write_fd,
		     struct native_landlock *l, struct moat_error *err);

/* Rights for the child's own rules. */
#define LANDLOCK_CHILD_LIST (1ULL << 3) /* LANDLOCK_ACCESS_FS_READ_DIR */
/* Child: a rule for `path` (opened now, after the mounts: file systems the
 * child made itself, /tmp, /proc, the root). */
int landlock_child_add(const struct native_landlock *l, const char *path, uint64_t rights);
/* The two system calls that build a ruleset (planning, and the child's
 * landlock_child_add), in their own object (landlock_sys.c) so that a unit
 * test can link a fake of them: -1 with errno, as syscall(2).  Detection
 * (host/host.c) and landlock_child_restrict call the kernel directly. */
int landlock_sys_create_ruleset(const void *attr, size_t size, uint32_t flags);
int landlock_sys_add_rule(int ruleset_fd, int rule_type, const void *rule_attr, uint32_t flags);

/* Child: enforce.  Needs no_new_privs or CAP_SYS_ADMIN.  Returns 0/-errno. */
int landlock_child_restrict(const struct native_landlock *l);

#endif
