"""The concept pictures: what a page explains (the cache, decoding, quantization, serving),
drawn from code as diagrams rather than from data, each edition in its own words; drawing.py
holds their shared boxes, arrows and colours."""
