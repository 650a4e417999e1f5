// Conversation graphs drawn as SVG in the browser (no library): steps in layers from the start step,
// `then` edges as arrows; per conversation, executed, current, next and unvisited steps are coloured.
import { api, poll } from "../api.js";
import { clear, errorText, h, s } from "../dom.js";

const NODE_W = 170;
const NODE_H = 44;
const GAP_X = 70;
const GAP_Y = 26;
const PAD = 20;

/** Layers by breadth-first distance from the start step; steps it never reaches go last. */
function layout(graph) {
  const steps = graph.steps || [];
  const ids = steps.map((step) => step.id);
  const byId = new Map(steps.map((step) => [step.id, step]));
  const start = graph.start_at || ids[0];
  const depth = new Map([[start, 0]]);
  const queue = [start];
  while (queue.length) {
    const id = queue.shift();
    for (const next of (byId.get(id) && byId.get(id).then) || []) {
      if (!depth.has(next) && byId.has(next)) {
        depth.set(next, depth.get(id) + 1);
        queue.push(next);
      }
    }
  }
  const deepest = Math.max(0, ...depth.values());
  for (const id of ids) if (!depth.has(id)) depth.set(id, deepest + 1);
  const layers = [];
  for (const id of ids) {
    const d = depth.get(id);
    (layers[d] = layers[d] || []).push(id);
  }
  const position = new Map();
  const tallest = Math.max(...layers.map((layer) => (layer ? layer.length : 0)));
  layers.forEach((layer, column) => {
    if (!layer) return;
    const offset = ((tallest - layer.length) * (NODE_H + GAP_Y)) / 2;
    layer.forEach((id, row) => {
      position.set(id, { x: PAD + column * (NODE_W + GAP_X), y: PAD + offset + row * (NODE_H + GAP_Y) });
    });
  });
  const width = PAD * 2 + layers.length * NODE_W + (layers.length - 1) * GAP_X;
  const height = PAD * 2 + tallest * NODE_H + (tallest - 1) * GAP_Y;
  return { start, position, width, height, byId };
}

function stateOf(id, status) {
  if (!status) return "unvisited";
  if (status.in_flight_step === id || (!status.in_flight_step && status.last_step === id)) return "current";
  if ((status.executed_steps || []).includes(id)) return "executed";
  if ((status.next_steps || []).includes(id)) return "next";
  return "unvisited";
}

function label(text) {
  return text.length > 20 ? `${text.slice(0, 19)}…` : text;
}

export function drawGraph(graph, status) {
  const { start, position, width, height, byId } = layout(graph);
  const svg = s("svg", { class: "graph", viewBox: `0 0 ${width} ${height}`, width, height, role: "img" });
  svg.append(
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }))),
  );
  const edges = s("g", { class: "edges" });
  const nodes = s("g", { class: "nodes" });
  for (const [id, step] of byId) {
    const from = position.get(id);
    for (const next of step.then || []) {
      const to = position.get(next);
      if (!to) continue;
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      let d;
      if (to.x > from.x) {
        const x2 = to.x;
        const y2 = to.y + NODE_H / 2;
        const mid = (x1 + x2) / 2;
        d = `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`;
      } else {
        // A loop back (or to a step in the same column): arc over the top.
        const x2 = to.x + NODE_W / 2;
        const y2 = to.y;
        const lift = Math.min(from.y, to.y) - GAP_Y;
        d = `M${from.x + NODE_W / 2},${from.y} C${from.x + NODE_W / 2},${lift} ${x2},${lift} ${x2},${y2}`;
      }
      const taken = status && (status.executed_steps || []).includes(id) && (status.executed_steps || []).includes(next);
      edges.append(s("path", { d, class: taken ? "edge taken" : "edge", "marker-end": "url(#arrow)" }));
    }
  }
  for (const [id, step] of byId) {
    const at = position.get(id);
    const state = stateOf(id, status);
    const node = s(
      "g",
      { class: `node ${state}${id === start ? " start" : ""}${step.complete ? " complete" : ""}`, "data-step": id, "data-state": state, transform: `translate(${at.x},${at.y})` },
      s("title", {}, `${id}: ${state}${step.complete ? " (completes the conversation)" : ""}`),
      s("rect", { width: NODE_W, height: NODE_H, rx: 8, ry: 8 }),
      s("text", { x: NODE_W / 2, y: NODE_H / 2 + 5, "text-anchor": "middle" }, label(id)),
    );
    nodes.append(node);
  }
  svg.append(edges, nodes);
  return svg;
}

const LEGEND = [
  ["executed", "executed"],
  ["current", "current (last or in flight)"],
  ["next", "next candidates"],
  ["unvisited", "unvisited"],
];

export function mountGraphs(root, ctx) {
  const message = h("p", { class: "error", role: "alert" });
  const holder = h("div", { id: "graphs" });
  const legend = h("ul", { class: "legend" }, LEGEND.map(([cls, text]) => h("li", { class: cls }, text)));
  root.append(h("h1", {}, "Conversation graphs"), legend, message, holder);
  const chosen = new Map(); // graph id -> conversation id shown
  let lastKey = "";

  async function refresh() {
    const [{ data: config }, { data: statuses }] = await Promise.all([api.configuration(ctx.session), api.conversations(ctx.session)]);
    const graphs = (config && config.conversations) || [];
    const key = JSON.stringify([graphs, statuses, [...chosen]]);
    if (key === lastKey) return;
    lastKey = key;
    clear(holder);
    if (!graphs.length) {
      holder.append(h("p", { class: "muted" }, "This session's configuration has no conversation graphs."));
      return;
    }
    graphs.forEach((graph, index) => {
      const graphId = graph.id || `conversation_${index}`;
      const runs = statuses.filter((status) => status.scenario === graphId);
      const selected = runs.find((run) => run.conversation_id === chosen.get(graphId)) || runs[runs.length - 1] || null;
      const picker = h("select", { "data-graph": graphId, "aria-label": `conversation of ${graphId}` });
      if (!runs.length) picker.append(h("option", { value: "" }, "no conversation yet"));
      for (const run of runs) {
        picker.append(h("option", { value: run.conversation_id }, `${run.conversation_id} (${run.state})`));
      }
      if (selected) picker.value = selected.conversation_id;
      picker.addEventListener("change", () => {
        chosen.set(graphId, picker.value);
        lastKey = "";
        refresh();
      });
      const summary = selected
        ? `${selected.state}; executed ${selected.executed_steps.join(" → ") || "nothing"}; ${selected.executions}/${selected.max_steps} steps; run ${selected.run}${selected.replays ? `; ${selected.replays} replays` : ""}`
        : "not started";
      holder.append(
        h(
          "section",
          { class: "graph-card", "data-graph": graphId },
          h("div", { class: "title-row" }, h("h2", {}, graphId), picker),
          h("p", { class: "muted" }, summary),
          h("div", { class: "graph-scroll" }, drawGraph(graph, selected)),
        ),
      );
    });
  }

  return poll(() => refresh().catch((error) => (message.textContent = errorText(error))), 2000);
}
