/* moat's seccomp rules (kernel/seccomp.h, moat_seccomp_rules) in the JSON
 * form runtimes read: the object of an OCI bundle's linux.seccomp, which is
 * also the file format of a Kubernetes Localhost seccomp profile.  One
 * writer for both, so the bundle (backends/oci.c) and the manifests
 * (backends/k8s.c) carry the same rules. */
#ifndef MOAT_BACKENDS_SECCOMP_JSON_H
#define MOAT_BACKENDS_SECCOMP_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "kernel/seccomp.h"
#include "util/err.h"

struct seccomp_json_counts {
	size_t n_rules;   /* rules written */
	size_t n_unknown; /* rules left out: a syscall this libseccomp cannot name */
};

/* {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
 * "syscalls": [...]} for `o`, a new reference; counts filled.  NULL with err
 * on failure (MOAT_E_UNAVAIL on an architecture moat has no filter for). */
json_t *seccomp_json_build(const struct moat_seccomp_opts *o, struct seccomp_json_counts *counts,
			   struct moat_error *err);

#endif
