/* The schema of configuration files (docs/config.md): the tree from the
 * TOML parser (or from JSON, converted to the same shape) is checked key by
 * key against one schema and compiled into struct moat_config.  Nothing
 * here touches the host. */
#include "sources/config_schema.h"

#include "policy/backend_names.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/properties.h"
#include "policy/env.h"
#include "policy/netdest.h"
#include "sources/netsets.h"
#include "policy/profiles.h"
#include "sources/config_common.h"
#include "sources/size.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

/* ---- the schema ---- */

static const char *const top_keys[] = {"mcp_servers", "mcpServers", "sandbox", "profiles", NULL};
static const char *const server_keys[] = {
    "command",		 "args",    "env",  "env_vars", "cwd", "optional", "install_hint",
    "trusted_publisher", "sandbox", "type", NULL};
static const char *const sandbox_keys[] = {"backend", "mode",	"profile",  "read",	"write",
					   "deny",    "unprotect", "unix_sockets", "net",	"network", "env_pass",
					   "require", "memory",	"pids",	    "files",	"cpu",
					   "address_space", "tmp_size", "timeout", NULL};
static const char *const profile_keys[] = {"extends", "backend",   "mode",	   "read",   "write",
					   "deny",    "unprotect", "unix_sockets", "net",    "network", "env_pass",
					   "require", "memory",	   "pids",	   "files",  "cpu",
					   "address_space", "tmp_size", "timeout", NULL};
static const char *const mode_names[] = {"require", "prefer", "off", NULL};
static const char *const net_names[] = {"none", "loopback", "all", "allow", NULL};
static const char *const network_keys[] = {"allow", "resolve", NULL};
/* Kept in step with src/policy/profiles.c (profile_apply refuses others). */
static const char *const builtin_profiles[] = {"strict", "exec", "mcp", "network", NULL};

static bool in_list(const char *word, const char *const *list)
{
	size_t i;

	for (i = 0; list[i]; i++)
		if (strcmp(word, list[i]) == 0)
			return true;
	return false;
}

/* "a, b, c" */
static char *join_plain(const char *const *list)
{
	size_t i, n = 1;
	char *out;

	for (i = 0; list[i]; i++)
		n += strlen(list[i]) + 2;
	out = moat_xmalloc(n);
	out[0] = '\0';
	for (i = 0; list[i]; i++) {
		if (i)
			strcat(out, ", ");
		strcat(out, list[i]);
	}
	return out;
}

/* "\"a\", \"b\" or \"c\"" */
static char *join_quoted(const char *const *list)
{
	size_t i, n = 1, count;
	char *out;

	for (count = 0; list[count]; count++)
		n += strlen(list[count]) + 6;
	out = moat_xmalloc(n);
	out[0] = '\0';
	for (i = 0; i < count; i++) {
		if (i)
			strcat(out, i + 1 == count ? " or " : ", ");
		strcat(out, "\"");
		strcat(out, list[i]);
		strcat(out, "\"");
	}
	return out;
}

/* ---- the loader ---- */

struct loader {
	struct moat_config *c;
	const char *home;
	struct moat_error *err;
};

static struct moat_origin at(const struct loader *L, struct toml_pos pos)
{
	return (struct moat_origin){.source = L->c->file, .line = pos.line, .col = pos.col};
}

static int fail(const struct loader *L, struct toml_pos pos, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(const struct loader *L, struct toml_pos pos, const char *key, const char *fmt, ...)
{
	struct moat_origin o = at(L, pos);
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return config_fail(L->err, &o, key, "%s", msg);
}

/* Type names as the file's own format calls them. */
static const char *type_phrase(const struct loader *L, enum toml_type t)
{
	if (L->c->json) {
		switch (t) {
		case TOML_TABLE:
			return "an object";
		case TOML_BOOL:
			return "a boolean";
		case TOML_INTEGER:
		case TOML_FLOAT:
			return "a number";
		default:
			break;
		}
	}
	switch (t) {
	case TOML_STRING:
		return "a string";
	case TOML_INTEGER:
		return "an integer";
	case TOML_FLOAT:
		return "a float";
	case TOML_BOOL:
		return "a bool";
	case TOML_DATETIME:
		return "a datetime";
	case TOML_DATETIME_LOCAL:
		return "a local datetime";
	case TOML_DATE_LOCAL:
		return "a local date";
	case TOML_TIME_LOCAL:
		return "a local time";
	case TOML_ARRAY:
		return "an array";
	case TOML_TABLE:
		return "a table";
	}
	return "a value";
}

static const char *table_word(const struct loader *L)
{
	return L->c->json ? "an object" : "a table";
}

static int wrong_type(const struct loader *L, const struct toml_value *v, const char *key, const char *expected)
{
	return fail(L, v->pos, key, "expected %s, got %s", expected, type_phrase(L, v->type));
}

static int check_keys(const struct loader *L, const struct toml_value *t, const char *key, const char *const *known)
{
	size_t i;

	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = NULL, *list = NULL;
		const char *s;

		if (kv->key_len == strlen(kv->key) && in_list(kv->key, known))
			continue;
		kp = config_keypath(key, kv->key, kv->key_len);
		list = join_plain(known);
		fail(L, kv->pos, kp, "unknown key; expected one of %s", list);
		if ((s = config_suggest(kv->key, known)))
			moat_error_hint(L->err, "did you mean '%s'?", s);
		return -1;
	}
	return 0;
}

