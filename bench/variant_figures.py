"""Variant coverage of a prepared dataset (issue 35): instances with at least one variant, per
language; variants per instance; why tests gave none (variant_counts summed).

    python3 bench/variant_figures.py DATASET_DIR
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path


def figures(dataset: Path) -> dict:
    entries = json.loads((dataset / "polyglot_benchmark_metadata.json").read_text(encoding="utf-8"))
    by_language: dict[str, dict] = {}
    for entry in entries:
        if entry.get("variants") is None:
            continue
        row = by_language.setdefault(entry["language"], {"instances": 0, "with_variants": 0, "variants": [],
                                                         "reasons": Counter(), "per_instance": {}})
        count = len(entry["variants"])
        row["instances"] += 1
        row["with_variants"] += count > 0
        row["variants"].append(count)
        row["reasons"].update(entry.get("variant_counts") or {})
        row["per_instance"][entry["instance_id"]] = [count, len(entry.get("expected_tests") or [])]
    return {language: {"instances": row["instances"], "with_at_least_one_variant": row["with_variants"],
                       "variants": sum(row["variants"]), "median_per_instance": statistics.median(row["variants"]),
                       "reasons": dict(row["reasons"].most_common()), "per_instance": row["per_instance"]}
            for language, row in by_language.items()}


if __name__ == "__main__":
    print(json.dumps(figures(Path(sys.argv[1])), indent=2))
