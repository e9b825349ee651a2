#!/usr/bin/env python3
"""A local npm registry double, and PyPI index double, for the package-runner
tests (tests/blackbox/net_sets.sh, runners.sh, runners_pipx.sh;
tests/lib/npmregistry.sh starts it).
Usage: npmregistry.py DIR PACKAGES.json

PACKAGES.json (read again when it changes, so that a test may write it
once it knows the ports) is a list of packages, each {"name", "version", "files":
{PATH: TEXT}, and any other package.json keys ("bin", "scripts")}; a file
whose text starts with "#!" is made executable.  Each is served as npm's
registry serves it: GET /NAME (or /@scope%2fname) the packument, with the
tarball's sha512 integrity; GET /NAME/-/BASE-VERSION.tgz the tarball.  Any
other name is 404, as npm's registry answers for a package that does not
exist.

A package with "index": "pypi" is a Python one instead, served as a PEP 503
"simple" index: {"name", "version", "files": {PATH: TEXT} (the modules),
"console_scripts": {NAME: "module:function"}, "sdist": SETUP_PY (or absent:
a wheel)}.  GET /simple/NAME/ (the name normalised) lists its files, each
with its sha256; GET /files/FILE serves one.  A wheel is built here by hand
(a zip: the files, NAME-VERSION.dist-info/ METADATA, WHEEL,
entry_points.txt, RECORD); an sdist is NAME-VERSION.tar.gz with PKG-INFO,
the files and SETUP_PY as setup.py, whose code pip runs to build it.  Any
other name is 404, as PyPI answers.

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
import zipfile

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


def normal(name):
    """PEP 503's normalised name."""
    out = []
    for c in name.lower():
        if c in "-_.":
            if not out or out[-1] != "-":
                out.append("-")
        else:
            out.append(c)
    return "".join(out)


def wheel(pkg):
    """(file name, bytes) of a pure-Python wheel, built by hand."""
    dist = pkg["name"].replace("-", "_")
    info = "%s-%s.dist-info/" % (dist, pkg["version"])
    entries = sorted(pkg.get("files", {}).items()) + [
        (info + "METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (pkg["name"], pkg["version"])),
        (info + "WHEEL", "Wheel-Version: 1.0\nGenerator: moat-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (info + "entry_points.txt", "[console_scripts]\n" +
         "".join("%s = %s\n" % kv for kv in sorted(pkg.get("console_scripts", {}).items()))),
    ]
    record = []
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in entries:
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
        record.append(info + "RECORD,,")
        z.writestr(zipfile.ZipInfo(info + "RECORD", (1980, 1, 1, 0, 0, 0)), "\n".join(record) + "\n")
    return "%s-%s-py3-none-any.whl" % (dist, pkg["version"]), buf.getvalue()


def sdist(pkg):
    """(file name, bytes) of a source distribution whose setup.py is the package's "sdist"."""
    base = "%s-%s" % (pkg["name"], pkg["version"])
    entries = [("PKG-INFO", "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (pkg["name"], pkg["version"])),
               ("setup.py", pkg["sdist"])] + sorted(pkg.get("files", {}).items())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, text in entries:
            data = text.encode()
            ti = tarfile.TarInfo(base + "/" + name)
            ti.size = len(data)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(data))
    return base + ".tar.gz", gzip.compress(buf.getvalue(), mtime=0)


lock = threading.Lock()
loaded = {"mtime": None, "tarballs": {}, "docs": {}, "simple": {}}


def load():
    """(tarballs by path, [(package, tarball path)] by name), from the file as it is now."""
    with lock:
        m = os.stat(packages_file).st_mtime_ns
        if loaded["mtime"] != m:
            tarballs, docs, simple = {}, {}, {}
            for pkg in json.load(open(packages_file)):
                if pkg.get("index") == "pypi":
                    name, data = sdist(pkg) if "sdist" in pkg else wheel(pkg)
                    tarballs["/files/" + name] = data
                    simple.setdefault(normal(pkg["name"]), []).append(name)
                    continue
                base = pkg["name"].split("/")[-1]
                path = "/%s/-/%s-%s.tgz" % (pkg["name"], base, pkg["version"])
                tarballs[path] = tarball(pkg)
                docs.setdefault(pkg["name"], []).append((pkg, path))
            loaded.update(mtime=m, tarballs=tarballs, docs=docs, simple=simple)
        return loaded["tarballs"], loaded["docs"]


def simple_page(name):
    """PEP 503's page of a project: a link to each file, with its sha256."""
    tarballs, _ = load()
    links = "".join('<a href="/files/%s#sha256=%s">%s</a>\n' % (f, hashlib.sha256(tarballs["/files/" + f]).hexdigest(), f)
                    for f in loaded["simple"][name])
    return ("<!DOCTYPE html>\n<html><body>\n%s</body></html>\n" % links).encode()


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
        elif self.server.registry and path.startswith("/simple/") and normal(path[8:].strip("/")) in loaded["simple"]:
            body, ctype = simple_page(normal(path[8:].strip("/"))), "text/html"
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
