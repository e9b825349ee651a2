#include "report/report.h"

#include <errno.h>
#include <sys/stat.h>
#include <limits.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>

#include "policy/netdest.h"
#include "policy/properties.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/jsontext.h"
#include "util/mem.h"
#include "util/sha256.h"

#ifndef MOAT_VERSION
#define MOAT_VERSION "0.0.0"
#endif

static json_t *limit_json(int64_t v)
{
	return v == MOAT_LIMIT_UNSET ? json_null() : json_integer(v);
}

static json_t *origin_json(const struct moat_origin *o)
{
	if (o->line > 0)
		return json_pack("{s:o, s:i, s:i}", "source", json_text(o->source ? o->source : ""), "line", o->line,
				 "col", o->col);
	return json_pack("{s:o}", "source", json_text(o->source ? o->source : ""));
}

static const char *family_name(int family)
{
	return family == AF_INET ? "ipv4" : "ipv6";
}

/* Each destination as written and as parsed. */
static json_t *net_allow_json(const struct moat_policy *p)
{
	json_t *a = json_array();
	size_t i, k;

	for (i = 0; i < p->n_net_allow; i++) {
		const struct moat_net_dest *d = &p->net_allow[i];
		json_t *o =
		    json_pack("{s:o, s:s, s:b, s:b, s:b, s:o}", "text", json_text(d->text), "kind",
			      net_dest_kind_name(d->kind), "host_loopback", d->host_loopback, "private_range",
			      d->names_private_range, "proxy_only", d->proxy_only, "origin", origin_json(&d->origin));
		char buf[64];

		if (d->kind == MOAT_NET_DEST_ADDR) {
			json_object_set_new(o, "family", json_string(family_name(d->family)));
			json_object_set_new(o, "address",
					    json_string(net_addr_text(d->family, d->addr, buf, sizeof(buf))));
			json_object_set_new(o, "prefix", json_integer(d->prefix));
		} else {
			json_object_set_new(o, "name", json_text(d->name));
		}
		if (d->from)
			json_object_set_new(o, "from", json_text(d->from));
		if (d->any_port) {
			json_object_set_new(o, "ports", json_string("any"));
		} else {
			json_t *ports = json_array();
			for (k = 0; k < d->n_ports; k++)
				json_array_append_new(ports, json_integer(d->ports[k]));
			json_object_set_new(o, "ports", ports);
		}
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *net_resolve_json(const struct moat_policy *p)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < p->n_net_pins; i++) {
		const struct moat_net_pin *pin = &p->net_pins[i];
		char buf[64];

		json_array_append_new(a, json_pack("{s:o, s:s, s:s, s:o}", "name", json_text(pin->name), "family",
						   family_name(pin->family), "address",
						   net_addr_text(pin->family, pin->addr, buf, sizeof(buf)), "origin",
						   origin_json(&pin->origin)));
	}
	return a;
}

static json_t *fence_addr_json(const struct netfence_addr *a)
{
	char buf[64];

	return json_string(net_addr_text(a->family, a->family == AF_INET ? (const void *)&a->v4 : (const void *)&a->v6,
					 buf, sizeof(buf)));
}

/* What the fence decided, name by name and destination by destination
 * (launch/netlog.h), and the --events-fd stream's counts. */
