/* nsdeny [--clone-only] CMD ARGS...: run CMD under a seccomp filter that refuses
 * namespaces the way Docker's default profile does (clone with a namespace
 * flag, unshare and setns: EPERM; clone3: ENOSYS, so that libc falls back
 * to clone), while the host's sysctls still allow them.  The place where
 * moat's cheap probe (host/host.c) says namespaces can be made and they
 * cannot: a container, or a moat nested in moat.  Raw BPF, so the test
 * needs no libseccomp.  --clone-only lets unshare and setns be: moat's
 * trial (host/trials.h) then passes and only its clone fails, the launch
 * failure the report must call unavailable. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "nsdeny: add this architecture's AUDIT_ARCH"
#endif

#ifndef __NR_clone3
#define __NR_clone3 435
#endif

#define NS_FLAGS                                                                                                       \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP)
#define ARG0_LOW offsetof(struct seccomp_data, args[0]) /* little-endian: the low word first */

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setns, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 2, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), /* any other call */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_FLAGS, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (argc > 1 && strcmp(argv[1], "--clone-only") == 0) {
		/* unshare and setns jump to the allow (f[10]) instead of
		 * the refusal (f[9]). */
		f[6] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 3, 0);
		f[7] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setns, 2, 0);
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: nsdeny [--clone-only] CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("nsdeny: installing the filter");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror("nsdeny: exec");
	return 127;
}
