/* testhelper: one multi-call program that the black-box tests run inside
 * (and outside) sandboxes.  Each subcommand attempts one thing and prints a
 * one-line result on stdout: "OK ..." when it worked, "ERR <errno-name>"
 * when the kernel refused.  Built static and without sanitizers. */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

static int result(int rc)
{
	if (rc < 0) {
		printf("ERR %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		return 1;
	}
	printf("OK\n");
	return 0;
}

static int cmd_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self, first = 1;

	if (!d)
		return result(-1);
	self = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		int fd;
		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd == self)
			continue;
		printf("%s%d", first ? "" : " ", fd);
		first = 0;
	}
	printf("\n");
	closedir(d);
	return 0;
}

static int cmd_tty(void)
{
	char c = '#';
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	int devtty = fd >= 0 ? 0 : errno;
	int sti = ioctl(0, TIOCSTI, &c) == 0 ? 0 : errno;

	if (fd >= 0)
		close(fd);
	printf("session_leader=%d devtty=%s sti=%s\n", getsid(0) == getpid(), devtty ? strerrorname_np(devtty) : "OK",
	       sti ? strerrorname_np(sti) : "OK");
	return 0;
}

static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
static volatile sig_atomic_t got[64];

static void on_signal(int s)
{
	got[s] = 1;
}

static int cmd_signals(const char *out)
{
	char ready[4096];
	size_t i, n;
	FILE *f;
	struct timespec t0, now;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
	snprintf(ready, sizeof(ready), "%s.ready", out);
	f = fopen(ready, "w");
	if (!f)
		return result(-1);
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (n = 0, i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			n += got[sigs[i]] != 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (n == sizeof(sigs) / sizeof(sigs[0]) || now.tv_sec - t0.tv_sec > 20)
			break;
		usleep(10000);
	}
	f = fopen(out, "w");
	if (!f)
		return result(-1);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (got[sigs[i]])
			fprintf(f, "%s\n", sigabbrev_np(sigs[i]));
	fclose(f);
	return 0;
}

static int cmd_daemon(const char *marker)
{
	pid_t p = fork();

	if (p == 0) {
		setsid();
		if (fork() == 0) {
			char *args[] = {"testhelper", "sleep", "60", (char *)marker, NULL};
			execv("/proc/self/exe", args);
			_exit(1);
		}
		_exit(0);
	}
	waitpid(p, NULL, 0);
	printf("OK daemonized\n");
	fflush(stdout);
	sleep(60);
	return 0;
}

static int cmd_read(const char *path)
{
	char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return result(-1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return result(-1);
	buf[n] = '\0';
	printf("OK %s\n", buf);
	return 0;
}

static int cmd_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return result(-1);
	if (write(fd, "written\n", 8) != 8) {
		close(fd);
		return result(-1);
	}
	close(fd);
	return result(0);
}

static int cmd_inet(int type, const char *host, const char *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(port))};
	int s = socket(AF_INET, type, 0);

	if (s < 0)
		return result(-1);
	inet_pton(AF_INET, host, &a.sin_addr);
	if (type == SOCK_STREAM)
		return result(connect(s, (struct sockaddr *)&a, sizeof(a)));
	return result((int)sendto(s, "udp-probe\n", 10, 0, (struct sockaddr *)&a, sizeof(a)));
}

static int cmd_unix(const char *path, int abstract)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	if (s < 0)
		return result(-1);
	if (abstract) {
		a.sun_path[0] = '\0';
		strncpy(a.sun_path + 1, path, sizeof(a.sun_path) - 2);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
	} else {
		strncpy(a.sun_path, path, sizeof(a.sun_path) - 1);
		len = sizeof(a);
	}
	if (connect(s, (struct sockaddr *)&a, len) < 0)
		return result(-1);
	if (write(s, "unix-probe\n", 11) < 0)
		return result(-1);
	return result(0);
}

static int cmd_forkbomb(int max)
{
	int n = 0;
	pid_t kids[4096];

	if (max > 4096)
		max = 4096;
	while (n < max) {
		pid_t p = fork();
		if (p < 0)
			break;
		if (p == 0) {
			sleep(30);
			_exit(0);
		}
		kids[n++] = p;
	}
	printf("forked %d\n", n);
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int cmd_alloc(int mb)
{
	for (int i = 0; i < mb; i++) {
		char *p = malloc(1 << 20);
		if (!p) {
			printf("ERR allocation failed after %d MiB\n", i);
			return 1;
		}
		memset(p, 1, 1 << 20);
	}
	printf("OK allocated %d MiB\n", mb);
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(c, "fds"))
		return cmd_fds();
	if (!strcmp(c, "tty"))
		return cmd_tty();
	if (!strcmp(c, "signals") && argc > 2)
		return cmd_signals(argv[2]);
	if (!strcmp(c, "sleep") && argc > 2) {
		sleep((unsigned)atoi(argv[2]));
		return 0;
	}
	if (!strcmp(c, "ignore-term") && argc > 2) {
		signal(SIGTERM, SIG_IGN);
		sleep((unsigned)atoi(argv[2]));
		return 0;
	}
	if (!strcmp(c, "exit") && argc > 2)
		return atoi(argv[2]);
	if (!strcmp(c, "killself") && argc > 2) {
		signal(atoi(argv[2]), SIG_DFL);
		kill(getpid(), atoi(argv[2]));
		pause();
		return 0;
	}
	if (!strcmp(c, "daemon") && argc > 2)
		return cmd_daemon(argv[2]);
	if (!strcmp(c, "read") && argc > 2)
		return cmd_read(argv[2]);
	if (!strcmp(c, "write") && argc > 2)
		return cmd_write(argv[2]);
	if (!strcmp(c, "tcp") && argc > 3)
		return cmd_inet(SOCK_STREAM, argv[2], argv[3]);
	if (!strcmp(c, "udp") && argc > 3)
		return cmd_inet(SOCK_DGRAM, argv[2], argv[3]);
	if (!strcmp(c, "unix") && argc > 2)
		return cmd_unix(argv[2], 0);
	if (!strcmp(c, "abstract") && argc > 2)
		return cmd_unix(argv[2], 1);
	if (!strcmp(c, "kill") && argc > 2)
		return result(kill(atoi(argv[2]), SIGTERM));
	if (!strcmp(c, "forkbomb") && argc > 2)
		return cmd_forkbomb(atoi(argv[2]));
	if (!strcmp(c, "alloc") && argc > 2)
		return cmd_alloc(atoi(argv[2]));
	fprintf(stderr, "testhelper: unknown subcommand '%s'\n", c);
	return 2;
}
