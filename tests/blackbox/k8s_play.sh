#!/usr/bin/env bash
# The exported Pod run by a container engine that plays Kubernetes manifests
# (issue 22): `podman kube play` of `moat export --format k8s`'s
# workload.yaml against a tiny image imported from a tarball made here
# (dash, cat, their libraries and the static testhelper; no registry pull),
# and the security context checked from inside: /proc/self/status says uid
# and gid 65534, Seccomp 2, NoNewPrivs 1, CapEff and CapBnd 0; a write to the
# root fails; the syscalls moat's filter refuses are refused (unshare of a
# user namespace, mount, ptrace: EPERM; io_uring_setup: ENOSYS).
#
# podman 4.3 reads a Pod's seccomp profile from the annotation
# seccomp.security.alpha.kubernetes.io/pod, not from securityContext's
# seccompProfile, and only as a file name directly in --seccomp-profile-root:
# the test adds that annotation to a copy (moat's manifest has the field
# only: an API server refuses an annotation that disagrees with it).
# Controls: the manifest as moat wrote it gets podman's default profile,
# which lets the user-namespace unshare through (so the refusals above are
# moat's rules); without its securityContext the command is root, with
# capabilities and a writable root; with no profile file the Pod does not
# start (fail closed, as the report says of a kubelet).
#
# podman runs on a store of its own in the scratch dir (--root, --runroot,
# vfs: nothing of the host's images, containers or volumes is touched),
# with --network none (no bridge, no firewall rule is made) and runc (crun
# refuses hybrid cgroup hosts).  Its containers' rlimits are set within the
# host's hard limits (containers.conf), which podman's defaults exceed here.
# Root only: rootless podman needs a writable HOME and subuid ranges, which
# uid 65534 has not.  Without podman, runc or python3-yaml: a skip that
# says so.
set -u
. "$(dirname "$0")/../lib/tap.sh"
command -v podman >/dev/null || skip_all "podman is not installed (scripts/ensure-deps test installs it): the exported Pod is not run (podman kube play)"
command -v runc >/dev/null || skip_all "runc is not installed: podman kube play has no runtime that runs here"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml is not installed: the manifest cannot be adapted for podman"
[ "$(id -u)" = 0 ] || skip_all "podman kube play runs as root only here (rootless podman needs a writable HOME and subuid ranges)"
scratch_sticky
P=$SCRATCH/podman
mkdir -p "$P/root" "$P/run" "$P/img/bin" "$P/empty-seccomp"
printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n' >"$P/containers.conf"
pm() { CONTAINERS_CONF="$P/containers.conf" timeout 120 podman --root "$P/root" --runroot "$P/run" --storage-driver vfs \
	--runtime runc --cgroup-manager cgroupfs --events-backend none "$@"; }
cleanup() {
	pm pod rm -f -a >/dev/null 2>&1
	pm rmi -a -f >/dev/null 2>&1
	rm -rf "$SCRATCH" "$REPORTS"
}
trap cleanup EXIT

# The image: dash as /bin/sh, cat, the libraries they load.
cp /bin/dash "$P/img/bin/sh"
cp /bin/cat "$P/img/bin/cat"
cp "$BUILD/helpers/testhelper" "$P/img/bin/testhelper" # static: tries the syscalls moat's filter refuses
for lib in $(ldd /bin/dash /bin/cat | awk '/=>/ {print $3} /^\t\/lib/ {print $1}' | sort -u); do
	mkdir -p "$P/img$(dirname "$lib")"
	cp -L "$lib" "$P/img$lib"
done
mkdir -p "$P/img/tmp" "$P/img/proc" "$P/img/dev" "$P/img/etc"
tar -C "$P/img" -cf "$P/img.tar" .
pm import "$P/img.tar" localhost/moat-k8s-probe:1 >/dev/null 2>"$P/import.err"
ok $? "a local image from a tarball (podman import)" || sed 's/^/#   /' "$P/import.err"

. "$ROOT/tests/lib/k8s_cases.sh"
PROBE='cat /proc/self/status; /bin/testhelper syscalls; if echo x >/probe 2>/dev/null; then echo ROOT-WRITABLE; else echo ROOT-READONLY; fi'
k8s "$SCRATCH/pod" --image localhost/moat-k8s-probe:1 --profile strict -- /bin/sh -c "$PROBE" 2>"$SCRATCH/export.err"
ok $? "moat export --format k8s of a Pod" || sed 's/^/#   /' "$SCRATCH/export.err"