static void netlog_json(json_t *net, const struct netlog *l)
{
	json_t *names = json_array(), *conns = json_array();
	size_t i, k;

	for (i = 0; i < l->n_names; i++) {
		const struct netlog_name *n = &l->names[i];
		json_t *addrs = json_array();

		for (k = 0; k < n->n_addrs; k++)
			json_array_append_new(addrs, fence_addr_json(&n->addrs[k]));
		json_array_append_new(names,
				      json_pack("{s:o, s:I, s:I, s:I, s:o}", "name", json_text(n->name), "answered",
						(json_int_t)n->answered, "denied", (json_int_t)n->denied, "failed",
						(json_int_t)n->failed, "addresses", addrs));
	}
	for (i = 0; i < l->n_conns; i++) {
		const struct netlog_conn *c = &l->conns[i];

		json_array_append_new(conns, json_pack("{s:o, s:i, s:s, s:o, s:I, s:I, s:I}", "address",
						       fence_addr_json(&c->addr), "port", (int)c->port, "protocol",
						       netlog_protocol_name(c->protocol), "name", json_text(c->name), "allowed",
						       (json_int_t)c->allowed, "refused", (json_int_t)c->refused,
						       "local", (json_int_t)c->local));
	}
	json_object_set_new(net, "names", names);
	json_object_set_new(net, "connections", conns);
	json_object_set_new(net, "dropped",
			    json_pack("{s:I, s:I, s:I}", "names", (json_int_t)l->names_dropped, "connections",
				      (json_int_t)l->conns_dropped, "proxy_destinations",
				      (json_int_t)l->proxied_dropped));
	if (l->events_fd >= 0)
		json_object_set_new(net, "events",
				    json_pack("{s:I, s:I}", "written", (json_int_t)l->events_written, "dropped",
					      (json_int_t)l->events_dropped));
}

/* Each destination asked of the proxy mode, and what became of it. */
static json_t *proxy_destinations_json(const struct netlog *l)
{
	json_t *a = json_array();

	for (size_t i = 0; i < l->n_proxied; i++) {
		const struct netlog_proxy *p = &l->proxied[i];
		json_array_append_new(a, json_pack("{s:o, s:i, s:I, s:I, s:I, s:I}", "host", json_text(p->host), "port",
						   (int)p->port, "tunnels", (json_int_t)p->tunnels, "refused",
						   (json_int_t)p->refused, "sni_refused", (json_int_t)p->sni_refused,
						   "failed", (json_int_t)p->failed));
	}
	return a;
}

static json_t *strv_json(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_text(v[i]));
	return a;
}

/* The files read and the keys kept and dropped: never a value. */
static json_t *git_config_json(const struct moat_git_config *g)
{
	return json_pack("{s:o, s:o, s:o}", "files", strv_json(g->files, g->n_files), "kept",
			 strv_json(g->kept, g->n_kept), "dropped", strv_json(g->dropped, g->n_dropped));
}

/* Each cache moat gave a package manager: the variable and the directory. */
static json_t *pkg_caches_json(const struct moat_policy *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->n_pkg_caches; i++)
		json_array_append_new(a, json_pack("{s:o, s:o, s:o}", "tool", json_text(p->pkg_caches[i].tool), "var",
						   json_text(p->pkg_caches[i].var), "path",
						   json_text(p->pkg_caches[i].path)));
	return a;
}