/* A string without NUL bytes (they would cut it short in C). */
static int get_string(const struct loader *L, const struct toml_value *v, const char *key, const char *expected,
		      const char **out)
{
	if (v->type != TOML_STRING)
		return wrong_type(L, v, key, expected);
	if (strlen(v->u.str.ptr) != v->u.str.len)
		return fail(L, v->pos, key, "expected %s without NUL characters", expected);
	*out = v->u.str.ptr;
	return 0;
}

static int get_nonempty(const struct loader *L, const struct toml_value *v, const char *key, const char *expected,
			const char **out)
{
	if (get_string(L, v, key, expected, out) < 0)
		return -1;
	if (!**out)
		return fail(L, v->pos, key, "expected %s, got an empty string", expected);
	return 0;
}

static int get_enum(const struct loader *L, const struct toml_value *v, const char *key, const char *const *names,
		    size_t *index)
{
	cleanup_free char *list = join_quoted(names);
	const char *s, *sug;
	size_t i;

	if (v->type != TOML_STRING)
		return fail(L, v->pos, key, "expected %s, got %s", list, type_phrase(L, v->type));
	s = v->u.str.ptr;
	for (i = 0; names[i]; i++)
		if (strcmp(s, names[i]) == 0 && strlen(s) == v->u.str.len) {
			*index = i;
			return 0;
		}
	fail(L, v->pos, key, "expected %s, got \"%s\"", list, s);
	if ((sug = config_suggest(s, names)))
		moat_error_hint(L->err, "did you mean \"%s\"?", sug);
	return -1;
}

static int get_array(const struct loader *L, const struct toml_value *v, const char *key, const char *expected)
{
	if (v->type != TOML_ARRAY)
		return wrong_type(L, v, key, expected);
	return 0;
}

static char *resolve_path(const struct loader *L, const struct toml_value *v, const char *key, const char *s)
{
	char *abs = path_resolve_lexical(s, L->c->dir, L->home);

	if (!abs)
		fail(L, v->pos, key, "cannot expand \"%s\": HOME is not set", s);
	return abs;
}

static int load_paths_into(const struct loader *L, struct config_path **list, size_t *n, const struct toml_value *v,
			   const char *key, enum moat_access access)
{
	const char *what = "an array of paths (strings)";
	size_t i;

	if (get_array(L, v, key, what) < 0)
		return -1;
	for (i = 0; i < toml_array_len(v); i++) {
		const struct toml_value *item = toml_array_at(v, i);
		struct config_path *r;
		const char *s;
		char *abs;

		if (item->type != TOML_STRING)
			return fail(L, item->pos, key, "expected %s, got %s in the array", what,
				    type_phrase(L, item->type));
		if (get_nonempty(L, item, key, "a path", &s) < 0)
			return -1;
		if (!(abs = resolve_path(L, item, key, s)))
			return -1;
		*list = moat_xrealloc(*list, (*n + 1) * sizeof(**list));
		r = &(*list)[(*n)++];
		r->path = abs;
		r->access = access;
		r->key = moat_xstrdup(key);
		r->origin = at(L, item->pos);
	}
	return 0;
}

static int load_paths(const struct loader *L, struct config_layer *layer, const struct toml_value *v, const char *key,
		      enum moat_access access)
{
	return load_paths_into(L, &layer->paths, &layer->n_paths, v, key, access);
}

/* Variable names for pass-through (`env_pass`, `env_vars`): valid, and
 * never a loader or interpreter hook, as with --env-pass. */
