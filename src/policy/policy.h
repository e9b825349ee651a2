/* The one policy model.  Every source (command-line flags, TOML and JSON
 * configs, built-in profiles) fills this plain-data struct; nothing after
 * the sources knows where a rule came from, except through `origin`, which
 * is kept only for error messages.  A JSON dump of it (policy_to_json) is
 * the oracle the tests compare against. */
#ifndef MOAT_POLICY_POLICY_H
#define MOAT_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

enum moat_mode {
	MOAT_MODE_REQUIRE = 0, /* default: refuse to run with less than asked */
	MOAT_MODE_PREFER,      /* run with what the host has, say what is missing */
	MOAT_MODE_OFF,         /* run unsandboxed, and say so */
};

enum moat_net {
	MOAT_NET_NONE = 0, /* default */
	MOAT_NET_LOOPBACK,
	MOAT_NET_ALL,
	/* Only the destinations of the allowlist (--allow-net, network.allow):
	 * enforced by the native backend's fence (kernel/netfence.h); every
	 * other backend, and native without the fence, keeps the network
	 * closed in this mode, as under none, and reports net.allow missing.
	 * Last, so that the others keep their values (the prebuilt seccomp
	 * table). */
	MOAT_NET_ALLOW,
};

enum moat_access {
	MOAT_ACCESS_READ,  /* read and execute, like a read-only bind mount */
	MOAT_ACCESS_WRITE, /* read, write and execute */
	MOAT_ACCESS_DENY,  /* neither, even inside a granted parent */
};

/* A terminal for the command (launch/term.h): a pty of its own when moat's
 * stdin and stdout are a terminal whose foreground job moat is (auto),
 * always (--tty), or never (--no-tty). */
enum moat_tty {
	MOAT_TTY_AUTO = 0,
	MOAT_TTY_ON,
	MOAT_TTY_OFF,
};

/* Where a rule came from: "command line", a profile, or file:line:col. */
struct moat_origin {
	const char *source; /* static string or owned by the policy's strings */
	int line, col;      /* 0 when not from a file */
};

/* The source of what the command line's flags add. */
#define MOAT_ORIGIN_COMMAND_LINE "command line"

/* Did a flag of moat's command line give it (not a file, a profile, the
 * environment)? */
bool moat_origin_is_command_line(const struct moat_origin *o);

struct moat_path_rule {
	char *path; /* absolute and lexically normalised; symlinks not resolved */
	enum moat_access access;
	bool optional; /* from a profile: silently absent paths are fine */
	bool from_profile; /* added by a built-in profile, not named by the user:
			    * a user's deny overrides it instead of conflicting */
	const char *within; /* a profile's grant through links that must end
			     * below this directory, as its descriptor resolves
			     * (static); dropped otherwise.  NULL: anywhere */
	bool bound; /* a grant of the object a check looked at (a CA
		     * bundle, an interpreter's installation): dropped when
		     * the path resolves to another when planned (a swap
		     * between the look and the plan) */
	bool bound_dir; /* that object was a directory (for the note) */
	dev_t bound_dev;
	ino_t bound_ino;
	struct moat_origin origin;
};

/* One destination of the network allowlist (docs/policy.md, "Network
 * allowlist"), parsed by net_dest_parse (policy/netdest.h). */
enum moat_net_dest_kind {
	MOAT_NET_DEST_NAME,     /* host, host:port, localhost:PORT */
	MOAT_NET_DEST_WILDCARD, /* *.domain: subdomains only, not the domain */
	MOAT_NET_DEST_ADDR,     /* an IPv4 or IPv6 address or CIDR */
};

#define MOAT_NET_DEST_MAX_PORTS 2

struct moat_net_dest {
	char *text; /* as written */
	enum moat_net_dest_kind kind;
	char *name;	    /* NAME: the host, WILDCARD: the domain after "*."
			     * (lowercased, no trailing dot); ADDR: NULL */
	int family;	    /* ADDR: AF_INET or AF_INET6; else 0 */
	unsigned char addr[16]; /* ADDR: network byte order, host bits zero */
	unsigned prefix;	/* ADDR: 0..32 or 0..128 (32/128: one address) */
	unsigned short ports[MOAT_NET_DEST_MAX_PORTS]; /* host byte order */
	size_t n_ports;				       /* 0 when any_port */
	bool any_port;				       /* ":*" */
	bool host_loopback;	   /* reaches the host's own loopback: localhost, or a range that
				    * overlaps 127/8 or ::1 (0.0.0.0/0 too) */
	bool loopback_only;	   /* all of it is the host's loopback: localhost, inside 127/8, ::1 */
	bool names_private_range; /* the entry's range overlaps a private, loopback,
				   * link-local or metadata range (net_addr_private_range) */
	struct moat_origin origin;
	char *from; /* an entry of a destination set: the set and what named the
		     * entry, "@npm (/home/u/.npmrc:3)"; NULL when written as is */
	char *project; /* an entry a file of the command's project named (its
			* .npmrc, which a cloned repository chooses), not the
			* user: "FILE:LINE: KEY=URL" (the URL without its user
			* part); NULL otherwise.  One in a private range needs
			* an entry of the user's for it (policy_validate). */
	bool proxy_only; /* "proxy:DEST": reachable only through the proxy mode,
			  * by the name asked for (docs/policy.md) */
};

