/* moat's file of wrapped servers' policies (sources/mcp_policies.h). */
#include "sources/mcp_policies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

enum flag_kind {
	K_PATHS, /* a path, added to a list; relative ones made absolute */
	K_LIST,	 /* a string, added to a list */
	K_CSV,	 /* comma-separated strings, added to a list */
	K_STRING,
	K_INTEGER,
	K_NUMBER,
	K_TRUE, /* a flag: the key is true */
};

/* The options of `moat run` a profile has a key for, in the order the
 * keys are written.  --env, --cwd and the report's options are not a
 * profile's: the client's own env and cwd keys give the first two. */
static const struct {
	const char *opt, *key;
	enum flag_kind kind;
} flags[] = {
    {"--backend", "backend", K_STRING},
    {"--mode", "mode", K_STRING},
    {"--read", "read", K_PATHS},
    {"--write", "write", K_PATHS},
    {"--deny", "deny", K_PATHS},
    {"--unprotect", "unprotect", K_PATHS},
    {"--unix-sockets", "unix_sockets", K_TRUE},
    {"--net", "net", K_STRING},
    {"--allow-net", "network.allow", K_LIST},
    {"--resolve", "network.resolve", K_LIST},
    {"--env-pass", "env_pass", K_LIST},
    {"--require", "require", K_CSV},
    {"--memory", "memory", K_STRING},
    {"--pids", "pids", K_INTEGER},
    {"--cpu", "cpu", K_INTEGER},
    {"--address-space", "address_space", K_STRING},
    {"--files", "files", K_INTEGER},
    {"--tmp-size", "tmp_size", K_STRING},
    {"--timeout", "timeout", K_NUMBER},
};

const char *mcp_policy_flag(const char *opt, bool *takes_value)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(flags); i++) {
		if (strcmp(opt, flags[i].opt) == 0) {
			*takes_value = flags[i].kind != K_TRUE;
			return flags[i].opt;
		}
	}
	return NULL;
}

struct text {
	char *p;
	size_t len, cap;
};

static void put(struct text *t, const char *s)
{
	size_t n = strlen(s);

	t->p = moat_xgrow(t->p, &t->cap, t->len + n, 1);
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void put_quoted(struct text *t, const char *s)
{
	cleanup_free char *q = mcp_quote(s, false);

	put(t, q);
}

static void put_kv(struct text *t, const char *key, const char *value)
{
	put(t, key);
	put(t, " = ");
	put_quoted(t, value);
	put(t, "\n");
}

/* A list's items (one key's values in flags, or env_pass's), each once. */
struct list {
	char **v;
	size_t n;
};

static void list_add(struct list *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return;
	l->v = moat_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = moat_xstrdup(s);
}

static void list_free(struct list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool scalar(enum flag_kind kind)
{
	return kind == K_STRING || kind == K_INTEGER || kind == K_NUMBER || kind == K_TRUE;
}

/* Add a value, written as TOML, to key k's: a list's items each once, a
 * scalar's last one wins (as a later layer's does in moat run, and a
 * later flag's). */
static void add_value(struct list *l, size_t k, const char *literal)
{
	if (scalar(flags[k].kind))
		list_free(l);
	list_add(l, literal);
}

static void add_quoted(struct list *l, size_t k, const char *s)
{
	cleanup_free char *q = mcp_quote(s, false);

	add_value(l, k, q);
}

/* Flag k's values, as the profile's key holds them. */
static int flag_values(const struct mcp_wrap_record *r, size_t k, struct list *l, struct moat_error *err)
{
	size_t i, len;

	for (i = 0; i < r->n_flags; i++) {
		const char *v = r->flags[i].value, *form;

		if (strcmp(r->flags[i].opt, flags[k].opt) != 0)
			continue;
		if (flags[k].kind == K_PATHS && (form = path_unexpanded(v, &len))) {
			/* Said now, of the flag, rather than of a line of a
			 * policy file never written (the loader refuses it). */
			moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: %.*s is not expanded in a path", flags[k].opt, v,
				       (int)len, form);
			return moat_error_hint(err, "moat expands only ~ and ~/ (to HOME): write the absolute path");
		}
		if (flags[k].kind == K_TRUE) {
			add_value(l, k, "true");
		} else if (flags[k].kind == K_PATHS && v[0] != '~') {
			/* The profile's relative paths would be the policy
			 * file's; the user meant wrap's working directory.  A
			 * ~ stays: HOME is the same where the server runs. */
			cleanup_free char *abs = path_resolve_lexical(v, r->cwd, NULL);

			if (!abs)
				return moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: cannot make the path absolute",
						      flags[k].opt, v);
			add_quoted(l, k, abs);
		} else if (flags[k].kind == K_CSV) {
			cleanup_free char *copy = moat_xstrdup(v);
			char *save = NULL, *tok;

			for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				add_quoted(l, k, tok);
		} else if (flags[k].kind == K_INTEGER || flags[k].kind == K_NUMBER) {
			/* Checked as moat run checks them before wrap
			 * writes anything. */
			add_value(l, k, v);
		} else {
			add_quoted(l, k, v);
		}
	}
	return 0;
}

