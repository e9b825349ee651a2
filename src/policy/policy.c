#include "policy/policy.h"

#include <string.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "policy/netdest.h"
#include "policy/properties.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/mem.h"

void policy_init(struct moat_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->mode = MOAT_MODE_REQUIRE;
	p->net = MOAT_NET_NONE;
	p->backend = moat_xstrdup("auto");
	p->secrets_masked = true;
	limits_init(&p->limits);
}

void limits_init(struct moat_limits *l)
{
	*l = (struct moat_limits){.memory_bytes = MOAT_LIMIT_UNSET,
				  .pids = MOAT_LIMIT_UNSET,
				  .cpu_seconds = MOAT_LIMIT_UNSET,
				  .address_space_bytes = MOAT_LIMIT_UNSET,
				  .files = MOAT_LIMIT_UNSET,
				  .tmp_bytes = MOAT_LIMIT_UNSET};
}

void limits_overlay(struct moat_limits *base, const struct moat_limits *over)
{
	int64_t *const dst[] = {&base->memory_bytes, &base->pids, &base->cpu_seconds, &base->address_space_bytes,
				&base->files, &base->tmp_bytes};
	const int64_t src[] = {over->memory_bytes, over->pids, over->cpu_seconds, over->address_space_bytes,
			       over->files, over->tmp_bytes};
	size_t i;

	for (i = 0; i < sizeof(src) / sizeof(src[0]); i++)
		if (src[i] != MOAT_LIMIT_UNSET)
			*dst[i] = src[i];
	if (over->timeout_s > 0)
		base->timeout_s = over->timeout_s;
}

