/* moat's seccomp programs, run by a BPF interpreter (bpf_interp.c) instead
 * of the kernel: test_seccomp.c proves the filter on this kernel for this
 * arch; here every program of the build-time table (build/gen), and a fresh
 * libseccomp compile of the same options, is run on synthetic system calls
 * -- any arch, any arguments -- and must answer as docs/seccomp.md says:
 *
 *   refused calls        SECCOMP_RET_ERRNO with the documented errno;
 *   allowed calls        SECCOMP_RET_ALLOW;
 *   foreign ABIs         SECCOMP_RET_KILL_PROCESS: i386 (AUDIT_ARCH_I386),
 *                        x32 (AUDIT_ARCH_X86_64 with __X32_SYSCALL_BIT),
 *                        and any other arch (aarch64 here);
 *   nr -1                allowed (libseccomp's x32 check spares it).
 *
 * moat compiles for x86_64 only (seccomp.h): there is no aarch64 program to
 * run, so aarch64 appears only as a foreign arch the x86_64 program kills.
 * Controls: a refused row has a twin under other options (allow_ptrace,
 * allow_unix, net loopback) that gives another answer, and the interpreter
 * is first checked on small hand-written programs, errors included.  Last,
 * every rule moat_seccomp_rules() lists (the rules the OCI backend writes
 * out) must refuse its call, with its errno, in the program. */
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "bpf_interp.h"
#include "kernel/seccomp.h"

#define ALLOW	      SECCOMP_RET_ALLOW
#define KILL	      SECCOMP_RET_KILL_PROCESS
#define ERRNO(e)      (SECCOMP_RET_ERRNO | ((uint32_t)(e) & SECCOMP_RET_DATA))
#define X32_BIT	      0x40000000u
#define HI32	      UINT64_C(0xdeadbeef00000000)
#define ARCH_X86_64   AUDIT_ARCH_X86_64
#define ARCH_I386     AUDIT_ARCH_I386
#define ARCH_AARCH64  AUDIT_ARCH_AARCH64

static const char *action_text(uint32_t r, char *buf, size_t len)
{
	switch (r & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW: return "ALLOW";
	case SECCOMP_RET_KILL_PROCESS: return "KILL_PROCESS";
	case SECCOMP_RET_KILL_THREAD: return "KILL_THREAD";
	case SECCOMP_RET_ERRNO:
	{
		const char *name = strerrorname_np((int)(r & SECCOMP_RET_DATA));
		snprintf(buf, len, "ERRNO(%s)", name ? name : "?");
	}
		return buf;
	}
	snprintf(buf, len, "%#x", r);
	return buf;
}

static struct seccomp_data call(uint32_t arch, int nr, const uint64_t args[6])
{
	struct seccomp_data d;

	memset(&d, 0, sizeof(d));
	d.arch = arch;
	d.nr = nr;
	d.instruction_pointer = 0x401000;
	for (int i = 0; i < 6; i++)
		d.args[i] = args[i];
	return d;
}

/* --- the interpreter on hand-written programs -------------------------- */

static bool run_is(const struct sock_filter *prog, size_t len, const struct seccomp_data *d, uint32_t want)
{
	struct bpf_run r;

	if (bpf_interp(prog, len, d, &r) < 0) {
		printf("#   interpreter: %s\n", r.error);
		return false;
	}
	if (r.ret != want)
		printf("#   got %#x, want %#x\n", r.ret, want);
	return r.ret == want;
}

