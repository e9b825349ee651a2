/* Unit tests: configuration files (src/sources/config*.c).
 *
 * A table of bad configs, each with the exact message it must give
 * (file:line:col, key path, what was expected); the three client formats
 * giving the same policy for the same server; layering (profiles, [sandbox],
 * the server, the command line on top); $VAR expansion; paths. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/netdest.h"
#include "policy/policy.h"
#include "report/report.h"
#include "sources/config.h"
#include "sources/config_common.h"
#include "sources/size.h"
#include "tap.h"
#include "util/cleanup.h"

static char *test_env[] = {"PATH=/usr/bin:/bin", "HOME=/home/u", "T=tok-value", "EMPTY=", NULL};

static struct moat_config *load(const char *file, const char *text, struct moat_error *err)
{
	struct moat_config *c = NULL;

	memset(err, 0, sizeof(*err));
	if (config_load_buffer(file, text, strlen(text), "/home/u", &c, err) < 0)
		return NULL;
	return c;
}

/* Load, then (when `server` is set) build that server's policy.  Returns 0
 * when both succeed; fills err otherwise. */
static int load_and_build(const char *file, const char *text, const char *server, struct moat_error *err)
{
	struct moat_config *c = load(file, text, err);
	struct moat_policy p;
	struct config_request r = {.server = server, .mode = -1, .env = test_env};
	int rc;

	if (!c)
		return -1;
	policy_init(&p);
	rc = server ? config_build(c, &r, &p, NULL, err) : 0;
	if (rc == 0 && server)
		rc = policy_validate(&p, err);
	policy_free(&p);
	config_free(c);
	return rc;
}

struct bad_row {
	const char *file;
	const char *text;
	const char *server; /* NULL: the error is found by loading alone */
	const char *message;
	const char *hint; /* NULL: no hint expected */
};

