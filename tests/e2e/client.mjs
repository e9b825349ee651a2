// MCP client for the end-to-end scenarios (issue 9).  Starts COMMAND (in the
// tests: `moat run ... -- SERVER ...`) with the SDK's StdioClientTransport,
// runs one scenario, prints one JSON document (to stdout, or to --out FILE).
//
//   node client.mjs SCENARIO [--out FILE] [--env NAME=VALUE]... -- COMMAND [ARGS...]
//
// --env adds NAME=VALUE to the environment the server command is started
// with, as a client's config "env" block does.
//
// The server's environment is the SDK's default (HOME, PATH, ...) plus every
// HOSTILE_* variable of this client's environment plus HOSTILE_CLIENT_PID, this
// client's pid; moat passes on only what its policy says (--env-pass).
//
// Scenarios (their inputs come from E2E_* environment variables, read by the
// client, not passed to the server):
//   init        initialize + tools/list: {server, tools}
//   fs          filesystem server: E2E_PROJ (allowed), E2E_HOME (fake HOME
//               with the canary), E2E_OUTSIDE (a file outside every grant),
//               E2E_ETC_NEW (a path under /etc to try to create),
//               E2E_ETC_CANARY (optional: an existing /etc file to overwrite)
//   memory      memory server: create entities and observations, read the graph
//   memory-read read the graph only (a second start sees the stored graph)
//   report      hostile server: call `report`, then `echo`
//   fetch       fetch server: call `fetch_url` for each URL of E2E_URLS
//               (space-separated): {results: [{url, isError, text}]}
import fs from "node:fs";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connect, tool, close, watchdog, splitArgs } from "./lib.mjs";

const { opts, command } = splitArgs(process.argv.slice(2));
const scenario = opts[0];
const outIdx = opts.indexOf("--out");
const outFile = outIdx >= 0 ? opts[outIdx + 1] : null;
watchdog(40, scenario);
const E = process.env;
const env = { ...getDefaultEnvironment(), HOSTILE_CLIENT_PID: String(process.pid) };
for (const [k, v] of Object.entries(E)) if (k.startsWith("HOSTILE_")) env[k] = v;
for (let i = 0; i < opts.length; i++)
	if (opts[i] === "--env") {
		const kv = opts[++i];
		env[kv.slice(0, kv.indexOf("="))] = kv.slice(kv.indexOf("=") + 1);
	}

const { client, transport } = await connect(command, { env });
const doc = { server: client.getServerVersion() };

async function listNames() {
	return (await client.listTools()).tools.map((t) => t.name).sort();
}

if (scenario === "fetch") {
	doc.results = [];
	for (const url of (E.E2E_URLS || "").split(" ").filter(Boolean)) {
		const r = await tool(client, "fetch_url", { url });
		doc.results.push({ url, isError: r.isError, text: r.text });
	}
} else if (scenario === "init") {
	doc.tools = await listNames();
} else if (scenario === "fs") {
	const P = E.E2E_PROJ;
	const H = E.E2E_HOME;
	doc.allowed = await tool(client, "list_allowed_directories");
	// Inside the project: listing, reading, writing existing files.
	doc.list = await tool(client, "list_directory", { path: P });
	doc.read = await tool(client, "read_text_file", { path: `${P}/hello.txt` });
	doc.write = await tool(client, "write_file", { path: `${P}/notes.txt`, content: "server wrote this\n" });
	doc.readback = await tool(client, "read_text_file", { path: `${P}/notes.txt` });
	doc.edit = await tool(client, "edit_file", { path: `${P}/notes.txt`, edits: [{ oldText: "server", newText: "the server" }] });
	doc.tree = await tool(client, "directory_tree", { path: P });
	doc.search = await tool(client, "search_files", { path: P, pattern: "notes" });
	doc.info = await tool(client, "get_file_info", { path: `${P}/hello.txt` });
	// Creating: for a path that does not exist yet the server walks down from
	// its allowed root with readdir() on every ancestor (a Unicode-equivalence
	// check), so with "/" as its root it needs to list "/" -- which moat does
	// not grant.  The test reports these, and checks them with a project root.
	doc.create = await tool(client, "write_file", { path: `${P}/created-by-server.txt`, content: "new file\n" });
	doc.mkdir = await tool(client, "create_directory", { path: `${P}/sub/dir` });
	doc.move = await tool(client, "move_file", { source: `${P}/created-by-server.txt`, destination: `${P}/sub/dir/moved.txt` });
	doc.readmoved = await tool(client, "read_text_file", { path: `${P}/sub/dir/moved.txt` });
	// The server believes "/" is allowed; the kernel disagrees.
	doc.read_canary = await tool(client, "read_text_file", { path: `${H}/.ssh/id_ed25519` });
	doc.read_canary_multi = await tool(client, "read_multiple_files", { paths: [`${H}/.ssh/id_ed25519`] });
	doc.list_ssh = await tool(client, "list_directory", { path: `${H}/.ssh` });
	doc.list_home = await tool(client, "list_directory", { path: H });
	doc.read_outside = await tool(client, "read_text_file", { path: E.E2E_OUTSIDE });
	doc.write_home = await tool(client, "write_file", { path: `${H}/written-by-server.txt`, content: "escaped\n" });
	doc.overwrite_home = await tool(client, "write_file", { path: `${H}/.profile`, content: "escaped\n" });
	doc.overwrite_canary = await tool(client, "write_file", { path: `${H}/.ssh/id_ed25519`, content: "overwritten\n" });
	doc.mkdir_home = await tool(client, "create_directory", { path: `${H}/made-by-server` });
	doc.write_etc = await tool(client, "write_file", { path: E.E2E_ETC_NEW, content: "escaped\n" });
	if (E.E2E_ETC_CANARY)
		doc.overwrite_etc = await tool(client, "write_file", { path: E.E2E_ETC_CANARY, content: "overwritten\n" });
} else if (scenario === "memory" || scenario === "memory-read") {
	if (scenario === "memory") {
		doc.create = await tool(client, "create_entities", {
			entities: [{ name: "moat", entityType: "tool", observations: ["runs MCP servers in a sandbox"] }],
		});
		doc.observe = await tool(client, "add_observations", {
			observations: [{ entityName: "moat", contents: ["writes only where it is allowed"] }],
		});
	}
	doc.graph = await tool(client, "read_graph");
} else if (scenario === "report") {
	// transport.pid is the process the client spawned: moat (or, unsandboxed
	// without moat, the server itself).
	doc.signal_pid = await tool(client, "signal_pid", { pid: transport.pid });
	const r = await tool(client, "report");
	doc.report = r.isError ? { error: r.text } : JSON.parse(r.text);
	doc.echo = await tool(client, "echo");
} else {
	process.stderr.write(`unknown scenario ${scenario}\n`);
	process.exit(2);
}
await close(client);
const text = JSON.stringify(doc, null, 1) + "\n";
if (outFile) fs.writeFileSync(outFile, text);
else process.stdout.write(text);
