"""Grading seconds of the references with and without --variants (issue 35's cost figure), on
the instances of a prepared dataset that have variants, one language at a time.

    python3 bench/variant_grading_time.py DATASET_DIR LANGUAGE OUTPUT_DIR [INSTANCE_ID ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import _standalone  # noqa: E402,F401

from polyglot_harness.utils.pipeline.expected_tests import reference_patch  # noqa: E402
from polyglot_harness.utils.records.dataset import load_dataset  # noqa: E402
from polyglot_harness.utils.run import harness  # noqa: E402


def graded(dataset: Path, output: Path, name: str, patches: dict[str, str], variants: bool) -> dict[str, dict]:
    predictions = output / f"{name}.jsonl"
    predictions.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": name, "model_patch": p}) + "\n"
                                   for i, p in patches.items()))
    harness(dataset=dataset, output_dir=output, predictions=predictions, model_name_or_path=name, variants=variants,
            instance_ids=sorted(patches), progress=False, max_workers=1)
    return {json.loads(path.read_text())["instance_id"]: json.loads(path.read_text())
            for path in (output / f"{name}_0").glob("*__*.json")}


def main(dataset: Path, language: str, output: Path, only: list[str]) -> None:
    instances = [instance for instance in load_dataset(dataset) if instance.language == language and instance.variants
                 and (not only or instance.instance_id in only)]
    patches = {instance.instance_id: reference_patch(instance) for instance in instances}
    output.mkdir(parents=True, exist_ok=True)
    without = graded(dataset, output, "without", patches, False)
    with_variants = graded(dataset, output, "with", patches, True)
    for instance_id in sorted(patches):
        a, b = without[instance_id], with_variants[instance_id]
        print(f"{instance_id}: grading {a['seconds'].get('grading', 0):.1f}s -> {b['seconds'].get('grading', 0):.1f}s, "
              f"{b['variants_passed']} variants passed, {b['variants_failed']} failed, "
              f"resolved {a['eval_result']} / on variants {b['resolved_on_variants']}")
    print(f"summed: {sum(r['seconds'].get('grading', 0) for r in without.values()):.1f}s -> "
          f"{sum(r['seconds'].get('grading', 0) for r in with_variants.values()):.1f}s over {len(patches)} instances")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4:])
