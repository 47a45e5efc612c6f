#!/usr/bin/env python3
"""A remote cache that answers slowly, for tools/bench-farm.sh.

Speaks the part of the Bazel HTTP cache protocol a cook uses: GET and HEAD
answer 404 (it holds nothing), PUT and MKCOL answer 201 and discard the
body. Every answer waits DELAY seconds first (GET_DELAY and PUT_DELAY set
them apart). Listens on 127.0.0.1 only; the caller stops it by its PID.

Usage: slow-cache-server.py PORT DELAY [PUT_DELAY]
"""

import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
GET_DELAY = float(sys.argv[2])
PUT_DELAY = float(sys.argv[3]) if len(sys.argv) > 3 else GET_DELAY


class Slow(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, delay):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        time.sleep(delay)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.answer(404, GET_DELAY)

    def do_HEAD(self):
        self.answer(404, GET_DELAY)

    def do_PUT(self):
        self.answer(201, PUT_DELAY)

    def do_MKCOL(self):
        self.answer(201, PUT_DELAY)

    def log_message(self, *args):
        pass


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", PORT), Slow).serve_forever()
