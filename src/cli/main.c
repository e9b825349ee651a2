/* moat's command line: a thin front end over libmoat.  It is the only place
 * where an error becomes output on stderr and an exit status. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "launch/init.h"
#include "moat/moat.h"
#include "plan/properties.h"
#include "policy/profiles.h"
#include "sources/cli.h"

int cli_report_error(const struct moat_error *err)
{
	return moat_error_print(err);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: moat run [OPTIONS] -- COMMAND [ARGS...]   run COMMAND in a sandbox\n"
		     "       moat profiles                               list the built-in profiles\n"
		     "       moat probe [--json]                         what this host can enforce\n"
		     "       moat run --config FILE --server NAME [-- ARGS]  run a server from a client config\n"
		     "       moat config check FILE                      validate a config (exit 0 or 125)\n"
		     "       moat config show FILE [--server NAME]       the effective policy as JSON\n"
		     "       moat config decode                          TOML on stdin to tagged JSON\n"
		     "       moat export --backend NAME -o DIR [OPTIONS] -- COMMAND  what a backend would run\n"
		     "       moat oci export -o DIR [OPTIONS] -- COMMAND   an OCI bundle for crun, runc, runsc\n"
		     "       moat --version | help [properties]\n\n"
		     "`moat run --help` lists the options.  stdout belongs to the command; moat writes\n"
		     "diagnostics to stderr and its JSON report to --report FILE or --report-fd N.\n");
}

static void help_properties(void)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		printf("%-14s %s\n", moat_property_name((enum moat_property)i),
		       moat_property_meaning((enum moat_property)i));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 125;
	}
	if (strcmp(argv[1], "run") == 0)
		return moat_run_main(argc - 1, argv + 1);
	/* Internal: pid 1 inside the oci and gvisor backends' containers. */
	if (strcmp(argv[1], "__init") == 0)
		return moat_init_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("moat %s\n", moat_version());
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc > 2 && strcmp(argv[2], "properties") == 0)
			help_properties();
		else if (argc > 2 && strcmp(argv[2], "run") == 0)
			cli_run_usage(stdout);
		else
			usage(stdout);
		return 0;
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
	fprintf(stderr, "moat: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 125;
}
