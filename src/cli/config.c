/* `moat config ...`: how moat reads configuration files.
 *
 *   moat config check FILE                 validate; exit 0 or 125
 *   moat config show FILE [--server NAME]  the effective policy, as --dry-run prints it
 *   moat config decode < FILE.toml         TOML to toml-test's tagged JSON */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "host/host.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "report/report.h"
#include "sources/config.h"
#include "sources/config_common.h"
#include "sources/toml_json.h"

extern char **environ;

static int usage(void)
{
	fprintf(stderr, "moat: usage: moat config check FILE\n"
			"       moat config show FILE [--server NAME]\n"
			"       moat config decode < FILE.toml\n");
	return 125;
}

static int check(const char *file)
{
	struct moat_error err = {0};
	struct moat_config *cfg = NULL;
	int rc;

	if (config_load(file, config_getenv(environ, "HOME"), &cfg, &err) < 0)
		return moat_error_print(&err);
	rc = config_check(cfg, environ, &err);
	if (rc == 0)
		fprintf(stderr, "%s: ok (%zu server%s)\n", file, cfg->n_servers, cfg->n_servers == 1 ? "" : "s");
	config_free(cfg);
	return rc == 0 ? 0 : moat_error_print(&err);
}

/* The report of a dry run (report_build with no run), for one server. */
static int show(const char *file, const char *server)
{
	struct moat_error err = {0};
	struct moat_config *cfg = NULL;
	struct moat_policy policy;
	struct moat_host host;
	struct moat_plan plan;
	struct config_request req = {.server = server, .mode = -1, .env = environ};
	json_t *report = NULL;
	bool have_plan = false;
	int code = 125;

	policy_init(&policy);
	if (config_load(file, config_getenv(environ, "HOME"), &cfg, &err) < 0)
		goto fail;
	if (!server) {
		if (cfg->n_servers != 1) {
			moat_error_set(&err, MOAT_E_USAGE, 0, "%s defines %zu servers; name one with --server NAME",
				       file, cfg->n_servers);
			goto fail;
		}
		req.server = cfg->servers[0].name;
	}
	if (config_build(cfg, &req, &policy, NULL, &err) < 0 || policy_validate(&policy, &err) < 0 ||
	    host_probe(&host, &err) < 0 || plan_build(&policy, &host, &plan, &err) < 0)
		goto fail;
	have_plan = true;
	report = report_build(&policy, &host, &plan, NULL);
	if (report_write_fd(report, STDOUT_FILENO, &err) < 0)
		goto fail;
	/* As --dry-run: 125 when the command would be refused. */
	code = plan.status == MOAT_STATUS_UNAVAILABLE ? 125 : 0;
	goto out;
fail:
	code = moat_error_print(&err);
out:
	json_decref(report);
	if (have_plan) {
		plan_free(&plan);
	}
	policy_free(&policy);
	config_free(cfg);
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
