/* Unit tests: util/rmtree.c removes a tree a sandbox could write without
 * ever leaving it -- a planted symlink is removed as a link, and a directory
 * swapped for a link to an outside directory while the removal runs does not
 * lead the removal out (a by-name walk, nftw and remove(path), deleted the
 * outside files in this race).  A tree of any depth goes (a command made
 * one 300 deep: rmtree stopped at 256 and left it on the host), with the
 * same care where it moves a too-deep directory up; and one whose
 * directories the command chmodded to 0 or 0500 (the owner could neither
 * list them nor empty them). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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

/* `n` files f0... in the directory `dir`. */
static void fill(const char *dir, int n)
{
	char f[1100];
	int i;

	for (i = 0; i < n; i++) {
		FILE *fp;

		snprintf(f, sizeof(f), "%s/f%d", dir, i);
		fp = fopen(f, "w");
		if (fp)
			fclose(fp);
	}
}

/* One round: `d` (in `tree`) filled with `n` files, and a child that keeps
 * swapping it for a link to `out` (`outrel` below T, holding f0... too)
 * and back while rmtree removes `tree`.  How many files of `out` are lost. */
static int race_round(const char *tree, const char *d, const char *out, const char *outrel, int n)
{
	char dd[1040], name[64];
	int i, lost = 0;
	pid_t pid;

	fill(d, n);
	snprintf(dd, sizeof(dd), "%s.real", d);
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
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s/f%d", outrel, i);
		if (!exists(name))
			lost++;
	}
	return lost;
}

/* A child keeps swapping tree/d (a directory full of files) for a link to
 * outside/ and back while rmtree runs: no file of outside/ may go. */
static void test_swap_race(void)
{
	char tree[512], d[512], out[512];
	int round, lost = 0;

	snprintf(out, sizeof(out), "%s/out2", T);
	mkdir(out, 0755);
	fill(out, 200);
	for (round = 0; round < 30 && !lost; round++) {
		snprintf(tree, sizeof(tree), "%s/race", T);
		snprintf(d, sizeof(d), "%s/race/d", T);
		mkdir(tree, 0755);
		mkdir(d, 0755);
		lost += race_round(tree, d, out, "out2", 200);
	}
	ok(lost == 0, "30 removals raced by a directory swapped for a link to outside: %d outside files lost", lost);
}

/* Makes `top`/d/d/.../d, `n` levels below `top` (by descriptors: deeper
 * than PATH_MAX allows a name), and in the last one a file and a link to
 * `out`; 0 when made. */
static int deep_chain(const char *top, int n, const char *out)
{
	int fd = open(top, O_RDONLY | O_DIRECTORY), i, f;

	for (i = 0; i < n && fd >= 0; i++) {
		int sub;

		if (mkdirat(fd, "d", 0700) != 0) {
			close(fd);
			return -1;
		}
		sub = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		close(fd);
		fd = sub;
	}
	if (fd < 0)
		return -1;
	f = openat(fd, "f", O_WRONLY | O_CREAT, 0600);
	if (f >= 0)
		close(f);
	i = f >= 0 && symlinkat(out, fd, "out") == 0 ? 0 : -1;
	close(fd);
	return i;
}

static void test_deep(void)
{
	static const int depths[] = {255, 256, 257, 300, 600, 3000};
	char p[512], out[512];

	snprintf(out, sizeof(out), "%s/outside", T);
	for (size_t k = 0; k < sizeof(depths) / sizeof(depths[0]); k++) {
		snprintf(p, sizeof(p), "%s/deep", T);
		mkdir(p, 0700);
		if (deep_chain(p, depths[k], out) != 0)
			perror("deep_chain");
		ok(rmtree(p) == 0, "a tree %d directories deep, a file and a link to outside at its bottom, is removed",
		   depths[k]);
		ok(!exists("deep"), "  nothing of it is left");
		ok(exists("outside/keep"), "  the link was removed as a link: the outside file is still there");
	}
}

/* The same swap, of a directory full of files for a link to outside/, at
 * the depth where rmtree moves a directory up instead of entering it: the
 * move takes the link (into the tree), never what it leads to. */
static void test_deep_swap_race(void)
{
	char tree[512], d[1024], out[512];
	int round, lost = 0, i;
	size_t len;

	snprintf(out, sizeof(out), "%s/out3", T);
	mkdir(out, 0755);
	fill(out, 100);
	for (round = 0; round < 20 && !lost; round++) {
		snprintf(tree, sizeof(tree), "%s/race3", T);
		mkdir(tree, 0755);
		len = (size_t)snprintf(d, sizeof(d), "%s", tree);
		for (i = 0; i < 256; i++) {
			len += (size_t)snprintf(d + len, sizeof(d) - len, "/d");
			mkdir(d, 0700);
		}
		snprintf(d + len, sizeof(d) - len, "/x");
		mkdir(d, 0700);
		lost += race_round(tree, d, out, "out3", 100);
	}
	ok(lost == 0, "20 removals raced by a directory 256 deep swapped for a link to outside: %d outside files lost", lost);
	ok(!exists("race3"), "  and the tree is gone");
}

/* In `dir`: a 0500 directory holding a 0 one holding a file, a 0100 one,
 * and `dir` itself 0; then rmtree(dir).  Bit 0 of the result: rmtree
 * returned 0; bit 1: something is left. */
static int chmodded_tree(const char *dir)
{
	char p[700];
	struct stat st;
	int rc, bits = 0;

	snprintf(p, sizeof(p), "%s/ro", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/ro/none", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/ro/none/f", dir);
	close(open(p, O_WRONLY | O_CREAT, 0600));
	chmod(p, 0);
	snprintf(p, sizeof(p), "%s/ro/none", dir);
	chmod(p, 0);
	snprintf(p, sizeof(p), "%s/ro", dir);
	chmod(p, 0500);
	snprintf(p, sizeof(p), "%s/xonly", dir);
	mkdir(p, 0100);
	chmod(dir, 0);
	rc = rmtree(dir);
	if (rc == 0)
		bits |= 1;
	if (lstat(dir, &st) == 0)
		bits |= 2;
	return bits;
}

/* As the tree's owner without CAP_DAC_OVERRIDE (root runs it as nobody:
 * root passes any mode bits), in a child. */
static void test_chmodded(void)
{
	char parent[512], dir[600];
	int status = 0;
	pid_t pid;

	/* chp/chm: nobody's too is the directory it is removed from */
	snprintf(parent, sizeof(parent), "%s/chp", T);
	snprintf(dir, sizeof(dir), "%s/chm", parent);
	mkdir(parent, 0700);
	mkdir(dir, 0700);
	chmod(T, 0711);
	if (geteuid() == 0 && (chown(parent, 65534, 65534) != 0 || chown(dir, 65534, 65534) != 0))
		perror("chown");
	pid = fork();
	if (pid == 0) {
		if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
				       setresuid(65534, 65534, 65534) != 0))
			_exit(100);
		_exit(chmodded_tree(dir));
	}
	waitpid(pid, &status, 0);
	chmod(T, 0700);
	ok(WIFEXITED(status) && (WEXITSTATUS(status) & 1), "a tree whose directories were chmodded to 0, 0500 and 0100, "
	   "the top too, is removed by its owner (status %d)", WEXITSTATUS(status));
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 1, "  nothing of it is left");
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
	test_deep();
	test_deep_swap_race();
	test_chmodded();
	rmtree(T);
	return tap_done();
}
