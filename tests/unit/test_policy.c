/* Unit tests: the policy model, lexical paths and environment curation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/properties.h"
#include "policy/env.h"
#include "policy/netdest.h"
#include "policy/policy.h"
#include "policy/profiles.h"
#include "report/report.h"
#include "tap.h"
#include "util/path.h"

/* path_link_before_dotdot: where folding ".." by text leaves the kernel's
 * path, the link it steps out of; elsewhere NULL. */
static void test_link_before_dotdot(void)
{
	char dir[] = "/tmp/moat-unit-dotdot.XXXXXX", buf[4][512];

	/* DIR/d/e, DIR/link -> d/e (its ".." is DIR/d), DIR/near -> d (its ".."
	 * is DIR, as the text says). */
	struct {
		const char *in, *base, *home, *want;
	} rows[] = {
	    {"%s/link/..", NULL, NULL, "%s/link"},
	    {"%s/link/../..", NULL, NULL, "%s/link"},
	    {"link/..", "%s", NULL, "%s/link"},
	    {"~/link/..", NULL, "%s", "%s/link"},
	    {"%s/d/..", NULL, NULL, NULL},
	    {"%s/d/../link", NULL, NULL, NULL},
	    {"%s/link/e/..", NULL, NULL, NULL},
	    {"%s/link", NULL, NULL, NULL},
	    {"%s/absent/..", NULL, NULL, NULL},
	    {"%s/link/../e", NULL, NULL, "%s/link"}, /* d/e, where the text says DIR/e (absent) */
	    {"%s/near/../d", NULL, NULL, NULL},	 /* near -> d: DIR/d both ways */
	};

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(buf[0], sizeof(buf[0]), "%s/d/e", dir);
	snprintf(buf[1], sizeof(buf[1]), "%s/d", dir);
	snprintf(buf[2], sizeof(buf[2]), "%s/link", dir);
	snprintf(buf[3], sizeof(buf[3]), "%s/near", dir);
	ok(mkdir(buf[1], 0755) == 0 && mkdir(buf[0], 0755) == 0 && symlink("d/e", buf[2]) == 0 &&
	       symlink("d", buf[3]) == 0,
	   "directories and links to them");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char in[512], want[512], base[512], home[512];
		char *got;

		snprintf(in, sizeof(in), rows[i].in, dir);
		snprintf(base, sizeof(base), "%s", dir);
		snprintf(home, sizeof(home), "%s", dir);
		if (rows[i].want)
			snprintf(want, sizeof(want), rows[i].want, dir);
		got = path_link_before_dotdot(in, rows[i].base ? base : NULL, rows[i].home ? home : NULL);
		if (rows[i].want)
			is_str(got, want, "link before .. in %s", rows[i].in);
		else
			ok(got == NULL, "no link before .. in %s", rows[i].in);
		free(got);
	}
	unlink(buf[2]);
	unlink(buf[3]);
	rmdir(buf[0]);
	rmdir(buf[1]);
	rmdir(dir);
}