static bool run_fails(const struct sock_filter *prog, size_t len, const struct seccomp_data *d, const char *what)
{
	struct bpf_run r;
	int rc = bpf_interp(prog, len, d, &r);

	if (rc == 0)
		printf("#   ran to %#x instead of failing\n", r.ret);
	else
		printf("#   %s: %s\n", what, r.error);
	return rc < 0 && r.error[0];
}

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_interpreter(void)
{
	static const uint64_t none[6] = {0};
	const uint64_t args[6] = {0, 0x12345678u | HI32, 0, 0, 0, 0};
	struct seccomp_data d5 = call(ARCH_X86_64, 5, none), d6 = call(ARCH_X86_64, 6, none),
			    da = call(ARCH_X86_64, 6, args);
	const struct sock_filter eq[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, ERRNO(1)),
	    BPF_STMT(BPF_RET | BPF_K, ALLOW),
	};
	/* args[1]: low word at offset 24, high at 28 (little endian). */
	const struct sock_filter arith[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4),
	    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0xdeadbeef, 0, 9),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
	    BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 4),
	    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
	    BPF_STMT(BPF_ST, 3),
	    BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 3),
	    BPF_STMT(BPF_LD | BPF_W | BPF_IMM, 0x1000),
	    BPF_STMT(BPF_ALU | BPF_OR | BPF_X, 0),
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1000, 0, 1),
	    BPF_STMT(BPF_RET | BPF_A, 0),
	    BPF_STMT(BPF_RET | BPF_K, KILL),
	};
	const struct sock_filter jgt[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 5, 1, 0),
	    BPF_STMT(BPF_JMP | BPF_JA, 1),
	    BPF_STMT(BPF_RET | BPF_K, ERRNO(2)),
	    BPF_STMT(BPF_RET | BPF_K, ALLOW),
	};
	const struct sock_filter unaligned[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), BPF_STMT(BPF_RET | BPF_K, ALLOW)};
	const struct sock_filter outside[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(struct seccomp_data)),
					      BPF_STMT(BPF_RET | BPF_K, ALLOW)};
	const struct sock_filter byte[] = {BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0), BPF_STMT(BPF_RET | BPF_K, ALLOW)};
	const struct sock_filter ind[] = {BPF_STMT(BPF_LD | BPF_W | BPF_IND, 0), BPF_STMT(BPF_RET | BPF_K, ALLOW)};
	const struct sock_filter far[] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0), BPF_STMT(BPF_RET | BPF_K, ALLOW)};
	const struct sock_filter far_ja[] = {BPF_STMT(BPF_JMP | BPF_JA, 1), BPF_STMT(BPF_RET | BPF_K, ALLOW)};
	const struct sock_filter no_ret[] = {BPF_STMT(BPF_LD | BPF_W | BPF_IMM, 1)};
	const struct sock_filter bad_jmp[] = {BPF_JUMP(BPF_JMP | 0xe0 | BPF_K, 0, 0, 0), BPF_STMT(BPF_RET | BPF_K, ALLOW)};
	const struct sock_filter div0[] = {BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), BPF_STMT(BPF_RET | BPF_K, ALLOW)};

	ok(run_is(eq, LEN(eq), &d5, ERRNO(1)), "interpreter: ld nr; jeq 5 taken -> ERRNO(1)");
	ok(run_is(eq, LEN(eq), &d6, ALLOW), "interpreter: jeq 5 not taken -> ALLOW");
	ok(run_is(jgt, LEN(jgt), &d6, ERRNO(2)) && run_is(jgt, LEN(jgt), &d5, ALLOW), "interpreter: jgt and ja");
	ok(run_is(arith, LEN(arith), &da, 0x1067), "interpreter: high and low words, jge, rsh, and, st/ldx mem, or x, "
						   "jset, ret A");
	ok(run_is(arith, LEN(arith), &d6, KILL), "interpreter: the same program on other data takes the other branch");
	ok(run_fails(unaligned, LEN(unaligned), &d5, "unaligned"), "interpreter: an unaligned load is an error");
	ok(run_fails(outside, LEN(outside), &d5, "outside"), "interpreter: a load past seccomp_data is an error");
	ok(run_fails(byte, LEN(byte), &d5, "byte"), "interpreter: a byte load (not allowed by seccomp) is an error");
	ok(run_fails(ind, LEN(ind), &d5, "ind"), "interpreter: an indirect load is an error");
	ok(run_fails(far, LEN(far), &d5, "far"), "interpreter: a conditional jump past the end is an error");
	ok(run_fails(far_ja, LEN(far_ja), &d5, "far ja"), "interpreter: ja past the end is an error");
	ok(run_fails(no_ret, LEN(no_ret), &d5, "no ret"), "interpreter: falling off the end is an error");
	ok(run_fails(bad_jmp, LEN(bad_jmp), &d5, "bad jmp"), "interpreter: an unknown jump is an error");
	ok(run_fails(div0, LEN(div0), &d5, "div0"), "interpreter: division by zero is an error");
}

/* --- moat's programs --------------------------------------------------- */

#if defined(__x86_64__)

enum filter_kind { F_NONE, F_LOOPBACK, F_ALL, F_PTRACE, F_UNIX, F__COUNT };

static const struct moat_seccomp_opts kind_opts[F__COUNT] = {
    [F_NONE] = {.net = MOAT_NET_NONE},
    [F_LOOPBACK] = {.net = MOAT_NET_LOOPBACK},
    [F_ALL] = {.net = MOAT_NET_ALL},
    [F_PTRACE] = {.net = MOAT_NET_NONE, .allow_ptrace = true},
    [F_UNIX] = {.net = MOAT_NET_NONE, .allow_unix = true},
};
static const char *const kind_names[F__COUNT] = {"net none", "net loopback", "net all", "net none, allow_ptrace",
						 "net none, allow_unix"};

