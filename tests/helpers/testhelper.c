/* testhelper: one multi-call program that the black-box tests run inside
 * (and outside) sandboxes.  Each subcommand attempts one thing and prints a
 * one-line result on stdout: "OK ..." when it worked, "ERR <errno-name>"
 * when the kernel refused.  Built static and without sanitizers. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/keyctl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <time.h>
#include <unistd.h>

/* clone3(CLONE_INTO_CGROUP) into the cgroup directory DIR: the child
 * prints its /proc/self/cgroup's v2 line; "ERR E..." when refused. */
static int cmd_clone_into_cgroup(const char *dir)
{
	struct {
		unsigned long long flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
		    set_tid_size, cgroup;
	} ca = {0};
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), status;
	long pid;

	if (fd < 0) {
		printf("ERR %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		return 1;
	}
	ca.flags = 0x200000000ULL; /* CLONE_INTO_CGROUP */
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (unsigned long long)fd;
	fflush(stdout);
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		printf("ERR %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		return 1;
	}
	if (pid == 0) {
		char line[512];
		FILE *f = fopen("/proc/self/cgroup", "re");
		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "0::", 3) == 0)
				printf("IN %s", line + 3);
		fflush(stdout);
		_exit(0);
	}
	waitpid((pid_t)pid, &status, 0);
	return 0;
}

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

/* The session, /dev/tty (and which terminal it is: its st_rdev, or 0),
 * TIOCSTI on fd 0. */
static int cmd_tty(void)
{
	char c = '#';
	struct stat st;
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	int devtty = fd >= 0 ? 0 : errno;
	unsigned int dev = 0;
	/* /dev/tty's own inode is 5:0 whatever terminal it opens: the
	 * terminal's device is TIOCGDEV's. */
	unsigned long long rdev = fd >= 0 && ioctl(fd, TIOCGDEV, &dev) == 0 ? dev
				  : fd >= 0 && fstat(fd, &st) == 0	    ? (unsigned long long)st.st_rdev
									    : 0;
	int sti = ioctl(0, TIOCSTI, &c) == 0 ? 0 : errno;

	if (fd >= 0)
		close(fd);
	printf("session_leader=%d devtty=%s sti=%s rdev=%llu\n", getsid(0) == getpid(),
	       devtty ? strerrorname_np(devtty) : "OK", sti ? strerrorname_np(sti) : "OK", rdev);
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

/* term-stamp FILE SECONDS: on SIGTERM, write the wall-clock time in
 * microseconds to FILE and exit 0 (a command that honours SIGTERM); else
 * sleep SECONDS.  The time is taken in the handler, so that a test can
 * measure what moat did after the SIGTERM, without the sandbox's start-up
 * before it (run_basics.sh --timeout). */
static int term_stamp_fd = -1;

static void on_term_stamp(int s)
{
	char buf[32];
	struct timespec ts;
	unsigned long long us;
	int i = (int)sizeof(buf);

	(void)s;
	clock_gettime(CLOCK_REALTIME, &ts);
	us = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
	buf[--i] = '\n';
	do {
		buf[--i] = (char)('0' + us % 10);
		us /= 10;
	} while (us && i > 0);
	if (write(term_stamp_fd, buf + i, sizeof(buf) - (size_t)i) < 0)
		_exit(1);
	_exit(0);
}

static int cmd_term_stamp(const char *file, const char *seconds)
{
	struct sigaction sa = {.sa_handler = on_term_stamp};

	term_stamp_fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (term_stamp_fd < 0)
		return result(-1);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0)
		return result(-1);
	sleep((unsigned)atoi(seconds));
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
	/* Connected is the answer; the peer may have closed already (no
	 * SIGPIPE, and the send's result does not matter). */
	(void)send(s, "unix-probe\n", 11, MSG_NOSIGNAL);
	return result(0);
}

/* ---- connects the fence must answer as the kernel would, or refuse
 * (kernel/netfence.h; tests/blackbox/net_clients.sh).  The servers are
 * HTTP (tests/lib/netservers.py).  Each mode prints one result line on
 * stdout: "OK" (it reached the server: a request got an HTTP answer),
 * "ERR <errno-name>" (the step that matters failed), or "SETUP ..." (a
 * step before it went wrong, so the mode proves nothing).  What happened
 * on the way goes to stderr.  HOST: a name or an IPv4 address. ---- */

/* HOST is a name (looked up with getaddrinfo, through the fenced DNS under
 * the fence: a connect to an address the fence handed out for an allowed
 * name is what the allowlist allows) or an IPv4 address.  The helper is
 * static: the lookup loads the NSS modules of the glibc it was built with
 * at run time, the host's own. */
