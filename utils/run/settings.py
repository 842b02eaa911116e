"""The run settings, each declared ONCE, and everything derived from that declaration.

A setting is one field of `RunConfig` below: its name, its type (the annotation), its default,
its help, its check and its role (part of the resume key, its CLI flag, how a list is given)
are written there and nowhere else. From the fields come:

- the command line (`parser()`): `--NAME VALUE` per setting; a list setting takes a comma list
  and may be repeated (`--languages python,go --languages rust`); a bool is a flag;
- `harness(**settings)` (utils/run/flow.py; its explicit signature is checked against these fields
  by tests/test_settings.py), where an unknown keyword is one error naming it;
- the run file (`--config FILE`, `harness(config=FILE)`), described below;
- the frozen `RunConfig` itself, and the resume key (`RESUME_SETTINGS`: the fields marked
  `resume=True`, written to run_settings.json; a resume must match them);
- the `--help` text, and the defaults the docs quote.

`ALIASES` names other spellings of a setting (or of one key of a mapping setting), accepted
wherever a setting name is: `ray_address=X` is `backend_options={"address": X}`. The keywords of
the loops this harness serves unchanged (HyperAgents' and DGM's `harness(test_task_list=...,
dataset_path=...)`) are rows there too; their own settings (`num_evals_parallel`, `pred_dname`, `root_dir`)
are fields below with the meaning those loops give them, and `num_evals` is `attempts`.

Precedence: a value given directly (a flag, a keyword of harness()) beats the run file, which
beats the default. A mapping setting (`backend_options`) merges key by key in the same order.

The run file
------------
TOML (read with tomllib), or YAML when its name ends in .yaml or .yml. Its top level holds any
run setting by its name (or an alias), with a value of the setting's type: a number, a string,
a boolean, a list (or a comma-separated string) for list settings, a table for
`backend_options`; YAML's null is None for settings that may be None. The command-only options
(`--config`, `--build_images_only`, `--prune_caches`, `--base_image`) are not run settings and
are refused there. Every value is checked exactly as on the command line before anything
starts; an unknown key, a value of the wrong type or a failing check is one error line naming
the file and the key (the CLI exits 2, harness() raises ConfigFileError):

    # run.toml
    subset = ["small", "medium"]
    model = "gpt-4o-mini"
    max_workers = 8
    tries = 2
    [backend_options]
    address = "auto"
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import re
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..agents.layouts import LAYOUTS
from ..checkout import DEFAULT_AGENT_DIR, DEFAULT_DATASET_DIR, DEFAULT_OUTPUT_DIR
from ..records.dataset import METADATA_FILENAME
from ..records.run_dir import RunDirectory
from ..seam.registry import BACKENDS, is_backend
from .stages import Stage, StageError, parse_stages


class HarnessError(RuntimeError):
    """A setting or input the run cannot start with."""


class ConfigFileError(HarnessError):
    """A run file that cannot be read or holds a setting the run cannot start with (one line
    naming the file and the key)."""


DEFAULT_DISK = "10g"  # per container: what an agent or a test run may write
DEFAULT_PASS_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_ORG_ID", "ANTHROPIC_API_KEY",
                    "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY",
                    "DEEPSEEK_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AGENT_MAX_SECONDS",
                    # The default agent's settings (agent/README.md):
                    "AGENT_MAX_STEPS", "AGENT_MAX_WALL_TIME", "AGENT_MAX_TOKENS", "AGENT_CALL_TIMEOUT",
                    "AGENT_COMMAND_TIMEOUT", "AGENT_MAX_RETRIES", "AGENT_RETRY_BASE_DELAY", "AGENT_OUTPUT_LIMIT")
AGENT_NETWORKS = ("bridge", "host", "none")
AGENT_LAYOUT_CHOICES = ("auto", "own", *LAYOUTS)
TRIES = (1, 2)  # Aider's leaderboard reports pass_rate_1 and pass_rate_2
_SIZE = re.compile(r"[1-9][0-9]*(?:\.[0-9]+)?[bkmg]?", re.I)


# --- checks: each returns what is wrong with a well-typed value, or None ---------------------------

Check = Callable[[Any], "str | None"]


def _at_least(lowest: int, unit: str = "") -> Check:
    return lambda value: None if value >= lowest else f"must be a whole number{unit} >= {lowest}"


def _one_of(choices: Callable[[], Sequence[str]]) -> Check:
    # A callable: the backends registered when the run starts (tests register a fake one).
    return lambda value: None if value in choices() else f"must be one of {', '.join(sorted(choices()))}"


def _backend(value: str) -> str | None:
    # Asked when the run starts: tests register backends of their own.
    return None if is_backend(value) else (f"must be one of {', '.join(sorted(BACKENDS))} "
                                           "or a dotted module path")


def _num_samples(value: int) -> str | None:
    return None if value >= -1 else "must be -1 (all) or >= 0"


def _cpus(value: float) -> str | None:
    cores = os.cpu_count() or 1
    return None if 0 < value <= cores else f"must be above 0 and at most this machine's {cores} cores"


def _memory(value: str) -> str | None:
    return None if _SIZE.fullmatch(value) else "must be a size such as 512m or 4g"


def _disk(value: str) -> str | None:
    fits = _SIZE.fullmatch(value) and size_in_bytes(value) >= 64 << 20
    return None if fits else "must be a size of at least 64m such as 10g"


def _tries(value: int) -> str | None:
    return None if value in TRIES else "must be 1 or 2 (Aider's two-try protocol)"


def _option_names(options: Mapping[str, str]) -> str | None:
    bad = [key for key in options if not key.isidentifier()]
    return f"needs KEY=VALUE with KEY a name, got key {bad[0]!r}" if bad else None


def size_in_bytes(size: str) -> int:
    """'512m', '10g', '1.5g', '4096' (bytes) -> bytes."""
    units = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = str(size).strip().lower()
    factor = units.get(text[-1], None)
    return int(float(text[:-1]) * factor) if factor else int(float(text))


def _dataset_dir(value: Any) -> Path:
    """The prepared dataset directory, or its metadata JSON (the loops' `dataset_path`)."""
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"the dataset must be a path, got {value!r}")
    path = Path(value)
    if path.suffix == ".json":
        if path.name != METADATA_FILENAME:
            raise ValueError(f"the dataset {path} must be a prepared dataset directory or its {METADATA_FILENAME}")
        # The checkout's own (upstream's default dataset_path) links to the default dataset's.
        return path.resolve().parent if path.is_symlink() else path.parent
    return path


