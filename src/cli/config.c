/* `moat config ...`: how moat reads configuration files.
 *
 *   moat config check FILE                 validate; exit 0 or 125
 *   moat config show FILE [--server NAME]  the effective policy, as --dry-run prints it
 *   moat config decode < FILE.toml         TOML to toml-test's tagged JSON */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/config.h"
#include "cli/commands.h"
#include "report/report.h"
#include "sources/toml_json.h"
#include "util/cleanup.h"
#include "util/err.h"

static int usage(void)
{
	fprintf(stderr, "moat: usage: moat config check FILE\n"
			"       moat config show FILE [--server NAME]\n"
			"       moat config decode < FILE.toml\n");
	return 125;
}

/* Every problem of the file, each with its file:line:col and hint; then
 * how many.  What was ignored or skipped is noted first.  The file's name
 * is shown escaped, as in the problems' file:line:col (util/err.h): a
 * repository's file can be named with an escape sequence. */
static int check(const char *file)
{
	cleanup_free char *shown = moat_text_shown(file);
	struct moat_error err = {0};
	struct api_config_check res;
	size_t i;
	int code = 0;

	if (api_config_check(file, &res, &err) < 0)
		code = 125;
	for (i = 0; i < res.n_notes; i++)
		moat_say("moat: note: ", res.notes[i]);
	if (code == 0) {
		fprintf(stderr, "%s: ok (%zu server%s)\n", shown, res.n_servers, res.n_servers == 1 ? "" : "s");
	} else if (res.n_problems == 0) {
		moat_error_print(&err);
		if (res.stopped)
			fprintf(stderr, "moat: %s: the reading stops at a syntax error: nothing after it was checked\n",
				shown);
	} else {
		for (i = 0; i < res.n_problems; i++)
			moat_error_print(&res.problems[i]);
		fprintf(stderr, "moat: %s: %zu problem%s\n", shown, res.n_problems, res.n_problems == 1 ? "" : "s");
	}
	api_config_check_free(&res);
	return code;
}

/* The report of a dry run (report_build with no run), for one server. */
static int show(const char *file, const char *server)
{
	struct moat_error err = {0};
	json_t *report = NULL;
	bool refused = false;
	int code;

	if (api_config_show(file, server, &report, &refused, &err) < 0 ||
	    report_write_fd(report, STDOUT_FILENO, &err) < 0)
		code = moat_error_print(&err);
	else /* As --dry-run: 125 when the command would be refused. */
		code = refused ? 125 : 0;
	json_decref(report);
	return code;
}

int cmd_config(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "decode") == 0)
		return toml_decode_stream(stdin, stdout, stderr) == 0 ? 0 : 1;
	if (argc == 3 && strcmp(argv[1], "check") == 0)
		return check(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "show") == 0) {
		const char *server = NULL;
		int i;

		for (i = 3; i < argc; i++) {
			if (strcmp(argv[i], "--server") == 0 && i + 1 < argc && !server)
				server = argv[++i];
			else if (strncmp(argv[i], "--server=", 9) == 0 && !server)
				server = argv[i] + 9;
			else
				return usage();
		}
		return show(argv[2], server);
	}
	return usage();
}
