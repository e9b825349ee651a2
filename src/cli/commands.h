/* Subcommands other than `run`, one file each. */
#ifndef MOAT_CLI_COMMANDS_H
#define MOAT_CLI_COMMANDS_H

#include "util/err.h"

int cmd_probe(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_oci(int argc, char **argv);
/* Print err (and its hint) to stderr; return the exit status for it. */
int cli_report_error(const struct moat_error *err);

#endif
