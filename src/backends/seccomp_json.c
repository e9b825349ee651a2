/* moat's seccomp rules as OCI/Kubernetes seccomp JSON (seccomp_json.h). */
#include "backends/seccomp_json.h"

#include <seccomp.h>

struct rules_sink {
	json_t *syscalls;
	struct seccomp_json_counts *counts;
};

static int json_rule(void *arg, const struct moat_seccomp_rule *r, struct moat_error *err)
{
	struct rules_sink *s = arg;
	json_t *args;
	unsigned i;

	(void)err;
	/* The runtime resolves names with its own libseccomp: one it does not
	 * know would be an error (crun) or skipped (runc); moat's own
	 * libseccomp is the same Debian package, so a name it cannot resolve
	 * (a syscall newer than the library) is left out, and counted. */
	if (seccomp_syscall_resolve_name(r->name) < 0) {
		s->counts->n_unknown++;
		return 0;
	}
	args = json_array();
	for (i = 0; i < r->n_args; i++)
		json_array_append_new(args, json_pack("{s:I, s:I, s:I, s:s}", "index", (json_int_t)r->args[i].index,
						      "value", (json_int_t)r->args[i].value, "valueTwo",
						      (json_int_t)r->args[i].value_two, "op",
						      moat_seccomp_op_name(r->args[i].op)));
	json_array_append_new(s->syscalls, json_pack("{s:[s], s:s, s:i, s:o}", "names", r->name, "action",
						     "SCMP_ACT_ERRNO", "errnoRet", r->errnum, "args", args));
	s->counts->n_rules++;
	return 0;
}

json_t *seccomp_json_build(const struct moat_seccomp_opts *o, struct seccomp_json_counts *counts,
			   struct moat_error *err)
{
	json_t *syscalls = json_array();
	struct rules_sink s = {.syscalls = syscalls, .counts = counts};

	counts->n_rules = counts->n_unknown = 0;
	if (moat_seccomp_rules(o, json_rule, &s, err) < 0) {
		json_decref(syscalls);
		return NULL;
	}
	/* Only x86_64 is listed: the runtime's libseccomp kills any other ABI
	 * (its default bad-arch action), x32 numbers included. */
	return json_pack("{s:s, s:[s], s:o}", "defaultAction", "SCMP_ACT_ALLOW", "architectures", "SCMP_ARCH_X86_64",
			 "syscalls", syscalls);
}
