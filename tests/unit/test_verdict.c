/* Unit tests: policy/verdict.c fills a verdict's text fields.  A reason
 * or mechanism naming a long path does not fit its field; it must then
 * lose the middle of the text, marked "[... N bytes ...]", and keep its
 * start and its end (the part after the path says what to do) -- never
 * stop mid-word without a sign. */
#include <string.h>

#include "policy/verdict.h"
#include "tap.h"

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && strcmp(s + n - m, end) == 0;
}

int main(void)
{
	struct moat_verdict v;
	char path[700];

	memset(path, 'd', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';

	memset(&v, 0, sizeof(v));
	verdict_missing(&v, "a hint", "the host replaced %s during the run: its pin was detached", path);
	ok(strlen(v.reason) < sizeof(v.reason) && strncmp(v.reason, "the host replaced /ddd", 22) == 0 &&
	       ends_with(v.reason, "dddd during the run: its pin was detached") && strstr(v.reason, " bytes ...]") &&
	       !v.enforced,
	   "a reason longer than its field (%zu bytes): its start and end kept, the middle marked (%zu bytes)",
	   strlen(path) + 56, strlen(v.reason));
	is_str(v.hint, "a hint", "  its hint is whole");

	verdict_missing(&v, NULL, "no pid namespace: %s", "disabled by MOAT_HOST_LIMIT");
	is_str(v.reason, "no pid namespace: disabled by MOAT_HOST_LIMIT", "a reason that fits is whole, unmarked");
	is_str(v.hint, "", "  no hint: empty");

	verdict_enforce(&v, "landlock rules on %s", path);
	ok(v.enforced && v.reason[0] == '\0' && strlen(v.mechanism) < sizeof(v.mechanism) &&
	       strncmp(v.mechanism, "landlock rules on /", 19) == 0 && ends_with(v.mechanism, "ddd") &&
	       strstr(v.mechanism, " bytes ...]"),
	   "a mechanism longer than its field: the middle marked (%s)", v.mechanism);
	verdict_enforce(&v, "seccomp-bpf, %u instructions", 311u);
	is_str(v.mechanism, "seccomp-bpf, 311 instructions", "a mechanism that fits is whole");
	return tap_done();
}
