"""What both sides of the site_data format share, the writer (``store``) and the reader
(``read``): the format's version, the name of an experiment's metadata file, and the
checksum that ties each table's text to it. Neither side imports the other for these."""

from __future__ import annotations

import hashlib

SCHEMA_VERSION = 3  # 3: table descriptions, per column words and noise, per value words
META = "meta.json"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