extern const struct moat_seccomp_prebuilt moat_seccomp_prebuilt_table[];
extern const size_t moat_seccomp_prebuilt_count;

struct program {
	const char *source; /* "table" or "fresh" */
	struct moat_bpf bpf;
};

/* The prebuilt program for `o` (a copy), or an empty one. */
static struct moat_bpf table_program(const struct moat_seccomp_opts *o)
{
	struct moat_bpf b = {0};

	for (size_t i = 0; i < moat_seccomp_prebuilt_count; i++) {
		const struct moat_seccomp_prebuilt *p = &moat_seccomp_prebuilt_table[i];
		if (p->net == o->net && p->allow_ptrace == o->allow_ptrace && p->allow_unix == o->allow_unix) {
			b.insns = malloc(p->len * sizeof(struct sock_filter));
			if (!b.insns)
				abort();
			memcpy(b.insns, p->insns, p->len * sizeof(struct sock_filter));
			b.len = p->len;
		}
	}
	return b;
}

struct row {
	const char *what;
	enum filter_kind kind;
	uint32_t arch;
	long nr;
	uint64_t args[6];
	uint32_t want;
};

static bool check(const struct program *prog, const struct row *r)
{
	struct seccomp_data d = call(r->arch, (int)r->nr, r->args);
	struct bpf_run run;
	char a[48], b[48];

	if (bpf_interp(prog->bpf.insns, prog->bpf.len, &d, &run) < 0) {
		ok(0, "[%s, %s] %s: the interpreter fails: %s", prog->source, kind_names[r->kind], r->what, run.error);
		return false;
	}
	ok(run.ret == r->want, "[%s, %s] %s -> %s", prog->source, kind_names[r->kind], r->what,
	   action_text(run.ret, a, sizeof(a)));
	if (run.ret != r->want)
		printf("#   want %s\n", action_text(r->want, b, sizeof(b)));
	return run.ret == r->want;
}

