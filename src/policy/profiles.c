#include "policy/profiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/cabundle.h"
#include "policy/env.h"
#include "policy/protected.h"
#include "util/account.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/gitcfg.h"
#include "util/mem.h"
#include "util/path.h"

/* The system, read-only: enough for dynamically linked programs and the
 * common runtimes to start.  Paths that do not exist are skipped. */
static const char *const system_read[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	/* Runtimes size their thread pools and heaps from these. */
	"/sys/devices/system/cpu", "/sys/fs/cgroup", "/sys/kernel/mm/transparent_hugepage",
	"/proc", "/dev/urandom", "/dev/random",
};

/* Nix: the store holds every package's files and the libraries and
 * programs they name by their store paths (world-readable, as /usr); the
 * profiles are links into it; NixOS's PATH is /run/current-system/sw/bin,
 * a link there too.  Added where /nix exists (one lstat at every start,
 * not a failed lookup of each), and for another host. */
static const char *const nix_read[] = {"/nix/store", "/nix/var/nix/profiles", "/run/current-system"};

/* Device files every program may write: harmless sinks and sources. */
static const char *const system_write[] = {"/dev/null", "/dev/zero", "/dev/full"};

/* The built-in secrets: credential paths denied in every profile, even
 * when a parent is granted (docs/policy.md, "Built-in secrets", lists each
 * with what it holds; tests/blackbox/secrets.sh checks that list against
 * this one and masks a canary at every path).  A path is absolute, or
 * relative to HOME; a trailing '/' marks a directory, denied whole.
 * Directories are denied whole only when they hold nothing else a tool
 * needs to run, or when what they hold is unbounded (a browser profile, an
 * agent's transcripts); elsewhere only the files that bear credentials.
 * Consecutive entries of one tool print as one line (`moat profiles`). */
struct secret_path {
	const char *path;
	const char *tool;
};

static const struct secret_path system_secrets[] = {
    {"/etc/shadow", "shadow passwords"},
    {"/etc/shadow-", "shadow passwords"},
    {"/etc/gshadow", "shadow passwords"},
    {"/etc/gshadow-", "shadow passwords"},
    {"/etc/security/opasswd", "pam_pwhistory"},
    {"/etc/sudoers", "sudo"},
    {"/etc/sudoers.d/", "sudo"},
    {"/etc/ssh/ssh_host_rsa_key", "OpenSSH server"},
    {"/etc/ssh/ssh_host_ecdsa_key", "OpenSSH server"},
    {"/etc/ssh/ssh_host_ed25519_key", "OpenSSH server"},
    {"/etc/ssh/ssh_host_dsa_key", "OpenSSH server"},
    {"/etc/ssl/private/", "OpenSSL (Debian)"},
    {"/etc/pki/tls/private/", "OpenSSL (Fedora, RHEL)"},
    {"/etc/letsencrypt/", "Certbot"},
    {"/etc/krb5.keytab", "Kerberos"},
    {"/etc/wireguard/", "WireGuard"},
    {"/etc/openvpn/", "OpenVPN"},
    {"/etc/ipsec.secrets", "strongSwan, Libreswan"},
    {"/etc/ppp/chap-secrets", "pppd"},
    {"/etc/ppp/pap-secrets", "pppd"},
    {"/etc/NetworkManager/system-connections/", "NetworkManager"},
    {"/etc/kubernetes/", "kubeadm"},
    {"/etc/rancher/k3s/k3s.yaml", "k3s"},
    {"/etc/nix/nix.conf", "Nix"},
    {"/etc/nix/netrc", "Nix"},
};

static const struct secret_path home_secrets[] = {
    /* keys, keyrings, password managers */
    {".ssh/", "OpenSSH"},
    {".gnupg/", "GnuPG"},
    {".pki/", "NSS"},
    {".local/share/keyrings/", "GNOME Keyring"},
    {".local/share/kwalletd/", "KWallet"},
    {".password-store/", "pass"},
    {".local/share/gopass/", "gopass"},
    {".config/gopass/age/", "gopass"},
    {".config/op/", "1Password CLI"},
    {".op/", "1Password CLI"},
    {".config/Bitwarden CLI/", "Bitwarden CLI"},
    {".config/Bitwarden/", "Bitwarden"},
    {".config/sops/age/keys.txt", "SOPS"},
    {".vault-token", "Vault"},
    {".doppler/", "Doppler CLI"},
    {".Xauthority", "X11"},
    {".ICEauthority", "X11"},
    {".netrc", "netrc (curl, git, Heroku CLI, ...)"},
    {".env", "dotenv (aider, ...)"},
    /* cloud providers and platforms */
    {".aws/", "AWS CLI"},
    {".awsvault/", "aws-vault"},
    {".config/gcloud/", "Google Cloud SDK"},
    {".boto", "gsutil"},
    {".azure/", "Azure CLI"},
    {".oci/", "OCI CLI"},
    {".config/doctl/", "DigitalOcean doctl"},
    {".config/linode-cli", "Linode CLI"},
    {".linode-cli", "Linode CLI"},
    {".config/hcloud/", "Hetzner hcloud"},
    {".config/scw/", "Scaleway CLI"},
    {".bluemix/", "IBM Cloud CLI"},
    {".aliyun/", "Alibaba Cloud CLI"},
    {".fly/config.yml", "flyctl"},
    {".local/share/com.vercel.cli/auth.json", "Vercel CLI"},
    {".config/netlify/config.json", "Netlify CLI"},
    {".netlify/config.json", "Netlify CLI"},
    {".config/.wrangler/config/default.toml", "Cloudflare wrangler"},
    {".wrangler/config/default.toml", "Cloudflare wrangler"},
    {".config/configstore/firebase-tools.json", "Firebase CLI"},
    {".supabase/access-token", "Supabase CLI"},
    {".railway/config.json", "Railway CLI"},
    {".expo/state.json", "Expo CLI"},
    {".terraform.d/", "Terraform, OpenTofu"},
    {".terraformrc", "Terraform, OpenTofu"},
    {".tofurc", "OpenTofu"},
    {".config/opentofu/tofurc", "OpenTofu"},
    {".config/opentofu/credentials.tfrc.json", "OpenTofu"},
    {".pulumi/credentials.json", "Pulumi"},
    {".databrickscfg", "Databricks CLI"},
    {".snowflake/", "Snowflake CLI"},
    {".dbt/profiles.yml", "dbt"},
    {".kaggle/kaggle.json", "Kaggle API"},
    {".config/kaggle/kaggle.json", "Kaggle API"},
    {".config/stripe/config.toml", "Stripe CLI"},
    {".sentryclirc", "sentry-cli"},
    {".circleci/cli.yml", "CircleCI CLI"},
    /* containers, clusters, storage, tunnels */
    {".docker/", "Docker"},
    {".dockercfg", "Docker"},
    {".config/containers/auth.json", "Podman, Buildah, Skopeo"},
    {".kube/", "kubectl"},
    {".config/helm/registry/config.json", "Helm"},
    {".config/helm/repositories.yaml", "Helm"},
    {".talos/config", "talosctl"},
    {".tsh/", "Teleport tsh"},
    {".config/rclone/", "rclone"},
    {".s3cfg", "s3cmd"},
    {".mc/config.json", "MinIO client"},
    {".config/ngrok/ngrok.yml", "ngrok"},
    {".ngrok2/ngrok.yml", "ngrok"},
    /* version control and forges */
    {".git-credentials", "git credential-store"},
    {".config/git/credentials", "git credential-store"},
    {".config/gh/", "GitHub CLI"},
    {".config/hub", "hub"},
    {".config/glab-cli/config.yml", "GitLab CLI"},
    {".config/tea/config.yml", "Gitea tea"},
    {".config/hut/config", "SourceHut hut"},
    {".subversion/auth/", "Subversion"},
    /* package registries */
    {".npmrc", "npm"},
    {".yarnrc.yml", "Yarn"},
    {".config/pnpm/rc", "pnpm"},
    {".bunfig.toml", "Bun"},
    {".config/.bunfig.toml", "Bun"},
    {".pypirc", "twine"},
    {".local/share/uv/credentials/", "uv"},
    {".config/pypoetry/auth.toml", "Poetry"},
    {".cargo/credentials", "Cargo"},
    {".cargo/credentials.toml", "Cargo"},
    {".config/nix/nix.conf", "Nix"},
    {".gem/credentials", "RubyGems"},
    {".bundle/config", "Bundler"},
    {".m2/settings.xml", "Maven"},
    {".m2/settings-security.xml", "Maven"},
    {".gradle/gradle.properties", "Gradle"},
    {".nuget/NuGet/NuGet.Config", "NuGet"},
    {".config/NuGet/NuGet.Config", "NuGet"},
    {".config/composer/auth.json", "Composer"},
    {".composer/auth.json", "Composer"},
    {".config/dart/pub-credentials.json", "Dart pub"},
    {".pub-cache/credentials.json", "Dart pub"},
    {".jfrog/", "JFrog CLI"},
    /* AI tools */
    {".claude/", "Claude Code"},
    {".claude.json", "Claude Code"},
    {".config/Claude/", "Claude Desktop"},
    {".codex/", "Codex CLI"},
    {".gemini/", "Gemini CLI"},
    {".qwen/oauth_creds.json", "Qwen Code"},
    {".config/github-copilot/", "GitHub Copilot"},
    {".copilot/config.json", "GitHub Copilot CLI"},
    {".cursor/mcp.json", "Cursor"},
    {".config/cursor/auth.json", "Cursor"},
    {".config/Cursor/", "Cursor"},
    {".continue/", "Continue"},
    {".aider.conf.yml", "aider"},
    {".local/share/opencode/auth.json", "opencode"},
    {".config/io.datasette.llm/keys.json", "llm"},
    {".cache/huggingface/token", "Hugging Face Hub"},
    {".cache/huggingface/stored_tokens", "Hugging Face Hub"},
    {".huggingface/token", "Hugging Face Hub"},
    {".ollama/id_ed25519", "Ollama"},
    /* databases */
    {".pgpass", "PostgreSQL"},
    {".my.cnf", "MySQL, MariaDB"},
    {".mylogin.cnf", "MySQL"},
    {".local/share/DBeaverData/workspace6/General/.dbeaver/credentials-config.json", "DBeaver"},
    /* browsers and mail: cookies, saved logins, the keys that decrypt them */
    {".config/google-chrome/", "Chrome"},
    {".config/google-chrome-beta/", "Chrome"},
    {".config/google-chrome-unstable/", "Chrome"},
    {".var/app/com.google.Chrome/", "Chrome"},
    {".config/chromium/", "Chromium"},
    {"snap/chromium/", "Chromium"},
    {".var/app/org.chromium.Chromium/", "Chromium"},
    {".config/BraveSoftware/", "Brave"},
    {".var/app/com.brave.Browser/", "Brave"},
    {".config/microsoft-edge/", "Microsoft Edge"},
    {".config/vivaldi/", "Vivaldi"},
    {".config/opera/", "Opera"},
    {".mozilla/", "Firefox"},
    {".config/mozilla/", "Firefox"},
    {"snap/firefox/", "Firefox"},
    {".var/app/org.mozilla.firefox/", "Firefox"},
    {".thunderbird/", "Thunderbird"},
    /* messaging */
    {".config/Slack/", "Slack"},
    {".config/discord/", "Discord"},
    {".config/Signal/", "Signal Desktop"},
    {".config/Element/", "Element"},
    {".local/share/TelegramDesktop/", "Telegram Desktop"},
    /* histories: what was typed, passwords and tokens included */
    {".bash_history", "bash"},
    {".zsh_history", "zsh"},
    {".histfile", "zsh"},
    {".zhistory", "zsh"},
    {".local/share/fish/fish_history", "fish"},
    {".local/share/atuin/", "atuin"},
    {".python_history", "Python"},
    {".ipython/profile_default/history.sqlite", "IPython"},
    {".node_repl_history", "Node.js"},
    {".irb_history", "irb"},
    {".psql_history", "psql"},
    {".mysql_history", "mysql"},
    {".sqlite_history", "sqlite3"},
    {".rediscli_history", "redis-cli"},
    {".mongodb/mongosh/", "mongosh"},
    {".dbshell", "mongo shell"},
    {".lesshst", "less"},
};

