#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/Targets and runs each one for a bounded time.
#
# Usage: scripts/fuzz.sh [--update-corpus] [seconds-per-target] [target...]
#   seconds-per-target  how long each target runs (default 60)
#   target              range, info-json, verify-receipt or app-receipt (default: all four)
#   --update-corpus     merge the inputs that found new coverage back into Fuzz/Corpus/<target>
#
# Targets are compiled with swiftc -sanitize=fuzzer,address, not through SwiftPM (whose test and server targets pull in
# Hummingbird and NIO): KioskCore and KioskStore, which import nothing but Foundation (and KioskStore KioskCore), are
# each built from all their sources as a module, and each target links the ones it imports. Build output and the
# working corpus live in .build-fuzz/ (git-ignored), so the seed corpus in the repository is only changed with
# --update-corpus.
# Prints one summary line per target and exits 1 if any target crashed, naming the input that crashed it.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
build="$root/.build-fuzz"
seconds=60
update_corpus=false
targets=()
for arg in "$@"; do
    case "$arg" in
        --update-corpus) update_corpus=true ;;
        ''|*[!0-9]*) targets+=("$arg") ;;
        *) seconds=$arg ;;
    esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(range info-json verify-receipt app-receipt)

# KioskStore has `package` declarations, which need a package name (SwiftPM passes its own).
swift_flags=(-swift-version 6 -parse-as-library -O -sanitize=fuzzer,address -package-name Kiosk)
# Swift's crash backtracer would stop libFuzzer from reporting and saving a crashing input promptly.
export SWIFT_BACKTRACE=enable=no

mkdir -p "$build"

# build_module <module>: every Swift file under Sources/<module>, as a static library and module in .build-fuzz/.
build_module() {
    local name=$1
    echo "== building $name" >&2
    rm -f "$build/lib$name.a"
    (cd "$build" && swiftc "${swift_flags[@]}" -wmo -emit-module -emit-library -static -module-name "$name" \
        -I "$build" $(find "$root/Sources/$name" -name '*.swift' | sort) 2>&1 \
        | grep -v "Cannot export local symbol" >&2 || true)
    [[ -f "$build/lib$name.a" ]] || { echo "$name did not build" >&2; exit 2; }
}
build_module KioskCore
build_module KioskStore

# build_target <target> <Fuzz/Targets file> [module...]: links the modules named, then KioskCore, which they use (a
# static library must come after the ones that need it).
build_target() {
    local name=$1 file=$2
    shift 2
    echo "== building $name" >&2
    rm -f "$build/$name-fuzzer"
    swiftc "${swift_flags[@]}" -I "$build" -L "$build" "${@/#/-l}" -lKioskCore -module-name "Fuzz_${name//-/_}" \
        "$file" -o "$build/$name-fuzzer" 2>&1 | grep -v "Cannot export local symbol" >&2 || true
    [[ -x "$build/$name-fuzzer" ]] || { echo "$name did not build" >&2; exit 2; }
}

summary=()
crashed=false
for target in "${targets[@]}"; do
    case "$target" in
        range) build_target range Fuzz/Targets/RangeFuzzer.swift ;;
        info-json) build_target info-json Fuzz/Targets/InfoJSONFuzzer.swift KioskStore ;;
        verify-receipt) build_target verify-receipt Fuzz/Targets/VerifyReceiptFuzzer.swift KioskStore ;;
        app-receipt) build_target app-receipt Fuzz/Targets/AppReceiptFuzzer.swift KioskStore ;;
        *) echo "unknown target $target (range, info-json, verify-receipt, app-receipt)" >&2; exit 2 ;;
    esac

    corpus="$build/corpus/$target"
    artifacts="$build/artifacts/$target"
    log="$build/$target.log"
    rm -rf "$corpus" "$artifacts"
    mkdir -p "$corpus" "$artifacts"
    cp Fuzz/Corpus/"$target"/* "$corpus"/
    seeds=$(ls "$corpus" | wc -l)
    dict=()
    [[ -f Fuzz/Dictionaries/$target.dict ]] && dict=(-dict="Fuzz/Dictionaries/$target.dict")

    echo "== fuzzing $target for ${seconds}s ($seeds seeds)" >&2
    start=$(date +%s)
    status=0
    "$build/$target-fuzzer" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts/" \
        "${dict[@]}" "$corpus" >"$log" 2>&1 || status=$?
    elapsed=$(( $(date +%s) - start ))

    # libFuzzer prints final stats only when it stops normally, and no progress lines if it crashes on a seed.
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    features=$( (grep -oE 'ft: [0-9]+' "$log" || true) | tail -1 | cut -d' ' -f2)
    coverage=$( (grep -oE 'cov: [0-9]+' "$log" || true) | tail -1 | cut -d' ' -f2)
    entries=$(ls "$corpus" | wc -l)
    crashes=$(ls "$artifacts" | wc -l)
    if [[ $status -ne 0 || $crashes -gt 0 ]]; then
        crashed=true
        grep -E "Fatal error|ERROR: libFuzzer|SUMMARY|Test unit written" "$log" >&2 || tail -20 "$log" >&2
        for input in "$artifacts"/*; do [[ -e $input ]] && echo "crash input: $input" >&2; done
        [[ $crashes -gt 0 ]] || crashes="exit $status"
    fi
    summary+=("$(printf '%-15s %10s %8s %7ss %8s %9s %6s %8s' "$target" "${runs:-?}" "${rate:-?}" "$elapsed" \
        "$seeds→$entries" "${features:-?}" "${coverage:-?}" "$crashes")")

    if $update_corpus; then
        "$build/$target-fuzzer" -merge=1 "Fuzz/Corpus/$target" "$corpus" >>"$log" 2>&1
        echo "== merged new coverage into Fuzz/Corpus/$target ($(ls "Fuzz/Corpus/$target" | wc -l) entries)" >&2
    fi
done

printf '\n%-15s %10s %8s %8s %8s %9s %6s %8s\n' target runs exec/s time corpus features cov crashes
printf '%s\n' "${summary[@]}"
echo "(logs in .build-fuzz/<target>.log; corpus = seeds→entries after the run)"
if $crashed; then exit 1; fi
