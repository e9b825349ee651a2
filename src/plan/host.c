#include "plan/host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util/cleanup.h"

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

static int read_int_file(const char *path, int fallback)
{
	cleanup_fclose FILE *f = fopen(path, "re");
	int v;

	if (!f || fscanf(f, "%d", &v) != 1)
		return fallback;
	return v;
}

static int probe_landlock(void)
{
#ifdef SYS_landlock_create_ruleset
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi > 0 ? (int)abi : 0;
#else
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
	if (v == 0 && geteuid() != 0) {
		snprintf(why, len, "sysctl kernel.unprivileged_userns_clone is 0");
		return false;
	}
	v = read_int_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);
	if (v == 1 && geteuid() != 0) {
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
static int apply_limit(struct moat_host *h, const char *spec, struct moat_error *err)
{
	cleanup_free char *copy = strdup(spec);
	char *save = NULL, *tok;

	if (!copy)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "MOAT_HOST_LIMIT");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		long v;

		if (!eq)
			goto bad;
		*eq = '\0';
		errno = 0;
		v = strtol(eq + 1, &end, 10);
		if (errno || *end || v < 0)
			goto bad;
		if (strcmp(tok, "landlock") == 0) {
			if (v < h->landlock_abi)
				h->landlock_abi = (int)v;
		} else if (strcmp(tok, "userns") == 0) {
			if (v == 0 && h->userns) {
				h->userns = false;
				snprintf(h->userns_why, sizeof(h->userns_why), "disabled by MOAT_HOST_LIMIT");
			}
		} else if (strcmp(tok, "seccomp") == 0) {
			if (v == 0)
				h->seccomp = false;
		} else if (strcmp(tok, "root") == 0) {
			if (v == 0)
				h->root = false;
		} else {
			goto bad;
		}
	}
	snprintf(h->limited_by, sizeof(h->limited_by), "%s", spec);
	return 0;
bad:
	moat_error_set(err, MOAT_E_USAGE, 0, "MOAT_HOST_LIMIT=%s: cannot parse '%s'", spec, tok);
	return moat_error_hint(err, "expected a comma-separated list of landlock=N, userns=0, seccomp=0, root=0");
}

int host_probe(struct moat_host *h, struct moat_error *err)
{
	struct utsname u;
	const char *limit;

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0) {
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
		snprintf(h->machine, sizeof(h->machine), "%s", u.machine);
	}
	h->uid = getuid();
	h->gid = getgid();
	h->root = geteuid() == 0;
	h->landlock_abi = probe_landlock();
	h->seccomp = probe_seccomp();
	h->userns = probe_userns(h->userns_why, sizeof(h->userns_why));
	h->yama_ptrace_scope = read_int_file("/proc/sys/kernel/yama/ptrace_scope", -1);
	h->tiocsti_legacy = read_int_file("/proc/sys/dev/tty/legacy_tiocsti", 1) != 0;

	limit = getenv("MOAT_HOST_LIMIT");
	if (limit && *limit)
		return apply_limit(h, limit, err);
	return 0;
}
