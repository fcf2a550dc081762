"""Measurements behind the site: every table and value on a page is written here.

Run ``python -m measure --help`` for the command line.
"""
