/* Unit tests of util/file.c: a file read without following a link at its
 * name, and replaced atomically -- its mode kept, nothing left beside it,
 * and never over a change another program made after it was read; and
 * file_write_all on a pipe someone else made non-blocking. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "util/file.h"

static char dir[] = "/tmp/moat-test-file.XXXXXX";

static void put(const char *name, const char *text, mode_t mode)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, mode);
}

static char *get(int dfd, const char *name, struct stat *st)
{
	struct moat_error err = {0};
	char *text = NULL;
	size_t len;

	if (file_read_at(dfd, name, name, 1 << 20, false, &text, &len, st, &err) < 0)
		return NULL;
	return text;
}

static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0);
	if (d)
		closedir(d);
	return n;
}

/* 1 MiB into a non-blocking pipe whose reader starts only after 200 ms and
 * reads slowly: every byte arrives, in order, and the writer waited in
 * poll rather than failing with EAGAIN (or spinning: its CPU time stays
 * far below the wait). */
static void nonblocking_pipe(void)
{
	enum { LEN = 1 << 20 };
	char *buf = malloc(LEN);
	int p[2], status = 0, rc;
	size_t i, got = 0;
	pid_t reader;
	struct timespec t0, t1;
	clock_t c0;

	for (i = 0; i < LEN; i++)
		buf[i] = (char)(i * 7);
	if (pipe2(p, O_CLOEXEC) != 0) {
		ok(0, "pipe2");
		return;
	}
	reader = fork();
	if (reader == 0) {
		char r[4096];
		ssize_t n;

		close(p[1]);
		usleep(200000);
		while ((n = read(p[0], r, sizeof(r))) > 0) {
			for (ssize_t k = 0; k < n; k++, got++)
				if (r[k] != (char)(got * 7))
					_exit(2);
			if (got % (64 << 10) < sizeof(r))
				usleep(10000);
		}
		_exit(got == LEN ? 0 : 1);
	}
	close(p[0]);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	ok(write(p[1], buf, 0) == 0 && (fcntl(p[1], F_GETFL) & O_NONBLOCK), "the pipe is non-blocking");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c0 = clock();
	rc = file_write_all(p[1], buf, LEN);
	ok(rc == 0, "file_write_all: 1 MiB into a full non-blocking pipe%s%s", rc ? ": " : "",
	   rc ? strerror(errno) : "");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok((double)(clock() - c0) / CLOCKS_PER_SEC < 0.1 &&
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > 0.15,
	   "  it waited for the reader (%.3f s) without spinning (%.3f s of CPU)",
	   (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	   (double)(clock() - c0) / CLOCKS_PER_SEC);
	close(p[1]);
	waitpid(reader, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "  the reader got every byte, in order (status %d)",
	   status);

	/* Control: a plain write says EAGAIN once the pipe is full. */
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
		ssize_t n = write(p[1], buf, LEN);
		ssize_t m = write(p[1], buf, LEN);

		ok(n > 0 && n < LEN && m < 0 && errno == EAGAIN,
		   "control: write(2) alone stops at the pipe's size (%zd bytes) and then says EAGAIN", n);
		close(p[0]);
		close(p[1]);
	}
	free(buf);
}

