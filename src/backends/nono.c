/* The nono backend.  (Being written: until then it reports every property
 * missing and runs nothing.) */
#include "backends/backend.h"

#include "plan/plan.h"

static int nono_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			struct moat_error *err)
{
	(void)ctx;
	(void)bp;
	(void)err;
	backend_verdict_all_missing(props, NULL, "the nono compiler is not written yet");
	return 0;
}

const struct moat_backend backend_nono = {
	.name = "nono",
	.tools = {"nono"},
	.summary = "nono",
	.install_hint = "apt-get install nono",
	.os = "linux",
	.compile = nono_compile,
};
