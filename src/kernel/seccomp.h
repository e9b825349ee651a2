/* The seccomp-bpf filter of the native backend (property `sys.filter`,
 * with parts of `tty.inject`, `proc.ptrace` and `net.*`; docs/seccomp.md).
 *
 * Two halves, because everything that can fail belongs to the parent:
 *
 *   planning (parent)   moat_seccomp_compile() builds the filter with
 *                       libseccomp and exports it as a plain BPF program;
 *   launch (child)      moat_seccomp_load() installs that program as the very
 *                       last step before execve(), after PR_SET_NO_NEW_PRIVS.
 *                       It allocates nothing and only makes raw system calls,
 *                       so it is safe between fork/clone and execve.
 *
 * The filter is a deny list over the x86_64 native ABI (default ALLOW: MCP
 * servers run arbitrary language runtimes, so an allow list would break them
 * one syscall at a time).  Any other syscall ABI -- x32 numbers
 * (nr | __X32_SYSCALL_BIT) and i386 (`int $0x80`) -- kills the process.
 * Only x86_64 is supported: on another architecture compile fails with
 * MOAT_E_UNAVAIL, so the plan reports `sys.filter` missing instead of
 * enforcing an unreviewed filter. */
#ifndef MOAT_KERNEL_SECCOMP_H
#define MOAT_KERNEL_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "util/err.h"

struct sock_filter; /* <linux/filter.h> */

struct moat_seccomp_opts {
	/* Socket families, for socket(2) and socketpair(2):
	 *   MOAT_NET_NONE      AF_UNIX only;
	 *   MOAT_NET_LOOPBACK,
	 *   MOAT_NET_ALL       AF_UNIX, AF_INET, AF_INET6, and AF_NETLINK with
	 *                      protocol NETLINK_ROUTE only (getifaddrs(3),
	 *                      if_nametoindex, resolvers need it; the other
	 *                      netlink protocols -- audit, netfilter, sock_diag,
	 *                      generic, uevent, ... -- are EPROTONOSUPPORT).
	 *   MOAT_NET_ALLOW     as NONE, until the allowlist is enforced (the
	 *                      fence will lift this);
	 * LOOPBACK and ALL give the same filter: seccomp cannot see addresses,
	 * loopback-only is enforced by the network namespace or Landlock.
	 * Every other family (AF_PACKET, AF_VSOCK, AF_ALG, AF_KEY, AF_XDP,
	 * AF_BLUETOOTH, ...) is EAFNOSUPPORT in every mode, and so are families
	 * the kernel may add later. */
	enum moat_net net;
	/* false (the default, and what `proc.ptrace` needs): ptrace,
	 * process_vm_readv/writev, kcmp, pidfd_getfd and process_madvise are
	 * EPERM.  true: they are left to the kernel's own checks (Yama,
	 * PTRACE_MODE_ATTACH), e.g. for a debugger run inside the sandbox. */
	bool allow_ptrace;
	/* false (the default, and what `ipc.unix` needs): socket(AF_UNIX) is
	 * EACCES, so no pathname or abstract unix socket can be connected to,
	 * whatever the view shows (a socket inside a grant, one the host binds
	 * there during the run); socketpair(AF_UNIX) is allowed for
	 * SOCK_STREAM and SOCK_SEQPACKET only -- already connected, they can
	 * reach nothing else, while a SOCK_DGRAM pair could sendto(2) any
	 * address.  true: AF_UNIX sockets of every type (--unix-sockets). */
	bool allow_unix;
};

/* A compiled filter: `len` instructions at `insns` (len fits the kernel's
 * struct sock_fprog).  Owned by the caller; release with moat_bpf_free(). */
struct moat_bpf {
	struct sock_filter *insns;
	unsigned short len;
};

/* Build the filter for `o` into *out.  Returns 0, or -1 with err filled
 * (MOAT_E_UNAVAIL on an unsupported architecture, MOAT_E_SYSTEM when
 * libseccomp fails).  *out is written only on success.  Deterministic: the
 * same options give the same bytes. */
int moat_seccomp_compile(const struct moat_seccomp_opts *o, struct moat_bpf *out, struct moat_error *err)
    __attribute__((nonnull, warn_unused_result));

