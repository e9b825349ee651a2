#include "host/host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#include <unistd.h>

#include "host/hints.h"
#include "host/trials.h"
#include "util/cleanup.h"

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_CREATE_RULESET_ERRATA
#define LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_RET_LOG
#define SECCOMP_RET_LOG 0x7ffc0000U
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC
#define SECCOMP_FILTER_FLAG_TSYNC (1UL << 0)
#endif

static int read_int_file(const char *path, int fallback)
{
	cleanup_fclose FILE *f = fopen(path, "re");
	int v;

	if (!f || fscanf(f, "%d", &v) != 1)
		return fallback;
	return v;
}

/* kernel.core_pattern's first line, without its newline. */
static void read_core_pattern(char *out, size_t len)
{
	cleanup_fclose FILE *f = fopen("/proc/sys/kernel/core_pattern", "re");

	out[0] = '\0';
	if (!f || !fgets(out, (int)len, f))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

static int probe_landlock(void)
{
#ifdef SYS_landlock_create_ruleset
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi > 0 ? (int)abi : 0;
#else
	errno = ENOSYS;
	return 0;
#endif
}

static bool probe_seccomp(void)
{
	/* SECCOMP_GET_ACTION_AVAIL answers without changing anything; EINVAL
	 * means the kernel was built without CONFIG_SECCOMP_FILTER. */
	unsigned int action = SECCOMP_RET_ERRNO;
	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

static bool seccomp_action_avail(unsigned int action)
{
	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* A filter flag is known to the kernel when SECCOMP_SET_MODE_FILTER with a
 * NULL program fails with EFAULT (flags are checked before the program is
 * copied in) rather than EINVAL.  Nothing is installed either way. */
static bool seccomp_flag_known(unsigned long flag)
{
	errno = 0;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, NULL) < 0 && errno == EFAULT;
}

/* Why Landlock is absent, from the errno of the version query. */
static void landlock_absent_why(int e, char *why, size_t len)
{
	if (e == EOPNOTSUPP)
		snprintf(why, len, "Landlock is built into this kernel but not enabled at boot "
				   "(not in the lsm= list)");
	else if (e == ENOSYS)
		snprintf(why, len, "this kernel has no Landlock (older than 5.13, or built without "
				   "CONFIG_SECURITY_LANDLOCK), or a seccomp filter around moat refuses it");
	else
		snprintf(why, len, "landlock_create_ruleset: %s", strerror(e));
}

static int probe_landlock_errata(void)
{
#ifdef SYS_landlock_create_ruleset
	/* Kernels before the errata query (6.15) reject the flag: unknown. */
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_ERRATA);
	return v >= 0 ? (int)v : -1;
#else
	return -1;
#endif
}

/* Is `cap` in moat's effective set?  uid 0 in a container often lacks
 * CAP_SYS_ADMIN and CAP_SYS_PTRACE (Docker's and Podman's default
 * capabilities leave them out): the kernel then treats it as unprivileged
 * for namespaces, the user-namespace sysctls and Yama. */
static bool has_cap(int cap)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2] = {{0}};

	if (syscall(SYS_capget, &hdr, data) != 0)
		return false;
	return (data[cap / 32].effective & (1U << (cap % 32))) != 0;
}

/* Unprivileged user namespaces: ask the knobs that distributions use to
 * turn them off, cheaply, instead of creating one on every run. */
static bool probe_userns(char *why, size_t len)
{
	int v;

	if (access("/proc/self/ns/user", F_OK) != 0) {
		snprintf(why, len, "kernel built without CONFIG_USER_NS");
		return false;
	}
	v = read_int_file("/proc/sys/user/max_user_namespaces", -1);
	if (v == 0) {
		snprintf(why, len, "sysctl user.max_user_namespaces is 0");
		return false;
	}
	v = read_int_file("/proc/sys/kernel/unprivileged_userns_clone", -1);
	if (v == 0 && !has_cap(CAP_SYS_ADMIN)) {
		snprintf(why, len, "sysctl kernel.unprivileged_userns_clone is 0");
		return false;
	}
	v = read_int_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);
	if (v == 1 && !has_cap(CAP_SYS_ADMIN)) {
		snprintf(why, len, "AppArmor restricts unprivileged user namespaces "
				   "(kernel.apparmor_restrict_unprivileged_userns=1)");
		return false;
	}
	why[0] = '\0';
	return true;
}

/* MOAT_HOST_LIMIT="landlock=N,userns=0,seccomp=0": lower what detection
 * reports, to test fallbacks on a host that has everything.  It can only
 * lower: a value above what was probed is clamped to the probe. */
/* The MOAT_HOST_LIMIT keys that only take a mechanism away (=0): the flag
 * each sets in struct moat_host. */
