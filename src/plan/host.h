/* What the host offers, probed once per run.  The plan reads only this
 * struct, so tests can make detection report less than the host has (never
 * more) through MOAT_HOST_LIMIT; see docs/degradation.md. */
#ifndef MOAT_PLAN_HOST_H
#define MOAT_PLAN_HOST_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/err.h"

struct moat_host {
	char kernel[65];      /* uname release */
	char machine[65];     /* uname machine */
	int landlock_abi;     /* 0: none */
	bool seccomp;         /* seccomp filters can be loaded */
	bool userns;          /* an unprivileged user namespace can be created */
	char userns_why[256]; /* when !userns: what blocks it */
	bool root;            /* euid 0 with CAP_SYS_ADMIN (namespaces without userns) */
	int yama_ptrace_scope; /* -1: no Yama */
	bool tiocsti_legacy;  /* dev.tty.legacy_tiocsti is 1 (or absent: old kernel) */
	char limited_by[256]; /* the MOAT_HOST_LIMIT text that was applied, or "" */
	uid_t uid;
	gid_t gid;
};

/* Fill *h.  Never fails: a feature that cannot be probed is reported absent,
 * with the reason. A malformed MOAT_HOST_LIMIT is the one error. */
int host_probe(struct moat_host *h, struct moat_error *err);

#endif
