/* The `moat run` pipeline (src/api/run.c) for moat's own front end.
 * Embedders call moat_run_main() (include/moat/moat.h), which frees all it
 * made; the moat program exits as soon as the run returns. */
#ifndef MOAT_API_RUN_H
#define MOAT_API_RUN_H

/* moat_run_main for a process that exits right after it returns: what the
 * run did on the host is undone as always (placeholders, per-run
 * directories, the tree's cgroup, the guard told), and the shared locks of
 * pinned directories are released, but the plan's and the policy's memory
 * and descriptors (~400 with the strict profile) are left to the exit: freeing
 * and closing them one by one was ~0.13 ms after every command had ended.
 * A sanitizer build frees them anyway, so that LeakSanitizer still sees
 * every allocation freed. */
int run_main_exiting(int argc, char **argv);

#endif
