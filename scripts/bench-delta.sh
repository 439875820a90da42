#!/usr/bin/env bash
# Benchmarks updates (#10): what `kiosk get` fetches to bring an installed version to a new one, against the
# whole-file update (a fresh cache downloading the new version). Two generated products, random non-repeating bytes
# (os.urandom), written on a disk file system (not tmpfs: the work folder is made under BENCH_DIR, default /var/tmp,
# and `df -T` of it is printed):
#
#   typical  257 MiB: a 192 MiB file, a 32 MiB file, a 24 MiB file, an 8 MiB file and 64 small files of 16 KiB.
#            2.0 inserts 1 MiB in the middle of the 192 MiB file and overwrites 64 KiB 2 MiB before its end, appends
#            2 MiB to the 32 MiB file, keeps the 24 MiB file, removes the 8 MiB file, adds a 4 MiB file and rewrites
#            2 of the small files.
#   issue    the scenario of #10, at its own size (152 MiB): a 128 MiB file with 1 MiB inserted in the middle and
#            64 KiB overwritten near its end, an unchanged 16 MiB file, a removed 8 MiB file, a new 4 MiB file.
#            Target: fetched at most 6 % of 2.0 (about 3.4 % of it is new bytes).
#
#   scripts/bench-delta.sh            # from the repository root
#
# For each product: one `kiosk serve` on 127.0.0.1 serves 1.0 (published, then a SIGHUP); the release `kiosk get` installs it; 2.0 is
# written over it and the server reloads (SIGHUP); `kiosk get` with the same cache updates it (its files are
# compared with the published ones, and nothing of 1.0 may be left), then `kiosk get` with a fresh cache downloads
# 2.0 whole. It prints the size of 2.0, the bytes fetched by the update (the server's
# kiosk_content_bytes_sent_total plus kiosk_subchunk_bytes_sent_total, the JSON answers that cut changed chunks
# finer; and `kiosk get`'s own "reused …, fetched …"), their share of 2.0, the share of
# truly new bytes, the whole-file update's bytes and the times of both; then the machine (nproc, CPU, load, df -T),
# and the same as Markdown in BENCH_OUT.
#
# Each case runs RUNS times (default 3), each with new random bytes (where the chunk boundaries fall near the edits
# varies, and so does the update's cost); the figures are the median and the range.
#
# Environment: RUNS (3), BENCH_DIR (/var/tmp), BENCH_OUT (bench-out/delta.md), KIOSK_BIN (use this binary, skip the release
# build).
set -euo pipefail

RUNS="${RUNS:-3}"
OUT_FILE="${BENCH_OUT:-bench-out/delta.md}"

LOG_TAG=bench-delta
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"
cd "$REPO_ROOT"
trap_cleanup

require_tools time curl jq python3
build_kiosk
make_disk_work_dir
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

