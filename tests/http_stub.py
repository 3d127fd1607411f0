"""A stand-in HTTP server for tests of clients whose real server cannot be the one asked (a
Docker engine newer than this machine's, a site that is not the arena): it answers each GET with
what ``respond(path)`` returns, on 127.0.0.1 or on a unix socket, in a thread of its own."""

from __future__ import annotations

import contextlib
import http.server
import socketserver
import threading
from collections.abc import Callable, Iterator

#: ``respond(path)`` -> (status, content type, body).
Respond = Callable[[str], tuple[int, str, bytes]]


def _handler(respond: Respond) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, kind, body = respond(self.path)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):  # http.server wants a client address pair
        conn, _ = self.socket.accept()
        return conn, ("stub", 0)


@contextlib.contextmanager
def serving(respond: Respond, unix_path: str | None = None) -> Iterator[str]:
    """The server's address (``http://127.0.0.1:PORT``, or ``unix://PATH``) while it runs."""
    if unix_path is None:
        server: socketserver.BaseServer = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), _handler(respond)
        )
        address = f"http://127.0.0.1:{server.server_address[1]}"
    else:
        server = _UnixServer(unix_path, _handler(respond))
        address = f"unix://{unix_path}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield address
    finally:
        server.shutdown()
        server.server_close()
