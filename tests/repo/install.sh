#!/usr/bin/env bash
# moat installs like a tool (issue 16): `make install` with PREFIX and
# DESTDIR puts the binary, libmoat.so with its header and pkg-config file,
# the Python module and moat(1) in place; the installed pieces work from
# there; the man page lists exactly the options of `moat run --help`;
# `make uninstall` leaves nothing.
#
# Runs `make` in the repository ($ROOT), so it expects the build of
# tests/run-all (build/moat, build/libmoat.so) and only adds moat.1/moat.pc.
. "$(dirname "$0")/../lib/tap.sh"
T=$(mktemp -d /tmp/moat-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
VERSION=$(cat "$ROOT/VERSION")
PY=/usr/bin/python3
PYVER=$($PY -c 'import sys; print("%d.%d" % sys.version_info[:2])')
mk() { make -s -C "$ROOT" "$@"; }

# --- make install DESTDIR=... (PREFIX defaults to /usr/local) ---------------
D=$T/dest
out=$(mk install DESTDIR="$D" 2>&1)
ok $? "make install DESTDIR=$D" || diag "$out"
P=$D/usr/local
want_files="bin/moat lib/libmoat.so.$VERSION include/moat/moat.h lib/pkgconfig/moat.pc
lib/python$PYVER/dist-packages/moat.py share/man/man1/moat.1"
for f in $want_files; do
	[ -f "$P/$f" ]
	ok $? "installs /usr/local/$f"
done
[ "$(readlink "$P/lib/libmoat.so.0")" = "libmoat.so.$VERSION" ] && [ "$(readlink "$P/lib/libmoat.so")" = "libmoat.so.0" ]
ok $? "libmoat.so -> libmoat.so.0 -> libmoat.so.$VERSION (the soname)"
[ -x "$P/bin/moat" ] && [ "$(stat -c %a "$P/bin/moat")" = 755 ] && [ "$(stat -c %a "$P/share/man/man1/moat.1")" = 644 ]
ok $? "the binary is 0755, the data files 0644"
# Nothing else: the list above is the whole install.
extra=$(cd "$D" && find . \( -type f -o -type l \) | sed 's|^\./usr/local/||' | sort |
	grep -vxF -e "lib/libmoat.so.0" -e "lib/libmoat.so" $(for f in $want_files; do printf -- '-e %s ' "$f"; done))
is "$extra" "" "make install installs nothing beyond those files"

# --- the installed binary runs the README's main example ---------------------
is "$("$P/bin/moat" --version | sed 's/ (git .*//')" "moat $VERSION" "the installed moat --version"
like "$("$P/bin/moat" --version)" "\\(git ([0-9a-f]{12}(-dirty)?|unknown)\\)" "and it names the git revision"
demo=$(cd "$T" && MOAT="$P/bin/moat" sh "$ROOT/scripts/demo" 2>&1)
like "$demo" "hello from inside the sandbox" "the installed moat runs scripts/demo's command"
like "$demo" "/etc: not writable" "the demo command cannot write /etc"
like "$demo" "network: refused" "the demo command has no network"
like "$demo" "exit status: 3 \\(the command's own\\)" "the command's exit status passes through"
like "$demo" "~/.ssh: not readable \\(entries visible: 0\\)" "the demo command cannot read ~/.ssh"
like "$demo" "== outside the sandbox: ~/.ssh, entries: [1-9]" "  which holds a key outside the sandbox (the user's, or the demo's decoy)"
like "$demo" "^  fs.secrets +enforced +[0-9]+ denied paths" "the report's verdicts, one line each"
like "$demo" "^  overall: enforced$" "  and the report says enforced"
unlike "$demo" '"schema"' "  not the whole JSON report (its path is printed)"
kept=$(printf '%s\n' "$demo" | sed -n 's/^== the whole report is in \(.*\) (remove it when done)$/\1/p')
ok $([ -n "$kept" ] && [ -s "$kept" ] && echo 0 || echo 1) "the report the demo names is still there after it (${kept:-no path printed})"
[ -n "$kept" ] && rm -f "$kept"

# --- man -l renders the page --------------------------------------------------
page=$(MANWIDTH=100 man -l "$P/share/man/man1/moat.1" 2>"$T/man.err" | col -b)
[ -n "$page" ] && [ ! -s "$T/man.err" ]
ok $? "man -l renders moat(1) without warnings" || diag "$(cat "$T/man.err")"
for sec in NAME SYNOPSIS DESCRIPTION COMMANDS "RUN OPTIONS" PROPERTIES PROFILES "EXIT STATUS" "SEE ALSO"; do
	printf '%s\n' "$page" | grep -qx "$sec"
	ok $? "moat(1) has the section $sec"
done
like "$page" "moat $VERSION" "moat(1) names the version"

# --- the man page and `moat run --help` list the same options ----------------
help_opts() { "$P/bin/moat" run --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p' | sort -u; }
man_opts() { # the options listed under RUN OPTIONS in rendered TEXT (stdin)
	sed -n '/^RUN OPTIONS$/,/^[A-Z]/p' | sed -n 's/^ \{7\}\(--[a-z-]*\).*/\1/p' | sort -u
}
h=$(help_opts)
m=$(printf '%s\n' "$page" | man_opts)
n=$(printf '%s\n' "$h" | grep -c .)
[ "$n" -ge 20 ]
ok $? "moat run --help lists $n options"
is "$(comm -23 <(printf '%s\n' "$h") <(printf '%s\n' "$m"))" "" "every option of moat run --help is in moat(1)"
is "$(comm -13 <(printf '%s\n' "$h") <(printf '%s\n' "$m"))" "" "every option of moat(1) is in moat run --help"
# The comparison sees a drift: drop one option's entry from the page.
m2=$(printf '%s\n' "$page" | grep -v '^       --keep-fd' | man_opts)
[ "$(comm -23 <(printf '%s\n' "$h") <(printf '%s\n' "$m2"))" = "--keep-fd" ]
ok $? "the comparison notices an option missing from the page"
# Each option's help line is the same text in both.
hl=$("$P/bin/moat" run --help | sed -n 's/^  --unix-sockets *//p')
like "$(printf '%s\n' "$page" | tr -s '[:space:]' ' ')" "--unix-sockets $(printf '%s' "$hl" | sed 's/[().]/\\&/g')" "an option's help is the same text in moat(1)"
# The commands of `moat help` are the page's synopsis.
lacking=""
while IFS= read -r c; do
	printf '%s\n' "$page" | grep -qF -- "$c" || lacking="$lacking [$c]"
done < <("$P/bin/moat" help | sed -n 's/^\(usage:\)\? *\(moat [^ ]*\( [^ ]\+\)*\).*/\2/p')
is "$lacking" "" "every command of moat help is in moat(1)"
ncmd=$("$P/bin/moat" help | grep -c '^ *\(usage: \)\?moat ')
like "$(printf '%s\n' "$page" | sed -n '/^SYNOPSIS$/,/^DESCRIPTION$/p' | grep -c '^ *moat ')" "^$ncmd\$" "moat(1)'s synopsis has the $ncmd commands of moat help"

# --- pkg-config and the library, against the installed .pc -------------------
export PKG_CONFIG_PATH=$P/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
is "$(pkg-config --modversion moat 2>&1)" "$VERSION" "pkg-config --modversion moat"
flags=$(pkg-config --cflags --libs moat 2>&1)
ok $? "pkg-config --cflags --libs moat: $flags"
like "$flags" "-I$P/include" "the cflags name the installed include directory"
cat >"$T/use.c" <<'C'
#include <moat/moat.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	char *run[] = {"run", "--", "/bin/sh", "-c", "exit 7", NULL};
	(void)argc; (void)argv;
	char *probe = moat_probe_json(0);
	printf("%s\n", moat_version());
	printf("%s\n", probe && strstr(probe, "\"schema\": \"moat.probe/1\"") ? "probe ok" : "probe failed");
	moat_free(probe);
	fflush(stdout);
	return moat_run_main(5, run);
}
C
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror -o "$T/use" "$T/use.c" $flags 2>"$T/cc.err"
ok $? "a program compiles and links against the installed header and libmoat.so" || diag "$(cat "$T/cc.err")"
got=$(LD_LIBRARY_PATH=$P/lib "$T/use" 2>"$T/use.err"); rc=$?
is "$got" "$VERSION
probe ok" "it calls moat_version() and moat_probe_json() from the installed libmoat.so"
is "$rc" 7 "and moat_run_main() runs a command in a sandbox (its status 7 passes through)" || diag "$(cat "$T/use.err")"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# --- the Python module --------------------------------------------------------
pyout=$(cd "$T" && PYTHONPATH=$P/lib/python$PYVER/dist-packages PATH="$P/bin:$PATH" $PY -c '
import moat, sys
r = moat.run(["/bin/sh", "-c", "exit 5"])
print(moat.__file__, r.returncode, r.report["status"])' 2>&1)
like "$pyout" "^$P/lib/python$PYVER/dist-packages/moat.py 5 enforced\$" "the installed Python module runs the installed moat from PATH"

# --- make uninstall leaves nothing ---------------------------------------------
out=$(mk uninstall DESTDIR="$D" 2>&1)
ok $? "make uninstall DESTDIR=$D" || diag "$out"
left=$(find "$D" \( -type f -o -type l \) | sed "s|^$D||")
is "$left" "" "make uninstall leaves no file or link"
is "$(find "$D" -name '*moat*' | sed "s|^$D||")" "" "and no directory of moat's own"

# --- PREFIX ---------------------------------------------------------------------
D2=$T/dest2
out=$(mk install DESTDIR="$D2" PREFIX=/opt/moat 2>&1)
ok $? "make install PREFIX=/opt/moat" || diag "$out"
[ -x "$D2/opt/moat/bin/moat" ] && [ -f "$D2/opt/moat/share/man/man1/moat.1" ] && [ ! -e "$D2/usr" ]
ok $? "PREFIX=/opt/moat installs below /opt/moat only"
like "$(cat "$D2/opt/moat/lib/pkgconfig/moat.pc")" "^prefix=/opt/moat" "the pkg-config file carries the prefix"
mk uninstall DESTDIR="$D2" PREFIX=/opt/moat >/dev/null 2>&1
is "$(find "$D2" \( -type f -o -type l \))" "" "make uninstall PREFIX=/opt/moat leaves nothing"
# Leave build/moat.pc as a default build makes it.
mk "$(basename "${BUILD:-build}")/moat.pc" >/dev/null 2>&1
done_testing
