#!/usr/bin/env bash
# The long hostile-input run: the fuzz test of the suite with many more requests per store.
#   scripts/fuzz-long.sh [runs per store, default 20000] [seed]
# FUZZ_DATABASE=sqlite or postgres limits the run to one store. Needs the test PostgreSQL
# (scripts/ensure-test-postgres.sh starts it). A failure prints the seed and the shrunk request.
set -euo pipefail
cd "$(dirname "$0")/.."
export FUZZ_RUNS="${1:-20000}"
if [ -n "${2:-}" ]; then export FUZZ_SEED="$2"; fi
bash scripts/ensure-test-postgres.sh
exec npx vitest run test/integration/fuzz.test.ts --testTimeout=3600000 --hookTimeout=120000