def _stages(value: Any) -> tuple[Stage, ...]:
    """--stages: 'small:0.4,medium' or a sequence of Stage (harness())."""
    if isinstance(value, str):
        return parse_stages(value)
    if isinstance(value, (list, tuple)) and all(isinstance(stage, Stage) for stage in value):
        return tuple(value)
    raise StageError("stages must be a string such as 'small:0.4,medium' or a list of Stage")


# --- the declaration ---------------------------------------------------------------------------------

@dataclass(kw_only=True, frozen=True)
class Setting:
    """One run setting as declared on its RunConfig field; `name`, `kind` and `default` are
    filled in from the field itself (see SETTINGS)."""
    help: str
    check: Check | None = None
    parse: Callable[[Any], Any] | None = None  # replaces the type-driven conversion (raises ValueError)
    resume: bool = False       # part of the resume key (run_settings.json)
    flag: str | None = None    # its command-line flag, when not --NAME (a bool whose flag turns it off)
    metavar: str | None = None
    default_text: str | None = None  # --help's account of the default, when not the value itself
    name: str = ""
    kind: "Kind | None" = None
    default: Any = None


def setting(default: Any = dataclasses.MISSING, *, default_factory: Callable[[], Any] | None = None,
            **declared: Any) -> Any:
    """A RunConfig field declared as a setting (Setting's keywords: help, check, resume, ...)."""
    metadata = {"setting": Setting(**declared)}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def _run_name() -> str:
    return time.strftime("%Y%m%d_%H%M%S")


