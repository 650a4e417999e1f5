"""The dashboard's realtime views (docs/dashboard.md, "Realtime turns") in the real Chromium: a turn's
timeline on its request page, a connection's turns as one timeline, realtime rows in the journal, and the
formatting functions behind them (``views/realtime_events.js``) called in the browser.

Most tests read turns written into a session's journal through the journal's own record methods
(tests/dashboard/realtime_turns.py) and served by the real control API, so the views are proven whatever
the protocols send; the last test makes turns through the real server with the openai SDK.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from llmts import LlmTestServer, SessionClient
from llmts.runtime.journal import Journal
from llmts.server.app import LlmtsApp
from tests.dashboard.browser import configured_expect, login, open_view, shot
from tests.dashboard.realtime_turns import (
    GEMINI_PATH,
    OPENAI_PATH,
    PCM,
    PCM_B64,
    complete,
    gemini_turns,
    openai_turns,
    record,
)

XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
CONNECTION = "rtc_0f3a9c51d2e84b7a9e61c0de"
GEMINI_CONNECTION = "rtc_77aa00bb11cc22dd33ee44ff"


class _Served:
    """The app in this process behind werkzeug's HTTP server (a thread), so the test can write turns into
    a session's journal directly while Chromium reads them over HTTP."""

    def __init__(self) -> None:
        from werkzeug.serving import WSGIRequestHandler, make_server

        class _Quiet(WSGIRequestHandler):
            def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
                """The dashboard polls every second: no access log."""

        self.app = LlmtsApp()
        self._http = make_server("127.0.0.1", 0, self.app, threaded=True, request_handler=_Quiet)
        self.url = f"http://127.0.0.1:{self._http.server_port}"
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="dashboard-realtime", daemon=True
        )
        self._thread.start()
        self.server = LlmTestServer.attach(self.url)

    def journal(self, session: SessionClient) -> Journal:
        return self.app.registry.get(session.id).journal

    def stop(self) -> None:
        self._http.shutdown()
        self._thread.join(10)
        self._http.server_close()


@pytest.fixture(scope="module")
def served() -> Iterator[_Served]:
    served = _Served()
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture
def rt_session(served: _Served) -> Iterator[SessionClient]:
    created = served.server.create_session()
    yield created
    created.delete()


def _texts(locator: Any) -> list[str]:
    return [" ".join(text.split()) for text in locator.all_inner_texts()]


