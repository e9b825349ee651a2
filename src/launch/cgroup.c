#include "launch/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"

/* How long killing and removing may wait for the kernel: bounded. */
#define KILL_ROUNDS 2000 /* x 1 ms */

static void pause_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int write_at(const char *dir, const char *file, const char *text)
{
	char path[768];
	cleanup_close int fd = -1;
	size_t len = strlen(text);
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int read_at(const char *dir, const char *file, char *out, size_t len)
{
	char path[768];
	cleanup_close int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, out, len - 1);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	return 0;
}

/* A file that holds one number, or -1. */
static int64_t number_in(const char *text)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	return errno || end == text ? -1 : v;
}

static int64_t read_number_at(const char *dir, const char *file)
{
	char text[64];

	return read_at(dir, file, text, sizeof(text)) < 0 ? -1 : number_in(text);
}

/* The value of `key` in "key value" lines (cpu.stat, cgroup.events,
 * memory.events, memory.oom_control, pids.events), or -1. */
static int64_t key_in(char *text, const char *key)
{
	char *line, *save = NULL;
	size_t n = strlen(key);

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, key, n) == 0 && line[n] == ' ')
			return strtoll(line + n + 1, NULL, 10);
	return -1;
}

static int64_t read_key_at(const char *dir, const char *file, const char *key)
{
	char text[2048];

	if (read_at(dir, file, text, sizeof(text)) < 0)
		return -1;
	return key_in(text, key);
}

/* Write a limit and read it back: the kernel must hold what moat claims.
 * memory.max and memory.limit_in_bytes round down to whole pages. */
static int set_limit(const char *dir, const char *file, int64_t value, struct moat_error *err)
{
	char text[32], got[64], *end;
	int64_t back;
	int rc;

	snprintf(text, sizeof(text), "%lld", (long long)value);
	if ((rc = write_at(dir, file, text)) < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "setting %s/%s to %s", dir, file, text);
	if ((rc = read_at(dir, file, got, sizeof(got))) < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "reading back %s/%s after writing %s", dir, file, text);
	errno = 0;
	back = strtoll(got, &end, 10);
	if (errno || end == got)
		back = -1;
	if (back < 0 || back > value || back < value - 65536)
		return moat_error_set(err, MOAT_E_SYSTEM, 0, "%s/%s reads %lld after writing %s", dir, file,
				      (long long)back, text);
	return 0;
}

static const char *const *all_paths(const struct limits_plan *lp, const char *out[CGV1__COUNT + 2])
{
	size_t n = 0;
	int i;

	if (lp->cg_path_v2[0])
		out[n++] = lp->cg_path_v2;
	for (i = 0; i < CGV1__COUNT; i++)
		if (lp->cg_path_v1[i][0])
			out[n++] = lp->cg_path_v1[i];
	out[n] = NULL;
	return out;
}

static int make_dir(const char *path, struct moat_error *err)
{
	if (mkdir(path, 0755) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "creating the cgroup %s", path);
	return 0;
}

static int create(const struct limits_plan *lp, const struct moat_limits *l, struct moat_error *err)
{
	const char *v1m = lp->cg_path_v1[CGV1_MEMORY], *v1p = lp->cg_path_v1[CGV1_PIDS];
	const char *paths[CGV1__COUNT + 2];
	const char *const *p;
	char probe[8];

	/* A name that exists is not this run's (moat-PID-N of a moat in
	 * another pid namespace, or a stale one): never used, killed or
	 * removed from here. */
	for (p = all_paths(lp, paths); *p; p++) {
		struct stat st;
		if (lstat(*p, &st) == 0) {
			moat_error_set(err, MOAT_E_SYSTEM, EEXIST, "creating the cgroup %s", *p);
			return -2;
		}
	}
	for (p = all_paths(lp, paths); *p; p++)
		if (make_dir(*p, err) < 0)
			return err->errnum == EEXIST ? -3 - (int)(p - paths) : -1;
	if (lp->v2_memory) {
		if (set_limit(lp->cg_path_v2, "memory.max", l->memory_bytes, err) < 0)
			return -1;
		/* No swap: the limit is on memory, not on memory plus swap.
		 * Absent when the kernel does not account swap. */
		if (read_at(lp->cg_path_v2, "memory.swap.max", probe, sizeof(probe)) == 0 &&
		    set_limit(lp->cg_path_v2, "memory.swap.max", 0, err) < 0)
			return -1;
	}
	if (lp->v2_pids && set_limit(lp->cg_path_v2, "pids.max", l->pids, err) < 0)
		return -1;
	if (v1m[0]) {
		if (set_limit(v1m, "memory.limit_in_bytes", l->memory_bytes, err) < 0)
			return -1;
		if (read_at(v1m, "memory.memsw.limit_in_bytes", probe, sizeof(probe)) == 0 &&
		    set_limit(v1m, "memory.memsw.limit_in_bytes", l->memory_bytes, err) < 0)
			return -1;
	}
	if (v1p[0] && set_limit(v1p, "pids.max", l->pids, err) < 0)
		return -1;
	return 0;
}

