"""Prepare the Aider polyglot benchmark: exercises -> instance repos + metadata JSON.

    python prepare_polyglot_dataset.py --benchmark_dir PATH [--output_dir DIR]
    python prepare_polyglot_dataset.py [--benchmark_url URL] [--output_dir DIR]
        [--languages rust,go] [--instance_ids rust__fizzy,rust__decimal] [--fast]

By default every reference solution and untouched stub is graded once in Docker and what
grading's checks need is recorded (expected tests and skips, canary sources, stub verdicts):
minutes, with progress lines, an estimate up front and a resume after an interruption (each
run is kept in RECORDINGS_DIR as it finishes). --fast skips that (seconds; FAST_COSTS says
which checks are then off).

The input is a checkout in the upstream layout (`<language>/exercises/practice/<slug>/`);
without --benchmark_dir, --benchmark_url (default: the upstream repository) is cloned
shallowly into ~/.cache/polyglot-harness/benchmarks/<hash>/ and reused afterwards. The
output layout is documented in utils/records/dataset.py; its default location, DEFAULT_DATASET_DIR,
is where harness.py looks without flags: in the checkout's data folder, never inside the checkout
(utils/checkout.py says why).

Re-running gives byte-identical output. Everything is written to a staging directory
beside the output and renamed into place at the end: on any error the previous output
stays as it was. The input checkout is only read.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from ..checkout import HOME_VARIABLE
from ..languages import LANGUAGES, UnknownLanguageError, get_language
from ..records.dataset import DEFAULT_DATASET_DIR, DatasetError
from ..seam.errors import ImageError, SandboxError
from .dataset import prepare_dataset
from .exercises import PrepareError
from .fetch import DEFAULT_BENCHMARK_URL, fetch_benchmark
from .recording import FAST_COSTS


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--benchmark_dir", type=Path, help="a local checkout in the upstream layout")
    source.add_argument(
        "--benchmark_url", default=DEFAULT_BENCHMARK_URL,
        help=f"git URL cloned (shallow, cached) when --benchmark_dir is not given (default: {DEFAULT_BENCHMARK_URL})",
    )
    parser.add_argument(
        "--output_dir", type=Path, default=DEFAULT_DATASET_DIR,
        help=f"dataset directory, replaced atomically (default: {DEFAULT_DATASET_DIR}, this checkout's data folder "
             f"outside it ({HOME_VARIABLE}), where harness.py looks)",
    )
    parser.add_argument(
        "--languages",
        help=f"prepare only these (comma-separated: {','.join(sorted(LANGUAGES))}); default: all",
    )
    parser.add_argument("--instance_ids", help="prepare only these (comma-separated, e.g. rust__fizzy); default: all")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel workers (default: CPU count)")
    parser.add_argument(
        "--fast", "--no_record", dest="fast", action="store_true",
        help="skip the reference runs (seconds instead of minutes, no Docker needed); " + FAST_COSTS
             + ". Grading names the checks that are off in every result and refuses such a dataset with --strict",
    )
    parser.add_argument(
        "--record_expected_tests", action="store_true",
        help="accepted so older commands work; does nothing: recording is the default (every reference solution "
             "and stub is graded in Docker; what grading needs is recorded; references that fail are reported)",
    )
    return parser.parse_args(argv)


def _language_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    languages = [language.strip() for language in value.split(",") if language.strip()]
    if not languages:
        raise PrepareError("--languages names no language")
    for language in languages:
        get_language(language)
    return languages


def _id_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    instance_ids = [instance_id.strip() for instance_id in value.split(",") if instance_id.strip()]
    if not instance_ids:
        raise PrepareError("--instance_ids names no instance")
    return instance_ids


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.record_expected_tests:
        print("note: --record_expected_tests is the default now and changes nothing (--fast skips the recording)",
              file=sys.stderr)
    try:
        if args.fast and args.record_expected_tests:
            raise PrepareError("--fast and --record_expected_tests contradict each other")
        languages = _language_list(args.languages)
        benchmark_dir = args.benchmark_dir or fetch_benchmark(args.benchmark_url)
        summary = prepare_dataset(benchmark_dir, args.output_dir, languages, max(1, args.workers),
                                  record_expected=not args.fast, instance_ids=_id_list(args.instance_ids),
                                  log=lambda message: print(message, flush=True))
    except (ImageError, SandboxError) as error:
        print(f"prepare_polyglot_dataset: error: {error} (the reference runs recorded so far are kept: the same "
              f"command resumes there; --fast prepares without Docker, with checks off)", file=sys.stderr)
        return 1
    except (PrepareError, UnknownLanguageError, OSError, DatasetError) as error:
        print(f"prepare_polyglot_dataset: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("prepare_polyglot_dataset: interrupted; the previous output is unchanged, and the reference runs "
              "recorded so far are kept: the same command resumes there", file=sys.stderr)
        return 130
    per_language = ", ".join(f"{language} {count}" for language, count in summary.instances_by_language.items())
    print(
        f"Prepared {summary.instance_count} instances ({per_language}) in {summary.seconds:.1f}s "
        f"into {summary.output_dir}"
    )
    return 0