def test_a_realtime_turn_is_a_timeline_of_client_and_server_events(
    browser_page: Any, served: _Served, rt_session: SessionClient
) -> None:
    expect, page = configured_expect(), browser_page
    journal = served.journal(rt_session)
    for turn in openai_turns(XSS):
        record(journal, CONNECTION, "openai", OPENAI_PATH, turn)

    open_view(page, served.url, f"sessions/{rt_session.id}/journal")
    rows = page.locator("#journal-body tr")
    expect(rows).to_have_count(4)
    for row in rows.all():  # recognisable in the list: operation, channel, the connection's short id
        expect(row).to_contain_text("realtime")
        expect(row).to_contain_text("websocket")
        expect(row.locator(f"a[data-connection='{CONNECTION}']")).to_have_text("rtc_…61c0de")

    expect(page.locator("#journal-body tr[data-sequence='4']")).to_contain_text("closed 4000")

    # The tool call turn: the user's text (shown literally), the call highlighted, completed.
    page.locator("#journal-body tr[data-sequence='1'] td").first.click()
    timeline = page.locator("#realtime-timeline")
    expect(timeline.locator("li[data-side='client']")).to_have_count(3)
    expect(timeline.locator("li[data-side='client']").nth(1)).to_contain_text(f"text={XSS}")
    tool = timeline.locator("li[data-kind='tool']")
    expect(tool.first).to_contain_text("function_call get_weather call_1")
    expect(tool.last).to_contain_text('get_weather({"city":"Paris"}) call_1')
    expect(timeline.locator("li[data-outcome]")).to_have_text(
        "outcome completed 6 event(s) written, terminal event sent", use_inner_text=True
    )
    assert page.locator("#request-detail img, #request-detail script").count() == 0
    assert page.evaluate("window.__xss") is None

    # The answer after the tool's output: the output highlighted, three deltas as one line.
    open_view(page, served.url, f"sessions/{rt_session.id}/journal")
    page.locator("#journal-body tr[data-sequence='2'] td").first.click()
    output = timeline.locator("li[data-side='client'][data-kind='tool-output']")
    expect(output).to_contain_text('call_1 → {"sky": "clear"}')
    text = timeline.locator("li[data-type='response.output_text.delta']")
    expect(text).to_have_count(1)
    expect(text).to_contain_text("response.output_text.delta \u00d73")
    expect(text.locator(".rt-text")).to_have_text("Sunny in Paris.")
    expect(timeline.locator("li[data-type='response.done']")).to_contain_text(
        "status completed, usage 9 in / 3 out"
    )
    expect(page.locator("#request-detail dl.facts")).to_contain_text("events written6")

    # The spoken turn: audio as a byte count (never its base64), the transcript as one line.
    open_view(page, served.url, f"sessions/{rt_session.id}/journal")
    page.locator("#journal-body tr[data-sequence='3'] td").first.click()
    expect(timeline.locator("li[data-type='response.output_audio.delta']")).to_have_text(
        f"server response.output_audio.delta \u00d72 audio: {len(PCM)} bytes", use_inner_text=True
    )
    expect(timeline.locator("li[data-type='response.output_audio_transcript.delta'] .rt-text")).to_have_text(
        "Bye now."
    )
    expect(timeline.locator("li[data-side='client'][data-kind='audio']")).to_contain_text("audio: 4800 bytes")
    expect(page.locator("#response-preview ol.frames li").first).to_contain_text("bytes of audio>")
    assert PCM_B64[:40] not in page.content() and PCM_B64[-40:] not in page.content()

    # The closed turn: the close frame is the outcome.
    open_view(page, served.url, f"sessions/{rt_session.id}/journal")
    page.locator("#journal-body tr[data-sequence='4'] td").first.click()
    expect(timeline.locator("li[data-outcome]")).to_have_text(
        "outcome closed code 4000 scripted close; 1 event(s) written", use_inner_text=True
    )
    expect(timeline.locator("li[data-outcome]")).to_have_class("rt-row outcome bad")
    expect(page.locator("#request-detail dl.facts")).to_contain_text("close frame sent4000 scripted close")

    # The whole connection, one timeline in order, from the turn's link.
    page.click("#connection-link")
    expect(page.locator("h1")).to_have_text(f"Connection {CONNECTION}")
    turns = page.locator("#connection-timeline li.rt-turn")
    expect(turns).to_have_count(4)
    assert [turn.get_attribute("data-sequence") for turn in turns.all()] == ["1", "2", "3", "4"]
    outcomes = page.locator("#connection-timeline li[data-outcome]")
    assert [o.get_attribute("data-outcome") for o in outcomes.all()] == ["completed"] * 3 + ["closed"]
    items = _texts(page.locator("#connection-timeline > li"))
    first_call = next(i for i, t in enumerate(items) if "function_call get_weather" in t)
    first_output = next(i for i, t in enumerate(items) if 'call_1 → {"sky": "clear"}' in t)
    answer = next(i for i, t in enumerate(items) if "Sunny in Paris." in t)
    assert first_call < first_output < answer  # continuous: turn 2's client events follow turn 1's end
    assert page.evaluate("window.__xss") is None
    shot(page, "realtime")

    turns.nth(1).locator("a").click()  # back to one turn
    expect(page.locator("#realtime-timeline li[data-type='response.output_text.delta']")).to_have_count(1)
    shot(page, "realtime-turn")


def test_gemini_live_turns_assemble_parts_and_end_cancelled_or_aborted(
    browser_page: Any, served: _Served, rt_session: SessionClient
) -> None:
    expect, page = configured_expect(), browser_page
    journal = served.journal(rt_session)
    for turn in gemini_turns():
        record(journal, GEMINI_CONNECTION, "gemini", GEMINI_PATH, turn)
    open_view(page, served.url, f"sessions/{rt_session.id}/connections/{GEMINI_CONNECTION}")
    timeline = page.locator("#connection-timeline")
    expect(timeline.locator("li.rt-turn")).to_have_count(3)
    expect(timeline.locator("li[data-kind='tool']")).to_have_text(
        'server toolCall.functionCalls get_weather({"city":"Paris"}) fc_1', use_inner_text=True
    )
    expect(timeline.locator("li[data-kind='tool-output']")).to_contain_text('fc_1 → {"rain":true}')
    text = timeline.locator("li[data-type='serverContent.modelTurn.parts[].text']")
    expect(text).to_have_count(2)  # one per turn, each assembled across its messages
    expect(text.first.locator(".rt-text")).to_have_text("Rain in Paris.")
    expect(text.first).to_contain_text("\u00d72")
    expect(timeline.locator("li[data-kind='audio']")).to_contain_text(f"audio: {len(PCM)} bytes")
    expect(timeline.locator("li[data-type='serverContent.outputTranscription'] .rt-text")).to_have_text(
        "Rain in Paris."
    )
    outcomes = timeline.locator("li[data-outcome]")
    expect(outcomes).to_have_count(3)
    expect(outcomes.nth(1)).to_have_text(
        "outcome cancelled turn_detected; 3 event(s) written", use_inner_text=True
    )
    expect(outcomes.nth(2)).to_have_text(
        "outcome aborted connection dropped without a close frame; 1 event(s) written", use_inner_text=True
    )
    assert PCM_B64[:40] not in page.content()
    expect(page.locator("#connection-about")).to_contain_text(f"gemini · {GEMINI_PATH} · 3 turns")


