#include "sources/cli.h"

#include "policy/backend_names.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/properties.h"
#include "policy/env.h"
#include "policy/netdest.h"
#include "policy/profiles.h"
#include "sources/config.h"
#include "sources/config_common.h"
#include "sources/gitconfig.h"
#include "sources/gotool.h"
#include "sources/pkgcache.h"
#include "sources/interp.h"
#include "sources/netsets.h"
#include "sources/resolve.h"
#include "sources/runnotes.h"
#include "sources/size.h"
#include "sources/toolchain.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/ownfile.h"
#include "util/path.h"

void run_options_init(struct moat_run_options *o)
{
	memset(o, 0, sizeof(*o));
	o->report_fd = -1;
	o->events_fd = -1;
}

void run_options_free(struct moat_run_options *o)
{
	free(o->report_path);
	netset_notes_free(&o->notes);
	memset(o, 0, sizeof(*o));
}

/* Flags are gathered first and applied after the profile, so that
 * `--read X --profile Y` and `--profile Y --read X` mean the same. */
struct flag_rule {
	const char *opt;
	const char *value;
};

/* Scalars are gathered too: with --config they must win over the file,
 * which is read after the flags. */
struct cli_state {
	struct moat_policy *p;
	struct moat_run_options *o;
	const char *profile;
	const char *cwd;
	const char *net, *backend;
	const char *config, *server;
	char *const *env; /* moat's environment */
	int mode; /* enum moat_mode, or -1 */
	int tty;  /* enum moat_tty, or -1 */
	uint32_t require;
	bool unix_sockets;
	bool allow_net; /* an --allow-net was given */
	struct moat_limits limits;
	struct flag_rule *rules;
	size_t n_rules, cap_rules;
};

typedef int (*opt_fn)(struct cli_state *s, const char *opt, const char *val, struct moat_error *err);

struct option_def {
	const char *name;
	bool takes_value;
	opt_fn fn;
	const char *metavar;
	const char *help;
};

static int usage_error(struct moat_error *err, const char *fmt, const char *a, const char *b)
{
	moat_error_set(err, MOAT_E_USAGE, 0, fmt, a, b);
	return moat_error_hint(err, "see `moat run --help`");
}

static int parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int opt_rule(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	if (!*val)
		return usage_error(err, "%s needs a path, got '%s'", opt, val);
	s->rules = moat_xgrow(s->rules, &s->cap_rules, s->n_rules, sizeof(*s->rules));
	s->rules[s->n_rules].opt = opt;
	s->rules[s->n_rules].value = val;
	s->n_rules++;
	return 0;
}

/* --read, --write, --deny, --unprotect.  A shell has expanded what it
 * would before moat sees it, so a $HOME or ~root here came in single
 * quotes or from a launcher without a shell: an MCP client's JSON args
 * ("args": ["run", "--deny", "$HOME/.npmrc", ...]).  Refused as in a
 * config file: taken literally, a deny of it would deny nothing. */
static int opt_path(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	size_t len;
	const char *form = path_unexpanded(val, &len);

	if (form) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: %.*s is not expanded in a path", opt, val, (int)len, form);
		return moat_error_hint(err, "moat expands only ~ and ~/ (to HOME), and a shell does not expand "
					    "what is in single quotes: write the absolute path%s",
				       val[0] == '~' ? " (a name that really begins with ~: ./~NAME)" : "");
	}
	return opt_rule(s, opt, val, err);
}

static int opt_env(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	const char *eq = strchr(val, '=');
	cleanup_free char *name = NULL;

	if (!eq)
		return usage_error(err, "%s %s: expected NAME=VALUE", opt, val);
	name = moat_xstrndup(val, (size_t)(eq - val));
	if (!env_name_valid(name))
		return usage_error(err, "%s %s: not a valid variable name", opt, val);
	return opt_rule(s, opt, val, err);
}

static int opt_env_pass(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	if (!env_name_valid(val))
		return usage_error(err, "%s %s: not a valid variable name", opt, val);
	if (env_is_hook(val)) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: refusing to pass a loader or interpreter hook through",
			       opt, val);
		return moat_error_hint(err,
				       "it would run code before the program's own; if it is really "
				       "wanted, give its value explicitly: --env %s=VALUE",
				       val);
	}
	return opt_rule(s, opt, val, err);
}

static int opt_profile(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	(void)opt;
	(void)err;
	s->profile = val;
	return 0;
}

static int opt_config(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	const char **slot = strcmp(opt, "--config") == 0 ? &s->config : &s->server;

	if (!*val)
		return usage_error(err, "%s needs a value, got '%s'", opt, val);
	/* Two files or two servers: which one was meant is a guess. */
	if (*slot)
		return usage_error(err, "%s given twice ('%s')", opt, val);
	*slot = val;
	return 0;
}

static int opt_cwd(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	/* An empty one is a variable that was not set (--cwd "$DIR"): the
	 * command would run in moat's own directory, which was not asked. */
	if (!*val)
		return usage_error(err, "%s needs a directory, got '%s'", opt, val);
	s->cwd = val;
	return 0;
}