@dataclass(kw_only=True, frozen=True)
class RunConfig:
    """Every setting of one run, typed and checked per setting before anything starts (the
    checks that involve several settings: utils/run/plan.py check_config). The field order is the
    order of --help and of run_settings.json's resume keys."""
    subset: tuple[str, ...] = setting(
        (), help="small | medium | full | samples | any subsets/NAME.json, in order",
        default_text="the command line: the ids of --instance_ids, else every instance --predictions grades, "
                     "else small; harness(): every instance")
    stages: tuple[Stage, ...] | None = setting(
        None, parse=_stages, metavar="SUBSET[:THRESHOLD],...",
        help="staged evaluation, e.g. small:0.4,medium: the next stage (with the earlier stages' instances) runs "
             "only if the accuracy so far reaches the threshold; excludes subset, instance_ids, num_samples, "
             "predictions")
    num_samples: int = setting(-1, check=_num_samples, help="the first N selected instances (-1: all)")
    max_workers: int = setting(5, check=_at_least(1), help="instances run at once")
    model_name_or_path: str = setting(default_factory=_run_name, default_text="a timestamp",
                                      help="the run's name: its run directory and run report in output_dir are named after it")
    model_patch_paths: tuple[Path, ...] = setting((), help="patches applied in order to a copy of the agent")
    output_dir: Path = setting(DEFAULT_OUTPUT_DIR, default_text=f"{DEFAULT_OUTPUT_DIR}, outside the checkout",
                               help="where the run report is written, and the run directory unless pred_dname "
                                    "says otherwise")
    pred_dname: Path | None = setting(None, default_text="output_dir",
                                      help="where the run directory (one folder of files per instance) is written "
                                           "(HyperAgents' and DGM's pred_dname)")
    dataset: Path = setting(DEFAULT_DATASET_DIR, parse=_dataset_dir, default_text=f"{DEFAULT_DATASET_DIR}, outside the checkout",
                            help="the prepared dataset directory, or its polyglot_benchmark_metadata.json")
    instance_ids: tuple[str, ...] | None = setting(None, help="instances to run (after the subsets)")
    languages: tuple[str, ...] | None = setting(None, help="keep only these languages' instances")
    agent: str = setting(str(DEFAULT_AGENT_DIR), default_text="the default agent, agent/ in the checkout", help="oracle | null | an agent directory")
    agent_layout: str = setting("auto", check=_one_of(lambda: AGENT_LAYOUT_CHOICES),
                                help="own (--agent: a directory with run_task_agent.py) | hyperagents | dgm (the task "
                                     "agent of a host repository at root_dir) | auto: hyperagents or dgm when "
                                     "root_dir (else the current directory) holds that repository's task agent and "
                                     "--agent is not given, else own")
    root_dir: Path | None = setting(None, default_text="the current directory",
                                    help="the host repository whose task agent runs (agent_layout hyperagents | dgm)")
    # test_timeout .. model: the order of run_settings.json's keys, kept as it was.
    test_timeout: int = setting(120, check=_at_least(1, " of seconds"), resume=True,
                                help="seconds a test run may take")
    agent_timeout: int = setting(600, check=_at_least(1, " of seconds"), resume=True,
                                 help="seconds an agent run may take")
    model: str | None = setting(None, resume=True, help="passed to the agent as --model")
    predictions: Path | None = setting(None, help="SWE-bench style JSONL of patches to grade (no agent)")
    cpus: float | None = setting(None, check=_cpus, default_text="all cores", help="CPUs per container")
    memory: str | None = setting(None, check=_memory, default_text="RAM / workers, at most 8g",
                                 help="memory per container, e.g. 4g")
    pids_limit: int = setting(2048, check=_at_least(64), help="processes per container")
    disk: str | None = setting(DEFAULT_DISK, check=_disk,
                               help="disk each container may write, e.g. 10g; past it the agent or test run is "
                                    "stopped (reason recorded)")
    pass_env: tuple[str, ...] | None = setting(None, default_text=f"{','.join(DEFAULT_PASS_ENV[:4])}, ...",
                                               help="environment variables passed to the agent")
    agent_network: str = setting("bridge", check=_one_of(lambda: AGENT_NETWORKS),
                                 help="bridge (the run's own network) | host | none")
    ca_bundle: str | None = setting(None, help="PEM bundle installed into every image's trust store "
                                               "(env POLYGLOT_CA_BUNDLE)")
    strict: bool = setting(False, help="refuse a dataset that lacks what a grading check needs (prepared with "
                                       "--fast: no expected tests or canaries recorded) instead of grading it "
                                       "with those checks off")
    force: bool = setting(False, help="re-run finished instances")
    progress: bool = setting(True, flag="--no_progress", help="a progress bar on stderr (--no_progress: none)")
    backend: str = setting("docker", check=_backend,
                           help="where instances run: a backend in utils/backends/ by name, or a dotted module path")
    backend_options: dict[str, str] = setting(
        default_factory=dict, check=_option_names, flag="--backend_option", metavar="KEY=VALUE",
        default_text="none", help="an option of the backend (repeatable), e.g. address=HOST:PORT for ray")
    tries: int = setting(1, check=_tries, resume=True,
                         help="1 or 2: Aider's two-try protocol, an unresolved or empty_patch instance gets a "
                              "second agent run from its working tree with the trimmed test output; the report "
                              "adds pass_rate_1 and pass_rate_2")
    attempts: int = setting(1, check=_at_least(1), resume=True,
                            help="independent agent runs of each instance, each graded on its own (HyperAgents' "
                                 "num_evals); with more than 1, accuracy_score is the mean over attempts and the "
                                 "report adds pass@k, pass^k and a 95 percent interval; raising it on a finished run "
                                 "adds the missing attempts")
    num_evals_parallel: int = setting(1, check=_at_least(1), help="attempts of one instance run at once "
                                                                  "(HyperAgents' and DGM's name)")
    variants: bool = setting(False,
                             help="plant the dataset's fresh variants (real tests with one input changed, expected "
                                  "values from the reference) among the hidden tests; the verdict is unchanged, each "
                                  "result adds resolved_on_variants and the report the memorization gap")

    @property
    def name(self) -> str:
        """The run's name (model_name_or_path)."""
        return self.model_name_or_path

    @property
    def run_dir(self) -> Path:
        """The run directory, in pred_dname when given, else in output_dir."""
        return RunDirectory.of(self.pred_dname or self.output_dir, self.name).path

    @property
    def report_path(self) -> Path:
        """The run report, in output_dir: where both loops read run reports."""
        return RunDirectory(self.run_dir).report_path_in(self.output_dir)

    def environment(self, also_by_default: Sequence[str] = ()) -> dict[str, str]:
        """The variables passed to the agent (those set on this machine): pass_env, else the
        default list plus `also_by_default` (what a host loop's agent layout passes)."""
        names = self.pass_env if self.pass_env is not None else (*DEFAULT_PASS_ENV, *also_by_default)
        return {key: os.environ[key] for key in names if key in os.environ}


