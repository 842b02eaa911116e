"""The wire format of JavaScript's trusted grading (docker/javascript/polyglot-bridge/wire.js):
what crosses by value is rebuilt from scratch, what behaves stays a handle, and a malformed
message is refused. Runs wire.js with the host's node (it needs no package)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .node_program import node_results

WIRE = Path(__file__).resolve().parents[1] / "docker" / "javascript" / "polyglot-bridge" / "wire.js"

# A sender whose side keeps every non-plain value as handle 1 (and notes it), and a receiver
# whose side turns handle wires into the string "HANDLE".
PROGRAM = r"""
const { encoder, decoder, builtinBase } = require(%s);
const kept = [];
const encode = encoder({
  peerId: () => undefined,
  ownFunction: (fn) => { kept.push('function'); return { t: 'h', id: 1, kind: 'function' }; },
  ownObject: (object) => { kept.push('object'); return { t: 'h', id: 1, kind: 'object' }; },
  promise: () => ({ t: 'p', id: 1 }),
  error: (error) => ({ t: 'e', base: builtinBase(error, globalThis), message: error.message }),
});
const decode = decoder({
  peerRef: () => 'HANDLE', ownRef: () => 'MINE', promise: () => 'PROMISE',
  error: ({ base, message }) => `${base}:${message}`, errorClass: () => 'CLASS',
});
const roundTrip = (value) => decode(JSON.parse(JSON.stringify(encode(value))));
const results = {};
const back = roundTrip({ n: -0, nan: NaN, inf: -Infinity, big: 12n, u: undefined, list: [1, 'a', null], map: new Map([[1, 2]]) });
results.numbers = [Object.is(back.n, -0), Number.isNaN(back.nan), back.inf === -Infinity, back.big === 12n, 'u' in back && back.u === undefined];
results.collections = [Array.isArray(back.list), back.map instanceof Map && back.map.get(1) === 2];
class Point { constructor() { this.x = 1; } }
class OwnError extends TypeError {}
results.own_error = roundTrip(new OwnError('mine'));
results.instance = roundTrip(new Point());
results.matcher = roundTrip({ asymmetricMatch: () => true });
results.getter = roundTrip({ get value() { return 1; } });
results.symbols = roundTrip({ a: 1, [Symbol.toPrimitive]: () => 5 });
const proto = roundTrip(JSON.parse('{"__proto__": {"polluted": true}}'));
results.proto = [Object.getPrototypeOf(proto) === Object.prototype, ({}).polluted === undefined, Object.keys(proto)];
const fake = [1, 2];
fake.asymmetricMatch = () => true;
results.array_props = Object.keys(roundTrip(fake));
const cyclic = { a: 1 };
cyclic.self = cyclic;
results.cyclic = roundTrip(cyclic).self;
results.error = roundTrip(new RangeError('bad'));
// Look-alikes: what a value says it is (Symbol.toStringTag, a prototype) is not what it is.
results.lookalikes = [
  roundTrip({ then: (resolve) => resolve(1), [Symbol.toStringTag]: 'Promise' }),
  roundTrip(Object.create(Promise.prototype)),
  roundTrip({ getTime: () => 0, [Symbol.toStringTag]: 'Date' }),
  roundTrip(Object.assign(Object.create(Error.prototype), { message: 'fake' })),
  roundTrip(Promise.resolve(1)),
];
results.kept = kept;
results.kept_after_lookalikes = kept.length;
results.refused = [{ t: 'zz' }, { t: 'n', v: '1e309' }, { t: 'b', v: '1; process.exit()' }, { t: 'o', v: [[1, 2]] },
  { t: 'e', base: 'Function', message: 'x' }, { t: 'h', id: -1, kind: 'object' }].map((wire) => {
  try { decode(wire); return 'accepted'; } catch (error) { return error.constructor.name; }
});
process.stdout.write(JSON.stringify(results));
"""


@pytest.fixture(scope="module")
def results() -> dict:
    return node_results(PROGRAM % json.dumps(str(WIRE)))


def test_special_numbers_bigints_and_collections_cross_by_value(results):
    assert all(results["numbers"]) and all(results["collections"])


def test_objects_that_behave_stay_handles(results):
    # A class instance, an object with a method (an asymmetric matcher) or a getter.
    assert results["instance"] == results["matcher"] == results["getter"] == "HANDLE"


def test_plain_copies_carry_no_symbols_prototypes_or_extra_array_keys(results):
    assert results["symbols"] == {"a": 1}
    assert results["proto"] == [True, True, ["__proto__"]]
    assert results["array_props"] == ["0", "1"]


def test_a_cycle_is_cut_with_a_handle(results):
    assert results["cyclic"] == "HANDLE"


def test_errors_cross_as_their_builtin_type(results):
    assert results["error"] == "RangeError:bad"
    assert results["own_error"] == "TypeError:mine"  # the nearest builtin type


def test_malformed_wire_values_are_refused(results):
    assert results["refused"] == ["ProtocolError"] * 6


def test_a_look_alike_of_a_promise_date_or_error_stays_the_solutions_object(results):
    """Red team 15: a thenable whose Symbol.toStringTag is 'Promise' crossed as a real promise,
    so `toBeInstanceOf(Promise)` held in the test process for an object that is no promise. The
    engine's own brand decides (util.types), as `instanceof` in one process would."""
    assert results["lookalikes"] == ["HANDLE", "HANDLE", "HANDLE", "HANDLE", "PROMISE"]