int main(void)
{
	struct moat_error err = {0};
	struct stat st, now;
	char *text;
	int dfd;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	put("a.json", "{\"old\": 1}\n", 0640);
	text = get(dfd, "a.json", &st);
	is_str(text, "{\"old\": 1}\n", "read whole");
	free(text);
	ok(file_replace_at(dfd, "a.json", "a.json", "{\"new\": 2}\n", 11, st.st_mode, &st, false, &err) == 0,
	   "replaced while unchanged (%s)", err.message);
	text = get(dfd, "a.json", &now);
	is_str(text, "{\"new\": 2}\n", "  the new bytes");
	free(text);
	ok((now.st_mode & 07777) == 0640 && now.st_ino != st.st_ino, "  a new file, with the old one's mode");
	ok(entries() == 1, "  nothing left beside it");

	/* Another program writes it after moat read it. */
	put("a.json", "{\"theirs\": 3, \"longer\": true}\n", 0640);
	memset(&err, 0, sizeof(err));
	ok(file_replace_at(dfd, "a.json", "a.json", "{\"mine\": 4}\n", 12, now.st_mode, &now, false, &err) < 0 &&
	       strstr(err.message, "changed by another program"),
	   "refused over another program's change (%s)", err.message);
	text = get(dfd, "a.json", &now);
	is_str(text, "{\"theirs\": 3, \"longer\": true}\n", "  their bytes kept");
	free(text);
	ok(entries() == 1, "  and nothing left beside it");

	memset(&err, 0, sizeof(err));
	ok(file_replace_at(dfd, "a.json", "a.json", "x", 1, 0600, NULL, false, &err) < 0,
	   "a file that was not read is not replaced unless asked");
	ok(file_replace_at(dfd, "a.json.moat-backup", "b", "x", 1, 0600, NULL, true, &err) == 0 &&
	       file_replace_at(dfd, "a.json.moat-backup", "b", "y", 1, 0600, NULL, true, &err) == 0,
	   "  a backup is made and replaced");
	ok(file_replace_at(dfd, "new.toml", "new.toml", "n = 1\n", 6, 0600, NULL, false, &err) == 0,
	   "a new file where there was none");

	if (symlinkat("a.json", dfd, "link.json") == 0) {
		memset(&err, 0, sizeof(err));
		ok(!get(dfd, "link.json", &now), "a symlink at the name is not followed");
	}
	{
		/* A FIFO with no writer: open(2) without O_NONBLOCK would wait
		 * for one for ever; the test's alarm ends it if it does. */
		char path[256];
		FILE *f;
		int fd;

		snprintf(path, sizeof(path), "%s/fifo", dir);
		mkfifo(path, 0600);
		alarm(10);
		errno = 0;
		f = file_open_regular(path, FILE_SMALL_MAX);
		ok(!f && errno == EINVAL, "file_open_regular: a FIFO is refused at once (%s)", strerror(errno));
		errno = 0;
		fd = file_open_regular_fd(path, FILE_SMALL_MAX);
		ok(fd < 0 && errno == EINVAL, "file_open_regular_fd: the same");
		alarm(0);
		ok(!file_open_regular(dir, FILE_SMALL_MAX) && errno == EINVAL, "  and a directory");
		snprintf(path, sizeof(path), "%s/a.json", dir);
		f = file_open_regular(path, FILE_SMALL_MAX);
		ok(f && fgetc(f) == '{', "  control: a regular file is opened and read");
		if (f)
			fclose(f);
		ok(!file_open_regular(path, 5) && errno == EFBIG, "  and refused above its size limit (EFBIG)");
		snprintf(path, sizeof(path), "%s/sparse", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		ok(fd >= 0 && ftruncate(fd, (off_t)1 << 40) == 0, "a sparse file of 1 TiB");
		if (fd >= 0)
			close(fd);
		ok(!file_open_regular(path, FILE_SMALL_MAX) && errno == EFBIG, "  is refused at once");
		unlinkat(dfd, "sparse", 0);
		snprintf(path, sizeof(path), "%s/absent", dir);
		ok(!file_open_regular(path, FILE_SMALL_MAX) && errno == ENOENT, "  an absent one says ENOENT");
		unlinkat(dfd, "fifo", 0);
	}
	unlinkat(dfd, "a.json", 0);
	unlinkat(dfd, "a.json.moat-backup", 0);
	unlinkat(dfd, "new.toml", 0);
	unlinkat(dfd, "link.json", 0);
	close(dfd);
	rmdir(dir);
	nonblocking_pipe();
	return tap_done();
}
