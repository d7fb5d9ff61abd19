"""The optional τ²-bench adapter (``pip install -e '.[tau2]'``, Python >= 3.12).

Every module here imports τ²-bench lazily through :func:`tau2gate.adapter._tau2.require_tau2`, which fails with one
line when τ²-bench is absent or when the installed ``tau2`` is PyPI's unrelated package.
"""

__all__: list[str] = []
