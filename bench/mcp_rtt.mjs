// bench/mcp_rtt.mjs: JSON-RPC round trips to a real MCP server over stdio.
//
//   node bench/mcp_rtt.mjs LABEL SESSIONS CALLS -- COMMAND [ARGS...]
//
// For each of SESSIONS sessions, the MCP SDK's own client (StdioClientTransport)
// spawns COMMAND, then:
//   connect_ms  spawn + `initialize` request/response + `initialized` notice:
//               what an MCP client waits for before the first tool call,
//               sandbox start-up and the server's own start-up included;
//   list_ms     the first `tools/list` round trip on that fresh session;
//   warm_us     the median of CALLS further `tools/list` round trips, in
//               microseconds (the SDK client rebuilds its tool-schema
//               validators on every tools/list, so this is mostly JS work);
//   ping_us     the median of CALLS `ping` round trips, in microseconds: the
//               smallest JSON-RPC request there is, so the steady-state stdio
//               path itself, where a relay or an extra hop would show;
// then closes the session.  Prints one JSON object with every sample.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 3 || sep + 1 >= argv.length) {
	console.error("usage: mcp_rtt.mjs LABEL SESSIONS CALLS -- COMMAND [ARGS...]");
	process.exit(2);
}
const [label, sessionsArg, callsArg] = argv.slice(0, 3);
const [command, ...args] = argv.slice(sep + 1);
const sessions = Number(sessionsArg);
const calls = Number(callsArg);

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	const m = s.length >> 1;
	return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const out = { label, command: [command, ...args], sessions, calls, connect_ms: [], list_ms: [], warm_us: [], ping_us: [], tools: 0, errors: [] };
for (let i = 0; i < sessions; i++) {
	const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
	let stderr = "";
	const client = new Client({ name: "moat-bench", version: "1" }, { capabilities: {} });
	try {
		const t0 = now();
		const p = client.connect(transport);
		transport.stderr?.on("data", (d) => (stderr += d));
		await p;
		const t1 = now();
		const r = await client.listTools();
		const t2 = now();
		out.tools = r.tools.length;
		const warm = [];
		for (let j = 0; j < calls; j++) {
			const a = now();
			await client.listTools();
			warm.push((now() - a) * 1000);
		}
		const pings = [];
		for (let j = 0; j < calls; j++) {
			const a = now();
			await client.ping();
			pings.push((now() - a) * 1000);
		}
		out.connect_ms.push(t1 - t0);
		out.list_ms.push(t2 - t1);
		out.warm_us.push(median(warm));
		out.ping_us.push(median(pings));
	} catch (e) {
		out.errors.push(`${e?.message ?? e}${stderr ? ` (stderr: ${stderr.slice(0, 400)})` : ""}`);
	} finally {
		await client.close().catch(() => {});
	}
}
console.log(JSON.stringify(out));
