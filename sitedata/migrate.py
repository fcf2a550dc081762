"""An older meta.json read as the current format, in memory, as asv's ``results.py``
updates its files (``update_to_2``) rather than refusing them: the reader migrates what
it reads, then verifies the result as it verifies any meta.json. The file stays as it was
written: a merge installs those very bytes, the data's hash covers them, and no checksum
of a meta.json is stored anywhere, so nothing depends on rewriting it.

Version 3 added what version 2 left to rules kept elsewhere; those rules are what version
2 meant, so they live on here and nowhere else:

* a table's description (none: ``""``);
* a column's ``noise``, the column that holds a timing's spread: in version 2 the drift
  gate guessed it from the names, ``x_ms`` against ``x_spread_ms`` of the same table and
  ``total_ms`` against ``spread_ms``;
* a column's or a value's ``words``, text written for a reader that a page shows in its
  language: in version 2 a list kept by hand in the hooks (``_WORDS_2`` below).

Version 4 gave one quantity one name: kv_cache's speedup of cached generation over
recomputing was ``speed_ratio`` in one table and ``speedup`` among the values, and
head_step's ``speed_ratio``, one head's step recomputing over cached, is another
quantity. Data written before is read under version 4's names (``RENAMED_4``): its
meta.json's declarations by ``update_to_4``, each table's header by the reader
(``renamed_columns``, ``renamed_header``); its files stay as written.

Version 5 names each meta.json's run (``key``: machine, model, dtype, profile), so that
runs of several machines and models can lie side by side (sitedata.runs). Data written
before is given the key its own fields make (``update_to_5``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sitedata.keys import run_key

OLDEST = 2  # the oldest format a reader migrates; an older one is refused

# sitekit/data_words.py of version 2, by experiment.table.column or experiment.value.
_WORDS_2 = frozenset(
    {
        "batching.sweep_stop_reason",
        "batching.compiled_method",
        "prefill_decode.compiled_method",
        "chapter.device",
        "quality.default_penalty_source",
        "speculative_decoding.best_draft",
        "speculative_decoding.exactness_draft",
        "weight_quantization.kernel_lowbit_fastest",
        "weight_quantization.kernel_fastest",
        "activation_outliers.int8.setting",
        "batching.arrival_requests.policy",
        "batching.arrivals.policy",
        "batching.policies.policy",
        "batching.timeline.policy",
        "batching.paged.scheme",
        "batching.sweep.status",
        "cache_size.attention_variants.variant",
        "cache_size.measured.method",
        "kv_cache.identical_output.method",
        "kv_cache.macs_total.scope",
        "kv_cache.memory.method",
        "kv_cache.memory.steps_run",
        "memory_budget.budget.verdict",
        "memory_budget.configs.reference",
        "memory_budget.formula_check.logits_kept",
        "memory_budget.models.source",
        "prefill_decode.split.phase",
        "quality.quality.label",
        "speculative_decoding.acceptance.label",
        "speculative_decoding.acceptance.kernels",
        "speculative_decoding.acceptance_by_position.label",
        "speculative_decoding.acceptance_by_temperature.label",
        "speculative_decoding.draft_cost.label",
        "speculative_decoding.real_run.label",
        "speculative_decoding.sampled_run.label",
        "speculative_decoding.exactness.sampler",
        "speculative_decoding.expected_tokens.alpha_source",
        "speculative_decoding.speedup.alpha_source",
        "speculative_decoding.speedup.losses",
        "weight_quantization.decode_kernels.label",
        "weight_quantization.errors.label",
        "weight_quantization.outlier_levels.scheme",
        "weight_quantization.sizes.storage",
        "quality.protocol.item",
    }
)


def _spread_2(name: str, columns: list[str]) -> str | None:
    """The spread column version 2's gate paired with the timing column ``name``."""
    for cand in (name.replace("_ms", "_spread_ms"), "spread_ms" if name == "total_ms" else ""):
        if cand and cand != name and cand in columns:
            return cand
    return None


def _column_3(c: dict, names: list[str], key: str) -> dict:
    spread = _spread_2(c["name"], names) if c.get("compare") == "timing" else None
    return {**c, "words": key in _WORDS_2, "noise": {"spread": spread} if spread else {}}


