// state-ladder view: one page, hash routes, data from /api (same origin, nothing external).
"use strict";

const CHANNELS = ["re_execution", "superseded", "premature", "omission", "unrequested", "refused_redo"];
// Column heads of the channels, with soft hyphens where a narrow page may break them.
const CHANNEL_HEADS = {re_execution: "re-execution", superseded: "super\u00adseded",
  premature: "prema\u00adture", omission: "omis\u00adsion", unrequested: "unre\u00adquested",
  refused_redo: "refused redo"};
const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");

// h("tag#id.class", {attr: value, onclick: fn}, child, ...): text children are never parsed
// as HTML.
function h(spec, attrs, ...children) {
  const [head, ...classes] = spec.split(".");
  const [tag, id] = head.split("#");
  const el = document.createElement(tag || "div");
  if (id) el.id = id;
  if (classes.length) el.className = classes.join(" ");
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Replace the page's content (null, undefined and false children are left out).
function fill(...children) {
  main.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

// Several runs in one view (#40): the page's ?run=i picks one; every API call names it.
const RUN = Number(new URLSearchParams(location.search).get("run") || 0);

async function api(path) {
  const r = await fetch(path + (path.includes("?") ? "&" : "?") + `run=${RUN}`, {cache: "no-store"});
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

const enc = encodeURIComponent;
const pct = (x) => (x === null || x === undefined ? "-" : (100 * x).toFixed(1) + "%");
const num = (x, d = 0) => (x === null || x === undefined ? "-" : Number(x).toFixed(d));
const kfmt = (x) => (x === null || x === undefined ? "-" : (x / 1000).toFixed(1) + "k");

function outcome(v) {
  if (v === true) return h("span.ok", {}, "pass");
  if (v === false) return h("span.bad", {}, "fail");
  return h("span.muted", {}, "not counted");
}

function channelPills(channels) {
  const entries = Object.entries(channels || {}).filter(([, n]) => n);
  if (!entries.length) return h("span.muted", {}, "none");
  return entries.map(([c, n]) => h("span.pill.bad", {}, `${c} ${n}`));
}

function setCrumbs(...items) {
  crumbs.replaceChildren();
  items.forEach((it, i) => {
    if (i) crumbs.append(h("span.sep", {}, "›"));
    crumbs.append(it.href ? h("a", {href: it.href}, it.text) : h("span", {}, it.text));
  });
}

function successCell(line, name) {
  const [lo, hi] = line[`${name}_ci`] || [null, null];
  return h("td.num", {}, `${line[`${name}_successes`]}/${line.n} `, h("b", {}, pct(line[name])),
    h("div.ci", {}, `[${pct(lo)}, ${pct(hi)}]`), passK(line, name));
}

// pass^k (--trials K > 1, #49): the chance that k trials of a seed all succeed, k = 1..K.
function passK(line, name) {
  const ks = (line.pass_k || {})[name] || [];
  if (!(line.trials > 1) || !ks.length) return null;
  return h("div.ci.passk", {title: `pass^k for k = 1..${ks.length}: the chance that k trials of a seed all succeed`},
    `pass^1..${ks.length}: ${ks.map((x) => (x === null ? "-" : pct(x))).join(" / ")}`);
}

// Replies cut at their token budget (#49): under the arm, a role's largest share where any
// reply was cut, ⚠ past the threshold (data.cut_threshold); the roles and counts on hover.
let CUT_THRESHOLD = null;  // the run's, from /api/cells (scoring.analyses.truncation.CUT_WARN_SHARE)
function cutNote(c) {
  const made = Object.entries(c.line.cut || {}).filter(([, [, m]]) => m > 0);
  const share = Math.max(0, ...made.map(([, [n, m]]) => n / m));
  if (!(share > 0)) return null;
  const title = made.map(([role, [n, m]]) => `${role} ${n}/${m}`).join(", ") +
    ` replies cut at their token budget (finish_reason length); ⚠ past ${pct(CUT_THRESHOLD)} of a role's`;
  const over = (c.cut_over || []).length > 0;
  const shown = share < 0.01 ? "<1%" : `${Math.round(100 * share)}%`;
  return h(over ? "div.ci.inert.cut" : "div.ci.cut", {title}, `cut ${shown}`, over ? " ⚠" : "");
}

// --- the cells ------------------------------------------------------------------------
// While a large run's index is built in the background (#50) the overview holds the episodes
// indexed so far (data.indexing says how far): the page asks again each second until it is in.
let REFILL = null;
function onCells() {
  const first = (location.hash.slice(1) || "/").split("?")[0].split("/").filter(Boolean)[0];
  return !["cell", "episode", "compare"].includes(first);
}
function refill(indexing) {
  clearTimeout(REFILL);
  REFILL = indexing ? setTimeout(() => { if (onCells()) showCells().catch((err) =>
    main.replaceChildren(h("p.error", {}, String(err.message || err)))); }, 1000) : null;
}

async function showCells() {
  setCrumbs({text: "cells"});
  const data = await api("/api/cells");
  const indexing = data.indexing;
  CUT_THRESHOLD = data.cut_threshold;
  document.getElementById("run").textContent = data.run;
  const runs = (await api("/api/runs")).runs;
  if (runs.length > 1) {  // a picker of the runs this view holds
    const pick = h("select#runs", {onchange: () => { location.search = `?run=${pick.value}`; }},
      runs.map((r, i) => h("option", {value: i, selected: i === RUN}, r)));
    document.getElementById("run").replaceChildren(pick);
  }
  const head = h("tr", {}, h("th", {}, "arm"), h("th.num", {}, "n"),
    h("th.num", {}, "strict [95% CI]"), h("th.num", {}, "decline-aware [95% CI]"),
    CHANNELS.map((c) => h("th.num", {title: `${c.replace("_", " ")} errors, primary scoring (da N: under the decline-aware scoring, where it differs)`}, CHANNEL_HEADS[c])),
    h("th.num", {title: "context overflows: episodes that outgrew the model's context, counted in n as failures"}, "ctx"),
    h("th.num", {title: "episodes ended by an infrastructure error (never scored)"}, "infra"),
    h("th.num", {title: "agent tokens per episode"}, "agent tok/ep"),
    h("th.num", {title: "agent tokens per episode over the raw arm's of the same configuration"}, "× raw"),
    h("th.num", {title: "agent calls + helper calls (matcher, compiler) the arm needs, per episode"}, "calls/ep"),
    h("th.num", {title: "median episode wall time"}, "episode s (med)"));
  const body = [];
  let config = null;
  for (const c of data.cells) {
    if (c.config !== config) {
      config = c.config;
      body.push(h("tr.config", {}, h("td", {colspan: 17}, config)));
    }
    const cost = c.cost || {};
    const line = c.line;
    const aware = line.decline_aware_channels || {};
    body.push(h("tr.click", {dataset: {slug: c.slug}, onclick: () => go(`#/cell/${enc(c.slug)}`)},
      h("td", {}, h("a", {href: `#/cell/${enc(c.slug)}`}, c.arm_label),
        c.gate_inert ? h("div.ci.inert", {title: c.gate_inert}, "gate inert") : null, cutNote(c)),
      h("td.num", {}, line.n), successCell(line, "strict"), successCell(line, "decline_aware"),
      CHANNELS.map((ch) => h("td.num", {class: line.channels[ch] ? "num bad" : "num",
        title: `${ch}: ${line.channels[ch]} under the primary scoring, ${aware[ch] ?? "-"} under the decline-aware scoring`}, line.channels[ch],
        aware[ch] !== line.channels[ch] ? h("div.ci.da", {title: `decline-aware scoring: ${aware[ch]}`}, `da ${aware[ch]}`) : null)),
      h("td.num", {}, line.context_overflows ?? 0),
      h("td.num", {}, line.infrastructure_errors), h("td.num", {}, kfmt(cost.total_tokens)),
      h("td.num", {}, num(cost.x_raw, 2)),
      h("td.num", {}, `${num(cost.agent_calls, 1)} + ${num(cost.helper_calls, 1)}`),
      h("td.num", {}, num(cost.episode_latency_median_s, 2))));
  }
  const contrasts = data.contrasts.map(({config, line: x}) => h("tr", {},
    h("td.config", {}, config), h("td", {}, x.scoring.replace("_", "-")), h("td", {}, `${x.a} → ${x.b}`,
      (x.gate_inert || []).length ? h("div.ci.inert", {title: "no measured null: the gate of " +
        x.gate_inert.join(", ") + " never gated"}, `INERT: ${x.gate_inert.join(", ")}`) : null), h("td.num", {}, x.n),
    h("td.num", {}, `${x.a_successes} → ${x.b_successes}`), h("td.num", {}, `${x.b_only} / ${x.a_only}`),
    h("td.num", {}, num(x.p, 4)), h("td.num", {}, num(x.p_holm, 4))));
  const log = data.log;
  fill(
    h("h1", {}, "Cells"),
    indexing ? h("p#indexing.warn", {}, `indexing: ${indexing.files} of ${indexing.total} log files, ` +
      `${indexing.episodes} episodes so far; the tables below hold those and fill as the rest is read`) : null,
    data.synthetic ? h("p#synthetic.warn", {}, data.synthetic) : null,
    (data.details || []).length ? h("details#details", {}, h("summary", {}, "Run details"),
      h("table.details", {}, h("tbody", {}, data.details.map(([k, v]) =>
        h("tr", {}, h("th", {}, k), h("td", {}, v)))))) : null,
    h("p.muted", {}, `${log.records} episodes in ${log.files} log files` +
      (log.corrupt.length ? `; ${log.corrupt.length} corrupt lines skipped` : "") +
      ". Click a cell to list its episodes. Reload to pick up new episodes of a run in progress."),
    h("table#cells", {}, h("thead", {}, head), h("tbody", {}, body)),
    ...data.cells.filter((c) => c.gate_inert).map((c) =>
      h("p.inert", {}, `${c.config} ${c.arm_label}: ${c.gate_inert}`)),
    ...data.cells.filter((c) => (c.cut_over || []).length).map((c) =>
      h("p.cutwarn.inert", {}, `⚠ ${c.config} ${c.arm_label}: ` + c.cut_over.map((role) =>
        `${c.line.cut[role][0]}/${c.line.cut[role][1]} ${role} replies`).join(", ") +
        ` cut at their token budget (more than ${pct(data.cut_threshold)})`)),
    h("p#da-note.muted", {}, "Channel columns: errors under the primary scoring; ",
      h("span.ci", {}, "da N"), " below a count is the same channel under the decline-aware scoring, " +
      "shown where the two differ. Hover a count for both."),
    h("h2", {}, "Adjacent contrasts (exact McNemar, Holm)"),
    h("table#contrasts", {}, h("thead", {}, h("tr", {}, ["configuration", "scoring", "a → b", "pairs", "successes",
      "b only / a only", "p", "p (Holm)"].map((t) => h("th", {}, t)))), h("tbody", {}, contrasts)));
  refill(indexing);
}

// --- a cell's episodes ----------------------------------------------------------------
async function showCell(slug, params) {
  const q = new URLSearchParams({cell: slug});
  for (const k of ["failed", "channel", "seed"]) if (params.get(k)) q.set(k, params.get(k));
  const data = await api(`/api/episodes?${q}`);
  setCrumbs({text: "cells", href: "#/"}, {text: data.arm});
  const update = () => {
    const p = new URLSearchParams();
    if (failed.checked) p.set("failed", scoring.value);
    if (channel.value) p.set("channel", channel.value);
    if (seed.value) p.set("seed", seed.value);
    go(`#/cell/${enc(slug)}?${p}`);
  };
  const failed = h("input#f-failed", {type: "checkbox", checked: !!params.get("failed"), onchange: update});
  const scoring = h("select#f-scoring", {onchange: update},
    ["strict", "decline_aware"].map((s) => h("option", {value: s, selected: params.get("failed") === s}, s.replace("_", "-"))));
  const channel = h("select#f-channel", {onchange: update}, h("option", {value: ""}, "any channel"),
    CHANNELS.map((c) => h("option", {value: c, selected: params.get("channel") === c}, c)));
  const seed = h("input#f-seed", {type: "number", placeholder: "seed", value: params.get("seed") || "", onchange: update, style: "width: 7em"});
  const rows = data.episodes.map((e) => h("tr.click", {
    class: e.strict === true ? "click" : "click failed", dataset: {seed: e.seed, trial: e.trial || 0},
    onclick: () => go(epHref(slug, e.seed, e.trial))},
    h("td", {}, h("a", {href: epHref(slug, e.seed, e.trial)}, unitText(e.seed, e.trial))),
    h("td", {}, outcome(e.strict)), h("td", {}, outcome(e.decline_aware)),
    h("td", {}, channelPills(e.channels)), h("td.num", {}, `${e.turns_ok}/${e.turns}`),
    h("td.num", {}, e.refused), h("td.num", {}, e.corruptions),
    h("td.num", {}, kfmt(e.tokens.agent)), h("td.num", {}, kfmt(e.tokens.helper)),
    h("td.num", {}, num(e.wall_s, 2)), h("td", {}, e.termination)));
  fill(
    h("h1", {}, `Episodes of ${data.arm}`), h("p.muted", {}, `${data.label} · ${slug}`),
    data.synthetic ? h("p.warn", {}, "SYNTHETIC: the scripted synthetic agent, a test instrument; no claim about any model.") : null,
    h("div.filters", {}, h("label", {}, failed, "failed only under"), scoring,
      h("label", {}, "channel", channel), h("label", {}, "seed", seed),
      h("span#count.muted", {}, `${data.episodes.length} of ${data.total} episodes`)),
    h("table#episodes", {}, h("thead", {}, h("tr", {}, ["episode", "strict", "decline-aware",
      "errors (primary)", "turns ok", "refused", "corruptions", "agent tok", "helper tok",
      "wall s", "termination"].map((t) => h("th", {}, t)))), h("tbody", {}, rows)));
}

// --- one episode ------------------------------------------------------------------------
// An episode's address: trial K of a seed (--trials) rides as ?trial=K, none for trial 0.
function epHref(slug, seed, trial, turn) {
  return `#/episode/${enc(slug)}/${seed}` + (turn === undefined || turn === null ? "" : `/${turn}`) + (trial ? `?trial=${trial}` : "");
}
function unitText(seed, trial) { return `seed ${seed}` + (trial ? ` · trial ${trial}` : ""); }

function message(turn) {
  return h("div.msg", {}, turn.sent.map(([kind, text]) =>
    kind === "arm" ? h("pre.arm", {}, text.trim())
      : kind === "carried" ? h("pre.arm.carried", {}, text)
      : kind === "injected" ? h("pre.injected", {}, text)
      : kind === "styled" ? h("pre.injected.styled", {}, text) : h("pre.user", {}, text)));
}

function bookings(list, cls) {
  if (!list.length) return h("span.muted", {}, "none");
  return list.map((b) => h(`span.pill.${cls}`, {}, `${b.step || "?"} ${b.code} ${b.work_order}`));
}

// An error as a pill; a re-execution links to the turn it repeats (`at`: the episode's
// slug and seed).
function errorPills(errors, at) {
  return errors.map((e) => h("span.pill.bad", {}, `${e.channel} ${e.step}`,
    at && e.original_turn !== null && e.original_turn !== undefined
      ? [" ", h("a.orig", {href: epHref(at.slug, at.seed, at.trial, e.original_turn),
          title: `step ${e.step} was executed at turn ${e.original_turn}`,
          onclick: (ev) => ev.stopPropagation()}, `repeats turn ${e.original_turn}`)]
      : null));
}

// The gate's refusals on a turn, marked apart from its verdict.
function refusedPill(t) {
  return t.refused.length
    ? h("span.pill.refused", {title: "the gate refused these bookings: " + t.refused.map((b) => `${b.step || "?"} ${b.code}`).join(", ")},
        `gate refused ${t.refused.length}`)
    : null;
}

function askbackPills(t) {
  // the ask-back knobs (issue #38): a question asked back, escalations and overrides
  const esc = t.escalations || [];
  const overrides = esc.filter((e) => e.override).length;
  return [t.question ? [" ", h("span.pill.askback", {}, "asked back")] : null,
    overrides ? [" ", h("span.pill.ok", {}, `override ${overrides}`)] : null,
    esc.length - overrides ? [" ", h("span.pill.bad", {}, `escalation refused ${esc.length - overrides}`)] : null];
}

function callsTable(calls) {
  if (!calls.length) return h("span.muted", {}, "no calls");
  return h("table.calls", {}, h("tr", {}, ["role", "prompt", "completion", "latency s", "wait s",
    "attempts", "finish", "cached"].map((t) => h("th", {}, t))),
    calls.map(({call: c, latency_s}) => h("tr", {}, h("td", {}, c.role), h("td.num", {}, c.prompt_tokens),
      h("td.num", {}, c.completion_tokens), h("td.num", {}, num(latency_s, 3)),
      h("td.num", {}, num(c.wait_s, 3)), h("td.num", {}, c.attempts), h("td", {}, c.finish_reason || "-"),
      h("td", {}, c.cached ? "yes" : ""))));
}

function turnTitle(t) {
  return [`turn ${t.index} · ${t.kind}${t.dynamic ? " (re-ask)" : ""}`,
    t.step ? ` · ${t.step}` : "", t.work_order ? ` · ${t.work_order}` : "",
    ` · label ${t.label || "-"}`,
    t.decline_aware_label !== t.label ? ` (decline-aware ${t.decline_aware_label})` : ""].join("");
}

function turnDetail(t, open, at) {
  const b = (label, ...content) => [h("b", {}, label), h("div", {}, ...content)];
  const aware = JSON.stringify(t.errors) === JSON.stringify(t.decline_aware_errors)
    ? null : b("decline-aware", t.decline_aware_errors.length ? errorPills(t.decline_aware_errors, at) : h("span.ok", {}, "no error"));
  const cls = ["turn", t.failed ? "failed" : null, t.refused.length ? "refused" : null].filter(Boolean).join(" ");
  return h("details.turn", {id: `turn-${t.index}`, class: cls, open},
    h("summary", {}, turnTitle(t), " ", t.failed ? errorPills(t.errors, at) : h("span.pill.ok", {}, "ok"), " ", refusedPill(t), askbackPills(t)),
    h("div.body", {},
      b("verdict", `label ${t.label || "-"}; executed ${t.executed.join(", ") || "nothing"}; `,
        t.errors.length ? errorPills(t.errors, at) : h("span.ok", {}, "no error")),
      aware,
      b("user (as sent)", message(t)),
      t.tool_failures.length ? b("tool results (failed)", h("div.msg", {}, t.tool_failures.map((x) => h("pre.injected.failure", {}, x)))) : null,
      t.question !== null && t.question !== undefined ? b(`gate asked back (${t.ask_reason}; first reading ${t.first_match || "none"})`,
        h("div.msg", {}, h("pre.arm.askback", {}, t.question), h("pre.user.askback", {}, t.answer || ""))) : null,
      (t.escalations || []).length ? b("escalations", (t.escalations || []).map((e) => h("div.msg", {},
        h("pre.arm.askback", {}, e.text), h("pre.user.askback", {}, e.answer),
        h(e.override ? "span.pill.ok" : "span.pill.bad", {}, e.override ? "override: admitted once" : "refused by the user")))) : null,
      t.first_reply !== null ? b("first reply (refused same turn)", h("pre.reply", {}, t.first_reply)) : null,
      t.retry_notices.length ? b("notices shown on the retry", h("div.msg", {}, t.retry_notices.map((x) => h("pre.arm", {}, x)))) : null,
      b("reply", h("pre.reply", {}, t.reply || "(empty)")),
      t.reasoning ? b("reasoning", h("pre.muted", {}, t.reasoning)) : null,
      b("admitted", bookings(t.admitted, "ok")),
      b("refused", bookings(t.refused, "bad")),
      b("matcher", t.matched_redo === null && !t.matcher_outcome ? h("span.muted", {}, "not consulted")
        : `step ${t.matched_step || "none"}; explicit redo ${t.matched_redo ? "yes" : "no"}` +
          (t.matcher_outcome ? ` (${t.matcher_outcome})` : "")),
      b("directive", t.directive ? h("pre", {}, t.directive) : h("span.muted", {}, "none")),
      t.corruptions.length ? b("corruptions", t.corruptions.map((e) => h("span.pill.bad", {}, corruptionText(e)))) : null,
      b("calls", callsTable(t.calls))));
}

function corruptionText(e) {
  return `turn ${e.turn}: ${e.kind} ${e.step}${e.edge ? " (edge " + e.edge + ")" : ""}`;
}

function compileSection(c) {
  if (!c) return null;
  const list = (x) => (x === null ? "(absent)" : x.join(", ") || "(none)");
  const rows = c.steps.map((s) => h("tr", {},
    h("td", {}, s.step),
    h("td", {class: s.deps_differ ? "diff" : null}, list(s.generator_deps)),
    h("td", {class: s.deps_differ ? "diff" : null}, list(s.compiled_deps)),
    h("td", {class: s.code_differs ? "diff" : null}, s.generator_code ?? "(absent)"),
    h("td", {class: s.code_differs ? "diff" : null}, s.compiled_code === "" ? "(empty)" : s.compiled_code ?? "(absent)")));
  const rewires = (w) => Object.entries(w || {}).map(([k, v]) => `${k} ← ${v.join(", ") || "none"}`).join("; ") || "none";
  const rev = (r) => (r ? `cancel ${r.cancel ?? "-"}; rewires ${rewires(r.rewires)}; relax ${r.relax ? r.relax.join(" drops ") : "-"}` : "-");
  const v = c.validator || {};
  return [h("h2", {}, "Compiled graph against the generator's"),
    h("p.muted", {}, `compile model ${c.model}; validator ${v.passed ? "passed" : "flagged " + (v.flags || []).join(", ")}; ` +
      `enforcing ${c.enforcing}; steps differing from the generator: ${c.steps.filter((s) => s.deps_differ || s.code_differs).length}` +
      (c.graph_error ? `; graph error: ${c.graph_error}` : "")),
    h("table#compile", {}, h("tr", {}, ["step", "generator deps", "compiled deps", "generator code",
      "compiled code"].map((t) => h("th", {}, t))), rows),
    h("table#revision", {}, h("tr", {}, h("th", {}, "generator revision"), h("th", {}, "compiled revision")),
      h("tr", {}, h("td", {}, rev(c.generator_revision)),
        h("td", {class: rev(c.generator_revision) !== rev(c.revision) ? "diff" : null}, rev(c.revision))))];
}

async function showEpisode(slug, seed, turn, trial) {
  const e = await api(`/api/episode?cell=${enc(slug)}&seed=${seed}` + (trial ? `&trial=${trial}` : ""));
  const r = e.row;
  setCrumbs({text: "cells", href: "#/"}, {text: r.arm, href: `#/cell/${enc(slug)}`}, {text: unitText(seed, trial)});
  const failing = e.turns.filter((t) => t.failed);
  const refusing = e.turns.filter((t) => t.refused.length);
  const at = {slug, seed, trial};
  const toc = h("table#turns", {}, h("tr", {}, ["turn", "kind", "step", "label", "errors"].map((t) => h("th", {}, t))),
    e.turns.map((t) => h("tr.click", {class: ["click", t.failed ? "failed" : null, t.refused.length ? "refused" : null].filter(Boolean).join(" "),
      dataset: {index: t.index}, onclick: () => go(epHref(slug, seed, trial, t.index))},
      h("td.num", {}, t.index), h("td", {}, t.kind + (t.dynamic ? " (re-ask)" : "")), h("td", {}, t.step || ""),
      h("td", {}, t.label), h("td", {}, errorPills(t.errors, at), refusedPill(t)))));
  const pick = h("select#pair", {}, e.pairs.map((p) => h("option", {value: p.slug}, p.arm)));
  const compare = e.pairs.length ? h("div.filters", {}, `compare ${unitText(seed, trial)} with`, pick,
    h("button#compare", {onclick: () => go(`#/compare/${seed}/${enc(slug)}/${enc(pick.value)}` + (trial ? `?trial=${trial}` : ""))}, "side by side")) : null;
  const tok = r.tokens;
  const helpers = r.helpers || {needed: 0, made: 0, cached: 0};
  const onlyFailing = h("input#only-failing", {type: "checkbox", onchange: () => {
    for (const el of document.querySelectorAll("#turns tr[data-index], #detail details.turn")) {
      el.hidden = onlyFailing.checked && !el.classList.contains("failed");
    }
  }});
  fill(
    h("h1", {}, `${r.arm} · ${unitText(seed, trial)}`), h("p.muted", {}, `${e.label} · ${e.slug}${e.synthetic ? " · SYNTHETIC agent" : ""}`),
    h("div#header.summary", {},
      h("div", {}, h("b", {}, "strict"), outcome(r.strict)),
      h("div", {}, h("b", {}, "decline-aware"), outcome(r.decline_aware)),
      h("div", {}, h("b", {}, "errors"), channelPills(r.channels)),
      h("div", {}, h("b", {}, "turns ok"), `${r.turns_ok}/${r.turns}`),
      h("div", {}, h("b", {}, "tokens"), `agent ${tok.agent}, helpers ${tok.helper}`),
      h("div#helpers", {title: "helper calls (matcher, compiler) the arm needs, as ladder cost counts them: made by this episode or served without a request (cache, another arm's episode of the seed, the precompile)"},
        h("b", {}, "helper calls"), helpers.needed ? `${helpers.needed} needed: ${helpers.made} made, ${helpers.cached} cached` : "none needed"),
      h("div", {}, h("b", {}, "wall time"), `${num(r.wall_s, 2)} s`),
      h("div", {}, h("b", {}, "termination"), e.termination + (e.error ? `: ${e.error}` : "")),
      h("div", {}, h("b", {}, "refused / citations"), `${e.refused} / ${e.citations}`),
      h("div#cut", {title: "replies that ended at their token budget (finish_reason length), of the replies made, per role"},
        h("b", {}, "cut at budget"), Object.entries(e.cut || {}).map(([role, [n, made]]) => `${role} ${n}/${made}`).join(", ") || "none")),
    e.refused ? h("p#refused-note.muted", {}, `The gate refused ${e.refused} booking${e.refused === 1 ? "" : "s"}: on turn${refusing.length === 1 ? "" : "s"} `,
      refusing.map((t, i) => [i ? ", " : "", h("a", {href: epHref(slug, seed, trial, t.index)}, `turn ${t.index}`)]),
      " (marked ", h("span.pill.refused", {}, "gate refused"), ").") : null,
    e.mismatches.length ? h("p.error", {}, "log and regenerated episode differ: " + e.mismatches.join("; ")) : null,
    compare,
    h("div.layout", {},
      h("div.toc", {}, h("p#failing", {}, `${failing.length} failing turn${failing.length === 1 ? "" : "s"}`, failing.length ? ": " : "",
        failing.map((t, i) => [i ? ", " : "", h("a", {href: epHref(slug, seed, trial, t.index)}, `turn ${t.index}`)]),
        h("span.muted", {}, " (highlighted; click a turn to read it)")),
        h("label.filters", {}, onlyFailing, "failing turns only"), toc),
      h("div#detail", {},
        e.turns.map((t) => [t.session_mark ? h("p.session", {}, t.session_mark) : null,
          turnDetail(t, t.failed || t.index === turn, at)]),
        compileSection(e.compile),
        e.corruptions.length ? [h("h2", {}, "Corruption events"),
          h("ul#corruptions", {}, e.corruptions.map((c) => h("li", {}, corruptionText(c))))] : null)));
  if (turn !== null) {
    const row = document.querySelector(`#turns tr[data-index="${turn}"]`);
    if (row) {
      row.classList.add("selected");
      const box = row.closest(".toc");
      box.scrollTop = row.offsetTop - box.clientHeight / 2;
    }
    const el = document.getElementById(`turn-${turn}`);
    if (el) { el.open = true; el.classList.add("current"); el.scrollIntoView({block: "start"}); }
  }
}

// --- side by side -----------------------------------------------------------------------
function side(t, at) {
  if (!t) return h("span.muted", {}, "(no such turn)");
  return h("div.side", {}, h("div", {}, h("b", {}, turnTitle(t)), " ",
    t.failed ? errorPills(t.errors, at) : h("span.pill.ok", {}, "ok"), " ", refusedPill(t)),
    message(t), h("pre.reply", {}, t.reply || "(empty)"),
    h("div", {}, "admitted ", bookings(t.admitted, "ok"), " refused ", bookings(t.refused, "bad")));
}

async function showCompare(seed, a, b, trial) {
  const c = await api(`/api/compare?seed=${seed}&a=${enc(a)}&b=${enc(b)}` + (trial ? `&trial=${trial}` : ""));
  setCrumbs({text: "cells", href: "#/"}, {text: `${unitText(seed, trial)}: ${c.a.arm} vs ${c.b.arm}`});
  const head = (v) => h("th", {}, `${v.arm}: strict `, outcome(v.strict), ", decline-aware ",
    outcome(v.decline_aware), " ", h("a", {href: epHref(v.slug, seed, trial)}, "open"));
  const only = h("input#only-differing", {type: "checkbox", onchange: () => {
    for (const tr of document.querySelectorAll("#compare tr.pair")) tr.hidden = only.checked && !tr.classList.contains("differs");
  }});
  fill(
    h("h1", {}, `Seed ${seed}${trial ? ` · trial ${trial}` : ""}: ${c.a.arm} vs ${c.b.arm}`),
    h("div.filters", {}, h("span#differing.muted", {}, `${c.differing} of ${c.rows.length} turns differ in outcome (marked)`),
      h("label", {}, only, "differing turns only")),
    h("table#compare.compare", {}, h("tr", {}, head(c.a), head(c.b)),
      c.rows.map((r) => h("tr", {class: r.differs ? "pair differs" : "pair"},
        h("td", {}, side(r.a, {slug: a, seed, trial})), h("td", {}, side(r.b, {slug: b, seed, trial}))))));
}

// --- routing ----------------------------------------------------------------------------
function go(hash) { if (location.hash === hash) route(); else location.hash = hash; }

async function route() {
  const [path, query] = (location.hash.slice(1) || "/").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || "");
  try {
    if (parts[0] === "cell") await showCell(parts[1], params);
    else if (parts[0] === "episode") await showEpisode(parts[1], Number(parts[2]), parts[3] === undefined ? null : Number(parts[3]), Number(params.get("trial") || 0));
    else if (parts[0] === "compare") await showCompare(Number(parts[1]), parts[2], parts[3], Number(params.get("trial") || 0));
    else await showCells();
    if (parts[0] !== "episode" || parts[3] === undefined) window.scrollTo(0, 0);
  } catch (err) {
    main.replaceChildren(h("p.error", {}, String(err.message || err)));
  }
  document.body.dataset.ready = location.hash || "#/";
}

window.addEventListener("hashchange", route);
route();
