"""Data model for the booking calendar."""

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Slot:
    """A half-open time range [start, end) in minutes since midnight."""

    start: int
    end: int

    def __post_init__(self):
        if self.end <= self.start:
            raise ValueError(f"empty or inverted slot: {self.start}-{self.end}")

    @property
    def duration(self) -> int:
        return self.end - self.start

    def overlaps(self, other: "Slot") -> bool:
        """True if the two slots share at least one minute."""
        return self.start < other.end and other.start < self.end

    def __str__(self) -> str:
        return f"{self.start // 60:02d}:{self.start % 60:02d}-{self.end // 60:02d}:{self.end % 60:02d}"