/* Caches the runtimes read when an MCP server starts (npx, pip, uv, go). */
static const char *const mcp_home_read[] = {
	".npm", ".cache/node", ".nvm", ".volta", ".local/lib", ".local/bin", ".local/share/pnpm",
	".cache/uv", ".local/share/uv", ".pyenv", ".cache/pip", ".cargo/bin", "go/pkg/mod", ".bun", ".deno",
	".cache/deno",
};

static const char *const profile_names[] = {"strict", "exec", "mcp", "network", NULL};

static const char *const profile_help[] = {
	"the system read-only, the command's own install dir, a private /tmp, no network",
	"strict plus read access to the current directory",
	"strict plus the runtime caches MCP servers need (~/.npm, ~/.nvm, ~/.local/lib, ...)",
	"mcp with network; package managers cache in moat's ~/.cache/moat/pkg",
};

static void add(struct moat_policy *p, const char *path, enum moat_access a, bool optional, const char *why)
{
	struct moat_origin o = {.source = why};
	policy_add_path(p, path, a, optional, o);
	p->paths[p->n_paths - 1].from_profile = true;
}

/* Deny `prefix` + each entry's path (without its trailing '/'). */
static void add_secrets(struct moat_policy *p, const char *prefix, const struct secret_path *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t full = strlen(list[i].path);
		int len = (int)(full - (list[i].path[full - 1] == '/'));
		char buf[PATH_MAX];
		cleanup_free char *long_path = NULL;
		int w = snprintf(buf, sizeof(buf), "%s%.*s", prefix, len, list[i].path);

		/* On the stack: ~180 of these at every start. */
		if (w < 0 || (size_t)w >= sizeof(buf))
			long_path = moat_xasprintf("%s%.*s", prefix, len, list[i].path);
		add(p, long_path ? long_path : buf, MOAT_ACCESS_DENY, true, "built-in secrets");
	}
}

/* a and b name the same directory, written alike but for trailing '/'. */
static bool same_dir_text(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && memcmp(a, b, la) == 0;
}

/* The account's own home when $HOME names another (or none): its
 * credentials are denied too, and it is never granted whole. */
static const char *other_home(const char *home)
{
	const char *acct = account_home(home);

	return acct && (!home || !same_dir_text(acct, home)) ? acct : NULL;
}

/* Credential stores that the tools' own variables move out of HOME: the
 * secrets list names them under HOME only, and with GNUPGHOME=/x/gnupg a
 * grant holding /x showed the keys while fs.secrets said enforced
 * (red-team).  `sub` is appended to the variable's value (NULL: the value
 * itself, a ':'-separated list with `list`); XDG_CONFIG_HOME and
 * XDG_DATA_HOME move every entry of the list under ~/.config and
 * ~/.local/share (relocate_xdg). */
