#!/usr/bin/env bash
# The reliability suite in one command: runs every reliability scenario, then writes RELIABILITY.md from what they
# printed (this script is the only writer of that file). Exits 1 when any scenario failed; the report says which.
#
#   scripts/reliability/run.sh          # from the repository root; ~30 minutes after the builds
#
# Scenarios (each also runs on its own):
#   chaos    200 downloads through KioskKit against `--faults chaos`   swift test --filter ChaosTests
#   kills    kill -9 the client 10 times, and the server once          scripts/reliability/kills.sh
#   stops    kiosk get stopped 6 times, SIGINT and SIGKILL alternating swift test --filter StopCostTests
#   cluster  three instances on PostgreSQL behind nginx, kills, lag     scripts/reliability/cluster.sh
#   load     500 concurrent ranged downloads, RSS and descriptors       scripts/reliability/load.sh
#   hostile  slowloris, body drips, readers that never read, huge headers  scripts/reliability/hostile.sh
#   fuzz     libFuzzer on the range parser, Info.json, verifyReceipt, app receipts  scripts/fuzz.sh
#
# Environment: CHAOS_DOWNLOADS (200), FUZZ_SECONDS (60 per target), KILLS_SEED, KIOSK_BIN (a release kiosk; built
# otherwise), RELIABILITY_ONLY (a space-separated subset of the scenarios, for trying one; the report then says so),
# and the knobs of each script. The fast variants of chaos and hostile run in every `swift test`.
set -uo pipefail

cd "$(dirname "$0")/../.."
OUT_DIR=bench-out/reliability
rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"
CHAOS_DOWNLOADS="${CHAOS_DOWNLOADS:-200}"
FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
ONLY="${RELIABILITY_ONLY:-chaos kills stops cluster load hostile fuzz}"
LOAD_AT_START="$(cut -d' ' -f1-3 /proc/loadavg)"

if [[ -z "${KIOSK_BIN:-}" ]]; then
    echo "building kiosk (release)…" >&2
    swift build -c release --product kiosk --scratch-path .build-release >&2 || exit 1
    KIOSK_BIN="$(swift build -c release --scratch-path .build-release --show-bin-path)/kiosk"
fi
export KIOSK_BIN

echo "== building the tests" >&2
swift build --build-tests >&2 || exit 1

# scenario name command… — runs one scenario with its output in $OUT_DIR/<name>.log (and on stderr); records its
# exit status and duration in $OUT_DIR/status.tsv.
scenario() {
    local name=$1
    shift
    [[ " $ONLY " == *" $name "* ]] || return 0
    echo "== $name: $*" >&2
    local started=$SECONDS
    "$@" 2>&1 | tee "$OUT_DIR/$name.log" >&2
    local status=${PIPESTATUS[0]}
    printf '%s\t%s\t%s\n' "$name" "$status" "$((SECONDS - started))" >>"$OUT_DIR/status.tsv"
    echo "== $name: exit status $status" >&2
}

scenario chaos env KIOSK_CHAOS_DOWNLOADS="$CHAOS_DOWNLOADS" KIOSK_CHAOS_REPORT="$PWD/$OUT_DIR/chaos.json" \
    swift test --skip-build --filter ChaosTests
scenario kills scripts/reliability/kills.sh
scenario stops swift test --skip-build --filter StopCostTests
scenario cluster scripts/reliability/cluster.sh
scenario load scripts/reliability/load.sh
scenario hostile scripts/reliability/hostile.sh
scenario fuzz scripts/fuzz.sh "$FUZZ_SECONDS"

python3 - "$OUT_DIR" "$CHAOS_DOWNLOADS" "$ONLY" "$KIOSK_BIN" "$LOAD_AT_START" <<'PY'
import datetime, json, os, re, subprocess, sys
out_dir, downloads, only, kiosk_bin, load = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5]
def read(name):
    path = os.path.join(out_dir, name)
    return open(path).read() if os.path.exists(path) else ""
def tail_block(text, start_pattern):
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.search(start_pattern, line): return "\n".join(lines[i:])
    return "\n".join(lines[-20:])
def strip_ansi(text): return re.sub(r"\x1b\[[0-9;]*m", "", text)
statuses = {}
for line in read("status.tsv").splitlines():
    name, status, seconds = line.split("\t")
    statuses[name] = (int(status), int(seconds))
