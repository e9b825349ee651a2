/* `moat export`: what an external backend would run, written to a
 * directory instead of run (api/export.c).
 *
 *   moat export --backend NAME -o DIR [run options] (-- CMD... | --config FILE --server NAME)
 *   moat export --format k8s --image REF [--kind K] [--runtime-class NAME] -o DIR ...
 *                                       Kubernetes manifests (backends/k8s.h)
 *   moat export --format oci ...        the same as --backend oci
 *   moat oci export -o DIR ...          the same as --backend oci */
#include <stdio.h>
#include <string.h>

#include "api/export.h"
#include "cli/commands.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/mem.h"

static void export_usage(FILE *out)
{
	fprintf(out, "usage: moat export --backend NAME -o DIR [run options] -- COMMAND [ARGS...]\n"
		     "       moat export --backend NAME -o DIR --config FILE --server NAME\n"
		     "       moat export --format k8s --image REF [--kind Pod|Job|Deployment]\n"
		     "                   [--runtime-class NAME] -o DIR (-- COMMAND... | --config FILE --server NAME)\n"
		     "       moat oci export -o DIR (-- COMMAND... | --config FILE --server NAME)\n"
		     "writes what the backend would run into DIR: argv.json (the tool's argv), report.json\n"
		     "(the verdicts), and the backend's files (oci, gvisor: an OCI bundle, config.json;\n"
		     "seatbelt: profile.sb).  --format oci is --backend oci.  --format k8s writes Kubernetes\n"
		     "manifests instead (workload.yaml, networkpolicy.yaml, cilium-fqdn.yaml), the seccomp\n"
		     "profile (seccomp/moat/NAME.json) and moat/report.json, whose table says which property\n"
		     "the manifests enforce, which needs a cluster feature and which Kubernetes cannot\n"
		     "express (docs/platforms.md).  Run options as for `moat run` (see moat help run).\n"
		     "DIR must be yours and writable by no one else, under directories yours or root's that\n"
		     "no one else can write unless sticky, with no symbolic link on the way (what runs from\n"
		     "it later is written there); a missing DIR is made, not its parents.\n");
}

/* The export's table on stderr: one line a property.  Each line through
 * moat_say: the workload's name and the paths in a row come from a
 * server's config. */
static void print_k8s_table(const json_t *report, const char *dir)
{
	const json_t *props = json_object_get(report, "properties"), *r;
	char *line;
	size_t i;

	line = moat_xasprintf("exported %s %s to %s; property by property:",
			      json_string_value(json_object_get(report, "kind")),
			      json_string_value(json_object_get(report, "name")), dir);
	moat_say("moat: ", line);
	free(line);
	json_array_foreach(props, i, r) {
		const char *needs = json_string_value(json_object_get(r, "needs"));
		line = moat_xasprintf("%-18s %-16s %s%s%s", json_string_value(json_object_get(r, "property")),
				      json_string_value(json_object_get(r, "enforced")),
				      json_string_value(json_object_get(r, "how")), needs ? "; needs " : "",
				      needs ? needs : "");
		moat_say("  ", line);
		free(line);
	}
	line = moat_xasprintf("install the seccomp profile: %s",
			      json_string_value(json_object_get(json_object_get(report, "seccomp"), "install")));
	moat_say("moat: ", line);
	free(line);
}

static int export_k8s(int n, char **args, const char *dir, struct k8s_options *ko)
{
	struct moat_error err = {0};
	json_t *report = NULL;

	if (api_export_k8s(n, args, dir, ko, &report, &err) < 0)
		return moat_error_print(&err);
	print_k8s_table(report, dir);
	json_decref(report);
	return 0;
}

/* export's own options with a value (-o is apart): true when argv[*i] was
 * one, *bad when its value is missing or wrong (said on stderr). */
