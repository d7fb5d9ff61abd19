"""The ``ladder`` command line: the root app (``ladder.app``), one module per command, and the
flag parsing ``ladder run`` shares with ``ladder demo`` (``ladder.flags``)."""

__all__: list[str] = []