/* ---- the client's own moat settings, carried ---- */

static int carried_error(const struct mcp_carried *c, const struct toml_value *v, const char *key,
			 struct moat_error *err)
{
	moat_error_set(err, MOAT_E_CONFIG, 0,
		       "%s:%d:%d: %s.%s: moat mcp wrap cannot carry this setting into the server's profile, and "
		       "the server would run without it",
		       c->file, v->pos.line, v->pos.col, c->key, key);
	return moat_error_hint(err,
			       "write it as moat's docs/config.md has it (moat config check %s), or remove it and "
			       "give it to wrap as a flag",
			       c->file);
}

/* Key k's value in a carried table, or NULL.  A `sandbox = "BACKEND"`
 * string is the backend alone. */
static const struct toml_value *carried_value(const struct mcp_carried *c, size_t k)
{
	const char *key = flags[k].key;

	if (c->table->type == TOML_STRING)
		return strcmp(key, "backend") == 0 ? c->table : NULL;
	if (strncmp(key, "network.", 8) == 0)
		return toml_table_get(toml_table_get(c->table, "network"), key + 8);
	return toml_table_get(c->table, key);
}

/* One value as TOML; a path as the client's file means it (relative to
 * that file, ~ as HOME), which the policy file, elsewhere, would not. */
static char *carried_literal(const struct mcp_carried *c, size_t k, const struct toml_value *v)
{
	cleanup_free char *abs = NULL;

	switch (v->type) {
	case TOML_STRING:
		if (strlen(v->u.str.ptr) != v->u.str.len)
			break;
		if (flags[k].kind != K_PATHS)
			return mcp_quote(v->u.str.ptr, false);
		abs = path_resolve_lexical(v->u.str.ptr, c->dir, c->home);
		return abs ? mcp_quote(abs, false) : NULL;
	case TOML_INTEGER:
		return moat_xasprintf("%lld", (long long)v->u.integer);
	case TOML_FLOAT:
		/* A float stays one: "30" would read back as an integer. */
		return moat_xasprintf("%.17g%s", v->u.flt, v->u.flt == (double)(long long)v->u.flt ? ".0" : "");
	case TOML_BOOL:
		return moat_xstrdup(v->u.boolean ? "true" : "false");
	default:
		break;
	}
	return NULL;
}

static int carried_add(const struct mcp_carried *c, size_t k, const struct toml_value *v, struct list *l,
		       struct moat_error *err)
{
	cleanup_free char *lit = carried_literal(c, k, v);

	if (!lit)
		return carried_error(c, v, flags[k].key, err);
	add_value(l, k, lit);
	return 0;
}

/* Key k's values in the carried table c, after those of the tables
 * before it: what moat run's layers do (sources/config_build.c,
 * apply_layer), one table over another. */
static int carried_values(const struct mcp_carried *c, size_t k, struct list *l, struct moat_error *err)
{
	const struct toml_value *v = carried_value(c, k), *allow;
	size_t i;

	/* Destinations without `net` in the same table mean net allow. */
	if (!v && strcmp(flags[k].key, "net") == 0 && c->table->type == TOML_TABLE) {
		allow = toml_table_get(toml_table_get(c->table, "network"), "allow");
		if (allow && allow->type == TOML_ARRAY && toml_array_len(allow) > 0)
			add_value(l, k, "\"allow\"");
		return 0;
	}
	if (!v)
		return 0;
	if (scalar(flags[k].kind) != (v->type != TOML_ARRAY))
		return carried_error(c, v, flags[k].key, err);
	if (v->type != TOML_ARRAY)
		return carried_add(c, k, v, l, err);
	for (i = 0; i < toml_array_len(v); i++)
		if (carried_add(c, k, toml_array_at(v, i), l, err) < 0)
			return -1;
	return 0;
}

/* A key wrap does not know how to carry is refused, not dropped: a
 * setting moat reads one day must not vanish from a wrapped server. */
