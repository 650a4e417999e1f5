// The effective configuration: scenarios with how far each queue has advanced (GET /admin-api/queues),
// conversation graphs, and the whole configuration as JSON.
import { api, poll } from "../api.js";
import { clear, errorText, h, sessionHash } from "../dom.js";

// A response's keys name what it answers with, except these settings of how it is delivered; so a new
// fixture kind (docs/contributing.md, "Adding an operation") shows without a change here.
const DELIVERY_SETTINGS = new Set(["chunks", "delay_ms", "usage", "stream_delivery", "finish_reason", "lenient", "pacing"]);

function responseKind(response) {
  const found = Object.keys(response).filter(
    (key) => !DELIVERY_SETTINGS.has(key) && response[key] !== undefined && response[key] !== null,
  );
  return found.join(" + ") || "response";
}

function responseSummary(response) {
  if (typeof response.text === "string" && response.text) return response.text;
  if (response.error) return `${response.error.status} ${response.error.code}`;
  if (response.tool_calls) return response.tool_calls.map((call) => call.name).join(", ");
  return "";
}

function scenarioCard(scenario, index, queue) {
  const id = scenario.id || `scenario_${index}`;
  const responses = scenario.responses || [];
  const filters = [scenario.provider, scenario.operation, scenario.model].filter(Boolean).join(" / ") || "any request";
  const progress = queue
    ? h(
        "div",
        { class: "queue", "data-scenario": id },
        h("progress", { value: String(Math.min(queue.consumed, queue.length)), max: String(queue.length) }),
        h(
          "span",
          { class: "queue-text" },
          `${queue.consumed} of ${queue.length} consumed; ${queue.exhausted ? "exhausted" : `next: response ${queue.next_response_index}`} (${queue.terminal_policy})`,
        ),
      )
    : null;
  const list = h("ol", { class: "responses", start: "0" });
  responses.forEach((response, position) => {
    const state = queue && !queue.exhausted && queue.next_response_index === position ? "next" : queue && position < queue.consumed ? "used" : "";
    list.append(
      h(
        "li",
        { class: state },
        h("span", { class: "kind" }, responseKind(response)),
        " ",
        responseSummary(response),
        h("details", {}, h("summary", {}, "JSON"), h("pre", {}, JSON.stringify(response, null, 2))),
      ),
    );
  });
  return h("section", { class: "scenario-card", "data-scenario": id }, h("h3", {}, id, h("span", { class: "muted" }, ` ${filters}`)), progress, list);
}

export function mountConfig(root, ctx) {
  const message = h("p", { class: "error", role: "alert" });
  const holder = h("div", { id: "configuration" });
  root.append(h("h1", {}, "Configuration"), message, holder);
  let lastKey = "";

  async function refresh() {
    const [{ data: config, headers }, { data: queues }] = await Promise.all([api.configuration(ctx.session), api.queues(ctx.session)]);
    const key = JSON.stringify([config, queues]);
    if (key === lastKey) return;
    lastKey = key;
    clear(holder);
    if (headers.get("X-Llm-Test-Server-Configured") !== "true") {
      holder.append(h("p", { class: "muted" }, "Not configured: this session echoes the latest user text."));
      return;
    }
    const summary = h("dl", { class: "facts" });
    const facts = [
      ["models", config.models ? config.models.join(", ") : "any"],
      ["strict requests", String(config.strict_requests ?? true)],
      ["journal", config.journal ? JSON.stringify(config.journal) : "defaults"],
      ["determinism", config.determinism ? JSON.stringify(config.determinism) : "live"],
    ];
    for (const [name, value] of facts) summary.append(h("dt", {}, name), h("dd", {}, value));
    holder.append(summary, h("h2", {}, `Scenarios (${(config.scenarios || []).length})`));
    (config.scenarios || []).forEach((scenario, index) => holder.append(scenarioCard(scenario, index, queues[index])));
    const graphs = config.conversations || [];
    if (graphs.length) {
      holder.append(
        h("h2", {}, `Conversation graphs (${graphs.length})`),
        h("ul", {}, graphs.map((graph, index) => h("li", {}, h("a", { href: sessionHash(ctx.session, "graphs") }, graph.id || `conversation_${index}`), ` ${graph.steps.length} steps`))),
      );
    }
    holder.append(h("details", {}, h("summary", {}, "Whole configuration (JSON)"), h("pre", { id: "configuration-json" }, JSON.stringify(config, null, 2))));
  }

  return poll(() => refresh().catch((error) => (message.textContent = errorText(error))), 2000);
}
