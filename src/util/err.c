#include "util/err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/mem.h"

/* What an errno says, in the message.  Running out of descriptors is the
 * cause itself, not a property of the path being opened when it happened:
 * said so, with the limit.  `buf` holds the text when it is made here. */
static const char *errno_text(int errnum, char *buf, size_t len)
{
	struct rlimit rl;

	if (errnum == EMFILE) {
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			snprintf(buf, len, "moat ran out of file descriptors (RLIMIT_NOFILE %llu)",
				 (unsigned long long)rl.rlim_cur);
		else
			snprintf(buf, len, "moat ran out of file descriptors (RLIMIT_NOFILE)");
		return buf;
	}
	if (errnum == ENFILE) {
		snprintf(buf, len, "the system ran out of file descriptors (ENFILE: the kernel's fs.file-max is reached)");
		return buf;
	}
	return strerror(errnum);
}

bool moat_errno_is_fd_exhaustion(int errnum)
{
	return errnum == EMFILE || errnum == ENFILE;
}

bool moat_errno_out_of_resources(int errnum)
{
	return moat_errno_is_fd_exhaustion(errnum) || errnum == ENOMEM;
}

bool moat_errno_cannot_make(int errnum)
{
	return errnum == EROFS || errnum == EACCES || errnum == EPERM || errnum == ENOSPC || errnum == EDQUOT ||
	       errnum == ENOENT;
}

const char *moat_errno_fd_hint(int errnum)
{
	if (errnum == ENFILE)
		return "every process on this host shares that table: close programs that hold many files, or raise "
		       "fs.file-max (sysctl -w fs.file-max=N, as root)";
	if (errnum == EMFILE)
		return "raise the limit (ulimit -n N; moat raises its soft limit to the hard one itself, so the hard "
		       "limit, ulimit -Hn, is what counts) or grant fewer paths: moat holds a descriptor for each "
		       "path of the policy while it sets up, and a few for each repository in a write grant and each "
		       "submodule (grant one project rather than a folder of them, or --unprotect .git/modules)";
	return NULL;
}

/* Here `head` or `tail` holds the cause (the errno's text). */
void moat_text_fit(char *out, size_t len, const char *head, const char *body, const char *tail)
{
	size_t hl = strlen(head), bl = strlen(body), tl = strlen(tail);
	char mark[48];
	size_t keep, front, back, ml;

	if (hl + bl + tl < len) {
		snprintf(out, len, "%s%s%s", head, body, tail);
		return;
	}
	snprintf(mark, sizeof(mark), "[... %zu bytes ...]", bl);
	ml = strlen(mark);
	if (hl + tl + ml + 2 >= len) { /* no room for the body at all */
		snprintf(out, len, "%s%s%s", head, mark, tail);
		return;
	}
	keep = len - 1 - hl - tl - ml;
	front = keep * 3 / 5;
	back = keep - front;
	while (front > 0 && ((unsigned char)body[front] & 0xC0) == 0x80)
		front--;
	while (back > 0 && ((unsigned char)body[bl - back] & 0xC0) == 0x80)
		back--;
	snprintf(mark, sizeof(mark), "[... %zu bytes ...]", bl - front - back);
	snprintf(out, len, "%s%.*s%s%s%s", head, (int)front, body, mark, body + bl - back, tail);
}

/* The cause's text at the start of an fd-exhaustion message, or the
 * errno's at its end: the part of the message that must survive. */