static int opt_mode(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	enum moat_mode m;

	if (moat_mode_parse(val, &m) < 0)
		return usage_error(err, "%s %s: expected require, prefer or off", opt, val);
	s->mode = (int)m;
	return 0;
}

static int opt_net(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	enum moat_net n;

	if (moat_net_parse(val, &n) < 0)
		return usage_error(err, "%s %s: expected none, loopback, all or allow", opt, val);
	s->net = val;
	return 0;
}

/* --allow-net DEST and --resolve NAME=IP: checked when given (p NULL),
 * added to the policy with the other rules, after the profile.  A set
 * (--allow-net @npm) is expanded then, from the host's configuration of its
 * tools (sources/netsets.h). */
static int parse_net_rule(struct cli_state *s, const char *opt, const char *val, struct moat_policy *p,
			  struct moat_error *err)
{
	struct moat_origin o = {.source = MOAT_ORIGIN_COMMAND_LINE};
	struct net_parse_error pe;
	struct moat_net_dest d;
	struct moat_net_pin pin;
	bool set = strcmp(opt, "--allow-net") == 0 && netset_named(val);
	unsigned mask;

	if (strcmp(opt, "--resolve") == 0 ? net_pin_parse(val, &pin, &pe)
	    : set			  ? netset_parse(val, &mask, &pe)
					  : net_dest_parse(val, &d, &pe)) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: %s", opt, val, pe.msg);
		return moat_error_hint(err, "%s", pe.hint[0] ? pe.hint : "see `moat run --help`");
	}
	if (set) {
		struct netset_host h = {.env = s->env, .cwd = p ? p->cwd : NULL};

		if (p && netset_expand(mask, &h, o, p, &s->o->notes, err) < 0)
			return moat_error_wrap(err, "%s %s", opt, val);
		return 0;
	}
	if (!p) {
		if (strcmp(opt, "--resolve") == 0)
			net_pin_free(&pin);
		else
			net_dest_free(&d);
	} else if (strcmp(opt, "--resolve") == 0) {
		pin.origin = o;
		policy_add_net_pin(p, &pin);
	} else {
		d.origin = o;
		policy_add_net_dest(p, &d);
	}
	return 0;
}

static int opt_net_rule(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	if (parse_net_rule(s, opt, val, NULL, err) < 0)
		return -1;
	if (strcmp(opt, "--allow-net") == 0)
		s->allow_net = true;
	return opt_rule(s, opt, val, err);
}

static int opt_backend(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	if (!policy_backend_name_valid(val))
		return usage_error(
		    err, "%s %s: expected auto, native, bwrap, gvisor, oci, nsjail, firejail, nono, seatbelt or none",
		    opt, val);
	s->backend = val;
	return 0;
}

static int opt_require(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	cleanup_free char *copy = moat_xstrdup(val);
	char *rest = copy, *tok;

	/* Every item named: an empty one (--require "$PROPS" unset, or
	 * "a,,b") would require less than was meant, silently. */
	while ((tok = strsep(&rest, ","))) {
		int prop = moat_property_parse(tok);
		if (!*tok) {
			moat_error_set(err, MOAT_E_USAGE, 0, "%s '%s': an empty property name", opt, val);
			return moat_error_hint(err, "name the properties, comma-separated: --require fs.read,net.none");
		}
		if (prop < 0) {
			moat_error_set(err, MOAT_E_USAGE, 0, "%s: unknown property '%s'", opt, tok);
			return moat_error_hint(err, "see `moat help properties` for the names");
		}
		s->require |= MOAT_PBIT(prop);
	}
	return 0;
}

static int opt_timeout(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	char *end;
	double t;

	struct limit_problem pb;

	/* Decimal seconds only ("30", "0.5"): strtod also takes " 5", "0x10"
	 * and "1e3", none of which a user means as written. */
	const char *dot = strchr(val, '.');

	errno = 0;
	t = strtod(val, &end);
	if (!*val || *end || (errno && isfinite(t)) || val[strspn(val, "0123456789.")] ||
	    (dot && strchr(dot + 1, '.')))
		t = NAN;
	config_timeout_problem(t, &pb);
	if (pb.why[0]) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: %s", opt, val, pb.why);
		return moat_error_hint(err, "%s", pb.fix);
	}
	s->limits.timeout_s = t;
	return 0;
}

