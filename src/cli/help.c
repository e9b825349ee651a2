/* moat's help texts: `moat help`, `moat help properties` and the manual page
 * `moat help man` (roff, installed as moat(1)).  The man page is made from the
 * same tables as the help -- the commands below, `moat run`'s option table and
 * exit statuses (sources/cli.c), the properties (plan/properties.c) and the
 * profiles (policy/profiles.c) -- so the two cannot drift; tests/repo/install.sh
 * checks that every option of `moat run --help` is in the page and back. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "moat/moat.h"
#include "policy/properties.h"
#include "policy/profiles.h"
#include "sources/cli.h"
#include "util/cleanup.h"

struct command_doc {
	const char *synopsis;
	const char *meaning;
};

static const struct command_doc commands[] = {
    {"moat run [OPTIONS] [--] COMMAND [ARGS...]", "run COMMAND in a sandbox"},
    {"moat run --config FILE --server NAME [[--] ARGS]", "run a server from a client config"},
    {"moat profiles", "list the built-in profiles"},
    {"moat probe [--json]", "what this host can enforce"},
    {"moat config check FILE", "validate a config (exit 0 or 125)"},
    {"moat config show FILE [--server NAME]", "the effective policy as JSON"},
    {"moat config decode", "TOML on stdin to tagged JSON"},
    {"moat mcp list [--config FILE] [--json]", "the MCP clients' servers, under moat or not"},
    {"moat mcp wrap [--server NAME] [--profile P] [OPTIONS]", "rewrite them to run through moat"},
    {"moat mcp unwrap [--server NAME]", "put them back as they were"},
    {"moat export --backend NAME -o DIR [OPTIONS] -- COMMAND", "what a backend would run"},
    {"moat oci export -o DIR [OPTIONS] -- COMMAND", "an OCI bundle for crun, runc, runsc"},
    {"moat export --format k8s --image REF -o DIR [OPTIONS] -- COMMAND", "Kubernetes manifests, property by property"},
    {"moat --version", "the version and the git revision built from"},
    {"moat help [run|properties|man]", "this help, run's options, properties, moat(1)"},
};

#define NOTE_STDIO                                                                                    \
	"stdout belongs to the command; moat writes diagnostics to stderr and its JSON report to\n" \
	"--report FILE or --report-fd N."

void cli_usage(FILE *out)
{
	enum { WIDTH = 46 };
	size_t i;

	for (i = 0; i < ARRAY_LEN(commands); i++) {
		const char *lead = i == 0 ? "usage:" : "      ";
		if (strlen(commands[i].synopsis) > WIDTH)
			fprintf(out, "%s %s\n       %-*s  %s\n", lead, commands[i].synopsis, WIDTH, "",
				commands[i].meaning);
		else
			fprintf(out, "%s %-*s  %s\n", lead, WIDTH, commands[i].synopsis, commands[i].meaning);
	}
	fprintf(out, "\n`moat run --help` lists the options.\n%s\n", NOTE_STDIO);
}

void cli_help_properties(FILE *out)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		fprintf(out, "%-14s %s\n", moat_property_name((enum moat_property)i),
			moat_property_meaning((enum moat_property)i));
}

/* Text for roff: backslashes doubled, hyphens as \- (so --read stays two
 * ASCII hyphens when rendered and searchable), a leading . or ' neutralised;
 * with `paths`, a break point (\:, zero width) after each '/', for filled
 * text of long paths: troff breaks a line only at a space, and one path
 * longer than the room left ("can't break line") overran the page's right
 * margin. */
static void roff_text(FILE *out, const char *s, bool paths)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else if (*s == '/' && paths)
			fputs("/\\:", out);
		else if (*s == '\n') {
			fputc('\n', out);
			if (s[1] == '.' || s[1] == '\'')
				fputs("\\&", out);
		} else
			fputc(*s, out);
	}
}

static void roff(FILE *out, const char *s)
{
	roff_text(out, s, false);
}

static void roff_line(FILE *out, const char *s)
{
	roff(out, s);
	fputc('\n', out);
}

/* The profiles as `moat profiles` prints them: the table preformatted, the
 * lists after it (one per line, long) as filled paragraphs, a list's
 * indented lines (the secrets, one tool each) broken where they start. */