static void cause_parts(const struct moat_error *err, const char *msg, size_t *head, size_t *tail)
{
	char buf[160];
	const char *t;
	size_t n, len = strlen(msg);

	*head = *tail = 0;
	if (err->errnum == 0)
		return;
	t = errno_text(err->errnum, buf, sizeof(buf));
	n = strlen(t);
	if (moat_errno_is_fd_exhaustion(err->errnum)) {
		if (strncmp(msg, t, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
			*head = n + 2;
	} else if (len >= n + 2 && strcmp(msg + len - n, t) == 0 && strncmp(msg + len - n - 2, ": ", 2) == 0) {
		*tail = n + 2;
	}
}

static void inherited_hint(struct moat_error *err);

int moat_error_set(struct moat_error *err, enum moat_error_kind kind, int errnum, const char *fmt, ...)
{
	char *what = NULL, cause[160];
	va_list ap;
	int n;

	err->kind = kind;
	err->errnum = errnum;
	err->hint[0] = '\0';
	va_start(ap, fmt);
	n = vasprintf(&what, fmt, ap);
	va_end(ap);
	if (n < 0) {
		what = NULL;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
		return -1;
	}
	if (errnum == 0) {
		moat_text_fit(err->message, sizeof(err->message), "", what, "");
	} else if (moat_errno_is_fd_exhaustion(errnum)) {
		/* The cause first: what was being opened is only where. */
		char head[176];

		snprintf(head, sizeof(head), "%s: ", errno_text(errnum, cause, sizeof(cause)));
		moat_text_fit(err->message, sizeof(err->message), head, what, "");
		snprintf(err->hint, sizeof(err->hint), "%s", moat_errno_fd_hint(errnum));
		inherited_hint(err);
	} else {
		char tail[176];

		snprintf(tail, sizeof(tail), ": %s", errno_text(errnum, cause, sizeof(cause)));
		moat_text_fit(err->message, sizeof(err->message), "", what, tail);
	}
	free(what);
	return -1;
}

int moat_error_hint(struct moat_error *err, const char *fmt, ...)
{
	va_list ap;

	/* A caller's hint is about what it was doing; out of descriptors,
	 * the descriptor hint is the one that helps (moat_error_fd_hint
	 * replaces it with a more precise one). */
	if (moat_errno_is_fd_exhaustion(err->errnum) && err->hint[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
	return -1;
}

/* The tasks (threads included: RLIMIT_NPROC counts them) whose real uid is
 * `uid`, from /proc; -1 when /proc cannot be read.  Only on the error
 * path: a read of each process's status. */
static long tasks_of_uid(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[64], line[256];
		unsigned long ruid = 0;
		long threads = 0;
		bool mine = false;
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/status", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Uid: %lu", &ruid) == 1)
				mine = ruid == (unsigned long)uid;
			else if (sscanf(line, "Threads: %ld", &threads) == 1)
				break;
		}
		fclose(f);
		if (mine)
			n += threads > 0 ? threads : 1;
	}
	closedir(d);
	return n;
}

int moat_error_hint_nproc(struct moat_error *err)
{
	struct rlimit rl;
	long tasks;

	if (err->errnum != EAGAIN || getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    getuid() == 0)
		return -1;
	tasks = tasks_of_uid(getuid());
	if (tasks >= 0 && (rlim_t)tasks + 2 < rl.rlim_cur)
		return -1; /* not this limit: a cgroup's pids.max, threads-max */
	if (tasks < 0) /* /proc unreadable: the limit alone */
		return moat_error_hint(err,
				       "this user's process limit is %llu (RLIMIT_NPROC, ulimit -u), which its "
				       "processes and threads may have reached: end some, or raise it (ulimit -u; "
				       "LimitNPROC= for a service)",
				       (unsigned long long)rl.rlim_cur);
	return moat_error_hint(err,
			       "this user's process limit is %llu (RLIMIT_NPROC, ulimit -u) and %ld of its processes "
			       "and threads run: end some, or raise it (ulimit -u; LimitNPROC= for a service)",
			       (unsigned long long)rl.rlim_cur, tasks);
}

/* Descriptors above stdio without close-on-exec: moat opens every one of
 * its own with it, so these came from its caller, across exec.  Counted
 * only on the error path (one fcntl each, up to the soft limit). */
static size_t inherited_fds(void)
{
	struct pollfd batch[256];
	struct rlimit rl;
	size_t n = 0;
	int base, max, i, cnt;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	max = rl.rlim_cur > (1 << 20) ? (1 << 20) : (int)rl.rlim_cur;
	/* Out of descriptors, none can be opened to list /proc/self/fd: which
	 * numbers are open, poll(2) says 256 at a time (POLLNVAL: closed).
	 * An fcntl on each number up to the soft limit (moat raised it, up to
	 * 2^20) made an EMFILE that was not the limit's (injected by
	 * tests/blackbox/fault_opens.sh) take 1.5 s under strace; now 0.07. */
	for (base = 3; base < max; base += cnt) {
		cnt = max - base < 256 ? max - base : 256;
		for (i = 0; i < cnt; i++)
			batch[i] = (struct pollfd){.fd = base + i};
		if (poll(batch, (nfds_t)cnt, 0) < 0)
			break;
		for (i = 0; i < cnt; i++) {
			int flags;

			if (batch[i].revents & POLLNVAL)
				continue;
			flags = fcntl(base + i, F_GETFD);
			if (flags >= 0 && !(flags & FD_CLOEXEC))
				n++;
		}
	}
	return n;
}

/* Out of descriptors because the caller left hundreds open: that, not
 * the plan, is what to fix. */
static void inherited_hint(struct moat_error *err)
{
	size_t n;

	if (err->errnum != EMFILE || (n = inherited_fds()) < 256)
		return;
	snprintf(err->hint, sizeof(err->hint),
		 "moat was started with %zu descriptors open that are not its own (its caller's, inherited across "
		 "exec): start moat with them closed (Python's subprocess does, with close_fds=True, its default; "
		 "mark the others close-on-exec), or raise the limit (ulimit -Hn)",
		 n);
}