/* The same, always with libseccomp, never from the build-time table: for
 * tools/gen-seccomp, which writes that table, and for the test that checks
 * the table against it. */
int moat_seccomp_compile_fresh(const struct moat_seccomp_opts *o, struct moat_bpf *out, struct moat_error *err)
	__attribute__((nonnull, warn_unused_result));

/* The filter as rules, for consumers other than the kernel: the oci backend
 * writes them into config.json (linux.seccomp), which the OCI runtime
 * compiles with its own libseccomp.  A rule refuses syscall `nr` (`name`,
 * as libseccomp spells it) with `errnum` when every argument comparison
 * holds; `op` is libseccomp's enum scmp_compare.  The program that
 * moat_seccomp_compile() builds is exactly these rules, default ALLOW,
 * with every ABI but x86_64 killed. */
struct moat_seccomp_arg {
	unsigned index, op;
	uint64_t value, value_two;
};
struct moat_seccomp_rule {
	const char *name;
	int nr;
	int errnum;
	unsigned n_args;
	struct moat_seccomp_arg args[3];
};
typedef int (*moat_seccomp_sink)(void *arg, const struct moat_seccomp_rule *r, struct moat_error *err);

/* Call fn for every rule under `o`, in a fixed order; stops at the first
 * error (fn's, or MOAT_E_UNAVAIL on an unsupported architecture). */
int moat_seccomp_rules(const struct moat_seccomp_opts *o, moat_seccomp_sink fn, void *arg, struct moat_error *err)
	__attribute__((warn_unused_result));

/* "SCMP_CMP_MASKED_EQ" for the op of a moat_seccomp_arg (the names OCI's
 * seccomp JSON uses), or NULL. */
const char *moat_seccomp_op_name(unsigned op);

/* The rules as a policy in kafel's language (google/kafel), which nsjail
 * compiles and loads (seccomp_kafel.c): one action block per rule of
 * moat_seccomp_rules(), in its order but for the rules that only bound a
 * value, which come last, default ALLOW; kafel itself kills
 * every ABI but x86_64, and the policy kills the x32 number of every
 * syscall a rule names and the x32-only numbers.  *text is a new string.
 * -1 with err as moat_seccomp_rules (MOAT_E_UNAVAIL off x86_64). */
struct moat_kafel_stats {
	size_t n_rules; /* the rules of moat_seccomp_rules() written */
	size_t n_x32; /* x32 syscall numbers killed */
};
int moat_seccomp_kafel(const struct moat_seccomp_opts *o, char **text, struct moat_kafel_stats *st,
		       struct moat_error *err) __attribute__((warn_unused_result));

/* One build-time compiled filter (generated file). */
struct moat_seccomp_prebuilt {
	enum moat_net net;
	bool allow_ptrace;
	bool allow_unix;
	unsigned short len;
	const struct sock_filter *insns;
};

/* Free the program and zero *b; safe on a zeroed or already freed struct. */
void moat_bpf_free(struct moat_bpf *b);

/* In the child, after PR_SET_NO_NEW_PRIVS, immediately before execve():
 * install the program for the calling thread.  Async-signal-safe: no
 * allocation, no locks, only seccomp(2) (prctl(PR_SET_SECCOMP) on kernels
 * without it).  Returns 0 or -errno (-EACCES: no_new_privs not set and no
 * CAP_SYS_ADMIN; -EINVAL: empty or malformed program). */
int moat_seccomp_load(const struct moat_bpf *b) __attribute__((warn_unused_result));

/* For reports and `moat probe`: the syscalls the filter refuses whatever
 * their arguments under the default options (the ptrace family included;
 * names not present on x86_64, e.g. stime, are listed but cannot be called).
 * Static storage; *n receives the count. */
const char *const *moat_seccomp_blocked_names(size_t *n) __attribute__((nonnull));

/* The syscalls refused only for some arguments: clone (CLONE_NEW* flags),
 * ioctl (TIOCSTI, TIOCLINUX, USERFAULTFD_IOC_NEW), personality (anything but 0 and the
 * 0xffffffff query), socket and socketpair (families, see above). */
const char *const *moat_seccomp_filtered_names(size_t *n) __attribute__((nonnull));

#endif
