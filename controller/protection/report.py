"""The HTML report of `shoectl analyze shuffle --report`: the tests, and their plots.

matplotlib draws and scipy supplies the reference distributions; both come
with the optional `analysis` extra, so the table PC does not carry them. The
plots are embedded as PNG, so the report is one file to mail or archive.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cardshoe.controller.errors import UserError
from cardshoe.controller.protection.shuffle_tests import RANKS, ShuffleAnalysis
from cardshoe.controller.rules.cards import RANK_SYMBOLS


def write_report(analysis: ShuffleAnalysis, path: Path, sources: Sequence[str]) -> None:
    """Write the report; bad input when the analysis extra is missing, the journals are too
    short for its plots, or the file unwritable."""
    if not analysis.positions_tested:
        raise UserError(f"--report cannot be drawn: {analysis.too_few_cards()}")
    # Late: matplotlib and scipy are the optional 'analysis' extra, which may be missing.
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
        from scipy import stats  # type: ignore[import-untyped]
    except ImportError:
        raise UserError(
            "--report needs matplotlib and scipy: pip install 'cardshoe[analysis]'"
        ) from None
    figures = [_positions_figure(pyplot, stats, analysis)]
    if analysis.carry_overs:
        figures.append(_carry_over_figure(pyplot, stats, analysis))
    rows = "".join(
        f"<tr><td>{test.name}</td><td>{test.statistic:.3f}</td>"
        f"<td>{'—' if test.dof is None else test.dof}</td><td>{test.p_value:.4g}</td>"
        f"<td>{'pass' if test.passed else '<b>FAIL</b>'}</td></tr>"
        for test in analysis.tests
    )
    images = "".join(f'<figure><img alt="{alt}" src="data:image/png;base64,{data}"></figure>'
                     for alt, data in figures)  # fmt: skip
    journals = ", ".join(html.escape(source) for source in sources)
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Shuffle analysis</title>"
        "<style>body{font-family:sans-serif;max-width:1000px;margin:auto}"
        "td,th{padding:4px 10px;border-bottom:1px solid #ccc}img{max-width:100%}</style>"
        f"</head><body><h1>Shuffle analysis</h1><p>{analysis.shoes} shoes from {journals}. "
        "Verdicts at 95% confidence; see docs/game-protection.md for what each test means "
        "and what to do when one fails.</p><table><tr><th>test</th><th>statistic</th>"
        f"<th>dof</th><th>p-value</th><th>verdict</th></tr>{rows}</table>{images}</body></html>"
    )
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot write the report: {exc.strerror or exc}") from None


def _png(pyplot: Any, figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    pyplot.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _positions_figure(pyplot: Any, stats: Any, analysis: ShuffleAnalysis) -> tuple[str, str]:
    """Standardised residuals of rank by position group, and the statistic on its law."""
    figure, (heat, law) = pyplot.subplots(1, 2, figsize=(12, 4.5), width_ratios=[2, 1])
    residuals = [
        [(seen - wanted) / wanted**0.5 for seen, wanted in zip(group.observed, group.expected,
                                                               strict=True)]
        for group in analysis.groups
    ]  # fmt: skip
    image = heat.imshow(
        list(map(list, zip(*residuals, strict=True))), aspect="auto", cmap="RdBu_r", vmin=-4, vmax=4
    )
    heat.set_yticks(range(len(RANKS)), [RANK_SYMBOLS[rank - 1] for rank in RANKS])
    heat.set_xlabel("position group (first cards out on the left)")
    heat.set_title("rank by position: (observed - expected) / sqrt(expected)")
    figure.colorbar(image, ax=heat)
    chi_squared = next((test for test in analysis.tests if test.name == "rank_by_position"), None)
    if chi_squared is not None and chi_squared.dof:
        dof = chi_squared.dof
        spread = 5 * (2 * dof) ** 0.5
        low, high = max(0.0, dof - spread), max(dof + spread, chi_squared.statistic * 1.05)
        xs = [low + (high - low) * step / 400 for step in range(401)]
        law.plot(xs, stats.chi2.pdf(xs, dof), label=f"chi-squared, {dof} dof")
        law.axvline(chi_squared.statistic, color="red", label="observed")
        law.axvline(stats.chi2.ppf(0.95, dof), color="grey", linestyle="--", label="95% limit")
        law.legend()
        law.set_title("the statistic under a fair shuffle")
    return "rank by position", _png(pyplot, figure)


def _carry_over_figure(pyplot: Any, stats: Any, analysis: ShuffleAnalysis) -> tuple[str, str]:
    """Pairs kept together from each shoe to the next, beside what a fair shuffle keeps."""
    figure, (bars, law) = pyplot.subplots(1, 2, figsize=(12, 4), width_ratios=[2, 1])
    items = analysis.carry_overs
    bars.bar(range(len(items)), [item.kept for item in items], label="kept together")
    bars.plot(range(len(items)), [item.expected for item in items], "k_", markersize=14,
              label="expected, fair")  # fmt: skip
    bars.set_xticks(range(len(items)), [str(number) for number in range(2, len(items) + 2)])
    bars.set_xlabel("shoe (against the one before it at its table)")
    bars.set_ylabel("adjacent pairs kept in order")
    bars.legend()
    kept = sum(item.kept for item in items)
    mean = sum(item.expected for item in items)
    top = int(max(kept, mean + 5 * mean**0.5 + 5)) + 1
    counts = list(range(top + 1))
    law.bar(counts, stats.poisson.pmf(counts, mean), color="grey", label=f"Poisson({mean:.1f})")
    law.axvline(kept, color="red", label=f"observed {kept}")
    law.legend()
    law.set_title("pairs kept, all shoes: fair law")
    return "carry-over", _png(pyplot, figure)
