"""Everything async: grid, scheduler, endpoint client, arms, logs and resume."""

__all__: list[str] = []
