/* probe: the escape and conformance probes of docs/escape-probes.md
 * (the project's design notes on escape probes), run INSIDE a sandbox.
 *
 * Each probe attempts one kind of escape and prints ONE JSON line:
 *   {"id", "attempt", "result" (errno name or value), "verdict", "detail"}
 * verdict is CONTAINED, ESCAPED or NOT-APPLICABLE.  The verdict is what the
 * probe can tell from inside; tests/escape/run-conformance checks the
 * host-side canaries from outside afterwards and has the last word.
 *
 * Where possible a call is made with bad arguments (NULL, fd -1) so that an
 * allowed call fails with EFAULT/EBADF and changes nothing, while a filtered
 * one gives EPERM/ENOSYS.  Anything that could change the host is done in a
 * forked child, on the runner's own canaries, or undone at once.  Every loop
 * is bounded and every blocking call has a timeout.
 *
 * Targets come from argv as key=value (the sandbox may curate the
 * environment): token, home, project, outside, tcp, udp, abstract, unix,
 * unix2, canary-pid, canary-tag, leak-fds, keep-fds, launcher, suid-root,
 * suid-other, other-exe, shm, mq, sysv-key, msgq-key, key-desc, hosttmp,
 * hostns, pids-limit, mem-limit, env-allow, pty, outer-tty, only.
 *
 * Subcommands used by the runner: helper-suid, helper-status, helper-ipc,
 * helper-key, daemon, say-ran.
 *
 * Built static and without sanitizers:
 *   cc -std=c11 -D_GNU_SOURCE -O2 -static -o probe tests/escape/probe.c */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#define USERFAULTFD_IOC_NEW_ _IO(0xAA, 0x00)
#define X32_BIT 0x40000000L
#define NR_IO_URING_SETUP 425 /* the same in the x86_64, x32 and i386 tables */
#define NR_I386_UNSHARE 310
#define MARKER_PREFIX "MOAT-MARKER-"
#define CANARY_ENV_PREFIX "MOAT-CANARY-ENV-"
#define DETAIL_MAX 3000
#define MAX_FDS 64

/* ------------------------------------------------------------------ */
/* configuration from argv                                             */

enum { NS_MNT, NS_NET, NS_PID, NS_USER, NS_IPC, NS_UTS, NS_COUNT };
static const char *const ns_names[NS_COUNT] = {"mnt", "net", "pid", "user", "ipc", "uts"};

static struct {
	const char *token, *home, *project, *outside, *abstract_name, *unix_path, *unix_path2, *canary_tag;
	const char *launcher, *suid_root, *suid_other, *other_exe, *shm_name, *mq_name, *key_desc, *hosttmp;
	const char *env_allow, *only, *self, *abstract_dgram, *unix_dgram;
	int tcp_port, udp_port, canary_pid, pty;
	long sysv_key, msgq_key;
	int keep_fds[MAX_FDS], n_keep, leak_fds[MAX_FDS], n_leak;
	unsigned long long hostns[NS_COUNT];
	long pids_limit;
	long long mem_limit;
	/* The runner's terminal, the caller's (st_rdev; 0: not given).  A
	 * sandbox may give the command a terminal of its own (moat's pty):
	 * reaching that one is no escape. */
	unsigned long long outer_tty;
	char scratch[PATH_MAX];
} cfg;

static const char *tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t == '/' ? t : "/tmp";
}

static void parse_int_list(const char *s, int *out, int *n)
{
	char *end;
	*n = 0;
	while (s && *s && *n < MAX_FDS) {
		long v = strtol(s, &end, 10);
		if (end == s)
			break;
		out[(*n)++] = (int)v;
		s = *end == ',' ? end + 1 : end;
	}
}

static void parse_hostns(const char *s)
{
	char buf[512], *save = NULL, *tok;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		if (!colon)
			continue;
		*colon = '\0';
		for (int i = 0; i < NS_COUNT; i++)
			if (strcmp(tok, ns_names[i]) == 0)
				cfg.hostns[i] = strtoull(colon + 1, NULL, 10);
	}
}

/* The canary's tag comes hex-encoded, so that no process whose command line
 * holds the probe's arguments (the launcher, a sandbox's init) matches it. */
static const char *unhex(const char *h)
{
	static char out[128];
	size_t n = 0;
	for (; h[0] && h[1] && n < sizeof(out) - 1; h += 2) {
		unsigned v;
		if (sscanf(h, "%2x", &v) != 1)
			break;
		out[n++] = (char)v;
	}
	out[n] = '\0';
	return out;
}

static void parse_args(int argc, char **argv)
{
	cfg.token = "t0";
	cfg.pids_limit = 64;
	cfg.mem_limit = 256LL << 20;
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *k = argv[i], *v;
		size_t kl;
		if (!eq)
			continue;
		kl = (size_t)(eq - k);
		v = eq + 1;
#define KEY(name) (kl == strlen(name) && strncmp(k, name, kl) == 0)
		if (KEY("token")) cfg.token = v;
		else if (KEY("home")) cfg.home = v;
		else if (KEY("project")) cfg.project = v;
		else if (KEY("outside")) cfg.outside = v;
		else if (KEY("tcp")) cfg.tcp_port = atoi(v);
		else if (KEY("udp")) cfg.udp_port = atoi(v);
		else if (KEY("abstract")) cfg.abstract_name = v;
		else if (KEY("unix")) cfg.unix_path = v;
		else if (KEY("unix2")) cfg.unix_path2 = v;
		else if (KEY("abstract-dgram")) cfg.abstract_dgram = v;
		else if (KEY("unix-dgram")) cfg.unix_dgram = v;
		else if (KEY("canary-pid")) cfg.canary_pid = atoi(v);
		else if (KEY("canary-tag-hex")) cfg.canary_tag = unhex(v);
		else if (KEY("leak-fds")) parse_int_list(v, cfg.leak_fds, &cfg.n_leak);
		else if (KEY("keep-fds")) parse_int_list(v, cfg.keep_fds, &cfg.n_keep);
		else if (KEY("launcher")) cfg.launcher = v;
		else if (KEY("suid-root")) cfg.suid_root = v;
		else if (KEY("suid-other")) cfg.suid_other = v;
		else if (KEY("other-exe")) cfg.other_exe = v;
		else if (KEY("shm")) cfg.shm_name = v;
		else if (KEY("mq")) cfg.mq_name = v;
		else if (KEY("sysv-key")) cfg.sysv_key = strtol(v, NULL, 0);
		else if (KEY("msgq-key")) cfg.msgq_key = strtol(v, NULL, 0);
		else if (KEY("key-desc")) cfg.key_desc = v;
		else if (KEY("hosttmp")) cfg.hosttmp = v;
		else if (KEY("hostns")) parse_hostns(v);
		else if (KEY("pids-limit")) cfg.pids_limit = atol(v);
		else if (KEY("mem-limit")) cfg.mem_limit = atoll(v);
		else if (KEY("env-allow")) cfg.env_allow = v;
		else if (KEY("pty")) cfg.pty = atoi(v);
		else if (KEY("outer-tty")) cfg.outer_tty = strtoull(v, NULL, 10);
		else if (KEY("only")) cfg.only = v;
#undef KEY
	}
}

/* ------------------------------------------------------------------ */
/* output                                                              */

struct buf {
	char s[DETAIL_MAX];
	size_t n;
};

__attribute__((format(printf, 2, 3))) static void bp(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int w;
	if (b->n >= sizeof(b->s) - 1)
		return;
	va_start(ap, fmt);
	w = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	if (w > 0)
		b->n += (size_t)w < sizeof(b->s) - b->n ? (size_t)w : sizeof(b->s) - 1 - b->n;
}

static const char *en(int e)
{
	static char tmp[8][24];
	static int slot;
	const char *n;
	if (e == 0)
		return "OK";
	n = strerrorname_np(e);
	if (n)
		return n;
	slot = (slot + 1) % 8;
	snprintf(tmp[slot], sizeof(tmp[slot]), "errno%d", e);
	return tmp[slot];
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static const char *current_id = "";

static void emit(const char *id, const char *attempt, const char *result, const char *verdict, const char *detail)
{
	fputs("{\"id\":", stdout);
	json_str(stdout, id);
	fputs(",\"attempt\":", stdout);
	json_str(stdout, attempt);
	fputs(",\"result\":", stdout);
	json_str(stdout, result);
	fputs(",\"verdict\":", stdout);
	json_str(stdout, verdict);
	fputs(",\"detail\":", stdout);
	json_str(stdout, detail);
	fputs("}\n", stdout);
	fflush(stdout);
}

#define CONTAINED "CONTAINED"
#define ESCAPED "ESCAPED"
#define NA "NOT-APPLICABLE"

/* ------------------------------------------------------------------ */
/* helpers                                                             */

static pid_t xfork(void)
{
	fflush(stdout);
	fflush(stderr);
	return fork();
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Wait for pid at most timeout_ms, then SIGKILL it.  Returns the status. */
static int wait_bounded(pid_t pid, int timeout_ms)
{
	long end = now_ms() + timeout_ms;
	int st = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG | __WALL);
		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -1;
		if (now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, __WALL);
			return st;
		}
		usleep(2000);
	}
}

typedef int (*child_fn)(void *arg, struct buf *out);

/* Run fn in a forked child; its text comes back through a pipe.  Returns
 * the wait status (or -1). */
static int in_child(child_fn fn, void *arg, struct buf *out, int timeout_ms)
{
	int p[2], st;
	pid_t pid;
	long end;

	out->n = 0;
	out->s[0] = '\0';
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = xfork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		struct buf b = {{0}, 0};
		int rc;
		close(p[0]);
		alarm((unsigned)(timeout_ms / 1000 + 1));
		rc = fn(arg, &b);
		if (write(p[1], b.s, b.n) < 0) {
		}
		_exit(rc & 0xff);
	}
	close(p[1]);
	end = now_ms() + timeout_ms;
	for (;;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		long left = end - now_ms();
		ssize_t n;
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		n = read(p[0], out->s + out->n, sizeof(out->s) - 1 - out->n);
		if (n <= 0)
			break;
		out->n += (size_t)n;
		if (out->n >= sizeof(out->s) - 1)
			break;
	}
	out->s[out->n] = '\0';
	close(p[0]);
	st = wait_bounded(pid, timeout_ms > 0 ? 1000 : 1);
	return st;
}

/* Reads up to len bytes of path (following links); 1 if it holds a marker,
 * 0 if read without one, -errno if it could not be read. */
static int read_marker_at(int dirfd, const char *path)
{
	char b[512];
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;
	if (fd < 0)
		return -errno;
	n = read(fd, b, sizeof(b) - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	b[n] = '\0';
	return strstr(b, MARKER_PREFIX) ? 1 : 0;
}

static int read_marker(const char *path)
{
	return read_marker_at(AT_FDCWD, path);
}

static const char *rm_result(int r)
{
	return r == 1 ? "MARKER" : r == 0 ? "READ" : en(-r);
}

/* 1: our namespace is the host's; 0: a different one; -1: unknown. */
static int ns_host(int ns)
{
	char p[64];
	struct stat st;
	if (!cfg.hostns[ns])
		return -1;
	snprintf(p, sizeof(p), "/proc/self/ns/%s", ns_names[ns]);
	if (stat(p, &st) != 0)
		return -1;
	return (unsigned long long)st.st_ino == cfg.hostns[ns] ? 1 : 0;
}

static int status_field(const char *name, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t nl = strlen(name);
	int found = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, nl) == 0 && line[nl] == ':') {
			char *v = line + nl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = '\0';
			snprintf(out, len, "%s", v);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static void path_join(char *out, size_t len, const char *a, const char *b)
{
	snprintf(out, len, "%s/%s", a ? a : "", b);
}

static bool fd_is_declared(int fd)
{
	for (int i = 0; i < cfg.n_keep; i++)
		if (cfg.keep_fds[i] == fd)
			return true;
	return false;
}

/* Connect a stream socket with a timeout; returns 0 or -errno. */
static int connect_timeout(int s, const struct sockaddr *sa, socklen_t sl, int ms)
{
	int fl = fcntl(s, F_GETFL);
	fcntl(s, F_SETFL, fl | O_NONBLOCK);
	if (connect(s, sa, sl) == 0)
		goto ok;
	if (errno != EINPROGRESS && errno != EAGAIN)
		return -errno;
	struct pollfd pf = {.fd = s, .events = POLLOUT};
	if (poll(&pf, 1, ms) <= 0)
		return -ETIMEDOUT;
	int err = 0;
	socklen_t el = sizeof(err);
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
	if (err)
		return -err;
ok:
	fcntl(s, F_SETFL, fl);
	return 0;
}

static void send_tag(int s, const char *probe)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "%s %s\n", probe, cfg.token);
	if (send(s, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
	}
}

