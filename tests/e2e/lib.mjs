// Shared client plumbing for the end-to-end tests (issue 9): a real MCP
// client (the SDK's Client over StdioClientTransport) that starts the server
// command it is given -- in the tests that command is `moat run ... -- SERVER`,
// exactly as a desktop client would start it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// Every request is bounded; a whole script is bounded by a watchdog so that a
// wedged server can never hang the test suite.
export const REQUEST_TIMEOUT_MS = 15000;

export function watchdog(seconds, what) {
	setTimeout(() => {
		process.stderr.write(`e2e client: ${what}: watchdog expired after ${seconds} s\n`);
		process.exit(3);
	}, seconds * 1000).unref();
}

// argv after `--` is the server command line.  Returns {opts, command}.
export function splitArgs(argv) {
	const dd = argv.indexOf("--");
	if (dd < 0 || dd + 1 >= argv.length) {
		process.stderr.write("usage: node SCRIPT [OPTIONS] -- COMMAND [ARGS...]\n");
		process.exit(2);
	}
	return { opts: argv.slice(0, dd), command: argv.slice(dd + 1) };
}

// connect(["moat", "run", ..., "--", "node", "server.js"], {capabilities, env, cwd})
export async function connect(command, { capabilities = {}, env, cwd, stderr = "inherit", name = "moat-e2e" } = {}) {
	const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), env, cwd, stderr });
	const client = new Client({ name, version: "1.0.0" }, { capabilities });
	await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
	return { client, transport };
}

// A tool call reduced to what the tests compare: the error flag and the text.
export async function tool(client, name, args = {}, extra = {}) {
	try {
		const r = await client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS, ...extra });
		const text = (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
		return { isError: !!r.isError, text, result: r };
	} catch (e) {
		// A JSON-RPC error (e.g. the SDK's input validation) is also a failure
		// the server reported, not a crash of the client.
		return { isError: true, text: String(e && e.message ? e.message : e), rpcError: true };
	}
}

export function out(obj) {
	process.stdout.write(JSON.stringify(obj, null, 1) + "\n");
}

export async function close(client) {
	// The transport closes stdin, waits up to 2 s, then SIGTERM, then SIGKILL.
	await client.close().catch(() => {});
}
