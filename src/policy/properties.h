/* Properties: named guarantees that a test can try to break.  They are the
 * currency between policy, backends and verdicts.  The names are an
 * interface (reports, `--require`, configs): never rename one. */
#ifndef MOAT_POLICY_PROPERTIES_H
#define MOAT_POLICY_PROPERTIES_H

#include <stdint.h>

enum moat_property {
	MOAT_P_FS_READ,
	MOAT_P_FS_WRITE,
	MOAT_P_FS_SECRETS,
	MOAT_P_FS_TMP,
	MOAT_P_NET_NONE,
	MOAT_P_NET_LOOPBACK,
	MOAT_P_NET_ALLOW,
	MOAT_P_IPC_ABSTRACT,
	MOAT_P_IPC_UNIX,
	MOAT_P_PROC_PID,
	MOAT_P_PROC_PTRACE,
	MOAT_P_PROC_TREE,
	MOAT_P_SYS_FILTER,
	MOAT_P_TTY_INJECT,
	MOAT_P_ENV_CURATED,
	MOAT_P_FD_CLEAN,
	MOAT_P_RES_LIMITS,
	MOAT_P__COUNT
};

#define MOAT_PBIT(p) (UINT32_C(1) << (p))

const char *moat_property_name(enum moat_property p);
/* Returns the property for `name`, or -1. */
int moat_property_parse(const char *name);
/* What the property guarantees, one line, for `moat help` and reports. */
const char *moat_property_meaning(enum moat_property p);

#endif
