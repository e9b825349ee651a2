/* bench/syscall_loop: the cost of one cheap system call, in nanoseconds.
 *
 *   syscall_loop [N] [trivial]
 *                      time N calls of each kind (default 5,000,000) and print
 *                      one JSON object: {"getppid_ns": x, "ioctl_ns": y, "n": N};
 *                      with "trivial", first install a one-instruction
 *                      seccomp filter that allows everything: the floor cost
 *                      of having any filter at all (the syscall slow path),
 *                      against which moat's own filter is compared.
 *
 * Two kinds, because a seccomp filter costs differently for each:
 *   getppid()          no argument checks in moat's filter, so the kernel's
 *                      per-syscall action cache (Linux 5.11+) can allow it
 *                      without running the BPF program at all;
 *   ioctl(-1, FIONREAD) moat's filter inspects ioctl's request number
 *                      (TIOCSTI, TIOCLINUX), so the BPF program runs on every
 *                      call; the call itself fails at once with EBADF.
 * Raw syscall(2), so that no libc caching or wrapper work is measured.  Each
 * kind is timed five times and the fastest pass is kept (the loop is the
 * only work; slower passes are preemption or frequency noise). */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double time_getppid(long n)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (now_ns() - t0) / (double)n;
}

static double time_ioctl(long n)
{
	int v = 0;
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++)
		syscall(SYS_ioctl, -1, FIONREAD, &v);
	return (now_ns() - t0) / (double)n;
}

static int trivial_filter(void)
{
	struct sock_filter insn[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog prog = {.len = 1, .filter = insn};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000L;
	double best_p = 1e18, best_i = 1e18;
	int pass;

	if (n <= 0)
		n = 5000000L;
	if (argc > 2 && strcmp(argv[2], "trivial") == 0 && trivial_filter() != 0) {
		perror("seccomp");
		return 1;
	}
	time_getppid(n / 20 + 1); /* warm up */
	for (pass = 0; pass < 5; pass++) {
		double p = time_getppid(n), q = time_ioctl(n);
		if (p < best_p)
			best_p = p;
		if (q < best_i)
			best_i = q;
	}
	printf("{\"getppid_ns\": %.2f, \"ioctl_ns\": %.2f, \"n\": %ld}\n", best_p, best_i, n);
	return 0;
}
