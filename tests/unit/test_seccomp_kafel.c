/* The kafel policy moat writes for nsjail (kernel/seccomp_kafel.c), read
 * back by a parser written here for the subset of kafel's grammar a policy
 * may use (google/kafel's README, "Policy language": POLICY, USE, DEFAULT,
 * action blocks, SYSCALL[N] with declared arguments, boolean expressions
 * with & | == != < <= > >= && || ! and the comma as the lowest `or`, // and
 * C comments, decimal, hex, octal and binary numbers).  It is not kafel's
 * parser: where nsjail is installed, tests/blackbox/golden_nsjail.sh also
 * has nsjail compile the policy itself.
 *
 *   - the parser refuses broken policies (controls), so a policy it reads is
 *     well-formed in that subset;
 *   - for each option set, the policy's rules are exactly the rules of
 *     moat_seccomp_rules() -- the table the BPF program and the OCI JSON come
 *     from -- in its order, but for the rules that only bound a value, which
 *     come last (seccomp_kafel.c says why): the same call, errno and
 *     comparisons;
 *   - the x32 number of every call a rule names, and every x32-only number,
 *     is killed;
 *   - evaluated as kafel evaluates (the first matching rule decides, then
 *     the default), the policy answers every call as moat's BPF program
 *     answers it under a BPF interpreter: each rule's own arguments and
 *     variants with bits flipped inside and outside its masks, and calls no
 *     rule names.  The one difference is the x32 call of a syscall no rule
 *     names: the program kills it, the policy allows it (seccomp_kafel.c
 *     says why); it is checked as such. */
#include "tap.h"

#include <ctype.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <seccomp.h>

#include "bpf_interp.h"
#include "kernel/seccomp.h"

#define X32_BIT 0x40000000u

/* --- the parser ----------------------------------------------------------- */

enum tok_kind { T_END, T_NUM, T_ID, T_PUNCT };

struct tok {
	enum tok_kind kind;
	uint64_t num;
	char text[48];
	int line;
};

enum ex_kind { E_NUM, E_ARG, E_AND, E_OR, E_NOT, E_BAND, E_BOR, E_CMP };

struct ex {
	enum ex_kind kind;
	uint64_t num;
	int arg;    /* E_ARG: the argument's index */
	char op[3]; /* E_CMP: "==", "!=", "<", "<=", ">", ">=" */
	struct ex *l, *r;
};

/* kafel's actions as the seccomp return values they compile to. */
#define ACT_ALLOW	 SECCOMP_RET_ALLOW
#define ACT_KILL_PROCESS SECCOMP_RET_KILL_PROCESS
#define ACT_KILL	 SECCOMP_RET_KILL_THREAD
#define ACT_ERRNO(e)	 (SECCOMP_RET_ERRNO | ((uint32_t)(e)&SECCOMP_RET_DATA))

struct filter {
	int64_t nr;
	struct ex *expr; /* NULL: every call */
	uint32_t action;
};

struct parsed {
	struct filter *f;
	size_t n, cap;
	uint32_t dflt;
	bool has_default;
};

struct parser {
	struct tok *t;
	size_t n, at;
	char error[200];
	char args[6][48];
	int n_args;
	struct parsed *out;
	bool in_main_policy; /* the policy statements of `moat`, kept for USE */
	struct filter *moat_f;
	size_t moat_n;
};

static int fail(struct parser *p, const char *what)
{
	if (!p->error[0]) {
		const struct tok *t = &p->t[p->at < p->n ? p->at : p->n - 1];
		snprintf(p->error, sizeof(p->error), "line %d: %s at '%s'", t->line, what,
			 t->kind == T_END ? "end of input" : t->text);
	}
	return -1;
}

/* Tokens; -1 on a character kafel does not know or an unterminated
 * comment. */
