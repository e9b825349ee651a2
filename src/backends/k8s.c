/* The policy as Kubernetes manifests (k8s.h).
 *
 * What maps, and how (docs/platforms.md, "Kubernetes", has the table):
 *
 *   - the container: the user's image (moat has none to give), the command
 *     and its argv, the environment moat builds, a read-only root, no
 *     capability, no privilege escalation, a fixed non-root uid/gid
 *     (65534: the same manifest whoever exports it), moat's seccomp rules
 *     as a Localhost profile (backends/seccomp_json.c, the rules the OCI
 *     bundle carries), no service-account token, no service-link variables;
 *   - the grants the user named: volumes at the same paths, read-only where
 *     the policy says read.  A host path means little on a cluster's node,
 *     so the source of each is a PersistentVolumeClaim placeholder
 *     (moat-NAME-grant-N) the user creates or replaces; the profile's
 *     system grants (/usr, /etc, ...) are the image's own files;
 *   - /tmp and HOME: emptyDir in memory with a sizeLimit, gone with the pod;
 *   - the network: a NetworkPolicy (deny all, or the allowlist's addresses)
 *     and, for host names, a CiliumNetworkPolicy with toFQDNs;
 *   - limits: memory as resources, --timeout as activeDeadlineSeconds.
 *
 * Every mapping adds its row to the report's table; what has none says so
 * there.  Output is deterministic: objects are built in a fixed order and
 * the YAML writer (util/yaml.c) adds nothing of the host's. */
#include "backends/k8s.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/seccomp_json.h"
#include "policy/env.h"
#include "policy/netdest.h"
#include "util/cleanup.h"
#include "util/cleanup_json.h"
#include "util/mem.h"
#include "util/yaml.h"

/* nobody: a uid that owns nothing in any image. */
#define K8S_UID 65534
#define NAME_LABEL "app.kubernetes.io/name"
#define PROFILE_DIR "seccomp/moat"

/* --- names ----------------------------------------------------------------- */

static bool kind_known(const char *k)
{
	return strcmp(k, "Pod") == 0 || strcmp(k, "Job") == 0 || strcmp(k, "Deployment") == 0;
}

/* A DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting
 * and ending alphanumeric, at most 253. */
static bool dns_subdomain(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 253)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && ((c != '-' && c != '.') || i == 0 || i == n - 1))
			return false;
	}
	return true;
}

int k8s_options_check(const struct k8s_options *o, struct moat_error *err)
{
	if (!o->image || !*o->image) {
		moat_error_set(err, MOAT_E_USAGE, 0, "--format k8s needs --image: the container image to run the command in");
		return moat_error_hint(err, "--image REF, an image that holds the command and what it needs "
					    "(e.g. --image node:22-slim); moat does not build one");
	}
	{
		json_t *ok = json_string(o->image);
		if (!ok) {
			moat_error_set(err, MOAT_E_USAGE, 0, "--image: not UTF-8");
			return moat_error_hint(err, "an image reference, e.g. --image node:22-slim");
		}
		json_decref(ok);
	}
	if (o->kind && !kind_known(o->kind)) {
		moat_error_set(err, MOAT_E_USAGE, 0, "--kind %s: unknown workload kind", o->kind);
		return moat_error_hint(err, "--kind Pod, Job or Deployment");
	}
	if (o->runtime_class && !dns_subdomain(o->runtime_class)) {
		moat_error_set(err, MOAT_E_USAGE, 0, "--runtime-class %s: not a RuntimeClass name", o->runtime_class);
		return moat_error_hint(err, "lowercase letters, digits, '-' and '.' (e.g. --runtime-class gvisor)");
	}
	return 0;
}

/* The workload's name: "moat-" and the server's name or the command's base
 * name, as a DNS label (lowercase, [a-z0-9-], at most 63). */
static char *workload_name(const struct moat_policy *p, const struct k8s_options *o)
{
	const char *src = o->server ? o->server : p->exe, *slash = strrchr(src, '/');
	char *name = moat_xcalloc(64, 1);
	size_t n = 0;
	const char *c;

	if (!o->server && slash)
		src = slash + 1;
	memcpy(name, "moat-", 5);
	n = 5;
	for (c = src; *c && n < 63; c++) {
		char ch = (*c >= 'A' && *c <= 'Z') ? (char)(*c - 'A' + 'a') : *c;
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
		if (alnum)
			name[n++] = ch;
		else if (name[n - 1] != '-')
			name[n++] = '-';
	}
	while (n > 0 && name[n - 1] == '-')
		name[--n] = '\0';
	return name;
}

/* A manifest holds UTF-8 only: a string that is not (an argument, a
 * variable's value, a path) is refused, named, rather than altered. */