void policy_free(struct moat_policy *p)
{
	size_t i;

	free(p->profile);
	free(p->backend);
	for (i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	free(p->exe);
	free(p->cwd);
	for (i = 0; i < p->n_paths; i++)
		free(p->paths[i].path);
	free(p->paths);
	for (i = 0; i < p->n_unprotect; i++)
		free(p->unprotect[i].path);
	free(p->unprotect);
	for (i = 0; i < p->n_env; i++) {
		free(p->env[i].name);
		free(p->env[i].value);
	}
	free(p->env);
	free(p->keep_fds);
	for (i = 0; i < p->n_net_allow; i++)
		net_dest_free(&p->net_allow[i]);
	free(p->net_allow);
	for (i = 0; i < p->n_net_pins; i++)
		net_pin_free(&p->net_pins[i]);
	free(p->net_pins);
	for (i = 0; i < p->n_terminal; i++)
		free(p->terminal[i].path);
	free(p->git_work_tree);
	free(p->git_dir_outside);
	free(p->git_dir_unlinked);
	git_config_free(p->git_config);
	for (i = 0; i < p->n_pkg_caches; i++) {
		free(p->pkg_caches[i].tool);
		free(p->pkg_caches[i].var);
		free(p->pkg_caches[i].path);
	}
	free(p->pkg_caches);
	memset(p, 0, sizeof(*p));
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void git_config_clear(struct moat_git_config *g)
{
	free(g->text);
	free_strv(g->files, g->n_files);
	free_strv(g->kept, g->n_kept);
	free_strv(g->dropped, g->n_dropped);
	free(g->header);
	memset(g, 0, sizeof(*g));
}

void git_config_free(struct moat_git_config *g)
{
	if (!g)
		return;
	git_config_clear(g);
	free(g);
}

void policy_add_net_dest(struct moat_policy *p, struct moat_net_dest *d)
{
	p->net_allow = moat_xgrow(p->net_allow, &p->cap_net_allow, p->n_net_allow, sizeof(*p->net_allow));
	p->net_allow[p->n_net_allow++] = *d;
	memset(d, 0, sizeof(*d));
}

void policy_add_net_pin(struct moat_policy *p, struct moat_net_pin *pin)
{
	p->net_pins = moat_xgrow(p->net_pins, &p->cap_net_pins, p->n_net_pins, sizeof(*p->net_pins));
	p->net_pins[p->n_net_pins++] = *pin;
	memset(pin, 0, sizeof(*pin));
}

void policy_add_path(struct moat_policy *p, const char *abs_path, enum moat_access access, bool optional,
		     struct moat_origin origin)
{
	struct moat_path_rule *r;

	p->paths = moat_xgrow(p->paths, &p->cap_paths, p->n_paths, sizeof(*p->paths));
	r = &p->paths[p->n_paths++];
	memset(r, 0, sizeof(*r));
	/* Tidied here, whoever built it (a HOME of /a//home, a CA
	 * variable): planning compares rules by their text (is this deny
	 * inside that grant?), and /a//home/.ssh is not inside /a/home.  A
	 * ".." stays, for the plan's walk to resolve as the kernel does. */
	r->path = path_is_normalised(abs_path) || abs_path[0] != '/' ? moat_xstrdup(abs_path) : path_tidy(abs_path);
	r->access = access;
	r->optional = optional;
	r->origin = origin;
}

void policy_path_bind(struct moat_path_rule *r, const struct stat *st)
{
	r->bound = true;
	r->bound_dir = S_ISDIR(st->st_mode);
	r->bound_dev = st->st_dev;
	r->bound_ino = st->st_ino;
}

void policy_add_unprotect(struct moat_policy *p, const char *abs_path, struct moat_origin origin)
{
	struct moat_path_rule *r;

	p->unprotect = moat_xgrow(p->unprotect, &p->cap_unprotect, p->n_unprotect, sizeof(*p->unprotect));
	r = &p->unprotect[p->n_unprotect++];
	memset(r, 0, sizeof(*r));
	r->path = path_is_normalised(abs_path) || abs_path[0] != '/' ? moat_xstrdup(abs_path) : path_tidy(abs_path);
	r->origin = origin;
}

void policy_add_env(struct moat_policy *p, const char *name, const char *value, struct moat_origin origin)
{
	struct moat_env_rule *r;

	p->env = moat_xgrow(p->env, &p->cap_env, p->n_env, sizeof(*p->env));
	r = &p->env[p->n_env++];
	r->name = moat_xstrdup(name);
	r->value = value ? moat_xstrdup(value) : NULL;
	r->origin = origin;
}

void policy_add_pkg_cache(struct moat_policy *p, const char *tool, const char *var, const char *path)
{
	struct moat_pkg_cache *c;

	p->pkg_caches = moat_xgrow(p->pkg_caches, &p->cap_pkg_caches, p->n_pkg_caches, sizeof(*p->pkg_caches));
	c = &p->pkg_caches[p->n_pkg_caches++];
	c->tool = moat_xstrdup(tool);
	c->var = moat_xstrdup(var);
	c->path = moat_xstrdup(path);
}

void policy_add_keep_fd(struct moat_policy *p, int fd)
{
	size_t i;

	for (i = 0; i < p->n_keep_fds; i++)
		if (p->keep_fds[i] == fd)
			return;
	p->keep_fds = moat_xgrow(p->keep_fds, &p->cap_keep_fds, p->n_keep_fds, sizeof(*p->keep_fds));
	p->keep_fds[p->n_keep_fds++] = fd;
}

void policy_set_argv(struct moat_policy *p, char *const *argv, size_t argc)
{
	size_t i;

	for (i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	p->argv = moat_xcalloc(argc + 1, sizeof(char *));
	for (i = 0; i < argc; i++)
		p->argv[i] = moat_xstrdup(argv[i]);
	p->argc = argc;
}

void policy_set_terminal(struct moat_policy *p, const char *pty_path)
{
	const char *paths[] = {"/dev/tty", pty_path};
	size_t i;

	for (i = 0; i < p->n_terminal; i++)
		free(p->terminal[i].path);
	/* Read and write, with the ioctls of a terminal (Landlock grants
	 * device ioctls with write: kernel/landlock.c).  /dev/tty opens the
	 * opener's controlling terminal: the command's own pty. */
	for (i = 0; i < ARRAY_LEN(paths); i++)
		p->terminal[i] = (struct moat_path_rule){.path = moat_xstrdup(paths[i]),
							 .access = MOAT_ACCESS_WRITE,
							 .from_profile = true,
							 .origin = {.source = "the command's terminal"}};
	p->n_terminal = ARRAY_LEN(paths);
}

const struct moat_env_rule *policy_find_env(const struct moat_policy *p, const char *name)
{
	size_t i;

	for (i = p->n_env; i-- > 0;)
		if (strcmp(p->env[i].name, name) == 0)
			return &p->env[i];
	return NULL;
}

bool moat_origin_is_command_line(const struct moat_origin *o)
{
	return o->line <= 0 && o->source && strcmp(o->source, MOAT_ORIGIN_COMMAND_LINE) == 0;
}

const char *moat_origin_text(const struct moat_origin *o, char *buf, size_t len)
{
	if (o->line > 0)
		snprintf(buf, len, "%s:%d:%d", o->source, o->line, o->col);
	else
		snprintf(buf, len, "%s", o->source ? o->source : "policy");
	return buf;
}

/* What a private range is, for a person: net_dest_private_range's text. */
static const char *private_range_what(const char *range)
{
	static const char *const loopback[] = {"localhost", "127.0.0.0/8", "::1/128"};
	static const char *const link_local[] = {"169.254.0.0/16", "fe80::/10"};

	for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
		if (strcmp(range, loopback[i]) == 0)
			return "the host's own loopback";
	for (size_t i = 0; i < sizeof(link_local) / sizeof(link_local[0]); i++)
		if (strcmp(range, link_local[i]) == 0)
			return "link-local, where the cloud's metadata endpoint is";
	if (strcmp(range, "0.0.0.0/8") == 0 || strcmp(range, "::/128") == 0)
		return "the unspecified address: this host";
	return "a private or reserved range";
}

int policy_check_project_net(const struct moat_policy *p, struct moat_error *err)
{
	for (size_t i = 0; i < p->n_net_allow && p->mode != MOAT_MODE_OFF; i++) {
		const struct moat_net_dest *d = &p->net_allow[i];
		const char *range = d->project ? net_dest_private_range(d) : NULL;
		const char *set = d->from ? d->from : "the allowlist";
		int set_len = (int)(d->from ? strcspn(set, " ") : strlen(set)); /* "@npm (FILE:LINE)": @npm */

		if (!range || net_dest_user_allows(p, d))
			continue;
		moat_error_set(err, MOAT_E_CONFIG, 0,
			       "%s: a registry at %s (%s: %s): a file of the project (a repository you may just have "
			       "cloned) does not open %.*s to this host, its network or the cloud's metadata endpoint",
			       d->project, d->text, range, private_range_what(range), set_len, set);
		return moat_error_hint(err,
				       "if you trust that registry, allow it yourself: --allow-net %s (config "
				       "network.allow), or name it in ~/.npmrc; otherwise remove that line",
				       d->text);
	}
	return 0;
}

/* The allowlist and the network mode: entries mean net allow, and net
 * allow means entries.  --net all or none (or loopback) with entries is a
 * contradiction, whichever layer set them: the user says which he meant. */
static int validate_net(const struct moat_policy *p, struct moat_error *err)
{
	char where[512];
	size_t i;

	if (p->net == MOAT_NET_ALLOW && p->n_net_allow == 0) {
		moat_error_set(err, MOAT_E_USAGE, 0, "net allow without destinations: nothing to allow");
		return moat_error_hint(err, "name them with --allow-net DEST (config: network.allow), or use --net none");
	}
	if (p->net != MOAT_NET_ALLOW && p->n_net_allow > 0) {
		const struct moat_net_dest *d = &p->net_allow[0];

		moat_error_set(err, MOAT_E_USAGE, 0, "%s: allowed destination %s%s%s contradicts net %s",
			       moat_origin_text(&d->origin, where, sizeof(where)), d->text, d->from ? " from " : "",
			       d->from ? d->from : "", moat_net_name(p->net));
		if (p->net == MOAT_NET_ALL)
			return moat_error_hint(err, "drop --net all (net = \"all\") to allow only the listed "
						    "destinations, or drop the destinations to open the whole network");
		if (p->net == MOAT_NET_LOOPBACK)
			return moat_error_hint(err, "drop --net loopback: the allowlist implies net allow (a service "
						    "on the host's loopback is localhost:PORT)");
		return moat_error_hint(err, "drop --net none (net = \"none\"): the allowlist implies net allow, "
					    "or drop the destinations");
	}
	for (i = 0; i < p->n_net_pins; i++) {
		const struct moat_net_pin *pin = &p->net_pins[i];

		/* A proxy-only name may be pinned: the pin is what the proxy
		 * mode connects to for it. */
		if (!net_allow_name_any_port_via(p, pin->name, true)) {
			moat_error_set(err, MOAT_E_USAGE, 0, "%s: the pinned name %s is not in the allowlist",
				       moat_origin_text(&pin->origin, where, sizeof(where)), pin->name);
			return moat_error_hint(err, "allow it too (--allow-net %s, config network.allow), or drop the pin",
					       pin->name);
		}
	}
	return policy_check_project_net(p, err);
}

/* Properties required (--require, config require) with nothing to
 * enforce them: mode off and backend none run the command unsandboxed, so
 * the requirement could only be dropped silently. */
static int validate_require(const struct moat_policy *p, struct moat_error *err)
{
	char names[400];
	size_t o = 0;
	bool off = p->mode == MOAT_MODE_OFF;
	int i;

	if (!p->require || (!off && strcmp(p->backend, "none") != 0))
		return 0;
	names[0] = '\0';
	for (i = 0; i < MOAT_P__COUNT && o < sizeof(names); i++)
		if (p->require & MOAT_PBIT(i))
			o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", o ? "," : "",
					      moat_property_name((enum moat_property)i));
	moat_error_set(err, MOAT_E_USAGE, 0,
		       "%s contradicts --require %s: it runs the command unsandboxed, enforcing "
		       "nothing",
		       off ? "--mode off" : "--backend none", names);
	return moat_error_hint(err, "drop %s to have %s enforced, or drop --require (in a config: %s, require)",
			       off ? "--mode off" : "--backend none", names, off ? "mode" : "backend");
}

int policy_validate(const struct moat_policy *p, struct moat_error *err)
{
	char where[512];
	size_t i, j;

	if (p->argc == 0 || !p->argv || !p->argv[0] || p->argv[0][0] == '\0')
		return moat_error_set(err, MOAT_E_USAGE, 0, "empty command: nothing to run");

	/* A path that is both writable and denied is a contradiction the user
	 * must resolve; guessing either way would surprise someone. */
	for (i = 0; i < p->n_paths; i++) {
		if (p->paths[i].access != MOAT_ACCESS_WRITE)
			continue;
		for (j = 0; j < p->n_paths; j++) {
			if (p->paths[j].access != MOAT_ACCESS_DENY || p->paths[j].optional)
				continue;
			if (strcmp(p->paths[i].path, p->paths[j].path) == 0) {
				moat_error_set(err, MOAT_E_USAGE, 0, "%s: path %s is both writable and denied",
					       moat_origin_text(&p->paths[i].origin, where, sizeof(where)),
					       p->paths[i].path);
				return moat_error_hint(err, "remove it from one of the two lists");
			}
		}
	}
	if (validate_require(p, err) < 0)
		return -1;
	return validate_net(p, err);
}

const char *moat_mode_name(enum moat_mode m)
{
	switch (m) {
	case MOAT_MODE_REQUIRE:
		return "require";
	case MOAT_MODE_PREFER:
		return "prefer";
	case MOAT_MODE_OFF:
		return "off";
	}
	return "?";
}

int moat_mode_parse(const char *s, enum moat_mode *out)
{
	if (strcmp(s, "require") == 0)
		*out = MOAT_MODE_REQUIRE;
	else if (strcmp(s, "prefer") == 0)
		*out = MOAT_MODE_PREFER;
	else if (strcmp(s, "off") == 0)
		*out = MOAT_MODE_OFF;
	else
		return -1;
	return 0;
}

const char *moat_net_name(enum moat_net n)
{
	switch (n) {
	case MOAT_NET_NONE:
		return "none";
	case MOAT_NET_LOOPBACK:
		return "loopback";
	case MOAT_NET_ALL:
		return "all";
	case MOAT_NET_ALLOW:
		return "allow";
	}
	return "?";
}

int moat_net_parse(const char *s, enum moat_net *out)
{
	if (strcmp(s, "none") == 0)
		*out = MOAT_NET_NONE;
	else if (strcmp(s, "loopback") == 0)
		*out = MOAT_NET_LOOPBACK;
	else if (strcmp(s, "all") == 0)
		*out = MOAT_NET_ALL;
	else if (strcmp(s, "allow") == 0)
		*out = MOAT_NET_ALLOW;
	else
		return -1;
	return 0;
}

const char *moat_access_name(enum moat_access a)
{
	switch (a) {
	case MOAT_ACCESS_READ:
		return "read";
	case MOAT_ACCESS_WRITE:
		return "write";
	case MOAT_ACCESS_DENY:
		return "deny";
	}
	return "?";
}

const char *moat_tty_name(enum moat_tty t)
{
	switch (t) {
	case MOAT_TTY_AUTO:
		return "auto";
	case MOAT_TTY_ON:
		return "on";
	case MOAT_TTY_OFF:
		return "off";
	}
	return "?";
}
