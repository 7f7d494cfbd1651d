"""The run directory: an SQLite index (WAL) beside trajectories as JSONL; resume after a crash."""

from rollbox.errors import DuplicateEpisodeError, StoreError
from rollbox.store.runstore import EpisodeRow, RunStore

__all__ = ["DuplicateEpisodeError", "EpisodeRow", "RunStore", "StoreError"]