static int sin_of(struct sockaddr_in *a, const char *host, const char *port)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	int rc = getaddrinfo(host, port, &hints, &ai);

	if (rc) {
		printf("SETUP resolve %s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	memcpy(a, ai->ai_addr, sizeof(*a));
	freeaddrinfo(ai);
	return 0;
}

static const char *errname(int e)
{
	return strerrorname_np(e) ? strerrorname_np(e) : "?";
}

/* Wait up to 5 s for fd to be writable (a connect in progress), then its
 * SO_ERROR; -1 on timeout. */
static int connect_result(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int e = 0;
	socklen_t l = sizeof(e);

	if (poll(&p, 1, 5000) != 1)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		return errno;
	return e;
}

/* The answer to a request sent already: 0 when it begins "HTTP/1.". */
static int http_reply(int fd)
{
	char buf[64];
	size_t have = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (have < 7 && poll(&p, 1, 5000) == 1) {
		ssize_t n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	return have >= 7 && !memcmp(buf, "HTTP/1.", 7) ? 0 : -1;
}

static const char http_get[] = "GET / HTTP/1.0\r\n\r\n";

static int http_exchange(int fd)
{
	if (send(fd, http_get, sizeof(http_get) - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof(http_get) - 1))
		return -1;
	return http_reply(fd);
}

/* The end of every mode: connect()'s (or send's) rc and errno for the step
 * that matters; when it worked, an HTTP exchange on fd (or only its answer,
 * when the request is `sent` already) says "OK". */
static int reached(int fd, int rc, int e, bool sent)
{
	if (rc < 0) {
		printf("ERR %s\n", errname(e));
		return 1;
	}
	if ((sent ? http_reply(fd) : http_exchange(fd)) < 0) {
		printf("NOREPLY\n");
		return 1;
	}
	printf("OK\n");
	return 0;
}

/* tcpnb HOST PORT: non-blocking connect: EINPROGRESS, poll, SO_ERROR 0,
 * then a request and its answer.  "OK-SYNC" when connect returned 0 at
 * once (the fence, like the kernel, says EINPROGRESS). */
static int cmd_tcpnb(const char *host, const char *port)
{
	struct sockaddr_in a;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), e;

	if (s < 0)
		return result(-1);
	if (sin_of(&a, host, port) < 0)
		return 3;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
		printf("OK-SYNC\n");
		return 1;
	}
	if (errno != EINPROGRESS)
		return reached(s, -1, errno, false);
	e = connect_result(s);
	if (e < 0) {
		printf("TIMEOUT\n");
		return 1;
	}
	return reached(s, e ? -1 : 0, e, false);
}

/* tfo HOST PORT [FIRST_HOST FIRST_PORT]: sendto(MSG_FASTOPEN) to HOST:PORT
 * on a blocking socket, which connects it and sends the request.  With
 * FIRST_*: a non-blocking connect to FIRST (allowed, nothing listening)
 * must fail first (ECONNREFUSED); under the fence that leaves an
 * unconnected socket of the HOST's namespace on the descriptor (the
 * pitfall netfence.h names), and the fast-open send is made on it. */
static int cmd_tfo(const char *host, const char *port, const char *fhost, const char *fport)
{
	struct sockaddr_in a, f;
	int s = socket(AF_INET, SOCK_STREAM, 0), e, fl, i;
	ssize_t n = -1;

	if (s < 0)
		return result(-1);
	if (sin_of(&a, host, port) < 0 || (fhost && sin_of(&f, fhost, fport) < 0))
		return 3;
	if (fhost) {
		if ((fl = fcntl(s, F_GETFL)) < 0 || fcntl(s, F_SETFL, fl | O_NONBLOCK) < 0)
			return result(-1);
		e = connect(s, (struct sockaddr *)&f, sizeof(f)) == 0 ? 0 : errno;
		if (e == EINPROGRESS)
			e = connect_result(s);
		if (e != ECONNREFUSED) {
			printf("SETUP first connect: %s\n", e > 0 ? errname(e) : e < 0 ? "timeout" : "connected");
			return 3;
		}
		if (fcntl(s, F_SETFL, fl) < 0)
			return result(-1);
	}
	/* After a failed connect whose error SO_ERROR collected, Linux answers
	 * the next connect on that socket ECONNABORTED and makes it
	 * unconnected: a second try connects. */
	for (i = 0; i < 2 && n < 0; i++) {
		n = sendto(s, http_get, sizeof(http_get) - 1, MSG_FASTOPEN | MSG_NOSIGNAL, (struct sockaddr *)&a,
			   sizeof(a));
		e = n < 0 ? errno : 0;
		if (n < 0)
			fprintf(stderr, "tfo: sendto MSG_FASTOPEN, try %d: %s\n", i + 1, errname(e));
		if (e != ECONNABORTED)
			break;
	}
	return reached(s, n < 0 ? -1 : 0, e, true);
}

/* swaprace HOST PORT FHOST FPORT TRIES: the one gap of the fence that
 * Landlock closes (kernel/netfence.c, top).  A connect with a non-INET
 * address on a socket of the sandbox is CONTINUE'd: the kernel runs it
 * afresh, reading the fd number and the address again.  A second thread
 * swaps, in a loop, (the sandbox's UDP socket, family AF_UNIX) for (a
 * host TCP socket, family AF_INET HOST:PORT) under the number and in the
 * address: when the fence saw the first pair and the kernel runs the
 * second, the host socket connects to HOST:PORT, wherever that is, unless
 * Landlock (no TCP connect right) refuses it: EACCES, which nothing else
 * on this path answers.  The host socket is the one a failed non-blocking
 * connect to FHOST:FPORT (allowed, nothing listening) leaves behind.
 * Prints "ESCAPED ..." (then the HTTP exchange's OK) or "HELD EACCES n of
 * TRIES" (n: the races won that Landlock refused; 0 means the race was
 * never won and the run shows nothing). */
