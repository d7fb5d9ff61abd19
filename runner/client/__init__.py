"""The endpoint client: transport, wire format, retries, limits, replica affinity."""

__all__: list[str] = []
