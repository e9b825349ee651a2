/* The backends: compilers from the one policy to a sandbox, each with a
 * declaration of which properties it enforces on this host.  Every one is
 * an entry of the table in backends/registry.c, compiled through the same
 * compile() in the parent, during planning.  What a compile gives is one of
 * three things (struct backend_plan):
 *
 *   - a tool to execute (bwrap, firejail, an OCI runtime, nsjail, nono,
 *     sandbox-exec): tool_path and argv, a generated profile or an OCI
 *     bundle in work_dir;
 *   - moat's own in-child program (the native backend): `in_child`, what
 *     launch/child.c applies itself between clone and execve (namespaces,
 *     the mount view, Landlock, seccomp; kernel/ holds those mechanisms);
 *   - nothing (none): the command runs bare, the status is off.
 *
 * compile() writes every verdict in props[] (enforced with the mechanism,
 * or missing with the reason and a hint).  It never claims a property the
 * sandbox does not enforce; a property moat itself keeps owning (the
 * environment, fds, session, rlimits applied before the tool's execve) is
 * claimed only when the tool is known to pass it through unchanged.
 *
 * The launcher (launch/child.c) gives the command or the tool the same
 * preamble: setsid, chdir, no_new_privs (not for setuid tools), only 0-2,
 * the declared fds and pass_fds kept open, the rlimits (when
 * apply_rlimits), then execve.  moat supervises the tool's process as it
 * would the command: signals are forwarded to it (or, with
 * signals_via_lifeline, to moat __init inside), --timeout ends its tree,
 * its exit status is the command's (each tool propagates the command's
 * status).
 *
 * See docs/backends.md for the tools, their trust models and the ranking
 * that `--backend auto` uses. */
#ifndef MOAT_BACKENDS_BACKEND_H
#define MOAT_BACKENDS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "resolve/fsplan.h"
#include "resolve/limits.h"
#include "host/host.h"
#include "policy/properties.h"
#include "policy/policy.h"
#include "util/err.h"

struct moat_verdict;
struct native_plan;

#define BACKEND_MAX_RLIMITS 8

/* The tool's own PATH: the system's directories only (what Debian's
 * login.defs gives root), not the caller's, so it finds the helpers it runs
 * (firejail's /usr/lib/firejail tools, runc's) where the system put them. */
#define BACKEND_TOOL_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* One resource limit of the policy, with its name in OCI's terms. */
struct backend_rlimit {
	int resource;          /* RLIMIT_* */
	unsigned long long value; /* the soft limit */
	unsigned long long hard;
	const char *oci_name;  /* "RLIMIT_CORE", ... */
};

/* A directory the tool makes in a shared place (backend_plan's
 * shared_dirs). */
struct backend_shared_dir {
	char *path;
	int lock_fd; /* a shared flock(2) on it for the run (resolve/sharedlock.h) */
	dev_t dev;
	ino_t ino;
	bool ours; /* made by this run, or held by another moat when found */
};

/* A bind the tool makes by the source's name, checked inside by moat
 * __init (launch/initview.h): the destination and the planned object. */
struct backend_bound {
	char *dest;
	int obj; /* index in the fs_plan */
};

/* What a compiled backend runs.  Owned strings; backend_plan_free releases
 * them, closes pass_fds and removes what the run made on the host (work_dir
 * when owns_work_dir, the in-child program's private tmp). */