struct swap_ctl {
	int num, sandbox, host;
	struct sockaddr_in *addr;
	volatile int stop;
};

static void *swap_loop(void *arg)
{
	struct swap_ctl *c = arg;
	unsigned i = 0;
	volatile unsigned k;

	while (!c->stop) {
		dup2(c->sandbox, c->num);
		c->addr->sin_family = AF_UNIX;
		for (k = 0; k < (i % 64) * 16; k++)
			;
		dup2(c->host, c->num);
		c->addr->sin_family = AF_INET;
		for (k = 0; k < (i % 64) * 16; k++)
			;
		i++;
	}
	return NULL;
}

static int cmd_swaprace(const char *host, const char *port, const char *fhost, const char *fport, int tries)
{
	static struct sockaddr_in a;
	struct sockaddr_in f, peer;
	socklen_t pl = sizeof(peer);
	struct swap_ctl c = {.addr = &a};
	pthread_t th;
	int e, t, eacces = 0;

	if (sin_of(&a, host, port) < 0 || sin_of(&f, fhost, fport) < 0)
		return 3;
	c.host = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	c.sandbox = socket(AF_INET, SOCK_DGRAM, 0);
	if (c.host < 0 || c.sandbox < 0 || (c.num = dup(c.sandbox)) < 0)
		return result(-1);
	e = connect(c.host, (struct sockaddr *)&f, sizeof(f)) == 0 ? 0 : errno;
	if (e == EINPROGRESS)
		e = connect_result(c.host);
	if (e != ECONNREFUSED) {
		printf("SETUP first connect: %s\n", e > 0 ? errname(e) : e < 0 ? "timeout" : "connected");
		return 3;
	}
	if (pthread_create(&th, NULL, swap_loop, &c) != 0)
		return result(-1);
	for (t = 0; t < tries; t++) {
		e = connect(c.num, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : errno;
		eacces += e == EACCES;
		if (getpeername(c.host, (struct sockaddr *)&peer, &pl) == 0)
			break;
	}
	c.stop = 1;
	pthread_join(th, NULL);
	if (t < tries) {
		int fl = fcntl(c.host, F_GETFL);
		printf("ESCAPED after %d tries: ", t + 1);
		if (fl < 0 || fcntl(c.host, F_SETFL, fl & ~O_NONBLOCK) < 0 || connect_result(c.host) != 0)
			return result(-1);
		return reached(c.host, 0, 0, false);
	}
	printf("HELD EACCES %d of %d\n", eacces, tries);
	return 1;
}

/* Connect a socket to HOST (this must work), then try DHOST:
 *   unspec HOST PORT DHOST DPORT: disconnect with AF_UNSPEC, then connect
 *     the same socket to DHOST.  Without the fence that reaches DHOST;
 *     under it the AF_UNSPEC is refused and the socket stays connected
 *     where it was.
 *   dup HOST PORT DHOST DPORT: the socket was dup'd before the connect;
 *     connect the copy to DHOST.  Without the fence both numbers are one
 *     socket (EISCONN); under it the original is now moat's host socket
 *     and the copy still the sandbox's, which must not reach DHOST
 *     either. */
static int cmd_second(bool dup_first, const char *host, const char *port, const char *dhost, const char *dport)
{
	struct sockaddr_in a, d;
	struct sockaddr un = {.sa_family = AF_UNSPEC};
	int s = socket(AF_INET, SOCK_STREAM, 0), t, rc;

	if (s < 0 || (t = dup_first ? dup(s) : s) < 0)
		return result(-1);
	if (sin_of(&a, host, port) < 0 || sin_of(&d, dhost, dport) < 0)
		return 3;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		printf("SETUP connect %s:%s: %s\n", host, port, errname(errno));
		return 3;
	}
	if (!dup_first) {
		rc = connect(s, &un, sizeof(un));
		fprintf(stderr, "unspec: connect AF_UNSPEC: %s\n", rc < 0 ? errname(errno) : "disconnected");
	}
	rc = connect(t, (struct sockaddr *)&d, sizeof(d));
	return reached(t, rc, errno, false);
}

/* A fork chain: every `interval_us` a member forks its successor and
 * exits, so that a killer walking the tree always finds a new pid, while
 * the first process stays (the command moat waits for).  A member lives
 * for `interval_us` only, too short for a scan of /proc to see it: each
 * appends a byte to `heartbeat` (when given), so the test sees the chain
 * alive by the file growing.  The chain ends when the file is removed, or
 * by itself after 30 s, so a failing test leaves nothing for long. */
static int cmd_forkchain(const char *heartbeat, int interval_us, int chains)
{
	struct timespec start, now;
	int i, hb = -1;

	if (strcmp(heartbeat, "-") != 0 && (hb = open(heartbeat, O_WRONLY | O_APPEND | O_CREAT, 0644)) < 0)
		return result(-1);
	clock_gettime(CLOCK_MONOTONIC, &start);
	printf("OK chain\n");
	fflush(stdout);
	for (i = 0; i < chains; i++)
		if (fork() == 0)
			break;
	if (i == chains) {
		sleep(30);
		return 0;
	}
	setsid();
	for (;;) {
		struct stat st;
		pid_t p;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 30)
			_exit(0);
		if (hb >= 0 && (write(hb, "x", 1) < 0 || fstat(hb, &st) != 0 || st.st_nlink == 0))
			_exit(0);
		usleep((useconds_t)interval_us);
		p = fork();
		if (p > 0)
			_exit(0);
	}
}

