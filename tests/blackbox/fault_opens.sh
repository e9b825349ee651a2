#!/usr/bin/env bash
# Every open of moat's run refused once, for want of descriptors (EMFILE,
# injected by strace at the K-th openat and the K-th openat2 of each of
# its processes -- moat, the sandbox's set-up, the command -- K = 1, 2, ...
# up to as many as one makes): the run must then be refused naming the
# cause, or run with claims that hold.  A check that takes "could not
# open" for "nothing there" turns running out of descriptors into a false
# `enforced`:
#   - a hard-link farm in a write grant (pnpm's node_modules/.pnpm) not
#     opened was taken for no farm: fs.write enforced, the store writable;
#   - a denied directory not opened was left out of the hard-link walk
#     (said as the walk's bound): fs.secrets enforced over a key with a
#     second name in the project;
#   - a repository's .git/config, a gitfile, a commondir not opened: the
#     git directories and hooks paths they name went unprotected;
#   - /proc/self/task not opened at the command's end: moat never reaped
#     the command and polled forever.
# Two policies, each against the verdicts of the same run without faults:
#   found  the farm and the linked key are there: fs.write and fs.secrets
#          must never say enforced;
#   held   nothing is missing: the command tries the secret, a read-only
#          grant, the repositories' hooks and configs (core.hooksPath's
#          too), a gitfile and the git directory it names, and protected
#          names; whatever the report says enforced, the host shows none
#          of it done;
#   home   the same with HOME itself the write grant: its dotfiles
#          (.bashrc, an absent .profile), ~/.config/autostart, ~/.ssh.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
. "$(dirname "$0")/../lib/fault_fixture.sh"

# opens: the most openat or openat2 calls one process of a run made (its
# trace, $1)
opens() {
	awk '$2 ~ /^openat\(/ { a[$1]++ } $2 ~ /^openat2\(/ { b[$1]++ }
		END { m = 0; for (p in a) if (a[p] > m) m = a[p]; for (p in b) if (b[p] > m) m = b[p]; print m }' "$1"
}
# run_at K HOME PROJ: the K-th openat and openat2 of every process refused
run_at() { fault_run "openat,openat2:error=EMFILE:when=$1" "$2" "$3"; }

# --- the runs without faults: what each policy claims, and the control
fault_baselines
NA=$(opens "$SCRATCH/trace.found") NB=$(opens "$SCRATCH/trace.held") NC=$(opens "$SCRATCH/trace.home")

# --- every open refused once
for k in $(seq 1 "$NA"); do
	run_at "$k" "$F/homeA" "$F/projA"
	fault_tally $? "found:$k"
	judge_found "$k"
done
# held_runs NAME HOME PROJ COUNT: every K of a policy that holds
held_runs() {
	local k
	for k in $(seq 1 "$4"); do
		run_at "$k" "$2" "$3"
		fault_tally $? "$1:$k"
		judge_held "$1:$k"
	done
}
held_runs held "$F/homeB" "$F/projB" "$NB"
held_runs home "$F/homeC" "$F/homeC" "$NC"
diag "K = 1..$NA (found), 1..$NB (held), 1..$NC (home): $REFUSED runs refused (125), $RAN ran"
fault_verdicts ""
[ "$REFUSED" -gt 0 ] && [ "$RAN" -gt 0 ]
ok $? "  (both outcomes occur: $REFUSED refused, $RAN ran)"

done_testing