def test_the_connection_view_follows_turns_as_they_arrive_and_finish(
    browser_page: Any, served: _Served, rt_session: SessionClient
) -> None:
    expect, page = configured_expect(), browser_page
    journal = served.journal(rt_session)
    first, second, *_ = openai_turns("hi")
    record(journal, CONNECTION, "openai", OPENAI_PATH, first)
    open_view(page, served.url, f"sessions/{rt_session.id}/connections/{CONNECTION}")
    timeline = page.locator("#connection-timeline")
    expect(timeline.locator("li.rt-turn")).to_have_count(1)
    pending = record(journal, CONNECTION, "openai", OPENAI_PATH, second, finish=False)
    expect(timeline.locator("li[data-outcome]").nth(1)).to_have_text(
        "outcome in progress", use_inner_text=True
    )
    complete(journal, pending, second)
    expect(timeline.locator("li[data-outcome]").nth(1)).to_contain_text(
        "outcome completed", use_inner_text=True
    )
    expect(timeline.locator("li.rt-turn")).to_have_count(2)
    # Another connection's turn stays out; the journal filter lists only this connection's turns.
    record(journal, GEMINI_CONNECTION, "gemini", GEMINI_PATH, gemini_turns()[0])
    page.click("text=its turns in the journal")
    expect(page.locator("#filter-realtime_connection")).to_have_value(CONNECTION)
    expect(page.locator("#journal-body tr")).to_have_count(2)
    open_view(page, served.url, f"sessions/{rt_session.id}/connections/rtc_unknown")
    expect(page.locator("#connection-about")).to_contain_text("No turns of this connection")


_FORMAT = """async ([preview, truncated, client, entries]) => {
  const m = await import("/dashboard/static/views/realtime_events.js");
  return {
    server: m.serverRows(m.splitMessages(preview, truncated)),
    client: m.clientRows(client),
    outcomes: entries.map((entry) => m.turnOutcome(entry)),
    short: [m.shortConnection("rtc_0123456789abcdef"), m.shortConnection("rtc_1")],
  };
}"""


