/* Source: `moat run` command-line options.  Fills the one policy model and
 * the run options (which are about moat's own output, not the sandbox). */
#ifndef MOAT_SOURCES_CLI_H
#define MOAT_SOURCES_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"
#include "sources/netsets.h"
#include "util/err.h"

struct moat_run_options {
	char *report_path; /* --report FILE, or NULL */
	int report_fd;     /* --report-fd N, or -1 */
	int events_fd;     /* --events-fd N, or -1 */
	bool dry_run;
	bool help;
	bool mkdir;		   /* --mkdir: make the missing directories of the write grants */
	/* Set by the caller: the policy is for another machine (moat export
	 * --format k8s), so nothing of this host's own is made and granted
	 * for it -- no package caches of moat's, no filtered git
	 * configuration, whose files the cluster does not have. */
	bool for_another_host;
	struct netset_notes notes; /* what a destination set left out, for stderr */
	/* Set by the caller: a command that is not found or not executable
	 * does not fail the parse, which builds the rest of the policy (with
	 * argv[0] as its exe); its error is put in exe_err, so that the run
	 * that cannot start still gets its report. */
	bool defer_exe_err;
	struct moat_error exe_err;
};

void run_options_init(struct moat_run_options *o);
void run_options_free(struct moat_run_options *o);

/* Parse `moat run` arguments (argv[0] is "run").  Builds the complete
 * policy: the profile, then the flags on top of it, the command resolved
 * via PATH, and cwd.  Errors are MOAT_E_USAGE (exit 125), or
 * MOAT_E_NOTFOUND / MOAT_E_NOEXEC for the command (in o->exe_err instead
 * when o->defer_exe_err is set; a later error is then still returned). */
int cli_parse_run(int argc, char **argv, char *const *environ_in, struct moat_policy *p,
		  struct moat_run_options *o, struct moat_error *err);

/* The same, and the selected config server's metadata (meta->name NULL
 * when no server was selected), for the report. */
struct moat_server_meta;
int cli_parse_run_meta(int argc, char **argv, char *const *environ_in, struct moat_policy *p,
		       struct moat_run_options *o, struct moat_server_meta *meta, struct moat_error *err);

/* The FILE of `moat run ... --config FILE ...` (argv[0] is "run"), read
 * as cli_parse_run reads the options, or NULL: the file whose settings and
 * profiles the run takes, for `moat mcp list` to say whose they are. */
const char *cli_run_config_file(int argc, char *const *argv);

void cli_run_usage(FILE *out);

/* What `moat run --help` and the man page (cli/man.c) are both made from, so
 * they cannot drift. */
#define CLI_RUN_SUMMARY "Runs COMMAND in the strongest sandbox the host gives, and reports what was enforced"
#define CLI_RUN_COMMAND_NOTE                                                                                           \
	"The first word that is not an option starts COMMAND, and every word after it is COMMAND's; `--` "             \
	"before COMMAND is accepted, and needed when COMMAND starts with `-`."
#define CLI_RUN_CONFIG_NOTE "With --config, the file's settings apply first and the flags on top of them."

/* Option I of the table, in --help order: its name (NULL past the end), its
 * value's placeholder (NULL for a flag) and its one-line help. */
const char *cli_run_option_doc(size_t i, const char **metavar, const char **help);

struct cli_exit_doc {
	const char *status;
	const char *meaning;
};
/* The exit statuses of `moat run`, *n of them. */
const struct cli_exit_doc *cli_exit_docs(size_t *n);

#endif
