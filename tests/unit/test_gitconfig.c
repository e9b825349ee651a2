/* The user's git configuration, sanitized (sources/gitconfig.c): what is
 * kept and written anew, what is dropped (credential helpers, tokens in
 * url.<base>.insteadOf and in any kept value, http.extraHeader, includes,
 * unknown sections), git's syntax read as git reads it (quotes, escapes,
 * continuations, comments, old-style [section.sub], a key after a header on
 * its line), files git would refuse giving nothing, and the output read
 * back to the same entries.  gitconfig_load: the files git reads, in its
 * order, and GIT_CONFIG_GLOBAL alone when set. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "sources/gitconfig.h"
#include "tap.h"
#include "util/rmtree.h"

/* The kept (or dropped) keys, ", "-joined. */
static const char *keys(const struct moat_git_config *g, bool kept, char *buf, size_t len)
{
	char *const *v = kept ? g->kept : g->dropped;
	size_t n = kept ? g->n_kept : g->n_dropped, o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", v[i]);
	return buf;
}

static void filter(const char *in, struct moat_git_config *g, int want_rc, const char *what)
{
	char bad[256] = "";
	int rc = gitconfig_filter(in, strlen(in), "c", g, bad, sizeof(bad));

	ok(rc == want_rc, "%s (%s)", what, bad);
}

static void test_kept_and_dropped(void)
{
	struct moat_git_config g = {0}, again = {0};
	char buf[2048];

	filter("[user]\n"
	       "\tname = Ada Lovelace\n"
	       "\temail = ada@example.org\n"
	       "\tsigningkey = ~/.ssh/id_ed25519.pub\n"
	       "[core]\n"
	       "\teditor = vim\n"
	       "\taskPass = /usr/bin/ksshaskpass\n"
	       "\tsshCommand = ssh -i ~/.ssh/work\n"
	       "[alias]\n"
	       "\tst = status -sb\n"
	       "\tpr = \"!curl -s https://ghp_abc123@api.github.com/x\"\n"
	       "[credential]\n"
	       "\thelper = store\n"
	       "[credential \"https://github.com\"]\n"
	       "\tusername = ada\n"
	       "[url \"https://ghp_secret@github.com/\"]\n"
	       "\tinsteadOf = https://github.com/\n"
	       "[url \"https://ada:hunter2@git.example.org/\"]\n"
	       "\tinsteadOf = https://git.example.org/\n"
	       "[url \"git@github.com:\"]\n"
	       "\tpushInsteadOf = https://github.com/\n"
	       "[url \"ssh://git@example.org/\"]\n"
	       "\tinsteadOf = ex:\n"
	       "[http]\n"
	       "\textraHeader = Authorization: Bearer xyz\n"
	       "[http \"https://example.org\"]\n"
	       "\tproxy = http://u:p@proxy:3128\n"
	       "[github]\n"
	       "\ttoken = ghp_zzz\n"
	       "[sendemail]\n"
	       "\tsmtpPass = pw\n"
	       "[include]\n"
	       "\tpath = ~/.gitconfig.local\n"
	       "[includeIf \"gitdir:~/code/\"]\n"
	       "\tpath = ~/.gitconfig.work\n"
	       "[init]\n"
	       "\tdefaultBranch = main\n"
	       "[safe]\n"
	       "\tdirectory = *\n"
	       "[filter \"lfs\"]\n"
	       "\tprocess = git-lfs filter-process\n"
	       "\trequired\n"
	       "[frobnicate]\n"
	       "\tx = 1\n",
	       &g, 0, "a typical ~/.gitconfig is read");
	is_str(keys(&g, true, buf, sizeof(buf)),
	       "user.name, user.email, core.editor, alias.st, url.git@github.com:.pushinsteadof, "
	       "url.ssh://git@example.org/.insteadof, init.defaultbranch, safe.directory, filter.lfs.process, "
	       "filter.lfs.required",
	       "kept: identity, core, aliases, url rewrites without credentials, init, safe, filters");
	is_str(keys(&g, false, buf, sizeof(buf)),
	       "user.signingkey, core.askpass, core.sshcommand, alias.pr, credential.helper, "
	       "credential.https://github.com.username, url.https://***@github.com/.insteadof, "
	       "url.https://***@git.example.org/.insteadof, http.extraheader, http.https://example.org.proxy, "
	       "github.token, sendemail.smtppass, include.path, includeif.gitdir:~/code/.path, frobnicate.x",
	       "dropped: credentials, tokens in URLs (masked in the names), http, includes, unknown sections");
	is_str(g.text,
	       "[user]\n\tname = \"Ada Lovelace\"\n\temail = \"ada@example.org\"\n"
	       "[core]\n\teditor = \"vim\"\n"
	       "[alias]\n\tst = \"status -sb\"\n"
	       "[url \"git@github.com:\"]\n\tpushinsteadof = \"https://github.com/\"\n"
	       "[url \"ssh://git@example.org/\"]\n\tinsteadof = \"ex:\"\n"
	       "[init]\n\tdefaultbranch = \"main\"\n"
	       "[safe]\n\tdirectory = \"*\"\n"
	       "[filter \"lfs\"]\n\tprocess = \"git-lfs filter-process\"\n\trequired\n",
	       "written anew: one header per section, every value quoted");
	ok(!strstr(g.text, "ghp_") && !strstr(g.text, "hunter2") && !strstr(g.text, "Bearer") &&
	       !strstr(g.text, "smtp") && !strstr(g.text, "store"),
	   "no credential reaches the output");
	filter(g.text, &again, 0, "the output reads back");
	is_str(again.text, g.text, "  to the same entries");
	git_config_clear(&g);
	git_config_clear(&again);
}

