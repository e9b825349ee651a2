/* A classic-BPF interpreter for seccomp programs, for unit tests: it runs a
 * program against a synthetic struct seccomp_data, without the kernel, so a
 * test can check what a filter answers for any arch, syscall and arguments
 * (test_seccomp_interp.c).  It follows the kernel's seccomp checker
 * (kernel/seccomp.c seccomp_check_filter, net/core/filter.c): A, X and 16
 * words of scratch memory, all zero at the start; loads only as 32-bit
 * aligned words inside struct seccomp_data; forward jumps only.  Anything
 * the kernel would refuse, or that seccomp programs do not use, is an
 * error, never a guess. */
#ifndef MOAT_TESTS_BPF_INTERP_H
#define MOAT_TESTS_BPF_INTERP_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_run {
	uint32_t ret;     /* the program's return value */
	size_t steps;     /* instructions executed */
	char error[160];  /* when bpf_interp returns -1 */
};

/* Run `prog` (len instructions) on `data`.  0 with out->ret, or -1 with
 * out->error: an unknown or unsupported instruction, a load outside the
 * data or not aligned, a jump past the end, falling off the end, a
 * division by zero. */
int bpf_interp(const struct sock_filter *prog, size_t len, const struct seccomp_data *data, struct bpf_run *out);

#endif
