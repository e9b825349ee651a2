/* The checks only `moat probe` makes (host/trials.h): they fork, and try
 * in the child what the native backend would do. */
#include "host/trials.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/userns.h"

/* Run fn in a forked child; it returns 0 or an errno and writes what it was
 * doing to `step`.  Returns that errno (0: success); the step comes back
 * through a pipe. */
struct trial {
	char step[64];
};

static int run_trial(int (*fn)(const struct moat_host *, struct trial *), const struct moat_host *h,
		     struct trial *t)
{
	int fds[2], status = 0, e;
	pid_t pid;
	ssize_t n;

	snprintf(t->step, sizeof(t->step), "fork");
	if (pipe2(fds, O_CLOEXEC) < 0)
		return errno;
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(fds[0]);
		close(fds[1]);
		return e;
	}
	if (pid == 0) {
		struct trial mine = {{0}};
		int rc;

		close(fds[0]);
		rc = fn(h, &mine);
		if (write(fds[1], mine.step, strlen(mine.step)) < 0)
			_exit(255);
		_exit(rc > 0 && rc < 255 ? rc : (rc ? 254 : 0));
	}
	close(fds[1]);
	n = read(fds[0], t->step, sizeof(t->step) - 1);
	t->step[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return EINTR;
}

static int trial_userns(const struct moat_host *h, struct trial *t)
{
	(void)h;
	snprintf(t->step, sizeof(t->step), "unshare(CLONE_NEWUSER)");
	return unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
}

/* In the child: the first namespace the native backend makes. */
static int trial_unshare(const struct moat_host *h, struct trial *t)
{
	snprintf(t->step, sizeof(t->step), "unshare(%s)", h->userns ? "CLONE_NEWUSER" : "CLONE_NEWNS");
	return unshare(h->userns ? CLONE_NEWUSER : CLONE_NEWNS) == 0 ? 0 : errno;
}

static void explain_unshare(int e, const char *step, char *why, size_t len)
{
	const char *more = "";

	if (e == EPERM)
		more = " (refused by a sysctl, an LSM such as AppArmor, or a container's seccomp profile)";
	else if (e == ENOSPC)
		more = " (user.max_user_namespaces or another namespace limit is reached)";
	else if (e == EINVAL)
		more = " (the kernel lacks this namespace type)";
	snprintf(why, len, "%s: %s%s", step, strerror(e), more);
}

bool host_try_userns(const struct moat_host *h, char *why, size_t len)
{
	struct trial t;
	int e;

	if (!h->userns) {
		snprintf(why, len, "%s", h->userns_why);
		return false;
	}
	e = run_trial(trial_userns, h, &t);
	if (e) {
		explain_unshare(e, t.step, why, len);
		return false;
	}
	why[0] = '\0';
	return true;
}

/* In the child: the namespaces the native backend would make, then, as pid
 * 1 of the new pid namespace, a private mount tree and a fresh /proc.  The
 * mount is made in the child's own mount namespace: the host's /proc is
 * never touched. */
static int trial_proc(const struct moat_host *h, struct trial *t)
{
	int flags = CLONE_NEWNS | CLONE_NEWPID | (h->userns ? CLONE_NEWUSER : 0);
	uid_t uid = getuid();
	gid_t gid = getgid();
	int status, e;
	pid_t pid;

	snprintf(t->step, sizeof(t->step), "unshare(%s)",
		 h->userns ? "CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID" : "CLONE_NEWNS|CLONE_NEWPID");
	if (unshare(flags) < 0)
		return errno;
	if (h->userns) {
		const char *failed;

		if ((e = userns_map_ids(uid, gid, &failed)) < 0) {
			snprintf(t->step, sizeof(t->step), "writing %s", failed);
			return -e;
		}
	}
	snprintf(t->step, sizeof(t->step), "fork into the pid namespace");
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(100);
		if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			_exit(errno < 100 ? errno : 101);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (!WIFEXITED(status))
		return EINTR;
	e = WEXITSTATUS(status);
	if (e == 100) {
		snprintf(t->step, sizeof(t->step), "making / private");
		return EPERM;
	}
	snprintf(t->step, sizeof(t->step), "mount(\"proc\", \"/proc\")");
	return e == 101 ? EIO : e;
}

bool host_try_proc_mount(const struct moat_host *h, char *how, size_t how_len, char *why, size_t len)
{
	struct trial t;
	int e;

	snprintf(how, how_len, "%s", h->userns ? "user, mount and pid namespaces" : "mount and pid namespaces (root)");
	if (!h->userns && !h->root) {
		snprintf(why, len, "needs a user namespace (%s) or root", h->userns_why);
		how[0] = '\0';
		return false;
	}
	e = run_trial(trial_proc, h, &t);
	if (e) {
		if (strncmp(t.step, "mount", 5) == 0 && (e == EPERM || e == EACCES))
			snprintf(why, len, "%s: %s (the current /proc has masked or over-mounted parts, as in "
					   "many containers, and the kernel refuses a fresh one)",
				 t.step, strerror(e));
		else
			explain_unshare(e, t.step, why, len);
		return false;
	}
	why[0] = '\0';
	return true;
}

void host_check_ns_under_filter(struct moat_host *h)
{
	struct trial t;
	int e;

	if ((!h->userns && !h->root) || prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
		return;
	if (h->userns && (e = run_trial(trial_unshare, h, &t)) != 0) {
		h->userns = false;
		h->userns_filtered = true;
		snprintf(h->userns_why, sizeof(h->userns_why),
			 "a seccomp filter moat runs under (a container's profile, or moat inside moat) refuses %s: %s",
			 t.step, strerror(e));
	}
	if (h->root && !h->userns && (e = run_trial(trial_unshare, h, &t)) != 0) {
		h->root = false;
		h->userns_filtered = true;
		snprintf(h->userns_why, sizeof(h->userns_why),
			 "a seccomp filter moat runs under (a container's profile, or moat inside moat) refuses %s: %s",
			 t.step, strerror(e));
	}
}
