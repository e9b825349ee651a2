/* api/probe.c through its exported entry point: moat_probe_json() returns
 * the moat.probe/1 document as text the caller frees with moat_free(), the
 * same text `moat probe --json` prints, and refuses what it cannot do. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "tap.h"
#include "moat/moat.h"

int main(void)
{
	char *text;
	json_t *j, *features, *backends;
	json_error_t jerr;

	unsetenv("MOAT_HOST_LIMIT");
	text = moat_probe_json(0);
	ok(text != NULL, "moat_probe_json(0) returns a document");
	j = text ? json_loads(text, 0, &jerr) : NULL;
	ok(j != NULL, "  that parses as JSON%s%s", j ? "" : ": ", j ? "" : jerr.text);
	is_str(json_string_value(json_object_get(j, "schema")), "moat.probe/1", "  with the schema moat.probe/1");
	is_str(json_string_value(json_object_get(j, "moat_version")), moat_version(), "  and moat_version()");
	ok(json_integer_value(json_object_get(j, "uid")) == (json_int_t)getuid(), "  the uid is getuid()");
	features = json_object_get(j, "features");
	ok(json_is_boolean(json_object_get(json_object_get(features, "landlock"), "available")),
	   "  features.landlock.available is a boolean");
	backends = json_object_get(j, "backends");
	ok(json_is_object(json_object_get(backends, "native")) && json_is_object(json_object_get(backends, "none")),
	   "  backends has native and none");
	ok(json_is_object(json_object_get(json_object_get(j, "tools"), "bwrap")), "  tools has bwrap");
	ok(text && text[strlen(text) - 1] == '}', "  without a trailing newline");
	json_decref(j);
	moat_free(text);
	moat_free(NULL);
	ok(1, "moat_free frees it, and takes NULL");

	setenv("MOAT_HOST_LIMIT", "landlock=0,userns=0,seccomp=0", 1);
	text = moat_probe_json(0);
	j = text ? json_loads(text, 0, NULL) : NULL;
	is_str(json_string_value(json_object_get(j, "limited_by")), "landlock=0,userns=0,seccomp=0",
	       "MOAT_HOST_LIMIT lowers it, and the document says so");
	ok(json_integer_value(json_object_get(j, "landlock_abi")) == 0 && json_is_false(json_object_get(j, "seccomp")) &&
	       json_is_false(json_object_get(j, "userns")),
	   "  no Landlock, seccomp or user namespaces then");
	json_decref(j);
	moat_free(text);

	setenv("MOAT_HOST_LIMIT", "nonsense", 1);
	errno = 0;
	text = moat_probe_json(0);
	ok(text == NULL && errno == EINVAL, "a malformed MOAT_HOST_LIMIT: NULL, errno EINVAL");
	moat_free(text);
	unsetenv("MOAT_HOST_LIMIT");

	errno = 0;
	text = moat_probe_json(1);
	ok(text == NULL && errno == EINVAL, "an unknown flag: NULL, errno EINVAL");
	moat_free(text);
	return tap_done();
}