/* A chain `depth` processes deep, none of which forks fast: each waits for
 * its one child; the deepest appends a byte to `heartbeat` every 100 ms.
 * The command (the first) exits once the deepest has written (0.5 s at
 * least).  A killer that only sees its own children (a subreaper) finds
 * one level per round.  Ends when the file is removed, or by itself after
 * 30 s.
 * With `watch` (> 0): the deepest also watches the chain's level `watch`
 * (a pipe whose only writer it is) and, 20 ms after that level died,
 * appends 'o': it outlived its ancestor.  A tree killed whole (a cgroup's
 * kill) never lets it; one killed a level at a time from the top does. */
static void deepchain_tail(int hb, int watched)
{
	int i;

	for (i = 0; i < 300; i++) {
		struct stat st;
		struct pollfd pf = {.fd = watched, .events = POLLIN};
		char c;

		if (write(hb, "x", 1) < 0 || fstat(hb, &st) != 0 || st.st_nlink == 0)
			break;
		if (watched < 0) {
			usleep(100000);
			continue;
		}
		if (poll(&pf, 1, 100) == 1 && read(watched, &c, 1) == 0) {
			usleep(20000);
			if (write(hb, "o", 1) < 0)
				break;
			break;
		}
	}
	_exit(0);
}

/* The command ends once the deepest process has written its first byte
 * (at most 20 s: on a loaded machine 300 forks took longer than the 0.5 s
 * the command used to wait, and the chain was killed half made), and
 * 0.5 s at least. */
static void deepchain_wait_ready(int hb)
{
	struct stat st;
	int i;

	for (i = 0; i < 2000 && (fstat(hb, &st) != 0 || st.st_size == 0); i++)
		usleep(10000);
	if (i < 50)
		usleep((useconds_t)(50 - i) * 10000);
}

static int cmd_deepchain(const char *heartbeat, int depth, int watch)
{
	int i, hb = open(heartbeat, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644), watched = -1;

	if (hb < 0)
		return result(-1);
	for (i = 0; i < depth; i++) {
		int pp[2] = {-1, -1};
		pid_t p;

		if (watch > 0 && i == watch && pipe(pp) < 0)
			_exit(1);
		p = fork();
		if (p < 0)
			_exit(1);
		if (p > 0 && i == 0) {
			deepchain_wait_ready(hb);
			printf("OK deep %d\n", depth);
			return 0;
		}
		if (p > 0) {
			if (pp[0] >= 0)
				close(pp[0]); /* the write end stays open until this level dies */
			waitpid(p, NULL, 0);
			_exit(0);
		}
		if (pp[1] >= 0) {
			close(pp[1]);
			watched = pp[0];
		}
	}
	deepchain_tail(hb, watched);
	return 0;
}

/* A burner's bound in wall time, whatever CPU time it got by then. */
#define CPUBURN_WALL_MAX 60

/* `n` processes spinning until each has used `seconds` of CPU time and
 * `wall_min` s of wall time have passed (at most CPUBURN_WALL_MAX s of
 * wall time): the tree's total is at least n * seconds however loaded the
 * machine.  Spinning for `seconds` of wall time gave 8 processes 1.14 s
 * of CPU in 5 s beside CI's other lanes.  Under gVisor the CPU time a
 * process sees is the sentry's account, which on a loaded host ran ahead
 * of what the host's cgroup counted (2 s seen, 0.92 s counted): the wall
 * time floor gives the host's count its share there. */
static int cmd_cpuburn(int n, int seconds, int wall_min)
{
	int i;

	for (i = 0; i < n; i++) {
		if (fork() == 0) {
			struct timespec start, now, used;
			volatile unsigned long x = 0;
			clock_gettime(CLOCK_MONOTONIC, &start);
			do {
				for (int k = 0; k < 100000; k++)
					x++;
				clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
				clock_gettime(CLOCK_MONOTONIC, &now);
			} while ((used.tv_sec < seconds || now.tv_sec - start.tv_sec < wall_min) &&
				 now.tv_sec - start.tv_sec < CPUBURN_WALL_MAX);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	printf("OK burned\n");
	return 0;
}

/* Fill memory through what a memory limit must count: 1 MiB at a time,
 * in turn to /tmp, /dev/shm and a memfd, printing the running total in MiB
 * after each (so the test sees how far it got even when the OOM killer
 * ends this process), up to `max_mb`. */
static int cmd_fill(int max_mb)
{
	static char chunk[1 << 20];
	int fds[3], total = 0, i;

	fds[0] = open("/tmp/moat-fill", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fds[1] = open("/dev/shm/moat-fill", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fds[2] = (int)syscall(SYS_memfd_create, "moat-fill", 0);
	for (i = 0; i < 3; i++)
		if (fds[i] < 0) {
			printf("ERR open %d: %s\n", i, strerror(errno));
			return 1;
		}
	memset(chunk, 1, sizeof(chunk));
	while (total < max_mb) {
		if (write(fds[total % 3], chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk)) {
			printf("STOP %d %s\n", total, strerror(errno));
			return 0;
		}
		total++;
		printf("MB %d\n", total);
		fflush(stdout);
	}
	printf("DONE %d\n", total);
	return 0;
}

/* Hold memory in TCP socket buffers over loopback: pairs of connected
 * sockets, each writer filled without the reader reading, printing the
 * running total in MiB, up to `max_mb` (and at most 400 pairs).  cgroup v1
 * charges these buffers apart from memory.limit_in_bytes; a memory limit
 * that does not count them is no limit for a tree with a network.
 * With `to` (IP:PORT) each writer connects there instead, to a listener
 * that never reads: under --allow-net the fence connects a socket of
 * moat's own for it, and the buffers are that socket's. */
static int sockfill_listen(struct sockaddr_in *a)
{
	socklen_t alen = sizeof(*a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)a, sizeof(*a)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)a, &alen))
		return -1;
	return lfd;
}

static bool sockfill_far_end(const char *to, struct sockaddr_in *a)
{
	char ip[64];
	const char *colon = strrchr(to, ':');

	if (!colon || (size_t)(colon - to) >= sizeof(ip))
		return false;
	memcpy(ip, to, (size_t)(colon - to));
	ip[colon - to] = 0;
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, ip, &a->sin_addr) == 1;
}

