#!/usr/bin/env bash
# Benchmarks many-file products (#16): `kiosk get` of a product of 2,000 files of 8 KiB (in 20 folders) and one of
# 20,000 files of 1 KiB (in 200 folders), against `curl --parallel --parallel-max 8` fetching the same granted URLs
# in the same run, from one `kiosk serve` on 127.0.0.1. Everything is written on a disk file system (not tmpfs,
# where fsync costs nothing): the work folder is made under BENCH_DIR (default /var/tmp), and `df -T` of it is
# printed.
#
#   scripts/bench-many-files.sh            # from the repository root
#
# For each product it prints: `kiosk get` wall time (median of RUNS, a fresh cache each time), curl's, and the
# ratio curl / kiosk get (target >= 0.5); the same for `kiosk get --no-packs` (every file its own request, the
# alternative measured in the same run); `kiosk get`'s peak RSS (GNU time, max of runs; target < 64 MiB); and, from
# one more run under `strace -f -c`, the system calls per file of the stat family (with statx), open/openat,
# fsync/fdatasync and rename/renameat (target: the 20,000-file counts within 1.2x of the 2,000-file ones). Then the
# machine (nproc, CPU model, load average) and the same as Markdown in BENCH_OUT.
#
# Nothing is deleted until the end: every run of every tool writes into a new folder. On this machine's ext4, perf
# put 35 % of `kiosk get`'s CPU in the kernel's inode allocation (ext4_create → find_inode_bit → recently_deleted)
# when the previous run's 2,000 files had just been deleted: whichever tool ran next paid for the deletion, and
# curl's times moved 3x from run to run.
#
# Environment: RUNS (default 3), CONNECTIONS (kiosk get --connections, default 8), BENCH_DIR (/var/tmp),
# BENCH_OUT (bench-out/many-files.md), KIOSK_BIN (use this binary, skip the release build).
set -euo pipefail

RUNS="${RUNS:-3}"
CONNECTIONS="${CONNECTIONS:-8}"
OUT_FILE="${BENCH_OUT:-bench-out/many-files.md}"

LOG_TAG=bench-many-files
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"
cd "$REPO_ROOT"
trap_cleanup

require_tools time curl jq python3 strace
build_kiosk
make_disk_work_dir
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

