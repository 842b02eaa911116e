"""THE run directory: every path of a harness output directory, and run_settings.json.

No other module builds these names (tests/test_run_dir.py greps for them). Layout
(HyperAgents reads these names: they never change):

    <output_dir>/                                    OutputDirectory
        report.json                                  report.py: RunReport.score_json + cost
        report.html                                  report.py --html (default file)
        <name>_0.0.json                              the harness's run report (RunReport.run_report_json)
        <name>_0/                                    RunDirectory(output_dir / f"{name}_0")
            run_settings.json                        RunSettings: what a resume must match
            <id>.json                                InstanceResult (utils/records/results.py)
            <id>.md                                  the agent's chat history (last try)
            <id>_docker.log                          timestamped log: every container command run
            <id>_eval.sh                             the grading script (last try)
            <id>_eval.md                             the test run's output (last try)
            <id>.try1.md, <id>.try1_eval.md,         an earlier try's files (--tries 2): the plain
            <id>.try1_eval.sh                        names always hold the last try's
            <id>.try2_feedback.md                    the feedback try 2 was given
            attempt<k>/                              attempt k >= 2 of every instance (--attempts K):
                <id>.json, <id>.md, <id>_docker.log, the same names as attempt 1's files above (the
                <id>_eval.sh, <id>_eval.md, ...      plain names in <name>_0/), that attempt's own
                                                     result and files; <name>_0/<id>.json lists every
                                                     attempt under `attempt_results`
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

RUN_SETTINGS_FILE = "run_settings.json"
REPORT_JSON_FILE = "report.json"
REPORT_HTML_FILE = "report.html"
RUN_DIR_SUFFIX = "_0"          # HyperAgents' layout: <name>_0/ ...
RUN_REPORT_SUFFIX = ".0.json"  # ... and <name>_0.0.json beside it
ATTEMPT_DIR_PREFIX = "attempt"  # <name>_0/attempt2/: attempt 2's files (attempt 1's are the plain ones)


def attempt_dir_name(number: int) -> str:
    """The folder of attempt `number` >= 2 inside a run directory."""
    return f"{ATTEMPT_DIR_PREFIX}{number}"


@dataclass(frozen=True)
class TryFiles:
    """The file names (not paths) of one try of an instance inside its run directory."""

    transcript: str    # the agent's chat history
    eval_output: str   # the test run's output
    eval_script: str   # the grading script
    feedback: str      # the feedback this try was given (only tries after the first have one)


def try_files(instance_id: str, number: int, last: bool) -> TryFiles:
    """The files of try `number` of `instance_id`: the last try's have the plain names, an
    earlier one's `<id>.try<number>...`; the feedback is always `<id>.try<number>_feedback.md`."""
    stem = instance_id if last else f"{instance_id}.try{number}"
    return TryFiles(transcript=f"{stem}.md", eval_output=f"{stem}_eval.md", eval_script=f"{stem}_eval.sh",
                    feedback=f"{instance_id}.try{number}_feedback.md")


def transcript_name(instance_id: str) -> str:
    """The chat history's file name: `<id>.md`, in the run directory and in the agent's /agent/ alike."""
    return try_files(instance_id, 1, last=True).transcript


@dataclass(frozen=True)
class InstanceFiles:
    """Every path of one instance in a run directory (the last try's under the plain names)."""

    run_dir: Path
    instance_id: str

    @property
    def result(self) -> Path:
        return self.run_dir / f"{self.instance_id}.json"

    @property
    def log(self) -> Path:
        return self.run_dir / f"{self.instance_id}_docker.log"

    @property
    def transcript(self) -> Path:
        return self.run_dir / self.last_try.transcript

    @property
    def eval_output(self) -> Path:
        return self.run_dir / self.last_try.eval_output

    @property
    def eval_script(self) -> Path:
        return self.run_dir / self.last_try.eval_script

    @property
    def last_try(self) -> TryFiles:
        return try_files(self.instance_id, 0, last=True)

    def feedback(self, number: int) -> Path:
        """The feedback try `number` is given."""
        return self.run_dir / try_files(self.instance_id, number, last=True).feedback

    def keep_try(self, number: int) -> None:
        """Move try `number`'s files (the plain names) to its try names, so the next try's can
        take the plain ones; a file the try did not write is skipped."""
        plain, kept = self.last_try, try_files(self.instance_id, number, last=False)
        for name in ("transcript", "eval_output", "eval_script"):
            source = self.run_dir / getattr(plain, name)
            if source.is_file():
                source.replace(self.run_dir / getattr(kept, name))

    def named(self, name: str) -> Path | None:
        """The file a result file names (a try's transcript, output or feedback) when it is a
        plain file name (is_plain_file_name); None otherwise."""
        return self.run_dir / name if is_plain_file_name(name) else None


def is_plain_file_name(name: str) -> bool:
    """`name` names a file inside the run directory itself: a result file is data written beside
    agent output, so a name it records must not point a reader elsewhere (../, /etc/...)."""
    return bool(name) and Path(name).name == name and name not in (".", "..")