struct backend_plan {
	/* The native backend's program (backends/native.h), applied by
	 * launch/child.c itself; NULL for a tool and for none. */
	struct native_plan *in_child;
	char *tool_path;       /* absolute path executed; NULL: no tool (native,
				* none); the bare name when the tool is not
				* installed (argv is NULL then) */
	char **argv;           /* NULL-terminated; argv[0] is the tool's name */
	size_t argc, cap_argv; /* for backend_argv_add() */
	int *pass_fds;      /* moat's own fds the tool inherits (bwrap --seccomp
			     * FD, --ro-bind-fd FD), kept sorted ascending */
	size_t n_pass_fds, cap_pass_fds;
	/* An fd the child moves to a fixed number before executing the tool:
	 * OCI runtimes pass only fds 3..N, contiguous (--preserve-fds), so the
	 * Landlock ruleset goes right above the declared ones.  -1: none.  The
	 * parent's fd (from) is closed with the plan. */
	int fd_remap_from, fd_remap_to;
	/* The child fills the gaps below the highest kept fd with /dev/null, so
	 * that an OCI runtime's 3..N are all open (moat __init --keep-fds
	 * closes the fillers again inside). */
	bool fill_fd_gaps;
	/* moat's lifeline (a pipe whose only writer is moat) moved to this fd
	 * for the tool to pass on: moat __init --lifeline ends the sandbox when
	 * it hangs up, since a tool killed with moat does not take an OCI
	 * container with it.  -1: not passed. */
	int lifeline_to;
	/* With lifeline_to: moat writes each forwarded signal's number to the
	 * lifeline as one byte, and __init, the sandbox's init, passes it on
	 * (SIGTSTP and SIGCONT to the whole tree).  The tool gets no signal of
	 * moat's then: bwrap would die of it and leave the sandbox behind, an
	 * OCI runtime would pass it a second time. */
	bool signals_via_lifeline;
	/* The tool must not die with moat (no PR_SET_PDEATHSIG before its
	 * execve): bwrap killed between its clone and its first write leaves
	 * the sandbox's first process blocked forever on an eventfd (bwrap
	 * 0.8.0, child_wait_fd), out of reach of any lifeline.  Set only with
	 * lifeline_to: the sandbox still ends with moat, through __init. */
	bool outlives_moat;
	/* moat __init --started-fd: the write end of a pipe moved to this fd
	 * for the tool to pass on; __init writes 'e' right before it executes
	 * the command.  A tool that ends without it failed in its own set-up:
	 * exit 125, not the command's status.  -1: not known (the tool runs
	 * the command itself). */
	int started_to;
	/* The caller's stderr moved to this fd for moat __init --stderr-fd,
	 * which puts it back on 2 for the command; the tool's own fd 2 is a
	 * pipe to moat, which copies what the tool says to stderr and keeps it
	 * for the report when the tool fails in its set-up.  -1: the tool
	 * gets the caller's stderr. */
	int stderr_to;
	bool no_new_privs;  /* moat may set PR_SET_NO_NEW_PRIVS before the
			     * tool's execve (false for setuid tools) */
	bool apply_rlimits; /* moat applies the policy's rlimits (and core 1)
			     * to the tool: the command inherits them.  false
			     * when the tool applies them itself (OCI
			     * process.rlimits), because e.g. RLIMIT_AS on a Go
			     * runtime breaks the runtime, not the command */
	char *work_dir;     /* files of this run (bundle, profile, state) */
	bool owns_work_dir; /* remove work_dir after the run */
	int work_dir_lock;  /* with owns_work_dir: its lock, held by moat and
			     * its guard until it is removed (util/stale.h);
			     * -1: none */
	int fs_landlock_abi; /* Landlock on the file system inside (moat's
			      * ruleset applied by the child or __init): the
			      * one guard that still holds for a declared
			      * directory fd (backend_verdict_kept_dirs); 0
			      * without it */
	uint64_t landlock_scoped; /* that ruleset's scopes (kernel/landlock.h):
				   * the abstract-socket one still refuses a
				   * kept unix socket of the host's
				   * (backend_verdict_kept_sockets); 0 without */
	char **cleanup_argv; /* run by moat's guard when moat died during the run
			      * (`runc delete --force ID`: the runtime's state);
			      * NULL-terminated, owned; NULL: none */
	char *cleanup_wait_state; /* runc's state.json for this container: the
				   * guard first waits (bounded) for the init it
				   * names to end by itself (its lifeline hung up),
				   * since `delete --force` freezes the cgroup and
				   * would stop the container mid-exit; NULL: no
				   * wait */
	char *cleanup_cgroup; /* the container's cgroup as runc names it below
			       * its own in every hierarchy (linux.cgroupsPath,
			       * relative): after moat died the guard kills
			       * what is in it and removes it, where runc died
			       * before its state (launch/runtime_cgroup.h);
			       * NULL: the runtime makes none */
	struct backend_rlimit rlimits[BACKEND_MAX_RLIMITS]; /* what moat applies
							     * when apply_rlimits */
	size_t n_rlimits;
	char *runtime;      /* for oci/gvisor: which runtime ("crun", "runc",
			     * "runsc"), for the report; else NULL */
	/* Variables the tool itself sets in the command's environment, as
	 * "NAME=VALUE" (bwrap sets PWD after its chdir).  The plan puts them
	 * into moat's environment too, so the report lists exactly what the
	 * command sees.  backend_env_set() adds one. */
	char **env_set;
	size_t n_env_set, cap_env_set;
	/* Limits: what the tool offers (compile fills caps before
	 * backend_limits() or backend_verdict_moat_owned()), and what that
	 * decides (resolve/limits.h). */
	struct limit_caps caps;
	struct limits_plan limits;
	/* The tool's own environment, NULL-terminated "NAME=VALUE": PATH
	 * (BACKEND_TOOL_PATH) and what the tool itself needs
	 * (backend_tool_env()), never the command's.  The tool runs outside
	 * the sandbox with the caller's rights: a loader hook given to it
	 * (LD_PRELOAD) would run before any confinement, and a runtime acts on
	 * variables of its own (runc and crun bind NOTIFY_SOCKET's socket into
	 * the container and pass LISTEN_FDS' descriptors; firejail reads
	 * FIREJAIL_*).  The command's environment reaches the command through
	 * the tool's own mechanism: bwrap --setenv through a descriptor,
	 * OCI process.env, moat __init --env-fd under firejail. */
	char **tool_env; /* NULL until the first one */
	size_t n_tool_env, cap_tool_env;
	/* The tool has no such mechanism (nono, sandbox-exec): it is given the
	 * command's environment, and the backend has refused every hook
	 * variable in it (backend_env_via_tool()). */
	bool env_via_tool;
	/* Directories the tool makes in places every user shares, under names
	 * every run of this user shares too (nsjail's /tmp/nsjail.UID.root):
	 * backend_shared_dir() made or found them before the run; removed
	 * after it (backend_plan_cleanup) when this run made them or another
	 * run of moat held them, they are empty, and no run holds them any
	 * more.  Deepest last, removed first. */
	struct backend_shared_dir *shared_dirs;
	size_t n_shared_dirs, cap_shared_dirs;
	/* The binds the tool makes by their sources' names (OCI "source",
	 * nsjail's src): moat __init --bound-file checks inside that each
	 * destination is the planned object, device and inode
	 * (launch/initview.h).  The launcher writes them to bound_file once
	 * the placeholders exist (backend_bound_write): a placeholder's
	 * identity is known only then.  bound_file NULL: no check. */
	struct backend_bound *bound;
	size_t n_bound, cap_bound;
	char *bound_file;
};