static int unix_connect(const char *path, bool abstract, const char *probe)
{
	struct sockaddr_un sa;
	socklen_t sl;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;
	size_t n = strlen(path);
	if (s < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (n > sizeof(sa.sun_path) - 2)
		n = sizeof(sa.sun_path) - 2;
	if (abstract) {
		memcpy(sa.sun_path + 1, path, n);
		sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	} else {
		memcpy(sa.sun_path, path, n);
		sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	rc = connect_timeout(s, (struct sockaddr *)&sa, sl, 1000);
	if (rc == 0 && probe)
		send_tag(s, probe);
	close(s);
	return rc;
}

/* The pids of the canary: the one given, and any whose cmdline holds its tag. */
static int canary_pids(pid_t *out, int max)
{
	int n = 0;
	DIR *d;
	struct dirent *e;
	if (cfg.canary_pid > 0 && n < max)
		out[n++] = cfg.canary_pid;
	if (!cfg.canary_tag || !(d = opendir("/proc")))
		return n;
	for (int scanned = 0; (e = readdir(d)) && scanned < 65536; scanned++) {
		char p[64], b[4096];
		int fd;
		ssize_t len;
		pid_t pid = (pid_t)atoi(e->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%d/cmdline", pid);
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, b, sizeof(b) - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (ssize_t i = 0; i < len; i++)
			if (!b[i])
				b[i] = ' ';
		b[len] = '\0';
		if (strstr(b, cfg.canary_tag)) {
			bool dup = false;
			for (int i = 0; i < n; i++)
				dup |= out[i] == pid;
			if (!dup && n < max)
				out[n++] = pid;
		}
	}
	closedir(d);
	return n;
}

static bool pid_is_canary(pid_t pid)
{
	char p[64], b[4096];
	int fd;
	ssize_t len;
	snprintf(p, sizeof(p), "/proc/%d/cmdline", pid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return errno != ENOENT; /* cannot tell: /proc hidden, but the pid exists */
	len = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (len <= 0)
		return false;
	for (ssize_t i = 0; i < len; i++)
		if (!b[i])
			b[i] = ' ';
	b[len] = '\0';
	return cfg.canary_tag && strstr(b, cfg.canary_tag);
}

/* ------------------------------------------------------------------ */
/* tty                                                                 */

struct ttyfd {
	int fd;
	char name[32];
	dev_t rdev;
};

/* The terminal a descriptor is: /dev/tty's own inode is 5:0 whatever
 * terminal it opens, TIOCGDEV says which. */
static dev_t tty_dev(int fd)
{
	unsigned int dev;
	struct stat st;

	if (ioctl(fd, TIOCGDEV, &dev) == 0)
		return (dev_t)dev;
	return fstat(fd, &st) == 0 ? st.st_rdev : 0;
}

static int collect_ttys(struct ttyfd *t, int max)
{
	int n = 0;
	for (int fd = 0; fd <= 2; fd++) {
		struct stat st;
		if (!isatty(fd) || fstat(fd, &st) != 0)
			continue;
		bool dup = false;
		for (int i = 0; i < n; i++)
			dup |= t[i].rdev == st.st_rdev;
		if (dup || n >= max)
			continue;
		t[n].fd = fd;
		t[n].rdev = st.st_rdev;
		snprintf(t[n].name, sizeof(t[n].name), "fd%d", fd);
		n++;
	}
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && n < max) {
		t[n].fd = fd;
		t[n].rdev = tty_dev(fd);
		snprintf(t[n].name, sizeof(t[n].name), "/dev/tty");
		n++;
	}
	return n;
}

/* Is the terminal `rdev` the sandbox's own, not the caller's? */
static bool own_tty(dev_t rdev)
{
	return cfg.outer_tty && (unsigned long long)rdev != cfg.outer_tty;
}

static void sti_probe(const char *id, const char *word, unsigned long hibits)
{
	struct ttyfd t[4];
	struct buf d = {{0}, 0};
	int n = collect_ttys(t, 4), injected = 0, first_err = -1;
	char str[64];

	snprintf(str, sizeof(str), "%s%s", word, cfg.token);
	if (n == 0) {
		int e = errno;
		bp(&d, "no tty reachable (fds 0-2 are not ttys; /dev/tty: %s)", en(e));
		emit(id, "ioctl(TIOCSTI) on every tty fd and /dev/tty", "NOTTY", CONTAINED, d.s);
		return;
	}
	for (int i = 0; i < n; i++) {
		int ok = 0, err = 0;
		for (size_t k = 0; k < strlen(str); k++) {
			char c = str[k];
			long r = syscall(SYS_ioctl, t[i].fd, (unsigned long)TIOCSTI | hibits, &c);
			if (r != 0) {
				err = errno;
				break;
			}
			ok++;
		}
		bp(&d, "%s: %s (%d bytes injected%s); ", t[i].name, ok ? "injected" : en(err), ok,
		   own_tty(t[i].rdev) ? " into a terminal of the sandbox's own, not the caller's" : "");
		if (ok && !own_tty(t[i].rdev))
			injected++;
		else if (first_err < 0)
			first_err = err;
		if (t[i].fd > 2)
			close(t[i].fd);
	}
	bp(&d, "word %s", str);
	emit(id, hibits ? "ioctl(TIOCSTI | 0xdeadbeef00000000) on every tty fd and /dev/tty"
			: "ioctl(TIOCSTI) on every tty fd and /dev/tty",
	     injected ? "OK" : en(first_err), injected ? ESCAPED : CONTAINED, d.s);
}

static void p_tty_sti(void)
{
	sti_probe("tty-sti", "moatsti", 0);
}

static void p_tty_sti_hibit(void)
{
	sti_probe("tty-sti-hibit", "moathibit", 0xdeadbeef00000000UL);
}

static void p_tty_linux(void)
{
	struct buf d = {{0}, 0};
	const char *devs[] = {"/dev/tty0", "/dev/tty1", "/dev/console", "/dev/tty"};
	int reached = 0;
	const char *res = "NOTTY";

	for (int fd = 0; fd <= 2; fd++) {
		if (!isatty(fd))
			continue;
		errno = 0;
		long r = syscall(SYS_ioctl, fd, (unsigned long)TIOCLINUX, NULL);
		int e = r == 0 ? 0 : errno;
		bp(&d, "fd%d: %s; ", fd, en(e));
		if (e == EFAULT || e == 0 || e == EINVAL)
			reached++, res = en(e);
		else if (strcmp(res, "NOTTY") == 0)
			res = en(e);
	}
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		int fd = open(devs[i], O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			bp(&d, "%s: open %s; ", devs[i], en(errno));
			continue;
		}
		long r = syscall(SYS_ioctl, fd, (unsigned long)TIOCLINUX, NULL);
		int e = r == 0 ? 0 : errno;
		bp(&d, "%s: %s; ", devs[i], en(e));
		if (e == EFAULT || e == 0 || e == EINVAL)
			reached++, res = en(e);
		close(fd);
	}
	bp(&d, "EFAULT means a virtual console took the request (NULL argument: nothing pasted)");
	emit("tty-linux", "ioctl(TIOCLINUX, NULL) on tty fds, /dev/tty0, /dev/tty1, /dev/console", res,
	     reached ? ESCAPED : CONTAINED, d.s);
}

static int child_sctty(void *arg, struct buf *out)
{
	(void)arg;
	if (setsid() < 0)
		bp(out, "setsid %s; ", en(errno));
	if (ioctl(0, TIOCSCTTY, 0) == 0) {
		bp(out, "TIOCSCTTY(0)=OK");
		return 1;
	}
	bp(out, "TIOCSCTTY(0)=%s", en(errno));
	if (own_tty(tty_dev(0)))
		return 0; /* fd 0 is the sandbox's own terminal: nothing to steal */
	if (cfg.pty) {
		/* Steal (needs CAP_SYS_ADMIN); only on the runner's own pty. */
		if (ioctl(0, TIOCSCTTY, 1) == 0) {
			bp(out, " TIOCSCTTY(1,steal)=OK");
			return 1;
		}
		bp(out, " TIOCSCTTY(1,steal)=%s", en(errno));
	}
	return 0;
}

static void p_tty_session(void)
{
	struct buf d = {{0}, 0}, c;
	bool esc = false;
	pid_t sid = getsid(0);
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	const char *res;

	bp(&d, "sid=%d pid=%d pgid=%d; ", sid, getpid(), getpgid(0));
	if (fd >= 0 && own_tty(tty_dev(fd))) {
		bp(&d, "/dev/tty opens a terminal of the sandbox's own (rdev %llu, the caller's is %llu); ",
		   (unsigned long long)tty_dev(fd), cfg.outer_tty);
		close(fd);
		res = "OWN-TTY";
	} else if (fd >= 0) {
		bp(&d, "/dev/tty opens: the caller's controlling terminal is still ours; ");
		esc = true;
		close(fd);
		res = "CTTY";
	} else {
		bp(&d, "/dev/tty: %s; ", en(errno));
		res = en(errno);
	}
	if (isatty(0)) {
		int st = in_child(child_sctty, NULL, &c, 2000);
		bp(&d, "child setsid+%s", c.s);
		if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1) {
			esc = true;
			res = "SCTTY";
		}
	} else {
		bp(&d, "fd 0 is not a tty");
	}
	emit("tty-session", "own session vs the caller's (/dev/tty); setsid+TIOCSCTTY on inherited fd 0", res,
	     esc ? ESCAPED : CONTAINED, d.s);
}

/* ------------------------------------------------------------------ */
/* fds, cwd, exe                                                       */

static int list_fds(int *out, int max)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		struct dirent *e;
		int self = dirfd(d);
		while ((e = readdir(d)) && n < max) {
			if (e->d_name[0] == '.')
				continue;
			int fd = atoi(e->d_name);
			if (fd != self)
				out[n++] = fd;
		}
		closedir(d);
		return n;
	}
	for (int fd = 0; fd < 4096 && n < max; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			out[n++] = fd;
	return n;
}

static void p_fd_leak(void)
{
	struct buf d = {{0}, 0};
	int fds[256], n = list_fds(fds, 256), leaked = 0;

	for (int i = 0; i < n; i++) {
		char p[64], t[256] = "?";
		ssize_t l;
		if (fds[i] <= 2)
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fds[i]);
		l = readlink(p, t, sizeof(t) - 1);
		if (l > 0)
			t[l] = '\0';
		if (fd_is_declared(fds[i])) {
			bp(&d, "fd %d declared (%s); ", fds[i], t);
			continue;
		}
		leaked++;
		bp(&d, "fd %d LEAKED (%s); ", fds[i], t);
		struct stat st;
		if (fstat(fds[i], &st) == 0 && S_ISSOCK(st.st_mode))
			send_tag(fds[i], "fd-leak");
	}
	if (!leaked)
		bp(&d, "only 0, 1, 2 and the declared fds");
	emit("fd-leak", "list /proc/self/fd against the declared set", leaked ? "LEAKED" : "OK",
	     leaked ? ESCAPED : CONTAINED, d.s);
}

static void p_fd_dir_escape(void)
{
	struct buf d = {{0}, 0};
	int fds[256], n = list_fds(fds, 256), dirs = 0;
	bool esc = false;
	const char *res = "NODIRFD";

	for (int i = 0; i < n; i++) {
		struct stat st;
		char p[128];
		int r;
		if (fds[i] <= 2 || fstat(fds[i], &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		dirs++;
		r = read_marker_at(fds[i], "../secret.txt");
		bp(&d, "fd %d%s: openat(fd,\"../secret.txt\") %s", fds[i], fd_is_declared(fds[i]) ? " (declared)" : "",
		   rm_result(r));
		esc |= r == 1;
		if (r == 1 || strcmp(res, "NODIRFD") == 0)
			res = rm_result(r);
		r = read_marker_at(fds[i], "secret.txt");
		bp(&d, ", openat(fd,\"secret.txt\") %s", rm_result(r));
		esc |= r == 1;
		int up = openat(fds[i], "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		bp(&d, ", openat(fd,\"..\") %s", up >= 0 ? "OK" : en(errno));
		if (up >= 0)
			close(up);
		snprintf(p, sizeof(p), "/proc/self/fd/%d/../secret.txt", fds[i]);
		r = read_marker(p);
		bp(&d, ", %s %s; ", p, rm_result(r));
		esc |= r == 1;
	}
	if (!dirs)
		bp(&d, "no directory fd beyond 0-2 is open");
	emit("fd-dir-escape", "openat(dirfd, \"..\"), /proc/self/fd/N/.. from every inherited directory fd",
	     esc ? "MARKER" : res, esc ? ESCAPED : CONTAINED, d.s);
}

static void p_cwd_escape(void)
{
	struct buf d = {{0}, 0};
	char cwd[PATH_MAX];
	int r1, r2;
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "(getcwd %s)", en(errno));
	r1 = read_marker("cwd-secret.txt");
	r2 = read_marker("/proc/self/cwd/cwd-secret.txt");
	DIR *dd = opendir(".");
	bp(&d, "cwd=%s; ./cwd-secret.txt %s; /proc/self/cwd/cwd-secret.txt %s; opendir(.) %s", cwd, rm_result(r1),
	   rm_result(r2), dd ? "OK" : en(errno));
	if (dd)
		closedir(dd);
	emit("cwd-escape", "read a marker in the starting cwd (outside the allowed paths)", rm_result(r1),
	     (r1 == 1 || r2 == 1) ? ESCAPED : CONTAINED, d.s);
}

/* Touch a file's times with their own values: nothing changes but ctime,
 * which the runner watches from outside. */
static void touch_same(int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0) {
		struct timespec ts[2] = {st.st_atim, st.st_mtim};
		futimens(fd, ts);
	}
}

/* Writing a running binary gives ETXTBSY; replacing it needs only its
 * directory (rename over it).  Both leave evidence for the runner: a ctime
 * bump on the binary, or moat-probe-<token>-exe next to it. */
static bool try_write_binary(const char *path, struct buf *d)
{
	char dir[PATH_MAX], p[PATH_MAX + 64];
	bool esc = false;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		touch_same(fd);
		close(fd);
		bp(d, "%s: open(O_WRONLY) OK; ", path);
		esc = true;
	} else {
		bp(d, "%s: open(O_WRONLY) %s; ", path, en(errno));
	}
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return esc;
	*slash = '\0';
	snprintf(p, sizeof(p), "%s/moat-probe-%s-exe", dir[0] ? dir : "", cfg.token);
	fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		bp(d, "its dir is writable (created %s: a rename over the binary would work); ", p);
		esc = true;
	} else {
		bp(d, "create in its dir: %s; ", en(errno));
	}
	return esc;
}

static void p_exe_overwrite(void)
{
	struct buf d = {{0}, 0};
	char self[PATH_MAX];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	bool esc = false;
	int fd = open("/proc/self/exe", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		touch_same(fd);
		close(fd);
		esc = true;
		bp(&d, "/proc/self/exe: open(O_WRONLY) OK; ");
	} else {
		bp(&d, "/proc/self/exe: %s; ", en(errno));
	}
	if (l > 0) {
		self[l] = '\0';
		esc |= try_write_binary(self, &d);
	}
	if (cfg.launcher && (l <= 0 || strcmp(cfg.launcher, self) != 0))
		esc |= try_write_binary(cfg.launcher, &d);
	bp(&d, "(no byte of a binary is written)");
	emit("exe-overwrite", "open /proc/self/exe and the launcher binary for writing; create a file next to them",
	     esc ? "WRITABLE" : "REFUSED", esc ? ESCAPED : CONTAINED, d.s);
}

/* ------------------------------------------------------------------ */
/* processes                                                           */

static int child_seize(void *arg, struct buf *out)
{
	pid_t pid = *(pid_t *)arg;
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
		bp(out, "OK");
		return 1; /* exiting detaches */
	}
	bp(out, "%s", en(errno));
	return 0;
}

static void p_ptrace_parent(void)
{
	struct buf d = {{0}, 0}, c;
	pid_t targets[16];
	int n = 0;
	bool esc = false;
	const char *res = "ESRCH";

	/* The parent counts unless it is the sandbox's own init (pid 1 of a
	 * private pid namespace, e.g. bwrap's): that one is inside. */
	bool own_init = getppid() == 1 && ns_host(NS_PID) == 0;
	if (getppid() > 0)
		targets[n++] = getppid();
	n += canary_pids(targets + n, 15);
	for (int i = 0; i < n; i++) {
		int st = in_child(child_seize, &targets[i], &c, 2000);
		bool ok = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1;
		char byte;
		struct iovec l = {.iov_base = &byte, .iov_len = 1}, r = {.iov_base = (void *)0x1000, .iov_len = 1};
		errno = 0;
		ssize_t pv = process_vm_readv(targets[i], &l, 1, &r, 1, 0);
		int e = pv >= 0 ? 0 : errno;
		bool is_parent = i == 0 && targets[0] == getppid();
		bp(&d, "pid %d%s: PTRACE_SEIZE %s, process_vm_readv %s; ", targets[i],
		   is_parent ? (own_init ? " (parent: the sandbox's own init, not counted)" : " (parent)") : " (canary)", c.s,
		   en(e));
		if (is_parent && own_init)
			continue;
		if (ok || e == EFAULT || pv >= 0) {
			esc = true;
			res = ok ? "OK" : en(e);
		} else if (i == 0) {
			res = c.s[0] ? (strcmp(c.s, "EPERM") == 0 ? "EPERM" : "REFUSED") : "REFUSED";
		}
	}
	if (!n)
		bp(&d, "no parent or canary visible");
	bp(&d, "(process_vm_readv of address 0x1000: EFAULT means access was granted)");
	emit("ptrace-parent", "PTRACE_SEIZE and process_vm_readv on the parent and the canary", res,
	     esc ? ESCAPED : CONTAINED, d.s);
}