static int lex(const char *s, struct tok **out, size_t *n_out, char *error, size_t len)
{
	size_t n = 0, cap = 64;
	struct tok *t = malloc(cap * sizeof(*t));
	int line = 1;

	while (t) {
		struct tok k = {.line = line};
		if (n + 1 >= cap) {
			cap *= 2;
			t = realloc(t, cap * sizeof(*t));
			if (!t)
				break;
		}
		if (*s == '\n') {
			line++, s++;
			continue;
		}
		if (isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
			continue;
		}
		if (s[0] == '/' && s[1] == '*') {
			const char *end = strstr(s + 2, "*/");
			if (!end) {
				snprintf(error, len, "line %d: unterminated comment", line);
				free(t);
				return -1;
			}
			for (; s < end; s++)
				line += *s == '\n';
			s = end + 2;
			continue;
		}
		if (!*s) {
			k.kind = T_END;
			t[n++] = k;
			*out = t;
			*n_out = n;
			return 0;
		}
		if (isdigit((unsigned char)*s)) {
			char *end;
			int base = 10;
			if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
				base = 16;
			else if (s[0] == '0' && s[1] == 'b')
				base = 2;
			else if (s[0] == '0')
				base = 8;
			errno = 0;
			k.kind = T_NUM;
			k.num = strtoull(base == 2 ? s + 2 : s, &end, base);
			if (errno || isalnum((unsigned char)*end) || end == s) {
				snprintf(error, len, "line %d: bad number", line);
				free(t);
				return -1;
			}
			snprintf(k.text, sizeof(k.text), "%.*s", (int)(end - s), s);
			s = end;
		} else if (isalpha((unsigned char)*s)) {
			size_t m = 0;
			k.kind = T_ID;
			while (isalnum((unsigned char)s[m]) || s[m] == '_')
				m++;
			snprintf(k.text, sizeof(k.text), "%.*s", (int)m, s);
			s += m;
		} else {
			static const char *const two[] = {"&&", "||", "==", "!=", "<=", ">="};
			size_t i;
			k.kind = T_PUNCT;
			for (i = 0; i < sizeof(two) / sizeof(two[0]); i++)
				if (strncmp(s, two[i], 2) == 0)
					break;
			if (i < sizeof(two) / sizeof(two[0])) {
				memcpy(k.text, s, 2);
				s += 2;
			} else if (strchr("{}()[],!&|<>", *s)) {
				k.text[0] = *s++;
			} else {
				snprintf(error, len, "line %d: unexpected character '%c'", line, *s);
				free(t);
				return -1;
			}
		}
		t[n++] = k;
	}
	snprintf(error, len, "out of memory");
	return -1;
}

static const struct tok *peek(struct parser *p)
{
	return &p->t[p->at];
}

static bool is(struct parser *p, const char *text)
{
	return peek(p)->kind != T_END && peek(p)->kind != T_NUM && strcmp(peek(p)->text, text) == 0;
}

static bool eat(struct parser *p, const char *text)
{
	if (!is(p, text))
		return false;
	p->at++;
	return true;
}

static int expect(struct parser *p, const char *text)
{
	char what[64];

	if (eat(p, text))
		return 0;
	snprintf(what, sizeof(what), "expected '%s'", text);
	return fail(p, what);
}

static struct ex *node(enum ex_kind k, struct ex *l, struct ex *r)
{
	struct ex *e = calloc(1, sizeof(*e));

	if (!e)
		abort();
	e->kind = k;
	e->l = l;
	e->r = r;
	return e;
}

static void ex_free(struct ex *e)
{
	if (!e)
		return;
	ex_free(e->l);
	ex_free(e->r);
	free(e);
}

static struct ex *bit_or(struct parser *p);
static struct ex *bool_expr(struct parser *p);

static struct ex *operand(struct parser *p)
{
	const struct tok *t = peek(p);
	struct ex *e;

	if (t->kind == T_NUM) {
		p->at++;
		e = node(E_NUM, NULL, NULL);
		e->num = t->num;
		return e;
	}
	if (t->kind == T_ID) {
		for (int i = 0; i < p->n_args; i++)
			if (strcmp(p->args[i], t->text) == 0) {
				p->at++;
				e = node(E_ARG, NULL, NULL);
				e->arg = i;
				return e;
			}
		fail(p, "an identifier that is no declared argument (constants are not in the subset)");
		return NULL;
	}
	if (eat(p, "(")) {
		e = bit_or(p);
		if (e && expect(p, ")") < 0) {
			ex_free(e);
			return NULL;
		}
		return e;
	}
	fail(p, "expected a number, an argument or '('");
	return NULL;
}