static bool carried_known(const char *key, bool in_network)
{
	size_t i;

	if (!in_network && (strcmp(key, "profile") == 0 || strcmp(key, "extends") == 0 || strcmp(key, "network") == 0))
		return true;
	for (i = 0; i < ARRAY_LEN(flags); i++) {
		bool net = strncmp(flags[i].key, "network.", 8) == 0;

		if (net == in_network && strcmp(flags[i].key + (net ? 8 : 0), key) == 0)
			return true;
	}
	return false;
}

static int carried_check_keys(const struct mcp_carried *c, struct moat_error *err)
{
	const struct toml_value *net;
	size_t i;

	if (c->table->type == TOML_STRING)
		return 0;
	if (c->table->type != TOML_TABLE)
		return carried_error(c, c->table, "", err);
	for (i = 0; i < toml_table_len(c->table); i++) {
		const struct toml_keyval *kv = toml_table_at(c->table, i);

		if (!carried_known(kv->key, false))
			return carried_error(c, kv->value, kv->key, err);
	}
	net = toml_table_get(c->table, "network");
	if (net && net->type != TOML_TABLE)
		return carried_error(c, net, "network", err);
	for (i = 0; net && i < toml_table_len(net); i++) {
		const struct toml_keyval *kv = toml_table_at(net, i);

		if (!carried_known(kv->key, true))
			return carried_error(c, kv->value, "network", err);
	}
	return 0;
}

static void put_list(struct text *t, const struct list *l)
{
	size_t i;

	put(t, "[");
	for (i = 0; i < l->n; i++) {
		if (i > 0)
			put(t, ", ");
		put(t, l->v[i]);
	}
	put(t, "]");
}

/* The profile's keys but extends: the carried tables', base first, then
 * wrap's flags on top -- the order of `moat run --config FILE --server
 * NAME FLAGS` -- and the names the client hands the server. */
static int put_keys(struct text *t, const struct mcp_wrap_record *r, struct moat_error *err)
{
	size_t k, i;

	for (i = 0; i < r->n_carried; i++)
		if (carried_check_keys(&r->carried[i], err) < 0)
			return -1;
	for (k = 0; k < ARRAY_LEN(flags); k++) {
		struct list l = {0};
		int rc = 0;

		for (i = 0; i < r->n_carried && rc == 0; i++)
			rc = carried_values(&r->carried[i], k, &l, err);
		if (rc == 0)
			rc = flag_values(r, k, &l, err);
		if (rc < 0) {
			list_free(&l);
			return -1;
		}
		/* What the client hands the server reaches it through moat. */
		if (strcmp(flags[k].key, "env_pass") == 0)
			for (i = 0; i < r->n_env_pass; i++)
				add_quoted(&l, k, r->env_pass[i]);
		if (l.n > 0) {
			put(t, flags[k].key);
			put(t, " = ");
			if (scalar(flags[k].kind))
				put(t, l.v[0]);
			else
				put_list(t, &l);
			put(t, "\n");
		}
		list_free(&l);
	}
	return 0;
}

char *mcp_carried_text(const struct mcp_carried *c, size_t n, struct moat_error *err)
{
	struct mcp_wrap_record r = {.carried = c, .n_carried = n};
	struct text t = {0};

	put(&t, "");
	if (put_keys(&t, &r, err) < 0) {
		free(t.p);
		return NULL;
	}
	return t.p;
}

const char *mcp_policies_preamble(void)
{
	return "# moat's policies for the MCP servers `moat mcp wrap` wrapped (moat's docs/clients.md).\n"
	       "# A wrapped entry of a client's file runs\n"
	       "#     moat run --config THIS-FILE --profile ID -- COMMAND ARGS...\n"
	       "# under [profiles.\"ID\"]: edit it to change what that server may do (docs/config.md).\n"
	       "# [wrapped.\"ID\"] says where the entry is and what wrap replaced there, for `moat mcp unwrap`.\n";
}

char *mcp_record_text(const struct mcp_wrap_record *r, struct moat_error *err)
{
	struct text t = {0};
	cleanup_free char *id = mcp_quote(r->id, false);

	put(&t, "\n[profiles.");
	put(&t, id);
	put(&t, "]\n");
	put_kv(&t, "extends", r->extends);
	if (put_keys(&t, r, err) < 0) {
		free(t.p);
		return NULL;
	}
	put(&t, "\n[wrapped.");
	put(&t, id);
	put(&t, "]\n");
	put_kv(&t, "client", r->client);
	put_kv(&t, "file", r->file);
	put_kv(&t, "server", r->server);
	put_kv(&t, "before", r->before);
	put_kv(&t, "after", r->after);
	/* What of the client's own settings the profile holds: list tells
	 * by it when they have changed since, and no longer all apply. */
	if (r->carried_text && r->carried_text[0])
		put_kv(&t, "carried", r->carried_text);
	return t.p;
}

