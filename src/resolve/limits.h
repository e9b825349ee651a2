/* Limits: which mechanism holds each declared limit for this backend on
 * this host, and the cgroup moat makes for the tree (docs/limits.md).
 *
 * The tree limits (--memory, --pids, --cpu) and the tree's death without a
 * pid namespace need a cgroup that holds every process of the command:
 * moat makes one below its own (cgroup v2, or v1 per controller) and puts
 * the first child in it before anything of the command runs
 * (launch/cgroup.c).  A per-process limit is a claim about each process
 * only (--address-space, --files).  Whatever cannot hold is `missing`,
 * with the reason and the fix; res.limits is enforced only when every
 * declared limit is.  `moat probe` asks the same function (limits_decide),
 * so probe and run agree. */
#ifndef MOAT_RESOLVE_LIMITS_H
#define MOAT_RESOLVE_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "host/host.h"
#include "policy/policy.h"

struct moat_verdict;

enum limit_kind { LIM_MEMORY, LIM_PIDS, LIM_CPU, LIM_ADDRESS_SPACE, LIM_FILES, LIM_TMP, LIM__COUNT };

/* The report's and the config's name of a limit: "memory", "tmp_size", ... */
const char *limit_name(enum limit_kind k);

/* Whether the tree can make TCP or UDP sockets that carry data. */
enum limit_inet {
	LIMIT_INET_POLICY, /* as the policy says: any network but none, or none without seccomp to refuse them */
	LIMIT_INET_NO,     /* the backend knows it cannot (seccomp, or no interface up) */
	LIMIT_INET_YES,    /* the backend knows it can */
};

/* What a backend offers for limits (filled by its compile step). */
struct limit_caps {
	bool rlimits;        /* the per-process limits and core 1 are applied */
	bool core_pinned;    /* moat's seccomp filter holds the tree's RLIMIT_CORE at
			      * 1 (kernel/seccomp.c, add_rlimit_rules) */
	bool own_mount_ns;   /* the tree runs in a mount namespace of its own (apport
			      * then ignores its crashes: limits_core_held) */
	bool in_cgroup;      /* the first process (command or tool) can be put in moat's
			      * cgroup, and nothing moves the tree out of it */
	bool oci_resources;  /* memory and pids go to the runtime's linux.resources */
	const char *runtime; /* its name, for messages ("native", "bwrap", "runc", ...) */
	bool tmp_size;       /* the private /tmp and /dev/shm are tmpfs of a size moat sets */
	const char *tmp_files_unbounded; /* why their file count is not bounded too (nr_inodes), or NULL */
	bool pid_tree;       /* the tree lives in a pid namespace that dies with the
			      * command and with moat */
	char tree_mechanism[128];
	const char *tree_missing; /* when !pid_tree and no cgroup: why not (NULL: the default) */
	const char *no_address_space; /* why RLIMIT_AS cannot be applied, or NULL */
	const char *no_pids;          /* why no process limit can hold, or NULL */
	/* Why the command could rewrite or leave moat's cgroup (its files
	 * are this uid's, and neither a mount namespace nor Landlock keeps the
	 * command from them), or NULL: then no cgroup mechanism is claimed. */
	const char *cgroup_open;
	/* Why the command can signal moat and its guard (the same uid, no pid
	 * namespace, no Landlock signal scope), or NULL.  A command that stops
	 * them (SIGSTOP) outlives what only moat's loop or its guard does: the
	 * CPU watch, the kill at the end, at --timeout and when moat dies.  The
	 * cgroup's own limits (memory.max, pids.max) hold without moat. */
	const char *moat_signalable;
	/* An export (backend_limits sets it): the files run later, without
	 * moat, so no cgroup of moat's holds the tree (in_cgroup is ignored),
	 * and `rlimits` says whether the exported files apply them
	 * themselves (bwrap's run.sh, OCI's process.rlimits). */
	bool exported;
	/* cgroup v1 charges TCP and UDP socket buffers apart from
	 * memory.limit_in_bytes: a v1 memory limit is no limit for a tree
	 * that can make such sockets. */
	enum limit_inet inet;
	/* Why some of the tree's sockets are moat's own, whose buffers are
	 * charged to moat's cgroup and not the tree's (net allow's fence), or
	 * NULL. */
	const char *sockets_moat;
};