def update_to_3(meta: dict[str, Any]) -> dict[str, Any]:
    """A version-2 meta.json as version 3 states it. Anything malformed is left as it is,
    for the verification that follows to refuse."""
    exp = meta.get("experiment")
    tables = meta.get("tables") if isinstance(meta.get("tables"), dict) else {}
    values = meta.get("values") if isinstance(meta.get("values"), dict) else {}
    new_tables = {}
    for name, t in tables.items():
        if not isinstance(t, dict):
            new_tables[name] = t
            continue
        cols = t.get("columns")
        if isinstance(cols, list) and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in cols):
            names = [c["name"] for c in cols]
            cols = [_column_3(c, names, f"{exp}.{name}.{c['name']}") for c in cols]
        new_tables[name] = {"title": t.get("title"), "description": "", **t, "columns": cols}
    new_values = {
        name: {**v, "words": f"{exp}.{name}" in _WORDS_2} if isinstance(v, dict) else v for name, v in values.items()
    }
    return {**meta, "schema_version": 3, "tables": new_tables, "values": new_values}


# (experiment, table) -> {the name written before version 4: the name since}
RENAMED_4 = {
    ("kv_cache", "identical_output"): {
        "speed_ratio": "speedup",
        "speed_ratio_low": "speedup_low",
        "speed_ratio_high": "speedup_high",
    },
    ("kv_cache", "head_step"): {
        "speed_ratio": "head_ratio",
        "speed_ratio_low": "head_ratio_low",
        "speed_ratio_high": "head_ratio_high",
    },
}
# What version 4 says in words of a renamed column, and of its table's description.
_LABELS_4 = {("kv_cache", "identical_output", "speedup"): "speedup over recomputing"}
_DESCRIPTIONS_4 = {("kv_cache", "identical_output"): ("the speed ratio", "the speedup")}


def _named_4(name: Any, names: Mapping[str, str]) -> Any:
    return names.get(name, name) if isinstance(name, str) else name


def _column_4(c: dict, names: Mapping[str, str], table: tuple[str, str]) -> dict:
    name = _named_4(c.get("name"), names)
    noise = c.get("noise")
    if isinstance(noise, dict):  # the bounds an interval names are renamed with it
        noise = {
            k: [_named_4(n, names) for n in v] if isinstance(v, list) else _named_4(v, names) for k, v in noise.items()
        }
    label = _LABELS_4.get((*table, name)) if isinstance(name, str) else None
    return {**c, "name": name, "noise": noise, **({"label": label} if label else {})}


def update_to_4(meta: dict[str, Any]) -> dict[str, Any]:
    """A version-3 meta.json under version 4's names (RENAMED_4); anything malformed is
    left as it is, for the verification that follows to refuse."""
    exp = meta.get("experiment")
    tables = meta.get("tables") if isinstance(meta.get("tables"), dict) else {}
    new_tables = {}
    for name, t in tables.items():
        names = RENAMED_4.get((exp, name)) if isinstance(exp, str) else None
        if not names or not isinstance(t, dict) or not isinstance(t.get("columns"), list):
            new_tables[name] = t
            continue
        cols = [_column_4(c, names, (exp, name)) if isinstance(c, dict) else c for c in t["columns"]]
        said, says = _DESCRIPTIONS_4.get((exp, name), ("", ""))
        description = t.get("description")
        if said and isinstance(description, str):
            description = description.replace(said, says)
        new_tables[name] = {**t, "description": description, "columns": cols}
    return {**meta, "schema_version": 4, "tables": new_tables}


def renamed_columns(experiment: str, table: str, written: Any) -> dict[str, str]:
    """{as written: as read} for the columns of a table written in format ``written``
    that a later format renamed; empty for the current format."""
    if type(written) is int and written < 4:
        return RENAMED_4.get((experiment, table), {})
    return {}


def renamed_header(text: str, names: Mapping[str, str]) -> str:
    """A table's CSV text with the names of its header (the first line, snake_case
    names the reader has verified) renamed, every other byte as it was."""
    head, newline, rest = text.partition("\n")
    end = "\r" if head.endswith("\r") else ""
    return ",".join(names.get(n, n) for n in head.removesuffix("\r").split(",")) + end + newline + rest


def update_to_5(meta: dict[str, Any]) -> dict[str, Any]:
    """A version-4 meta.json with its run's key, worked out from the fields version 5
    takes it from (sitedata.keys.run_key); a meta.json missing one of them is left
    without, for the verification that follows to refuse."""
    try:
        key = {"key": run_key(meta)}
    except (KeyError, TypeError, AttributeError):
        key = {}
    return {**meta, "schema_version": 5, **key}


UPDATES = {2: update_to_3, 3: update_to_4, 4: update_to_5}  # format version -> its update to the next


def migrated(meta: Any, version: int) -> Any:
    """``meta`` updated, one version at a time, to format ``version``; a meta.json of
    another version, or not an object, unchanged (the reader says what is wrong)."""
    while isinstance(meta, dict) and type(meta.get("schema_version")) is int and meta["schema_version"] < version:
        if meta["schema_version"] not in UPDATES:
            break
        meta = UPDATES[meta["schema_version"]](meta)
    return meta
