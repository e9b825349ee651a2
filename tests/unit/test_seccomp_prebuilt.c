/* The build-time seccomp table must be exactly what libseccomp compiles on
 * this host for the same options: otherwise moat would load a filter that
 * was never reviewed as the current source. */
#include <linux/filter.h>
#include <string.h>

#include "kernel/seccomp.h"
#include "tap.h"

int main(void)
{
	static const enum moat_net nets[] = {MOAT_NET_NONE, MOAT_NET_LOOPBACK, MOAT_NET_ALL};
	struct moat_error err;
	size_t i;
	int ptrace, unix_ok;

	for (i = 0; i < 3; i++) {
		for (ptrace = 0; ptrace <= 1; ptrace++) {
		for (unix_ok = 0; unix_ok <= 1; unix_ok++) {
			struct moat_seccomp_opts o = {.net = nets[i], .allow_ptrace = ptrace, .allow_unix = unix_ok};
			struct moat_bpf pre = {0}, fresh = {0};
			int same;

			ok(moat_seccomp_compile(&o, &pre, &err) == 0, "compile (table) net=%d ptrace=%d unix=%d",
			   (int)nets[i], ptrace, unix_ok);
			ok(moat_seccomp_compile_fresh(&o, &fresh, &err) == 0,
			   "compile (libseccomp) net=%d ptrace=%d unix=%d", (int)nets[i], ptrace, unix_ok);
			same = pre.len == fresh.len && pre.len > 0 &&
			       memcmp(pre.insns, fresh.insns, pre.len * sizeof(struct sock_filter)) == 0;
			ok(same, "the prebuilt program equals a fresh compile (%u vs %u instructions)", pre.len,
			   fresh.len);
			moat_bpf_free(&pre);
			moat_bpf_free(&fresh);
		}
		}
	}
	return tap_done();
}
