"""Everything async: grid, scheduler, endpoint client, arms, logs and resume, the CLI."""

__all__: list[str] = []
