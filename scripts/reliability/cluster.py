#!/usr/bin/env python3
"""Three `kiosk serve` instances on one PostgreSQL database behind nginx (deploy/nginx/kiosk-cluster.conf), checked
as one service. Started by cluster.sh, which builds Kiosk and starts PostgreSQL; see RELIABILITY.md.

Environment: KIOSK_BIN, KIOSK_TEST_POSTGRES_URL (a role that may create databases), KIOSK_POSTGRES_BIN (psql's
folder), REPO_ROOT, CLUSTER_BIG_MIB (512), CLUSTER_THROTTLE (8MiB/s: each response's pace, so that the big
download lasts long enough for several kills), CLUSTER_ROUNDS (20: revocations measured).

Checks, each PASS or FAIL (exit status 1 on any FAIL):
  1. a sandbox purchase made at A is granted at B, and B's token opens the content at C;
  2. the revocation lag across instances: a refund processed at B, until C refuses the token (target < 1 s), and
     the same right after every instance's LISTEN connection was cut;
  3. the installation cap (3) exact under 30 concurrent grant requests spread over the instances;
  4. a large `kiosk get` through nginx finishing with the exact bytes while the instances are SIGKILLed and
     restarted in turn;
  5. the ledger's counts exact afterwards (transactions, notifications, revocation events, installations).
Everything listens on 127.0.0.1; every wait is bounded.
"""
import concurrent.futures
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

KIOSK = os.environ["KIOSK_BIN"]
ADMIN_URL = urllib.parse.urlparse(os.environ["KIOSK_TEST_POSTGRES_URL"])
PSQL = os.path.join(os.environ["KIOSK_POSTGRES_BIN"], "psql")
REPO = os.environ["REPO_ROOT"]
BIG_MIB = int(os.environ.get("CLUSTER_BIG_MIB", "512"))
THROTTLE = os.environ.get("CLUSTER_THROTTLE", "8MiB/s")
ROUNDS = int(os.environ.get("CLUSTER_ROUNDS", "20"))
CAP = 3
DATABASE = "kiosk_cluster"
RESULTS = []


