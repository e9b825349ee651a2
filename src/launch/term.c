/* The command's terminal: see term.h. */
#include "launch/term.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void term_init(struct term *t)
{
	memset(t, 0, sizeof(*t));
	t->master = t->slave = t->in = t->out = t->outer = -1;
	t->in_fl = t->out_fl = -1;
}

/* --- moat's crash: the caller's terminal back first ---------------------
 *
 * moat blocks the signals it forwards (launch/signals.h), so only a fault
 * or a signal it neither forwards nor ignores can end it while the caller's
 * terminal is raw.  The handler puts the modes back, then lets the signal
 * do what it did before (the default, or the sanitizer's report).  SIGKILL
 * cannot be caught: the terminal then stays raw, as after `kill -9` of ssh
 * (`stty sane` or `reset` gives it back). */
static const int crash_signals[] = {SIGSEGV, SIGBUS,  SIGILL,  SIGFPE,	  SIGABRT, SIGTRAP, SIGSYS,
				    SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGPWR,  SIGSTKFLT};
static struct sigaction crash_old[ARRAY_LEN(crash_signals)];
static volatile sig_atomic_t crash_fd = -1;
static struct termios crash_modes;

static void crash_restore(int sig, siginfo_t *si, void *uc)
{
	bool fault =
	    (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS) &&
	    si->si_code > 0;
	size_t i;

	(void)uc;
	if (crash_fd >= 0)
		tcsetattr(crash_fd, TCSANOW, &crash_modes);
	for (i = 0; i < ARRAY_LEN(crash_signals); i++)
		if (crash_signals[i] == sig)
			sigaction(sig, &crash_old[i], NULL);
	/* A fault happens again on return, and goes where it went before;
	 * any other signal is raised again, pending until this returns. */
	if (!fault)
		raise(sig);
}

static void crash_arm(const struct term *t)
{
	struct sigaction sa;
	size_t i;

	if (crash_fd >= 0)
		return;
	crash_modes = t->saved;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_restore;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_LEN(crash_signals); i++)
		sigaction(crash_signals[i], &sa, &crash_old[i]);
	crash_fd = t->outer;
}

static void crash_disarm(void)
{
	size_t i;

	if (crash_fd < 0)
		return;
	crash_fd = -1;
	for (i = 0; i < ARRAY_LEN(crash_signals); i++)
		sigaction(crash_signals[i], &crash_old[i], NULL);
}

/* --- opening ------------------------------------------------------------ */

/* A description of moat's own of the caller's fd `fd`, non-blocking: a
 * terminal is opened again (O_NONBLOCK on the caller's description would
 * be the caller's shell's too); anything else is shared (a file opened
 * again would start at offset 0), made non-blocking for the run, with its
 * flags kept in *fl to put back. */
static int caller_side(int fd, int *fl, struct moat_error *err)
{
	char path[32];
	int own, flags;

	*fl = -1;
	if (isatty(fd)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		own = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (own >= 0)
			return own;
	}
	own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (own < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "the terminal's relay: fd %d", fd);
	flags = fcntl(own, F_GETFL);
	if (flags < 0 || fcntl(own, F_SETFL, flags | O_NONBLOCK) != 0) {
		close(own);
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "the terminal's relay: fd %d non-blocking", fd);
	}
	*fl = flags;
	return own;
}

static int open_pty(struct term *t, struct moat_error *err)
{
	int n;

	t->master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (t->master < 0) {
		moat_error_set(err, MOAT_E_SYSTEM, errno, "opening /dev/ptmx for the command's terminal");
		return moat_error_hint(err, "--no-tty runs the command without a terminal");
	}
	if (unlockpt(t->master) != 0 || ioctl(t->master, TIOCGPTN, &n) != 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "unlocking the command's terminal");
	snprintf(t->path, sizeof(t->path), "/dev/pts/%d", n);
	/* The other end from the master itself, not by its name. */
	t->slave = ioctl(t->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->slave < 0 && (errno == EINVAL || errno == ENOTTY))
		t->slave = open(t->path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->slave < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "opening %s, the command's terminal", t->path);
	return 0;
}

/* Is moat in the background of the terminal `fd` (its shell ran it with
 * `&`, or `bg`)?  A terminal that is not moat's controlling terminal has no
 * foreground for it. */
static bool in_background(int fd)
{
	pid_t fg = tcgetpgrp(fd);

	return fg > 0 && fg != getpgrp();
}

/* By default, a terminal when the command would be at one: moat's stdin
 * and stdout are a terminal, and moat is its foreground job.  Not for
 * `cmd | less` (the pager reads the keys: moat's relay would take them),
 * `cmd >file` or a job started in the background, which keep the caller's
 * descriptors as they are. */