static const struct row rows[] = {
    /* refused whatever the arguments */
    {"ptrace", F_NONE, ARCH_X86_64, SYS_ptrace, {0}, ERRNO(EPERM)},
    {"ptrace (control: allow_ptrace)", F_PTRACE, ARCH_X86_64, SYS_ptrace, {0}, ALLOW},
    {"process_vm_readv", F_NONE, ARCH_X86_64, SYS_process_vm_readv, {0}, ERRNO(EPERM)},
    {"process_vm_readv (control: allow_ptrace)", F_PTRACE, ARCH_X86_64, SYS_process_vm_readv, {0}, ALLOW},
    {"pidfd_getfd", F_NONE, ARCH_X86_64, SYS_pidfd_getfd, {0}, ERRNO(EPERM)},
    {"mount", F_NONE, ARCH_X86_64, SYS_mount, {0}, ERRNO(EPERM)},
    {"mount under allow_ptrace", F_PTRACE, ARCH_X86_64, SYS_mount, {0}, ERRNO(EPERM)},
    {"mount under net all", F_ALL, ARCH_X86_64, SYS_mount, {0}, ERRNO(EPERM)},
    {"umount2", F_NONE, ARCH_X86_64, SYS_umount2, {0}, ERRNO(EPERM)},
    {"open_tree_attr (467)", F_NONE, ARCH_X86_64, 467, {0}, ERRNO(EPERM)},
    {"keyctl", F_NONE, ARCH_X86_64, SYS_keyctl, {0}, ERRNO(ENOSYS)},
    {"add_key", F_UNIX, ARCH_X86_64, SYS_add_key, {0}, ERRNO(ENOSYS)},
    {"io_uring_setup", F_NONE, ARCH_X86_64, SYS_io_uring_setup, {0}, ERRNO(ENOSYS)},
    {"clone3", F_NONE, ARCH_X86_64, SYS_clone3, {0}, ERRNO(ENOSYS)},
    {"unshare(0)", F_NONE, ARCH_X86_64, SYS_unshare, {0}, ERRNO(EPERM)},
    {"setns", F_LOOPBACK, ARCH_X86_64, SYS_setns, {0}, ERRNO(EPERM)},
    {"bpf", F_NONE, ARCH_X86_64, SYS_bpf, {0}, ERRNO(EPERM)},
    {"open_by_handle_at", F_NONE, ARCH_X86_64, SYS_open_by_handle_at, {0}, ERRNO(EPERM)},
    {"name_to_handle_at", F_NONE, ARCH_X86_64, SYS_name_to_handle_at, {0}, ERRNO(EOPNOTSUPP)},
    {"openat2", F_NONE, ARCH_X86_64, SYS_openat2, {0}, ERRNO(ENOSYS)},
    {"fanotify_init", F_NONE, ARCH_X86_64, SYS_fanotify_init, {0}, ERRNO(EPERM)},
    /* sockets */
    {"socket(AF_UNIX, STREAM)", F_NONE, ARCH_X86_64, SYS_socket, {AF_UNIX, SOCK_STREAM, 0}, ERRNO(EACCES)},
    {"socket(AF_UNIX, STREAM) (control: allow_unix)", F_UNIX, ARCH_X86_64, SYS_socket, {AF_UNIX, SOCK_STREAM, 0},
     ALLOW},
    {"socket(AF_UNIX, DGRAM) under net all", F_ALL, ARCH_X86_64, SYS_socket, {AF_UNIX, SOCK_DGRAM, 0},
     ERRNO(EACCES)},
    {"socketpair(AF_UNIX, STREAM)", F_NONE, ARCH_X86_64, SYS_socketpair, {AF_UNIX, SOCK_STREAM, 0, 0}, ALLOW},
    {"socketpair(AF_UNIX, SEQPACKET)", F_NONE, ARCH_X86_64, SYS_socketpair, {AF_UNIX, SOCK_SEQPACKET, 0, 0}, ALLOW},
    {"socketpair(AF_UNIX, DGRAM)", F_NONE, ARCH_X86_64, SYS_socketpair, {AF_UNIX, SOCK_DGRAM, 0, 0}, ERRNO(EACCES)},
    {"socketpair(AF_UNIX, DGRAM | NONBLOCK | CLOEXEC)", F_NONE, ARCH_X86_64, SYS_socketpair,
     {AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, 0}, ERRNO(EACCES)},
    {"socketpair(AF_UNIX, DGRAM) (control: allow_unix)", F_UNIX, ARCH_X86_64, SYS_socketpair,
     {AF_UNIX, SOCK_DGRAM, 0, 0}, ALLOW},
    {"socketpair(AF_UNIX, RAW): the kernel makes it DGRAM", F_NONE, ARCH_X86_64, SYS_socketpair,
     {AF_UNIX, SOCK_RAW, 0, 0}, ERRNO(EACCES)},
    {"socketpair(AF_UNIX, RAW | CLOEXEC) under net all", F_ALL, ARCH_X86_64, SYS_socketpair,
     {AF_UNIX, SOCK_RAW | SOCK_CLOEXEC, 0, 0}, ERRNO(EACCES)},
    {"socketpair(AF_UNIX, RAW) (control: allow_unix)", F_UNIX, ARCH_X86_64, SYS_socketpair,
     {AF_UNIX, SOCK_RAW, 0, 0}, ALLOW},
    {"socket(AF_INET, STREAM)", F_NONE, ARCH_X86_64, SYS_socket, {AF_INET, SOCK_STREAM, 0}, ERRNO(EAFNOSUPPORT)},
    {"socket(AF_INET, STREAM) (control: net loopback)", F_LOOPBACK, ARCH_X86_64, SYS_socket,
     {AF_INET, SOCK_STREAM, 0}, ALLOW},
    {"socket(AF_INET6, DGRAM) under net all", F_ALL, ARCH_X86_64, SYS_socket, {AF_INET6, SOCK_DGRAM, 0}, ALLOW},
    {"socket(AF_INET6, DGRAM)", F_NONE, ARCH_X86_64, SYS_socket, {AF_INET6, SOCK_DGRAM, 0}, ERRNO(EAFNOSUPPORT)},
    {"socket(AF_INET, RAW)", F_LOOPBACK, ARCH_X86_64, SYS_socket, {AF_INET, SOCK_RAW, 1}, ERRNO(EPERM)},
    {"socket(AF_INET6, RAW | CLOEXEC)", F_ALL, ARCH_X86_64, SYS_socket, {AF_INET6, SOCK_RAW | SOCK_CLOEXEC, 58},
     ERRNO(EPERM)},
    {"socket(AF_INET, SOCK_PACKET)", F_ALL, ARCH_X86_64, SYS_socket, {AF_INET, SOCK_PACKET, 0}, ERRNO(EAFNOSUPPORT)},
    {"socket(AF_INET | high bits)", F_ALL, ARCH_X86_64, SYS_socket, {HI32 | AF_INET, SOCK_STREAM, 0},
     ERRNO(EAFNOSUPPORT)},
    {"socket(AF_PACKET)", F_ALL, ARCH_X86_64, SYS_socket, {AF_PACKET, SOCK_RAW, 0x0300}, ERRNO(EAFNOSUPPORT)},
    {"socket(AF_VSOCK)", F_ALL, ARCH_X86_64, SYS_socket, {AF_VSOCK, SOCK_STREAM, 0}, ERRNO(EAFNOSUPPORT)},
    {"socket(46, a future family)", F_ALL, ARCH_X86_64, SYS_socket, {46, SOCK_STREAM, 0}, ERRNO(EAFNOSUPPORT)},
    {"socket(0xffff)", F_LOOPBACK, ARCH_X86_64, SYS_socket, {0xffff, SOCK_STREAM, 0}, ERRNO(EAFNOSUPPORT)},
    {"socket(AF_NETLINK, ROUTE)", F_LOOPBACK, ARCH_X86_64, SYS_socket, {AF_NETLINK, SOCK_RAW, NETLINK_ROUTE}, ALLOW},
    {"socket(AF_NETLINK, AUDIT)", F_LOOPBACK, ARCH_X86_64, SYS_socket, {AF_NETLINK, SOCK_RAW, NETLINK_AUDIT},
     ERRNO(EPROTONOSUPPORT)},
    {"socket(AF_NETLINK, SOCK_DIAG)", F_ALL, ARCH_X86_64, SYS_socket, {AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG},
     ERRNO(EPROTONOSUPPORT)},
    {"socket(AF_NETLINK, ROUTE | high bits)", F_ALL, ARCH_X86_64, SYS_socket,
     {AF_NETLINK, SOCK_RAW, HI32 | NETLINK_ROUTE}, ERRNO(EPROTONOSUPPORT)},
    {"socket(AF_NETLINK, ROUTE) under net none", F_NONE, ARCH_X86_64, SYS_socket,
     {AF_NETLINK, SOCK_RAW, NETLINK_ROUTE}, ERRNO(EAFNOSUPPORT)},
    /* arguments: ioctl, clone, personality, modes */
    {"ioctl(0, TIOCSTI)", F_NONE, ARCH_X86_64, SYS_ioctl, {0, TIOCSTI, 0}, ERRNO(EPERM)},
    {"ioctl(0, TIOCSTI | high bits)", F_ALL, ARCH_X86_64, SYS_ioctl, {0, HI32 | TIOCSTI, 0}, ERRNO(EPERM)},
    {"ioctl(0, TIOCLINUX)", F_NONE, ARCH_X86_64, SYS_ioctl, {0, TIOCLINUX, 0}, ERRNO(EPERM)},
    {"fcntl(0, F_SETLEASE)", F_NONE, ARCH_X86_64, SYS_fcntl, {0, F_SETLEASE, F_RDLCK}, ERRNO(EPERM)},
    {"fcntl(0, F_SETLEASE | high bits)", F_ALL, ARCH_X86_64, SYS_fcntl, {0, HI32 | F_SETLEASE, F_RDLCK},
     ERRNO(EPERM)},
    {"fcntl(0, F_GETFL)", F_NONE, ARCH_X86_64, SYS_fcntl, {0, F_GETFL, 0}, ALLOW},
    {"ioctl(0, TCGETS)", F_NONE, ARCH_X86_64, SYS_ioctl, {0, TCGETS, 0}, ALLOW},
    {"ioctl(0, FIONREAD)", F_NONE, ARCH_X86_64, SYS_ioctl, {0, FIONREAD, 0}, ALLOW},
    {"clone(CLONE_NEWUSER | SIGCHLD)", F_NONE, ARCH_X86_64, SYS_clone, {CLONE_NEWUSER | 17, 0}, ERRNO(EPERM)},
    {"clone(CLONE_NEWNET)", F_ALL, ARCH_X86_64, SYS_clone, {CLONE_NEWNET, 0}, ERRNO(EPERM)},
    {"clone(CLONE_NEWTIME)", F_NONE, ARCH_X86_64, SYS_clone, {0x80, 0}, ERRNO(EPERM)},
    {"clone(SIGCHLD) (fork)", F_NONE, ARCH_X86_64, SYS_clone, {17, 0}, ALLOW},
    {"clone(a thread's flags)", F_NONE, ARCH_X86_64, SYS_clone,
     {CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
	  CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
      0},
     ALLOW},
    {"personality(0)", F_NONE, ARCH_X86_64, SYS_personality, {0}, ALLOW},
    {"personality(0xffffffff) (the query)", F_NONE, ARCH_X86_64, SYS_personality, {0xffffffffu}, ALLOW},
    {"personality(0xffffffff | high bits)", F_NONE, ARCH_X86_64, SYS_personality, {HI32 | 0xffffffffu}, ALLOW},
    {"personality(ADDR_NO_RANDOMIZE)", F_NONE, ARCH_X86_64, SYS_personality, {ADDR_NO_RANDOMIZE}, ERRNO(EPERM)},
    {"personality(READ_IMPLIES_EXEC)", F_NONE, ARCH_X86_64, SYS_personality, {READ_IMPLIES_EXEC}, ERRNO(EPERM)},
    {"personality(PER_LINUX32)", F_NONE, ARCH_X86_64, SYS_personality, {PER_LINUX32}, ERRNO(EPERM)},
    {"chmod(p, 04755)", F_NONE, ARCH_X86_64, SYS_chmod, {0x1000, 04755}, ERRNO(EPERM)},
    {"chmod(p, 0755)", F_NONE, ARCH_X86_64, SYS_chmod, {0x1000, 0755}, ALLOW},
    {"fchmodat(fd, p, 02775)", F_NONE, ARCH_X86_64, SYS_fchmodat, {3, 0x1000, 02775}, ERRNO(EPERM)},
    {"openat(fd, p, O_CREAT, 04755)", F_NONE, ARCH_X86_64, SYS_openat, {3, 0x1000, O_CREAT | O_WRONLY, 04755},
     ERRNO(EPERM)},
    {"mknodat(fd, p, S_IFCHR)", F_NONE, ARCH_X86_64, SYS_mknodat, {3, 0x1000, S_IFCHR | 0600, 0x0103},
     ERRNO(EPERM)},
    {"mknodat(fd, p, S_IFIFO)", F_NONE, ARCH_X86_64, SYS_mknodat, {3, 0x1000, S_IFIFO | 0600, 0}, ALLOW},
    /* allowed */
    {"read", F_NONE, ARCH_X86_64, SYS_read, {0, 0x1000, 1}, ALLOW},
    {"write", F_NONE, ARCH_X86_64, SYS_write, {1, 0x1000, 1}, ALLOW},
    {"openat(AT_FDCWD, p, O_RDONLY)", F_NONE, ARCH_X86_64, SYS_openat, {(uint64_t)(int64_t)AT_FDCWD, 0x1000, 0},
     ALLOW},
    {"openat(AT_FDCWD, p, O_CREAT, 0644)", F_ALL, ARCH_X86_64, SYS_openat,
     {(uint64_t)(int64_t)AT_FDCWD, 0x1000, O_CREAT | O_WRONLY, 0644}, ALLOW},
    {"getpid", F_NONE, ARCH_X86_64, SYS_getpid, {0}, ALLOW},
    {"mmap", F_NONE, ARCH_X86_64, SYS_mmap, {0, 4096, 3, 0x22, (uint64_t)-1, 0}, ALLOW},
    {"modify_ldt (Wine)", F_NONE, ARCH_X86_64, SYS_modify_ldt, {0}, ALLOW},
    {"exit_group", F_NONE, ARCH_X86_64, SYS_exit_group, {0}, ALLOW},
    {"landlock_create_ruleset", F_NONE, ARCH_X86_64, SYS_landlock_create_ruleset, {0, 0, 1}, ALLOW},
    {"nr -1 (libseccomp spares it)", F_NONE, ARCH_X86_64, -1, {0}, ALLOW},
    /* foreign ABIs: killed, never their x86_64 meaning */
    {"x32 getpid (39 | X32 bit)", F_NONE, ARCH_X86_64, 39 | X32_BIT, {0}, KILL},
    {"x32 read (0 | X32 bit)", F_ALL, ARCH_X86_64, 0 | X32_BIT, {0}, KILL},
    {"x32 ptrace (521 | X32 bit): killed, not ERRNO", F_NONE, ARCH_X86_64, 521 | X32_BIT, {0}, KILL},
    {"x32 bit under allow_ptrace", F_PTRACE, ARCH_X86_64, 101 | X32_BIT, {0}, KILL},
    {"0x3fffffff (below the x32 bit): allowed", F_NONE, ARCH_X86_64, 0x3fffffff, {0}, ALLOW},
    {"i386 getpid (20)", F_NONE, ARCH_I386, 20, {0}, KILL},
    {"i386 read (3)", F_UNIX, ARCH_I386, 3, {0}, KILL},
    {"i386 unshare (310)", F_NONE, ARCH_I386, 310, {CLONE_NEWUSER}, KILL},
    {"i386 with x86_64's getpid number (39)", F_LOOPBACK, ARCH_I386, SYS_getpid, {0}, KILL},
    {"aarch64 read (63)", F_NONE, ARCH_AARCH64, 63, {0}, KILL},
    {"aarch64 getpid (172)", F_ALL, ARCH_AARCH64, 172, {0}, KILL},
    {"arch 0", F_NONE, 0, SYS_getpid, {0}, KILL},
};