json_t *policy_to_json(const struct moat_policy *p)
{
	json_t *j = json_object(), *argv = json_array(), *paths = json_array(), *env = json_array(),
	       *fds = json_array(), *req = json_array();
	size_t i;

	for (i = 0; i < p->argc; i++)
		json_array_append_new(argv, json_text(p->argv[i]));
	for (i = 0; i < p->n_paths; i++)
		json_array_append_new(paths,
				      json_pack("{s:o, s:s, s:b, s:o}", "path", json_text(p->paths[i].path), "access",
						moat_access_name(p->paths[i].access), "optional", p->paths[i].optional,
						"origin", origin_json(&p->paths[i].origin)));
	for (i = 0; i < p->n_env; i++)
		json_array_append_new(env, json_pack("{s:o, s:s}", "name", json_text(p->env[i].name), "from",
						     p->env[i].value ? "set" : "pass"));
	for (i = 0; i < p->n_keep_fds; i++)
		json_array_append_new(fds, json_integer(p->keep_fds[i]));
	for (i = 0; i < MOAT_P__COUNT; i++)
		if (p->require & MOAT_PBIT(i))
			json_array_append_new(req, json_string(moat_property_name((enum moat_property)i)));

	json_object_set_new(j, "profile", json_text(p->profile));
	json_object_set_new(j, "mode", json_string(moat_mode_name(p->mode)));
	json_object_set_new(j, "backend", json_text(p->backend));
	json_object_set_new(j, "net", json_string(moat_net_name(p->net)));
	/* Only when there are some: the digest of a policy without them
	 * stays what it was. */
	if (p->n_net_allow)
		json_object_set_new(j, "net_allow", net_allow_json(p));
	if (p->n_net_pins)
		json_object_set_new(j, "net_resolve", net_resolve_json(p));
	/* Likewise --tty and --no-tty.  Whether the command got a terminal is
	 * not the policy's (a dry run makes none, and its digest is the
	 * run's: docs/report.md): filesystem.paths shows its grants. */
	if (p->tty != MOAT_TTY_AUTO)
		json_object_set_new(j, "tty", json_string(moat_tty_name(p->tty)));
	/* Only when there is one, likewise. */
	if (p->git_config)
		json_object_set_new(j, "git_config", git_config_json(p->git_config));
	if (p->n_pkg_caches)
		json_object_set_new(j, "package_caches", pkg_caches_json(p));
	json_object_set_new(j, "private_tmp", json_boolean(p->private_tmp));
	json_object_set_new(j, "argv", argv);
	json_object_set_new(j, "exe", json_text(p->exe));
	json_object_set_new(j, "cwd", json_text(p->cwd));
	json_object_set_new(j, "paths", paths);
	json_object_set_new(j, "env", env);
	json_object_set_new(j, "keep_fds", fds);
	json_object_set_new(j, "require", req);
	json_object_set_new(j, "limits",
			    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "memory_bytes",
				      limit_json(p->limits.memory_bytes), "pids", limit_json(p->limits.pids), "files",
				      limit_json(p->limits.files), "cpu_seconds", limit_json(p->limits.cpu_seconds),
				      "address_space_bytes", limit_json(p->limits.address_space_bytes), "tmp_bytes",
				      limit_json(p->limits.tmp_bytes), "timeout_s",
				      p->limits.timeout_s > 0 ? json_real(p->limits.timeout_s) : json_null()));
	return j;
}

static json_t *host_json(const struct moat_host *h)
{
	return json_pack("{s:o, s:o, s:i, s:b, s:b, s:o, s:b, s:i, s:i, s:o}", "kernel", json_text(h->kernel),
			 "machine", json_text(h->machine), "landlock_abi", h->landlock_abi, "seccomp", h->seccomp,
			 "userns", h->userns, "userns_blocked_by", json_text(h->userns_why), "root", h->root, "uid",
			 (int)h->uid, "gid", (int)h->gid, "limited_by", json_text(h->limited_by));
}

static json_t *properties_json(const struct moat_plan *plan, json_t *missing)
{
	json_t *props = json_object();
	int i;

	for (i = 0; i < MOAT_P__COUNT; i++) {
		const struct moat_verdict *v = &plan->props[i];
		const char *name = moat_property_name((enum moat_property)i);
		json_t *o;

		if (plan->status == MOAT_STATUS_OFF) {
			o = json_pack("{s:s, s:b}", "status", "off", "requested", false);
		} else if (v->enforced) {
			o = json_pack("{s:s, s:b, s:o}", "status", "enforced", "requested", v->requested, "mechanism",
				      json_text(v->mechanism));
		} else if (v->requested) {
			o = json_pack("{s:s, s:b, s:o, s:o}", "status", "missing", "requested", true, "reason",
				      json_text(v->reason), "hint", json_text(v->hint));
			json_array_append_new(missing, json_string(name));
		} else {
			o = json_pack("{s:s, s:b}", "status", "not-requested", "requested", false);
		}
		json_object_set_new(props, name, o);
	}
	return props;
}

/* Each limit that binds this run, with what holds it (resolve/limits.h). */
static json_t *limits_json(const struct limits_plan *lp)
{
	json_t *o = json_object();
	int k;

	for (k = 0; k < LIM__COUNT; k++) {
		const struct limit_verdict *v = &lp->lim[k];
		if (!v->declared)
			continue;
		if (v->enforced)
			json_object_set_new(o, limit_name((enum limit_kind)k),
					    json_pack("{s:I, s:s, s:o}", "value", (json_int_t)v->value, "status",
						      "enforced", "mechanism", json_text(v->mechanism)));
		else
			json_object_set_new(o, limit_name((enum limit_kind)k),
					    json_pack("{s:I, s:s, s:o, s:o}", "value", (json_int_t)v->value, "status",
						      "missing", "reason", json_text(v->reason), "hint",
						      json_text(v->hint)));
	}
	return o;
}

