#!/usr/bin/env python3
"""Relays this process's stdin and stdout to a TCP port on 127.0.0.1.

tests/mcp_clients.rs gives this script to an MCP client as its stdio
server command: the client then speaks MCP over its child's stdio, exactly
as with any stdio server, to a proxy that runs inside the test (with the
approval gate answered in the test's fake Feishu).

Usage: stdio_relay.py PORT
"""

import socket
import sys
import threading


def main() -> int:
    port = int(sys.argv[1])
    connection = socket.create_connection(("127.0.0.1", port))

    def upstream() -> None:
        while True:
            data = sys.stdin.buffer.read1(65536)
            if not data:
                break
            connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, daemon=True).start()
    while True:
        data = connection.recv(65536)
        if not data:
            return 0
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    sys.exit(main())