#define MOVED_BY(var, sub, list) {var, sub, list, "built-in secrets, moved by " var}
static const struct relocated_store {
	const char *var, *sub;
	bool list;
	const char *why; /* the rule's origin: a literal, as origins are */
} relocated_stores[] = {
    MOVED_BY("GNUPGHOME", NULL, false),
    MOVED_BY("PASSWORD_STORE_DIR", NULL, false),
    MOVED_BY("DOCKER_CONFIG", NULL, false),
    MOVED_BY("KUBECONFIG", NULL, true),
    MOVED_BY("CARGO_HOME", "credentials", false),
    MOVED_BY("CARGO_HOME", "credentials.toml", false),
    MOVED_BY("AWS_SHARED_CREDENTIALS_FILE", NULL, false),
    MOVED_BY("AWS_CONFIG_FILE", NULL, false),
    MOVED_BY("CLOUDSDK_CONFIG", NULL, false),
    MOVED_BY("AZURE_CONFIG_DIR", NULL, false),
    MOVED_BY("GH_CONFIG_DIR", NULL, false),
    MOVED_BY("CODEX_HOME", NULL, false),
    MOVED_BY("CLAUDE_CONFIG_DIR", NULL, false),
    MOVED_BY("NPM_CONFIG_USERCONFIG", NULL, false),
    MOVED_BY("npm_config_userconfig", NULL, false),
    MOVED_BY("POETRY_CONFIG_DIR", "auth.toml", false),
    MOVED_BY("GRADLE_USER_HOME", "gradle.properties", false),
    MOVED_BY("PULUMI_HOME", "credentials.json", false),
    MOVED_BY("TF_CLI_CONFIG_FILE", NULL, false),
    MOVED_BY("RCLONE_CONFIG", NULL, false),
    MOVED_BY("DATABRICKS_CONFIG_FILE", NULL, false),
    MOVED_BY("KAGGLE_CONFIG_DIR", "kaggle.json", false),
    MOVED_BY("REGISTRY_AUTH_FILE", NULL, false),
    MOVED_BY("HELM_REGISTRY_CONFIG", NULL, false),
    MOVED_BY("SOPS_AGE_KEY_FILE", NULL, false),
    MOVED_BY("NETRC", NULL, false),
    MOVED_BY("TELEPORT_HOME", NULL, false),
    MOVED_BY("HF_HOME", "token", false),
    MOVED_BY("HF_HOME", "stored_tokens", false),
    MOVED_BY("HF_TOKEN_PATH", NULL, false),
    MOVED_BY("PGPASSFILE", NULL, false),
    MOVED_BY("MYSQL_HISTFILE", NULL, false),
    MOVED_BY("PSQL_HISTORY", NULL, false),
    MOVED_BY("HISTFILE", NULL, false),
    MOVED_BY("PYTHON_HISTORY", NULL, false),
    MOVED_BY("NODE_REPL_HISTORY", NULL, false),
    MOVED_BY("COMPOSER_HOME", "auth.json", false),
    MOVED_BY("BOTO_CONFIG", NULL, false),
    MOVED_BY("AWS_VAULT_FILE_DIR", NULL, false),
    MOVED_BY("VAULT_TOKEN_FILE", NULL, false),
};
#undef MOVED_BY

/* A value a store can be moved to: not empty, and not "/" (a deny of the
 * root would deny the whole view: a command that cannot start, for a
 * variable that names no store). */
static bool store_value(const char *v)
{
	return v && *v && v[strspn(v, "/")] != '\0';
}

/* A relative value (KUBECONFIG=./kc) is the tool's, run in the command's
 * directory: taken against the policy's cwd, where the command starts. */
static void deny_relocated(struct moat_policy *p, const char *dir, const char *sub, const char *why)
{
	cleanup_free char *abs = path_resolve_lexical(dir, p->cwd, NULL);
	cleanup_free char *path = NULL;

	/* HISTFILE=/dev/null turns a history off: no store there, and a
	 * deny of /dev/null would break every command. */
	if (!abs || strcmp(abs, "/") == 0 || path_within(abs, "/dev") || path_within(abs, "/proc") ||
	    path_within(abs, "/sys"))
		return;
	path = sub ? moat_xasprintf("%s/%s", abs, sub) : moat_xstrdup(abs);
	add(p, path, MOAT_ACCESS_DENY, true, why);
}

/* Every entry of the list under HOME/`under` (".config/"), denied under
 * the variable's directory instead. */
static void relocate_xdg(struct moat_policy *p, const char *var, const char *under, const char *why)
{
	const char *v = getenv(var);
	size_t n = strlen(under);

	if (!store_value(v))
		return;
	for (size_t i = 0; i < ARRAY_LEN(home_secrets); i++) {
		const char *e = home_secrets[i].path;
		size_t len = strlen(e);

		if (strncmp(e, under, n) != 0)
			continue;
		cleanup_free char *rest = moat_xstrndup(e + n, len - n - (e[len - 1] == '/'));
		deny_relocated(p, v, rest, why);
	}
}

static void add_relocated_secrets(struct moat_policy *p)
{
	relocate_xdg(p, "XDG_CONFIG_HOME", ".config/", "built-in secrets, moved by XDG_CONFIG_HOME");
	relocate_xdg(p, "XDG_DATA_HOME", ".local/share/", "built-in secrets, moved by XDG_DATA_HOME");
	relocate_xdg(p, "XDG_CACHE_HOME", ".cache/", "built-in secrets, moved by XDG_CACHE_HOME");
	for (size_t i = 0; i < ARRAY_LEN(relocated_stores); i++) {
		const struct relocated_store *r = &relocated_stores[i];
		const char *v = getenv(r->var);
		cleanup_free char *copy = NULL;
		char *save = NULL, *part;

		if (!v || !*v)
			continue;
		if (!r->list) {
			if (store_value(v))
				deny_relocated(p, v, r->sub, r->why);
			continue;
		}
		copy = moat_xstrdup(v);
		for (part = strtok_r(copy, ":", &save); part; part = strtok_r(NULL, ":", &save))
			if (store_value(part))
				deny_relocated(p, part, r->sub, r->why);
	}
}

void profile_add_secrets(struct moat_policy *p, const char *home, bool account_too)
{
	const char *acct = account_too ? other_home(home) : NULL;

	add_secrets(p, "", system_secrets, ARRAY_LEN(system_secrets));
	/* A home of "/" (systemd's nobody) gives "/.ssh", not "//.ssh". */
	if (home) {
		cleanup_free char *prefix = moat_xasprintf("%s/", strcmp(home, "/") == 0 ? "" : home);
		add_secrets(p, prefix, home_secrets, ARRAY_LEN(home_secrets));
	}
	if (acct) {
		cleanup_free char *prefix = moat_xasprintf("%s/", strcmp(acct, "/") == 0 ? "" : acct);
		add_secrets(p, prefix, home_secrets, ARRAY_LEN(home_secrets));
	}
	/* This machine's variables name this machine's paths: not for an
	 * export to another (account_too is false there). */
	if (account_too)
		add_relocated_secrets(p);
}

/* The directory a command is installed in: /x/bin/prog gives /x, so that its
 * lib/ and share/ come along; anything else gives its own directory.  The
 * system prefixes are already granted and are not widened. */
char *profile_install_dir(const char *exe)
{
	char real[PATH_MAX];
	char *dir, *slash;
	const char *base;

	if (!realpath(exe, real))
		return NULL;
	dir = moat_xstrdup(real);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir) {
		free(dir);
		return NULL;
	}
	*slash = '\0';
	base = strrchr(dir, '/');
	base = base ? base + 1 : dir;
	if ((strcmp(base, "bin") == 0 || strcmp(base, "sbin") == 0 || strcmp(base, "shims") == 0) &&
	    strrchr(dir, '/') != dir) {
		slash = strrchr(dir, '/');
		*slash = '\0';
	}
	return dir;
}

/* HOME's shared trees, where a tool's installation prefix is often the
 * tree itself (pip --user, `make install --prefix ~/.local`, a script in
 * ~/.local/bin): granting one whole would show everything else kept there
 * (~/.local/share's histories, trash, application data).  ~/go is GOPATH
 * by default: `go install` puts programs in ~/go/bin, beside the module
 * cache and, from GOPATH's days, the user's own source in ~/go/src; and
 * `cargo install` puts them in ~/.cargo/bin, beside cargo's configuration
 * (which may hold a registry token) and its caches. */
static const char *const home_shared_trees[] = {".local", ".local/share", ".local/state", ".config",
						 ".cache",  "go",	   ".cargo"};

static bool is_rustup(const char *real);

/* The programs of a shared tree that need all of it: the go and gofmt of
 * a toolchain unpacked into ~/go (`tar -C ~ -xzf go.tar.gz`: GOROOT ~/go),
 * and rustup's proxies in ~/.cargo/bin (cargo reads its registry and
 * configuration there).  What `go install` or `cargo install` put beside
 * them gets its own directory only. */
static bool needs_whole_tree(const char *dir, const char *prog)
{
	const char *d = strrchr(dir, '/'), *b = strrchr(prog, '/');

	if (!d || !b)
		return false;
	if (strcmp(d + 1, "go") == 0)
		return strcmp(b + 1, "go") == 0 || strcmp(b + 1, "gofmt") == 0;
	return strcmp(d + 1, ".cargo") == 0 && is_rustup(prog);
}