static void man_profiles(FILE *out)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	bool table = true;
	FILE *mem = open_memstream(&text, &len);

	if (!mem)
		return;
	profile_list(mem);
	if (fclose(mem) != 0) {
		free(text);
		return;
	}
	fputs(".PP\n.nf\n", out);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* strtok_r folds the blank line that ends the table: a line
		 * holding ':' is the first of the lists. */
		if (table && strchr(line, ':')) {
			fputs(".fi\n", out);
			table = false;
		}
		/* An indented line continues its list, on a line of its own. */
		if (!table)
			fputs(line[0] == ' ' ? ".br\n" : ".PP\n", out);
		roff_text(out, line, !table);
		fputc('\n', out);
	}
	if (table)
		fputs(".fi\n", out);
	free(text);
}

void cli_man_page(FILE *out)
{
	const char *name, *metavar, *help;
	const struct cli_exit_doc *exits;
	size_t i, n_exits;
	int p;

	fprintf(out, ".\\\" moat(1), generated by `moat help man` from the tables --help is made of.\n");
	fprintf(out, ".TH MOAT 1 \"\" \"moat %s\" \"User Commands\"\n.nh\n.ad l\n", moat_version());
	fputs(".SH NAME\nmoat \\- run an untrusted command in the strongest sandbox the host gives, and report what "
	      "was enforced\n",
	      out);
	fputs(".SH SYNOPSIS\n", out);
	for (i = 0; i < ARRAY_LEN(commands); i++) {
		fputs(".br\n", out);
		roff_line(out, commands[i].synopsis);
	}
	fputs(".SH DESCRIPTION\n", out);
	fputs("moat runs a program you do not fully trust \\(em an MCP server, a command a compliance check "
	      "executes, a CI step \\(em in the strongest sandbox the Linux host can give, built from one "
	      "declarative policy (flags, a TOML config, or an MCP client's own config). By default the program "
	      "can read the system and its own files, cannot read ~/.ssh, ~/.aws or tokens, cannot write outside "
	      "what is allowed, and has no network. moat reports which protections were enforced and, in the "
	      "default mode \\fBrequire\\fR, refuses to run when the host cannot give one.\n.PP\n",
	      out);
	roff_line(out, NOTE_STDIO);
	fputs(".SH COMMANDS\n", out);
	for (i = 0; i < ARRAY_LEN(commands); i++) {
		fputs(".TP\n\\fB", out);
		roff(out, commands[i].synopsis);
		fputs("\\fR\n", out);
		roff_line(out, commands[i].meaning);
	}
	fputs(".SH RUN OPTIONS\n", out);
	roff_line(out, CLI_RUN_SUMMARY ".");
	roff_line(out, CLI_RUN_COMMAND_NOTE);
	for (i = 0; (name = cli_run_option_doc(i, &metavar, &help)); i++) {
		fputs(".TP\n\\fB", out);
		roff(out, name);
		fputs("\\fR", out);
		if (metavar) {
			fputs(" \\fI", out);
			roff(out, metavar);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		roff_line(out, help);
	}
	fputs(".PP\n", out);
	roff_line(out, CLI_RUN_CONFIG_NOTE);
	fputs(".SH PROPERTIES\nEach property of the report is \\fBenforced\\fR (with its mechanism), \\fBmissing\\fR "
	      "(with a reason and a hint) or \\fBnot-requested\\fR.\n",
	      out);
	for (p = 0; p < MOAT_P__COUNT; p++) {
		fputs(".TP\n\\fB", out);
		roff(out, moat_property_name((enum moat_property)p));
		fputs("\\fR\n", out);
		roff_line(out, moat_property_meaning((enum moat_property)p));
	}
	fputs(".SH PROFILES\n", out);
	man_profiles(out);
	fputs(".SH EXIT STATUS\n", out);
	exits = cli_exit_docs(&n_exits);
	for (i = 0; i < n_exits; i++) {
		fputs(".TP\n\\fB", out);
		roff(out, exits[i].status);
		fputs("\\fR\n", out);
		roff_line(out, exits[i].meaning);
	}
	fputs(".SH SEE ALSO\n\\fBbwrap\\fR(1), \\fBrunsc\\fR(8), \\fBcrun\\fR(1), \\fBlandlock\\fR(7), "
	      "\\fBseccomp\\fR(2), \\fBuser_namespaces\\fR(7).\n.PP\n"
	      "The documentation in the source tree: README.md, docs/policy.md, docs/filesystem.md, "
	      "docs/report.md, docs/config.md, docs/clients.md, docs/backends.md.\n",
	      out);
}