struct limit_verdict {
	bool declared;
	int64_t value;
	bool enforced;
	char mechanism[192];
	char reason[512];
	char hint[512];
};

enum cg_tree_kill { CG_KILL_NONE, CG_KILL_V2, CG_KILL_V2_FREEZE, CG_KILL_V1_FREEZER };

struct limits_plan {
	struct limit_verdict lim[LIM__COUNT];
	bool core0;              /* RLIMIT_CORE 1 (the backend applies rlimits): no core file */
	bool core_held;          /* and no host program keeps a crash (limits_core_held) */
	char core_text[384];     /* what holds it (for the mechanism), or why not */
	const char *runtime;     /* the backend's tool, for messages */
	bool exported;           /* decided for an export (limit_caps.exported) */
	/* The cgroup moat makes for the tree, in these hierarchies. */
	bool cg_v2;
	bool cg_v1[CGV1__COUNT];
	bool v2_memory, v2_pids; /* the limits written in the v2 cgroup */
	bool v2_cpu_watch;       /* CPU time read from the v2 cgroup's cpu.stat */
	/* How the launcher kills the tree: at the command's end when there is
	 * no pid namespace, at --timeout, at --cpu, and moat's guard when moat
	 * dies. */
	enum cg_tree_kill tree_kill;
	bool nproc_rlimit;       /* --pids as RLIMIT_NPROC (per uid, host-wide) */
	bool oci_memory, oci_pids;
	int64_t tmp_bytes;       /* the size of the private tmpfs (the default when not declared) */
	/* Where that cgroup is made (limits_name_cgroup): named before
	 * anything is made, so that moat's guard knows what to remove. */
	char cg_path_v2[640];
	char cg_path_v1[CGV1__COUNT][640];
	/* proc.tree: the whole tree dies with the command, at --timeout and with moat. */
	bool tree_enforced;
	char tree_mechanism[192];
	char tree_reason[512];
	char tree_hint[512];
};

/* Decide every limit's mechanism.  `cache` holds the host's cgroups: read
 * on first use, only when a tree limit is declared or the backend has no
 * pid namespace for the tree (reading them costs ~0.1 ms); NULL: none. */
/* What a crash of the tree becomes with RLIMIT_CORE 0 under the host's
 * kernel.core_pattern `pattern`.  A file name: nothing is written (the
 * limit).  A pipe: the kernel runs its program as root outside the sandbox
 * and writes the whole dump into it whatever RLIMIT_CORE says; the program
 * decides.  systemd-coredump stores nothing for a limit below a page (it is
 * given the limit, %c); apport ignores a crash from another mount namespace
 * (it forwards it to a container's own apport, which the sandbox has not),
 * but otherwise keeps a report with the core of a packaged program whatever
 * the limit; `false` and `true` keep nothing.  Any other program cannot be
 * vouched for, nor can a socket ('@', Linux 6.16), whose dump the kernel
 * sends whatever RLIMIT_CORE is.  true: nothing is kept, and `text` says by what ("" for a
 * file pattern); false: `text` says which program may keep it. */
bool limits_core_held(const char *pattern, bool own_mount_ns, bool pinned, char *text, size_t len);

void limits_decide(const struct moat_policy *p, const struct moat_host *h, struct moat_cgroup_info *cache,
		   const struct limit_caps *caps, struct limits_plan *out);

/* The res.limits and proc.tree verdicts from a decided plan. */
void limits_verdicts(const struct limits_plan *lp, struct moat_verdict *res_limits, struct moat_verdict *proc_tree);

/* A cgroup is needed at launch. */
bool limits_uses_cgroup(const struct limits_plan *lp);

/* Name the tree's cgroup in each hierarchy it is made in: a child of moat's
 * own cgroup there, "moat-PID-N".  Nothing is created. */
void limits_name_cgroup(struct limits_plan *lp, struct moat_cgroup_info *cg);

#endif