static bool at_terminal(void)
{
	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !in_background(STDIN_FILENO);
}

int term_open(struct term *t, struct moat_policy *p, struct moat_error *err)
{
	struct winsize ws;
	int fd;

	if (p->tty == MOAT_TTY_OFF || p->mode == MOAT_MODE_OFF || strcmp(p->backend, "none") == 0 ||
	    (p->tty == MOAT_TTY_AUTO && !at_terminal()))
		return 0;
	if (open_pty(t, err) < 0)
		goto fail;
	t->ibuf = moat_xmalloc(TERM_IN_MAX);
	t->obuf = moat_xmalloc(TERM_OUT_MAX);
	for (fd = 0; fd <= 2; fd++)
		if (p->tty == MOAT_TTY_ON || isatty(fd))
			t->fds |= 1u << fd;
	if (isatty(STDIN_FILENO)) {
		if ((t->outer = caller_side(STDIN_FILENO, &t->in_fl, err)) < 0)
			goto fail;
		t->in = t->outer;
		/* The command's terminal starts as the caller's is now: its
		 * characters (erase, interrupt), its modes, its size. */
		if (tcgetattr(t->outer, &t->saved) != 0 || tcsetattr(t->slave, TCSANOW, &t->saved) != 0) {
			moat_error_set(err, MOAT_E_SYSTEM, errno, "copying the terminal's modes to %s", t->path);
			goto fail;
		}
		if (ioctl(t->outer, TIOCGWINSZ, &ws) == 0)
			ioctl(t->master, TIOCSWINSZ, &ws);
	} else if ((t->in = caller_side(STDIN_FILENO, &t->in_fl, err)) < 0) {
		goto fail;
	}
	/* The output goes where the command's stdout would have gone (the
	 * pty is its stdout whenever it gets one). */
	if ((t->out = caller_side(STDOUT_FILENO, &t->out_fl, err)) < 0)
		goto fail;
	t->out_tty = isatty(t->out);
	policy_set_terminal(p, t->path);
	return 0;
fail:
	term_close(t);
	return -1;
}

static void put_back(int *fd, int *fl)
{
	if (*fd >= 0 && *fl >= 0)
		fcntl(*fd, F_SETFL, *fl);
	*fl = -1;
}

void term_close(struct term *t)
{
	term_restore(t);
	put_back(&t->in, &t->in_fl);
	put_back(&t->out, &t->out_fl);
	if (t->in != t->outer)
		moat_closep(&t->in);
	moat_closep(&t->outer);
	moat_closep(&t->out);
	moat_closep(&t->slave);
	moat_closep(&t->master);
	free(t->ibuf);
	free(t->obuf);
	term_init(t);
}

void term_child_has_it(struct term *t)
{
	moat_closep(&t->slave);
	t->slave = -1;
}

/* --- modes and size ------------------------------------------------------ */

static bool is_line_end(const struct termios *ti, cc_t c)
{
	return c == '\n' || (c != _POSIX_VDISABLE && (c == ti->c_cc[VEOL] || c == ti->c_cc[VEOL2]));
}

/* Before the caller's terminal goes raw, what its line discipline holds
 * ready in canonical mode is taken as typed: whole lines, and the end of
 * file a Ctrl-D makes.  Left there, an end of file became a NUL byte once
 * the terminal was raw (the kernel keeps it as one, ending the line), and
 * the command read "\0" instead of its end of file: `script -qc "moat run
 * -- cat" </dev/null` hung, where script's Ctrl-D came before moat was
 * raw.  A line a Ctrl-D ended (no newline), and an empty one (a read of 0),
 * give the pty a VEOF after it, as the same keys typed once raw would.
 * What is ready is known without blocking: poll's POLLIN in canonical mode
 * means a whole line or an end of file; a hang-up stops it. */
static void take_cooked_input(struct term *t)
{
	cc_t eof = t->saved.c_cc[VEOF];

	if (!(t->saved.c_lflag & ICANON))
		return;
	while (t->ilen + 1 < TERM_IN_MAX) {
		struct pollfd pfd = {.fd = t->outer, .events = POLLIN};
		size_t room = TERM_IN_MAX - 1 - t->ilen;
		ssize_t n;

		if (poll(&pfd, 1, 0) != 1 || (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) || !(pfd.revents & POLLIN))
			return;
		n = read(t->outer, t->ibuf + t->ilen, room);
		if (n < 0)
			return;
		t->ilen += (size_t)n;
		/* A whole line read ends in its end-of-line character. */
		if ((size_t)n < room && eof != _POSIX_VDISABLE &&
		    (n == 0 || !is_line_end(&t->saved, (cc_t)t->ibuf[t->ilen - 1])))
			t->ibuf[t->ilen++] = (char)eof;
	}
}

