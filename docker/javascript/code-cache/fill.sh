#!/bin/sh
# IMAGE BUILD time only (Dockerfile): fill the code cache (hook.js) by grading the image's own
# sample exercise (sample/) both ways grading runs jest: in process (polyglot-js-test) and
# trusted, with the solution process (polyglot-js-trusted-test, polyglot-js-solver). Every
# node process of these runs preloads build.js, which writes what V8 compiled of the image's
# modules when it exits. No exercise of the benchmark is involved.
set -eu
here=/opt/polyglot-js/code-cache
work=$(mktemp -d)
cp -r "$here/sample" "$work/tests"
cp -r "$here/sample" "$work/solution"
mkdir "$work/in-process" "$work/trusted" "$work/tmp" "$work/sock"
export POLYGLOT_JS_CODE_CACHE_RECORD=1 NODE_OPTIONS="--require=$here/build.js" TMPDIR="$work/tmp"
(cd "$work/tests" && polyglot-js-test "$work/in-process" >/dev/null 2>&1) || true
(cd "$work/solution" && exec polyglot-js-solver "$work/sock/bridge") &
(cd "$work/tests" && POLYGLOT_EVENTS="$work/trusted/bridge.json" \
  polyglot-js-trusted-test "$work/trusted" "$work/sock/bridge" >/dev/null 2>&1) || true
wait
# Both runs graded the sample as expected (9 tests: 7 pass, 1 fails, 1 skipped), else no cache.
for run in in-process trusted; do
  node -e '
const r = require(process.argv[1]);
const got = [r.numTotalTests, r.numPassedTests, r.numFailedTests, r.numPendingTests].join(" ");
if (got !== "9 7 1 1") { console.error(`code cache sample (${process.argv[2]}): ${got}`); process.exit(1); }
' "$work/$run/jest.json" "$run"
done
rm -rf "$work"
echo "code cache: $(ls "$here/v8" | wc -l) modules"
