/* The seccomp filter, tested on the real kernel: for each row a child sets
 * no_new_privs, loads the compiled filter and makes one system call with
 * harmless arguments (NULL pointers, fd -1, invalid flags), so that an
 * allowed call fails with EFAULT/EBADF/EINVAL and has no effect, while a
 * filtered one returns the filter's errno.  The child reports through a pipe;
 * a filter kill shows as SIGSYS in its wait status.
 *
 * Every refused row is also run WITHOUT the filter (the control): it must
 * not give the refused answer, which proves the row can fail.  Where the
 * host itself gives that answer (an unprivileged user gets EPERM from mount
 * anyway; a kernel without AF_KEY says EAFNOSUPPORT) the control cannot
 * prove anything and says so with a TAP SKIP.  Allowed rows must give the
 * same outcome with and without the filter.
 *
 * All calls go through syscall(2) or inline asm, not libc wrappers: the
 * sanitizer runtimes intercept some wrappers (ioctl reads its argument) and
 * glibc rewrites others (fork is clone, clone3 is tried first). */
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/seccomp.h"

extern char **environ;

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#define X32_BIT 0x40000000L
#define HI32	0xdeadbeef00000000UL

/* Raw numbers, so that the table does not depend on the libc headers'
 * age (Debian 12's are 6.1). */
enum {
	NR_open_tree_attr = 467,
	NR_i386_getpid = 20,
	NR_i386_unshare = 310,
	NR_x32_getpid = 39, /* shared with x86_64 */
	NR_x32_unshare = 272,
};

enum filter_kind {
	F_NONE,	    /* net = none */
	F_LOOPBACK, /* net = loopback */
	F_PTRACE,   /* net = none, allow_ptrace */
	F_UNIX,     /* net = none, allow_unix (--unix-sockets) */
	F__COUNT,
};

enum action {
	A_RAW,	   /* syscall(nr, a...) */
	A_CLONE,   /* raw clone: a created child _exits at once */
	A_INT80,   /* i386 ABI through int $0x80 from 64-bit code */
	A_VHANGUP, /* setsid() first, so there is no terminal to hang up */
	A_FORK,	   /* glibc fork() */
	A_THREAD,  /* pthread_create (glibc tries clone3 first) */
	A_SPAWN,   /* posix_spawn /bin/true */
	A_CORE_SET, /* RLIMIT_CORE to a[0] (glibc's setrlimit, which is
		     * prlimit64; a[1]: the setrlimit system call), read back */
};

enum expect {
	E_ERRNO,  /* filtered: -1 with errno `err`; control: anything else */
	E_KILLED, /* filtered: killed by SIGSYS; control: not */
	E_SAME,	  /* allowed: the filter changes nothing (success, or the same errno) */
};

struct row {
	const char *what;
	enum filter_kind filter;
	enum action act;
	long nr;
	unsigned long a[6];
	enum expect exp;
	int err;
};

struct outcome {
	bool reported; /* the child wrote a result */
	bool killed;
	int sig;
	int load_rc;   /* moat_seccomp_load's answer */
	int setup_err; /* errno of the user namespace set-up, for RUN_USERNS */
	long ret;
	int err;
};

static long int80(long nr, unsigned long a0, unsigned long a1, unsigned long a2)
{
	long ret;

	/* The 64-bit kernel zeroes r8-r11 on the way back from int $0x80. */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a0), "c"(a1), "d"(a2)
			 : "r8", "r9", "r10", "r11", "memory", "cc");
	return ret;
}

static void *thread_fn(void *arg)
{
	return arg;
}

static void perform(const struct row *r, struct outcome *o)
{
	const unsigned long *a = r->a;
	int st;

	errno = 0;
	switch (r->act) {
	case A_RAW:
		o->ret = syscall(r->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		o->err = errno;
		return;
	case A_CLONE:
		o->ret = syscall(SYS_clone, a[0], 0UL, 0UL, 0UL, 0UL);
		o->err = errno;
		if (o->ret == 0)
			syscall(SYS_exit, 0);
		if (o->ret > 0)
			waitpid((pid_t)o->ret, NULL, __WALL);
		return;
	case A_INT80:
		/* A kernel that traps int $0x80 (no 32-bit entry) kills the
		 * child with SIGSEGV; the sanitizer build's own SIGSEGV
		 * handler would turn that into an exit, hiding which it was. */
		signal(SIGSEGV, SIG_DFL);
		o->ret = int80(r->nr, a[0], a[1], a[2]);
		if (o->ret < 0 && o->ret > -4096) {
			o->err = (int)-o->ret;
			o->ret = -1;
		}
		return;
	case A_VHANGUP:
		setsid();
		o->ret = syscall(SYS_vhangup);
		o->err = errno;
		return;
	case A_FORK: {
		pid_t pid = fork();
		if (pid == 0)
			_exit(7);
		o->err = errno;
		o->ret = pid < 0 ? -1 : (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7) ? 0 : -1;
		return;
	}
	case A_THREAD: {
		pthread_t t;
		int rc = pthread_create(&t, NULL, thread_fn, NULL);
		if (rc == 0)
			pthread_join(t, NULL);
		o->ret = rc == 0 ? 0 : -1;
		o->err = rc;
		return;
	}
	case A_CORE_SET: {
		struct rlimit want = {(rlim_t)a[0], (rlim_t)a[0]}, now;

		o->ret = a[1] ? syscall(SYS_setrlimit, RLIMIT_CORE, &want) : setrlimit(RLIMIT_CORE, &want);
		o->err = errno;
		/* "Succeeded" and changed nothing: the filter's answer. */
		if (o->ret == 0 && getrlimit(RLIMIT_CORE, &now) == 0 && now.rlim_cur != want.rlim_cur) {
			o->ret = -1;
			o->err = EALREADY;
		}
		return;
	}
	case A_SPAWN: {
		char *argv[] = {(char *)"true", NULL};
		pid_t pid;
		int rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
		o->err = rc;
		o->ret = rc != 0 ? -1 : (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0) ? 0 : -1;
		return;
	}
	}
}

enum run_mode {
	RUN_FILTER, /* no_new_privs + the filter */
	RUN_PLAIN,  /* the control: no filter */
	RUN_USERNS, /* the control, in new user, mount and network namespaces,
		     * where the child holds the capabilities an unprivileged
		     * caller lacks, so a "host answers EPERM" row can still
		     * show that the call itself gets through */
};

/* Run one row in a child, in `mode`. */
static struct outcome run(const struct row *r, const struct moat_bpf *bpf, enum run_mode mode)
{
	struct outcome o = {0};
	int fds[2], st;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		abort();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		close(fds[0]);
		if (mode == RUN_USERNS && unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) < 0)
			o.setup_err = errno;
		if (mode == RUN_FILTER) {
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
				_exit(90);
			o.load_rc = moat_seccomp_load(bpf);
		}
		if (o.load_rc == 0 && o.setup_err == 0)
			perform(r, &o);
		o.reported = true;
		if (write(fds[1], &o, sizeof(o)) != (ssize_t)sizeof(o))
			_exit(91);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &o, sizeof(o)) != (ssize_t)sizeof(o))
		memset(&o, 0, sizeof(o));
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st)) {
		o.killed = true;
		o.sig = WTERMSIG(st);
	}
	return o;
}

