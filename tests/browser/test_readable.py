"""Readable in light and dark (axe-core), maths typeset and code styled like notebook code.

One notebook, opened without a kernel, holds a hermes output of each kind: a live run (with
Stop), a finished run with a tool card, a cancelled run (with its note) and a saved answer from
another machine (maths and a code block). The sidebar shows a finished session, while another
session streams in the list.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import nbformat
import pytest

from ..server_process import JupyterServerProcess
from .conftest import ARTIFACTS, REPO
from .lab_page import RUN_OUTPUT, LabPage
from .test_notebook_reopen import RUN_MIME, wait_run

AXE = REPO / "labextension" / "node_modules" / "axe-core" / "axe.min.js"
NOTEBOOK = "readable.ipynb"
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
SAVED_ANSWER = (
    "The sample mean is $\\bar{x} = 4.2$.\n\n"
    "```python\nresult = compute_the_sample_mean_of_the_column(frame['measurements_in_millimetres'])"
    " * a_rather_long_scaling_factor_name"
    " + another_rather_long_offset_name_that_no_notebook_is_wide_enough_to_show_on_one_line\n```\n"
)
# axe over the hermes elements only: the rest of JupyterLab is not ours to fix.
_AXE_JS = """async () => {
  const result = await window.axe.run(
    {include: [['.jp-HermesSidebar'], ['.jp-HermesRunOutput']]},
    {resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary}))}));
}"""


# WCAG AA text contrast, computed here: axe's color-contrast rule finds no text node to check in
# a JupyterLab page (only inputs), so it cannot fail for our elements. Every element with its
# own visible text is checked: its colour (opacity included) over the composited backgrounds
# of its ancestors; 4.5:1, or 3:1 for large text. Disabled controls are exempt, as in WCAG.
_CONTRAST_JS = """(scopes) => {
  const parse = c => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, bottom) => { const a = top[3]; return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]); };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const background = el => { const layers = [];
    for (let n = el; n; n = n.parentElement) { const c = parse(getComputedStyle(n).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    return layers.reverse().reduce((acc, c) => over(c, acc), [255, 255, 255, 1]); };
  const failures = []; let checked = 0;
  for (const scope of scopes) for (const root of document.querySelectorAll(scope)) for (const el of root.querySelectorAll('*')) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const rect = el.getBoundingClientRect();
    if (!own || rect.width === 0 || rect.height === 0 || el.closest('[disabled], mjx-container, .CodeMirror')) continue;
    const style = getComputedStyle(el); if (style.visibility !== 'visible') continue;
    let opacity = 1; for (let n = el; n; n = n.parentElement) opacity *= Number(getComputedStyle(n).opacity);
    const bg = background(el); const fg = parse(style.color); fg[3] *= opacity;
    const text = over(fg, bg); const [hi, lo] = [lum(text), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05); const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    checked++;
    if (ratio < (large ? 3 : 4.5)) failures.push({text: el.textContent.trim().slice(0, 40), cls: el.className,
      ratio: Math.round(ratio * 100) / 100, color: style.color, background: 'rgb(' + bg.slice(0, 3).map(Math.round).join(',') + ')'});
  }
  return {checked, failures};
}"""


def _output(run_id: str, session_id: str, status: str, markdown: str) -> Any:
    return nbformat.v4.new_output("display_data", data={
        RUN_MIME: {"run_id": run_id, "session_id": session_id, "seq": 1, "status": status},
        "text/markdown": markdown, "text/plain": markdown,
    })


@pytest.fixture(scope="module")
def scene(make_lab_server: Callable[[str], JupyterServerProcess]) -> Iterator[tuple[JupyterServerProcess, str]]:
    # Its own server: the theme is a user setting, and it must not leak into other scenes.
    server = make_lab_server("readable")
    finished = server.new_session(title="Finished analysis")
    tool_run = server.start_run(finished, "use a tool")
    wait_run(server, tool_run, "completed")
    cancelled_run = server.start_run(finished, "count to 100000")
    wait_run(server, cancelled_run, "running", min_seq=10)
    server.post(f"runs/{cancelled_run}/cancel")
    wait_run(server, cancelled_run, "cancelled")
    streaming = server.new_session(title="Streaming analysis")
    live_run = server.start_run(streaming, "count to 100000")
    wait_run(server, live_run, "running", min_seq=5)

    nb = nbformat.v4.new_notebook()
    outputs = [
        _output(live_run, streaming, "running", "1"),
        nbformat.from_dict(json.loads(json.dumps(
            {"output_type": "display_data", "metadata": {}, "data": server.get(f"runs/{tool_run}/bundle").json()}))),
        nbformat.from_dict({"output_type": "display_data", "metadata": {},
                            "data": server.get(f"runs/{cancelled_run}/bundle").json()}),
        _output("e17746fe0000", "abc123", "completed", SAVED_ANSWER),
    ]
    for output in outputs:
        cell = nbformat.v4.new_code_cell("%%hermes\n…")
        cell.outputs = [output]
        nb.cells.append(cell)
    nbformat.write(nb, server.notebooks / NOTEBOOK)
    yield server, finished
    server.post(f"runs/{live_run}/cancel")


def _open_scene(lab: LabPage, session_id: str, theme: str) -> None:
    lab.open_notebook(NOTEBOOK, kernel=False)
    lab.open_sidebar()
    lab.open_session(session_id)
    lab.page.locator(f"{RUN_OUTPUT}[data-saved=true] mjx-container").first.wait_for(timeout=30_000)
    lab.page.locator(f"{RUN_OUTPUT} .jp-HermesToolCard").first.wait_for()
    lab.page.locator(f"{RUN_OUTPUT} [data-testid=hermes-run-stop]").first.wait_for()
    if theme != "light":
        lab.execute("apputils:change-theme", {"theme": THEMES[theme]})
        lab.page.wait_for_function(
            "(name) => document.body.dataset.jpThemeName === name && document.body.dataset.jpThemeLight === 'false'",
            arg=THEMES[theme])
    # The theme's stylesheet is in; wait two frames for the repaint.
    lab.page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _screenshots(lab: LabPage, theme: str) -> None:
    outputs = lab.page.locator(RUN_OUTPUT)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    outputs.nth(0).screenshot(path=str(ARTIFACTS / f"cell-streaming-{theme}.png"))
    outputs.nth(1).screenshot(path=str(ARTIFACTS / f"cell-tool-card-{theme}.png"))
    lab.page.locator(".jp-HermesSidebar").screenshot(path=str(ARTIFACTS / f"sidebar-{theme}.png"))
    lab.screenshot(f"readable-{theme}")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_hermes_elements_have_no_serious_accessibility_violations(
    make_lab: Callable[[JupyterServerProcess], LabPage], scene: tuple[JupyterServerProcess, str], theme: str,
) -> None:
    # axe-core checks the sidebar and every hermes output (text contrast at WCAG AA 4.5:1
    # among its rules) with JupyterLab's light and dark theme variables.
    server, finished = scene
    lab = make_lab(server)
    _open_scene(lab, finished, theme)
    _screenshots(lab, theme)
    lab.page.add_script_tag(path=str(AXE))
    violations = lab.page.evaluate(_AXE_JS)
    (ARTIFACTS / f"axe-{theme}.json").write_text(json.dumps(violations, indent=1), encoding="utf-8")
    contrast = lab.page.evaluate(_CONTRAST_JS, [".jp-HermesSidebar", ".jp-HermesRunOutput"])
    (ARTIFACTS / f"contrast-{theme}.json").write_text(json.dumps(contrast, indent=1), encoding="utf-8")
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps(serious, indent=1)
    assert contrast["checked"] > 50, contrast
    assert contrast["failures"] == [], json.dumps(contrast["failures"], indent=1)


def test_maths_is_typeset_and_code_scrolls_on_the_editor_background(
    make_lab: Callable[[JupyterServerProcess], LabPage], scene: tuple[JupyterServerProcess, str],
) -> None:
    # A saved hermes answer with $\bar{x}$ and a long code line: MathJax typesets the maths
    # (the TeX source is gone from the text), and the code block keeps whole lines (no wrap,
    # a horizontal scroll) on the notebook editor's background.
    lab = make_lab(scene[0])
    lab.open_notebook(NOTEBOOK, kernel=False)
    saved = lab.page.locator(f"{RUN_OUTPUT}[data-saved=true]")
    saved.locator("mjx-container").first.wait_for(timeout=30_000)
    assert "\\bar" not in saved.inner_text()
    style = saved.locator("pre").first.evaluate(
        "(pre) => { const s = getComputedStyle(pre); const probe = document.createElement('div');"
        " probe.style.background = 'var(--jp-cell-editor-background)'; document.body.appendChild(probe);"
        " const want = getComputedStyle(probe).backgroundColor; probe.remove();"
        " return {ws: s.whiteSpace, ox: s.overflowX, bg: s.backgroundColor, want,"
        " scrolls: pre.scrollWidth > pre.clientWidth}; }")
    assert style["ws"] == "pre" and style["ox"] == "auto", style
    assert style["bg"] == style["want"] and style["bg"] not in ("rgba(0, 0, 0, 0)", "transparent"), style
    assert style["scrolls"], style


def test_a_sidebar_answer_typesets_its_maths_and_shows_code_as_in_a_notebook(lab: LabPage) -> None:
    # The demo's `write some code` streams a python block and $\bar{x} = …$ into the sidebar:
    # the settled reply has the maths typeset by MathJax and the code on the editor background,
    # whole lines (white-space: pre), never wrapped mid-word.
    lab.open()
    lab.open_sidebar()
    lab.new_session()
    lab.send("write some code")
    lab.wait_idle()
    reply = lab.assistant_rows().last
    reply.locator("mjx-container").first.wait_for(timeout=30_000)
    assert "\\bar" not in reply.inner_text()
    style = reply.locator("pre").first.evaluate(
        "(pre) => { const s = getComputedStyle(pre); return {ws: s.whiteSpace, ox: s.overflowX, font: s.fontFamily}; }")
    assert style["ws"] == "pre" and style["ox"] == "auto", style
    assert "mono" in style["font"].lower() or "courier" in style["font"].lower(), style