static struct ex *bit_and(struct parser *p)
{
	struct ex *e = operand(p);

	while (e && is(p, "&")) {
		p->at++;
		struct ex *r = operand(p);
		if (!r) {
			ex_free(e);
			return NULL;
		}
		e = node(E_BAND, e, r);
	}
	return e;
}

static struct ex *bit_or(struct parser *p)
{
	struct ex *e = bit_and(p);

	while (e && is(p, "|")) {
		p->at++;
		struct ex *r = bit_and(p);
		if (!r) {
			ex_free(e);
			return NULL;
		}
		e = node(E_BOR, e, r);
	}
	return e;
}

static struct ex *comparison(struct parser *p)
{
	static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
	struct ex *l = bit_or(p), *r, *e;
	size_t i;

	if (!l)
		return NULL;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (is(p, ops[i]))
			break;
	if (i == sizeof(ops) / sizeof(ops[0])) {
		ex_free(l);
		fail(p, "expected a comparison");
		return NULL;
	}
	p->at++;
	r = bit_or(p);
	if (!r) {
		ex_free(l);
		return NULL;
	}
	e = node(E_CMP, l, r);
	snprintf(e->op, sizeof(e->op), "%s", ops[i]);
	return e;
}

static struct ex *primary(struct parser *p)
{
	if (eat(p, "!")) {
		struct ex *e = primary(p);
		return e ? node(E_NOT, e, NULL) : NULL;
	}
	if (is(p, "(")) {
		/* `(a0 & 4) == 4` or `(a0 == 1 || a1 == 2)`: the comparison
		 * first, then the parenthesised expression. */
		size_t at = p->at;
		struct ex *e = comparison(p);
		if (e)
			return e;
		p->at = at;
		p->error[0] = '\0';
		p->at++;
		e = bool_expr(p);
		if (e && expect(p, ")") < 0) {
			ex_free(e);
			return NULL;
		}
		return e;
	}
	return comparison(p);
}

static struct ex *chain(struct parser *p, const char *op, enum ex_kind k, struct ex *(*next)(struct parser *))
{
	struct ex *e = next(p);

	while (e && is(p, op)) {
		p->at++;
		struct ex *r = next(p);
		if (!r) {
			ex_free(e);
			return NULL;
		}
		e = node(k, e, r);
	}
	return e;
}

static struct ex *and_expr(struct parser *p)
{
	return chain(p, "&&", E_AND, primary);
}

static struct ex *or_expr(struct parser *p)
{
	return chain(p, "||", E_OR, and_expr);
}

static struct ex *bool_expr(struct parser *p)
{
	return chain(p, ",", E_OR, or_expr);
}

static int number_in_parens(struct parser *p, uint64_t *v)
{
	if (expect(p, "(") < 0)
		return -1;
	if (peek(p)->kind != T_NUM || peek(p)->num > 0xffff)
		return fail(p, "expected a number up to 65535");
	*v = peek(p)->num;
	p->at++;
	return expect(p, ")");
}

static int action(struct parser *p, uint32_t *a)
{
	uint64_t v = 0; /* number_in_parens sets it whenever it returns 0 */

	if (eat(p, "ALLOW"))
		*a = ACT_ALLOW;
	else if (eat(p, "KILL") || eat(p, "KILL_THREAD") || eat(p, "DENY"))
		*a = ACT_KILL;
	else if (eat(p, "KILL_PROCESS"))
		*a = ACT_KILL_PROCESS;
	else if (eat(p, "ERRNO")) {
		if (number_in_parens(p, &v) < 0)
			return -1;
		*a = ACT_ERRNO(v);
	} else
		return fail(p, "expected an action");
	return 0;
}

static void add_filter(struct parsed *o, struct filter f)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 64;
		o->f = realloc(o->f, o->cap * sizeof(*o->f));
		if (!o->f)
			abort();
	}
	o->f[o->n++] = f;
}

