"""A minimal RESP2 client for the harness's own admin commands (never dibs's code)."""

import socket


class RespError(Exception):
    """An error reply (-ERR ...) from the server."""


class Resp:
    """One connection to a Redis-compatible server on 127.0.0.1, with a bounded wait."""

    def __init__(self, port, timeout=2.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2 :]
        return data

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RespError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ConnectionError("unreadable reply: %r" % line[:40])


def call(port, *args, timeout=2.0):
    """One command on a fresh connection."""
    with Resp(port, timeout) as r:
        return r.call(*args)


def text(reply):
    return reply.decode() if isinstance(reply, bytes) else reply


def info(port, section="replication"):
    """INFO as a dict."""
    raw = text(call(port, "INFO", section))
    return dict(l.split(":", 1) for l in raw.splitlines() if ":" in l and not l.startswith("#"))
