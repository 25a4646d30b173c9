#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the browser tests of the web interface
# (test/integration/web/, driven by puppeteer-core: no browser download at npm install).
# Installs the package when absent (needs root). A test run without it fails.
set -euo pipefail
browser="${WCS_TEST_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$browser" ]; then echo "ensure-test-chromium: $browser ready"; exit 0; fi
if [ "$(id -u)" != 0 ]; then echo "ensure-test-chromium: $browser is missing and this is not root; install Debian's chromium package or set WCS_TEST_CHROMIUM" >&2; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq chromium >/dev/null
echo "ensure-test-chromium: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
