"""Each run setting is declared once (utils/run/settings.py) and reaches the run the same way from
the command line, harness()'s keywords and a run file (--config); precedence flag > file >
default; a bad run file is one line, exit 2, nothing created; the resume key and the backend
options come from the declarations. No Docker needed: the run itself is replaced by a recorder."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.run import cli as cli_module
from polyglot_harness.utils.run import flow as run_module
from polyglot_harness.utils.run import plan as plan_module
from polyglot_harness.utils.run.provision import open_backend
from polyglot_harness.utils.run.stages import Stage
from polyglot_harness.utils.seam import registry
from polyglot_harness.utils.seam.agent import PreparedAgent
from polyglot_harness.utils.seam.errors import SandboxError
from polyglot_harness.utils.run.settings import (ALIASES, RESUME_SETTINGS, SETTINGS, ConfigFileError, HarnessError,
                                                 default_of, parser, run_config)

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# setting -> (flags, keyword value, TOML value, the RunConfig value): a value unlike the default.
SAMPLES = {
    "subset": (["--subset", "small", "--subset", "medium"], ["small", "medium"], '["small", "medium"]',
               ("small", "medium")),
    "stages": (["--stages", "small:0.4,medium"], "small:0.4,medium", '"small:0.4,medium"',
               (Stage("small", 0.4), Stage("medium"))),
    "num_samples": (["--num_samples", "3"], 3, "3", 3),
    "max_workers": (["--max_workers", "2"], 2, "2", 2),
    "model_name_or_path": (["--model_name_or_path", "gen_3"], "gen_3", '"gen_3"', "gen_3"),
    "model_patch_paths": (["--model_patch_paths", "a.diff,b.diff"], ["a.diff", "b.diff"], '"a.diff,b.diff"',
                          (Path("a.diff"), Path("b.diff"))),
    "output_dir": (["--output_dir", "out"], "out", '"out"', Path("out")),
    "dataset": (["--dataset", "ds"], Path("ds"), '"ds"', Path("ds")),
    "instance_ids": (["--instance_ids", "go__a,rust__b"], ("go__a", "rust__b"), '["go__a", "rust__b"]',
                     ("go__a", "rust__b")),
    "languages": (["--languages", "go"], ["go"], '["go"]', ("go",)),
    "agent": (["--agent", "oracle"], "oracle", '"oracle"', "oracle"),
    "test_timeout": (["--test_timeout", "30"], 30, "30", 30),
    "agent_timeout": (["--agent_timeout", "60"], 60, "60", 60),
    "model": (["--model", "m"], "m", '"m"', "m"),
    "predictions": (["--predictions", "p.jsonl"], "p.jsonl", '"p.jsonl"', Path("p.jsonl")),
    "cpus": (["--cpus", "0.5"], 0.5, "0.5", 0.5),
    "memory": (["--memory", "2g"], "2g", '"2g"', "2g"),
    "pids_limit": (["--pids_limit", "128"], 128, "128", 128),
    "disk": (["--disk", "1g"], "1g", '"1g"', "1g"),
    "pass_env": (["--pass_env", "A,B"], ["A", "B"], '["A", "B"]', ("A", "B")),
    "agent_network": (["--agent_network", "none"], "none", '"none"', "none"),
    "ca_bundle": (["--ca_bundle", "ca.pem"], "ca.pem", '"ca.pem"', "ca.pem"),
    "force": (["--force"], True, "true", True),
    "strict": (["--strict"], True, "true", True),
    "progress": (["--no_progress"], False, "false", False),
    "backend": (["--backend", "ray"], "ray", '"ray"', "ray"),
    "backend_options": (["--backend_option", "address=auto"], {"address": "auto"}, '{ address = "auto" }',
                        {"address": "auto"}),
    "tries": (["--tries", "2"], 2, "2", 2),
    "pred_dname": (["--pred_dname", "preds"], "preds", '"preds"', Path("preds")),
    "agent_layout": (["--agent_layout", "dgm"], "dgm", '"dgm"', "dgm"),
    "root_dir": (["--root_dir", "host"], "host", '"host"', Path("host")),
    "attempts": (["--attempts", "3"], 3, "3", 3),
    "variants": (["--variants"], True, "true", True),
    "num_evals_parallel": (["--num_evals_parallel", "5"], 5, "5", 5),
}


class Captured(Exception):
    pass


@pytest.fixture
def captured(monkeypatch) -> list:
    """The RunConfig harness() or the command line would run; nothing runs."""
    configs: list = []

    def capture(config):
        configs.append(config)
        raise Captured()

    monkeypatch.setattr(run_module, "run", capture)
    monkeypatch.setattr(cli_module, "run", capture)
    return configs


def through_cli(arguments: list[str], captured: list):
    with pytest.raises(Captured):
        cli_module.main(arguments)
    return captured.pop()


def through_harness(captured: list, **keywords):
    with pytest.raises(Captured):
        run_module.harness(**keywords)
    return captured.pop()


def test_every_setting_has_a_sample_here():
    assert set(SAMPLES) == set(SETTINGS), "a new setting needs a row in SAMPLES"


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_every_setting_means_the_same_from_flags_keywords_and_a_run_file(name, captured, tmp_path):
    flags, keyword, toml_value, expected = SAMPLES[name]
    if name != "model_name_or_path":  # its default is a timestamp
        assert expected != default_of(name), "a sample must differ from the default to show anything"
    run_file = tmp_path / "run.toml"
    run_file.write_text(f"{name} = {toml_value}\n")
    from_flags = through_cli(flags, captured)
    from_keyword = through_harness(captured, **{name: keyword})
    from_file = through_harness(captured, config=run_file)
    from_file_on_the_command_line = through_cli(["--config", str(run_file)], captured)
    for config in (from_flags, from_keyword, from_file, from_file_on_the_command_line):
        assert getattr(config, name) == expected
        assert type(getattr(config, name)) is type(expected)


def test_precedence_is_flag_then_run_file_then_default(captured, tmp_path):
    run_file = tmp_path / "run.toml"
    run_file.write_text('max_workers = 3\ntries = 2\nmodel = "from-file"\n'
                        '[backend_options]\naddress = "file-host:1"\nnamespace = "polyglot"\n')
    config = through_cli(["--config", str(run_file), "--max_workers", "4", "--ray_address", "flag-host:2"], captured)
    assert (config.max_workers, config.tries, config.model) == (4, 2, "from-file")
    assert config.backend_options == {"address": "flag-host:2", "namespace": "polyglot"}, "merged key by key"
    assert config.test_timeout == default_of("test_timeout") and config.subset == ("small",)
    config = through_harness(captured, config=str(run_file), max_workers=4, ray_address="kw-host:3")
    assert (config.max_workers, config.tries, config.model) == (4, 2, "from-file")
    assert config.backend_options == {"address": "kw-host:3", "namespace": "polyglot"}
    assert config.subset == (), "harness() without a subset selects every instance, as it always did"


def test_yaml_run_file_is_read_like_toml(captured, tmp_path):
    run_file = tmp_path / "run.yaml"
    run_file.write_text("subset: [small, medium]\nmax_workers: 3\ncpus: 1\ndisk: null\n"
                        "backend_options:\n  address: auto\n")
    config = through_harness(captured, config=run_file)
    assert (config.subset, config.max_workers, config.cpus, config.disk) == (("small", "medium"), 3, 1.0, None)
    assert config.backend_options == {"address": "auto"}


def test_command_line_default_subset_still_depends_on_the_other_settings(captured, tmp_path):
    assert through_cli([], captured).subset == ("small",)
    assert through_cli(["--predictions", "p.jsonl"], captured).subset == ("full",)
    assert through_cli(["--instance_ids", "go__a"], captured).subset == ()
    run_file = tmp_path / "run.toml"
    run_file.write_text('instance_ids = ["go__a"]\n')
    assert through_cli(["--config", str(run_file)], captured).subset == (), "the run file counts as given"


# --- bad run files --------------------------------------------------------------------------------

@pytest.mark.parametrize("name, content, says", [
    ("unknown.toml", "max_worker = 3\n", "max_worker"),
    ("type.toml", 'max_workers = "3"\n', "max_workers must be a whole number"),
    ("check.toml", "max_workers = 0\n", "max_workers must be a whole number >= 1"),
    ("list.toml", "languages = 3\n", "languages must be a list of strings"),
    ("stages.toml", 'stages = "small:2"\n', "stages: --stages: threshold"),
    ("command.toml", "build_images_only = true\n", "build_images_only: a command-line option"),
    ("broken.toml", "max_workers = [\n", "not valid TOML"),
    ("broken.yaml", "max_workers: [\n", "not valid YAML"),
    ("list.yaml", "- max_workers\n", "the top level must be a table"),
    ("missing.toml", None, "cannot read the run file"),
])
def test_bad_run_file_is_one_line_naming_file_and_key_exit_2_nothing_created(name, content, says, tmp_path):
    run_file = tmp_path / name
    if content is not None:
        run_file.write_text(content)
    output_dir = tmp_path / "runs"
    completed = subprocess.run([sys.executable, "harness.py", "--agent", "oracle", "--output_dir", str(output_dir),
                                "--config", str(run_file)], cwd=PROJECT_ROOT, capture_output=True, text=True,
                               timeout=60)
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert completed.stderr.startswith(f"error: {run_file}") and says in completed.stderr, completed.stderr
    assert not output_dir.exists()
    with pytest.raises(ConfigFileError, match=str(run_file)):
        run_module.harness(config=run_file, agent="oracle", output_dir=output_dir)
    assert not output_dir.exists()


def test_unreadable_run_file_is_one_error(tmp_path):
    if os.geteuid() == 0:
        directory = tmp_path / "run.toml"  # root reads any file: a directory is unreadable as a file
        directory.mkdir()
        run_file = directory
    else:
        run_file = tmp_path / "run.toml"
        run_file.write_text("max_workers = 2\n")
        run_file.chmod(0)
    with pytest.raises(ConfigFileError, match="cannot read the run file"):
        run_module.harness(config=run_file, agent="oracle", output_dir=tmp_path / "runs")


def test_unknown_keyword_is_one_error_naming_it():
    with pytest.raises(HarnessError, match="unknown setting 'max_worker'; did you mean 'max_workers'"):
        run_module.harness(max_worker=3)


def test_alias_and_its_setting_given_together_is_an_error(tmp_path):
    with pytest.raises(HarnessError, match="address given twice"):
        run_module.harness(ray_address="a:1", backend_options={"address": "b:2"})


# --- what is derived from the declarations ------------------------------------------------------

def test_harness_signature_is_the_declared_settings_and_aliases():
    parameters = inspect.signature(run_module.harness).parameters
    keywords = [name for name, parameter in parameters.items() if parameter.kind is parameter.KEYWORD_ONLY]
    assert keywords == ["config", *SETTINGS, *(alias.name for alias in ALIASES)], "same names, same order"
    assert all(parameters[name].default is run_module.UNSET for name in keywords[1:]), \
        "defaults live in utils/run/settings.py only"


def test_every_default_passes_its_own_check():
    for name, declared in SETTINGS.items():
        value = default_of(name)
        assert declared.check is None or value is None or declared.check(value) is None, name


def test_help_lists_every_setting_with_its_default():
    text = " ".join(parser().format_help().split())
    for declared in SETTINGS.values():
        assert (declared.flag or f"--{declared.name}") in text
    assert "--tries TRIES 1 or 2" in text and "(default: 1)" in text
    assert "--ray_address" in text and "--config" in text


def test_resume_key_is_the_settings_declared_resume(tmp_path, monkeypatch):
    assert RESUME_SETTINGS == ("test_timeout", "agent_timeout", "model", "tries", "attempts")
    agent = PreparedAgent(name="oracle", tree=None, agent_hash="oracle")
    config = run_config({"model": "m", "tries": 2, "max_workers": 7, "dataset": tmp_path})
    key = plan_module.resume_key(agent, config)
    assert list(key.to_json()) == ["agent", "agent_hash", "dataset_hash", *RESUME_SETTINGS], \
        "run_settings.json keeps its keys and their order"
    assert key.to_json()["tries"] == 2 and key.to_json()["model"] == "m"
    monkeypatch.setattr(plan_module, "RESUME_SETTINGS", (*RESUME_SETTINGS, "max_workers"))
    assert plan_module.resume_key(agent, config).to_json()["max_workers"] == 7, \
        "a setting declared resume=True joins the key with no other change"


# --- backend options ------------------------------------------------------------------------------

OPENED: list[dict] = []


def open_provider(**options):
    """This module as a backend: records the options it is opened with, then stops the command."""
    OPENED.append(options)
    raise SandboxError("recorded")


@pytest.fixture
def recording_backend(monkeypatch) -> list[dict]:
    monkeypatch.setitem(registry.BACKENDS, "recording", __name__)
    OPENED.clear()
    return OPENED


@pytest.mark.parametrize("command", ["--prune_caches", "--build_images_only"])
@pytest.mark.parametrize("given", [["--ray_address", "head:6379"], ["--backend_option", "address=head:6379"],
                                   ["--config", "RUN_FILE"]])
def test_maintenance_commands_pass_the_backend_options(command, given, recording_backend, tmp_path, capsys):
    run_file = tmp_path / "run.toml"
    run_file.write_text('ray_address = "head:6379"\n')
    arguments = [command, "--backend", "recording", *[str(run_file) if item == "RUN_FILE" else item for item in given]]
    assert cli_module.main(arguments) == 2
    assert recording_backend == [{"address": "head:6379"}], "--prune_caches once dropped --ray_address"
    assert capsys.readouterr().err == "error: recorded\n"


def test_an_option_the_backend_does_not_take_is_named(recording_backend):
    with pytest.raises(SandboxError, match=r"backend 'docker' takes no option 'address' \(its options: none\)"):
        open_backend("docker", {"address": "x"})


def test_backend_option_needs_key_equals_value(tmp_path):
    completed = subprocess.run([sys.executable, "harness.py", "--output_dir", str(tmp_path), "--backend_option",
                                "address"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2 and completed.stderr == "error: --backend_option must be KEY=VALUE, got ['address']\n"
    assert not any(tmp_path.iterdir())


def _toml_example(text: str) -> str:
    """The lines of the first `# run.toml` example in `text` (docs/usage.md block or docstring)."""
    lines = text[text.index("# run.toml"):].splitlines()[1:]
    example = []
    for line in lines:
        if not line.strip() or line.strip().startswith(("```", "\"\"\"")):
            break
        example.append(line.strip())
    return "\n".join(example) + "\n"


@pytest.mark.parametrize("documented_in", ["docs/usage.md", "utils/run/settings.py"])
def test_documented_run_file_example_is_a_valid_run_file(documented_in, captured, tmp_path):
    run_file = tmp_path / "run.toml"
    run_file.write_text(_toml_example((PROJECT_ROOT / documented_in).read_text()))
    config = through_harness(captured, config=run_file)
    assert config.subset == ("small", "medium") and config.tries == 2
    assert config.backend_options == {"address": "auto"}