@dataclass(frozen=True)
class Alias:
    """Another name of a setting (`key`: of one key of a mapping setting)."""
    name: str
    setting: str
    key: str | None = None
    help: str = ""


ALIASES: tuple[Alias, ...] = (
    Alias("ray_address", "backend_options", "address", help="--backend ray: the cluster, auto | HOST:PORT "
                                                            "(default $POLYGLOT_RAY_ADDRESS, else auto)"),
    Alias("test_task_list", "instance_ids", help="HyperAgents' and DGM's name of the instance ids to run"),
    Alias("dataset_path", "dataset", help="HyperAgents' and DGM's name: the metadata JSON of the prepared dataset"),
    Alias("num_evals", "attempts", help="HyperAgents' and DGM's name of --attempts"),
)


@dataclass(frozen=True)
class CommandOption:
    """A command-line option that is not a run setting (an action, or an image-build input)."""
    name: str
    help: str
    is_flag: bool = True


COMMAND_OPTIONS: tuple[CommandOption, ...] = (
    CommandOption("config", "a run file (TOML, or YAML: .yaml/.yml) holding run settings by name; flags "
                            "override it", is_flag=False),
    CommandOption("build_images_only", "build or verify the images of every language and exit"),
    CommandOption("prune_caches", "remove every agent layer image and shared build-cache volume (both are rebuilt "
                                  "on demand) and exit; language images stay"),
    CommandOption("base_image", "--build_images_only: base image tag (default debian:bookworm-slim)", is_flag=False),
)