/* SYSCALL[N](a0, a1) { expr }, the arguments and the expression optional. */
static int filter(struct parser *p, uint32_t act, struct parsed *o)
{
	struct filter f = {.action = act};

	if (!eat(p, "SYSCALL"))
		return fail(p, "expected SYSCALL[N] (names need kafel's table: not in the subset)");
	if (expect(p, "[") < 0)
		return -1;
	if (peek(p)->kind != T_NUM)
		return fail(p, "expected a syscall number");
	f.nr = (int64_t)peek(p)->num;
	p->at++;
	if (expect(p, "]") < 0)
		return -1;
	p->n_args = 0;
	if (eat(p, "(")) {
		do {
			if (peek(p)->kind != T_ID || p->n_args == 6)
				return fail(p, "expected an argument name (at most 6)");
			for (int i = 0; i < p->n_args; i++)
				if (strcmp(p->args[i], peek(p)->text) == 0)
					return fail(p, "an argument declared twice");
			snprintf(p->args[p->n_args++], sizeof(p->args[0]), "%s", peek(p)->text);
			p->at++;
		} while (eat(p, ","));
		if (expect(p, ")") < 0)
			return -1;
	}
	if (eat(p, "{")) {
		if (!is(p, "}")) {
			f.expr = bool_expr(p);
			if (!f.expr)
				return -1;
		}
		if (expect(p, "}") < 0) {
			ex_free(f.expr);
			return -1;
		}
	}
	add_filter(o, f);
	return 0;
}

/* ACTION { filter, ... } */
static int block(struct parser *p, struct parsed *o)
{
	uint32_t act;

	if (action(p, &act) < 0 || expect(p, "{") < 0)
		return -1;
	if (eat(p, "}"))
		return 0;
	do {
		if (filter(p, act, o) < 0)
			return -1;
	} while (eat(p, ","));
	return expect(p, "}");
}

static void parsed_free(struct parsed *o)
{
	for (size_t i = 0; i < o->n; i++)
		ex_free(o->f[i].expr);
	free(o->f);
	memset(o, 0, sizeof(*o));
}

/* POLICY moat { block, ... }  USE moat  DEFAULT ACTION; one policy, used
 * once, is the subset moat writes. */
static int parse(const char *text, struct parsed *out, char *error, size_t len)
{
	struct parser p = {.out = out};
	struct parsed policy = {0};
	char name[48] = "";
	bool used = false;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (lex(text, &p.t, &p.n, error, len) < 0)
		return -1;
	while (peek(&p)->kind != T_END) {
		if (eat(&p, "POLICY")) {
			if (name[0] || peek(&p)->kind != T_ID) {
				fail(&p, "one POLICY with a name");
				goto out;
			}
			snprintf(name, sizeof(name), "%s", peek(&p)->text);
			p.at++;
			if (expect(&p, "{") < 0)
				goto out;
			if (!eat(&p, "}")) {
				do {
					if (block(&p, &policy) < 0)
						goto out;
				} while (eat(&p, ","));
				if (expect(&p, "}") < 0)
					goto out;
			}
		} else if (eat(&p, "USE")) {
			if (!name[0] || peek(&p)->kind != T_ID || strcmp(peek(&p)->text, name) != 0 || used) {
				fail(&p, "USE of the policy defined before, once");
				goto out;
			}
			p.at++;
			used = true;
			for (size_t i = 0; i < policy.n; i++)
				add_filter(out, policy.f[i]);
			policy.n = 0;
		} else if (eat(&p, "DEFAULT")) {
			if (out->has_default) {
				fail(&p, "a second DEFAULT");
				goto out;
			}
			if (action(&p, &out->dflt) < 0)
				goto out;
			out->has_default = true;
		} else {
			fail(&p, "expected POLICY, USE or DEFAULT");
			goto out;
		}
	}
	if (!used || !out->has_default) {
		fail(&p, "no USE of the policy, or no DEFAULT");
		goto out;
	}
	rc = 0;
out:
	if (rc < 0) {
		snprintf(error, len, "%s", p.error);
		parsed_free(out);
	}
	for (size_t i = 0; i < policy.n; i++)
		ex_free(policy.f[i].expr);
	free(policy.f);
	free(p.t);
	return rc;
}