# publish id version case — writes version 1.0 (from nothing) or 2.0 (edits of 1.0, in place) of a generated
# product, and prints the count of truly new bytes of that version (all of 1.0; the inserted, overwritten,
# appended, added and rewritten bytes of 2.0).
publish() {
    mkdir -p "$CONTENT_DIR/$1/Contents"
    cat >"$CONTENT_DIR/$1/Info.json" <<JSON
{"product_id": "$1", "type": "non_consumable", "title": "Generated $1", "content_version": "$2"}
JSON
    python3 - "$CONTENT_DIR/$1/Contents" "$2" "$3" <<'PY'
import os, sys
root, version, case = sys.argv[1], sys.argv[2], sys.argv[3]
MiB, KiB = 1 << 20, 1 << 10

def write(name, size):
    with open(os.path.join(root, name), "wb") as f:
        for _ in range(size // MiB):
            f.write(os.urandom(MiB))
        f.write(os.urandom(size % MiB))
    return size

def insert_and_overwrite(name):
    """1 MiB inserted in the middle, then 64 KiB overwritten 2 MiB before the end; rewritten through a temporary
    file, as a publisher's tool would."""
    path = os.path.join(root, name)
    size = os.path.getsize(path)
    with open(path, "rb") as old, open(path + ".new", "wb") as new:
        middle = size // 2
        while old.tell() < middle:
            new.write(old.read(min(MiB, middle - old.tell())))
        new.write(os.urandom(MiB))
        new.write(old.read())
    os.replace(path + ".new", path)
    with open(path, "r+b") as f:
        f.seek(size + MiB - 2 * MiB)
        f.write(os.urandom(64 * KiB))
    return MiB + 64 * KiB

new = 0
if case == "typical":
    if version == "1.0":
        new += write("video.bin", 192 * MiB) + write("audio.bin", 32 * MiB) + write("textures.bin", 24 * MiB)
        new += write("old-level.bin", 8 * MiB)
        os.makedirs(os.path.join(root, "pages"), exist_ok=True)
        new += sum(write(f"pages/page-{n:03d}.bin", 16 * KiB) for n in range(64))
    else:
        new += insert_and_overwrite("video.bin")
        with open(os.path.join(root, "audio.bin"), "ab") as f:
            f.write(os.urandom(2 * MiB))
        new += 2 * MiB
        os.remove(os.path.join(root, "old-level.bin"))
        new += write("new-level.bin", 4 * MiB)
        new += write("pages/page-010.bin", 16 * KiB) + write("pages/page-050.bin", 16 * KiB)
else:
    if version == "1.0":
        new += write("big.bin", 128 * MiB) + write("same.bin", 16 * MiB) + write("removed.bin", 8 * MiB)
    else:
        new += insert_and_overwrite("big.bin")
        os.remove(os.path.join(root, "removed.bin"))
        new += write("new.bin", 4 * MiB)
print(new)
PY
}

# content_bytes — the server's kiosk_content_bytes_sent_total (%.0f: mawk's %d stops at 2^31 - 1).
content_bytes() {
    curl -sS --fail "$KIOSK_BASE/metrics" | awk '$1 == "kiosk_content_bytes_sent_total" {printf "%.0f", $2; found = 1}
        END {if (!found) exit 1}' || die "no kiosk_content_bytes_sent_total in /metrics"
}

# subchunk_bytes — the server's kiosk_subchunk_bytes_sent_total: the subchunk answers (JSON), 0 before the first.
subchunk_bytes() {
    curl -sS --fail "$KIOSK_BASE/metrics" | awk '$1 == "kiosk_subchunk_bytes_sent_total" {s = $2}
        END {printf "%.0f", s}' || die "no /metrics"
}

# get product cache — `kiosk get` timed; sets GET_SECONDS, GET_FOLDER, GET_LAST (its last stderr line), GET_SENT
# (the server's content bytes sent meanwhile) and GET_SUBCHUNKS (its subchunk answers' bytes).
get() {
    local before subchunks_before
    before="$(content_bytes)"
    subchunks_before="$(subchunk_bytes)"
    /usr/bin/time -f "%e" -o "$WORK_DIR/time.txt" \
        "$KIOSK_BIN" get "$1" --receipt "$WORK_DIR/receipt.txt" --server "$KIOSK_BASE" --cache "$2" \
        >"$WORK_DIR/get.out" 2>"$WORK_DIR/get.err" || { cat "$WORK_DIR/get.err" >&2; die "kiosk get $1 failed"; }
    GET_SECONDS="$(cat "$WORK_DIR/time.txt")"
    GET_FOLDER="$(cat "$WORK_DIR/get.out")"
    GET_LAST="$(tr '\r' '\n' <"$WORK_DIR/get.err" | grep -v '^[[:space:]]*$' | tail -1 | sed 's/^[[:space:]]*//')"
    GET_SENT=$(($(content_bytes) - before))
    GET_SUBCHUNKS=$(($(subchunk_bytes) - subchunks_before))
}

CASES=(typical issue)
RESULTS="$WORK_DIR/results.txt"
: >"$RESULTS"
start_kiosk --log-level info

for run in $(seq 1 "$RUNS"); do
    for case in "${CASES[@]}"; do
        product="com.example.kiosk.delta.$case.run$run"
        log "run $run: generating $product 1.0"
        publish "$product" 1.0 "$case" >/dev/null
        sighup_reload >/dev/null
        grant "$product"
        printf '%s' "$GRANT_RECEIPT" >"$WORK_DIR/receipt.txt"
        get "$product" "$WORK_DIR/cache"
        log "$case: 1.0 installed in $GET_SECONDS s ($GET_SENT bytes)"

        new_bytes="$(publish "$product" 2.0 "$case")"
        reload="$(sighup_reload)"
        size="$(find "$CONTENT_DIR/$product/Contents" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.0f", s}')"
        log "$case: 2.0 published ($size bytes, $new_bytes new), reloaded in $reload s"

        get "$product" "$WORK_DIR/cache"
        [[ "$GET_FOLDER" == */2.0 ]] || die "$case: the update installed $GET_FOLDER"
        diff -r "$CONTENT_DIR/$product/Contents" "$GET_FOLDER/Contents" >&2 || die "$case: the update's files differ from 2.0"
        [[ ! -e "$(dirname "$GET_FOLDER")/1.0" ]] || die "$case: 1.0 is still in the cache"
        update_seconds="$GET_SECONDS" update_sent="$((GET_SENT + GET_SUBCHUNKS))" update_line="$GET_LAST"
        update_subchunks="$GET_SUBCHUNKS"
        log "$case: update in $update_seconds s, $GET_SENT content bytes and $GET_SUBCHUNKS bytes of subchunk" \
            "answers sent; kiosk get: $update_line"

        get "$product" "$WORK_DIR/fresh"
        diff -r "$CONTENT_DIR/$product/Contents" "$GET_FOLDER/Contents" >&2 || die "$case: the fresh download differs"
        log "$case: whole download in $GET_SECONDS s, $GET_SENT bytes sent"
        rm -rf "$WORK_DIR/fresh" "$WORK_DIR/cache" "${CONTENT_DIR:?}/$product"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$size" "$new_bytes" "$update_sent" \
            "$update_seconds" "$GET_SENT" "$GET_SECONDS" "$update_line" "$update_subchunks" >>"$RESULTS"
    done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p "$(dirname "$OUT_FILE")"
