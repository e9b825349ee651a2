/* bench/expand_floor: the kernel's own price of granting a directory around a
 * denied path with Landlock, with none of moat's code.
 *
 *   expand_floor ITER [DIR]        (DIR: /etc)
 *
 * Landlock has no "deny": a read grant of /etc that must leave out
 * /etc/shadow becomes one rule for each other entry of /etc, each on a
 * descriptor of its own (resolve/fsplan.c, expand; kernel/landlock.c).
 * This does exactly the system calls that takes, ITER times, and prints the
 * medians as one JSON object, in microseconds:
 *   list     opendir + readdir of DIR, and for each entry an
 *            openat(O_PATH|O_NOFOLLOW) and an fstat (its type picks the
 *            rule's rights, and binds the rule to the object opened);
 *   rules    landlock_create_ruleset + one landlock_add_rule an entry
 *            (symlinks get none, as in moat);
 *   close    close_range over the entries' descriptors, and the ruleset's.
 * It is the floor under moat's fs.expanded step and its part of the
 * Landlock compile: what no code of moat's can go below on this kernel
 * while the fallback keeps Landlock's rules on objects. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

#define MAX_ENTRIES 4096

int main(int argc, char **argv)
{
	int iter = argc > 1 ? atoi(argv[1]) : 0, i, entries = 0, rules_ok = 1;
	const char *dir = argc > 2 ? argv[2] : "/etc";
	static int fds[MAX_ENTRIES];
	static mode_t modes[MAX_ENTRIES];
	double *t_list, *t_rules, *t_close, *t_all;

	if (iter < 1) {
		fprintf(stderr, "usage: expand_floor ITER [DIR]\n");
		return 2;
	}
	t_list = calloc((size_t)iter, sizeof(double));
	t_rules = calloc((size_t)iter, sizeof(double));
	t_close = calloc((size_t)iter, sizeof(double));
	t_all = calloc((size_t)iter, sizeof(double));
	if (!t_list || !t_rules || !t_close || !t_all)
		return 1;
	for (i = 0; i < iter; i++) {
		struct landlock_ruleset_attr ra = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE |
									LANDLOCK_ACCESS_FS_READ_DIR |
									LANDLOCK_ACCESS_FS_EXECUTE};
		double t0, t1, t2, t3;
		struct dirent *e;
		DIR *d;
		int n = 0, k, rs;

		t0 = bench_now_us();
		d = opendir(dir);
		if (!d) {
			perror(dir);
			return 1;
		}
		while ((e = readdir(d)) != NULL && n < MAX_ENTRIES) {
			struct stat st;
			int fd;

			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			fd = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (fstat(fd, &st) != 0) {
				close(fd);
				continue;
			}
			fds[n] = fd;
			modes[n++] = st.st_mode;
		}
		closedir(d);
		t1 = bench_now_us();
		rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
		for (k = 0; k < n && rs >= 0; k++) {
			struct landlock_path_beneath_attr pb = {.parent_fd = fds[k]};

			if (S_ISLNK(modes[k]))
				continue;
			pb.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE |
					    (S_ISDIR(modes[k]) ? LANDLOCK_ACCESS_FS_READ_DIR : 0);
			if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
				rules_ok = 0;
		}
		if (rs < 0)
			rules_ok = 0;
		t2 = bench_now_us();
		if (n > 0 && syscall(SYS_close_range, (unsigned)fds[0], (unsigned)fds[n - 1], 0) != 0)
			for (k = 0; k < n; k++)
				close(fds[k]);
		if (rs >= 0)
			close(rs);
		t3 = bench_now_us();
		entries = n;
		t_list[i] = t1 - t0;
		t_rules[i] = t2 - t1;
		t_close[i] = t3 - t2;
		t_all[i] = t3 - t0;
	}
	printf("{\"dir\": \"%s\", \"entries\": %d, \"iterations\": %d, \"landlock\": %s, \"list_us\": %.1f, "
	       "\"rules_us\": %.1f, \"close_us\": %.1f, \"total_us\": %.1f}\n",
	       dir, entries, iter, rules_ok ? "true" : "false", bench_median(t_list, (size_t)iter), bench_median(t_rules, (size_t)iter),
	       bench_median(t_close, (size_t)iter), bench_median(t_all, (size_t)iter));
	return 0;
}
