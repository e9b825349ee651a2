# The policies the Kubernetes export is tested on (golden_k8s.sh,
# k8s_schema.sh): a scratch tree under $SCRATCH/t, k8s() to export from it
# with a fixed environment, and each case's options.  Source after scratch.
T=$SCRATCH/t
mkdir -p "$T/home" "$T/proj/data" "$T/out"
echo token >"$T/proj/secret.txt"
cat >"$T/proj/mcp.toml" <<'TOML'
[mcp_servers.files]
command = "/usr/bin/node"
args = ["server.js", "--root", "data"]
env = { LOG_LEVEL = "debug" }

[mcp_servers.files.sandbox]
read = ["."]
write = ["data"]
TOML

# k8s OUT [moat export options]: export from $T/proj with a fixed environment.
k8s() {
	local out=$1
	shift
	rm -rf "$out"
	(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$MOAT" export --format k8s -o "$out" "$@")
}

K8S_CASES="strict-job mcp-write allow-net limits"
k8s_case_args() { # k8s_case_args CASE: sets ARGS
	case $1 in
	strict-job) ARGS=(--image debian:12-slim --kind Job --profile strict --write "$T/out" --deny "$T/proj/secret.txt"
		-- /bin/sh -c 'echo hi >/tmp/out/x') ;;
	mcp-write) ARGS=(--image node:22-slim --kind Deployment --config mcp.toml --server files) ;;
	allow-net) ARGS=(--image curlimages/curl:8.10.1 --allow-net api.example.org --allow-net '*.pkg.example.com:8443'
		--allow-net 10.0.0.0/8 --allow-net '[2001:db8::1]:443' --allow-net localhost:5432
		--allow-net proxy:pkg.example.net --resolve api.example.org=192.0.2.10 -- /usr/bin/curl https://api.example.org) ;;
	limits) ARGS=(--image debian:12-slim --memory 512M --cpu 60 --pids 64 --files 256 --tmp-size 64M --timeout 90.5
		--runtime-class gvisor -- sleep 1) ;;
	esac
}
