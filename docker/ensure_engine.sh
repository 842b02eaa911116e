#!/bin/sh
# Make the Docker API answer: no-op when it does (DOCKER_HOST honoured); otherwise, on
# Debian as root, install docker.io if needed and start dockerd detached
# (log: /var/log/polyglot-harness/dockerd.log). `ensure_engine.sh stop` stops only a
# daemon this script started. Same logic from Python: utils.engine.ensure_engine().
cd "$(dirname "$0")/.." && exec python3 -m utils.backends.docker.engine "${1:-start}"