static int opt_limit(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	long long v;
	int64_t bytes;

	int64_t *size_slot = strcmp(opt, "--memory") == 0	  ? &s->limits.memory_bytes
			     : strcmp(opt, "--address-space") == 0 ? &s->limits.address_space_bytes
			     : strcmp(opt, "--tmp-size") == 0	  ? &s->limits.tmp_bytes
								  : NULL;

	if (size_slot) {
		struct size_problem sp;

		if (moat_parse_size_min(val, &bytes, &sp) < 0) {
			moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: %s", opt, val, sp.why);
			return moat_error_hint(err, "%s", sp.fix);
		}
		*size_slot = bytes;
		return 0;
	}
	if (parse_int(val, 1, INT64_MAX, &v) < 0)
		return usage_error(err, "%s %s: expected a positive whole number", opt, val);
	struct limit_problem pb;
	bool files = strcmp(opt, "--files") == 0, pids = strcmp(opt, "--pids") == 0;

	if (files)
		config_files_problem(v, &pb);
	else if (pids)
		config_pids_problem(v, &pb);
	else
		config_cpu_problem(v, &pb);
	if (pb.why[0]) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: %s", opt, val, pb.why);
		return moat_error_hint(err, "%s", pb.fix);
	}
	if (files)
		s->limits.files = v;
	else if (pids)
		s->limits.pids = v;
	else
		s->limits.cpu_seconds = v;
	return 0;
}

static int opt_report(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	if (!*val)
		return usage_error(err, "%s needs a file name%s", opt, "");
	if (s->o->report_fd >= 0)
		return usage_error(err, "%s %s: give one report destination, --report FILE or --report-fd N", opt, val);
	free(s->o->report_path);
	s->o->report_path = moat_xstrdup(val);
	return 0;
}

static int parse_open_fd(const char *opt, const char *val, int *out, struct moat_error *err)
{
	long long v;

	if (parse_int(val, 0, INT_MAX, &v) < 0)
		return usage_error(err, "%s %s: expected a file descriptor number", opt, val);
	if (fcntl((int)v, F_GETFD) < 0) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %s: file descriptor %s is not open", opt, val, val);
		return moat_error_hint(err, "open it in the calling process first, e.g. `%s 3 3>file`", opt);
	}
	*out = (int)v;
	return 0;
}

/* A descriptor of moat's own output (--report-fd, --events-fd): open, and
 * not stdio, which is the command's. */
static int parse_output_fd(const char *opt, const char *val, int *out, struct moat_error *err)
{
	if (parse_open_fd(opt, val, out, err) < 0)
		return -1;
	if (*out <= STDERR_FILENO)
		return usage_error(err, "%s %s: stdio belongs to the command; use a descriptor above 2", opt, val);
	return 0;
}

static int opt_report_fd(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	int fd;

	if (parse_output_fd(opt, val, &fd, err) < 0)
		return -1;
	if (s->o->report_path)
		return usage_error(err, "%s %s: give one report destination, --report FILE or --report-fd N", opt, val);
	if (fd == s->o->events_fd)
		return usage_error(err, "%s %s: the events' descriptor too; give the report a descriptor of its own", opt,
				   val);
	s->o->report_fd = fd;
	return 0;
}

static int opt_events_fd(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	int fd;

	if (parse_output_fd(opt, val, &fd, err) < 0)
		return -1;
	if (fd == s->o->report_fd)
		return usage_error(err, "%s %s: the report's descriptor too; give the events a descriptor of their own",
				   opt, val);
	s->o->events_fd = fd;
	return 0;
}

static int opt_keep_fd(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	int fd;

	if (parse_open_fd(opt, val, &fd, err) < 0)
		return -1;
	policy_add_keep_fd(s->p, fd);
	return 0;
}

static int opt_flag(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	(void)val;
	(void)err;
	if (strcmp(opt, "--dry-run") == 0)
		s->o->dry_run = true;
	else if (strcmp(opt, "--unix-sockets") == 0)
		s->unix_sockets = true;
	else if (strcmp(opt, "--mkdir") == 0)
		s->o->mkdir = true;
	else
		s->o->help = true;
	return 0;
}

/* --tty, --no-tty: one of them, once or repeated, never both. */
static int opt_tty(struct cli_state *s, const char *opt, const char *val, struct moat_error *err)
{
	int want = strcmp(opt, "--tty") == 0 ? MOAT_TTY_ON : MOAT_TTY_OFF;

	(void)val;
	if (s->tty >= 0 && s->tty != want)
		return usage_error(err, "--tty and --no-tty contradict each other%s%s", "", "");
	s->tty = want;
	return 0;
}

