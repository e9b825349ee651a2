#!/usr/bin/python3
"""Run moat with a socket of the host's on --keep-fd 5 and aim it from inside.

    keptsock.py KIND MARK REPORT MOAT [MOAT-RUN-ARGS...]

KIND is the socket passed:
  udp               an unconnected AF_INET datagram socket; the command
                    sendto()s MARK to a UDP listener on 127.0.0.1
  tcp-connected     an AF_INET stream socket connected to listener A; the
                    command disconnects it (connect AF_UNSPEC), connects to
                    listener B and sends MARK
  unix-unconnected  an unconnected AF_UNIX stream socket; the command
                    connects to a host abstract socket and sends MARK
  unix-connected    an AF_UNIX stream socket connected to abstract listener
                    A: the command sends MARK to A (its pipe), then tries
                    to connect the socket to abstract listener B
  unix-listening    an AF_UNIX stream socket listening on an abstract name:
                    the command tries to connect it to abstract listener B
                    (after shutdown(2)), then accepts one connection of the
                    host's and answers MARK

Every listener is on 127.0.0.1 or an abstract name of this run, made here
and read here after moat ended (bounded: 2 s each).  Prints the command's
output, then "moat rc N", then "target: GOT DATA" or "target: nothing"
(B for tcp-connected, unix-*; the UDP listener for udp), and for
unix-connected and unix-listening "pipe: GOT DATA" / "pipe: nothing".
"""
import os
import socket
import subprocess
import sys

# Fd 5 is held from the start, so that no socket of this script's gets it
# (dup2 onto it below would close that one under its owner).
os.dup2(os.open("/dev/null", os.O_RDONLY), 5)
kind, mark, report, moat = sys.argv[1:5]
args = sys.argv[5:]
tag = "moat-kept-%d" % os.getpid()

# What the command runs (python3 inside the sandbox); its argv: MARK ADDR...
DISCONNECT = ("import ctypes, struct; libc = ctypes.CDLL(None, use_errno=True); "
              "rc = libc.connect(5, struct.pack('HH12x', 0, 0), 16); "
              "print('disconnect', rc, ctypes.get_errno())")
INNER = {
    "udp": "import socket, sys\n"
           "s = socket.socket(fileno=5)\n"
           "try: print('sent', s.sendto(sys.argv[1].encode(), ('127.0.0.1', int(sys.argv[2]))))\n"
           "except OSError as e: print('refused', e)\n",
    "tcp-connected": DISCONNECT + "\nimport socket, sys\n"
           "s = socket.socket(fileno=5)\n"
           "try: s.connect(('127.0.0.1', int(sys.argv[2]))); s.sendall(sys.argv[1].encode()); print('reaimed')\n"
           "except OSError as e: print('refused', e)\n",
    "unix-unconnected": "import socket, sys\n"
           "s = socket.socket(fileno=5)\n"
           "try: s.connect('\\0' + sys.argv[2]); s.sendall(sys.argv[1].encode()); print('connected')\n"
           "except OSError as e: print('refused', e)\n",
    "unix-connected": "import socket, sys\n"
           "s = socket.socket(fileno=5)\n"
           "s.sendall(sys.argv[1].encode()); print('piped')\n"
           "try: s.connect('\\0' + sys.argv[2]); print('connected')\n"
           "except OSError as e: print('refused', e)\n",
    "unix-listening": "import socket, sys\n"
           "s = socket.socket(fileno=5)\n"
           "try: s.shutdown(socket.SHUT_RDWR)\n"
           "except OSError as e: print('shutdown', e)\n"
           "try: t = socket.socket(socket.AF_UNIX, fileno=__import__('os').dup(5)); t.connect('\\0' + sys.argv[2]); print('connected')\n"
           "except OSError as e: print('refused', e)\n"
           "s.settimeout(5)\n"
           "try: c, _ = s.accept(); c.sendall(sys.argv[1].encode()); print('served')\n"
           "except OSError as e: print('accept', e)\n",
}[kind]


def listener(family, stype, addr):
    s = socket.socket(family, stype)
    s.bind(addr)
    if stype == socket.SOCK_STREAM:
        s.listen(4)
    return s


def received(s, stream=True):
    s.settimeout(2)
    try:
        if stream:
            c, _ = s.accept()
            c.settimeout(2)
            return c.recv(200)
        return s.recv(200)
    except OSError:
        return b""


pipe_peer = None
pipe_got = []
if kind == "udp":
    target = listener(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
    kept = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    where = str(target.getsockname()[1])
elif kind == "tcp-connected":
    a = listener(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
    target = listener(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
    kept = socket.create_connection(a.getsockname(), timeout=2)
    kept.settimeout(None)
    pipe_peer, _ = a.accept()
    where = str(target.getsockname()[1])
else:
    target = listener(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + tag + "-b")
    where = tag + "-b"
    if kind == "unix-unconnected":
        kept = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    elif kind == "unix-connected":
        a = listener(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + tag + "-a")
        kept = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        kept.connect("\0" + tag + "-a")
        pipe_peer, _ = a.accept()
    else:  # unix-listening: the host's client, queued before the command runs
        kept = listener(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + tag + "-l")
        # Connected here, before moat starts: the connection waits in the
        # backlog for the command's accept.  A thread that connected once
        # the command ran could come after the command's shutdown(2) of
        # the socket (refused: "pipe: nothing") on a loaded machine.
        host_client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        host_client.connect("\0" + tag + "-l")

os.dup2(kept.fileno(), 5)
os.set_inheritable(5, True)
cmd = [moat, "run", *args, "--keep-fd", "5", "--report", report, "--",
       "/usr/bin/python3", "-c", INNER, mark, where]
try:
    p = subprocess.run(cmd, pass_fds=(5,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=40)
    out, rc, err = p.stdout.decode(errors="replace"), p.returncode, p.stderr.decode(errors="replace")
except subprocess.TimeoutExpired:
    out, rc, err = "", "timeout", ""
os.close(5)
sys.stdout.write(out)
for line in err.splitlines()[:3]:
    print("stderr:", line)
print("moat rc", rc)
got = received(target, stream=kind != "udp")
print("target:", "GOT " + got.decode(errors="replace") if got else "nothing")
if kind in ("unix-connected", "unix-listening"):
    peer = pipe_peer if kind == "unix-connected" else host_client
    peer.settimeout(2)
    try:
        pipe_got.append(peer.recv(200))
    except OSError:
        pass
    g = b"".join(pipe_got)
    print("pipe:", "GOT " + g.decode(errors="replace") if g else "nothing")
