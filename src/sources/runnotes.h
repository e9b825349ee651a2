/* Source: notes said before a run about what the sandbox will hide from
 * the command that the user may not expect -- the current directory being
 * the private /tmp, or denied; a linked work tree's git directory left
 * read-only; a container engine whose daemon is out of reach; a path that
 * a declared variable names, outside every grant.  Each is one line on
 * stderr (sources/netsets.h's notes); the run goes on.  A sandbox that is
 * off hides nothing, and gets none. */
#ifndef MOAT_SOURCES_RUNNOTES_H
#define MOAT_SOURCES_RUNNOTES_H

#include "policy/policy.h"
#include "sources/netsets.h"

/* Add the notes that apply to the policy `p`, finished (after
 * policy_validate); `environ_in` is moat's environment, whose values the
 * variables that pass take. */
void run_notes_add(const struct moat_policy *p, char *const *environ_in, struct netset_notes *notes);

/* An argument of the command that is a directory of the host the sandbox
 * does not show (a run notes it; `moat mcp list` and `wrap` show it with
 * the server, whose client logs what the run says where no one looks). */
enum hidden_why {
	HIDDEN_OUTSIDE,	    /* outside every grant */
	HIDDEN_PRIVATE_TMP, /* in the sandbox's private /tmp, which starts empty */
	HIDDEN_DENIED,	    /* in a denied path: deny, from deny_source */
};
struct hidden_arg {
	char *path;	/* absolute, resolved lexically */
	char *relative; /* the argument as written, when relative (against the command's cwd); else NULL */
	char *variable; /* run_hidden_env's: the variable whose value it is */
	enum hidden_why why;
	char *deny, *deny_source; /* HIDDEN_DENIED's; else NULL */
};

/* Those of the finished policy `p`'s command, in order, into *out (freed
 * with hidden_args_free); how many. */
size_t run_hidden_args(const struct moat_policy *p, struct hidden_arg **out);
/* The paths the declared variables of `p` name that the sandbox does not
 * show (MEMORY_FILE_PATH of a client's entry), their values from the
 * policy or else `environ_in`; .variable set, .why HIDDEN_OUTSIDE or
 * HIDDEN_DENIED. */
size_t run_hidden_env(const struct moat_policy *p, char *const *environ_in, struct hidden_arg **out);
void hidden_args_free(struct hidden_arg *v, size_t n);
/* What is hidden, said of `a` ("WHOSE argument PATH ...: WHO sees nothing
 * of it", or for a variable's "WHOSE NAME names PATH ..."; malloc'd):
 * "the command's" (a variable's: ""), "the command" for a run's note,
 * "its", "the server" for a server of `moat mcp list`. */
char *hidden_arg_text(const struct hidden_arg *a, const char *whose, const char *who);

#endif
