// Verification: paste an expectation (or pick one to start from), POST /admin-api/verify, read the report.
// In a trace file: the report of the test's own expectations as recorded when it ran, and no new runs.
import { api, trace } from "../api.js";
import { clear, errorText, h, sessionHash } from "../dom.js";

const PRESETS = [
  ["Every request succeeded", { requests: [{ name: "no failures", query: { success: false }, minimum_count: 0, maximum_count: 0 }] }],
  ["At least one request", { requests: [{ name: "called", minimum_count: 1, maximum_count: null }] }],
  ["Streams ended with their terminal marker", { requests: [{ name: "complete streams", query: { streaming: true }, minimum_count: 1, maximum_count: null, require_streaming_terminal_marker: true }] }],
  ["Exactly one OpenAI chat call", { requests: [{ name: "one chat", query: { provider: "openai", operation: "chat.completions" }, minimum_count: 1, maximum_count: 1 }], no_unexpected_calls: true }],
  ["A tool was called", { requests: [{ name: "tool call", minimum_count: 1, maximum_count: null, tools: [{ kind: "response_call", name: "get_weather" }] }] }],
];

function requestLink(ctx, id) {
  return h("a", { href: sessionHash(ctx.session, `requests/${encodeURIComponent(id)}`), class: "mono" }, id);
}

// Why evidence is incomplete, by failure kind (docs/journal.md, "Verification"); a kind not named here is
// shown by its name.
const INCOMPLETE = {
  evidence_evicted: "entries were evicted",
  evidence_truncated: "entries were cut",
  evidence_pending: "requests were still in progress",
  evidence_paginated: "a query's page left matches out",
  evidence_timing: "a retry's times were missing or reversed",
};

function evidenceText(result) {
  if (result.evidence_complete) return "Evidence complete.";
  const kinds = [...new Set((result.failures || []).map((failure) => failure.kind).filter((kind) => kind.startsWith("evidence_")))];
  const reasons = kinds.map((kind) => INCOMPLETE[kind] || kind);
  return `Evidence incomplete${reasons.length ? `: ${reasons.join("; ")}` : ""}, so a pass could not be trusted.`;
}

function report(ctx, result) {
  const verdict = h("p", { class: `verdict ${result.passed ? "good" : "bad"}`, id: "verify-verdict" }, result.passed ? "PASSED" : "FAILED");
  const parts = [verdict, h("p", { class: "muted", id: "verify-evidence" }, evidenceText(result))];
  if (result.failures && result.failures.length) {
    const rows = result.failures.map((failure) =>
      h(
        "tr",
        {},
        h("td", {}, failure.kind),
        h("td", {}, failure.expectation || ""),
        h("td", {}, failure.message),
        h("td", {}, h("pre", {}, failure.expected === undefined || failure.expected === null ? "" : JSON.stringify(failure.expected, null, 2))),
        h("td", {}, h("pre", {}, failure.actual === undefined || failure.actual === null ? "" : JSON.stringify(failure.actual, null, 2))),
        h("td", {}, (failure.request_ids || []).map((id) => [requestLink(ctx, id), " "])),
      ),
    );
    parts.push(
      h("h2", {}, "Failures"),
      h("table", { class: "grid", id: "verify-failures" }, h("thead", {}, h("tr", {}, ["kind", "expectation", "message", "expected", "actual", "requests"].map((c) => h("th", {}, c)))), h("tbody", {}, rows)),
    );
  }
  if (result.matched_request_ids && result.matched_request_ids.length) {
    parts.push(h("h2", {}, "Matched requests"), h("p", { id: "verify-matched" }, result.matched_request_ids.map((id) => [requestLink(ctx, id), " "])));
  }
  parts.push(h("details", {}, h("summary", {}, "Raw result"), h("pre", {}, JSON.stringify(result, null, 2))));
  return parts;
}

/** A trace's recorded verdict of the test's own expectations (or the note that it declared none). */
function recorded(ctx) {
  const section = h("section", { id: "verify-recorded" }, h("h2", {}, "The test's expectations"));
  if (!trace.verification) {
    section.append(h("p", { class: "muted", id: "verify-none" }, "This test declared no expectations (no llmts_expect, no llmts_verify marker)."));
    return section;
  }
  section.append(h("p", { class: "muted" }, "Verified when the test ran, against this journal:"), ...report(ctx, trace.verification));
  if (trace.expectation) {
    section.append(h("details", {}, h("summary", {}, "What the test expected (POST /admin-api/verify body)"), h("pre", { id: "verify-expectation" }, JSON.stringify(trace.expectation, null, 2))));
  }
  return section;
}

export function mountVerify(root, ctx) {
  const editor = h("textarea", { id: "expectation", rows: 16, spellcheck: "false", "aria-label": "expectation JSON" });
  editor.value = JSON.stringify(PRESETS[0][1], null, 2);
  const picker = h("select", { id: "preset", "aria-label": "start from" }, PRESETS.map(([name], i) => h("option", { value: String(i) }, name)));
  picker.addEventListener("change", () => {
    editor.value = JSON.stringify(PRESETS[Number(picker.value)][1], null, 2);
  });
  const run = h("button", { type: "submit", id: "run-verify" }, "Verify");
  const hint = h("span", { class: "muted" }, "POST /admin-api/verify against this session's journal; nothing changes.");
  const message = h("p", { class: "error", role: "alert", id: "verify-error" });
  const output = h("div", { id: "verify-report" });
  const form = h(
    "form",
    { class: "verify" },
    h("label", {}, "Start from ", picker),
    editor,
    h("div", {}, run, " ", hint),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.textContent = "";
    clear(output);
    let body;
    try {
      body = JSON.parse(editor.value);
    } catch (error) {
      message.textContent = `Not JSON: ${error.message}`;
      return;
    }
    try {
      const { data } = await api.verify(ctx.session, body);
      output.append(...report(ctx, data));
    } catch (error) {
      message.textContent = errorText(error);
    }
  });
  if (trace) {
    // Nothing can be verified anew offline: the form stays as a reference, its button disabled.
    run.disabled = true;
    hint.id = "verify-disabled";
    hint.textContent = "Off in a trace file: it is read-only and offline. To verify anew, keep the session (--llmts-keep) and open the live dashboard.";
    root.append(h("h1", {}, "Verify"), recorded(ctx), h("h2", {}, "Another expectation"), form, message, output);
    return () => {};
  }
  root.append(h("h1", {}, "Verify"), form, message, output);
  return () => {};
}
