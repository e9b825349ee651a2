/* seccomp filter: compiled in the parent with libseccomp, loaded in the
 * child with a raw seccomp(2).  See seccomp.h for the contract and
 * docs/seccomp.md for the policy written out for users.
 *
 * Errno choices.  A refused call must look like something the caller's
 * runtime already handles, or the server crashes instead of degrading:
 *   ENOSYS  where the usual fallback is keyed on "kernel too old / built
 *           without it": io_uring (liburing users, libuv, tokio-uring and
 *           Java's io_uring back ends fall back to epoll/threads), clone3
 *           (glibc >= 2.34 falls back to clone(2) only on ENOSYS, and clone's
 *           flags are visible to the filter, clone3's are behind a pointer),
 *           the keyring calls (as LXC does: runc and crun treat ENOSYS from
 *           keyctl as "no keyring support"; a kernel without CONFIG_KEYS
 *           answers the same).
 *   EAFNOSUPPORT  for refused socket families: what a kernel without that
 *           family says, which every network stack handles as "no such
 *           network" (Go, Node, Python, the JVM, glibc's resolver).
 *   EPROTONOSUPPORT  for refused netlink protocols: what the kernel says
 *           for a protocol it does not have (libaudit treats it as "no audit").
 *   EOPNOTSUPP  for name_to_handle_at: what a filesystem without export
 *           support answers, so callers already fall back (mount-id lookups
 *           via /proc/self/mountinfo).
 *   EPERM   everything else: what an unprivileged caller gets from these
 *           calls anyway (mount, modules, kexec, clock setting, ...), so no
 *           new failure mode is introduced.
 *
 * libseccomp 2.5.4 quirks this file works around:
 *   - SCMP_A1_32() only casts the datum to 32 bits and still compares all 64
 *     bits, so ioctl(fd, TIOCSTI | 0xdeadbeef00000000) would slip past it
 *     while the kernel (which takes `unsigned int cmd`) runs TIOCSTI.  Every
 *     int-typed argument is therefore compared with SCMP_CMP_MASKED_EQ and
 *     mask 0xffffffff, which checks only the low word.
 *   - A rule may compare each argument only once (a second comparison of
 *     the same argument is -EINVAL), so "not in this set" needs several
 *     rules; see add_personality_rules() and add_socket_rules().
 *   - seccomp_export_bpf_mem() appeared in 2.6; before it the program is
 *     exported into a memfd and read back.
 *   - Adding SCMP_ARCH_X86 or SCMP_ARCH_X32 to the filter would apply the
 *     filter's default action (ALLOW) to those ABIs: libseccomp has no
 *     per-architecture default.  Instead only the native arch is in the
 *     filter and SCMP_FLTATR_ACT_BADARCH is KILL_PROCESS: libseccomp then
 *     kills i386 (AUDIT_ARCH_I386) and, for x86_64, also emits a check that
 *     kills any nr >= __X32_SYSCALL_BIT (x32 syscalls report
 *     AUDIT_ARCH_X86_64).  tests/unit/test_seccomp.c proves both. */
#include "kernel/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW 0xAA00 /* _IO(0xAA, 0x00), <linux/userfaultfd.h> 6.1 */
#endif

/* The first address family the kernel does not have yet (AF_MCTP = 45 is
 * the last one as of 6.18).  Families from here up are refused, so a family
 * added by a later kernel is denied until someone reviews it. */
#define MOAT_AF_FIRST_UNKNOWN 46

/* Low 32 bits: for arguments the kernel declares int / unsigned int. */
#define LOW32 UINT64_C(0xffffffff)

enum deny_class {
	DENY_ALWAYS,
	DENY_PTRACE, /* lifted by opts.allow_ptrace */
};

/* Syscalls refused whatever their arguments.  Columns: name, errno, class,
 * x86_64 number to use when libseccomp 2.5.4's table does not know the name
 * (0: none needed).  Names that libseccomp knows but x86_64 lacks (stime,
 * pciconfig_*) resolve to a negative pseudo number and are skipped. */