/* What compile() gets. */
struct backend_ctx {
	const struct moat_policy *policy;
	const struct fs_plan *fs; /* every path resolved to its object (resolve/fsplan.h) */
	const struct moat_host *host;
	struct moat_cgroup_info *cgroup; /* the host's cgroups, read on first use
					  * (resolve/limits.h limits_decide) */
	char *const *envp;     /* the exact environment the command must see */
	const char *tool_path; /* where the tool was found; NULL when it is not
				* installed (export, golden tests): compile then
				* uses the bare tool name and must not fail */
	const char *work_dir;  /* an existing, empty, private directory for the
				* backend's files, or NULL when the backend
				* declared needs_work_dir false, or
				* work_dir_lazy outside an export (compile
				* makes it: backend_work_dir) */
	bool exporting;        /* `moat export`: write files, create no fds,
				* start nothing; argv must still be complete */
};

/* The most files of its own an export writes, its terminating NULL included. */
#define BACKEND_EXPORT_FILES_MAX 4

struct moat_backend {
	const char *name;          /* as in --backend and configs */
	const char *tools[4];      /* executables looked up in PATH, in order of
				    * preference; NULL-terminated; none for
				    * native and none, which run no tool */
	const char *summary;       /* one line: what the tool is */
	const char *install_hint;  /* e.g. "apt-get install bubblewrap" */
	const char *os;            /* "linux" or "macos": where it can run */
	bool needs_work_dir;
	/* The files an export writes into its directory besides argv.json
	 * and report.json (directories it checks itself, OCI's rootfs and
	 * state, aside): what a later export there removes, and what it
	 * refuses to replace when no export wrote it (api/export.c). */
	const char *export_files[BACKEND_EXPORT_FILES_MAX];
	/* The work dir is made by compile() itself (backend_work_dir), once
	 * it knows the backend can run: `auto` compiles every backend in its
	 * ranking where native misses a property, and one made and removed
	 * for a backend that cannot run was ~0.3 ms each (an export's
	 * directory is given as ever). */
	bool work_dir_lazy;
	/* The sandbox's init is moat's own binary (`moat __init`, bound from
	 * /proc/self/exe): only the moat program can run this backend, never
	 * an embedder of libmoat (util/moatbin.h). */
	bool runs_moat_init;
	/* Optional: the properties (MOAT_PBIT) this backend can never enforce
	 * for the policy, known without compiling it.  `auto` then skips a
	 * backend that could not beat the best one found so far (plan.c). */
	uint32_t (*never_enforces)(const struct moat_policy *p);
	/* Optional: the host alone rules the backend out (no user namespaces
	 * and moat not root, ...): every props[] verdict filled with why,
	 * true.  Asked before the tool is looked for in PATH: `auto` walks
	 * the whole ranking on a host without user namespaces, where looking
	 * up bwrap, runsc, crun, runc and nsjail (~15 stats each) and
	 * compiling what was found cost ~0.1 ms of every start, all for a
	 * verdict the host facts already gave.  compile() checks again. */
	bool (*host_rules_out)(const struct moat_host *h, struct moat_verdict *props);
	/* Fill every props[] verdict (requested flags are already set) and
	 * bp->argv.  Returns -1 only on errors (a file that cannot be
	 * written, a policy the tool cannot express at all in require mode),
	 * never because a property is missing: that is a verdict. */
	int (*compile)(const struct backend_ctx *ctx, struct backend_plan *bp, struct moat_verdict *props,
		       struct moat_error *err);
};

