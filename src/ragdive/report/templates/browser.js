// The report's script: draws the charts and the conversation browser from the JSON blocks.
// Every piece of run text goes into the page through textContent, never innerHTML: it stays text.
(function () {
  "use strict";
  const conversations = JSON.parse(document.getElementById("report-data").textContent);
  const figures = JSON.parse(document.getElementById("report-figures").textContent);

  document.querySelectorAll("[data-figure]").forEach(function (div) {
    const fig = figures[div.dataset.figure];
    if (fig && window.Plotly) {
      window.Plotly.newPlot(div, fig.data, fig.layout, { displaylogo: false, responsive: true });
    }
  });

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function field(list, label, value) {
    list.appendChild(el("dt", label));
    const dd = el("dd", value === null || value === undefined || value === "" ? "-" : value);
    list.appendChild(dd);
    return dd;
  }

  function scoreList(scores) {
    const ul = el("ul", null, "scores");
    scores.forEach(function (s) {
      const text = s.unscored !== null
        ? s.metric + ": unscored (" + s.unscored + ")"
        : s.metric + ": " + s.value.toFixed(3) + (s.reason ? " - " + s.reason : "");
      ul.appendChild(el("li", text, s.unscored !== null ? "unscored" : ""));
    });
    return ul;
  }

  function turnView(t) {
    const box = el("div", null, "turn");
    box.appendChild(el("h4", "turn " + t.number + " - " + t.type + (t.unanswerable ? " (unanswerable)" : "")));
    const dl = el("dl");
    field(dl, "user message", t.message);
    field(dl, "stand-alone question", t.standalone);
    field(dl, "ground truth", t.ground_truth);
    field(dl, "evidence", t.evidence.join("\n"));
    field(dl, "answer", t.error !== null ? "target error: " + t.error : t.answer).className = "answer";
    const ctx = field(dl, "contexts (" + t.contexts.length + ")", "");
    ctx.textContent = "";
    t.contexts.forEach(function (c, i) {
      const label = "#" + (i + 1) + (c.source ? " " + c.source : "") + (c.score !== null ? " (" + c.score.toFixed(3) + ")" : "");
      ctx.appendChild(el("div", label + "\n" + c.text, "context"));
    });
    const verdicts = t.verdicts.map(function (v, i) {
      return "attempt " + (i + 1) + ": " + (v.valid ? "valid" : "rejected [" + v.failed.join(", ") + "]") + " " + v.reason;
    });
    field(dl, "validator" + (t.overruled ? " (overruled)" : ""), verdicts.join("\n"));
    const scores = field(dl, "scores", "");
    scores.textContent = "";
    scores.appendChild(scoreList(t.scores));
    box.appendChild(dl);
    return box;
  }

  const list = document.getElementById("conversation-list");
  conversations.forEach(function (c) {
    const details = el("details", null, "conversation");
    details.dataset.persona = c.persona;
    details.dataset.id = c.id;
    const summary = el("summary", c.id + " - " + c.persona + " - " + c.turns.length + " turns - " + c.status +
      (c.has_unscored ? " - has unscored" : ""));
    details.appendChild(summary);
    const meta = el("p", "documents: " + c.documents.join(", ") + (c.end_reason ? " - ended: " + c.end_reason : ""));
    details.appendChild(meta);
    if (c.scores.length) {
      details.appendChild(el("h4", "whole-conversation scores"));
      details.appendChild(scoreList(c.scores));
    }
    // turns are built when first opened: a report of many conversations stays quick to load
    details.addEventListener("toggle", function () {
      if (details.open && !details.dataset.built) {
        details.dataset.built = "1";
        c.turns.forEach(function (t) { details.appendChild(turnView(t)); });
      }
    });
    c.element = details;
    list.appendChild(details);
  });

  function fill(select, values) {
    Array.from(new Set(values)).sort().forEach(function (v) {
      const option = el("option", v);
      option.value = v;
      select.appendChild(option);
    });
  }
  const persona = document.getElementById("filter-persona");
  const qtype = document.getElementById("filter-type");
  const unscored = document.getElementById("filter-unscored");
  fill(persona, conversations.map(function (c) { return c.persona; }));
  fill(qtype, [].concat.apply([], conversations.map(function (c) { return c.types; })));

  function apply() {
    let shown = 0;
    conversations.forEach(function (c) {
      const visible = (!persona.value || c.persona === persona.value) &&
        (!qtype.value || c.types.indexOf(qtype.value) >= 0) &&
        (!unscored.checked || c.has_unscored);
      c.element.hidden = !visible;
      if (visible) shown += 1;
    });
    document.getElementById("shown-count").textContent = shown + " of " + conversations.length + " shown";
  }
  [persona, qtype, unscored].forEach(function (x) { x.addEventListener("change", apply); });
  apply();
  // when charts and browser are drawn (Plotly.newPlot draws synchronously): the benchmark reads it
  document.body.dataset.readyMs = String(Math.round(performance.now()));
})();