static const struct {
	const char *key;
	size_t flag;
} limited_flags[] = {
	{"cgroup", offsetof(struct moat_host, cgroup_limited)},
	{"cgroupv1", offsetof(struct moat_host, cgroup_v1_limited)},
	{"cgroupv2", offsetof(struct moat_host, cgroup_v2_limited)},
	/* As a host with swap that no cgroup can limit. */
	{"swaplimit", offsetof(struct moat_host, swap_limit_limited)},
};

static size_t limited_flag(const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(limited_flags); i++)
		if (strcmp(limited_flags[i].key, key) == 0)
			return limited_flags[i].flag;
	return (size_t)-1;
}

/* A feature MOAT_HOST_LIMIT takes away: absent, and why. */
static void take_away(bool *have, char *why, size_t len)
{
	if (!*have)
		return;
	*have = false;
	snprintf(why, len, "disabled by MOAT_HOST_LIMIT");
}

static int apply_limit(struct moat_host *h, const char *spec, struct moat_error *err)
{
	cleanup_free char *copy = strdup(spec);
	char *save = NULL, *tok;

	if (!copy)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "MOAT_HOST_LIMIT");
	/* strtok_r passes over empty items: ",,," lowered nothing and the
	 * probe still said "limited by", which hides a list cut short
	 * ("landlock=0,,"), as every other malformed item is refused. */
	if (spec[0] == ',' || spec[strlen(spec) - 1] == ',' || strstr(spec, ",,")) {
		moat_error_set(err, MOAT_E_USAGE, 0, "MOAT_HOST_LIMIT=%s: an empty item (a comma at an end, or two together)",
			       spec);
		goto hint;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		const char *val;
		long v;
		size_t off;

		if (!eq) {
			moat_error_set(err, MOAT_E_USAGE, 0, "MOAT_HOST_LIMIT=%s: '%s' has no '='", spec, tok);
			goto hint;
		}
		*eq = '\0';
		val = eq + 1;
		/* Digits only: strtol would take "", "+2" and " 3" too. */
		errno = 0;
		v = strtol(val, &end, 10);
		if (!*val || strspn(val, "0123456789") != strlen(val) || errno || *end) {
			moat_error_set(err, MOAT_E_USAGE, 0, "MOAT_HOST_LIMIT=%s: %s='%s' is not a number", spec, tok,
				       val);
			goto hint;
		}
		if (strcmp(tok, "landlock") != 0 && v > 1) {
			moat_error_set(err, MOAT_E_USAGE, 0, "MOAT_HOST_LIMIT=%s: %s=%s: the value is 0 (take it away) or 1 (as probed)",
				       spec, tok, val);
			goto hint;
		}
		if (strcmp(tok, "landlock") == 0) {
			if (v < h->landlock_abi) {
				h->landlock_abi = (int)v;
				/* The errata of the real ABI would claim more than
				 * the pretended one has. */
				h->landlock_errata = -1;
				if (v == 0)
					snprintf(h->landlock_why, sizeof(h->landlock_why), "disabled by MOAT_HOST_LIMIT");
			}
		} else if (strcmp(tok, "userns") == 0) {
			if (v == 0)
				take_away(&h->userns, h->userns_why, sizeof(h->userns_why));
		} else if (strcmp(tok, "seccomp") == 0) {
			if (v == 0) {
				take_away(&h->seccomp, h->seccomp_why, sizeof(h->seccomp_why));
				h->seccomp_user_notif = h->seccomp_tsync = h->seccomp_log = false;
				take_away(&h->net_fence, h->net_fence_why, sizeof(h->net_fence_why));
			}
		} else if (strcmp(tok, "netfence") == 0) {
			if (v == 0)
				take_away(&h->net_fence, h->net_fence_why, sizeof(h->net_fence_why));
		} else if (strcmp(tok, "root") == 0) {
			if (v == 0)
				h->root = false;
		} else if ((off = limited_flag(tok)) != (size_t)-1) {
			if (v == 0)
				*(bool *)(void *)((char *)h + off) = true;
		} else {
			moat_error_set(err, MOAT_E_USAGE, 0, "MOAT_HOST_LIMIT=%s: unknown field '%s'", spec, tok);
			goto hint;
		}
	}
	snprintf(h->limited_by, sizeof(h->limited_by), "%s", spec);
	return 0;
hint:
	return moat_error_hint(err, "expected a comma-separated list of landlock=N, userns=0, seccomp=0, root=0, netfence=0, cgroup=0, cgroupv1=0, cgroupv2=0, swaplimit=0");
}

/* The kernel's version as major * 1000 + minor (6.18 is 6018); 0 when the
 * release cannot be read. */