int moat_error_fd_hint(struct moat_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
	inherited_hint(err);
	return -1;
}

int moat_error_wrap(struct moat_error *err, const char *fmt, ...)
{
	char old[MOAT_ERR_MSG_MAX], head[MOAT_ERR_MSG_MAX];
	char *ctx = NULL, *body = NULL;
	size_t hl, tl;
	va_list ap;
	int n;

	memcpy(old, err->message, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	va_start(ap, fmt);
	n = vasprintf(&ctx, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1; /* the message stays as it was */
	cause_parts(err, old, &hl, &tl);
	/* "context: message"; for descriptors, "cause: context: where". */
	memcpy(head, old, hl);
	head[hl] = '\0';
	if (asprintf(&body, "%s: %.*s", ctx, (int)(strlen(old) - hl - tl), old + hl) < 0) {
		free(ctx);
		return -1;
	}
	moat_text_fit(err->message, sizeof(err->message), head, body, old + strlen(old) - tl);
	free(body);
	free(ctx);
	return -1;
}

void moat_failure_text(char *buf, size_t len, const char *what, int errnum)
{
	char cause[160], part[176];

	if (errnum == 0) {
		moat_text_fit(buf, len, "", what, "");
	} else if (moat_errno_is_fd_exhaustion(errnum)) {
		snprintf(part, sizeof(part), "%s: ", errno_text(errnum, cause, sizeof(cause)));
		moat_text_fit(buf, len, part, what, "");
	} else {
		snprintf(part, sizeof(part), ": %s", errno_text(errnum, cause, sizeof(cause)));
		moat_text_fit(buf, len, "", what, part);
	}
}

/* Does `text` start with `head` and end with `tail`? */
static bool framed(const char *text, const char *head, const char *tail)
{
	size_t n = strlen(text), t = strlen(tail);

	return strncmp(text, head, strlen(head)) == 0 && n >= t && strcmp(text + n - t, tail) == 0;
}

const char *moat_failure_hint(const char *text)
{
	if (strncmp(text, "moat ran out of file descriptors", 32) == 0)
		return moat_errno_fd_hint(EMFILE);
	if (strncmp(text, "the system ran out of file descriptors", 38) == 0)
		return moat_errno_fd_hint(ENFILE);
	/* The kernel runs binaries and #! scripts; a shell runs any other
	 * executable file with sh, and moat does not guess. */
	if (framed(text, "execve ", strerror(ENOEXEC)))
		return "the file is neither a program for this machine nor a script with a #! line; a shell script "
		       "without one runs as `moat run -- sh FILE`";
	/* The file was found (moat resolved it before the run): what is
	 * missing is what it needs to start. */
	if (framed(text, "execve ", strerror(ENOENT)))
		return "the file is there: what is missing is the interpreter its #! line names, or the dynamic "
		       "loader it was linked for (`head -c 128 FILE`, `file FILE`)";
	return NULL;
}

int moat_error_exit_status(const struct moat_error *err)
{
	switch (err->kind) {
	case MOAT_E_NOEXEC:
		return 126;
	case MOAT_E_NOTFOUND:
		return 127;
	default:
		return 125;
	}
}

/* `text` escaped into `out` (4 bytes for each of its bytes, and 1).  TAB
 * too: it drives no escape sequence, but a name's TAB moves the rest of
 * the line to another column (mcp list's table) and makes two words of
 * one. */
static size_t shown_into(char *out, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = 0;

	for (size_t i = 0; s[i]; i++) {
		bool c1 = s[i] == 0xc2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f;

		if (s[i] < 0x20 || s[i] == 0x7f || c1) {
			n += (size_t)sprintf(out + n, "\\x%02x", c1 ? s[++i] : s[i]);
			continue;
		}
		out[n++] = (char)s[i];
	}
	out[n] = '\0';
	return n;
}

char *moat_text_shown(const char *text)
{
	char *out = moat_xmalloc(4 * strlen(text) + 1);

	shown_into(out, text);
	return out;
}

void moat_say(const char *head, const char *text)
{
	size_t hl = strlen(head), n;
	char *line = malloc(hl + 4 * strlen(text) + 2);

	if (!line) { /* never the text raw: that is what this is for */
		fprintf(stderr, "%s[not shown: out of memory]\n", head);
		return;
	}
	memcpy(line, head, hl);
	n = hl + shown_into(line + hl, text);
	line[n++] = '\n';
	fwrite(line, 1, n, stderr);
	free(line);
}

int moat_error_print(const struct moat_error *err)
{
	moat_say("moat: ", err->message);
	if (err->hint[0])
		moat_say("moat: hint: ", err->hint);
	return moat_error_exit_status(err);
}
