/* Reading a configuration file (docs/config.md) and telling its format:
 * TOML (moat's own, Codex's, darnit's) or JSON (Claude Desktop's
 * {"mcpServers": {...}}), each parsed into the same tree for the one schema
 * (config_schema.c).  Nothing here touches the host except reading the
 * file. */
#include "sources/config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/config_common.h"
#include "sources/config_json.h"
#include "sources/config_schema.h"
#include "sources/resolve.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/path.h"

bool config_looks_like_json(const char *file, const char *buf, size_t len)
{
	size_t n = strlen(file), i;

	if (n >= 5 && strcmp(file + n - 5, ".json") == 0)
		return true;
	/* A TOML document cannot start with '{'; a JSON config must (after
	 * a byte order mark). */
	for (i = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; i < len; i++) {
		if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r')
			continue;
		return buf[i] == '{';
	}
	return false;
}

/* The file parsed and loaded; *out is set when it could be parsed, with
 * every problem in (*out)->problems. */
static int load_all(const char *file, const char *buf, size_t len, const char *home, struct moat_config **out,
		    bool *parse_failed, struct moat_error *err)
{
	struct moat_config *c = moat_xcalloc(1, sizeof(*c));
	struct toml_value *root = NULL;
	char here[PATH_MAX];
	cleanup_free char *abs = NULL;
	char *slash;
	int rc = -1;

	*parse_failed = false;
	c->file = config_intern(file);
	if (file[0] != '/' && resolve_cwd(here, sizeof(here), err) < 0) {
		moat_error_wrap(err, "%s is relative", file);
		goto out;
	}
	abs = path_resolve_lexical(file, file[0] == '/' ? "/" : here, NULL);
	slash = abs ? strrchr(abs, '/') : NULL;
	if (!slash) {
		moat_error_set(err, MOAT_E_CONFIG, 0, "%s: cannot make the path absolute", file);
		goto out;
	}
	c->dir = slash == abs ? moat_xstrdup("/") : moat_xstrndup(abs, (size_t)(slash - abs));
	c->json = config_looks_like_json(file, buf, len);
	if (c->json) {
		if (config_json_parse(c->file, buf, len, false, &root, err) < 0) {
			*parse_failed = true;
			goto out;
		}
	} else {
		struct toml_error te;

		if (toml_parse(buf, len, &root, &te) < 0) {
			moat_error_set(err, MOAT_E_CONFIG, 0, "%s:%d:%d: %s", c->file, te.line, te.col, te.msg);
			*parse_failed = true;
			goto out;
		}
	}
	config_load_tree(c, root, home);
	*out = steal_ptr(&c);
	rc = 0;
out:
	toml_free(root);
	config_free(c);
	return rc;
}

/* A file with a problem is not used: the first problem is the error. */
static int load_clean(struct moat_config *c, struct moat_config **out, struct moat_error *err)
{
	if (c->n_problems > 0) {
		*err = c->problems[0];
		config_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

int config_load_buffer(const char *file, const char *buf, size_t len, const char *home, struct moat_config **out,
		       struct moat_error *err)
{
	struct moat_config *c = NULL;
	bool parse_failed;

	if (load_all(file, buf, len, home, &c, &parse_failed, err) < 0)
		return -1;
	return load_clean(c, out, err);
}

int config_load_buffer_all(const char *file, const char *buf, size_t len, const char *home, struct moat_config **out,
			   bool *parse_failed, struct moat_error *err)
{
	return load_all(file, buf, len, home, out, parse_failed, err);
}

/* The policy is only as safe as the file it comes from: one that every user
 * may write, or that another user owns, lets them set the sandbox this
 * user's command runs in (mode = "off").  Checked on the file as read (its
 * descriptor's stat), as git refuses a repository another user owns;
 * root's files are trusted, as root could change anything anyway. */
static int check_owner(const char *file, const struct stat *st, struct moat_error *err)
{
	if (st->st_mode & S_IWOTH) {
		moat_error_set(err, MOAT_E_CONFIG, 0,
			       "%s is writable by every user: any of them could change the sandbox it sets", file);
		return moat_error_hint(err, "chmod o-w %s", file);
	}
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		moat_error_set(err, MOAT_E_CONFIG, 0,
			       "%s belongs to uid %u, neither you (uid %u) nor root: its owner could change the sandbox "
			       "it sets for you",
			       file, (unsigned)st->st_uid, (unsigned)geteuid());
		return moat_error_hint(err, "copy it to a file of your own (or chown it), or give its settings as flags");
	}
	return 0;
}

int config_load_all(const char *file, const char *home, struct moat_config **out, bool *parse_failed,
		    struct moat_error *err)
{
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t len = 0;

	*parse_failed = false;
	if (file_read_at(AT_FDCWD, file, file, TOML_MAX_INPUT, true, &buf, &len, &st, err) < 0 ||
	    check_owner(file, &st, err) < 0)
		return -1;
	return load_all(file, buf, len, home, out, parse_failed, err);
}

int config_load(const char *file, const char *home, struct moat_config **out, struct moat_error *err)
{
	struct moat_config *c = NULL;
	bool parse_failed;

	if (config_load_all(file, home, &c, &parse_failed, err) < 0)
		return -1;
	return load_clean(c, out, err);
}
