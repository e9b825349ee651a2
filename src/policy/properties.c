#include "policy/properties.h"

#include <string.h>

static const struct {
	const char *name;
	const char *meaning;
} table[MOAT_P__COUNT] = {
	[MOAT_P_FS_READ] = {"fs.read", "reads only inside the allowed paths"},
	[MOAT_P_FS_WRITE] = {"fs.write", "writes only inside the allowed writable paths (by name: a file there "
					 "hard-linked from outside is that file)"},
	[MOAT_P_FS_SECRETS] = {"fs.secrets", "credential paths unreadable even when a parent is allowed"},
	[MOAT_P_FS_TMP] = {"fs.tmp", "a private writable /tmp, discarded afterwards"},
	[MOAT_P_NET_NONE] = {"net.none", "no network sockets"},
	[MOAT_P_NET_LOOPBACK] = {"net.loopback", "network only to a private loopback"},
	[MOAT_P_NET_ALLOW] = {"net.allow", "network as declared"},
	[MOAT_P_IPC_ABSTRACT] = {"ipc.abstract", "no abstract unix sockets outside the sandbox"},
	[MOAT_P_IPC_UNIX] = {"ipc.unix", "no pathname unix sockets outside the sandbox, except inside granted paths"},
	[MOAT_P_PROC_PID] = {"proc.pid", "cannot see or signal processes outside"},
	[MOAT_P_PROC_PTRACE] = {"proc.ptrace", "cannot ptrace or read memory of other processes"},
	[MOAT_P_PROC_TREE] = {"proc.tree", "every process of the command ends with it, at --timeout and when moat dies"},
	[MOAT_P_SYS_FILTER] = {"sys.filter", "dangerous system calls blocked"},
	[MOAT_P_TTY_INJECT] = {"tty.inject", "cannot inject input into the caller's terminal"},
	[MOAT_P_ENV_CURATED] = {"env.curated", "environment is exactly the allowed set"},
	[MOAT_P_FD_CLEAN] = {"fd.clean", "no file descriptors beyond 0, 1, 2 and declared ones"},
	[MOAT_P_RES_LIMITS] = {"res.limits", "declared resource limits, core dumps off"},
};

const char *moat_property_name(enum moat_property p)
{
	return (unsigned)p < MOAT_P__COUNT ? table[p].name : "?";
}

const char *moat_property_meaning(enum moat_property p)
{
	return (unsigned)p < MOAT_P__COUNT ? table[p].meaning : "?";
}

int moat_property_parse(const char *name)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		if (strcmp(table[i].name, name) == 0)
			return i;
	return -1;
}