static void test_paths(void)
{
	struct {
		const char *in, *base, *home, *want;
	} rows[] = {
		{"/a/b/../c", NULL, NULL, "/a/c"},
		{"/a//b/./c/", NULL, NULL, "/a/b/c"},
		{"/../..", NULL, NULL, "/"},
		{"x/y", "/base", NULL, "/base/x/y"},
		{"..", "/base/sub", NULL, "/base"},
		{"~", NULL, "/home/u", "/home/u"},
		{"~/.ssh", NULL, "/home/u", "/home/u/.ssh"},
		{"~user", "/b", "/home/u", "/b/~user"},
		{".", "/", NULL, "/"},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *got = path_resolve_lexical(rows[i].in, rows[i].base, rows[i].home);
		is_str(got, rows[i].want, "path %s -> %s", rows[i].in, rows[i].want);
		free(got);
	}
	ok(path_resolve_lexical("~/x", "/b", NULL) == NULL, "~ without HOME is refused");
	ok(path_resolve_lexical("rel", NULL, NULL) == NULL, "relative without base is refused");
	ok(path_within("/a/b", "/a"), "/a/b within /a");
	ok(!path_within("/ab", "/a"), "/ab not within /a");
	ok(path_within("/a", "/a"), "/a within /a");
	ok(path_within("/x", "/"), "everything within /");
	{
		/* path_tidy: empty and "." components and a trailing '/' go,
		 * a ".." stays (the kernel's to resolve). */
		static const char *const tidy[][2] = {
		    {"/a//b", "/a/b"}, {"//a/./b/", "/a/b"}, {"/a/../b", "/a/../b"}, {"/", "/"}, {"//", "/"}, {"/.", "/"},
		};
		static const char *const norm[] = {"/", "/a", "/a/b.c/..d"};
		static const char *const not_norm[] = {"a", "/a/", "/a//b", "/./a", "/a/..", "//", "/a/."};
		for (size_t c = 0; c < sizeof(tidy) / sizeof(tidy[0]); c++) {
			char *r = path_tidy(tidy[c][0]);
			is_str(r, tidy[c][1], "path_tidy(%s) = %s", tidy[c][0], tidy[c][1]);
			free(r);
		}
		for (size_t c = 0; c < sizeof(norm) / sizeof(norm[0]); c++)
			ok(path_is_normalised(norm[c]), "%s is normalised", norm[c]);
		for (size_t c = 0; c < sizeof(not_norm) / sizeof(not_norm[0]); c++)
			ok(!path_is_normalised(not_norm[c]), "%s is not normalised", not_norm[c]);
	}
	{
		/* The policy's rules are tidied whoever built them. */
		struct moat_policy p;
		struct moat_origin o = {.source = "test"};

		policy_init(&p);
		policy_add_path(&p, "/h//u/./.ssh/", MOAT_ACCESS_DENY, true, o);
		policy_add_unprotect(&p, "//h/u/.git/", o);
		is_str(p.paths[0].path, "/h/u/.ssh", "a rule's path is tidied");
		is_str(p.unprotect[0].path, "/h/u/.git", "an unprotect's path is tidied");
		policy_free(&p);
	}
	{
		static const char *const cases[][4] = {
		    {"/a/b/c", "/a", "/m", "/m/b/c"}, {"/a", "/a", "/m", "/m"},	  {"/a/b", "/", "/m", "/m/a/b"},
		    {"/a/b", "/a", "/", "/b"},	      {"/", "/", "/m/n", "/m/n"}, {"/a", "/a", "/", "/"},
		};
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			char *r = path_rebase(cases[c][0], cases[c][1], cases[c][2]);
			ok(strcmp(r, cases[c][3]) == 0, "path_rebase(%s, %s, %s) = %s (%s)", cases[c][0], cases[c][1],
			   cases[c][2], cases[c][3], r);
			free(r);
		}
	}
}

/* What a shell or an MCP client would expand and moat does not: found,
 * with its length; a $ or % inside a name is literal. */
static void test_path_unexpanded(void)
{
	struct {
		const char *in, *want; /* the form found, or NULL */
	} rows[] = {
		{"~root/.cargo", "~root"},
		{"~+", "~+"},
		{"$HOME/.npmrc", "$HOME"},
		{"/srv/$USER/data", "$USER"},
		{"${HOME}/x", "${HOME}"},
		{"a${X}b", "${X}"},
		{"${env:HOME}", "${env:HOME}"},
		{"${HOME", "${HOME"},
		{"$(pwd)/x", "$(pwd)"},
		{"%USERPROFILE%/.ssh", "%USERPROFILE%"},
		{"~", NULL},
		{"~/x", NULL},
		{"./~root", NULL},
		{"a$b", NULL},
		{"price$", NULL},
		{"/x/$", NULL},
		{"/x/$1", NULL},
		{"50%", NULL},
		{"a%20b", NULL},
		{"%20b", NULL},
		{"%HOME", NULL},
	};
	size_t i, len;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *form = path_unexpanded(rows[i].in, &len);
		char got[64] = "(none)";

		if (form)
			snprintf(got, sizeof(got), "%.*s", (int)len, form);
		is_str(got, rows[i].want ? rows[i].want : "(none)", "unexpanded form of %s", rows[i].in);
	}
}