/* --- registry (backends/registry.c) ------------------------------------ */

/* The backend called `name` (one of policy/backend_names.h but "auto"), or
 * NULL. */
const struct moat_backend *backend_lookup(const char *name);

/* The backend executes a tool (it can be exported: `moat export`), rather
 * than moat's own in-child program or nothing. */
bool backend_runs_tool(const struct moat_backend *b);

/* The plan executes a tool, found or not (argv is NULL when it was not). */
bool backend_plan_runs_tool(const struct backend_plan *bp);

/* The ranking `auto` follows, strongest first (docs/backends.md): names,
 * "native" included, NULL-terminated. */
const char *const *backend_ranking(void);

/* Compile `b` for the policy: find the tool, make the work dir, call
 * compile().  When the tool is not installed, every requested property is
 * missing with the install hint (and compile() is still run when
 * `exporting`).  On success *bp is filled; on error nothing is left behind. */
int backend_prepare(const struct moat_backend *b, const struct moat_policy *p, const struct fs_plan *fs,
		    const struct moat_host *h, struct moat_cgroup_info *cg, char *const *envp,
		    const char *export_dir, struct backend_plan *bp, struct moat_verdict *props, struct moat_error *err);

/* For a backend with work_dir_lazy: make its work directory now, if it has
 * none yet (an export has its directory already).  0, or -1 with err. */
int backend_work_dir(const struct moat_backend *b, struct backend_plan *bp, struct moat_error *err);

/* --- helpers for compile() (backends/util.c) ----------------------------- */

/* The first of b->tools found in PATH (then /usr/bin, /usr/sbin, /bin,
 * /sbin), as a new absolute path, or NULL; PATH's entries in the project
 * around the current directory are passed over (a repository's
 * node_modules/.bin/bwrap would run as the sandbox).  `which` (may be
 * NULL) receives the tool's name. */
char *backend_find_tool(const struct moat_backend *b, const char **which);

void backend_plan_init(struct backend_plan *bp);
void backend_plan_free(struct backend_plan *bp);
/* Remove what the run made on the host: the work directory when the plan
 * owns it, the in-child program's private tmp (also done by
 * backend_plan_free); safe to call twice. */
void backend_plan_cleanup(struct backend_plan *bp);
/* The work directory alone, when the plan owns it (once: the plan owns it
 * no more after): 0, or rmtree's -errno when it is left on the host (said
 * on stderr too). */