static json_t *utf8(const char *s, const char *what, struct moat_error *err)
{
	json_t *j = json_string(s);

	if (!j) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s is not UTF-8, which a Kubernetes manifest must be", what);
		moat_error_hint(err, "export a command, paths and variables that are UTF-8 text");
	}
	return j;
}

/* --- the report's table ---------------------------------------------------- */

enum k8s_how {
	K8S_MANIFEST, /* the manifests alone enforce it */
	K8S_CLUSTER,  /* only with the named cluster feature */
	K8S_NONE,     /* Kubernetes cannot express it */
};

static const char *const how_names[] = {"manifest", "cluster feature", "not expressible"};

static void row(json_t *table, const char *property, enum k8s_how how, const char *feature, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void row(json_t *table, const char *property, enum k8s_how how, const char *feature, const char *fmt, ...)
{
	va_list ap;
	cleanup_free char *text = NULL;
	json_t *r;

	va_start(ap, fmt);
	text = moat_xvasprintf(fmt, ap);
	va_end(ap);
	r = json_pack("{s:s, s:s, s:s}", "property", property, "enforced", how_names[how], "how", text);
	if (feature)
		json_object_set_new(r, "needs", json_string(feature));
	json_array_append_new(table, r);
}

/* --- volumes ---------------------------------------------------------------- */

struct k8s_build {
	const struct moat_policy *p;
	const struct k8s_options *o;
	const char *name;
	json_t *table;
	json_t *volumes, *mounts;
	json_t *grants; /* the report's: volume, path, access, claim */
	json_t *image_paths; /* profile grants left to the image */
	size_t n_grants;
	size_t n_write_grants;
};

static void memory_dir(struct k8s_build *b, const char *vol, const char *path, int64_t size)
{
	char q[32];

	snprintf(q, sizeof(q), "%lld", (long long)size);
	json_array_append_new(b->volumes, json_pack("{s:s, s:{s:s, s:s}}", "name", vol, "emptyDir", "medium", "Memory",
						    "sizeLimit", q));
	json_array_append_new(b->mounts, json_pack("{s:s, s:s}", "name", vol, "mountPath", path));
}

/* Is `path` at or below a grant the user named? */
static bool under_grant(const struct moat_policy *p, const char *path)
{
	size_t i, n;

	for (i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];
		if (r->from_profile || r->access == MOAT_ACCESS_DENY)
			continue;
		n = strlen(r->path);
		if (strncmp(path, r->path, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1))
			return true;
	}
	return false;
}

static int by_mount_path(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;

	return strcmp(json_string_value(json_object_get(x, "mountPath")),
		      json_string_value(json_object_get(y, "mountPath")));
}

/* Mounts in path order, so a parent is mounted before what lies in it
 * (/proj before /proj/data, /tmp before a HOME below it), whatever order
 * the runtime keeps. */
static void sort_mounts(json_t *mounts)
{
	size_t n = json_array_size(mounts), i;
	cleanup_free json_t **v = moat_xcalloc(n, sizeof(*v));

	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(mounts, i));
	qsort(v, n, sizeof(*v), by_mount_path);
	json_array_clear(mounts);
	for (i = 0; i < n; i++)
		json_array_append_new(mounts, v[i]);
}

static bool in_list(const json_t *list, const char *s)
{
	size_t i;
	json_t *x;

	json_array_foreach(list, i, x)
		if (strcmp(json_string_value(x), s) == 0)
			return true;
	return false;
}

