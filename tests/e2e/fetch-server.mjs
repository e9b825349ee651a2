#!/usr/bin/env node
// An MCP server whose one tool fetches a URL with Node's own fetch (undici,
// which ignores HTTP_PROXY): what most networked MCP servers do.  For the
// fenced allowlist (tests/blackbox/net_fence.sh): the tool returns the body,
// or "ERR CODE" with the failure's code (ENOTFOUND, ECONNREFUSED, ...).
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "moat-e2e-fetch", version: "1.0.0" });
server.registerTool(
	"fetch_url",
	{ description: "fetch a URL", inputSchema: { url: z.string() } },
	async ({ url }) => {
		try {
			const r = await fetch(url, { signal: AbortSignal.timeout(10000) });
			return { content: [{ type: "text", text: await r.text() }] };
		} catch (e) {
			const code = (e && e.cause && e.cause.code) || (e && e.name) || String(e);
			return { content: [{ type: "text", text: `ERR ${code}` }], isError: true };
		}
	},
);
await server.connect(new StdioServerTransport());
