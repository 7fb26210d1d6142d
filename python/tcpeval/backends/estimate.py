"""What a run will take, worked out before it starts, with the share each scenario key drives:
the key of the largest share is the one a refusal names. The simulator's memory
(sim/memory.py) and every backend's wall time (wall_time.py) are added up this way.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Estimate:
    """A total (bytes, seconds) and the share of each key."""

    total: float
    by_field: dict[str, tuple[object, float]]
    """Field → (its value as given, the amount it drives)."""

    def largest(self) -> tuple[str, object, float]:
        name, (value, amount) = max(self.by_field.items(), key=lambda item: item[1][1])
        return name, value, amount


@dataclass
class Tally:
    """Amounts charged to scenario keys as an estimate is worked out."""

    by_field: dict[str, tuple[object, float]] = field(default_factory=dict)

    def charge(self, name: str, value: object, amount: float) -> None:
        self.by_field[name] = (value, self.by_field.get(name, (value, 0.0))[1] + amount)

    def estimate(self, base: float = 0.0) -> Estimate:
        """The estimate: `base` (what any run takes) plus every charge."""
        return Estimate(base + sum(amount for _, amount in self.by_field.values()), self.by_field)
