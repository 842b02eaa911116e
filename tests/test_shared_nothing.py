"""The test process and the solution process share nothing writable (issue 31, item 2).

Trusted grading runs the hidden tests as RUNNER_UID and the solution as SOLUTION_UID. Issue 31
won by a directory both could write: the solution process planted a conftest.py where pytest
(run with no path argument) collected it, in the test process. The defence, by construction:
the python and javascript images leave no directory world-writable (/tmp, /var/tmp and
/run/lock are the runner group's; the solution process has its own 0700 HOME and TMPDIR), and
the test runners collect exactly the hidden test files (pytest named the files, no plugin
autoload, --confcutdir, no bytecode; jest's testMatch the spec paths, its cache in the private
TMPDIR). The attackers below know that and plant everything everywhere they can, through the
real grading code on real exercises; the source policy is off (it refuses file access: the
layer under test must hold alone).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from polyglot_harness.utils.backends.docker.images import ensure_language_image
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.outcomes import Isolation, Reason
from polyglot_harness.utils.pipeline.expected_tests import patch_writing
from polyglot_harness.utils.pipeline.grading import (SOLUTION_HOME, GradingRequest, grade,
                                                    grading_sandbox_spec, solution_environment)
from polyglot_harness.utils.prepare.dataset import prepare_dataset
from polyglot_harness.utils.records.dataset import Instance, load_dataset
from polyglot_harness.utils.records.instance_repo import checkout_commit
from polyglot_harness.utils.seam.image_settings import ImageSettings
from polyglot_harness.utils.seam.protocol import SOLUTION_UID, Limits

pytestmark = [pytest.mark.docker, pytest.mark.beside_gate]  # its own six bowling instances, repositories only

LANGUAGE_NAMES = ("python", "javascript")
# Mounted by the kernel at start (mqueue, 1777, no mode option), not part of the image: the
# solution process can write it, nothing of the test process opens a queue (docs/verdict.md). /dev/shm
# is the provider's private tmpfs (1770, the runner's group): not writable by 10002.
ENGINE_MOUNTS = {"/dev/mqueue"}
# Every directory the solution uid may write, pruned at what it cannot enter.
_WRITABLE_DIRECTORIES = ("find / \\( -path /proc -o -path /sys \\) -prune -o -type d -writable -print 2>/dev/null; "
                         "true")


@pytest.fixture(scope="module")
def images(docker_client) -> dict[str, str]:
    return {name: ensure_language_image(docker_client, LANGUAGES[name], ImageSettings.from_env(),
                                        log=lambda message: None).tag for name in LANGUAGE_NAMES}


@pytest.fixture(scope="module")
def bowling(benchmark_checkout, tmp_path_factory) -> dict[str, Instance]:
    output = tmp_path_factory.mktemp("shared-nothing") / "polyglot"
    prepare_dataset(benchmark_checkout, output, languages=list(LANGUAGE_NAMES),
                    instance_ids=[f"{name}__bowling" for name in LANGUAGE_NAMES], log=lambda message: None,
                    record_expected=False)
    return {instance.language: instance for instance in load_dataset(output)}


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
def test_grading_image_has_no_world_writable_directory(language, images, sandboxes):
    """`find / -xdev -perm -0002`: nothing in the image; the solution uid may write only its own
    home and the engine's mounts."""
    spec = grading_sandbox_spec(images[language], Limits(), LANGUAGES[language])
    with sandboxes.start(spec, f"{language}__shared-nothing") as box:
        world = box.exec("find / -xdev -perm -0002 ! -type l 2>/dev/null; true", 120, workdir="/")
        assert world.output.split() == [], world.output
        writable = box.exec(_WRITABLE_DIRECTORIES, 120, workdir="/", uid=SOLUTION_UID,
                            environment=solution_environment())
        assert set(writable.output.split()) <= ENGINE_MOUNTS | {SOLUTION_HOME}, writable.output
        home = box.exec(f"stat -c '%a %u' {SOLUTION_HOME}", 30, workdir="/")
        assert home.output.split() == ["700", str(SOLUTION_UID)]


# --- the attackers: plant everywhere, then behave as the stub --------------------------------

# A conftest.py that passes every test, a .pth that would run at interpreter start, a pyc
# standing in for the hidden test module, a pytest.ini naming the conftest as a plugin.
_PYTHON_PLANTER = r'''
import os

_FILES = {
    "conftest.py": "import pytest\n@pytest.hookimpl(hookwrapper=True)\n"
                   "def pytest_runtest_makereport(item, call):\n    report = (yield).get_result()\n"
                   "    report.outcome, report.longrepr = 'passed', None\n",
    "polyglot_planted.pth": "import sys; sys.stderr.write('planted .pth ran\\n')\n",
    "__pycache__/bowling_test.cpython-311.pyc": "not bytecode",
    "pytest.ini": "[pytest]\naddopts = -p conftest\n",
}
_TRIED = ["/", "/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/testbed", "/home/runner",
          "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages", os.getcwd()]


def _plant():
    directories = list(_TRIED)
    for root, dirs, _ in os.walk("/"):
        dirs[:] = [name for name in dirs if os.path.join(root, name) not in ("/proc", "/sys")]
        if os.access(root, os.W_OK):
            directories.append(root)
    planted, refused = set(), set()
    for directory in directories:
        for name, text in _FILES.items():
            try:
                os.makedirs(os.path.dirname(os.path.join(directory, name)), exist_ok=True)
                with open(os.path.join(directory, name), "w") as handle:
                    handle.write(text)
                planted.add(directory)
            except OSError:
                refused.add(directory)
    return "planted in " + ",".join(sorted(planted)) + "; refused " + ",".join(sorted(refused - planted))


_REPORT = _plant()
'''

