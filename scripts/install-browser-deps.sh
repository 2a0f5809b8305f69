#!/usr/bin/env bash
# Install the system packages the browser tests (tests/browser) need:
#   * Debian's Chromium (/usr/bin/chromium), driven by Playwright;
#   * Graphviz (`dot`), used by batchviz to draw graphs.
#
# Idempotent: when both are already present it does nothing and exits 0.
# As root it installs them with apt-get; as another user it prints the
# command to run and exits non-zero.
#
# Python-side dependencies (jupyterlab, playwright, ...) are NOT installed
# here; they live in the project's virtualenv (see tests/browser/README.md).
set -euo pipefail

CHROMIUM_BIN="${BATCHVIZ_CHROMIUM:-/usr/bin/chromium}"
PACKAGES=(chromium graphviz)

missing=()
[[ -x "$CHROMIUM_BIN" ]] || missing+=("chromium ($CHROMIUM_BIN)")
command -v dot >/dev/null 2>&1 || missing+=("graphviz (dot)")

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-browser-deps: chromium and graphviz already installed, nothing to do."
    exit 0
fi

echo "install-browser-deps: missing: ${missing[*]}"

if [[ "$(id -u)" -ne 0 ]]; then
    echo "install-browser-deps: not running as root, so not installing anything." >&2
    echo "install-browser-deps: please run (Debian/Ubuntu):" >&2
    echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends ${PACKAGES[*]}" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-browser-deps: apt-get not found; install ${PACKAGES[*]} with your system's package manager." >&2
    exit 1
fi

echo "install-browser-deps: installing ${PACKAGES[*]} with apt-get (this can take a minute) ..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null

# Verify the result instead of trusting apt's exit status alone.
[[ -x "$CHROMIUM_BIN" ]] || { echo "install-browser-deps: $CHROMIUM_BIN still missing after install" >&2; exit 1; }
command -v dot >/dev/null 2>&1 || { echo "install-browser-deps: dot still missing after install" >&2; exit 1; }
echo "install-browser-deps: done ($("$CHROMIUM_BIN" --version 2>/dev/null | head -n1); $(dot -V 2>&1))."