/* Is `dir` HOME's own ~/.local, ~/.config, ...?  HOME is compared as
 * given, then (`home_real` or, when NULL, realpath) through its links. */
static bool home_shared_tree(const char *dir, const char *home, const char *home_real)
{
	size_t dl = strlen(dir);

	for (size_t i = 0; home && i < ARRAY_LEN(home_shared_trees); i++) {
		size_t tl = strlen(home_shared_trees[i]);
		char real[PATH_MAX];

		if (dl <= tl + 1 || dir[dl - tl - 1] != '/' || strcmp(dir + dl - tl, home_shared_trees[i]) != 0)
			continue;
		cleanup_free char *prefix = moat_xstrndup(dir, dl - tl - 1);
		if (strcmp(prefix, home) == 0 || (home_real && strcmp(prefix, home_real) == 0) ||
		    (!home_real && realpath(home, real) && strcmp(prefix, real) == 0))
			return true;
	}
	return false;
}

static bool too_broad(const char *dir, const char *home);

/* A program installed by Homebrew (Linux: /home/linuxbrew/.linuxbrew or
 * ~/.linuxbrew; macOS: /opt/homebrew) lies in PREFIX/Cellar/NAME/VERSION,
 * and runs what other formulae install by PREFIX/opt/DEP and
 * PREFIX/lib/... (libraries linked with that RUNPATH, a wrapper that execs
 * another formula's binary): its keg alone does not run.  The prefix's
 * software is granted read-only -- Cellar, opt, bin, sbin, lib, share and
 * etc (the formulae's configuration: openssl's certificates) -- and not
 * var, where services keep their data and logs. */
static const char *const homebrew_parts[] = {"Cellar", "opt", "bin", "sbin", "lib", "share", "etc"};

