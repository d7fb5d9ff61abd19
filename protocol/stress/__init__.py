"""The stress knobs on a fixed episode and their doses: forged text, failing tools, state corruption."""
