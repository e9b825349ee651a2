/* bench/withenv: `withenv NAME=VALUE CMD [ARGS...]`, like env(1) but static
 * and with nothing else to do, so that the hop it adds to a timed command is
 * as small and as steady as an exec can be.  hyperfine -N has no
 * per-command environment; bench/run times this hop on its own (with
 * /bin/true) so that it can be taken off the figures it prefixes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: withenv NAME=VALUE CMD [ARGS...]\n");
		return 125;
	}
	if (putenv(argv[1]) != 0) {
		perror("putenv");
		return 125;
	}
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
