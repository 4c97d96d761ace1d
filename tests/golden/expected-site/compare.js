// compare/index.html?a=RUN&b=RUN: two runs side by side, read from their JSON twins
// (runs/NAME/index.json, the canonical manifest with every raw sample), by the build's rules
// (compare-rules.js, loaded first). Every text from a record goes in through textContent.
(function () {
  "use strict";
  var app = document.getElementById("compare-app");
  var rules = window.sitegenCompareRules;
  var facts = rules.facts, intervalText = rules.intervalText, ratioInterval = rules.ratioInterval, ratioWords = rules.ratioWords;
  var flat = rules.flat, show = rules.show, scaleOf = rules.scaleOf, significant = rules.significant, RESULT_FIELDS = rules.RESULT_FIELDS;
  if (!app) { return; }
  var namePattern = new RegExp(app.getAttribute("data-name-pattern"));
  var root = app.getAttribute("data-root");
  var params = new URLSearchParams(window.location.search);
  var names = { a: params.get("a") || "", b: params.get("b") || "" };
  var status = document.getElementById("compare-status");
  document.getElementById("compare-a").value = names.a;
  document.getElementById("compare-b").value = names.b;

  var el = function (tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  };

  var histogram = function (f, label) {
    var figure = el("figure", null, "chart-block");
    figure.appendChild(el("figcaption", label + ": distribution of the " + f.samples.length.toLocaleString("en-US") + " raw samples"));
    var sorted = f.samples.slice().sort(function (x, y) { return x - y; });
    var n = sorted.length, cut = sorted[Math.min(Math.ceil(n * 0.99), n - 1)];
    var shown = sorted.filter(function (v) { return v <= cut; });
    var s = scaleOf(sorted[Math.floor(n / 2)], "ns");
    var lo = shown[0], hi = shown[shown.length - 1];
    if (hi === lo) { lo -= 0.5; hi += 0.5; }
    var bins = 40, counts = new Array(bins).fill(0), width = (hi - lo) / bins;
    shown.forEach(function (v) { counts[Math.min(Math.floor((v - lo) / width), bins - 1)] += 1; });
    var most = Math.max.apply(null, counts);
    // Room under the plot for a line of ticks and one or two of caption at the 21 units the phone
    // stylesheet draws chart text at (so that it reads at 11 px on a 358 px wide chart): the size
    // is set on the svg, where that stylesheet can override it, not on each text.
    var cutNote = n - shown.length ? "the slowest 1% not drawn" : "";
    var NS = "http://www.w3.org/2000/svg", W = 640, L = 16, R = 16, T = 8, B = cutNote ? 82 : 56, H = 164 + B;
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("class", "chart");
    svg.setAttribute("role", "img");
    svg.setAttribute("font-family", "system-ui, sans-serif");
    svg.setAttribute("font-size", "12");
    var median = (sorted[Math.floor((n - 1) / 2)] + sorted[Math.floor(n / 2)]) / 2;
    var title = document.createElementNS(NS, "title");
    title.textContent = "Histogram of " + n + " latency samples, median " + show(median, "ns");
    svg.appendChild(title);
    var x = function (v) { return L + (v - lo) / (hi - lo) * (W - L - R); };
    var y = function (c) { return H - B - c / most * (H - B - T); };
    var shape = function (tag, attrs) {
      var node = document.createElementNS(NS, tag);
      Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
      svg.appendChild(node);
      return node;
    };
    if (f.interval && f.interval.method === "bootstrap" && f.statistic === "median") {
      shape("rect", { x: x(f.interval.low), y: T, width: Math.max(x(f.interval.high) - x(f.interval.low), 1), height: H - B - T, fill: "#d55e00", opacity: "0.2" });
    }
    counts.forEach(function (c, i) {
      if (c) { shape("rect", { x: x(lo + i * width), y: y(c), width: Math.max(x(lo + (i + 1) * width) - x(lo + i * width) - 1, 0.5), height: H - B - y(c), fill: "#0072b2" }); }
    });
    shape("path", { d: "M" + x(median) + " " + T + "V" + (H - B), stroke: "currentColor", "stroke-width": "2", "stroke-dasharray": "6 3" });
    shape("path", { d: "M" + L + " " + (H - B) + "H" + (W - R), stroke: "#8c959f" });
    [[lo, "start"], [hi, "end"]].forEach(function (end) {
      var t = shape("text", { x: x(end[0]), y: H - B + 20, "text-anchor": end[1], fill: "currentColor" });
      t.textContent = significant(end[0] / s[1]) + " " + s[0];
    });
    var axis = shape("text", { x: W / 2, y: H - B + 46, "text-anchor": "middle", fill: "currentColor" });
    axis.textContent = "latency; dashed: median " + show(median, "ns");
    if (cutNote) { shape("text", { x: W / 2, y: H - B + 72, "text-anchor": "middle", fill: "currentColor" }).textContent = cutNote; }
    figure.appendChild(svg);
    return figure;
  };

  // A body row: its first cell the row's header; a cell is text, or a node (a link).
  var tableRow = function (cells) {
    var r = el("tr");
    cells.forEach(function (cell, i) {
      var c = el(i === 0 ? "th" : "td");
      if (i === 0) { c.setAttribute("scope", "row"); }
      if (cell instanceof Node) { c.appendChild(cell); } else { c.textContent = cell; }
      r.appendChild(c);
    });
    return r;
  };

  var table = function (head, rows, cls) {
    var wrap = el("div", null, "scroll"), t = el("table", null, cls), thead = el("thead"), tr = el("tr");
    head.forEach(function (h) { var th = el("th", h); th.setAttribute("scope", "col"); tr.appendChild(th); });
    thead.appendChild(tr);
    t.appendChild(thead);
    var body = el("tbody");
    rows.forEach(function (cells) { body.appendChild(tableRow(cells)); });
    t.appendChild(body);
    wrap.appendChild(t);
    return wrap;
  };

  var runLink = function (f) {
    var a = el("a", "run " + f.name);
    a.href = root + "runs/" + encodeURIComponent(f.name) + "/index.html";
    return a;
  };

  var noPlace = {};

  var sameGroup = function (a, b) {
    return a.workload === b.workload && a.pass === b.pass && a.family === b.family && a.gpu === b.gpu && a.metric === b.metric;
  };

  var render = function (a, b) {
    var aName = a.title === b.title ? "A (" + a.name + ")" : a.title, bName = a.title === b.title ? "B (" + b.name + ")" : b.title;
    var ratioText = document.getElementById("compare-ratio"), intervalText_ = document.getElementById("compare-interval");
    var verdict = document.getElementById("compare-verdict");
    if (a.value === null || b.value === null) {
      ratioText.textContent = "No ratio: " + (a.value === null ? a.name : b.name) + " has no value at its protocol's primary statistic.";
    } else if (a.metric !== b.metric || a.unit !== b.unit) {
      ratioText.textContent = "No ratio: the runs measure different things (" + a.metric + " in " + a.unit + ", " + b.metric + " in " + b.unit + ").";
    } else if (!a.value) {
      ratioText.textContent = "No ratio: " + aName + " measured 0.";
    } else {
      var ratio = b.value / a.value, found = ratioInterval(a, b);
      ratioText.textContent = ratioWords(aName, bName, a.value, b.value, a.unit) + " (ratio " + ratio.toFixed(3) + "×).";
      if (found) {
        // Only a bootstrap interval of the ratio is a 95% one; the ratio of interval ends is a range.
        var label = found[2].indexOf("95% bootstrap") === 0 ? "95% interval of the ratio" : "Range of the ratio";
        intervalText_.textContent = label + ": " + found[0].toFixed(3) + "–" + found[1].toFixed(3) + "× (" + found[2] + ")";
      } else {
        intervalText_.textContent = "No interval: neither raw samples nor published quantiles on both sides.";
      }
      verdict.textContent = rules.verdict(a, b, aName, bName, sameGroup(a, b), noPlace);
    }
    document.getElementById("compare-cohort").textContent = sameGroup(a, b)
      ? "Both runs are in one comparison group (same workload, pass, protocol family, GPU and metric)."
      : "Not in one comparison group: the workload, pass, protocol family, GPU or metric differs, so the ratio compares unlike setups (what differs is listed below).";
    var sides = document.getElementById("compare-sides");
    [["Run", runLink(a), runLink(b)], ["Title", a.title, b.title],
     ["Value", a.value === null ? "—" : show(a.value, a.unit), b.value === null ? "—" : show(b.value, b.unit)],
     [a.interval && a.interval.method === rules.PUBLISHED || b.interval && b.interval.method === rules.PUBLISHED ? "95% interval or p20–p80 range" : "95% interval", intervalText(a), intervalText(b)],
     ["Raw samples", a.samples.length ? a.samples.length.toLocaleString("en-US") : "none published", b.samples.length ? b.samples.length.toLocaleString("en-US") : "none published"],
     ["GPU", a.gpu, b.gpu], ["Pass", a.pass, b.pass], ["Protocol", a.protocol + " (" + a.family + ")", b.protocol + " (" + b.family + ")"],
     ["Observed", a.observed, b.observed]].forEach(function (cells) { sides.appendChild(tableRow(cells)); });
    var distributions = document.getElementById("compare-distributions");
    [[a, aName], [b, bName]].forEach(function (pair) {
      if (pair[0].samples.length >= 2) { distributions.appendChild(histogram(pair[0], pair[1])); }
      else { distributions.appendChild(el("p", pair[1] + ": no raw samples published; its interval is " + intervalText(pair[0]) + ".", "muted")); }
    });
    var diff = document.getElementById("compare-diff");
    [["Identity: the run documents", "run", RESULT_FIELDS], ["Protocol", "protocol", []], ["Environment", "environment", []]].forEach(function (part) {
      var left = flat(a.manifest[part[1]], part[1], part[2]), right = flat(b.manifest[part[1]], part[1], part[2]);
      var keys = Array.from(left.keys()).concat(Array.from(right.keys()).filter(function (k) { return !left.has(k); }));
      var rows = [], sameCount = 0;
      keys.forEach(function (k) {
        if (left.get(k) !== right.get(k)) { rows.push([k, left.has(k) ? left.get(k) : "—", right.has(k) ? right.get(k) : "—"]); }
        else { sameCount += 1; }
      });
      diff.appendChild(el("h3", part[0]));
      if (rows.length) {
        // The count is the figure's caption, outside the scrolling box, so it never scrolls away with the columns.
        var block = el("figure", null, "table");
        block.appendChild(el("figcaption", rows.length + " field" + (rows.length === 1 ? "" : "s") + " differ; " + sameCount + " the same"));
        block.appendChild(table(["Field", "A", "B"], rows, "compare-diff"));
        diff.appendChild(block);
      } else {
        diff.appendChild(el("p", "The same in every field (" + sameCount + ")."));
      }
    });
    document.getElementById("compare-result").hidden = false;
    status.textContent = "";
  };

  var load = function (name) {
    return fetch(root + "runs/" + encodeURIComponent(name) + "/index.json").then(function (response) {
      if (!response.ok) { throw new Error("no run named " + name + " (HTTP " + response.status + ")"); }
      return response.json();
    }).then(function (manifest) { return facts(name, manifest); });
  };

  if (!names.a || !names.b) {
    status.textContent = "Name two runs to compare.";
    return;
  }
  var bad = [names.a, names.b].filter(function (n) { return !namePattern.test(n); });
  if (bad.length) {
    status.textContent = "Not a run name: " + bad.join(", ") + " (lowercase letters, digits, '.', '_' and '-').";
    return;
  }
  status.textContent = "Comparing…";
  // Which runs hold no place is the registry's to say (a signature's trust, a flag): the build lists them.
  var places = fetch(root + "compare/index.json").then(function (response) {
    if (!response.ok) { throw new Error("no compare/index.json (HTTP " + response.status + ")"); }
    return response.json();
  }).then(function (app) { noPlace = app.no_place || {}; });
  Promise.all([load(names.a), load(names.b), places]).then(function (both) { render(both[0], both[1]); }, function (error) {
    status.textContent = "Could not compare: " + error.message + ".";
  });
})();
