#include "api/config.h"

#include "host/host.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "report/report.h"
#include "sources/config.h"
#include "sources/config_common.h"

extern char **environ;

int api_config_check(const char *file, size_t *n_servers, struct moat_error *err)
{
	struct moat_config *cfg = NULL;
	int rc;

	if (config_load(file, config_getenv(environ, "HOME"), &cfg, err) < 0)
		return -1;
	rc = config_check(cfg, environ, err);
	*n_servers = cfg->n_servers;
	config_free(cfg);
	return rc;
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
		if (cfg->n_servers != 1) {
			moat_error_set(err, MOAT_E_USAGE, 0, "%s defines %zu servers; name one with --server NAME", file,
				       cfg->n_servers);
			goto out;
		}
		req.server = cfg->servers[0].name;
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
