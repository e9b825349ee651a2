#!/usr/bin/env python3
"""Host-side servers that stand in for the outside in the fence's black-box
tests (tests/blackbox/net_fence.sh, net_clients.sh; tests/lib/netservers.sh
starts them).  Usage: netservers.py DIR [DOCROOT]

On the host's loopback, each on a port of its own chosen by the kernel:
  - HTTP on 127.0.0.2 and on 127.0.0.3 (threaded, HTTP/1.0):
      GET /        "hello from IP\\n"
      GET /count   how many TCP connections this server has accepted, this
                   one included.  Connections are counted when accepted, in
                   order, so a /count asked after a client has finished also
                   counts that client's connection if it arrived at all: the
                   proof that a refused client reached nothing.
      GET /udp     how many datagrams the UDP counter has received
      GET /PATH    the file DOCROOT/PATH (when DOCROOT is given), e.g. a bare
                   git repository for git's dumb HTTP protocol
  - a UDP counter on 127.0.0.2;
  - a "closed" port on 127.0.0.2: a TCP socket bound there but not
    listening, so nothing else takes the port and a connect to it is
    refused (ECONNREFUSED) for as long as the servers run.
It writes "P2 P3 PU PC" (those four ports) to DIR/ports, atomically, and
runs until DIR/ports is removed, or 300 s at most.
"""
import http.server
import os
import socket
import socketserver
import sys
import threading
import time

d = sys.argv[1]
docroot = os.path.realpath(sys.argv[2]) if len(sys.argv) > 2 else None
udp_count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/":
            body = ("hello from %s\n" % self.server.server_address[0]).encode()
        elif path == "/count":
            body = ("%d\n" % self.server.conns).encode()
        elif path == "/udp":
            body = ("%d\n" % udp_count).encode()
        else:
            f = os.path.realpath(os.path.join(docroot, path.lstrip("/"))) if docroot else None
            if not f or not f.startswith(docroot + "/") or not os.path.isfile(f):
                self.send_error(404)
                return
            with open(f, "rb") as fh:
                body = fh.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    conns = 0

    def verify_request(self, request, client_address):
        # In the accepting thread: one connection at a time, in order.
        self.conns += 1
        return True

    def handle_error(self, request, client_address):
        pass  # a client that resets (a probe that only connects) is no news


# The kernel picks each port for its own address, so 127.0.0.3's may be the
# same number as 127.0.0.2's: then "svc.test on P3" would reach svc.test's
# server, and a test of "the allowed name on another port" would see an
# answer.  Each socket is bound again until its port is one no other has.
taken = set()


def bind_fresh(make):
    for _ in range(50):
        s = make()
        port = s.getsockname()[1] if isinstance(s, socket.socket) else s.server_address[1]
        if port not in taken:
            taken.add(port)
            return s
        (s.close if isinstance(s, socket.socket) else s.server_close)()
    sys.exit("netservers: no port distinct from %s after 50 binds" % sorted(taken))


def bound(kind, ip):
    s = socket.socket(socket.AF_INET, kind)
    s.bind((ip, 0))
    return s


servers = []
for ip in ("127.0.0.2", "127.0.0.3"):
    s = bind_fresh(lambda: Server((ip, 0), Handler))
    servers.append(s)
    threading.Thread(target=s.serve_forever, daemon=True).start()
closed = bind_fresh(lambda: bound(socket.SOCK_STREAM, "127.0.0.2"))
u = bind_fresh(lambda: bound(socket.SOCK_DGRAM, "127.0.0.2"))
u.settimeout(0.2)
with open(d + "/ports.tmp", "w") as f:
    f.write("%d %d %d %d\n" % (servers[0].server_address[1], servers[1].server_address[1],
                               u.getsockname()[1], closed.getsockname()[1]))
os.rename(d + "/ports.tmp", d + "/ports")
end = time.time() + 300
while time.time() < end and os.path.exists(d + "/ports"):
    try:
        u.recv(100)
        udp_count += 1
    except socket.timeout:
        pass
