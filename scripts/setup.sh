#!/usr/bin/env bash
# Installs whatever is missing to build and test attention-lens, at pinned versions.
# Safe to run again: each tool is checked first and only installed when absent or wrong.
#
#   scripts/setup.sh            Rust wasm target, trunk, wasm-bindgen-cli and wasm-opt
#   scripts/setup.sh --browser  also Chromium, chromedriver and the Playwright harness
#   scripts/setup.sh --bench    what --browser installs, and twiggy (scripts/bench.sh)
#   scripts/setup.sh --fuzz     also cargo-fuzz
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

browser=0
bench=0
fuzz=0
for arg in "$@"; do
    case "$arg" in
    --browser) browser=1 ;;
    --bench)
        browser=1
        bench=1
        ;;
    --fuzz) fuzz=1 ;;
    -h | --help)
        sed -n '2,9s/^# \{0,1\}//p' "$0"
        exit 0
        ;;
    *) die "unknown option '$arg' (try --help)" ;;
    esac
done

installed=0
install_note() {
    say "installing $*"
    installed=$((installed + 1))
}

# --- Rust -------------------------------------------------------------------------------------

have cargo || die "cargo not found: install Rust with rustup (https://rustup.rs), then rerun $0"
have rustup || die "rustup not found: the wasm32 target is added with rustup; install it from https://rustup.rs"

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    install_note "the wasm32-unknown-unknown Rust target"
    rustup target add wasm32-unknown-unknown
fi

if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
    install_note "trunk $TRUNK_VERSION (a few minutes)"
    # trunk's own release profile asks for fat LTO in one codegen unit at opt-level 3, which
    # makes the install much slower on a small machine and gains a build tool nothing: its own
    # work is copying, hashing and minifying a few files; wasm-bindgen and wasm-opt do the rest.
    # Without LTO, in 16 units at opt-level 1, it installs in about 5 instead of 6 minutes on 2
    # cores.
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
        CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
        cargo install trunk --version "$TRUNK_VERSION" --locked
fi

bindgen_version="$(lock_wasm_bindgen_version)"
[ -n "$bindgen_version" ] || die "Cargo.lock has no wasm-bindgen package: run 'cargo generate-lockfile' and rerun $0"
trunk_bindgen="$(trunk_tool_version wasm_bindgen)"
[ "$trunk_bindgen" = "$bindgen_version" ] ||
    die "Trunk.toml [tools] wasm_bindgen is '$trunk_bindgen' but Cargo.lock has wasm-bindgen $bindgen_version: make them equal"
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $bindgen_version" ]; then
    install_note "wasm-bindgen-cli $bindgen_version (a few minutes)"
    # Not --locked: the CLI's own lock file names a crate version the registry no longer has.
    # At opt-level 1 it installs about 20 seconds sooner and still runs in a third of a second.
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install wasm-bindgen-cli --version "$bindgen_version"
fi

# --- wasm-opt ---------------------------------------------------------------------------------

# Trunk runs it in release builds and, offline, only takes the one on PATH whose version is the
# one Trunk.toml names: scripts/lib.sh puts .tools/binaryen first on PATH. Debian's binaryen is
# too old for the wasm that rustc and wasm-bindgen write.
wasm_opt_tag="$(trunk_tool_version wasm_opt)"
case "$wasm_opt_tag" in
version_[0-9]*) binaryen_version="${wasm_opt_tag#version_}.0.0" ;;
*) die "Trunk.toml [tools] wasm_opt must look like \"version_132\", found '$wasm_opt_tag'" ;;
esac
have npm || die "npm not found: install Node.js 20 or newer (it provides npm), then rerun $0"
if [ "$(wasm-opt --version 2>/dev/null || true)" != "wasm-opt version ${wasm_opt_tag#version_} ($wasm_opt_tag)" ]; then
    install_note "wasm-opt from binaryen@$binaryen_version into .tools/binaryen"
    rm -rf "$BINARYEN_DIR"
    mkdir -p "$BINARYEN_DIR"
    npm install --prefix "$BINARYEN_DIR" --no-save --no-package-lock --no-audit --no-fund \
        "binaryen@$binaryen_version"
fi

# Fill the crate cache so that trunk's offline cargo builds find every dependency.
cargo fetch --quiet

# --- Fuzzing ----------------------------------------------------------------------------------

# cargo-fuzz runs libFuzzer on stable Rust when no sanitizer is asked for (`-s none`).
if [ "$fuzz" = 1 ] && [ "$(cargo fuzz --version 2>/dev/null || true)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
    install_note "cargo-fuzz $CARGO_FUZZ_VERSION (a minute or two)"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

# --- Browser tests ----------------------------------------------------------------------------

if [ "$browser" = 1 ]; then
    if [ ! -x /usr/bin/chromium ] || ! have chromedriver; then
        have apt-get || die "Chromium is missing and apt-get is not available: install chromium and chromium-driver so that /usr/bin/chromium exists, then rerun $0 --browser"
        sudo=()
        if [ "$(id -u)" != 0 ]; then
            have sudo || die "installing Chromium needs root: rerun as root or install sudo"
            sudo=(sudo)
        fi
        install_note "chromium and chromium-driver with apt-get"
        "${sudo[@]}" apt-get update
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver
    fi

    node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
    [ "$node_major" -ge 20 ] || die "Playwright needs Node.js 20 or newer (found: $(node --version 2>/dev/null || echo none))"

    # npm ci again only when package-lock.json has changed since the last install.
    stamp="$E2E_DIR/node_modules/.setup-stamp"
    lock_sum="$(sha256sum "$E2E_DIR/package-lock.json" | cut -d' ' -f1)"
    if [ "$(cat "$stamp" 2>/dev/null || true)" != "$lock_sum" ]; then
        install_note "the Playwright harness (npm ci in tests/e2e)"
        # Playwright must use the system Chromium and never fetch browsers of its own.
        (cd "$E2E_DIR" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
        printf '%s\n' "$lock_sum" >"$stamp"
    fi
fi

# --- Benchmarks -------------------------------------------------------------------------------

# scripts/bench.sh breaks the wasm module down by crate with twiggy (its --version prints
# "twiggy-opt", the name of its option parser).
if [ "$bench" = 1 ] && [ "$(twiggy --version 2>/dev/null || true)" != "twiggy-opt $TWIGGY_VERSION" ]; then
    install_note "twiggy $TWIGGY_VERSION (a few minutes)"
    cargo install twiggy --version "$TWIGGY_VERSION" --locked
fi

if [ "$installed" = 0 ]; then
    say "setup: everything already installed"
else
    say "setup: installed $installed item(s)"
fi
