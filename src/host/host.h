/* What the host offers, probed once per run.  The plan reads only this
 * struct, so tests can make detection report less than the host has (never
 * more) through MOAT_HOST_LIMIT; see docs/degradation.md. */
#ifndef MOAT_HOST_HOST_H
#define MOAT_HOST_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

struct moat_host {
	char kernel[65];      /* uname release */
	char machine[65];     /* uname machine */
	int landlock_abi;     /* 0: none */
	bool seccomp;         /* seccomp filters can be loaded */
	bool userns;          /* an unprivileged user namespace can be created */
	char userns_why[256]; /* when !userns: what blocks it */
	bool userns_filtered; /* a seccomp filter moat runs under refuses
			       * new namespaces (a container's, an outer
			       * moat's): no sysctl and no root helps */
	bool root;            /* euid 0 with CAP_SYS_ADMIN (namespaces without userns) */
	bool uid0_capless;    /* euid 0 without CAP_SYS_ADMIN or without CAP_SETFCAP (a
			       * container's root with capabilities dropped): no
			       * namespace as root, or no uid map for itself in a
			       * user namespace */
	int yama_ptrace_scope; /* -1: no Yama */
	bool tiocsti_legacy;  /* dev.tty.legacy_tiocsti is 1 (or absent: old kernel) */
	char core_pattern[192]; /* kernel.core_pattern's first line ("" unreadable): a
				 * pipe ("|/usr/lib/systemd/systemd-coredump ...")
				 * hands a crash to a host program whatever
				 * RLIMIT_CORE says (resolve/limits.h) */
	char limited_by[256]; /* the MOAT_HOST_LIMIT text that was applied, or "" */
	uid_t uid;
	gid_t gid;

	/* For `moat probe`.  Cheap: a few syscalls, no fork. */
	char landlock_why[256];  /* when landlock_abi == 0: why */
	int landlock_errata;     /* bitmask of fixed Landlock issues; -1: unknown */
	char seccomp_why[256];   /* when !seccomp: why */
	bool seccomp_user_notif; /* SECCOMP_RET_USER_NOTIF can be used (Linux 5.0) */
	bool seccomp_tsync;      /* SECCOMP_FILTER_FLAG_TSYNC is accepted (3.17) */
	bool seccomp_log;        /* SECCOMP_RET_LOG can be used (4.14) */
	bool cgroup_limited;     /* MOAT_HOST_LIMIT has cgroup=0 */
	bool cgroup_v1_limited;  /* MOAT_HOST_LIMIT has cgroupv1=0 */
	bool swap_limit_limited; /* MOAT_HOST_LIMIT has swaplimit=0: as if the
				  * host had swap no cgroup can limit */
	bool cgroup_v2_limited;  /* MOAT_HOST_LIMIT has cgroupv2=0 */
	/* The fenced network allowlist (kernel/netfence.h) can be built: user
	 * notification, ADDFD with SETFD (Linux 5.9), pidfd_getfd (5.6),
	 * and a Yama that lets moat reach its own sandbox's sockets. */
	bool net_fence;
	char net_fence_why[160]; /* when !net_fence: why */
};

/* The fix to name when namespaces are missing: the container's when a
 * seccomp filter moat runs under refuses them, else how to enable user
 * namespaces (host/hints.h) -- also when MOAT_HOST_LIMIT took them away,
 * which stands for a host without them (`moat probe` says the limit did).
 * `root_helps`: that one ends with "or run moat as root". */
const char *host_userns_hint(const struct moat_host *h, bool root_helps);

/* Fill *h.  Never fails: a feature that cannot be probed is reported absent,
 * with the reason. A malformed MOAT_HOST_LIMIT is the one error. */
int host_probe(struct moat_host *h, struct moat_error *err);

/* The cgroup v1 controllers moat uses, each possibly in its own hierarchy. */
enum cg_v1_controller { CGV1_MEMORY, CGV1_PIDS, CGV1_CPUACCT, CGV1_FREEZER, CGV1__COUNT };
const char *cg_v1_name(enum cg_v1_controller c);

/* "No limit" as cgroup files say it, and moat's value for it. */
#define CG_UNLIMITED (-1)

struct moat_cgroup_info {
	bool probed;
	char layout[16];        /* "unified" (v2 only), "hybrid" (v1 and v2), "legacy" (v1 only), "none" */
	char mount[256];        /* where cgroup2 is mounted, or "" */
	char path[512];         /* this process's cgroup v2 directory, or "" */
	char controllers[256];  /* its cgroup.controllers */
	char subtree[256];      /* its cgroup.subtree_control: the controllers a child of it has */
	bool v2;                /* a cgroup2 hierarchy is mounted and holds us */
	bool delegated;         /* we may create child cgroups and move processes into them */
	bool v2_kill;           /* a child has cgroup.kill (Linux 5.14) */
	bool v2_freeze;         /* a child has cgroup.freeze (Linux 5.2) */
	char why[256];          /* when !v2 or !delegated */
	struct {
		char path[512];  /* our cgroup's directory in the hierarchy holding it, or "" */
		bool writable;   /* we may create a child and move processes into it */
		char why[160];   /* when !path[0] or !writable */
	} v1[CGV1__COUNT];
	/* The tightest memory and process limits of the cgroups holding moat
	 * (its own and their ancestors), which bind the whole tree too;
	 * CG_UNLIMITED when none.  `at` names the cgroup that sets it. */
	int64_t enclosing_memory, enclosing_pids;
	char enclosing_memory_at[512], enclosing_pids_at[512];
	bool enclosing_memory_v1; /* that memory limit is a cgroup v1 one */
	/* Swap: whether the host has any (/proc/swaps), and whether a child
	 * cgroup's swap can be limited (v2: memory.swap.max exists; v1:
	 * memory.memsw.limit_in_bytes).  Without both, a memory limit bounds
	 * RAM only: the tree can swap beyond it. */
	bool host_swap, swap_limit_v2, swap_limit_v1;
	/* The enclosing limits and the swap fields above were read (else
	 * they are their defaults: unlimited, no swap). */
	bool limits_read;
	/* A file that could not be opened for want of descriptors or memory
	 * (EMFILE, ENFILE, ENOMEM), else 0: then the rest says nothing about
	 * the host, and a plan must not be built on it (plan.c). */
	int open_errno;
	char open_errno_at[256];
};

/* Fill *c from /proc/self/mountinfo, /proc/self/cgroup and the cgroup
 * files: no cgroup is created.  `limits`: also read what only a memory or
 * pids limit needs (the enclosing limits, up to the hierarchy's root; swap),
 * some 20 system calls a run without those limits does not make
 * (c->limits_read says which).  Honours MOAT_HOST_LIMIT (cgroup=0,
 * cgroupv1=0, cgroupv2=0). */
void host_probe_cgroup(const struct moat_host *h, bool limits, struct moat_cgroup_info *c);

#endif
