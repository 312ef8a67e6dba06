#!/usr/bin/env bash
# Installs what the tests and the demo need on a fresh Debian machine, and nothing when present.
set -euo pipefail
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-benchmark >/dev/null || need+=(redis-tools)
command -v openssl >/dev/null || need+=(openssl)  # the TLS tests make a throwaway CA
command -v curl >/dev/null || need+=(curl)  # spring-boot-check.sh reads the actuator over HTTP
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)  # FencingPostgresTest's server
PATH="$PATH:/usr/sbin:/sbin" command -v tc >/dev/null || need+=(iproute2)  # the cluster failover test's filter on lo
compgen -G '/usr/lib/*/faketime/libfaketime.so.1' >/dev/null || need+=(libfaketime)  # catch_up.rs runs an instance whose clock is ahead
# The compatibility matrix builds Redis 6.2, 7.4 and Valkey 8 from source, with TLS.
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
[ -e /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
for tool in cargo java mvn python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: install it first (see README)" >&2; exit 1; }
done
# The dashboard's picture (scripts/plot-dashboard.py) draws with matplotlib, from PyPI when missing.
python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib
