/* moat's seccomp rules in kafel's policy language (google/kafel), for the
 * nsjail backend: nsjail compiles a kafel policy with its own copy of kafel
 * and loads it before it executes the jail's first process.  The rules
 * come from moat_seccomp_rules(), the walker that also feeds libseccomp
 * (the BPF program native and bwrap load) and the OCI backend's
 * linux.seccomp JSON: one table, three forms.
 *
 * How kafel reads what is written here (its README and src/parser.y at
 * 76d0f41, the kafel nsjail 3.6 builds with):
 *
 *   - within a policy the first rule that matches decides, and
 *     `USE moat DEFAULT ALLOW` allows everything else.  Two of moat's rules
 *     for one call match the same arguments with different errnos in one
 *     case only: a rule that bounds a value (socket's family >= 46, which
 *     also catches a family with high bits set) and a rule that names one
 *     (AF_UNIX: EACCES).  libseccomp's program answers with the named
 *     value's rule (socket(AF_UNIX | 1 << 32): EACCES, not EAFNOSUPPORT), so
 *     the rules that only bound values (>=, >, <=, <) are written after all
 *     the others; rules of different calls never meet, and otherwise the
 *     table's order is kept;
 *   - syscalls are written as numbers, SYSCALL[N], with the name in a
 *     comment: kafel's own table need not know a call (open_tree_attr,
 *     fchmodat2 are newer than it);
 *   - arguments are declared, SYSCALL[N](a0, a1), which makes each a
 *     64-bit argument: a comparison is on all 64 bits, as libseccomp's.
 *     moat's rules already mask int arguments to their low word;
 *   - kafel kills every architecture the policy is not compiled for: an
 *     i386 call (int $0x80) is killed, as moat's program kills it.  x32
 *     calls come as x86_64 with bit 30 of the number set, and kafel has no
 *     rule for a range of numbers: the policy kills the x32 number of every
 *     call a rule names, and every x32-only number (512-547, the x32
 *     variants of ioctl, ptrace, process_vm_*, ...).  An x32 call of a
 *     syscall no rule names is allowed, as its x86_64 twin is; moat's own
 *     program kills it (docs/backends.md says so). */
#include "kernel/seccomp.h"

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/mem.h"

#define X32_SYSCALL_BIT 0x40000000u
/* The x32-only syscalls (arch/x86/entry/syscalls/syscall_64.tbl: 512
 * rt_sigaction ... 547 pwritev2). */
#define X32_ONLY_FIRST 512
#define X32_ONLY_LAST  547

struct rule_list {
	struct moat_seccomp_rule *r;
	size_t n, cap;
};

static int collect(void *arg, const struct moat_seccomp_rule *r, struct moat_error *err)
{
	struct rule_list *l = arg;

	(void)err;
	l->r = moat_xgrow(l->r, &l->cap, l->n, sizeof(*l->r));
	l->r[l->n++] = *r;
	return 0;
}

/* One comparison of argument aN, on all 64 bits. */
static int write_cmp(FILE *f, const struct moat_seccomp_arg *a, struct moat_error *err)
{
	static const struct {
		enum scmp_compare op;
		const char *symbol;
	} ops[] = {{SCMP_CMP_NE, "!="}, {SCMP_CMP_LT, "<"},  {SCMP_CMP_LE, "<="},
		   {SCMP_CMP_EQ, "=="}, {SCMP_CMP_GE, ">="}, {SCMP_CMP_GT, ">"}};
	size_t i;

	/* libseccomp's masked compare: value is the mask, value_two the datum. */
	if (a->op == SCMP_CMP_MASKED_EQ) {
		fprintf(f, "(a%u & %#llx) == %#llx", a->index, (unsigned long long)a->value,
			(unsigned long long)a->value_two);
		return 0;
	}
	for (i = 0; i < ARRAY_LEN(ops); i++)
		if (a->op == ops[i].op) {
			fprintf(f, "a%u %s %#llx", a->index, ops[i].symbol, (unsigned long long)a->value);
			return 0;
		}
	return moat_error_set(err, MOAT_E_SYSTEM, EINVAL, "seccomp: kafel has no comparison %u", a->op);
}

/* `ERRNO(e) { SYSCALL[nr](a0, ..., aK) { cmp && cmp } },` (the x32 block
 * follows every rule). */
static int write_rule(FILE *f, const struct moat_seccomp_rule *r, struct moat_error *err)
{
	unsigned i, top = 0;

	fprintf(f, "  ERRNO(%d) { SYSCALL[%d]", r->errnum, r->nr);
	for (i = 0; i < r->n_args; i++) {
		if (r->args[i].index >= 6)
			return moat_error_set(err, MOAT_E_SYSTEM, EINVAL, "seccomp: %s: argument %u", r->name,
					      r->args[i].index);
		if (r->args[i].index + 1 > top)
			top = r->args[i].index + 1;
	}
	if (r->n_args) {
		/* Every argument up to the highest compared: kafel numbers
		 * them by their place in the list. */
		fputc('(', f);
		for (i = 0; i < top; i++)
			fprintf(f, "%sa%u", i ? ", " : "", i);
		fputs(") { ", f);
		for (i = 0; i < r->n_args; i++) {
			if (i)
				fputs(" && ", f);
			if (write_cmp(f, &r->args[i], err) < 0)
				return -1;
		}
		fputs(" }", f);
	}
	fprintf(f, " }, // %s\n", r->name);
	return 0;
}