/* How many times each enforced limit was reached during the run, where its
 * mechanism counts it: forks and threads pids.max refused, processes the
 * OOM killer ended at the memory limit, the tree ended at --cpu.  null
 * where it counts nothing moat can read (an rlimit, RLIMIT_NPROC among
 * them; runc's own cgroup). */
static void limits_add_hits(json_t *o, const struct limits_plan *lp, const struct moat_launch_result *run)
{
	int k;

	for (k = 0; k < LIM__COUNT; k++) {
		json_t *e = json_object_get(o, limit_name((enum limit_kind)k));
		int64_t n = -1;

		if (!e || !lp->lim[k].enforced)
			continue;
		if (k == LIM_PIDS)
			n = run->pids_refused;
		else if (k == LIM_MEMORY)
			n = run->oom_kills;
		else if (k == LIM_CPU && run->cpu_usec >= 0)
			n = run->limit_hit && strcmp(run->limit_hit, "cpu") == 0;
		json_object_set_new(e, "hits", n >= 0 ? json_integer(n) : json_null());
	}
}

static const char *role_name(enum fs_role r)
{
	return r == FS_READ ? "read" : r == FS_WRITE ? "write" : "deny";
}

/* What each path of the policy resolved to: the object granted or denied
 * (the target of a read grant's symlink is what it grants), and the
 * protected entries of the write grants with what became of them. */
static json_t *filesystem_json(const struct fs_plan *fp)
{
	json_t *paths = json_array(), *prot = json_array();
	size_t i, n_entries = 0;

	for (i = 0; i < fp->n; i++) {
		const struct fs_obj *o = &fp->obj[i];
		json_t *e;

		if (o->role == FS_PROTECT) {
			const char *state = o->lifted ? "lifted" : o->placeholder ? "placeholder" : o->watch ? "watched"
													: "read-only";
			json_array_append_new(prot,
					      json_pack("{s:o, s:s}", "path", json_text(o->real), "state", state));
			continue;
		}
		if (!o->rule) {
			n_entries += o->role == FS_READ || o->role == FS_WRITE;
			continue;
		}
		e = json_pack("{s:o, s:s, s:b}", "path", json_text(o->path), "access", role_name(o->role), "present",
			      o->present);
		if (o->real && strcmp(o->real, o->path) != 0)
			json_object_set_new(e, "resolved", json_text(o->real));
		if (o->dropped)
			json_object_set_new(e, "granted", json_false());
		if (o->expanded)
			json_object_set_new(e, "expanded", json_true());
		if (o->mount_of)
			json_object_set_new(e, "mount_of", json_text(o->mount_of));
		json_array_append_new(paths, e);
	}
	return json_pack("{s:o, s:o, s:I}", "paths", paths, "protected", prot, "expanded_entries",
			 (json_int_t)n_entries);
}

