"""The class report of a realistic class in a real browser: headless Chromium, 1280 px wide and
390 px (a phone), where the page never scrolls sideways: each table scrolls in its own box.

Required (it fails, not skips, without Chromium) where GRADER_BROWSER_TESTS=1 or CI is set;
scripts/setup.sh installs Chromium and scripts/test.sh sets the variable when it is there.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from grader.reports.html import render_feedback_html, render_html
from grader.reports.models import ProblemStatus, read_report
from grader.reports.redact import candidate_view
from tests.class_reports import MOST_FREQUENT, realistic_class

WIDTH, HEIGHT = 1280, 2000
# Appended to a copy of the page: measures the layout and writes it into the DOM as JSON.
PROBE = """<script>
const box = (e) => e.getBoundingClientRect();
const scores = document.querySelector("table.scores") || document.body;
const cut = [...document.querySelectorAll("body *")].filter(
  (e) => !(e instanceof SVGElement) && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1
    && getComputedStyle(e).overflowX === "visible");
const probe = document.createElement("pre");
probe.id = "probe";
probe.textContent = JSON.stringify({
  viewport: innerWidth,
  page: document.documentElement.scrollWidth,
  table: box(scores.parentElement).right,
  totals: [...scores.querySelectorAll(".total")].map((e) => [box(e).left, box(e).top,
                                                             box(e).right, box(e).bottom]),
  cut: cut.map((e) => e.tagName + ": " + e.textContent.slice(0, 60)),
  plots: [...document.querySelectorAll("figure svg")].map((e) => [box(e).left, box(e).top,
                                                                  box(e).width, box(e).height]),
  failure: (document.querySelector("#failures + .wide tbody tr") || {}).textContent,
  mistakes: [...document.querySelectorAll("td.details")].filter(
    (e) => e.textContent.includes("named mistake")).map((e) => [box(e).left, box(e).right]),
  fetched: performance.getEntriesByType("resource").map((e) => e.name),
});
document.body.append(probe);
</script>"""


def chromium() -> str:
    """Chromium's path; without it, a failure where the browser tests are required."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("GRADER_BROWSER_TESTS") == "1" or os.environ.get("CI"):
        pytest.fail("chromium is missing: scripts/setup.sh installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed (scripts/setup.sh installs it)")


def browse(page: Path, profile: Path, *action: str, width: int = WIDTH) -> str:
    """Open `page` in headless Chromium at `width` x HEIGHT, offline, and do `action`."""
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",  # as root, Chromium runs only without its sandbox
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing resolves: the page must need nothing
        f"--user-data-dir={profile}",
        f"--window-size={width},{HEIGHT}",
        *action,
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


NARROWEST = 500
"""Headless Chromium's narrowest window: a phone's width is an iframe's within it."""
FRAME = """<!DOCTYPE html><html><body style="margin:0">
<iframe src="{src}" style="width:{width}px;height:{height}px;border:0;display:block"></iframe>
<script>addEventListener("message", (event) => {{
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = event.data;
  document.body.append(probe);
}});</script></body></html>"""


def framed(page: Path, width: int) -> Path:
    """`page` in an iframe `width` px wide: its own viewport, as a phone's."""
    frame = page.with_name(f"framed-{page.name}")
    frame.write_text(FRAME.format(src=page.name, width=width, height=HEIGHT))
    return frame


def measure(page: Path, profile: Path, width: int = WIDTH) -> dict[str, Any]:
    """The layout PROBE measured in the browser (under NARROWEST, in an iframe that posts it)."""
    probed = page.with_name("probed.html")
    probe = (
        PROBE
        if width >= NARROWEST
        else PROBE.replace(
            "document.body.append(probe);", 'parent.postMessage(probe.textContent, "*");'
        )
    )
    probed.write_text(page.read_text().replace("</body>", probe + "</body>"))
    shown = probed if width >= NARROWEST else framed(probed, width)
    dom = browse(shown, profile, "--dump-dom", width=max(width, NARROWEST))
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    measured: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return measured


def inked(image: Image.Image, box: tuple[int, int, int, int]) -> float:
    """The share of pixels in `box` that are not near white."""
    grey = image.convert("L").crop(box)
    histogram = grey.histogram()
    return sum(histogram[:200]) / max(1, sum(histogram))


def test_report_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(realistic_class()), encoding="utf-8")
    m = measure(page, tmp_path / "profile")
    assert m["viewport"] == WIDTH
    assert m["page"] <= WIDTH, "the page scrolls sideways"
    assert m["table"] <= WIDTH, "the submissions table is wider than the window"
    assert m["cut"] == [], "content overflows its box"
    assert m["fetched"] == [], "the page fetched something"
    assert len(m["totals"]) == 31  # the header and every submission's
    assert all(left >= 0 and right <= WIDTH for left, _, right, _ in m["totals"])
    assert all(w > 400 and h > 150 for _, _, w, h in m["plots"]) and len(m["plots"]) == 2
    assert m["failure"].startswith("timed out" + MOST_FREQUENT[0])

    shot = tmp_path / "report.png"
    browse(page, tmp_path / "profile", f"--screenshot={shot}")
    assert shot.stat().st_size > 50_000
    with Image.open(shot) as image:
        assert image.size == (WIDTH, HEIGHT)
        assert 0.03 < inked(image, (0, 0, WIDTH, HEIGHT)) < 0.5  # not blank, not a black page
        for left, top, right, bottom in m["totals"][:10]:  # the totals are drawn where they are
            if bottom < HEIGHT:
                assert inked(image, (int(left), int(top), int(right), int(bottom))) > 0.005
        assert inked(image, (0, 90, WIDTH, 450)) > 0.05  # the plots at the top