/* Is `prefix` a Homebrew prefix: its opt/ beside its Cellar/? */
static bool homebrew_prefix(const char *prefix)
{
	cleanup_free char *cellar = moat_xasprintf("%s/Cellar", prefix), *opt = moat_xasprintf("%s/opt", prefix);
	struct stat st;

	return stat(cellar, &st) == 0 && S_ISDIR(st.st_mode) && stat(opt, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Grant `path`, read-only, as the object `rel` below `at` is now, and
 * bound to it (moat_path_rule.bound): judged by that object's real path
 * (never HOME, a directory containing it, nor the root), and dropped by
 * the plan if the name leads to another object by then -- a directory on
 * the way swapped for a link by someone who may write there.  False when
 * it is not a directory or is too broad. */
static bool add_bound_dir(struct moat_policy *p, int at, const char *rel, const char *path, const char *home,
			  const char *why)
{
	cleanup_close int fd = openat(at, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char real[PATH_MAX];
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0 || !path_of_fd(fd, real, sizeof(real)) || too_broad(real, home))
		return false;
	add(p, path, MOAT_ACCESS_READ, false, why);
	policy_path_bind(&p->paths[p->n_paths - 1], &st);
	return true;
}

static void add_homebrew_parts(struct moat_policy *p, const char *prefix, const char *home, const char *why)
{
	for (size_t i = 0; i < ARRAY_LEN(homebrew_parts); i++) {
		cleanup_free char *dir = moat_xasprintf("%s/%s", prefix, homebrew_parts[i]);

		(void)add_bound_dir(p, AT_FDCWD, dir, dir, home, why);
	}
}

static void add_homebrew(struct moat_policy *p, const char *prog, const char *home, const char *why)
{
	const char *at = strstr(prog, "/Cellar/");
	cleanup_free char *prefix = NULL;

	/* `prog` as the callers have it: the command's real path.  No
	 * realpath here, at every start, for the programs of every other
	 * installation. */
	if (!at || at == prog)
		return;
	prefix = moat_xstrndup(prog, (size_t)(at - prog));
	if (!too_broad(prefix, home) && homebrew_prefix(prefix))
		add_homebrew_parts(p, prefix, home, why);
}

/* An installation directory that is a Homebrew prefix itself (an
 * interpreter named by PREFIX/bin/python3, through its link): its software,
 * not its var/.  Looked at only by its name (.linuxbrew, homebrew), so that
 * other installations cost no lookup. */
static bool add_homebrew_whole(struct moat_policy *p, const char *dir, const char *home, const char *why)
{
	const char *base = strrchr(dir, '/');

	base = base ? base + 1 : dir;
	if ((strcmp(base, ".linuxbrew") != 0 && strcmp(base, "homebrew") != 0) || !homebrew_prefix(dir))
		return false;
	add_homebrew_parts(p, dir, home, why);
	return true;
}

bool profile_grant_install(struct moat_policy *p, int dir_fd, const char *dir, const char *prog, const char *home,
			   const char *home_real, const char *why)
{
	static const char *const libs[] = {"lib", "lib64"};
	cleanup_close int own_fd = -1;
	cleanup_free char *own = NULL;
	char real[PATH_MAX];
	bool granted;

	/* The object judged: the caller's, else the one `dir` is now. */
	if (dir_fd < 0 && (dir_fd = own_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	add_homebrew(p, prog, home, why);
	if (add_homebrew_whole(p, dir, home, why))
		return true;
	if (!path_of_fd(dir_fd, real, sizeof(real)))
		return false;
	/* HOME's shared trees by the name and by the object. */
	if ((!home_shared_tree(dir, home, home_real) && !home_shared_tree(real, home, home_real)) ||
	    needs_whole_tree(dir, prog))
		return add_bound_dir(p, dir_fd, ".", dir, home, why);
	own = moat_xstrdup(prog);
	granted = false;
	if (strrchr(own, '/') && strrchr(own, '/') != own) {
		*strrchr(own, '/') = '\0';
		/* Through the judged object when it lies in it, as it does. */
		if (path_within(own, dir) && strcmp(own, dir) != 0)
			granted = add_bound_dir(p, dir_fd, own + strlen(dir) + (strcmp(dir, "/") != 0), own, home, why);
		else
			granted = add_bound_dir(p, AT_FDCWD, own, own, home, why);
	}
	for (size_t i = 0; i < ARRAY_LEN(libs); i++) {
		cleanup_free char *lib = moat_xasprintf("%s/%s", dir, libs[i]);

		(void)add_bound_dir(p, dir_fd, libs[i], lib, home, why);
	}
	return granted;
}

/* A file inside an npm tree (/p/node_modules/pkg/dist/index.js, or a
 * node_modules/.bin link to it) imports its dependencies from anywhere in
 * that tree, hoisted or nested: the tree is the package's install dir.  Gives
 * the outermost node_modules directory (/p/node_modules), never the project
 * above it. */
static char *node_modules_root(const char *file)
{
	char real[PATH_MAX];
	char *hit;

	if (!realpath(file, real))
		return NULL;
	hit = strstr(real, "/node_modules/");
	if (!hit)
		return NULL;
	return moat_xstrndup(real, (size_t)(hit - real) + strlen("/node_modules"));
}

/* `dir` is `top` or above it, as named or through links: a grant of
 * `dir` would show all of `top`. */
static bool holds(const char *dir, const char *real_dir, const char *top)
{
	char real_top[PATH_MAX];

	if (!top)
		return false;
	if (path_within(top, dir))
		return true;
	return real_dir && realpath(top, real_top) && path_within(real_top, real_dir);
}

/* Granting a whole home (or "/") implicitly would surprise: the user must
 * say so with --read.  Compared through links as well as by name: a HOME
 * that is a link (/home/u -> /data/u) run from its target, or a --cwd that
 * is a link to HOME, grant the same directory. */
static bool too_broad(const char *dir, const char *home)
{
	char real[PATH_MAX];
	const char *real_dir = realpath(dir, real) ? real : NULL;

	if (strcmp(dir, "/") == 0 || (real_dir && strcmp(real_dir, "/") == 0))
		return true;
	return holds(dir, real_dir, home) || holds(dir, real_dir, other_home(home));
}

/* Programs that run a script named by their first argument: only for these
 * is that argument's directory the program's own code.  For any other
 * command the first argument is data (`cat ~/projects/other.txt`), and
 * granting its directory would widen the sandbox from the command line. */
static const char *const interpreters[] = {
	"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "node", "nodejs", "deno", "bun", "ruby", "perl",
	"php", "lua", "luajit", "tclsh", "wish", "Rscript", "julia",
};

/* Is `path`'s last component named as an interpreter is?  python*,
 * lua5.4, perl5.36, ... count. */
bool profile_interpreter_named(const char *path)
{
	const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (strncmp(b, "python", 6) == 0 || strncmp(b, "pypy", 4) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_LEN(interpreters); i++) {
		size_t n = strlen(interpreters[i]);
		/* ruby3.1, perl5.36, lua5.4: a version after the name */
		if (strncmp(b, interpreters[i], n) == 0 &&
		    (b[n] == '\0' || (b[n] >= '0' && b[n] <= '9') || (b[n] == '-' && b[n + 1] >= '0' && b[n + 1] <= '9')))
			return true;
	}
	return false;
}

/* Is the resolved executable (following links: /usr/bin/python3 ->
 * python3.11) an interpreter? */
bool profile_is_interpreter(const char *exe)
{
	char real[PATH_MAX];

	return profile_interpreter_named(exe) || (realpath(exe, real) && profile_interpreter_named(real));
}

bool profile_exe_named(const char *exe, const char *name)
{
	char real[PATH_MAX];
	const char *base = strrchr(exe, '/');

	if (strcmp(base ? base + 1 : exe, name) == 0)
		return true;
	if (!realpath(exe, real))
		return false;
	base = strrchr(real, '/');
	return strcmp(base ? base + 1 : real, name) == 0;
}

/* java's options that take the next word as their value: before `-jar`
 * the word after them is their value, never the jar. */
static const char *const java_value_opts[] = {
	"-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path", "--add-modules",
	"--limit-modules", "--add-reads", "--add-exports", "--add-opens", "--patch-module", "--source",
	"--enable-native-access",
};

/* java's options after which it runs no jar: a module's main class, or a
 * description of a module. */
static const char *const java_no_jar_opts[] = {"-m", "--module", "-d", "--describe-module"};

/* node's (and bun's) options that take the next word as their value when
 * not written `--name=value` (`node -r dotenv/config server.js`, `node
 * --env-file .env server.js`, `node --disable-warning DEP0040 x.js`): the
 * ones `node --help` lists with `=...`, some of which belong to a family of
 * switches below. */
static const char *const node_value_opts[] = {
	"-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file", "--env-file-if-exists",
	"-C", "--conditions", "--input-type", "--title", "--disable-warning", "--disable-proto",
	"--experimental-default-type", "--experimental-policy", "--experimental-sea-config", "--trace-event-categories",
	"--trace-event-file-pattern", "--trace-require-module", "--dns-result-order", "--unhandled-rejections",
	"--max-http-header-size", "--openssl-config", "--icu-data-dir", "--redirect-warnings", "--report-directory",
	"--report-filename", "--report-signal", "--diagnostic-dir", "--cpu-prof-dir", "--cpu-prof-name",
	"--cpu-prof-interval", "--heap-prof-dir", "--heap-prof-name", "--heap-prof-interval",
	"--heapsnapshot-near-heap-limit", "--heapsnapshot-signal", "--secure-heap", "--secure-heap-min",
	"--snapshot-blob", "--tls-cipher-list", "--tls-keylog", "--use-largepages", "--v8-pool-size",
	"--policy-integrity", "--build-snapshot-config",
};

/* node's switches outside the families of node_switch that MCP and dev
 * configs put before the script (`node --watch server.js`). */
static const char *const node_bool_opts[] = {
	"--watch", "--inspect", "--inspect-brk", "--inspect-wait", "--expose-gc", "--preserve-symlinks",
	"--preserve-symlinks-main", "--pending-deprecation", "--throw-deprecation", "--abort-on-uncaught-exception",
	"--frozen-intrinsics", "--jitless", "--use-openssl-ca", "--use-bundled-ca", "--zero-fill-buffers",
};

/* `deno run`'s options that take the next word as their value. */
static const char *const deno_value_opts[] = {
	"-c", "--config", "--import-map", "--lock", "--cert", "--location", "--seed", "-L", "--log-level",
};

static bool listed(const char *w, const char *const *list, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (strcmp(w, list[k]) == 0)
			return true;
	return false;
}

/* python's options that take the next word as their value (`python3 -X
 * utf8 server.py`, `-W ignore`); written together (`-Xutf8`) they take
 * none. */
static const char *const python_value_opts[] = {"-W", "-X"};

/* An option of python's that takes no value (`-u`, `-B`, `-uB`): what
 * MCP configs put before the script (`python3 -u server.py`). */
static bool python_flags(const char *w)
{
	return w[0] == '-' && w[1] != '\0' && w[strspn(w + 1, "bBdEiIOqsSuvRP") + 1] == '\0';
}

/* An option of node's (deno's, bun's) that cannot take the next word as its
 * value: `--name=value`, and the families of switches (`--no-warnings`,
 * `--experimental-vm-modules`, `--enable-source-maps`). */
static bool node_switch(const char *w)
{
	static const char *const families[] = {"--no-", "--experimental-", "--enable-", "--disable-", "--trace-"};

	if (strncmp(w, "--", 2) != 0 || w[2] == '\0')
		return false;
	if (strchr(w, '='))
		return true;
	for (size_t i = 0; i < ARRAY_LEN(families); i++)
		if (strncmp(w, families[i], strlen(families[i])) == 0)
			return true;
	return false;
}

/* An option of `deno run` that takes no separate value: -A, and the
 * permission and feature switches (`--allow-net`, `--allow-read=/x`,
 * `--unstable-kv`), or any `--name=value`. */
static bool deno_switch(const char *w)
{
	static const char *const families[] = {"--allow-", "--deny-", "--unstable", "--no-"};

	if (strcmp(w, "-A") == 0 || strcmp(w, "-q") == 0 || strcmp(w, "--quiet") == 0 ||
	    (strncmp(w, "--", 2) == 0 && strchr(w, '=')))
		return true;
	for (size_t i = 0; i < ARRAY_LEN(families); i++)
		if (strncmp(w, families[i], strlen(families[i])) == 0)
			return true;
	return false;
}

/* Is the program named `name`, by the name it was given (`base`) or its
 * real one (`rbase`)? */
static bool named(const char *base, const char *rbase, const char *name)
{
	return strcmp(base, name) == 0 || strcmp(rbase, name) == 0;
}

const char *profile_script_arg(const char *exe, char *const *argv)
{
	char real[PATH_MAX];
	const char *base, *rbase;
	bool python, node, deno, bun;
	size_t i = 1;

	if (!argv || !argv[0] || !argv[1])
		return NULL;
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	/* `sh -c ...`: options first, of a program named as none whose options
	 * are passed over -- no system call, at every start. */
	if (argv[1][0] == '-' && strncmp(base, "python", 6) != 0 && strncmp(base, "node", 4) != 0 &&
	    strcmp(base, "java") != 0 && strcmp(base, "deno") != 0 && strcmp(base, "bun") != 0)
		return NULL;
	/* One realpath for every name below. */
	rbase = realpath(exe, real) ? strrchr(real, '/') + 1 : base;
	if (named(base, rbase, "java")) {
		for (; argv[i] && argv[i][0] == '-'; i++) {
			if (strcmp(argv[i], "-jar") == 0)
				return argv[i + 1];
			if (listed(argv[i], java_no_jar_opts, ARRAY_LEN(java_no_jar_opts)))
				return NULL;
			if (listed(argv[i], java_value_opts, ARRAY_LEN(java_value_opts)) && !argv[++i])
				return NULL;
		}
		return NULL; /* a main class, not a file */
	}
	if (!profile_is_interpreter(exe))
		return NULL;
	python = strncmp(base, "python", 6) == 0 || strncmp(rbase, "python", 6) == 0;
	node = named(base, rbase, "node") || named(base, rbase, "nodejs");
	deno = named(base, rbase, "deno");
	bun = named(base, rbase, "bun");
	/* `deno run -A /x/s.ts`, `bun run /x/s.ts`: the script after the
	 * subcommand. */
	if ((deno || bun) && strcmp(argv[i], "run") == 0)
		i++;
	for (; argv[i] && argv[i][0] == '-'; i++) {
		const char *w = argv[i];

		/* A value-taking option before a switch family's: the word after
		 * it is its value. */
		if ((python && listed(w, python_value_opts, ARRAY_LEN(python_value_opts))) ||
		    ((node || bun) && listed(w, node_value_opts, ARRAY_LEN(node_value_opts))) ||
		    (deno && listed(w, deno_value_opts, ARRAY_LEN(deno_value_opts)))) {
			if (!argv[++i])
				return NULL;
			continue;
		}
		if ((python && (python_flags(w) || strncmp(w, "-W", 2) == 0 || strncmp(w, "-X", 2) == 0)) ||
		    ((node || bun) && (node_switch(w) || listed(w, node_bool_opts, ARRAY_LEN(node_bool_opts)))) ||
		    (deno && deno_switch(w)))
			continue;
		return NULL;
	}
	return argv[i];
}

/* Is the resolved program `real` rustup, as its proxies are (~/.cargo/bin/
 * cargo, rustc, ...: a link to rustup, or a hard link of it)? */
static bool is_rustup(const char *real)
{
	const char *base = strrchr(real, '/');
	cleanup_free char *sibling = NULL;
	const char *cargo_home = getenv("CARGO_HOME");
	struct stat a, b;

	if (!base)
		return false;
	if (strcmp(base + 1, "rustup") == 0)
		return true;
	/* A hard link, looked for only where rustup puts its proxies (cargo's
	 * bin/): no system call for any other command, at every start. */
	if (!strstr(real, "/.cargo/bin/") && !(cargo_home && cargo_home[0] == '/' && path_within(real, cargo_home)))
		return false;
	sibling = moat_xasprintf("%.*s/rustup", (int)(base - real), real);
	return stat(sibling, &b) == 0 && stat(real, &a) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A rustup proxy runs the toolchain kept in rustup's home, ~/.rustup
 * (RUSTUP_HOME does not pass by default, so inside it is that one): that
 * is the command's installation as much as ~/.cargo.  Without it rustup
 * fails with "could not create home directory", which names no grant. */
static void add_rustup_home(struct moat_policy *p, const struct profile_context *ctx, const char *real,
			    const char *why)
{
	cleanup_free char *rustup_home = NULL;
	struct stat st;

	if (!ctx->home || ctx->other_host || !is_rustup(real))
		return;
	rustup_home = moat_xasprintf("%s/.rustup", strcmp(ctx->home, "/") == 0 ? "" : ctx->home);
	if (stat(rustup_home, &st) == 0 && S_ISDIR(st.st_mode) && !too_broad(rustup_home, ctx->home))
		add(p, rustup_home, MOAT_ACCESS_READ, false, why);
}

/* A Python's user site-packages, where `pip install --user` puts what
 * `python3 -m pytest` imports: ~/.local/lib/python3.N, each there is (one
 * directory listing, for a python only), read-only.  Not ~/.local/lib
 * whole, nor a link there (it could lead anywhere). */
static void add_user_site(struct moat_policy *p, const struct profile_context *ctx, const char *exe,
			  const char *real)
{
	const char *base = strrchr(exe, '/'), *rbase = strrchr(real, '/');
	cleanup_free char *lib = NULL;
	cleanup_closedir DIR *d = NULL;
	struct dirent *e;

	if (!ctx->home || ctx->other_host || !base || !rbase ||
	    (strncmp(base + 1, "python", 6) != 0 && strncmp(rbase + 1, "python", 6) != 0))
		return;
	lib = moat_xasprintf("%s/.local/lib", strcmp(ctx->home, "/") == 0 ? "" : ctx->home);
	if (!(d = opendir(lib)))
		return;
	while ((e = readdir(d))) {
		cleanup_free char *site = NULL;
		struct stat st;

		if (strncmp(e->d_name, "python3", 7) != 0)
			continue;
		site = moat_xasprintf("%s/%s", lib, e->d_name);
		if (lstat(site, &st) == 0 && S_ISDIR(st.st_mode))
			add(p, site, MOAT_ACCESS_READ, true, "the user site-packages of the python the command runs");
	}
}

bool profile_grant_program(struct moat_policy *p, const struct profile_context *ctx, const char *exe,
			   const char *why, const char *rustup_why)
{
	cleanup_free char *dir = profile_install_dir(exe);
	char real[PATH_MAX];

	if (!dir || too_broad(dir, ctx->home) || !realpath(exe, real) ||
	    !profile_grant_install(p, -1, dir, real, ctx->home, NULL, why))
		return false;
	add_rustup_home(p, ctx, real, rustup_why);
	add_user_site(p, ctx, exe, real);
	return true;
}

static int add_command_dirs(struct moat_policy *p, const struct profile_context *ctx, struct moat_error *err)
{
	cleanup_free char *npm_tree = node_modules_root(ctx->exe);
	const char *arg;

	(void)err;
	(void)profile_grant_program(p, ctx, ctx->exe, "the command's install dir",
				    "the toolchains of the rustup proxy the command is");
	if (npm_tree && !too_broad(npm_tree, ctx->home))
		add(p, npm_tree, MOAT_ACCESS_READ, false, "the command's node_modules tree");
	/* An interpreter's script: `node /x/server.js`, `python3 /x/s.py`. */
	if ((arg = profile_script_arg(ctx->exe, ctx->argv))) {
		cleanup_free char *script = path_resolve_lexical(arg, ctx->cwd, ctx->home);
		struct stat st;

		if (script && stat(script, &st) == 0 && S_ISREG(st.st_mode)) {
			cleanup_free char *sdir = profile_install_dir(script);
			cleanup_free char *stree = node_modules_root(script);
			if (sdir && !too_broad(sdir, ctx->home))
				add(p, sdir, MOAT_ACCESS_READ, false, "the interpreter's script dir");
			if (stree && !too_broad(stree, ctx->home))
				add(p, stree, MOAT_ACCESS_READ, false, "the interpreter's script's node_modules tree");
		}
	}
	return 0;
}

/* Has an earlier variable of add_ca_bundles granted `path` already? */
static bool ca_bundle_granted(const struct moat_policy *p, size_t from, const char *path)
{
	for (size_t i = from; i < p->n_paths; i++)
		if (p->paths[i].access == MOAT_ACCESS_READ && strcmp(p->paths[i].path, path) == 0)
			return true;
	return false;
}

/* The CA bundles moat's environment names (env_ca_bundle_name): each
 * variable passes, and what it names is granted read-only, when that
 * exists -- a file, or a directory (SSL_CERT_DIR: each of its
 * ':'-separated directories) given by an absolute path -- and looks like
 * a bundle (policy/cabundle.h: the environment is the MCP server entry's
 * author's to set, and SSL_CERT_DIR=/ granted the whole host).  What does
 * not look like one passes ungranted, with a note (sources/runnotes.c), so
 * the tool says what it cannot read.  A bundle inside a denied path
 * (~/.ssh, ...) is not granted either (fsplan drops a profile's grant
 * there).  The variables mostly name one file: it is granted once (each
 * grant is a descriptor, a stat and a Landlock rule at every start).
 * Out of descriptors or memory while looking, an error naming the
 * variable: what the file is was not seen. */
static int add_ca_bundles(struct moat_policy *p, struct moat_error *err)
{
	size_t first = p->n_paths;

	const char *name;

	for (size_t i = 0; (name = env_ca_bundle_name(i)); i++) {
		const char *v = getenv(name);
		cleanup_free char *copy = v && *v ? moat_xstrdup(v) : NULL;
		char *save = NULL, *part;
		size_t present = 0, parts = 0, like = 0;
		int looks;
		struct ca_bundle_seen seen[CA_BUNDLE_MAX_PARTS];
		struct stat st;

		for (part = copy ? strtok_r(copy, ":", &save) : NULL; part; part = strtok_r(NULL, ":", &save)) {
			if (parts++ >= CA_BUNDLE_MAX_PARTS || part[0] != '/' || stat(part, &st) != 0 ||
			    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
				break;
			present++;
			/* Most hosts name one bundle in many variables: looked at
			 * once.  The grant is bound to the object looked at. */
			if (ca_bundle_granted(p, first, part)) {
				like++;
				continue;
			}
			looks = S_ISREG(st.st_mode) ? ca_bundle_file_ok(part, &seen[parts - 1], err)
						    : ca_bundle_dir_ok(part, &seen[parts - 1], err);
			if (looks < 0)
				return moat_error_wrap(err, "%s in moat's environment", name);
			like += (size_t)looks;
		}
		if (!parts || present != parts || (parts > 1 && strcmp(name, "SSL_CERT_DIR") != 0))
			continue;
		if (like != parts) {
			struct moat_origin no = {.source = PROFILE_CA_NOT_GRANTED};
			policy_add_env(p, name, NULL, no);
			continue;
		}
		struct moat_origin o = {.source = "a CA bundle named in moat's environment"};
		policy_add_env(p, name, NULL, o);
		memcpy(copy, v, strlen(v) + 1);
		parts = 0;
		for (part = strtok_r(copy, ":", &save); part; part = strtok_r(NULL, ":", &save), parts++) {
			if (ca_bundle_granted(p, first, part))
				continue;
			add(p, part, MOAT_ACCESS_READ, true, o.source);
			p->paths[p->n_paths - 1].bound = true;
			p->paths[p->n_paths - 1].bound_dev = seen[parts].dev;
			p->paths[p->n_paths - 1].bound_ino = seen[parts].ino;
			p->paths[p->n_paths - 1].bound_dir = seen[parts].dir;
		}
	}
	return 0;
}

/* Nix's store and profiles (nix_read), and the per-user profile,
 * ~/.nix-profile: a link (through
 * ~/.local/state/nix/profiles or /nix/var/nix/profiles) into the store,
 * whose bin/ is on the user's PATH.  The link chain is shown, and what it
 * leads to is in the store (granted as a system path); anything else it
 * could lead to is not granted.  One lstat at every start. */
static void add_nix(struct moat_policy *p, const struct profile_context *ctx)
{
	cleanup_free char *link = NULL;
	char real[PATH_MAX];
	struct stat st;

	if (!ctx->other_host && lstat("/nix", &st) != 0)
		return;
	for (size_t i = 0; i < ARRAY_LEN(nix_read); i++)
		add(p, nix_read[i], MOAT_ACCESS_READ, true, "system");
	if (!ctx->home || ctx->other_host || strcmp(ctx->home, "/") == 0)
		return;
	link = moat_xasprintf("%s/.nix-profile", ctx->home);
	if (lstat(link, &st) != 0 || !S_ISLNK(st.st_mode) || !realpath(link, real) || !path_within(real, "/nix/store"))
		return;
	add(p, link, MOAT_ACCESS_READ, true, "Nix: the user's profile (links into /nix/store)");
	/* Checked again on the object the plan resolves: a link swapped
	 * between this realpath and that walk (by a process that may write
	 * HOME) leads the grant nowhere else. */
	p->paths[p->n_paths - 1].within = "/nix/store";
}

static int add_strict(struct moat_policy *p, const struct profile_context *ctx, struct moat_error *err)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(system_read); i++)
		add(p, system_read[i], MOAT_ACCESS_READ, true, "system");
	for (i = 0; i < ARRAY_LEN(system_write); i++)
		add(p, system_write[i], MOAT_ACCESS_WRITE, true, "system");
	add_nix(p, ctx);
	profile_add_secrets(p, ctx->home, !ctx->other_host);
	p->private_tmp = true;
	p->secrets_masked = true;
	p->net = MOAT_NET_NONE;
	env_add_safe_set(p);
	return add_ca_bundles(p, err);
}

/* The first line of a `.git` file, "gitdir: PATH": the git directory of a
 * linked work tree (git worktree add) or a submodule, made absolute
 * against `dir`.  NULL when it is not one. */
static char *read_gitdir(const char *dir)
{
	cleanup_free char *file = moat_xasprintf("%s/.git", dir);
	cleanup_fclose FILE *f = file_open_regular(file, FILE_SMALL_MAX);
	char line[PATH_MAX + 16];

	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "gitdir:", 7) != 0)
		return NULL;
	line[strcspn(line, "\r\n")] = '\0';
	return path_resolve_lexical(line + 7 + strspn(line + 7, " \t"), dir, NULL);
}

/* Does `text`, a path git wrote into a file of a git directory (relative
 * to `base`), lead to the same object as `want`? */
static bool leads_to(const char *text, const char *base, const char *want)
{
	cleanup_free char *path = path_resolve_lexical(text, base, NULL);
	struct stat a, b;

	return path && stat(path, &a) == 0 && stat(want, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A repository's config, as resolve/gitcode.c bounds one. */
#define GIT_CONFIG_MAX (1 << 20)

struct worktree_key {
	char *value; /* the last core.worktree, as git takes the last */
};

static void on_worktree_key(void *ctx, const char *sec, const char *sub, const char *key, const char *value)
{
	struct worktree_key *w = ctx;

	if (!sub && strcmp(sec, "core") == 0 && strcmp(key, "worktree") == 0 && value) {
		free(w->value);
		w->value = moat_xstrdup(value);
	}
}

/* The git directory `real` names the work tree `wt` back, as git writes
 * it when it makes the pair: a linked work tree's `gitdir` file (in
 * COMMON/worktrees/ID) names WT/.git; a submodule's core.worktree (in
 * SUPER/.git/modules/NAME/config) names WT.  Both lie in the other
 * repository, which a cloned one cannot write: its own `.git` file alone
 * could name any git directory of the user's (a dotfiles ~/.git, another
 * project's), and it would be granted. */
static bool names_back(const char *real, const char *common, const char *wt)
{
	cleanup_free char *dotgit = moat_xasprintf("%s/.git", wt);

	if (common) {
		cleanup_free char *admin = moat_xasprintf("%s/worktrees", common), *file = NULL;
		cleanup_fclose FILE *f = NULL;
		char line[PATH_MAX];
		const char *slash = strrchr(real, '/');

		if (!slash || (size_t)(slash - real) != strlen(admin) || strncmp(real, admin, strlen(admin)) != 0)
			return false;
		file = moat_xasprintf("%s/gitdir", real);
		f = file_open_regular(file, FILE_SMALL_MAX);
		if (!f || !fgets(line, sizeof(line), f))
			return false;
		line[strcspn(line, "\r\n")] = '\0';
		return leads_to(line, real, dotgit);
	}
	cleanup_free char *config = moat_xasprintf("%s/config", real), *text = NULL;
	struct worktree_key w = {0};
	struct moat_error ignored = {0};
	struct stat st;
	char bad[256];
	size_t len;
	bool back;

	if (file_read_at(AT_FDCWD, config, config, GIT_CONFIG_MAX, true, &text, &len, &st, &ignored) < 0 ||
	    gitcfg_parse(text, len, config, on_worktree_key, &w, bad, sizeof(bad)) < 0 || !w.value) {
		free(w.value);
		return false;
	}
	back = leads_to(w.value, real, wt);
	free(w.value);
	return back;
}

/* The directory git needs besides the work tree `wt` of a `.git` file: a
 * linked work tree's common directory (its gitdir's `commondir`, "../.."
 * for MAIN/.git/worktrees/NAME: MAIN/.git), else the gitdir itself (a
 * submodule's SUPER/.git/modules/NAME).  Only a git directory is taken --
 * it has a HEAD and is a .git directory (or a bare NAME.git), or lies in
 * one's modules/ -- and only one that names `wt` back (names_back), so a
 * planted `.git` file cannot name any directory.  NULL when it is not one;
 * *unlinked then holds a git directory that does not name `wt` back. */
static char *git_common_dir(const char *gitdir, const char *wt, char **unlinked)
{
	cleanup_free char *cfile = moat_xasprintf("%s/commondir", gitdir);
	cleanup_fclose FILE *f = file_open_regular(cfile, FILE_SMALL_MAX);
	char line[PATH_MAX], real[PATH_MAX], gitdir_real[PATH_MAX];
	cleanup_free char *dir = NULL, *head = NULL;
	struct stat st;
	size_t n;

	if (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		dir = path_resolve_lexical(line, gitdir, NULL);
	} else {
		dir = moat_xstrdup(gitdir);
	}
	if (!dir || !realpath(dir, real) || !realpath(gitdir, gitdir_real))
		return NULL;
	head = moat_xasprintf("%s/HEAD", real);
	if (stat(head, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	n = strlen(real);
	if (!(n >= 4 && strcmp(real + n - 4, ".git") == 0) && !strstr(real, "/.git/modules/"))
		return NULL;
	if (!names_back(gitdir_real, f ? real : NULL, wt)) {
		*unlinked = moat_xstrdup(real);
		return NULL;
	}
	return moat_xstrdup(real);
}

/* The git work tree around `cwd`: the nearest directory upwards holding a
 * `.git` entry, as git looks, and like git not across a file system
 * boundary.  *gitdir: what a `.git` file names that lies outside it
 * (NULL when none); *unlinked: a git directory outside it that the `.git`
 * file names but that does not name the work tree back (not granted).
 * NULL when cwd is in no work tree. */
static char *git_work_tree(const char *cwd, char **gitdir, char **unlinked)
{
	cleanup_free char *dir = moat_xstrdup(cwd);
	struct stat st, here;

	*gitdir = NULL;
	*unlinked = NULL;
	if (stat(cwd, &here) != 0)
		return NULL;
	for (;;) {
		cleanup_free char *dotgit = moat_xasprintf("%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
		char *slash;

		if (stat(dotgit, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			if (S_ISREG(st.st_mode)) {
				cleanup_free char *gd = read_gitdir(dir);
				char *common = gd ? git_common_dir(gd, dir, unlinked) : NULL;

				if (common && !path_within(common, dir))
					*gitdir = common;
				else
					free(common);
				if (*unlinked && path_within(*unlinked, dir)) {
					free(*unlinked);
					*unlinked = NULL;
				}
			}
			return steal_ptr(&dir);
		}
		if (strcmp(dir, "/") == 0)
			return NULL;
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) != 0 || st.st_dev != here.st_dev)
			return NULL;
	}
}

/* exec's current directory, and when it lies in a git work tree (`git
 * status` in repo/src) the work tree's root and the git directory a linked
 * work tree or submodule keeps elsewhere, read-only: git needs them to
 * find its repository.  Never HOME, a directory containing it, or "/"
 * (a dotfiles repository in HOME stays ungranted). */
static void add_exec_dirs(struct moat_policy *p, const struct profile_context *ctx)
{
	cleanup_free char *gitdir = NULL, *unlinked = NULL;
	cleanup_free char *root = git_work_tree(ctx->cwd, &gitdir, &unlinked);

	add(p, ctx->cwd, MOAT_ACCESS_READ, false, "profile exec: current directory");
	if (!root || too_broad(root, ctx->home))
		return;
	free(p->git_work_tree);
	p->git_work_tree = moat_xstrdup(root);
	if (strcmp(root, ctx->cwd) != 0)
		add(p, root, MOAT_ACCESS_READ, false, "profile exec: the git work tree the current directory is in");
	if (gitdir && !too_broad(gitdir, ctx->home)) {
		add(p, gitdir, MOAT_ACCESS_READ, false,
		    "profile exec: the git directory of that work tree (its .git file)");
		free(p->git_dir_outside);
		p->git_dir_outside = moat_xstrdup(gitdir);
	}
	if (unlinked) {
		free(p->git_dir_unlinked);
		p->git_dir_unlinked = steal_ptr(&unlinked);
	}
}

int profile_apply(struct moat_policy *p, const char *name, const struct profile_context *ctx, struct moat_error *err)
{
	size_t i;

	if (profile_is_builtin(name)) {
		if (add_strict(p, ctx, err) < 0 || add_command_dirs(p, ctx, err) < 0)
			return -1;
	} else {
		moat_error_set(err, MOAT_E_USAGE, 0, "unknown profile '%s'", name);
		return moat_error_hint(err, "known profiles: strict, exec, mcp, network (see `moat profiles`)");
	}

	if (strcmp(name, "exec") == 0) {
		if (too_broad(ctx->cwd, ctx->home)) {
			char real[PATH_MAX];
			bool linked = realpath(ctx->cwd, real) && strcmp(real, ctx->cwd) != 0;

			moat_error_set(err, MOAT_E_USAGE, 0, "profile exec grants the current directory, and %s%s%s%s is %s",
				       ctx->cwd, linked ? " (" : "", linked ? real : "", linked ? " through its links)" : "",
				       strcmp(linked ? real : ctx->cwd, "/") == 0 ? "the root" : "your home or above it");
			return moat_error_hint(err, "run from the project directory, pass --cwd DIR, or name "
						    "another profile (--profile strict)");
		}
		add_exec_dirs(p, ctx);
	}
	if ((strcmp(name, "mcp") == 0 || strcmp(name, "network") == 0) && ctx->home) {
		for (i = 0; i < ARRAY_LEN(mcp_home_read); i++) {
			cleanup_free char *abs = moat_xasprintf("%s/%s", ctx->home, mcp_home_read[i]);
			add(p, abs, MOAT_ACCESS_READ, true, "profile mcp: runtime cache");
		}
	}
	if (strcmp(name, "network") == 0)
		p->net = MOAT_NET_ALL;

	free(p->profile);
	p->profile = moat_xstrdup(name);
	p->strict_base = strcmp(name, "strict") == 0;
	return 0;
}

const char *const *profile_builtin_names(void)
{
	return profile_names;
}

bool profile_is_builtin(const char *name)
{
	size_t i;

	for (i = 0; profile_names[i]; i++)
		if (strcmp(profile_names[i], name) == 0)
			return true;
	return false;
}

/* One line per run of entries of one tool: "  TOOL: PATH, PATH". */
static void list_secrets(FILE *out, const char *prefix, const struct secret_path *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(list[i].tool, list[i - 1].tool) == 0)
			fprintf(out, ", %s%s", prefix, list[i].path);
		else
			fprintf(out, "\n  %s: %s%s", list[i].tool, prefix, list[i].path);
	}
}

void profile_list(FILE *out)
{
	size_t i;

	for (i = 0; profile_names[i]; i++)
		fprintf(out, "%-8s %s%s\n", profile_names[i], profile_help[i],
			strcmp(profile_names[i], MOAT_DEFAULT_PROFILE) == 0 ? " (default)" : "");
	fprintf(out, "\nstrict reads:");
	for (i = 0; i < ARRAY_LEN(system_read); i++)
		fprintf(out, " %s", system_read[i]);
	fprintf(out, "\nstrict writes:");
	for (i = 0; i < ARRAY_LEN(system_write); i++)
		fprintf(out, " %s", system_write[i]);
	fprintf(out, " and a private /tmp\ndenied in every profile, even inside a granted directory (the built-in "
		     "secrets, by tool; a trailing / is a directory):");
	list_secrets(out, "", system_secrets, ARRAY_LEN(system_secrets));
	list_secrets(out, "~/", home_secrets, ARRAY_LEN(home_secrets));
	fprintf(out, "\nmcp also reads:");
	for (i = 0; i < ARRAY_LEN(mcp_home_read); i++)
		fprintf(out, " ~/%s", mcp_home_read[i]);
	{
		size_t n;
		const char *const *names = policy_protected_names(&n);
		fprintf(out, "\nread-only inside every write grant (--unprotect lifts one):");
		for (i = 0; i < n; i++)
			fprintf(out, " %s", names[i]);
		names = policy_protected_home_names(&n);
		fprintf(out, "\nand these, wherever a write grant holds them (HOME granted, or a directory of HOME, or one "
			     "that holds HOME):");
		for (i = 0; i < n; i++)
			fprintf(out, " ~/%s", names[i]);
	}
	fprintf(out, "\n");
}
