#!/usr/bin/env python3
"""A scripted fake RESP server for the fuzz tests: what a real server cannot do on demand.

It offers a small command table (COMMAND DOCS and COMMAND, so respbench's fuzzer generates from
it), answers every command, and crashes (exits at once, without a reply) when one exact command
(A) has been sent on one connection and later another exact command (B) arrives on a *different*
connection: a crash that needs two clients in a given order, so "the last command sent" is not
the answer. SHUTDOWN stops it, as a real server's SHUTDOWN NOSAVE (the reducer's restart step).
It exits on its own after IDLE seconds without a command, so a failed test leaves nothing behind.

usage: fuzz_crash_server.py PORT [HEX_A HEX_B]   (commands as hex of their words joined by ' ')
       fuzz_crash_server.py PORT hang-after N     (stops answering anyone after N commands)
"""

import os
import socket
import sys
import threading
import time

IDLE = 30.0

COMMANDS = {
    # name: (arity, flags, [(arg name, type, flags)])
    "get": (2, ["readonly"], [("key", "key", [])]),
    "set": (3, ["write"], [("key", "key", []), ("value", "string", [])]),
    "incr": (2, ["write"], [("key", "key", [])]),
    "del": (-2, ["write"], [("key", "key", ["multiple"])]),
    "append": (3, ["write"], [("key", "key", []), ("value", "string", [])]),
    "echo": (2, [], [("message", "string", [])]),
    "ping": (-1, [], [("message", "string", ["optional"])]),
}


def bulk(s):
    b = s if isinstance(s, bytes) else str(s).encode()
    return b"$%d\r\n%s\r\n" % (len(b), b)


def array(items):
    return b"*%d\r\n" % len(items) + b"".join(items)


def docs():
    out = []
    for name, (_, _, args) in sorted(COMMANDS.items()):
        arg_docs = []
        for (aname, atype, aflags) in args:
            fields = [bulk("name"), bulk(aname), bulk("type"), bulk(atype)]
            if aflags:
                fields += [bulk("flags"), array([b"+" + f.encode() + b"\r\n" for f in aflags])]
            arg_docs.append(array(fields))
        out += [bulk(name), array([bulk("summary"), bulk("fake"), bulk("arguments"), array(arg_docs)])]
    return array(out)


def info():
    out = []
    for name, (arity, flags, _) in sorted(COMMANDS.items()):
        out.append(array([bulk(name), b":%d\r\n" % arity, array([b"+" + f.encode() + b"\r\n" for f in flags])]))
    return array(out)


class State:
    def __init__(self, a, b, hang_after=None):
        self.a, self.b = a, b
        self.hang_after = hang_after
        self.count = 0
        self.a_conn = None
        self.last = time.monotonic()
        self.lock = threading.Lock()


def read_command(f):
    line = f.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return [w for w in line.split()] or []
    n = int(line[1:])
    args = []
    for _ in range(n):
        head = f.readline()
        if not head.startswith(b"$"):
            raise ValueError("protocol")
        size = int(head[1:])
        if size < 0 or size > (1 << 20):
            raise ValueError("protocol")
        data = f.read(size + 2)
        args.append(data[:-2])
    return args


def serve(conn, cid, st):
    f = conn.makefile("rb")
    try:
        while True:
            args = read_command(f)
            if args is None:
                return
            if not args:
                continue
            st.last = time.monotonic()
            line = b" ".join(args)
            name = args[0].lower()
            with st.lock:
                st.count += 1
                if st.hang_after is not None and st.count > st.hang_after:
                    # A hang: every connection, the watch's too, waits forever (until IDLE).
                    while True:
                        time.sleep(1)
                if st.a is not None and line == st.a and st.a_conn is None:
                    st.a_conn = cid
                if st.b is not None and line == st.b and st.a_conn is not None and st.a_conn != cid:
                    os._exit(1)
            if name == b"shutdown":
                os._exit(0)
            if name == b"command" and len(args) > 1 and args[1].lower() == b"docs":
                reply = docs()
            elif name == b"command":
                reply = info()
            elif name == b"ping":
                reply = b"+PONG\r\n"
            elif name == b"info":
                reply = bulk("# Errorstats\r\n")
            elif name == b"config" and len(args) > 2:
                reply = array([bulk(args[2]), bulk("no" if args[2] == b"appendonly" else "")])
            elif name.decode("latin-1") in COMMANDS or name in (b"select", b"auth", b"hello"):
                reply = b"+OK\r\n"
            else:
                reply = b"-ERR unknown command\r\n"
            conn.sendall(reply)
    except (ValueError, OSError):
        try:
            conn.sendall(b"-ERR Protocol error\r\n")
        except OSError:
            pass
    finally:
        conn.close()


def main():
    port = int(sys.argv[1])
    if len(sys.argv) > 3 and sys.argv[2] == "hang-after":
        st = State(None, None, int(sys.argv[3]))
    else:
        a = bytes.fromhex(sys.argv[2]) if len(sys.argv) > 3 else None
        b = bytes.fromhex(sys.argv[3]) if len(sys.argv) > 3 else None
        st = State(a, b)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(128)

    def idle_exit():
        while time.monotonic() - st.last < IDLE:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=idle_exit, daemon=True).start()
    cid = 0
    while True:
        conn, _ = srv.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cid += 1
        threading.Thread(target=serve, args=(conn, cid, st), daemon=True).start()


if __name__ == "__main__":
    main()