/* Every rule the walker lists, for one kind. */
struct rule_list {
	struct moat_seccomp_rule r[512];
	size_t n;
};

static int collect(void *arg, const struct moat_seccomp_rule *r, struct moat_error *err)
{
	struct rule_list *l = arg;

	(void)err;
	if (l->n < sizeof(l->r) / sizeof(l->r[0]))
		l->r[l->n++] = *r;
	return 0;
}

/* Arguments that satisfy every comparison of the rule (libseccomp's
 * enum scmp_compare: NE 1, LT 2, LE 3, EQ 4, GE 5, GT 6, MASKED_EQ 7). */
static bool satisfy(const struct moat_seccomp_rule *r, uint64_t args[6])
{
	memset(args, 0, 6 * sizeof(args[0]));
	for (unsigned i = 0; i < r->n_args; i++) {
		const struct moat_seccomp_arg *a = &r->args[i];
		const char *op = moat_seccomp_op_name(a->op);
		if (a->index >= 6 || !op)
			return false;
		if (strcmp(op, "SCMP_CMP_MASKED_EQ") == 0)
			args[a->index] = a->value_two;
		else if (strcmp(op, "SCMP_CMP_EQ") == 0 || strcmp(op, "SCMP_CMP_GE") == 0 ||
			 strcmp(op, "SCMP_CMP_LE") == 0)
			args[a->index] = a->value;
		else if (strcmp(op, "SCMP_CMP_NE") == 0 || strcmp(op, "SCMP_CMP_GT") == 0)
			args[a->index] = a->value + 1;
		else if (strcmp(op, "SCMP_CMP_LT") == 0 && a->value > 0)
			args[a->index] = a->value - 1;
		else
			return false;
	}
	return true;
}