#define MOAT_SECCOMP_DENY(X)                                                                                           \
	/* io_uring performs its operations (openat, connect, ...) from kernel                                         \
	 * workers without passing through this filter, so argument checks on                                          \
	 * those calls would be moot. */                                                                               \
	X(io_uring_setup, ENOSYS, DENY_ALWAYS, 0)                                                                      \
	X(io_uring_enter, ENOSYS, DENY_ALWAYS, 0)                                                                      \
	X(io_uring_register, ENOSYS, DENY_ALWAYS, 0)                                                                   \
	/* Kernel attack surface with a long CVE record, of no use to a tool. */                                       \
	X(bpf, EPERM, DENY_ALWAYS, 0)                                                                                  \
	X(perf_event_open, EPERM, DENY_ALWAYS, 0)                                                                      \
	X(userfaultfd, EPERM, DENY_ALWAYS, 0) /* stalls the kernel at will: race exploits */                           \
	/* Keyrings are not fully namespaced: they hold the caller's secrets. */                                       \
	X(keyctl, ENOSYS, DENY_ALWAYS, 0)                                                                              \
	X(add_key, ENOSYS, DENY_ALWAYS, 0)                                                                             \
	X(request_key, ENOSYS, DENY_ALWAYS, 0)                                                                         \
	/* proc.ptrace: reading or steering another process. */                                                        \
	X(ptrace, EPERM, DENY_PTRACE, 0)                                                                               \
	X(process_vm_readv, EPERM, DENY_PTRACE, 0)                                                                     \
	X(process_vm_writev, EPERM, DENY_PTRACE, 0)                                                                    \
	X(kcmp, EPERM, DENY_PTRACE, 0)                                                                                 \
	X(pidfd_getfd, EPERM, DENY_PTRACE, 0) /* steals another process's fd */                                        \
	X(process_madvise, EPERM, DENY_PTRACE, 0)                                                                      \
	/* The mount family: would undo the masks over secret paths. */                                                \
	X(mount, EPERM, DENY_ALWAYS, 0)                                                                                \
	X(umount2, EPERM, DENY_ALWAYS, 0)                                                                              \
	X(pivot_root, EPERM, DENY_ALWAYS, 0)                                                                           \
	X(chroot, EPERM, DENY_ALWAYS, 0)                                                                               \
	X(fsopen, EPERM, DENY_ALWAYS, 0)                                                                               \
	X(fsconfig, EPERM, DENY_ALWAYS, 0)                                                                             \
	X(fsmount, EPERM, DENY_ALWAYS, 0)                                                                              \
	X(fspick, EPERM, DENY_ALWAYS, 0)                                                                               \
	X(open_tree, EPERM, DENY_ALWAYS, 0)                                                                            \
	X(open_tree_attr, EPERM, DENY_ALWAYS, 467) /* Linux 6.15 */                                                    \
	X(move_mount, EPERM, DENY_ALWAYS, 0)                                                                           \
	X(mount_setattr, EPERM, DENY_ALWAYS, 0)                                                                        \
	/* New namespaces give the child a root of its own: a user namespace                                           \
	 * is the entry to most unprivileged kernel exploits.  unshare is                                              \
	 * refused whole (its harmless flags, CLONE_FS/FILES, are unused by                                            \
	 * runtimes); clone is filtered on its flags below. */                                                         \
	X(unshare, EPERM, DENY_ALWAYS, 0)                                                                              \
	X(setns, EPERM, DENY_ALWAYS, 0)                                                                                \
	/* clone3 passes its flags in memory, out of the filter's sight. */                                            \
	X(clone3, ENOSYS, DENY_ALWAYS, 0)                                                                              \
	X(init_module, EPERM, DENY_ALWAYS, 0)                                                                          \
	X(finit_module, EPERM, DENY_ALWAYS, 0)                                                                         \
	X(delete_module, EPERM, DENY_ALWAYS, 0)                                                                        \
	X(kexec_load, EPERM, DENY_ALWAYS, 0)                                                                           \
	X(kexec_file_load, EPERM, DENY_ALWAYS, 0)                                                                      \
	/* Opens any inode by handle, bypassing the mount view (CVE "shocker"). */                                     \
	X(open_by_handle_at, EPERM, DENY_ALWAYS, 0)                                                                    \
	X(name_to_handle_at, EOPNOTSUPP, DENY_ALWAYS, 0)                                                               \
	X(acct, EPERM, DENY_ALWAYS, 0)                                                                                 \
	X(swapon, EPERM, DENY_ALWAYS, 0)                                                                               \
	X(swapoff, EPERM, DENY_ALWAYS, 0)                                                                              \
	X(reboot, EPERM, DENY_ALWAYS, 0)                                                                               \
	X(syslog, EPERM, DENY_ALWAYS, 0) /* kernel log: addresses, other users */                                      \
	X(settimeofday, EPERM, DENY_ALWAYS, 0)                                                                         \
	X(clock_settime, EPERM, DENY_ALWAYS, 0)                                                                        \
	X(clock_adjtime, EPERM, DENY_ALWAYS, 0)                                                                        \
	X(adjtimex, EPERM, DENY_ALWAYS, 0)                                                                             \
	X(stime, EPERM, DENY_ALWAYS, 0)                                                                                \
	X(iopl, EPERM, DENY_ALWAYS, 0)                                                                                 \
	X(ioperm, EPERM, DENY_ALWAYS, 0)                                                                               \
	X(quotactl, EPERM, DENY_ALWAYS, 0)                                                                             \
	X(quotactl_fd, EPERM, DENY_ALWAYS, 0)                                                                          \
	X(lookup_dcookie, EPERM, DENY_ALWAYS, 0)                                                                       \
	X(vhangup, EPERM, DENY_ALWAYS, 0)                                                                              \
	X(nfsservctl, EPERM, DENY_ALWAYS, 0)                                                                           \
	X(uselib, EPERM, DENY_ALWAYS, 0)                                                                               \
	X(_sysctl, EPERM, DENY_ALWAYS, 0)                                                                              \
	X(pciconfig_read, EPERM, DENY_ALWAYS, 0)                                                                       \
	X(pciconfig_write, EPERM, DENY_ALWAYS, 0)                                                                      \
	X(pciconfig_iobase, EPERM, DENY_ALWAYS, 0)                                                                     \
	X(create_module, EPERM, DENY_ALWAYS, 0)                                                                        \
	X(get_kernel_syms, EPERM, DENY_ALWAYS, 0)                                                                      \
	X(query_module, EPERM, DENY_ALWAYS, 0)                                                                         \
	/* Unprivileged fanotify (5.13+) watches whole filesystems' access. */                                         \
	X(fanotify_init, EPERM, DENY_ALWAYS, 0)

