/* Whether this process is the moat program or another program that calls
 * libmoat (an embedder: a C program, python3 with ctypes).  The backends
 * that run moat's own binary as the sandbox's init (`moat __init`, bound
 * from /proc/self/exe) need the former: in an embedder /proc/self/exe is
 * the embedder's binary, which would then run as pid 1 with moat's init
 * arguments (python3 runs a file called __init from the cwd) and moat's
 * Landlock layer, applied by the real __init, would never happen. */
#ifndef MOAT_UTIL_MOATBIN_H
#define MOAT_UTIL_MOATBIN_H

#include <stdbool.h>

/* Called by the moat program's main() (src/cli/main.c) only. */
void moatbin_mark_self(void);

/* main() of the moat program marked this process. */
bool moatbin_is_self(void);

#endif