static const struct bad_row bad_rows[] = {
    /* unknown keys, with a suggestion when one is close */
    {"t.toml", "[mcp_servers.x]\ncomand = [\"sh\"]\n", NULL,
     "t.toml:2:1: mcp_servers.x.comand: unknown key; expected one of command, args, env, env_vars, cwd, type, "
     "enabled, disabled, url, httpUrl, serverUrl, optional, install_hint, trusted_publisher, sandbox",
     "did you mean 'command'?"},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nsandbx = { net = \"all\" }\n", NULL,
     "t.toml:3:1: mcp_servers.x.sandbx: unknown key; expected one of command, args, env, env_vars, cwd, type, "
     "enabled, disabled, url, httpUrl, serverUrl, optional, install_hint, trusted_publisher, sandbox",
     "did you mean 'sandbox'?"},
    {"t.toml", "[sandbox]\nnett = \"none\"\n", NULL,
     "t.toml:2:1: sandbox.nett: unknown key; expected one of backend, mode, profile, read, write, deny, unprotect, "
     "unix_sockets, net, network, env_pass, require, memory, pids, files, cpu, address_space, tmp_size, timeout",
     "did you mean 'net'?"},
    {"t.toml", "[mcp_servers.scorecard]\ncommand = \"sh\"\n[mcp_servers.scorecard.sandbox]\nreed = []\n", NULL,
     "t.toml:4:1: mcp_servers.scorecard.sandbox.reed: unknown key; expected one of backend, mode, profile, read, "
     "write, deny, unprotect, unix_sockets, net, network, env_pass, require, memory, pids, files, cpu, address_space, tmp_size, timeout",
     "did you mean 'read'?"},
    {"t.toml", "[profiles.p]\nprofile = \"strict\"\n", NULL,
     "t.toml:2:1: profiles.p.profile: unknown key; expected one of extends, backend, mode, read, write, deny, "
     "unprotect, unix_sockets, net, network, env_pass, require, memory, pids, files, cpu, address_space, tmp_size, timeout",
     NULL},
    {"t.toml", "[mcp_server.x]\ncommand = \"sh\"\n", NULL,
     "t.toml:1:2: mcp_server: unknown key; expected one of mcp_servers, mcpServers, servers, sandbox, profiles",
     "did you mean 'mcp_servers'?"},
    {"t.toml", "[sandboxes]\nnet = \"none\"\n", NULL,
     "t.toml:1:2: sandboxes: unknown key; expected one of mcp_servers, mcpServers, servers, sandbox, profiles",
     "did you mean 'sandbox'?"},
    {"t.toml", "[mcp_servers.\"my.server\"]\ncommand = \"sh\"\nenv_var = []\n", NULL,
     "t.toml:3:1: mcp_servers.\"my.server\".env_var: unknown key; expected one of command, args, env, env_vars, "
     "cwd, type, enabled, disabled, url, httpUrl, serverUrl, optional, install_hint, trusted_publisher, sandbox",
     "did you mean 'env_vars'?"},
    {"c.json", "{\n  \"mcpServers\": {\n    \"x\": {\"comand\": \"sh\"}\n  }\n}\n", NULL,
     "c.json:3:11: mcpServers.x.comand: unknown key; expected one of command, args, env, env_vars, cwd, type, "
     "enabled, disabled, url, httpUrl, serverUrl, optional, install_hint, trusted_publisher, sandbox",
     "did you mean 'command'?"},
    /* a key of moat's in other letter case is a typo of it, however many
     * letters differ: ignored, it would drop the sandbox silently */
    {"c.json", "{\"SANDBOX\": {\"net\": \"none\"}, \"mcpServers\": {\"a\": {\"command\": \"true\"}}}", NULL,
     "c.json:1:2: SANDBOX: unknown key; expected one of mcp_servers, mcpServers, servers, sandbox, profiles",
     "did you mean 'sandbox'? (keys are case-sensitive)"},
    {"c.json", "{\"PROFILES\": {}}", NULL,
     "c.json:1:2: PROFILES: unknown key; expected one of mcp_servers, mcpServers, servers, sandbox, profiles",
     "did you mean 'profiles'? (keys are case-sensitive)"},
    {"c.json", "{\"mcpServers\": {\"a\": {\"command\": \"true\", \"SANDBOX\": {\"net\": \"none\"}}}}", NULL,
     "c.json:1:42: mcpServers.a.SANDBOX: unknown key; expected one of command, args, env, env_vars, cwd, type, "
     "enabled, disabled, url, httpUrl, serverUrl, optional, install_hint, trusted_publisher, sandbox",
     "did you mean 'sandbox'? (keys are case-sensitive)"},
    {"t.toml", "[SANDBOX]\ndeny = [\"/etc/hostname\"]\n[mcp_servers.a]\ncommand = [\"true\"]\n", NULL,
     "t.toml:1:2: SANDBOX: unknown key; expected one of mcp_servers, mcpServers, servers, sandbox, profiles",
     "did you mean 'sandbox'? (keys are case-sensitive)"},
    {"t.toml", "[MCP_SERVERS.a]\ncommand = [\"true\"]\n", NULL,
     "t.toml:1:2: MCP_SERVERS: unknown key; expected one of mcp_servers, mcpServers, servers, sandbox, profiles",
     "did you mean 'mcp_servers'? (keys are case-sensitive)"},
    {"t.toml", "[sandbox]\nDENY = [\"/etc/hostname\"]\n", NULL,
     "t.toml:2:1: sandbox.DENY: unknown key; expected one of backend, mode, profile, read, write, deny, unprotect, "
     "unix_sockets, net, network, env_pass, require, memory, pids, files, cpu, address_space, tmp_size, timeout",
     "did you mean 'deny'? (keys are case-sensitive)"},
    /* a Codex setting in a profile of moat's */
    {"t.toml", "[profiles.p]\nextends = \"mcp\"\nmodel = \"o3\"\n", NULL,
     "t.toml:3:1: profiles.p.model: unknown key; expected one of extends, backend, mode, read, write, deny, "
     "unprotect, unix_sockets, net, network, env_pass, require, memory, pids, files, cpu, address_space, tmp_size, "
     "timeout",
     "model is a Codex setting: a table holds Codex's settings or moat's, and moat's need one of their own"},
    /* Gemini CLI's top-level sandbox is true, false or a tool: another string is not it */
    {"c.json", "{\"sandbox\": \"native\"}", NULL, "c.json:1:13: sandbox: expected an object, got a string", NULL},

    /* wrong types */
    {"t.toml", "[mcp_servers.x]\ncommand = 5\n", NULL,
     "t.toml:2:11: mcp_servers.x.command: expected a program name or an array of strings (the program and its "
     "arguments), got an integer",
     NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = []\n", NULL,
     "t.toml:2:11: mcp_servers.x.command: expected a program name or an array of strings (the program and its "
     "arguments), got an empty array",
     NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = [\"sh\", 1]\n", NULL,
     "t.toml:2:18: mcp_servers.x.command: expected strings, got an integer in the array", NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"\"\n", NULL,
     "t.toml:2:11: mcp_servers.x.command: expected a program name, got an empty string", NULL},
    {"t.toml", "[mcp_servers.x]\nargs = [\"a\"]\n", NULL,
     "t.toml:1:14: mcp_servers.x: missing key \"command\" (the program to run)", NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = [\"sh\"]\nargs = [\"-c\"]\n", NULL,
     "t.toml:3:1: mcp_servers.x.args: not allowed when command is an array; put the arguments in command", NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nargs = \"-c\"\n", NULL,
     "t.toml:3:8: mcp_servers.x.args: expected an array of strings, got a string",
     "args takes a list of strings, even of one: args = [\"-c\"]"},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\noptional = \"yes\"\n", NULL,
     "t.toml:3:12: mcp_servers.x.optional: expected true or false (a bool), got a string", NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nsandbox = 3\n", NULL,
     "t.toml:3:11: mcp_servers.x.sandbox: expected \"auto\", \"native\", \"bwrap\", \"gvisor\", \"oci\", "
     "\"nsjail\", \"firejail\", \"nono\", \"seatbelt\" or \"none\", or a table of sandbox settings, got an integer",
     NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nsandbox = \"bwrapp\"\n", NULL,
     "t.toml:3:11: mcp_servers.x.sandbox: expected \"auto\", \"native\", \"bwrap\", \"gvisor\", \"oci\", "
     "\"nsjail\", \"firejail\", \"nono\", \"seatbelt\" or \"none\", got \"bwrapp\"",
     "did you mean \"bwrap\"?"},
    {"t.toml", "[mcp_servers.scorecard]\ncommand = \"sh\"\n[mcp_servers.scorecard.sandbox]\nnet = \"internet\"\n", NULL,
     "t.toml:4:7: mcp_servers.scorecard.sandbox.net: expected \"none\", \"loopback\", \"all\" or \"allow\", got \"internet\"",
     NULL},
    {"t.toml", "[sandbox]\nnet = true\n", NULL,
     "t.toml:2:7: sandbox.net: expected \"none\", \"loopback\", \"all\" or \"allow\", got a bool", NULL},
    {"t.toml", "[sandbox]\nmode = \"requir\"\n", NULL,
     "t.toml:2:8: sandbox.mode: expected \"require\", \"prefer\" or \"off\", got \"requir\"",
     "did you mean \"require\"?"},
    {"t.toml", "[sandbox]\nread = \".\"\n", NULL,
     "t.toml:2:8: sandbox.read: expected an array of paths (strings), got a string",
     "read takes a list of paths, even of one: read = [\".\"]"},
    {"t.toml", "[sandbox]\nwrite = [\"/tmp\", 7]\n", NULL,
     "t.toml:2:18: sandbox.write: expected an array of paths (strings), got an integer in the array", NULL},
    {"t.toml", "[sandbox]\nrequire = [\"fs.raed\"]\n", NULL,
     "t.toml:2:12: sandbox.require: expected a property name (fs.read, net.none, ...), got \"fs.raed\"",
     "did you mean \"fs.read\"?"},
    {"t.toml", "[sandbox]\nmemory = \"12Q\"\n", NULL, "t.toml:2:10: sandbox.memory: \"12Q\": unknown unit",
     "write the number, then K, M, G or T (e.g. 512M, 2G)"},
    {"t.toml", "[sandbox]\nmemory = \"99999999999999T\"\n", NULL,
     "t.toml:2:10: sandbox.memory: \"99999999999999T\": too large: the largest size is 8388607T (2^63 - 1 bytes)",
     "give what the sandbox may use, e.g. 512M or 2G"},
    {"t.toml", "[sandbox]\ntimeout = 1e10\n", NULL,
     "t.toml:2:11: sandbox.timeout: 1e+10: more than 1000000000 seconds (31 years), the longest timeout",
     "give at most 1000000000, or no timeout for none"},
    {"t.toml", "[sandbox]\nfiles = 3\n", NULL,
     "t.toml:2:9: sandbox.files: 3: a process starts with stdin, stdout and stderr open: it could not open one file "
     "more, not even its libraries",
     "give at least 4: the limit counts every descriptor, stdio included (most programs need 64 or more)"},
    {"t.toml", "[sandbox]\nmemory = 1024\n", NULL,
     "t.toml:2:10: sandbox.memory: expected a size of at least 1M (e.g. \"512M\", \"2G\") or a number of bytes, got "
     "1024",
     NULL},
    {"t.toml", "[sandbox]\npids = 0\n", NULL, "t.toml:2:8: sandbox.pids: expected a positive whole number, got 0",
     NULL},
    {"t.toml", "[sandbox]\ntmp_size = \"64K\"\n", NULL,
     "t.toml:2:12: sandbox.tmp_size: \"64K\": less than 1M, too little for a program to start",
     "give at least 1M (e.g. 512M, 2G)"},
    {"t.toml", "[sandbox]\naddress_space = true\n", NULL,
     "t.toml:2:17: sandbox.address_space: expected a size of at least 1M (e.g. \"512M\", \"2G\") or a number of "
     "bytes, got a bool",
     NULL},
    {"t.toml", "[sandbox]\ncpu = 1.5\n", NULL, "t.toml:2:7: sandbox.cpu: expected a positive whole number, got 1.5, a number with a fraction part",
     NULL},
    {"t.toml", "[sandbox]\ntimeout = -1\n", NULL,
     "t.toml:2:11: sandbox.timeout: expected a positive number of seconds, got -1", NULL},
    {"t.toml", "[sandbox]\ntimeout = \"5s\"\n", NULL,
     "t.toml:2:11: sandbox.timeout: expected a positive number of seconds, got a string", NULL},
    {"t.toml", "sandbox = 1\n", NULL, "t.toml:1:11: sandbox: expected a table, got an integer", NULL},
    {"t.toml", "mcp_servers = []\n", NULL, "t.toml:1:15: mcp_servers: expected a table of servers, got an array", NULL},
    {"t.toml", "[mcp_servers]\nx = \"sh\"\n", NULL,
     "t.toml:2:5: mcp_servers.x: expected a table (the server's command, args, env, ...), got a string", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\", \"args\": [\"-c\", true]}}}", NULL,
     "c.json:1:55: mcpServers.x.args: expected strings, got a boolean in the array", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\", \"env\": {\"A\": 1}}}}", NULL,
     "c.json:1:53: mcpServers.x.env.A: expected a string, got a number", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": \"sh\"}}", NULL,
     "c.json:1:22: mcpServers.x: expected an object (the server's command, args, env, ...), got a string", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\", \"cwd\": null}}}", NULL,
     "c.json:1:47: mcpServers.x.cwd: expected a directory, got null; leave the key out instead", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\", \"type\": \"ws\"}}}", NULL,
     "c.json:1:48: mcpServers.x.type: expected \"stdio\", \"http\", \"sse\" or \"streamable-http\", got \"ws\"",
     "did you mean \"sse\"?"},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\", \"enabled\": \"no\"}}}", NULL,
     "c.json:1:51: mcpServers.x.enabled: expected true or false, got a string", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\", \"url\": \"https://x.test/mcp\"}}}", NULL,
     "c.json:1:23: mcpServers.x: both a command and url: expected one of the two (a local server is started from its "
     "command, a remote one is reached at its URL)",
     NULL},
    /* servers moat does not start: the reason, when one is selected */
    {"c.json", "{\"mcpServers\": {\"x\": {\"type\": \"sse\", \"url\": \"http://127.0.0.1:9/sse\"}}}", "x",
     "c.json:1:45: mcpServers.x: a remote server (url = \"http://127.0.0.1:9/sse\"): there is nothing to run or "
     "sandbox on this machine",
     "moat sandboxes the servers it starts (stdio); the client reaches a remote one itself"},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenabled = false\n", "x",
     "t.toml:3:11: mcp_servers.x.enabled: server \"x\" is disabled (enabled = false): its client does not start it, "
     "and neither does moat",
     "set enabled = true in the file (or remove the key) to use it"},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\",\n \"disabled\": true}}}", "x",
     "c.json:2:14: mcpServers.x.disabled: server \"x\" is disabled (disabled = true): its client does not start it, "
     "and neither does moat",
     "set disabled = false in the file (or remove the key) to use it"},
    {"c.json", "{\"servers\": {\"x\": {\"command\": \"sh\", \"env\": {\"K\": \"${input:key}\"}}}}", "x",
     "c.json:1:50: servers.x.env.K: ${input:key} is a value VS Code prompts for: moat cannot fill it in",
     "give the value in moat's environment and write ${NAME} instead, or leave this server to VS Code"},
    /* VS Code's sandbox and moat's share the name: moat's keys are never dropped for VS Code's */
    {"c.json", "{\"servers\": {\"x\": {\"command\": \"sh\", \"sandbox\": {\"deny\": [\"/tmp\"], \"filesystem\": {}}}}}",
     NULL,
     "c.json:1:67: servers.x.sandbox.filesystem: unknown key; expected one of backend, mode, profile, read, write, "
     "deny, unprotect, unix_sockets, net, network, env_pass, require, memory, pids, files, cpu, address_space, "
     "tmp_size, timeout",
     NULL},
    {"c.json",
     "{\"servers\": {\"x\": {\"command\": \"sh\", \"sandboxEnabled\": false, \"sandbox\": {\"network\": "
     "{\"allow\": [\"x.test\"], \"allowedDomains\": []}}}}}",
     NULL, "c.json:1:107: servers.x.sandbox.network.allowedDomains: unknown key; expected one of allow, resolve",
     NULL},
    {"c.json", "{\"servers\": {\"x\": {\"command\": \"sh\", \"sandboxEnabled\": true}}}", "x",
     "c.json:1:55: servers.x.sandboxEnabled: VS Code's own sandbox is on for this server: moat does not translate its "
     "rules",
     "remove sandboxEnabled to run it under moat's policy (docs/config.md), or leave it to VS Code"},

    /* syntax errors of the two formats */
    {"t.toml", "[mcp_servers.x]\ncommand = \n", NULL, "t.toml:2:11: expected a value, found end of line", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\",}}}", NULL,
     "c.json:1:39: string or '}' expected near '}'",
     "a comma after the last item of an array or object, which JSON does not allow: remove it"},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\" /* open", NULL,
     "c.json:1:45: '}' expected near end of file", NULL},
    {"c.json", "[1]", NULL, "c.json:1:1: expected an object at the top, got an array", NULL},
    {"t.json.bak", "{\"mcpServers\": 5}", NULL,
     "t.json.bak:1:16: mcpServers: expected an object of servers, got a number", NULL},

    /* duplicate servers: twice in one form, or in two forms */
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\n[mcpServers.x]\ncommand = \"sh\"\n", NULL,
     "t.toml:3:13: mcpServers.x: server \"x\" is defined twice (first at 1:14 as mcp_servers.x)",
     "keep one of them, or give the other another name"},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\n[mcp_servers.x]\ncommand = \"sh\"\n", NULL,
     "t.toml:3:14: table 'mcp_servers.x' is defined twice", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\"},\n  \"x\": {\"command\": \"sh\"}}}", NULL,
     "c.json:2:5: duplicate object key near '\"x\"'", NULL},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\"}}, \"mcp_servers\": {\"x\": {\"command\": \"sh\"}}}",
     NULL, "c.json:1:58: mcp_servers.x: server \"x\" is defined twice (first at 1:17 as mcpServers.x)",
     "keep one of them, or give the other another name"},

    /* environment: $VAR syntax and hooks */
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenv = { A = \"${B\" }\n", NULL,
     "t.toml:3:13: mcp_servers.x.env.A: bad variable reference \"${B\"; expected $NAME, ${NAME}, ${NAME:-DEFAULT} or "
     "$$ (a literal $)",
     NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenv = { A = \"x-$1\" }\n", NULL,
     "t.toml:3:13: mcp_servers.x.env.A: bad variable reference \"$1\"; expected $NAME, ${NAME}, ${NAME:-DEFAULT} or "
     "$$ (a literal $)",
     NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenv = { A = \"cost: 5$\" }\n", NULL,
     "t.toml:3:13: mcp_servers.x.env.A: bad variable reference \"$\"; expected $NAME, ${NAME}, ${NAME:-DEFAULT} or "
     "$$ (a literal $)",
     NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenv = { A = \"${}\" }\n", NULL,
     "t.toml:3:13: mcp_servers.x.env.A: bad variable reference \"${}\"; expected $NAME, ${NAME}, ${NAME:-DEFAULT} or "
     "$$ (a literal $)",
     NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenv = { A = \"${B-x}\" }\n", NULL,
     "t.toml:3:13: mcp_servers.x.env.A: bad variable reference \"${B-x}\"; expected $NAME, ${NAME}, ${NAME:-DEFAULT} "
     "or $$ (a literal $)",
     NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenv = { \"A.B\" = \"1\" }\n", NULL,
     "t.toml:3:9: mcp_servers.x.env.\"A.B\": expected a variable name ([A-Za-z_][A-Za-z0-9_]*) as the key", NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenv = { LD_PRELOAD = \"$EVIL\" }\n", NULL,
     "t.toml:3:9: mcp_servers.x.env.LD_PRELOAD: refusing the loader or interpreter hook LD_PRELOAD from a config "
     "file",
     "it would run code before the program's own; remove it from the file, and if it is really wanted give it on "
     "the command line: --env LD_PRELOAD=VALUE"},
    /* A literal value too: the file may be a repository's. */
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\n[mcp_servers.x.env]\nA = \"1\"\nBASH_ENV = \"./x.sh\"\n", NULL,
     "t.toml:5:1: mcp_servers.x.env.BASH_ENV: refusing the loader or interpreter hook BASH_ENV from a config file",
     "it would run code before the program's own; remove it from the file, and if it is really wanted give it on "
     "the command line: --env BASH_ENV=VALUE"},
    {"c.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\",\n  \"env\": {\"A\": \"1\", \"LD_PRELOAD\": \"./x.so\"}}}}",
     NULL,
     "c.json:2:21: mcpServers.x.env.LD_PRELOAD: refusing the loader or interpreter hook LD_PRELOAD from a config "
     "file",
     "it would run code before the program's own; remove it from the file, and if it is really wanted give it on "
     "the command line: --env LD_PRELOAD=VALUE"},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nenv_vars = [\"TERM\", \"NODE_OPTIONS\"]\n", NULL,
     "t.toml:3:21: mcp_servers.x.env_vars: refusing to pass the loader or interpreter hook NODE_OPTIONS through",
     "it would run code before the program's own; if it is really wanted, give its value on the command line: --env "
     "NODE_OPTIONS=VALUE"},
    {"t.toml", "[sandbox]\nenv_pass = [\"not valid\"]\n", NULL,
     "t.toml:2:13: sandbox.env_pass: expected a variable name ([A-Za-z_][A-Za-z0-9_]*), got \"not valid\"", NULL},

    /* profiles */
    {"t.toml", "[profiles.a]\nextends = \"b\"\n[profiles.b]\nextends = \"a\"\n", NULL,
     "t.toml:4:11: profiles.b.extends: profiles extend each other in a cycle (b -> a -> b); expected a chain that "
     "ends in a built-in profile",
     NULL},
    {"t.toml", "[profiles.a]\nextends = \"a\"\n", NULL,
     "t.toml:2:11: profiles.a.extends: profiles extend each other in a cycle (a -> a); expected a chain that ends "
     "in a built-in profile",
     NULL},
    {"t.toml", "[profiles.a]\nextends = \"stricter\"\n", NULL,
     "t.toml:2:11: profiles.a.extends: unknown profile \"stricter\"; expected a built-in profile or one defined under "
     "[profiles]",
     "did you mean \"strict\"? Known profiles: strict, exec, mcp, network, a"},
    {"t.toml", "[sandbox]\nprofile = \"mpc\"\n", NULL,
     "t.toml:2:11: sandbox.profile: unknown profile \"mpc\"; expected a built-in profile or one defined under "
     "[profiles]",
     "did you mean \"mcp\"? Known profiles: strict, exec, mcp, network"},
    {"t.toml", "[sandbox]\nprofile = \"nope\"\n", NULL,
     "t.toml:2:11: sandbox.profile: unknown profile \"nope\"; expected a built-in profile or one defined under "
     "[profiles]",
     "known profiles: strict, exec, mcp, network"},
    {"t.toml", "[profiles.mcp]\nread = []\n", NULL,
     "t.toml:1:11: profiles.mcp: \"mcp\" is a built-in profile; expected another name (a profile can extend it: "
     "extends = \"mcp\")",
     NULL},

    /* network.allow and network.resolve (docs/policy.md) */
    {"t.toml", "[sandbox]\nnetwork.allow = [\"exa mple.com\"]\n", NULL, 
     "t.toml:2:18: sandbox.network.allow: \"exa mple.com\": character ' ' not allowed in a host name (letters, digits, '-', '.')",
     NULL},
    {"t.toml", "[sandbox]\nnetwork = { allow = [\"10.1.2.3/8\"] }\n", NULL, 
     "t.toml:2:22: sandbox.network.allow: \"10.1.2.3/8\": 10.1.2.3/8 has host bits set (expected the network address)",
     "write 10.0.0.0/8 for the network, or 10.1.2.3 alone for the one address"},
    {"t.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\",\n \"sandbox\": {\"network\": {\"allow\": [\"[::1\"]}}}}}\n", NULL, 
     "t.json:2:36: mcpServers.x.sandbox.network.allow: \"[::1\": unclosed '['",
     "an IPv6 address with a port is written [v6]:port"},
    {"t.toml", "[profiles.p]\nnetwork.resolve = [\"x.com\"]\n", NULL, 
     "t.toml:2:20: profiles.p.network.resolve: \"x.com\": expected NAME=IP",
     "e.g. api.example.com=203.0.113.7"},
    {"t.toml", "[sandbox]\nnetwork.allw = []\n", NULL, 
     "t.toml:2:9: sandbox.network.allw: unknown key; expected one of allow, resolve",
     "did you mean 'allow'?"},
    {"t.toml", "[sandbox]\nnetwork.allow = [\"x.com:0\"]\n", NULL, 
     "t.toml:2:18: sandbox.network.allow: \"x.com:0\": port \"0\": expected a number 1-65535 or *",
     NULL},
    {"t.toml", "[sandbox]\nnetwork = \"all\"\n", NULL, 
     "t.toml:2:11: sandbox.network: expected a table (allow, resolve), got a string",
     NULL},
    {"t.toml", "[sandbox]\nnet = \"all\"\nnetwork.allow = [\"x.com\"]\n[mcp_servers.x]\ncommand = \"sh\"\n", "x", 
     "t.toml:3:18: allowed destination x.com contradicts net all",
     "drop --net all (net = \"all\") to allow only the listed destinations, or drop the destinations to open the whole network"},
    {"t.toml", "[sandbox]\nnetwork.allow = [\"x.com\"]\nnetwork.resolve = [\"y.com=1.2.3.4\"]\n[mcp_servers.x]\ncommand = \"sh\"\n", "x", 
     "t.toml:3:20: the pinned name y.com is not in the allowlist",
     "allow it too (--allow-net y.com, config network.allow), or drop the pin"},
    /* destination sets (sources/netsets.h) */
    {"t.toml", "[sandbox]\nnetwork.allow = [\"x.com\", \"@nmp\"]\n", NULL,
     "t.toml:2:27: sandbox.network.allow: no destination set named \"@nmp\"", "did you mean @npm? the sets are @npm, @pypi, @crates, @go and @registries (all four)"},
    {"t.json", "{\"mcpServers\": {\"x\": {\"command\": \"sh\",\n \"sandbox\": {\"network\": {\"allow\": [\"@Go\"]}}}}}\n", NULL,
     "t.json:2:36: mcpServers.x.sandbox.network.allow: no destination set named \"@Go\"", "did you mean @go? the sets are @npm, @pypi, @crates, @go and @registries (all four)"},
    {"t.toml", "[sandbox]\nnet = \"none\"\nnetwork.allow = [\"@crates\"]\n[mcp_servers.x]\ncommand = \"sh\"\n", "x",
     "t.toml:3:18: allowed destination index.crates.io:443 from @crates (crates.io's sparse index) contradicts net "
     "none",
     "drop --net none (net = \"none\"): the allowlist implies net allow, or drop the destinations"},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nsandbox = { net = \"allow\" }\n", "x", 
     "net allow without destinations: nothing to allow",
     "name them with --allow-net DEST (config: network.allow), or use --net none"},

    /* found when the server's policy is built */
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nsandbox = { write = [\"/tmp\"], deny = [\"/tmp\"] }\n", "x",
     "t.toml:3:22: mcp_servers.x.sandbox.write: /tmp is both writable and denied (at t.toml:3:39); expected one of "
     "the two",
     "remove it from one of the two lists"},
    {"t.toml", "[sandbox]\ndeny = [\"/tmp\"]\n[mcp_servers.x]\ncommand = \"sh\"\nsandbox = { write = [\"/tmp\"] }\n",
     "x",
     "t.toml:5:22: mcp_servers.x.sandbox.write: /tmp is both writable and denied (at t.toml:2:9); expected one of "
     "the two",
     "remove it from one of the two lists"},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nsandbox = { read = [\"/nonexistent-moat/x\"] }\n", "x",
     "t.toml:3:21: mcp_servers.x.sandbox.read: /nonexistent-moat/x does not exist; expected an existing path (mode "
     "require)",
     "create it, remove it from mcp_servers.x.sandbox.read, or set mode = \"prefer\" to skip missing paths"},
    {"t.toml",
     "[profiles.p]\nread = [\"/nonexistent-moat\"]\n[mcp_servers.x]\ncommand = \"sh\"\nsandbox = "
     "{ profile = \"p\" }\n",
     "x", "t.toml:2:9: profiles.p.read: /nonexistent-moat does not exist; expected an existing path (mode require)",
     "create it, remove it from profiles.p.read, or set mode = \"prefer\" to skip missing paths"},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\ncwd = \"/nonexistent-moat\"\n", "x",
     "t.toml:3:7: mcp_servers.x.cwd: /nonexistent-moat does not exist; expected a directory", NULL},
    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\n", "y", "t.toml: no server named \"y\"", "known servers: x"},
    {"t.toml", "[mcp_servers.x]\ncommand = [\"no-such-program-moat\"]\n", "x",
     "t.toml:2:11: mcp_servers.x.command: no-such-program-moat: command not found in PATH",
     "give the absolute path, or check PATH (/usr/bin:/bin)"},
};

static void test_bad_configs(void)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad_rows); i++) {
		const struct bad_row *r = &bad_rows[i];
		struct moat_error err;
		int rc = load_and_build(r->file, r->text, r->server, &err);

		ok(rc < 0 && moat_error_exit_status(&err) == 125 + (strstr(r->message, "command not found") ? 2 : 0),
		   "bad config %zu is refused with its exit status", i);
		is_str(err.message, r->message, "  message %zu", i);
		is_str(err.hint[0] ? err.hint : NULL, r->hint, "  hint %zu", i);
	}
}

/* policy_to_json without the origins: they differ between files. */
static char *policy_sans_origins(const struct moat_policy *p)
{
	json_t *j = policy_to_json(p), *paths = json_object_get(j, "paths"), *item;
	size_t i;
	char *s;

	json_array_foreach(paths, i, item) json_object_del(item, "origin");
	json_array_foreach(json_object_get(j, "net_allow"), i, item) json_object_del(item, "origin");
	json_array_foreach(json_object_get(j, "net_resolve"), i, item) json_object_del(item, "origin");
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	return s;
}

static char *build_server(const char *file, const char *text, const char *server, struct moat_policy *p)
{
	struct moat_error err;
	struct moat_config *c = load(file, text, &err);
	struct config_request r = {.server = server, .mode = -1, .env = test_env};
	char *s = NULL;

	policy_init(p);
	if (!c) {
		printf("# load %s: %s\n", file, err.message);
		return NULL;
	}
	if (config_build(c, &r, p, NULL, &err) < 0 || policy_validate(p, &err) < 0)
		printf("# build %s: %s\n", file, err.message);
	else
		s = policy_sans_origins(p);
	config_free(c);
	return s;
}

static void test_three_formats(void)
{
	static const char darnit[] = "[mcp_servers.fs]\n"
				     "command = [\"sh\", \"-c\", \"exit 0\"]\n"
				     "env = { TOKEN = \"$T\", MODE = \"fast\", BOTH = \"${T}-$$\" }\n"
				     "env_vars = [\"TERM\"]\n"
				     "optional = true\n"
				     "[mcp_servers.fs.sandbox]\n"
				     "net = \"loopback\"\n"
				     "read = [\"/usr/share\"]\n"
				     "deny = [\"/usr/share/doc\"]\n"
				     "pids = 64\n";
	static const char codex[] =
	    "[mcp_servers.fs]\n"
	    "command = \"sh\"\n"
	    "args = [\"-c\", \"exit 0\"]\n"
	    "env_vars = [\"TERM\"]\n"
	    "optional = true\n"
	    "env.TOKEN = \"$T\"\n"
	    "env.MODE = \"fast\"\n"
	    "env.BOTH = \"${T}-$$\"\n"
	    "sandbox = { net = \"loopback\", read = [\"/usr/share\"], deny = [\"/usr/share/doc\"], "
	    "pids = 64 }\n";
	static const char claude[] = "{\n"
				     "  \"mcpServers\": {\n"
				     "    \"fs\": {\n"
				     "      \"command\": \"sh\",\n"
				     "      \"args\": [\"-c\", \"exit 0\"],\n"
				     "      \"env\": {\"TOKEN\": \"$T\", \"MODE\": \"fast\", \"BOTH\": \"${T}-$$\"},\n"
				     "      \"env_vars\": [\"TERM\"],\n"
				     "      \"optional\": true,\n"
				     "      \"sandbox\": {\"net\": \"loopback\", \"read\": [\"/usr/share\"],\n"
				     "                  \"deny\": [\"/usr/share/doc\"], \"pids\": 64}\n"
				     "    }\n"
				     "  }\n"
				     "}\n";
	struct moat_policy pd, pc, pj;
	char *d = build_server("/cfg/darnit.toml", darnit, "fs", &pd);
	char *x = build_server("/cfg/codex.toml", codex, "fs", &pc);
	char *j = build_server("/cfg/claude_desktop_config.json", claude, "fs", &pj);
	const struct moat_env_rule *e;

	ok(d && x && j, "the darnit, Codex and Claude forms all load and build");
	is_str(x, d, "Codex TOML gives the same policy as darnit TOML");
	is_str(j, d, "Claude JSON gives the same policy as darnit TOML");
	ok(d && strstr(d, "\"argv\":[\"sh\",\"-c\",\"exit 0\"]") && strstr(d, "\"net\":\"loopback\"") &&
	       strstr(d, "\"profile\":\"mcp\"") && strstr(d, "\"pids\":64"),
	   "  which has the command, the net mode, the server default profile and the limit");
	e = policy_find_env(&pj, "TOKEN");
	is_str(e ? e->value : NULL, "tok-value", "$T is taken from moat's environment");
	e = policy_find_env(&pj, "BOTH");
	is_str(e ? e->value : NULL, "tok-value-$", "${T} and $$ expand inside a value");
	e = policy_find_env(&pj, "TERM");
	ok(e && e->value == NULL, "env_vars are passed through");
	ok(pd.n_paths > 0 && strcmp(pd.paths[pd.n_paths - 2].path, "/usr/share") == 0 &&
	       pd.paths[pd.n_paths - 2].origin.line == 8 && pd.paths[pd.n_paths - 2].origin.col == 9 &&
	       strcmp(pd.paths[pd.n_paths - 2].origin.source, "/cfg/darnit.toml") == 0,
	   "a rule keeps its file:line:col as its origin");
	ok(pj.n_paths > 0 && pj.paths[pj.n_paths - 2].origin.line == 9 && pj.paths[pj.n_paths - 2].origin.col == 47,
	   "  in JSON too (%d:%d)", pj.n_paths ? pj.paths[pj.n_paths - 2].origin.line : 0,
	   pj.n_paths ? pj.paths[pj.n_paths - 2].origin.col : 0);
	free(d);
	free(x);
	free(j);
	policy_free(&pd);
	policy_free(&pc);
	policy_free(&pj);
}

/* network.allow and network.resolve in moat's TOML, a Codex-style server
 * table and Claude's JSON give the same policy: net allow, the entries as
 * parsed, each with its file:line:col. */
static void test_network_forms(void)
{
	static const char moat_toml[] = "[profiles.web]\n"
					"extends = \"mcp\"\n"
					"network.allow = [\"api.example.com\"]\n"
					"[mcp_servers.fs]\n"
					"command = \"sh\"\n"
					"sandbox = { profile = \"web\", network.allow = [\"*.Example.ORG.:8443\", \"10.0.0.0/8\"],"
					" network.resolve = [\"api.example.com=192.0.2.1\"] }\n";
	static const char codex[] = "[profiles.web]\n"
				    "extends = \"mcp\"\n"
				    "[profiles.web.network]\n"
				    "allow = [\"api.example.com\"]\n"
				    "[mcp_servers.fs]\n"
				    "command = \"sh\"\n"
				    "[mcp_servers.fs.sandbox]\n"
				    "profile = \"web\"\n"
				    "[mcp_servers.fs.sandbox.network]\n"
				    "allow = [\"*.Example.ORG.:8443\", \"10.0.0.0/8\"]\n"
				    "resolve = [\"api.example.com=192.0.2.1\"]\n";
	static const char claude[] = "{\"profiles\": {\"web\": {\"extends\": \"mcp\",\n"
				     "  \"network\": {\"allow\": [\"api.example.com\"]}}},\n"
				     " \"mcpServers\": {\"fs\": {\"command\": \"sh\", \"sandbox\": {\"profile\": \"web\",\n"
				     "  \"network\": {\"allow\": [\"*.Example.ORG.:8443\", \"10.0.0.0/8\"],\n"
				     "               \"resolve\": [\"api.example.com=192.0.2.1\"]}}}}}\n";
	static const char *const files[] = {"/cfg/moat.toml", "/cfg/codex.toml", "/cfg/.mcp.json"};
	const char *const texts[] = {moat_toml, codex, claude};
	struct moat_policy pol[3];
	char *got[3];
	size_t i;

	for (i = 0; i < 3; i++)
		got[i] = build_server(files[i], texts[i], "fs", &pol[i]);
	ok(got[0] && got[1] && got[2], "network.allow and network.resolve load in moat TOML, Codex TOML and Claude JSON");
	is_str(got[1], got[0], "  Codex TOML gives the same policy");
	is_str(got[2], got[0], "  Claude JSON gives the same policy");
	ok(got[0] && strstr(got[0], "\"net\":\"allow\"") && strstr(got[0], "\"text\":\"*.Example.ORG.:8443\"") &&
	       strstr(got[0], "\"name\":\"example.org\"") && strstr(got[0], "\"ports\":[8443]"),
	   "  net allow, the entry as written and as parsed (lowercased, trailing dot off)");
	ok(pol[0].n_net_allow == 3 && pol[0].net_allow[0].origin.line == 3 && pol[0].net_allow[0].origin.col == 18 &&
	       pol[0].net_allow[1].origin.line == 6 && pol[2].n_net_allow == 3 &&
	       pol[2].net_allow[2].origin.line == 4 && pol[2].n_net_pins == 1 && pol[2].net_pins[0].origin.line == 5,
	   "  each entry and pin keeps its file:line:col (the profile's first)");
	ok(net_allow_name(&pol[0], "www.example.org", 8443) && !net_allow_name(&pol[0], "example.org", 8443) &&
	       net_allow_name(&pol[0], "api.example.com", 443) && net_name_pinned(&pol[0], "API.example.com"),
	   "  the matchers see the profile's and the server's entries");
	for (i = 0; i < 3; i++) {
		free(got[i]);
		policy_free(&pol[i]);
	}
}

/* network.allow = ["@crates"]: kept by name at load, expanded by
 * config_build with the set's file:line:col as every entry's origin; a set
 * alone means net allow, and a set named twice adds its entries once. */
static void test_network_sets(void)
{
	static const char toml[] = "[profiles.p]\n"
				   "network.allow = [\"@crates\", \"x.example.com\"]\n"
				   "[mcp_servers.s]\n"
				   "command = \"sh\"\n"
				   "sandbox = { profile = \"p\", network = { allow = [\"@crates\"] } }\n";
	static const char json[] =
	    "{\"profiles\": {\"p\": {\"network\": {\"allow\": [\"@crates\", \"x.example.com\"]}}},\n"
	    " \"mcpServers\": {\"s\": {\"command\": \"sh\",\n"
	    "  \"sandbox\": {\"profile\": \"p\", \"network\": {\"allow\": [\"@crates\"]}}}}}\n";
	struct moat_policy p[2];
	char *got[2];
	size_t i;

	got[0] = build_server("/cfg/s.toml", toml, "s", &p[0]);
	got[1] = build_server("/cfg/s.json", json, "s", &p[1]);
	ok(got[0] && got[1], "network.allow = [\"@crates\"] in a profile and a server, TOML and JSON");
	is_str(got[1], got[0], "  both forms give the same policy");
	ok(p[0].net == MOAT_NET_ALLOW && p[0].n_net_allow == 4,
	   "  net allow, the set's 3 entries once and the name (%zu)", p[0].n_net_allow);
	ok(p[0].n_net_allow == 4 && strcmp(p[0].net_allow[1].text, "index.crates.io:443") == 0 &&
	       strcmp(p[0].net_allow[1].from, "@crates (crates.io's sparse index)") == 0 &&
	       strcmp(p[0].net_allow[1].origin.source, "/cfg/s.toml") == 0 && p[0].net_allow[1].origin.line == 2 &&
	       p[0].net_allow[1].origin.col == 18 && strcmp(p[0].net_allow[0].text, "x.example.com") == 0 &&
	       !p[0].net_allow[0].from,
	   "  each entry of the set has its from and the set's file:line:col; a written entry has no from");
	ok(p[1].n_net_allow == 4 && p[1].net_allow[3].origin.line == 1 &&
	       strcmp(p[1].net_allow[3].text, "crates.io:443") == 0,
	   "  the same in JSON");
	ok(got[0] && strstr(got[0], "\"from\":\"@crates (crates.io's API)\""), "  the policy's JSON has the from");
	for (i = 0; i < 2; i++) {
		free(got[i]);
		policy_free(&p[i]);
	}
}

static bool has_rule(const struct moat_policy *p, const char *path, enum moat_access a)
{
	size_t i;

	for (i = 0; i < p->n_paths; i++)
		if (strcmp(p->paths[i].path, path) == 0 && p->paths[i].access == a)
			return true;
	return false;
}

static void test_layers(void)
{
	static const char text[] = "[sandbox]\n"
				   "net = \"loopback\"\n"
				   "mode = \"prefer\"\n"
				   "read = [\"data\", \"~/notes\"]\n"
				   "timeout = 30\n"
				   "tmp_size = \"64M\"\n"
				   "[profiles.base]\n"
				   "extends = \"network\"\n"
				   "write = [\"out\"]\n"
				   "memory = \"1G\"\n"
				   "address_space = 2147483648\n"
				   "env_pass = [\"BASE_VAR\"]\n"
				   "[profiles.leaf]\n"
				   "extends = \"base\"\n"
				   "deny = [\"out/secret\"]\n"
				   "require = [\"proc.pid\"]\n"
				   "[mcp_servers.a]\n"
				   "command = [\"sh\"]\n"
				   "cwd = \"../..\"\n"
				   "sandbox = { profile = \"leaf\", net = \"none\", timeout = 5 }\n"
				   "[mcp_servers.b]\n"
				   "command = \"sh\"\n"
				   "sandbox = \"none\"\n";
	struct moat_error err;
	struct moat_config *c = load("/cfg/dir/layers.toml", text, &err);
	struct moat_policy p;
	struct config_request r = {.server = "a", .mode = -1, .env = test_env};
	struct moat_server_meta meta;

	ok(c != NULL, "a config with [sandbox], two profiles and two servers loads (%s)", c ? "" : err.message);
	if (!c)
		return;
	ok(c->n_servers == 2 && c->n_profiles == 2 && !c->json, "  with its servers and profiles");
	is_str(c->dir, "/cfg/dir", "  the file's directory is the base for relative paths");
	policy_init(&p);
	ok(config_build(c, &r, &p, &meta, &err) == 0, "server a builds (%s)", err.message);
	is_str(p.profile, "leaf", "the server's profile is the user profile");
	ok(p.net == MOAT_NET_NONE, "the server's net wins over [sandbox], which won over the built-in network");
	ok(p.mode == MOAT_MODE_PREFER, "the mode comes from [sandbox]");
	ok(has_rule(&p, "/cfg/dir/data", MOAT_ACCESS_READ) && has_rule(&p, "/home/u/notes", MOAT_ACCESS_READ),
	   "relative paths resolve against the file's directory, ~ against HOME");
	ok(has_rule(&p, "/cfg/dir/out", MOAT_ACCESS_WRITE) && has_rule(&p, "/cfg/dir/out/secret", MOAT_ACCESS_DENY),
	   "the profile chain's rules are applied (base, then leaf)");
	ok(has_rule(&p, "/home/u/.npm", MOAT_ACCESS_READ), "  on top of the built-in profile the chain ends in");
	ok(p.limits.memory_bytes == (1 << 30) && p.limits.timeout_s == 5, "limits: the profile's and the server's");
	ok(p.limits.tmp_bytes == (64 << 20) && p.limits.address_space_bytes == (INT64_C(2) << 30),
	   "tmp_size from [sandbox], address_space from the profile");
	ok(p.require & (1u << 9), "require adds properties");
	ok(policy_find_env(&p, "BASE_VAR") != NULL, "env_pass from the profile");
	is_str(p.cwd, "/", "the server's cwd, relative to the file");
	ok(p.paths[p.n_paths - 1].optional, "in mode prefer a path to read may be missing (optional)");
	is_str(meta.name, "a", "the server's metadata is returned");
	config_server_meta_free(&meta);
	policy_free(&p);

	policy_init(&p);
	r.server = "b";
	ok(config_build(c, &r, &p, NULL, &err) == 0 && strcmp(p.backend, "none") == 0,
	   "sandbox = \"none\" sets the backend");
	is_str(p.profile, "mcp", "a server without a profile runs under mcp");
	policy_free(&p);

	policy_init(&p);
	r.server = "a";
	r.profile = "strict";
	r.mode = MOAT_MODE_REQUIRE;
	ok(config_build(c, &r, &p, NULL, &err) < 0 && strstr(err.message, "does not exist"),
	   "a --profile and --mode from the command line win (and require makes missing paths errors): %s",
	   err.message);
	policy_free(&p);

	policy_init(&p);
	r.server = NULL;
	r.profile = "nope";
	r.mode = -1;
	{
		char *argv[] = {"sh", NULL};
		r.argv = argv;
		r.argc = 1;
		ok(config_build(c, &r, &p, NULL, &err) < 0 &&
		       strcmp(err.message, "unknown profile 'nope' (neither built in nor in /cfg/dir/layers.toml)") ==
			   0 &&
		       strcmp(err.hint, "known profiles: strict, exec, mcp, network, base, leaf") == 0,
		   "an unknown --profile lists the built-in and the file's profiles: %s / %s", err.message, err.hint);
	}
	policy_free(&p);
	config_free(c);
}

static void test_expand(void)
{
	struct {
		const char *in, *want;
	} rows[] = {
	    {"plain", "plain"},
	    {"$T", "tok-value"},
	    {"${T}", "tok-value"},
	    {"a$T-b", "atok-value-b"},
	    {"$UNSET", ""},
	    {"x${UNSET}y", "xy"},
	    {"$$T", "$T"},
	    {"$EMPTY.", "."},
	    {"$T$T", "tok-valuetok-value"},
	    {"${env:T}", "tok-value"},
	    {"${T:-d}", "tok-value"},
	    {"${UNSET:-d e}", "d e"},
	    {"${EMPTY:-d}", "d"},
	    {"v${UNSET:-}w", "vw"},
	    {"${env:UNSET:-$x}", "$x"},
	};
	size_t i, at = 0, len = 0;
	bool ref;

	for (i = 0; i < ARRAY_LEN(rows); i++) {
		char *out = NULL;
		ok(config_expand_vars(rows[i].in, test_env, &out, &ref, NULL, NULL) == 0, "expand '%s'", rows[i].in);
		is_str(out, rows[i].want, "  gives '%s'", rows[i].want);
		free(out);
	}
	ok(config_expand_vars("a $1 b", NULL, NULL, &ref, &at, &len) < 0 && at == 2 && len == 2,
	   "a bad reference says where it is");
	ok(config_expand_vars("no refs $$", NULL, NULL, &ref, NULL, NULL) == 0 && !ref, "$$ is not a reference");
}

/* The clients' own keys: accepted and ignored, or used; moat's stay strict. */
static void test_client_keys(void)
{
	static const struct {
		const char *file, *text, *what;
	} good[] = {
	    {"codex.toml",
	     "model = \"o3\"\napproval_policy = \"never\"\nsandbox_mode = \"read-only\"\nprofile = \"fast\"\n"
	     "[sandbox_workspace_write]\nnetwork_access = false\n[tui]\nnotifications = true\n"
	     "[profiles.fast]\nmodel = \"o4-mini\"\nmodel_reasoning_effort = \"high\"\n"
	     "[mcp_servers.x]\ncommand = \"sh\"\nstartup_timeout_sec = 20\nstartup_timeout_ms = 20000\n"
	     "tool_timeout_sec = 1.5\nenabled_tools = [\"a\"]\ndisabled_tools = [\"b\"]\nenabled = true\n",
	     "Codex's top-level keys, a Codex profile and Codex's per-server keys"},
	    {"claude_desktop_config.json",
	     "{\"mcpServers\": {\"x\": {\"command\": \"sh\"}}, \"globalShortcut\": \"Alt+C\"}",
	     "Claude Desktop's globalShortcut"},
	    {"mcp.json",
	     "{\n // VS Code's comments\n \"inputs\": [{\"type\": \"promptString\", \"id\": \"k\"}], /* and these */\n"
	     " \"servers\": {\"x\": {\"type\": \"stdio\", \"command\": \"sh\", \"envFile\": \".env\", \"dev\": {}, "
	     "\"description\": null, \"sandboxEnabled\": false, \"sandbox\": {\"filesystem\": {}}}}}",
	     "VS Code's servers, inputs, comments, envFile, dev, an inactive sandbox and a null"},
	    {"settings.json",
	     "{\"theme\": \"GitHub\", \"sandbox\": \"docker\", \"mcp\": {\"allowed\": [\"x\"]}, \"mcpServers\": "
	     "{\"x\": "
	     "{\"command\": \"sh\", \"timeout\": 5000, \"trust\": true, \"includeTools\": [], \"excludeTools\": [], "
	     "\"description\": \"d\", \"cwd\": \"/\"}, \"r\": {\"httpUrl\": \"http://h/mcp\", \"headers\": {}}}}",
	     "Gemini CLI's settings, its sandbox, and a remote server"},
	    {"t.toml", "[mcp_servers.x]\ncommand = \"sh\"\nfrobnicate = 1\n", "a key no client documents"},
	    {"c.json",
	     "{\"sandbox\": {\"net\": \"none\", \"deny\": [\"/etc/hostname\"]}, \"profiles\": {}, \"mcpServers\": "
	     "{\"x\": {\"command\": \"true\", \"sandbox\": {\"net\": \"none\"}}}}",
	     "moat's keys as they are spelt (the control of the case typos)"},
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(good); i++) {
		struct moat_error err;
		char file[64];

		snprintf(file, sizeof(file), "/cfg/%s", good[i].file);
		ok(load_and_build(file, good[i].text, "x", &err) == 0, "accepted: %s (%s)", good[i].what, err.message);
	}
	{
		struct moat_error err;
		struct moat_config *c = load("/cfg/c.toml",
					     "[profiles.fast]\nmodel = \"o3\"\n[profiles.mine]\nextends = \"mcp\"\n"
					     "[mcp_servers.x]\ncommand = \"sh\"\nagent = 1\n"
					     "[mcp_servers.r]\nurl = \"https://x.test/mcp\"\n",
					     &err);

		ok(c && c->n_profiles == 1 && strcmp(c->profiles[0].name, "mine") == 0,
		   "a Codex profile is left out, moat's is kept");
		ok(c && c->n_servers == 2 && config_local_servers(c) == 1 && c->servers[1].skip,
		   "a remote server is kept, skipped");
		ok(c && c->n_notes == 2 &&
		       strcmp(c->notes[0], "/cfg/c.toml:7:1: mcp_servers.x.agent: not a key moat or "
					   "the clients it knows use: ignored") == 0,
		   "an ignored unlisted key and the remote server are noted (%s)", c && c->n_notes ? c->notes[0] : "");
		config_free(c);
	}
	{
		/* cwd, env and env_vars are used; ${env:NAME} and ${NAME:-D} expand */
		struct moat_policy p;
		char *got = build_server(
		    "/cfg/mcp.json",
		    "{\"servers\": {\"x\": {\"command\": \"sh\", \"cwd\": \"/\", \"env_vars\": [\"TERM\"], "
		    "\"env\": {\"A\": \"${env:T}\", \"B\": \"${NOPE:-dflt}\"}}}}",
		    "x", &p);
		const struct moat_env_rule *a = policy_find_env(&p, "A"), *b = policy_find_env(&p, "B"),
					   *t = policy_find_env(&p, "TERM");

		ok(got && strcmp(p.cwd, "/") == 0, "VS Code form: cwd is the server's directory");
		ok(a && b && t && strcmp(a->value, "tok-value") == 0 && strcmp(b->value, "dflt") == 0 && !t->value,
		   "  env (${env:T}, ${NOPE:-dflt}) and env_vars");
		free(got);
		policy_free(&p);
	}
}

/* `moat config check` names every problem of a file, not the first. */
static void test_all_problems(void)
{
	static const char text[] = "[sandbx]\nnet = \"none\"\n"		/* 1: a typo of moat's key */
				   "[mcp_servers.a]\ncomand = \"sh\"\n" /* 2: a typo of command */
				   "[mcp_servers.b]\ncommand = \"sh\"\nsandbox = { net = \"x\" }\n"    /* 3 */
				   "[mcp_servers.c]\ncommand = \"sh\"\nenv = { LD_PRELOAD = \"l\" }\n" /* 4 */
				   "[mcp_servers.d]\ncommand = \"sh\"\nsandbox = { read = [\"/nonexistent-moat\"] }\n"
				   "[profiles.p]\nextnds = \"mcp\"\n"; /* 6 */
	static const char *const want[] = {
	    "t.toml:1:2: sandbx: unknown key; expected one of mcp_servers, mcpServers, servers, sandbox, profiles",
	    "t.toml:4:1: mcp_servers.a.comand: unknown key; expected one of command, args, env, env_vars, cwd, type, "
	    "enabled, disabled, url, httpUrl, serverUrl, optional, install_hint, trusted_publisher, sandbox",
	    "t.toml:7:19: mcp_servers.b.sandbox.net: expected \"none\", \"loopback\", \"all\" or \"allow\", got \"x\"",
	    "t.toml:10:9: mcp_servers.c.env.LD_PRELOAD: refusing the loader or interpreter hook LD_PRELOAD from a "
	    "config "
	    "file",
	    "t.toml:15:1: profiles.p.extnds: unknown key; expected one of extends, backend, mode, read, write, deny, "
	    "unprotect, unix_sockets, net, network, env_pass, require, memory, pids, files, cpu, address_space, "
	    "tmp_size, timeout",
	    "t.toml:13:21: mcp_servers.d.sandbox.read: /nonexistent-moat does not exist; expected an existing path "
	    "(mode require)",
	};
	char dir[] = "/tmp/moat-test-problems.XXXXXX", file[PATH_MAX];
	struct moat_config *c = NULL;
	struct moat_error err = {0};
	bool stopped = true;
	size_t i;
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(file, sizeof(file), "%s/t.toml", dir);
	f = fopen(file, "w");
	fputs(text, f);
	fclose(f);
	ok(config_load_all(file, "/home/u", &c, &stopped, &err) == 0 && c && !stopped,
	   "a file with problems is loaded for config check");
	ok(c && config_check(c, test_env, &err) < 0, "config check fails");
	ok(c && c->n_problems == ARRAY_LEN(want), "every problem is found: %zu", c ? c->n_problems : 0);
	for (i = 0; c && i < ARRAY_LEN(want) && i < c->n_problems; i++)
		ok(strstr(c->problems[i].message, want[i]) != NULL, "  problem %zu: %s", i, c->problems[i].message);
	is_str(err.message, c && c->n_problems ? c->problems[0].message : NULL, "  the first is the error");
	config_free(c);
	c = NULL;
	ok(config_load(file, "/home/u", &c, &err) < 0 && !c && strstr(err.message, "sandbx"),
	   "config_load refuses the file with its first problem");

	f = fopen(file, "w");
	fputs("[sandbox]\nnett = 1\n[mcp_servers.x]\ncommand = \"sh\"\n[mcp_servers.y\n", f);
	fclose(f);
	ok(config_load_all(file, "/home/u", &c, &stopped, &err) < 0 && stopped && !c,
	   "a syntax error stops the reading: %s", err.message);
	unlink(file);
	rmdir(dir);
}

/* For `moat run --report`: a server whose command is not installed still
 * builds, the error put aside for the report of the run that cannot start. */
static void test_exe_err(void)
{
	struct moat_error err, exe = {0};
	struct moat_config *c = load("/cfg/t.toml", "[mcp_servers.x]\ncommand = \"no-such-program-moat\"\n", &err);
	struct config_request r = {.server = "x", .mode = -1, .env = test_env, .exe_err = &exe};
	struct moat_policy p;

	policy_init(&p);
	ok(c && config_build(c, &r, &p, NULL, &err) == 0, "a missing command does not stop the build");
	ok(exe.kind == MOAT_E_NOTFOUND && strstr(exe.message, "no-such-program-moat: command not found"),
	   "  its error is put aside: %s", exe.message);
	is_str(p.exe, "no-such-program-moat", "  the command as written stands in for the path");
	policy_free(&p);
	config_free(c);
}

static void test_helpers(void)
{
	int64_t v = 0;
	char *k;

	ok(moat_parse_size("512M", &v) == 0 && v == 512 << 20, "512M");
	ok(moat_parse_size("2GiB", &v) == 0 && v == (int64_t)2 << 30, "2GiB");
	{
		struct size_problem pb = {0};

		ok(moat_parse_size_min("1.5G", &v, &pb) < 0 && pb.why && strstr(pb.why, "fraction") &&
			   strstr(pb.fix, "1536M"),
		   "1.5G: refused as a fraction, with the size in a smaller unit");
		pb = (struct size_problem){0};
		ok(moat_parse_size_min("1Q", &v, &pb) < 0 && pb.why && strstr(pb.why, "unknown unit"),
		   "control: 1Q is an unknown unit");
	}
	ok(moat_parse_size("-1", &v) < 0 && moat_parse_size("1X", &v) < 0 && moat_parse_size("", &v) < 0,
	   "bad sizes are refused");
	{
		static const int64_t back[] = {1000, 1024, 1536 << 10, 64 << 20, (int64_t)3 << 30, (int64_t)1 << 40,
					       ((int64_t)1 << 40) + 512};
		char text[32];
		size_t i;
		int bad = 0;

		for (i = 0; i < sizeof(back) / sizeof(back[0]); i++) {
			moat_size_text(text, sizeof(text), back[i]);
			bad += moat_parse_size(text, &v) != 0 || v != back[i];
		}
		moat_size_text(text, sizeof(text), 64 << 20);
		ok(bad == 0 && strcmp(text, "64M") == 0, "moat_size_text reads back exactly, shortest unit (64M: %s)", text);
	}
	k = config_keypath("mcp_servers", "a.b", 3);
	is_str(k, "mcp_servers.\"a.b\"", "a key with a dot is quoted in a key path");
	free(k);
	k = config_keypath(NULL, "x-y_1", 5);
	is_str(k, "x-y_1", "a bare key is not");
	free(k);
	ok(config_intern("f.toml") == config_intern("f.toml"), "file names are interned once");
}

static void test_cli(void)
{
	char dir[] = "/tmp/moat-test-config.XXXXXX", file[PATH_MAX];
	struct moat_policy p;
	struct moat_run_options o;
	struct moat_error err = {0};
	struct moat_server_meta meta;
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(file, sizeof(file), "%s/servers.toml", dir);
	f = fopen(file, "w");
	fputs("[mcp_servers.s]\ncommand = [\"sh\", \"-c\", \"exit 0\"]\ninstall_hint = \"apt install dash\"\n"
	      "trusted_publisher = \"debian\"\nsandbox = { net = \"loopback\", pids = 10 }\n",
	      f);
	fclose(f);

	{
		char *argv[] = {"run", "--config", file, "--server", "s", "--net",
				"all", "--pids",   "20", "--",	     "x", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run_meta(11, argv, test_env, &p, &o, &meta, &err) == 0, "moat run --config --server (%s)",
		   err.message);
		ok(p.argc == 4 && strcmp(p.argv[3], "x") == 0, "  extra args after -- are appended to the command");
		ok(p.net == MOAT_NET_ALL && p.limits.pids == 20, "  flags win over the file");
		is_str(meta.trusted_publisher, "debian", "  the server's metadata comes back");
		is_str(meta.install_hint, "apt install dash", "  with the install hint");
		config_server_meta_free(&meta);
		policy_free(&p);
		run_options_free(&o);
	}
	{
		/* --allow-net over the file's net loopback: net allow (flags win). */
		char *argv[] = {"run", "--config", file, "--server", "s", "--allow-net", "LocalHost:8080",
				"--resolve", "localhost=127.0.0.1", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run(9, argv, test_env, &p, &o, &err) == 0 && p.net == MOAT_NET_ALLOW && p.n_net_allow == 1 &&
		       strcmp(p.net_allow[0].name, "localhost") == 0 && p.net_allow[0].host_loopback &&
		       p.n_net_pins == 1 && strcmp(p.net_allow[0].origin.source, "command line") == 0,
		   "--allow-net without --net gives net allow, over the file's net (%s)", err.message);
		policy_free(&p);
		run_options_free(&o);
	}
	{
		/* A set on the command line: expanded after the file, with the
		 * command line as origin. */
		char *argv[] = {"run", "--config", file, "--server", "s", "--allow-net", "@crates", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run(7, argv, test_env, &p, &o, &err) == 0 && p.net == MOAT_NET_ALLOW &&
		       p.n_net_allow == 3 && strcmp(p.net_allow[1].text, "static.crates.io:443") == 0 &&
		       strcmp(p.net_allow[1].from, "@crates (crates.io's downloads)") == 0 &&
		       strcmp(p.net_allow[1].origin.source, "command line") == 0,
		   "--allow-net @crates: the set's entries, net allow over the file's net (%s)", err.message);
		policy_free(&p);
		run_options_free(&o);
	}
	{
		static const struct {
			const char *flag, *value, *net, *message, *hint;
		} bad[] = {
		    {"--allow-net", "host_name", NULL,
		     "--allow-net host_name: character '_' not allowed in a host name (letters, digits, '-', '.')",
		     "see `moat run --help`"},
		    {"--allow-net", "[::1]8080", NULL, "--allow-net [::1]8080: unexpected \"8080\" after ']'",
		     "an IPv6 address with a port is written [v6]:port"},
		    {"--resolve", "x.com", NULL, "--resolve x.com: expected NAME=IP",
		     "e.g. api.example.com=203.0.113.7"},
		    {"--allow-net", "x.com", "none", "command line: allowed destination x.com contradicts net none",
		     "drop --net none (net = \"none\"): the allowlist implies net allow, or drop the destinations"},
		    {"--allow-net", "x.com", "all", "command line: allowed destination x.com contradicts net all",
		     "drop --net all (net = \"all\") to allow only the listed destinations, or drop the destinations "
		     "to open the whole network"},
		    {"--net", "allow", NULL, "net allow without destinations: nothing to allow",
		     "name them with --allow-net DEST (config: network.allow), or use --net none"},
		    {"--allow-net", "@nmp", NULL, "--allow-net @nmp: no destination set named \"@nmp\"",
		     "did you mean @npm? the sets are @npm, @pypi, @crates, @go and @registries (all four)"},
		    {"--allow-net", "@crates", "all",
		     "command line: allowed destination index.crates.io:443 from @crates (crates.io's sparse index) "
		     "contradicts net all",
		     "drop --net all (net = \"all\") to allow only the listed destinations, or drop the destinations "
		     "to open the whole network"},
		};
		size_t i;

		for (i = 0; i < ARRAY_LEN(bad); i++) {
			char *argv[] = {"run", (char *)bad[i].flag, (char *)bad[i].value, "--net", (char *)bad[i].net,
					"--", "sh", NULL};
			int argc = 7;

			if (!bad[i].net) {
				argv[3] = "--";
				argv[4] = "sh";
				argv[5] = NULL;
				argc = 5;
			}
			policy_init(&p);
			run_options_init(&o);
			ok(cli_parse_run(argc, argv, test_env, &p, &o, &err) < 0 &&
				   moat_error_exit_status(&err) == 125,
			   "%s %s%s%s is refused", bad[i].flag, bad[i].value, bad[i].net ? " --net " : "",
			   bad[i].net ? bad[i].net : "");
			is_str(err.message, bad[i].message, "  with the flag and the value");
			is_str(err.hint, bad[i].hint, "  and a hint");
			policy_free(&p);
			run_options_free(&o);
		}
	}
	{
		char *argv[] = {"run", "--config", file, "--server", "s", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run(5, argv, test_env, &p, &o, &err) == 0 && p.argc == 3 && p.net == MOAT_NET_LOOPBACK,
		   "with --server, `--` is optional (%s)", err.message);
		policy_free(&p);
		run_options_free(&o);
	}
	{
		char *argv[] = {"run", "--server", "s", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run(3, argv, test_env, &p, &o, &err) < 0 && strstr(err.message, "needs --config"),
		   "--server without --config is refused: %s", err.message);
		policy_free(&p);
		run_options_free(&o);
	}
	{
		char *argv[] = {"run", "--config", file, "--profile", "strict", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run(5, argv, test_env, &p, &o, &err) < 0 && strcmp(err.message, "no command to run") == 0,
		   "without --server a command is still needed: %s", err.message);
		policy_free(&p);
		run_options_free(&o);
	}
	{
		char *argv[] = {"run", "--config", file, "--profile", "strict", "--", "sh", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run(7, argv, test_env, &p, &o, &err) == 0 && strcmp(p.profile, "strict") == 0 &&
		       p.argc == 1,
		   "--config FILE --profile NAME -- CMD (%s)", err.message);
		policy_free(&p);
		run_options_free(&o);
	}
	{
		char *argv[] = {"run", "--config", file, "--config", file, "--server", "s", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run(7, argv, test_env, &p, &o, &err) < 0 && strstr(err.message, "given twice"),
		   "--config twice is refused: %s", err.message);
		policy_free(&p);
		run_options_free(&o);
	}
	{
		char *argv[] = {"run", "--config", file, "--server", "nope", NULL};
		policy_init(&p);
		run_options_init(&o);
		ok(cli_parse_run(5, argv, test_env, &p, &o, &err) < 0 && strstr(err.hint, "known servers: s"),
		   "an unknown --server lists the known ones: %s", err.hint);
		policy_free(&p);
		run_options_free(&o);
	}
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	test_bad_configs();
	test_three_formats();
	test_network_forms();
	test_network_sets();
	test_layers();
	test_expand();
	test_client_keys();
	test_all_problems();
	test_exe_err();
	test_helpers();
	test_cli();
	return tap_done();
}