static int load_names(const struct loader *L, const struct toml_value *v, const char *key, struct config_name **list,
		      size_t *n)
{
	const char *what = "an array of variable names";
	size_t i;

	if (get_array(L, v, key, what) < 0)
		return -1;
	for (i = 0; i < toml_array_len(v); i++) {
		const struct toml_value *item = toml_array_at(v, i);
		struct config_name *e;
		const char *s;

		if (item->type != TOML_STRING)
			return fail(L, item->pos, key, "expected %s, got %s in the array", what,
				    type_phrase(L, item->type));
		if (get_string(L, item, key, "a variable name", &s) < 0)
			return -1;
		if (!env_name_valid(s))
			return fail(L, item->pos, key, "expected a variable name ([A-Za-z_][A-Za-z0-9_]*), got \"%s\"",
				    s);
		if (env_is_hook(s)) {
			fail(L, item->pos, key, "refusing to pass the loader or interpreter hook %s through", s);
			return moat_error_hint(L->err,
					       "it would run code before the program's own; if it is really wanted, "
					       "give its value on the command line: --env %s=VALUE",
					       s);
		}
		*list = moat_xrealloc(*list, (*n + 1) * sizeof(**list));
		e = &(*list)[(*n)++];
		e->name = moat_xstrdup(s);
		e->key = moat_xstrdup(key);
		e->origin = at(L, item->pos);
	}
	return 0;
}

static int load_require(const struct loader *L, struct config_layer *layer, const struct toml_value *v, const char *key)
{
	const char *names[MOAT_P__COUNT + 1];
	const char *what = "an array of property names";
	size_t i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		names[i] = moat_property_name((enum moat_property)i);
	names[MOAT_P__COUNT] = NULL;
	if (get_array(L, v, key, what) < 0)
		return -1;
	for (i = 0; i < toml_array_len(v); i++) {
		const struct toml_value *item = toml_array_at(v, i);
		const char *s, *sug;
		int prop;

		if (item->type != TOML_STRING)
			return fail(L, item->pos, key, "expected %s, got %s in the array", what,
				    type_phrase(L, item->type));
		if (get_string(L, item, key, "a property name", &s) < 0)
			return -1;
		prop = moat_property_parse(s);
		if (prop < 0) {
			fail(L, item->pos, key, "expected a property name (fs.read, net.none, ...), got \"%s\"", s);
			if ((sug = config_suggest(s, names)))
				return moat_error_hint(L->err, "did you mean \"%s\"?", sug);
			return moat_error_hint(L->err, "see `moat help properties` for the names");
		}
		layer->require |= MOAT_PBIT(prop);
	}
	return 0;
}

static int load_limit(const struct loader *L, struct config_layer *layer, const char *name, const struct toml_value *v,
		      const char *key)
{
	struct moat_limits *lim = &layer->limits;
	int64_t *size_slot = strcmp(name, "memory") == 0	? &lim->memory_bytes
			     : strcmp(name, "address_space") == 0 ? &lim->address_space_bytes
			     : strcmp(name, "tmp_size") == 0	? &lim->tmp_bytes
								: NULL;

	if (size_slot) {
		const char *what = "a size of at least 1M (e.g. \"512M\", \"2G\") or a number of bytes";
		int64_t bytes = -1;

		if (v->type == TOML_STRING) {
			if (moat_parse_size(v->u.str.ptr, &bytes) < 0 || strlen(v->u.str.ptr) != v->u.str.len)
				bytes = -1;
		} else if (v->type == TOML_INTEGER) {
			bytes = v->u.integer;
		} else {
			return wrong_type(L, v, key, what);
		}
		if (bytes < (1 << 20)) {
			if (v->type == TOML_STRING)
				return fail(L, v->pos, key, "expected %s, got \"%s\"", what, v->u.str.ptr);
			return fail(L, v->pos, key, "expected %s, got %lld", what, (long long)v->u.integer);
		}
		*size_slot = bytes;
		return 0;
	}
	if (strcmp(name, "timeout") == 0) {
		const char *what = "a positive number of seconds";
		double t;

		if (v->type == TOML_INTEGER)
			t = (double)v->u.integer;
		else if (v->type == TOML_FLOAT)
			t = v->u.flt;
		else
			return wrong_type(L, v, key, what);
		if (!isfinite(t) || t <= 0 || t > 1e9)
			return fail(L, v->pos, key, "expected %s, got %g", what, t);
		lim->timeout_s = t;
		return 0;
	}
	if (v->type != TOML_INTEGER)
		return wrong_type(L, v, key, "a positive whole number");
	if (v->u.integer < 1)
		return fail(L, v->pos, key, "expected a positive whole number, got %lld", (long long)v->u.integer);
	if (strcmp(name, "pids") == 0)
		lim->pids = v->u.integer;
	else if (strcmp(name, "files") == 0)
		lim->files = v->u.integer;
	else
		lim->cpu_seconds = v->u.integer;
	return 0;
}

