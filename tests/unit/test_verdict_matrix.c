/* The verdict matrix: plan_build for every host a table describes -- Landlock
 * ABI 0 to 7, user namespaces on and off, seccomp on and off, root and an
 * unprivileged user -- under a few policies (strict, strict --write DIR,
 * strict --read D --deny D/secret, strict --net all), each in mode prefer
 * and require.  For each it checks which backend `auto` picks, which
 * properties are requested, which are enforced and which missing, and the
 * status.  No kernel feature is needed: the host is a struct, not a probe.
 *
 * The expected values (rows[] below) are written from the docs, not from
 * running the code: docs/degradation.md (what each missing feature costs,
 * its table of MOAT_HOST_LIMIT rows), docs/backends.md ("auto"; without
 * Landlock the native view alone holds the file system), docs/seccomp.md
 * (socket(AF_UNIX) refused), docs/limits.md (proc.tree: a pid namespace,
 * or a cgroup -- and every row here has cgroup=0, so without namespaces it
 * is missing).  Like libseccomp's tests, a row covers a range of values: a
 * Landlock ABI range and a set of policies, with one expected result; the
 * test first checks that the rows cover every host of the matrix exactly
 * once.
 *
 * The seams, both test-only (the Makefile links them into this test and
 * no other binary):
 *
 *   Landlock.  Planning really calls the kernel for one thing the rows
 *   vary: with an ABI > 0, native_compile builds its ruleset
 *   (landlock_create_ruleset, one landlock_add_rule per granted object, on
 *   O_PATH descriptors of real paths).  Those two calls live alone in
 *   src/kernel/landlock_sys.c; this test is linked with
 *   tests/unit/fake_landlock.o before libmoat.a, which defines them, so
 *   the archive's object is never pulled in.  The fake answers as a kernel
 *   of the row's ABI would (it refuses rights, scopes and struct sizes the
 *   ABI lacks), so a row can claim ABI 7 on a kernel with none.  Host
 *   detection (host/host.c) does not go through that object: in moat
 *   itself nothing can make detection report more than the kernel has.
 *   Everything else planning does needs no feature a row varies: the
 *   seccomp program is compiled by libseccomp (or copied from the build's
 *   table) without the kernel; namespaces are only flags until the launch;
 *   paths are resolved with openat2 as on every host moat runs on; without
 *   namespaces the private tmp is a real directory under /tmp, removed at
 *   the end.
 *
 *   The external tools.  `auto` looks for bwrap, runsc, crun, runc,
 *   nsjail, firejail, nono in PATH and then in /usr/bin, /usr/sbin, /bin and /sbin,
 *   whatever PATH says (backends.md), so an empty PATH does not hide an
 *   installed tool.  The test is linked with -Wl,--wrap=access: while
 *   `hide_tools` is set, access(2) on a path whose last component is one of
 *   the backends' tools fails with ENOENT (and is counted); every other
 *   access(2) is the real one.  PATH is a directory holding a decoy file
 *   for each tool, so the lookup reaches access(2) on every host, and
 *   `auto`'s choice does not depend on what is installed: every external
 *   backend is "not installed", and the count says whether `auto` looked
 *   past native at all. */
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_landlock.h"
#include "backends/backend.h"
#include "plan/plan.h"
#include "sources/cli.h"
#include "util/moatbin.h"
#include "util/rmtree.h"

/* --- the access(2) seam ------------------------------------------------ */

int __real_access(const char *path, int mode);
int __wrap_access(const char *path, int mode);

static bool hide_tools;
static unsigned tool_lookups;

static bool is_tool(const char *path)
{
	const char *const *rank = backend_ranking();
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; rank[i]; i++) {
		const struct moat_backend *b = backend_lookup(rank[i]);
		for (size_t t = 0; b && t < sizeof(b->tools) / sizeof(b->tools[0]) && b->tools[t]; t++)
			if (strcmp(base, b->tools[t]) == 0)
				return true;
	}
	return false;
}

int __wrap_access(const char *path, int mode)
{
	if (hide_tools && path && is_tool(path)) {
		tool_lookups++;
		errno = ENOENT;
		return -1;
	}
	return __real_access(path, mode);
}