static void describe(const struct outcome *o, char *buf, size_t n)
{
	if (o->killed)
		snprintf(buf, n, "killed by signal %d (%s)", o->sig, strsignal(o->sig));
	else if (!o->reported)
		snprintf(buf, n, "no report");
	else if (o->setup_err != 0)
		snprintf(buf, n, "no user namespace: %s", strerror(o->setup_err));
	else if (o->load_rc != 0)
		snprintf(buf, n, "filter load failed: %s", strerror(-o->load_rc));
	else if (o->ret < 0)
		snprintf(buf, n, "-1 %s (%s)", strerrorname_np(o->err) ? strerrorname_np(o->err) : "?",
			 strerror(o->err));
	else
		snprintf(buf, n, "returned %ld", o->ret);
}

static bool refused_with(const struct outcome *o, int err)
{
	return o->reported && !o->killed && o->load_rc == 0 && o->setup_err == 0 && o->ret == -1 && o->err == err;
}

static bool same_outcome(const struct outcome *a, const struct outcome *b)
{
	if (!a->reported || !b->reported || a->killed || b->killed || a->load_rc || b->load_rc || a->setup_err ||
	    b->setup_err)
		return false;
	if ((a->ret < 0) != (b->ret < 0))
		return false;
	return a->ret >= 0 || a->err == b->err;
}

static const char *filter_name(enum filter_kind f)
{
	return f == F_NONE ? "net=none" : f == F_LOOPBACK ? "net=loopback" : f == F_PTRACE ? "net=none,ptrace" : "net=none,unix";
}

static void check_row(const struct row *r, const struct moat_bpf *bpf)
{
	struct outcome f = run(r, bpf, RUN_FILTER), c = run(r, NULL, RUN_PLAIN), u;
	char fd[160], cd[160], ud[160];

	describe(&f, fd, sizeof(fd));
	describe(&c, cd, sizeof(cd));
	switch (r->exp) {
	case E_ERRNO:
		ok(refused_with(&f, r->err), "[%s] %s -> %s", filter_name(r->filter), r->what, strerrorname_np(r->err));
		if (!refused_with(&f, r->err))
			printf("#   got: %s\n", fd);
		if (refused_with(&c, r->err)) {
			u = run(r, NULL, RUN_USERNS);
			describe(&u, ud, sizeof(ud));
			if (u.reported && !u.setup_err && !refused_with(&u, r->err))
				ok(1, "[control] %s without filter: %s; in a new user+net namespace: %s (differs)",
				   r->what, cd, ud);
			else
				ok(1,
				   "[control] %s without filter: %s, in a user namespace: %s # SKIP the host "
				   "gives the refused answer itself",
				   r->what, cd, ud);
		} else
			ok(c.reported || c.killed, "[control] %s without filter: %s (differs)", r->what, cd);
		break;
	case E_KILLED:
		/* A kernel without the 32-bit entry (IA32 emulation off, or a
		 * guest that traps int $0x80 itself) kills the unfiltered
		 * control with SIGSEGV: no system call is made, so there is
		 * nothing for the filter to refuse, and the filtered run dies
		 * the same way.  Skipped, on the control's evidence; any
		 * other outcome of the filtered run still fails below. */
		if (r->act == A_INT80 && c.killed && c.sig == SIGSEGV && f.killed && f.sig == SIGSEGV) {
			ok(1, "[%s] %s -> killed by SIGSYS # SKIP int $0x80 makes no system call on this kernel "
			      "(without a filter: %s)",
			   filter_name(r->filter), r->what, cd);
			ok(1, "[control] %s without filter: %s # SKIP no 32-bit system call entry", r->what, cd);
			break;
		}
		ok(f.killed && f.sig == SIGSYS, "[%s] %s -> killed by SIGSYS", filter_name(r->filter), r->what);
		if (!(f.killed && f.sig == SIGSYS))
			printf("#   got: %s\n", fd);
		ok(!(c.killed && c.sig == SIGSYS), "[control] %s without filter: %s (differs)", r->what, cd);
		break;
	case E_SAME:
		ok(same_outcome(&f, &c), "[%s] %s allowed: %s", filter_name(r->filter), r->what, fd);
		if (!same_outcome(&f, &c))
			printf("#   without filter: %s\n", cd);
		break;
	}
}

/* clone flags that make the kernel fail with EINVAL after the filter:
 * CLONE_THREAD without CLONE_SIGHAND is refused before anything is made. */
#define CLONE_BAD CLONE_THREAD

