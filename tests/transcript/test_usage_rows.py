"""Usage is never invented (docs/transcript.md): unreported counts fold to null and read "not reported";
a continued answer's usage line sums its parts where they were reported."""

from __future__ import annotations

from hermes_jupyter import events as ev
from hermes_jupyter.notebook.outputs import usage_words
from hermes_jupyter.transcript import fold
from hermes_jupyter.transcript.chain import summed_usage, whole_answer
from hermes_jupyter.transcript.rows import Transcript, UsageRow

from .test_fold import RUN, SID, rows


def _usage(**payload: object) -> UsageRow:
    t = fold(rows((ev.TOKEN, {"text": "Hi"}), (ev.USAGE, payload), (ev.DONE, {})), run_id=RUN, session_id=SID)
    return next(r for r in t.rows if isinstance(r, UsageRow))


def test_unreported_counts_are_null_and_read_not_reported() -> None:
    row = _usage(input_tokens=None, output_tokens=None, duration_s=2.0, model="smol")
    assert (row.input_tokens, row.output_tokens) == (None, None)
    assert usage_words(row) == "smol · tokens not reported · 2.0 s"
    assert "0" not in usage_words(UsageRow(id="u"))


def test_reported_counts_read_as_before() -> None:
    assert usage_words(_usage(input_tokens=1234, output_tokens=56)) == "1,234 tokens in · 56 out"


def test_a_continued_answer_sums_the_usage_of_its_parts_where_reported() -> None:
    first = UsageRow(id="a:usage", input_tokens=10, output_tokens=5, cost_usd=0.01, duration_s=1.0)
    second = UsageRow(id="b:usage", input_tokens=20, output_tokens=None, cost_usd=None, duration_s=2.0, model="m")
    total = summed_usage([first, second])
    assert (total.id, total.input_tokens, total.output_tokens, total.duration_s) == ("b:usage", 30, 5, 3.0)
    assert total.cost_usd is None and total.model == "m"  # a part without a price: no cost at all

    a = Transcript(run_id="a", session_id=SID, status="errored", rows=[first])
    b = Transcript(run_id="b", session_id=SID, status="completed", rows=[second], continues="a")
    whole = whole_answer(b, {"a": a}.get)
    assert [r for r in whole.rows if isinstance(r, UsageRow)] == [total]


def test_counts_the_backend_made_up_say_so_and_halves_round_as_in_the_labextension() -> None:
    from hermes_jupyter.agents.usage import usage_payload

    payload = usage_payload({"input_tokens": 3, "output_tokens": 4, "our_count": True}, duration_s=1.25, model="demo")
    row = _usage(**payload)
    assert row.our_count is True
    assert usage_words(row) == "demo · 3 tokens in · 4 out (our count) · 1.3 s"  # 1.25 → 1.3, as toFixed does
    assert "our_count" not in usage_payload({"our_count": True}, duration_s=1.0, model=None)  # nothing counted
    assert not _usage(input_tokens=3, output_tokens=4).our_count  # a provider's report
    both = summed_usage([row, UsageRow(id="b", input_tokens=1, output_tokens=1)])
    assert both.our_count  # part of the sum is ours
