"""A real HTTP server on loopback (Python's http.server, one thread per connection; https with a
certificate) serving a folder, with faults chosen by the first part of the path, for the
streamed-shard tests:

    /ok/NAME           the file; honours "Range: bytes=N-" with 206
    /norange/NAME      the file; ignores Range (always 200 and the whole body)
    /drop<K>/NAME      each answer sends at most K bytes of its body, then closes the connection
                       (the Content-Length promised the rest), Range honoured
    /cut<N>/NAME       no answer gets past byte N of the file: a retry from N gets nothing
    /fail<K>/NAME      the first K requests of this path answer 500, then as /ok/
    /status<C>/NAME    always HTTP C
    /stall/NAME        sends the headers, then nothing for 10 s

`server.requests[path]` counts the requests of each path.
"""
from __future__ import annotations

import collections
import http.server
import os
import re
import sys
import threading
import time


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):  # noqa: N802 (http.server's name)
        server = self.server
        with server.lock:
            server.requests[self.path] += 1
            count = server.requests[self.path]
        m = re.fullmatch(r"/(ok|norange|stall|drop\d+|cut\d+|fail\d+|status\d+)/(.+)", self.path)
        if not m:
            return self.send_error(404)
        fault, name = m.groups()
        path = os.path.join(server.root, name)
        if fault.startswith("status"):
            return self.send_error(int(fault[6:]))
        if fault.startswith("fail") and count <= int(fault[4:]):
            return self.send_error(500)
        if not os.path.isfile(path):
            return self.send_error(404)
        with open(path, "rb") as f:
            data = f.read()
        start = 0
        rng = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        if rng and fault != "norange":
            start = int(rng.group(1))
        body = data[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", "application/x-tar")
        self.end_headers()
        if fault == "stall":
            time.sleep(10)
            return
        limit = len(body)
        if fault.startswith("drop"):
            limit = min(limit, int(fault[4:]))
        if fault.startswith("cut"):
            limit = max(0, min(limit, int(fault[3:]) - start))
        try:
            self.wfile.write(body[:limit])
            self.wfile.flush()
        except OSError:
            pass
        if limit < len(body):
            self.close_connection = True


class ShardServer(http.server.ThreadingHTTPServer):
    """tls: (certificate file, key file) to serve https."""
    daemon_threads = True

    def __init__(self, root: str, tls: tuple[str, str] | None = None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.scheme = "http"
        if tls is not None:
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.socket = context.wrap_socket(self.socket, server_side=True)
            self.scheme = "https"
        self.root = root
        self.lock = threading.Lock()
        self.requests: collections.Counter = collections.Counter()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    def handle_error(self, request, client_address) -> None:
        # A client that goes away mid-request (a test that cancels, times out or closes early) is
        # not the server's error: no traceback in the test output for it.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)

    def url(self, fault: str, name: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server_address[1]}/{fault}/{name}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()
