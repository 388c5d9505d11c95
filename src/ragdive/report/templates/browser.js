// The report's script: draws the charts and the conversation browser from the embedded blocks.
// Every piece of run text goes into the page through textContent, never innerHTML: it stays text.
(async function () {
  "use strict";
  // Blocks come gzip'ed, then as 7-bit text (report/text7.py); the browser's own DecompressionStream inflates them.
  async function gunzip(bytes) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }
  // text7.py's inverse: 7 bits per character, three values written as U+00C0..U+00C2 (the parser would not
  // give NUL, CR or "<" back as written); the text's length gives the data's.
  const ESCAPED = [0x00, 0x0d, 0x3c];
  function bytesOf(node) {
    const text = node.textContent; // no trim: any character is data
    const out = new Uint8Array(Math.floor(text.length * 7 / 8));
    let acc = 0, bits = 0, j = 0;
    for (let i = 0; i < text.length; i++) {
      let c = text.charCodeAt(i);
      if (c >= 0xc0) c = ESCAPED[c - 0xc0];
      acc = ((acc << 7) | c) & 0x7fff; // at most 14 bits are ever pending
      bits += 7;
      if (bits >= 8) { bits -= 8; out[j++] = (acc >> bits) & 255; }
    }
    return out;
  }
  // packing.py's word streams: varint indices into one vocabulary of tokens, joined back into the JSON text
  let vocabulary = null;
  async function words(node) {
    const bytes = await gunzip(bytesOf(node));
    const parts = [];
    let index = 0, shift = 0;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      index += (b & 127) * Math.pow(2, shift);
      if (b & 128) { shift += 7; } else { parts.push(vocabulary[index]); index = 0; shift = 0; }
    }
    return JSON.parse(parts.join(""));
  }
  try {
    // plotly.js, run in the page's global scope (an indirect eval), as a <script> of its own text would be
    (0, eval)(new TextDecoder().decode(await gunzip(bytesOf(document.getElementById("report-plotly")))));
  } catch (err) {
    console.error("the charts' library could not be read in this browser", err);
  }
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
      ctx.appendChild(el("div", label + "\n" + texts[c.t], "context"));
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

  // The conversations (report/packing.py): the list read now; each chunk of turns, and the table of context
  // texts they name by index, read when a conversation of that chunk is first opened.
  const list = document.getElementById("conversation-list");
  const listed = document.getElementById("report-data");
  const chunkNodes = document.querySelectorAll("script.report-turns");
  const perChunk = Number(listed.dataset.perChunk);
  const chunks = [];
  let texts = null;
  let contextsRead = null;
  function turnsOf(index) {
    const k = Math.floor(index / perChunk);
    if (!chunks[k]) {
      if (!contextsRead) {
        contextsRead = words(document.getElementById("report-contexts")).then(function (t) { texts = t; });
      }
      chunks[k] = Promise.all([words(chunkNodes[k]), contextsRead]).then(function (r) { return r[0]; });
    }
    return chunks[k].then(function (turns) { return turns[index - k * perChunk]; });
  }
  let conversations;
  try {
    vocabulary = JSON.parse(new TextDecoder().decode(await gunzip(bytesOf(document.getElementById("report-words")))));
    conversations = await words(listed);
  } catch (err) {
    list.appendChild(el("p", "The conversations could not be read in this browser (" + err + "); " +
      "open the report in a current Chrome, Edge, Firefox or Safari.", "unscored"));
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    return;
  }
  conversations.forEach(function (c, index) {
    const details = el("details", null, "conversation");
    details.dataset.persona = c.persona;
    details.dataset.id = c.id;
    const summary = el("summary", c.id + " - " + c.persona + " - " + c.turn_count + " turns - " + c.status +
      (c.has_unscored ? " - has unscored" : ""));
    details.appendChild(summary);
    const meta = el("p", "documents: " + c.documents.join(", ") + (c.end_reason ? " - ended: " + c.end_reason : "") + (c.user_end_reason ? " - the user ended it: " + c.user_end_reason : ""));
    details.appendChild(meta);
    if (c.scores.length) {
      details.appendChild(el("h4", "whole-conversation scores"));
      details.appendChild(scoreList(c.scores));
    }
    // turns are unpacked and built when first opened: a report of many conversations stays quick to load
    details.addEventListener("toggle", function () {
      if (details.open && !details.dataset.built) {
        details.dataset.built = "1";
        turnsOf(index).then(function (turns) {
          turns.forEach(function (t) { details.appendChild(turnView(t)); });
        }, function (err) {
          details.appendChild(el("p", "This conversation's turns could not be read in this browser (" + err + ").", "unscored"));
        });
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
  const metric = document.getElementById("filter-metric");
  const low = document.getElementById("filter-min");
  const high = document.getElementById("filter-max");
  const unscored = document.getElementById("filter-unscored");
  conversations.forEach(function (c) {
    // whole-conversation scores and every turn's, as the score filters read them
    c.allScores = c.scores.concat(c.marks.map(function (m) {
      return { metric: m[0], value: m[1], unscored: m.length > 2 ? true : null };
    }));
  });
  fill(persona, conversations.map(function (c) { return c.persona; }));
  fill(qtype, [].concat.apply([], conversations.map(function (c) { return c.types; })));
  fill(metric, [].concat.apply([], conversations.map(function (c) {
    return c.allScores.map(function (s) { return s.metric; });
  })));

  function bound(input, fallback) {
    // an empty or unreadable box is no bound
    const v = input.value === "" ? NaN : Number(input.value);
    return isNaN(v) ? fallback : v;
  }

  // The score filters are scoped by the metric chosen (any metric when none is): a score range keeps the
  // conversations with some scored value inside it (bounds included); "has unscored" keeps those with some
  // unscored score; a metric alone keeps those where that metric was judged at all.
  function scoresMatch(c) {
    const mine = c.allScores.filter(function (s) { return !metric.value || s.metric === metric.value; });
    if (metric.value && !mine.length) return false;
    const lo = bound(low, -Infinity);
    const hi = bound(high, Infinity);
    const ranged = low.value !== "" || high.value !== "";
    if (ranged && !mine.some(function (s) { return s.unscored === null && s.value >= lo && s.value <= hi; })) {
      return false;
    }
    return !unscored.checked || mine.some(function (s) { return s.unscored !== null; });
  }

  function apply() {
    let shown = 0;
    conversations.forEach(function (c) {
      const visible = (!persona.value || c.persona === persona.value) &&
        (!qtype.value || c.types.indexOf(qtype.value) >= 0) &&
        scoresMatch(c);
      c.element.hidden = !visible;
      if (visible) shown += 1;
    });
    document.getElementById("shown-count").textContent = shown + " of " + conversations.length + " shown";
  }
  [persona, qtype, metric, unscored].forEach(function (x) { x.addEventListener("change", apply); });
  [low, high].forEach(function (x) { x.addEventListener("input", apply); });
  apply();
  // when charts and browser are drawn (Plotly.newPlot draws synchronously): the benchmark reads it
  document.body.dataset.readyMs = String(Math.round(performance.now()));
})();