int backend_remove_work_dir(struct backend_plan *bp);
/* Append a copy of each string (printf-style for the one-argument form). */
void backend_argv_add(struct backend_plan *bp, const char *arg);
void backend_argv_addf(struct backend_plan *bp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append the command: "--" unless sep is NULL, then exe (the resolved
 * path) and argv[1..]. */
void backend_argv_add_command(struct backend_plan *bp, const struct moat_policy *p, const char *sep);
/* Decide the limits from bp->caps (resolve/limits.h) into bp->limits, and
 * return them: compile() calls it when what it writes depends on them (an
 * OCI config's resources); backend_verdict_moat_owned() calls it again. */
const struct limits_plan *backend_limits(const struct backend_ctx *ctx, struct backend_plan *bp);
/* The per-process limits moat or the tool applies, core 1 first: RLIMIT_AS,
 * RLIMIT_NOFILE, RLIMIT_CPU (each process's share of --cpu: SIGXCPU at
 * the limit, which names the cause, SIGKILL a second later) and
 * RLIMIT_NPROC when the limits chose it for --pids.  Returns how many. */
size_t backend_rlimits(const struct moat_policy *p, const struct limits_plan *lp,
		       struct backend_rlimit out[BACKEND_MAX_RLIMITS]);
/* Record that the tool sets NAME=VALUE in the command's environment. */
void backend_env_set(struct backend_plan *bp, const char *name, const char *value);
/* Set NAME=VALUE in the tool's own environment (not the command's). */
void backend_tool_env(struct backend_plan *bp, const char *name, const char *value);
/* For a tool that can only hand its own environment on to the command:
 * marks the plan so (the launcher gives the tool the command's
 * environment) and returns true, or false with the reason in `why` when a
 * variable in it is a loader or interpreter hook (policy/env.h), which
 * would act on the tool itself, outside the sandbox. */
bool backend_env_via_tool(const struct backend_ctx *ctx, struct backend_plan *bp, const char *tool, char *why,
			  size_t len);
/* Register an fd for the tool to inherit; returns it. */
int backend_pass_fd(struct backend_plan *bp, int fd);

/* The highest descriptor number the tool is given (at least 2): the
 * declared --keep-fd ones, the backend's own (pass_fds, fd_remap_to) and
 * moat's pipes placed so far (lifeline_to, started_to, stderr_to).  A pipe placed for
 * the tool goes above it. */
int backend_highest_fd(const struct moat_policy *p, const struct backend_plan *bp);

/* The declared --keep-fd numbers as moat __init --keep-fds takes them
 * ("3,7,9"), allocated: never cut short, since a number cut short is
 * another descriptor. */
char *backend_keep_fds_list(const struct moat_policy *p);

/* `len` bytes in a new memfd named `name`, rewound: for a tool (or moat
 * __init) to read through an inherited descriptor.  Returns the fd
 * (close-on-exec: the launcher clears that for pass_fds only), or -1 with
 * err. */
int backend_memfd(const char *name, const void *data, size_t len, struct moat_error *err);

/* The files of an export beside its argv.json: the seccomp program
 * (backend_seccomp_program writes it), bwrap's environment for --args, and
 * the script that runs argv.json with both on descriptors 3 and 4. */
#define BACKEND_EXPORT_SECCOMP "seccomp.bpf"
#define BACKEND_EXPORT_ENV_ARGS "env.args"
#define BACKEND_EXPORT_RUN "run.sh"

/* moat's own seccomp program for the policy (the one the native backend
 * loads), for the tool or moat __init to load: in a memfd registered with
 * backend_pass_fd, *fd (-1 when exporting: no descriptor is made), of *len
 * instructions.  Returns 1; 0 when this host cannot have it, with the
 * reason in `why`; -1 on error. */
int backend_seccomp_program(const struct backend_ctx *ctx, struct backend_plan *bp, int *fd, unsigned short *len,
			    char *why, size_t why_len, struct moat_error *err);

/* A directory in a shared place that the tool makes by name, held for the
 * run (backend_plan's shared_dirs): `made` says that the caller's mkdir
 * made it just now.  Returns 0; 1 when it was removed meanwhile (by
 * another run ending: make it again); -1 with the reason in `why` when it
 * cannot be opened, or is not a directory of this user's that only this
 * user can write: the tool would mount over what another user put there. */
int backend_shared_dir(struct backend_plan *bp, const char *path, bool made, char *why, size_t why_len);

/* Write `len` bytes to `dir`/`name` (mode 0644), creating or replacing it. */
int backend_write_file(const char *dir, const char *name, const void *data, size_t len, struct moat_error *err);
/* The same, readable by its owner only (mode 0600, also when it existed):
 * a file that holds the command's environment, whose values may be tokens
 * (an export's env.args and OCI config.json). */
int backend_write_private_file(const char *dir, const char *name, const void *data, size_t len,
			       struct moat_error *err);

/* fd.clean's mechanism: which descriptors the command keeps ("only 0, 1
 * and 2 stay open", or with --keep-fd 5 and 7: "only 0, 1, 2 and --keep-fd
 * 5, 7 stay open"); in buf, or a static string. */
const char *backend_fds_kept(const struct moat_policy *p, char *buf, size_t len);

/* Verdicts moat keeps owning for every external backend: env.curated
 * (when env_passed_through: the tool hands the command moat's environment
 * unchanged, or writes exactly it), fd.clean (when fds_closed_or_passed:
 * the tool adds no fd of its own), res.limits and proc.tree (from bp->caps,
 * resolve/limits.h).  `tool` names the tool in the mechanism text. */
void backend_verdict_moat_owned(const struct backend_ctx *ctx, struct backend_plan *bp, const char *tool,
				bool env_passed_through, bool fds_closed_or_passed, struct moat_verdict *props);

/* The verdicts the policy itself decides, the same for every backend: fs.tmp
 * is missing when the policy shares /tmp, net.none when it opens the
 * network.  Each returns true when the backend must still decide. */
bool backend_verdict_policy_tmp(const struct moat_policy *p, struct moat_verdict *props);
bool backend_verdict_policy_net_none(const struct moat_policy *p, struct moat_verdict *props);

/* net.allow: enforced only by the native backend's fence; under net allow
 * every other backend keeps the network closed. */
#define HINT_NET_ALLOW                                                                                                 \
	"--backend native enforces --allow-net where the host has its fence (`moat probe`); --net all opens the "      \
	"network whole"
void backend_verdict_net_allow(struct moat_verdict *props);

/* ipc.abstract and ipc.unix for a tool under which moat's seccomp program
 * runs (`seccomp`: it does here; `via` says how, "via bwrap") and which
 * makes a network namespace unless net all (`netns` names it, "bwrap
 * --unshare-net"); `reachable` says which host sockets the command could
 * connect to without the program ("a host socket inside a granted path"). */
void backend_verdict_ipc(const struct moat_policy *p, bool seccomp, const char *via, const char *netns,
			 const char *reachable, struct moat_verdict *props);

/* The Landlock layer of an external backend (launch/init.h): when the host
 * has Landlock and the run is real (not an export), the ruleset is built
 * from the plan's objects here, passed to the tool as an fd, and applied
 * inside by `moat __init`, which adds rules for the view's own mounts (its
 * root, the private tmpfs, /proc, the device nodes).  Appends the __init
 * arguments, without the closing "--", to *args (NULL-terminated, owned).
 * any_fd: the tool passes every inherited fd (bwrap), so the ruleset stays
 * where it is; else it is moved right above the declared fds (an OCI
 * runtime passes only 3..N).
 * Returns the Landlock ABI used, 0 when there is no layer (args untouched),
 * or -1 with err. */
struct view;
int backend_landlock_layer(const struct backend_ctx *ctx, struct backend_plan *bp, const struct view *v,
			   bool any_fd, char ***args, size_t *n_args, struct moat_error *err);
/* A bind of object `obj` (index in the fs_plan) at `dest`, checked by
 * moat __init (backend_plan's bound).  A second one at the same
 * destination replaces the first: the later mount is what shows there. */
void backend_bound_add(struct backend_plan *bp, const char *dest, int obj);
/* Write bp->bound to bp->bound_file, from the objects as they are now
 * (the placeholders made): NUL-terminated "DEV:INO:DEST" records.  Called
 * by the launcher before the tool runs; 0, or -1 with err. */
int backend_bound_write(const struct backend_plan *bp, const struct fs_plan *fp, struct moat_error *err);

/* Append a copy of `s` to the NULL-terminated *v of *n strings. */
void backend_strv_add(char ***v, size_t *n, const char *s);
void backend_strv_free(char **v);

/* fs.read, fs.write and fs.secrets for a tool that mounts the view of
 * resolve/view.h (bwrap, the OCI runtimes): `n_unpinned` absent protected
 * entries an export cannot hold, `landlock_abi` of moat's ruleset applied
 * inside (0: none, grants holding a denied path mounted entry by entry). */
/* fs.read, fs.write and fs.secrets missing when a declared fd is a
 * directory and no Landlock guards the file system inside (plan.c, after
 * every backend's own verdicts). */
void backend_verdict_kept_dirs(const struct moat_policy *p, const struct backend_plan *bp, struct moat_verdict *props);
/* A declared fd that is a socket made outside the sandbox (the caller's,
 * in the host's network namespace) is not held by the sandbox's network
 * namespace or by the seccomp rule on socket(2): net.none, net.loopback and
 * net.allow missing for any socket but a unix one, ipc.unix (and
 * ipc.abstract without Landlock's abstract-socket scope) for a unix socket
 * that can still be aimed (unconnected, or datagram).  plan.c, after every
 * backend's own verdicts. */
void backend_verdict_kept_sockets(const struct moat_policy *p, const struct backend_plan *bp,
				  struct moat_verdict *props);
/* A hard-link farm in a write grant (fs_plan.farms): fs.write missing,
 * naming it. */
void backend_verdict_link_farms(const struct fs_plan *fp, struct moat_verdict *props);
/* A protected file with another hard link (fs_obj.hard_linked) can be
 * written through that name, wherever it lies: fs.write missing, naming
 * it.  Every backend's, after its own verdicts. */
void backend_verdict_linked_protected(const struct fs_plan *fp, struct moat_verdict *props);

/* A denied file with another hard link (fs_obj.linked_secret) can be read
 * through that name: fs.secrets missing, naming it. */
void backend_verdict_linked_secret(const struct fs_plan *fp, struct moat_verdict *props);

/* fs.read, fs.write and fs.secrets for a backend that mounts the view
 * (resolve/view.h) with a tool: n_links_unheld protected symlinks the view
 * left out (links_as_text), the first named link_unheld, make fs.write
 * missing, since the command could replace them. */
/* A backend's limit_caps.cgroup_open without seccomp: clone3's
 * CLONE_INTO_CGROUP with an O_PATH descriptor of a cgroup directory the
 * command may write (cgroup.procs' mode bits; the view's read-only mount
 * does not count) starts a child out of moat's cgroup. */
#define BACKEND_CGROUP_OPEN_NO_SECCOMP                                                                        \
	"without seccomp (which refuses clone3) the command could start a process in another cgroup its user may " \
	"write, with clone3(CLONE_INTO_CGROUP) and a descriptor of that directory, which neither a read-only mount " \
	"nor Landlock governs"

/* An export with pinned protected entries: fs.read, fs.secrets and
 * fs.write missing (it binds them by name, unchecked, when it runs). */
void backend_verdict_export_names(const struct backend_ctx *ctx, size_t n_pins, struct moat_verdict *props);
void backend_verdict_fs(const char *tool, size_t n_bound, size_t n_pins, size_t n_unpinned, int landlock_abi,
			size_t n_expanded, size_t n_links_unheld, const char *link_unheld, struct moat_verdict *props);

/* A tool that is not setuid (bwrap, nsjail) needs user namespaces unless
 * moat is root: true when it can run here, else false with every verdict
 * missing, saying so with the hint. */
bool backend_userns_or_root(const struct moat_host *h, const char *tool, struct moat_verdict *props);
/* Can the tool's view hold moat's init at /.moat?  Not when the whole
 * root is granted (--read /): the view's / is then the host's own, where
 * the tool cannot make /.moat ("Can't mkdir parents for /.moat/init:
 * Read-only file system").  false with every property missing, the
 * reason and a hint, as for a tool that cannot run here. */
bool backend_init_has_room(const struct backend_ctx *ctx, const char *tool, struct moat_verdict *props);

/* Every requested property missing with `reason` and `hint` (a tool that
 * is not installed, an OS it cannot run on). */
void backend_verdict_all_missing(struct moat_verdict *props, const char *hint, const char *reason);

/* The tool cannot run this policy (an argv over the tool's own limit): its
 * argv is dropped and every property missing with the reason, so --backend
 * auto passes it over and an explicit choice says why, before anything
 * runs. */
void backend_cannot_run(struct backend_plan *bp, struct moat_verdict *props, const char *hint, const char *reason);

/* --- the backends -------------------------------------------------------- */

extern const struct moat_backend backend_native;   /* backends/native.c */
extern const struct moat_backend backend_none;     /* backends/registry.c */
extern const struct moat_backend backend_bwrap;    /* backends/bwrap.c */
extern const struct moat_backend backend_firejail; /* backends/firejail.c */
extern const struct moat_backend backend_gvisor;   /* backends/oci_run.c */
extern const struct moat_backend backend_oci;      /* backends/oci_run.c */
extern const struct moat_backend backend_nono;     /* backends/nono.c */
extern const struct moat_backend backend_nsjail;   /* backends/nsjail.c */
extern const struct moat_backend backend_seatbelt; /* backends/seatbelt.c */

#endif
