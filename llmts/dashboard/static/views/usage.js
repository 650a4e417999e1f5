// The session's usage and cost since the last configure or reset (GET /admin-api/usage), one line above
// the journal: tokens, cost (or "unpriced" when a model has no price), the budget and whether it ran out,
// and per provider and model in the line's tooltip.
import { api } from "../api.js";
import { h } from "../dom.js";

const NUMBER = new Intl.NumberFormat("en-US");

/** "$0.0105", or "unpriced" when some request's model has no price (its cost is unknown, not zero). */
export function costText(cost) {
  if (cost === null || cost === undefined) return "unpriced";
  return `$${cost < 0.01 ? cost.toPrecision(3) : cost.toFixed(4)}`;
}

function row(label, totals) {
  const cost = totals.cost_usd === null && totals.priced_cost_usd ? `${costText(totals.priced_cost_usd)} priced + ${totals.unpriced_requests} unpriced` : costText(totals.cost_usd);
  return `${label}: ${NUMBER.format(totals.requests)} req · ${NUMBER.format(totals.input_tokens)} in (${NUMBER.format(totals.cached_tokens)} cached, ${NUMBER.format(totals.cache_write_tokens)} written) · ${NUMBER.format(totals.output_tokens)} out · ${cost}`;
}

function budgetText(budget) {
  if (!budget) return null;
  const caps = [];
  if (budget.max_cost_usd != null) caps.push(costText(budget.max_cost_usd));
  if (budget.max_total_tokens != null) caps.push(`${NUMBER.format(budget.max_total_tokens)} tokens`);
  const state = budget.exhausted ? `exhausted (${budget.exhausted}); ${budget.refused_requests} refused` : "not reached";
  return `budget ${caps.join(" / ")}: ${state}`;
}

/** The summary's elements: the totals line and the budget, the per-model rows as its title. */
export function usageParts(summary) {
  const totals = summary.totals;
  const line = h("span", { class: "usage-totals", "data-cost": totals.cost_usd === null ? "" : String(totals.cost_usd), title: summary.models.map((m) => row(`${m.provider} ${m.model ?? "(no model)"}`, m)).join("\n") || "no answered requests" }, `Usage: ${NUMBER.format(totals.total_tokens)} tokens · ${costText(totals.cost_usd)}`);
  const budget = budgetText(summary.budget);
  return [line, budget ? h("span", { class: summary.budget.exhausted ? "usage-budget exhausted" : "usage-budget" }, ` · ${budget}`) : null];
}

/** Shows the session's usage in `holder`; the returned refresh reads it again (the journal's poll calls it). */
export function mountUsage(holder, session) {
  return async () => {
    const { data } = await api.usage(session);
    holder.replaceChildren(...usageParts(data).filter(Boolean));
  };
}
