#!/usr/bin/env bash
# Measures attention-lens and prints every figure beside its budget:
#   - the core's forward pass over the sizes the app allows (criterion, benches/forward.rs);
#   - edit-to-repaint and navigation-to-first-heatmap times of the release build in headless
#     Chromium (tests/perf/measure.mjs);
#   - the gzipped .wasm + .js + .css, beside a minimal Leptos app built the same way
#     (tests/perf/floor), and where the wasm module's bytes go, crate by crate (twiggy).
#
#   scripts/bench.sh          everything (about 5 minutes on 2 cores once built)
#   scripts/bench.sh --quick  shorter criterion runs, 20 edits and 3 loads per browser figure
#
# The table is also written to target/bench/figures.json (the breakdown by crate to
# target/bench/wasm-by-crate.txt); the run before is kept as target/bench/figures.previous.json
# and the table shows the change. Over budget is reported, not failed: the script exits non-zero
# only when something could not be built or measured.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

quick=0
for arg in "$@"; do
    case "$arg" in
    --quick) quick=1 ;;
    -h | --help)
        sed -n '2,16s/^# \{0,1\}//p' "$0"
        exit 0
        ;;
    *) die "unknown option '$arg' (try --help)" ;;
    esac
done

BENCH_OUT="$REPO_ROOT/target/bench"
CRITERION_OUT="$BENCH_OUT/criterion"
DIST_DIR="$BENCH_OUT/dist"
FLOOR_DIR="$REPO_ROOT/tests/perf/floor"
FLOOR_DIST_DIR="$BENCH_OUT/floor-dist"
BROWSER_FIGURES="$BENCH_OUT/browser.json"
FIGURES="$BENCH_OUT/figures.json"
BY_CRATE="$BENCH_OUT/wasm-by-crate.txt"
# What wasm-bindgen writes in trunk's release build, before wasm-opt: the last module that still
# has function names, which the breakdown by crate needs.
NAMED_WASM="target/wasm-bindgen/release/attention-lens_bg.wasm"

if [ "$quick" = 1 ]; then
    criterion_args=(--warm-up-time 0.1 --measurement-time 0.25 --sample-size 10)
    measure_args=(--edits 20 --loads 3)
else
    criterion_args=()
    measure_args=(--edits 100 --loads 10)
fi

load_average() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0; }

# Prints the version of package $2 recorded in the lock file $1.
lock_version() {
    awk -v name="$2" '
        $0 == "name = \"" name "\"" { found = 1; next }
        found && /^version = / { gsub(/"/, "", $3); print $3; exit }
        /^\[\[package\]\]/ { found = 0 }
    ' "$1"
}

step_setup() {
    scripts/setup.sh --bench
}

step_forward_bench() {
    local log="$BENCH_OUT/criterion.log"
    # A fresh directory, so that only this run's benchmarks are reported.
    rm -rf "$CRITERION_OUT"
    mkdir -p "$BENCH_OUT"
    echo "cargo bench --bench forward -- ${criterion_args[*]} (full output in $log)"
    # Only each benchmark's result line on the terminal; the log has everything.
    CRITERION_HOME="$CRITERION_OUT" cargo bench --bench forward -- "${criterion_args[@]}" 2>&1 |
        tee "$log" |
        awk '/skipped|^error|^warning: unused/ { print; next }
             /^forward\// && /time:/ { print; next }
             /^forward\// { id = $1; next }
             /^ +time:/ { sub(/^ +/, ""); printf "%-24s%s\n", id, $0 }'
}

step_web_build() {
    trunk build --release --dist "$DIST_DIR"
}

step_floor_build() {
    local name main floor
    # The floor only means something when it uses the same framework versions as the app.
    for name in leptos wasm-bindgen; do
        main="$(lock_version "$REPO_ROOT/Cargo.lock" "$name")"
        floor="$(lock_version "$FLOOR_DIR/Cargo.lock" "$name")"
        [ "$main" = "$floor" ] ||
            die "tests/perf/floor/Cargo.lock has $name $floor but Cargo.lock has $main:" \
                "copy Cargo.lock into tests/perf/floor, where the next build trims it"
    done
    # Its own target dir under the main target/, so the main build's cache is left alone.
    (cd "$FLOOR_DIR" && CARGO_TARGET_DIR="$REPO_ROOT/target/floor" \
        trunk build --release --dist "$FLOOR_DIST_DIR")
}

step_wasm_by_crate() {
    rm -f "$BY_CRATE"
    twiggy top --format json "$NAMED_WASM" >"$BENCH_OUT/twiggy-top.json"
    node tests/perf/wasm-crates.mjs "$BENCH_OUT/twiggy-top.json" \
        --module "$NAMED_WASM (wasm-bindgen's output, before wasm-opt)" >"$BY_CRATE"
    echo "written to $BY_CRATE, printed after the figures"
}

step_browser_figures() {
    rm -f "$BROWSER_FIGURES"
    node tests/perf/measure.mjs --dist "$DIST_DIR" --floor-dist "$FLOOR_DIST_DIR" \
        --out "$BROWSER_FIGURES" "${measure_args[@]}"
}

started=$SECONDS
load_before="$(load_average)"
mkdir -p "$BENCH_OUT"

run_step "setup" step_setup
[ "$last_status" = 0 ] || die "setup did not complete"

run_step "forward pass (cargo bench --bench forward)" step_forward_bench
run_step "release web build (trunk build --release)" step_web_build
web_ok=$last_status
if [ "$web_ok" = 0 ]; then
    run_step "wasm by crate (twiggy)" step_wasm_by_crate
else
    skip_step "wasm by crate (twiggy)" "no web build"
fi
run_step "floor app build (tests/perf/floor)" step_floor_build
floor_ok=$last_status
if [ "$web_ok" = 0 ] && [ "$floor_ok" = 0 ]; then
    run_step "browser figures and bundle sizes" step_browser_figures
else
    skip_step "browser figures and bundle sizes" "a build failed"
fi

report_args=(--criterion "$CRITERION_OUT" --out "$FIGURES"
    --load-before "$load_before" --load-after "$(load_average)" --cores "$(nproc)")
[ -f "$BROWSER_FIGURES" ] && report_args+=(--browser "$BROWSER_FIGURES")
[ "$quick" = 1 ] && report_args+=(--quick)
if [ "${#missing[@]}" -gt 0 ]; then
    report_args+=(--missing "$(
        IFS=';'
        echo "${missing[*]}"
    )")
fi

printf '\n==> figures\n'
node tests/perf/report.mjs "${report_args[@]}" || failures=$((failures + 1))

if [ -f "$BY_CRATE" ]; then
    printf '\n==> wasm by crate\n'
    cat "$BY_CRATE"
fi

printf '\n==> steps\n'
printf '%s\n' "${summary[@]}"
elapsed="$((SECONDS - started))s"
if [ "$failures" = 0 ]; then
    echo "bench.sh: done in $elapsed (figures over budget are reported above, not failed)"
else
    echo "bench.sh: $failures step(s) failed in $elapsed; their figures are missing" >&2
    exit 1
fi
