// The everything server, swept end to end: initialize, ping, tools/list,
// every tool that needs no network, resources (list, templates, read,
// subscribe), prompts (list, get, complete), logging/setLevel.  Prints one
// normalized JSON document; the test runs it bare and under moat and compares.
//
//   node everything.mjs -- COMMAND [ARGS...]
//
// The client declares roots, sampling and elicitation (form and url) and
// answers them with canned replies, so the tools that need those client
// capabilities are exercised too.  Not exercised, and listed under
// "not_called" in the output with the reason:
//   - trigger-sampling-request-async, trigger-elicitation-request-async: they
//     are registered only for a client that runs sampling/elicitation as
//     *tasks* (client capability tasks.requests.*); this client does not.
// gzip-file-as-resource defaults to an https URL; it is called with a data:
// URI instead, so it needs no network.
import { connect, tool, out, close, watchdog, splitArgs, REQUEST_TIMEOUT_MS } from "./lib.mjs";
import {
	CreateMessageRequestSchema,
	ElicitRequestSchema,
	ListRootsRequestSchema,
	LoggingMessageNotificationSchema,
	CallToolResultSchema,
} from "@modelcontextprotocol/sdk/types.js";

watchdog(45, "everything");
const { command } = splitArgs(process.argv.slice(2));

const capabilities = {
	roots: { listChanged: true },
	sampling: {},
	elicitation: { form: {}, url: {} },
};
const { client } = await connect(command, { capabilities });

// Canned client-side answers: deterministic, no model, no user.
client.setRequestHandler(ListRootsRequestSchema, async () => ({
	roots: [{ uri: "file:///e2e/project", name: "e2e project" }],
}));
client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
	model: "moat-e2e-canned-model",
	role: "assistant",
	stopReason: "endTurn",
	content: { type: "text", text: `canned reply to ${req.params.messages.length} message(s)` },
}));
function answerFromSchema(schema) {
	const content = {};
	for (const [k, p] of Object.entries(schema.properties || {})) {
		if (p.default !== undefined) content[k] = p.default;
		else if (p.enum) content[k] = p.enum[0];
		else if (p.oneOf) content[k] = p.oneOf[0].const;
		else if (p.type === "boolean") content[k] = true;
		else if (p.type === "integer" || p.type === "number") content[k] = p.minimum ?? 1;
		else if (p.format === "email") content[k] = "e2e@example.invalid";
		else if (p.format === "uri") content[k] = "https://example.invalid/e2e";
		else if (p.format === "date") content[k] = "2000-01-01";
		else if (p.type === "string") content[k] = "Moat E2E";
	}
	return content;
}
client.setRequestHandler(ElicitRequestSchema, async (req) => {
	if (req.params.mode === "url") return { action: "accept" };
	return { action: "accept", content: answerFromSchema(req.params.requestedSchema || {}) };
});
let logMessages = 0;
client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
	logMessages++;
});

// Timestamps and random ids vary between runs: replace them.
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIME = /\b\d{1,2}:\d{2}:\d{2}(\s?[AP]M)?\b/g;
const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
function normText(s) {
	return s.replace(UUID, "<uuid>").replace(ISO, "<iso-time>").replace(TIME, "<time>");
}
function norm(v, key) {
	if (typeof v === "string" && key === "blob") {
		// A base64 blob of text (the dynamic blob resources hold a timestamp).
		const t = Buffer.from(v, "base64").toString("utf8");
		return /^[\x20-\x7e\n]*$/.test(t) ? "base64:" + normText(t) : v;
	}
	if (typeof v === "string") return normText(v);
	if (Array.isArray(v)) return v.map(norm);
	if (v && typeof v === "object") {
		const o = {};
		for (const k of Object.keys(v).sort()) {
			if (k === "taskId" || k === "sessionId" || k === "createdAt" || k === "lastUpdatedAt") o[k] = `<${k}>`;
			else o[k] = norm(v[k], k);
		}
		return o;
	}
	return v;
}

const doc = {};
doc.initialize = {
	serverVersion: client.getServerVersion(),
	serverCapabilities: client.getServerCapabilities(),
	instructions: client.getInstructions(),
};
doc.ping = await client.ping({ timeout: REQUEST_TIMEOUT_MS });
await client.setLoggingLevel("debug", { timeout: REQUEST_TIMEOUT_MS });

// The conditional tools are registered once the server has seen the
// initialized notification; tools/list_changed follows.  Give it a moment.
let tools = [];
for (let i = 0; i < 40; i++) {
	tools = (await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS })).tools;
	if (tools.some((t) => t.name === "get-roots-list")) break;
	await new Promise((r) => setTimeout(r, 50));
}
doc.tools_list = tools;