# --- types -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Kind:
    """A setting's type, read from its annotation: a scalar, a tuple of scalars (a list setting)
    or dict[str, str] (a mapping setting); `optional`: None is a value."""
    scalar: type
    optional: bool = False
    many: bool = False
    mapping: bool = False

    @staticmethod
    def of(annotation: Any) -> "Kind":
        args = typing.get_args(annotation)
        if type(None) in args:
            inner = Kind.of(next(arg for arg in args if arg is not type(None)))
            return dataclasses.replace(inner, optional=True)
        origin = typing.get_origin(annotation)
        if origin is tuple:
            return Kind(args[0], many=True)
        if origin is dict:
            return Kind(str, mapping=True)
        return Kind(annotation)

    def describe(self) -> str:
        names = {int: "a whole number", float: "a number", str: "a string", bool: "true or false",
                 Path: "a path", Stage: "a stage"}
        text = (f"a list of {names[self.scalar][2:]}s" if self.many else
                "a table of names to strings" if self.mapping else names[self.scalar])
        return text + (" or none" if self.optional else "")


def _settings_of(config_class: type) -> tuple[Setting, ...]:
    hints = typing.get_type_hints(config_class)
    declared = []
    for config_field in dataclasses.fields(config_class):
        default = (config_field.default if config_field.default_factory is dataclasses.MISSING
                   else config_field.default_factory)
        declared.append(dataclasses.replace(config_field.metadata["setting"], name=config_field.name,
                                            kind=Kind.of(hints[config_field.name]), default=default))
    return tuple(declared)


SETTINGS: dict[str, Setting] = {declared.name: declared for declared in _settings_of(RunConfig)}
RESUME_SETTINGS: tuple[str, ...] = tuple(name for name, declared in SETTINGS.items() if declared.resume)
_ALIASES: dict[str, Alias] = {alias.name: alias for alias in ALIASES}


def default_of(name: str) -> Any:
    """A setting's default value (a fresh one for a default made by a factory)."""
    default = SETTINGS[name].default
    return default() if callable(default) else default


# --- from given values to a RunConfig ----------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    """Where given values come from, for the error line: the command line or harness()
    (a value named as its flag, as ever: "--max_workers") or a run file ("run.toml: max_workers")."""
    file: Path | None = None

    def named(self, name: str) -> str:
        declared = SETTINGS.get(name)
        flag = declared.flag if declared is not None and declared.flag else as_flag(name)
        return f"{self.file}: {name}" if self.file is not None else flag

    def unknown(self, name: str) -> str:
        return f"{self.file}: " * (self.file is not None) + f"unknown setting {name!r}{_did_you_mean(name)}"


def as_flag(name: str) -> str:
    return f"--{name}"


def _converted(declared: Setting, value: Any, where: str, from_text: bool) -> Any:
    """`value` as the setting's type, checked; HarnessError (one line, naming `where`) if not."""
    if declared.parse is not None and value is not None:
        try:
            value = declared.parse(value)
        except (StageError, ValueError) as error:
            # The parser's message names the flag already; a run file's key is named before it.
            raise HarnessError(str(error) if where.startswith("--") else f"{where}: {error}") from None
    else:
        value = _typed(declared.kind, value, where, from_text)
    problem = declared.check(value) if declared.check is not None and value is not None else None
    if problem:
        raise HarnessError(f"{where} {problem}, got {_shown(value)!r}")
    return value