json_t *report_build(const struct moat_policy *p, const struct moat_host *h, const struct moat_plan *plan,
		     const struct moat_launch_result *run)
{
	json_t *j = json_object(), *pol = policy_to_json(p), *missing = json_array(), *names = json_array();
	cleanup_free char *canon = json_dumps(pol, JSON_SORT_KEYS | JSON_COMPACT);
	char digest[65];
	size_t i;

	sha256_hex(canon ? canon : "", canon ? strlen(canon) : 0, digest);
	for (i = 0; plan->env_names && plan->env_names[i]; i++)
		json_array_append_new(names, json_text(plan->env_names[i]));

	json_object_set_new(j, "schema", json_string(MOAT_REPORT_SCHEMA));
	json_object_set_new(j, "moat_version", json_string(MOAT_VERSION));
	json_object_set_new(j, "status", json_string(moat_status_name(plan->status)));
	json_object_set_new(j, "mode", json_string(moat_mode_name(p->mode)));
	json_object_set_new(j, "backend", json_string(plan->backend ? plan->backend : "none"));
	json_object_set_new(j, "backend_choice",
			    json_pack("{s:o, s:o}", "asked",
				      json_text(plan->backend_asked ? plan->backend_asked : p->backend), "reason",
				      json_text(plan->backend_reason)));
	if (plan->compiled.argv) {
		json_t *argv = json_array();
		for (i = 0; i < plan->compiled.argc; i++)
			json_array_append_new(argv, json_text(plan->compiled.argv[i]));
		json_object_set_new(j, "launcher",
				    json_pack("{s:o, s:o, s:o*}", "tool", json_text(plan->compiled.tool_path), "argv",
					      argv, "runtime",
					      plan->compiled.runtime ? json_text(plan->compiled.runtime) : NULL));
	}
	json_object_set_new(j, "profile", json_text(p->profile));
	json_object_set_new(j, "host", host_json(h));
	json_object_set_new(j, "command",
			    json_pack("{s:O, s:o, s:o}", "argv", json_object_get(pol, "argv"), "exe",
				      json_text(p->exe ? p->exe : ""), "cwd", json_text(p->cwd ? p->cwd : "")));
	json_object_set_new(j, "environment", json_pack("{s:o}", "names", names));
	if (p->n_pkg_caches && plan->status != MOAT_STATUS_OFF)
		json_object_set_new(json_object_get(j, "environment"), "package_caches", pkg_caches_json(p));
	json_object_set_new(j, "properties", properties_json(plan, missing));
	if (p->net == MOAT_NET_ALLOW) {
		json_t *net = json_pack("{s:s, s:o, s:o}", "mode", moat_net_name(p->net), "allow", net_allow_json(p),
					"resolve", net_resolve_json(p));
		/* What the fence did during the run (launch/fence.h). */
		if (run && run->fenced)
			json_object_set_new(
			    net, "fence",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "connects_forwarded",
				      (json_int_t)run->fence.forwarded, "connects_refused",
				      (json_int_t)run->fence.refused, "connects_local", (json_int_t)run->fence.local,
				      "dns_queries", (json_int_t)run->fence.dns_queries, "dns_denied",
				      (json_int_t)run->fence.dns_denied, "failures", (json_int_t)run->fence.failures));
		if (run && run->fenced) {
			netlog_json(net, &run->netlog);
			/* The proxy mode (kernel/netproxy.h), and the host's
			 * proxies moat's connects went through. */
			json_object_set_new(
			    net, "proxy",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "connections",
				      (json_int_t)run->proxy.accepted, "tunnels", (json_int_t)run->proxy.tunnels,
				      "refused", (json_int_t)run->proxy.refused, "sni_refused",
				      (json_int_t)run->proxy.sni_refused, "failed", (json_int_t)run->proxy.failed,
				      "bad", (json_int_t)run->proxy.bad, "via_upstream",
				      (json_int_t)run->proxy.via_upstream, "via_upstream_by_name",
				      (json_int_t)run->proxy.via_upstream_by_name, "bytes_up", (json_int_t)run->proxy.bytes_up,
				      "bytes_down", (json_int_t)run->proxy.bytes_down));
			json_object_set_new(json_object_get(net, "proxy"), "destinations",
					    proxy_destinations_json(&run->netlog));
			if (run->upstream[0][0] || run->upstream[1][0] || run->upstream[2][0])
				json_object_set_new(
				    net, "upstream",
				    json_pack("{s:o, s:o, s:o, s:I}", "https",
					      json_text(run->upstream[0][0] ? run->upstream[0] : NULL), "http",
					      json_text(run->upstream[1][0] ? run->upstream[1] : NULL), "all",
					      json_text(run->upstream[2][0] ? run->upstream[2] : NULL),
					      "connects_via_upstream", (json_int_t)run->fence.via_upstream));
		}
		json_object_set_new(j, "network", net);
	}
	if (plan->status != MOAT_STATUS_OFF) {
		json_object_set_new(j, "filesystem", filesystem_json(&plan->fs));
		json_t *limits = limits_json(&plan->limits);

		if (run)
			limits_add_hits(limits, &plan->limits, run);
		json_object_set_new(j, "limits", limits);
	}
	json_object_set_new(j, "missing", missing);
	json_object_set_new(j, "policy_digest", json_sprintf("sha256:%s", digest));
	if (run) {
		json_t *r = json_object();

		json_object_set_new(r, "executed", json_boolean(run->executed));
		json_object_set_new(r, "exit_code", json_integer(run->exit_code));
		json_object_set_new(r, "exit_status", run->exited ? json_integer(run->exit_status) : json_null());
		json_object_set_new(r, "signal", run->signal ? json_integer(run->signal) : json_null());
		json_object_set_new(r, "timed_out", json_boolean(run->timed_out));
		json_object_set_new(r, "limit_exceeded", run->limit_hit ? json_string(run->limit_hit) : json_null());
		if (run->cpu_usec > 0)
			json_object_set_new(r, "cpu_seconds", json_real((double)run->cpu_usec / 1e6));
		/* Known only with a memory cgroup of moat's (a refusal has none). */
		if (run->memory_peak > 0) {
			json_object_set_new(r, "memory_peak_bytes", json_integer(run->memory_peak));
			json_object_set_new(r, "oom_kills", json_integer(run->oom_kills > 0 ? run->oom_kills : 0));
		}
		json_object_set_new(r, "exec_ms", json_real(run->exec_ms));
		json_object_set_new(r, "run_ms", json_real(run->run_ms));
		if (run->failure[0])
			json_object_set_new(r, "failure", json_text(run->failure));
		if (run->n_left) {
			json_t *left = json_array();

			for (size_t k = 0; k < run->n_left; k++) {
				const struct moat_leftover *l = &run->left[k];
				json_t *e = json_object();

				json_object_set_new(e, "path", json_text(l->path));
				json_object_set_new(e, "what", json_string(l->what));
				json_object_set_new(e, "state", json_string(!l->kept_as	   ? "left"
									    : l->kept_as[0] ? "moved_aside"
											    : "removed"));
				if (l->kept_as && l->kept_as[0])
					json_object_set_new(e, "kept_as", json_text(l->kept_as));
				if (l->ipc) {
					char key[16];

					snprintf(key, sizeof(key), "0x%08x", (unsigned)l->ipc_key);
					json_object_set_new(e, "id", json_integer(l->ipc_id));
					json_object_set_new(e, "key", json_string(key));
				}
				json_array_append_new(left, e);
			}
			json_object_set_new(r, "left_on_host", left);
		}
		json_object_set_new(j, "run", r);
		json_decref(pol);
	} else {
		json_object_set_new(j, "policy", pol);
	}
	return j;
}