def test_the_formatting_functions_in_the_browser(browser_page: Any, served: _Served) -> None:
    """``views/realtime_events.js`` on its own: beta event names, a preview cut mid-message, text that is
    not an event, an error event, and every outcome the evidence fields can say."""
    page = browser_page
    page.goto(served.url + "/dashboard")
    events = [
        {"type": "response.text.delta", "item_id": "i", "content_index": 0, "delta": "Hel"},
        {"type": "response.audio.delta", "item_id": "i", "content_index": 1, "delta": PCM_B64[:400]},
        {"type": "response.text.delta", "item_id": "i", "content_index": 0, "delta": "lo"},
        {"type": "error", "error": {"type": "invalid_request_error", "code": "bad_event", "message": "no"}},
        {
            "type": "response.done",
            "response": {"status": "cancelled", "status_details": {"reason": "client_cancelled"}},
        },
    ]
    preview = (
        "".join(json.dumps(event) for event in events)
        + "not json\n"
        + '{"type": "response.output_text.delta", "de'
    )
    base = {"completed": True, "emitted_events": 2}
    entries = [
        {**base, "transport_outcome": "completed", "terminal_marker_observed": True},
        {**base, "transport_outcome": "early_end", "error_code": "cancelled_client_cancelled"},
        {**base, "transport_outcome": "early_end", "close_code": 1011, "close_reason": "boom"},
        {**base, "transport_outcome": "aborted"},
        {**base, "transport_outcome": "client_gone"},
        {**base, "status": 500, "error_code": "scripted_error"},
        {**base, "transport_outcome": "early_end"},
        {"completed": False},
    ]
    output = {"type": "function_call_output", "call_id": "call_9", "output": {"sky": "clear"}}
    client = [
        {"type": "input_audio_buffer.append", "audio": PCM_B64[:400], "event_id": "e1"},
        {"type": "conversation.item.create", "item": output},  # the output on the event's item
    ]
    result = page.evaluate(_FORMAT, [preview, True, client, entries])
    server = [(row["type"], row["text"], row["kind"], row["count"]) for row in result["server"]]
    assert server == [
        ("response.text.delta", "Hello", "text", 2),
        ("response.audio.delta", "audio: 300 bytes", "audio", 1),
        ("error", "bad_event: no", "error", 1),
        ("response.done", "status cancelled (client_cancelled)", "error", 1),
        ("(not an event)", "not json", "error", 1),
        ("(preview cut)", '{"type": "response.output_text.delta", "de', "", 1),
    ]
    assert [(row["text"], row["kind"]) for row in result["client"]] == [
        ("audio: 300 bytes", ""),
        ('call_9 \u2192 {"sky":"clear"}, item function_call_output', "tool-output"),
    ]
    assert [(o["label"], o["cls"]) for o in result["outcomes"]] == [
        ("completed", "good"),
        ("cancelled", "bad"),
        ("closed", "bad"),
        ("aborted", "bad"),
        ("client gone", "bad"),
        ("failed", "bad"),
        ("ended early", "bad"),
        ("in progress", "pending"),
    ]
    assert result["outcomes"][1]["detail"] == "client_cancelled; 2 event(s) written"
    assert result["short"] == ["rtc_…abcdef", "rtc_1"]


def test_turns_made_through_the_server_with_the_openai_sdk(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    """The real thing: turns of one WebSocket connection made with ``client.realtime.connect``, then read
    in the dashboard."""
    from websockets.exceptions import ConnectionClosed

    expect = configured_expect()
    session.configure(
        {
            "scenarios": [
                {
                    "operation": "realtime",
                    "responses": [
                        {
                            "tool_calls": [
                                {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
                            ]
                        },
                        {"text": "Sunny in Paris.", "chunks": ["Sunny ", "in ", "Paris."]},
                        {
                            "text": "Never finished.",
                            "chunks": ["Never ", "finished."],
                            "stream_delivery": {
                                "mode": "close",
                                "code": 4000,
                                "reason": "scripted close",
                                "after_content_frames": 1,
                            },
                        },
                    ],
                }
            ]
        }
    )
    client = session.openai_client(max_retries=0)
    connection = client.realtime.connect(model="gpt-realtime").enter()

    def turn() -> list[Any]:
        connection.send({"type": "response.create", "response": {"output_modalities": ["text"]}})
        events = []
        for event in connection:
            events.append(event)
            if event.type == "response.done":
                break
        return events

    try:
        weather = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
        connection.send({"type": "session.update", "session": {"type": "realtime", "tools": [weather]}})
        message = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"}]}
        connection.send({"type": "conversation.item.create", "item": message})
        assert any(e.type == "response.function_call_arguments.done" for e in turn())
        output = {"type": "function_call_output", "call_id": "call_1", "output": '{"sky": "clear"}'}
        connection.send({"type": "conversation.item.create", "item": output})
        assert any(e.type == "response.output_text.delta" for e in turn())
        with pytest.raises(ConnectionClosed):
            turn()
    finally:
        connection.close()

    entries = session.requests(operation="realtime", order="asc")
    assert len(entries) == 3 and len({e["realtime_connection"] for e in entries}) == 1
    rtc = entries[0]["realtime_connection"]
    login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    expect(page.locator(f"#journal-body a[data-connection='{rtc}']")).to_have_count(3)
    page.locator("#journal-body tr[data-sequence='2'] td").first.click()
    timeline = page.locator("#realtime-timeline")
    expect(timeline.locator("li[data-kind='tool-output']")).to_contain_text("call_1")
    expect(timeline.locator("li[data-type='response.output_text.delta'] .rt-text")).to_have_text(
        "Sunny in Paris."
    )
    expect(timeline.locator("li[data-outcome]")).to_contain_text("completed")
    page.click("#connection-link")
    expect(page.locator("#connection-timeline li.rt-turn")).to_have_count(3)
    outcomes = page.locator("#connection-timeline li[data-outcome]")
    expect(outcomes.nth(0)).to_contain_text("completed")
    expect(outcomes.nth(2)).to_contain_text("closed code 4000 scripted close", use_inner_text=True)