static void test_syntax(void)
{
	struct moat_git_config g = {0};
	char buf[512];

	filter("\xef\xbb\xbf# a comment\n; another\n"
	       "[core] editor = \"emacs -nw\" ; trailing comment\n"
	       "[Alias]\n"
	       "  LG = log --graph \\\n    --oneline\n"
	       "  q = \"a \\\"quoted\\\" \\\\ word\\t\"  # comment\n"
	       "  sp =   two   spaces  \n"
	       "[user.Name]\n"
	       "x = 1\n"
	       "[color \"diff\"]\n"
	       "  old = red\n"
	       "[safe]\n"
	       "  directory = /a;b\n",
	       &g, 0, "comments, a key beside its header, continuations, escapes, old-style [section.sub]");
	is_str(keys(&g, true, buf, sizeof(buf)),
	       "core.editor, alias.lg, alias.q, alias.sp, color.diff.old, safe.directory",
	       "keys are lowercased, subsections kept as written");
	is_str(keys(&g, false, buf, sizeof(buf)), "user.name.x", "  user with a subsection is not user.name");
	is_str(g.text,
	       "[core]\n\teditor = \"emacs -nw\"\n"
	       "[alias]\n\tlg = \"log --graph     --oneline\"\n\tq = \"a \\\"quoted\\\" \\\\ word\\t\"\n"
	       "\tsp = \"two   spaces\"\n"
	       "[color \"diff\"]\n\told = \"red\"\n"
	       "[safe]\n\tdirectory = \"/a\"\n",
	       "values as git reads them: inner spaces kept, a ';' outside quotes starts a comment");
	git_config_clear(&g);

	/* Found by tests/fuzz/fuzz_gitconfig.c: a one-byte userinfo masked
	 * into a longer name, and a tab in a subsection, where a backslash
	 * escapes the byte after it (no \t there). */
	filter("[url \"https://t@h/\"]\n\tinsteadOf = x\n[color \"a\tb\"]\n\told = red\n", &g, 0,
	       "a short token, a tab in a subsection");
	is_str(keys(&g, false, buf, sizeof(buf)), "url.https://***@h/.insteadof", "  the token masked");
	is_str(g.text, "[color \"a\tb\"]\n\told = \"red\"\n", "  the tab written as it is");
	{
		struct moat_git_config again = {0};
		filter(g.text, &again, 0, "  which reads back");
		is_str(keys(&again, true, buf, sizeof(buf)), "color.a\tb.old", "  to the same key");
		git_config_clear(&again);
	}
	git_config_clear(&g);

	static const char *const refused[] = {
	    "x = 1\n",			  /* a key before any section */
	    "[core\n",			  /* an unclosed header */
	    "[core]\n\teditor = \"vim\n", /* an unclosed quote */
	    "[core]\n\teditor = a\\qb\n", /* an unknown escape */
	    "[core]\n\t1x = y\n",	  /* a key that does not start with a letter */
	    "[core]\n\teditor vim\n",	  /* no '=' */
	    "[a \"b\" c]\n",		  /* junk after the subsection */
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct moat_git_config r = {0};
		char bad[256] = "";
		int rc = gitconfig_filter(refused[i], strlen(refused[i]), "c", &r, bad, sizeof(bad));
		ok(rc < 0 && r.len == 0 && r.n_kept == 0 && strncmp(bad, "c:", 2) == 0,
		   "what git refuses gives nothing: %s", bad);
		git_config_clear(&r);
	}
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void test_load(void)
{
	char base[] = "/tmp/moat-gitconfig.XXXXXX", path[256], envs[3][300], buf[512];
	struct moat_git_config *g = NULL;
	struct netset_notes notes = {0};

	if (!mkdtemp(base)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/.config", base);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.config/git", base);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.config/git/config", base);
	put(path, "[user]\n\tname = XDG\n");
	snprintf(path, sizeof(path), "%s/.gitconfig", base);
	put(path, "[user]\n\temail = home@example.org\n[credential]\n\thelper = store\n");
	{
		char *env[] = {NULL};
		gitconfig_load(base, env, &g, &notes);
	}
	ok(g && g->n_files == 2, "both files are read");
	if (g) {
		is_str(keys(g, true, buf, sizeof(buf)), "user.name, user.email",
		       "  ~/.config/git/config, then ~/.gitconfig");
		is_str(g->text, "[user]\n\tname = \"XDG\"\n\temail = \"home@example.org\"\n", "  one [user] for both");
	}
	git_config_free(g);
	snprintf(path, sizeof(path), "%s/other", base);
	put(path, "[user]\n\tname = Other\n");
	snprintf(envs[0], sizeof(envs[0]), "GIT_CONFIG_GLOBAL=%s", path);
	{
		char *env[] = {envs[0], NULL};
		gitconfig_load(base, env, &g, &notes);
	}
	ok(g && g->n_files == 1 && strcmp(g->files[0], path) == 0, "GIT_CONFIG_GLOBAL alone when set");
	git_config_free(g);
	snprintf(path, sizeof(path), "%s/.gitconfig", base);
	put(path, "[user\n");
	snprintf(path, sizeof(path), "%s/.config/git/config", base);
	unlink(path);
	{
		char *env[] = {NULL};
		gitconfig_load(base, env, &g, &notes);
	}
	ok(!g, "a file git would refuse gives nothing");
	ok(notes.n == 1 && strstr(notes.v[0], ".gitconfig:1: a bad section header"), "  and a note says where: %s",
	   notes.n ? notes.v[0] : "(none)");
	netset_notes_free(&notes);
	rmtree(base);
}

int main(void)
{
	test_kept_and_dropped();
	test_syntax();
	test_load();
	return tap_done();
}
