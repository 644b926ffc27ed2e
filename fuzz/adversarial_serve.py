#!/usr/bin/env python3
"""The second adversarial pass of issue 46 over `gpumap serve`, `gpumap-kubelet`'s CDI reading and
the readers of hostile processes (`top --once`, `ps`, `pods`, `metrics`).

Hostile clients on loopback only (127.0.0.0/8: each address a peer of its own to the server), every
run bounded in count and time; every process started here is stopped by its PID.  Prints one line
per case and a summary of counts; exit 1 when a case failed (a scrape from another address not
answered 200, serve gone, a sanitizer report, gpumap-kubelet past its time or memory).

usage: fuzz/adversarial_serve.py BUILD_DIR [--cases serve,tls,heads,cdi,top] [--seed N]
  BUILD_DIR holds gpumap, gpumap-kubelet, hosts/ and sim/ (and tests/fake_kubelet for the cdi family).
"""
import argparse
import json
import os
import random
import resource
import select
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

ok = True
counts = {}


def report(family, case, passed, detail=""):
    global ok
    ok &= passed
    counts.setdefault(family, [0, 0])
    counts[family][0] += 1
    counts[family][1] += 0 if passed else 1
    print(f"{'PASS' if passed else 'FAIL'} {family}: {case} {detail}", flush=True)


