"""Turns site_data/ into page content: tables, inline values, figures, provenance.

Used by the MkDocs hook ``hooks/render.py``; importable on its own for tests.
"""