/* Connect w to a; with our own listener lfd take the other end (kept open,
 * never read), else wait up to 5 s for the handshake. */
static int sockfill_connect(int w, int lfd, const struct sockaddr_in *a)
{
	struct pollfd p = {.fd = w, .events = POLLOUT};

	if (connect(w, (const struct sockaddr *)a, sizeof(*a)) && errno != EINPROGRESS)
		return -1;
	if (lfd >= 0)
		return accept(lfd, NULL, NULL) < 0 ? -1 : 0;
	if (poll(&p, 1, 5000) != 1) {
		errno = ETIMEDOUT;
		return -1;
	}
	return 0;
}

static int cmd_sockfill(int max_mb, const char *to)
{
	static char chunk[65536];
	struct sockaddr_in a = {0};
	long long held = 0, limit = (long long)max_mb << 20;
	int lfd = -1, pairs, shown = 0;

	if (to && !sockfill_far_end(to, &a)) {
		printf("ERR far end: %s (IP:PORT)\n", to);
		return 1;
	}
	if (!to && (lfd = sockfill_listen(&a)) < 0) {
		printf("ERR listen: %s\n", strerror(errno));
		return 1;
	}
	memset(chunk, 1, sizeof(chunk));
	for (pairs = 0; pairs < 400 && held < limit; pairs++) {
		int w = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		ssize_t n;

		if (w < 0 || sockfill_connect(w, lfd, &a)) {
			printf("STOP %d connect: %s\n", shown, strerror(errno));
			return 0;
		}
		while (held < limit && (n = write(w, chunk, sizeof(chunk))) > 0) {
			held += n;
			if ((int)(held >> 20) > shown) {
				shown = (int)(held >> 20);
				printf("MB %d\n", shown);
				fflush(stdout);
			}
		}
	}
	printf("DONE %d\n", shown);
	return 0;
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

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "?";
}

/* name=OK or name=ERRNO, for one attempted call. */
static void report(const char *name, long rc, int e)
{
	printf("%s=%s\n", name, rc < 0 ? ename(e) : "OK");
}

#define TRY(name, expr)                                                                                                \
	do {                                                                                                           \
		long rc_;                                                                                              \
		errno = 0;                                                                                             \
		rc_ = (long)(expr);                                                                                    \
		report(name, rc_, errno);                                                                              \
	} while (0)

/* In a throw-away child: calls whose success changes the caller. */
static void try_in_child(const char *name, int which)
{
	pid_t p = fork();
	int st;

	if (p < 0) {
		report(name, -1, errno);
		return;
	}
	if (p == 0) {
		long rc = -1;
		if (which == 0)
			rc = syscall(SYS_unshare, CLONE_NEWUSER);
		else if (which == 1) {
			/* raw clone(CLONE_NEWUSER): the flags the filter inspects */
			rc = syscall(SYS_clone, (unsigned long)CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0UL);
			if (rc == 0)
				_exit(0);
			if (rc > 0)
				waitpid((pid_t)rc, NULL, 0);
		} else if (which == 2)
			rc = syscall(SYS_unshare, CLONE_NEWNS);
		_exit(rc < 0 ? (errno & 0xff) : 0);
	}
	if (waitpid(p, &st, 0) < 0 || !WIFEXITED(st)) {
		printf("%s=?\n", name);
		return;
	}
	report(name, WEXITSTATUS(st) ? -1 : 0, WEXITSTATUS(st));
}

/* Each call is made with arguments that make an allowed call fail
 * harmlessly (NULL pointers, fd -1, invalid sizes), so that outside a
 * sandbox the answer is EFAULT/EBADF/EINVAL and inside it is the filter's
 * EPERM/ENOSYS: the difference is the filter, not a side effect. */