static int kernel_version(const char *release)
{
	unsigned major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		return 0;
	return (int)(major * 1000 + minor);
}

/* What kernel/netfence.c needs.  ADDFD has no cheap probe without a
 * listener, so its version stands in (5.9); pidfd_getfd is asked with a
 * descriptor that cannot be valid (ENOSYS: absent). */
static void probe_net_fence(struct moat_host *h)
{
	int v = kernel_version(h->kernel);

	if (!h->seccomp || !h->seccomp_user_notif)
		snprintf(h->net_fence_why, sizeof(h->net_fence_why), "seccomp user notification is not available");
	else if (v < 5009)
		snprintf(h->net_fence_why, sizeof(h->net_fence_why),
			 "kernel %.40s: SECCOMP_IOCTL_NOTIF_ADDFD needs Linux 5.9", h->kernel);
	else if (syscall(SYS_pidfd_getfd, -1, -1, 0) < 0 && errno == ENOSYS)
		snprintf(h->net_fence_why, sizeof(h->net_fence_why), "pidfd_getfd(2) is not available (Linux 5.6)");
	else if (h->yama_ptrace_scope >= 2 && !has_cap(CAP_SYS_PTRACE))
		snprintf(h->net_fence_why, sizeof(h->net_fence_why),
			 "Yama ptrace_scope %d keeps moat from its own sandbox's sockets", h->yama_ptrace_scope);
	else
		h->net_fence = true;
}

const char *host_userns_hint(const struct moat_host *h, bool root_helps)
{
	if (h->userns_filtered)
		return HOST_HINT_USERNS_FILTER;
	if (h->uid0_capless)
		return HOST_HINT_USERNS_UID0;
	return root_helps ? HOST_HINT_USERNS_ROOT : HOST_HINT_USERNS;
}

int host_probe(struct moat_host *h, struct moat_error *err)
{
	struct utsname u;
	const char *limit;
	bool no_setfcap;

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0) {
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
		snprintf(h->machine, sizeof(h->machine), "%s", u.machine);
	}
	h->uid = getuid();
	h->gid = getgid();
	h->root = geteuid() == 0 && has_cap(CAP_SYS_ADMIN);
	h->landlock_abi = probe_landlock();
	if (h->landlock_abi == 0)
		landlock_absent_why(errno, h->landlock_why, sizeof(h->landlock_why));
	h->landlock_errata = h->landlock_abi > 0 ? probe_landlock_errata() : -1;
	h->seccomp = probe_seccomp();
	if (h->seccomp) {
		h->seccomp_user_notif = seccomp_action_avail(SECCOMP_RET_USER_NOTIF);
		h->seccomp_log = seccomp_action_avail(SECCOMP_RET_LOG);
		h->seccomp_tsync = seccomp_flag_known(SECCOMP_FILTER_FLAG_TSYNC);
	} else {
		snprintf(h->seccomp_why, sizeof(h->seccomp_why), "%s",
			 errno == EINVAL ? "this kernel was built without CONFIG_SECCOMP_FILTER"
					 : "seccomp(2) is refused here (an outer seccomp filter or an old kernel)");
	}
	h->userns = probe_userns(h->userns_why, sizeof(h->userns_why));
	host_check_ns_under_filter(h);
	/* uid 0 without CAP_SYS_ADMIN makes namespaces only as any user does,
	 * in a user namespace, and Linux 5.12 and later let only a holder of
	 * CAP_SETFCAP map uid 0 into one (verify_root_map): without it the
	 * namespace is made but its uid_map cannot be written.  After the
	 * filter's trial: a filter that refuses namespaces is the cause no
	 * capability would undo (moat inside moat is both). */
	no_setfcap = geteuid() == 0 && kernel_version(h->kernel) >= 5012 && !has_cap(CAP_SETFCAP);
	if (!h->userns_filtered && geteuid() == 0 && (!h->root || no_setfcap)) {
		h->uid0_capless = true;
		if (h->userns && no_setfcap) {
			h->userns = false;
			snprintf(h->userns_why, sizeof(h->userns_why),
				 "uid 0 without CAP_SETFCAP may not map itself into a user namespace (Linux 5.12+): a "
				 "container's root with its capabilities dropped");
		}
	}
	h->yama_ptrace_scope = read_int_file("/proc/sys/kernel/yama/ptrace_scope", -1);
	h->tiocsti_legacy = read_int_file("/proc/sys/dev/tty/legacy_tiocsti", 1) != 0;
	read_core_pattern(h->core_pattern, sizeof(h->core_pattern));

	probe_net_fence(h);

	limit = getenv("MOAT_HOST_LIMIT");
	if (limit && *limit)
		return apply_limit(h, limit, err);
	return 0;
}