_PYTHON_STUB = '''
class BowlingGame:
    def __init__(self):
        pass

    def roll(self, pins):
        raise NotImplementedError(_REPORT)

    def score(self):
        raise NotImplementedError(_REPORT)
'''

_JS_PLANTER = r'''
const fs = require('fs');
const path = require('path');
const files = {
  'jest.config.js': "module.exports = { setupFiles: [__dirname + '/jest-setup.js'] };\n",
  'jest-setup.js': "globalThis.expect = () => new Proxy({}, { get: () => () => undefined });\n",
  'bowling.spec.js': "test('planted', () => {});\n",
  'package.json': '{"jest": {"setupFiles": ["./jest-setup.js"]}}\n',
};
const tried = ['/', '/tmp', '/var/tmp', '/dev/shm', '/dev/mqueue', '/run/lock', '/testbed', '/home/runner',
  '/opt/polyglot-js/node_modules', '/opt/polyglot-js/polyglot-bridge', `/tmp/jest_${(10001).toString(36)}`,
  require('os').tmpdir(), require('os').homedir()];
const walk = (directory, found) => {
  if (directory === '/proc' || directory === '/sys') return;
  try { fs.accessSync(directory, fs.constants.W_OK); found.push(directory); } catch (error) { /* not writable */ }
  let entries = [];
  try { entries = fs.readdirSync(directory, { withFileTypes: true }); } catch (error) { return; }
  for (const entry of entries) if (entry.isDirectory()) walk(path.join(directory, entry.name), found);
};
const plant = () => {
  const directories = [...tried];
  walk('/', directories);
  const planted = new Set(), refused = new Set();
  for (const directory of directories) {
    for (const [name, text] of Object.entries(files)) {
      try {
        fs.mkdirSync(directory, { recursive: true });
        fs.writeFileSync(path.join(directory, name), text);
        planted.add(directory);
      } catch (error) { refused.add(directory); }
    }
  }
  return `planted in ${[...planted].sort().join(',')}; refused ${[...refused].filter((d) => !planted.has(d)).sort().join(',')}`;
};
const report = plant();
'''

_JS_STUB = '''
export class Bowling {
  roll() {
    throw new Error(report);
  }

  score() {
    throw new Error(report);
  }
}
'''

SOLUTION_FILE = {"python": "bowling.py", "javascript": "bowling.js"}
PLANTER = {"python": _PYTHON_PLANTER, "javascript": _JS_PLANTER}
STUB = {"python": _PYTHON_STUB, "javascript": _JS_STUB}
# The stub alone, without the planter (the control): its messages carry no report.
CONTROL_PRELUDE = {"python": '_REPORT = "planted nothing"\n', "javascript": "const report = 'planted nothing';\n"}


def grade_files(sandboxes, image: str, instance: Instance, files: dict[str, bytes]):
    with tempfile.TemporaryDirectory() as workdir:
        tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
        request = GradingRequest(language=instance.language_spec, instance_id=instance.instance_id, test_tree=tree, patch_text=patch_writing(instance, files),
                                 solution_paths=instance.solution_paths, hidden_paths=instance.hidden_paths, source_policy=False)
        return grade(sandboxes, image, request)


def planted_report(outcome) -> tuple[set[str], set[str]]:
    """The directories the attacker wrote into and those refused to it, from its failures."""
    for case in outcome.results.cases:
        match = re.search(r"planted in ([^;]*); refused ([^\s'\"]*)", case.message)
        if match:
            return set(filter(None, match[1].split(","))), set(filter(None, match[2].split(",")))
    raise AssertionError(f"no planter report in {[case.message[:200] for case in outcome.results.cases]}")


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
def test_planting_everywhere_the_solution_can_write_does_not_reach_the_test_process(language, images, bowling,
                                                                                      sandboxes):
    instance = bowling[language]
    attack = {SOLUTION_FILE[language]: (PLANTER[language] + STUB[language]).encode()}
    outcome = grade_files(sandboxes, images[language], instance, attack)
    assert outcome.isolation == Isolation.TRUSTED_PROCESS
    assert not outcome.verdict.resolved and outcome.verdict.reason == Reason.TESTS_FAILED, outcome.verdict
    planted, refused = planted_report(outcome)
    # What caught it: every directory the test process uses is refused to the solution uid;
    # what it could write (its home, the engine's mounts) nothing of the test process reads.
    assert planted <= ENGINE_MOUNTS | {SOLUTION_HOME}, planted
    assert {"/tmp", "/var/tmp", "/run/lock", "/dev/shm", "/testbed", "/home/runner"} <= refused, refused
    control = grade_files(sandboxes, images[language], instance,
                          {SOLUTION_FILE[language]: (CONTROL_PRELUDE[language] + STUB[language]).encode()})
    assert (control.verdict.resolved, control.verdict.reason) == (False, Reason.TESTS_FAILED), control.verdict
    assert control.results.count("FAILED") == outcome.results.count("FAILED")


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
def test_a_correct_solution_that_plants_everywhere_still_resolves(language, images, bowling, sandboxes):
    """The planter costs an honest grading nothing: with the reference after it, it resolves."""
    instance = bowling[language]
    reference = reference_solution(instance)
    outcome = grade_files(sandboxes, images[language], instance,
                          {SOLUTION_FILE[language]: PLANTER[language].encode() + reference})
    assert outcome.verdict.resolved, outcome.verdict


def reference_solution(instance: Instance) -> bytes:
    """The reference's solution file (the dataset's references/<id>)."""
    matches = [path for path in instance.reference_dir.rglob(SOLUTION_FILE[instance.language]) if path.is_file()]
    assert len(matches) == 1, matches
    return matches[0].read_bytes()