static int build_volumes(struct k8s_build *b, char *const *envp, struct moat_error *err)
{
	const struct moat_policy *p = b->p;
	int64_t tmp = p->limits.tmp_bytes != MOAT_LIMIT_UNSET ? p->limits.tmp_bytes : MOAT_TMP_SIZE_DEFAULT;
	const char *home = env_strv_get(envp, "HOME");
	size_t i, n_denied_inside = 0;

	for (i = 0; i < p->n_paths; i++) {
		const struct moat_path_rule *r = &p->paths[i];
		cleanup_free char *vol = NULL, *claim = NULL;
		bool ro = r->access == MOAT_ACCESS_READ;
		json_t *path;

		if (r->access == MOAT_ACCESS_DENY) {
			if (under_grant(p, r->path))
				n_denied_inside++;
			continue;
		}
		if (r->from_profile) {
			if (!in_list(b->image_paths, r->path))
				json_array_append_new(b->image_paths, json_string(r->path));
			continue;
		}
		if (!(path = utf8(r->path, r->path, err)))
			return -1;
		vol = moat_xasprintf("grant-%zu", b->n_grants);
		claim = moat_xasprintf("%s-grant-%zu", b->name, b->n_grants);
		b->n_grants++;
		b->n_write_grants += !ro;
		json_array_append_new(b->volumes, json_pack("{s:s, s:{s:s, s:b}}", "name", vol, "persistentVolumeClaim",
							    "claimName", claim, "readOnly", ro));
		json_array_append_new(b->mounts, json_pack("{s:s, s:O, s:b}", "name", vol, "mountPath", path,
							   "readOnly", ro));
		json_array_append_new(b->grants, json_pack("{s:s, s:o, s:s, s:s}", "volume", vol, "path", path,
							   "access", ro ? "read" : "write", "claim", claim));
	}
	if (p->private_tmp)
		memory_dir(b, "tmp", "/tmp", tmp);
	if (home && strcmp(home, "/") != 0 && !under_grant(p, home)) {
		json_t *h = utf8(home, "HOME", err);
		if (!h)
			return -1;
		json_decref(h);
		memory_dir(b, "home", home, tmp);
	}
	sort_mounts(b->mounts);

	row(b->table, "fs.read", K8S_MANIFEST, NULL,
	    "of the node's files the container sees only the %zu volume(s) at the granted paths "
	    "(PersistentVolumeClaim placeholders to create or replace)",
	    b->n_grants);
	row(b->table, "fs.read", K8S_NONE, NULL,
	    "inside the image every file is readable: a manifest cannot narrow reads to the policy's paths (the "
	    "profile's system paths are the image's own); keep the image to what the command needs");
	row(b->table, "fs.write", K8S_MANIFEST, NULL,
	    "readOnlyRootFilesystem; writable only: the write grants' volumes, /tmp and HOME (emptyDir) and the "
	    "pod's own /dev/shm; read grants are readOnly mounts of read-only claims");
	/* moat run pins a write grant's protected entries read-only, and
	 * makes placeholders for the absent ones (docs/filesystem.md): a
	 * volume is writable whole, hooks and editor tasks included. */
	if (b->n_write_grants)
		row(b->table, "fs.write", K8S_NONE, NULL,
		    "the write grants' protected entries (.git/hooks, .git/config, .vscode, .envrc, .mcp.json, ...) are "
		    "writable in their volumes: a manifest cannot pin them read-only, as moat run does");
	if (p->private_tmp)
		row(b->table, "fs.tmp", K8S_MANIFEST, NULL,
		    "emptyDir in memory at /tmp, sizeLimit %lld, counted in the pod's memory, gone with the pod",
		    (long long)tmp);
	row(b->table, "fs.secrets", K8S_NONE, NULL,
	    "a manifest cannot hide files inside the image or a volume: moat's credential list and %zu deny "
	    "rule(s) inside granted paths do not reach the cluster; keep credentials out of the image and the claims",
	    n_denied_inside);
	return 0;
}

/* --- network ----------------------------------------------------------------- */

static json_t *object_meta(const struct k8s_build *b, const char *name)
{
	return json_pack("{s:s, s:{s:s, s:s}}", "name", name, "labels", NAME_LABEL, b->name,
			 "app.kubernetes.io/managed-by", "moat");
}

static json_t *np_ports(const struct moat_net_dest *d)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < d->n_ports; i++)
		json_array_append_new(a, json_pack("{s:s, s:i}", "protocol", "TCP", "port", (int)d->ports[i]));
	return a;
}

/* The ports of the allowlist's name entries a pinned name is allowed on
 * (the policy's own matcher decides), into an egress rule's ports; false
 * when it is allowed on every port. */
static bool pin_ports(const struct moat_policy *p, const char *name, json_t *ports)
{
	size_t i, k, j;

	/* Port 0 is in no entry's list: only a ":*" entry allows it. */
	if (net_allow_name_via(p, name, 0, true))
		return false;
	for (i = 0; i < p->n_net_allow; i++) {
		const struct moat_net_dest *d = &p->net_allow[i];
		for (k = 0; d->kind != MOAT_NET_DEST_ADDR && k < d->n_ports; k++) {
			bool seen = false;
			json_t *x;
			if (!net_allow_name_via(p, name, d->ports[k], true))
				continue;
			json_array_foreach(ports, j, x)
				seen |= json_integer_value(json_object_get(x, "port")) == d->ports[k];
			if (!seen)
				json_array_append_new(ports, json_pack("{s:s, s:i}", "protocol", "TCP", "port",
								       (int)d->ports[k]));
		}
	}
	return true;
}

/* --resolve NAME=IP: the pod's /etc/hosts (hostAliases), and the address
 * allowed on the name's ports, as moat's fence allows a pinned name's
 * address.  Cilium learns addresses from DNS answers, which a name of
 * /etc/hosts never gives. */
