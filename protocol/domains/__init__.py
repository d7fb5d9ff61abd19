"""Domains as packs: the pack format and its checks, the built-in packs, the shape of a domain's wordings."""
