#!/usr/bin/env python3
"""Host-side servers for the proxy mode's black-box test
(tests/blackbox/net_proxy.sh), beside tests/lib/netservers.py's.
Usage: proxyservers.py DIR MAP [CERT KEY]

  - an upstream proxy on 127.0.0.4 (a port of the kernel's choosing): the
    host's own proxy, as moat finds it in HTTPS_PROXY.  It wants the
    credentials user:pass (407 otherwise, asking for Basic; for the user
    "ntlm", password "x", a 407 asking for NTLM and Negotiate), takes one request per
    connection, and answers CONNECT host:port by connecting to MAP's
    address for host (MAP: "name=ip,name=ip"; an IPv4 host is itself;
    "ip=deny" refuses that address), 403 for a host it does not know.
    An absolute-form request (GET http://...) it reads as tinyproxy does:
    the authority is what follows "http://" up to the first "/", less any
    "userinfo@"; it connects there (by MAP) and sends the request on in
    origin form.  Each request is a line in DIR/upstream.log: "CONNECT
    target auth=ok" or "GET target auth=ok" (or auth=bad).
  - a SOCKS5 upstream proxy on 127.0.0.4 (RFC 1928, CONNECT only), as moat
    finds it in ALL_PROXY: it wants user name and password (RFC 1929)
    user:pass, sends its CONNECT's success reply in two pieces 50 ms apart,
    and connects a name by MAP (403's counterpart: reply 2,
    "not allowed", for one it does not know) or an IPv4 address as
    itself.  Each request is a line in DIR/upstream.log: "SOCKS target
    auth=ok" (auth=bad, or auth=none when the client offered no
    user/password method: reply 0xff, no acceptable method).
  - a SOCKS4 upstream proxy on 127.0.0.4 (CONNECT only; SOCKS4a's
    0.0.0.x address with a name after the user id), as moat finds it in
    ALL_PROXY=socks4:// or socks4a://: it wants the user id "moatuid4" (reply
    93 otherwise), sends its reply in two pieces 50 ms apart, and connects
    as the SOCKS5 one does (reply 91 where that one says 2).  Each request
    is a line in DIR/upstream.log: "SOCKS4 target uid=ok" (or uid=bad).
  - with CERT and KEY, HTTPS on 127.0.0.2:443 (when it can be bound: root):
      GET /        "hello over tls\\n"
      GET /count   TLS handshakes completed, this one included
It writes "UP TLS SOCKS SOCKS4" (TLS 0 when there is none) to DIR/proxyports,
atomically, and runs until that file is removed, or 300 s at most.
"""
import os
import socket
import socketserver
import ssl
import sys
import threading
import time
import http.server

d = sys.argv[1]
mapping = dict(kv.split("=", 1) for kv in sys.argv[2].split(",") if "=" in kv)
AUTH = "Proxy-Authorization: Basic dXNlcjpwYXNz"
NTLM_AUTH = "Proxy-Authorization: Basic bnRsbTp4"  # ntlm:x


def relay(a, b):
    def pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    t = threading.Thread(target=pump, args=(b, a), daemon=True)
    t.start()
    pump(a, b)
    t.join(10)


class Upstream(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        s.settimeout(10)
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 8192:
            b = s.recv(1)
            if not b:
                return
            head += b
        text = head.decode("latin-1")
        line = text.split("\r\n", 1)[0]
        ok = ("\r\n" + AUTH + "\r\n") in text
        with open(d + "/upstream.log", "a") as f:
            f.write("%s auth=%s\n" % (line.rsplit(" ", 1)[0], "ok" if ok else "bad"))
        if not ok:
            # The user "ntlm" stands for a client of a proxy that wants
            # NTLM or Negotiate, not Basic.
            ntlm = ("\r\n" + NTLM_AUTH + "\r\n") in text
            s.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n" +
                      (b"Proxy-Authenticate: NTLM\r\nProxy-Authenticate: Negotiate\r\n" if ntlm else
                       b'Proxy-Authenticate: Basic realm="test"\r\n') + b"\r\n")
            return
        parts = line.split(" ")
        forward = len(parts) == 3 and parts[1].startswith("http://")
        if len(parts) != 3 or (parts[0] != "CONNECT" and not forward):
            s.sendall(b"HTTP/1.1 405 Not Here\r\n\r\n")
            return
        if forward:
            # tinyproxy's reading: the host up to the first "/", userinfo
            # stripped; the rest is the path.
            rest = parts[1][len("http://"):]
            authority, slash, path = rest.partition("/")
            authority = authority.rpartition("@")[2]
            host, colon, port = authority.rpartition(":")
            if not colon:
                host, port = authority, "80"
        else:
            host, _, port = parts[1].rpartition(":")
        ip = mapping.get(host, host if host.replace(".", "").isdigit() else None)
        if not ip or ip == "deny":
            s.sendall(b"HTTP/1.1 403 Forbidden\r\n\r\n")
            return
        try:
            u = socket.create_connection((ip, int(port)), timeout=5)
        except (OSError, ValueError):
            s.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
            return
        if forward:
            headers = [h for h in text.split("\r\n")[1:] if h and not h.lower().startswith("proxy-authorization:")]
            u.sendall(("%s /%s %s\r\n%s\r\n\r\n" % (parts[0], path, parts[2], "\r\n".join(headers))).encode("latin-1"))
        else:
            s.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        s.settimeout(None)
        relay(s, u)


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise OSError("closed")
        b += c
    return b


