"""``python -m tau2gate.adapter``."""

from tau2gate.adapter.cli import main

raise SystemExit(main())
