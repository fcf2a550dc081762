"""The experiments, one module or package per page (measure/registry.py lists them in the
chapter's order and checks what each must define). A package holds every module only
that experiment uses: its declarations in ``tables``, its run in ``__init__``."""