def log(message):
    print(f"[cluster {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def record(name, passed, detail):
    RESULTS.append((name, passed, detail))
    log(f"{'PASS' if passed else 'FAIL'} {name}: {detail}")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def psql(statement, database=DATABASE):
    """Runs one statement as the test role; its single value (or '')."""
    environment = dict(os.environ, PGPASSWORD=urllib.parse.unquote(ADMIN_URL.password or ""))
    answer = subprocess.run(
        [PSQL, "-h", ADMIN_URL.hostname, "-p", str(ADMIN_URL.port), "-U", ADMIN_URL.username, "-d", database,
         "-At", "-v", "ON_ERROR_STOP=1", "-c", statement],
        env=environment, capture_output=True, text=True, timeout=60, check=True)
    return answer.stdout.strip()


def http(port, method, path, body=None, headers=None, timeout=60):
    """(status, parsed JSON or raw bytes)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


class Instance:
    """One `kiosk serve` on a fixed port, with its own --data, started again after a kill on the same port."""

    def __init__(self, name, work, content, database_url, secret):
        self.name, self.port = name, free_port()
        self.data = os.path.join(work, f"data-{name}")
        self.log = open(os.path.join(work, f"{name}.log"), "ab")
        self.arguments = [
            KIOSK, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--content", content,
            "--data", self.data, "--reload-interval", "0", "--log-level", "warning",
            "--max-installations", str(CAP), "--faults", f"throttle={THROTTLE}",
            "--shutdown-grace", "2"]
        self.environment = dict(os.environ, KIOSK_DATABASE_URL=database_url, KIOSK_GRANT_SECRET=secret)
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            self.arguments, env=self.environment, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        for _ in range(600):
            try:
                if http(self.port, "GET", "/readyz", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"instance {self.name} exited with {self.process.returncode}")
            time.sleep(0.05)
        raise RuntimeError(f"instance {self.name} never became ready")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def start_nginx(work, lb_port, instances):
    """nginx with deploy/nginx/kiosk-cluster.conf, its ports replaced, included from a minimal nginx.conf."""
    with open(os.path.join(REPO, "deploy/nginx/kiosk-cluster.conf")) as shipped:
        site = shipped.read()
    site = site.replace("listen 8080;", f"listen 127.0.0.1:{lb_port};")
    for default, instance in zip((8081, 8082, 8083), instances):
        site = site.replace(f"127.0.0.1:{default} ", f"127.0.0.1:{instance.port} ")
    with open(os.path.join(work, "kiosk-cluster.conf"), "w") as rendered:
        rendered.write(site)
    temp = os.path.join(work, "nginx-temp")
    os.makedirs(temp, exist_ok=True)
    with open(os.path.join(work, "nginx.conf"), "w") as main:
        main.write(f"""daemon off;
master_process on;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {work}/kiosk-cluster.conf;
}}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    process = subprocess.Popen([nginx, "-p", work, "-c", os.path.join(work, "nginx.conf")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            if http(lb_port, "GET", "/healthz", timeout=2)[0] == 200:
                return process
        except OSError:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("nginx never answered")


def buy(port, product, user):
    status, answer = http(port, "POST", "/sandbox/purchases", {"product_id": product, "user": user})
    assert status == 201, (status, answer)
    return answer


def grant(port, product, receipt, installation):
    return http(port, "POST", "/v1/downloads",
                {"receipt-data": receipt, "product_id": product, "installation_id": installation})


def content_status(port, grant_body):
    path = urllib.parse.urlparse(grant_body["files"][0]["url"]).path
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {grant_body['token']}",
                                                  "Range": "bytes=0-0"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        error.read()
        return error.code


def lag_until_refused(port, grant_body, bound=10.0):
    """Seconds until `port` refuses the token, polling every 5 ms; None past `bound`."""
    start = time.monotonic()
    while time.monotonic() - start < bound:
        if content_status(port, grant_body) == 403:
            return time.monotonic() - start
        time.sleep(0.005)
    return None


def check_shared_purchase(a, b, c):
    bought = buy(a.port, "com.example.kiosk.magazine.2026-11", "shared")
    status, body = grant(b.port, "com.example.kiosk.magazine.2026-11", bought["receipt-data"], "shared-device")
    opened = content_status(c.port, body) if status == 200 else None
    record("purchase at A, grant at B, content at C", status == 200 and opened in (200, 206),
           f"grant at B: {status}, content at C: {opened}")


def measure_revocations(a, b, c, label, user_prefix, before_each=None):
    lags, cut = [], 0
    for round_number in range(ROUNDS):
        bought = buy(a.port, "com.example.kiosk.book.swift-server-guide", f"{user_prefix}-{round_number}")
        status, body = grant(a.port, "com.example.kiosk.book.swift-server-guide", bought["receipt-data"],
                             f"lag-{round_number}")
        assert status == 200 and content_status(c.port, body) in (200, 206), status
        if before_each:
            cut += before_each()
        refunded, _ = http(b.port, "POST", "/sandbox/notifications",
                           {"transaction_id": bought["transaction_id"], "kind": "refund"})
        assert refunded == 200, refunded
        lags.append(lag_until_refused(c.port, body))
    missing = sum(lag is None for lag in lags)
    seen = sorted(lag for lag in lags if lag is not None)
    detail = (f"{ROUNDS} refunds at B, refused at C after median {statistics.median(seen) * 1000:.1f} ms, "
              f"max {seen[-1] * 1000:.1f} ms" if seen else "never refused")
    if before_each:
        detail += f" ({cut} LISTEN connections cut in all)"
    passed = missing == 0 and seen[-1] < 1.0 and (before_each is None or cut >= ROUNDS)
    record(f"revocation lag ({label})", passed, detail + (f", {missing} never" if missing else ""))
    return ROUNDS


def cut_listeners():
    cut = psql(f"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
               f"WHERE datname = '{DATABASE}' AND application_name = 'kiosk-listener'")
    return int(cut or 0)


def check_cap(instances):
    bought = buy(instances[0].port, "com.example.kiosk.levels.pack1", "cap")
    requests = [(instances[index % 3].port, f"cap-device-{index}") for index in range(30)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=30) as pool:
        answers = list(pool.map(
            lambda item: grant(item[0], "com.example.kiosk.levels.pack1", bought["receipt-data"], item[1]),
            requests))
    admitted = sum(status == 200 for status, _ in answers)
    refused = sum(status == 403 and body.get("error", {}).get("code") == "installation_limit"
                  for status, body in answers)
    stored = int(psql(f"SELECT count(*) FROM ledger_installations "
                      f"WHERE original_transaction_id = '{bought['original_transaction_id']}'"))
    record("installation cap under 30 concurrent grants over 3 instances",
           admitted == CAP and refused == 30 - CAP and stored == CAP,
           f"admitted {admitted}, refused {refused} (installation_limit), {stored} in the ledger; cap {CAP}")


def check_get_through_kills(work, lb_port, instances, big_sha):
    bought = buy(instances[0].port, "cluster.big", "big")
    cache = os.path.join(work, "cache")
    command = [KIOSK, "get", "cluster.big", "--receipt", "-", "--server", f"http://127.0.0.1:{lb_port}",
               "--cache", cache]
    started = time.monotonic()
    output = open(os.path.join(work, "get.log"), "wb")
    get = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=output, stderr=output)
    get.stdin.write(bought["receipt-data"].encode())
    get.stdin.close()
    kills = 0
    for turn in range(120):
        try:
            get.wait(timeout=1.5)
            break
        except subprocess.TimeoutExpired:
            pass
        victim = instances[turn % 3]
        victim.kill()
        kills += 1
        victim.start()
    else:
        get.kill()
    status = get.wait(timeout=60)
    elapsed = time.monotonic() - started
    installed = os.path.join(cache, "Content", "cluster.big", "1", "Contents", "big.bin")
    digest = hashlib.sha256()
    if os.path.exists(installed):
        with open(installed, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    exact = digest.hexdigest() == big_sha
    record(f"kiosk get of {BIG_MIB} MiB through nginx while instances are SIGKILLed and restarted",
           status == 0 and exact and kills >= 3,
           f"exit {status}, {kills} kills in {elapsed:.1f} s, SHA-256 {'exact' if exact else 'WRONG'}")


def check_counts(purchases, notifications):
    transactions = int(psql("SELECT count(*) FROM ledger_transactions"))
    distinct = int(psql("SELECT count(DISTINCT transaction_id) FROM ledger_transactions"))
    sandbox = int(psql("SELECT count(*) FROM sandbox_purchases"))
    applied = int(psql("SELECT count(*) FROM ledger_notifications"))
    events = int(psql("SELECT count(*) FROM ledger_revocation_events"))
    cancelled = int(psql("SELECT count(*) FROM ledger_transactions WHERE cancellation_date_ms IS NOT NULL"))
    record("ledger counts exact",
           transactions == distinct == purchases and sandbox == purchases and applied == notifications
           and events == notifications and cancelled == notifications,
           f"{purchases} purchases: {sandbox} sandbox rows, {transactions} ledger transactions ({distinct} distinct); "
           f"{notifications} refunds: {applied} notifications applied, {events} revocation events, "
           f"{cancelled} cancelled")


def main():
    work = tempfile.mkdtemp(prefix="kiosk-cluster.")
    instances, nginx = [], None
    try:
        content = os.path.join(work, "content")
        shutil.copytree(os.path.join(REPO, "content"), content)
        big = os.path.join(content, "cluster.big")
        os.makedirs(os.path.join(big, "Contents"))
        with open(os.path.join(big, "Info.json"), "w") as info:
            json.dump({"product_id": "cluster.big", "type": "non_consumable", "title": "Cluster test",
                       "content_version": "1"}, info)
        digest = hashlib.sha256()
        with open(os.path.join(big, "Contents", "big.bin"), "wb") as file:
            for _ in range(BIG_MIB):
                block = os.urandom(1 << 20)
                digest.update(block)
                file.write(block)
        psql(f"CREATE DATABASE {DATABASE}", database="postgres")
        url = ADMIN_URL._replace(path=f"/{DATABASE}").geturl()
        secret = secrets.token_hex(32)
        instances = [Instance(name, work, content, url, secret) for name in "ABC"]
        for instance in instances:
            instance.start()
        lb_port = free_port()
        nginx = start_nginx(work, lb_port, instances)
        log(f"PostgreSQL {psql('SHOW server_version')}, nginx on {lb_port}, instances on "
            + ", ".join(f"{i.name}={i.port}" for i in instances) + f", {os.cpu_count()} cores")
        a, b, c = instances
        check_shared_purchase(a, b, c)
        refunds = measure_revocations(a, b, c, "LISTEN", "lag")
        refunds += measure_revocations(
            a, b, c, "every LISTEN connection cut just before", "lag-cut", before_each=cut_listeners)
        check_cap(instances)
        check_get_through_kills(work, lb_port, instances, digest.hexdigest())
        # Purchases: the shared one, one per revocation round, the cap's, the big one.
        check_counts(purchases=1 + refunds + 1 + 1, notifications=refunds)
    finally:
        for instance in instances:
            instance.stop()
        if nginx:
            nginx.send_signal(signal.SIGQUIT)
            nginx.wait(timeout=30)
        try:
            psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)", database="postgres")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(f"{'PASS' if passed else 'FAIL'}  {name}: {detail}" for name, passed, detail in RESULTS))
    return 0 if RESULTS and all(passed for _, passed, _ in RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