struct deny_row {
	const char *name;
	int errnum;
	enum deny_class cls;
	int fallback_nr;
};

#define DENY_ROW(name, e, cls, nr)  {#name, e, cls, nr},
#define DENY_NAME(name, e, cls, nr) #name,

static const struct deny_row deny_rows[] = {MOAT_SECCOMP_DENY(DENY_ROW)};
static const char *const blocked_names[] = {MOAT_SECCOMP_DENY(DENY_NAME)};
static const char *const filtered_names[] = {"clone", "ioctl", "personality", "prlimit64", "setrlimit", "socket", "socketpair"};

const char *const *moat_seccomp_blocked_names(size_t *n)
{
	*n = ARRAY_LEN(blocked_names);
	return blocked_names;
}

const char *const *moat_seccomp_filtered_names(size_t *n)
{
	*n = ARRAY_LEN(filtered_names);
	return filtered_names;
}

void moat_bpf_free(struct moat_bpf *b)
{
	if (!b)
		return;
	free(b->insns);
	b->insns = NULL;
	b->len = 0;
}

/* Where the rules go: libseccomp (the BPF program native and bwrap load) or
 * any other consumer of moat_seccomp_rules() (the OCI bundle's JSON). */
struct rule_sink {
	moat_seccomp_sink fn;
	void *arg;
};

/* One rule: refuse syscall `nr` (`name`) with errno when all `n` argument
 * comparisons hold (n == 0: always). */
static int emit(const struct rule_sink *s, const char *name, int nr, int errnum, unsigned n,
		const struct scmp_arg_cmp *cmp, struct moat_error *err)
{
	struct moat_seccomp_rule r = {.name = name, .nr = nr, .errnum = errnum, .n_args = n};

	for (unsigned i = 0; i < n && i < ARRAY_LEN(r.args); i++)
		r.args[i] = (struct moat_seccomp_arg){.index = cmp[i].arg, .op = (unsigned)cmp[i].op,
						      .value = cmp[i].datum_a, .value_two = cmp[i].datum_b};
	return s->fn(s->arg, &r, err);
}

/* libseccomp returns -errno; keep the message naming the rule. */
static int rule_error(struct moat_error *err, int rc, const char *what)
{
	return moat_error_set(err, MOAT_E_SYSTEM, rc < 0 ? -rc : EINVAL, "seccomp: adding the rule for %s", what);
}

