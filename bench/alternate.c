/* bench/alternate: start-up times of several commands, measured by
 * alternation: round after round, each command once (A B C, B C A, ...: the
 * order rotated every round), so that load which comes and goes on a shared
 * machine lands on all of them alike.  hyperfine runs one command's runs
 * back to back, which a build starting half way through skews against
 * whichever commands ran then.
 *
 *   alternate [-r ROUNDS] [-w WARMUP] [-o OUT.json] \
 *       -n NAME [-e VAR=VALUE]... ARGV... ';' -n NAME ... ';'
 *
 * No shell: each command is posix_spawnp'd with stdin from /dev/null and
 * stdout/stderr to /dev/null (-e puts VAR=VALUE in its environment, as env
 * does), and timed from before the spawn to after waitpid by
 * CLOCK_MONOTONIC.  WARMUP rounds (default 3) are run and not kept.  A run
 * that does not exit 0 is counted as a failure, not as a sample.  Writes
 * one JSON object (milliseconds): per command its median, min, p10, p90,
 * max, mean, failures and every sample in round order, so that ratios can
 * be taken round by round (the samples of round i were taken at the same
 * time); a table on stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

extern char **environ;

struct cmd {
	const char *name;
	char **argv; /* into the program's argv, NULL-terminated in place */
	char **envp; /* environ with the -e assignments replacing or added */
	double *ms;  /* one per round, round order; a failed round is -1 */
	int n, failures;
	int last_status;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		perror("alternate");
		exit(1);
	}
	return p;
}

/* environ with each of sets[0..nsets) (VAR=VALUE) in place of VAR's entry. */
static char **env_with(char **sets, int nsets)
{
	int n = 0, i, j, k = 0;
	char **e;

	while (environ[n])
		n++;
	e = xcalloc((size_t)(n + nsets + 1), sizeof(char *));
	for (i = 0; i < n; i++) {
		int replaced = 0;
		for (j = 0; j < nsets; j++) {
			size_t len = (size_t)(strchr(sets[j], '=') - sets[j]);
			if (strncmp(environ[i], sets[j], len) == 0 && environ[i][len] == '=')
				replaced = 1;
		}
		if (!replaced)
			e[k++] = environ[i];
	}
	for (j = 0; j < nsets; j++)
		e[k++] = sets[j];
	return e;
}

