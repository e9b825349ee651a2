/* A classic-BPF interpreter for seccomp programs: see bpf_interp.h. */
#include "bpf_interp.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(struct bpf_run *out, size_t pc, const struct sock_filter *f, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct bpf_run *out, size_t pc, const struct sock_filter *f, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(out->error, sizeof(out->error), "insn %zu {%#06x, %u, %u, %#x}: ", pc, f ? f->code : 0,
			 f ? f->jt : 0, f ? f->jf : 0, f ? f->k : 0);

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(out->error))
		vsnprintf(out->error + n, sizeof(out->error) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int alu(uint16_t op, uint32_t *a, uint32_t v, struct bpf_run *out, size_t pc, const struct sock_filter *f)
{
	switch (op) {
	case BPF_ADD: *a += v; return 0;
	case BPF_SUB: *a -= v; return 0;
	case BPF_MUL: *a *= v; return 0;
	case BPF_DIV:
	case BPF_MOD:
		if (v == 0)
			return fail(out, pc, f, "division by zero");
		*a = op == BPF_DIV ? *a / v : *a % v;
		return 0;
	case BPF_OR: *a |= v; return 0;
	case BPF_AND: *a &= v; return 0;
	case BPF_XOR: *a ^= v; return 0;
	case BPF_LSH:
	case BPF_RSH:
		if (v >= 32)
			return fail(out, pc, f, "shift by %u", v);
		*a = op == BPF_LSH ? *a << v : *a >> v;
		return 0;
	case BPF_NEG: *a = (uint32_t)-*a; return 0;
	}
	return fail(out, pc, f, "unknown ALU operation");
}

int bpf_interp(const struct sock_filter *prog, size_t len, const struct seccomp_data *data, struct bpf_run *out)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	size_t pc = 0;

	memset(out, 0, sizeof(*out));
	if (!prog || len == 0 || len > BPF_MAXINSNS)
		return fail(out, 0, NULL, "a program of %zu instructions", len);
	while (pc < len) {
		const struct sock_filter *f = &prog[pc];
		uint16_t code = f->code;
		uint32_t k = f->k;

		out->steps++;
		switch (BPF_CLASS(code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t *dst = BPF_CLASS(code) == BPF_LD ? &a : &x;
			if (BPF_MODE(code) == BPF_IMM && BPF_SIZE(code) == BPF_W)
				*dst = k;
			else if (BPF_MODE(code) == BPF_MEM && BPF_SIZE(code) == BPF_W) {
				if (k >= BPF_MEMWORDS)
					return fail(out, pc, f, "scratch word %u", k);
				*dst = mem[k];
			} else if (BPF_MODE(code) == BPF_LEN && BPF_SIZE(code) == BPF_W)
				*dst = (uint32_t)sizeof(*data);
			else if (BPF_CLASS(code) == BPF_LD && BPF_MODE(code) == BPF_ABS && BPF_SIZE(code) == BPF_W) {
				/* seccomp: aligned 32-bit words of seccomp_data only. */
				if (k % 4 != 0 || k > sizeof(*data) - 4)
					return fail(out, pc, f, "load at offset %u of seccomp_data (%zu bytes)", k,
						    sizeof(*data));
				memcpy(dst, (const char *)data + k, 4);
			} else
				return fail(out, pc, f, "load mode or size seccomp does not allow");
			pc++;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (code != BPF_ST && code != BPF_STX)
				return fail(out, pc, f, "unknown store");
			if (k >= BPF_MEMWORDS)
				return fail(out, pc, f, "scratch word %u", k);
			mem[k] = BPF_CLASS(code) == BPF_ST ? a : x;
			pc++;
			break;
		case BPF_ALU:
			if (BPF_OP(code) == BPF_NEG ? code != (BPF_ALU | BPF_NEG)
						    : (code & ~(uint16_t)(BPF_OP(code) | BPF_SRC(code))) != BPF_ALU)
				return fail(out, pc, f, "unknown ALU instruction");
			if (alu(BPF_OP(code), &a, BPF_SRC(code) == BPF_X ? x : k, out, pc, f) < 0)
				return -1;
			pc++;
			break;
		case BPF_JMP: {
			uint32_t v = BPF_SRC(code) == BPF_X ? x : k;
			size_t next;
			int taken;

			if (BPF_OP(code) == BPF_JA) {
				if (code != (BPF_JMP | BPF_JA))
					return fail(out, pc, f, "unknown jump");
				if ((size_t)k >= len - pc - 1)
					return fail(out, pc, f, "jump past the end");
				pc += 1 + (size_t)k;
				break;
			}
			switch (BPF_OP(code)) {
			case BPF_JEQ: taken = a == v; break;
			case BPF_JGT: taken = a > v; break;
			case BPF_JGE: taken = a >= v; break;
			case BPF_JSET: taken = (a & v) != 0; break;
			default: return fail(out, pc, f, "unknown jump");
			}
			if ((code & ~(uint16_t)(BPF_OP(code) | BPF_SRC(code))) != BPF_JMP)
				return fail(out, pc, f, "unknown jump");
			next = pc + 1 + (taken ? f->jt : f->jf);
			if (pc + 1 + f->jt >= len || pc + 1 + f->jf >= len)
				return fail(out, pc, f, "jump past the end");
			pc = next;
			break;
		}
		case BPF_RET:
			if (code == (BPF_RET | BPF_K))
				out->ret = k;
			else if (code == (BPF_RET | BPF_A))
				out->ret = a;
			else
				return fail(out, pc, f, "unknown return");
			return 0;
		case BPF_MISC:
			if (code == (BPF_MISC | BPF_TAX))
				x = a;
			else if (code == (BPF_MISC | BPF_TXA))
				a = x;
			else
				return fail(out, pc, f, "unknown misc instruction");
			pc++;
			break;
		default:
			return fail(out, pc, f, "unknown class");
		}
	}
	return fail(out, len - 1, &prog[len - 1], "fell off the end of the program");
}
