"""What the scripted endpoint injects: faults by rate and the latency model."""