/* The option table: later issues add rows, not parsing code. */
static const struct option_def options[] = {
    {"--config", true, opt_config, "FILE", "read servers, [sandbox] and [profiles] from FILE (docs/config.md)"},
    {"--server", true, opt_config, "NAME",
     "run server NAME of --config FILE (words after the options are extra arguments)"},
    {"--profile", true, opt_profile, "NAME",
     "start from a profile: built-in or from --config (default " MOAT_DEFAULT_PROFILE ")"},
    {"--read", true, opt_path, "PATH", "allow reading PATH (and executing below it)"},
    {"--write", true, opt_path, "PATH", "allow reading and writing PATH"},
    {"--mkdir", false, opt_flag, NULL,
     "make a --write directory that does not exist yet (mkdir -p) before the run; removed again if the command does "
     "not run"},
    {"--deny", true, opt_path, "PATH", "deny PATH even inside an allowed parent"},
    {"--unprotect", true, opt_path, "PATH",
     "let the command write a protected entry of a write grant (.git/hooks, .mcp.json, ...)"},
    {"--net", true, opt_net, "MODE", "network: none (default), loopback, all, or allow (what --allow-net gives)"},
    {"--allow-net", true, opt_net_rule, "DEST",
     "allow DEST: host[:port], *.domain, IP or CIDR[:port], [IPv6]:port, localhost:PORT (the host's "
     "loopback); ports 443 and 80 unless given; or a set, @npm, @pypi, @crates, @go or @registries (all "
     "four): the registries the host's configuration of those tools names (repeatable; enforced by the "
     "native backend's fence, else the network stays closed)"},
    {"--resolve", true, opt_net_rule, "NAME=IP", "pin NAME to IP, as curl's --resolve (repeatable)"},
    {"--unix-sockets", false, opt_flag, NULL,
     "let the command make unix sockets (ipc.unix is then not enforced)"},
    {"--env", true, opt_env, "NAME=VALUE", "set a variable in the command's environment"},
    {"--env-pass", true, opt_env_pass, "NAME", "pass NAME from moat's environment"},
    {"--cwd", true, opt_cwd, "DIR", "run the command in DIR"},
    {"--timeout", true, opt_timeout, "SECONDS", "SIGTERM after SECONDS, SIGKILL 2 s later, exit 124"},
    {"--memory", true, opt_limit, "SIZE", "memory of the whole tree, tmpfs and memfd included (e.g. 512M; a cgroup)"},
    {"--pids", true, opt_limit, "N", "processes and threads of the whole tree (a cgroup)"},
    {"--cpu", true, opt_limit, "SECONDS", "CPU time of the whole tree together, then SIGKILL (a cgroup)"},
    {"--address-space", true, opt_limit, "SIZE", "address space of each process (RLIMIT_AS)"},
    {"--files", true, opt_limit, "N", "open files of each process (RLIMIT_NOFILE)"},
    {"--tmp-size", true, opt_limit, "SIZE", "size of the private /tmp, /dev/shm and /run, each (default 1G)"},
    {"--mode", true, opt_mode, "MODE", "require (default), prefer or off"},
    {"--require", true, opt_require, "PROPS", "also require these properties (comma-separated)"},
    {"--backend", true, opt_backend, "NAME",
     "auto (default), native, bwrap, gvisor, oci, nsjail, firejail, nono, seatbelt, none"},
    {"--report", true, opt_report, "FILE",
     "write the JSON report to FILE after the run (renamed into place; not in a write grant)"},
    {"--report-fd", true, opt_report_fd, "N",
     "write the JSON report to descriptor N (a pipe, socket or own file; never inherited)"},
    {"--events-fd", true, opt_events_fd, "N",
     "stream a JSON line to descriptor N for each connection or name the network allowlist refuses, as it happens"},
    {"--keep-fd", true, opt_keep_fd, "N", "let the command inherit descriptor N"},
    {"--tty", false, opt_tty, NULL,
     "give the command a terminal of its own (a pty moat relays) even when moat is not at one; by default it "
     "gets one when moat's stdin and stdout are a terminal and moat is its foreground job"},
    {"--no-tty", false, opt_tty, NULL,
     "never give the command a terminal: its stdin, stdout and stderr stay as they are"},
    {"--dry-run", false, opt_flag, NULL, "print the policy and plan as JSON; run nothing"},
    {"--help", false, opt_flag, NULL, "this help"},
};

/* The exit statuses, for --help and the man page alike. */
static const struct cli_exit_doc exit_docs[] = {
    {"the command's own", "the command ran and exited; its status passes through unchanged"},
    {"128+N", "the command was killed by signal N (137 at --memory: moat says \"memory limit reached\"); or moat "
	      "was, by SIGTERM, SIGINT or SIGHUP while it planned: the command never started"},
    {"124", "--timeout expired: SIGTERM was sent, then SIGKILL 2 s later (moat says \"time limit reached\")"},
    {"125", "moat could not start the command: bad usage or config, or a required protection is "
	    "unavailable (the report and stderr say which)"},
    {"126", "the command was found but is not executable"},
    {"127", "the command was not found"},
};

const char *cli_run_option_doc(size_t i, const char **metavar, const char **help)
{
	if (i >= ARRAY_LEN(options))
		return NULL;
	*metavar = options[i].metavar;
	*help = options[i].help;
	return options[i].name;
}

const struct cli_exit_doc *cli_exit_docs(size_t *n)
{
	*n = ARRAY_LEN(exit_docs);
	return exit_docs;
}

void cli_run_usage(FILE *out)
{
	const char *name, *metavar, *help;
	size_t i;

	fprintf(out,
		"usage: moat run [OPTIONS] [--] COMMAND [ARGS...]\n"
		"       moat run --config FILE --server NAME [OPTIONS] [[--] EXTRA ARGS...]\n\n"
		"%s.\n%s\n\n"
		"options:\n",
		CLI_RUN_SUMMARY, CLI_RUN_COMMAND_NOTE);
	for (i = 0; (name = cli_run_option_doc(i, &metavar, &help)); i++) {
		char left[64];
		snprintf(left, sizeof(left), "%s%s%s", name, metavar ? " " : "", metavar ? metavar : "");
		fprintf(out, "  %-24s %s\n", left, help);
	}
	fprintf(out, "\n%s\n", CLI_RUN_CONFIG_NOTE);
	fprintf(out, "\nexit status:\n");
	for (i = 0; i < ARRAY_LEN(exit_docs); i++)
		fprintf(out, "  %-18s %s\n", exit_docs[i].status, exit_docs[i].meaning);
}

