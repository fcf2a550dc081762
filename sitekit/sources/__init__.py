"""What the numbers and the words rest on: the provenance box under every table, the
source archive every build carries, figures quoted from published sources, and the
cited works with each page's list."""