/* network.allow (destinations and sets) and network.resolve ("NAME=IP"
 * pins): arrays of strings, each parsed as --allow-net and --resolve parse
 * theirs.  A set is kept by name, for config_build to expand. */
static int load_net_list(const struct loader *L, struct config_layer *layer, const struct toml_value *v,
			 const char *key, bool pins)
{
	const char *what = pins ? "an array of \"NAME=IP\" strings" : "an array of destinations (strings)";
	size_t i;

	if (get_array(L, v, key, what) < 0)
		return -1;
	for (i = 0; i < toml_array_len(v); i++) {
		const struct toml_value *item = toml_array_at(v, i);
		struct net_parse_error pe;
		struct moat_net_dest d;
		struct moat_net_pin pin;
		const char *s;
		int rc;

		if (item->type != TOML_STRING)
			return fail(L, item->pos, key, "expected %s, got %s in the array", what,
				    type_phrase(L, item->type));
		if (get_string(L, item, key, pins ? "\"NAME=IP\"" : "a destination", &s) < 0)
			return -1;
		if (!pins && netset_named(s)) {
			unsigned mask;
			struct config_netset *ns;

			if (netset_parse(s, &mask, &pe) < 0) {
				fail(L, item->pos, key, "%s", pe.msg);
				return moat_error_hint(L->err, "%s", pe.hint);
			}
			layer->net_sets = moat_xrealloc(layer->net_sets, (layer->n_net_sets + 1) * sizeof(*ns));
			ns = &layer->net_sets[layer->n_net_sets++];
			*ns = (struct config_netset){.mask = mask,
						     .text = moat_xstrdup(s),
						     .key = moat_xstrdup(key),
						     .origin = at(L, item->pos)};
			continue;
		}
		rc = pins ? net_pin_parse(s, &pin, &pe) : net_dest_parse(s, &d, &pe);
		if (rc < 0) {
			fail(L, item->pos, key, "\"%s\": %s", s, pe.msg);
			return pe.hint[0] ? moat_error_hint(L->err, "%s", pe.hint) : -1;
		}
		if (pins) {
			pin.origin = at(L, item->pos);
			layer->net_pins = moat_xrealloc(layer->net_pins, (layer->n_net_pins + 1) * sizeof(pin));
			layer->net_pins[layer->n_net_pins++] = pin;
		} else {
			d.origin = at(L, item->pos);
			layer->net_allow = moat_xrealloc(layer->net_allow, (layer->n_net_allow + 1) * sizeof(d));
			layer->net_allow[layer->n_net_allow++] = d;
		}
	}
	return 0;
}

static int load_network(const struct loader *L, struct config_layer *layer, const struct toml_value *t,
			const char *key)
{
	size_t i;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, key,
				  L->c->json ? "an object (allow, resolve)" : "a table (allow, resolve)");
	if (check_keys(L, t, key, network_keys) < 0)
		return -1;
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);

		if (load_net_list(L, layer, kv->value, kp, strcmp(kv->key, "resolve") == 0) < 0)
			return -1;
	}
	return 0;
}

static void layer_init(struct config_layer *l)
{
	memset(l, 0, sizeof(*l));
	limits_init(&l->limits);
}

