"""What the harness takes out of an agent container after the agent ended
(utils.agent_run._collect_outputs: one command, one copy-out), played by a careless or hostile
agent: its own patch file, or none (the harness diffs /testbed against the base commit); files
over their limits; symlinks pointing at endless or foreign files; a file too large for any patch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from polyglot_harness.utils.pipeline import agent_phase as agent_run
from polyglot_harness.utils.pipeline.agent_phase import PATCH_FILE, USAGE_FILE, _collect_outputs
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.pipeline.pools import Sandboxes
from polyglot_harness.utils.seam.protocol import SandboxSpec

pytestmark = pytest.mark.docker
PY = LANGUAGES["python"]
INSTANCE = SimpleNamespace(instance_id="python__probe")
CHAT = f"/agent/{INSTANCE.instance_id}.md"


def base_repo(root: Path) -> str:
    root.mkdir()
    (root / "probe.py").write_text("def answer():\n    pass\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    return subprocess.run(git[:3] + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def box(provider, language_images, tmp_path, no_leftover_containers):
    commit = base_repo(tmp_path / "repo")
    (tmp_path / "agent").mkdir()
    sandbox = Sandboxes(provider, "outputs").start(SandboxSpec(image=language_images["python"], role="agent",
                                                               network="none"), INSTANCE.instance_id)
    sandbox.put_directory(tmp_path / "repo", "/testbed")
    sandbox.put_directory(tmp_path / "agent", "/agent")
    sandbox.commit = commit
    yield sandbox
    sandbox.close()


def collect(box, log=None):
    said: list[str] = []
    instance = SimpleNamespace(instance_id=INSTANCE.instance_id, base_commit=box.commit)
    collected = _collect_outputs(box, instance, PY, log or said.append)
    return collected, "\n".join(said)


def run(box, command: str) -> None:
    result = box.exec(command, 60, workdir="/testbed")
    assert result.exit_code == 0, result.output


def test_without_a_patch_file_the_harness_diffs_the_tree_and_takes_transcript_and_usage(box):
    run(box, f"printf 'def answer():\\n    return 42\\n' > probe.py && echo new > extra.py && "
             f"printf '# chat\\n' > {CHAT} && echo '{{\"calls\": 2}}' > {USAGE_FILE}")
    collected, _ = collect(box)
    assert collected.patch_source == "harness" and collected.patch_bytes is None
    assert "+    return 42" in collected.patch and "+++ b/extra.py" in collected.patch
    assert (collected.chat, collected.usage) == (b"# chat\n", b'{"calls": 2}\n')


def test_the_agents_own_patch_file_is_taken_as_written(box):
    run(box, f"echo 'changed' > probe.py && printf 'my patch\\n' > {PATCH_FILE}")
    collected, _ = collect(box)
    assert (collected.patch, collected.patch_source) == ("my patch\n", "agent")
    assert (collected.chat, collected.usage) == (b"", b"")  # none written


def test_symlinks_are_not_followed(box):
    # An endless patch file and a transcript that is someone else's file: neither is read.
    run(box, f"ln -s /dev/zero {PATCH_FILE} && ln -s /etc/passwd {CHAT} && ln -s /proc/self/environ {USAGE_FILE} "
             f"&& echo changed > probe.py")
    collected, _ = collect(box)
    assert collected.patch_source == "harness" and "+changed" in collected.patch
    assert (collected.chat, collected.usage) == (b"", b"")


def test_files_over_their_limits_are_sized_not_copied(box, monkeypatch):
    monkeypatch.setattr(agent_run, "MAX_TRANSCRIPT_BYTES", 100)
    monkeypatch.setattr(agent_run, "MAX_USAGE_BYTES", 10)
    monkeypatch.setattr(agent_run, "MAX_PATCH_BYTES", 1000)
    run(box, f"head -c 101 /dev/zero > {CHAT} && head -c 11 /dev/zero > {USAGE_FILE} && "
             f"head -c 1001 /dev/zero > {PATCH_FILE}")
    collected, said = collect(box)
    assert (collected.patch, collected.patch_source, collected.patch_bytes) == ("", "agent", 1001)
    assert (collected.chat, collected.usage) == (None, None)
    assert collected.sizes == {"patch": 1001, "chat": 101, "usage": 11}
    assert "holds 101 bytes, over the 100-byte limit" in said


def test_a_diff_over_the_limit_is_sized_not_copied(box, monkeypatch):
    monkeypatch.setattr(agent_run, "MAX_PATCH_BYTES", 10000)
    run(box, "seq 1 1500 > a.txt && seq 1 1500 > b.txt")  # each file within the limit, the diff not
    collected, said = collect(box)
    assert (collected.patch, collected.patch_source) == ("", "harness")
    assert collected.patch_bytes and collected.patch_bytes > 10000
    assert "over the 10000-byte limit" in said and "removed oversized file: ./" not in said


def test_a_file_too_large_for_any_patch_is_removed_and_named(box, monkeypatch):
    monkeypatch.setattr(agent_run, "MAX_PATCH_BYTES", 64 * 1024)
    run(box, "head -c 200000 /dev/urandom > blob.bin && echo changed > probe.py")
    collected, said = collect(box)
    assert "removed oversized file: ./blob.bin" in said
    assert "+changed" in collected.patch and "blob.bin" not in collected.patch


def test_the_repository_git_ignores_the_languages_artifacts_before_the_agent_starts(box, tmp_path):
    """What any agent's `git add -A` sees: the exclude file the harness writes keeps build
    artifacts out, the repository's own exclude lines stay, and /testbed stays the agent's."""
    (tmp_path / "repo" / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / "repo" / ".git" / "info" / "exclude").write_text("# the repo's own line\n")
    agent_run._ignore_artifacts(box, tmp_path / "repo", PY)
    run(box, "mkdir -p __pycache__ pkg/__pycache__ && touch __pycache__/a.pyc pkg/__pycache__/b.pyc stray.pyc "
             "helper.py && touch .git/info/exclude && test -O . && test -O .git")
    listed = box.exec("git -c safe.directory='*' status --porcelain --untracked-files=all", 60, workdir="/testbed")
    assert listed.output.split() == ["??", "helper.py"]
    exclude = box.get_files("/testbed/.git/info/exclude")
    assert next(iter(exclude.values())).decode().startswith("# the repo's own line\n# build artifacts of python")
