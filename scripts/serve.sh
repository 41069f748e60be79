#!/usr/bin/env bash
# Serves the release build of the app at http://127.0.0.1:8080 (set PORT to change the port),
# rebuilding when the sources change. Installs the build tools first if they are missing.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

port="${PORT:-8080}"
scripts/setup.sh
say "serving attention-lens at http://127.0.0.1:$port/ (Ctrl-C to stop)"
exec trunk serve --release --address 127.0.0.1 --port "$port"