# play DIR MANIFEST SECCOMP_ROOT: play it, wait for the command's end (not
# when kube play failed: there is no container), its log into DIR/log; the
# exit status of kube play.
play() {
	local rc i
	pm pod rm -f -a >/dev/null 2>&1
	pm kube play --network none --seccomp-profile-root "$3" "$2" >"$1/play.out" 2>&1
	rc=$?
	# Up to 180 s: on a loaded CI machine (two lanes at once) the first
	# container took more than the 10 s, and once more than the 60 s, this
	# waited, and its log was read empty.
	for i in $(seq 1 "$([ "$rc" = 0 ] && echo 1800 || echo 0)"); do
		[ "$(pm inspect moat-sh-command --format '{{.State.Status}}' 2>/dev/null)" = exited ] && break
		sleep 0.1
	done
	# The log of an exited container can still lag behind its state.
	for i in $(seq 1 "$([ "$rc" = 0 ] && echo 50 || echo 1)"); do
		pm logs moat-sh-command >"$1/log" 2>&1
		grep -q '^Uid:' "$1/log" && break
		sleep 0.2
	done
	[ "$rc" != 0 ] || grep -q '^Uid:' "$1/log" ||
		diag "no status in the container's log after ${SECONDS}s of the test: state $(pm inspect moat-sh-command \
			--format '{{.State.Status}} {{.State.ExitCode}} {{.State.Error}}' 2>&1 | head -c 300)"
	return $rc
}
status() { # status DIR FIELD: the field of /proc/self/status the command saw
	awk -v f="$2:" '$1 == f {print $2; exit}' "$1/log"
}

# variant IN OUT ANNOTATE(0|1) BARE(0|1): a copy of the manifest for podman.
variant() {
	mkdir -p "$(dirname "$2")"
	/usr/bin/python3 - "$1" "$3" "$4" >"$2" <<'EOF'
import os, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
if sys.argv[2] == "1":
    profile = d["spec"]["securityContext"]["seccompProfile"]["localhostProfile"]
    d["metadata"]["annotations"] = {"seccomp.security.alpha.kubernetes.io/pod": "localhost/" + os.path.basename(profile)}
if sys.argv[3] == "1":
    del d["spec"]["securityContext"]
    del d["spec"]["containers"][0]["securityContext"]
print(yaml.safe_dump(d))
EOF
}
NODE=$SCRATCH/pod/seccomp/moat # the "kubelet's seccomp root", as podman 4.3 reads it
variant "$SCRATCH/pod/workload.yaml" "$SCRATCH/moat/workload.yaml" 1 0
play "$SCRATCH/moat" "$SCRATCH/moat/workload.yaml" "$NODE"
ok $? "podman kube play of the exported Pod" || sed 's/^/#   /' "$SCRATCH/moat/play.out"
is "$(status "$SCRATCH/moat" Uid) $(status "$SCRATCH/moat" Gid)" "65534 65534" "inside: uid and gid 65534 (runAsUser, runAsGroup)"
is "$(status "$SCRATCH/moat" Seccomp)" 2 "inside: Seccomp 2"
is "$(status "$SCRATCH/moat" NoNewPrivs)" 1 "inside: NoNewPrivs 1 (allowPrivilegeEscalation false)"
is "$(status "$SCRATCH/moat" CapEff) $(status "$SCRATCH/moat" CapBnd)" "0000000000000000 0000000000000000" \
	"inside: CapEff and CapBnd 0 (every capability dropped)"
is "$(grep -c ROOT-READONLY "$SCRATCH/moat/log")" 1 "inside: a write to / fails (readOnlyRootFilesystem)"
SYSCALLS='^(unshare_user|mount|ptrace_traceme_bad|io_uring_setup)='
is "$(grep -E "$SYSCALLS" "$SCRATCH/moat/log" | sort | tr '\n' ' ')" \
	"io_uring_setup=ENOSYS mount=EPERM ptrace_traceme_bad=EPERM unshare_user=EPERM " \
	"inside: moat's rules refuse unshare(CLONE_NEWUSER), mount, ptrace (EPERM) and io_uring_setup (ENOSYS)"

# Control: podman's own default profile, for the manifest as moat wrote it.
play "$SCRATCH/pod" "$SCRATCH/pod/workload.yaml" "$NODE"
is "$(grep -E '^unshare_user=' "$SCRATCH/pod/log")" "unshare_user=OK" \
	"control: podman's default profile lets unshare(CLONE_NEWUSER) through (the refusals above are moat's)"

# Control: the securityContext taken out, the same image and command.
variant "$SCRATCH/pod/workload.yaml" "$SCRATCH/bare/workload.yaml" 0 1
play "$SCRATCH/bare" "$SCRATCH/bare/workload.yaml" "$NODE"
ok $? "control: podman kube play of the Pod without its securityContext" || sed 's/^/#   /' "$SCRATCH/bare/play.out"
is "$(status "$SCRATCH/bare" Uid)" 0 "control: then the command is root"
unlike "$(status "$SCRATCH/bare" CapEff)" '^0+$' "control: with capabilities ($(status "$SCRATCH/bare" CapEff))"
is "$(grep -c ROOT-WRITABLE "$SCRATCH/bare/log")" 1 "control: and a write to / succeeds"

# Fail closed: no profile file where the manifest says it is.
play "$SCRATCH/moat" "$SCRATCH/moat/workload.yaml" "$P/empty-seccomp"
rc=$?
like "$rc:$(tr '\n' ' ' <"$SCRATCH/moat/play.out")" "^[1-9][0-9]*:.*moat-sh.json: no such file" \
	"without the profile file on the node the Pod does not start (it names the profile)"
unlike "$(cat "$SCRATCH/moat/log")" "Uid:" "  and the command never ran"
done_testing
