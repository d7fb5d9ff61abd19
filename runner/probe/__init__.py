"""The trap-turn probe (Appendix A.4): re-asking a finished run's trap turns."""

__all__: list[str] = []
