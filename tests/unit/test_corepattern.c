/* Unit tests: resolve/limits.c, limits_core_held -- what a crash of the
 * tree becomes under the host's kernel.core_pattern with RLIMIT_CORE 0.
 * The kernel hands a pipe's program the whole dump at a limit of 0: unless
 * moat's filter pins the limit at 1 (where the kernel aborts the dump),
 * only a program known to keep nothing at 0 (or, for apport, from another
 * mount namespace) keeps res.limits' "core dumps off". */
#include <string.h>

#include "resolve/limits.h"
#include "tap.h"

static const char *const apport = "|/usr/share/apport/apport -p%p -s%s -c%c -d%d -P%P -u%u -g%g -F%F -- %E";

int main(void)
{
	char t[384];

	ok(limits_core_held("core", false, false, t, sizeof(t)) && t[0] == '\0',
	   "a file pattern: held by the limit alone, nothing to add");
	ok(limits_core_held("/var/cores/core.%e.%p", false, false, t, sizeof(t)), "an absolute file pattern: held");
	ok(limits_core_held("|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h", false, false, t, sizeof(t)) &&
	       strstr(t, "systemd-coredump"),
	   "systemd-coredump (given the limit, keeps nothing below a page): held, named (%s)", t);
	ok(limits_core_held("|/bin/false", false, false, t, sizeof(t)), "|/bin/false: held");
	ok(limits_core_held(apport, true, false, t, sizeof(t)) && strstr(t, "mount namespace"),
	   "apport, the sandbox in a mount namespace of its own: held (%s)", t);
	ok(!limits_core_held(apport, false, false, t, sizeof(t)) && strstr(t, "/usr/share/apport/apport") &&
	       strstr(t, "packaged"),
	   "apport without a mount namespace: missing, it keeps a packaged program's core (%s)", t);
	ok(!limits_core_held("|/usr/share/apport/apport %p %s %c %d", true, false, t, sizeof(t)),
	   "apport without %%P (no namespace check of its own): missing even with a mount namespace");
	ok(!limits_core_held("|/wsl-capture-crash %t %E %p %s", true, false, t, sizeof(t)) &&
	       strstr(t, "/wsl-capture-crash") && strstr(t, "cannot tell"),
	   "another program: missing, named (%s)", t);
	ok(!limits_core_held("|  /usr/libexec/abrt-hook-ccpp %s %c %p", true, false, t, sizeof(t)) &&
	       strstr(t, "/usr/libexec/abrt-hook-ccpp"),
	   "spaces after the bar: the program still found (%s)", t);
	ok(!limits_core_held("|/usr/bin/not-systemd-coredump-really", true, false, t, sizeof(t)),
	   "a name that only contains a known one is not it");
	ok(limits_core_held("|/wsl-capture-crash %t %E %p %s", false, true, t, sizeof(t)) &&
	       strstr(t, "/wsl-capture-crash") && strstr(t, "aborts"),
	   "pinned at 1 (moat's filter): any program held, the kernel aborts the dump (%s)", t);
	ok(limits_core_held(apport, false, true, t, sizeof(t)), "pinned: apport without a mount namespace held too");
	ok(limits_core_held("core", false, true, t, sizeof(t)) && t[0] == '\0', "pinned, a file pattern: nothing to add");
	ok(!limits_core_held("@/run/systemd/coredump", false, true, t, sizeof(t)) &&
	       strstr(t, "/run/systemd/coredump") && strstr(t, "socket"),
	   "a socket pattern (Linux 6.16): missing even pinned, the kernel checks no limit there (%s)", t);
	ok(!limits_core_held("@@/run/cores.sock", true, true, t, sizeof(t)) && strstr(t, " /run/cores.sock"),
	   "the socket request protocol ('@@'): missing, the socket named (%s)", t);
	return tap_done();
}