static json_t *build_pins(const struct moat_policy *p, json_t *egress)
{
	json_t *aliases = json_array();
	size_t i;

	for (i = 0; i < p->n_net_pins; i++) {
		const struct moat_net_pin *pin = &p->net_pins[i];
		char text[INET6_ADDRSTRLEN], cidr[INET6_ADDRSTRLEN + 8];
		json_t *ports = json_array();
		json_t *rule;

		inet_ntop(pin->family, pin->addr, text, sizeof(text));
		snprintf(cidr, sizeof(cidr), "%s/%u", text, pin->family == AF_INET ? 32 : 128);
		json_array_append_new(aliases, json_pack("{s:s, s:[s]}", "ip", text, "hostnames", pin->name));
		rule = json_pack("{s:[{s:{s:s}}]}", "to", "ipBlock", "cidr", cidr);
		if (pin_ports(p, pin->name, ports))
			json_object_set_new(rule, "ports", ports);
		else
			json_decref(ports);
		json_array_append_new(egress, rule);
	}
	return aliases;
}

static json_t *cilium_ports(const struct moat_net_dest *d)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < d->n_ports; i++) {
		char port[8];
		snprintf(port, sizeof(port), "%u", d->ports[i]);
		json_array_append_new(a, json_pack("{s:s, s:s}", "port", port, "protocol", "TCP"));
	}
	return json_pack("[{s:o}]", "ports", a);
}

/* The NetworkPolicy: ingress always closed (moat's sandbox listens to no
 * one outside it), egress closed or open to the allowlist's addresses.
 * The CiliumNetworkPolicy for the names, into *fqdn (NULL when none). */
static json_t *build_network(struct k8s_build *b, json_t **fqdn, json_t **aliases)
{
	const struct moat_policy *p = b->p;
	json_t *egress = json_array(), *fq_rules = json_array(), *dns = json_array();
	size_t i, n_addr = 0, n_names = 0, n_wild = 0, n_loop = 0, n_proxy = 0;
	cleanup_free char *np_name = moat_xasprintf("%s-net", b->name);
	cleanup_free char *fq_name = moat_xasprintf("%s-fqdn", b->name);

	*fqdn = NULL;
	*aliases = NULL;
	for (i = 0; p->net == MOAT_NET_ALLOW && i < p->n_net_allow; i++) {
		const struct moat_net_dest *d = &p->net_allow[i];
		if (d->loopback_only) {
			n_loop++;
		} else if (d->kind == MOAT_NET_DEST_ADDR) {
			char text[INET6_ADDRSTRLEN], cidr[INET6_ADDRSTRLEN + 8];
			json_t *rule;
			inet_ntop(d->family, d->addr, text, sizeof(text));
			snprintf(cidr, sizeof(cidr), "%s/%u", text, d->prefix);
			rule = json_pack("{s:[{s:{s:s}}]}", "to", "ipBlock", "cidr", cidr);
			if (!d->any_port)
				json_object_set_new(rule, "ports", np_ports(d));
			json_array_append_new(egress, rule);
			n_addr++;
		} else {
			bool wild = d->kind == MOAT_NET_DEST_WILDCARD;
			n_proxy += d->proxy_only;
			cleanup_free char *pattern = wild ? moat_xasprintf("*.%s", d->name) : moat_xstrdup(d->name);
			const char *key = wild ? "matchPattern" : "matchName";
			json_t *rule = json_pack("{s:[{s:s}]}", "toFQDNs", key, pattern);
			if (!d->any_port)
				json_object_set_new(rule, "toPorts", cilium_ports(d));
			json_array_append_new(fq_rules, rule);
			json_array_append_new(dns, json_pack("{s:s}", key, pattern));
			n_names++;
			n_wild += wild;
		}
	}
	if (p->net == MOAT_NET_ALLOW && p->n_net_pins)
		*aliases = build_pins(p, egress);
	if (n_names) {
		/* The names are learnt from the pod's DNS answers: the pod may
		 * ask kube-dns, for these names only. */
		json_t *dns_rule = json_pack(
		    "{s:[{s:{s:s, s:s}}], s:[{s:[{s:s, s:s}], s:{s:o}}]}", "toEndpoints", "matchLabels",
		    "k8s:io.kubernetes.pod.namespace", "kube-system", "k8s:k8s-app", "kube-dns", "toPorts", "ports",
		    "port", "53", "protocol", "ANY", "rules", "dns", dns);
		json_array_insert_new(fq_rules, 0, dns_rule);
		*fqdn = json_pack("{s:s, s:s, s:o, s:{s:{s:{s:s}}, s:o}}", "apiVersion", "cilium.io/v2", "kind",
				  "CiliumNetworkPolicy", "metadata", object_meta(b, fq_name), "spec", "endpointSelector",
				  "matchLabels", NAME_LABEL, b->name, "egress", fq_rules);
	} else {
		json_decref(fq_rules);
		json_decref(dns);
	}

	switch (p->net) {
	case MOAT_NET_NONE:
	case MOAT_NET_LOOPBACK:
		row(b->table, p->net == MOAT_NET_NONE ? "net.none" : "net.loopback", K8S_CLUSTER,
		    "a CNI that enforces NetworkPolicy",
		    "NetworkPolicy %s: no ingress, no egress; the pod's own loopback stays (as moat's)", np_name);
		break;
	case MOAT_NET_ALLOW:
		row(b->table, "net.allow", K8S_CLUSTER, "a CNI that enforces NetworkPolicy",
		    "NetworkPolicy %s: no ingress; egress to %zu address/CIDR entr%s of the allowlist, TCP, their ports",
		    np_name, n_addr, n_addr == 1 ? "y" : "ies");
		if (n_names)
			row(b->table, "net.allow", K8S_CLUSTER, "Cilium (CiliumNetworkPolicy toFQDNs)",
			    "CiliumNetworkPolicy %s: egress to %zu name(s) by toFQDNs, DNS to kube-dns for those "
			    "names only; without Cilium the names stay unreachable (the NetworkPolicy denies them)%s",
			    fq_name, n_names,
			    n_wild ? "; Cilium's * is one label: *.domain reaches a.domain, not a.b.domain as "
				     "moat's does (stricter)"
				   : "");
		if (n_proxy)
			row(b->table, "net.allow", K8S_NONE, NULL,
			    "%zu proxy: entr%s: a pod has no moat proxy to hold them to the name asked for; "
			    "allowed by name as the others are", n_proxy, n_proxy == 1 ? "y" : "ies");
		if (p->n_net_pins)
			row(b->table, "net.allow", K8S_CLUSTER, "a CNI that enforces NetworkPolicy",
			    "%zu --resolve pin(s): hostAliases in the pod's /etc/hosts, each address allowed "
			    "on its name's ports", p->n_net_pins);
		if (n_loop)
			row(b->table, "net.allow", K8S_NONE, NULL,
			    "%zu entr%s for the host's loopback (localhost:PORT): a pod has no such host; left out", n_loop,
			    n_loop == 1 ? "y" : "ies");
		break;
	case MOAT_NET_ALL:
		json_decref(egress);
		row(b->table, "net", K8S_MANIFEST, NULL, "--net all: no NetworkPolicy is written");
		return NULL;
	}
	return json_pack("{s:s, s:s, s:o, s:{s:{s:{s:s}}, s:[s, s], s:[], s:o}}", "apiVersion",
			 "networking.k8s.io/v1", "kind", "NetworkPolicy", "metadata", object_meta(b, np_name), "spec",
			 "podSelector", "matchLabels", NAME_LABEL, b->name, "policyTypes", "Ingress", "Egress",
			 "ingress", "egress", egress);
}

