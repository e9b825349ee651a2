/* The command's terminal (issue 20, item 1; docs/architecture.md, "A
 * terminal of its own").
 *
 * When moat runs at a terminal -- its stdin and stdout are one, and it is
 * the terminal's foreground job -- or with --tty, the command gets a pty of
 * its own: the pty's other end is the command's fds that were the caller's
 * terminal (all three with --tty), and, under moat's in-child program, its
 * controlling terminal in the session it leads.  moat relays between the
 * caller's terminal and the pty in its poll loop, with the caller's terminal
 * in raw mode for the run: the pty's line discipline then makes Ctrl-C,
 * Ctrl-Z and Ctrl-\ the signals of the command's foreground process group,
 * as a terminal does.  TIOCSTI inside reaches only the pty.  Without a
 * terminal nothing of this exists: the command's stdio is the caller's, with
 * no relay (design.md: "no relay unless a feature needs one"). */
#ifndef MOAT_LAUNCH_TERM_H
#define MOAT_LAUNCH_TERM_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

#include "policy/policy.h"
#include "util/err.h"

#define TERM_IN_MAX  4096
#define TERM_OUT_MAX 16384

struct term {
	int master;    /* moat's side of the pty; -1: the command gets no terminal */
	int slave;     /* the command's side, until the child has it (term_child_has_it) */
	char path[64]; /* the pty's path, /dev/pts/N */
	unsigned fds;  /* bit i: the command's fd i is the pty */
	/* The caller's side: read from `in`, the pty's output written to `out`.
	 * Each a description of moat's own where it can be (a terminal,
	 * opened again), made non-blocking; where it is the caller's (a pipe
	 * under --tty), its flags to put back are in in_fl and out_fl, else -1. */
	int in, out;
	int in_fl, out_fl;
	int outer;		/* the caller's terminal (stdin), or -1 */
	struct termios saved;	/* its modes before the run */
	bool raw;		/* it is in raw mode now */
	char *ibuf; /* typed, for the pty (TERM_IN_MAX bytes; allocated with the pty:
		     * a run without one keeps these 20 KB off its stack) */
	size_t ilen;
	char *obuf; /* the pty's output, for the caller (TERM_OUT_MAX bytes) */
	size_t olen;
	bool in_eof;	      /* nothing more to read from `in` */
	int eof_chars;	      /* VEOF characters still to send the pty after in_eof
			       * (-1: not counted yet) */
	char last_typed;      /* the last byte written to the pty */
	bool master_eof;      /* every holder of the pty's other end has closed it */
	bool out_dead;	      /* `out` fails: the pty's output is read and dropped */
	long long last_io_ns; /* the last byte read from the pty or written out */
	bool out_tty;	      /* `out` is a terminal */
	bool bg_output_ok;    /* output due from the background is written: the
			       * job could not be stopped for it */
};

/* What the relay asks moat's loop to do (term_relay): the caller typed a
 * character the pty cannot turn into its signal, since no process group
 * would get it (term.c, typed_signals). */
enum {
	TERM_DO_STOP = 1u << 0,	   /* stop the job: moat and the tree (Ctrl-Z) */
	TERM_DO_SIGINT = 1u << 1,  /* Ctrl-C */
	TERM_DO_SIGQUIT = 1u << 2, /* Ctrl-\ */
	/* Output is due on the caller's terminal, moat is in its background
	 * and it says `stty tostop`: stop the job, as the kernel stops a
	 * background job that writes there (SIGTTOU); moat holds SIGTTOU, so
	 * the kernel stops neither moat nor the tree for it.  Nothing is
	 * written until then; where the job cannot stop, term_bg_output_ok. */
	TERM_DO_TTOU = 1u << 3,
};

/* Nothing open. */
void term_init(struct term *t);

/* Decide, and when the command gets a terminal, make its pty, copy the
 * caller's terminal's modes and size to it, and name it in the policy
 * (policy_set_terminal).  Never for an unsandboxed run (mode off, --backend
 * none), where the command has the caller's terminal itself. */
int term_open(struct term *t, struct moat_policy *p, struct moat_error *err);

/* Everything closed, the caller's terminal and descriptors as they were. */
void term_close(struct term *t);

/* The child has the pty: moat's copy of the command's end is closed, so that
 * the pty hangs up when the last process inside closes it. */
void term_child_has_it(struct term *t);

/* The caller's terminal in raw mode (for the run), and back (before moat
 * stops, and at every end; also on a crash of moat, by a signal handler).
 * Both do nothing without a terminal; term_raw also copies the size. */
void term_raw(struct term *t);
void term_restore(struct term *t);

/* The caller's terminal's size to the pty.  True when the pty's session
 * got SIGWINCH from the kernel for it; false when moat must forward it
 * (no session has the pty as its terminal, or the size did not change). */
bool term_winsize(struct term *t);

/* The three pollfds of the relay (fd -1 where there is nothing to wait
 * for), in pfd[0..2]. */
#define TERM_POLLFDS 3
void term_pollfds(const struct term *t, struct pollfd *pfd);

/* Move what can move without blocking; TERM_DO_* for moat's loop. */
unsigned term_relay(struct term *t, const struct pollfd *pfd);

/* The job could not be stopped for output due from the background (an
 * orphaned process group, a tree moat cannot stop): it is written, as the
 * kernel writes it for a job that ignores SIGTTOU. */
void term_bg_output_ok(struct term *t);

/* All the pty's output is out (or the pty is gone and nothing waits). */
bool term_drained(const struct term *t);

static inline bool term_active(const struct term *t)
{
	return t && t->master >= 0;
}

#endif
