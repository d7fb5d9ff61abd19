"""The scripted OpenAI-compatible endpoint: the aiohttp application, request parsing, bodies, streaming, token counts."""