/* Options that set one value (--net, --mode, --profile, --memory, ...),
 * unlike those that add a rule each time (--read, --env, --keep-fd, ...). */
static bool single_valued(const struct option_def *def)
{
	return def->takes_value && def->fn != opt_rule && def->fn != opt_path && def->fn != opt_env &&
	       def->fn != opt_env_pass && def->fn != opt_net_rule && def->fn != opt_keep_fd && def->fn != opt_require && def->fn != opt_config;
}

/* The same option twice with two values (`--net none --net all`): which
 * one was meant is a guess, so neither is taken.  Given twice alike, it is
 * the same request. */
static int check_given_once(const char **given, const struct option_def *def, const char *val, struct moat_error *err)
{
	const char **slot = &given[def - options];

	if (!single_valued(def))
		return 0;
	if (*slot && strcmp(*slot, val) != 0) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s %s conflicts with %s %s given before it", def->name, val,
			       def->name, *slot);
		return moat_error_hint(err, "give %s once: which of the two was meant is a guess", def->name);
	}
	*slot = val;
	return 0;
}

static const struct option_def *find_option(const char *arg, const char **inline_val)
{
	size_t i;

	*inline_val = NULL;
	for (i = 0; i < ARRAY_LEN(options); i++) {
		size_t n = strlen(options[i].name);
		if (strncmp(arg, options[i].name, n) != 0)
			continue;
		if (arg[n] == '\0')
			return &options[i];
		if (arg[n] == '=' && options[i].takes_value) {
			*inline_val = arg + n + 1;
			return &options[i];
		}
	}
	return NULL;
}

/* An unknown option's closest known one (--wirte: --write), as a config's
 * unknown key gets: the hint says it, with where the list is. */
static void suggest_option(const char *arg, struct moat_error *err)
{
	const char *names[ARRAY_LEN(options) + 1];
	char word[64];
	const char *s;
	size_t i;

	for (i = 0; i < ARRAY_LEN(options); i++)
		names[i] = options[i].name;
	names[i] = NULL;
	/* --wirte=/x: the name alone. */
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg, "="), arg);
	if ((s = config_suggest(word, names)))
		moat_error_hint(err, "did you mean %s? See `moat run --help`", s);
}

/* `--allow-net --dry-run -- cmd`: the value was forgotten, and taking the
 * next option for it would drop that option unseen: a deny of
 * "./--dry-run" is accepted (a denied path need not exist), and the
 * command ran instead of the dry run asked for.  A word that is one of
 * run's options is refused as a value; a value that truly is such a word
 * is given as --OPT=VALUE.  0, or -1 with
 * err set. */
static int value_is_option(const struct option_def *def, const char *next, struct moat_error *err)
{
	const char *inline_val;
	const struct option_def *other = find_option(next, &inline_val);

	if (!other)
		return 0;
	moat_error_set(err, MOAT_E_USAGE, 0, "%s needs a value (%s), and the word after it, '%s', is an option", def->name,
		       def->metavar, next);
	return moat_error_hint(err, "write %s %s, then %s; a value that starts with '-' is written %s=VALUE", def->name,
			       def->metavar, other->name, def->name);
}

const char *cli_run_config_file(int argc, char *const *argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const struct option_def *def;
		const char *val;

		if (strcmp(argv[i], "--") == 0 || argv[i][0] != '-')
			return NULL;
		def = find_option(argv[i], &val);
		if (!def)
			return NULL;
		if (def->takes_value && !val)
			val = ++i < argc ? argv[i] : NULL;
		if (def->fn == opt_config && strcmp(def->name, "--config") == 0)
			return val;
	}
	return NULL;
}

/* A path whose ".." follows a symbolic link (--read /p/link/..) is folded
 * by text to the link's parent, where the kernel -- and the user reading
 * `ls /p/link/..` -- goes to the target's parent: the grant or the deny
 * would be of another directory than the one named.  Refused, naming the
 * link.  0, or -1 with err set. */
static int dotdot_after_link(const struct flag_rule *r, const char *cwd, const char *home, struct moat_error *err)
{
	cleanup_free char *link = path_link_before_dotdot(r->value, cwd, home);

	if (!link)
		return 0;
	moat_error_set(err, MOAT_E_USAGE, 0,
		       "%s %s: %s is a symbolic link, and the \"..\" after it is its target's parent, where moat "
		       "would fold it by text to the link's own directory",
		       r->opt, r->value, link);
	return moat_error_hint(err, "write the path without \"..\", naming the directory you mean");
}

