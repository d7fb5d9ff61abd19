"""Running a grid: the run, the scheduler, one episode, the agent call, start order, the live view."""

__all__: list[str] = []