/* --- the workload ------------------------------------------------------------ */

static json_t *build_container(struct k8s_build *b, char *const *envp, json_t *profile_ref, struct moat_error *err)
{
	const struct moat_policy *p = b->p;
	cleanup_json json_t *command = json_array(), *env = json_array(), *c = NULL;
	json_t *limits = json_object();
	size_t i;

	/* argv[0] as written, not as this host's PATH resolved it: the image
	 * has its own layout (node:22-slim's node is /usr/local/bin/node), and
	 * the runtime looks a bare name up in the container's PATH. */
	for (i = 0; i < p->argc; i++) {
		cleanup_free char *what = moat_xasprintf("argument %zu of the command", i);
		json_t *a = utf8(p->argv[i], what, err);
		if (!a) {
			json_decref(limits);
			return NULL;
		}
		json_array_append_new(command, a);
	}
	for (i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		cleanup_free char *name = moat_xstrndup(envp[i], (size_t)(eq - envp[i]));
		cleanup_free char *what = moat_xasprintf("the value of %s", name);
		json_t *v = utf8(eq + 1, what, err);
		if (!v) {
			json_decref(limits);
			return NULL;
		}
		json_array_append_new(env, json_pack("{s:s, s:o}", "name", name, "value", v));
	}
	c = json_pack("{s:s, s:s, s:O}", "name", "command", "image", b->o->image, "command", command);
	if (under_grant(p, p->cwd)) {
		json_t *cwd = utf8(p->cwd, "the current directory", err);
		if (!cwd) {
			json_decref(limits);
			return NULL;
		}
		json_object_set_new(c, "workingDir", cwd);
	}
	json_object_set(c, "env", env);
	if (b->o->server)
		json_object_set_new(c, "stdin", json_true());
	if (p->limits.memory_bytes != MOAT_LIMIT_UNSET) {
		char q[32];
		snprintf(q, sizeof(q), "%lld", (long long)p->limits.memory_bytes);
		json_object_set_new(limits, "memory", json_string(q));
		json_object_set_new(c, "resources", json_pack("{s:O, s:O}", "limits", limits, "requests", limits));
	}
	json_decref(limits);
	json_object_set_new(c, "securityContext",
			    json_pack("{s:b, s:b, s:b, s:b, s:i, s:i, s:{s:[s]}, s:O}", "allowPrivilegeEscalation", 0,
				      "privileged", 0, "readOnlyRootFilesystem", 1, "runAsNonRoot", 1, "runAsUser",
				      K8S_UID, "runAsGroup", K8S_UID, "capabilities", "drop", "ALL", "seccompProfile",
				      profile_ref));
	json_object_set(c, "volumeMounts", b->mounts);
	return steal_ptr(&c);
}