/* --- kafel's evaluation ----------------------------------------------------- */

static uint64_t value(const struct ex *e, const uint64_t args[6])
{
	switch (e->kind) {
	case E_NUM:
		return e->num;
	case E_ARG:
		return args[e->arg];
	case E_BAND:
		return value(e->l, args) & value(e->r, args);
	case E_BOR:
		return value(e->l, args) | value(e->r, args);
	default:
		abort();
	}
}

static bool holds(const struct ex *e, const uint64_t args[6])
{
	uint64_t a, b;

	switch (e->kind) {
	case E_AND:
		return holds(e->l, args) && holds(e->r, args);
	case E_OR:
		return holds(e->l, args) || holds(e->r, args);
	case E_NOT:
		return !holds(e->l, args);
	case E_CMP:
		a = value(e->l, args);
		b = value(e->r, args);
		if (!strcmp(e->op, "=="))
			return a == b;
		if (!strcmp(e->op, "!="))
			return a != b;
		if (!strcmp(e->op, "<"))
			return a < b;
		if (!strcmp(e->op, "<="))
			return a <= b;
		if (!strcmp(e->op, ">"))
			return a > b;
		return a >= b;
	default:
		abort();
	}
}

/* What the policy answers for an x86_64 call: the first filter that
 * matches, else the default. */
static uint32_t decide(const struct parsed *o, uint32_t nr, const uint64_t args[6])
{
	for (size_t i = 0; i < o->n; i++)
		if (o->f[i].nr == (int64_t)nr && (!o->f[i].expr || holds(o->f[i].expr, args)))
			return o->f[i].action;
	return o->dflt;
}

/* --- the parser on hand-written policies --------------------------------------- */

static void test_parser(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
	    {"POLICY a { ERRNO(1) { SYSCALL[1] } USE a DEFAULT ALLOW", "an unclosed policy"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1] }, } USE a DEFAULT ALLOW", "a trailing comma"},
	    {"POLICY a { ERRNO(70000) { SYSCALL[1] } } USE a DEFAULT ALLOW", "an errno over 65535"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1](a0) { a1 == 1 } } } USE a DEFAULT ALLOW", "an undeclared argument"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1](a0) { a0 = 1 } } } USE a DEFAULT ALLOW", "'=' for '=='"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1](a0) { (a0 & 1 == 1 } } } USE a DEFAULT ALLOW", "an unclosed '('"},
	    {"POLICY a { ERRNO(1) { SYSCALL[0x1g] } } USE a DEFAULT ALLOW", "a bad number"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1] } } USE b DEFAULT ALLOW", "USE of an undefined policy"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1] } } USE a DEFAULT ALLOW DEFAULT KILL", "two defaults"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1] } } USE a", "no default"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1] } } /* USE a DEFAULT ALLOW", "an unterminated comment"},
	    {"POLICY a { ERRNO(1) { SYSCALL[1] } } USE a DEFAULT ALLOW;", "a stray ';'"},
	};
	const char *good =
	    "// a line comment\n/* a\n block */ POLICY a {\n"
	    "  ERRNO(1) { SYSCALL[0x10](x, y) { (y & 0xffffffff) == 0x5412, x == 0b11 && !(y > 07) } },\n"
	    "  KILL_PROCESS { SYSCALL[2], SYSCALL[3] {} }\n} USE a DEFAULT ALLOW\n";
	struct parsed o;
	char error[200];
	uint64_t args[6] = {0};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].text, &o, error, sizeof(error));
		ok(rc < 0 && error[0], "parser: refuses %s (%s)", bad[i].why, rc < 0 ? error : "parsed");
		if (rc == 0)
			parsed_free(&o);
	}
	ok(parse(good, &o, error, sizeof(error)) == 0,
	   "parser: reads comments, declared arguments, every "
	   "number form, ',' as or, ! and nested parentheses %s",
	   error);
	ok(o.n == 3 && o.dflt == ACT_ALLOW && o.f[1].action == ACT_KILL_PROCESS && o.f[2].nr == 3,
	   "parser: three filters, their actions and the default");
	args[1] = UINT64_C(0xdead00005412);
	ok(decide(&o, 16, args) == ACT_ERRNO(1), "evaluation: the masked comparison sees the low word only");
	args[1] = 5;
	args[0] = 3;
	ok(decide(&o, 16, args) == ACT_ERRNO(1), "evaluation: ',' is an or");
	args[1] = 8;
	ok(decide(&o, 16, args) == ACT_ALLOW && decide(&o, 17, args) == ACT_ALLOW, "evaluation: else the default");
	parsed_free(&o);
}

