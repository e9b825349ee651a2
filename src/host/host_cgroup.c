/* What the host's cgroups offer this process (host/host.h): read from
 * /proc/self/mountinfo, /proc/self/cgroup and the cgroup files, creating
 * nothing.  Only runs that declare a tree limit, or that cannot have a pid
 * namespace, ask (plan.c), and `moat probe`. */
#include "host/host.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/mountinfo.h"

static const char *const v1_names[CGV1__COUNT] = {"memory", "pids", "cpuacct", "freezer"};

const char *cg_v1_name(enum cg_v1_controller c)
{
	return (unsigned)c < CGV1__COUNT ? v1_names[c] : "?";
}

/* Is `name` one of the comma-separated words of `list`? */
static bool in_list(const char *list, const char *name, char sep)
{
	size_t n = strlen(name);
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* fopen, noting in c a failure that is moat's, not the host's. */
static FILE *cg_fopen(struct moat_cgroup_info *c, const char *path)
{
	FILE *f = fopen(path, "re");

	if (!f && moat_errno_out_of_resources(errno) && !c->open_errno) {
		c->open_errno = errno;
		snprintf(c->open_errno_at, sizeof(c->open_errno_at), "%s", path);
	}
	return f;
}

static void read_line(struct moat_cgroup_info *c, const char *path, char *out, size_t len)
{
	cleanup_fclose FILE *f = cg_fopen(c, path);

	out[0] = '\0';
	if (f && fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
}

/* A limit file: a number, or "max" (v2) / a huge number (v1) for none. */
static int64_t read_limit(struct moat_cgroup_info *c, const char *path)
{
	char text[64], *end;
	long long v;

	read_line(c, path, text, sizeof(text));
	if (!text[0] || strcmp(text, "max") == 0)
		return CG_UNLIMITED;
	errno = 0;
	v = strtoll(text, &end, 10);
	/* v1 says "no limit" as PAGE_COUNTER_MAX pages: about 2^63. */
	if (errno || *end || v < 0 || v >= (INT64_C(1) << 62))
		return CG_UNLIMITED;
	return v;
}

/* The tightest `file` limit from `dir` up to `top` (the hierarchy's root). */
static void tightest(struct moat_cgroup_info *c, const char *top, const char *dir, const char *file, int64_t *best,
		     char *at, size_t at_len)
{
	char d[512], path[600];
	size_t top_len = strlen(top);

	snprintf(d, sizeof(d), "%s", dir);
	for (;;) {
		int64_t v;
		char *slash;

		snprintf(path, sizeof(path), "%s/%s", d, file);
		v = read_limit(c, path);
		if (v != CG_UNLIMITED && (*best == CG_UNLIMITED || v < *best)) {
			*best = v;
			snprintf(at, at_len, "%s", d);
		}
		if (strlen(d) <= top_len)
			return;
		slash = strrchr(d, '/');
		if (!slash || (size_t)(slash - d) < top_len)
			return;
		*slash = '\0';
	}
}

struct mount_entry {
	char root[512];
	char point[256];
	char super[256];
};

/* Join a hierarchy's mount and our path in it (from /proc/self/cgroup). */
static bool cgroup_dir(const struct mount_entry *m, const char *rel, char *out, size_t len)
{
	const char *p = rel;

	/* A mount of a sub-tree (root != "/") shows paths below its root. */
	if (strcmp(m->root, "/") != 0) {
		size_t n = strlen(m->root);
		if (strncmp(rel, m->root, n) != 0 || (rel[n] != '/' && rel[n] != '\0'))
			return false;
		p = rel + n;
	}
	if ((size_t)snprintf(out, len, "%s%s%s", m->point, *p == '/' ? "" : "/", p) >= len)
		return false;
	if (strlen(out) > 1 && out[strlen(out) - 1] == '/')
		out[strlen(out) - 1] = '\0';
	return true;
}

/* A child cgroup of `dir` can be made, and processes moved into it. */
static bool dir_writable(const char *dir, char *why, size_t len, uid_t uid)
{
	char procs[600];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	if (access(dir, W_OK) != 0 || access(procs, W_OK) != 0) {
		snprintf(why, len, "%s is not writable by uid %u: %s", dir, (unsigned)uid, strerror(errno));
		return false;
	}
	return true;
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}

static void probe_v2(const struct moat_host *h, struct moat_cgroup_info *c, const struct mount_entry *m,
		     const char *rel)
{
	char path[600];

	snprintf(c->mount, sizeof(c->mount), "%s", m->point);
	if (!rel[0]) {
		snprintf(c->why, sizeof(c->why), "/proc/self/cgroup has no cgroup v2 entry");
		return;
	}
	if (!cgroup_dir(m, rel, c->path, sizeof(c->path))) {
		snprintf(c->why, sizeof(c->why), "our cgroup %.160s is outside the mounted part of the hierarchy", rel);
		c->path[0] = '\0';
		return;
	}
	if (access(c->path, F_OK) != 0) {
		snprintf(c->why, sizeof(c->why), "our cgroup %.160s is not visible in this mount namespace", c->path);
		c->path[0] = '\0';
		return;
	}
	c->v2 = true;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", c->path);
	read_line(c, path, c->controllers, sizeof(c->controllers));
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", c->path);
	read_line(c, path, c->subtree, sizeof(c->subtree));
	/* The root cgroup has neither file; a child of it does, from 5.14 and
	 * 5.2 on. */
	snprintf(path, sizeof(path), "%s/cgroup.kill", c->path);
	c->v2_kill = access(path, F_OK) == 0 || (strcmp(c->path, c->mount) == 0 && kernel_at_least(5, 14));
	snprintf(path, sizeof(path), "%s/cgroup.freeze", c->path);
	c->v2_freeze = access(path, F_OK) == 0 || (strcmp(c->path, c->mount) == 0 && kernel_at_least(5, 2));
	c->delegated = dir_writable(c->path, c->why, sizeof(c->why), h->uid);
	if (!c->limits_read)
		return;
	tightest(c, c->mount, c->path, "memory.max", &c->enclosing_memory, c->enclosing_memory_at,
		 sizeof(c->enclosing_memory_at));
	/* The root cgroup has no memory.swap.max; a child has it when the
	 * kernel accounts swap, as the cgroup this process is in does. */
	snprintf(path, sizeof(path), "%s/memory.swap.max", c->path);
	c->swap_limit_v2 = access(path, F_OK) == 0 && !h->swap_limit_limited;
	tightest(c, c->mount, c->path, "pids.max", &c->enclosing_pids, c->enclosing_pids_at,
		 sizeof(c->enclosing_pids_at));
}

/* The line of /proc/self/cgroup for a v1 hierarchy holding `controller`
 * ("4:memory:/a/b", "2:cpu,cpuacct:/"), or for v2 ("0::/a"). */
static void our_paths(struct moat_cgroup_info *c, char rel_v1[CGV1__COUNT][512], char *rel_v2, size_t len)
{
	cleanup_fclose FILE *f = cg_fopen(c, "/proc/self/cgroup");
	char line[1024];
	int i;

	rel_v2[0] = '\0';
	for (i = 0; i < CGV1__COUNT; i++)
		rel_v1[i][0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *first = strchr(line, ':'), *second = first ? strchr(first + 1, ':') : NULL;
		if (!second)
			continue;
		*second = '\0';
		second[1 + strcspn(second + 1, "\n")] = '\0';
		if (first[1] == '\0') {
			snprintf(rel_v2, len, "%s", second + 1);
			continue;
		}
		for (i = 0; i < CGV1__COUNT; i++)
			if (in_list(first + 1, v1_names[i], ','))
				snprintf(rel_v1[i], sizeof(rel_v1[i]), "%s", second + 1);
	}
}

/* Any swap area in use (/proc/swaps: a header line, then one per area).
 * Unreadable counts as swap: a limit is not claimed on a guess. */
static bool host_has_swap(void)
{
	cleanup_fclose FILE *f = fopen("/proc/swaps", "re");
	char line[512];
	int lines = 0;

	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		lines++;
	return lines > 1;
}

void host_probe_cgroup(const struct moat_host *h, bool limits, struct moat_cgroup_info *c)
{
	cleanup_fclose FILE *mi = NULL;
	struct mount_entry v1m[CGV1__COUNT], v2m;
	char line[4096], rel_v1[CGV1__COUNT][512], rel_v2[512];
	bool v1 = false, have_v2 = false, have_v1[CGV1__COUNT] = {false};
	int i;

	memset(c, 0, sizeof(*c));
	c->probed = true;
	c->limits_read = limits;
	c->enclosing_memory = c->enclosing_pids = CG_UNLIMITED;
	c->host_swap = limits && (h->swap_limit_limited || host_has_swap());
	snprintf(c->layout, sizeof(c->layout), "none");
	for (i = 0; i < CGV1__COUNT; i++)
		snprintf(c->v1[i].why, sizeof(c->v1[i].why), "no cgroup v1 hierarchy has the %s controller",
			 v1_names[i]);
	if (h->cgroup_limited) {
		snprintf(c->why, sizeof(c->why), "disabled by MOAT_HOST_LIMIT");
		for (i = 0; i < CGV1__COUNT; i++)
			snprintf(c->v1[i].why, sizeof(c->v1[i].why), "disabled by MOAT_HOST_LIMIT");
		return;
	}
	mi = cg_fopen(c, "/proc/self/mountinfo");
	while (mi && fgets(line, sizeof(line), mi)) {
		/* id parent major:minor root mountpoint opts... - fstype source superopts */
		char *fields[5] = {0}, *save = NULL, *dash = strstr(line, " - "), *fstype, *super, *p;
		struct mount_entry m;
		int n = 0;

		if (!dash)
			continue;
		*dash = '\0';
		fstype = strtok_r(dash + 3, " \n", &save);
		if (!fstype || (strcmp(fstype, "cgroup") != 0 && strcmp(fstype, "cgroup2") != 0))
			continue;
		(void)strtok_r(NULL, " \n", &save); /* source */
		super = strtok_r(NULL, " \n", &save);
		save = NULL;
		for (p = strtok_r(line, " ", &save); p && n < 5; p = strtok_r(NULL, " ", &save))
			fields[n++] = p;
		if (n < 5)
			continue;
		mountinfo_unescape(fields[3]);
		mountinfo_unescape(fields[4]);
		snprintf(m.root, sizeof(m.root), "%s", fields[3]);
		snprintf(m.point, sizeof(m.point), "%s", fields[4]);
		snprintf(m.super, sizeof(m.super), "%s", super ? super : "");
		if (strcmp(fstype, "cgroup2") == 0) {
			if (!have_v2 && !h->cgroup_v2_limited)
				v2m = m, have_v2 = true;
			continue;
		}
		v1 = true;
		for (i = 0; i < CGV1__COUNT; i++)
			if (!have_v1[i] && in_list(m.super, v1_names[i], ',') && !h->cgroup_v1_limited)
				v1m[i] = m, have_v1[i] = true;
	}
	if (h->cgroup_v1_limited)
		v1 = false;
	snprintf(c->layout, sizeof(c->layout), "%s", have_v2 ? (v1 ? "hybrid" : "unified") : (v1 ? "legacy" : "none"));
	our_paths(c, rel_v1, rel_v2, sizeof(rel_v2));

	if (have_v2)
		probe_v2(h, c, &v2m, rel_v2);
	else
		snprintf(c->why, sizeof(c->why), "%s",
			 h->cgroup_v2_limited ? "cgroup v2 disabled by MOAT_HOST_LIMIT"
			 : v1		      ? "only cgroup v1 hierarchies are mounted"
					      : "no cgroup hierarchy is mounted");

	for (i = 0; i < CGV1__COUNT; i++) {
		char *dir = c->v1[i].path;

		if (!have_v1[i]) {
			if (h->cgroup_v1_limited)
				snprintf(c->v1[i].why, sizeof(c->v1[i].why), "cgroup v1 disabled by MOAT_HOST_LIMIT");
			continue;
		}
		if (!rel_v1[i][0] || !cgroup_dir(&v1m[i], rel_v1[i], dir, sizeof(c->v1[i].path)) ||
		    access(dir, F_OK) != 0) {
			snprintf(c->v1[i].why, sizeof(c->v1[i].why), "our %s cgroup is not visible at %s", v1_names[i],
				 v1m[i].point);
			dir[0] = '\0';
			continue;
		}
		c->v1[i].writable = dir_writable(dir, c->v1[i].why, sizeof(c->v1[i].why), h->uid);
		if (!c->limits_read)
			continue;
		if (i == CGV1_MEMORY) {
			char memsw[600];
			int64_t v2_memory = c->enclosing_memory;

			tightest(c, v1m[i].point, dir, "memory.limit_in_bytes", &c->enclosing_memory,
				 c->enclosing_memory_at, sizeof(c->enclosing_memory_at));
			c->enclosing_memory_v1 = c->enclosing_memory != v2_memory;
			snprintf(memsw, sizeof(memsw), "%s/memory.memsw.limit_in_bytes", dir);
			c->swap_limit_v1 = access(memsw, F_OK) == 0 && !h->swap_limit_limited;
		} else if (i == CGV1_PIDS) {
			tightest(c, v1m[i].point, dir, "pids.max", &c->enclosing_pids, c->enclosing_pids_at,
				 sizeof(c->enclosing_pids_at));
		}
	}
}