def socks_connect(s, host, port, cmd_ok, reply, refuse_code, fail_code, success):
    """Connect a SOCKS request's target (MAP's address for a name, an IPv4
    address as itself) and relay, the success reply sent in two pieces 50
    ms apart (moat must read a reply that arrives in parts); refuse_code
    for a target it does not know or denies, fail_code when the connect
    fails."""
    ip = mapping.get(host, host if host.replace(".", "").isdigit() else None)
    if not cmd_ok or not ip or ip == "deny":
        reply(refuse_code)
        return
    try:
        u = socket.create_connection((ip, port), timeout=5)
    except OSError:
        reply(fail_code)
        return
    s.sendall(success[:3])
    time.sleep(0.05)
    s.sendall(success[3:])
    s.settimeout(None)
    relay(s, u)


class Socks(socketserver.BaseRequestHandler):
    def log(self, target, auth):
        with open(d + "/upstream.log", "a") as f:
            f.write("SOCKS %s auth=%s\n" % (target, auth))

    def handle(self):
        s = self.request
        s.settimeout(10)
        try:
            ver, n = recv_exact(s, 2)
            methods = recv_exact(s, n)
            if ver != 5 or 2 not in methods:
                s.sendall(b"\x05\xff")
                self.log("-", "none")
                return
            s.sendall(b"\x05\x02")
            _, ul = recv_exact(s, 2)
            user = recv_exact(s, ul)
            pl = recv_exact(s, 1)[0]
            pw = recv_exact(s, pl)
            auth_ok = user == b"user" and pw == b"pass"
            s.sendall(b"\x01\x00" if auth_ok else b"\x01\x01")
            if not auth_ok:
                self.log("-", "bad")
                return
            ver, cmd, _, atyp = recv_exact(s, 4)
            if atyp == 1:
                host = socket.inet_ntoa(recv_exact(s, 4))
            elif atyp == 3:
                host = recv_exact(s, recv_exact(s, 1)[0]).decode("latin-1")
            else:
                host = socket.inet_ntop(socket.AF_INET6, recv_exact(s, 16))
            port = int.from_bytes(recv_exact(s, 2), "big")
        except OSError:
            return
        self.log("%s:%d" % (host, port), "ok")
        reply = lambda code: s.sendall(bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0]))
        socks_connect(s, host, port, cmd == 1, reply, 2, 5, bytes([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]))


def recv_until_nul(s, cap=300):
    b = b""
    while not b.endswith(b"\0"):
        if len(b) >= cap:
            raise OSError("too long")
        b += recv_exact(s, 1)
    return b[:-1]


class Socks4(socketserver.BaseRequestHandler):
    def log(self, target, uid):
        with open(d + "/upstream.log", "a") as f:
            f.write("SOCKS4 %s uid=%s\n" % (target, uid))

    def handle(self):
        s = self.request
        s.settimeout(10)
        try:
            ver, cmd = recv_exact(s, 2)
            port = int.from_bytes(recv_exact(s, 2), "big")
            ip = recv_exact(s, 4)
            uid = recv_until_nul(s)
            if ip[:3] == b"\0\0\0" and ip[3] != 0:
                host = recv_until_nul(s).decode("latin-1")
            else:
                host = socket.inet_ntoa(ip)
        except OSError:
            return
        reply = lambda code: s.sendall(bytes([0, code, 0, 0, 0, 0, 0, 0]))
        if ver != 4 or uid != b"moatuid4":
            self.log("%s:%d" % (host, port), "bad")
            reply(93)
            return
        self.log("%s:%d" % (host, port), "ok")
        socks_connect(s, host, port, cmd == 1, reply, 91, 91, bytes([0, 90, 0, 0, 0, 0, 0, 0]))


class Threaded(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


up = Threaded(("127.0.0.4", 0), Upstream)
threading.Thread(target=up.serve_forever, daemon=True).start()
socks = Threaded(("127.0.0.4", 0), Socks)
threading.Thread(target=socks.serve_forever, daemon=True).start()
socks4 = Threaded(("127.0.0.4", 0), Socks4)
threading.Thread(target=socks4.serve_forever, daemon=True).start()

tls_port = 0
if len(sys.argv) > 4:
    handshakes = 0

    class Tls(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = ("%d\n" % handshakes if self.path == "/count" else "hello over tls\n").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    class TlsServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True

        def get_request(self):
            global handshakes
            sock, addr = self.socket.accept()
            sock.settimeout(5)
            conn = ctx.wrap_socket(sock, server_side=True)  # the handshake; a failed one raises
            handshakes += 1
            return conn, addr

        def handle_error(self, request, client_address):
            pass

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    try:
        tls = TlsServer(("127.0.0.2", 443), Tls)

        def serve():
            while True:
                try:
                    tls.handle_request()
                except (OSError, ssl.SSLError):
                    pass

        threading.Thread(target=serve, daemon=True).start()
        tls_port = 443
    except OSError:
        tls_port = 0

with open(d + "/proxyports.tmp", "w") as f:
    f.write("%d %d %d %d\n" % (up.server_address[1], tls_port, socks.server_address[1], socks4.server_address[1]))
os.rename(d + "/proxyports.tmp", d + "/proxyports")
end = time.time() + 300
while time.time() < end and os.path.exists(d + "/proxyports"):
    time.sleep(0.2)
