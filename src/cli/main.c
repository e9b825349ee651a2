/* moat's command line: a thin front end over libmoat.  It is the only place
 * where an error becomes output on stderr and an exit status. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/run.h"
#include "cli/commands.h"
#include "launch/init.h"
#include "moat/moat.h"
#include "policy/profiles.h"
#include "sources/cli.h"
#include "sources/config_common.h"
#include "sources/resolve.h"
#include "util/cleanup.h"
#include "util/moatbin.h"
#include "util/stacklimit.h"
#include "util/stdfds.h"

/* The git revision moat was built from (Makefile: git describe, or the
 * .git-revision file of a copy without .git), "unknown" otherwise. */
#ifndef MOAT_REVISION
#define MOAT_REVISION "unknown"
#endif

/* One of run's options, as written or --OPT=VALUE. */
static bool is_run_option(const char *word)
{
	const char *name, *metavar, *help;
	size_t n = strcspn(word, "=");

	for (size_t i = 0; (name = cli_run_option_doc(i, &metavar, &help)); i++)
		if (strlen(name) == n && strncmp(word, name, n) == 0)
			return true;
	return false;
}

/* `moat --profile strict -- ls` and `moat node server.js` forgot `run`;
 * `moat rn` mistyped a command (a program of PATH is not taken for one:
 * `moat ocr` is no typo of oci).  The hint says which (`shown`: the word
 * as moat prints it). */
static void unknown_command_hint(const char *word, const char *shown)
{
	static const char *const commands[] = {"run", "profiles", "probe", "config", "export", "oci", "mcp", "help",
					       "version", NULL};
	const char *near = config_suggest(word, commands);
	struct moat_error err = {0};
	cleanup_free char *program = word[0] != '-' ? resolve_command(word, getenv("PATH"), ".", &err) : NULL;

	if (is_run_option(word))
		fprintf(stderr, "moat: hint: %s is an option of moat run: moat run %s ...\n", shown, shown);
	else if (near && !program)
		fprintf(stderr, "moat: hint: did you mean '%s'?\n", near);
	else if (word[0] != '-')
		fprintf(stderr, "moat: hint: to run %s in a sandbox: moat run [OPTIONS] -- %s ...\n", shown, shown);
}

int main(int argc, char **argv)
{
	/* This process is moat's binary: the backends that run it as the
	 * sandbox's init may (util/moatbin.h). */
	moatbin_mark_self();
	/* A closed 0, 1 or 2 would be taken by the next file moat opens.
	 * The stack limit before any deep frame (util/stacklimit.h); not for
	 * __init, which runs inside a sandbox moat checked it for. */
	struct moat_error err = {0};
	if (stdfds_ensure(&err) < 0 ||
	    ((argc < 2 || strcmp(argv[1], "__init") != 0) && stack_limit_check(&err) < 0))
		return moat_error_print(&err);
	if (argc < 2) {
		cli_usage(stderr);
		return 125;
	}
	if (strcmp(argv[1], "run") == 0)
		return run_main_exiting(argc - 1, argv + 1); /* main returns at once */
	/* Internal: pid 1 inside the oci and gvisor backends' containers. */
	if (strcmp(argv[1], "__init") == 0)
		return moat_init_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("moat %s (git %s)\n", moat_version(), MOAT_REVISION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc > 3) {
			fprintf(stderr, "moat: help takes at most one topic\n");
			cli_usage(stderr);
			return 125;
		}
		if (argc == 2)
			cli_usage(stdout);
		else if (strcmp(argv[2], "properties") == 0)
			cli_help_properties(stdout);
		else if (strcmp(argv[2], "run") == 0)
			cli_run_usage(stdout);
		else if (strcmp(argv[2], "man") == 0)
			cli_man_page(stdout);
		else {
			cleanup_free char *shown = moat_text_shown(argv[2]);

			fprintf(stderr, "moat: unknown help topic '%s'\nmoat: hint: moat help run, moat help properties "
					"or moat help man\n",
				shown);
			return 125;
		}
		return fflush(stdout) == 0 ? 0 : 125;
	}
	if (strcmp(argv[1], "profiles") == 0) {
		profile_list(stdout);
		return 0;
	}
	if (strcmp(argv[1], "probe") == 0)
		return cmd_probe(argc - 1, argv + 1);
	if (strcmp(argv[1], "config") == 0)
		return cmd_config(argc - 1, argv + 1);
	if (strcmp(argv[1], "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	if (strcmp(argv[1], "oci") == 0)
		return cmd_oci(argc - 1, argv + 1);
	if (strcmp(argv[1], "mcp") == 0)
		return cmd_mcp(argc - 1, argv + 1);
	/* A word a script passed on: shown escaped (util/err.h). */
	cleanup_free char *shown = moat_text_shown(argv[1]);

	fprintf(stderr, "moat: unknown command '%s'\n", shown);
	unknown_command_hint(argv[1], shown);
	cli_usage(stderr);
	return 125;
}
