"""MkDocs hook: what the five editions' build would otherwise do five times, done once.

mkdocs-static-i18n builds each edition as a build of its own, in one process. Two things
came out of that slower than they need be, and this hook mends them without changing a
byte of the site:

- each edition's new Jinja environment compiled the theme's forty templates again: they
  are compiled once, in a bytecode cache kept in memory (``on_env``);
- mkdocs-jupyter keeps each notebook's conversion in one cache folder and, at the end of
  each build, deletes every entry that build did not use. An edition uses its own two
  notebooks only, so each edition's build deleted the others' entries and no build ever
  found one. Each edition now keeps its entries in a folder of its own
  (``on_pre_build``): a build after the first converts no notebook it converted before.
  An entry is keyed by the notebook's bytes and the plugin's options (the plugin's own
  key), so an edited notebook is converted again.
"""

from __future__ import annotations

import weakref
from pathlib import PurePath

import jinja2

# each plugin's configured cache folder, read before this hook first changes it
_base: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def on_pre_build(config, **kwargs):
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not plugin.config.get("cache"):
        return
    base = _base.setdefault(plugin, plugin.config["cache_dir"])
    plugin.config["cache_dir"] = str(PurePath(base) / config.theme["language"])


class _CompiledTemplates(jinja2.BytecodeCache):
    """The theme's templates compiled once for the five editions; keyed and checked
    against each source as Jinja's own caches are."""

    _code: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        if bucket.key in self._code:
            bucket.bytecode_from_string(self._code[bucket.key])  # left empty where the source changed

    def dump_bytecode(self, bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_TEMPLATES = _CompiledTemplates()


def on_env(env, config, files, **kwargs):
    env.bytecode_cache = _TEMPLATES
    return env
