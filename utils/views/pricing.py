"""Money from tokens: a price table the user passes, applied to each instance's agent_usage.

The price table file (report.py --prices FILE) is JSON, USD per million tokens, per model name
exactly as the agent writes it in agent_usage.json's `model`:

    {"gpt-4.1": {"input": 2.0, "output": 8.0}, "gpt-4o-mini": {"input": 0.15, "output": 0.6}}

Input tokens are agent_usage's `prompt_tokens`, output tokens its `completion_tokens`. An
instance that used no tokens (the oracle, a predictions run) costs 0; one that used tokens of a
model the table does not price is *unpriced*: listed, and left out of every sum.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..records.results import InstanceResult

PRICE_KEYS = ("input", "output")


class PriceTableError(ValueError):
    """The price table file is missing, not JSON, or not {model: {"input": USD, "output": USD}}."""


@dataclass(frozen=True)
class ModelPrice:
    input_per_million: float   # USD per million prompt tokens
    output_per_million: float  # USD per million completion tokens

    def usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1e6


@dataclass(frozen=True)
class PriceTable:
    models: Mapping[str, ModelPrice]  # model name -> its price


def load_price_table(path: str | Path) -> PriceTable:
    """The table in `path`; raises PriceTableError with one line naming the file and the fault."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PriceTableError(f"price table {path} does not exist") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise PriceTableError(f"price table {path} is not readable JSON ({_first_line(error)})") from None
    return parse_price_table(data, str(path))


def parse_price_table(data: Any, source: str = "price table") -> PriceTable:
    """A PriceTable from the JSON object; refuses anything but {model: {"input": n, "output": n}}
    with finite, non-negative numbers (a typo'd key is refused rather than priced at 0)."""
    if not isinstance(data, dict) or not data:
        raise PriceTableError(f"{source}: expected a non-empty object {{model: {{\"input\": USD, \"output\": USD}}}}")
    return PriceTable({model: _model_price(model, entry, source) for model, entry in data.items()})


def _model_price(model: str, entry: Any, source: str) -> ModelPrice:
    if not model.strip():
        raise PriceTableError(f"{source}: a model name is empty")
    if not isinstance(entry, dict) or sorted(entry) != sorted(PRICE_KEYS):
        raise PriceTableError(f"{source}: {model!r} must be an object with exactly the keys \"input\" and \"output\" "
                              f"(USD per million tokens)")
    for key in PRICE_KEYS:
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise PriceTableError(f"{source}: {model!r} {key} must be a non-negative number, not {value!r}")
    return ModelPrice(float(entry["input"]), float(entry["output"]))


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def usage_tokens(usage: Mapping[str, Any], key: str) -> int:
    """agent_usage[key] as an int; 0 when absent or not a number."""
    value = usage.get(key) if isinstance(usage, Mapping) else None
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class InstanceCost:
    instance_id: str
    language: str
    model: str                 # agent_usage's `model` ("" when absent)
    prompt_tokens: int
    completion_tokens: int
    usd: float | None          # None: tokens of a model the table does not price

    def to_json(self) -> dict[str, Any]:
        return {"instance_id": self.instance_id, "language": self.language, "model": self.model,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "usd": None if self.usd is None else round(self.usd, 6)}


def instance_cost(result: InstanceResult, table: PriceTable) -> InstanceCost:
    """What one instance's agent runs cost under `table` (every attempt's, with --attempts)."""
    usage = result.usage_over_attempts
    model = usage.get("model") if isinstance(usage.get("model"), str) else ""
    prompt, completion = usage_tokens(usage, "prompt_tokens"), usage_tokens(usage, "completion_tokens")
    price = table.models.get(model)
    usd = 0.0 if prompt == completion == 0 else price.usd(prompt, completion) if price else None
    return InstanceCost(result.instance_id, result.language or "?", model, prompt, completion, usd)


@dataclass(frozen=True)
class RunCost:
    """The cost of a set of instances; unpriced instances are listed and left out of the sums."""

    instances: tuple[InstanceCost, ...]  # sorted by instance id

    @property
    def total_usd(self) -> float:
        return sum(cost.usd for cost in self.instances if cost.usd is not None)

    @property
    def unpriced_ids(self) -> list[str]:
        return [cost.instance_id for cost in self.instances if cost.usd is None]

    def per_language_usd(self) -> dict[str, float]:
        table: dict[str, float] = {}
        for cost in self.instances:
            table[cost.language] = table.get(cost.language, 0.0) + (cost.usd or 0.0)
        return {language: round(usd, 6) for language, usd in sorted(table.items())}

    def to_json(self) -> dict[str, Any]:
        """report.json's `cost`: currency, total_usd, per_language_usd, per_instance (a list of
        {instance_id, language, model, prompt_tokens, completion_tokens, usd}), unpriced_ids,
        unpriced_models (models seen with tokens that the table does not price)."""
        return {"currency": "USD", "total_usd": round(self.total_usd, 6),
                "per_language_usd": self.per_language_usd(),
                "per_instance": [cost.to_json() for cost in self.instances],
                "unpriced_ids": self.unpriced_ids,
                "unpriced_models": sorted({cost.model for cost in self.instances if cost.usd is None})}


def run_cost(results: Iterable[InstanceResult], table: PriceTable) -> RunCost:
    return RunCost(tuple(sorted((instance_cost(result, table) for result in results),
                                key=lambda cost: cost.instance_id)))
