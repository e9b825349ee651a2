/* Subcommands other than `run`, one file each. */
#ifndef MOAT_CLI_COMMANDS_H
#define MOAT_CLI_COMMANDS_H

#include <stdio.h>

#include "util/err.h"

int cmd_probe(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_oci(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
/* help.c: `moat help`, `moat help properties`, `moat help man` (roff). */
void cli_usage(FILE *out);
void cli_help_properties(FILE *out);
void cli_man_page(FILE *out);

#endif
