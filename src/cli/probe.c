/* `moat probe`: the arguments, and the printing of the library's
 * moat.probe/1 document (src/api/probe.h; moat_probe_json() returns the
 * same text), as it is (--json) or as a table.  Everything the table says
 * is read from that document, so the table and --json cannot disagree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api/probe.h"
#include "cli/commands.h"
#include "policy/properties.h"
#include "util/cleanup.h"

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static bool yes(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static void print_feature(const char *key, const json_t *f)
{
	bool available = yes(f, "available");
	const char *hint = str(f, "hint");

	printf("%-22s %-4s %s\n", probe_feature_label(key), available ? "yes" : "no",
	       available ? str(f, "detail") : str(f, "reason"));
	if (!available && hint[0])
		printf("%-22s      hint: %s\n", "", hint);
}

/* A "properties" or "limits" object: one line per entry, and its hint. */
static void print_verdicts(const json_t *verdicts)
{
	const char *name;
	json_t *v;

	json_object_foreach((json_t *)verdicts, name, v) {
		bool enforced = strcmp(str(v, "status"), "enforced") == 0;

		printf("  %-14s %-9s %s\n", name, enforced ? "enforced" : "missing",
		       enforced ? str(v, "mechanism") : str(v, "reason"));
		if (!enforced && str(v, "hint")[0])
			printf("  %-14s %-9s hint: %s\n", "", "", str(v, "hint"));
	}
}

/* One line for an external backend: how many of the strict profile's
 * properties it enforces (net.allow is not asked for), and which not. */
static void print_other_backend(const char *name, const json_t *e)
{
	const char *net_allow = moat_property_name(MOAT_P_NET_ALLOW), *pname, *why = "";
	char missing[512] = "";
	size_t used = 0, n_enf = 0, n_req = 0;
	json_t *v;

	if (!yes(e, "available")) {
		printf("  %-10s cannot plan: %s\n", name, str(e, "reason"));
		return;
	}
	json_object_foreach(json_object_get(e, "properties"), pname, v) {
		if (strcmp(pname, net_allow) == 0)
			continue;
		n_req++;
		if (strcmp(str(v, "status"), "enforced") == 0) {
			n_enf++;
			continue;
		}
		if (!why[0])
			why = str(v, "reason");
		if (used < sizeof(missing))
			used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? " " : "", pname);
	}
	if (n_enf == 0)
		printf("  %-10s unusable: %s\n", name, why);
	else
		printf("  %-10s %zu/%zu enforced%s%s\n", name, n_enf, n_req, missing[0] ? "; missing: " : "", missing);
}

static void print_table(const json_t *j)
{
	const json_t *native = json_object_get(json_object_get(j, "backends"), "native");
	const char *key, *limited_by = str(j, "limited_by");
	json_t *v;

	printf("moat %s probe\n\n", str(j, "moat_version"));
	printf("%-22s %s (%s)\n", "kernel", str(j, "kernel"), str(j, "machine"));
	printf("%-22s uid %u%s\n", "running as", (unsigned)json_integer_value(json_object_get(j, "uid")),
	       yes(j, "root") ? " (root)"
	       : geteuid() == 0
		   ? " (root without CAP_SYS_ADMIN, as in a container: namespaces only through a user namespace)"
		   : "");
	if (limited_by[0])
		printf("%-22s MOAT_HOST_LIMIT=%s (detection lowered on purpose)\n", "limited by", limited_by);
	printf("\n");
	json_object_foreach(json_object_get(j, "features"), key, v)
		print_feature(key, v);

	printf("\nexternal sandbox tools\n");
	json_object_foreach(json_object_get(j, "tools"), key, v) {
		const char *version = str(v, "version"), *why = str(v, "reason");

		if (yes(v, "installed"))
			printf("  %-14s %-4s %s  %s%s%s\n", key, "yes", version[0] ? version : "?", str(v, "path"),
			       why[0] ? "  " : "", why);
		else
			printf("  %-14s %-4s not installed; %s\n", key, "no", str(v, "hint"));
	}

	printf("\nnative backend: what it enforces here (profile strict)\n");
	if (!yes(native, "available")) {
		printf("  cannot plan: %s\n", str(native, "reason"));
		return;
	}
	print_verdicts(json_object_get(native, "properties"));
	printf("\nlimits under the native backend: what would hold --memory, --pids and --cpu here\n");
	print_verdicts(json_object_get(native, "limits"));

	printf("\nother backends (profile strict; --backend NAME; auto takes the first, in this order,\n"
	       "after native, that enforces every requested property; when none does, the one missing\n"
	       "the fewest of fs.*, net.* and env.curated, then the fewest in all)\n");
	json_object_foreach(json_object_get(j, "backends"), key, v) {
		if (strcmp(key, "native") != 0 && strcmp(key, "none") != 0)
			print_other_backend(key, v);
	}
}

int cmd_probe(int argc, char **argv)
{
	struct moat_error err = {0};
	bool as_json = false;
	json_t *doc;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			as_json = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: moat probe [--json]\n\nWhat this host offers and what moat can enforce here. "
			       "MOAT_HOST_LIMIT lowers it (docs/degradation.md).\n");
			return 0;
		} else {
			cleanup_free char *shown = moat_text_shown(argv[i]);

			fprintf(stderr, "moat: probe: unknown option '%s'\nmoat: hint: usage: moat probe [--json]\n",
				shown);
			return 125;
		}
	}
	fflush(stdout);
	doc = probe_document(&err);
	if (!doc)
		return moat_error_print(&err);
	if (as_json) {
		char *text = probe_document_text(doc);

		if (text)
			printf("%s\n", text);
		free(text);
	} else {
		print_table(doc);
	}
	json_decref(doc);
	return fflush(stdout) == 0 ? 0 : 125;
}
