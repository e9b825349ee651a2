#include "api/config.h"

#include <stdlib.h>
#include <string.h>

#include "host/host.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "report/report.h"
#include "sources/config.h"
#include "sources/config_common.h"
#include "util/cleanup.h"

extern char **environ;

int api_config_check(const char *file, struct api_config_check *out, struct moat_error *err)
{
	struct moat_config *cfg = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (config_load_all(file, config_getenv(environ, "HOME"), &cfg, &out->stopped, err) < 0)
		return -1;
	rc = config_check(cfg, environ, err);
	out->n_servers = config_local_servers(cfg);
	out->problems = steal_ptr(&cfg->problems);
	out->n_problems = cfg->n_problems;
	out->notes = steal_ptr(&cfg->notes);
	out->n_notes = cfg->n_notes;
	cfg->n_problems = cfg->n_notes = 0;
	config_free(cfg);
	return rc;
}

void api_config_check_free(struct api_config_check *out)
{
	size_t i;

	free(out->problems);
	for (i = 0; i < out->n_notes; i++)
		free(out->notes[i]);
	free(out->notes);
	memset(out, 0, sizeof(*out));
}

int api_config_show(const char *file, const char *server, json_t **report, bool *refused, struct moat_error *err)
{
	struct moat_config *cfg = NULL;
	struct moat_policy policy;
	struct moat_host host;
	struct moat_plan plan;
	struct config_request req = {.server = server, .mode = -1, .env = environ};
	int rc = -1;

	*report = NULL;
	*refused = false;
	policy_init(&policy);
	if (config_load(file, config_getenv(environ, "HOME"), &cfg, err) < 0)
		goto out;
	if (!server) {
		size_t i, n = config_local_servers(cfg);

		if (n != 1) {
			char list[1024];

			/* The hint names them: "name one" once left the user to
			 * find the names in the file. */
			config_known_servers(cfg, list, sizeof(list));
			moat_error_set(err, MOAT_E_USAGE, 0, "%s defines %zu servers%s; name one with --server NAME",
				       file, n, n < cfg->n_servers ? " moat can run" : "");
			if (n > 1)
				moat_error_hint(err, "its servers: %s", list);
			goto out;
		}
		for (i = 0; cfg->servers[i].skip; i++)
			;
		req.server = cfg->servers[i].name;
	}
	if (config_build(cfg, &req, &policy, NULL, err) < 0 || policy_validate(&policy, err) < 0 ||
	    host_probe(&host, err) < 0 || plan_build(&policy, &host, &plan, err) < 0)
		goto out;
	*report = report_build(&policy, &host, &plan, NULL);
	*refused = plan.status == MOAT_STATUS_UNAVAILABLE;
	plan_free(&plan);
	rc = 0;
out:
	policy_free(&policy);
	config_free(cfg);
	return rc;
}
