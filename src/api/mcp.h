/* The library's side of `moat mcp list|wrap|unwrap` (src/api/mcp.c): the
 * CLI (cli/mcp.c) parses the arguments and prints what these return. */
#ifndef MOAT_API_MCP_H
#define MOAT_API_MCP_H

#include <stddef.h>

#include <jansson.h>

#include "sources/mcp_policies.h"
#include "util/err.h"

struct api_mcp_request {
	const char *config;   /* --config FILE: that file alone; NULL: the clients' files of HOME and the project */
	const char *policies; /* --policies FILE; NULL: $XDG_CONFIG_HOME/moat/servers.toml (~/.config/...) */
	const char *moat;     /* moat's own absolute path: what wrap writes as the command */
	const char *server;   /* --server NAME; NULL: every server */
	const char *profile;  /* wrap's --profile: what the server's profile extends (NULL: mcp) */
	const struct mcp_flag *flags; /* wrap's policy options */
	size_t n_flags;
};

/* The clients' files and their servers: each with whether it runs under
 * moat, its policy and the verdict of a dry run on this host.  *out is the
 * document moat.mcp-list/1 (docs/clients.md). */
int api_mcp_list(const struct api_mcp_request *r, json_t **out, struct moat_error *err);

/* Rewrite entries to run through moat (wrap) or back (unwrap).  *out says
 * what was done to each file and server, also when a later file failed
 * (then -1 with err, and the files written before stay written: each file
 * and its policies are one change).  Nothing is written when the request
 * itself is refused (-1 with *out NULL). */
int api_mcp_wrap(const struct api_mcp_request *r, json_t **out, struct moat_error *err);
int api_mcp_unwrap(const struct api_mcp_request *r, json_t **out, struct moat_error *err);

#endif