void term_raw(struct term *t)
{
	struct termios raw;

	if (!term_active(t) || t->outer < 0 || t->raw)
		return;
	/* In the background (`bg`) the terminal is the shell's: moat leaves
	 * its modes and does not read it, and takes it again when it is the
	 * foreground job once more (fg: SIGCONT, launch.c). */
	if (in_background(t->outer))
		return;
	take_cooked_input(t);
	raw = t->saved;
	cfmakeraw(&raw);
	crash_arm(t);
	/* The caller's terminal no longer makes signals, echoes or edits:
	 * the bytes go to the pty, whose line discipline does all of it. */
	if (tcsetattr(t->outer, TCSANOW, &raw) == 0)
		t->raw = true;
	else
		crash_disarm();
	term_winsize(t);
}

void term_restore(struct term *t)
{
	if (!t || !t->raw)
		return;
	tcsetattr(t->outer, TCSANOW, &t->saved);
	t->raw = false;
	crash_disarm();
}

bool term_winsize(struct term *t)
{
	struct winsize now, was;
	pid_t sid;
	int from = t->outer >= 0 ? t->outer : t->out;

	if (!term_active(t) || ioctl(from, TIOCGWINSZ, &now) != 0 || ioctl(t->master, TIOCGWINSZ, &was) != 0)
		return false;
	if (now.ws_row == was.ws_row && now.ws_col == was.ws_col && now.ws_xpixel == was.ws_xpixel &&
	    now.ws_ypixel == was.ws_ypixel)
		return false;
	/* The kernel sends SIGWINCH to the pty's foreground process group. */
	ioctl(t->master, TIOCSWINSZ, &now);
	return ioctl(t->master, TIOCGSID, &sid) == 0;
}

/* --- the relay ------------------------------------------------------------ */

void term_pollfds(const struct term *t, struct pollfd *pfd)
{
	short m = 0;

	memset(pfd, 0, TERM_POLLFDS * sizeof(*pfd));
	pfd[0].fd = pfd[1].fd = pfd[2].fd = -1;
	if (!term_active(t))
		return;
	if (!t->in_eof && t->ilen < TERM_IN_MAX && (t->raw || t->outer < 0))
		pfd[0] = (struct pollfd){.fd = t->in, .events = POLLIN};
	if (!t->master_eof) {
		if (t->olen < TERM_OUT_MAX)
			m |= POLLIN;
		if (t->ilen || (t->in_eof && t->eof_chars))
			m |= POLLOUT;
		if (m)
			pfd[1] = (struct pollfd){.fd = t->master, .events = m};
	}
	if (t->olen && !t->out_dead)
		pfd[2] = (struct pollfd){.fd = t->out, .events = POLLOUT};
}

/* Does the process `pid` leave SIGTSTP to its default action (stop)? */
static bool stops_on_tstp(pid_t pid)
{
	char path[64], buf[4096];
	unsigned long long ign = 0, cgt = 0, bit = 1ULL << (SIGTSTP - 1);
	const char *at;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	if ((at = strstr(buf, "\nSigIgn:")))
		ign = strtoull(at + 8, NULL, 16);
	if ((at = strstr(buf, "\nSigCgt:")))
		cgt = strtoull(at + 8, NULL, 16);
	return !((ign | cgt) & bit);
}

/* The signal characters the caller typed that no process group would get
 * from the pty.  Ctrl-C and Ctrl-\ still go to the pty (its echo, its
 * flush); a Ctrl-Z moat acts on is taken out of `buf` (*n shrinks): its echo
 * would come only once moat is continued, in the middle of the shell's
 * line.
 *   - No session has the pty as its terminal (a tool backend: bwrap's,
 *     runc's own setsid leaves the command without one): moat sends the
 *     signal, as it did for the caller's terminal's own.
 *   - Ctrl-Z while the session's leader is in the foreground: its process
 *     group has no parent in the session (an orphaned group), so the
 *     kernel drops a SIGTSTP that would stop it.  Where that is the
 *     default action (a command run directly, not a shell, which ignores
 *     it, nor a program that catches it), moat stops the job as Ctrl-Z at
 *     the caller's terminal would have: the tree, then itself. */
