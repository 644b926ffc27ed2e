#!/usr/bin/env python3
"""The hostile-Prometheus part of the adversarial pass (docs/fuzzing.md, issue 56 items 1, 2, 13).

A "Prometheus" on 127.0.0.1 that answers `gpumap fleet`'s queries with what a broken or hostile
server (or anyone on a plain-http path) can send: 20 MB of `[`, a vector of 20 MB of `[],[],...`,
a chunked body that never ends, trailer lines that never end, 1-byte chunks with 1 000-byte
extensions, and an interim `100 Continue` before a real (empty) answer.  Each is run against the
gpumap given (the ASan build in CI), and its wall time and peak memory (the child's ru_maxrss) are
printed as a table; the run fails when one takes longer than --timeout + 3 s, more than
--max-rss-mib, exits other than expected, or the sanitizers report anything.

  python3 tests/fleet/hostile_prometheus.py build-dev/gpumap [--timeout 5] [--only NAME]
      [--hostile-queries N]   (N: how many of a read's queries get the hostile answer; default all)
      [--no-check]            (print the numbers only: for measuring an older binary)
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

EMPTY = b'{"status":"success","data":{"resultType":"vector","result":[]}}'
SIZE = 20 << 20


def head(extra=b""):
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra


def deep(conn, stop):
    conn.sendall(head(b"Content-Length: %d\r\n\r\n" % SIZE))
    block = b"[" * 65536
    for _ in range(SIZE // len(block)):
        conn.sendall(block)


def lists(conn, stop):
    start = b'{"status":"success","data":{"resultType":"vector","result":['
    block = b"[]," * 21845
    n = (SIZE - len(start)) // len(block)
    conn.sendall(head(b"Content-Length: %d\r\n\r\n" % (len(start) + n * len(block))) + start)
    for _ in range(n):
        conn.sendall(block)


def chunked_forever(conn, stop):
    conn.sendall(head(b"Transfer-Encoding: chunked\r\n\r\n"))
    chunk = b"2000\r\n" + b" " * 0x2000 + b"\r\n"  # 8 KiB of JSON white space, for ever
    while not stop.is_set():
        conn.sendall(chunk)


def endless_trailers(conn, stop):
    conn.sendall(head(b"Transfer-Encoding: chunked\r\n\r\n") + b"%x\r\n" % len(EMPTY) + EMPTY + b"\r\n0\r\n")
    line = b"X-Trailer: " + b"a" * 1000 + b"\r\n"
    while not stop.is_set():
        conn.sendall(line * 8)


def tiny_chunks(conn, stop):
    conn.sendall(head(b"Transfer-Encoding: chunked\r\n\r\n"))
    chunk = b"1;" + b"e" * 1000 + b"\r\n \r\n"
    while not stop.is_set():
        conn.sendall(chunk * 8)


def interim(conn, stop):
    conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" + head(b"Content-Length: %d\r\n\r\n" % len(EMPTY)) + EMPTY)


CASES = [  # name, answer, exit code expected
    ("20MB-of-[", deep, 1),
    ("[],[],...", lists, 1),
    ("chunked-forever", chunked_forever, 1),
    ("endless-trailers", endless_trailers, 1),
    ("1-byte-chunks+1000-byte-ext", tiny_chunks, 1),
    ("100-continue", interim, 0),
]


class Server:
    def __init__(self, answer, hostile_queries, limit_s):
        self.answer, self.hostile, self.limit_s = answer, hostile_queries, limit_s
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.count = 0
        self.lock = threading.Lock()
        self.threads = []
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            t = threading.Thread(target=self.serve, args=(conn,), daemon=True)
            self.threads.append(t)
            t.start()

    def serve(self, conn):
        with conn:
            conn.settimeout(self.limit_s)
            data = b""
            while b"\r\n\r\n" not in data:
                got = conn.recv(8192)
                if not got:
                    return
                data += got
            with self.lock:
                self.count += 1
                hostile = self.hostile is None or self.count <= self.hostile
            stop = threading.Event()
            timer = threading.Timer(self.limit_s, stop.set)  # an old client that never stops reading
            timer.start()
            try:
                if hostile:
                    self.answer(conn, stop)
                else:
                    conn.sendall(head(b"Content-Length: %d\r\n\r\n" % len(EMPTY)) + EMPTY)
            except OSError:
                pass  # the client closed: what a bounded client does
            finally:
                timer.cancel()

    def close(self):
        self.stop.set()
        self.sock.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpumap")
    ap.add_argument("--timeout", type=float, default=5)
    ap.add_argument("--only")
    ap.add_argument("--hostile-queries", type=int)
    ap.add_argument("--max-rss-mib", type=float, default=400)
    ap.add_argument("--server-limit", type=float, default=60, help="seconds a hostile answer is sent at most")
    ap.add_argument("--no-check", action="store_true")
    a = ap.parse_args()
    # ASan keeps freed memory in a quarantine (256 MiB by default) before reusing it: an answer that keeps
    # arriving for the whole --timeout would show the quarantine, not what gpumap holds.  A small one
    # measures gpumap (a release build has none).
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:quarantine_size_mb=16", UBSAN_OPTIONS="print_stacktrace=1")
    failed = []
    print(f"{'answer':30} {'exit':>4} {'wall s':>7} {'max RSS MiB':>12}  said")
    for name, answer, want in CASES:
        if a.only and a.only != name:
            continue
        srv = Server(answer, a.hostile_queries, a.server_limit)
        start = time.monotonic()
        with tempfile.TemporaryFile() as errf:
            p = subprocess.Popen([a.gpumap, "fleet", "--prometheus", f"http://127.0.0.1:{srv.port}", "--timeout",
                                  str(a.timeout)], stdout=subprocess.DEVNULL, stderr=errf, env=env)
            _, status, usage = os.wait4(p.pid, 0)  # its peak memory: ru_maxrss (KiB)
            p.returncode = os.waitstatus_to_exitcode(status)
            errf.seek(0)
            err = errf.read()
        wall = time.monotonic() - start
        srv.close()
        rss = usage.ru_maxrss / 1024
        said = (err.decode(errors="replace").strip().splitlines() or [""])[0][:110]
        print(f"{name:30} {p.returncode:>4} {wall:7.1f} {rss:12.0f}  {said}", flush=True)
        if a.no_check:
            continue
        text = err.decode(errors="replace")
        if "Sanitizer" in text or "runtime error:" in text:
            failed.append(f"{name}: a sanitizer report:\n{text[-3000:]}")
        if p.returncode != want:
            failed.append(f"{name}: exit {p.returncode}, not {want}: {text[-500:]}")
        if wall > a.timeout + 3:
            failed.append(f"{name}: {wall:.1f} s at --timeout {a.timeout}")
        if rss > a.max_rss_mib:
            failed.append(f"{name}: {rss:.0f} MiB at most {a.max_rss_mib}")
    for f in failed:
        print("FAIL", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
