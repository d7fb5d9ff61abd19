"""The ``ladder`` command line: the root app (``cli.app``), one module per command, and the
flag parsing ``ladder run`` shares with ``ladder demo`` (``cli.flags``)."""

__all__: list[str] = []