static int cmd_syscalls(void)
{
	char c = 'x';

	TRY("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
	TRY("clone3", syscall(SYS_clone3, NULL, 0));
	try_in_child("unshare_user", 0);
	try_in_child("clone_newuser", 1);
	try_in_child("unshare_mount", 2);
	TRY("setns", syscall(SYS_setns, -1, 0));
	TRY("mount", syscall(SYS_mount, NULL, NULL, NULL, 0, NULL));
	TRY("umount2", syscall(SYS_umount2, NULL, 0));
	TRY("pivot_root", syscall(SYS_pivot_root, NULL, NULL));
	TRY("chroot", syscall(SYS_chroot, NULL));
	TRY("fsopen", syscall(SYS_fsopen, NULL, 0));
	TRY("open_tree", syscall(SYS_open_tree, -1, NULL, 0));
	TRY("move_mount", syscall(SYS_move_mount, -1, NULL, -1, NULL, 0));
	TRY("keyctl", syscall(SYS_keyctl, -1, 0, 0, 0, 0));
	TRY("add_key", syscall(SYS_add_key, NULL, NULL, NULL, 0, 0));
	TRY("request_key", syscall(SYS_request_key, NULL, NULL, NULL, 0));
	TRY("bpf", syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, (void *)1, 16));
	TRY("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	TRY("userfaultfd", syscall(SYS_userfaultfd, -1));
	TRY("ptrace_traceme_bad", syscall(SYS_ptrace, -1L, 0, NULL, NULL));
	TRY("process_vm_readv", syscall(SYS_process_vm_readv, 0, NULL, 0, NULL, 0, 0));
	TRY("kcmp", syscall(SYS_kcmp, -1, -1, -1, 0, 0));
	/* Arguments the kernel refuses with an errno of its own (EBADF,
	 * EINVAL, EFAULT), for uid 65534 as for root: only the filter says
	 * EPERM (or EOPNOTSUPP, name_to_handle_at) for them. */
	TRY("process_vm_writev", syscall(SYS_process_vm_writev, 0, NULL, 0, NULL, 0, 0));
	TRY("pidfd_getfd", syscall(SYS_pidfd_getfd, -1, -1, 0));
	TRY("process_madvise", syscall(SYS_process_madvise, -1, NULL, 0, 0, 0));
	/* FAN_REPORT_FID (an unprivileged group), no valid event flags. */
	TRY("fanotify_init", syscall(SYS_fanotify_init, 0x200U, 0xffffffffU));
	TRY("name_to_handle_at", syscall(SYS_name_to_handle_at, -1, NULL, NULL, NULL, 0));
	TRY("quotactl_fd", syscall(SYS_quotactl_fd, -1, 0, 0, NULL));
	TRY("clock_adjtime", syscall(SYS_clock_adjtime, -1, NULL));
	TRY("adjtimex", syscall(SYS_adjtimex, NULL));
	TRY("mount_setattr", syscall(SYS_mount_setattr, -1, NULL, 0, NULL, 0));
	TRY("fsconfig", syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0));
	TRY("init_module", syscall(SYS_init_module, NULL, 0, NULL));
	TRY("finit_module", syscall(SYS_finit_module, -1, NULL, 0));
	TRY("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0xffffffffUL));
	TRY("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL, 0));
	TRY("acct", syscall(SYS_acct, (void *)1));
	TRY("swapon", syscall(SYS_swapon, NULL, 0));
	TRY("syslog", syscall(SYS_syslog, -1, NULL, 0));
	TRY("clock_settime", syscall(SYS_clock_settime, -1, NULL));
	TRY("iopl", syscall(SYS_iopl, 4)); /* level > 3: EINVAL when allowed */
	TRY("personality_rie", syscall(SYS_personality, 0xffffffffUL)); /* a query: allowed */
	{
		/* READ_IMPLIES_EXEC on a throw-away child. */
		pid_t p = fork();
		int st;
		if (p == 0)
			_exit(syscall(SYS_personality, (unsigned long)READ_IMPLIES_EXEC) < 0 ? (errno & 0xff) : 0);
		waitpid(p, &st, 0);
		report("personality_set", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1,
		       WIFEXITED(st) ? WEXITSTATUS(st) : 0);
	}
	TRY("tiocsti_badfd", ioctl(-1, TIOCSTI, &c));
	TRY("tiocsti_hibit_badfd", syscall(SYS_ioctl, -1, (unsigned long)TIOCSTI | 0xdeadbeef00000000UL, &c));
	TRY("tioclinux_badfd", ioctl(-1, TIOCLINUX, &c));
	TRY("socket_inet", socket(AF_INET, SOCK_STREAM, 0));
	TRY("socket_inet6", socket(AF_INET6, SOCK_DGRAM, 0));
	TRY("socket_netlink", socket(AF_NETLINK, SOCK_RAW, 0));
	TRY("socket_packet", socket(AF_PACKET, SOCK_RAW, 0));
	TRY("socket_unix", socket(AF_UNIX, SOCK_STREAM, 0));
	return 0;
}

static int cmd_ptrace(const char *pid_s)
{
	pid_t pid = (pid_t)atoi(pid_s);
	long rc = ptrace(PTRACE_ATTACH, pid, NULL, NULL);

	if (rc < 0)
		return result(-1);
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return result(0);
}

static int cmd_vmread(const char *pid_s)
{
	char buf[16];
	int x = 42;
	struct iovec local = {buf, sizeof(buf)}, remote = {&x, sizeof(x)};
	/* Our own address is valid in a fork of ours only; for another
	 * process the read may fail with EFAULT, which still means "allowed". */
	ssize_t n = syscall(SYS_process_vm_readv, (pid_t)atoi(pid_s), &local, 1, &remote, 1, 0);

	if (n < 0 && errno != EFAULT)
		return result(-1);
	printf("OK%s\n", n < 0 ? " (EFAULT)" : "");
	return 0;
}

/* Read /proc/PID/environ and look for MARKER. */
static int cmd_proc_environ(const char *pid_s, const char *marker)
{
	char path[64], buf[65536];
	ssize_t n, tot = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/environ", pid_s);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return result(-1);
	while ((n = read(fd, buf + tot, sizeof(buf) - 1 - (size_t)tot)) > 0)
		tot += n;
	close(fd);
	if (n < 0)
		return result(-1);
	for (ssize_t i = 0; i < tot; i++)
		if (buf[i] == '\0')
			buf[i] = '\n';
	buf[tot] = '\0';
	printf("OK %s\n", strstr(buf, marker) ? "found" : "notfound");
	return 0;
}

/* Every /proc/N/environ and cmdline that can be read: is MARKER there?
 * MARKER is given reversed, so that our own cmdline (and moat's) does not
 * hold it. */
static int cmd_proc_scan(const char *reversed)
{
	char marker[256];
	size_t len = strlen(reversed);
	DIR *d;

	if (len >= sizeof(marker))
		return 2;
	for (size_t i = 0; i < len; i++)
		marker[i] = reversed[len - 1 - i];
	marker[len] = '\0';
	d = opendir("/proc");
	struct dirent *e;
	int seen = 0, readable = 0, found = 0;

	if (!d)
		return result(-1);
	while ((e = readdir(d)) != NULL) {
		static const char *const files[] = {"environ", "cmdline"};
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		seen++;
		for (size_t k = 0; k < 2; k++) {
			char path[300], buf[65536];
			ssize_t n, tot = 0;
			int fd;

			snprintf(path, sizeof(path), "/proc/%s/%s", e->d_name, files[k]);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			while ((n = read(fd, buf + tot, sizeof(buf) - 1 - (size_t)tot)) > 0)
				tot += n;
			close(fd);
			if (n < 0)
				continue;
			readable++;
			for (ssize_t i = 0; i < tot; i++)
				if (buf[i] == '\0')
					buf[i] = ' ';
			buf[tot] = '\0';
			if (strstr(buf, marker))
				found++;
		}
	}
	closedir(d);
	printf("pids=%d readable=%d found=%d\n", seen, readable, found);
	return 0;
}

/* TIOCSTI of each byte of TEXT into fd 0. */
static int cmd_sti(const char *text)
{
	for (const char *p = text; *p; p++)
		if (ioctl(0, TIOCSTI, p) < 0)
			return result(-1);
	return result(0);
}

static int cmd_pidfd_kill(const char *pid_s)
{
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)atoi(pid_s), 0);

	if (fd < 0)
		return result(-1);
	return result((int)syscall(SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0));
}