static void p_ptrace_self_child(void)
{
	struct buf d = {{0}, 0};
	int p[2];
	bool esc = false;
	const char *res;
	if (pipe2(p, O_CLOEXEC) != 0) {
		emit("ptrace-self-child", "PTRACE_SEIZE an own child", en(errno), NA, "pipe failed");
		return;
	}
	pid_t pid = xfork();
	if (pid == 0) {
		char b;
		close(p[1]);
		alarm(5);
		if (read(p[0], &b, 1) < 0) {
		}
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		emit("ptrace-self-child", "PTRACE_SEIZE an own child", en(errno), NA, "fork failed");
		close(p[1]);
		return;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
		esc = true;
		res = "OK";
		bp(&d, "PTRACE_SEIZE of own child OK: a tracer could rewrite the child's filtered syscalls");
	} else {
		res = en(errno);
		bp(&d, "PTRACE_SEIZE %s", res);
	}
	close(p[1]);
	kill(pid, SIGKILL);
	wait_bounded(pid, 2000);
	emit("ptrace-self-child", "PTRACE_SEIZE an own child (the way to rewrite a filtered syscall)", res,
	     esc ? ESCAPED : CONTAINED, d.s);
}

static pid_t ppid_of(pid_t pid)
{
	char p[64], b[512];
	int fd;
	ssize_t n;
	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = '\0';
	char *rp = strrchr(b, ')');
	int pp = -1;
	if (!rp || sscanf(rp + 2, "%*c %d", &pp) != 1)
		return -1;
	return pp;
}

/* Is `target` among `from`, its parent, its parent's parent, ... (below
 * pid 1)? */
static bool in_parent_chain(pid_t from, pid_t target)
{
	for (int depth = 0; from > 1 && depth < 64; depth++) {
		if (from == target)
			return true;
		from = ppid_of(from);
	}
	return false;
}

static bool descends_from_me(pid_t pid)
{
	return in_parent_chain(pid, getpid());
}

/* Is pid one of my ancestors (my parent, its parent, ... up to pid 1)? */
static bool ancestor_of_me(pid_t pid)
{
	return in_parent_chain(getppid(), pid);
}

/* kill(pid, 0) on every visible process that is not ours and not the
 * sandbox's own: in a private pid namespace its pid 1, and the chain of
 * my ancestors up to it (moat __init under firejail, whose pid 1 is
 * firejail's monitor; every process there is inside the sandbox, and these
 * are the ones that started the command).  sig 0 delivers nothing, it only
 * asks whether a signal would be allowed. */
static int count_signalable_outside(struct buf *d)
{
	DIR *dd = opendir("/proc");
	struct dirent *e;
	int n = 0, shown = 0, seen = 0;
	bool own_pidns = ns_host(NS_PID) == 0;
	if (!dd)
		return 0;
	for (int scanned = 0; (e = readdir(dd)) && scanned < 65536; scanned++) {
		pid_t pid = (pid_t)atoi(e->d_name);
		if (pid <= 0 || pid == getpid() || (own_pidns && (pid == 1 || ancestor_of_me(pid))) ||
		    descends_from_me(pid))
			continue;
		seen++;
		if (kill(pid, 0) == 0) {
			n++;
			if (shown++ < 5)
				bp(d, "kill(%d, 0) OK; ", pid);
		}
	}
	closedir(dd);
	bp(d, "%d of %d other visible processes signalable; ", n, seen);
	return n;
}

static void p_signal_out(void)
{
	struct buf d = {{0}, 0};
	pid_t t[16];
	int n = canary_pids(t, 16);
	bool esc = false;
	const char *res;

	errno = 0;
	int r = kill(-1, 0);
	res = "ESRCH";
	bp(&d, "kill(-1, 0): %s; ", r == 0 ? "OK" : en(errno));
	/* kill(-1) also reaches the sandbox's own processes; what counts is a
	 * visible process that is neither ours nor the sandbox's init. */
	int outside = count_signalable_outside(&d);
	if (outside > 0) {
		esc = true;
		res = "OK";
	}
	for (int i = 0; i < n; i++) {
		int k0 = kill(t[i], 0), e0 = errno;
		bp(&d, "kill(%d, 0): %s", t[i], k0 == 0 ? "OK" : en(e0));
		if (k0 == 0 && pid_is_canary(t[i])) {
			int k1 = kill(t[i], SIGUSR1);
			bp(&d, ", kill(%d, SIGUSR1): %s", t[i], k1 == 0 ? "OK" : en(errno));
			esc |= k1 == 0;
			if (k1 == 0)
				res = "OK";
		}
		long pfd = syscall(SYS_pidfd_open, t[i], 0);
		if (pfd >= 0) {
			long s = syscall(SYS_pidfd_send_signal, (int)pfd, 0, NULL, 0);
			bp(&d, ", pidfd_open OK, pidfd_send_signal(0): %s; ", s == 0 ? "OK" : en(errno));
			esc |= s == 0;
			close((int)pfd);
		} else {
			bp(&d, ", pidfd_open: %s; ", en(errno));
		}
		esc |= k0 == 0;
		if (k0 == 0 && strcmp(res, "OK") != 0)
			res = "OK";
	}
	if (!n)
		bp(&d, "canary not visible");
	emit("signal-out", "kill(-1, 0), kill(canary, SIGUSR1), pidfd_open + pidfd_send_signal(canary, 0)", res,
	     esc ? ESCAPED : CONTAINED, d.s);
}

static bool file_has(const char *path, const char *needle, size_t cap)
{
	char *b = malloc(cap + 1);
	int fd;
	ssize_t n, tot = 0;
	bool hit = false;
	if (!b)
		return false;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		free(b);
		return false;
	}
	while ((size_t)tot < cap && (n = read(fd, b + tot, cap - (size_t)tot)) > 0)
		tot += n;
	close(fd);
	for (ssize_t i = 0; i < tot; i++)
		if (!b[i])
			b[i] = '\n';
	b[tot > 0 ? tot : 0] = '\0';
	hit = strstr(b, needle) != NULL;
	free(b);
	return hit;
}

static void p_proc_peek(void)
{
	struct buf d = {{0}, 0};
	DIR *dd = opendir("/proc");
	int seen = 0, env_readable = 0;
	bool esc = false;
	if (!dd) {
		emit("proc-peek", "read /proc/*/environ and cmdline for the canary's secret", en(errno), CONTAINED,
		     "/proc not readable");
		return;
	}
	struct dirent *e;
	for (int scanned = 0; (e = readdir(dd)) && scanned < 65536; scanned++) {
		pid_t pid = (pid_t)atoi(e->d_name);
		char p[64];
		if (pid <= 0 || pid == getpid())
			continue;
		seen++;
		snprintf(p, sizeof(p), "/proc/%d/environ", pid);
		if (access(p, R_OK) == 0)
			env_readable++;
		if (file_has(p, CANARY_ENV_PREFIX, 65536)) {
			esc = true;
			bp(&d, "secret found in /proc/%d/environ; ", pid);
		}
		snprintf(p, sizeof(p), "/proc/%d/cmdline", pid);
		if (file_has(p, CANARY_ENV_PREFIX, 8192)) {
			esc = true;
			bp(&d, "secret found in /proc/%d/cmdline; ", pid);
		}
	}
	closedir(dd);
	char root[PATH_MAX];
	ssize_t l = readlink("/proc/1/root", root, sizeof(root) - 1);
	if (l >= 0)
		root[l] = '\0';
	bp(&d, "%d other processes visible, %d environ readable; /proc/1/root -> %s", seen, env_readable,
	   l >= 0 ? root : en(errno));
	emit("proc-peek", "read /proc/*/environ, /proc/*/cmdline, /proc/1/root for the canary's secret",
	     esc ? "FOUND" : "NOTFOUND", esc ? ESCAPED : CONTAINED, d.s);
}

/* ------------------------------------------------------------------ */
/* unix sockets and network                                            */

static void p_unix_abstract(void)
{
	struct buf d = {{0}, 0};
	if (!cfg.abstract_name) {
		emit("unix-abstract", "connect to the runner's abstract socket", "NOTARGET", NA, "no abstract= given");
		return;
	}
	int r = unix_connect(cfg.abstract_name, true, "unix-abstract");
	bp(&d, "connect(@%s): %s", cfg.abstract_name, en(-r));
	emit("unix-abstract", "connect to the runner's abstract unix socket", en(-r), r == 0 ? ESCAPED : CONTAINED,
	     d.s);
}

static void p_unix_path(void)
{
	struct buf d = {{0}, 0};
	const char *sys[] = {"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/run/docker.sock",
			     "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/systemd/private",
			     "/run/systemd/journal/stdout"};
	char ubus[64];
	bool esc = false;
	const char *res = "ENOENT";
	if (cfg.unix_path) {
		int r = unix_connect(cfg.unix_path, false, "unix-path");
		bp(&d, "runner's %s: %s; ", cfg.unix_path, en(-r));
		esc |= r == 0;
		res = en(-r);
	}
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
		if (access(sys[i], F_OK) != 0)
			continue;
		int r = unix_connect(sys[i], false, NULL);
		bp(&d, "%s: %s; ", sys[i], en(-r));
		esc |= r == 0;
	}
	snprintf(ubus, sizeof(ubus), "/run/user/%d/bus", getuid());
	if (access(ubus, F_OK) == 0) {
		int r = unix_connect(ubus, false, NULL);
		bp(&d, "%s: %s; ", ubus, en(-r));
		esc |= r == 0;
	}
	const char *sa = getenv("SSH_AUTH_SOCK");
	if (sa && *sa) {
		int r = unix_connect(sa, false, NULL);
		bp(&d, "$SSH_AUTH_SOCK %s: %s; ", sa, en(-r));
		esc |= r == 0;
	} else {
		bp(&d, "no $SSH_AUTH_SOCK");
	}
	emit("unix-path", "connect to the runner's pathname socket (in /tmp, like ssh-agent), D-Bus, docker, $SSH_AUTH_SOCK",
	     esc ? "OK" : res, esc ? ESCAPED : CONTAINED, d.s);
}

static void p_unix_path_home(void)
{
	struct buf d = {{0}, 0};
	if (!cfg.unix_path2) {
		emit("unix-path-home", "connect to an agent socket below HOME", "NOTARGET", NA, "no unix2= given");
		return;
	}
	int r = unix_connect(cfg.unix_path2, false, "unix-path-home");
	bp(&d, "%s: %s (an agent socket below HOME but outside the credential paths, like ~/.1password/agent.sock)",
	   cfg.unix_path2, en(-r));
	emit("unix-path-home", "connect to the runner's pathname socket below HOME (not under /tmp or /run)", en(-r),
	     r == 0 ? ESCAPED : CONTAINED, d.s);
}

/* A datagram to the runner's datagram socket (as syslog's /dev/log and
 * journald's are) from every way of getting an AF_UNIX datagram socket:
 * socket(2) of SOCK_DGRAM, a socketpair(2) of SOCK_DGRAM, and a socketpair
 * of SOCK_RAW, which the kernel makes a datagram pair too.  Any sendto that
 * succeeds reached outside. */
static void unix_dgram_probe(const char *id, const char *what, const char *name, bool abstract)
{
	static const struct {
		const char *how;
		bool pair;
		int type;
	} ways[] = {{"socket(AF_UNIX, SOCK_DGRAM)", false, SOCK_DGRAM},
		    {"socketpair(AF_UNIX, SOCK_DGRAM)", true, SOCK_DGRAM},
		    {"socketpair(AF_UNIX, SOCK_RAW)", true, SOCK_RAW}};
	struct buf d = {{0}, 0};
	struct sockaddr_un sa;
	socklen_t sl;
	size_t n = strlen(name);
	bool esc = false;
	const char *res = "-";
	char msg[160];
	int len = snprintf(msg, sizeof(msg), "%s %s\n", id, cfg.token);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (n > sizeof(sa.sun_path) - 2)
		n = sizeof(sa.sun_path) - 2;
	memcpy(sa.sun_path + (abstract ? 1 : 0), name, n);
	sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		int sv[2] = {-1, -1}, rc;
		if (ways[i].pair)
			rc = socketpair(AF_UNIX, ways[i].type | SOCK_CLOEXEC, 0, sv);
		else
			rc = sv[0] = socket(AF_UNIX, ways[i].type | SOCK_CLOEXEC, 0);
		if (rc < 0) {
			res = en(errno);
			bp(&d, "%s: %s; ", ways[i].how, res);
			continue;
		}
		ssize_t r = sendto(sv[0], msg, (size_t)len, MSG_DONTWAIT, (struct sockaddr *)&sa, sl);
		res = r >= 0 ? "OK" : en(errno);
		bp(&d, "%s, sendto(%s%s): %s; ", ways[i].how, abstract ? "@" : "", name, res);
		esc |= r >= 0;
		close(sv[0]);
		if (sv[1] >= 0)
			close(sv[1]);
	}
	emit(id, what, esc ? "OK" : res, esc ? ESCAPED : CONTAINED, d.s);
}

static void p_unix_abstract_dgram(void)
{
	if (!cfg.abstract_dgram) {
		emit("unix-abstract-dgram", "sendto the runner's abstract datagram socket", "NOTARGET", NA,
		     "no abstract-dgram= given");
		return;
	}
	unix_dgram_probe("unix-abstract-dgram", "sendto the runner's abstract datagram socket", cfg.abstract_dgram, true);
}

static void p_unix_path_dgram(void)
{
	if (!cfg.unix_dgram) {
		emit("unix-path-dgram", "sendto the runner's pathname datagram socket", "NOTARGET", NA, "no unix-dgram= given");
		return;
	}
	unix_dgram_probe("unix-path-dgram", "sendto the runner's pathname datagram socket (in /tmp, like /dev/log)",
			 cfg.unix_dgram, false);
}

static struct sockaddr_in lo4(int port)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

static void p_net_tcp(void)
{
	struct buf d = {{0}, 0};
	const char *res;
	bool esc = false;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		res = en(errno);
		bp(&d, "socket(AF_INET, SOCK_STREAM): %s", res);
	} else {
		struct sockaddr_in sa = lo4(cfg.tcp_port);
		int r = connect_timeout(s, (struct sockaddr *)&sa, sizeof(sa), 1500);
		res = en(-r);
		bp(&d, "connect(127.0.0.1:%d): %s", cfg.tcp_port, res);
		if (r == 0) {
			esc = true;
			send_tag(s, "net-tcp");
		}
		close(s);
	}
	int s6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bp(&d, "; socket(AF_INET6): %s", s6 >= 0 ? "OK" : en(errno));
	if (s6 >= 0)
		close(s6);
	emit("net-tcp", "TCP connect to the runner's loopback listener and send a tag", res, esc ? ESCAPED : CONTAINED,
	     d.s);
}

static void p_net_udp(void)
{
	struct buf d = {{0}, 0};
	const char *res;
	bool esc = false;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		res = en(errno);
		bp(&d, "socket(AF_INET, SOCK_DGRAM): %s", res);
	} else {
		struct sockaddr_in sa = lo4(cfg.udp_port);
		char msg[96];
		int n = snprintf(msg, sizeof(msg), "net-udp %s\n", cfg.token);
		ssize_t r = sendto(s, msg, (size_t)n, 0, (struct sockaddr *)&sa, sizeof(sa));
		res = r >= 0 ? "OK" : en(errno);
		bp(&d, "sendto(127.0.0.1:%d): %s (the runner's listener decides: a sandbox's own loopback accepts it too)",
		   cfg.udp_port, res);
		esc = r >= 0;
		close(s);
	}
	emit("net-udp", "UDP sendto the runner's loopback port", res, esc ? ESCAPED : CONTAINED, d.s);
}

/* sendto with a NULL buffer: the route is looked up, then copying the
 * payload faults, so a reachable address gives EFAULT and no packet leaves. */
