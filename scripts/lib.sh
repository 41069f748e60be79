# shellcheck shell=bash disable=SC2034 # the variables are read by the scripts that source this file
# Shared by the scripts in this folder: source it, do not run it.
# Puts the project's tools on PATH and defines small helpers.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REPO_ROOT

# Pinned tool versions. wasm-bindgen comes from Cargo.lock and wasm-opt from Trunk.toml,
# so each version is written down in exactly one place.
TRUNK_VERSION="0.21.14"
CARGO_FUZZ_VERSION="0.13.2"
# The code size profiler behind scripts/bench.sh's breakdown of the wasm module by crate.
TWIGGY_VERSION="0.8.0"

CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
BINARYEN_DIR="$REPO_ROOT/.tools/binaryen"
E2E_DIR="$REPO_ROOT/tests/e2e"

case ":$PATH:" in
*":$CARGO_BIN:"*) ;;
*) PATH="$CARGO_BIN:$PATH" ;;
esac
# First, so that trunk's release builds find this checkout's wasm-opt (it looks on PATH and,
# offline, never downloads one) rather than an older one installed elsewhere.
PATH="$BINARYEN_DIR/node_modules/.bin:$PATH"
export PATH

# Trunk never downloads tools or checks for updates when run from these scripts.
export TRUNK_SKIP_VERSION_CHECK=true

say() { printf '==> %s\n' "$*"; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }

# Prints the version of the `wasm-bindgen` package recorded in Cargo.lock.
lock_wasm_bindgen_version() {
    awk '
        $0 == "name = \"wasm-bindgen\"" { found = 1; next }
        found && /^version = / { gsub(/"/, "", $3); print $3; exit }
        /^\[\[package\]\]/ { found = 0 }
    ' "$REPO_ROOT/Cargo.lock"
}

# Prints the value of `key = "value"` from the [tools] table of Trunk.toml.
trunk_tool_version() {
    awk -v key="$1" '
        /^\[/ { in_tools = ($0 == "[tools]"); next }
        in_tools && $1 == key { gsub(/"/, "", $3); print $3; exit }
    ' "$REPO_ROOT/Trunk.toml"
}

# Step bookkeeping for test.sh and bench.sh. run_step LABEL FUNCTION runs FUNCTION in a subshell
# with `set -e`, records PASS or FAIL and its time in $summary, counts $failures, lists failed and
# skipped labels in $missing, and leaves the step's exit status in $last_status. Never call it as
# a condition: bash would then ignore `set -e` inside the step.
summary=()
missing=()
failures=0
last_status=0

run_step() {
    local label="$1" step="$2" started=$SECONDS
    printf '\n==> %s\n' "$label"
    set +e
    (
        set -e
        "$step"
    )
    last_status=$?
    set -e
    local outcome=PASS
    if [ "$last_status" != 0 ]; then
        outcome=FAIL
        failures=$((failures + 1))
        missing+=("$label")
    fi
    summary+=("$(printf '  %s  %-46s %5ss' "$outcome" "$label" "$((SECONDS - started))")")
}

skip_step() {
    summary+=("$(printf '  SKIP  %-46s (%s)' "$1" "$2")")
    missing+=("$1")
}
