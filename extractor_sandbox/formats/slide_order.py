"""Where a slide's shapes stand, and the order they are read in from it.

A shape's box is its own offset and extent (a:xfrm), carried through each group it sits in (a
group maps its children's frame, a:chOff and a:chExt, onto its own, a:off and a:ext). A shape
whose box is stated nowhere in the slide (a placeholder placed by its layout) has none.

The reading order keeps the file's shape order but for one thing the slide shows: a shape that
stands wholly above another one it overlaps across is read before it (a title box or a stack of
text boxes written bottom first). Shapes side by side, overlapping, or without a box keep their
order in the file, so columns are not interleaved.
"""

from __future__ import annotations

from dataclasses import dataclass

Box = tuple[float, float, float, float]  # left, top, right, bottom, in EMU on the slide
MAX_ORDERED = 256  # shapes on a slide past which the file's order is kept as it is


@dataclass(frozen=True)
class Place:
    """How a group's child coordinates map onto the slide: x' = dx + sx * x, y' = dy + sy * y."""

    dx: float = 0.0
    dy: float = 0.0
    sx: float = 1.0
    sy: float = 1.0

    @property
    def scale(self) -> tuple[float, float]:
        return self.sx, self.sy

    def box(
        self, offset: tuple[float, float] | None, extent: tuple[float, float] | None
    ) -> Box | None:
        """The slide box of a shape at `offset` of `extent` in this frame; None without both."""
        if offset is None or extent is None:
            return None
        left, top = self.dx + self.sx * offset[0], self.dy + self.sy * offset[1]
        return left, top, left + self.sx * extent[0], top + self.sy * extent[1]

    def inner(
        self,
        offset: tuple[float, float] | None,
        extent: tuple[float, float] | None,
        child_offset: tuple[float, float] | None,
        child_extent: tuple[float, float] | None,
    ) -> Place:
        """The frame of a group's children: their frame (chOff, chExt) onto the group's."""
        sx = sy = 1.0
        if extent and child_extent and child_extent[0] and child_extent[1]:
            sx, sy = extent[0] / child_extent[0], extent[1] / child_extent[1]
        ox, oy = offset or (0.0, 0.0)
        cx, cy = child_offset if child_offset is not None else (ox, oy)
        return Place(
            self.dx + self.sx * (ox - sx * cx),
            self.dy + self.sy * (oy - sy * cy),
            self.sx * sx,
            self.sy * sy,
        )


def above(first: Box, second: Box) -> bool:
    """`first` stands wholly above `second` and overlaps it across."""
    return (
        first[3] <= second[1]
        and first[1] < second[1]
        and first[0] < second[2]
        and second[0] < first[2]
    )


def reading_order(boxes: list[Box | None]) -> list[int]:
    """The indexes of `boxes` in reading order: the file's order, each shape read once every
    shape standing wholly above it (and overlapping it across) has been."""
    count = len(boxes)
    if count > MAX_ORDERED or sum(box is not None for box in boxes) < 2:
        return list(range(count))
    before: list[set[int]] = [set() for _ in boxes]  # what must be read before each
    for i, first in enumerate(boxes):
        if first is None:
            continue
        for j, second in enumerate(boxes):
            if second is not None and i != j and above(first, second):
                before[j].add(i)
    order: list[int] = []
    done: set[int] = set()
    while len(order) < count:
        # "Above" is strict from top to bottom, so some shape is always free to be read.
        ready = next(i for i in range(count) if i not in done and before[i] <= done)
        order.append(ready)
        done.add(ready)
    return order