static int64_t deadline(const struct moat_policy *p)
{
	int64_t whole = (int64_t)p->limits.timeout_s;

	/* Whole seconds, rounded up: never a shorter deadline than asked. */
	return p->limits.timeout_s > 0 ? whole + ((double)whole < p->limits.timeout_s) : 0;
}

static json_t *build_pod_spec(struct k8s_build *b, json_t *container, json_t *profile_ref, json_t *aliases,
			      bool restart)
{
	json_t *spec = json_object();

	json_object_set_new(spec, "restartPolicy", json_string(restart ? "Always" : "Never"));
	json_object_set_new(spec, "automountServiceAccountToken", json_false());
	json_object_set_new(spec, "enableServiceLinks", json_false());
	json_object_set_new(spec, "hostNetwork", json_false());
	json_object_set_new(spec, "hostPID", json_false());
	json_object_set_new(spec, "hostIPC", json_false());
	json_object_set_new(spec, "shareProcessNamespace", json_false());
	if (b->o->runtime_class)
		json_object_set_new(spec, "runtimeClassName", json_string(b->o->runtime_class));
	if (strcmp(b->o->kind, "Pod") == 0 && deadline(b->p))
		json_object_set_new(spec, "activeDeadlineSeconds", json_integer(deadline(b->p)));
	/* The profile names x86_64 only: on another architecture every
	 * syscall would be killed. */
	json_object_set_new(spec, "nodeSelector", json_pack("{s:s, s:s}", "kubernetes.io/arch", "amd64",
							    "kubernetes.io/os", "linux"));
	json_object_set_new(spec, "securityContext",
			    json_pack("{s:b, s:i, s:i, s:i, s:O}", "runAsNonRoot", 1, "runAsUser", K8S_UID,
				      "runAsGroup", K8S_UID, "fsGroup", K8S_UID, "seccompProfile", profile_ref));
	if (aliases)
		json_object_set(spec, "hostAliases", aliases);
	json_object_set_new(spec, "containers", json_pack("[o]", container));
	json_object_set(spec, "volumes", b->volumes);
	return spec;
}

static json_t *build_workload(struct k8s_build *b, json_t *pod_spec)
{
	const char *kind = b->o->kind;
	json_t *meta = object_meta(b, b->name);
	json_t *tmpl;

	if (strcmp(kind, "Pod") == 0)
		return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", meta, "spec",
				 pod_spec);
	tmpl = json_pack("{s:{s:{s:s}}, s:o}", "metadata", "labels", NAME_LABEL, b->name, "spec", pod_spec);
	if (strcmp(kind, "Job") == 0) {
		json_t *spec = json_pack("{s:i}", "backoffLimit", 0);
		if (deadline(b->p))
			json_object_set_new(spec, "activeDeadlineSeconds", json_integer(deadline(b->p)));
		json_object_set_new(spec, "template", tmpl);
		return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "batch/v1", "kind", "Job", "metadata", meta,
				 "spec", spec);
	}
	return json_pack("{s:s, s:s, s:o, s:{s:i, s:{s:{s:s}}, s:o}}", "apiVersion", "apps/v1", "kind", "Deployment",
			 "metadata", meta, "spec", "replicas", 1, "selector", "matchLabels", NAME_LABEL, b->name,
			 "template", tmpl);
}