static void test_rows(const struct moat_bpf bpf[F__COUNT])
{
	const unsigned long bad_unshare = CLONE_PARENT_SETTID; /* not an unshare flag: EINVAL */
	static struct rlimit core_new = {0, 0}, core_old;
	const unsigned long new_lim = (unsigned long)&core_new, old_lim = (unsigned long)&core_old;
	const struct row rows[] = {
	    /* RLIMIT_CORE held where moat sets it (1: a pipe core_pattern
	     * gets no dump): a change is a success that changes nothing, or
	     * EPERM where the old limit is asked for too; reading it, and
	     * other limits, are untouched. */
	    {"setrlimit(RLIMIT_CORE, 4096)", F_NONE, A_CORE_SET, 0, {4096}, E_ERRNO, EALREADY},
	    {"SYS_setrlimit(RLIMIT_CORE, 4096)", F_NONE, A_CORE_SET, 0, {4096, 1}, E_ERRNO, EALREADY},
	    {"prlimit64(0, RLIMIT_CORE, &new, &old)", F_NONE, A_RAW, SYS_prlimit64, {0, RLIMIT_CORE, new_lim, old_lim}, E_ERRNO, EPERM},
	    {"prlimit64(0, RLIMIT_CORE | 1 << 32, &new, &old)", F_NONE, A_RAW, SYS_prlimit64, {0, RLIMIT_CORE | (1UL << 32), new_lim, old_lim}, E_ERRNO, EPERM},
	    {"prlimit64(0, RLIMIT_CORE, NULL, &old)", F_NONE, A_RAW, SYS_prlimit64, {0, RLIMIT_CORE, 0, old_lim}, E_SAME, 0},
	    {"prlimit64(0, RLIMIT_NOFILE, NULL, &old)", F_NONE, A_RAW, SYS_prlimit64, {0, RLIMIT_NOFILE, 0, old_lim}, E_SAME, 0},
	    /* io_uring: ENOSYS so runtimes fall back to epoll / threads. */
	    {"io_uring_setup(1, NULL)", F_NONE, A_RAW, SYS_io_uring_setup, {1, 0}, E_ERRNO, ENOSYS},
	    {"io_uring_enter(-1)", F_NONE, A_RAW, SYS_io_uring_enter, {-1UL, 0, 0, 0, 0, 0}, E_ERRNO, ENOSYS},
	    {"io_uring_register(-1)", F_NONE, A_RAW, SYS_io_uring_register, {-1UL, 0, 0, 0}, E_ERRNO, ENOSYS},
	    {"bpf(MAP_CREATE, NULL, 64)", F_NONE, A_RAW, SYS_bpf, {0, 0, 64}, E_ERRNO, EPERM},
	    {"bpf(PROG_LOAD, NULL, 64)", F_NONE, A_RAW, SYS_bpf, {5, 0, 64}, E_ERRNO, EPERM},
	    {"perf_event_open(NULL)", F_NONE, A_RAW, SYS_perf_event_open, {0, 0, -1UL, -1UL, 0}, E_ERRNO, EPERM},
	    {"userfaultfd(bad flags)", F_NONE, A_RAW, SYS_userfaultfd, {0xfffff}, E_ERRNO, EPERM},
	    {"keyctl(KEYCTL_READ, 0)", F_NONE, A_RAW, SYS_keyctl, {11, 0, 0, 0}, E_ERRNO, ENOSYS},
	    {"add_key(NULL)", F_NONE, A_RAW, SYS_add_key, {0, 0, 0, 0, 0}, E_ERRNO, ENOSYS},
	    {"request_key(NULL)", F_NONE, A_RAW, SYS_request_key, {0, 0, 0, 0}, E_ERRNO, ENOSYS},
	    /* proc.ptrace */
	    {"ptrace(ATTACH, -1)", F_NONE, A_RAW, SYS_ptrace, {16, -1UL, 0, 0}, E_ERRNO, EPERM},
	    {"process_vm_readv(1, NULL)", F_NONE, A_RAW, SYS_process_vm_readv, {1, 0, 1, 0, 1, 0}, E_ERRNO, EPERM},
	    {"process_vm_writev(1, NULL)", F_NONE, A_RAW, SYS_process_vm_writev, {1, 0, 1, 0, 1, 0}, E_ERRNO, EPERM},
	    {"kcmp(-1, -1)", F_NONE, A_RAW, SYS_kcmp, {-1UL, -1UL, 0, 0, 0}, E_ERRNO, EPERM},
	    {"pidfd_getfd(-1)", F_NONE, A_RAW, SYS_pidfd_getfd, {-1UL, 0, 0}, E_ERRNO, EPERM},
	    {"process_madvise(-1)", F_NONE, A_RAW, SYS_process_madvise, {-1UL, 0, 0, 0, 0}, E_ERRNO, EPERM},
	    {"ptrace(ATTACH, -1)", F_PTRACE, A_RAW, SYS_ptrace, {16, -1UL, 0, 0}, E_SAME, 0},
	    {"process_vm_readv(1, NULL)", F_PTRACE, A_RAW, SYS_process_vm_readv, {1, 0, 1, 0, 1, 0}, E_SAME, 0},
	    {"kcmp(-1, -1)", F_PTRACE, A_RAW, SYS_kcmp, {-1UL, -1UL, 0, 0, 0}, E_SAME, 0},
	    {"pidfd_getfd(-1)", F_PTRACE, A_RAW, SYS_pidfd_getfd, {-1UL, 0, 0}, E_SAME, 0},
	    /* mount family */
	    {"mount(NULL, NULL)", F_NONE, A_RAW, SYS_mount, {0, 0, 0, 0, 0}, E_ERRNO, EPERM},
	    {"umount2(NULL)", F_NONE, A_RAW, SYS_umount2, {0, 0}, E_ERRNO, EPERM},
	    {"pivot_root(NULL, NULL)", F_NONE, A_RAW, SYS_pivot_root, {0, 0}, E_ERRNO, EPERM},
	    {"chroot(NULL)", F_NONE, A_RAW, SYS_chroot, {0}, E_ERRNO, EPERM},
	    {"fsopen(NULL)", F_NONE, A_RAW, SYS_fsopen, {0, 0}, E_ERRNO, EPERM},
	    {"fsconfig(-1)", F_NONE, A_RAW, SYS_fsconfig, {-1UL, 0, 0, 0, 0}, E_ERRNO, EPERM},
	    {"fsmount(-1)", F_NONE, A_RAW, SYS_fsmount, {-1UL, 0, 0}, E_ERRNO, EPERM},
	    {"fspick(-1, NULL)", F_NONE, A_RAW, SYS_fspick, {-1UL, 0, 0}, E_ERRNO, EPERM},
	    {"open_tree(-1, NULL)", F_NONE, A_RAW, SYS_open_tree, {-1UL, 0, 0}, E_ERRNO, EPERM},
	    {"open_tree_attr(-1, NULL)", F_NONE, A_RAW, NR_open_tree_attr, {-1UL, 0, 0, 0, 0}, E_ERRNO, EPERM},
	    {"move_mount(-1, NULL)", F_NONE, A_RAW, SYS_move_mount, {-1UL, 0, -1UL, 0, 0}, E_ERRNO, EPERM},
	    {"mount_setattr(-1, NULL)", F_NONE, A_RAW, SYS_mount_setattr, {-1UL, 0, 0, 0, 0}, E_ERRNO, EPERM},
	    /* namespaces */
	    {"unshare(CLONE_NEWUSER)", F_NONE, A_RAW, SYS_unshare, {CLONE_NEWUSER}, E_ERRNO, EPERM},
	    {"unshare(CLONE_NEWNS|bad)", F_NONE, A_RAW, SYS_unshare, {CLONE_NEWNS | bad_unshare}, E_ERRNO, EPERM},
	    {"unshare(CLONE_NEWNET|bad)", F_NONE, A_RAW, SYS_unshare, {CLONE_NEWNET | bad_unshare}, E_ERRNO, EPERM},
	    {"unshare(CLONE_NEWTIME|bad)", F_NONE, A_RAW, SYS_unshare, {CLONE_NEWTIME | bad_unshare}, E_ERRNO, EPERM},
	    {"setns(-1, 0)", F_NONE, A_RAW, SYS_setns, {-1UL, 0}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWUSER|bad)", F_NONE, A_CLONE, 0, {CLONE_NEWUSER | CLONE_BAD}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWNS|bad)", F_NONE, A_CLONE, 0, {CLONE_NEWNS | CLONE_BAD}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWPID|bad)", F_NONE, A_CLONE, 0, {CLONE_NEWPID | CLONE_BAD}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWNET|bad)", F_NONE, A_CLONE, 0, {CLONE_NEWNET | CLONE_BAD}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWIPC|bad)", F_NONE, A_CLONE, 0, {CLONE_NEWIPC | CLONE_BAD}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWUTS|bad)", F_NONE, A_CLONE, 0, {CLONE_NEWUTS | CLONE_BAD}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWCGROUP|bad)", F_NONE, A_CLONE, 0, {CLONE_NEWCGROUP | CLONE_BAD}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWTIME|bad)", F_NONE, A_CLONE, 0, {CLONE_NEWTIME | CLONE_BAD}, E_ERRNO, EPERM},
	    {"clone(CLONE_NEWUSER|SIGCHLD) (would succeed)",
	     F_NONE,
	     A_CLONE,
	     0,
	     {CLONE_NEWUSER | SIGCHLD},
	     E_ERRNO,
	     EPERM},
	    {"clone(CLONE_NEWUSER|high bits|bad)",
	     F_NONE,
	     A_CLONE,
	     0,
	     {HI32 | CLONE_NEWUSER | CLONE_BAD},
	     E_ERRNO,
	     EPERM},
	    {"clone3(NULL, 0)", F_NONE, A_RAW, SYS_clone3, {0, 0}, E_ERRNO, ENOSYS},
	    {"clone3(NULL, 88)", F_NONE, A_RAW, SYS_clone3, {0, 88}, E_ERRNO, ENOSYS},
	    /* tty.inject: on fd -1 an allowed ioctl is EBADF */
	    {"ioctl(-1, TIOCSTI)", F_NONE, A_RAW, SYS_ioctl, {-1UL, TIOCSTI, 0}, E_ERRNO, EPERM},
	    {"ioctl(-1, TIOCSTI | 0xdeadbeef<<32)",
	     F_NONE,
	     A_RAW,
	     SYS_ioctl,
	     {-1UL, HI32 | TIOCSTI, 0},
	     E_ERRNO,
	     EPERM},
	    {"ioctl(-1, TIOCLINUX)", F_NONE, A_RAW, SYS_ioctl, {-1UL, TIOCLINUX, 0}, E_ERRNO, EPERM},
	    {"ioctl(-1, TIOCLINUX | 0xdeadbeef<<32)",
	     F_NONE,
	     A_RAW,
	     SYS_ioctl,
	     {-1UL, HI32 | TIOCLINUX, 0},
	     E_ERRNO,
	     EPERM},
	    {"ioctl(-1, USERFAULTFD_IOC_NEW)", F_NONE, A_RAW, SYS_ioctl, {-1UL, 0xAA00, 0}, E_ERRNO, EPERM},
	    /* leases: on fd -1 an allowed fcntl is EBADF */
	    {"fcntl(-1, F_SETLEASE, F_RDLCK)", F_NONE, A_RAW, SYS_fcntl, {-1UL, F_SETLEASE, F_RDLCK}, E_ERRNO, EPERM},
	    {"fcntl(-1, F_SETLEASE | 0xdeadbeef<<32)",
	     F_NONE,
	     A_RAW,
	     SYS_fcntl,
	     {-1UL, HI32 | F_SETLEASE, F_RDLCK},
	     E_ERRNO,
	     EPERM},
	    {"fcntl(-1, F_GETLEASE) passes", F_NONE, A_RAW, SYS_fcntl, {-1UL, F_GETLEASE, 0}, E_ERRNO, EBADF},
	    {"fcntl(-1, F_SETLK) passes", F_NONE, A_RAW, SYS_fcntl, {-1UL, F_SETLK, 0}, E_ERRNO, EBADF},
	    {"ioctl(-1, TIOCSTI) under loopback", F_LOOPBACK, A_RAW, SYS_ioctl, {-1UL, TIOCSTI, 0}, E_ERRNO, EPERM},
	    /* kernel, boot, time, hardware */
	    {"init_module(NULL, 0)", F_NONE, A_RAW, SYS_init_module, {0, 0, 0}, E_ERRNO, EPERM},
	    {"finit_module(-1)", F_NONE, A_RAW, SYS_finit_module, {-1UL, 0, 0}, E_ERRNO, EPERM},
	    {"delete_module(NULL)", F_NONE, A_RAW, SYS_delete_module, {0, 0}, E_ERRNO, EPERM},
	    {"kexec_load(bad flags, 1000 segments)",
	     F_NONE,
	     A_RAW,
	     SYS_kexec_load,
	     {0, 1000, 0, 0x100},
	     E_ERRNO,
	     EPERM},
	    {"kexec_file_load(-1, bad flags)",
	     F_NONE,
	     A_RAW,
	     SYS_kexec_file_load,
	     {-1UL, -1UL, 0, 0, 0x1000},
	     E_ERRNO,
	     EPERM},
	    {"open_by_handle_at(-1, NULL)", F_NONE, A_RAW, SYS_open_by_handle_at, {-1UL, 0, 0}, E_ERRNO, EPERM},
	    {"name_to_handle_at(-1, NULL)",
	     F_NONE,
	     A_RAW,
	     SYS_name_to_handle_at,
	     {-1UL, 0, 0, 0, 0},
	     E_ERRNO,
	     EOPNOTSUPP},
	    {"acct(bad pointer)", F_NONE, A_RAW, SYS_acct, {1}, E_ERRNO, EPERM},
	    {"swapon(NULL)", F_NONE, A_RAW, SYS_swapon, {0, 0}, E_ERRNO, EPERM},
	    {"swapoff(NULL)", F_NONE, A_RAW, SYS_swapoff, {0}, E_ERRNO, EPERM},
	    {"reboot(bad magic)", F_NONE, A_RAW, SYS_reboot, {0, 0, 0, 0}, E_ERRNO, EPERM},
	    {"syslog(READ_ALL, NULL)", F_NONE, A_RAW, SYS_syslog, {3, 0, 0}, E_ERRNO, EPERM},
	    {"settimeofday(bad pointer)", F_NONE, A_RAW, SYS_settimeofday, {1, 0}, E_ERRNO, EPERM},
	    {"clock_settime(REALTIME, NULL)", F_NONE, A_RAW, SYS_clock_settime, {CLOCK_REALTIME, 0}, E_ERRNO, EPERM},
	    {"clock_adjtime(REALTIME, NULL)", F_NONE, A_RAW, SYS_clock_adjtime, {CLOCK_REALTIME, 0}, E_ERRNO, EPERM},
	    {"adjtimex(NULL)", F_NONE, A_RAW, SYS_adjtimex, {0}, E_ERRNO, EPERM},
	    {"iopl(4)", F_NONE, A_RAW, SYS_iopl, {4}, E_ERRNO, EPERM},
	    {"ioperm(0, 0, 1)", F_NONE, A_RAW, SYS_ioperm, {0, 0, 1}, E_ERRNO, EPERM},
	    {"quotactl(0, NULL)", F_NONE, A_RAW, SYS_quotactl, {0, 0, 0, 0}, E_ERRNO, EPERM},
	    {"quotactl_fd(-1)", F_NONE, A_RAW, SYS_quotactl_fd, {-1UL, 0, 0, 0}, E_ERRNO, EPERM},
	    {"lookup_dcookie(0, NULL)", F_NONE, A_RAW, SYS_lookup_dcookie, {0, 0, 0}, E_ERRNO, EPERM},
	    {"vhangup() after setsid", F_NONE, A_VHANGUP, 0, {0}, E_ERRNO, EPERM},
	    {"uselib(NULL)", F_NONE, A_RAW, SYS_uselib, {0}, E_ERRNO, EPERM},
	    {"_sysctl(NULL)", F_NONE, A_RAW, SYS__sysctl, {0}, E_ERRNO, EPERM},
	    {"nfsservctl(0, NULL)", F_NONE, A_RAW, SYS_nfsservctl, {0, 0, 0}, E_ERRNO, EPERM},
	    {"create_module(NULL)", F_NONE, A_RAW, SYS_create_module, {0, 0}, E_ERRNO, EPERM},
	    {"fanotify_init(bad flags)", F_NONE, A_RAW, SYS_fanotify_init, {0xffffffffUL, 0}, E_ERRNO, EPERM},
	    /* personality: only 0 and the query */
	    {"personality(READ_IMPLIES_EXEC)", F_NONE, A_RAW, SYS_personality, {READ_IMPLIES_EXEC}, E_ERRNO, EPERM},
	    {"personality(ADDR_NO_RANDOMIZE)", F_NONE, A_RAW, SYS_personality, {ADDR_NO_RANDOMIZE}, E_ERRNO, EPERM},
	    {"personality(READ_IMPLIES_EXEC | high bits)",
	     F_NONE,
	     A_RAW,
	     SYS_personality,
	     {HI32 | READ_IMPLIES_EXEC},
	     E_ERRNO,
	     EPERM},
	    {"personality(0xfffffffe)", F_NONE, A_RAW, SYS_personality, {0xfffffffeUL}, E_ERRNO, EPERM},
	    {"personality(0x7fffffff)", F_NONE, A_RAW, SYS_personality, {0x7fffffffUL}, E_ERRNO, EPERM},
	    {"personality(0x80000000)", F_NONE, A_RAW, SYS_personality, {0x80000000UL}, E_ERRNO, EPERM},
	    {"personality(PER_LINUX32)", F_NONE, A_RAW, SYS_personality, {PER_LINUX32}, E_ERRNO, EPERM},
	    {"personality(0xffffffff) query", F_NONE, A_RAW, SYS_personality, {0xffffffffUL}, E_SAME, 0},
	    {"personality(0xffffffff | high bits) query",
	     F_NONE,
	     A_RAW,
	     SYS_personality,
	     {HI32 | 0xffffffffUL},
	     E_SAME,
	     0},
	    {"personality(PER_LINUX)", F_NONE, A_RAW, SYS_personality, {PER_LINUX}, E_SAME, 0},
	    /* sockets under net=none */
	    {"socket(AF_INET, STREAM)", F_NONE, A_RAW, SYS_socket, {AF_INET, SOCK_STREAM, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(AF_INET6, DGRAM)", F_NONE, A_RAW, SYS_socket, {AF_INET6, SOCK_DGRAM, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(AF_INET | high bits)",
	     F_NONE,
	     A_RAW,
	     SYS_socket,
	     {HI32 | AF_INET, SOCK_STREAM, 0},
	     E_ERRNO,
	     EAFNOSUPPORT},
	    {"socket(AF_NETLINK, ROUTE)",
	     F_NONE,
	     A_RAW,
	     SYS_socket,
	     {AF_NETLINK, SOCK_RAW, NETLINK_ROUTE},
	     E_ERRNO,
	     EAFNOSUPPORT},
	    {"socket(AF_PACKET, RAW)", F_NONE, A_RAW, SYS_socket, {AF_PACKET, SOCK_RAW, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socketpair(AF_INET, NULL)",
	     F_NONE,
	     A_RAW,
	     SYS_socketpair,
	     {AF_INET, SOCK_STREAM, 0, 0},
	     E_ERRNO,
	     EAFNOSUPPORT},
	    /* No device nodes (gVisor's kernel lets container root make one). */
	    {"mknodat(NULL, S_IFCHR)", F_NONE, A_RAW, SYS_mknodat, {(unsigned long)AT_FDCWD, 0, S_IFCHR | 0600, 0x103},
	     E_ERRNO, EPERM},
	    {"mknodat(NULL, S_IFBLK)", F_NONE, A_RAW, SYS_mknodat, {(unsigned long)AT_FDCWD, 0, S_IFBLK | 0600, 0},
	     E_ERRNO, EPERM},
	    {"mknod(NULL, S_IFCHR)", F_NONE, A_RAW, SYS_mknod, {0, S_IFCHR | 0600, 0x103}, E_ERRNO, EPERM},
	    {"mknodat(NULL, S_IFIFO)", F_NONE, A_RAW, SYS_mknodat, {(unsigned long)AT_FDCWD, 0, S_IFIFO | 0600, 0},
	     E_SAME, 0},
	    /* ipc.unix: no unix socket of the command's own (it could connect
	     * to a host socket in a grant); connected pairs only, and not
	     * SOCK_DGRAM ones (sendto(2) can still name any address). */
	    {"socket(AF_UNIX, STREAM)", F_NONE, A_RAW, SYS_socket, {AF_UNIX, SOCK_STREAM, 0}, E_ERRNO, EACCES},
	    {"socket(AF_UNIX, DGRAM|CLOEXEC)",
	     F_NONE,
	     A_RAW,
	     SYS_socket,
	     {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0},
	     E_ERRNO,
	     EACCES},
	    {"socket(AF_UNIX, STREAM) high bits", F_NONE, A_RAW, SYS_socket, {AF_UNIX | 0x100000000UL, SOCK_STREAM, 0},
	     E_ERRNO, EACCES},
	    {"socketpair(AF_UNIX, NULL)", F_NONE, A_RAW, SYS_socketpair, {AF_UNIX, SOCK_STREAM, 0, 0}, E_SAME, 0},
	    {"socketpair(AF_UNIX, SEQPACKET, NULL)", F_NONE, A_RAW, SYS_socketpair, {AF_UNIX, SOCK_SEQPACKET, 0, 0},
	     E_SAME, 0},
	    {"socketpair(AF_UNIX, DGRAM|CLOEXEC, NULL)",
	     F_NONE,
	     A_RAW,
	     SYS_socketpair,
	     {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, 0},
	     E_ERRNO,
	     EACCES},
	    /* The kernel makes an AF_UNIX SOCK_RAW a datagram socket. */
	    {"socketpair(AF_UNIX, RAW, NULL)", F_NONE, A_RAW, SYS_socketpair, {AF_UNIX, SOCK_RAW, 0, 0}, E_ERRNO, EACCES},
	    {"socketpair(AF_UNIX, RAW|NONBLOCK|CLOEXEC, NULL)",
	     F_NONE,
	     A_RAW,
	     SYS_socketpair,
	     {AF_UNIX, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, 0},
	     E_ERRNO,
	     EACCES},
	    {"socketpair(AF_UNIX, RAW, NULL)", F_UNIX, A_RAW, SYS_socketpair, {AF_UNIX, SOCK_RAW, 0, 0}, E_SAME, 0},
	    {"socket(AF_UNIX, STREAM)", F_UNIX, A_RAW, SYS_socket, {AF_UNIX, SOCK_STREAM, 0}, E_SAME, 0},
	    {"socketpair(AF_UNIX, DGRAM, NULL)", F_UNIX, A_RAW, SYS_socketpair, {AF_UNIX, SOCK_DGRAM, 0, 0}, E_SAME, 0},
	    {"socket(AF_INET, STREAM)", F_UNIX, A_RAW, SYS_socket, {AF_INET, SOCK_STREAM, 0}, E_ERRNO, EAFNOSUPPORT},
	    /* sockets under net=loopback (net=all compiles to the same bytes) */
	    {"socket(AF_INET, STREAM)", F_LOOPBACK, A_RAW, SYS_socket, {AF_INET, SOCK_STREAM, 0}, E_SAME, 0},
	    {"socket(AF_INET, DGRAM|NONBLOCK)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0},
	     E_SAME,
	     0},
	    {"socket(AF_INET6, STREAM)", F_LOOPBACK, A_RAW, SYS_socket, {AF_INET6, SOCK_STREAM, 0}, E_SAME, 0},
	    {"socket(AF_UNIX, STREAM)", F_LOOPBACK, A_RAW, SYS_socket, {AF_UNIX, SOCK_STREAM, 0}, E_ERRNO, EACCES},
	    {"socket(AF_NETLINK, RAW, ROUTE)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE},
	     E_SAME,
	     0},
	    {"socket(AF_NETLINK, DGRAM, ROUTE)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE},
	     E_SAME,
	     0},
	    {"socket(AF_NETLINK, AUDIT)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_NETLINK, SOCK_RAW, NETLINK_AUDIT},
	     E_ERRNO,
	     EPROTONOSUPPORT},
	    {"socket(AF_NETLINK, SOCK_DIAG)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG},
	     E_ERRNO,
	     EPROTONOSUPPORT},
	    {"socket(AF_NETLINK, NETFILTER)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER},
	     E_ERRNO,
	     EPROTONOSUPPORT},
	    {"socket(AF_NETLINK, GENERIC)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_NETLINK, SOCK_RAW, NETLINK_GENERIC},
	     E_ERRNO,
	     EPROTONOSUPPORT},
	    {"socket(AF_NETLINK, KOBJECT_UEVENT)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT},
	     E_ERRNO,
	     EPROTONOSUPPORT},
	    {"socket(AF_INET, RAW, ICMP)", F_LOOPBACK, A_RAW, SYS_socket, {AF_INET, SOCK_RAW, 1}, E_ERRNO, EPERM},
	    {"socket(AF_INET, RAW|NONBLOCK|CLOEXEC)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 255},
	     E_ERRNO,
	     EPERM},
	    {"socket(AF_INET6, RAW, ICMPV6)", F_LOOPBACK, A_RAW, SYS_socket, {AF_INET6, SOCK_RAW, 58}, E_ERRNO, EPERM},
	    {"socket(AF_INET, SOCK_PACKET)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_INET, SOCK_PACKET, 0x0300},
	     E_ERRNO,
	     EAFNOSUPPORT},
	    {"socket(AF_PACKET, RAW)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {AF_PACKET, SOCK_RAW, 0x0300},
	     E_ERRNO,
	     EAFNOSUPPORT},
	    {"socket(AF_PACKET | high bits)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {HI32 | AF_PACKET, SOCK_RAW, 0},
	     E_ERRNO,
	     EAFNOSUPPORT},
	    {"socket(AF_INET | high bits) (stricter than the kernel)",
	     F_LOOPBACK,
	     A_RAW,
	     SYS_socket,
	     {HI32 | AF_INET, SOCK_STREAM, 0},
	     E_ERRNO,
	     EAFNOSUPPORT},
	    {"socket(AF_VSOCK)", F_LOOPBACK, A_RAW, SYS_socket, {AF_VSOCK, SOCK_STREAM, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(AF_ALG)", F_LOOPBACK, A_RAW, SYS_socket, {AF_ALG, SOCK_SEQPACKET, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(AF_KEY)", F_LOOPBACK, A_RAW, SYS_socket, {AF_KEY, SOCK_RAW, 2}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(AF_BLUETOOTH)", F_LOOPBACK, A_RAW, SYS_socket, {AF_BLUETOOTH, SOCK_RAW, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(AF_XDP)", F_LOOPBACK, A_RAW, SYS_socket, {AF_XDP, SOCK_RAW, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(AF_TIPC)", F_LOOPBACK, A_RAW, SYS_socket, {AF_TIPC, SOCK_RDM, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(AF_CAN)", F_LOOPBACK, A_RAW, SYS_socket, {AF_CAN, SOCK_RAW, 1}, E_ERRNO, EAFNOSUPPORT},
	    {"socket(46, a future family)", F_LOOPBACK, A_RAW, SYS_socket, {46, SOCK_STREAM, 0}, E_ERRNO, EAFNOSUPPORT},
	    {"socketpair(AF_INET, NULL)", F_LOOPBACK, A_RAW, SYS_socketpair, {AF_INET, SOCK_STREAM, 0, 0}, E_SAME, 0},
	    {"socketpair(AF_UNIX, NULL)", F_LOOPBACK, A_RAW, SYS_socketpair, {AF_UNIX, SOCK_STREAM, 0, 0}, E_SAME, 0},
	    /* foreign ABIs */
	    {"x32 getpid (39 | X32 bit)", F_NONE, A_RAW, NR_x32_getpid | X32_BIT, {0}, E_KILLED, 0},
	    {"x32 unshare(CLONE_NEWUSER)", F_NONE, A_RAW, NR_x32_unshare | X32_BIT, {CLONE_NEWUSER}, E_KILLED, 0},
	    {"x32 getpid under loopback", F_LOOPBACK, A_RAW, NR_x32_getpid | X32_BIT, {0}, E_KILLED, 0},
	    {"i386 int $0x80 getpid", F_NONE, A_INT80, NR_i386_getpid, {0}, E_KILLED, 0},
	    {"i386 int $0x80 unshare(CLONE_NEWUSER)", F_NONE, A_INT80, NR_i386_unshare, {CLONE_NEWUSER}, E_KILLED, 0},
	    {"i386 int $0x80 getpid under ptrace variant", F_PTRACE, A_INT80, NR_i386_getpid, {0}, E_KILLED, 0},
	    /* the common calls a runtime needs */
	    {"getpid()", F_NONE, A_RAW, SYS_getpid, {0}, E_SAME, 0},
	    {"openat(AT_FDCWD, \"/\")",
	     F_NONE,
	     A_RAW,
	     SYS_openat,
	     {(unsigned long)AT_FDCWD, (unsigned long)"/", O_RDONLY | O_DIRECTORY | O_CLOEXEC},
	     E_SAME,
	     0},
	    {"openat(-1, NULL)", F_NONE, A_RAW, SYS_openat, {-1UL, 0, O_RDONLY}, E_SAME, 0},
	    {"ioctl(-1, TCGETS)", F_NONE, A_RAW, SYS_ioctl, {-1UL, TCGETS, 0}, E_SAME, 0},
	    {"ioctl(-1, TIOCGWINSZ)", F_NONE, A_RAW, SYS_ioctl, {-1UL, TIOCGWINSZ, 0}, E_SAME, 0},
	    {"ioctl(-1, FIONREAD)", F_NONE, A_RAW, SYS_ioctl, {-1UL, FIONREAD, 0}, E_SAME, 0},
	    {"raw clone(SIGCHLD)", F_NONE, A_CLONE, 0, {SIGCHLD}, E_SAME, 0},
	    {"raw clone(CLONE_FILES|CLONE_FS|SIGCHLD)",
	     F_NONE,
	     A_CLONE,
	     0,
	     {CLONE_FILES | CLONE_FS | SIGCHLD},
	     E_SAME,
	     0},
	    {"fork()", F_NONE, A_FORK, 0, {0}, E_SAME, 0},
	    {"pthread_create (clone3 ENOSYS -> clone)", F_NONE, A_THREAD, 0, {0}, E_SAME, 0},
	    {"posix_spawn(/bin/true)", F_NONE, A_SPAWN, 0, {0}, E_SAME, 0},
	    {"pthread_create under loopback", F_LOOPBACK, A_THREAD, 0, {0}, E_SAME, 0},
	    {"landlock_create_ruleset(VERSION)", F_NONE, A_RAW, SYS_landlock_create_ruleset, {0, 0, 1}, E_SAME, 0},
	    {"seccomp(GET_ACTION_AVAIL, NULL) (nesting allowed)", F_NONE, A_RAW, SYS_seccomp, {2, 0, 0}, E_SAME, 0},
	    {"io_setup(0, NULL) (old AIO stays)", F_NONE, A_RAW, SYS_io_setup, {0, 0}, E_SAME, 0},
	    {"syscall -1", F_NONE, A_RAW, -1, {0}, E_SAME, 0},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i], &bpf[rows[i].filter]);
}

static bool bpf_equal(const struct moat_bpf *a, const struct moat_bpf *b)
{
	return a->len == b->len && memcmp(a->insns, b->insns, (size_t)a->len * sizeof(struct sock_filter)) == 0;
}

static bool has_name(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static void test_compile(struct moat_bpf bpf[F__COUNT])
{
	struct moat_error err = {0};
	struct moat_seccomp_opts opts[F__COUNT] = {
	    [F_NONE] = {.net = MOAT_NET_NONE},
	    [F_LOOPBACK] = {.net = MOAT_NET_LOOPBACK},
	    [F_PTRACE] = {.net = MOAT_NET_NONE, .allow_ptrace = true},
	    [F_UNIX] = {.net = MOAT_NET_NONE, .allow_unix = true},
	};
	struct moat_seccomp_opts all = {.net = MOAT_NET_ALL}, bad = {.net = (enum moat_net)42};
	struct moat_bpf again = {0}, b_all = {0}, untouched = {(void *)&err, 7};
	const char *const *names;
	size_t n;

	for (int f = 0; f < F__COUNT; f++) {
		int rc = moat_seccomp_compile(&opts[f], &bpf[f], &err);
		ok(rc == 0, "compile %s", filter_name((enum filter_kind)f));
		if (rc < 0) {
			printf("#   %s\n", err.message);
			exit(tap_done());
		}
		ok(bpf[f].insns && bpf[f].len > 0 && bpf[f].len <= 4096, "%s: %u instructions",
		   filter_name((enum filter_kind)f), bpf[f].len);
	}
	ok(moat_seccomp_compile(&opts[F_NONE], &again, &err) == 0 && bpf_equal(&again, &bpf[F_NONE]),
	   "compiling twice gives the same bytes");
	ok(moat_seccomp_compile(&all, &b_all, &err) == 0 && bpf_equal(&b_all, &bpf[F_LOOPBACK]),
	   "net=all compiles to the same program as net=loopback");
	ok(!bpf_equal(&bpf[F_NONE], &bpf[F_LOOPBACK]), "net=none differs from net=loopback");
	ok(!bpf_equal(&bpf[F_NONE], &bpf[F_PTRACE]), "allow_ptrace changes the program");
	ok(!bpf_equal(&bpf[F_NONE], &bpf[F_UNIX]), "allow_unix changes the program");
	ok(moat_seccomp_compile(&bad, &untouched, &err) == -1 && err.message[0] && untouched.insns == (void *)&err &&
	       untouched.len == 7,
	   "unknown net value is an error; out untouched (%s)", err.message);
	moat_bpf_free(&again);
	ok(again.insns == NULL && again.len == 0, "moat_bpf_free zeroes");
	moat_bpf_free(&again);
	moat_bpf_free(NULL);
	moat_bpf_free(&b_all);

	names = moat_seccomp_blocked_names(&n);
	ok(n > 40 && has_name(names, n, "io_uring_setup") && has_name(names, n, "bpf") &&
	       has_name(names, n, "clone3") && has_name(names, n, "unshare") && has_name(names, n, "ptrace") &&
	       !has_name(names, n, "clone"),
	   "blocked names: %zu, include io_uring_setup, bpf, clone3, unshare, ptrace; not clone", n);
	names = moat_seccomp_filtered_names(&n);
	ok(n == 7 && has_name(names, n, "clone") && has_name(names, n, "ioctl") && has_name(names, n, "socket") &&
	       has_name(names, n, "prlimit64"),
	   "argument-filtered names: %zu", n);
}

static void test_load_errors(const struct moat_bpf *bpf)
{
	struct moat_bpf empty = {0};
	int fds[2], rc = 1, st;
	pid_t pid;

	ok(moat_seccomp_load(NULL) == -EINVAL, "load(NULL) is -EINVAL");
	ok(moat_seccomp_load(&empty) == -EINVAL, "load(empty) is -EINVAL");

	/* Without no_new_privs the kernel wants CAP_SYS_ADMIN. */
	if (pipe(fds) < 0)
		abort();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		rc = moat_seccomp_load(bpf);
		if (write(fds[1], &rc, sizeof(rc)) != (ssize_t)sizeof(rc))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &rc, sizeof(rc)) != (ssize_t)sizeof(rc))
		rc = 1;
	close(fds[0]);
	waitpid(pid, &st, 0);
	if (geteuid() != 0)
		ok(rc == -EACCES, "unprivileged load without no_new_privs is -EACCES (got %d)", rc);
	else
		ok(rc == 0 || rc == -EACCES, "root load without no_new_privs: %d (0 with CAP_SYS_ADMIN)", rc);
}

int main(void)
{
	struct moat_bpf bpf[F__COUNT] = {{0}};

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# uid %d\n", (int)geteuid());
	test_compile(bpf);
	test_load_errors(&bpf[F_NONE]);
	test_rows(bpf);
	for (int f = 0; f < F__COUNT; f++)
		moat_bpf_free(&bpf[f]);
	return tap_done();
}
