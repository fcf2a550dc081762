"""What both sides of the site_data format share, the writer (``store``) and the reader
(``read``): the format's version, the name of an experiment's metadata file, and the
checksum that ties each table's text to it. Neither side imports the other for these."""

from __future__ import annotations

import hashlib

# 3: table descriptions, per column words and noise, per value words; 4: one name per
# quantity (kv_cache's speedup, sitedata.migrate.RENAMED_4); 5: each meta.json names its
# run's key (sitedata.keys), so that runs of several machines and models lie side by side
SCHEMA_VERSION = 5
META = "meta.json"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
