"""The ledger and the fenced store: one HTTP server of the harness's own on 127.0.0.1.

Every event of every instance (`GET /e?k=start&i=...`) and of the harness itself (faults, process
starts and ends) is stamped with this process's monotonic clock: a single clock on the machine,
whatever clock a fault gives an instance or a server. A `write` event is a fenced write: the store
keeps, per resource, the highest token it accepted and the run that wrote it, and accepts a token
only when it is greater, or when it is that same run's again (a run writes more than once). It
answers `accepted` or `refused`, and the ledger keeps the answer.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

FIELDS = ("k", "i", "f", "j", "l", "t", "due", "tok", "c", "r", "d")


class Ledger:
    def __init__(self, path):
        self.path = path
        self.events = []
        self.fence = {}  # resource -> (token, run)
        self.lock = threading.Lock()
        self.t0 = time.monotonic_ns()
        self.file = open(path, "w", encoding="utf-8")
        handler = self._handler()
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.http.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def now_ms(self):
        """Milliseconds since the ledger began, on the harness's monotonic clock."""
        return (time.monotonic_ns() - self.t0) / 1e6

    def record(self, **event):
        """Appends an event, stamped now; a write is judged by the fenced store first."""
        with self.lock:
            event["ts"] = round(self.now_ms(), 3)
            if event.get("k") == "write":
                event["d"] = self._fenced(event)
            self.events.append(event)
            self.file.write(json.dumps(event, sort_keys=True) + "\n")
            self.file.flush()
            return event.get("d", "ok") if event.get("k") == "write" else "ok"

    def _fenced(self, event):
        resource, run = event.get("l", ""), event.get("r", "")
        try:
            token = int(event.get("tok", "0"))
        except ValueError:
            return "refused"
        last, last_run = self.fence.get(resource, (0, None))
        if token > last or (token == last and run == last_run):
            self.fence[resource] = (token, run)
            return "accepted"
        return "refused"

    def _handler(self):
        ledger = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = urlparse(self.path)
                if url.path != "/e":
                    self.send_error(404)
                    return
                q = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
                event = {k: q[k] for k in FIELDS if k in q}
                answer = ledger.record(**event).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        return Handler

    def close(self):
        self.http.shutdown()
        self.http.server_close()
        with self.lock:
            self.file.close()