/* bind+listen on 127.0.0.1, connect to it, pass a byte: the sandbox's own
 * loopback. */
static int cmd_loopback_selftest(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int l, c, s;
	char b = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0)
		return result(-1);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
		return result(-1);
	s = accept(l, NULL, NULL);
	if (s < 0 || write(c, "L", 1) != 1 || read(s, &b, 1) != 1 || b != 'L')
		return result(-1);
	return result(0);
}

static int cmd_rlimit(const char *which)
{
	static const struct {
		const char *name;
		int res;
	} t[] = {{"core", RLIMIT_CORE}, {"nproc", RLIMIT_NPROC}, {"as", RLIMIT_AS}, {"nofile", RLIMIT_NOFILE},
		 {"cpu", RLIMIT_CPU}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rlimit rl;
		if (strcmp(t[i].name, which) != 0)
			continue;
		if (getrlimit(t[i].res, &rl) < 0)
			return result(-1);
		if (rl.rlim_cur == RLIM_INFINITY)
			printf("%s=unlimited\n", which);
		else
			printf("%s=%llu\n", which, (unsigned long long)rl.rlim_cur);
		return 0;
	}
	return 2;
}

/* RLIMIT_CORE to 0 through setrlimit(2) itself, the system call glibc's
 * setrlimit no longer makes (it calls prlimit64): "rc=0 core=CUR/MAX" after
 * the call, or "rc=ERRNO ...". */
static int cmd_raw_core0(void)
{
	struct rlimit zero = {0, 0}, rl;
	long rc = syscall(SYS_setrlimit, RLIMIT_CORE, &zero);
	int e = errno;

	if (getrlimit(RLIMIT_CORE, &rl) < 0)
		return result(-1);
	printf("rc=%s core=%llu/%llu\n", rc == 0 ? "0" : errname(e), (unsigned long long)rl.rlim_cur,
	       (unsigned long long)rl.rlim_max);
	return 0;
}

/* A System V shared memory segment, semaphore set and message queue made
 * by this process itself (their creator pid is the command's): "shm=ID
 * sem=ID msg=ID", -1 for one refused. */
static int cmd_sysv_make(void)
{
	int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

	printf("shm=%d sem=%d msg=%d\n", shm, sem, msg);
	return 0;
}

/* shmat(2) of the segment ID: OK or the errno. */
static int cmd_shmat(const char *id)
{
	void *at = shmat(atoi(id), NULL, SHM_RDONLY);

	report("shmat", at == (void *)-1 ? -1 : 0, errno);
	return 0;
}

