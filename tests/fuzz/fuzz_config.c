/* libFuzzer target: the config loader (TOML or JSON by the first byte), with
 * its strict validation, on arbitrary input.  Nothing it reads may crash,
 * leak or hang moat; every rejection must carry a message.
 *
 * The same input as a client's file for `moat mcp wrap`: every entry with a
 * command is rewritten to run through moat and back, and each rewritten
 * text must read back as meant -- the entry wrapped with its own command
 * line after `--`, then its own command line again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/config.h"
#include "sources/mcp_clients.h"
#include "util/mem.h"

#define MOAT "/usr/local/bin/moat"

/* f's text with entry e running argv, parsed again; NULL when the splice
 * itself refused (an entry without a command). */
static struct mcp_file *rewritten(const struct mcp_file *f, const struct mcp_entry *e, char *const *argv, size_t argc)
{
	struct mcp_file *g = NULL;
	struct mcp_splice s = {0};
	struct moat_error err;
	size_t len;
	char *text;

	memset(&err, 0, sizeof(err));
	if (mcp_entry_rewrite(f, e, argv, argc, &s, &err) < 0)
		return NULL;
	text = mcp_splices_apply(f->text, f->len, &s, 1, &len);
	mcp_splice_free(&s);
	if (mcp_file_parse(f->path, f->client, text, len, "/p", MOAT, &g, &err) < 0)
		abort(); /* the edit broke the file */
	return g;
}

static const struct mcp_entry *by_key(const struct mcp_file *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->n_entries; i++)
		if (strcmp(f->entries[i].key, key) == 0)
			return &f->entries[i];
	abort(); /* the edit lost the entry */
}

static void same_argv(const struct mcp_entry *e, char *const *argv, size_t argc)
{
	size_t i;

	if (e->argc != argc)
		abort();
	for (i = 0; i < argc; i++)
		if (strcmp(e->argv[i], argv[i]) != 0)
			abort();
}

static void wrap_each(const char *name, const uint8_t *data, size_t size)
{
	struct mcp_file *f = NULL;
	struct moat_error err;
	char *text = moat_xmalloc(size + 1);
	size_t k, i;

	memcpy(text, data, size);
	text[size] = '\0';
	memset(&err, 0, sizeof(err));
	if (mcp_file_parse(name, MCP_CLAUDE_CODE, text, size, "/p", MOAT, &f, &err) < 0) {
		if (err.message[0] == '\0')
			abort();
		return;
	}
	for (k = 0; k < f->n_entries; k++) {
		const struct mcp_entry *e = &f->entries[k];
		char **argv;
		struct mcp_file *w, *back;

		/* Every entry, whatever the text around it holds: skipping a
		 * text with a NUL in it once hid an over-read in wrap's own
		 * read-back (the loader now refuses the NUL). */
		if (e->skip || e->argc == 0)
			continue;
		argv = moat_xcalloc(e->argc + 8, sizeof(*argv));
		argv[0] = (char *)MOAT;
		argv[1] = (char *)"run";
		argv[2] = (char *)"--config";
		argv[3] = (char *)"/h/.config/moat/servers.toml";
		argv[4] = (char *)"--profile";
		argv[5] = (char *)"claude-code.x";
		argv[6] = (char *)"--";
		for (i = 0; i < e->argc; i++)
			argv[MCP_WRAP_ARGS + i] = e->argv[i];
		w = rewritten(f, e, argv, e->argc + MCP_WRAP_ARGS);
		if (w) {
			const struct mcp_entry *we = by_key(w, e->key);

			same_argv(we, argv, e->argc + MCP_WRAP_ARGS);
			if (we->state != MCP_WRAPPED && we->state != MCP_NESTED)
				abort();
			back = rewritten(w, we, argv + MCP_WRAP_ARGS, e->argc);
			if (!back)
				abort();
			same_argv(by_key(back, e->key), e->argv, e->argc);
			mcp_file_free(back);
			mcp_file_free(w);
		}
		free(argv);
	}
	mcp_file_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_config *cfg = NULL;
	struct moat_error err;
	const char *name = size > 0 && data[0] == '{' ? "/fuzz/config.json" : "/fuzz/config.toml";

	memset(&err, 0, sizeof(err));
	if (config_load_buffer(name, (const char *)data, size, "/nonexistent-home", &cfg, &err) == 0) {
		config_free(cfg);
	} else if (err.message[0] == '\0') {
		abort(); /* a rejection without a message */
	}
	wrap_each(name, data, size);
	return 0;
}