static void test_rules_in_program(enum filter_kind k, const struct program *prog)
{
	static struct rule_list l;
	struct moat_error err = {0};
	size_t bad = 0, unsat = 0;

	l.n = 0;
	if (moat_seccomp_rules(&kind_opts[k], collect, &l, &err) < 0) {
		ok(0, "[%s, %s] moat_seccomp_rules: %s", prog->source, kind_names[k], err.message);
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		struct row r = {.what = l.r[i].name, .kind = k, .arch = ARCH_X86_64, .nr = l.r[i].nr,
				.want = ERRNO(l.r[i].errnum)};
		struct seccomp_data d;
		struct bpf_run run;

		if (!satisfy(&l.r[i], r.args)) {
			unsat++;
			printf("#   rule %zu (%s): arguments the test cannot satisfy\n", i, l.r[i].name);
			continue;
		}
		d = call(r.arch, (int)r.nr, r.args);
		if (bpf_interp(prog->bpf.insns, prog->bpf.len, &d, &run) < 0 || run.ret != r.want) {
			char a[48], b[48];
			bad++;
			printf("#   rule %zu: %s(%#llx, %#llx, %#llx): %s, want %s\n", i, l.r[i].name,
			       (unsigned long long)r.args[0], (unsigned long long)r.args[1], (unsigned long long)r.args[2],
			       run.error[0] ? run.error : action_text(run.ret, a, sizeof(a)),
			       action_text(r.want, b, sizeof(b)));
		}
	}
	ok(l.n > 100 && bad == 0 && unsat == 0,
	   "[%s, %s] each of the %zu rules moat_seccomp_rules lists refuses its call with its errno (%zu do not)",
	   prog->source, kind_names[k], l.n, bad + unsat);
}

