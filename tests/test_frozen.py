"""``whichgpu.frozen.evolve`` is ``dataclasses.replace`` for the records the search copies."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from whichgpu.frozen import evolve
from whichgpu.job import Job


@given(batch=st.integers(1, 4096), seq=st.integers(1, 1 << 17), tp=st.sampled_from([1, 2, 8]))
def test_evolve_equals_replace_and_hashes_afresh(batch: int, seq: int, tp: int) -> None:
    job = Job(task="lora", batch=2)
    hash(job)  # memoised in the instance
    copied = evolve(job, batch=batch, seq=seq, tp=tp)
    expected = replace(job, batch=batch, seq=seq, tp=tp)
    assert copied == expected and hash(copied) == hash(expected)
    assert job.batch == 2  # the original is unchanged


def test_evolve_names_an_unknown_field() -> None:
    with pytest.raises(TypeError, match="Job has no field 'batches'"):
        evolve(Job(), batches=2)


def test_memo_computes_once_and_is_not_copied() -> None:
    """``memo`` keeps the value in the instance; a copy made by ``evolve`` computes its own."""
    from dataclasses import dataclass

    from whichgpu.frozen import memo

    calls: list[int] = []

    @dataclass(frozen=True)
    class Box:
        side: int

        @memo
        def area(self) -> int:
            """The side squared."""
            calls.append(self.side)
            return self.side * self.side

    box = Box(3)
    assert box.area == 9 and box.area == 9 and calls == [3]
    assert box.__dict__["area"] == 9
    bigger = evolve(box, side=4)
    assert bigger.area == 16 and calls == [3, 4]
    assert Box.area.__doc__ == "The side squared."
