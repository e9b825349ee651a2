/* A fake Landlock kernel of any ABI (fake_landlock.h).  It answers as the
 * kernel of that ABI does, so that a plan which would fail there fails here:
 *   - ABI 0: EOPNOTSUPP (a kernel built with Landlock but not enabled says
 *     so; planning must not ask at all);
 *   - a ruleset attribute larger than the ABI knows: E2BIG (moat passes the
 *     size of the struct that ABI has);
 *   - a handled right, net right or scope the ABI does not have: EINVAL;
 *   - a rule on a ruleset fd it did not make, of an unknown type, with no
 *     rights, with rights the ruleset does not handle, or on a descriptor
 *     that is not open: EBADFD, EINVAL, ENOMSG, EINVAL, EBADF.
 * A ruleset is an open /dev/null, so that close(2) on it works. */
#include "fake_landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/landlock.h"

int fake_landlock_abi;
struct fake_landlock_log fake_landlock_log;

/* The rulesets handed out: fd and what each handles. */
static struct {
	int fd;
	uint64_t handled_fs;
} rulesets[64];
static size_t n_rulesets;

void fake_landlock_reset(int abi)
{
	fake_landlock_abi = abi;
	memset(&fake_landlock_log, 0, sizeof(fake_landlock_log));
	n_rulesets = 0;
}

static int refuse(int e, const char *why)
{
	if (fake_landlock_log.refused++ == 0)
		snprintf(fake_landlock_log.first_refusal, sizeof(fake_landlock_log.first_refusal), "%s (ABI %d)", why,
			 fake_landlock_abi);
	errno = e;
	return -1;
}

/* The kernel's masks, by ABI (Documentation/userspace-api/landlock.rst). */
static uint64_t fs_mask(int abi)
{
	uint64_t m = (1ULL << 13) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */

	if (abi >= 2)
		m |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		m |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		m |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return m;
}

static size_t attr_size(int abi)
{
	return abi >= 6 ? 3 * sizeof(uint64_t) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
}

int landlock_sys_create_ruleset(const void *attr, size_t size, uint32_t flags)
{
	uint64_t a[3] = {0, 0, 0};
	int fd;

	if (fake_landlock_abi <= 0)
		return refuse(EOPNOTSUPP, "create_ruleset without Landlock");
	if (flags != 0 || !attr)
		return refuse(EINVAL, "create_ruleset: flags or a NULL attribute (planning never asks the version)");
	if (size > attr_size(fake_landlock_abi))
		return refuse(E2BIG, "create_ruleset: attribute larger than the ABI's struct");
	if (size < sizeof(uint64_t))
		return refuse(EINVAL, "create_ruleset: attribute too small");
	memcpy(a, attr, size);
	if (a[0] == 0 || (a[0] & ~fs_mask(fake_landlock_abi)))
		return refuse(EINVAL, "create_ruleset: handled fs rights the ABI lacks");
	if (a[1] & ~(MOAT_LANDLOCK_ACCESS_NET_BIND_TCP | MOAT_LANDLOCK_ACCESS_NET_CONNECT_TCP))
		return refuse(EINVAL, "create_ruleset: unknown net rights");
	if (a[2] & ~(MOAT_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | MOAT_LANDLOCK_SCOPE_SIGNAL))
		return refuse(EINVAL, "create_ruleset: unknown scopes");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (n_rulesets == sizeof(rulesets) / sizeof(rulesets[0])) {
		close(fd);
		return refuse(ENOMEM, "create_ruleset: more rulesets than the fake keeps");
	}
	rulesets[n_rulesets].fd = fd;
	rulesets[n_rulesets].handled_fs = a[0];
	n_rulesets++;
	fake_landlock_log.creates++;
	fake_landlock_log.handled_fs = a[0];
	fake_landlock_log.handled_net = a[1];
	fake_landlock_log.scoped = a[2];
	return fd;
}

int landlock_sys_add_rule(int ruleset_fd, int rule_type, const void *rule_attr, uint32_t flags)
{
	struct {
		uint64_t allowed_access;
		int32_t parent_fd;
	} __attribute__((packed)) pb;
	struct stat st;
	size_t i;

	if (fake_landlock_abi <= 0)
		return refuse(EOPNOTSUPP, "add_rule without Landlock");
	/* The newest ruleset with this number: numbers are reused after close. */
	for (i = n_rulesets; i > 0 && rulesets[i - 1].fd != ruleset_fd; i--)
		;
	if (i == 0)
		return refuse(EBADFD, "add_rule on a descriptor that is no ruleset");
	if (flags != 0 || rule_type != MOAT_LANDLOCK_RULE_PATH_BENEATH || !rule_attr)
		return refuse(EINVAL, "add_rule: flags, type or attribute");
	memcpy(&pb, rule_attr, sizeof(pb));
	if (pb.allowed_access == 0)
		return refuse(ENOMSG, "add_rule: no rights");
	if (pb.allowed_access & ~rulesets[i - 1].handled_fs)
		return refuse(EINVAL, "add_rule: rights the ruleset does not handle");
	if (fstat(pb.parent_fd, &st) != 0)
		return refuse(EBADF, "add_rule: parent_fd is not open");
	fake_landlock_log.rules++;
	return 0;
}