/* A sandbox table (`profile` allowed) or a profile table (`extends`). */
static int load_layer(const struct loader *L, struct config_layer *layer, const struct toml_value *t, const char *key,
		      bool is_profile)
{
	size_t i, idx;

	layer_init(layer);
	layer->present = true;
	layer->key = moat_xstrdup(key);
	layer->origin = at(L, t->pos);
	if (t->type != TOML_TABLE)
		return wrong_type(L, t, key, table_word(L));
	if (check_keys(L, t, key, is_profile ? profile_keys : sandbox_keys) < 0)
		return -1;
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		const struct toml_value *v = kv->value;
		cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);
		const char *k = kv->key, *s;
		int rc = 0;

		if (strcmp(k, "backend") == 0) {
			if ((rc = get_enum(L, v, kp, policy_backend_names(), &idx)) == 0)
				layer->backend = moat_xstrdup(policy_backend_names()[idx]);
		} else if (strcmp(k, "mode") == 0) {
			if ((rc = get_enum(L, v, kp, mode_names, &idx)) == 0) {
				layer->has_mode = true;
				moat_mode_parse(mode_names[idx], &layer->mode);
			}
		} else if (strcmp(k, "net") == 0) {
			if ((rc = get_enum(L, v, kp, net_names, &idx)) == 0) {
				layer->has_net = true;
				moat_net_parse(net_names[idx], &layer->net);
			}
		} else if (strcmp(k, "network") == 0) {
			rc = load_network(L, layer, v, kp);
		} else if (strcmp(k, "profile") == 0 || strcmp(k, "extends") == 0) {
			if ((rc = get_nonempty(L, v, kp, "a profile name", &s)) == 0) {
				layer->profile = moat_xstrdup(s);
				layer->profile_origin = at(L, v->pos);
			}
		} else if (strcmp(k, "read") == 0) {
			rc = load_paths(L, layer, v, kp, MOAT_ACCESS_READ);
		} else if (strcmp(k, "write") == 0) {
			rc = load_paths(L, layer, v, kp, MOAT_ACCESS_WRITE);
		} else if (strcmp(k, "deny") == 0) {
			rc = load_paths(L, layer, v, kp, MOAT_ACCESS_DENY);
		} else if (strcmp(k, "unprotect") == 0) {
			rc = load_paths_into(L, &layer->unprotect, &layer->n_unprotect, v, kp, MOAT_ACCESS_WRITE);
		} else if (strcmp(k, "unix_sockets") == 0) {
			if (v->type != TOML_BOOL)
				rc = wrong_type(L, v, kp, L->c->json ? "true or false" : "true or false (a bool)");
			else
				layer->has_unix_sockets = true, layer->unix_sockets = v->u.boolean;
		} else if (strcmp(k, "env_pass") == 0) {
			rc = load_names(L, v, kp, &layer->env_pass, &layer->n_env_pass);
		} else if (strcmp(k, "require") == 0) {
			rc = load_require(L, layer, v, kp);
		} else {
			rc = load_limit(L, layer, k, v, kp);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int load_env(const struct loader *L, struct config_server *srv, const struct toml_value *t, const char *key)
{
	size_t i;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, key, L->c->json ? "an object of variables" : "a table of variables");
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);
		struct config_env *e;
		const char *val;
		size_t bad_at = 0, bad_len = 0;

		if (kv->key_len != strlen(kv->key) || !env_name_valid(kv->key))
			return fail(L, kv->pos, kp, "expected a variable name ([A-Za-z_][A-Za-z0-9_]*) as the key");
		/* A hook runs code before the program's own -- and in the
		 * sandbox tool itself, which runs outside the sandbox, when a
		 * backend's tool got the command's environment.  A config file
		 * is often a repository's (.mcp.json), written by whoever wrote
		 * the repository: only the command line may set one. */
		if (env_is_hook(kv->key)) {
			fail(L, kv->pos, kp, "refusing the loader or interpreter hook %s from a config file", kv->key);
			return moat_error_hint(L->err,
					       "it would run code before the program's own; remove it from the file, and "
					       "if it is really wanted give it on the command line: --env %s=VALUE",
					       kv->key);
		}
		if (get_string(L, kv->value, kp, "a string", &val) < 0)
			return -1;
		if (config_expand_vars(val, NULL, NULL, NULL, &bad_at, &bad_len) < 0) {
			fail(L, kv->value->pos, kp,
			     "bad variable reference \"%.*s\"; expected $NAME, ${NAME} or $$ (a "
			     "literal $)",
			     (int)bad_len, val + bad_at);
			return -1;
		}
		srv->env = moat_xrealloc(srv->env, (srv->n_env + 1) * sizeof(*srv->env));
		e = &srv->env[srv->n_env++];
		e->name = moat_xstrdup(kv->key);
		e->value = moat_xstrdup(val);
		e->key = moat_xstrdup(kp);
		e->origin = at(L, kv->value->pos);
	}
	return 0;
}

static void push_arg(struct config_server *srv, const char *s)
{
	srv->argv = moat_xrealloc(srv->argv, (srv->argc + 2) * sizeof(char *));
	srv->argv[srv->argc++] = moat_xstrdup(s);
	srv->argv[srv->argc] = NULL;
}

static int load_strings_into(const struct loader *L, struct config_server *srv, const struct toml_value *v,
			     const char *key, const char *what)
{
	size_t i;

	for (i = 0; i < toml_array_len(v); i++) {
		const struct toml_value *item = toml_array_at(v, i);
		const char *s;

		if (item->type != TOML_STRING)
			return fail(L, item->pos, key, "expected %s, got %s in the array", what,
				    type_phrase(L, item->type));
		if (get_string(L, item, key, "a string", &s) < 0)
			return -1;
		push_arg(srv, s);
	}
	return 0;
}

