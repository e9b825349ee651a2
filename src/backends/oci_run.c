/* The oci and gvisor backends.  (Being written: until then they report
 * every property missing and run nothing.) */
#include "backends/backend.h"

#include "plan/plan.h"

static int oci_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
		       struct moat_error *err)
{
	(void)ctx;
	(void)bp;
	(void)err;
	backend_verdict_all_missing(props, NULL, "the oci compiler is not written yet");
	return 0;
}

const struct moat_backend backend_oci = {
	.name = "oci",
	.tools = {"crun", "runc"},
	.summary = "an OCI bundle run by crun or runc",
	.install_hint = "apt-get install crun (or runc)",
	.os = "linux",
	.needs_work_dir = true,
	.compile = oci_compile,
};

const struct moat_backend backend_gvisor = {
	.name = "gvisor",
	.tools = {"runsc"},
	.summary = "gVisor: an OCI bundle run by runsc, under gVisor's own kernel",
	.install_hint = "apt-get install runsc",
	.os = "linux",
	.needs_work_dir = true,
	.compile = oci_compile,
};