static void test_env(void)
{
	struct moat_policy p;
	struct moat_error err = {0};
	struct moat_origin o = {.source = "test"};
	char *env_in[] = {"PATH=/bin", "HOME=/h", "LC_ALL=C", "XDG_RUNTIME_DIR=/run/u", "AWS_SECRET=s3cr3t",
			  "LD_PRELOAD=/evil.so", "LD_XYZ=1", "FOO=bar", "NOEQUALS", NULL};
	char **envp = NULL, **names = NULL;
	char joined[512] = "";
	size_t i;

	ok(env_is_hook("LD_PRELOAD") && env_is_hook("NODE_OPTIONS") && env_is_hook("DYLD_INSERT_LIBRARIES") &&
		   env_is_hook("LD_ANYTHING") && env_is_hook("BASH_ENV"),
	   "loader and interpreter hooks are recognised");
	ok(env_is_hook("BASH_FUNC_ls%%") && env_is_hook("PYTHONWARNINGS") && env_is_hook("ZDOTDIR") &&
		   env_is_hook("PROMPT_COMMAND") && env_is_hook("GCONV_PATH") && env_is_hook("LUA_INIT_5_4") &&
		   env_is_hook("OPENSSL_CONF") && env_is_hook("JDK_JAVA_OPTIONS"),
	   "shell functions, shell start-up files and the other interpreters' hooks are recognised");
	ok(env_is_hook("npm_config_node_options") && env_is_hook("NPM_CONFIG_NODE_OPTIONS") &&
		   env_is_hook("npm_config_NODE_OPTIONS") && env_is_hook("NPM_CONFIG_SCRIPT_SHELL") &&
		   env_is_hook("npm_config_userconfig") && env_is_hook("pnpm_config_node_options"),
	   "npm's settings that run code are hooks, in any letter case (npm reads them so)");
	ok(env_is_hook("GIT_CONFIG_COUNT") && env_is_hook("GIT_CONFIG_KEY_0") && env_is_hook("GIT_CONFIG_VALUE_12") &&
		   env_is_hook("GIT_CONFIG_PARAMETERS") && env_is_hook("GIT_SSH_COMMAND") && env_is_hook("GIT_SSH") &&
		   env_is_hook("GIT_EXEC_PATH") && env_is_hook("GIT_EXTERNAL_DIFF"),
	   "git's settings from the environment and the programs it runs are hooks");
	ok(env_is_hook("GLIBC_TUNABLES") && env_is_hook("SHELLOPTS") && env_is_hook("BASHOPTS") &&
		   env_is_hook("CLASSPATH") && env_is_hook("ENV") && env_is_hook("PERL5OPT") && env_is_hook("RUBYOPT") &&
		   env_is_hook("PYTHONSTARTUP") && env_is_hook("_JAVA_OPTIONS") && env_is_hook("JAVA_TOOL_OPTIONS"),
	   "glibc's tunables, bash's options, the JVM's class path and the interpreters' options are hooks");
	ok(!env_is_hook("npm_config_registry") && !env_is_hook("npm_config_cafile") && !env_is_hook("npm_config_cache") &&
		   !env_is_hook("GIT_CONFIG_GLOBAL") && !env_is_hook("GIT_AUTHOR_NAME") &&
		   !env_is_hook("GIT_CONFIG_NOSYSTEM") && !env_is_hook("npm_config_node_options_x"),
	   "npm's and git's other settings are not hooks (moat sets some, and passes the CA bundle)");
	ok(!env_is_hook("PATH") && !env_is_hook("LANG") && !env_is_hook("OLD_PRELOAD"), "ordinary names are not hooks");
	ok(env_name_valid("A_1") && !env_name_valid("1A") && !env_name_valid("A-B") && !env_name_valid(""),
	   "variable names are validated");

	policy_init(&p);
	env_add_safe_set(&p);
	policy_add_env(&p, "FOO", NULL, o);
	policy_add_env(&p, "SET", "explicit", o);
	policy_add_env(&p, "PATH", "/override", o);
	ok(env_build(&p, env_in, &envp, &names, &err) == 0, "env_build succeeds");
	for (i = 0; envp && envp[i]; i++) {
		strncat(joined, envp[i], sizeof(joined) - strlen(joined) - 2);
		strcat(joined, " ");
	}
	is_str(joined, "FOO=bar HOME=/h LC_ALL=C PATH=/override SET=explicit XDG_RUNTIME_DIR=/run/u ",
	       "environment is exactly the safe set plus declared, later rules win, sorted");
	ok(names && names[0] && strcmp(names[0], "FOO") == 0, "names are listed without values");
	env_strv_free(envp);
	env_strv_free(names);

	policy_add_env(&p, "LD_PRELOAD", NULL, o);
	envp = names = NULL;
	ok(env_build(&p, env_in, &envp, &names, &err) < 0 && strstr(err.message, "LD_PRELOAD"),
	   "a pass-through hook is refused, naming it (%s)", err.message);
	policy_free(&p);
}

static void test_policy_validate(void)
{
	struct moat_policy p;
	struct moat_error err = {0};
	struct moat_origin o = {.source = "command line"};
	char *argv[] = {"true", NULL};

	policy_init(&p);
	ok(policy_validate(&p, &err) < 0 && strstr(err.message, "empty command"), "empty command is refused");
	policy_set_argv(&p, argv, 1);
	ok(policy_validate(&p, &err) == 0, "a command alone is valid");
	policy_add_path(&p, "/proj", MOAT_ACCESS_WRITE, false, o);
	policy_add_path(&p, "/proj", MOAT_ACCESS_DENY, false, o);
	ok(policy_validate(&p, &err) < 0 && strstr(err.message, "both writable and denied"),
	   "writable and denied at once is refused: %s", err.message);
	ok(p.mode == MOAT_MODE_REQUIRE && p.net == MOAT_NET_NONE, "defaults are require and no network");
	policy_free(&p);
}

