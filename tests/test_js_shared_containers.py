"""Containers the JavaScript test and solution processes share (polyglot-bridge/shared.js), as
one process shares them: two sides, each with its own SharedContainers, encoder and decoder,
exchanging JSON messages that carry `sync` exactly as channel.js sends them. Runs with the
host's node (the bridge needs no package for this).

Red team 15 got javascript__grade-school resolved by a solution that hands out its internal
roster: the spec's push went into a copy. These pin each direction of sharing, identity, nesting,
what stops being shared, and what the peer may not do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .node_program import node_results

BRIDGE = Path(__file__).resolve().parents[1] / "docker" / "javascript" / "polyglot-bridge"

PROGRAM = r"""
const bridge = %s;
const { encoder, decoder } = require(bridge + '/wire.js');
const { sharing } = require(bridge + '/shared.js');

// One side: its sharing hooks, an encoder and decoder (objects with methods become the string
// 'HANDLE' on the other side), and `send`: a message as channel.js sends it (body, then sync).
function side() {
  const shared = sharing();
  const encode = encoder({ ...shared.encoding, peerId: () => undefined,
    ownFunction: () => ({ t: 'h', id: 1, kind: 'function' }), ownObject: () => ({ t: 'h', id: 1, kind: 'object' }),
    promise: () => ({ t: 'p', id: 1 }), error: () => ({ t: 'e', base: 'Error', message: '' }) });
  const decode = decoder({ ...shared.decoding, peerRef: (w) => (w.kind === 'function' ? function handle() {} : 'HANDLE'),
    ownRef: () => 'MINE', promise: () => 'PROMISE', error: () => new Error(), errorClass: () => Error });
  const sync = shared.sync(encode, decode);
  return {
    send(value) {
      const v = encode(value);
      const changes = sync ? sync.changes() : [];
      return JSON.stringify(changes.length ? { v, sync: changes } : { v });
    },
    receive(raw) {
      const message = JSON.parse(raw);
      if (message.sync !== undefined) sync.apply(message.sync);
      return decode(message.v);
    },
  };
}

const run = (name, scenario) => {
  const test = side();
  const solution = side();
  try { results[name] = scenario(test, solution); } catch (error) { results[name] = `${error.constructor.name}: ${error.message}`; }
};
const results = {};

run('test_push_reaches_the_solution', (test, solution) => {
  const roster = { 2: ['Aimee'] };
  const copy = test.receive(solution.send(roster));
  copy[2].push('Oops.');
  copy[3] = ['Blair'];
  test.receive(solution.send(null)); // nothing changed on the solution's side
  solution.receive(test.send('next call'));
  return [roster[2], Object.keys(roster), roster[3]];
});

run('solution_sort_reaches_the_test', (test, solution) => {
  const input = [3, 1, 2];
  const theirs = solution.receive(test.send(input));
  theirs.sort();
  test.receive(solution.send('done'));
  return input;
});

run('later_changes_both_ways', (test, solution) => {
  const kept = [1];
  const copy = test.receive(solution.send(kept));
  kept.push(2); // the solution changes what it returned earlier
  test.receive(solution.send('reply'));
  const seenByTest = copy.slice();
  const mine = [7];
  const stored = solution.receive(test.send(mine));
  mine.push(8); // the test changes what it passed earlier
  solution.receive(test.send('next'));
  return [seenByTest, stored];
});

run('identity', (test, solution) => {
  const inner = [1, 2];
  const a = test.receive(solution.send(inner));
  const b = test.receive(solution.send(inner));
  const home = solution.receive(test.send(a));
  const fresh = test.receive(solution.send([1, 2]));
  return [a === b, home === inner, fresh === a];
});

run('maps_and_sets', (test, solution) => {
  const map = new Map([['a', 1]]);
  const set = new Set([1]);
  const [m, s] = test.receive(solution.send([map, set]));
  m.set('b', 2);
  s.add(2);
  solution.receive(test.send(0));
  return [[...map], [...set]];
});

run('a_method_ends_sharing', (test, solution) => {
  const state = { n: 1 };
  const copy = test.receive(solution.send(state));
  state.n = 2;
  state.asymmetricMatch = () => true;
  test.receive(solution.send('reply'));
  return [copy.n, 'asymmetricMatch' in copy];
});