@dataclass(frozen=True)
class RunSettings:
    """run_settings.json: what a run directory's results were made with; a resume must match
    every field, or its verdicts would mix agents, datasets or timeouts (utils/run/plan.py).

    The file is one flat object: the agent's identity and the dataset's hash, then the run
    settings of the resume key (`settings`, by name, in the order utils/run/settings.py declares
    them: the settings marked resume=True). Read tolerantly: a key that joined the file later
    reads as the value every run before it had (JOINED_LATER: `tries` 1); a file that is not a
    JSON object reads as unreadable and differs in every field."""

    agent: str | None
    agent_hash: str | None
    dataset_hash: str | None  # "" when the dataset had no metadata file
    settings: Mapping[str, Any] = field(default_factory=dict)
    readable: bool = True

    def to_json(self) -> dict[str, object]:
        """The file's object, in order."""
        return {"agent": self.agent, "agent_hash": self.agent_hash, "dataset_hash": self.dataset_hash,
                **self.settings}

    @staticmethod
    def from_json(data: Any) -> "RunSettings":
        """From the file's object (any JSON value)."""
        if not isinstance(data, dict):
            return RunSettings(None, None, None, readable=False)
        settings = {key: value for key, value in data.items() if key not in _IDENTITY}
        return RunSettings(data.get("agent"), data.get("agent_hash"), data.get("dataset_hash"),
                           {**JOINED_LATER, **settings})

    def differing(self, saved: "RunSettings") -> list[str]:
        """The fields whose value in `saved` (a run directory's file) is not this one's, sorted."""
        mine, theirs = self.to_json(), saved.to_json()
        # A key missing from the file reads as null; a value of another JSON type (a string
        # "1" for 1, true for 1) differs even where Python would call them equal.
        return sorted(name for name, value in mine.items()
                      if not saved.readable or type(theirs.get(name)) is not type(value) or theirs.get(name) != value)

    @property
    def tries(self) -> int:
        """The run's tries (1 when the file predates them or holds no whole number)."""
        tries = self.settings.get("tries")
        return tries if type(tries) is int and tries >= 1 else 1

    @property
    def attempts(self) -> int:
        """The run's attempts per instance (1 when the file predates them or holds no whole number)."""
        attempts = self.settings.get("attempts")
        return attempts if type(attempts) is int and attempts >= 1 else 1

    def resume_conflicts(self, saved: "RunSettings") -> list[str]:
        """The fields that forbid resuming `saved`'s run with these settings: every differing
        field, except `attempts` when it grows (a resume then adds the missing attempts)."""
        grows = saved.readable and type(saved.settings.get("attempts")) is int and saved.attempts <= self.attempts
        return [name for name in self.differing(saved) if not (name == "attempts" and grows)]

    @property
    def known_dataset_hash(self) -> str | None:
        """The dataset hash when the file holds one (None: absent or empty)."""
        return self.dataset_hash if isinstance(self.dataset_hash, str) and self.dataset_hash else None


_IDENTITY = ("agent", "agent_hash", "dataset_hash")
# Settings that joined run_settings.json after runs were already written, with the value
# every run before them had (not today's default, which may change).
JOINED_LATER: Mapping[str, Any] = {"tries": 1, "attempts": 1}


class RunDirectory:
    """One run directory (`<output_dir>/<name>_0/`) and the run report beside it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @staticmethod
    def of(output_dir: str | Path, name: str) -> "RunDirectory":
        """The run directory of run `name` (--model_name_or_path) under `output_dir`."""
        return RunDirectory(Path(output_dir) / f"{name}{RUN_DIR_SUFFIX}")

    def __repr__(self) -> str:
        return f"RunDirectory({str(self.path)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunDirectory) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    @property
    def report_path(self) -> Path:
        """The harness's run report beside the directory: `<name>_0.0.json`."""
        return self.path.with_name(self.path.name + RUN_REPORT_SUFFIX)

    def report_path_in(self, folder: str | Path) -> Path:
        """The run report kept in another folder (the loops' output_dir, when their pred_dname
        holds the run directory)."""
        return Path(folder) / self.report_path.name

    @property
    def settings_path(self) -> Path:
        return self.path / RUN_SETTINGS_FILE

    def instance(self, instance_id: str) -> InstanceFiles:
        return InstanceFiles(self.path, instance_id)

    def attempt(self, instance_id: str, number: int) -> InstanceFiles:
        """Attempt `number`'s files of an instance: attempt 1's are the instance's own (plain
        names, whose result file holds the instance's combined result once every attempt ran);
        attempt k's the same names in attempt<k>/."""
        folder = self.path if number == 1 else self.path / attempt_dir_name(number)
        return InstanceFiles(folder, instance_id)

    def result_paths(self) -> list[Path]:
        """Every candidate result file (`*.json`, run_settings.json included: readers skip what
        is not a result), sorted; none when the directory does not exist."""
        return sorted(self.path.glob("*.json")) if self.path.is_dir() else []

    def read_settings(self) -> RunSettings | None:
        """run_settings.json as written by this version or an older one; None when there is
        none. A file that is not readable JSON reads as every field unreadable."""
        if not self.settings_path.is_file():
            return None
        try:
            data = json.loads(self.settings_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        return RunSettings.from_json(data)

    def write_settings(self, settings: RunSettings) -> None:
        write_json(self.settings_path, settings.to_json())


class OutputDirectory:
    """A harness output directory: its run directories and report.py's files."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def report_json(self) -> Path:
        return self.path / REPORT_JSON_FILE

    @property
    def report_html(self) -> Path:
        return self.path / REPORT_HTML_FILE

    def run(self, name: str) -> RunDirectory:
        return RunDirectory.of(self.path, name)

    def result_paths(self) -> list[Path]:
        """Every candidate result file of every run directory below, sorted."""
        return sorted(self.path.glob("*/*.json"))


def write_atomic(path: Path, text: str) -> None:
    """`text` at `path`, all or nothing: a reader never sees half a file (resume, report.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", delete=False,
                                     encoding="utf-8") as handle:
        handle.write(text)
        temporary = handle.name
    os.replace(temporary, path)


def write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2) + "\n")
