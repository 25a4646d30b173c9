#!/usr/bin/env bash
# Makes sure a local PostgreSQL server runs and has the role and database the tests use
# (WCS_TEST_DATABASE_URL, default postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test).
# Installs Debian's postgresql package when it is absent (needs root). A test run without it fails.
set -euo pipefail
if [ -n "${WCS_TEST_DATABASE_URL:-}" ] && [ "${WCS_TEST_DATABASE_URL}" != "postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test" ]; then
  echo "ensure-test-postgres: using the operator's WCS_TEST_DATABASE_URL"; exit 0
fi
if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then echo "ensure-test-postgres: PostgreSQL is not installed and this is not root; install it or set WCS_TEST_DATABASE_URL" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /etc/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h 2>/dev/null | awk '{print $4}' | grep -q online; then
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
fi
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 0.5; done
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -c "$1"; else sh -c "$1"; fi; }
as_postgres "psql -tAc \"SELECT 1 FROM pg_roles WHERE rolname='wcs_test'\"" | grep -q 1 \
  || as_postgres "psql -q -c \"CREATE ROLE wcs_test LOGIN PASSWORD 'wcs_test'\""
as_postgres "psql -tAc \"SELECT 1 FROM pg_database WHERE datname='wcs_test'\"" | grep -q 1 \
  || as_postgres "psql -q -c \"CREATE DATABASE wcs_test OWNER wcs_test\""
echo "ensure-test-postgres: PostgreSQL $version ready at 127.0.0.1:5432 (database wcs_test)"