static int load_server(const struct loader *L, struct config_server *srv, const struct toml_value *t, const char *key)
{
	const struct toml_keyval *kv;
	const char *s;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, key,
				  L->c->json ? "an object (the server's command, args, env, ...)"
					     : "a table (the server's command, args, env, ...)");
	if (check_keys(L, t, key, server_keys) < 0)
		return -1;

	if (!(kv = toml_table_entry(t, "command")))
		return config_fail(L->err, &srv->origin, key, "missing key \"command\" (the program to run)");
	{
		cleanup_free char *kp = config_keypath(key, "command", 7);
		const struct toml_value *v = kv->value;
		const char *what = "a program name or an array of strings (the program and its arguments)";

		srv->command_origin = at(L, v->pos);

		if (v->type == TOML_STRING) {
			if (get_nonempty(L, v, kp, "a program name", &s) < 0)
				return -1;
			push_arg(srv, s);
		} else if (v->type == TOML_ARRAY) {
			const struct toml_value *first = toml_array_at(v, 0);

			if (!first)
				return fail(L, v->pos, kp, "expected %s, got an empty array", what);
			if (load_strings_into(L, srv, v, kp, "strings") < 0)
				return -1;
			if (!srv->argv[0][0])
				return fail(L, first->pos, kp, "expected a program name, got an empty string");
		} else {
			return wrong_type(L, v, kp, what);
		}
		if ((kv = toml_table_entry(t, "args"))) {
			cleanup_free char *ka = config_keypath(key, "args", 4);

			if (v->type == TOML_ARRAY)
				return fail(L, kv->pos, ka,
					    "not allowed when command is an array; put the arguments in command");
			if (get_array(L, kv->value, ka, "an array of strings") < 0 ||
			    load_strings_into(L, srv, kv->value, ka, "strings") < 0)
				return -1;
		}
	}
	if ((kv = toml_table_entry(t, "env"))) {
		cleanup_free char *kp = config_keypath(key, "env", 3);
		if (load_env(L, srv, kv->value, kp) < 0)
			return -1;
	}
	if ((kv = toml_table_entry(t, "env_vars"))) {
		cleanup_free char *kp = config_keypath(key, "env_vars", 8);
		if (load_names(L, kv->value, kp, &srv->env_vars, &srv->n_env_vars) < 0)
			return -1;
	}
	if ((kv = toml_table_entry(t, "cwd"))) {
		cleanup_free char *kp = config_keypath(key, "cwd", 3);
		if (get_nonempty(L, kv->value, kp, "a directory", &s) < 0 ||
		    !(srv->cwd = resolve_path(L, kv->value, kp, s)))
			return -1;
		srv->cwd_key = steal_ptr(&kp);
		srv->cwd_origin = at(L, kv->value->pos);
	}
	if ((kv = toml_table_entry(t, "optional"))) {
		cleanup_free char *kp = config_keypath(key, "optional", 8);
		if (kv->value->type != TOML_BOOL)
			return wrong_type(L, kv->value, kp, L->c->json ? "true or false" : "true or false (a bool)");
		srv->optional = kv->value->u.boolean;
	}
	if ((kv = toml_table_entry(t, "install_hint"))) {
		cleanup_free char *kp = config_keypath(key, "install_hint", 12);
		if (get_string(L, kv->value, kp, "a string", &s) < 0)
			return -1;
		srv->install_hint = moat_xstrdup(s);
	}
	if ((kv = toml_table_entry(t, "trusted_publisher"))) {
		cleanup_free char *kp = config_keypath(key, "trusted_publisher", 17);
		if (get_string(L, kv->value, kp, "a string", &s) < 0)
			return -1;
		srv->trusted_publisher = moat_xstrdup(s);
	}
	if ((kv = toml_table_entry(t, "type"))) {
		cleanup_free char *kp = config_keypath(key, "type", 4);
		if (get_string(L, kv->value, kp, "\"stdio\"", &s) < 0)
			return -1;
		if (strcmp(s, "stdio") != 0)
			return fail(L, kv->value->pos, kp,
				    "expected \"stdio\" (moat runs servers spoken to over "
				    "stdio), got \"%s\"",
				    s);
	}
	if ((kv = toml_table_entry(t, "sandbox"))) {
		cleanup_free char *kp = config_keypath(key, "sandbox", 7);
		const struct toml_value *v = kv->value;
		size_t idx;

		if (v->type == TOML_STRING) {
			layer_init(&srv->sandbox);
			srv->sandbox.present = true;
			srv->sandbox.key = moat_xstrdup(kp);
			srv->sandbox.origin = at(L, v->pos);
			if (get_enum(L, v, kp, policy_backend_names(), &idx) < 0)
				return -1;
			srv->sandbox.backend = moat_xstrdup(policy_backend_names()[idx]);
		} else if (v->type == TOML_TABLE) {
			if (load_layer(L, &srv->sandbox, v, kp, false) < 0)
				return -1;
		} else {
			cleanup_free char *list = join_quoted(policy_backend_names());
			cleanup_free char *what = moat_xasprintf("%s, or %s of sandbox settings", list, table_word(L));
			return wrong_type(L, v, kp, what);
		}
	}
	return 0;
}