/* One run: the time from spawn to reaped, or a negative number on failure. */
static double run_once(struct cmd *c, posix_spawn_file_actions_t *fa)
{
	pid_t pid;
	int status, rc;
	double t0 = now_ms(), t1;

	rc = posix_spawnp(&pid, c->argv[0], fa, NULL, c->argv, c->envp);
	if (rc != 0) {
		c->last_status = -rc;
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	t1 = now_ms();
	c->last_status = status;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return t1 - t0;
}

static double pct(const double *sorted, int n, double p)
{
	double idx = p * (n - 1);
	int lo = (int)idx;

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (idx - lo) * (sorted[lo + 1] - sorted[lo]);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static int usage(void)
{
	fprintf(stderr, "usage: alternate [-r ROUNDS] [-w WARMUP] [-o OUT.json] "
			"-n NAME [-e VAR=VALUE]... ARGV... ';' ...\n");
	return 2;
}

int main(int argc, char **argv)
{
	int rounds = 100, warmup = 3, ncmd = 0, i, r, k;
	const char *out = NULL;
	struct cmd *cmds = xcalloc((size_t)argc, sizeof(*cmds));
	posix_spawn_file_actions_t fa;
	FILE *f;

	for (i = 1; i < argc;) {
		if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
			rounds = atoi(argv[i + 1]);
			i += 2;
		} else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc) {
			warmup = atoi(argv[i + 1]);
			i += 2;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[i + 1];
			i += 2;
		} else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
			struct cmd *c = &cmds[ncmd++];
			char **sets = argv + i + 2;
			int nsets = 0;

			c->name = argv[i + 1];
			i += 2;
			while (i + 1 < argc && strcmp(argv[i], "-e") == 0 && strchr(argv[i + 1], '=')) {
				sets[nsets++] = argv[i + 1]; /* compacted over the "-e"s already read */
				i += 2;
			}
			c->envp = env_with(sets, nsets);
			c->argv = argv + i;
			while (i < argc && strcmp(argv[i], ";") != 0)
				i++;
			if (argv + i == c->argv)
				return usage();
			if (i < argc)
				argv[i++] = NULL;
		} else {
			return usage();
		}
	}
	if (ncmd == 0 || rounds < 1 || warmup < 0)
		return usage();
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (k = 0; k < ncmd; k++)
		cmds[k].ms = xcalloc((size_t)rounds, sizeof(double));
	for (r = -warmup; r < rounds; r++)
		for (k = 0; k < ncmd; k++) {
			struct cmd *c = &cmds[((r + warmup) + k) % ncmd];
			double t = run_once(c, &fa);

			if (r < 0)
				continue;
			c->ms[r] = t;
			if (t < 0)
				c->failures++;
			else
				c->n++;
		}

	f = out ? fopen(out, "w") : stdout;
	if (!f) {
		perror(out);
		return 1;
	}
	fprintf(f,
		"{\"method\": \"alternation: every round runs each command once, the order rotated each round\", "
		"\"rounds\": %d, \"warmup\": %d, \"commands\": [",
		rounds, warmup);
	fprintf(stderr, "%-24s %8s %8s %8s %8s  (ms, %d rounds)\n", "command", "median", "min", "p10", "p90", rounds);
	for (k = 0; k < ncmd; k++) {
		struct cmd *c = &cmds[k];
		double *s = xcalloc((size_t)c->n, sizeof(double)), sum = 0;
		char **a;

		fprintf(f, "%s\n {\"name\": ", k ? "," : "");
		json_str(f, c->name);
		fprintf(f, ", \"argv\": [");
		for (a = c->argv; *a; a++) {
			fprintf(f, "%s", a == c->argv ? "" : ", ");
			json_str(f, *a);
		}
		fprintf(f, "], \"failures\": %d, \"n\": %d", c->failures, c->n);
		if (c->n > 0) {
			for (i = 0, r = 0; r < rounds; r++)
				if (c->ms[r] >= 0)
					s[i++] = c->ms[r];
			qsort(s, (size_t)c->n, sizeof(double), bench_cmp_double);
			for (i = 0; i < c->n; i++)
				sum += s[i];
			fprintf(f,
				", \"median\": %.4f, \"min\": %.4f, \"p10\": %.4f, \"p90\": %.4f, \"max\": %.4f, "
				"\"mean\": %.4f",
				pct(s, c->n, 0.5), s[0], pct(s, c->n, 0.1), pct(s, c->n, 0.9), s[c->n - 1], sum / c->n);
			fprintf(stderr, "%-24s %8.3f %8.3f %8.3f %8.3f%s\n", c->name, pct(s, c->n, 0.5), s[0],
				pct(s, c->n, 0.1), pct(s, c->n, 0.9), c->failures ? "  (failures)" : "");
		} else {
			fprintf(stderr, "%-24s never ran to exit 0 (last status %d)\n", c->name, c->last_status);
		}
		/* Samples in round order, a failed round as null, so that round
		 * i of every command lines up. */
		fprintf(f, ", \"samples\": [");
		for (r = 0; r < rounds; r++)
			if (c->ms[r] < 0)
				fprintf(f, "%snull", r ? ", " : "");
			else
				fprintf(f, "%s%.4f", r ? ", " : "", c->ms[r]);
		fprintf(f, "]}");
		free(s);
	}
	fprintf(f, "\n]}\n");
	if (f != stdout)
		fclose(f);
	return 0;
}
