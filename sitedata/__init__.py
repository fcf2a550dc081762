"""The site_data format, in one torch-free place.

``site_data/<experiment>/`` holds one CSV per table and a ``meta.json`` that describes
them: provenance, per-column unit, label, how to compare and where it reproduces, and
per file its checksum, row count and columns. This package declares (``schema``, with
the named comparison policies of ``policies``), names and confines (``names``), writes
whole experiment folders (``store``) into data folders of its own only (``folder``: a
marker file, and nothing else ever deleted or renamed), reads and verifies them within
bounds and never through a link (``read``, ``bounds``) and compares two runs
(``compare``). ``measure`` writes with it, the drift gate compares with it, the MkDocs
hook reads with it; it imports nothing but the standard library.
"""

from sitedata.folder import FolderError, recover
from sitedata.read import DataError, Experiment, experiment_names, read_experiment
from sitedata.schema import Column, Result, SchemaError, Table, Value
from sitedata.store import SCHEMA_VERSION, write_experiment

__all__ = [
    "SCHEMA_VERSION",
    "Column",
    "DataError",
    "Experiment",
    "FolderError",
    "Result",
    "SchemaError",
    "Table",
    "Value",
    "experiment_names",
    "read_experiment",
    "recover",
    "write_experiment",
]