static int add_deny_rules(const struct rule_sink *s, const struct moat_seccomp_opts *o, struct moat_error *err)
{
	for (size_t i = 0; i < ARRAY_LEN(deny_rows); i++) {
		const struct deny_row *r = &deny_rows[i];
		int nr, rc;

		if (r->cls == DENY_PTRACE && o->allow_ptrace)
			continue;
		nr = seccomp_syscall_resolve_name(r->name);
		if (nr == __NR_SCMP_ERROR)
			nr = r->fallback_nr > 0 ? r->fallback_nr : __NR_SCMP_ERROR;
		/* Unknown, or a pseudo number for a syscall this arch lacks. */
		if (nr < 0)
			continue;
		rc = emit(s, r->name, nr, r->errnum, 0, NULL, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* clone(flags, ...): flags is argument 0 on x86_64 (the order differs on
 * s390 and cris, one reason this module is x86_64 only).  One rule per
 * flag, since "any of these bits" is not one comparison.  CLONE_NEWTIME
 * (0x80) overlaps clone's exit-signal byte; no valid signal (<= 64) has
 * that bit, so refusing it costs nothing. */
static int add_clone_rules(const struct rule_sink *s, struct moat_error *err)
{
	static const uint64_t new_flags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,	   CLONE_NEWNET,
					     CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME};

	for (size_t i = 0; i < ARRAY_LEN(new_flags); i++) {
		struct scmp_arg_cmp c[] = {SCMP_A0_64(SCMP_CMP_MASKED_EQ, new_flags[i], new_flags[i])};
		if (emit(s, "clone", SCMP_SYS(clone), EPERM, 1, c, err) < 0)
			return -1;
	}
	return 0;
}

/* tty.inject: TIOCSTI pushes bytes into the terminal's input queue (the
 * classic sandbox escape through a shared tty); TIOCLINUX's paste does the
 * same on a virtual console.  USERFAULTFD_IOC_NEW on /dev/userfaultfd is
 * the other way to get a userfaultfd.  The kernel reads `unsigned int cmd`,
 * so the match is on the low 32 bits only (see the quirk note at the top). */
/* No setuid or setgid files.  A command run by root is root on the host's
 * files too (its user namespace maps 0 to 0), so a setuid binary it leaves
 * in a write grant would be a setuid-root binary for every local user.  The
 * mode argument of each call that sets one is checked for S_ISUID and
 * S_ISGID.  openat2 passes its mode inside a struct that seccomp cannot
 * read: it gets ENOSYS, and callers fall back to openat. */
static int add_setid_rules(const struct rule_sink *s, struct moat_error *err)
{
	static const struct {
		const char *name;
		int nr; /* when libseccomp 2.5 does not know the name */
		unsigned arg;
	} calls[] = {
		{"chmod", 0, 1}, {"fchmod", 0, 1}, {"fchmodat", 0, 2}, {NULL, 452 /* fchmodat2 */, 2},
		{"open", 0, 2},	 {"openat", 0, 3}, {"creat", 0, 1},    {"mknod", 0, 1},
		{"mknodat", 0, 2},
	};
	static const uint64_t bits[] = {S_ISUID, S_ISGID};

	for (size_t i = 0; i < ARRAY_LEN(calls); i++) {
		int nr = calls[i].name ? seccomp_syscall_resolve_name(calls[i].name) : calls[i].nr;

		if (nr == __NR_SCMP_ERROR)
			continue;
		for (size_t b = 0; b < ARRAY_LEN(bits); b++) {
			struct scmp_arg_cmp cmp = {.arg = calls[i].arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = bits[b],
						   .datum_b = bits[b]};
			if (emit(s, calls[i].name ? calls[i].name : "fchmodat2", nr, EPERM, 1, &cmp, err) < 0)
				return -1;
		}
	}
	return emit(s, "openat2", SCMP_SYS(openat2), ENOSYS, 0, NULL, err);
}

/* No device nodes: mknod of a character or block device.  The kernel
 * already refuses it without CAP_MKNOD in the initial user namespace, but
 * a user-space kernel (gVisor) lets container root make one in its own
 * tmpfs, and the filter is the same program everywhere. */
static int add_devnode_rules(const struct rule_sink *s, struct moat_error *err)
{
	static const struct {
		const char *name;
		unsigned arg;
	} calls[] = {{"mknod", 1}, {"mknodat", 2}};
	static const uint64_t kinds[] = {S_IFCHR, S_IFBLK};

	for (size_t i = 0; i < ARRAY_LEN(calls); i++) {
		int nr = seccomp_syscall_resolve_name(calls[i].name);

		if (nr == __NR_SCMP_ERROR)
			continue;
		for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
			struct scmp_arg_cmp cmp = {.arg = calls[i].arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = S_IFMT,
						   .datum_b = kinds[k]};
			if (emit(s, calls[i].name, nr, EPERM, 1, &cmp, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* TIOCSETD: a terminal passed through to the command (stdout redirected,
 * --no-tty) is the caller's, and the line discipline the command sets on it
 * stays after the run: N_NULL (27) throws away all input and output, and
 * the caller's terminal was dead after moat exited.  It takes no
 * capability for a discipline built in; a sandboxed command has no use
 * for it (slattach, pppd). */
static int add_ioctl_rules(const struct rule_sink *s, struct moat_error *err)
{
	static const uint64_t reqs[] = {TIOCSTI, TIOCLINUX, USERFAULTFD_IOC_NEW, TIOCSETD};

	for (size_t i = 0; i < ARRAY_LEN(reqs); i++) {
		struct scmp_arg_cmp c[] = {SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, reqs[i])};
		if (emit(s, "ioctl", SCMP_SYS(ioctl), EPERM, 1, c, err) < 0)
			return -1;
	}
	return 0;
}

/* fcntl(F_SETLEASE): a lease on a file the command may only read (one its
 * uid owns: a granted project's, or HOME's) makes every host process
 * that opens the file for writing wait until the command lets go, up to
 * /proc/sys/fs/lease-break-time (45 s) per open: the sandbox stalling
 * the host's editors and tools.  Nothing but file servers (Samba) takes
 * leases.  The kernel reads `unsigned int cmd`: the low 32 bits. */
static int add_fcntl_rules(const struct rule_sink *s, struct moat_error *err)
{
	struct scmp_arg_cmp c[] = {SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, F_SETLEASE)};

	return emit(s, "fcntl", SCMP_SYS(fcntl), EPERM, 1, c, err);
}

/* personality(2): only PER_LINUX (0) and the 0xffffffff query pass.  The
 * flags are what matters -- READ_IMPLIES_EXEC makes every readable mapping
 * executable, ADDR_NO_RANDOMIZE turns ASLR off for the next execve, and
 * they survive execve -- and the exec-domain byte has been ignored since
 * Linux 4.1, so nothing legitimate is lost.
 *
 * "Not 0 and not all ones" cannot be one rule (a rule compares an argument
 * once), so: for each bit b, refuse "bit b set and bit b+1 (mod 32)
 * clear".  Any 32-bit value other than 0 and 0xffffffff has both a set and
 * a clear bit, hence, going round the word, a set bit followed by a clear
 * one; 0 and 0xffffffff match no rule.  The masks have a zero high word,
 * so the high 32 bits, which the kernel ignores, are ignored here too. */
static int add_personality_rules(const struct rule_sink *s, struct moat_error *err)
{
	for (unsigned b = 0; b < 32; b++) {
		uint64_t set = UINT64_C(1) << b;
		uint64_t clear = UINT64_C(1) << ((b + 1) % 32);
		struct scmp_arg_cmp c[] = {SCMP_A0_64(SCMP_CMP_MASKED_EQ, set | clear, set)};
		if (emit(s, "personality", SCMP_SYS(personality), EPERM, 1, c, err) < 0)
			return -1;
	}
	return 0;
}

/* Core dumps stay off.  The tree's RLIMIT_CORE is 1 (backend_rlimits):
 * below a page no core file is written, and at exactly 1 the kernel
 * aborts a dump to a pipe core_pattern too (its guard against a crashing
 * core helper: "RLIMIT_CORE is set to 1, aborting core"), where 0 still
 * hands the whole dump to that program, which runs as root outside the
 * sandbox.  The command may lower a limit, and at 0 the pipe gets its
 * dumps again: so a change of RLIMIT_CORE is refused here.  Refused by a
 * success that changes nothing (errno 0) where the call returns nothing
 * else: a program that lowers it to keep its secrets out of cores
 * (ssh-agent, gpg-agent) exits when that fails, and 1 keeps more out than
 * the 0 it asks for.  prlimit64 that also reads the old limit gets EPERM:
 * a faked success would leave its buffer unwritten.  Arguments are ints
 * (resource) and pointers: the resource compared on its low word. */
static int add_rlimit_rules(const struct rule_sink *s, struct moat_error *err)
{
	struct scmp_arg_cmp set[] = {SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, RLIMIT_CORE)};
	struct scmp_arg_cmp set_only[] = {SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, RLIMIT_CORE), SCMP_A2_64(SCMP_CMP_NE, 0, 0),
					  SCMP_A3_64(SCMP_CMP_EQ, 0, 0)};
	struct scmp_arg_cmp set_get[] = {SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, RLIMIT_CORE), SCMP_A2_64(SCMP_CMP_NE, 0, 0),
					 SCMP_A3_64(SCMP_CMP_NE, 0, 0)};

	if (emit(s, "setrlimit", SCMP_SYS(setrlimit), 0, 1, set, err) < 0 ||
	    emit(s, "prlimit64", SCMP_SYS(prlimit64), 0, 3, set_only, err) < 0 ||
	    emit(s, "prlimit64", SCMP_SYS(prlimit64), EPERM, 3, set_get, err) < 0)
		return -1;
	return 0;
}

/* The network policy the filter is built for.  Net allow gets the filter of
 * net none -- inet sockets refused -- for a backend without the fence; the
 * native backend with the fence asks for the loopback filter instead
 * (inet sockets can be made; the fence decides each connect). */
static enum moat_net filter_net(enum moat_net net)
{
	return net == MOAT_NET_ALLOW ? MOAT_NET_NONE : net;
}

static bool family_allowed(const struct moat_seccomp_opts *o, unsigned family)
{
	if (family == AF_UNIX)
		return true;
	if (filter_net(o->net) == MOAT_NET_NONE)
		return false;
	return family == AF_INET || family == AF_INET6 || family == AF_NETLINK;
}

/* socket(2) and socketpair(2) with a family this policy refuses: every
 * refused family below MOAT_AF_FIRST_UNKNOWN (low 32 bits: the kernel takes
 * int), plus a 64-bit ">= MOAT_AF_FIRST_UNKNOWN", which also refuses any
 * value with high bits set -- stricter than the kernel, never looser.
 *
 * In as few rules as give exactly that set, since the kernel's load of the
 * filter (cBPF to eBPF, the JIT, the action cache) costs about 0.3 us per
 * instruction at every start, and one rule a family made 47 instructions a
 * call.  The refused run that reaches MOAT_AF_FIRST_UNKNOWN joins the 64-bit
 * rule: ">= its first family" refuses the same values (the run, everything
 * from MOAT_AF_FIRST_UNKNOWN up, everything with high bits).  Each other run
 * is cut into aligned power-of-two blocks, a block [b, b + 2^j) being
 * "(low 32 bits & ~(2^j - 1)) == b": the union of the blocks is the run. */
static int add_family_rules(const struct rule_sink *s, int sys, const char *name, const struct moat_seccomp_opts *o,
			    struct moat_error *err)
{
	unsigned tail = MOAT_AF_FIRST_UNKNOWN, f = 0;

	while (tail > 0 && !family_allowed(o, tail - 1))
		tail--;
	while (f < tail) {
		unsigned end = f, size;

		if (family_allowed(o, f)) {
			f++;
			continue;
		}
		while (end < tail && !family_allowed(o, end))
			end++;
		for (; f < end; f += size) {
			for (size = 1; f % (2 * size) == 0 && f + 2 * size <= end; size *= 2)
				;
			struct scmp_arg_cmp c[] = {
			    SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32 & ~(uint64_t)(size - 1), (uint64_t)f)};
			if (emit(s, name, sys, EAFNOSUPPORT, 1, c, err) < 0)
				return -1;
		}
	}
	{
		struct scmp_arg_cmp c[] = {SCMP_A0_64(SCMP_CMP_GE, (uint64_t)tail, 0)};
		return emit(s, name, sys, EAFNOSUPPORT, 1, c, err);
	}
}