/* Every family number, under each option set: socket(2) and socketpair(2)
 * with SOCK_STREAM and protocol 0 (NETLINK_ROUTE for AF_NETLINK) answer as
 * docs/seccomp.md's table says -- refused with EAFNOSUPPORT unless allowed
 * (AF_UNIX always; AF_INET, AF_INET6 and AF_NETLINK outside net none),
 * socket(AF_UNIX) EACCES without allow_unix.  The refused families are
 * spelled as few masked blocks and one ">=" (kernel/seccomp.c
 * add_family_rules): each family is asked on its own, so a block one too
 * wide or too narrow shows.  With high bits set every family but AF_UNIX
 * and AF_NETLINK (which their own rules answer first) is EAFNOSUPPORT. */
static void test_family_sweep(enum filter_kind k, const struct program *prog)
{
	const struct moat_seccomp_opts *o = &kind_opts[k];
	bool net = o->net != MOAT_NET_NONE;
	size_t asked = 0, wrong = 0;
	char a[48], b[48];

	for (uint64_t f = 0; f < 80; f++) {
		for (int hi = 0; hi < 2; hi++) {
			bool allowed = f == AF_UNIX || (net && (f == AF_INET || f == AF_INET6 || f == AF_NETLINK));

			if (hi && (f == AF_UNIX || f == AF_NETLINK))
				continue;
			for (int pair = 0; pair < 2; pair++) {
				uint64_t args[6] = {(hi ? HI32 : 0) | f, SOCK_STREAM, 0, 0, 0, 0};
				struct seccomp_data d = call(ARCH_X86_64, pair ? SYS_socketpair : SYS_socket, args);
				uint32_t want = ERRNO(EAFNOSUPPORT);
				struct bpf_run run;

				if (!hi && allowed)
					want = f == AF_UNIX && !pair && !o->allow_unix ? ERRNO(EACCES) : ALLOW;
				asked++;
				if (bpf_interp(prog->bpf.insns, prog->bpf.len, &d, &run) < 0 || run.ret != want) {
					if (wrong++ < 5)
						printf("#   %s(%s%llu): %s, want %s\n", pair ? "socketpair" : "socket",
						       hi ? "high bits | " : "", (unsigned long long)f,
						       action_text(run.ret, a, sizeof(a)), action_text(want, b, sizeof(b)));
				}
			}
		}
	}
	ok(wrong == 0, "[%s, %s] socket and socketpair answer for each family 0..79 as documented (%zu calls, %zu wrong)",
	   prog->source, kind_names[k], asked, wrong);
}

