/* For the unit tests that run a sandbox of their own on the real kernel
 * (test_netfence, test_netproxy): what the sandbox process reports to the
 * host side over a pipe (results, comments, a skip, the end, and kinds of
 * the test's own from REC_OWN on), which prints them as TAP; and lo
 * brought up in a new network namespace.  After tap.h. */
#ifndef MOAT_TESTS_NSBOX_H
#define MOAT_TESTS_NSBOX_H

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/userns.h"

enum rec_kind { REC_RESULT, REC_COMMENT, REC_DONE, REC_SKIP, REC_OWN };
struct rec {
	int kind, ok;
	char msg[240];
};
static int res_fd = -1;

static void report(int kind, int okv, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(int kind, int okv, const char *fmt, ...)
{
	struct rec r = {.kind = kind, .ok = okv};
	va_list ap;
	ssize_t unused;

	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	unused = write(res_fd, &r, sizeof(r));
	(void)unused;
}
#define check(cond, ...) report(REC_RESULT, !!(cond), __VA_ARGS__)

/* On the host side: print a record that is TAP (a result, a comment, a
 * skip: *skipped set), and return its kind for the caller's own. */
static inline int rec_print(struct rec *r, bool *skipped)
{
	r->msg[sizeof(r->msg) - 1] = '\0';
	if (r->kind == REC_RESULT)
		ok(r->ok, "%s", r->msg);
	else if (r->kind == REC_COMMENT)
		printf("# %s\n", r->msg);
	else if (r->kind == REC_SKIP) {
		ok(1, "# SKIP %s", r->msg);
		*skipped = true;
	}
	return r->kind;
}

static inline void lo_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		(void)ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	if (s >= 0)
		close(s);
}

/* In the sandbox process: new namespaces (CLONE_NEWUSER and the others
 * in `flags`), the ids mapped to themselves, lo up.  Where user namespaces
 * cannot be made, the whole run is a skip: reported, and the process
 * ends. */
static inline void nsbox_enter(int flags, uid_t uid, gid_t gid)
{
	const char *failed;
	int rc;

	if (unshare(CLONE_NEWUSER | flags) < 0) {
		report(REC_SKIP, 1, "no user namespace: %s", strerror(errno));
		_exit(0);
	}
	if ((rc = userns_map_ids(uid, gid, &failed)) < 0) {
		report(REC_SKIP, 1, "writing %s: %s", failed, strerror(-rc));
		_exit(0);
	}
	lo_up();
}

#endif