const dataUri = "data:text/plain;base64," + Buffer.from("moat e2e gzip input\n".repeat(20)).toString("base64");
const ARGS = {
	echo: { message: "hello from moat e2e" },
	"get-annotated-message": { messageType: "success", includeImage: true },
	"get-env": {},
	"get-resource-links": { count: 3 },
	"get-resource-reference": { resourceType: "Text", resourceId: 2 },
	"get-structured-content": { location: "Chicago" },
	"get-sum": { a: 19, b: 23 },
	"get-tiny-image": {},
	"gzip-file-as-resource": { name: "e2e.txt.gz", data: dataUri, outputType: "resource" },
	"toggle-simulated-logging": {},
	"toggle-subscriber-updates": {},
	"trigger-long-running-operation": { duration: 0.3, steps: 3 },
	"get-roots-list": {},
	"trigger-elicitation-request": {},
	"trigger-url-elicitation": {
		url: "https://example.invalid/authorize",
		message: "open it",
		elicitationId: "e2e-fixed-elicitation-id",
	},
	"trigger-sampling-request": { prompt: "say hi", maxTokens: 10 },
	"simulate-research-query": { topic: "sandboxes", ambiguous: false },
};
// Registered only for clients with the tasks capability for these requests.
const NOT_CALLED = {
	"trigger-sampling-request-async": "needs the client to run sampling as a task (tasks.requests.sampling)",
	"trigger-elicitation-request-async": "needs the client to run elicitation as a task (tasks.requests.elicitation)",
};
doc.tools = {};
doc.not_called = {};
for (const [n, why] of Object.entries(NOT_CALLED))
	if (!tools.some((t) => t.name === n)) doc.not_called[n] = "not registered for this client: " + why;
for (const t of tools) {
	if (NOT_CALLED[t.name]) {
		doc.not_called[t.name] = NOT_CALLED[t.name];
		continue;
	}
	const args = ARGS[t.name] ?? {};
	if (t.execution && t.execution.taskSupport === "required") {
		// A task tool: the result arrives through the task stream.
		const msgs = [];
		for await (const m of client.experimental.tasks.callToolStream({ name: t.name, arguments: args }, CallToolResultSchema, {
			timeout: REQUEST_TIMEOUT_MS,
		})) {
			if (m.type === "result") msgs.push({ type: "result", result: m.result });
			else if (m.type === "error") msgs.push({ type: "error", error: String(m.error) });
			else if (m.type === "taskCreated") msgs.push({ type: "taskCreated" });
		}
		doc.tools[t.name] = { task: true, final: msgs.filter((m) => m.type !== "taskStatus").slice(-1)[0], created: msgs.some((m) => m.type === "taskCreated") };
		continue;
	}
	let progress = 0;
	const r = await tool(client, t.name, args, ARGS[t.name] && t.name.includes("long-running") ? { onprogress: () => progress++ } : {});
	// How many progress notifications arrive before the result is racy: only
	// whether they arrive is compared.
	doc.tools[t.name] = { isError: r.isError, result: r.result ?? r.text, progress: progress > 0 };
	if (t.name === "toggle-simulated-logging" || t.name === "toggle-subscriber-updates") {
		// Toggle back off, so that no timer outlives the sweep.
		doc.tools[t.name + " (off)"] = (await tool(client, t.name, {})).text;
	}
}
doc.unknown_tool = await tool(client, "no-such-tool", {});

// Resources.
const resources = (await client.listResources(undefined, { timeout: REQUEST_TIMEOUT_MS })).resources;
doc.resources_list = resources;
doc.resource_templates = (await client.listResourceTemplates(undefined, { timeout: REQUEST_TIMEOUT_MS })).resourceTemplates;
doc.resources_read = {};
const uris = resources.map((r) => r.uri).concat(["demo://resource/dynamic/text/1", "demo://resource/dynamic/blob/2"]);
for (const uri of uris) {
	try {
		doc.resources_read[uri] = await client.readResource({ uri }, { timeout: REQUEST_TIMEOUT_MS });
	} catch (e) {
		doc.resources_read[uri] = { error: String(e.message) };
	}
}
doc.subscribe = await client.subscribeResource({ uri: "demo://resource/dynamic/text/1" }, { timeout: REQUEST_TIMEOUT_MS });
doc.unsubscribe = await client.unsubscribeResource({ uri: "demo://resource/dynamic/text/1" }, { timeout: REQUEST_TIMEOUT_MS });

// Prompts.
const prompts = (await client.listPrompts(undefined, { timeout: REQUEST_TIMEOUT_MS })).prompts;
doc.prompts_list = prompts;
const PROMPT_ARGS = {
	"args-prompt": { city: "Lisbon", state: "Lisboa" },
	"completable-prompt": { department: "Engineering", name: "Alice" },
	"resource-prompt": { resourceType: "Text", resourceId: "3" },
};
doc.prompts_get = {};
for (const p of prompts) {
	try {
		doc.prompts_get[p.name] = await client.getPrompt({ name: p.name, arguments: PROMPT_ARGS[p.name] ?? {} }, { timeout: REQUEST_TIMEOUT_MS });
	} catch (e) {
		doc.prompts_get[p.name] = { error: String(e.message) };
	}
}
try {
	doc.complete = await client.complete(
		{ ref: { type: "ref/prompt", name: "completable-prompt" }, argument: { name: "department", value: "E" } },
		{ timeout: REQUEST_TIMEOUT_MS },
	);
} catch (e) {
	doc.complete = { error: String(e.message) };
}
doc.log_messages_seen = logMessages > 0;

await close(client);
// The sweep itself must be complete, or the comparison proves nothing.
const called = Object.keys(doc.tools).filter((k) => !k.endsWith("(off)"));
doc.summary = { tools_listed: tools.length, tools_called: called.length, not_called: Object.keys(doc.not_called) };
out(norm(doc));