/* --resolve NAME=IP: NAME resolves to this address, and only to the pins
 * given for it; no DNS answer is taken for it. */
struct moat_net_pin {
	char *name; /* lowercased, no trailing dot */
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	struct moat_origin origin;
};

struct moat_env_rule {
	char *name;
	char *value; /* NULL: pass the value from moat's own environment */
	struct moat_origin origin;
};

/* The user's global git configuration, sanitized (sources/gitconfig.h):
 * what git reads inside, through GIT_CONFIG_GLOBAL. */
struct moat_git_config {
	char *text; /* git's syntax, written anew */
	size_t len, cap;
	char **files; /* read, in git's order */
	size_t n_files, cap_files;
	/* The keys (section[.subsection].name, credentials in a subsection
	 * masked), for the dry run: never a value. */
	char **kept;
	size_t n_kept, cap_kept;
	char **dropped;
	size_t n_dropped, cap_dropped;
	char *header; /* the section header written last */
};

/* Free what g holds (and zero it) / and g itself. */
/* A package manager's cache moat gave the command (sources/pkgcache.h):
 * the variable it set and the directory of moat's it names, granted
 * writable (both also in the policy's `env` and `paths`). */
struct moat_pkg_cache {
	char *tool; /* npm, pip, uv, yarn, yarn-berry, pnpm, go-mod, go-build, cargo */
	char *var;
	char *path;
};

void git_config_clear(struct moat_git_config *g);
void git_config_free(struct moat_git_config *g);

#define MOAT_LIMIT_UNSET (-1)

/* Declared limits; MOAT_LIMIT_UNSET when not set.  Those marked "tree"
 * bound the whole process tree (a cgroup; docs/limits.md), the others each
 * process. */
struct moat_limits {
	int64_t memory_bytes;        /* tree: memory incl. tmpfs and memfd, no swap */
	int64_t pids;                /* tree: processes and threads */
	int64_t cpu_seconds;         /* tree: CPU time of all processes together */
	int64_t address_space_bytes; /* per process: RLIMIT_AS */
	int64_t files;               /* per process: RLIMIT_NOFILE */
	int64_t tmp_bytes;           /* size of the private /tmp and of /dev/shm, each */
	double timeout_s;            /* wall clock; 0 = none */
};

/* The size of the private /tmp and /dev/shm when no --tmp-size is given. */
#define MOAT_TMP_SIZE_DEFAULT (INT64_C(1) << 30)

/* Every limit unset. */
void limits_init(struct moat_limits *l);
/* The limits set in `over` replace those of `base`. */
void limits_overlay(struct moat_limits *base, const struct moat_limits *over);

struct moat_policy {
	char *profile; /* name of the built-in or user profile applied */
	bool strict_base; /* the built-in profile under it is strict: nothing writable the user did not name */
	enum moat_mode mode;
	char *backend; /* "auto", "native", ... */
	enum moat_net net;
	bool private_tmp;    /* fresh /tmp and /dev/shm, discarded afterwards */
	bool go_cache_in_tmp; /* GOCACHE is moat's, in the private /tmp
			       * (sources/gotool.h): the plan moves it to the
			       * per-run tmp, or drops it where /tmp is the
			       * host's */
	bool secrets_masked; /* the built-in credential list is denied */

	char **argv; /* NULL-terminated; argv[0] as the user wrote it */
	size_t argc;
	char *exe; /* argv[0] resolved once via PATH, absolute; the path executed */
	char *cwd; /* absolute; the child starts here */

	struct moat_path_rule *paths;
	size_t n_paths, cap_paths;

	struct moat_env_rule *env;
	size_t n_env, cap_env;

	int *keep_fds;
	size_t n_keep_fds, cap_keep_fds;

	/* Protected entries of write grants (.git/hooks, .bashrc, ...: files
	 * the host runs code from later) stay read-only unless a path here
	 * names them or a directory above them (--unprotect; absolute,
	 * lexically normalised; `access` unused). */
	struct moat_path_rule *unprotect;
	size_t n_unprotect, cap_unprotect;

	/* socket(AF_UNIX) allowed (--unix-sockets): the command may make its
	 * own unix sockets, and could then reach a host socket inside a grant,
	 * so ipc.unix is not asked for.  Off: only connected socketpair(2). */
	bool unix_sockets;