static unsigned typed_signals(const struct term *t, char *buf, size_t *n)
{
	struct termios ti;
	pid_t sid, fg;
	unsigned typed = 0;
	size_t i, kept = 0;

	if (tcgetattr(t->master, &ti) != 0 || !(ti.c_lflag & ISIG))
		return 0;
	for (i = 0; i < *n; i++) {
		cc_t c = (cc_t)buf[i];

		if (c == _POSIX_VDISABLE)
			continue;
		if (c == ti.c_cc[VSUSP])
			typed |= TERM_DO_STOP;
		else if (c == ti.c_cc[VINTR])
			typed |= TERM_DO_SIGINT;
		else if (c == ti.c_cc[VQUIT])
			typed |= TERM_DO_SIGQUIT;
	}
	if (!typed)
		return 0;
	if (ioctl(t->master, TIOCGSID, &sid) == 0)
		typed =
		    (typed & TERM_DO_STOP) && ioctl(t->master, TIOCGPGRP, &fg) == 0 && fg == sid && stops_on_tstp(sid)
			? TERM_DO_STOP
			: 0;
	for (i = 0; (typed & TERM_DO_STOP) && i < *n; i++)
		if ((cc_t)buf[i] != ti.c_cc[VSUSP])
			buf[kept++] = buf[i];
	if (typed & TERM_DO_STOP)
		*n = kept;
	return typed;
}

static void to_pty(struct term *t)
{
	ssize_t n;

	if (t->ilen) {
		n = write(t->master, t->ibuf, t->ilen);
		if (n > 0) {
			t->last_typed = t->ibuf[n - 1];
			memmove(t->ibuf, t->ibuf + n, t->ilen - (size_t)n);
			t->ilen -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			t->ilen = 0; /* the pty is gone: nobody reads it */
		}
	}
	/* The caller's stdin ended (--tty with a pipe or a file): end of file
	 * for a reader of the pty, as Ctrl-D at a terminal gives it -- twice
	 * after a line without its newline, whose first VEOF only ends the
	 * line. */
	if (!t->ilen && t->in_eof && t->eof_chars < 0)
		t->eof_chars = t->last_typed && t->last_typed != '\n' ? 2 : 1;
	while (!t->ilen && t->in_eof && t->eof_chars > 0) {
		struct termios ti;

		if (tcgetattr(t->master, &ti) != 0 || !(ti.c_lflag & ICANON) || ti.c_cc[VEOF] == _POSIX_VDISABLE) {
			t->eof_chars = 0;
			break;
		}
		if (write(t->master, &ti.c_cc[VEOF], 1) != 1)
			break;
		t->eof_chars--;
	}
}

/* Would the kernel stop a job that wrote to `out` now (moat in the
 * background of a terminal set to `stty tostop`)? */
static bool output_must_stop(const struct term *t)
{
	struct termios ti;

	return t->out_tty && !t->bg_output_ok && in_background(t->out) && tcgetattr(t->out, &ti) == 0 &&
	       (ti.c_lflag & TOSTOP);
}

void term_bg_output_ok(struct term *t)
{
	t->bg_output_ok = true;
}

unsigned term_relay(struct term *t, const struct pollfd *pfd)
{
	unsigned todo = 0;
	ssize_t n;

	if (!term_active(t))
		return 0;
	if (pfd[0].fd >= 0 && pfd[0].revents) {
		n = read(t->in, t->ibuf + t->ilen, TERM_IN_MAX - t->ilen);
		if (n > 0) {
			size_t got = (size_t)n;

			todo = typed_signals(t, t->ibuf + t->ilen, &got);
			t->ilen += got;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			/* End of file, or the terminal hung up (EIO). */
			t->in_eof = true;
			t->eof_chars = t->outer >= 0 ? 0 : -1;
		}
	}
	/* What was typed reaches the pty before moat acts on a signal
	 * character in it. */
	if (t->ilen || (t->in_eof && t->eof_chars))
		to_pty(t);
	if (pfd[1].fd >= 0 && pfd[1].revents) {
		n = read(t->master, t->obuf + t->olen, TERM_OUT_MAX - t->olen);
		if (n > 0) {
			t->olen += (size_t)n;
			t->last_io_ns = now_ns();
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			/* EIO: no process holds the other end any more; what they
			 * wrote was read before this. */
			t->master_eof = true;
		}
	}
	if (t->olen && t->out_dead)
		t->olen = 0;
	if (t->olen && output_must_stop(t))
		return todo | TERM_DO_TTOU;
	if (t->olen) {
		n = write(t->out, t->obuf, t->olen);
		if (n > 0) {
			memmove(t->obuf, t->obuf + n, t->olen - (size_t)n);
			t->olen -= (size_t)n;
			t->last_io_ns = now_ns();
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			t->out_dead = true; /* the caller's side is gone (EIO, EPIPE) */
			t->olen = 0;
		}
	}
	return todo;
}

bool term_drained(const struct term *t)
{
	return !term_active(t) || (t->master_eof && !t->olen);
}