/* --- the expected verdicts --------------------------------------------- */

enum policy_kind {
	P_STRICT,  /* --profile strict: net none, private tmp, the built-in secrets denied */
	P_WRITE,   /* ... --write DIR */
	P_DENY,    /* ... --read D --deny D/secret */
	P_NET_ALL, /* ... --net all */
	P__COUNT,
};
#define PB(k)	 (1u << (k))
#define NET_NONE (PB(P_STRICT) | PB(P_WRITE) | PB(P_DENY))
#define NET_ALL	 PB(P_NET_ALL)

static const char *const policy_names[P__COUNT] = {"strict", "strict --write", "strict --deny", "strict --net all"};

/* What each policy asks for (plan.c marks them from the policy; docs:
 * report.md "properties", degradation.md): everything but net.loopback and
 * net.allow, and net.none only under net none. */
static const char *const requested[P__COUNT] = {
    [P_STRICT] = "fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace "
		 "proc.tree sys.filter tty.inject env.curated fd.clean res.limits",
    [P_WRITE] = "fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace "
		"proc.tree sys.filter tty.inject env.curated fd.clean res.limits",
    [P_DENY] = "fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace "
	       "proc.tree sys.filter tty.inject env.curated fd.clean res.limits",
    [P_NET_ALL] = "fs.read fs.write fs.secrets fs.tmp ipc.abstract ipc.unix proc.pid proc.ptrace proc.tree "
		  "sys.filter tty.inject env.curated fd.clean res.limits",
};

/* One row: the policies and hosts it covers (Landlock ABI lo..hi; userns,
 * seccomp, root: 0 or 1), and the requested properties that must be
 * missing there -- every other requested one must be enforced.
 *
 * The reasoning, per property (ns: a user namespace, or root, which makes
 * the other namespaces without one):
 *   fs.read, fs.secrets, fs.tmp   ns (the mount view) or Landlock >= 1
 *   fs.write                      ns only: Landlock governs no metadata
 *                                 and cannot pin protected entries
 *   net.none                      seccomp or a network namespace (ns)
 *   ipc.abstract                  seccomp, a network namespace (ns, net
 *                                 not shared) or Landlock >= 6 (scope)
 *   ipc.unix                      seccomp and an IPC namespace (ns)
 *   proc.pid, proc.tree           ns (cgroup=0: no tree cgroup)
 *   proc.ptrace                   seccomp, and Landlock >= 1 or ns
 *   sys.filter                    seccomp
 *   tty.inject                    seccomp, or a user namespace, or not root
 *   env.curated, fd.clean, res.limits  always (no limit declared)
 * The rows agree with docs/degradation.md's table, whose host has
 * Landlock 6 or more (L>=6 below) and cgroups, which the rows here lack
 * (proc.tree).  `auto` picks native everywhere: with every tool hidden each
 * external backend misses every requested property, native the fewest. */
struct row {
	unsigned policies;
	int abi_lo, abi_hi;
	int userns, seccomp, root;
	const char *missing;
};