static void test_properties(void)
{
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++)
		if (moat_property_parse(moat_property_name((enum moat_property)i)) != i)
			break;
	ok(i == MOAT_P__COUNT, "every property name parses back to itself");
	ok(moat_property_parse("fs.bogus") < 0, "unknown property names are refused");
}

static void test_policy_json(void)
{
	struct moat_policy p;
	struct moat_origin o = {.source = "command line"};
	char *argv[] = {"echo", "hi", NULL};
	json_t *j;
	char *s;

	policy_init(&p);
	policy_set_argv(&p, argv, 2);
	policy_add_env(&p, "TOKEN", "supersecret", o);
	j = policy_to_json(&p);
	s = json_dumps(j, JSON_COMPACT);
	ok(s && strstr(s, "\"TOKEN\"") && !strstr(s, "supersecret"), "the policy dump names variables, never values");
	ok(s && strstr(s, "\"argv\":[\"echo\",\"hi\"]"), "the policy dump has the argv");
	free(s);
	json_decref(j);
	policy_free(&p);
}

static bool has_rule(const struct moat_policy *p, const char *path, enum moat_access a)
{
	size_t i;

	for (i = 0; i < p->n_paths; i++)
		if (strcmp(p->paths[i].path, path) == 0 && p->paths[i].access == a)
			return true;
	return false;
}

/* A script inside a node_modules tree gets the whole tree (its imports are
 * anywhere in it), never the project above it. */
