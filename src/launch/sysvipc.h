/* The host's System V IPC objects a run without an IPC namespace left
 * (docs/limits.md, "What the tree leaves on the host").
 *
 * Without an IPC namespace (the native backend with no namespaces: no user
 * namespace, not root) a shared memory segment, semaphore set or message
 * queue the command makes is the host's, and outlives the run with its
 * memory, from then on outside any limit.  moat lists the objects before
 * the start and after the tree ended.  Of those that appeared under moat's
 * uid it removes only what is provably the tree's: a segment whose creator
 * pid is the command's own process (moat's child, which kept that pid until
 * moat reaped it) and that nothing has attached.  The rest -- a semaphore
 * set or queue (the kernel records no creator pid for them), a segment a
 * process the command started made, one attached from outside -- could as
 * well be another process's of the same user: moat leaves them, and names
 * them in run.left_on_host and on stderr. */
#ifndef MOAT_LAUNCH_SYSVIPC_H
#define MOAT_LAUNCH_SYSVIPC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum sysv_kind { SYSV_SHM, SYSV_SEM, SYSV_MSG, SYSV__COUNT };

struct sysv_snapshot {
	bool taken;
	int *ids[SYSV__COUNT]; /* the objects' ids before the start, sorted */
	size_t n[SYSV__COUNT];
};

/* One object found after the run: its kind, id and key; removed (true) or
 * left on the host. */
typedef void (*sysv_found_fn)(void *ctx, enum sysv_kind kind, int id, int key, bool removed);

/* The ids of every object now (read from /proc/sysvipc; an unreadable
 * table is taken as empty, and a sweep then finds nothing of it). */
void sysv_snapshot_take(struct sysv_snapshot *s);
void sysv_snapshot_free(struct sysv_snapshot *s);

/* After the tree ended: each object not in `before` whose creator uid is
 * moat's, removed when the command's own process `cmd` made it and nothing
 * is attached, else left; `each` is told of both.  Returns how many were
 * left. */
size_t sysv_sweep(const struct sysv_snapshot *before, pid_t cmd, sysv_found_fn each, void *ctx);

/* "shm", "sem", "msg"; "sysv_shm", ... for the report. */
const char *sysv_kind_name(enum sysv_kind kind);
const char *sysv_kind_report(enum sysv_kind kind);

#endif
