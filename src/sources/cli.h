/* Source: `moat run` command-line options.  Fills the one policy model and
 * the run options (which are about moat's own output, not the sandbox). */
#ifndef MOAT_SOURCES_CLI_H
#define MOAT_SOURCES_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"
#include "util/err.h"

struct moat_run_options {
	char *report_path; /* --report FILE, or NULL */
	int report_fd;     /* --report-fd N, or -1 */
	bool dry_run;
	bool help;
};

void run_options_init(struct moat_run_options *o);
void run_options_free(struct moat_run_options *o);

/* Parse `moat run` arguments (argv[0] is "run").  Builds the complete
 * policy: the profile, then the flags on top of it, the command resolved
 * via PATH, and cwd.  Errors are MOAT_E_USAGE (exit 125), or
 * MOAT_E_NOTFOUND / MOAT_E_NOEXEC for the command. */
int cli_parse_run(int argc, char **argv, char *const *environ_in, struct moat_policy *p,
		  struct moat_run_options *o, struct moat_error *err);

void cli_run_usage(FILE *out);

#endif