static int udp_route_probe(const char *addr, int port, int *af_err)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	struct sockaddr *sa;
	socklen_t sl;
	int af, s;
	memset(&s4, 0, sizeof(s4));
	memset(&s6, 0, sizeof(s6));
	if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1) {
		s4.sin_family = AF_INET;
		s4.sin_port = htons((uint16_t)port);
		sa = (struct sockaddr *)&s4;
		sl = sizeof(s4);
		af = AF_INET;
	} else if (inet_pton(AF_INET6, addr, &s6.sin6_addr) == 1) {
		s6.sin6_family = AF_INET6;
		s6.sin6_port = htons((uint16_t)port);
		sa = (struct sockaddr *)&s6;
		sl = sizeof(s6);
		af = AF_INET6;
	} else {
		return -EINVAL;
	}
	s = socket(af, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		*af_err = errno;
		return -errno;
	}
	ssize_t r = sendto(s, NULL, 32, MSG_DONTWAIT, sa, sl);
	int e = r >= 0 ? 0 : errno;
	close(s);
	return -e;
}

static void p_net_dns(void)
{
	struct buf d = {{0}, 0};
	FILE *f = fopen("/etc/resolv.conf", "re");
	char line[256];
	int n = 0;
	bool esc = false;
	const char *res = "NORESOLVER";
	if (!f) {
		bp(&d, "/etc/resolv.conf: %s; ", en(errno));
	} else {
		while (fgets(line, sizeof(line), f) && n < 4) {
			char ns[128];
			if (sscanf(line, "nameserver %127s", ns) != 1)
				continue;
			n++;
			int afe = 0, r = udp_route_probe(ns, 53, &afe);
			bool loop = strncmp(ns, "127.", 4) == 0 || strcmp(ns, "::1") == 0;
			bool reach = r == -EFAULT || r == 0;
			if (reach && loop && ns_host(NS_NET) == 0)
				reach = false; /* its own loopback, not the host's resolver */
			bp(&d, "nameserver %s:53: %s%s; ", ns, en(-r), reach ? " (route exists: a query would leave)" : "");
			if (reach) {
				esc = true;
				res = "REACHABLE";
			} else if (!esc) {
				res = en(-r);
			}
		}
		fclose(f);
	}
	int afe = 0, r = udp_route_probe("192.0.2.1", 53, &afe);
	bp(&d, "TEST-NET 192.0.2.1:53: %s (NULL payload: EFAULT = routable, no packet sent)", en(-r));
	if (r == -EFAULT || r == 0) {
		esc = true;
		res = "REACHABLE";
	}
	emit("net-dns", "resolve through the configured nameservers (route to them, NULL payload: nothing sent)", res,
	     esc ? ESCAPED : CONTAINED, d.s);
}

static int netlink_links(struct buf *d, int *non_lo)
{
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifm;
	} req;
	char b[16384];
	int n_links = 0;
	if (s < 0)
		return -errno;
	struct timeval tv = {.tv_sec = 1};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.ifm.ifi_family = AF_UNSPEC;
	if (send(s, &req, sizeof(req), 0) < 0) {
		int e = errno;
		close(s);
		return -e;
	}
	for (int loops = 0; loops < 64; loops++) {
		ssize_t len = recv(s, b, sizeof(b), 0);
		if (len <= 0)
			break;
		for (struct nlmsghdr *h = (struct nlmsghdr *)b; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				goto done;
			if (h->nlmsg_type != RTM_NEWLINK)
				continue;
			struct ifinfomsg *ifm = NLMSG_DATA(h);
			int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifm)));
			for (struct rtattr *a = IFLA_RTA(ifm); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				if (a->rta_type == IFLA_IFNAME) {
					const char *name = RTA_DATA(a);
					bp(d, "%s%s", n_links ? "," : "", name);
					if (strcmp(name, "lo") != 0)
						(*non_lo)++;
				}
			}
			n_links++;
		}
	}
done:
	close(s);
	return n_links;
}

static void p_net_netlink(void)
{
	struct buf d = {{0}, 0};
	int non_lo = 0, nl;
	bool esc = false;
	bp(&d, "links: ");
	nl = netlink_links(&d, &non_lo);
	if (nl < 0)
		bp(&d, "NETLINK_ROUTE %s", en(-nl));
	bp(&d, "; ");
	esc = non_lo > 0;
	int host_net = ns_host(NS_NET);
	const struct {
		int proto;
		const char *name;
	} others[] = {{12 /* NETLINK_NETFILTER */, "netfilter"}, {9 /* NETLINK_AUDIT */, "audit"},
		      {4 /* NETLINK_SOCK_DIAG */, "sock_diag"}, {15 /* NETLINK_KOBJECT_UEVENT */, "uevent"}};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, others[i].proto);
		bp(&d, "%s: %s; ", others[i].name, s >= 0 ? "OK" : en(errno));
		if (s >= 0) {
			close(s);
			if (host_net != 0)
				esc = true; /* in the host's network namespace */
		}
	}
	bp(&d, "net ns is the host's: %s", host_net == 1 ? "yes" : host_net == 0 ? "no" : "unknown");
	emit("net-netlink", "netlink route dump (interfaces visible), netfilter/audit/sock_diag/uevent sockets",
	     nl < 0 ? en(-nl) : non_lo ? "HOSTLINKS" : "LOONLY", esc ? ESCAPED : CONTAINED, d.s);
}

static void p_net_exotic(void)
{
	struct buf d = {{0}, 0};
	const struct {
		int af, type, proto;
		const char *name;
	} socks[] = {
	    {AF_PACKET, SOCK_RAW, 0x0300 /* htons(ETH_P_ALL) */, "AF_PACKET"},
	    {AF_INET, SOCK_RAW, IPPROTO_ICMP, "AF_INET/SOCK_RAW"},
	    {AF_INET, SOCK_PACKET, 0x0300, "AF_INET/SOCK_PACKET"},
	    {AF_VSOCK, SOCK_STREAM, 0, "AF_VSOCK"},
	    {AF_ALG, SOCK_SEQPACKET, 0, "AF_ALG"},
	    {AF_KEY, SOCK_RAW, 2 /* PF_KEY_V2 */, "AF_KEY"},
	    {AF_BLUETOOTH, SOCK_RAW, 1, "AF_BLUETOOTH"},
	    {AF_XDP, SOCK_RAW, 0, "AF_XDP"},
	    {AF_TIPC, SOCK_RDM, 0, "AF_TIPC"},
	    {AF_RDS, SOCK_SEQPACKET, 0, "AF_RDS"},
	    {AF_CAN, SOCK_RAW, 1, "AF_CAN"},
	};
	int opened = 0;
	const char *res = "REFUSED";
	for (size_t i = 0; i < sizeof(socks) / sizeof(socks[0]); i++) {
		int s = socket(socks[i].af, socks[i].type | SOCK_CLOEXEC, socks[i].proto);
		bp(&d, "%s: %s; ", socks[i].name, s >= 0 ? "OK" : en(errno));
		if (s >= 0) {
			opened++;
			res = socks[i].name;
			close(s);
		}
	}
	emit("net-exotic", "socket() of AF_PACKET, SOCK_RAW, AF_VSOCK, AF_ALG, AF_KEY, AF_BLUETOOTH, AF_XDP, ...", res,
	     opened ? ESCAPED : CONTAINED, d.s);
}

/* A minimal io_uring, without liburing. */
struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	void *sq_ptr, *cq_ptr;
	size_t sq_sz, cq_sz, sqes_sz;
};

static int ring_setup(struct ring *r)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	memset(r, 0, sizeof(*r));
	r->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -errno;
	r->sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	r->cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		r->sq_sz = r->cq_sz = r->sq_sz > r->cq_sz ? r->sq_sz : r->cq_sz;
	r->sq_ptr = mmap(0, r->sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	if (r->sq_ptr == MAP_FAILED)
		return -errno;
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		r->cq_ptr = r->sq_ptr;
	else {
		r->cq_ptr = mmap(0, r->cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
		if (r->cq_ptr == MAP_FAILED)
			return -errno;
	}
	r->sqes_sz = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(0, r->sqes_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		return -errno;
	r->sq_tail = (unsigned *)((char *)r->sq_ptr + p.sq_off.tail);
	r->sq_mask = (unsigned *)((char *)r->sq_ptr + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)((char *)r->sq_ptr + p.sq_off.array);
	r->cq_head = (unsigned *)((char *)r->cq_ptr + p.cq_off.head);
	r->cq_tail = (unsigned *)((char *)r->cq_ptr + p.cq_off.tail);
	r->cq_mask = (unsigned *)((char *)r->cq_ptr + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq_ptr + p.cq_off.cqes);
	return 0;
}

/* Submit one sqe and wait for its completion; returns cqe->res. */
static int ring_do(struct ring *r, const struct io_uring_sqe *sqe)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask;
	r->sqes[idx] = *sqe;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	unsigned head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	int res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static void ring_free(struct ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_sz);
	if (r->cq_ptr && r->cq_ptr != MAP_FAILED && r->cq_ptr != r->sq_ptr)
		munmap(r->cq_ptr, r->cq_sz);
	if (r->sq_ptr && r->sq_ptr != MAP_FAILED)
		munmap(r->sq_ptr, r->sq_sz);
	if (r->fd > 0)
		close(r->fd);
}

static void p_net_iouring(void)
{
	struct buf d = {{0}, 0};
	struct ring r;
	int rc = ring_setup(&r);
	bool esc = false;
	const char *res;
	if (rc < 0) {
		res = en(-rc);
		bp(&d, "io_uring_setup: %s", res);
		ring_free(&r);
		emit("net-iouring", "open a TCP socket and connect through io_uring (IORING_OP_SOCKET, CONNECT, SEND)",
		     res, CONTAINED, d.s);
		return;
	}
	struct io_uring_sqe sqe;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_SOCKET;
	sqe.fd = AF_INET;
	sqe.off = SOCK_STREAM;
	sqe.len = 0;
	int s = ring_do(&r, &sqe);
	bp(&d, "io_uring_setup OK; IORING_OP_SOCKET(AF_INET): %s", s >= 0 ? "OK" : en(-s));
	res = s >= 0 ? "SOCKET" : en(-s);
	if (s >= 0) {
		struct sockaddr_in sa = lo4(cfg.tcp_port);
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = IORING_OP_CONNECT;
		sqe.fd = s;
		sqe.addr = (uint64_t)(uintptr_t)&sa;
		sqe.off = sizeof(sa);
		alarm(5);
		int c = ring_do(&r, &sqe);
		bp(&d, "; IORING_OP_CONNECT(127.0.0.1:%d): %s", cfg.tcp_port, en(-c));
		res = en(-c);
		if (c == 0) {
			char msg[96];
			int n = snprintf(msg, sizeof(msg), "net-iouring %s\n", cfg.token);
			memset(&sqe, 0, sizeof(sqe));
			sqe.opcode = IORING_OP_SEND;
			sqe.fd = s;
			sqe.addr = (uint64_t)(uintptr_t)msg;
			sqe.len = (unsigned)n;
			int w = ring_do(&r, &sqe);
			bp(&d, "; IORING_OP_SEND: %s", w >= 0 ? "OK" : en(-w));
			esc = true;
		}
		close(s);
	}
	ring_free(&r);
	emit("net-iouring", "open a TCP socket and connect through io_uring (IORING_OP_SOCKET, CONNECT, SEND)", res,
	     esc ? ESCAPED : CONTAINED, d.s);
}

/* ------------------------------------------------------------------ */
/* namespaces and mounts                                               */

static int child_unshare(void *arg, struct buf *out)
{
	int flags = *(int *)arg;
	if (unshare(flags) == 0) {
		bp(out, "OK");
		return 1;
	}
	bp(out, "%s", en(errno));
	return 0;
}

static int child_clone_user(void *arg, struct buf *out)
{
	(void)arg;
	long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		syscall(SYS_exit_group, 0);
	if (r < 0) {
		bp(out, "%s", en(errno));
		return 0;
	}
	waitpid((pid_t)r, NULL, 0);
	bp(out, "OK");
	return 1;
}

struct clone_args_ {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
	    cgroup;
};

static int child_clone3_user(void *arg, struct buf *out)
{
	struct clone_args_ ca;
	(void)arg;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER;
	ca.exit_signal = SIGCHLD;
	long r = syscall(435 /* clone3 */, &ca, sizeof(ca));
	if (r == 0)
		syscall(SYS_exit_group, 0);
	if (r < 0) {
		bp(out, "%s", en(errno));
		return 0;
	}
	waitpid((pid_t)r, NULL, 0);
	bp(out, "OK");
	return 1;
}

static bool child_ok(int st)
{
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

static void p_ns_user(void)
{
	struct buf d = {{0}, 0}, c;
	int fl = CLONE_NEWUSER;
	bool esc = false;
	const char *res;
	int st = in_child(child_unshare, &fl, &c, 3000);
	esc |= child_ok(st);
	res = esc ? "OK" : (c.s[0] ? c.s : "?");
	static char r0[32];
	snprintf(r0, sizeof(r0), "%s", res);
	bp(&d, "unshare(CLONE_NEWUSER): %s; ", c.s);
	st = in_child(child_clone_user, NULL, &c, 3000);
	esc |= child_ok(st);
	bp(&d, "clone(CLONE_NEWUSER): %s; ", c.s);
	st = in_child(child_clone3_user, NULL, &c, 3000);
	esc |= child_ok(st);
	bp(&d, "clone3(CLONE_NEWUSER): %s; ", c.s);
	errno = 0;
	long r = syscall(435, NULL, 88);
	bp(&d, "clone3(NULL): %s (ENOSYS wanted, so that libcs fall back to clone)", r < 0 ? en(errno) : "OK?");
	emit("ns-user", "unshare(CLONE_NEWUSER), clone(CLONE_NEWUSER), clone3(CLONE_NEWUSER)", esc ? "OK" : r0,
	     esc ? ESCAPED : CONTAINED, d.s);
}

static int child_setns_host(void *arg, struct buf *out)
{
	const char *ns = arg;
	char p[64];
	struct stat a, b;
	snprintf(p, sizeof(p), "/proc/1/ns/%s", ns);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		bp(out, "open %s %s", p, en(errno));
		return 0;
	}
	snprintf(p, sizeof(p), "/proc/self/ns/%s", ns);
	if (fstat(fd, &a) == 0 && stat(p, &b) == 0 && a.st_ino == b.st_ino) {
		bp(out, "pid 1 shares our %s ns", ns);
		close(fd);
		return 0;
	}
	if (setns(fd, 0) == 0) {
		bp(out, "setns(pid 1's %s) OK", ns);
		return 1;
	}
	bp(out, "setns(pid 1's %s) %s", ns, en(errno));
	return 0;
}

static void p_ns_other(void)
{
	struct buf d = {{0}, 0}, c;
	const struct {
		int flags;
		const char *name;
	} tries[] = {{CLONE_NEWNS, "NEWNS"},
		     {CLONE_NEWNET, "NEWNET"},
		     {CLONE_NEWPID, "NEWPID"},
		     {CLONE_NEWIPC | CLONE_NEWUTS, "NEWIPC|NEWUTS"},
		     {CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET, "NEWUSER|NEWNS|NEWNET"}};
	bool esc = false;
	const char *res = "EPERM";
	static char r0[32];
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		int fl = tries[i].flags;
		int st = in_child(child_unshare, &fl, &c, 3000);
		bp(&d, "unshare(%s): %s; ", tries[i].name, c.s);
		if (i == 0) {
			snprintf(r0, sizeof(r0), "%s", c.s);
			res = r0;
		}
		if (child_ok(st)) {
			esc = true;
			res = "OK";
		}
	}
	errno = 0;
	int r = setns(-1, 0);
	bp(&d, "setns(-1): %s; ", r == 0 ? "OK" : en(errno));
	const char *nss[] = {"mnt", "net", "pid"};
	for (size_t i = 0; i < 3; i++) {
		int st = in_child(child_setns_host, (void *)nss[i], &c, 3000);
		bp(&d, "%s; ", c.s);
		if (child_ok(st)) {
			esc = true;
			res = "OK";
		}
	}
	emit("ns-other", "unshare of mount/net/pid/ipc/uts namespaces, setns into pid 1's namespaces", res,
	     esc ? ESCAPED : CONTAINED, d.s);
}