static int add_socket_rules(const struct rule_sink *s, const struct moat_seccomp_opts *o, struct moat_error *err)
{
	/* The kernel masks the type with SOCK_TYPE_MASK (0xf) after taking the
	 * SOCK_NONBLOCK / SOCK_CLOEXEC flags off. */
	static const struct {
		uint64_t family, type;
		int errnum;
	} type_rules[] = {
	    /* Raw IP needs CAP_NET_RAW, which a child that is root in its own
	     * user and network namespace has: refuse it as an unprivileged
	     * caller would be refused. */
	    {AF_INET, SOCK_RAW, EPERM},
	    {AF_INET6, SOCK_RAW, EPERM},
	    /* The kernel turns (PF_INET, SOCK_PACKET) into a PF_PACKET socket:
	     * AF_PACKET under another name. */
	    {AF_INET, SOCK_PACKET, EAFNOSUPPORT},
	};
	if (add_family_rules(s, SCMP_SYS(socket), "socket", o, err) < 0 ||
	    add_family_rules(s, SCMP_SYS(socketpair), "socketpair", o, err) < 0)
		return -1;
	if (!o->allow_unix) {
		/* A pair of datagram sockets could still sendto(2) any
		 * address, and connect(2) to a new peer: refused, as a
		 * socket(AF_UNIX) of any type is.  The kernel's unix_create()
		 * makes SOCK_RAW a SOCK_DGRAM socket, so both numbers are
		 * refused; every other type but STREAM and SEQPACKET it
		 * refuses itself (ESOCKTNOSUPPORT).  A connected stream or
		 * seqpacket pair can reach nothing but its other end. */
		static const uint64_t dgram_types[] = {SOCK_DGRAM, SOCK_RAW};
		struct scmp_arg_cmp c[] = {SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, (uint64_t)AF_UNIX)};

		if (emit(s, "socket", SCMP_SYS(socket), EACCES, 1, c, err) < 0)
			return -1;
		for (size_t i = 0; i < ARRAY_LEN(dgram_types); i++) {
			struct scmp_arg_cmp d[] = {SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, (uint64_t)AF_UNIX),
						   SCMP_A1_64(SCMP_CMP_MASKED_EQ, UINT64_C(0xf), dgram_types[i])};
			if (emit(s, "socketpair", SCMP_SYS(socketpair), EACCES, 2, d, err) < 0)
				return -1;
		}
	}
	if (filter_net(o->net) == MOAT_NET_NONE)
		return 0; /* AF_INET, AF_INET6 and AF_NETLINK are refused whole */

	for (size_t i = 0; i < ARRAY_LEN(type_rules); i++) {
		struct scmp_arg_cmp c[] = {SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, type_rules[i].family),
					   SCMP_A1_64(SCMP_CMP_MASKED_EQ, UINT64_C(0xf), type_rules[i].type)};
		if (emit(s, "socket", SCMP_SYS(socket), type_rules[i].errnum, 2, c, err) < 0)
			return -1;
	}
	/* Netlink: NETLINK_ROUTE only.  It is what getifaddrs(3) and
	 * if_nametoindex use, and reads are harmless (changes need
	 * CAP_NET_ADMIN over the network namespace).  Audit, netfilter,
	 * sock_diag (lists every socket on the host without a network
	 * namespace), generic netlink and uevents are refused.  A 64-bit NE
	 * refuses a NETLINK_ROUTE with garbage high bits too: stricter only. */
	{
		struct scmp_arg_cmp c[] = {SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, (uint64_t)AF_NETLINK),
					   SCMP_A2_64(SCMP_CMP_NE, (uint64_t)NETLINK_ROUTE, 0)};
		return emit(s, "socket", SCMP_SYS(socket), EPROTONOSUPPORT, 2, c, err);
	}
}