def _shown(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


def _typed(kind: Kind, value: Any, where: str, from_text: bool) -> Any:
    if value is None and kind.optional:
        return None
    try:
        if kind.mapping:
            return _mapping(value, from_text)
        if kind.many:
            return _many(kind.scalar, value, from_text)
        return _scalar(kind.scalar, value, from_text)
    except (TypeError, ValueError):
        wanted = "KEY=VALUE" if kind.mapping and from_text else kind.describe()
        raise HarnessError(f"{where} must be {wanted}, got {_shown(value)!r}") from None


def _scalar(scalar: type, value: Any, from_text: bool) -> Any:
    if from_text and isinstance(value, str) and scalar in (int, float):
        return scalar(value)
    if scalar is Path and isinstance(value, (str, os.PathLike)):
        return Path(value)
    if scalar is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, scalar) and not (isinstance(value, bool) and scalar is not bool):
        return value
    raise TypeError(value)


def _many(scalar: type, value: Any, from_text: bool) -> tuple:
    """A comma list ('a,b'), a list of them (a repeated flag), or a list / tuple of items."""
    if isinstance(value, str):
        items: list[Any] = [item.strip() for item in value.split(",") if item.strip()]
    elif isinstance(value, (list, tuple)):
        items = ([item.strip() for text in value for item in str(text).split(",") if item.strip()] if from_text
                 else list(value))
    else:
        raise TypeError(value)
    return tuple(_scalar(scalar, item, from_text) for item in items)


def _mapping(value: Any, from_text: bool) -> dict[str, str]:
    """KEY=VALUE texts (a repeated flag) or a mapping of names to scalars."""
    if from_text:
        pairs = [text.partition("=") for text in value]
        if any(not separator for _, separator, _ in pairs):
            raise ValueError(value)
        return {key.strip(): option for key, _, option in pairs}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise TypeError(value)
    if not all(isinstance(option, (str, int, float)) and not isinstance(option, bool) for option in value.values()):
        raise TypeError(value)
    return {key: str(option) for key, option in value.items()}