static void test_programs(void)
{
	struct program progs[F__COUNT][2];
	struct moat_error err = {0};
	bool combos[3][2][2] = {{{false}}};
	size_t dup = 0;

	/* The table holds every combination of the options, once. */
	for (size_t i = 0; i < moat_seccomp_prebuilt_count; i++) {
		const struct moat_seccomp_prebuilt *p = &moat_seccomp_prebuilt_table[i];
		if ((unsigned)p->net > MOAT_NET_ALL)
			continue;
		dup += combos[p->net][p->allow_ptrace][p->allow_unix];
		combos[p->net][p->allow_ptrace][p->allow_unix] = true;
	}
	ok(moat_seccomp_prebuilt_count == 12 && dup == 0, "the build-time table has the 12 option sets once each (%zu)",
	   moat_seccomp_prebuilt_count);

	for (int k = 0; k < F__COUNT; k++) {
		progs[k][0] = (struct program){"table", table_program(&kind_opts[k])};
		progs[k][1].source = "fresh";
		memset(&progs[k][1].bpf, 0, sizeof(progs[k][1].bpf));
		ok(progs[k][0].bpf.len > 0, "the table has a program for %s (%u instructions)", kind_names[k],
		   progs[k][0].bpf.len);
		ok(moat_seccomp_compile_fresh(&kind_opts[k], &progs[k][1].bpf, &err) == 0 && progs[k][1].bpf.len > 0,
		   "libseccomp compiles %s (%u instructions) %s", kind_names[k], progs[k][1].bpf.len, err.message);
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (int s = 0; s < 2; s++)
			if (progs[rows[i].kind][s].bpf.len)
				check(&progs[rows[i].kind][s], &rows[i]);
	for (int k = 0; k < F__COUNT; k++)
		for (int s = 0; s < 2; s++)
			if (progs[k][s].bpf.len)
				test_rules_in_program((enum filter_kind)k, &progs[k][s]);
	for (int k = 0; k < F__COUNT; k++)
		for (int s = 0; s < 2; s++)
			if (progs[k][s].bpf.len)
				test_family_sweep((enum filter_kind)k, &progs[k][s]);
	for (int k = 0; k < F__COUNT; k++)
		for (int s = 0; s < 2; s++)
			moat_bpf_free(&progs[k][s].bpf);
}
#endif

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_interpreter();
#if defined(__x86_64__)
	test_programs();
#else
	{
		struct moat_error err = {0};
		struct moat_bpf b = {0};
		ok(moat_seccomp_compile(&kind_opts[F_NONE], &b, &err) < 0 && err.kind == MOAT_E_UNAVAIL,
		   "off x86_64 moat compiles no filter (MOAT_E_UNAVAIL): %s", err.message);
	}
#endif
	return tap_done();
}