/* Apply the gathered flag rules on top of the profile. */
static int apply_rules(struct cli_state *s, const char *home, struct moat_error *err)
{
	struct moat_origin o = {.source = MOAT_ORIGIN_COMMAND_LINE};
	size_t i;

	for (i = 0; i < s->n_rules; i++) {
		const struct flag_rule *r = &s->rules[i];

		if (strcmp(r->opt, "--env") == 0) {
			const char *eq = strchr(r->value, '=');
			cleanup_free char *name = moat_xstrndup(r->value, (size_t)(eq - r->value));
			policy_add_env(s->p, name, eq + 1, o);
		} else if (strcmp(r->opt, "--allow-net") == 0 || strcmp(r->opt, "--resolve") == 0) {
			if (parse_net_rule(s, r->opt, r->value, s->p, err) < 0)
				return -1;
		} else if (strcmp(r->opt, "--env-pass") == 0) {
			policy_add_env(s->p, r->value, NULL, o);
		} else if (dotdot_after_link(r, s->p->cwd, home, err) < 0) {
			return -1;
		} else if (strcmp(r->opt, "--unprotect") == 0) {
			cleanup_free char *abs = path_resolve_lexical(r->value, s->p->cwd, home);

			if (!abs)
				return usage_error(err, "%s %s: cannot expand ~ without HOME", r->opt, r->value);
			policy_add_unprotect(s->p, abs, o);
		} else {
			enum moat_access a = strcmp(r->opt, "--read") == 0    ? MOAT_ACCESS_READ
					     : strcmp(r->opt, "--write") == 0 ? MOAT_ACCESS_WRITE
									      : MOAT_ACCESS_DENY;
			cleanup_free char *abs = path_resolve_lexical(r->value, s->p->cwd, home);

			if (!abs)
				return usage_error(err, "%s %s: cannot expand ~ without HOME", r->opt, r->value);
			policy_add_path(s->p, abs, a, false, o);
		}
	}
	return 0;
}

/* --cwd, made absolute against moat's own cwd and checked; NULL if not
 * given.  An absolute one needs no current directory (it may have been
 * deleted: --cwd is the way out).  Then followed through its links, as
 * getcwd(3) gives moat's own: the view shows a grant at its real path,
 * and a link it was not reached through is not in it (--cwd LINK with the
 * target granted started the command in an empty directory). */
static int cli_cwd(const struct cli_state *s, char **out, struct moat_error *err)
{
	char here[PATH_MAX], real[PATH_MAX];
	cleanup_free char *abs = NULL;
	cleanup_close int back = -1;

	*out = NULL;
	if (!s->cwd)
		return 0;
	if (s->cwd[0] != '/' && resolve_cwd(here, sizeof(here), err) < 0)
		return moat_error_wrap(err, "--cwd %s is relative", s->cwd);
	abs = path_resolve_lexical(s->cwd, s->cwd[0] == '/' ? "/" : here, NULL);
	if (!abs || access(abs, F_OK) != 0)
		return moat_error_set(err, MOAT_E_USAGE, abs ? errno : 0, "--cwd %s", s->cwd);
	if (realpath(abs, real) && strcmp(real, abs) != 0) {
		free(abs);
		abs = moat_xstrdup(real);
	}
	/* Entered to see that it can be, then back (by descriptor: the
	 * current directory may be gone). */
	back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (back < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "--cwd %s: opening the current directory", s->cwd);
	if (chdir(abs) != 0)
		return moat_error_set(err, MOAT_E_USAGE, errno, "--cwd %s: cannot enter it", s->cwd);
	if (fchdir(back) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "--cwd %s: returning to the current directory",
				      s->cwd);
	*out = steal_ptr(&abs);
	return 0;
}

/* --profile NAME without --config, where only the built-in ones exist. */
static int unknown_profile(const char *name, struct moat_error *err)
{
	const char *sug = config_suggest(name, profile_builtin_names());

	moat_error_set(err, MOAT_E_USAGE, 0, "--profile %s: unknown profile", name);
	if (sug)
		return moat_error_hint(err, "did you mean %s? The built-in profiles are strict, exec, mcp and network",
				       sug);
	return moat_error_hint(err, "the built-in profiles are strict, exec, mcp and network (see `moat profiles`; "
				    "--config FILE adds its [profiles])");
}

/* Without --config: the command, cwd, then the profile. */
/* Exported to run elsewhere: Kubernetes, or seatbelt's macOS. */
static bool other_host(const struct cli_state *s)
{
	return s->o->for_another_host || (s->backend && strcmp(s->backend, "seatbelt") == 0);
}

static int build_plain(struct cli_state *s, char **cmd, size_t n_cmd, char *const *environ_in, const char *home,
		       struct moat_error *err)
{
	struct moat_policy *p = s->p;
	struct profile_context ctx;
	char here[PATH_MAX];

