#!/bin/sh
# Make the Docker API answer: no-op when it does (DOCKER_HOST honoured); otherwise, on
# Debian as root, install docker.io if needed and start dockerd detached
# (log: /var/log/polyglot-harness/dockerd.log). `ensure_engine.sh stop` stops only a
# daemon this script started; `ensure_engine.sh status` exits 0 when the API answers. Same
# logic from Python: ensure_engine() in utils/backends/docker/engine.py.
cd "$(dirname "$0")/.." && exec python3 -c 'import sys, _standalone
from polyglot_harness.utils.backends.docker.engine import main
sys.exit(main(sys.argv[1:]))' "${1:-start}"
