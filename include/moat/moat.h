/* libmoat's public API.  Everything else in the library is hidden
 * (-fvisibility=hidden); only what is marked MOAT_EXPORT is exported from
 * libmoat.so.  The API is deliberately small: embedders either run `moat`
 * as a program (see docs/integration.md) or call the same entry point. */
#ifndef MOAT_MOAT_H
#define MOAT_MOAT_H

#define MOAT_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* The version string, e.g. "0.1.0". */
MOAT_EXPORT const char *moat_version(void);

/* `moat run ARGS...`: argv[0] is "run".  Builds the policy, the plan and the
 * sandbox, runs the command and returns what `moat` would exit with (the
 * command's status, 124, 125, 126, 127 or 128+N; see README.md).
 * Diagnostics go to stderr; stdout belongs to the command. */
MOAT_EXPORT int moat_run_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