/* A pipe too small for the whole report is grown to hold it, when the
 * kernel lets moat's user (fs.pipe-max-size, 1 MiB by default): a caller
 * that reads the pipe only after moat exited then gets the report instead
 * of a moat waiting for it forever.  Larger than that, moat waits for the
 * reader as a blocking write does (docs/report.md). */
static void make_room(int fd, size_t len)
{
	struct stat st;
	int size;

	if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || len > INT_MAX / 2)
		return;
	size = fcntl(fd, F_GETPIPE_SZ);
	if (size >= 0 && (size_t)size < len)
		(void)fcntl(fd, F_SETPIPE_SZ, (int)len);
}

int report_write_fd(json_t *j, int fd, struct moat_error *err)
{
	/* 12 significant digits: a time of 2.889255 ms prints so, not as
	 * the double's 17 (2.8892549999999999); microseconds stay exact. */
	cleanup_free char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	cleanup_free char *line = NULL;
	size_t len;

	if (!text)
		return moat_error_set(err, MOAT_E_SYSTEM, 0, "serialising the report");
	/* One buffer with its newline, written whole: a non-blocking pipe
	 * (the caller's) is waited for, not given up on (util/file.h). */
	line = moat_xasprintf("%s\n", text);
	len = strlen(line);
	make_room(fd, len);
	if (file_write_all(fd, line, len) < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "writing the report");
	return 0;
}
