# npm_pinned DIR NAME: the packages DIR's package-lock.json pins, in
# DIR/node_modules -- installed with `npm ci` when missing or stale (a stamp
# of package.json and the lock), into a scratch copy of DIR's package files
# (and its *.mjs, if any) when DIR is not ours to write (an unprivileged run
# of a root-owned copy).  Sets NPM_DIR to where they are.  When `npm ci` fails
# the test ends here: a skip naming the cause, or under
# MOAT_TEST_STRICT_SKIPS=1 a failure -- unless the registry does not answer
# (npm ping), which no test can mend.  Needs scratch.
npm_pinned() {
	local dir=$1 name=$2 sum stamp dest why
	local cache=()
	sum=$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-64)
	stamp=node_modules/.moat-$name-lock.sha256
	NPM_DIR=$dir
	[ "$(cat "$dir/$stamp" 2>/dev/null)" = "$sum" ] && return 0
	if [ -w "$dir" ] && { [ ! -e "$dir/node_modules" ] || [ -w "$dir/node_modules" ]; }; then
		dest=$dir
	else
		dest=$SCRATCH/$name
		mkdir -p "$dest"
		cp "$dir"/package.json "$dir"/package-lock.json "$dest/"
		# The scripts that import the packages, where there are any.
		for f in "$dir"/*.mjs; do [ ! -e "$f" ] || cp "$f" "$dest/"; done
	fi
	diag "npm ci in $dest (node_modules missing or stale)"
	[ -n "${HOME:-}" ] && [ -w "$HOME" ] || cache=(env npm_config_cache="$SCRATCH/npm-cache") # HOME=/nonexistent
	if ! (cd "$dest" && "${cache[@]}" timeout 300 npm ci --no-audit --no-fund --loglevel=error >"$SCRATCH/npm-ci.log" 2>&1); then
		sed 's/^/# /' "$SCRATCH/npm-ci.log" | tail -20
		if (cd "$dest" && "${cache[@]}" timeout 30 npm ping >/dev/null 2>&1); then
			why="npm ci in ${dir#"$ROOT"/} failed although the npm registry answers"
			if [ "${MOAT_TEST_STRICT_SKIPS:-0}" = 1 ]; then
				echo "not ok 1 - $why"
				echo "1..1"
				exit 1
			fi
		else
			why="npm ci in ${dir#"$ROOT"/} failed: the npm registry ($(npm config get registry 2>/dev/null)) does not answer"
		fi
		skip_all "$why"
	fi
	echo "$sum" >"$dest/$stamp"
	chmod -R a+rX "$dest/node_modules" 2>/dev/null
	NPM_DIR=$dest
}
