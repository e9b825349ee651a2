#!/usr/bin/env python3
"""A local npm registry double for the package-runner tests
(tests/blackbox/net_sets.sh, runners.sh; tests/lib/npmregistry.sh starts it).
Usage: npmregistry.py DIR PACKAGES.json

PACKAGES.json (read again when it changes, so that a test may write it
once it knows the ports) is a list of packages, each {"name", "version", "files":
{PATH: TEXT}, and any other package.json keys ("bin", "scripts")}; a file
whose text starts with "#!" is made executable.  Each is served as npm's
registry serves it: GET /NAME (or /@scope%2fname) the packument, with the
tarball's sha512 integrity; GET /NAME/-/BASE-VERSION.tgz the tarball.  Any
other name is 404, as npm's registry answers for a package that does not
exist.

On the host's loopback, each on a port the kernel chose:
  - the registry, HTTP on 127.0.0.2;
  - "another service", HTTP on 127.0.0.2 too, which the fetch phase must not
    reach;
GET / on either answers "hello from 127.0.0.2:PORT".
  - a closed port on 127.0.0.2 (bound, not listening): an unreachable
    registry, refused at once for as long as the servers run.
GET /-/count on either server: the TCP connections it has accepted, this one
included (counted in the accepting thread, in order).
It writes "PR PO PC" to DIR/ports, atomically, and runs until DIR/ports is
removed, or 300 s at most.
"""
import base64
import gzip
import hashlib
import http.server
import io
import json
import os
import socket
import socketserver
import sys
import tarfile
import threading
import time
import urllib.parse

d = sys.argv[1]
packages_file = sys.argv[2]


def tarball(pkg):
    meta = {k: v for k, v in pkg.items() if k != "files"}
    entries = [("package.json", json.dumps(meta))] + sorted(pkg.get("files", {}).items())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, text in entries:
            data = text.encode()
            ti = tarfile.TarInfo("package/" + name)
            ti.size = len(data)
            ti.mode = 0o755 if text.startswith("#!") else 0o644
            ti.mtime = 0
            t.addfile(ti, io.BytesIO(data))
    return gzip.compress(buf.getvalue(), mtime=0)  # the same bytes every time


lock = threading.Lock()
loaded = {"mtime": None, "tarballs": {}, "docs": {}}


def load():
    """(tarballs by path, [(package, tarball path)] by name), from the file as it is now."""
    with lock:
        m = os.stat(packages_file).st_mtime_ns
        if loaded["mtime"] != m:
            tarballs, docs = {}, {}
            for pkg in json.load(open(packages_file)):
                base = pkg["name"].split("/")[-1]
                path = "/%s/-/%s-%s.tgz" % (pkg["name"], base, pkg["version"])
                tarballs[path] = tarball(pkg)
                docs.setdefault(pkg["name"], []).append((pkg, path))
            loaded.update(mtime=m, tarballs=tarballs, docs=docs)
        return loaded["tarballs"], loaded["docs"]


def packument(name, host):
    tarballs, docs = load()
    versions = {}
    for pkg, path in docs[name]:
        meta = {k: v for k, v in pkg.items() if k != "files"}
        meta["dist"] = {"tarball": "http://%s%s" % (host, path),
                        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tarballs[path]).digest()).decode()}
        versions[pkg["version"]] = meta
    return {"name": name, "dist-tags": {"latest": docs[name][-1][0]["version"]}, "versions": versions}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = urllib.parse.unquote(self.path.split("?", 1)[0])
        ctype = "text/plain"
        tarballs, docs = load() if self.server.registry else ({}, {})
        if path == "/":
            body = ("hello from %s:%d\n" % self.server.server_address).encode()
        elif path == "/-/count":
            body = ("%d\n" % self.server.conns).encode()
        elif self.server.registry and path in tarballs:
            body, ctype = tarballs[path], "application/octet-stream"
        elif self.server.registry and path[1:] in docs:
            body, ctype = json.dumps(packument(path[1:], self.headers.get("Host"))).encode(), "application/json"
        elif self.server.registry:
            self.send_response(404)
            body = b'{"error":"Not found"}'
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        else:
            body = ("hello from %s:%d\n" % self.server.server_address).encode()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    conns = 0
    registry = False

    def verify_request(self, request, client_address):
        self.conns += 1
        return True

    def handle_error(self, request, client_address):
        pass


reg = Server(("127.0.0.2", 0), Handler)
reg.registry = True
other = Server(("127.0.0.2", 0), Handler)
for s in (reg, other):
    threading.Thread(target=s.serve_forever, daemon=True).start()
closed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
closed.bind(("127.0.0.2", 0))
with open(d + "/ports.tmp", "w") as f:
    f.write("%d %d %d\n" % (reg.server_address[1], other.server_address[1], closed.getsockname()[1]))
os.rename(d + "/ports.tmp", d + "/ports")
end = time.time() + 300
while time.time() < end and os.path.exists(d + "/ports"):
    time.sleep(0.2)