static int child_mount(void *arg, struct buf *out)
{
	(void)arg;
	char dir[PATH_MAX];
	int esc = 0;
	if (ns_host(NS_MNT) != 0) {
		/* Never mount in the host's namespace: make a private one first. */
		if (unshare(CLONE_NEWNS) == 0) {
			bp(out, "own mount ns via unshare(NEWNS); ");
		} else if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) {
			bp(out, "own mount ns via unshare(NEWUSER|NEWNS); ");
		} else {
			bp(out, "in the host's mount ns and cannot leave it (%s): mount not tried; ", en(errno));
			return 0;
		}
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	}
	snprintf(dir, sizeof(dir), "%s/moat-probe-%s-mnt", tmpdir(), cfg.token);
	mkdir(dir, 0700);
	if (mount("none", dir, "tmpfs", 0, "size=64k") == 0) {
		bp(out, "mount(tmpfs) OK; ");
		umount2(dir, MNT_DETACH);
		esc = 1;
	} else {
		bp(out, "mount(tmpfs): %s; ", en(errno));
	}
	rmdir(dir);
	/* The masks over secrets: can one be taken away? */
	if (cfg.home) {
		char p[PATH_MAX], f[PATH_MAX];
		path_join(p, sizeof(p), cfg.home, ".ssh");
		if (umount2(p, MNT_DETACH) == 0) {
			path_join(f, sizeof(f), p, "id_ed25519");
			int r = read_marker(f);
			bp(out, "umount2(~/.ssh) OK, then the key: %s; ", rm_result(r));
			esc |= r == 1;
		} else {
			bp(out, "umount2(~/.ssh): %s; ", en(errno));
		}
	}
	if (chroot("/") == 0) {
		bp(out, "chroot(/) OK");
		esc = 1;
	} else {
		bp(out, "chroot(/): %s", en(errno));
	}
	return esc;
}

static void p_mount_family(void)
{
	struct buf d = {{0}, 0}, c;
	bool esc = false;
	const char *res = "EPERM";
	long fd = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	bp(&d, "fsopen(tmpfs): %s; ", fd >= 0 ? "OK" : en(errno));
	if (fd >= 0) {
		close((int)fd);
		esc = true;
		res = "OK";
	} else {
		res = en(errno);
	}
	fd = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	bp(&d, "open_tree(/, CLONE): %s; ", fd >= 0 ? "OK" : en(errno));
	if (fd >= 0) {
		close((int)fd);
		esc = true;
	}
	errno = 0;
	long r = syscall(SYS_pivot_root, NULL, NULL);
	int e = r == 0 ? 0 : errno;
	bp(&d, "pivot_root(NULL): %s; ", en(e));
	if (e == EFAULT || e == 0)
		esc = true;
	r = syscall(SYS_move_mount, -1, NULL, -1, NULL, 0);
	e = r == 0 ? 0 : errno;
	bp(&d, "move_mount(-1): %s; ", en(e));
	if (e == EBADF || e == EFAULT || e == ENOENT || e == EINVAL)
		esc = true;
	r = syscall(SYS_fspick, AT_FDCWD, "/", 1 /* FSPICK_CLOEXEC */);
	bp(&d, "fspick(/): %s; ", r >= 0 ? "OK" : en(errno));
	if (r >= 0) {
		close((int)r);
		esc = true;
	}
	int st = in_child(child_mount, NULL, &c, 3000);
	bp(&d, "child: %s", c.s);
	if (child_ok(st))
		esc = true;
	bp(&d, " (pivot_root/move_mount with bad arguments: EFAULT/EBADF means the privilege check passed)");
	emit("mount-family", "fsopen, open_tree, pivot_root, move_mount, fspick, mount, umount2 of a mask, chroot",
	     esc ? "OK" : res, esc ? ESCAPED : CONTAINED, d.s);
}

/* ------------------------------------------------------------------ */
/* file system                                                         */

static const char *const secret_rel[] = {".ssh/id_ed25519", ".aws/credentials", ".netrc"};

static void p_fs_secrets(void)
{
	struct buf d = {{0}, 0};
	bool esc = false;
	const char *res = "ENOENT";
	static char r0[32];
	if (!cfg.home) {
		emit("fs-secrets", "read the canary credential files", "NOTARGET", NA, "no home= given");
		return;
	}
	for (size_t i = 0; i < sizeof(secret_rel) / sizeof(secret_rel[0]); i++) {
		char p[PATH_MAX], w[PATH_MAX], l[PATH_MAX];
		path_join(p, sizeof(p), cfg.home, secret_rel[i]);
		int r = read_marker(p);
		bp(&d, "~/%s: %s", secret_rel[i], rm_result(r));
		if (i == 0) {
			snprintf(r0, sizeof(r0), "%s", rm_result(r));
			res = r0;
		}
		esc |= r == 1;
		/* .. walks */
		if (cfg.project) {
			snprintf(w, sizeof(w), "%s/../%s", cfg.project, secret_rel[i]);
			r = read_marker(w);
			bp(&d, ", project/../: %s", rm_result(r));
			esc |= r == 1;
		}
		snprintf(w, sizeof(w), "%s/./%s/../%s", cfg.home, ".", secret_rel[i]);
		r = read_marker(w);
		esc |= r == 1;
		snprintf(w, sizeof(w), "/proc/self/root%s", p);
		r = read_marker(w);
		bp(&d, ", /proc/self/root: %s", rm_result(r));
		esc |= r == 1;
		/* O_PATH then reopen through /proc */
		int op = open(p, O_PATH | O_CLOEXEC);
		if (op >= 0) {
			snprintf(w, sizeof(w), "/proc/self/fd/%d", op);
			r = read_marker(w);
			bp(&d, ", O_PATH reopen: %s", rm_result(r));
			esc |= r == 1;
			close(op);
		} else {
			bp(&d, ", O_PATH: %s", en(errno));
		}
		/* a symlink and a hard link planted in tmp */
		snprintf(l, sizeof(l), "%s/moat-probe-%s-sl%zu", tmpdir(), cfg.token, i);
		unlink(l);
		if (symlink(p, l) == 0) {
			r = read_marker(l);
			bp(&d, ", tmp symlink: %s", rm_result(r));
			esc |= r == 1;
			unlink(l);
		} else {
			bp(&d, ", tmp symlink: %s", en(errno));
		}
		snprintf(l, sizeof(l), "%s/moat-probe-%s-hl%zu", tmpdir(), cfg.token, i);
		unlink(l);
		if (link(p, l) == 0) {
			r = read_marker(l);
			bp(&d, ", tmp hardlink: %s; ", rm_result(r));
			esc |= r == 1;
			unlink(l);
		} else {
			bp(&d, ", tmp hardlink: %s; ", en(errno));
		}
	}
	emit("fs-secrets", "read ~/.ssh/id_ed25519, ~/.aws/credentials, ~/.netrc by path, .. walks, /proc/self/root, O_PATH reopen, symlink and hardlink in tmp",
	     esc ? "MARKER" : res, esc ? ESCAPED : CONTAINED, d.s);
}

static void p_fs_read_outside(void)
{
	struct buf d = {{0}, 0};
	char p[PATH_MAX];
	if (!cfg.outside) {
		emit("fs-read-outside", "read a file outside the allowed paths", "NOTARGET", NA, "no outside= given");
		return;
	}
	path_join(p, sizeof(p), cfg.outside, "secret.txt");
	int r = read_marker(p);
	DIR *dd = opendir(cfg.outside);
	bp(&d, "%s: %s; opendir(%s): %s", p, rm_result(r), cfg.outside, dd ? "OK" : en(errno));
	if (dd)
		closedir(dd);
	emit("fs-read-outside", "read a canary file outside the allowed paths", rm_result(r),
	     r == 1 ? ESCAPED : CONTAINED, d.s);
}

/* Every success leaves evidence for the runner (which restores its
 * canaries before each run): a tag appended to victim.txt, its mode changed
 * to 0604, files named moat-probe-<token>-* left behind. */
static void p_fs_write_outside(void)
{
	struct buf d = {{0}, 0};
	char p[PATH_MAX], v[PATH_MAX], t[PATH_MAX];
	int ok = 0;
	struct stat st;
	if (!cfg.outside) {
		emit("fs-write-outside", "write outside the writable paths", "NOTARGET", NA, "no outside= given");
		return;
	}
	path_join(v, sizeof(v), cfg.outside, "victim.txt");
	snprintf(p, sizeof(p), "%s/moat-probe-%s-new", cfg.outside, cfg.token);
	int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	bp(&d, "create: %s; ", fd >= 0 ? "OK" : en(errno));
	if (fd >= 0) {
		ok++;
		close(fd);
	}
	fd = open(v, O_WRONLY | O_APPEND | O_CLOEXEC);
	bp(&d, "append to victim: %s; ", fd >= 0 ? "OK" : en(errno));
	if (fd >= 0) {
		char tag[64];
		int n = snprintf(tag, sizeof(tag), "moat-probe-%s\n", cfg.token);
		if (write(fd, tag, (size_t)n) == n)
			ok++;
		close(fd);
	}
	if (stat(v, &st) == 0) {
		int r = truncate(v, st.st_size + 1);
		bp(&d, "truncate(victim, +1): %s; ", r == 0 ? "OK" : en(errno));
		ok += r == 0;
		r = chmod(v, 0604);
		bp(&d, "chmod(victim, 0604): %s; ", r == 0 ? "OK" : en(errno));
		ok += r == 0;
		/* The other metadata calls: ctime moves, the runner sees it. */
		struct timespec old_times[2] = {st.st_atim, st.st_mtim};
		r = utimensat(AT_FDCWD, v, old_times, 0);
		bp(&d, "utimensat(victim, same times): %s; ", r == 0 ? "OK" : en(errno));
		ok += r == 0;
		r = chown(v, st.st_uid, st.st_gid);
		bp(&d, "chown(victim, same owner): %s; ", r == 0 ? "OK" : en(errno));
		ok += r == 0;
		r = setxattr(v, "user.moat-probe", cfg.token, strlen(cfg.token), 0);
		bp(&d, "setxattr(victim, user.moat-probe): %s; ", r == 0 ? "OK" : en(errno));
		ok += r == 0;
	} else {
		bp(&d, "stat(victim): %s; ", en(errno));
	}
	snprintf(p, sizeof(p), "%s/moat-probe-%s-dir", cfg.outside, cfg.token);
	int r = mkdir(p, 0700);
	bp(&d, "mkdir: %s; ", r == 0 ? "OK" : en(errno));
	ok += r == 0;
	snprintf(p, sizeof(p), "%s/moat-probe-%s-sym", cfg.outside, cfg.token);
	r = symlink("/etc/hostname", p);
	bp(&d, "symlink: %s; ", r == 0 ? "OK" : en(errno));
	ok += r == 0;
	/* rename-into and link-into from tmp */
	snprintf(t, sizeof(t), "%s/moat-probe-%s-mv", tmpdir(), cfg.token);
	fd = open(t, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		snprintf(p, sizeof(p), "%s/moat-probe-%s-ln", cfg.outside, cfg.token);
		r = link(t, p);
		bp(&d, "link tmp->outside: %s; ", r == 0 ? "OK" : en(errno));
		ok += r == 0;
		snprintf(p, sizeof(p), "%s/moat-probe-%s-mv", cfg.outside, cfg.token);
		r = rename(t, p);
		bp(&d, "rename tmp->outside: %s; ", r == 0 ? "OK" : en(errno));
		ok += r == 0;
		unlink(t);
	} else {
		bp(&d, "tmp file: %s; ", en(errno));
	}
	const char *sys[] = {"/usr", "/etc", "/usr/bin"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/moat-probe-%s-new", sys[i], cfg.token);
		fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		bp(&d, "create in %s: %s; ", sys[i], fd >= 0 ? "OK" : en(errno));
		if (fd >= 0) {
			ok++;
			close(fd);
		}
	}
	bp(&d, "(EXDEV: tmp is another file system)");
	emit("fs-write-outside", "append, truncate, chmod, create, mkdir, symlink, link/rename from tmp in the outside dir; create in /usr, /etc",
	     ok ? "OK" : "REFUSED", ok ? ESCAPED : CONTAINED, d.s);
}

/* Landlock's REFER right: a hard link of a read-only file into writable tmp
 * would make it writable; renames inside a read-only dir.  Evidence stays
 * for the runner: ro.txt grows, mv.txt disappears, moat-probe-* appear. */
static void p_fs_refer(void)
{
	struct buf d = {{0}, 0};
	char src[PATH_MAX], mv[PATH_MAX], dst[PATH_MAX], t[PATH_MAX];
	int ok = 0, r;
	if (!cfg.project) {
		emit("fs-refer", "rename/link within a read-only allowed dir", "NOTARGET", NA, "no project= given");
		return;
	}
	path_join(src, sizeof(src), cfg.project, "ro.txt");
	path_join(mv, sizeof(mv), cfg.project, "mv.txt");
	snprintf(dst, sizeof(dst), "%s/moat-probe-%s-ren", cfg.project, cfg.token);
	r = rename(mv, dst);
	bp(&d, "rename(project/mv.txt -> project/x): %s; ", r == 0 ? "OK" : en(errno));
	ok += r == 0;
	snprintf(dst, sizeof(dst), "%s/moat-probe-%s-ln", cfg.project, cfg.token);
	r = link(src, dst);
	bp(&d, "link(project/ro.txt -> project/x): %s; ", r == 0 ? "OK" : en(errno));
	ok += r == 0;
	snprintf(t, sizeof(t), "%s/moat-probe-%s-refer", tmpdir(), cfg.token);
	unlink(t);
	r = link(src, t);
	bp(&d, "link(project/ro.txt -> tmp): %s", r == 0 ? "OK" : en(errno));
	if (r == 0) {
		int fd = open(t, O_WRONLY | O_APPEND | O_CLOEXEC);
		bp(&d, ", append through it: %s", fd >= 0 ? "OK" : en(errno));
		if (fd >= 0) {
			if (write(fd, "moat-probe-refer\n", 17) == 17)
				ok++;
			close(fd);
		}
		unlink(t);
	}
	bp(&d, "; ");
	int fd = open(t, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		snprintf(dst, sizeof(dst), "%s/moat-probe-%s-in", cfg.project, cfg.token);
		r = rename(t, dst);
		bp(&d, "rename(tmp -> project): %s; ", r == 0 ? "OK" : en(errno));
		ok += r == 0;
		unlink(t);
	}
	bp(&d, "(EXDEV: tmp is another file system, refused anyway)");
	emit("fs-refer", "rename/link inside a read-only allowed dir; hard link from it into tmp and write through the link",
	     ok ? "OK" : "REFUSED", ok ? ESCAPED : CONTAINED, d.s);
}