def connect(port, src, nonblocking=False, rcvbuf=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((src, 0))
    if nonblocking:
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
    else:
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
    return s


def scrape(port, src, path="/metrics", tls=None):
    """The status of one GET from `src` (0: none within 10 s) and its time."""
    t = time.monotonic()
    try:
        s = connect(port, src)
        if tls:
            s = tls.wrap_socket(s, server_hostname="127.0.0.1")
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        status = int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else -1
    except (OSError, ValueError):
        status = 0
    return status, time.monotonic() - t


class Storm:
    """`count` connections spread over `sources` that each send `hello` and reconnect as soon as
    they are closed (or, with `read=False` and a request, never read the answer)."""

    def __init__(self, port, hello, count, sources, read=True, rcvbuf=0):
        self.port, self.hello, self.count, self.sources, self.read, self.rcvbuf = port, hello, count, sources, read, rcvbuf
        self.stop = False
        self.closed = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def open(self, i):
        return [connect(self.port, self.sources[i % len(self.sources)], True, self.rcvbuf), False]

    def run(self):
        conns = [self.open(i) for i in range(self.count)]
        while not self.stop:
            socks = {c[0]: i for i, c in enumerate(conns)}
            w = [c[0] for c in conns if not c[1]]
            r = [c[0] for c in conns if c[1] and self.read]
            rr, ww, _ = select.select(r, w, [], 0.05)
            for s in ww:
                i = socks[s]
                try:
                    if self.hello:
                        s.send(self.hello)
                    conns[i][1] = True
                except OSError:
                    s.close()
                    self.closed += 1
                    conns[i] = self.open(i)
            for s in rr:
                i = socks[s]
                s.close()
                self.closed += 1
                conns[i] = self.open(i)
        for c in conns:
            c[0].close()


def start_serve(gpumap, build, extra, work):
    env = dict(os.environ, GPUMAP_SIM_LIBDIR=os.path.join(build, "sim"), GPUMAP_CACHE_DIR=os.path.join(work, "cache"),
               GPUMAP_LOCK_DIR=os.path.join(work, "locks"), GPUMAP_IN_CONTAINER="0")
    out = open(os.path.join(work, "serve.out"), "w+")
    err = open(os.path.join(work, "serve.err"), "w+")
    p = subprocess.Popen([gpumap, "serve", "--simulate", os.path.join(build, "hosts", "h200x2.json"), "--listen",
                          "127.0.0.1:0"] + extra, stdout=out, stderr=err, env=env)
    until = time.monotonic() + 30
    while time.monotonic() < until:
        out.seek(0)
        text = out.read()
        if "listening on" in text:
            url = text.split("listening on")[1].split()[0]  # http://127.0.0.1:PORT/metrics
            port = int(url.split("://")[1].split("/")[0].rsplit(":", 1)[1])
            return p, port, err
        time.sleep(0.1)
    p.kill()
    raise SystemExit("serve did not start: " + open(os.path.join(work, "serve.err")).read())


def stop_serve(p, err, family):
    p.terminate()
    try:
        rc = p.wait(15)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    err.seek(0)
    text = err.read()
    report(family, "SIGTERM stops serve, no sanitizer report", rc == 0 and "Sanitizer" not in text, f"exit {rc}")


def storms(port, family, tls=None):
    payloads = [("silent", b""), ("one byte", b"G"), ("half a request line", b"GET /metrics HT"),
                ("partial TLS ClientHello", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc"),
                ("random bytes", bytes(random.randrange(256) for _ in range(7)))]
    spreads = [("1 address", ["127.0.0.1"]), ("4 addresses", [f"127.0.0.{i}" for i in range(1, 5)]),
               ("8 addresses", [f"127.0.0.{i}" for i in range(1, 9)])]
    for name, hello in payloads:
        for spread, sources in spreads:
            storm = Storm(port, hello, 200, sources)
            time.sleep(0.5)  # the storm under way (its state is not what is measured)
            results = [scrape(port, "127.0.0.200", tls=tls) for _ in range(10)]
            storm.stop = True
            storm.thread.join()
            good = sum(1 for s, _ in results if s == 200)
            worst = max(t for _, t in results)
            # From 8 addresses the total (64) is shared with the storm: 8 x 16 > 64, and the scraper
            # competes connection for connection (docs/metrics.md says so); said, not failed.
            must = len(sources) * 16 <= 64
            report(family, f"200 reconnecting clients, {name}, {spread}", good == 10 or not must,
                   f"{good}/10 scrapes 200, slowest {worst:.2f} s, {storm.closed} closed by serve")


def slow_readers(port, family):
    for count, sources in [(45, ["127.0.0.1"]), (100, ["127.0.0.1", "127.0.0.2", "127.0.0.3"])]:
        storm = Storm(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", count, sources, read=False, rcvbuf=1024)
        time.sleep(0.5)
        results = [scrape(port, "127.0.0.201") for _ in range(10)]
        storm.stop = True
        storm.thread.join()
        good = sum(1 for s, _ in results if s == 200)
        report(family, f"{count} clients that never read, from {len(sources)} address(es)", good == 10,
               f"{good}/10 scrapes 200, slowest {max(t for _, t in results):.2f} s")


def heads(port, family, rng):
    cases = [
        ("8 KiB request line", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n"),
        ("2000 headers", b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 2000 + b"\r\n"),
        ("NUL in the path", b"GET /met\0rics HTTP/1.1\r\n\r\n"),
        ("pipelined 100", b"GET /healthz HTTP/1.1\r\n\r\n" * 100),
        ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        ("absolute URI", b"GET http://evil/metrics HTTP/1.1\r\n\r\n"),
        ("two Host and two Authorization", b"GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\nAuthorization: Basic eDp5\r\nAuthorization: Basic eDp5\r\n\r\n"),
        ("a body with Content-Length 1e12", b"POST /metrics HTTP/1.1\r\nContent-Length: 1000000000000\r\n\r\nxxxx"),
        ("chunked", b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("bare LF", b"GET /metrics HTTP/1.1\nHost: x\n\n"),
        ("HTTP/0.9", b"GET /metrics\r\n\r\n"),
        ("a UTF-8 and escape path", "GET /m\u00e9trics\x1b[2J HTTP/1.1\r\n\r\n".encode()),
        ("scrape timeout -1e308", b"GET /metrics HTTP/1.1\r\nX-Prometheus-Scrape-Timeout-Seconds: -1e308\r\n\r\n"),
        ("scrape timeout nan", b"GET /metrics HTTP/1.1\r\nX-Prometheus-Scrape-Timeout-Seconds: nan\r\n\r\n"),
        ("Accept-Encoding 10 000 codings", b"GET /metrics HTTP/1.1\r\nAccept-Encoding: " + b"x;q=0," * 1300 + b"\r\n\r\n"),
    ]
    for i in range(200):
        cases.append((f"random head {i}", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600))) + b"\r\n\r\n"))
    held = 0
    for name, data in cases:
        try:
            s = connect(port, "127.0.0.3")
            s.sendall(data)
            s.settimeout(10)
            while s.recv(65536):
                pass
            s.close()
        except OSError:
            pass
        status, _ = scrape(port, "127.0.0.4", "/healthz")
        held += status == 200
        if status != 200:
            report(family, name, False, f"/healthz then {status}")
    report(family, f"{len(cases)} hostile request heads", held == len(cases), f"/healthz 200 after {held}/{len(cases)}")


def cdi(build, work, family):
    kubelet = os.path.join(build, "gpumap-kubelet")
    fake = os.path.join(build, "tests", "fake_kubelet")
    if not os.path.exists(fake):
        report(family, "fake_kubelet built", False, fake)
        return
    sock = os.path.join(work, "kubelet.sock")
    answers = os.path.join(work, "answers.json")
    with open(answers, "w") as f:
        json.dump({"socket": sock, "pods": [], "allocatable": []}, f)
    fk = subprocess.Popen([fake, sock, answers], stdout=subprocess.PIPE)
    try:
        fk.stdout.readline()  # "ready"
        good = "kind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
        big_yaml = "kind: nvidia.com/gpu\ndevices:\n" + "- a\n" * 1048000
        big_json = '{"kind": "nvidia.com/gpu", "devices": [' + "1, " * 1398000 + "1]}"
        cases = {
            "two 4 MiB million-item YAML lists": {"a1.yaml": big_yaml, "a2.yaml": big_yaml},
            "a 4 MiB million-item JSON list": {"a.json": big_json},
            "100 000 nested lists": {"a.yaml": "[" * 100000 + "]" * 100000},
            "100 000 nested JSON arrays": {"a.json": "[" * 100000 + "]" * 100000},
            "one 4 MiB scalar": {"a.yaml": "kind: " + "x" * (4 * 1024 * 1024 - 10)},
            "one 1 MiB scalar": {"a.yaml": "kind: " + "x" * (1024 * 1024 - 10)},
            "4 000 000 flow items": {"a.yaml": "[" + "a," * 2000000 + "]"},
            "a 1 MiB flow list": {"a.yaml": "[" + "a," * 524000 + "]"},
            "a 1 MiB flow list of 149 000 items": {"a.yaml": "[" + "aaaaaa," * 149000 + "]"},
            "a 1 MiB flow map": {"a.yaml": "{" + "a: b," * 209000 + "}"},
            "a 1 MiB block list": {"a.yaml": "devices:\n" + "- a\n" * 262000},
            "1 MiB of nested block lists": {"a.yaml": "- " * 500000},
            "1 MiB of anchors and aliases": {"a.yaml": "a: &x [b]\nl: [" + "*x," * 349000 + "]"},
            "40 files of 1 MiB": {f"f{i:04}.yaml": "# " + "x" * (1 << 20) + "\n" for i in range(40)},
            "keys 100 000": {"a.yaml": "".join(f"k{i}: v\n" for i in range(100000))},
        }
        peak = 0
        for name, files in cases.items():
            d = tempfile.mkdtemp(dir=work)
            for fn, text in files.items():
                with open(os.path.join(d, fn), "w") as f:
                    f.write(text)
            with open(os.path.join(d, "zz-real.yaml"), "w") as f:
                f.write(good)
            t = time.monotonic()
            # Through GNU time: a child forked from this Python counts the Python's memory as its own
            # peak (ru_maxrss keeps what was resident before the exec); time's fork is small.
            rss_file = os.path.join(work, "rss")
            p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_file, kubelet, "--socket", sock, "--cdi-dirs", d],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            got = {}

            def drain(key, f):
                got[key] = f.read()

            readers = [threading.Thread(target=drain, args=("out", p.stdout)),
                       threading.Thread(target=drain, args=("err", p.stderr))]
            for r in readers:
                r.start()
            _, status, _ = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            for r in readers:
                r.join()
            out, err = got["out"], got["err"]
            wall = time.monotonic() - t
            with open(rss_file) as f:
                kib = int(f.read().split()[-1])
            peak = max(peak, kib)
            try:
                doc = json.loads(out)
                devices = [x["name"] for x in doc.get("cdi", {}).get("devices", [])]
            except ValueError:
                devices = []
            real = "nvidia.com/gpu=0" in devices
            report(family, name, p.returncode == 0 and real and wall < 3.0 and b"Sanitizer" not in err,
                   f"exit {p.returncode}, {wall:.2f} s, {kib // 1024} MB, the real spec's device {'kept' if real else 'LOST'}")
            shutil.rmtree(d)
        # Peak memory of any gpumap-kubelet above (ru_maxrss of the children: the largest).
        report(family, "largest gpumap-kubelet peak RSS under 200 MB", peak < 200 * 1024, f"{peak // 1024} MB")
    finally:
        fk.terminate()
        fk.wait()


def top(build, work, family, rng):
    """`top --once` and `ps --json` over real processes with hostile command lines and variables."""
    hostile_args = ["\x1b]0;owned\x07", "\x1b[2J\x1b[H", "\u009b31m", "\u202eevil", "\u4e2d\u6587" * 50, "\ufe0f" * 30,
                    "a" * 60000, "\t\r\n", "\x7f\x08\x08", "%s%n%x"]
    procs = []
    try:
        for i in range(40):
            args = [rng.choice(hostile_args) for _ in range(3)]
            env = {"CUDA_VISIBLE_DEVICES": rng.choice(["0,0,0", "-1", "GPU-" + "f" * 5000, "\x1b[31m", "1," * 3000]),
                   "HOSTNAME": rng.choice(["train-0", "\x1b]52;c;ZWNobyBvd25lZA==\x07"]),
                   "NVIDIA_VISIBLE_DEVICES": rng.choice(["all", "void", "0,1,2,3,4,5,6,7,8,9" * 100])}
            procs.append(subprocess.Popen(["/bin/sleep", "60"] + args, env=env, executable="/bin/sleep",
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with open(os.path.join(build, "hosts", "h200x2.json")) as f:
            host = json.load(f)
        for g in host["gpus"]:
            g["processes"] = [{"pid": p.pid, "used_memory_mib": 64} for p in procs]
        hostfile = os.path.join(work, "hostile-host.json")
        with open(hostfile, "w") as f:
            json.dump(host, f)
        env = dict(os.environ, GPUMAP_SIM_LIBDIR=os.path.join(build, "sim"), GPUMAP_CACHE_DIR=os.path.join(work, "cache"),
                   GPUMAP_LOCK_DIR=os.path.join(work, "locks"), GPUMAP_IN_CONTAINER="0", COLUMNS="80", LINES="24",
                   TERM="xterm")
        for args in (["top", "--once"], ["top", "--once", "--tree"], ["ps"], ["ps", "--json"], ["pods", "--json"],
                     ["metrics"]):
            t = time.monotonic()
            r = subprocess.run([os.path.join(build, "gpumap")] + args + ["--simulate", hostfile], env=env,
                               capture_output=True, timeout=120)
            wall = time.monotonic() - t
            raw = r.stdout + r.stderr
            clean = b"\x1b" not in raw and "\u009b".encode() not in raw and b"Sanitizer" not in raw
            widths = max((len(line.decode("utf-8", "replace")) for line in r.stdout.splitlines()), default=0)
            report(family, " ".join(args) + ", 40 hostile processes on 2 GPUs",
                   clean and r.returncode in (0, 1, 2),
                   f"exit {r.returncode}, {wall:.2f} s, {len(raw)} bytes, widest line {widths} code points, "
                   f"{'no' if clean else 'AN'} escape or sanitizer report")
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--cases", default="serve,tls,heads,cdi,top")
    ap.add_argument("--seed", type=int, default=46)
    a = ap.parse_args()
    random.seed(a.seed)
    rng = random.Random(a.seed)
    build = os.path.abspath(a.build)
    gpumap = os.path.join(build, "gpumap")
    work = tempfile.mkdtemp(prefix="gpumap-adv-")
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    try:
        want = a.cases.split(",")
        if "serve" in want or "heads" in want:
            p, port, err = start_serve(gpumap, build, ["--cache", "0"], work)
            try:
                if "serve" in want:
                    storms(port, "serve")
                    slow_readers(port, "serve")
                if "heads" in want:
                    heads(port, "heads", rng)
            finally:
                stop_serve(p, err, "serve")
        if "tls" in want:
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out",
                            "cert.pem", "-days", "2", "-subj", "/CN=127.0.0.1"], cwd=work, check=True, capture_output=True)
            with open(os.path.join(work, "web.yml"), "w") as f:
                f.write("tls_server_config: {cert_file: cert.pem, key_file: key.pem}\n")
            p, port, err = start_serve(gpumap, build, ["--web.config.file", os.path.join(work, "web.yml")], work)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            try:
                storms(port, "tls", ctx)
            finally:
                stop_serve(p, err, "tls")
        if "cdi" in want:
            cdi(build, work, "cdi")
        if "top" in want:
            top(build, work, "top", rng)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = sum(c[0] for c in counts.values())
    failed = sum(c[1] for c in counts.values())
    print("summary: " + ", ".join(f"{k} {v[0]} cases {v[1]} failed" for k, v in counts.items()) + f"; {total} cases, {failed} failed")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
