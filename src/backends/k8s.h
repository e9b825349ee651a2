/* The policy as a Kubernetes workload (`moat export --format k8s`,
 * docs/platforms.md "Kubernetes"): what of it a cluster can carry, written
 * as manifests, and a per-property table that says, for each property,
 * whether the manifests alone enforce it, only a named cluster feature
 * does, or Kubernetes cannot express it.  Not a backend that runs: nothing
 * here is claimed `enforced` on this host. */
#ifndef MOAT_BACKENDS_K8S_H
#define MOAT_BACKENDS_K8S_H

#include <jansson.h>

#include "policy/policy.h"
#include "util/err.h"

struct k8s_options {
	const char *kind;          /* "Pod" (default), "Job" or "Deployment" */
	const char *image;         /* required: the container image */
	const char *runtime_class; /* runtimeClassName, or NULL */
	const char *server;        /* the config's server name, or NULL */
};

/* Check the options before anything is planned: the image given, a known
 * kind, a runtime class that is a DNS subdomain. */
int k8s_options_check(const struct k8s_options *o, struct moat_error *err);

/* Write into `dir` (which exists): workload.yaml, networkpolicy.yaml
 * (unless --net all), cilium-fqdn.yaml (when the allowlist names hosts),
 * seccomp/moat/NAME.json (the Localhost profile) and moat/report.json.
 * `envp` is the command's environment as moat builds it (env_build).
 * *report_out (a new reference) is what moat/report.json holds. */
int k8s_export(const struct moat_policy *p, char *const *envp, const struct k8s_options *o, const char *dir,
	       json_t **report_out, struct moat_error *err);

#endif