/* truncate(2) and open(O_TRUNC), each on its own. */
static int cmd_truncate(const char *path)
{
	int fd;

	int rc = truncate(path, 0);

	report("truncate", rc, errno);
	fd = open(path, O_WRONLY | O_TRUNC);
	report("open_trunc", fd, errno);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* stat(2) of PATH: OK or the errno. */
/* The capabilities this process could still hold: the bounding set (each
 * number the kernel knows, asked with PR_CAPBSET_READ) as a hex mask, and
 * how many numbers it knows. */
static int cmd_capbset(void)
{
	unsigned long long mask = 0;
	int cap, r, known = 0;

	for (cap = 0; cap <= 63; cap++) {
		r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			break;
		known++;
		if (r > 0)
			mask |= 1ULL << cap;
	}
	printf("bnd=%016llx known=%d\n", mask, known);
	return 0;
}

static int cmd_exists(const char *path)
{
	struct stat st;
	return result(stat(path, &st));
}

/* Entries of DIR, sorted by the caller. */
static int cmd_ls(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return result(-1);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			printf("%s\n", e->d_name);
	closedir(d);
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
	if (!strcmp(c, "term-stamp") && argc > 3)
		return cmd_term_stamp(argv[2], argv[3]);
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
	if (!strcmp(c, "tcpnb") && argc > 3)
		return cmd_tcpnb(argv[2], argv[3]);
	if (!strcmp(c, "swaprace") && argc > 6)
		return cmd_swaprace(argv[2], argv[3], argv[4], argv[5], atoi(argv[6]));
	if (!strcmp(c, "tfo") && argc > 3)
		return cmd_tfo(argv[2], argv[3], argc > 5 ? argv[4] : NULL, argc > 5 ? argv[5] : NULL);
	if (!strcmp(c, "unspec") && argc > 5)
		return cmd_second(false, argv[2], argv[3], argv[4], argv[5]);
	if (!strcmp(c, "dup") && argc > 5)
		return cmd_second(true, argv[2], argv[3], argv[4], argv[5]);
	if (!strcmp(c, "unix") && argc > 2)
		return cmd_unix(argv[2], 0);
	if (!strcmp(c, "abstract") && argc > 2)
		return cmd_unix(argv[2], 1);
	if (!strcmp(c, "kill") && argc > 2)
		return result(kill(atoi(argv[2]), SIGTERM));
	if (!strcmp(c, "clone_into_cgroup") && argc > 2)
		return cmd_clone_into_cgroup(argv[2]);
	if (!strcmp(c, "forkbomb") && argc > 2)
		return cmd_forkbomb(atoi(argv[2]));
	if (!strcmp(c, "forkchain") && argc > 3)
		return cmd_forkchain(argv[2], atoi(argv[3]), argc > 4 ? atoi(argv[4]) : 1);
	if (!strcmp(c, "deepchain") && argc > 3)
		return cmd_deepchain(argv[2], atoi(argv[3]), argc > 4 ? atoi(argv[4]) : 0);
	if (!strcmp(c, "cpuburn") && argc > 3)
		return cmd_cpuburn(atoi(argv[2]), atoi(argv[3]), argc > 4 ? atoi(argv[4]) : 0);
	if (!strcmp(c, "fill") && argc > 2)
		return cmd_fill(atoi(argv[2]));
	if (!strcmp(c, "alloc") && argc > 2)
		return cmd_alloc(atoi(argv[2]));
	if (!strcmp(c, "sockfill") && argc > 2)
		return cmd_sockfill(atoi(argv[2]), argc > 3 ? argv[3] : NULL);
	if (!strcmp(c, "syscalls"))
		return cmd_syscalls();
	if (!strcmp(c, "ptrace") && argc > 2)
		return cmd_ptrace(argv[2]);
	if (!strcmp(c, "vmread") && argc > 2)
		return cmd_vmread(argv[2]);
	if (!strcmp(c, "proc-environ") && argc > 3)
		return cmd_proc_environ(argv[2], argv[3]);
	if (!strcmp(c, "proc-scan") && argc > 2)
		return cmd_proc_scan(argv[2]);
	if (!strcmp(c, "sti") && argc > 2)
		return cmd_sti(argv[2]);
	if (!strcmp(c, "pidfd-kill") && argc > 2)
		return cmd_pidfd_kill(argv[2]);
	if (!strcmp(c, "loopback-selftest"))
		return cmd_loopback_selftest();
	if (!strcmp(c, "sysv-make"))
		return cmd_sysv_make();
	if (!strcmp(c, "shmat") && argc > 2)
		return cmd_shmat(argv[2]);
	if (!strcmp(c, "raw-core0"))
		return cmd_raw_core0();
	if (!strcmp(c, "rlimit") && argc > 2)
		return cmd_rlimit(argv[2]);
	if (!strcmp(c, "truncate") && argc > 2)
		return cmd_truncate(argv[2]);
	if (!strcmp(c, "exists") && argc > 2)
		return cmd_exists(argv[2]);
	if (!strcmp(c, "ls") && argc > 2)
		return cmd_ls(argv[2]);
	if (!strcmp(c, "capbset"))
		return cmd_capbset();
	fprintf(stderr, "testhelper: unknown subcommand '%s'\n", c);
	return 2;
}
