"""The class report's plots, drawn by matplotlib as inline SVG.

matplotlib is imported when a plot is drawn, never with this module: commands that draw none
start without it. The SVG is deterministic (fixed ids, no date, no version) and its text stays
text, which the browser draws in a font it has.
"""

from __future__ import annotations

import io
import math
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from grader.reports.models import AttentionPattern
from grader.reports.safe import plain
from grader.reports.stats import OUTCOMES, ClassStats, ProblemStats
from grader.reports.text import num

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

# Any: matplotlib types the keys as a Literal of its every setting.
STYLE: Any = {
    "svg.hashsalt": "attention-grader",
    "svg.fonttype": "none",
    "text.parse_math": False,  # a `$` in a label is a dollar sign
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial"],
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#888",
    "axes.labelcolor": "#222",
    "xtick.color": "#444",
    "ytick.color": "#444",
}
# Written in the SVG by default; None leaves each out.
NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}
BAR = "#4a7bd0"
OUTCOME_COLOURS = dict(
    zip(OUTCOMES, ("#2e7d32", "#9ccc65", "#f9a825", "#c62828", "#d0d0d0"), strict=True)
)


def render_svg(figure: Figure, title: str) -> str:
    """The figure as an `<svg>` element for inline HTML: no XML prolog, no doctype, and
    `title` as its accessible name."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={**NO_METADATA, "Title": plain(title)})
    text = buffer.getvalue()
    return text[text.index("<svg") :].strip()


def styled() -> AbstractContextManager[None]:
    """matplotlib's settings as STYLE sets them, for the plots drawn inside."""
    import matplotlib

    return matplotlib.rc_context(STYLE)


def height(problems: int) -> float:
    """Both plots' height in inches, side by side: enough for a bar per problem."""
    return max(3.0, 0.8 + 0.26 * problems)


def new_figure(width: float, height: float) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.subplots()


def whole_numbers(axis: Axis) -> None:
    """Ticks at whole numbers only on `axis`: it counts submissions."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def totals_histogram(stats: ClassStats) -> str:
    """How many submissions scored each tenth of the maximum total, with the median marked."""
    with styled():
        figure, axes = new_figure(6.4, height(len(stats.problems)))
        top = stats.max_total or max(stats.totals, default=0.0) or 1.0
        edges = [top * i / 10 for i in range(11)]
        axes.hist(stats.totals, bins=edges, color=BAR, edgecolor="white")
        if stats.totals:
            axes.axvline(
                stats.median_total,
                color="#222",
                linestyle="--",
                linewidth=1,
                label=f"median {num(stats.median_total)}",
            )
            axes.legend(frameon=False, fontsize=9)
        axes.set_xlim(0, top)
        axes.set_xlabel(f"total (out of {num(top)})")
        axes.set_ylabel("submissions")
        whole_numbers(axes.yaxis)
        return render_svg(figure, "Histogram of the submissions' totals")


def problem_outcomes(problems: list[ProblemStats]) -> str:
    """Per problem, a bar of its submissions split by outcome: full marks to not attempted."""
    with styled():
        figure, axes = new_figure(6.4, height(len(problems)))
        names = [plain(p.problem) for p in reversed(problems)]
        left = [0] * len(names)
        for name in OUTCOMES:
            counts = [p.outcomes[name] for p in reversed(problems)]
            axes.barh(names, counts, left=left, color=OUTCOME_COLOURS[name], label=name)
            left = [a + b for a, b in zip(left, counts, strict=True)]
        axes.set_xlabel("submissions")
        axes.set_xlim(0, max(left, default=0) or 1)
        whole_numbers(axes.xaxis)
        axes.tick_params(axis="y", length=0)
        figure.legend(
            loc="outside upper center",
            ncols=len(OUTCOMES),
            frameon=False,
            fontsize=9,
            handlelength=1,
            columnspacing=1.2,
        )
        return render_svg(figure, "Outcome of each problem across the class")


def attention_pattern(pattern: AttentionPattern) -> str:
    """The candidate's pattern beside the reference's, a heatmap per head: queries down, keys
    across, 0 to 1; blank where a value is not finite. One map: side by side; heads: the
    candidate's row over the expected row."""
    heads = len(pattern.got)
    maps = [("yours", g) for g in pattern.got] + [("expected", g) for g in pattern.expected]
    rows, columns = (1, 2) if heads == 1 else (2, heads)
    with styled():
        from matplotlib.figure import Figure

        figure = Figure(figsize=(0.8 + 2.0 * columns, 0.5 + 2.0 * rows), layout="constrained")
        axes = figure.subplots(rows, columns, squeeze=False).flatten()
        for index, ((label, values), ax) in enumerate(zip(maps, axes, strict=True)):
            cells = [[math.nan if v is None else v for v in line] for line in values]
            image = ax.imshow(cells, cmap="viridis", vmin=0.0, vmax=1.0)
            head = index % heads
            ax.set_title(label if heads == 1 else f"{label}, head {head}", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
        axes[-columns].set_xlabel("keys (input tokens)", fontsize=8)
        axes[-columns].set_ylabel("queries (output tokens)", fontsize=8)
        figure.colorbar(image, ax=list(axes), shrink=0.8)
        return render_svg(figure, f"Attention {pattern.kind}: the candidate's and the expected")