static const struct row rows[] = {
    /* user namespaces: the whole native sandbox, root or not */
    {NET_NONE | NET_ALL, 0, 7, 1, 1, 0, ""},
    {NET_NONE | NET_ALL, 0, 7, 1, 1, 1, ""},
    /* root without user namespaces: root makes the namespaces itself */
    {NET_NONE | NET_ALL, 0, 7, 0, 1, 1, ""},
    /* no seccomp */
    {NET_NONE, 0, 7, 1, 0, 0, "ipc.unix proc.ptrace sys.filter"},
    {NET_NONE, 0, 7, 1, 0, 1, "ipc.unix proc.ptrace sys.filter"},
    {NET_NONE, 0, 7, 0, 0, 1, "ipc.unix proc.ptrace sys.filter tty.inject"},
    /* ... with the host's network: no network namespace for ipc.abstract */
    {NET_ALL, 0, 5, 1, 0, 0, "ipc.abstract ipc.unix proc.ptrace sys.filter"},
    {NET_ALL, 6, 7, 1, 0, 0, "ipc.unix proc.ptrace sys.filter"},
    {NET_ALL, 0, 5, 1, 0, 1, "ipc.abstract ipc.unix proc.ptrace sys.filter"},
    {NET_ALL, 6, 7, 1, 0, 1, "ipc.unix proc.ptrace sys.filter"},
    {NET_ALL, 0, 5, 0, 0, 1, "ipc.abstract ipc.unix proc.ptrace sys.filter tty.inject"},
    {NET_ALL, 6, 7, 0, 0, 1, "ipc.unix proc.ptrace sys.filter tty.inject"},
    /* no namespaces at all: an unprivileged user without user namespaces */
    {NET_NONE | NET_ALL, 0, 0, 0, 1, 0, "fs.read fs.write fs.secrets fs.tmp ipc.unix proc.pid proc.ptrace proc.tree"},
    {NET_NONE | NET_ALL, 1, 7, 0, 1, 0, "fs.write ipc.unix proc.pid proc.tree"},
    {NET_NONE, 0, 0, 0, 0, 0,
     "fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace proc.tree sys.filter"},
    {NET_NONE, 1, 5, 0, 0, 0, "fs.write net.none ipc.abstract ipc.unix proc.pid proc.ptrace proc.tree sys.filter"},
    {NET_NONE, 6, 7, 0, 0, 0, "fs.write net.none ipc.unix proc.pid proc.ptrace proc.tree sys.filter"},
    {NET_ALL, 0, 0, 0, 0, 0,
     "fs.read fs.write fs.secrets fs.tmp ipc.abstract ipc.unix proc.pid proc.ptrace proc.tree sys.filter"},
    {NET_ALL, 1, 5, 0, 0, 0, "fs.write ipc.abstract ipc.unix proc.pid proc.ptrace proc.tree sys.filter"},
    {NET_ALL, 6, 7, 0, 0, 0, "fs.write ipc.unix proc.pid proc.ptrace proc.tree sys.filter"},
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

/* --- helpers ----------------------------------------------------------- */

typedef unsigned prop_set; /* bit i: enum moat_property i */

static prop_set parse_set(const char *names)
{
	prop_set s = 0;
	char buf[512], *save = NULL, *w;

	snprintf(buf, sizeof(buf), "%s", names);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		int p = moat_property_parse(w);
		if (p < 0) {
			printf("Bail out! the table names an unknown property '%s'\n", w);
			exit(1);
		}
		s |= 1u << p;
	}
	return s;
}

static const char *set_text(prop_set s, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < MOAT_P__COUNT && used < len; i++)
		if (s & (1u << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "",
						 moat_property_name((enum moat_property)i));
	return used ? buf : "(none)";
}

static void make_host(struct moat_host *h, int abi, bool userns, bool seccomp, bool root)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->kernel, sizeof(h->kernel), "6.99.0-matrix");
	snprintf(h->machine, sizeof(h->machine), "x86_64");
	h->landlock_abi = abi;
	h->landlock_errata = -1;
	if (!abi)
		snprintf(h->landlock_why, sizeof(h->landlock_why), "matrix row without Landlock");
	h->seccomp = seccomp;
	if (!seccomp)
		snprintf(h->seccomp_why, sizeof(h->seccomp_why), "matrix row without seccomp");
	h->userns = userns;
	if (!userns)
		snprintf(h->userns_why, sizeof(h->userns_why), "matrix row without user namespaces");
	h->root = root;
	h->uid = root ? 0 : 65534;
	h->gid = root ? 0 : 65534;
	h->yama_ptrace_scope = -1;
	/* The tree's limits and proc.tree without a pid namespace would read
	 * this host's cgroups: every row is a host without any. */
	h->cgroup_limited = true;
	snprintf(h->limited_by, sizeof(h->limited_by), "cgroup=0");
}

static char tmp_root[64];
static char dir_home[128], dir_path[128], dir_work[128], dir_data[128], dir_secret[160];