static void layer_free(struct config_layer *l)
{
	size_t i;

	free(l->key);
	free(l->backend);
	free(l->profile);
	for (i = 0; i < l->n_paths; i++) {
		free(l->paths[i].path);
		free(l->paths[i].key);
	}
	free(l->paths);
	for (i = 0; i < l->n_unprotect; i++) {
		free(l->unprotect[i].path);
		free(l->unprotect[i].key);
	}
	free(l->unprotect);
	for (i = 0; i < l->n_env_pass; i++) {
		free(l->env_pass[i].name);
		free(l->env_pass[i].key);
	}
	free(l->env_pass);
	for (i = 0; i < l->n_net_allow; i++)
		net_dest_free(&l->net_allow[i]);
	free(l->net_allow);
	for (i = 0; i < l->n_net_pins; i++)
		net_pin_free(&l->net_pins[i]);
	free(l->net_pins);
	for (i = 0; i < l->n_net_sets; i++) {
		free(l->net_sets[i].text);
		free(l->net_sets[i].key);
	}
	free(l->net_sets);
	memset(l, 0, sizeof(*l));
}

static void server_free(struct config_server *s)
{
	size_t i;

	free(s->name);
	free(s->key);
	for (i = 0; i < s->argc; i++)
		free(s->argv[i]);
	free(s->argv);
	free(s->cwd);
	free(s->cwd_key);
	for (i = 0; i < s->n_env; i++) {
		free(s->env[i].name);
		free(s->env[i].value);
		free(s->env[i].key);
	}
	free(s->env);
	for (i = 0; i < s->n_env_vars; i++) {
		free(s->env_vars[i].name);
		free(s->env_vars[i].key);
	}
	free(s->env_vars);
	free(s->install_hint);
	free(s->trusted_publisher);
	layer_free(&s->sandbox);
}

void config_free(struct moat_config *c)
{
	size_t i;

	if (!c)
		return;
	free(c->dir);
	layer_free(&c->defaults);
	for (i = 0; i < c->n_profiles; i++) {
		free(c->profiles[i].name);
		layer_free(&c->profiles[i].layer);
	}
	free(c->profiles);
	for (i = 0; i < c->n_servers; i++)
		server_free(&c->servers[i]);
	free(c->servers);
	free(c);
}

const struct config_server *config_find_server(const struct moat_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_servers; i++)
		if (strcmp(c->servers[i].name, name) == 0)
			return &c->servers[i];
	return NULL;
}

static int load_servers(const struct loader *L, const struct toml_keyval *top)
{
	cleanup_free char *key = config_keypath(NULL, top->key, top->key_len);
	const struct toml_value *t = top->value;
	size_t i;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, key, L->c->json ? "an object of servers" : "a table of servers");
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = config_keypath(key, kv->key, kv->key_len);
		const struct config_server *prev;
		struct config_server *srv;

		if (kv->key_len == 0 || kv->key_len != strlen(kv->key))
			return fail(L, kv->pos, kp, "expected a server name, without NUL characters");
		if ((prev = config_find_server(L->c, kv->key))) {
			fail(L, kv->pos, kp, "server \"%s\" is defined twice (first at %d:%d as %s)", kv->key,
			     prev->origin.line, prev->origin.col, prev->key);
			return moat_error_hint(L->err, "keep one of them, or give the other another name");
		}
		L->c->servers = moat_xrealloc(L->c->servers, (L->c->n_servers + 1) * sizeof(*L->c->servers));
		srv = &L->c->servers[L->c->n_servers++];
		memset(srv, 0, sizeof(*srv));
		srv->name = moat_xstrdup(kv->key);
		srv->key = moat_xstrdup(kp);
		srv->origin = at(L, kv->pos);
		if (load_server(L, srv, kv->value, kp) < 0)
			return -1;
	}
	return 0;
}

const struct config_profile *config_find_profile(const struct moat_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_profiles; i++)
		if (strcmp(c->profiles[i].name, name) == 0)
			return &c->profiles[i];
	return NULL;
}