static void test_node_modules_tree(void)
{
	char tmpl[] = "/tmp/moat-unit.XXXXXX";
	char *dir = mkdtemp(tmpl), script[512], tree[512], proj[512], cmd[1200];
	char *argv[] = {"node", script, NULL};
	struct moat_policy p;
	struct moat_error err = {0};
	struct profile_context ctx;
	FILE *f;

	ok(dir != NULL, "scratch dir");
	if (!dir)
		return;
	snprintf(proj, sizeof(proj), "%s/proj", dir);
	snprintf(tree, sizeof(tree), "%s/proj/node_modules", dir);
	snprintf(script, sizeof(script), "%s/proj/node_modules/pkg/dist/index.js", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/proj/node_modules/pkg/dist", dir);
	ok(system(cmd) == 0, "made a node_modules tree");
	f = fopen(script, "w");
	if (f)
		fclose(f);
	policy_init(&p);
	policy_set_argv(&p, argv, 2);
	ctx = (struct profile_context){.home = "/nonexistent-home", .cwd = "/", .exe = "/bin/sh", .argv = p.argv};
	ok(profile_apply(&p, "strict", &ctx, &err) == 0, "strict applies (%s)", err.message);
	ok(has_rule(&p, tree, MOAT_ACCESS_READ), "the script's node_modules tree is granted read-only");
	ok(!has_rule(&p, proj, MOAT_ACCESS_READ) && !has_rule(&p, proj, MOAT_ACCESS_WRITE),
	   "the project above node_modules is not granted");
	policy_free(&p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(system(cmd) == 0, "cleaned up");
}

/* Add DEST to p's allowlist; `project` (or NULL): the entry's setting in a
 * project's file. */
static void allow(struct moat_policy *p, const char *dest, const char *project)
{
	struct moat_net_dest d;
	struct net_parse_error pe;

	if (net_dest_parse(dest, &d, &pe) < 0) {
		printf("Bail out! %s: %s\n", dest, pe.msg);
		exit(1);
	}
	d.origin = (struct moat_origin){.source = "command line"};
	if (project) {
		d.from = strdup("@npm (/p/.npmrc:1)");
		d.project = strdup(project);
	}
	policy_add_net_dest(p, &d);
}

/* A project's entry in a private range: refused unless the user's own
 * entries allow it on each of its ports. */
static const char *project_net(const char *dest, const char *user1, const char *user2)
{
	static char out[1200];
	struct moat_policy p;
	struct moat_error err = {0};
	char *argv[] = {"true", NULL};

	policy_init(&p);
	policy_set_argv(&p, argv, 1);
	p.net = MOAT_NET_ALLOW;
	allow(&p, dest, "/p/.npmrc:1: registry=URL");
	if (user1)
		allow(&p, user1, NULL);
	if (user2)
		allow(&p, user2, NULL);
	if (policy_validate(&p, &err) < 0)
		snprintf(out, sizeof(out), "refused: %s", err.message);
	else
		snprintf(out, sizeof(out), "allowed");
	policy_free(&p);
	return out;
}

static void test_project_net(void)
{
	static const struct {
		const char *dest, *user1, *user2, *want;
	} rows[] = {
	    {"127.0.0.1:4873", NULL, NULL,
	     "refused: /p/.npmrc:1: registry=URL: a registry at 127.0.0.1:4873 (127.0.0.0/8: the host's own loopback): "
	     "a file of the project (a repository you may just have cloned) does not open @npm to this host, its network "
	     "or the cloud's metadata endpoint"},
	    {"127.0.0.1:4873", "127.0.0.1:4873", NULL, "allowed"},
	    {"127.0.0.1:4873", "127.0.0.0/8:4873", NULL, "allowed"},
	    {"127.0.0.1:4873", "localhost:4873", NULL, "allowed"},
	    {"127.0.0.1:4873", "127.0.0.1:*", NULL, "allowed"},
	    {"127.0.0.1:4873", "127.0.0.1:4874", NULL, "refused"},
	    {"127.0.0.1:4873", "proxy:127.0.0.1:4873", NULL, "refused"},
	    {"127.0.0.1:4873", "127.0.0.2:4873", NULL, "refused"},
	    {"169.254.169.254:80", NULL, NULL, "refused"},
	    {"169.254.169.254:80", "169.254.169.254", NULL, "allowed"},
	    {"[::1]:4873", NULL, NULL, "refused"},
	    {"[::1]:4873", "localhost:4873", NULL, "allowed"},
	    {"[fe80::1]:80", NULL, NULL, "refused"},
	    {"[fc00::1]:80", NULL, NULL, "refused"},
	    {"[::ffff:10.0.0.1]:80", NULL, NULL, "refused"},
	    {"[64:ff9b::a9fe:a9fe]:80", NULL, NULL, "refused"},
	    {"[2002:a00:1::]:80", NULL, NULL, "refused"},
	    {"10.1.2.3:80", NULL, NULL, "refused"},
	    {"172.16.0.1:80", NULL, NULL, "refused"},
	    {"192.168.1.1:80", NULL, NULL, "refused"},
	    {"100.64.0.1:80", NULL, NULL, "refused"},
	    {"0.0.0.0:80", NULL, NULL, "refused"},
	    {"[::]:80", NULL, NULL, "refused"},
	    {"localhost:4873", NULL, NULL, "refused"},
	    {"reg.localhost:4873", NULL, NULL, "refused"},
	    {"localhost:4873", "127.0.0.1:4873", NULL, "allowed"},
	    {"reg.localhost:4873", "reg.localhost:4873", NULL, "allowed"},
	    {"reg.localhost:4873", "*.localhost:4873", NULL, "allowed"},
	    {"10.1.2.3", "10.1.2.3:443", NULL, "refused"},
	    {"10.1.2.3", "10.1.2.3:443", "10.0.0.0/8:80", "allowed"},
	    {"registry.example.com:443", NULL, NULL, "allowed"},
	    {"203.0.113.9:443", NULL, NULL, "allowed"},
	};
	struct moat_policy p;
	struct moat_error err = {0};
	char *argv[] = {"true", NULL};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *got = project_net(rows[i].dest, rows[i].user1, rows[i].user2);

		/* "refused" alone: refused, whatever the message */
		if (strcmp(rows[i].want, "refused") == 0 && strncmp(got, "refused: ", 9) == 0)
			got = "refused";
		is_str(got, rows[i].want, "a project's %s beside %s, %s", rows[i].dest, rows[i].user1 ? rows[i].user1 : "-",
		       rows[i].user2 ? rows[i].user2 : "-");
	}
	/* Two project entries do not vouch for each other; mode off checks
	 * nothing. */
	policy_init(&p);
	policy_set_argv(&p, argv, 1);
	p.net = MOAT_NET_ALLOW;
	allow(&p, "127.0.0.1:4873", "/p/.npmrc:1: registry=URL");
	allow(&p, "127.0.0.1:4873", "/p/.npmrc:2: @a:registry=URL");
	ok(policy_validate(&p, &err) < 0, "two entries of the project's do not allow each other");
	p.mode = MOAT_MODE_OFF;
	ok(policy_validate(&p, &err) == 0, "  under mode off nothing is checked");
	policy_free(&p);
}

int main(void)
{
	test_paths();
	test_link_before_dotdot();
	test_path_unexpanded();
	test_env();
	test_policy_validate();
	test_project_net();
	test_properties();
	test_policy_json();
	test_node_modules_tree();
	return tap_done();
}