/* The rows of what the container's settings give, and of what they cannot. */
static void table_process(struct k8s_build *b, const char *profile, const struct seccomp_json_counts *counts)
{
	const struct moat_policy *p = b->p;
	const char *node_file = "the profile file on every node that may run the pod (the pod does not start "
				"without it)";

	row(b->table, "sys.filter", K8S_MANIFEST, node_file,
	    "seccompProfile Localhost %s: moat's %zu rules (%zu this libseccomp cannot name left out), "
	    "the same as the OCI bundle's", profile, counts->n_rules, counts->n_unknown);
	row(b->table, "proc.ptrace", K8S_MANIFEST, node_file, "the seccomp profile refuses ptrace and process_vm_*");
	row(b->table, "tty.inject", K8S_MANIFEST, node_file, "no terminal (tty false) and TIOCSTI, TIOCSETD refused by the profile");
	if (!p->unix_sockets)
		row(b->table, "ipc.unix", K8S_MANIFEST, node_file, "the seccomp profile refuses socket(AF_UNIX)");
	row(b->table, "ipc.abstract", K8S_MANIFEST, NULL, "the pod's own network namespace (hostNetwork false)");
	row(b->table, "proc.pid", K8S_MANIFEST, NULL, "the container's own pid namespace (hostPID false, "
						       "shareProcessNamespace false)");
	row(b->table, "privileges", K8S_MANIFEST, NULL,
	    "runAsNonRoot, uid and gid %d, allowPrivilegeEscalation false (no_new_privs), every capability "
	    "dropped, not privileged", K8S_UID);
	row(b->table, "proc.tree", K8S_MANIFEST, NULL,
	    "the command is the container's pid 1: its processes end with it%s", deadline(p) && strcmp(b->o->kind, "Deployment") != 0
	    ? "; --timeout is activeDeadlineSeconds" : "");
	row(b->table, "env.curated", K8S_NONE, NULL,
	    "the manifest lists moat's variables and turns service links off, but the kubelet adds "
	    "KUBERNETES_SERVICE_HOST and _PORT and the image adds its own ENV: use an image without ENV");
	row(b->table, "fd.clean", p->n_keep_fds ? K8S_NONE : K8S_MANIFEST, NULL, "%s",
	    p->n_keep_fds ? "--keep-fd: a pod cannot be given descriptors" : "the runtime starts the command with 0, 1 and 2");
	if (b->o->runtime_class)
		row(b->table, "isolation", K8S_CLUSTER, "a RuntimeClass of that name on the cluster",
		    "runtimeClassName %s%s", b->o->runtime_class,
		    strcmp(b->o->runtime_class, "gvisor") == 0 ? ": gVisor's user-space kernel between the command "
								  "and the node's"
							       : "");
	else
		row(b->table, "isolation", K8S_NONE, NULL,
		    "the node's kernel is shared; --runtime-class gvisor asks for gVisor's user-space kernel");
	row(b->table, "lsm", K8S_NONE, NULL, "AppArmor and SELinux are left to the cluster's defaults");
}

static void table_limits(struct k8s_build *b)
{
	const struct moat_limits *l = &b->p->limits;

	if (l->memory_bytes != MOAT_LIMIT_UNSET)
		row(b->table, "res.memory", K8S_MANIFEST, NULL, "resources.limits.memory %lld (the container's cgroup)",
		    (long long)l->memory_bytes);
	if (l->cpu_seconds != MOAT_LIMIT_UNSET)
		row(b->table, "res.cpu", K8S_NONE, NULL,
		    "--cpu is CPU time; Kubernetes limits a CPU rate (resources.limits.cpu), not a total");
	if (l->pids != MOAT_LIMIT_UNSET)
		row(b->table, "res.pids", K8S_CLUSTER, "the kubelet's podPidsLimit (node-wide, not per pod)",
		    "no per-pod field: --pids %lld is not in the manifest", (long long)l->pids);
	if (l->files != MOAT_LIMIT_UNSET)
		row(b->table, "res.files", K8S_NONE, NULL, "RLIMIT_NOFILE is the runtime's default");
	if (l->address_space_bytes != MOAT_LIMIT_UNSET)
		row(b->table, "res.address_space", K8S_NONE, NULL, "RLIMIT_AS is the runtime's default");
	if (l->timeout_s > 0)
		row(b->table, "res.timeout", strcmp(b->o->kind, "Deployment") == 0 ? K8S_NONE : K8S_MANIFEST, NULL,
		    "%s", strcmp(b->o->kind, "Deployment") == 0 ? "a Deployment has no deadline"
								 : "activeDeadlineSeconds");
}

/* --- files ------------------------------------------------------------------- */