static int load_profiles(const struct loader *L, const struct toml_keyval *top)
{
	const struct toml_value *t = top->value;
	size_t i;

	if (t->type != TOML_TABLE)
		return wrong_type(L, t, "profiles", L->c->json ? "an object of profiles" : "a table of profiles");
	for (i = 0; i < toml_table_len(t); i++) {
		const struct toml_keyval *kv = toml_table_at(t, i);
		cleanup_free char *kp = config_keypath("profiles", kv->key, kv->key_len);
		struct config_profile *pr;

		if (kv->key_len == 0 || kv->key_len != strlen(kv->key))
			return fail(L, kv->pos, kp, "expected a profile name, without NUL characters");
		if (profile_is_builtin(kv->key))
			return fail(L, kv->pos, kp,
				    "\"%s\" is a built-in profile; expected another name (a profile "
				    "can extend it: extends = \"%s\")",
				    kv->key, kv->key);
		L->c->profiles = moat_xrealloc(L->c->profiles, (L->c->n_profiles + 1) * sizeof(*L->c->profiles));
		pr = &L->c->profiles[L->c->n_profiles++];
		memset(pr, 0, sizeof(*pr));
		pr->name = moat_xstrdup(kv->key);
		if (load_layer(L, &pr->layer, kv->value, kp, true) < 0)
			return -1;
	}
	return 0;
}

/* Every profile name in the file must be a built-in or a [profiles] entry. */
static int check_profile_name(const struct loader *L, const struct config_layer *layer, bool is_profile)
{
	cleanup_free char *kp = NULL, *known = NULL;
	char list[1024];
	size_t i, o;

	if (!layer->profile || profile_is_builtin(layer->profile) || config_find_profile(L->c, layer->profile))
		return 0;
	known = join_plain(builtin_profiles);
	o = (size_t)snprintf(list, sizeof(list), "%s", known);
	for (i = 0; i < L->c->n_profiles && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, ", %s", L->c->profiles[i].name);
	kp = moat_xasprintf("%s.%s", layer->key, is_profile ? "extends" : "profile");
	config_fail(L->err, &layer->profile_origin, kp,
		    "unknown profile \"%s\"; expected a built-in profile or one defined under [profiles]",
		    layer->profile);
	return moat_error_hint(L->err, "known profiles: %s", list);
}

/* `extends` chains end in a built-in profile; a chain that comes back to
 * itself would never end. */
static int check_profiles(const struct loader *L)
{
	size_t i, j;

	for (i = 0; i < L->c->n_profiles; i++)
		if (check_profile_name(L, &L->c->profiles[i].layer, true) < 0)
			return -1;
	for (i = 0; i < L->c->n_profiles; i++) {
		const struct config_profile *pr = &L->c->profiles[i];
		char chain[1024];
		size_t o;

		for (j = 0; pr && j <= L->c->n_profiles; j++)
			pr = pr->layer.profile ? config_find_profile(L->c, pr->layer.profile) : NULL;
		if (!pr)
			continue;
		/* pr is on the cycle: name it from there round to itself. */
		{
			const struct config_profile *start = pr;
			cleanup_free char *kp = moat_xasprintf("%s.extends", start->layer.key);

			o = (size_t)snprintf(chain, sizeof(chain), "%s", start->name);
			do {
				pr = config_find_profile(L->c, pr->layer.profile);
				if (o < sizeof(chain))
					o += (size_t)snprintf(chain + o, sizeof(chain) - o, " -> %s", pr->name);
			} while (pr != start);
			return config_fail(L->err, &start->layer.profile_origin, kp,
					   "profiles extend each other in a cycle (%s); expected a chain that ends in "
					   "a built-in profile",
					   chain);
		}
	}
	if (check_profile_name(L, &L->c->defaults, false) < 0)
		return -1;
	for (i = 0; i < L->c->n_servers; i++)
		if (check_profile_name(L, &L->c->servers[i].sandbox, false) < 0)
			return -1;
	return 0;
}

static int load_tree(struct loader *L, const struct toml_value *root)
{
	size_t i;

	if (check_keys(L, root, NULL, top_keys) < 0)
		return -1;
	for (i = 0; i < toml_table_len(root); i++) {
		const struct toml_keyval *kv = toml_table_at(root, i);

		if (strcmp(kv->key, "mcp_servers") == 0 || strcmp(kv->key, "mcpServers") == 0) {
			if (load_servers(L, kv) < 0)
				return -1;
		} else if (strcmp(kv->key, "sandbox") == 0) {
			if (load_layer(L, &L->c->defaults, kv->value, "sandbox", false) < 0)
				return -1;
		} else if (load_profiles(L, kv) < 0) {
			return -1;
		}
	}
	return check_profiles(L);
}

int config_load_tree(struct moat_config *c, const struct toml_value *root, const char *home, struct moat_error *err)
{
	struct loader L = {.c = c, .home = home, .err = err};

	return load_tree(&L, root);
}
