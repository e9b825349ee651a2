#include "launch/runtime_cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/clock.h"
#include "util/pause.h"

#define MAX_HIERARCHIES 16
#define MAX_DEPTH 8                      /* children of children: runc makes none */
#define KILL_NS (2000LL * 1000 * 1000)   /* killing: at most 2 s */
#define RMDIR_NS (1000LL * 1000 * 1000)  /* then removing: at most 1 s */

struct found {
	char dir[MAX_HIERARCHIES][PATH_MAX];
	size_t n;
};

/* Is `tok` one of the comma-separated words of `list`? */
static bool has_word(const char *list, const char *tok, size_t len)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == len && strncmp(p, tok, len) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* This process's path in the hierarchy mounted with `fstype` and the super
 * options `opts` (v1: its controllers or name=; v2: the "0::" line). */
static bool own_path(const char *fstype, const char *opts, char *out, size_t len)
{
	cleanup_fclose FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 256];
	bool v2 = strcmp(fstype, "cgroup2") == 0;

	while (f && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *path;
		if (!ctl || !(path = strchr(ctl + 1, ':')))
			continue;
		ctl++;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		/* A v1 line matches the mount that carries its first controller. */
		if (v2 ? *ctl == '\0' : (*ctl && has_word(opts, ctl, strcspn(ctl, ",")))) {
			snprintf(out, len, "%s", path);
			return true;
		}
	}
	return false;
}

/* Every hierarchy where this process's cgroup has a directory `name`. */
static void find_dirs(const char *name, struct found *fd)
{
	cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[2 * PATH_MAX];

	fd->n = 0;
	while (f && fgets(line, sizeof(line), f) && fd->n < MAX_HIERARCHIES) {
		char root[PATH_MAX], mnt[PATH_MAX], fstype[32], opts[512], own[PATH_MAX];
		const char *rel, *sep = strstr(line, " - ");
		struct stat st;
		size_t rl;

		if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(sep + 3, "%31s %*s %511s", fstype, opts) != 2)
			continue;
		if ((strcmp(fstype, "cgroup") != 0 && strcmp(fstype, "cgroup2") != 0) ||
		    !own_path(fstype, opts, own, sizeof(own)))
			continue;
		/* The mount shows the hierarchy from `root` down: our cgroup is
		 * only reachable through it when it lies below that root. */
		rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
		if (rl && (strncmp(own, root, rl) != 0 || (own[rl] != '/' && own[rl] != '\0')))
			continue;
		rel = own + rl;
		if ((size_t)snprintf(fd->dir[fd->n], PATH_MAX, "%s%s/%s", mnt, strcmp(rel, "/") == 0 ? "" : rel,
				     name) >= PATH_MAX)
			continue;
		if (lstat(fd->dir[fd->n], &st) == 0 && S_ISDIR(st.st_mode))
			fd->n++;
	}
}

static void write_file(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 32];
	cleanup_close int fd = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && write(fd, text, strlen(text)) < 0) {
		/* A hierarchy that cannot do it: killing still works. */
	}
}

static bool file_says(const char *dir, const char *file, const char *what)
{
	char path[PATH_MAX + 32], text[256];
	cleanup_close int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || (n = read(fd, text, sizeof(text) - 1)) < 0)
		return false;
	text[n] = '\0';
	return strstr(text, what) != NULL;
}

/* Freeze (or thaw) the cgroup, where its hierarchy has a freezer: frozen
 * processes cannot fork, so one pass over the list gets them all.  A
 * SIGKILLed frozen process dies once thawed. */
static void set_frozen(const char *dir, bool on)
{
	char probe[PATH_MAX + 32];
	const char *file, *done;
	int i;

	snprintf(probe, sizeof(probe), "%s/freezer.state", dir);
	if (access(probe, F_OK) == 0) {
		file = "freezer.state";
		write_file(dir, file, on ? "FROZEN" : "THAWED");
		done = "FROZEN";
	} else {
		snprintf(probe, sizeof(probe), "%s/cgroup.freeze", dir);
		if (access(probe, F_OK) != 0)
			return;
		write_file(dir, "cgroup.freeze", on ? "1" : "0");
		file = "cgroup.events";
		done = "frozen 1";
	}
	for (i = 0; on && i < 50 && !file_says(dir, file, done); i++)
		moat_pause_ms(1);
}

/* SIGKILL every process of `dir` and of the cgroups below it; returns how
 * many were listed. */
static int kill_below(const char *dir, int depth)
{
	char path[PATH_MAX + 32];
	cleanup_fclose FILE *f = NULL;
	cleanup_closedir DIR *d = NULL;
	struct dirent *e;
	int pid, n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	while (f && fscanf(f, "%d", &pid) == 1)
		if (pid > 1) {
			kill(pid, SIGKILL);
			n++;
		}
	if (depth >= MAX_DEPTH || !(d = opendir(dir)))
		return n;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < PATH_MAX)
			n += kill_below(path, depth + 1);
	return n;
}

/* rmdir `dir`, its children first; false while one is still there and busy
 * (a process in it has not ended yet): worth another try. */
static bool remove_below(const char *dir, int depth)
{
	char path[PATH_MAX + 32];
	cleanup_closedir DIR *d = NULL;
	struct dirent *e;

	if (depth < MAX_DEPTH && (d = opendir(dir)))
		while ((e = readdir(d)))
			if (e->d_type == DT_DIR && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
			    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < PATH_MAX)
				remove_below(path, depth + 1);
	return rmdir(dir) == 0 || errno != EBUSY;
}

void runtime_cgroups_remove(const char *name)
{
	struct found fd;
	int64_t deadline;
	size_t i;
	bool left;

	if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return;
	find_dirs(name, &fd);
	if (fd.n == 0)
		return;
	deadline = moat_mono_ns() + KILL_NS;
	for (;;) {
		int listed = 0;
		for (i = 0; i < fd.n; i++)
			set_frozen(fd.dir[i], true);
		for (i = 0; i < fd.n; i++)
			listed += kill_below(fd.dir[i], 0);
		for (i = 0; i < fd.n; i++)
			set_frozen(fd.dir[i], false);
		if (listed == 0 || moat_mono_ns() > deadline)
			break;
		moat_pause_ms(2);
	}
	/* The kernel frees a cgroup once its last process is gone. */
	deadline = moat_mono_ns() + RMDIR_NS;
	do {
		left = false;
		for (i = 0; i < fd.n; i++)
			if (!remove_below(fd.dir[i], 0)) {
				left = true;
				kill_below(fd.dir[i], 0);
			}
		if (left)
			moat_pause_ms(2);
	} while (left && moat_mono_ns() < deadline);
}