	if (cli_cwd(s, &p->cwd, err) < 0)
		return -1;
	if (!p->cwd) {
		if (resolve_cwd(here, sizeof(here), err) < 0)
			return -1;
		p->cwd = moat_xstrdup(here);
	}
	policy_set_argv(p, cmd, n_cmd);
	p->exe = resolve_command(cmd[0], config_getenv(environ_in, "PATH"), p->cwd, err);
	if (!p->exe) {
		if (!s->o->defer_exe_err)
			return -1;
		s->o->exe_err = *err;
		memset(err, 0, sizeof(*err));
		p->exe = moat_xstrdup(cmd[0]);
	}
	if (s->mode >= 0)
		p->mode = (enum moat_mode)s->mode;
	if (s->profile && !profile_is_builtin(s->profile))
		return unknown_profile(s->profile, err);
	ctx = (struct profile_context){
	    .home = home, .cwd = p->cwd, .exe = p->exe, .argv = p->argv, .other_host = other_host(s)};
	return profile_apply(p, s->profile ? s->profile : MOAT_DEFAULT_PROFILE, &ctx, err);
}

static int build_from_config(struct cli_state *s, char **cmd, size_t n_cmd, char *const *environ_in, const char *home,
			     struct moat_server_meta *meta, struct moat_error *err)
{
	struct moat_config *cfg = NULL;
	cleanup_free char *cwd = NULL;
	struct config_request req = {
	    .server = s->server,
	    .argv = cmd,
	    .argc = n_cmd,
	    .profile = s->profile,
	    .mode = s->mode,
	    .env = environ_in,
	    .notes = &s->o->notes,
	    .exe_err = s->o->defer_exe_err ? &s->o->exe_err : NULL,
	    .other_host = other_host(s),
	    .project_check = true,
	    .backend_given = s->backend != NULL,
	};
	int rc;

	if (cli_cwd(s, &cwd, err) < 0)
		return -1;
	req.cwd = cwd;
	if (config_load(s->config, home, &cfg, err) < 0)
		return -1;
	rc = config_build(cfg, &req, s->p, meta, err);
	config_free(cfg);
	return rc;
}

/* The flags win over the profile and the file. */
static int apply_flags(struct cli_state *s, const char *home, struct moat_error *err)
{
	struct moat_policy *p = s->p;

	if (s->backend) {
		free(p->backend);
		p->backend = moat_xstrdup(s->backend);
	}
	/* --allow-net without --net: net allow, over the profile's and the
	 * file's mode.  With --net: policy_validate judges the two. */
	if (s->net)
		moat_net_parse(s->net, &p->net);
	else if (s->allow_net)
		p->net = MOAT_NET_ALLOW;
	if (s->mode >= 0)
		p->mode = (enum moat_mode)s->mode;
	if (s->tty >= 0)
		p->tty = (enum moat_tty)s->tty;
	p->require |= s->require;
	if (s->unix_sockets)
		p->unix_sockets = true;
	limits_overlay(&p->limits, &s->limits);
	return apply_rules(s, home, err);
}

/* git in the work tree the exec profile granted finds no ~/.gitconfig
 * (HOME is not granted): the user's configuration, sanitized
 * (sources/gitconfig.h), in a file of moat's it reads through
 * GIT_CONFIG_GLOBAL -- unless the caller names one with --env or
 * --env-pass. */
static int add_git_config(struct moat_policy *p, const char *home, char *const *env, struct netset_notes *notes,
			  struct moat_error *err)
{
	struct moat_origin o = {.source = "the user's git configuration, sanitized (docs/policy.md)"};
	struct moat_git_config *g = NULL;
	cleanup_free char *path = NULL;

	if (policy_find_env(p, "GIT_CONFIG_GLOBAL"))
		return 0;
	gitconfig_load(home, env, &g, notes);
	if (!g)
		return 0;
	path = ownfile_put("git", "gitconfig", g->text ? g->text : "", g->len, err);
	if (!path) {
		/* A convenience (git's identity inside), not a protection: left
		 * out, said on stderr, and the run goes on.  A directory of that
		 * name that is not moat's own is someone else's (refused, never
		 * used), or, in a moat inside moat, the outer sandbox's. */
		bool hint = err->hint[0] != '\0';
		cleanup_free char *line =
		    moat_xasprintf("note: the sanitized git configuration is left out: %s%s%s%s", err->message,
				   hint ? " (" : "", err->hint, hint ? ")" : "");
		git_config_free(g);
		netset_notes_add(notes, line);
		memset(err, 0, sizeof(*err));
		return 0;
	}
	policy_add_path(p, path, MOAT_ACCESS_READ, false, o);
	p->paths[p->n_paths - 1].from_profile = true;
	policy_add_env(p, "GIT_CONFIG_GLOBAL", path, o);
	git_config_free(p->git_config);
	p->git_config = g;
	return 0;
}