PHONE = 390


def test_report_and_feedback_on_a_phone(tmp_path: Path) -> None:
    """At 390 px the page does not scroll sideways and nothing is cut: the wide tables scroll in
    their own boxes, the plots stand one above the other, the feedback's details wrap."""
    reports = realistic_class()
    page = tmp_path / "report.html"
    page.write_text(render_html(reports), encoding="utf-8")
    m = measure(page, tmp_path / "profile", width=PHONE)
    assert m["viewport"] == PHONE
    assert m["page"] <= PHONE, "the page scrolls sideways"
    assert m["table"] <= PHONE, "the submissions table's box is wider than the window"
    assert m["cut"] == [], "content overflows its box"
    (left, top, width, height), (left2, top2, width2, _) = m["plots"]
    assert top2 >= top + height and left2 == left, "the plots are not one above the other"
    assert 300 < width <= PHONE and 300 < width2 <= PHONE
    feedback = tmp_path / "feedback.html"
    failing = next(r for r in reports if r.total < r.max_total)
    feedback.write_text(render_feedback_html(candidate_view(failing)), encoding="utf-8")
    f = measure(feedback, tmp_path / "profile", width=PHONE)
    assert f["page"] <= PHONE and f["cut"] == [], f
    shot = tmp_path / "phone.png"
    browse(framed(page, PHONE), tmp_path / "profile", f"--screenshot={shot}", width=NARROWEST)
    with Image.open(shot) as image:
        assert inked(image, (0, 0, PHONE, HEIGHT)) > 0.03  # drawn, not blank
        assert inked(image, (PHONE + 2, 0, NARROWEST, HEIGHT)) < 0.001  # and only in the frame


def test_similar_pairs_side_by_side_in_chromium(tmp_path: Path) -> None:
    """The similarity section: each pair's two submissions in two columns that fit the window,
    the matching lines marked; the page never scrolls sideways."""
    from grader import api
    from grader.reports.similarity_html import similarity_section
    from tests.similarity_class import copied_class, write_class

    students, _ = copied_class()
    folder = write_class(students, tmp_path / "class")
    compared = api.similarity(folder, problems=["multi_head_attention"])
    page = tmp_path / "similarity.html"
    page.write_text(html_page(similarity_section(compared)), encoding="utf-8")
    shot = tmp_path / "similarity.png"
    browse(page, tmp_path / "profile", f"--screenshot={shot}")
    with Image.open(shot) as image:
        rgb = image.convert("RGB")
        rows = range(400, HEIGHT, 20)
        marked = [x for x in range(0, WIDTH, 8) if any(rgb.getpixel((x, y)) == HIT for y in rows)]
    assert marked and min(marked) < WIDTH // 2 < max(marked), "both columns mark their matches"
    assert max(marked) < WIDTH, marked
    layout = measure(page, tmp_path / "probe")
    assert layout["page"] <= layout["viewport"], layout["cut"]


HIT = (255, 224, 138)  # the background of a matching line


def html_page(parts: list[str]) -> str:
    from grader.reports.html import page

    return page("Similarity", parts)


def test_the_mistake_is_on_a_phones_screen(tmp_path: Path) -> None:
    """A candidate's feedback page from `grader grade --format html`, at 390 px: each check's
    details, the named mistake, under its name within the screen, not in a column scrolled off
    it; the problems not attempted are listed with what they were worth, so that the total adds
    up."""
    from click.testing import CliRunner

    from grader.cli.main import cli

    submission = Path(__file__).resolve().parent.parent / "submissions" / "classic_mistakes"
    out = tmp_path / "out"
    args = ["grade", str(submission), "--backend", "local", "--format", "html", "--seed", "1"]
    graded = CliRunner().invoke(cli, [*args, "--out", str(out)], catch_exceptions=False)
    assert graded.exit_code == 0, graded.output
    feedback = out / "feedback" / "classic_mistakes.html"
    m = measure(feedback, tmp_path / "profile", width=PHONE)
    assert m["page"] <= PHONE and m["cut"] == [], m
    assert len(m["mistakes"]) >= 3, "the named mistakes are not on the page"
    assert all(left >= 0 and right <= PHONE for left, right in m["mistakes"]), m["mistakes"]
    report = read_report(out / "classic_mistakes.json")
    skipped = [p for p in report.problems if p.status is ProblemStatus.not_attempted]
    listed = re.search(r'<p id="not-attempted">(.*?)</p>', feedback.read_text())
    assert skipped and listed, "no list of the problems not attempted"
    for problem in skipped:
        assert f"<strong>{problem.problem}</strong> 0/{problem.max_score:g}" in listed.group(1)
    shot = tmp_path / "feedback.png"
    browse(framed(feedback, PHONE), tmp_path / "profile", f"--screenshot={shot}", width=NARROWEST)
    with Image.open(shot) as image:
        assert inked(image, (0, 0, PHONE, HEIGHT)) > 0.02  # drawn, not blank


def test_similar_pairs_on_a_phone(tmp_path: Path) -> None:
    """The class report with its similarity section at 500 px and 390 px: the code panes stand
    one above the other, each scrolling in its own box; the page never scrolls sideways."""
    from grader import api
    from tests.similarity_class import copied_class, write_class

    students, _ = copied_class()
    folder = write_class(students, tmp_path / "class")
    compared = api.similarity(folder, problems=["multi_head_attention"])
    page = tmp_path / "report.html"
    page.write_text(render_html(realistic_class(), similarity=compared), encoding="utf-8")
    for width in (NARROWEST, PHONE):
        m = measure(page, tmp_path / "profile", width=width)
        assert m["page"] <= width, (width, m["page"], m["cut"])
        assert m["cut"] == [], m["cut"]
