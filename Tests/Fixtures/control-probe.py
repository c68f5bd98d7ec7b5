#!/usr/bin/env python3
"""Sends bad input to a playerctl daemon's control socket and prints what came back, as one JSON object.

Usage: control-probe.py SOCKET

Each case runs on a connection of its own, except that the over-long line is followed on the same connection by a
good request, to show the connection stays usable. Then 200 clients connect at once; half send half a request and
hang up. Finally one good `status` request is sent. Keys: each case's name -> list of replies (JSON objects)."""

import json
import socket
import sys
import time

path = sys.argv[1]


def connect():
    """Connects, waiting while the server's backlog is full (EAGAIN on a Unix socket)."""
    for _ in range(100):
        connection = socket.socket(socket.AF_UNIX)
        try:
            connection.connect(path)
            return connection
        except BlockingIOError:
            connection.close()
            time.sleep(0.01)
    raise RuntimeError("the daemon accepted no connection for a second")


def exchange(payload, replies=1):
    connection = connect()
    connection.settimeout(5)
    connection.sendall(payload)
    received = b""
    while received.count(b"\n") < replies:
        chunk = connection.recv(65536)
        if not chunk:
            break
        received += chunk
    connection.close()
    return [json.loads(line) for line in received.decode().splitlines() if line.strip()]


cases = {
    "garbage": b"\x00\x01\xfe\xff garbage bytes\n",
    "invalid-utf8": b'{"command": "st\xff\xfeatus"}\n',
    "not-an-object": b"[1, 2, 3]\n",
    "no-command": b'{"id": 1}\n',
    "unknown-verb": b'{"id": 2, "command": "frobnicate"}\n',
    "wrong-type": b'{"id": 3, "command": "volume", "level": "loud"}\n',
    "missing-argument": b'{"id": 4, "command": "remove"}\n',
    "missing-file": b'{"id": 5, "command": "add", "items": ["/nonexistent/song.mp3"]}\n',
}
result = {name: exchange(payload) for name, payload in cases.items()}
result["too-long-then-good"] = exchange(b'{"command": "' + b"x" * 70000 + b'"}\n{"id": 6, "command": "status"}\n', 2)

crowd = []
for index in range(200):
    connection = connect()
    if index % 2:
        connection.sendall(b'{"command": "sta')
    crowd.append(connection)
for connection in crowd:
    connection.close()

result["after"] = exchange(b'{"id": "last", "command": "status"}\n')
print(json.dumps(result))