python3 - "$RESULTS" "$OUT_FILE" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)" \
    "$LOAD_BEFORE" "$LOAD_AFTER" "$DF_LINE" <<'PY'
import collections, datetime, statistics, sys
results, out_file, cpus, cpu, load_before, load_after, df_line = sys.argv[1:8]
names = {
    "typical": "typical edits, 257 MiB: insert 1 MiB, overwrite 64 KiB, append 2 MiB, new 4 MiB file, "
               "8 MiB file removed, 24 MiB unchanged, 2 of 64 small files rewritten",
    "issue": "the issue's scenario, 152 MiB: 128 MiB file with 1 MiB inserted and 64 KiB overwritten, "
             "16 MiB unchanged, 8 MiB removed, 4 MiB new",
}
runs = collections.defaultdict(list)
for line in open(results):
    case, size, new, sent, seconds, whole, whole_seconds, last, subchunks = line.rstrip("\n").split("\t")
    runs[case].append(dict(size=int(size), new=int(new), sent=int(sent), seconds=float(seconds), whole=int(whole),
                           whole_seconds=float(whole_seconds), last=last, subchunks=int(subchunks)))
def mb(n): return f"{n / 1e6:.1f} MB"
def pct(r, key): return 100 * r[key] / r["size"]
def mark(share): return "PASS" if share <= 6 else "MISS"
summary = {}
for case, rs in runs.items():
    for n, r in enumerate(rs, 1):
        print(f"{case} run {n}: 2.0 is {mb(r['size'])}; the update fetched {mb(r['sent'])} = {pct(r, 'sent'):.2f} % "
              f"of it ({r['subchunks']} bytes of it subchunk answers), truly new {mb(r['new'])} = {pct(r, 'new'):.2f} %; {r['seconds']:.2f} s; kiosk get: "
              f"\"{r['last']}\". Whole-file update: {mb(r['whole'])} = {pct(r, 'whole'):.0f} %, "
              f"{r['whole_seconds']:.2f} s.")
    shares = [pct(r, "sent") for r in rs]
    summary[case] = dict(
        size=statistics.median(r["size"] for r in rs), sent=statistics.median(r["sent"] for r in rs),
        share=statistics.median(shares), low=min(shares), high=max(shares),
        new=statistics.median(pct(r, "new") for r in rs), seconds=statistics.median(r["seconds"] for r in rs),
        whole=statistics.median(pct(r, "whole") for r in rs),
        whole_seconds=statistics.median(r["whole_seconds"] for r in rs), runs=len(rs))
    m = summary[case]
    target = f" (target <= 6 %: median {mark(m['share'])}, worst {mark(m['high'])})" if case == "issue" else ""
    print(f"{case}: fetched {m['share']:.2f} % of 2.0 (median of {m['runs']}, {m['low']:.2f}-{m['high']:.2f} %)"
          f"{target}; truly new {m['new']:.2f} %; update {m['seconds']:.2f} s, whole-file update "
          f"{m['whole']:.0f} % in {m['whole_seconds']:.2f} s")
print(f"machine: {cpus} CPUs ({cpu}), load average {load_before} before, {load_after} after; {df_line}")
when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
with open(out_file, "w") as out:
    out.write("## Updates: bytes fetched against the whole-file update\n\n")
    out.write(f"Run {when} by `scripts/bench-delta.sh`: one `kiosk serve` on 127.0.0.1; the release `kiosk get` "
              f"installs 1.0, 2.0 is published over it and the server reloads (SIGHUP); `kiosk get` with the same "
              f"cache updates it, then `kiosk get` with a fresh cache downloads 2.0 whole. Bytes are the server's "
              f"`kiosk_content_bytes_sent_total` plus, for the update, `kiosk_subchunk_bytes_sent_total` (the subchunk "
              f"answers); each case ran {max(m['runs'] for m in summary.values())} times "
              f"with new random bytes, medians (and the range of the update's share). Disk: `{df_line}`. {cpus} "
              f"CPUs ({cpu}) shared by server and client, and with other work: load average {load_before} before, "
              f"{load_after} after.\n\n")
    out.write("| case | 2.0 | update fetched | share of 2.0 (range) | truly new | update time | whole-file update | "
              "whole-file time |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
    for case, m in summary.items():
        target = f" ({mark(m['share'])}; worst {mark(m['high'])}; target ≤ 6 %)" if case == "issue" else ""
        out.write(f"| {names[case]} | {mb(m['size'])} | {mb(m['sent'])} | **{m['share']:.2f} %** "
                  f"({m['low']:.2f}–{m['high']:.2f} %){target} | {m['new']:.2f} % | {m['seconds']:.2f} s | "
                  f"{m['whole']:.0f} % | {m['whole_seconds']:.2f} s |\n")
    out.write("\n`kiosk get`'s own last line of each update: " +
              "; ".join(f"{case}: " + ", ".join(f"`{r['last']}`" for r in rs) for case, rs in runs.items()) + ".\n")
print(f"wrote {out_file}", file=sys.stderr)
PY
