"""JavaScript's grading command (docker/javascript/polyglot-js-test) runs the exercise's
package.json "test" script the way `npm test -- ARGS` does, without starting npm.

What could go wrong, as tests: the script gets other arguments than npm would give it (the
report would be written elsewhere, or jest's options lost); a pretest/posttest hook npm would
run is skipped; a package.json without a test script passes silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polyglot_harness.utils.pipeline.grading import TESTBED, grading_sandbox_spec
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.seam.protocol import Limits
from polyglot_harness.utils.pipeline.pools import Sandboxes

pytestmark = pytest.mark.docker
JS = LANGUAGES["javascript"]
SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "javascript" / "exercises" / "practice" / "clamp-list"
# Writes the arguments it was given (after its own) as JSON to the file named first.
ARGS_JS = "require('fs').writeFileSync(process.argv[2], JSON.stringify(process.argv.slice(3)));\n"


def exercise(root: Path, scripts: dict[str, str]) -> Path:
    root.mkdir()
    (root / "args.js").write_text(ARGS_JS)
    (root / "package.json").write_text(json.dumps({"name": "probe", "private": True, "scripts": scripts}))
    return root


def run(sandboxes: Sandboxes, image: str, tree: Path, command: str):
    box = sandboxes.start(grading_sandbox_spec(image, Limits(), JS), "js-runner")
    with box:
        box.put_directory(tree, TESTBED)
        result = box.exec(f"mkdir -p /tmp/report && {command}", 120, workdir=TESTBED)
        files = box.get_files("/tmp")
    return result, files


def test_the_script_gets_exactly_the_arguments_npm_would_give_it(sandboxes, language_images, tmp_path,
                                                                 no_leftover_containers):
    tree = exercise(tmp_path / "ex", {"test": "node args.js /tmp/args.json fixed ./*"})
    ours, ours_files = run(sandboxes, language_images["javascript"], tree,
                           JS.test_command.format(report_dir="/tmp/report"))
    # The same arguments through npm itself (what the command did before it skipped npm).
    npm, npm_files = run(sandboxes, language_images["javascript"], tree,
                         "ln -s /opt/polyglot-js/node_modules node_modules && npm test --silent -- --ci --watchman=false --testTimeout=60000 --json "
                         "--outputFile=/tmp/report/jest.json")
    assert ours.exit_code == npm.exit_code == 0, (ours.output, npm.output)
    ours_args, npm_args = json.loads(ours_files["args.json"]), json.loads(npm_files["args.json"])
    assert ours_args == npm_args
    # The shell expanded ./* in /testbed, and the report goes where grading reads it.
    assert ours_args[:2] == ["fixed", "./args.js"] and "--outputFile=/tmp/report/jest.json" in ours_args


def test_a_pretest_hook_runs_as_under_npm(sandboxes, language_images, tmp_path, no_leftover_containers):
    tree = exercise(tmp_path / "ex", {"pretest": "echo hooked > /tmp/pretest.txt",
                                      "test": "node args.js /tmp/args.json"})
    result, files = run(sandboxes, language_images["javascript"], tree, JS.test_command.format(report_dir="/tmp/report"))
    assert result.exit_code == 0, result.output
    assert files["pretest.txt"] == b"hooked\n" and "args.json" in files


@pytest.mark.parametrize("package", ['{"scripts": {"lint": "eslint ."}}', '{"scripts": ', '[]'])
def test_no_readable_test_script_fails_with_one_line(package, sandboxes, language_images, tmp_path,
                                                     no_leftover_containers):
    tree = exercise(tmp_path / "ex", {})
    (tree / "package.json").write_text(package)
    result, files = run(sandboxes, language_images["javascript"], tree, JS.test_command.format(report_dir="/tmp/report"))
    assert result.exit_code == 2, result.output
    assert 'polyglot-js-test: no readable "test" script in package.json' in result.output
    assert "args.json" not in files


def test_a_failing_script_fails_the_command(sandboxes, language_images, tmp_path, no_leftover_containers):
    tree = exercise(tmp_path / "ex", {"test": "node args.js /tmp/args.json && exit 7"})
    result, _ = run(sandboxes, language_images["javascript"], tree, JS.test_command.format(report_dir="/tmp/report"))
    assert result.exit_code == 7, result.output