/* --- moat's policies ------------------------------------------------------------ */

#if defined(__x86_64__)

static const struct moat_seccomp_opts kinds[] = {
    {.net = MOAT_NET_NONE},
    {.net = MOAT_NET_LOOPBACK},
    {.net = MOAT_NET_ALL},
    {.net = MOAT_NET_NONE, .allow_ptrace = true},
    {.net = MOAT_NET_NONE, .allow_unix = true},
    {.net = MOAT_NET_ALLOW},
};
static const char *const kind_names[] = {
    "net none", "net loopback", "net all", "net none, allow_ptrace", "net none, allow_unix", "net allow"};

struct rule_list {
	struct moat_seccomp_rule r[512];
	size_t n;
};

static int collect(void *arg, const struct moat_seccomp_rule *r, struct moat_error *err)
{
	struct rule_list *l = arg;

	(void)err;
	if (l->n < sizeof(l->r) / sizeof(l->r[0]))
		l->r[l->n++] = *r;
	return 0;
}

/* The comparison `e` as a rule argument: `(aN & M) == V` or `aN op V`. */
static bool leaf(const struct ex *e, struct moat_seccomp_arg *a)
{
	static const struct {
		const char *op;
		enum scmp_compare cmp;
	} ops[] = {{"==", SCMP_CMP_EQ}, {"!=", SCMP_CMP_NE}, {"<", SCMP_CMP_LT},
		   {"<=", SCMP_CMP_LE}, {">", SCMP_CMP_GT},  {">=", SCMP_CMP_GE}};

	if (e->kind != E_CMP || e->r->kind != E_NUM)
		return false;
	memset(a, 0, sizeof(*a));
	if (e->l->kind == E_BAND && !strcmp(e->op, "==") && e->l->l->kind == E_ARG && e->l->r->kind == E_NUM) {
		a->index = (unsigned)e->l->l->arg;
		a->op = SCMP_CMP_MASKED_EQ;
		a->value = e->l->r->num;
		a->value_two = e->r->num;
		return true;
	}
	if (e->l->kind != E_ARG)
		return false;
	a->index = (unsigned)e->l->arg;
	a->value = e->r->num;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(e->op, ops[i].op)) {
			a->op = ops[i].cmp;
			return true;
		}
	return false;
}

/* The filter's expression as a rule's conjunction of comparisons. */
static bool as_rule(const struct filter *f, struct moat_seccomp_rule *r)
{
	const struct ex *e = f->expr;
	struct moat_seccomp_arg rev[8];
	unsigned n = 0;

	memset(r, 0, sizeof(*r));
	r->nr = (int)f->nr;
	r->errnum = (int)(f->action & 0xffff);
	while (e && e->kind == E_AND && n < 8) {
		if (!leaf(e->r, &rev[n++]))
			return false;
		e = e->l;
	}
	if (e && (n >= 8 || !leaf(e, &rev[n++])))
		return false;
	if (n > sizeof(r->args) / sizeof(r->args[0]))
		return false;
	for (unsigned i = 0; i < n; i++)
		r->args[i] = rev[n - 1 - i];
	r->n_args = n;
	return (f->action & 0xffff0000u) == ACT_ERRNO(0);
}

