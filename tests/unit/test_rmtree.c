/* Unit tests: util/rmtree.c removes a tree a sandbox could write without
 * ever leaving it -- a planted symlink is removed as a link, and a directory
 * swapped for a link to an outside directory while the removal runs does not
 * lead the removal out (a by-name walk, nftw and remove(path), deleted the
 * outside files in this race). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "util/rmtree.h"

static char T[256];

static void put(const char *rel)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	f = fopen(p, "w");
	if (f) {
		fputs("x\n", f);
		fclose(f);
	}
}

static int exists(const char *rel)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	return lstat(p, &st) == 0;
}

static void test_plain(void)
{
	char p[512], q[512];

	snprintf(p, sizeof(p), "%s/outside", T);
	mkdir(p, 0755);
	put("outside/keep");
	snprintf(p, sizeof(p), "%s/tree", T);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/tree/a", T);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/tree/a/b", T);
	mkdir(p, 0700);
	put("tree/a/b/f");
	put("tree/top");
	snprintf(p, sizeof(p), "%s/outside", T);
	snprintf(q, sizeof(q), "%s/tree/a/link", T);
	if (symlink(p, q) != 0)
		perror("symlink");
	snprintf(p, sizeof(p), "%s/tree", T);
	ok(rmtree(p) == 0, "a tree with nested directories, files and a link to an outside directory is removed");
	ok(!exists("tree"), "  nothing of it is left");
	ok(exists("outside/keep"), "  the link was removed as a link: the outside file is still there");
	snprintf(p, sizeof(p), "%s/tree", T);
	ok(rmtree(p) == 0, "removing a tree that is gone is not an error");
	snprintf(p, sizeof(p), "%s/outside", T);
	snprintf(q, sizeof(q), "%s/toplink", T);
	if (symlink(p, q) != 0)
		perror("symlink");
	ok(rmtree(q) == -ENOTDIR || rmtree(q) == -ELOOP, "a top that is a link is not followed");
	ok(exists("outside/keep"), "  the outside file is still there");
	unlink(q);
	/* The empty directory's one rmdir (a clean private TMPDIR): a link to
	 * an empty directory is still not followed, the empty one goes. */
	snprintf(p, sizeof(p), "%s/empty-target", T);
	mkdir(p, 0755);
	snprintf(q, sizeof(q), "%s/emptylink", T);
	if (symlink(p, q) != 0)
		perror("symlink");
	ok(rmtree(q) < 0 && exists("empty-target") && exists("emptylink"),
	   "a top that is a link to an empty directory is not followed, nor removed");
	unlink(q);
	ok(rmtree(p) == 0 && !exists("empty-target"), "an empty directory is removed");
}

/* A child keeps swapping tree/d (a directory full of files) for a link to
 * outside/ and back while rmtree runs: no file of outside/ may go. */
static void test_swap_race(void)
{
	char tree[512], d[512], dd[512], out[512], name[64];
	int round, lost = 0, i;

	snprintf(out, sizeof(out), "%s/out2", T);
	mkdir(out, 0755);
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "out2/f%d", i);
		put(name);
	}
	for (round = 0; round < 30 && !lost; round++) {
		pid_t pid;

		snprintf(tree, sizeof(tree), "%s/race", T);
		snprintf(d, sizeof(d), "%s/race/d", T);
		snprintf(dd, sizeof(dd), "%s/race/d.real", T);
		mkdir(tree, 0755);
		mkdir(d, 0755);
		for (i = 0; i < 200; i++) {
			snprintf(name, sizeof(name), "race/d/f%d", i);
			put(name);
		}
		pid = fork();
		if (pid == 0) {
			for (i = 0; i < 20000; i++) {
				if (rename(d, dd) == 0) {
					if (symlink(out, d) != 0)
						_exit(0);
					usleep(50);
					unlink(d);
					rename(dd, d);
				}
			}
			_exit(0);
		}
		usleep(200);
		rmtree(tree);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		rmtree(tree); /* what the swapper put back */
		for (i = 0; i < 200; i++) {
			snprintf(name, sizeof(name), "out2/f%d", i);
			if (!exists(name))
				lost++;
		}
	}
	ok(lost == 0, "30 removals raced by a directory swapped for a link to outside: %d outside files lost", lost);
}

int main(void)
{
	snprintf(T, sizeof(T), "/tmp/moat-test-rmtree.XXXXXX");
	if (!mkdtemp(T)) {
		perror("mkdtemp");
		return 1;
	}
	test_plain();
	test_swap_race();
	rmtree(T);
	return tap_done();
}
