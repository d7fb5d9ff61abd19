"""The gates' helpers: the compiler and the matcher with their disk caches."""

__all__: list[str] = []
