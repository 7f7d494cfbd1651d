"""Who acts in an episode: scripted (tests, oracles), a local Hugging Face model, any
OpenAI-compatible endpoint. Heavy modules (torch, aiohttp) load only when used."""

from rollbox.policies.base import Policy

__all__ = ["Policy"]
