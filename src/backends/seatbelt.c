/* The seatbelt backend.  (Being written: until then it reports every property
 * missing and runs nothing.) */
#include "backends/backend.h"

#include "plan/plan.h"

static int seatbelt_compile(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
			struct moat_error *err)
{
	(void)ctx;
	(void)bp;
	(void)err;
	backend_verdict_all_missing(props, NULL, "the seatbelt compiler is not written yet");
	return 0;
}

const struct moat_backend backend_seatbelt = {
	.name = "seatbelt",
	.tools = {"sandbox-exec"},
	.summary = "seatbelt",
	.install_hint = "sandbox-exec is part of macOS",
	.os = "macos",
	.compile = seatbelt_compile,
};