static void p_fs_truncate(void)
{
	struct buf d = {{0}, 0};
	char p[PATH_MAX];
	struct stat st;
	int ok = 0;
	if (!cfg.project) {
		emit("fs-truncate", "truncate a read-only allowed file", "NOTARGET", NA, "no project= given");
		return;
	}
	path_join(p, sizeof(p), cfg.project, "trunc.txt");
	if (stat(p, &st) != 0) {
		emit("fs-truncate", "truncate a read-only allowed file", en(errno), CONTAINED, "project/trunc.txt not visible");
		return;
	}
	int r = truncate(p, st.st_size > 0 ? st.st_size - 1 : 0);
	int e = errno;
	bp(&d, "truncate(trunc.txt, size-1): %s; ", r == 0 ? "OK" : en(e));
	ok += r == 0;
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	bp(&d, "open(trunc.txt, O_WRONLY): %s", fd >= 0 ? "OK" : en(errno));
	if (fd >= 0) {
		touch_same(fd);
		ok++;
		close(fd);
	}
	emit("fs-truncate", "truncate() by one byte and open(O_WRONLY) of a read-only allowed file", ok ? "OK" : en(e),
	     ok ? ESCAPED : CONTAINED, d.s);
}

/* Metadata outside every write grant: Landlock (to ABI 7 at least) governs
 * no chmod, chown, utime or xattr call, so only a read-only mount stops
 * them.  The target is the runner's meta-target next to the probe (owned
 * by the run's user, mode 0755): a setuid bit or a file capability set on
 * it from inside would hold on the host.  Evidence stays for the runner. */
static void p_fs_metadata(void)
{
	struct buf d = {{0}, 0};
	char self[PATH_MAX], t[PATH_MAX + 16];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int ok = 0, r;
	if (l <= 0) {
		emit("fs-metadata", "chmod u+s and set a file capability outside the write grants", en(errno), NA,
		     "/proc/self/exe unreadable");
		return;
	}
	self[l] = '\0';
	char *slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(t, sizeof(t), "%s/meta-target", self);
	r = chmod(t, 04755);
	bp(&d, "chmod(meta-target, 04755): %s; ", r == 0 ? "OK" : en(errno));
	ok += r == 0;
	/* VFS_CAP_REVISION_2, CAP_SETUID permitted and effective */
	uint32_t cap[5] = {0x02000001, 1u << 7, 0, 0, 0};
	r = setxattr(t, "security.capability", cap, sizeof(cap), 0);
	bp(&d, "setxattr(security.capability = cap_setuid+ep): %s; ", r == 0 ? "OK" : en(errno));
	ok += r == 0;
	r = setxattr(t, "user.moat-probe", cfg.token, strlen(cfg.token), 0);
	bp(&d, "setxattr(user.moat-probe): %s; ", r == 0 ? "OK" : en(errno));
	ok += r == 0;
	emit("fs-metadata", "chmod u+s, set security.capability and a user xattr on a file outside the write grants",
	     ok ? "OK" : "REFUSED", ok ? ESCAPED : CONTAINED, d.s);
}

static void p_fs_symlink_plant(void)
{
	struct buf d = {{0}, 0};
	const char *rel[] = {"planted-ssh", "out/planted-dir/id_ed25519", "planted-grant/credentials",
			     "planted-netrc"};
	bool esc = false;
	int seen = 0;
	const char *res = "ENOENT";
	if (!cfg.project) {
		emit("fs-symlink-plant", "follow symlinks planted before launch", "NOTARGET", NA, "no project= given");
		return;
	}
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char p[PATH_MAX];
		path_join(p, sizeof(p), cfg.project, rel[i]);
		int r = read_marker(p);
		bp(&d, "project/%s: %s; ", rel[i], rm_result(r));
		if (r != -ENOENT)
			seen++;
		if (r == 1) {
			esc = true;
			res = "MARKER";
		} else if (!esc && i == 0) {
			res = rm_result(r);
		}
	}
	emit("fs-symlink-plant", "read through symlinks to secrets planted before launch in the project, its writable out/ dir and a granted path",
	     res, esc ? ESCAPED : CONTAINED, d.s);
}

static void p_fs_tmp(void)
{
	struct buf d = {{0}, 0};
	bool esc = false;
	char p[PATH_MAX];
	if (cfg.hosttmp) {
		int r = read_marker(cfg.hosttmp);
		bp(&d, "host tmp canary %s: %s; ", cfg.hosttmp, rm_result(r));
		esc |= r == 1;
	}
	snprintf(p, sizeof(p), "/tmp/moat-probe-%s-tmpwrite", cfg.token);
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	bp(&d, "write %s: %s (the runner looks for it on the host)", p, fd >= 0 ? "OK" : en(errno));
	if (fd >= 0) {
		if (write(fd, "x\n", 2) < 0) {
		}
		close(fd);
	}
	emit("fs-tmp", "read the host's /tmp canary; leave a file in /tmp for the runner to look for",
	     esc ? "MARKER" : "PRIVATE?", esc ? ESCAPED : CONTAINED, d.s);
}

static void p_dev_access(void)
{
	struct buf d = {{0}, 0};
	const char *devs[] = {"/dev/kvm", "/dev/mem", "/dev/kmem", "/dev/port", "/dev/vda", "/dev/sda", "/dev/nvme0n1",
			      "/dev/xvda", "/dev/loop0", "/dev/loop-control", "/dev/input/event0", "/dev/dri/card0",
			      "/dev/tty0", "/dev/console", "/dev/vhost-net", "/dev/uinput", "/dev/autofs",
			      "/dev/cpu/0/msr"};
	int opened = 0;
	const char *res = "REFUSED";
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		int fd = open(devs[i], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT)
				bp(&d, "%s: %s; ", devs[i], en(errno));
			continue;
		}
		opened++;
		res = devs[i];
		bp(&d, "%s: OPENED; ", devs[i]);
		close(fd);
	}
	/* Block devices under /dev whatever their names. */
	DIR *dd = opendir("/dev");
	int blocks = 0;
	if (dd) {
		struct dirent *e;
		for (int n = 0; (e = readdir(dd)) && n < 4096 && blocks < 8; n++) {
			char p[300];
			struct stat st;
			snprintf(p, sizeof(p), "/dev/%s", e->d_name);
			if (lstat(p, &st) != 0 || !S_ISBLK(st.st_mode))
				continue;
			blocks++;
			int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd >= 0) {
				close(fd);
				if (!strstr(d.s, p)) {
					opened++;
					res = "BLOCKDEV";
					bp(&d, "%s: OPENED; ", p);
				}
			}
		}
		closedir(dd);
	}
	char n[PATH_MAX];
	snprintf(n, sizeof(n), "%s/moat-probe-%s-node", tmpdir(), cfg.token);
	int r = mknod(n, S_IFCHR | 0600, makedev(1, 3));
	bp(&d, "mknod(c 1 3 in tmp): %s", r == 0 ? "OK" : en(errno));
	if (r == 0) {
		int fd = open(n, O_RDWR | O_CLOEXEC);
		bp(&d, ", opening it: %s", fd >= 0 ? "OK" : en(errno));
		if (fd >= 0) {
			opened++;
			res = "MKNOD";
			close(fd);
		}
		unlink(n);
	}
	/* The same with the host's first disk: a block node made in tmp opens
	 * the raw disk whatever /dev shows. */
	struct stat bst;
	const char *disks[] = {"/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda"};
	dev_t disk = 0;
	for (size_t i = 0; i < 4 && !disk; i++)
		if (stat(disks[i], &bst) == 0 && S_ISBLK(bst.st_mode))
			disk = bst.st_rdev;
	if (!disk)
		disk = makedev(254, 0);
	snprintf(n, sizeof(n), "%s/moat-probe-%s-blk", tmpdir(), cfg.token);
	r = mknod(n, S_IFBLK | 0600, disk);
	bp(&d, "; mknod(b %u %u in tmp): %s", major(disk), minor(disk), r == 0 ? "OK" : en(errno));
	if (r == 0) {
		int fd = open(n, O_RDONLY | O_CLOEXEC);
		bp(&d, ", opening it: %s%s", fd >= 0 ? "OK" : en(errno), fd >= 0 ? " (the raw disk, nothing read)" : "");
		if (fd >= 0) {
			opened++;
			res = "MKNOD-BLOCK";
			close(fd);
		}
		unlink(n);
	}
	emit("dev-access", "open /dev/kvm, /dev/mem, disks, consoles read-only; mknod a char and a block device in tmp and open them", res,
	     opened ? ESCAPED : CONTAINED, d.s);
}

/* ------------------------------------------------------------------ */
/* privilege                                                           */

static int run_capture(const char *path, char *const argv[], char *out, size_t len, int timeout_ms)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid_t pid = xfork();
	if (pid == 0) {
		dup2(p[1], 1);
		execv(path, argv);
		printf("exec %s\n", en(errno));
		fflush(stdout);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	long end = now_ms() + timeout_ms;
	for (;;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		long left = end - now_ms();
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		ssize_t r = read(p[0], out + n, len - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n >= len - 1)
			break;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	close(p[0]);
	if (pid < 0)
		return -1;
	return wait_bounded(pid, 1000);
}

static void p_setuid_gain(void)
{
	struct buf d = {{0}, 0};
	char nnp[32] = "?", out[256];
	bool esc = false;
	uid_t me = geteuid();
	status_field("NoNewPrivs", nnp, sizeof(nnp));
	long gnnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	bp(&d, "NoNewPrivs=%s (prctl %ld); euid=%d; ", nnp, gnnp, (int)me);
	if (gnnp != 1)
		esc = true;
	const char *targets[] = {cfg.suid_root, cfg.suid_other};
	for (int i = 0; i < 2; i++) {
		struct stat st;
		if (!targets[i])
			continue;
		if (stat(targets[i], &st) != 0) {
			bp(&d, "%s: %s; ", targets[i], en(errno));
			continue;
		}
		if (st.st_uid == me || !(st.st_mode & S_ISUID))
			continue;
		char *argv[] = {(char *)targets[i], "helper-suid", NULL};
		run_capture(targets[i], argv, out, sizeof(out), 3000);
		bp(&d, "exec %s (setuid uid %d): %s; ", targets[i], (int)st.st_uid, out);
		int euid = -1;
		if (sscanf(out, "euid=%d", &euid) == 1 && euid != (int)me)
			esc = true;
	}
	/* chmod u+s on an own copy in tmp: does the file system honour it? */
	char copy[PATH_MAX];
	struct statvfs sv;
	snprintf(copy, sizeof(copy), "%s/moat-probe-%s-suid", tmpdir(), cfg.token);
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), o = -1;
	if (in >= 0 && (o = open(copy, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0700)) >= 0) {
		char b[65536];
		ssize_t n;
		int rounds = 0;
		while ((n = read(in, b, sizeof(b))) > 0 && rounds++ < 1024)
			if (write(o, b, (size_t)n) != n)
				break;
		close(o);
		int r = chmod(copy, 04755);
		bp(&d, "chmod u+s own copy in tmp: %s, tmp nosuid=%s", r == 0 ? "OK" : en(errno),
		   statvfs(tmpdir(), &sv) == 0 ? (sv.f_flag & ST_NOSUID ? "yes" : "no") : "?");
		unlink(copy);
	} else {
		bp(&d, "copy to tmp: %s", en(errno));
	}
	if (in >= 0)
		close(in);
	emit("setuid-gain", "exec a setuid binary owned by another uid; NoNewPrivs; chmod u+s an own copy",
	     esc ? (gnnp != 1 ? "NNP=0" : "GAINED") : "NNP=1", esc ? ESCAPED : CONTAINED, d.s);
}

static void p_caps(void)
{
	struct buf d = {{0}, 0};
	char eff[32] = "?", prm[32] = "?", bnd[32] = "?", amb[32] = "?", inh[32] = "?";
	status_field("CapEff", eff, sizeof(eff));
	status_field("CapPrm", prm, sizeof(prm));
	status_field("CapInh", inh, sizeof(inh));
	status_field("CapBnd", bnd, sizeof(bnd));
	status_field("CapAmb", amb, sizeof(amb));
	unsigned long long e = strtoull(eff, NULL, 16), p = strtoull(prm, NULL, 16), a = strtoull(amb, NULL, 16);
	int host_user = ns_host(NS_USER);
	bp(&d, "CapEff=%s CapPrm=%s CapInh=%s CapBnd=%s CapAmb=%s; user ns is the host's: %s", eff, prm, inh, bnd,
	   amb, host_user == 1 ? "yes" : host_user == 0 ? "no (capabilities count only inside it)" : "unknown");
	bool esc = (e | p | a) != 0 && host_user != 0;
	emit("caps", "capability sets in /proc/self/status", eff, esc ? ESCAPED : CONTAINED, d.s);
}

static void p_keyring(void)
{
	struct buf d = {{0}, 0};
	bool esc = false;
	const char *res;
	char b[512];
	errno = 0;
	long r = syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_USER_KEYRING, b, sizeof(b));
	res = r >= 0 ? "OK" : en(errno);
	bp(&d, "keyctl(READ, @u): %s; ", r >= 0 ? "OK (keyring readable)" : en(errno));
	esc |= r >= 0;
	r = syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, b, sizeof(b));
	bp(&d, "keyctl(READ, @s): %s; ", r >= 0 ? "OK" : en(errno));
	esc |= r >= 0;
	if (cfg.key_desc) {
		const long rings[] = {KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_SESSION_KEYRING};
		for (int i = 0; i < 3; i++) {
			long id = syscall(SYS_keyctl, KEYCTL_SEARCH, rings[i], "user", cfg.key_desc, 0);
			if (id < 0)
				continue;
			long n = syscall(SYS_keyctl, KEYCTL_READ, id, b, sizeof(b) - 1);
			if (n > 0) {
				b[n < (long)sizeof(b) ? n : (long)sizeof(b) - 1] = '\0';
				if (strstr(b, MARKER_PREFIX)) {
					bp(&d, "the runner's key found and read: MARKER; ");
					esc = true;
					res = "MARKER";
					break;
				}
			}
		}
	}
	errno = 0;
	r = syscall(SYS_add_key, NULL, NULL, NULL, 0, 0);
	bp(&d, "add_key(NULL): %s; ", r >= 0 ? "OK" : en(errno));
	if (r >= 0 || errno == EFAULT)
		esc = true;
	errno = 0;
	r = syscall(SYS_request_key, NULL, NULL, NULL, 0);
	bp(&d, "request_key(NULL): %s (EFAULT means the call is reachable)", r >= 0 ? "OK" : en(errno));
	if (r >= 0 || errno == EFAULT)
		esc = true;
	emit("keyring", "keyctl(READ) of @u and @s, search for the runner's key, add_key(NULL), request_key(NULL)", res,
	     esc ? ESCAPED : CONTAINED, d.s);
}

static void p_iouring(void)
{
	struct buf d = {{0}, 0};
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	long fd = syscall(SYS_io_uring_setup, 1, &p);
	int e = fd >= 0 ? 0 : errno;
	if (fd >= 0)
		close((int)fd);
	errno = 0;
	long r2 = syscall(SYS_io_uring_setup, 1, NULL);
	bp(&d, "io_uring_setup(1, &p): %s; io_uring_setup(1, NULL): %s", fd >= 0 ? "OK (ring created)" : en(e),
	   r2 >= 0 ? "OK" : en(errno));
	emit("iouring", "io_uring_setup", fd >= 0 ? "OK" : en(e), fd >= 0 ? ESCAPED : CONTAINED, d.s);
}

