#!/bin/sh
# The test command (CI runs exactly this): Python packages, the Docker engine (started here
# only if none answers, and then stopped again at the end), the language images, and pytest.
set -eu
cd "$(dirname "$0")"
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r requirements.txt \
    -r requirements-ray.txt \
    -r requirements-hosts.txt  # Ray: an optional extra for users; hosts: HyperAgents' loop imports these
started_engine=0
if ! ./docker/ensure_engine.sh status > /dev/null 2>&1; then
  ./docker/ensure_engine.sh start
  started_engine=1
fi
stop_engine() {
  # Quietly: the test runner's summary stays the last line of the output.
  if [ "$started_engine" = 1 ]; then ./docker/ensure_engine.sh stop > /dev/null; fi
}
trap stop_engine EXIT
python3 harness.py --build_images_only
./tests/ensure_chromium.sh  # the HTML report's browser tests
python3 -m pytest -q "$@"
