"""``python -m ladder``: the ``ladder`` command."""

from ladder.app import main

main()