int mcp_policies_parse(const char *path, char *text, size_t len, bool exists, struct mcp_policies **out,
		       struct moat_error *err)
{
	struct mcp_policies *p = moat_xcalloc(1, sizeof(*p));
	struct toml_error te;

	if (toml_parse(text, len, &p->root, &te) < 0) {
		moat_error_set(err, MOAT_E_CONFIG, 0, "%s:%d:%d: %s", path, te.line, te.col, te.msg);
		free(p);
		return -1;
	}
	p->path = moat_xstrdup(path);
	p->text = text;
	p->len = len;
	p->exists = exists;
	*out = p;
	return 0;
}

void mcp_policies_free(struct mcp_policies *p)
{
	if (!p)
		return;
	toml_free(p->root);
	free(p->text);
	free(p->path);
	free(p);
}

static const struct toml_value *table_of(const struct mcp_policies *p, const char *top, const char *id)
{
	const struct toml_value *v = toml_table_get(toml_table_get(p->root, top), id);

	return v && v->type == TOML_TABLE ? v : NULL;
}

const struct toml_value *mcp_policies_profile(const struct mcp_policies *p, const char *id)
{
	return table_of(p, "profiles", id);
}

const struct toml_value *mcp_policies_record(const struct mcp_policies *p, const char *id)
{
	return table_of(p, "wrapped", id);
}

const char *mcp_record_get(const struct toml_value *record, const char *key)
{
	const struct toml_value *v = toml_table_get(record, key);

	return v && v->type == TOML_STRING && strlen(v->u.str.ptr) == v->u.str.len ? v->u.str.ptr : NULL;
}

char *mcp_policies_new_id(const struct mcp_policies *p, enum mcp_client client, const char *server)
{
	cleanup_free char *base = moat_xasprintf("%s.%s", mcp_client_id(client), server);
	char *id, *c;
	int n;

	for (c = base; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      strchr("._-@", *c)))
			*c = '_';
	id = moat_xstrdup(base);
	for (n = 2; toml_table_get(toml_table_get(p->root, "profiles"), id) ||
		    toml_table_get(toml_table_get(p->root, "wrapped"), id);
	     n++) {
		free(id);
		id = moat_xasprintf("%s-%d", base, n);
	}
	return id;
}

/* The sections of table v and of the tables below it; false when v itself
 * is not a section (an inline table, dotted keys). */
static bool add_sections(const struct mcp_policies *p, const struct toml_value *v, struct mcp_splice **s, size_t *n)
{
	size_t i;

	if (v->type == TOML_ARRAY) {
		for (i = 0; i < toml_array_len(v); i++)
			add_sections(p, toml_array_at(v, i), s, n);
		return true;
	}
	if (v->type != TOML_TABLE)
		return true;
	if (v->end > v->off && p->text[v->off] == '[') {
		*s = moat_xrealloc(*s, (*n + 1) * sizeof(**s));
		(*s)[(*n)++] = (struct mcp_splice){.off = v->off, .end = v->end, .text = moat_xstrdup("")};
	} else if (v->end == v->off) {
		/* Only implied: its sub-tables may still be sections. */
	} else {
		return false;
	}
	for (i = 0; i < toml_table_len(v); i++)
		add_sections(p, toml_table_at(v, i)->value, s, n);
	return true;
}

static int by_offset(const void *a, const void *b)
{
	const struct mcp_splice *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

bool mcp_policies_remove(const struct mcp_policies *p, const char *id, struct mcp_splice **v, size_t *n)
{
	const struct toml_value *profile = mcp_policies_profile(p, id), *record = mcp_policies_record(p, id);
	struct mcp_splice *mine = NULL;
	size_t k = 0, i;
	bool all = true;

	if (profile)
		all = profile->end > profile->off && add_sections(p, profile, &mine, &k);
	if (record && all)
		all = record->end > record->off && add_sections(p, record, &mine, &k);
	for (i = 0; i < k; i++) {
		if (all) {
			*v = moat_xrealloc(*v, (*n + 1) * sizeof(**v));
			(*v)[(*n)++] = mine[i];
		} else {
			mcp_splice_free(&mine[i]);
		}
	}
	free(mine);
	if (*n > 0)
		qsort(*v, *n, sizeof(**v), by_offset);
	return all;
}

void mcp_policies_take_blank_lines(const struct mcp_policies *p, struct mcp_splice *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t off = v[i].off;

		if (off >= 2 && p->text[off - 1] == '\n' && p->text[off - 2] == '\n' && (i == 0 || v[i - 1].end < off))
			v[i].off--;
	}
}
