"""The Policy seam: who acts in an episode.

A policy turns a conversation (and the tools on offer) into a Completion. Policies that cannot
make native tool calls (`native_tools = False`) are shown the tools as text by the agent, and
their text is parsed into an Action (rollbox.agent.parsing).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, Self

from rollbox.agent.types import Completion, Message


class Policy(abc.ABC):
    name: str = "policy"
    version: str = "0"  # changes whenever the weights or the endpoint's model change
    native_tools: bool = False  # returns Completion.tool_calls itself
    context_tokens: int | None = None  # the most prompt + completion tokens it takes, if known

    @abc.abstractmethod
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.7,
        seed: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        """One completion, ending at the first of `stop` (kept in the text) or end of turn.

        Raises ContextLengthError when the prompt does not fit, PolicyError when the policy
        cannot act (model failed, endpoint unreachable).
        """

    def for_episode(self, task_id: str, sample: int) -> Policy:
        """The policy as one episode sees it; the same object unless the policy keeps
        per-episode state (a scripted policy replays that task's script)."""
        return self

    async def close(self) -> None:  # noqa: B027 - optional
        """Release the model or the connection."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
