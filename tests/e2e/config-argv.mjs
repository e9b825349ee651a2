// Reads one MCP client configuration and prints the server launch the way
// that client builds it, as client.mjs arguments, NUL-separated:
//   --env NAME=VALUE ... -- COMMAND ARGS...
// (the config's env block, then its command line).  Use:
//   mapfile -d '' a < <(node config-argv.mjs ...); node client.mjs init "${a[@]}"
//
//   node config-argv.mjs claude FILE.json NAME   mcpServers.NAME: command + args (+ env)
//   node config-argv.mjs codex  FILE.json NAME   mcp_servers.NAME: command + args (+ env)
//   node config-argv.mjs darnit FILE.json NAME   mcp_servers.NAME: command = [argv] (+ env)
//
// For the TOML formats FILE.json is the toml-test tagged JSON that
// `moat config decode` prints ({"type": "string", "value": ...} leaves).
import fs from "node:fs";

const [format, file, name] = process.argv.slice(2);
const doc = JSON.parse(fs.readFileSync(file, "utf8"));

// toml-test tagged JSON to plain values.
function untag(v) {
	if (Array.isArray(v)) return v.map(untag);
	if (v && typeof v === "object") {
		if (typeof v.type === "string" && "value" in v && Object.keys(v).length === 2) return v.value;
		return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, untag(x)]));
	}
	return v;
}

function fail(msg) {
	process.stderr.write(`config-argv: ${file}: ${msg}\n`);
	process.exit(2);
}

let argv, env;
if (format === "claude") {
	const s = doc.mcpServers && doc.mcpServers[name];
	if (!s) fail(`no mcpServers.${name}`);
	if (typeof s.command !== "string") fail("command must be a string");
	argv = [s.command, ...(s.args || [])];
	env = s.env || {};
} else if (format === "codex" || format === "darnit") {
	const plain = untag(doc);
	const s = plain.mcp_servers && plain.mcp_servers[name];
	if (!s) fail(`no [mcp_servers.${name}]`);
	if (format === "codex") {
		if (typeof s.command !== "string") fail("codex: command must be a string");
		argv = [s.command, ...(s.args || [])];
	} else {
		if (!Array.isArray(s.command)) fail("darnit: command must be an array");
		argv = s.command;
	}
	env = s.env || {};
} else {
	fail(`unknown format ${format}`);
}
if (!argv.every((a) => typeof a === "string")) fail("every argument must be a string");
const out = [];
for (const [k, v] of Object.entries(env)) out.push("--env", `${k}=${v}`);
out.push("--", ...argv);
process.stdout.write(out.join("\0") + "\0");