static void p_userfaultfd(void)
{
	struct buf d = {{0}, 0};
	int got = 0;
	const char *res = "EPERM";
	static char r0[32];
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	snprintf(r0, sizeof(r0), "%s", fd >= 0 ? "OK" : en(errno));
	res = r0;
	bp(&d, "userfaultfd(USER_MODE_ONLY): %s; ", r0);
	if (fd >= 0) {
		got++;
		close((int)fd);
	}
	fd = syscall(SYS_userfaultfd, O_CLOEXEC);
	bp(&d, "userfaultfd(0): %s; ", fd >= 0 ? "OK" : en(errno));
	if (fd >= 0) {
		got++;
		close((int)fd);
	}
	int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev >= 0) {
		int u = ioctl(dev, USERFAULTFD_IOC_NEW_, O_CLOEXEC);
		bp(&d, "/dev/userfaultfd: open OK, USERFAULTFD_IOC_NEW: %s", u >= 0 ? "OK" : en(errno));
		if (u >= 0) {
			got++;
			close(u);
		}
		close(dev);
	} else {
		bp(&d, "/dev/userfaultfd: %s", en(errno));
	}
	emit("userfaultfd", "userfaultfd() with and without USER_MODE_ONLY, /dev/userfaultfd + USERFAULTFD_IOC_NEW",
	     got ? "OK" : res, got ? ESCAPED : CONTAINED, d.s);
}

static void p_perf(void)
{
	struct buf d = {{0}, 0};
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	int e = fd >= 0 ? 0 : errno;
	if (fd >= 0)
		close((int)fd);
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int par = -99;
	if (f) {
		if (fscanf(f, "%d", &par) != 1)
			par = -99;
		fclose(f);
	}
	bp(&d, "perf_event_open(sw cpu-clock, self, user only): %s; perf_event_paranoid=%d", fd >= 0 ? "OK" : en(e), par);
	emit("perf", "perf_event_open on itself (software counter, user space only)", fd >= 0 ? "OK" : en(e),
	     fd >= 0 ? ESCAPED : CONTAINED, d.s);
}

static void p_bpf(void)
{
	struct buf d = {{0}, 0};
	union bpf_attr a;
	int got = 0;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	int e1 = fd >= 0 ? 0 : errno;
	bp(&d, "BPF_MAP_CREATE: %s; ", fd >= 0 ? "OK" : en(e1));
	if (fd >= 0) {
		got++;
		close((int)fd);
	}
	struct bpf_insn insns[2] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insn_cnt = 2;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.license = (uint64_t)(uintptr_t) "GPL";
	fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	bp(&d, "BPF_PROG_LOAD(socket filter): %s", fd >= 0 ? "OK" : en(errno));
	if (fd >= 0) {
		got++;
		close((int)fd);
	}
	emit("bpf", "bpf(BPF_MAP_CREATE), bpf(BPF_PROG_LOAD)", got ? "OK" : en(e1), got ? ESCAPED : CONTAINED, d.s);
}

static int child_personality(void *arg, struct buf *out)
{
	(void)arg;
	int r = personality(READ_IMPLIES_EXEC);
	if (r != -1) {
		bp(out, "OK");
		return 1;
	}
	bp(out, "%s", en(errno));
	return 0;
}

static int child_iopl(void *arg, struct buf *out)
{
	(void)arg;
	int hit = 0;
	if (syscall(SYS_iopl, 3) == 0) {
		bp(out, "iopl(3) OK");
		hit = 1;
	} else {
		bp(out, "iopl(3) %s", en(errno));
	}
	if (syscall(SYS_ioperm, 0x80, 1, 1) == 0) {
		bp(out, ", ioperm OK");
		hit = 1;
	} else {
		bp(out, ", ioperm %s", en(errno));
	}
	return hit;
}

static void p_misc_syscalls(void)
{
	struct buf d = {{0}, 0}, c;
	int reached = 0;
	long r;
	int e;
#define MISC(label, call, reached_cond)                                                                                \
	do {                                                                                                           \
		errno = 0;                                                                                             \
		r = (call);                                                                                            \
		e = r >= 0 ? 0 : errno;                                                                                \
		bool hit_ = (reached_cond);                                                                            \
		reached += hit_;                                                                                       \
		bp(&d, "%s: %s%s; ", label, r >= 0 ? "OK" : en(e), hit_ ? " (reached)" : "");                          \
	} while (0)
	MISC("init_module", syscall(SYS_init_module, NULL, 0, ""), e != EPERM && e != ENOSYS && e != EACCES);
	MISC("finit_module(-1)", syscall(SYS_finit_module, -1, "", 0), e == EBADF || r >= 0);
	MISC("delete_module", syscall(SYS_delete_module, "moat_probe_none", O_NONBLOCK), e == ENOENT || r >= 0);
	MISC("kexec_load(bad flags)", syscall(SYS_kexec_load, 0, 0, NULL, 0x100UL), e == EINVAL || r >= 0);
	MISC("kexec_file_load(-1)", syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0UL), e == EBADF || e == EINVAL || r >= 0);
	MISC("open_by_handle_at(NULL)", syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, O_RDONLY), e == EFAULT || r >= 0);
	{
		struct {
			struct file_handle fh;
			unsigned char pad[8];
		} h;
		int mnt;
		h.fh.handle_bytes = 0;
		MISC("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD, "/", &h.fh, &mnt, 0),
		     e == EOVERFLOW || r >= 0);
	}
	MISC("kcmp(self, self, VM)", syscall(SYS_kcmp, getpid(), getpid(), 1 /* KCMP_VM */, 0, 0), r >= 0);
	MISC("acct(bad ptr)", syscall(SYS_acct, (void *)1), e == EFAULT || r >= 0);
	MISC("swapon(NULL)", syscall(SYS_swapon, NULL, 0), e == EFAULT || e == EINVAL || r >= 0);
	MISC("reboot(bad magic)", syscall(SYS_reboot, 0, 0, 0, NULL), e == EINVAL || r >= 0);
	MISC("syslog(SIZE_BUFFER)", syscall(SYS_syslog, 10, NULL, 0), r >= 0);
	MISC("settimeofday(NULL, NULL)", syscall(SYS_settimeofday, NULL, NULL), r >= 0);
	MISC("clock_settime(NULL)", syscall(SYS_clock_settime, CLOCK_REALTIME, NULL), false);
	MISC("fanotify_init", syscall(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY), r >= 0);
	if (r >= 0)
		close((int)r);
	MISC("quotactl(bad)", syscall(SYS_quotactl, 0, NULL, 0, NULL), false);
#undef MISC
	int st = in_child(child_personality, NULL, &c, 2000);
	bp(&d, "personality(READ_IMPLIES_EXEC): %s%s; ", c.s, child_ok(st) ? " (reached)" : "");
	reached += child_ok(st);
	st = in_child(child_iopl, NULL, &c, 2000);
	bp(&d, "%s%s", c.s, child_ok(st) ? " (reached)" : "");
	reached += child_ok(st);
	bp(&d, "; bad arguments: 'reached' means the call passed the filter and the privilege check, and changed nothing");
	emit("misc-syscalls", "module load/unload, kexec, open_by_handle_at, name_to_handle_at, kcmp, acct, swapon, reboot, syslog, settimeofday, fanotify, personality, iopl/ioperm",
	     reached ? "REACHED" : "REFUSED", reached ? ESCAPED : CONTAINED, d.s);
}

/* foreign ABIs: in a child, so that a SIGSYS kill is what we observe */
static int child_x32(void *arg, struct buf *out)
{
	(void)arg;
	errno = 0;
	long r = syscall(X32_BIT | NR_IO_URING_SETUP, 1, NULL);
	int e = r >= 0 ? 0 : errno;
	bp(out, "x32 io_uring_setup(1, NULL): %s", r >= 0 ? "OK" : en(e));
	if (e == EFAULT || r >= 0)
		return 1;
	return e == ENOSYS ? 2 : 0;
}

static int child_int80(void *arg, struct buf *out)
{
	long ret;
	int which = *(int *)arg;
	if (which == 0) {
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"((long)NR_IO_URING_SETUP), "b"(1L), "c"(0L) : "memory");
		bp(out, "int $0x80 io_uring_setup(1, NULL): %s", ret >= 0 ? "OK" : en((int)-ret));
		if (ret == -EFAULT || ret >= 0)
			return 1;
	} else {
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"((long)NR_I386_UNSHARE), "b"((long)CLONE_NEWUSER) : "memory");
		bp(out, "int $0x80 unshare(CLONE_NEWUSER): %s", ret >= 0 ? "OK" : en((int)-ret));
		if (ret >= 0)
			return 1;
	}
	return ret == -ENOSYS ? 2 : 0;
}

static const char *wdesc(int st, char *b, size_t len)
{
	if (st < 0)
		snprintf(b, len, "wait failed");
	else if (WIFSIGNALED(st))
		snprintf(b, len, "killed by %s", sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	else
		snprintf(b, len, "exit %d", WEXITSTATUS(st));
	return b;
}

static void p_foreign_abi(void)
{
	struct buf d = {{0}, 0}, c;
	char w[64];
	bool esc = false;
	int killed = 0;
	int st = in_child(child_x32, NULL, &c, 2000);
	bool no_x32 = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2;
	bp(&d, "x32: %s [%s]; ", c.s[0] ? c.s : "-", wdesc(st, w, sizeof(w)));
	if (child_ok(st))
		esc = true;
	if (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		killed++;
	for (int which = 0; which < 2; which++) {
		st = in_child(child_int80, &which, &c, 2000);
		bp(&d, "i386: %s [%s]; ", c.s[0] ? c.s : "-", wdesc(st, w, sizeof(w)));
		if (child_ok(st))
			esc = true;
		if (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
			killed++;
	}
	if (no_x32)
		bp(&d, "(x32 ENOSYS: this kernel has no x32 ABI)");
	emit("foreign-abi", "a filtered syscall through x32 numbering and through int $0x80 (each in a child)",
	     esc ? "REACHED" : killed ? "SIGSYS" : "REFUSED", esc ? ESCAPED : CONTAINED, d.s);
}

static void p_filter_persists(void)
{
	struct buf d = {{0}, 0};
	char out[256] = "";
	const char *exe = cfg.other_exe ? cfg.other_exe : "/proc/self/exe";
	long mine = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	long nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	char *argv[] = {(char *)exe, "helper-status", NULL};
	int st = run_capture(exe, argv, out, sizeof(out), 3000);
	int sc = -1, nn = -1;
	char clr[32] = "?";
	sscanf(out, "seccomp=%d nnp=%d clear=%31s", &sc, &nn, clr);
	char w[64];
	bp(&d, "before: seccomp=%ld nnp=%ld; after execve(%s): %s [%s]", mine, nnp, exe, out, wdesc(st, w, sizeof(w)));
	bool esc = sc != 2 || nn != 1 || strcmp(clr, "OK") == 0;
	emit("filter-persists", "after execve of another binary: seccomp mode 2 and no_new_privs that cannot be cleared",
	     out[0] ? out : "NOOUTPUT", esc ? ESCAPED : CONTAINED, d.s);
}

static void p_shm_ipc(void)
{
	struct buf d = {{0}, 0};
	bool esc = false;
	if (cfg.shm_name) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "/dev/shm/%s", cfg.shm_name);
		int r = read_marker(p);
		bp(&d, "%s: %s; ", p, rm_result(r));
		esc |= r == 1;
	}
	if (cfg.sysv_key) {
		int id = shmget((key_t)cfg.sysv_key, 0, 0);
		bp(&d, "shmget(key %#lx): %s", cfg.sysv_key, id >= 0 ? "FOUND" : en(errno));
		if (id >= 0) {
			esc = true;
			void *m = shmat(id, NULL, SHM_RDONLY);
			if (m != (void *)-1) {
				bp(&d, ", shmat: %s", strncmp(m, MARKER_PREFIX, strlen(MARKER_PREFIX)) == 0 ? "MARKER" : "READ");
				shmdt(m);
			} else {
				bp(&d, ", shmat: %s", en(errno));
			}
		}
		bp(&d, "; ");
	}
	if (cfg.msgq_key) {
		int id = msgget((key_t)cfg.msgq_key, 0);
		bp(&d, "msgget(key %#lx): %s; ", cfg.msgq_key, id >= 0 ? "FOUND" : en(errno));
		esc |= id >= 0;
	}
	if (cfg.mq_name) {
		long fd = syscall(SYS_mq_open, cfg.mq_name[0] == '/' ? cfg.mq_name + 1 : cfg.mq_name,
				  O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0, NULL);
		bp(&d, "mq_open(%s): %s; ", cfg.mq_name, fd >= 0 ? "FOUND" : en(errno));
		if (fd >= 0) {
			esc = true;
			close((int)fd);
		}
	}
	DIR *dd = opendir("/dev/shm");
	int others = 0;
	if (dd) {
		struct dirent *e;
		for (int n = 0; (e = readdir(dd)) && n < 4096; n++)
			if (e->d_name[0] != '.')
				others++;
		closedir(dd);
	}
	bp(&d, "/dev/shm holds %d entries", others);
	emit("shm-ipc", "find the runner's /dev/shm file, SysV shared memory segment and message queue, POSIX queue",
	     esc ? "FOUND" : "NOTFOUND", esc ? ESCAPED : CONTAINED, d.s);
}

static int child_crash(void *arg, struct buf *out)
{
	const char *dir = arg;
	struct rlimit rl;
	if (chdir(dir) != 0) {
		bp(out, "chdir %s", en(errno));
	}
	getrlimit(RLIMIT_CORE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_CORE, &rl);
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
	return 0;
}

static void p_core_dump(void)
{
	struct buf d = {{0}, 0}, c;
	struct rlimit rl;
	char dir[PATH_MAX], pat[256] = "?";
	bool esc = false;
	getrlimit(RLIMIT_CORE, &rl);
	bp(&d, "RLIMIT_CORE cur=%lld max=%lld; ", rl.rlim_cur == RLIM_INFINITY ? -1LL : (long long)rl.rlim_cur,
	   rl.rlim_max == RLIM_INFINITY ? -1LL : (long long)rl.rlim_max);
	FILE *f = fopen("/proc/sys/kernel/core_pattern", "re");
	if (f) {
		if (fgets(pat, sizeof(pat), f))
			pat[strcspn(pat, "\n")] = '\0';
		fclose(f);
	}
	snprintf(dir, sizeof(dir), "%s/moat-probe-%s-core", tmpdir(), cfg.token);
	mkdir(dir, 0700);
	int st = in_child(child_crash, dir, &c, 5000);
	bool dumped = st >= 0 && WIFSIGNALED(st) && WCOREDUMP(st);
	int files = 0;
	DIR *dd = opendir(dir);
	if (dd) {
		struct dirent *e;
		for (int n = 0; (e = readdir(dd)) && n < 64; n++) {
			if (e->d_name[0] == '.')
				continue;
			char p[PATH_MAX + 300];
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			files++;
			unlink(p);
		}
		closedir(dd);
	}
	rmdir(dir);
	esc = dumped || files > 0;
	bp(&d, "child raised its soft limit to the hard one and crashed: %s, %d core file(s); core_pattern=%s", dumped ? "core dumped" : "no core", files, pat);
	emit("core-dump", "RLIMIT_CORE; raise it to the hard limit and crash a child", dumped ? "DUMPED" : "NOCORE",
	     esc ? ESCAPED : CONTAINED, d.s);
}

static void p_proc_sys(void)
{
	struct buf d = {{0}, 0};
	const char *files[] = {"/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches", "/proc/sys/kernel/core_pattern",
			       "/proc/sys/kernel/modprobe", "/proc/sysrq-trigger", "/proc/sys/net/ipv4/ip_forward"};
	int opened = 0;
	const char *res = "REFUSED";
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int fd = open(files[i], O_WRONLY | O_CLOEXEC);
		bp(&d, "%s: %s; ", files[i], fd >= 0 ? "OPEN FOR WRITE" : en(errno));
		if (fd >= 0) {
			opened++;
			res = files[i];
			close(fd);
		}
	}
	bp(&d, "(opened only; nothing written)");
	emit("proc-sys", "open /proc/sys/* and /proc/sysrq-trigger for writing (nothing written)", res,
	     opened ? ESCAPED : CONTAINED, d.s);
}