int cli_parse_run_meta(int argc, char **argv, char *const *environ_in, struct moat_policy *p,
		       struct moat_run_options *o, struct moat_server_meta *meta, struct moat_error *err)
{
	struct cli_state s = {.p = p, .o = o, .mode = -1, .tty = -1, .env = environ_in};
	/* Normalised for every rule built from it (util/path.h
	 * path_home_for_rules); a HOME that is not absolute stays as it is,
	 * and each user of it refuses it. */
	const char *home_env = config_getenv(environ_in, "HOME");
	cleanup_free char *home_norm = path_home_for_rules(home_env);
	const char *home = home_norm ? home_norm : home_env;
	struct moat_server_meta found = {0};
	const char *given[ARRAY_LEN(options)] = {0};
	char **cmd = NULL;
	size_t n_cmd = 0;
	int i, cmd_start = -1, rc = -1;

	limits_init(&s.limits);
	for (i = 1; i < argc; i++) {
		const struct option_def *def;
		const char *val;

		if (strcmp(argv[i], "--") == 0) {
			cmd_start = i + 1;
			break;
		}
		/* The first word that is not an option starts the command (or
		 * a server's extra arguments), as with env, sudo and bwrap:
		 * tools that build a launcher's argv drop the `--`. */
		if (argv[i][0] != '-') {
			cmd_start = i;
			break;
		}
		def = find_option(argv[i], &val);
		if (!def) {
			usage_error(err, "unknown option '%s'%s", argv[i], "");
			suggest_option(argv[i], err);
			goto out;
		}
		if (def->takes_value && !val) {
			if (i + 1 >= argc || strcmp(argv[i + 1], "--") == 0) {
				usage_error(err, "%s needs a value (%s)", def->name, def->metavar);
				goto out;
			}
			if (value_is_option(def, argv[i + 1], err) < 0)
				goto out;
			val = argv[++i];
		} else if (!def->takes_value && val) {
			usage_error(err, "%s takes no value%s", def->name, "");
			goto out;
		}
		if (check_given_once(given, def, val, err) < 0 || def->fn(&s, def->name, val ? val : "", err) < 0)
			goto out;
	}
	if (o->help) {
		rc = 0;
		goto out;
	}
	if (s.server && !s.config) {
		usage_error(err, "--server %s needs --config FILE, the file that defines it%s", s.server, "");
		goto out;
	}
	if (cmd_start >= 0) {
		cmd = argv + cmd_start;
		n_cmd = (size_t)(argc - cmd_start);
	}
	/* A server brings its command: `--` only introduces extra arguments. */
	if (!s.server) {
		if (cmd_start < 0 || n_cmd == 0) {
			moat_error_set(err, MOAT_E_USAGE, 0, "no command to run%s",
				       cmd_start < 0 ? "" : ": nothing after `--`");
			/* With --config a server is the likely intent: `moat run
			 * --config .mcp.json` once got only the hint for a command. */
			if (s.config)
				moat_error_hint(err, "name a server of %s with --server NAME (moat config show %s says "
						     "which), or a command after the options: moat run --config FILE "
						     "[OPTIONS] [--] COMMAND [ARGS...]",
						s.config, s.config);
			else
				moat_error_hint(err, "name it after the options: moat run [OPTIONS] [--] COMMAND [ARGS...]");
			goto out;
		}
		if (cmd[0][0] == '\0') {
			usage_error(err, "empty command: nothing to run%s%s", "", "");
			goto out;
		}
	}
	if (s.config) {
		if (build_from_config(&s, cmd, n_cmd, environ_in, home, &found, err) < 0)
			goto out;
	} else if (build_plain(&s, cmd, n_cmd, environ_in, home, err) < 0) {
		goto out;
	}
	if (apply_flags(&s, home, err) < 0)
		goto out;
	if (p->git_work_tree && p->mode != MOAT_MODE_OFF && strcmp(p->backend, "none") != 0 &&
	    !o->for_another_host && add_git_config(p, home, environ_in, &o->notes, err) < 0)
		goto out;
	/* After the flags: --env and --write name the user's own caches. */
	if (!o->for_another_host && pkgcache_add(p, home, environ_in, &o->notes, err) < 0)
		goto out;
	/* After the package caches: with network, go's cache is one of those.
	 * The project's toolchain is granted before the interpreters are
	 * checked against the grants. */
	if (!o->for_another_host)
		gotool_add(p, home, environ_in, toolchain_add(p, home, environ_in));
	/* What the command needs to start, against the grants it ended up
	 * with (sources/interp.h); a sandbox that is off hides nothing. */
	if (o->exe_err.kind == MOAT_E_NONE && p->exe && p->exe[0] == '/' && p->mode != MOAT_MODE_OFF &&
	    strcmp(p->backend, "none") != 0 &&
	    interp_check(p, home, config_getenv(environ_in, "PATH"), &o->notes, err) < 0)
		goto out;
	rc = policy_validate(p, err);
	if (rc == 0)
		run_notes_add(p, environ_in, &o->notes);
	if (rc == 0 && meta) {
		*meta = found;
		memset(&found, 0, sizeof(found));
	}
out:
	config_server_meta_free(&found);
	free(s.rules);
	return rc;
}

int cli_parse_run(int argc, char **argv, char *const *environ_in, struct moat_policy *p, struct moat_run_options *o,
		  struct moat_error *err)
{
	return cli_parse_run_meta(argc, argv, environ_in, p, o, NULL, err);
}