static bool export_option(char **argv, int argc, int *i, const char **format, struct k8s_options *ko, bool *bad)
{
	static const char *const names[] = {"--format", "--kind", "--image", "--runtime-class"};
	const char **slots[] = {format, &ko->kind, &ko->image, &ko->runtime_class};
	size_t k;

	*bad = false;
	for (k = 0; k < ARRAY_LEN(names); k++) {
		if (strcmp(argv[*i], names[k]) != 0)
			continue;
		if (*i + 1 >= argc) {
			fprintf(stderr, "moat: %s needs a value\n", names[k]);
			*bad = true;
			return true;
		}
		*slots[k] = argv[++*i];
		if (k == 0 && strcmp(*format, "k8s") != 0 && strcmp(*format, "oci") != 0) {
			cleanup_free char *shown = moat_text_shown(*format);

			fprintf(stderr, "moat: --format %s: unknown export format\nmoat: hint: --format k8s or oci "
					"(or --backend NAME for another backend's files)\n", shown);
			*bad = true;
		}
		return true;
	}
	return false;
}

static int export_run(int argc, char **argv, const char *forced_backend)
{
	struct moat_error err = {0};
	struct api_export_result res;
	cleanup_free char **args = moat_xcalloc((size_t)argc + 3, sizeof(char *));
	const char *dir = NULL, *format = NULL;
	struct k8s_options ko = {0};
	bool after_dashes = false;
	int n = 0, i;

	static char run_word[] = "run", backend_opt[] = "--backend";
	cleanup_free char *forced = NULL;
	bool bad;

	/* --format oci is --backend oci, which must come before the command. */
	for (i = 1; i + 1 < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--format") == 0 && strcmp(argv[i + 1], "oci") == 0)
			forced_backend = "oci";
	forced = forced_backend ? moat_xstrdup(forced_backend) : NULL;

	/* -o DIR is export's own; everything else is `moat run`'s. */
	args[n++] = run_word;
	if (forced) {
		args[n++] = backend_opt;
		args[n++] = forced;
	}
	for (i = 1; i < argc; i++) {
		if (!after_dashes && (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0)) {
			if (i + 1 >= argc) {
				fprintf(stderr, "moat: %s needs a directory\n", argv[i]);
				return 125;
			}
			dir = argv[++i];
			continue;
		}
		if (!after_dashes && export_option(argv, argc, &i, &format, &ko, &bad)) {
			if (bad)
				return 125;
			continue;
		}
		if (!after_dashes && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
			export_usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--") == 0)
			after_dashes = true;
		args[n++] = argv[i];
	}
	args[n] = NULL;
	if (!dir) {
		fprintf(stderr, "moat: export needs -o DIR\n");
		export_usage(stderr);
		return 125;
	}

	if (format && strcmp(format, "k8s") == 0) {
		/* The cluster runs the pod: a backend means nothing there, but
		 * gVisor, asked for strong isolation, is the gvisor RuntimeClass. */
		for (i = 1; i < n && strcmp(args[i], "--") != 0; i++)
			if (strcmp(args[i], "--backend") == 0 && i + 1 < n && strcmp(args[i + 1], "gvisor") != 0 &&
			    strcmp(args[i + 1], "auto") != 0) {
				cleanup_free char *shown = moat_text_shown(args[i + 1]);

				fprintf(stderr, "moat: --backend %s has no meaning with --format k8s: the cluster runs "
						"the pod\nmoat: hint: --runtime-class NAME picks the cluster's runtime "
						"(--backend gvisor: runtimeClassName gvisor)\n", shown);
				return 125;
			}
		return export_k8s(n, args, dir, &ko);
	}
	if (ko.image || ko.kind || ko.runtime_class) {
		fprintf(stderr, "moat: --image, --kind and --runtime-class are for --format k8s\n");
		return 125;
	}
	if (api_export(n, args, dir, &res, &err) < 0)
		return moat_error_print(&err);
	cleanup_free char *shown = moat_text_shown(dir);

	fprintf(stderr, "moat: exported backend %s (status %s here) to %s\n", res.backend, res.status, shown);
	return 0;
}

int cmd_export(int argc, char **argv)
{
	return export_run(argc, argv, NULL);
}

int cmd_oci(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return export_run(argc - 1, argv + 1, "oci");
	fprintf(stderr, "usage: moat oci export -o DIR (-- COMMAND... | --config FILE --server NAME)\n");
	return 125;
}