def _did_you_mean(name: str) -> str:
    close = difflib.get_close_matches(name, [*SETTINGS, *_ALIASES], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def checked(given: Mapping[Any, Any], source: Source = Source(), from_text: bool = False) -> dict[str, Any]:
    """Given settings (by name or alias) as their types, each checked; HarnessError names the
    first bad one. None for a setting that cannot be None means its default (harness() took
    None for "not given" before it took a run file)."""
    values: dict[str, Any] = {}
    for name, value in given.items():
        alias = _ALIASES.get(str(name))
        if alias is None and name not in SETTINGS:
            raise HarnessError(source.unknown(str(name)))
        target = SETTINGS[alias.setting if alias else name]
        if value is None and not target.kind.optional:
            continue
        if alias is not None and alias.key is not None:  # one key of a mapping setting
            value, from_text_here = {alias.key: value}, False
        else:
            from_text_here = from_text
        converted = _converted(target, value, source.named(str(name)), from_text_here)
        if target.name in values:
            both = set(values[target.name]) & set(converted) if target.kind.mapping else {target.name}
            if both:
                raise HarnessError(f"{source.named(str(name))}: {sorted(both)[0]} given twice")
            converted = {**values[target.name], **converted}
        values[target.name] = converted
    return values


def merged(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Checked settings, later layers winning; a mapping setting merges key by key."""
    values: dict[str, Any] = {}
    for layer in layers:
        for name, value in layer.items():
            values[name] = ({**values[name], **value} if SETTINGS[name].kind.mapping and name in values
                            else value)
    return values


def run_config(values: Mapping[str, Any]) -> RunConfig:
    """The frozen config of checked settings (merged()), the rest at their defaults."""
    return RunConfig(**values)


def resolve(config_file: str | os.PathLike | None, given: Mapping[str, Any], from_text: bool = False) -> dict[str, Any]:
    """The settings a run file and the directly given ones (flags or keywords) make together,
    checked; the given ones win. Raises ConfigFileError for the file, HarnessError otherwise."""
    from_file = read_config_file(Path(config_file)) if config_file is not None else {}
    return merged(from_file, checked(given, from_text=from_text))


# --- the run file ------------------------------------------------------------------------------------

def read_config_file(path: Path) -> dict[str, Any]:
    """The checked settings of a run file (format: this module's docstring)."""
    raw = _parsed_file(path)
    if not isinstance(raw, dict):
        raise ConfigFileError(f"{path}: the top level must be a table of settings")
    command_only = [name for name in raw if name in {option.name for option in COMMAND_OPTIONS}]
    if command_only:
        raise ConfigFileError(f"{path}: {command_only[0]}: a command-line option, not a run setting")
    try:
        return checked(raw, Source(path))
    except ConfigFileError:
        raise
    except HarnessError as error:
        raise ConfigFileError(str(error)) from None


def _parsed_file(path: Path) -> Any:
    try:
        text = path.read_bytes()
    except OSError as error:
        raise ConfigFileError(f"{path}: cannot read the run file ({error.strerror or error})") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        return _yaml(path, text)
    return _toml(path, text)


def _toml(path: Path, text: bytes) -> Any:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        raise ConfigFileError(f"{path}: a TOML run file needs Python >= 3.11 (or use .yaml)") from None
    try:
        return tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigFileError(f"{path}: not valid TOML: {_one_line(error)}") from None


def _yaml(path: Path, text: bytes) -> Any:
    import yaml  # only for .yaml run files

    try:
        return yaml.safe_load(text.decode("utf-8")) or {}
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ConfigFileError(f"{path}: not valid YAML: {_one_line(error)}") from None


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())


# --- the command line --------------------------------------------------------------------------------

def parser(description: str | None = None) -> argparse.ArgumentParser:
    """The command line, from the declarations: only the options given end up in the namespace
    (their defaults are the run file's or the declaration's, applied by resolve())."""
    cli = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
                                  argument_default=argparse.SUPPRESS)
    for declared in SETTINGS.values():
        _add_setting(cli, declared)
    for alias in ALIASES:
        cli.add_argument(as_flag(alias.name), metavar="VALUE",
                         help=f"{alias.help} (= {SETTINGS[alias.setting].flag or as_flag(alias.setting)} "
                              f"{alias.key}=VALUE)" if alias.key else f"{alias.help} (= --{alias.setting})")
    for option in COMMAND_OPTIONS:
        if option.is_flag:
            cli.add_argument(as_flag(option.name), action="store_true", help=option.help)
        else:
            cli.add_argument(as_flag(option.name), help=option.help)
    return cli


def _add_setting(cli: argparse.ArgumentParser, declared: Setting) -> None:
    flag, kind = declared.flag or as_flag(declared.name), declared.kind
    help_text = f"{declared.help} (default: {_default_text(declared)})"
    if kind.scalar is bool and not kind.many:
        action = "store_false" if declared.default else "store_true"
        cli.add_argument(flag, dest=declared.name, action=action, help=declared.help)
    elif (kind.many and declared.parse is None) or kind.mapping:
        cli.add_argument(flag, dest=declared.name, action="append", metavar=declared.metavar or "A,B",
                         help=help_text + ("" if kind.mapping else "; a comma list, repeatable"))
    else:
        cli.add_argument(flag, dest=declared.name, metavar=declared.metavar, help=help_text)


def _default_text(declared: Setting) -> str:
    if declared.default_text is not None:
        return declared.default_text
    default = declared.default
    return "none" if default is None or default == () else str(default)


def given_on_command_line(namespace: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the settings the flags give, the command options given)."""
    commands = {option.name for option in COMMAND_OPTIONS}
    given = vars(namespace)
    return ({name: value for name, value in given.items() if name not in commands},
            {name: value for name, value in given.items() if name in commands})