/* Does the rule only bound its arguments (>=, >, <=, <)? */
static bool bounds_only(const struct moat_seccomp_rule *r)
{
	unsigned i;

	for (i = 0; i < r->n_args; i++)
		if (r->args[i].op != SCMP_CMP_GE && r->args[i].op != SCMP_CMP_GT && r->args[i].op != SCMP_CMP_LE &&
		    r->args[i].op != SCMP_CMP_LT)
			return false;
	return r->n_args > 0;
}

static int by_number(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* The x32 numbers to kill, sorted and unique: every rule's call, then the
 * x32-only ones.  Returns how many are in *out (a new array). */
static size_t x32_numbers(const struct rule_list *l, unsigned **out)
{
	size_t n = 0, i, kept = 0;
	unsigned *v = moat_xcalloc(l->n + (X32_ONLY_LAST - X32_ONLY_FIRST + 1), sizeof(*v));

	for (i = 0; i < l->n; i++)
		if (l->r[i].nr >= 0 && (unsigned)l->r[i].nr < X32_ONLY_FIRST)
			v[n++] = X32_SYSCALL_BIT | (unsigned)l->r[i].nr;
	for (i = X32_ONLY_FIRST; i <= X32_ONLY_LAST; i++)
		v[n++] = X32_SYSCALL_BIT | (unsigned)i;
	qsort(v, n, sizeof(*v), by_number);
	for (i = 0; i < n; i++)
		if (!kept || v[kept - 1] != v[i])
			v[kept++] = v[i];
	*out = v;
	return kept;
}

static const char *net_words(enum moat_net net)
{
	switch (net) {
	case MOAT_NET_NONE:
	case MOAT_NET_ALLOW:
		return "Socket families: AF_UNIX only";
	case MOAT_NET_LOOPBACK:
	case MOAT_NET_ALL:
		return "Socket families: AF_UNIX, AF_INET, AF_INET6, AF_NETLINK (NETLINK_ROUTE)";
	}
	return "?";
}

int moat_seccomp_kafel(const struct moat_seccomp_opts *o, char **text, struct moat_kafel_stats *st,
		       struct moat_error *err)
{
	struct rule_list l = {0};
	cleanup_free unsigned *x32 = NULL;
	char *buf = NULL;
	size_t len = 0, n_x32 = 0, i;
	FILE *f;
	int rc = -1;

	if (moat_seccomp_rules(o, collect, &l, err) < 0) {
		free(l.r);
		return -1;
	}
	n_x32 = x32_numbers(&l, &x32);
	f = open_memstream(&buf, &len);
	if (!f) {
		free(l.r);
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "seccomp: writing the kafel policy");
	}
	fprintf(f,
		"// moat's seccomp rules for nsjail, in kafel's language: %zu rules from the table that also makes\n"
		"// moat's BPF program and the OCI linux.seccomp (src/kernel/seccomp.c; seccomp_kafel.c says how\n"
		"// kafel reads them).\n"
		"// %s.\n"
		"// The ptrace family: %s; socket(AF_UNIX): %s.\n"
		"// The first rule that matches decides; every other call is allowed.  kafel kills any ABI but\n"
		"// x86_64; the last block kills the x32 numbers of the calls named here and the x32-only ones.\n"
		"POLICY moat {\n",
		l.n, net_words(o->net), o->allow_ptrace ? "allowed" : "refused",
		o->allow_unix ? "allowed" : "refused (connected socketpairs only)");
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < l.n; i++)
			if (bounds_only(&l.r[i]) == (pass == 1) && write_rule(f, &l.r[i], err) < 0)
				goto out;
	fputs("  KILL_PROCESS {", f);
	for (i = 0; i < n_x32; i++)
		fprintf(f, "%s%sSYSCALL[%#x]", i ? "," : "", i % 5 ? " " : "\n    ", x32[i]);
	fputs("\n  }\n}\nUSE moat DEFAULT ALLOW\n", f);
	rc = 0;
out:
	if (fclose(f) != 0 && rc == 0)
		rc = moat_error_set(err, MOAT_E_SYSTEM, errno, "seccomp: writing the kafel policy");
	if (rc < 0) {
		free(buf);
	} else {
		*text = buf;
		if (st)
			*st = (struct moat_kafel_stats){.n_rules = l.n, .n_x32 = n_x32};
	}
	free(l.r);
	return rc;
}
