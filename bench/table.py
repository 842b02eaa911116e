"""Statistics and the printed table, rendered from the same dict that is written as JSON."""

from __future__ import annotations

import math
from typing import Any, Iterable

from bench.overhead import PHASES


def percentile(values: Iterable[float], fraction: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return None
    position = (len(ordered) - 1) * fraction
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spread(values: Iterable[float]) -> dict[str, float | None]:
    values = list(values)
    median, p90 = percentile(values, 0.5), percentile(values, 0.9)
    return {"median": None if median is None else round(median, 3), "p90": None if p90 is None else round(p90, 3),
            "n": len(values)}


def _s(value: float | None, width: int = 8, digits: int = 2) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def _pair(entry: dict | None) -> str:
    if not entry or entry.get("median") is None:
        return f"{'-':>15}"
    return f"{entry['median']:>6.2f} / {entry['p90']:>6.2f}"


def render(data: dict[str, Any]) -> str:
    lines: list[str] = []
    add = lines.append
    settings, machine = data["settings"], data["machine"]
    counts = ", ".join(f"{language} {count}" for language, count in settings["languages"].items())
    add(f"polyglot harness benchmark — {len(settings['instance_ids'])} instances ({counts}), "
        f"max_workers {settings['max_workers']}, {machine['cpus']} CPUs, {machine['memory_gib']} GiB, "
        f"Docker {machine['docker_version']}, commit {machine['git_commit']}")
    add("")
    if data.get("concurrency"):
        lines.extend(_concurrency_lines(data["concurrency"]))
    if "harness" in data:
        lines.extend(_reference_lines(data))
    add("Targets (goals, not assertions)")
    for target in data["targets"]:
        state = "n/a" if target["met"] is None else ("met" if target["met"] else "MISSED")
        add(f"  {target['name']:<44} {target['value']:>22}   goal {target['goal']:<26} {state}")
    for warning in data.get("warnings", []):
        add(f"WARNING: {warning}")
    return "\n".join(lines)


def _concurrency_lines(concurrency: dict[str, Any]) -> list[str]:
    lines = [f"0. LLM-bound agents: {concurrency['instances']} agents that sleep {concurrency['agent_seconds']:g} s "
             f"(seconds; median / p90)",
             f"  {'workers':>7} {'wall':>7} {'ideal':>6} {'ratio':>6} {'set-up':>7} {'outside agent':>15} "
             f"{'container wait':>15} {'engine start':>15} {'starts':>6} {'failed':>6} {'slow':>5} "
             f"{'cpu/agent':>9} {'harness':>7}"]
    for run in concurrency["runs"]:
        starts = run["engine_starts"]
        lines.append(f"  {run['workers']:>7} {_s(run['wall_seconds'], 7)} {_s(run['ideal_seconds'], 6, 0)} "
                     f"{_s(run['ratio'], 6)} {_s(run['set_up_seconds'], 7)} {_pair(run['outside_agent'])} "
                     f"{_pair(run['agent_container_wait'])} {_pair(starts)} {starts['n']:>6} {starts['failed']:>6} "
                     f"{starts['slow']:>5} {_s(run.get('cpu_per_agent'), 9, 3)} "
                     f"{_s(run.get('harness_cpu_per_agent'), 7, 3)}")
    lines += ["  (ideal: ceil(agents / workers) x the sleep; set-up: harness() call to the first agent container",
              "   request; outside agent: seconds.total - seconds.agent; container wait: an instance asking for its",
              "   agent container until it has one; engine start: the engine's create+start of every container,",
              "   pre-starts included, without the wait for a start slot; cpu/agent: the machine's busy",
              "   CPU-seconds during the run per agent (engine, harness, agents; a sleep costs none), harness:",
              "   the harness process's own share of it.)", ""]
    return lines


def _reference_lines(data: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    add = lines.append
    settings = data["settings"]
    bare, harness = data["bare"], data["harness"]
    add("1-2. Bare floor vs the harness with the oracle agent (seconds)")
    add(f"  {'language':<11} {'n':>3} {'bare':>8} {'harness':>8} {'ratio':>6} {'h.tests':>8} {'h.grading':>9}")
    for language, row in harness["per_language"].items():
        bare_row = bare["per_language"].get(language, {})
        add(f"  {language:<11} {row['n']:>3} {_s(bare_row.get('seconds'))} {_s(row['seconds'])} "
            f"{_s(row.get('ratio'), 6)} {_s(row['tests_seconds'])} {_s(row['grading_seconds'], 9)}")
    add(f"  {'wall total':<11} {len(settings['instance_ids']):>3} {_s(bare['wall_seconds'])} "
        f"{_s(harness['wall_seconds'])} {_s(harness.get('ratio'), 6)}")
    add("  (per language: sums of per-instance seconds — bare: the test exec; harness: the result's seconds.total,")
    add("   h.tests / h.grading: its seconds.tests / seconds.grading. wall total: clock time of each whole run.)")
    add("   C++: the harness compiles through a shared, read-only ccache (Catch's main, warmed once per run")
    add("   on the pristine tree, warm-up included in its time); bare compiles everything every time.")
    add(f"  bare set-up, not timed (trees, {len(bare['per_language'])} containers, copies): "
        f"{bare['setup_seconds']:.2f} s")
    add(f"  verdicts: bare {bare['resolved']}/{bare['n']} passed, harness {harness['resolved']}/{harness['n']} "
        f"resolved" + (f"; DISAGREE on {', '.join(data['verdict_mismatches'])}" if data["verdict_mismatches"] else
                       "; every verdict agrees"))
    add("")
    overhead = data["overhead"]
    add(f"3. Per-instance overhead, median / p90 seconds over {overhead['n']} instances "
        f"(max_workers {settings['max_workers']})")
    add(f"  {'phase':<14} {'null agent':>15}   {'no-op grading':>15}")
    for phase in PHASES + ("total",):
        add(f"  {phase:<14} {_pair(overhead['agent'].get(phase))}   {_pair(overhead['grading'].get(phase))}")
    add(f"  {'agent+grading':<14} {_pair(overhead['combined'])}   (oracle run, total - tests: "
        f"{_pair(overhead['oracle_total_minus_tests']).strip()})")
    add("  (start: the instance's wait for its container — create+start, or a pre-started one handed over;")
    add("   copy_in/copy_out: tar into/out of the container; exec: commands run there — the agent's diff,")
    add("   grading's `true`; apply_patch: host-side patch; close: removal on the instance's path (background")
    add("   removal not counted);")
    add("   host: the rest — checkout of the test commit, tree copies, tar building, filtering, results.)")
    add("")
    images = data["images"]
    add("4. Images (seconds)")
    add(f"  {'language':<11} {'warm check':>10} {'cold build':>10}")
    cold = images.get("cold") or {}
    for name in list(dict.fromkeys([*cold.keys(), *images["warm"].keys()])):
        warm_entry = images["warm"].get(name)
        warm_text = _s(warm_entry["seconds"], 10) if warm_entry else f"{'-':>10}"
        cold_text = _s(cold[name]["seconds"], 10) if name in cold else f"{'n/a':>10}"
        note = "  (image was missing: the warm check built it)" if warm_entry and warm_entry["built"] else ""
        add(f"  {name:<11} {warm_text} {cold_text}{note}")
    if not cold:
        add("  (cold builds only with --cold_images)")
    for name, label in (("initial", "agent layer (python), as is"), ("code_change", "after a one-line code change"),
                        ("requirements_change", "after a requirements.txt change")):
        entry = images["agent_layer"].get(name)
        if entry is None:
            continue
        state = f"FAILED: {entry['error'][:120]}" if entry["error"] else ("built" if entry["built"] else "cached")
        add(f"  {label:<34} {_s(entry['seconds'])}  {state}")
    add("")
    add("5. Slowest instances of the harness run (seconds)")
    bare_seconds = {row["instance_id"]: row["seconds"] for row in bare["instances"]}
    add(f"  {'instance':<28} {'total':>7} {'agent':>7} {'grading':>8} {'tests':>7} {'bare':>7}  dominated by")
    for row in data["slowest"]:
        add(f"  {row['instance_id']:<28} {_s(row['total'], 7)} {_s(row['agent_phase'], 7)} "
            f"{_s(row['grading_overhead'], 8)} {_s(row['tests'], 7)} {_s(bare_seconds.get(row['instance_id']), 7)}"
            f"  {row['dominated_by']}")
    add("  (agent: the agent phase, total - grading; grading: grading - tests; tests: the test exec;")
    add("   bare: the same tests in the bare run)")
    add("")
    return lines
