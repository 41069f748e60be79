#!/usr/bin/env bash
# Writes assets/first-screen.html, the picture of the app's first screen that the page shows at
# the bare address while the module loads: builds the release web app, serves it and takes the
# picture in Chromium (tests/e2e/first-screen-picture.mjs). Run it after changing what the first
# screen shows; tests/e2e/first-screen.spec.ts fails until the picture matches the app.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

scripts/setup.sh --browser
DIST_DIR="$REPO_ROOT/target/prerender/dist"
trunk build --release --dist "$DIST_DIR"
PORT="${PRERENDER_PORT:-4399}"
node tests/e2e/serve-dist.mjs --root "$DIST_DIR" --port "$PORT" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$PORT/" >/dev/null && break
    sleep 0.1
done
node tests/e2e/first-screen-picture.mjs --base "http://127.0.0.1:$PORT/" \
    --out assets/first-screen.html