/* Export the program into freshly allocated memory. */
static int export_bpf(scmp_filter_ctx ctx, struct moat_bpf *out, struct moat_error *err)
{
	cleanup_free void *buf = NULL;
	size_t size;

#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 6)
	int rc;

	size = 0;
	rc = seccomp_export_bpf_mem(ctx, NULL, &size);
	if (rc < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "seccomp: exporting the filter");
	buf = moat_xmalloc(size ? size : 1);
	rc = seccomp_export_bpf_mem(ctx, buf, &size);
	if (rc < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "seccomp: exporting the filter");
#else
	cleanup_close int fd = memfd_create("moat-seccomp", MFD_CLOEXEC);
	off_t end;
	size_t got = 0;
	int rc;

	if (fd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "seccomp: memfd_create for the filter");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "seccomp: exporting the filter");
	end = lseek(fd, 0, SEEK_END);
	if (end < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "seccomp: sizing the exported filter");
	size = (size_t)end;
	buf = moat_xmalloc(size ? size : 1);
	while (got < size) {
		ssize_t n = pread(fd, (char *)buf + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "seccomp: reading the exported filter");
		if (n == 0)
			return moat_error_set(err, MOAT_E_SYSTEM, EIO, "seccomp: exported filter is truncated");
		got += (size_t)n;
	}