# make_many id count bytes folders — a product of `count` random files of `bytes` bytes spread over `folders`.
make_many() {
    mkdir -p "$CONTENT_DIR/$1"
    cat >"$CONTENT_DIR/$1/Info.json" <<JSON
{"product_id": "$1", "type": "non_consumable", "title": "Generated $1", "content_version": "1"}
JSON
    python3 - "$CONTENT_DIR/$1/Contents" "$2" "$3" "$4" <<'PY'
import os, sys
root, count, size, folders = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
per = count // folders
for n in range(count):
    folder = os.path.join(root, f"folder-{n // per:03d}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"file-{n:05d}.bin"), "wb") as f:
        f.write(os.urandom(size))
PY
}

PRODUCTS=(com.example.kiosk.many2k com.example.kiosk.many20k)
declare -A COUNT=([com.example.kiosk.many2k]=2000 [com.example.kiosk.many20k]=20000)
declare -A SIZE=([com.example.kiosk.many2k]=8192 [com.example.kiosk.many20k]=1024)
declare -A FOLDERS=([com.example.kiosk.many2k]=20 [com.example.kiosk.many20k]=200)
for product in "${PRODUCTS[@]}"; do
    log "generating $product: ${COUNT[$product]} x ${SIZE[$product]} bytes in ${FOLDERS[$product]} folders"
    make_many "$product" "${COUNT[$product]}" "${SIZE[$product]}" "${FOLDERS[$product]}"
done
start_kiosk

# curl_config product dir — a fresh grant, and a curl config fetching every file of it into dir (token as header).
curl_config() {
    grant "$1"
    jq -r --arg base "$KIOSK_BASE" --arg dir "$2" \
        '.files[] | "url = \"\($base)\(.url)\"\noutput = \"\($dir)/\(.path)\""' <<<"$GRANT_BODY" >"$WORK_DIR/curl.cfg"
}

RESULTS="$WORK_DIR/results.txt"
: >"$RESULTS"
for product in "${PRODUCTS[@]}"; do
    count="${COUNT[$product]}"
    for run in $(seq 1 "$RUNS"); do
        # Each tool writes into a folder of its own, kept until the end: see "Nothing is deleted" above.
        out="$WORK_DIR/out/$product/$run"
        mkdir -p "$out"
        curl_config "$product" "$out/curl"
        /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
            curl -fsS --no-progress-meter --parallel --parallel-max 8 --create-dirs -H "Authorization: Bearer $GRANT_TOKEN" \
            -K "$WORK_DIR/curl.cfg"
        curl_s="$(cut -d' ' -f1 "$WORK_DIR/time.txt")"
        fetched="$(find "$out/curl" -type f | wc -l)"
        ((fetched == count)) || die "curl fetched $fetched of $count files"

        printf '%s' "$GRANT_RECEIPT" >"$WORK_DIR/receipt.txt"
        /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
            "$KIOSK_BIN" get "$product" --receipt "$WORK_DIR/receipt.txt" --server "$KIOSK_BASE" \
            --cache "$out/kiosk" --connections "$CONNECTIONS" \
            >"$WORK_DIR/get.out" 2>"$WORK_DIR/get.err" || { cat "$WORK_DIR/get.err" >&2; exit 1; }
        read -r get_s get_kib <"$WORK_DIR/time.txt"
        installed="$(find "$(cat "$WORK_DIR/get.out")" -type f | wc -l)"
        ((installed == count)) || die "kiosk get installed $installed of $count files"

        /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
            "$KIOSK_BIN" get "$product" --receipt "$WORK_DIR/receipt.txt" --server "$KIOSK_BASE" \
            --cache "$out/kiosk-no-packs" --connections "$CONNECTIONS" --no-packs \
            >"$WORK_DIR/get.out" 2>"$WORK_DIR/get.err" || { cat "$WORK_DIR/get.err" >&2; exit 1; }
        read -r plain_s plain_kib <"$WORK_DIR/time.txt"
        installed="$(find "$(cat "$WORK_DIR/get.out")" -type f | wc -l)"
        ((installed == count)) || die "kiosk get --no-packs installed $installed of $count files"
        log "$product run $run: curl --parallel ${curl_s} s, kiosk get ${get_s} s (peak RSS ${get_kib} KiB)," \
            "kiosk get --no-packs ${plain_s} s (${plain_kib} KiB)"
        echo "time $product $curl_s $get_s $get_kib $plain_s $plain_kib" >>"$RESULTS"
    done

    # One more run under strace: system calls per file.
    grant "$product"
    printf '%s' "$GRANT_RECEIPT" >"$WORK_DIR/receipt.txt"
    strace -f -c -o "$WORK_DIR/strace.txt" \
        "$KIOSK_BIN" get "$product" --receipt "$WORK_DIR/receipt.txt" --server "$KIOSK_BASE" \
        --cache "$WORK_DIR/out/$product/strace" --connections "$CONNECTIONS" \
        >"$WORK_DIR/get.out" 2>"$WORK_DIR/get.err" || { cat "$WORK_DIR/get.err" >&2; exit 1; }
    # Rows of `strace -c`: % time, seconds, usecs/call, calls, [errors,] syscall.
    awk -v p="$product" '$1 ~ /^[0-9.]+$/ && (NF == 5 || NF == 6) && $NF != "total" {print "calls", p, $NF, $4}' \
        "$WORK_DIR/strace.txt" >>"$RESULTS"
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p "$(dirname "$OUT_FILE")"
python3 - "$RESULTS" "$OUT_FILE" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)" \
    "$LOAD_BEFORE" "$LOAD_AFTER" "$DF_LINE" "$CONNECTIONS" "${PRODUCTS[0]}=${COUNT[${PRODUCTS[0]}]}" \
    "${PRODUCTS[1]}=${COUNT[${PRODUCTS[1]}]}" <<'PY'
import collections, datetime, statistics, sys
results, out_file, cpus, cpu, load_before, load_after, df_line, connections = sys.argv[1:9]
counts = dict(arg.split("=") for arg in sys.argv[9:11])
counts = {k: int(v) for k, v in counts.items()}
times = collections.defaultdict(list)
calls = collections.defaultdict(lambda: collections.defaultdict(int))
for line in open(results):
    f = line.split()
    if f[0] == "time":
        times[f[1]].append((float(f[2]), float(f[3]), int(f[4]), float(f[5]), int(f[6])))
    elif f[0] == "calls":
        calls[f[1]][f[2]] += int(f[3])