static bool name_allowed(const char *name, size_t len)
{
	char list[1024], *save = NULL, *tok;
	if (!cfg.env_allow)
		return true;
	snprintf(list, sizeof(list), "%s", cfg.env_allow);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t tl = strlen(tok);
		if (tl && tok[tl - 1] == '*') {
			if (len >= tl - 1 && strncmp(name, tok, tl - 1) == 0)
				return true;
		} else if (tl == len && strncmp(name, tok, len) == 0) {
			return true;
		}
	}
	return false;
}

extern char **environ;

static void p_env_leak(void)
{
	struct buf d = {{0}, 0};
	const char *danger[] = {"SSH_AUTH_SOCK", "LD_PRELOAD", "LD_LIBRARY_PATH", "GITHUB_TOKEN",
				"AWS_SECRET_ACCESS_KEY", "MOAT_CONFORMANCE_SECRET"};
	int bad = 0, extra = 0, n = 0;
	bp(&d, "names:");
	for (char **e = environ; e && *e && n < 512; e++, n++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
		bool dangerous = eq && strstr(eq, MARKER_PREFIX);
		for (size_t i = 0; i < sizeof(danger) / sizeof(danger[0]); i++)
			dangerous |= strlen(danger[i]) == len && strncmp(*e, danger[i], len) == 0;
		bool allowed = name_allowed(*e, len);
		bp(&d, " %.*s%s", (int)len, *e, dangerous ? "(!)" : allowed ? "" : "(undeclared)");
		bad += dangerous;
		extra += !allowed;
	}
	bp(&d, "; declared: %s", cfg.env_allow ? cfg.env_allow : "(not given)");
	emit("env-leak", "dump the environment against the declared set; look for SSH_AUTH_SOCK, LD_PRELOAD, tokens",
	     bad ? "SECRET" : extra ? "UNDECLARED" : "EXACT", (bad || extra) ? ESCAPED : CONTAINED, d.s);
}

static void p_fork_bomb(void)
{
	struct buf d = {{0}, 0};
	long bound = cfg.pids_limit * 4;
	if (bound < 128)
		bound = 128;
	if (bound > 1024)
		bound = 1024;
	pid_t *kids = calloc((size_t)bound, sizeof(pid_t));
	int p[2], n = 0, err = 0;
	if (!kids || pipe2(p, O_CLOEXEC) != 0) {
		emit("fork-bomb", "fork until failure", "ENOMEM", NA, "setup failed");
		free(kids);
		return;
	}
	long t0 = now_ms();
	fflush(stdout);
	while (n < bound) {
		pid_t k = fork();
		if (k < 0) {
			err = errno;
			break;
		}
		if (k == 0) {
			char b;
			close(p[1]);
			alarm(10);
			if (read(p[0], &b, 1) < 0) {
			}
			_exit(0);
		}
		kids[n++] = k;
	}
	close(p[1]);
	close(p[0]);
	for (int i = 0; i < n; i++)
		wait_bounded(kids[i], 2000);
	free(kids);
	bp(&d, "%d forks in %ld ms, then %s; bound %ld (4x the declared %ld-process limit)", n, now_ms() - t0,
	   n >= bound ? "the bound was reached" : en(err), bound, cfg.pids_limit);
	emit("fork-bomb", "fork until failure (bounded)", n >= bound ? "BOUND" : en(err), n >= bound ? ESCAPED : CONTAINED,
	     d.s);
}

static int child_membomb(void *arg, struct buf *out)
{
	long long bound = *(long long *)arg, got = 0;
	const size_t chunk = 16u << 20;
	(void)out;
	while (got < bound) {
		void *m = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			dprintf(3, "%lld %s\n", got >> 20, en(errno));
			return 0;
		}
		memset(m, 0x5a, chunk);
		got += (long long)chunk;
		dprintf(3, "%lld OK\n", got >> 20);
	}
	return 1;
}

static void p_memory_bomb(void)
{
	struct buf d = {{0}, 0};
	long long bound = cfg.mem_limit * 4;
	if (bound > (3LL << 30))
		bound = 3LL << 30;
	if (bound < (256LL << 20))
		bound = 256LL << 20;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		emit("memory-bomb", "allocate past the limit", en(errno), NA, "pipe");
		return;
	}
	pid_t pid = xfork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 3);
		struct buf b;
		_exit(child_membomb(&bound, &b));
	}
	close(p[1]);
	char last[128] = "0 none", b[4096];
	size_t keep = 0;
	long end = now_ms() + 20000;
	for (;;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		long left = end - now_ms();
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		ssize_t n = read(p[0], b + keep, sizeof(b) - 1 - keep);
		if (n <= 0)
			break;
		keep += (size_t)n;
		b[keep] = '\0';
		char *nl = strrchr(b, '\n');
		if (nl) {
			*nl = '\0';
			char *prev = strrchr(b, '\n');
			snprintf(last, sizeof(last), "%s", prev ? prev + 1 : b);
			keep = 0;
		}
	}
	close(p[0]);
	int st = wait_bounded(pid, 3000);
	char w[64];
	bool reached = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1;
	long long mib = 0;
	char how[64] = "";
	sscanf(last, "%lld %63s", &mib, how);
	bp(&d, "child touched %lld MiB, then %s [%s]; bound %lld MiB (4x the declared %lld MiB)", mib,
	   strcmp(how, "OK") == 0 ? (reached ? "reached the bound" : "stopped") : how, wdesc(st, w, sizeof(w)),
	   bound >> 20, cfg.mem_limit >> 20);
	emit("memory-bomb", "allocate and touch memory past the limit (bounded, in a child)", reached ? "BOUND" : "LIMITED",
	     reached ? ESCAPED : CONTAINED, d.s);
}

/* ------------------------------------------------------------------ */
/* subcommands for the runner                                          */

static int helper_suid(void)
{
	char eff[32] = "?";
	status_field("CapEff", eff, sizeof(eff));
	printf("euid=%d ruid=%d capeff=%s\n", (int)geteuid(), (int)getuid(), eff);
	return 0;
}

static int helper_status(void)
{
	long sc = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	long nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	int r = prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0);
	printf("seccomp=%ld nnp=%ld clear=%s\n", sc, nnp, r == 0 ? "OK" : en(errno));
	return 0;
}

static int helper_ipc(int argc, char **argv)
{
	const char *op = argc > 2 ? argv[2] : "";
	const char *marker = "MOAT-MARKER-ipc";
	for (int i = 3; i < argc; i++)
		if (strncmp(argv[i], "marker=", 7) == 0)
			marker = argv[i] + 7;
	parse_args(argc - 2, argv + 2);
	if (strcmp(op, "create") == 0) {
		if (cfg.shm_name) {
			char p[PATH_MAX];
			snprintf(p, sizeof(p), "/dev/shm/%s", cfg.shm_name);
			int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
			if (fd >= 0) {
				if (write(fd, marker, strlen(marker)) < 0) {
				}
				close(fd);
			}
		}
		if (cfg.sysv_key) {
			int id = shmget((key_t)cfg.sysv_key, 4096, IPC_CREAT | 0600);
			if (id >= 0) {
				void *m = shmat(id, NULL, 0);
				if (m != (void *)-1) {
					snprintf(m, 4096, "%s", marker);
					shmdt(m);
				}
			}
		}
		if (cfg.msgq_key)
			msgget((key_t)cfg.msgq_key, IPC_CREAT | 0600);
		if (cfg.mq_name) {
			long fd = syscall(SYS_mq_open, cfg.mq_name[0] == '/' ? cfg.mq_name + 1 : cfg.mq_name,
					  O_CREAT | O_RDWR | O_CLOEXEC, 0600, NULL);
			if (fd >= 0) {
				syscall(SYS_mq_timedsend, (int)fd, marker, strlen(marker), 0, NULL);
				close((int)fd);
			}
		}
		return 0;
	}
	if (strcmp(op, "remove") == 0) {
		if (cfg.shm_name) {
			char p[PATH_MAX];
			snprintf(p, sizeof(p), "/dev/shm/%s", cfg.shm_name);
			unlink(p);
		}
		if (cfg.sysv_key) {
			int id = shmget((key_t)cfg.sysv_key, 0, 0);
			if (id >= 0)
				shmctl(id, IPC_RMID, NULL);
		}
		if (cfg.msgq_key) {
			int id = msgget((key_t)cfg.msgq_key, 0);
			if (id >= 0)
				msgctl(id, IPC_RMID, NULL);
		}
		if (cfg.mq_name)
			syscall(SYS_mq_unlink, cfg.mq_name[0] == '/' ? cfg.mq_name + 1 : cfg.mq_name);
		return 0;
	}
	return 2;
}

static int helper_key(int argc, char **argv)
{
	const char *op = argc > 2 ? argv[2] : "", *marker = "MOAT-MARKER-key";
	for (int i = 3; i < argc; i++)
		if (strncmp(argv[i], "marker=", 7) == 0)
			marker = argv[i] + 7;
	parse_args(argc - 2, argv + 2);
	if (!cfg.key_desc)
		return 2;
	if (strcmp(op, "add") == 0) {
		long id = syscall(SYS_add_key, "user", cfg.key_desc, marker, strlen(marker), KEY_SPEC_USER_KEYRING);
		printf("%ld\n", id);
		return id >= 0 ? 0 : 1;
	}
	if (strcmp(op, "remove") == 0) {
		for (int i = 0; i < 4; i++) {
			long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", cfg.key_desc, 0);
			if (id < 0)
				break;
			syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_USER_KEYRING);
			syscall(SYS_keyctl, KEYCTL_REVOKE, id);
		}
		return 0;
	}
	return 2;
}

/* The orphan probe: a double-forked daemon that writes a heartbeat to
 * stdout every 100 ms for at most 20 s; the runner SIGKILLs the launcher and
 * watches whether the heartbeat stops. */
static int daemon_cmd(void)
{
	pid_t a = fork();
	if (a == 0) {
		setsid();
		pid_t b = fork();
		if (b == 0) {
			for (int i = 0; i < 200; i++) {
				if (write(1, "hb\n", 3) < 0)
					_exit(0);
				usleep(100000);
			}
			_exit(0);
		}
		_exit(0);
	}
	waitpid(a, NULL, 0);
	if (write(1, "daemonized\n", 11) < 0) {
	}
	for (int i = 0; i < 200; i++)
		usleep(100000);
	return 0;
}

/* ------------------------------------------------------------------ */

struct probe {
	const char *id;
	void (*fn)(void);
};

static const struct probe probes[] = {
	{"tty-sti", p_tty_sti},
	{"tty-sti-hibit", p_tty_sti_hibit},
	{"tty-linux", p_tty_linux},
	{"tty-session", p_tty_session},
	{"fd-leak", p_fd_leak},
	{"fd-dir-escape", p_fd_dir_escape},
	{"cwd-escape", p_cwd_escape},
	{"exe-overwrite", p_exe_overwrite},
	{"ptrace-parent", p_ptrace_parent},
	{"ptrace-self-child", p_ptrace_self_child},
	{"signal-out", p_signal_out},
	{"proc-peek", p_proc_peek},
	{"unix-abstract", p_unix_abstract},
	{"unix-abstract-dgram", p_unix_abstract_dgram},
	{"unix-path", p_unix_path},
	{"unix-path-dgram", p_unix_path_dgram},
	{"unix-path-home", p_unix_path_home},
	{"net-tcp", p_net_tcp},
	{"net-udp", p_net_udp},
	{"net-dns", p_net_dns},
	{"net-netlink", p_net_netlink},
	{"net-exotic", p_net_exotic},
	{"net-iouring", p_net_iouring},
	{"ns-user", p_ns_user},
	{"ns-other", p_ns_other},
	{"mount-family", p_mount_family},
	{"fs-secrets", p_fs_secrets},
	{"fs-read-outside", p_fs_read_outside},
	{"fs-write-outside", p_fs_write_outside},
	{"fs-refer", p_fs_refer},
	{"fs-truncate", p_fs_truncate},
	{"fs-metadata", p_fs_metadata},
	{"fs-symlink-plant", p_fs_symlink_plant},
	{"fs-tmp", p_fs_tmp},
	{"dev-access", p_dev_access},
	{"setuid-gain", p_setuid_gain},
	{"caps", p_caps},
	{"keyring", p_keyring},
	{"iouring", p_iouring},
	{"userfaultfd", p_userfaultfd},
	{"perf", p_perf},
	{"bpf", p_bpf},
	{"misc-syscalls", p_misc_syscalls},
	{"foreign-abi", p_foreign_abi},
	{"filter-persists", p_filter_persists},
	{"shm-ipc", p_shm_ipc},
	{"core-dump", p_core_dump},
	{"proc-sys", p_proc_sys},
	{"env-leak", p_env_leak},
	{"fork-bomb", p_fork_bomb},
	{"memory-bomb", p_memory_bomb},
};

/* The bombs run only when named in only=, in a run of their own. */
static bool selected(const char *id)
{
	char list[2048], *save = NULL, *tok;
	if (!cfg.only)
		return strcmp(id, "fork-bomb") != 0 && strcmp(id, "memory-bomb") != 0;
	snprintf(list, sizeof(list), "%s", cfg.only);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, id) == 0)
			return true;
	return false;
}

static sigjmp_buf watchdog;

static void on_alarm(int sig)
{
	(void)sig;
	siglongjmp(watchdog, 1);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "helper-suid") == 0)
		return helper_suid();
	if (argc > 1 && strcmp(argv[1], "helper-status") == 0)
		return helper_status();
	if (argc > 1 && strcmp(argv[1], "helper-ipc") == 0)
		return helper_ipc(argc, argv);
	if (argc > 1 && strcmp(argv[1], "helper-key") == 0)
		return helper_key(argc, argv);
	if (argc > 1 && strcmp(argv[1], "daemon") == 0)
		return daemon_cmd();
	if (argc > 1 && strcmp(argv[1], "say-ran") == 0) {
		puts("RAN");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
			puts(probes[i].id);
		return 0;
	}
	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		if (!selected(probes[i].id))
			continue;
		current_id = probes[i].id;
		if (sigsetjmp(watchdog, 1) == 0) {
			alarm(strcmp(current_id, "memory-bomb") == 0 ? 30 : 15);
			probes[i].fn();
		} else {
			emit(current_id, "(watchdog)", "TIMEOUT", NA, "the probe did not finish in time");
		}
		alarm(0);
	}
	return 0;
}