	/* The network allowlist and the pinned names (net MOAT_NET_ALLOW). */
	struct moat_net_dest *net_allow;
	size_t n_net_allow, cap_net_allow;
	struct moat_net_pin *net_pins;
	size_t n_net_pins, cap_net_pins;

	enum moat_tty tty;
	/* The terminal the command gets, when it gets one: the grants of its
	 * pty and of /dev/tty, which the plan resolves after `paths`
	 * (resolve/fsplan.c).  Not a source's: the launcher makes the pty
	 * before planning and names it here (launch/term.h).  Apart from
	 * `paths`, and not in the policy's digest, which must equal the dry
	 * run's (a dry run makes no pty). */
	struct moat_path_rule terminal[2];
	size_t n_terminal;

	/* The git work tree the current directory lies in, when the exec
	 * profile granted it (policy/profiles.c); NULL otherwise. */
	char *git_work_tree;
	/* The git directory that work tree keeps outside it (a linked work
	 * tree's common directory, a submodule's), granted read-only with it;
	 * NULL when none. */
	char *git_dir_outside;
	/* A git directory outside it that its `.git` file names but that does
	 * not name the work tree back (no linked work tree's `gitdir`, no
	 * submodule's core.worktree): not granted, since a cloned
	 * repository's `.git` file could name any of the user's; a note says
	 * how to grant it (sources/runnotes.c).  NULL when none. */
	char *git_dir_unlinked;
	/* Its user's git configuration, sanitized, when git gets it there
	 * (sources/gitconfig.h: the grant of the file and GIT_CONFIG_GLOBAL
	 * are in `paths` and `env`); NULL otherwise. */
	struct moat_git_config *git_config;
	/* The package managers' caches of moat's, when the command can reach
	 * a network (sources/pkgcache.h). */
	struct moat_pkg_cache *pkg_caches;
	size_t n_pkg_caches, cap_pkg_caches;

	/* Property bits (plan/properties.h) required on top of the profile. */
	uint32_t require;

	struct moat_limits limits;
};

void policy_init(struct moat_policy *p);
void policy_free(struct moat_policy *p);

/* Adders copy their string arguments. */
void policy_add_path(struct moat_policy *p, const char *abs_path, enum moat_access access, bool optional,
		     struct moat_origin origin);
/* Bind the grant `r` to the object `st` describes, the one a check
 * judged (moat_path_rule.bound). */
struct stat;
void policy_path_bind(struct moat_path_rule *r, const struct stat *st);
void policy_add_unprotect(struct moat_policy *p, const char *abs_path, struct moat_origin origin);
void policy_add_env(struct moat_policy *p, const char *name, const char *value, struct moat_origin origin);
void policy_add_keep_fd(struct moat_policy *p, int fd);
void policy_add_pkg_cache(struct moat_policy *p, const char *tool, const char *var, const char *path);
/* Take over *d (its strings) / *pin; they are zeroed. */
void policy_add_net_dest(struct moat_policy *p, struct moat_net_dest *d);
void policy_add_net_pin(struct moat_policy *p, struct moat_net_pin *pin);
void policy_set_argv(struct moat_policy *p, char *const *argv, size_t argc);
/* The command gets the pty at `pty_path` as its terminal (see `terminal`). */
void policy_set_terminal(struct moat_policy *p, const char *pty_path);

/* The last rule for `name`, or NULL. */
const struct moat_env_rule *policy_find_env(const struct moat_policy *p, const char *name);

/* Checks that do not touch the host: rules that contradict each other,
 * hooks passed through, empty commands.  Host checks are the plan's. */
int policy_validate(const struct moat_policy *p, struct moat_error *err);

/* The allowlist's entries that a project's file named (`project`) in a
 * private range -- the host's loopback, link-local with the cloud's
 * metadata endpoint, a private network, CGNAT, the unspecified address --
 * that no entry of the user's allows (net_dest_user_allows): the first, as
 * -1 and *err naming the file and line, the setting, why, and how the user
 * allows it.  A repository the user cloned does not choose what on his
 * host or network the sandbox reaches.  Nothing under mode off (nothing is
 * enforced).  policy_validate checks it. */
int policy_check_project_net(const struct moat_policy *p, struct moat_error *err);

/* "file:line:col", or the source's name ("command line", "system"). */
const char *moat_origin_text(const struct moat_origin *o, char *buf, size_t len);

const char *moat_mode_name(enum moat_mode m);
int moat_mode_parse(const char *s, enum moat_mode *out);
const char *moat_net_name(enum moat_net n);
int moat_net_parse(const char *s, enum moat_net *out);
const char *moat_access_name(enum moat_access a);
const char *moat_tty_name(enum moat_tty t);

#endif