#endif
	if (size == 0 || size % sizeof(struct sock_filter) != 0 || size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return moat_error_set(err, MOAT_E_SYSTEM, 0, "seccomp: exported filter has an invalid size (%zu bytes)",
				      size);
	out->insns = steal_ptr(&buf);
	out->len = (unsigned short)(size / sizeof(struct sock_filter));
	return 0;
}

/* The rules below (clone's argument order, the x32 kill, the syscall list)
 * are reviewed for x86_64 only. */
static int check_opts(const struct moat_seccomp_opts *o, struct moat_error *err)
{
	if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
		moat_error_set(err, MOAT_E_UNAVAIL, 0, "seccomp: the filter supports only x86_64 (native arch %#x)",
			       seccomp_arch_native());
		return moat_error_hint(err, "use --mode prefer to run without sys.filter, or another backend");
	}
	if (o->net != MOAT_NET_NONE && o->net != MOAT_NET_LOOPBACK && o->net != MOAT_NET_ALL && o->net != MOAT_NET_ALLOW)
		return moat_error_set(err, MOAT_E_USAGE, 0, "seccomp: unknown network policy %d", (int)o->net);
	return 0;
}

/* Every rule of the filter, in a fixed order. */
static int walk_rules(const struct moat_seccomp_opts *o, const struct rule_sink *s, struct moat_error *err)
{
	if (add_deny_rules(s, o, err) < 0 || add_clone_rules(s, err) < 0 || add_ioctl_rules(s, err) < 0 || add_fcntl_rules(s, err) < 0 ||
	    add_setid_rules(s, err) < 0 || add_devnode_rules(s, err) < 0 || add_personality_rules(s, err) < 0 ||
	    add_rlimit_rules(s, err) < 0 || add_socket_rules(s, o, err) < 0)
		return -1;
	return 0;
}

static int libseccomp_sink(void *arg, const struct moat_seccomp_rule *r, struct moat_error *err)
{
	struct scmp_arg_cmp cmp[ARRAY_LEN(r->args)];
	int rc;

	for (unsigned i = 0; i < r->n_args; i++)
		cmp[i] = (struct scmp_arg_cmp){.arg = r->args[i].index, .op = (enum scmp_compare)r->args[i].op,
					       .datum_a = r->args[i].value, .datum_b = r->args[i].value_two};
	rc = seccomp_rule_add_array((scmp_filter_ctx)arg, SCMP_ACT_ERRNO((uint32_t)r->errnum), r->nr, r->n_args, cmp);
	return rc < 0 ? rule_error(err, rc, r->name) : 0;
}