static void make_dirs(void)
{
	static const char *const decoys[] = {"bwrap",  "runsc",	   "crun", "runc",
					     "nsjail", "firejail", "nono", "sandbox-exec"};
	char f[256];

	snprintf(tmp_root, sizeof(tmp_root), "/tmp/moat-matrix.XXXXXX");
	if (!mkdtemp(tmp_root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(dir_home, sizeof(dir_home), "%s/home", tmp_root);
	snprintf(dir_path, sizeof(dir_path), "%s/bin", tmp_root);
	snprintf(dir_work, sizeof(dir_work), "%s/work", tmp_root);
	snprintf(dir_data, sizeof(dir_data), "%s/data", tmp_root);
	snprintf(dir_secret, sizeof(dir_secret), "%s/secret", dir_data);
	if (mkdir(dir_home, 0700) || mkdir(dir_path, 0700) || mkdir(dir_work, 0700) || mkdir(dir_data, 0700)) {
		printf("Bail out! mkdir: %s\n", strerror(errno));
		exit(1);
	}
	for (size_t i = 0; i < sizeof(decoys) / sizeof(decoys[0]); i++) {
		snprintf(f, sizeof(f), "%s/%s", dir_path, decoys[i]);
		close(open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755));
	}
	close(open(dir_secret, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
}

/* The per-run tmp a plan without namespaces makes (native.c):
 * /tmp/moat-tmp.PID.XXXXXX; the plan leaves its removal to the launch. */
static void remove_private_tmps(void)
{
	char prefix[64];
	DIR *d = opendir("/tmp");
	struct dirent *e;

	if (!d)
		return;
	snprintf(prefix, sizeof(prefix), "moat-tmp.%d.", (int)getpid());
	while ((e = readdir(d))) {
		char path[300];
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
		rmtree(path);
	}
	closedir(d);
}

static int parse_policy(enum policy_kind k, const char *mode, struct moat_policy *p, struct moat_error *err)
{
	char env_home[160], env_path[160];
	char *env[] = {env_home, env_path, "LANG=C.UTF-8", NULL};
	char *argv[16];
	int n = 0, rc;
	struct moat_run_options o;

	snprintf(env_home, sizeof(env_home), "HOME=%s", dir_home);
	snprintf(env_path, sizeof(env_path), "PATH=%s", dir_path);
	argv[n++] = "run";
	argv[n++] = "--profile";
	argv[n++] = "strict";
	argv[n++] = "--mode";
	argv[n++] = (char *)mode;
	if (k == P_WRITE) {
		argv[n++] = "--write";
		argv[n++] = dir_work;
	} else if (k == P_DENY) {
		argv[n++] = "--read";
		argv[n++] = dir_data;
		argv[n++] = "--deny";
		argv[n++] = dir_secret;
	} else if (k == P_NET_ALL) {
		argv[n++] = "--net";
		argv[n++] = "all";
	}
	argv[n++] = "--";
	argv[n++] = "/bin/true";
	argv[n] = NULL;
	policy_init(p);
	run_options_init(&o);
	rc = cli_parse_run(n, argv, env, p, &o, err);
	run_options_free(&o);
	return rc;
}

/* --- the matrix -------------------------------------------------------- */

static const struct row *row_for(enum policy_kind k, int abi, int userns, int seccomp, int root, size_t *n_match)
{
	const struct row *found = NULL;

	*n_match = 0;
	for (size_t i = 0; i < N_ROWS; i++) {
		const struct row *r = &rows[i];
		if ((r->policies & PB(k)) && abi >= r->abi_lo && abi <= r->abi_hi && r->userns == userns &&
		    r->seccomp == seccomp && r->root == root) {
			found = found ? found : r;
			(*n_match)++;
		}
	}
	return found;
}

static void test_table_covers_the_matrix(void)
{
	size_t holes = 0, doubles = 0, n;

	for (int k = 0; k < P__COUNT; k++)
		for (int abi = 0; abi <= 7; abi++)
			for (int bits = 0; bits < 8; bits++) {
				row_for((enum policy_kind)k, abi, bits & 1, (bits >> 1) & 1, (bits >> 2) & 1, &n);
				holes += n == 0;
				doubles += n > 1;
			}
	ok(holes == 0 && doubles == 0, "the table gives every host of the matrix one row (%zu holes, %zu doubles)",
	   holes, doubles);
}

struct outcome {
	int rc;
	char error[1100];
	const char *backend;
	enum moat_status status;
	prop_set requested, enforced;
	bool reasons; /* every missing requested property has a reason */
	struct fake_landlock_log ll;
	unsigned tool_lookups;
	bool walked; /* the choice's reason names every backend of the ranking */
};

static void plan_one(enum policy_kind k, const char *mode, const struct moat_host *h, struct outcome *out)
{
	struct moat_policy p;
	struct moat_plan plan;
	struct moat_error err = {0};

	memset(out, 0, sizeof(*out));
	if (parse_policy(k, mode, &p, &err) < 0) {
		out->rc = -1;
		snprintf(out->error, sizeof(out->error), "policy: %s", err.message);
		policy_free(&p);
		return;
	}
	fake_landlock_reset(h->landlock_abi);
	tool_lookups = 0;
	hide_tools = true;
	out->rc = plan_build(&p, h, &plan, &err);
	hide_tools = false;
	out->ll = fake_landlock_log;
	out->tool_lookups = tool_lookups;
	if (out->rc < 0) {
		snprintf(out->error, sizeof(out->error), "plan: %s", err.message);
		policy_free(&p);
		return;
	}
	out->backend = plan.backend; /* static strings: the backend's name */
	/* The reason names every backend of the ranking (the oci backend by
	 * its tools, gvisor by its tool). */
	out->walked = true;
	for (const char *const *r = backend_ranking(); *r; r++)
		if (!strstr(plan.backend_reason, strcmp(*r, "gvisor") == 0 ? "runsc"
						 : strcmp(*r, "oci") == 0  ? "crun or runc"
									   : *r))
			out->walked = false;
	out->status = plan.status;
	out->reasons = true;
	for (int i = 0; i < MOAT_P__COUNT; i++) {
		if (plan.props[i].requested)
			out->requested |= 1u << i;
		if (plan.props[i].requested && plan.props[i].enforced)
			out->enforced |= 1u << i;
		if (plan.props[i].requested && !plan.props[i].enforced && !plan.props[i].reason[0])
			out->reasons = false;
	}
	plan_free(&plan);
	policy_free(&p);
}

static unsigned n_false_enforced;

static void check_host(enum policy_kind k, int abi, int userns, int seccomp, int root)
{
	char what[160], a[300], b[300];
	size_t n;
	const struct row *r = row_for(k, abi, userns, seccomp, root, &n);
	prop_set want_req = parse_set(requested[k]), want_missing = parse_set(r ? r->missing : "");
	prop_set want_enf = want_req & ~want_missing;
	struct moat_host h;
	struct outcome pre, req;

	snprintf(what, sizeof(what), "%s, landlock %d, userns %s, seccomp %s, %s", policy_names[k], abi,
		 userns ? "on" : "off", seccomp ? "on" : "off", root ? "root" : "user");
	make_host(&h, abi, userns, seccomp, root);
	plan_one(k, "prefer", &h, &pre);
	plan_one(k, "require", &h, &req);
	ok(pre.rc == 0 && req.rc == 0, "%s: plans (%s%s)", what, pre.error, req.error);
	if (pre.rc != 0 || req.rc != 0) {
		if (pre.ll.refused || req.ll.refused)
			printf("#   the fake kernel refused: %s%s\n", pre.ll.first_refusal, req.ll.first_refusal);
		return;
	}
	is_str(pre.backend, "native", "%s: auto picks native", what);
	ok(pre.requested == want_req, "%s: requested %s", what, set_text(pre.requested, a, sizeof(a)));
	if (pre.requested != want_req)
		printf("#   want: %s\n", set_text(want_req, a, sizeof(a)));

	/* The most serious failure: a claim the host row cannot back. */
	ok((pre.enforced & ~want_enf) == 0, "%s: nothing claimed enforced without its mechanism", what);
	if (pre.enforced & ~want_enf) {
		n_false_enforced++;
		printf("#   FALSE ENFORCED: %s\n", set_text(pre.enforced & ~want_enf, a, sizeof(a)));
	}
	ok((want_enf & ~pre.enforced) == 0, "%s: enforces every requested property but %s", what, set_text(want_missing, a, sizeof(a)));
	if (want_enf & ~pre.enforced)
		printf("#   also missing: %s\n", set_text(want_enf & ~pre.enforced, b, sizeof(b)));
	ok(pre.reasons, "%s: every missing property has a reason", what);
	ok(pre.status == (want_missing ? MOAT_STATUS_DEGRADED : MOAT_STATUS_ENFORCED) &&
	       req.status == (want_missing ? MOAT_STATUS_UNAVAILABLE : MOAT_STATUS_ENFORCED),
	   "%s: status %s in prefer, %s in require", what, moat_status_name(pre.status), moat_status_name(req.status));
	ok(req.enforced == pre.enforced && req.requested == pre.requested && strcmp(req.backend, pre.backend) == 0,
	   "%s: the mode changes no verdict", what);
	/* docs/backends.md: where native enforces everything nothing else is
	 * looked at; elsewhere auto walks the ranking (every tool is hidden),
	 * and says for each backend why it was not chosen -- without looking
	 * for the tools of those the host rules out or that could not miss
	 * fewer (never_enforces). */
	ok(want_missing ? pre.walked : pre.tool_lookups == 0 && !pre.walked,
	   "%s: auto %s the ranking (looked for %u external tools)", what, pre.walked ? "walked" : "did not walk",
	   pre.tool_lookups);
	/* One ruleset, of the row's ABI, exactly when the row has Landlock. */
	ok(abi == 0 ? pre.ll.creates == 0 && pre.ll.rules == 0 && pre.ll.refused == 0
		    : pre.ll.creates == 1 && pre.ll.rules > 0 && pre.ll.refused == 0 &&
			  ((pre.ll.scoped != 0) == (abi >= 6)) && ((pre.ll.handled_net != 0) == (abi >= 4 && k != P_NET_ALL)),
	   "%s: landlock: %u rulesets, %u rules, %u refused, net %#llx, scoped %#llx", what, pre.ll.creates, pre.ll.rules,
	   pre.ll.refused, (unsigned long long)pre.ll.handled_net, (unsigned long long)pre.ll.scoped);
}

/* The choice's reason has a part for each backend of the ranking; from
 * libmoat (this test before it marks itself moat) the backends whose init
 * is moat's binary each give the long "from libmoat only ..." part, the
 * longest reason there is: it must arrive whole (a 1 KiB buffer once cut
 * it in the middle of a word, silently). */
static void test_reason_whole_from_libmoat(void)
{
	struct moat_policy p;
	struct moat_plan plan;
	struct moat_host h;
	struct moat_error err = {0};
	const char *end = "misses the fewest (of the file, network and environment properties first)";
	size_t len;

	make_host(&h, 0, false, false, false);
	if (parse_policy(P_STRICT, "prefer", &p, &err) < 0) {
		ok(0, "policy: %s", err.message);
		return;
	}
	fake_landlock_reset(0);
	hide_tools = true;
	if (plan_build(&p, &h, &plan, &err) < 0) {
		hide_tools = false;
		ok(0, "plan: %s", err.message);
		policy_free(&p);
		return;
	}
	hide_tools = false;
	len = strlen(plan.backend_reason);
	ok(len > strlen(end) && strcmp(plan.backend_reason + len - strlen(end), end) == 0 &&
	       strstr(plan.backend_reason, "from libmoat only"),
	   "from libmoat, nothing but native: the reason (%zu bytes) arrives whole", len);
	plan_free(&plan);
	policy_free(&p);
}

/* never_enforces (backend.h) lets `auto` skip a backend without looking
 * for its tool: what it names must be missing whenever that backend is
 * compiled -- a bit it could enforce would make auto skip a backend that
 * was better.  Each backend that declares one and runs from libmoat is
 * compiled (the decoy in PATH is its tool; nothing runs) for every host
 * and policy of the matrix. */
static void test_never_enforces_holds(void)
{
	static const char *const names[] = {"firejail", "nono"};

	for (size_t b = 0; b < sizeof(names) / sizeof(names[0]); b++) {
		const struct moat_backend *be = backend_lookup(names[b]);
		unsigned plans = 0, broken = 0, claimed = 0, compiled = 0;
		char first[300] = "";

		if (!be || !be->never_enforces) {
			ok(0, "%s declares never_enforces", names[b]);
			continue;
		}
		for (int k = 0; k < P__COUNT; k++)
			for (int abi = 0; abi <= 7; abi++)
				for (int bits = 0; bits < 8; bits++) {
					struct moat_policy p;
					struct moat_plan plan;
					struct moat_host h;
					struct moat_error err = {0};
					uint32_t never;

					make_host(&h, abi, bits & 1, (bits >> 1) & 1, (bits >> 2) & 1);
					if (parse_policy((enum policy_kind)k, "prefer", &p, &err) < 0) {
						broken++;
						continue;
					}
					free(p.backend);
					p.backend = strdup(names[b]);
					never = be->never_enforces(&p);
					fake_landlock_reset(abi);
					if (plan_build(&p, &h, &plan, &err) < 0) {
						broken++;
						policy_free(&p);
						continue;
					}
					plans++;
					compiled += plan.compiled.argv != NULL;
					for (int i = 0; i < MOAT_P__COUNT; i++)
						if ((never & MOAT_PBIT(i)) && plan.props[i].requested &&
						    plan.props[i].enforced) {
							if (!claimed++)
								snprintf(first, sizeof(first), "%s, landlock %d, bits %d: %s",
									 policy_names[k], abi, bits,
									 moat_property_name((enum moat_property)i));
						}
					plan_free(&plan);
					policy_free(&p);
				}
		ok(broken == 0 && plans == P__COUNT * 8 * 8 && compiled * 2 >= plans && claimed == 0,
		   "%s: what never_enforces names is missing in each of its %u plans, %u with an argv (%u enforced "
		   "anyway%s%s; %u failed to plan)",
		   names[b], plans, compiled, claimed, claimed ? ", first: " : "", first, broken);
	}
}

/* A control: the fake kernel is what the rows' Landlock rests on, so a
 * ruleset it refuses must fail the plan -- a plan that claimed Landlock the
 * kernel refused would be a false enforced of its own. */
static void test_fake_kernel_is_asked(void)
{
	struct moat_policy p;
	struct moat_plan plan;
	struct moat_host h;
	struct moat_error err = {0};
	int rc;

	make_host(&h, 6, false, true, false);
	if (parse_policy(P_STRICT, "prefer", &p, &err) < 0) {
		ok(0, "policy for the control: %s", err.message);
		return;
	}
	fake_landlock_reset(3); /* the row says 6, the kernel has 3 */
	hide_tools = true;
	rc = plan_build(&p, &h, &plan, &err);
	hide_tools = false;
	ok(rc < 0 && fake_landlock_log.refused > 0,
	   "control: a row claiming more Landlock than the (fake) kernel has fails to plan (%s; %s)",
	   rc < 0 ? err.message : "planned", fake_landlock_log.first_refusal);
	if (rc == 0)
		plan_free(&plan);
	policy_free(&p);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# uid %d\n", (int)geteuid());
	make_dirs();
	if (setenv("HOME", dir_home, 1) || setenv("PATH", dir_path, 1) || chdir(tmp_root)) {
		printf("Bail out! environment: %s\n", strerror(errno));
		return 1;
	}
	test_reason_whole_from_libmoat();
	/* As the moat program: the backends whose init is moat's own binary
	 * are then looked for and compiled as moat would (nothing runs). */
	moatbin_mark_self();
	test_table_covers_the_matrix();
	for (int k = 0; k < P__COUNT; k++)
		for (int abi = 0; abi <= 7; abi++)
			for (int bits = 0; bits < 8; bits++)
				check_host((enum policy_kind)k, abi, bits & 1, (bits >> 1) & 1, (bits >> 2) & 1);
	test_fake_kernel_is_asked();
	test_never_enforces_holds();
	printf("# %u hosts with a false enforced\n", n_false_enforced);
	remove_private_tmps();
	if (chdir("/") == 0)
		rmtree(tmp_root);
	return tap_done();
}