def run(cmd): return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
cpu = run(["awk", "-F: ", "/^model name/ {print $2; exit}", "/proc/cpuinfo"])
commit = run(["git", "rev-parse", "--short", "HEAD"])
dirty = " (with uncommitted changes)" if run(["git", "status", "--porcelain", "--untracked-files=no"]) else ""
when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
titles = {
    "chaos": ("Chaos: downloads through KioskKit under random faults", f"KIOSK_CHAOS_DOWNLOADS={downloads} swift test --filter ChaosTests"),
    "kills": ("Kill -9: client and server", "scripts/reliability/kills.sh"),
    "stops": ("Stops of `kiosk get`: SIGINT and SIGKILL alternating", "swift test --filter StopCostTests"),
    "cluster": ("A cluster: three instances on PostgreSQL behind nginx", "scripts/reliability/cluster.sh"),
    "load": ("Load: 500 concurrent ranged downloads", "scripts/reliability/load.sh"),
    "hostile": ("Hostile clients", "scripts/reliability/hostile.sh"),
    "fuzz": ("Fuzzing", "scripts/fuzz.sh"),
}
order = ["chaos", "kills", "stops", "cluster", "load", "hostile", "fuzz"]
failed = [n for n in order if n in statuses and statuses[n][0] != 0]
with open("RELIABILITY.md", "w") as out:
    w = out.write
    w("# Reliability report\n\n")
    w(f"Written by `scripts/reliability/run.sh` on {when}, from `{commit}`{dirty}, with the release build "
      f"`{kiosk_bin if os.path.relpath(kiosk_bin).startswith('..') else os.path.relpath(kiosk_bin)}`; {os.cpu_count()} CPUs ({cpu}); load average {load} at the start. Every figure below is this run's output; each section names the command that reproduces it.\n\n")
    if set(only) != set(order):
        w(f"**A partial run**: only {', '.join(only)} (`RELIABILITY_ONLY`).\n\n")
    w("| scenario | command | result | time |\n|---|---|---|---:|\n")
    for name in order:
        if name not in statuses: continue
        status, seconds = statuses[name]
        w(f"| [{titles[name][0]}](#{re.sub(r'[^a-z0-9 -]', '', titles[name][0].lower()).replace(' ', '-')}) | "
          f"`{titles[name][1]}` | {'PASS' if status == 0 else f'**FAIL** (exit {status})'} | {seconds} s |\n")
    w(f"\nVerdict: **{'PASS' if not failed else 'FAIL: ' + ', '.join(failed)}**\n\n")
    if "chaos" in statuses and read("chaos.json"):
        chaos = json.loads(read("chaos.json"))
        mib = lambda n: n / (1 << 20)
        w(f"## {titles['chaos'][0]}\n\n")
        w(f"`{titles['chaos'][1]}` — a server with `--faults chaos:{chaos['probability']}` (seed {chaos['seed']}): each "
          "content request gets, with that probability, one fault of a random kind (cut, throttle, stall, 503/429 with "
          "Retry-After, 500, ignored Range, changed ETag, corrupted byte, slow first byte). Every installed file is "
          "compared with the source's SHA-256.\n\n")
        w("| figure | value |\n|---|---:|\n")
        w(f"| downloads asked | {chaos['downloads']} |\n")
        w(f"| installed and verified | **{chaos['installed_and_verified']}** |\n")
        w(f"| faults injected | {chaos['faults_total']} |\n")
        for kind, count in sorted(chaos["faults_injected"].items()):
            w(f"| — {kind} | {count} |\n")
        w(f"| bytes the downloads needed | {mib(chaos['bytes_needed']):.1f} MiB |\n")
        w(f"| bytes the server sent | {mib(chaos['bytes_sent']):.1f} MiB |\n")
        w(f"| bytes fetched more than once | {mib(chaos['bytes_refetched']):.1f} MiB "
          f"({chaos['bytes_refetched'] / max(chaos['bytes_needed'], 1) * 100:.1f} %) |\n")
        w(f"| downloads the app had to resume after a final failure | {chaos['app_level_retries']} |\n")
        w(f"| wall time | {chaos['seconds']:.0f} s |\n\n")
        w("Bytes are fetched again only where the fault makes earlier bytes unusable: a 200 that ignored the Range or "
          "a changed ETag restarts that file, a corrupted byte fails the file's SHA-256 and its bytes are discarded, "
          "and a cut loses what was in flight.\n\n")
    if "kills" in statuses:
        w(f"## {titles['kills'][0]}\n\n`{titles['kills'][1]}`. The server sends each content response at most 8 MiB/s "
          "(`KILLS_THROTTLE`), so that the kills land in the middle of the download: unthrottled, `kiosk get` "
          "finishes a gigabyte over loopback before the first kill. \"On disk\" is the part file's allocated bytes "
          "(parallel ranges write chunks at their offsets, so the file is sparse while some are missing).\n\n```\n")
        w(tail_block(read("kills.log"), r"^== scenario 1") + "\n```\n\n")
        w("Each chunk in flight journals how far it has arrived, so a kill costs at most 256 KiB per connection, plus "
          "what the last moments brought and what was in the sockets. A killed server costs the bytes of the ranges "
          "it was sending; the client resumes each broken range from its next byte on the restarted server.\n\n")
    if "stops" in statuses:
        w(f"## {titles['stops'][0]}\n\n`StopCostTests/sixStopsOfAGetCostAFewPercentOfTheFile` (in `swift test`; it "
          "prints the figures; debug build). 256 MiB of random bytes, `kiosk get --connections-per-file 4`, every "
          "response throttled to 10 MiB/s by the server, stopped 6 times, SIGINT and SIGKILL alternating, each stop "
          "once the server has sent another seventh of the file, then a run to the end. The figure is the server's "
          "content bytes, not time.\n\n```\n")
        w(tail_block(strip_ansi(read("stops.log")), r"stop cost:").split("\n◇")[0].split("\n✔")[0] + "\n```\n\n")
        w("A `SIGINT` costs about one 64 KiB slice per connection (counted as sent, never read); a `SIGKILL` what "
          "arrived since the last checkpoint (at most 256 KiB a connection) and what sat in the sockets, which grows "
          "when the client gets little CPU. The test checks that at every `SIGINT` the journal holds how far each "
          "chunk in flight had arrived and that the file ends exact; it does not check a ratio, which would depend "
          "on the machine's load. Before chunks in flight were journaled (#29) the same run sent 1.117×.\n\n")
    if "cluster" in statuses:
        w(f"## {titles['cluster'][0]}\n\n`{titles['cluster'][1]}`: a throw-away PostgreSQL cluster "
          "(`.ci/postgres.sh`), three `kiosk serve` instances with their own `--data`, one database and one grant "
          "secret, each response throttled to 8 MiB/s (so that the big download lasts long enough for several "
          "kills), and nginx in front with [`deploy/nginx/kiosk-cluster.conf`](deploy/nginx/kiosk-cluster.conf) "
          "itself (its ports replaced). Everything on 127.0.0.1, every wait bounded.\n\n```\n")
        cluster = [l for l in read("cluster.log").splitlines() if re.match(r"^(PASS|FAIL)  ", l)]
        w("\n".join(cluster) + "\n```\n\n")
        w("- **Revocation lag** is measured from the moment B answered the refund notification (its transaction "
          "committed) to the first content request at C answered 403, polling every 5 ms: through `LISTEN`/`NOTIFY`, "
          "and with every instance's listening connection terminated just before the refund (C then learns it when "
          "its listener connects again and replays `ledger_revocation_events`). Target: under 1 s either way.\n"
          "- **The kills**: every 1.5 s one instance in turn is `SIGKILL`ed and started again on its port; nginx "
          "skips a dead instance, and `kiosk get` resumes each cut range from its next byte through another. The "
          "ledger's counts afterwards are exact: nothing recorded twice, nothing lost.\n\n")
    if "load" in statuses:
        w(f"## {titles['load'][0]}\n\n`{titles['load'][1]}`\n\n")
        w(tail_block(read("load.log"), r"^###") + "\n\n")
    if "hostile" in statuses:
        w(f"## {titles['hostile'][0]}\n\n`{titles['hostile'][1]}` (a lighter version of each scenario runs in every "
          "`swift test`: `HostileClientTests`). A normal client asks for `/healthz` throughout. Descriptors are those "
          "outside the content folder (connections, the database, logs), which must return to their baseline; the "
          "open-file cache keeps at most one descriptor per content file served on purpose, counted apart.\n\n")
        w(tail_block(read("hostile.log"), r"^###") + "\n\n")
    if "fuzz" in statuses:
        w(f"## {titles['fuzz'][0]}\n\n`{titles['fuzz'][1]}` (libFuzzer, `-sanitize=fuzzer`), seed corpus in "
          "`Fuzz/Corpus/`.\n\n```\n")
        w(tail_block(read("fuzz.log"), r"^target") + "\n```\n")
print("wrote RELIABILITY.md", file=sys.stderr)
sys.exit(1 if failed else 0)
PY