/* Forget the paths of `lp` from index `from` of all_paths on: not this
 * run's, so that nothing after (the clean-up after a failed launch) kills
 * or removes them. */
static void forget_paths(struct limits_plan *lp, size_t from)
{
	const char *paths[CGV1__COUNT + 2];
	size_t n = 0;
	int i;

	all_paths(lp, paths);
	if (lp->cg_path_v2[0] && n++ >= from)
		lp->cg_path_v2[0] = '\0';
	for (i = 0; i < CGV1__COUNT; i++)
		if (lp->cg_path_v1[i][0] && n++ >= from)
			lp->cg_path_v1[i][0] = '\0';
}

int tree_cgroup_create(struct limits_plan *lp, const struct moat_limits *l, struct moat_error *err)
{
	int rc = create(lp, l, err);

	if (rc < 0) {
		/* A name made by someone else (a moat of the same pid in
		 * another pid namespace) between the planning, which took a
		 * free one, and now: not this run's to kill or remove, here or
		 * in moat's clean-up after the failed launch.  What this run
		 * made before it is. */
		if (rc == -2) {
			forget_paths(lp, 0);
		} else if (rc <= -3) {
			struct limits_plan mine = *lp;
			forget_paths(&mine, (size_t)(-3 - rc));
			tree_cgroup_destroy(&mine, NULL, NULL);
			forget_paths(lp, 0);
		} else {
			tree_cgroup_destroy(lp, NULL, NULL); /* what this run made of it */
		}
		return moat_error_hint(err, "moat needs its own cgroup for the declared limits; `moat probe` shows "
					    "what the host offers");
	}
	return 0;
}