int moat_seccomp_rules(const struct moat_seccomp_opts *o, moat_seccomp_sink fn, void *arg, struct moat_error *err)
{
	if (check_opts(o, err) < 0)
		return -1;
	return walk_rules(o, &(struct rule_sink){.fn = fn, .arg = arg}, err);
}

const char *moat_seccomp_op_name(unsigned op)
{
	switch ((enum scmp_compare)op) {
	case SCMP_CMP_NE:
		return "SCMP_CMP_NE";
	case SCMP_CMP_LT:
		return "SCMP_CMP_LT";
	case SCMP_CMP_LE:
		return "SCMP_CMP_LE";
	case SCMP_CMP_EQ:
		return "SCMP_CMP_EQ";
	case SCMP_CMP_GE:
		return "SCMP_CMP_GE";
	case SCMP_CMP_GT:
		return "SCMP_CMP_GT";
	case SCMP_CMP_MASKED_EQ:
		return "SCMP_CMP_MASKED_EQ";
	default:
		return NULL;
	}
}

static void release_ctx(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

int moat_seccomp_compile_fresh(const struct moat_seccomp_opts *o, struct moat_bpf *out, struct moat_error *err)
{
	__attribute__((cleanup(release_ctx))) scmp_filter_ctx ctx = NULL;
	struct moat_bpf bpf = {0};
	int rc;

	if (check_opts(o, err) < 0)
		return -1;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return moat_error_set(err, MOAT_E_SYSTEM, ENOMEM, "seccomp: seccomp_init");

	/* Any ABI but native x86_64 -- i386 through int $0x80 or sysenter, and
	 * x32 numbers -- is a way around every rule below: kill it outright. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "seccomp: setting the bad-arch action");
	/* moat sets no_new_privs itself, right before loading, and loads the
	 * program with its own seccomp(2) call; libseccomp does neither. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, -rc, "seccomp: clearing the NNP attribute");
	/* The child is single-threaded when it loads: no TSYNC (the default). */
	/* A binary tree over syscall numbers instead of a linear list: every
	 * syscall of the sandboxed program pays for the filter.  Best effort:
	 * the filter means the same without it. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

	if (walk_rules(o, &(struct rule_sink){.fn = libseccomp_sink, .arg = ctx}, err) < 0)
		return -1;

	if (export_bpf(ctx, &bpf, err) < 0)
		return -1;
	*out = bpf;
	return 0;
}

#ifndef MOAT_SECCOMP_NO_PREBUILT
/* Filters compiled at build time (build/gen/seccomp_prebuilt.c, written by
 * tools/gen-seccomp with moat_seccomp_compile_fresh): compiling with
 * libseccomp costs most of a millisecond on every start, and the program
 * depends only on the options.  tests/unit/test_seccomp.c checks that each
 * prebuilt program equals a fresh compile on this host. */
extern const struct moat_seccomp_prebuilt moat_seccomp_prebuilt_table[];
extern const size_t moat_seccomp_prebuilt_count;

static const struct moat_seccomp_prebuilt *find_prebuilt(const struct moat_seccomp_opts *o)
{
	size_t i;

	for (i = 0; i < moat_seccomp_prebuilt_count; i++)
		if (moat_seccomp_prebuilt_table[i].net == filter_net(o->net) &&
		    moat_seccomp_prebuilt_table[i].allow_ptrace == o->allow_ptrace &&
		    moat_seccomp_prebuilt_table[i].allow_unix == o->allow_unix)
			return &moat_seccomp_prebuilt_table[i];
	return NULL;
}
#else
static const struct moat_seccomp_prebuilt *find_prebuilt(const struct moat_seccomp_opts *o)
{
	(void)o;
	return NULL;
}
#endif

int moat_seccomp_compile(const struct moat_seccomp_opts *o, struct moat_bpf *out, struct moat_error *err)
{
	const struct moat_seccomp_prebuilt *pre = find_prebuilt(o);

	if (pre && seccomp_arch_native() == SCMP_ARCH_X86_64) {
		out->insns = moat_xmalloc(pre->len * sizeof(struct sock_filter));
		memcpy(out->insns, pre->insns, pre->len * sizeof(struct sock_filter));
		out->len = pre->len;
		return 0;
	}
	return moat_seccomp_compile_fresh(o, out, err);
}

/* Runs between fork and execve: nothing here may allocate or take a lock. */
int moat_seccomp_load(const struct moat_bpf *b)
{
	struct sock_fprog prog;

	if (!b || !b->insns || b->len == 0)
		return -EINVAL;
	prog.len = b->len;
	prog.filter = b->insns;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	/* Kernels before 3.17 have no seccomp(2). */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0)
		return 0;
	return -errno;
}
