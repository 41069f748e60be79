#!/usr/bin/env bash
# Runs every test: native Rust tests, the release web build in Chromium with Playwright, then a
# bounded cargo-fuzz run of the URL decoder and the scenario parser.
#
#   scripts/test.sh          everything (what CI runs)
#   scripts/test.sh --quick  native tests and the CLI trace only: no web build, browser or fuzz
#
# Installs what is missing first (scripts/setup.sh), prints a pass/fail summary and exits
# non-zero if any step failed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

quick=0
for arg in "$@"; do
    case "$arg" in
    --quick) quick=1 ;;
    -h | --help)
        sed -n '2,7s/^# \{0,1\}//p' "$0"
        exit 0
        ;;
    *) die "unknown option '$arg' (try --help)" ;;
    esac
done

E2E_OUT="$REPO_ROOT/target/e2e"
TRACE_FILE="$E2E_OUT/default-trace.json"
DIST_DIR="$E2E_OUT/dist"
SUB_PATH="/sub/path/"

step_setup() {
    if [ "$quick" = 1 ]; then
        scripts/setup.sh
    else
        scripts/setup.sh --browser --fuzz
    fi
    echo "rustc:        $(rustc --version)"
    echo "trunk:        $(trunk --version)"
    echo "wasm-bindgen: $(wasm-bindgen --version)"
    echo "wasm-opt:     $(wasm-opt --version)"
    echo "node:         $(node --version)"
    if [ "$quick" = 0 ]; then
        echo "chromium:     $(/usr/bin/chromium --version 2>/dev/null)"
        echo "cargo-fuzz:   $(cargo fuzz --version)"
    fi
}

step_native_tests() {
    # Every test target; the benchmarks are figures (scripts/bench.sh), not tests.
    cargo test --lib --bins --tests
}

step_trace() {
    mkdir -p "$E2E_OUT"
    # Never leave an old trace behind for the browser tests to compare against.
    rm -f "$TRACE_FILE"
    # The debug binary the native tests just built (cargo test writes it there for the
    # integration tests). `cargo run` would build it once more: the tests' dev-dependencies turn
    # on other features of shared crates (serde's among them), so everything above those crates
    # would be compiled again.
    "$REPO_ROOT/target/debug/attention-lens" trace --format json >"$TRACE_FILE.part"
    # shellcheck disable=SC2016 # JavaScript, not shell
    node -e '
        let trace;
        try {
            trace = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        } catch (error) {
            console.error(`attention-lens trace did not print valid JSON: ${error.message}`);
            process.exit(1);
        }
        const missing = ["tokens", "x", "q", "k", "v", "heads", "concat", "output"]
            .filter((key) => !(key in trace));
        if (missing.length > 0) {
            console.error(`the trace has no ${missing.join(", ")}`);
            process.exit(1);
        }
        console.log(`trace: ${trace.tokens.length} tokens, ${trace.heads.length} heads`);
    ' "$TRACE_FILE.part"
    mv "$TRACE_FILE.part" "$TRACE_FILE"
}

step_web_build() {
    trunk build --release --dist "$DIST_DIR"
}

step_browser_tests() {
    local log="$E2E_OUT/server.log" url=""
    node tests/e2e/serve-dist.mjs --root "$DIST_DIR" --port 0 --sub-path "$SUB_PATH" >"$log" 2>&1 &
    # Global, not local: the trap runs after this function has returned. The step runs in its
    # own subshell, so the trap stops the server however the step ends.
    server_pid=$!
    trap 'kill "$server_pid" 2>/dev/null || true' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    for _ in $(seq 100); do
        url="$(sed -n 's/^listening //p' "$log")"
        [ -n "$url" ] && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$url" ]; then
        cat "$log" >&2
        die "the static server did not start"
    fi
    echo "serving $DIST_DIR at $url and ${url%/}$SUB_PATH"

    cd tests/e2e
    E2E_BASE_URL="$url" E2E_TRACE="$TRACE_FILE" E2E_CLI="$REPO_ROOT/target/debug/attention-lens" \
        PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
        npx --no-install playwright test
}

# Seconds of fuzzing per target; FUZZ_SECONDS overrides.
FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
FUZZ_CORPUS="$REPO_ROOT/target/fuzz-corpus"

step_fuzz() {
    # libFuzzer without a sanitizer (stable Rust), with debug assertions so that an arithmetic
    # overflow is a crash too. New inputs go to target/fuzz-corpus; a crash is saved under
    # fuzz/artifacts/<target>/ and fails the step.
    local target log
    local -a dict
    for target in decode scenario; do
        mkdir -p "$FUZZ_CORPUS/$target"
        dict=()
        [ -f "fuzz/$target.dict" ] && dict=("-dict=fuzz/$target.dict")
        log="$FUZZ_CORPUS/$target.log"
        echo "cargo fuzz run $target for ${FUZZ_SECONDS}s (full output in $log)"
        if ! cargo fuzz run --sanitizer none --release --debug-assertions "$target" \
            "$FUZZ_CORPUS/$target" -- -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
            "${dict[@]}" >"$log" 2>&1; then
            tail -n 40 "$log" >&2
            return 1
        fi
        grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' "$log" || true
    done
}

started=$SECONDS

run_step "setup" step_setup
if [ "$last_status" != 0 ]; then
    echo "test.sh: FAILED: setup did not complete" >&2
    exit 1
fi

run_step "native tests (cargo test)" step_native_tests
run_step "default trace (attention-lens trace)" step_trace

if [ "$quick" = 1 ]; then
    skip_step "release web build (trunk build --release)" "--quick"
    skip_step "browser tests (Playwright)" "--quick"
    skip_step "fuzzing (cargo fuzz)" "--quick"
else
    run_step "release web build (trunk build --release)" step_web_build
    if [ "$last_status" = 0 ]; then
        run_step "browser tests (Playwright)" step_browser_tests
    else
        skip_step "browser tests (Playwright)" "no web build"
    fi
    run_step "fuzzing (cargo fuzz, ${FUZZ_SECONDS}s per target)" step_fuzz
fi

printf '\n==> summary\n'
printf '%s\n' "${summary[@]}"
elapsed="$((SECONDS - started))s"
if [ "$failures" = 0 ]; then
    echo "test.sh: PASSED in $elapsed"
else
    echo "test.sh: FAILED ($failures step(s) failed) in $elapsed"
    exit 1
fi