static int make_subdir(const char *dir, const char *name, struct moat_error *err)
{
	cleanup_free char *path = moat_xasprintf("%s/%s", dir, name);
	struct stat st;

	if (mkdir(path, 0755) == 0 || (errno == EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	return moat_error_set(err, MOAT_E_SYSTEM, errno == EEXIST ? ENOTDIR : errno, "creating %s", path);
}

/* A manifest of an earlier export into the same DIR that this one does not
 * write (cilium-fqdn.yaml of an allowlist, now --net none) would still be
 * applied by `kubectl apply -f DIR`, with the earlier, wider policy: every
 * name this writer uses goes first. */
static int remove_stale(const char *dir, struct moat_error *err)
{
	static const char *const names[] = {"workload.yaml", "networkpolicy.yaml", "cilium-fqdn.yaml", "moat/report.json"};
	size_t i;

	for (i = 0; i < ARRAY_LEN(names); i++) {
		cleanup_free char *path = moat_xasprintf("%s/%s", dir, names[i]);
		if (unlink(path) != 0 && errno != ENOENT)
			return moat_error_set(err, MOAT_E_SYSTEM, errno, "removing the earlier export's %s", path);
	}
	return 0;
}

static int write_yaml(const char *dir, const char *name, const json_t *j, struct moat_error *err)
{
	cleanup_free char *text = yaml_dump(j);

	return backend_write_file(dir, name, text, strlen(text), err);
}

static int write_json_file(const char *dir, const char *name, const json_t *j, struct moat_error *err)
{
	cleanup_free char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	cleanup_free char *with_nl = moat_xasprintf("%s\n", text ? text : "null");

	return backend_write_file(dir, name, with_nl, strlen(with_nl), err);
}

int k8s_export(const struct moat_policy *p, char *const *envp, const struct k8s_options *opts, const char *dir,
	       json_t **report_out, struct moat_error *err)
{
	struct k8s_options o = *opts;
	cleanup_free char *name = NULL, *profile = NULL, *profile_file = NULL;
	cleanup_json json_t *table = json_array(), *volumes = json_array(), *mounts = json_array();
	cleanup_json json_t *grants = json_array(), *image_paths = json_array(), *seccomp = NULL;
	cleanup_json json_t *profile_ref = NULL, *netpol = NULL, *fqdn = NULL, *workload = NULL, *files = NULL;
	cleanup_json json_t *aliases = NULL;
	/* Under the allowlist the NetworkPolicy filters; the profile must let
	 * the sockets be made (moat's own filter keeps them closed until its
	 * fence is up, which a pod does not have). */
	struct moat_seccomp_opts so = {.net = p->net == MOAT_NET_ALLOW ? MOAT_NET_ALL : p->net,
				       .allow_ptrace = false,
				       .allow_unix = p->unix_sockets};
	struct seccomp_json_counts counts;
	struct k8s_build b = {.p = p, .o = &o, .table = table, .volumes = volumes, .mounts = mounts,
			      .grants = grants, .image_paths = image_paths};
	json_t *container;

	if (k8s_options_check(&o, err) < 0)
		return -1;
	if (!o.kind)
		o.kind = "Pod";
	/* Strong isolation asked for (--backend gvisor, sandbox = "gvisor"):
	 * gVisor's RuntimeClass, unless another is named. */
	if (!o.runtime_class && strcmp(p->backend, "gvisor") == 0)
		o.runtime_class = "gvisor";
	name = workload_name(p, &o);
	b.name = name;
	profile = moat_xasprintf("moat/%s.json", name);
	profile_file = moat_xasprintf("%s/%s.json", PROFILE_DIR, name);
	if (!(seccomp = seccomp_json_build(&so, &counts, err)))
		return moat_error_wrap(err, "the seccomp profile");
	profile_ref = json_pack("{s:s, s:s}", "type", "Localhost", "localhostProfile", profile);

	if (build_volumes(&b, envp, err) < 0)
		return -1;
	netpol = build_network(&b, &fqdn, &aliases);
	if (!(container = build_container(&b, envp, profile_ref, err)))
		return -1;
	workload = build_workload(&b, build_pod_spec(&b, container, profile_ref, aliases,
						     strcmp(o.kind, "Deployment") == 0));
	table_process(&b, profile, &counts);
	table_limits(&b);

	if (make_subdir(dir, "seccomp", err) < 0 || make_subdir(dir, PROFILE_DIR, err) < 0 ||
	    make_subdir(dir, "moat", err) < 0)
		return -1;
	if (remove_stale(dir, err) < 0)
		return -1;
	files = json_pack("[s]", "workload.yaml");
	if (write_yaml(dir, "workload.yaml", workload, err) < 0 || write_json_file(dir, profile_file, seccomp, err) < 0)
		return -1;
	if (netpol) {
		json_array_append_new(files, json_string("networkpolicy.yaml"));
		if (write_yaml(dir, "networkpolicy.yaml", netpol, err) < 0)
			return -1;
	}
	if (fqdn) {
		json_array_append_new(files, json_string("cilium-fqdn.yaml"));
		if (write_yaml(dir, "cilium-fqdn.yaml", fqdn, err) < 0)
			return -1;
	}
	json_array_append_new(files, json_string(profile_file));
	*report_out = json_pack("{s:s, s:s, s:s, s:s, s:O, s:{s:s, s:s}, s:O, s:O, s:O}", "format", "k8s", "kind",
				o.kind, "name", name, "image", o.image, "files", files, "seccomp", "profile", profile,
				"install", "copy seccomp/ of this directory into the kubelet's seccomp root "
					   "(/var/lib/kubelet/seccomp) on every node",
				"grants", grants, "image_paths", image_paths, "properties", table);
	if (write_json_file(dir, "moat/report.json", *report_out, err) < 0) {
		json_decref(*report_out);
		*report_out = NULL;
		return -1;
	}
	return 0;
}
