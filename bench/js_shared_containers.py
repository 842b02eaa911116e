"""What sharing containers costs the JavaScript bridge (polyglot-bridge/shared.js), side by side.

    python bench/js_shared_containers.py [--calls 1000,10000] [--limits 256,1024,0]

Two sides of the bridge in one node process (each its own sharing hooks, encoder and decoder,
messages through JSON exactly as channel.js frames them: body, then `sync`): a test that calls
the solution N times in one synchronous turn, passing a 2-item array and keeping every
10-item array it gets back (the worst case: nothing is collected within a turn, so every
message compares every followed container). Prints milliseconds per run for containers copied
(POLYGLOT_BRIDGE_COPIES=1, as before shared.js) and shared with each follow limit (0: no limit).
No socket, no worker thread: only what sharing adds. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from pathlib import Path

BRIDGE = Path(__file__).resolve().parent.parent / "docker" / "javascript" / "polyglot-bridge"

PROGRAM = r"""
const [bridge, calls, limit] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const { encoder, decoder } = require(bridge + '/wire.js');
const { sharing } = require(bridge + '/shared.js');
function side() {
  const shared = sharing(limit > 0 ? { limit } : { limit: Infinity });
  const encode = encoder({ ...shared.encoding, peerId: () => undefined, ownFunction: () => null, ownObject: () => null,
    promise: () => null, error: () => null });
  const decode = decoder({ ...shared.decoding, peerRef: () => null, ownRef: () => null, promise: () => null,
    error: () => null, errorClass: () => null });
  const sync = shared.sync(encode, decode);
  return {
    send: (value) => { const v = encode(value); const changes = sync ? sync.changes() : []; return JSON.stringify(changes.length ? { v, sync: changes } : { v }); },
    receive: (raw) => { const message = JSON.parse(raw); if (message.sync !== undefined) sync.apply(message.sync); return decode(message.v); },
  };
}
const [test, solution] = [side(), side()];
const kept = [];
const start = process.hrtime.bigint();
for (let i = 0; i < calls; i += 1) {
  const args = solution.receive(test.send([i, i + 1]));
  kept.push(test.receive(solution.send([args[0], args[1], 3, 4, 5, 6, 7, 8, 9, 10])));
}
process.stdout.write(String(Number(process.hrtime.bigint() - start) / 1e6));
"""


def milliseconds(calls: int, limit: int, copies: bool) -> float:
    env = {**os.environ, "POLYGLOT_BRIDGE_COPIES": "1" if copies else "0"}
    out = subprocess.run([shutil.which("node") or "node", "-e", PROGRAM, str(BRIDGE), str(calls), str(limit)],
                         capture_output=True, text=True, check=True, env=env)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="1000,10000")
    parser.add_argument("--limits", default="256,1024,0")
    args = parser.parse_args()
    limits = [int(x) for x in args.limits.split(",")]
    header = ["calls", "copied"] + [f"shared, limit {limit or 'none'}" for limit in limits]
    print(json.dumps(header))
    for calls in (int(x) for x in args.calls.split(",")):
        row = [calls, round(milliseconds(calls, 0, True))] + [round(milliseconds(calls, limit, False)) for limit in limits]
        print(json.dumps(row))


if __name__ == "__main__":
    main()