int tree_cgroup_open_v2(const struct limits_plan *lp)
{
	if (!lp->cg_path_v2[0])
		return -1;
	return open(lp->cg_path_v2, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int tree_cgroup_add(const struct limits_plan *lp, pid_t pid, bool v2_done, struct moat_error *err)
{
	const char *paths[CGV1__COUNT + 2];
	const char *const *p;
	char text[24];
	int rc;

	snprintf(text, sizeof(text), "%d", (int)pid);
	for (p = all_paths(lp, paths); *p; p++)
		if (!(v2_done && *p == lp->cg_path_v2) && (rc = write_at(*p, "cgroup.procs", text)) < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, -rc, "moving the sandbox into %s", *p);
	return 0;
}

int64_t tree_cgroup_cpu_usec(const struct limits_plan *lp)
{
	int64_t ns;

	if (lp->cg_path_v2[0])
		return read_key_at(lp->cg_path_v2, "cpu.stat", "usage_usec");
	if (lp->cg_path_v1[CGV1_CPUACCT][0] && (ns = read_number_at(lp->cg_path_v1[CGV1_CPUACCT], "cpuacct.usage")) >= 0)
		return ns / 1000;
	return -1;
}

/* SIGKILL every process listed in dir/cgroup.procs; returns how many. */
static int kill_listed(const char *dir)
{
	char path[768];
	cleanup_fclose FILE *f = NULL;
	int pid, n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	while (f && fscanf(f, "%d", &pid) == 1)
		if (pid > 0 && kill(pid, SIGKILL) == 0)
			n++;
	return n;
}

static bool is_empty(const char *dir)
{
	char text[64];

	int rc = read_at(dir, "cgroup.procs", text, sizeof(text));

	/* A file that is not there: the cgroup is gone.  Any other failure
	 * (no descriptor left) says nothing about what is in it. */
	if (rc < 0)
		return rc == -ENOENT || rc == -ENODEV;
	return text[0] == '\0';
}

/* Freeze (or thaw) the tree's cgroup: v2's cgroup.freeze (with `v2`) or
 * the v1 freezer.  Freezing waits, bounded, until every process of it is
 * frozen.  0 when the state holds, -1 when not (no freezer, a write
 * refused, not frozen in time). */
static int set_frozen(const struct limits_plan *lp, bool v2, bool on)
{
	const char *fz = lp->cg_path_v1[CGV1_FREEZER];
	char state[32];
	int i;

	if (v2) {
		if (!lp->cg_path_v2[0] || write_at(lp->cg_path_v2, "cgroup.freeze", on ? "1" : "0") < 0)
			return -1;
		for (i = 0; on && i < 200; i++) {
			if (read_key_at(lp->cg_path_v2, "cgroup.events", "frozen") == 1)
				return 0;
			pause_ms(1);
		}
		return on ? -1 : 0;
	}
	if (!fz[0] || write_at(fz, "freezer.state", on ? "FROZEN" : "THAWED") < 0)
		return -1;
	for (i = 0; on && i < 200; i++) {
		if (read_at(fz, "freezer.state", state, sizeof(state)) < 0)
			return -1;
		if (strncmp(state, "FROZEN", 6) == 0)
			return 0;
		pause_ms(1);
	}
	return on ? -1 : 0;
}

/* Stop the tree from forking while it is killed: frozen processes cannot
 * make new ones, so one pass over the list gets them all. */
static void freeze(const struct limits_plan *lp, bool on)
{
	set_frozen(lp, lp->tree_kill == CG_KILL_V2_FREEZE, on);
}

int tree_cgroup_freeze(const struct limits_plan *lp, bool on)
{
	if (lp->tree_kill == CG_KILL_NONE)
		return -1;
	/* cgroup.freeze (Linux 5.2) is there wherever cgroup.kill (5.14) is. */
	return set_frozen(lp, lp->tree_kill != CG_KILL_V1_FREEZER, on);
}

int tree_cgroup_kill(const struct limits_plan *lp)
{
	const char *paths[CGV1__COUNT + 2], *dir;
	int round;

	all_paths(lp, paths);
	dir = paths[0];
	if (!dir)
		return 0;
	for (round = 0; round < KILL_ROUNDS; round++) {
		if (is_empty(dir))
			return 0;
		if (lp->tree_kill == CG_KILL_V2 && round % 100 == 0) {
			write_at(lp->cg_path_v2, "cgroup.kill", "1");
		} else if (round % 20 == 0) {
			freeze(lp, true);
			kill_listed(dir);
			/* SIGKILL is delivered to frozen tasks once thawed. */
			freeze(lp, false);
		}
		pause_ms(1);
	}
	return is_empty(dir) ? 0 : -1;
}

/* `file` in the cgroup directory `dir`, opened through a descriptor of the
 * directory itself: a link put in its place is not followed. */
static int open_counter(const char *dir, const char *file)
{
	cleanup_close int dfd = -1;

	if (!dir[0])
		return -1;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	return openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

static void open_memory_counters(const struct limits_plan *lp, struct tree_counters *c)
{
	const char *v1m = lp->cg_path_v1[CGV1_MEMORY];

	if (lp->v2_memory) {
		c->memory_events = open_counter(lp->cg_path_v2, "memory.events");
		c->memory_peak = open_counter(lp->cg_path_v2, "memory.peak");
	} else if (v1m[0]) {
		c->memory_events = open_counter(v1m, "memory.oom_control");
		c->memory_peak = open_counter(v1m, "memory.max_usage_in_bytes");
	}
}

void tree_counters_open(const struct limits_plan *lp, struct tree_counters *c)
{
	*c = (struct tree_counters)TREE_COUNTERS_NONE;
	if (lp->lim[LIM_MEMORY].declared)
		open_memory_counters(lp, c);
	if (!lp->lim[LIM_PIDS].declared)
		return;
	if (lp->v2_pids) {
		c->pids_events = open_counter(lp->cg_path_v2, "pids.events");
		c->pids_notify = c->pids_events >= 0;
	} else {
		c->pids_events = open_counter(lp->cg_path_v1[CGV1_PIDS], "pids.events");
	}
}

void tree_counters_close(struct tree_counters *c)
{
	moat_closep(&c->pids_events);
	moat_closep(&c->memory_events);
	moat_closep(&c->memory_peak);
	*c = (struct tree_counters)TREE_COUNTERS_NONE;
}

/* The whole file from its start (a kernfs file is made again at each read
 * from offset 0; reading it also rearms its poll). */
static int read_fd(int fd, char *out, size_t len)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, out, len - 1, 0);
	if (n < 0)
		return -1;
	out[n] = '\0';
	return 0;
}

static int64_t read_key_fd(int fd, const char *key)
{
	char text[2048];

	return read_fd(fd, text, sizeof(text)) < 0 ? -1 : key_in(text, key);
}

void tree_cgroup_memory_stats(const struct tree_counters *c, int64_t *peak, int64_t *oom_kills)
{
	char text[64];

	*oom_kills = read_key_fd(c->memory_events, "oom_kill");
	*peak = read_fd(c->memory_peak, text, sizeof(text)) < 0 ? -1 : number_in(text);
}

int64_t tree_cgroup_pids_refused(const struct tree_counters *c)
{
	return read_key_fd(c->pids_events, "max");
}

size_t tree_cgroup_destroy(const struct limits_plan *lp, void (*left)(void *ctx, const char *path, int errnum),
			   void *ctx)
{
	const char *paths[CGV1__COUNT + 2];
	const char *const *p;
	size_t n_left = 0;
	int round, why;

	tree_cgroup_kill(lp);
	for (p = all_paths(lp, paths); *p; p++) {
		if (lp->cg_path_v1[CGV1_FREEZER][0] && strcmp(*p, lp->cg_path_v1[CGV1_FREEZER]) == 0)
			write_at(*p, "freezer.state", "THAWED");
		/* The kernel frees the cgroup once its last task is reaped. */
		for (round = 0, why = EBUSY; round < 500 && why == EBUSY; round++) {
			if (rmdir(*p) == 0 || errno == ENOENT) {
				why = 0;
				break;
			}
			why = errno;
			if (why == EBUSY) {
				kill_listed(*p);
				pause_ms(2);
			}
		}
		if (why) {
			n_left++;
			if (left)
				left(ctx, *p, why);
		}
	}
	return n_left;
}