families = {
    "stat family (incl. statx)": {"stat", "fstat", "lstat", "newfstatat", "statx", "fstatat64", "stat64", "lstat64", "fstat64"},
    "open/openat": {"open", "openat", "openat2", "creat"},
    "fsync/fdatasync": {"fsync", "fdatasync"},
    "rename/renameat": {"rename", "renameat", "renameat2"},
}
labels = {p: f"{n:,} files" for p, n in counts.items()}
rows, per_file = [], {}
for product, n in counts.items():
    runs = times[product]
    curl = statistics.median(r[0] for r in runs)
    get = statistics.median(r[1] for r in runs)
    rss = max(r[2] for r in runs) / 1024
    plain = statistics.median(r[3] for r in runs)
    plain_rss = max(r[4] for r in runs) / 1024
    per_file[product] = {name: sum(calls[product][s] for s in names) / n for name, names in families.items()}
    rows.append((product, n, curl, get, curl / get, rss, min(r[1] for r in runs), plain, plain_rss))
small, large = list(counts)
growth = {name: (per_file[large][name] / per_file[small][name] if per_file[small][name] else float("nan"))
          for name in families}
for product, n, curl, get, ratio, rss, best, plain, plain_rss in rows:
    print(f"{labels[product]:>14}: curl --parallel {curl:6.2f} s, kiosk get {get:6.2f} s (best {best:.2f} s), "
          f"ratio {ratio:.2f}x (target >= 0.5), peak RSS {rss:.1f} MiB (target < 64); "
          f"kiosk get --no-packs {plain:6.2f} s, ratio {curl / plain:.2f}x, {plain_rss:.1f} MiB")
for name in families:
    print(f"{name:>28}: {per_file[small][name]:.3f} per file at {counts[small]:,}, {per_file[large][name]:.3f} at "
          f"{counts[large]:,} ({growth[name]:.2f}x, target <= 1.2x)")
print(f"machine: {cpus} CPUs ({cpu}), load average {load_before} before, {load_after} after; {df_line}")
when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
def mark(ok): return "PASS" if ok else "MISS"
with open(out_file, "w") as out:
    out.write("## Many-file products: kiosk get against curl --parallel\n\n")
    out.write(f"Run {when} by `scripts/bench-many-files.sh`: one `kiosk serve` on 127.0.0.1; `kiosk get --connections "
              f"{connections}` (a fresh cache each run) and `curl --parallel --parallel-max 8` over the same granted URLs, "
              f"alternating, {len(times[small])} runs each, medians. Both write to the same disk file system: "
              f"`{df_line}`. {cpus} CPUs ({cpu}) shared by server and client, and with other work: load average "
              f"{load_before} before, {load_after} after.\n\n")
    out.write("| product | curl --parallel (s) | kiosk get (s) | curl / kiosk get | kiosk get peak RSS "
              "| kiosk get --no-packs (s) | curl / --no-packs |\n|---|---:|---:|---:|---:|---:|---:|\n")
    for product, n, curl, get, ratio, rss, best, plain, plain_rss in rows:
        size = "8 KiB" if n == counts[small] else "1 KiB"
        out.write(f"| {n:,} × {size} | {curl:.2f} | {get:.2f} | **{ratio:.2f}×** ({mark(ratio >= 0.5)}) | "
                  f"{rss:.1f} MiB ({mark(rss < 64)}) | {plain:.2f} | {curl / plain:.2f}× |\n")
    out.write(f"\nSystem calls per file of `kiosk get` (`strace -f -c`, one more run each):\n\n")
    out.write(f"| calls | {counts[small]:,} files | {counts[large]:,} files | growth |\n|---|---:|---:|---:|\n")
    for name in families:
        out.write(f"| {name} | {per_file[small][name]:.3f} | {per_file[large][name]:.3f} | "
                  f"{growth[name]:.2f}× ({mark(growth[name] <= 1.2)}) |\n")
    out.write("\nTargets (#16): kiosk get at least 0.5× the speed of curl --parallel on both products; per-file counts at "
              "20,000 files within 1.2× of those at 2,000; peak RSS under 64 MiB. curl does not fsync; kiosk get "
              "fsyncs every file's bytes and its journal record (group commit) before it counts the file as verified, "
              "then installs the version folder with one rename.\n")
print(f"wrote {out_file}", file=sys.stderr)
PY
