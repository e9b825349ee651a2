/* The host's System V IPC objects a run left: see sysvipc.h. */
#include "launch/sysvipc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"

static const char *const table_path[SYSV__COUNT] = {"/proc/sysvipc/shm", "/proc/sysvipc/sem", "/proc/sysvipc/msg"};

/* One row of a table: the columns a sweep needs.  The tables' columns:
 *   shm: key shmid perms size cpid lpid nattch uid gid cuid ...
 *   sem: key semid perms nsems uid gid cuid ...
 *   msg: key msqid perms cbytes qnum lspid lrpid uid gid cuid ... */
struct sysv_row {
	int key, id;
	long cpid, nattch; /* shm only; -1 otherwise */
	unsigned long cuid;
};

static bool parse_row(enum sysv_kind kind, const char *line, struct sysv_row *r)
{
	unsigned long perms, uid, gid;
	unsigned long long size;
	long a, b, c, d;

	r->cpid = r->nattch = -1;
	switch (kind) {
	case SYSV_SHM:
		if (sscanf(line, "%d %d %lo %llu %ld %ld %ld %lu %lu %lu", &r->key, &r->id, &perms, &size, &r->cpid, &a,
			   &r->nattch, &uid, &gid, &r->cuid) != 10)
			return false;
		return true;
	case SYSV_SEM:
		return sscanf(line, "%d %d %lo %ld %lu %lu %lu", &r->key, &r->id, &perms, &a, &uid, &gid, &r->cuid) ==
		       7;
	case SYSV_MSG:
		return sscanf(line, "%d %d %lo %ld %ld %ld %ld %lu %lu %lu", &r->key, &r->id, &perms, &a, &b, &c, &d,
			      &uid, &gid, &r->cuid) == 10;
	default:
		return false;
	}
}

/* Each row of the table of `kind`, to `fn`; false when it cannot be read. */
static bool each_row(enum sysv_kind kind, void (*fn)(void *ctx, const struct sysv_row *r), void *ctx)
{
	cleanup_fclose FILE *f = fopen(table_path[kind], "re");
	cleanup_free char *line = NULL;
	size_t cap = 0;
	bool header = true;
	struct sysv_row r;

	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		if (header) {
			header = false;
			continue;
		}
		if (parse_row(kind, line, &r))
			fn(ctx, &r);
	}
	return true;
}

struct id_list {
	int *ids;
	size_t n;
};

static void add_id(void *ctx, const struct sysv_row *r)
{
	struct id_list *l = ctx;

	l->ids = moat_xrealloc(l->ids, (l->n + 1) * sizeof(*l->ids));
	l->ids[l->n++] = r->id;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void sysv_snapshot_take(struct sysv_snapshot *s)
{
	int k;

	memset(s, 0, sizeof(*s));
	for (k = 0; k < SYSV__COUNT; k++) {
		struct id_list l = {0};

		each_row((enum sysv_kind)k, add_id, &l);
		if (l.n)
			qsort(l.ids, l.n, sizeof(*l.ids), cmp_int);
		s->ids[k] = l.ids;
		s->n[k] = l.n;
	}
	s->taken = true;
}

void sysv_snapshot_free(struct sysv_snapshot *s)
{
	int k;

	for (k = 0; k < SYSV__COUNT; k++)
		free(s->ids[k]);
	memset(s, 0, sizeof(*s));
}

struct sweep {
	const struct sysv_snapshot *before;
	enum sysv_kind kind;
	pid_t cmd;
	uid_t uid;
	sysv_found_fn each;
	void *ctx;
	size_t left;
};

/* The segment `id` is the command's own, nothing has it attached, and it
 * is gone now.  Checked again on the object itself (not the table read a
 * moment ago), right before the removal. */
static bool remove_commands_segment(int id, pid_t cmd, uid_t uid)
{
	struct shmid_ds ds;

	if (shmctl(id, IPC_STAT, &ds) != 0 || ds.shm_cpid != cmd || ds.shm_nattch != 0 || ds.shm_perm.cuid != uid)
		return false;
	return shmctl(id, IPC_RMID, NULL) == 0;
}

static void sweep_row(void *ctx, const struct sysv_row *r)
{
	struct sweep *s = ctx;
	bool removed = false;

	if (r->cuid != (unsigned long)s->uid ||
	    (s->before->n[s->kind] &&
	     bsearch(&r->id, s->before->ids[s->kind], s->before->n[s->kind], sizeof(int), cmp_int)))
		return;
	/* The creator pid: the command's own process made it.  That pid was
	 * moat's child until moat reaped it, moments ago, so no other process
	 * can have made anything under it during the run. */
	if (s->kind == SYSV_SHM && r->cpid == (long)s->cmd && r->nattch == 0)
		removed = remove_commands_segment(r->id, s->cmd, s->uid);
	if (!removed)
		s->left++;
	s->each(s->ctx, s->kind, r->id, r->key, removed);
}

size_t sysv_sweep(const struct sysv_snapshot *before, pid_t cmd, sysv_found_fn each, void *ctx)
{
	struct sweep s = {.before = before, .cmd = cmd, .uid = geteuid(), .each = each, .ctx = ctx};
	int k;

	if (!before->taken)
		return 0;
	for (k = 0; k < SYSV__COUNT; k++) {
		s.kind = (enum sysv_kind)k;
		each_row(s.kind, sweep_row, &s);
	}
	return s.left;
}

const char *sysv_kind_name(enum sysv_kind kind)
{
	static const char *const names[SYSV__COUNT] = {"shm", "sem", "msg"};

	return (unsigned)kind < SYSV__COUNT ? names[kind] : "?";
}

const char *sysv_kind_report(enum sysv_kind kind)
{
	static const char *const names[SYSV__COUNT] = {"sysv_shm", "sysv_sem", "sysv_msg"};

	return (unsigned)kind < SYSV__COUNT ? names[kind] : "?";
}