run('locks_cross', (test, solution) => {
  const grades = Object.freeze(['Aimee']);
  const sealed = Object.seal({ a: 1 });
  const [copy, sealedCopy] = test.receive(solution.send([grades, sealed]));
  let pushed;
  try { copy.push('Oops.'); pushed = 'pushed'; } catch (error) { pushed = error.constructor.name; }
  sealedCopy.a = 2;
  const mine = [1];
  const theirs = solution.receive(test.send(mine));
  Object.freeze(mine); // the test locks its own array after passing it
  solution.receive(test.send('next'));
  return [pushed, Object.isFrozen(copy), Object.isSealed(sealedCopy) && !Object.isFrozen(sealedCopy), Object.isFrozen(theirs)];
});

run('write_into_a_locked_container', (test, solution) => {
  const mine = Object.freeze([1]);
  solution.receive(test.send(mine));
  return test.receive(JSON.stringify({ v: 0, sync: [{ t: 'R', id: 1, k: 'a', v: [1, 2], x: 'f' }] }));
});
run('malformed_lock', (test, solution) => {
  test.receive(solution.send([1]));
  return test.receive(JSON.stringify({ v: 0, sync: [{ t: 'A', id: 1, k: 'a', v: [1], x: 'q' }] }));
});

run('unknown_container', (test) => test.receive(JSON.stringify({ v: 0, sync: [{ t: 'R', id: 99, k: 'a', v: [] }] })));
run('function_in_object', (test) => test.receive(JSON.stringify({ v: { t: 'o', v: [['asymmetricMatch', { t: 'h', id: 4, kind: 'function' }]] } })));
run('function_in_sync', (test, solution) => {
  test.receive(solution.send({ n: 1 }));
  return test.receive(JSON.stringify({ v: 0, sync: [{ t: 'A', id: 1, k: 'o', v: [['then', { t: 'h', id: 4, kind: 'function' }]] }] }));
});
run('kind_changed', (test, solution) => {
  const original = [1];
  solution.receive(test.send(original));
  return test.receive(JSON.stringify({ v: 0, sync: [{ t: 'R', id: 1, k: 'o', v: [] }] }));
});
process.env.POLYGLOT_BRIDGE_COPIES = '1';
run('copies_control', (test, solution) => {
  const roster = [1];
  const copy = test.receive(solution.send(roster));
  copy.push(2);
  solution.receive(test.send(0));
  return roster;
});
process.stdout.write(JSON.stringify(results));
"""


@pytest.fixture(scope="module")
def results() -> dict:
    return node_results(PROGRAM % json.dumps(str(BRIDGE)))


def test_what_the_tests_do_to_a_returned_container_reaches_the_solutions_own(results):
    assert results["test_push_reaches_the_solution"] == [["Aimee", "Oops."], ["2", "3"], ["Blair"]]


def test_what_the_solution_does_to_an_argument_reaches_the_tests_own(results):
    assert results["solution_sort_reaches_the_test"] == [1, 2, 3]


def test_changes_made_after_crossing_reach_the_other_side_at_its_next_message(results):
    assert results["later_changes_both_ways"] == [[1, 2], [7, 8]]


def test_one_container_is_one_copy_and_a_copy_sent_back_is_the_original(results):
    assert results["identity"] == [True, True, False]


def test_maps_and_sets_are_shared_too(results):
    assert results["maps_and_sets"] == [[["a", 1], ["b", 2]], [1, 2]]


def test_an_object_that_gains_a_method_stops_being_shared_and_its_copy_keeps_its_data(results):
    assert results["a_method_ends_sharing"] == [1, False]


def test_a_copy_is_locked_as_its_original_so_a_push_into_a_frozen_roster_throws_as_in_one_process(results):
    """Red team 16: a frozen internal array's copy took the test's push, the solution's side
    refused the write silently and the copy was rewritten at the next call."""
    assert results["locks_cross"] == ["TypeError", True, True, True]


def test_a_write_a_lock_refuses_or_an_unknown_lock_breaks_the_channel(results):
    assert results["write_into_a_locked_container"].startswith("ProtocolError"), results["write_into_a_locked_container"]
    assert results["malformed_lock"].startswith("ProtocolError"), results["malformed_lock"]


def test_the_peer_may_not_name_a_container_it_was_not_given_nor_change_its_kind(results):
    assert results["unknown_container"].startswith("ProtocolError"), results["unknown_container"]
    assert results["kind_changed"].startswith("ProtocolError"), results["kind_changed"]


def test_a_plain_object_from_the_peer_never_holds_a_function(results):
    """A callable `asymmetricMatch` or `then` on plain data would make jest ask the solution."""
    assert results["function_in_object"].startswith("ProtocolError"), results["function_in_object"]
    assert results["function_in_sync"].startswith("ProtocolError"), results["function_in_sync"]


def test_the_negative_control_copies_and_shares_nothing(results):
    assert results["copies_control"] == [1]