static bool same_rule(const struct moat_seccomp_rule *a, const struct moat_seccomp_rule *b)
{
	if (a->nr != b->nr || a->errnum != b->errnum || a->n_args != b->n_args)
		return false;
	for (unsigned i = 0; i < a->n_args; i++)
		if (a->args[i].index != b->args[i].index || a->args[i].op != b->args[i].op ||
		    a->args[i].value != b->args[i].value || a->args[i].value_two != b->args[i].value_two)
			return false;
	return true;
}

/* Arguments that satisfy every comparison of the rule. */
static void satisfy(const struct moat_seccomp_rule *r, uint64_t args[6])
{
	memset(args, 0, 6 * sizeof(args[0]));
	for (unsigned i = 0; i < r->n_args; i++) {
		const struct moat_seccomp_arg *a = &r->args[i];
		switch ((enum scmp_compare)a->op) {
		case SCMP_CMP_MASKED_EQ:
			args[a->index] = a->value_two;
			break;
		case SCMP_CMP_NE:
		case SCMP_CMP_GT:
			args[a->index] = a->value + 1;
			break;
		case SCMP_CMP_LT:
			args[a->index] = a->value - 1;
			break;
		default:
			args[a->index] = a->value;
		}
	}
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static bool agrees(const struct parsed *o, const struct moat_bpf *bpf, uint32_t nr, const uint64_t args[6],
		   size_t *runs)
{
	struct seccomp_data d = {.nr = (int)nr, .arch = AUDIT_ARCH_X86_64, .instruction_pointer = 0x401000};
	struct bpf_run run;
	uint32_t want;

	memcpy(d.args, args, sizeof(d.args));
	(*runs)++;
	if (bpf_interp(bpf->insns, bpf->len, &d, &run) < 0) {
		printf("#   interpreter: %s\n", run.error);
		return false;
	}
	want = decide(o, nr, args);
	if (run.ret != want)
		printf("#   nr %#x (%#llx, %#llx, %#llx): program %#x, kafel %#x\n", nr, (unsigned long long)args[0],
		       (unsigned long long)args[1], (unsigned long long)args[2], run.ret, want);
	return run.ret == want;
}

static void test_policy(size_t k)
{
	static struct rule_list l;
	const struct moat_seccomp_opts *o = &kinds[k];
	struct moat_kafel_stats st = {0};
	struct moat_error err = {0};
	struct moat_bpf bpf = {0};
	struct parsed pol;
	char *text = NULL, error[200];
	size_t i, differ = 0, x32_missing = 0, bad = 0, runs = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ULL + k, args[6];

	l.n = 0;
	if (moat_seccomp_kafel(o, &text, &st, &err) < 0 || moat_seccomp_rules(o, collect, &l, &err) < 0 ||
	    moat_seccomp_compile_fresh(o, &bpf, &err) < 0) {
		ok(0, "[%s] the policy, the rules and the program: %s", kind_names[k], err.message);
		free(text);
		return;
	}
	if (parse(text, &pol, error, sizeof(error)) < 0) {
		ok(0, "[%s] the policy parses: %s", kind_names[k], error);
		free(text);
		moat_bpf_free(&bpf);
		return;
	}
	ok(1, "[%s] the policy parses (%zu bytes, %zu filters)", kind_names[k], strlen(text), pol.n);
	ok(pol.dflt == ACT_ALLOW && st.n_rules == l.n && l.n > 100, "[%s] default ALLOW; %zu rules, as the table has",
	   kind_names[k], st.n_rules);

	/* The table's rules, in its order but for the bounding ones, last;
	 * then only x32 kills. */
	for (size_t at = 0, pass = 0; pass < 2; pass++)
		for (i = 0; i < l.n && at < pol.n; i++) {
			struct moat_seccomp_rule got;
			bool bounds = l.r[i].n_args > 0;
			for (unsigned j = 0; j < l.r[i].n_args; j++)
				bounds &= l.r[i].args[j].op == SCMP_CMP_GE || l.r[i].args[j].op == SCMP_CMP_GT ||
					  l.r[i].args[j].op == SCMP_CMP_LE || l.r[i].args[j].op == SCMP_CMP_LT;
			if (bounds != (pass == 1))
				continue;
			if ((!as_rule(&pol.f[at], &got) || !same_rule(&got, &l.r[i])) && differ++ < 3)
				printf("#   rule %zu (%s, nr %d) differs in the policy\n", i, l.r[i].name, l.r[i].nr);
			at++;
		}
	ok(differ == 0 && pol.n == l.n + st.n_x32,
	   "[%s] the policy's rules are the table's, in order, the bounding ones last (%zu differ)", kind_names[k],
	   differ);
	for (i = l.n; i < pol.n; i++)
		bad += pol.f[i].action != ACT_KILL_PROCESS || pol.f[i].expr || !(pol.f[i].nr & X32_BIT);
	for (i = 0; i < l.n; i++) {
		uint32_t x = X32_BIT | (uint32_t)l.r[i].nr;
		x32_missing += decide(&pol, x, (uint64_t[6]){0}) != ACT_KILL_PROCESS;
	}
	for (i = 512; i <= 547; i++)
		x32_missing += decide(&pol, X32_BIT | (uint32_t)i, (uint64_t[6]){0}) != ACT_KILL_PROCESS;
	ok(bad == 0 && x32_missing == 0,
	   "[%s] the last %zu filters kill x32 numbers only; every rule's call and "
	   "every x32-only call among them (%zu missing)",
	   kind_names[k], st.n_x32, x32_missing);

	/* Same answers as the program: each rule's arguments, then variants. */
	bad = 0;
	for (i = 0; i < l.n; i++) {
		satisfy(&l.r[i], args);
		bad += !agrees(&pol, &bpf, (uint32_t)l.r[i].nr, args, &runs);
		for (int v = 0; l.r[i].n_args && v < 24; v++) {
			uint64_t a2[6];
			for (int j = 0; j < 6; j++)
				a2[j] = rnd(&seed);
			for (unsigned j = 0; j < l.r[i].n_args; j++)
				a2[l.r[i].args[j].index] = args[l.r[i].args[j].index];
			for (unsigned j = 0; j < l.r[i].n_args; j++) {
				unsigned ix = l.r[i].args[j].index;
				uint64_t r = rnd(&seed);
				/* one bit, the high word, or anything */
				a2[ix] ^= v % 3 == 0 ? UINT64_C(1) << (r % 64) : v % 3 == 1 ? r << 32 : r;
			}
			bad += !agrees(&pol, &bpf, (uint32_t)l.r[i].nr, a2, &runs);
		}
	}
	/* Calls no rule names (read, write, openat2's neighbours, ...). */
	for (uint32_t nr = 0; nr < 470; nr++) {
		for (int j = 0; j < 6; j++)
			args[j] = rnd(&seed);
		bad += !agrees(&pol, &bpf, nr, args, &runs);
	}
	ok(bad == 0, "[%s] the policy answers as moat's BPF program in %zu calls (%zu differ)", kind_names[k], runs,
	   bad);
	{
		/* x32 read(2): no rule names read; the program kills every x32 call. */
		struct seccomp_data d = {.nr = (int)(X32_BIT | 0), .arch = AUDIT_ARCH_X86_64};
		struct bpf_run run;
		ok(bpf_interp(bpf.insns, bpf.len, &d, &run) == 0 && run.ret == SECCOMP_RET_KILL_PROCESS &&
		       decide(&pol, X32_BIT | 0, (uint64_t[6]){0}) == ACT_ALLOW,
		   "[%s] the known difference: an x32 read(2) is killed by the program, allowed by the policy",
		   kind_names[k]);
	}
	parsed_free(&pol);
	moat_bpf_free(&bpf);
	free(text);
}
#endif

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_parser();
#if defined(__x86_64__)
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		test_policy(k);
#else
	{
		struct moat_error err = {0};
		char *text = NULL;
		ok(moat_seccomp_kafel(&(struct moat_seccomp_opts){.net = MOAT_NET_NONE}, &text, NULL, &err) < 0 &&
		       err.kind == MOAT_E_UNAVAIL,
		   "off x86_64 moat writes no kafel policy (MOAT_E_UNAVAIL): %s", err.message);
	}
#endif
	return tap_done();
}
