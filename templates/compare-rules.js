// The build's rules for one comparison, ported for compare.js (which draws the page):
// sitegen/facts/uncertainty.py, facts/ranking.py, facts/index.primary and text/labels.flatten.
//
// The value is the protocol's primary statistic; the interval is the 2.5–97.5th percentile
// of 2,000 bootstrap replicates of it (for a quantile, drawn through the order statistics'
// Beta distributions, exactly as uncertainty.replicates does), else the published p20–p80,
// else mean ± 1.96·stdev/√n; the ratio's interval is the percentiles of the ratio of
// replicates, else the ratio of interval ends (a range, not a 95% interval). Noise and the
// separation test are ranking._noise and ranking._separate: a verdict says no more than a rank.
// Only the random numbers differ (seeded from the run name here, from the digest with numpy
// in the build).
(function () {
  "use strict";
  var REPLICATES = 2000, Z95 = 1.959964;
  var MIN_EFFECT = 0.01, NOISY_HALF_WIDTH = 0.05, NOISY_SPREAD = 1.5, PUBLISHED = "published p20–p80";
  var RESULT_FIELDS = ["run.spec.timing", "run.spec.measurements", "run.spec.sourceNative.metrics"];

  // A seeded generator (mulberry32 over an FNV-1a hash of the name): the same page every load.
  var generator = function (name) {
    var h = 2166136261;
    for (var i = 0; i < name.length; i++) { h ^= name.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
    var state = h;
    var uniform = function () {
      state = (state + 0x6D2B79F5) >>> 0;
      var t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
    };
    var normal = function () {
      return Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    };
    // Marsaglia and Tsang's method; every shape here is at least 1.
    var gamma = function (shape) {
      var d = shape - 1 / 3, c = 1 / Math.sqrt(9 * d);
      for (;;) {
        var x, v;
        do { x = normal(); v = 1 + c * x; } while (v <= 0);
        v = v * v * v;
        var u = uniform();
        if (u < 1 - 0.0331 * x * x * x * x || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) { return d * v; }
      }
    };
    var beta = function (p, q) { var x = gamma(p); return x / (x + gamma(q)); };
    return { uniform: uniform, beta: beta };
  };

  var quantileOf = function (statistic) {
    if (statistic === "median") { return 0.5; }
    if (statistic === "min") { return 0; }
    if (statistic === "max") { return 1; }
    var m = /^p(\d+)$/.exec(statistic || "");
    return m ? Number(m[1]) / 100 : null;
  };

  // numpy.percentile's default (linear) on sorted values.
  var percentile = function (sorted, p) {
    var h = (sorted.length - 1) * p / 100, lo = Math.floor(h);
    return lo + 1 < sorted.length ? sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
  };
  var bounds = function (values) {
    var sorted = Float64Array.from(values).sort();
    return [percentile(sorted, 2.5), percentile(sorted, 97.5)];
  };

  var replicates = function (samples, statistic, seed) {
    var n = samples.length;
    if (n < 2) { return null; }
    var rng = generator(seed);
    var ordered = Float64Array.from(samples).sort();
    var q = quantileOf(statistic), out = new Float64Array(REPLICATES), r, i;
    if (q === null) {
      if (statistic !== "mean") { return null; }
      for (r = 0; r < REPLICATES; r++) {
        var sum = 0;
        for (i = 0; i < n; i++) { sum += ordered[Math.floor(rng.uniform() * n)]; }
        out[r] = sum / n;
      }
      return out;
    }
    var position = (n - 1) * q, j = Math.floor(position), fraction = position - j;
    for (r = 0; r < REPLICATES; r++) {
      var u = rng.beta(j + 1, n - j);
      var low = ordered[Math.min(Math.floor(u * n), n - 1)];
      if (fraction === 0 || j + 1 >= n) { out[r] = low; continue; }
      var next = u + (1 - u) * rng.beta(1, n - j - 1);
      var high = ordered[Math.min(Math.floor(next * n), n - 1)];
      out[r] = low + fraction * (high - low);
    }
    return out;
  };

  var significant = function (value, digits) {
    digits = digits || 3;
    if (value === 0) { return "0"; }
    if (!isFinite(value)) { return String(value); }
    var magnitude = Math.floor(Math.log10(Math.abs(value)));
    if (magnitude >= digits - 1) { return Math.round(value).toLocaleString("en-US"); }
    return value.toFixed(digits - 1 - magnitude);
  };
  var DURATIONS = [["s", 1e9], ["ms", 1e6], ["µs", 1e3], ["ns", 1]];
  var scaleOf = function (value, unit) {
    if (unit !== "ns") { return [unit, 1]; }
    for (var i = 0; i < DURATIONS.length; i++) { if (Math.abs(value) >= DURATIONS[i][1]) { return DURATIONS[i]; } }
    return ["ns", 1];
  };
  var show = function (value, unit) { var s = scaleOf(value, unit); return significant(value / s[1]) + " " + s[0]; };
  var spread = function (low, high, unit) {
    var s = scaleOf(high, unit), digits = 3;
    while (digits < 6 && low !== high && significant(low / s[1], digits) === significant(high / s[1], digits)) { digits++; }
    return significant(low / s[1], digits) + "–" + significant(high / s[1], digits) + " " + s[0];
  };

  // What sitegen.facts.index.primary and ranking.estimate derive from one manifest.
  var facts = function (name, manifest) {
    var run = manifest.run, spec = run.spec, protocol = manifest.protocol.spec;
    var statistic = protocol.measurement.primaryStatistic;
    var metric = null, unit = null, value = null, known = {};
    if (spec.timing) {
      var v = spec.timing.latencyNs ? spec.timing.latencyNs[statistic] : undefined;
      if (v !== undefined && v !== null) { metric = "latency"; unit = "ns"; value = Number(v); }
    } else {
      var candidates = (spec.measurements || []).filter(function (m) { return m.statistic === statistic; });
      candidates.sort(function (x, y) { return x.metric < y.metric ? -1 : x.metric > y.metric ? 1 : x.unit < y.unit ? -1 : x.unit > y.unit ? 1 : x.value - y.value; });
      if (candidates.length) { metric = candidates[0].metric; unit = candidates[0].unit; value = Number(candidates[0].value); }
    }
    (spec.measurements || []).forEach(function (m) { if (m.metric === metric && m.unit === unit) { known[m.statistic] = m.value; } });
    if (spec.timing && metric === "latency" && spec.timing.latencyNs) {
      Object.keys(spec.timing.latencyNs).forEach(function (k) { if (spec.timing.latencyNs[k] !== null) { known[k] = spec.timing.latencyNs[k]; } });
    }
    var draws = null, interval = null;
    if (spec.timing && spec.timing.samplesNs && spec.timing.samplesNs.length && metric === "latency") {
      draws = replicates(spec.timing.samplesNs, statistic, name);
    }
    if (draws) {
      var b = bounds(draws);
      interval = { low: b[0], high: b[1], method: "bootstrap" };
    } else if (known.p20 !== undefined && known.p80 !== undefined) {
      interval = { low: known.p20, high: known.p80, method: "published p20–p80" };
    } else if (statistic === "mean" && known.stdev !== undefined && value !== null) {
      var n = protocol.measurement.minSamples;
      if (n && n >= 2) {
        var half = Z95 * known.stdev / Math.sqrt(n);
        interval = { low: Math.max(0, value - half), high: value + half, method: "normal approximation of the mean (n = " + n + ")" };
      }
    }
    var samples = [];
    if (spec.timing) {
      if (spec.timing.samplesNs && spec.timing.samplesNs.length) { samples = spec.timing.samplesNs.slice(); }
      else { (spec.timing.processes || []).forEach(function (p) { samples = samples.concat(p.samplesNs || []); }); }
    }
    var evidence = spec.evidence || {}, details = evidence.details || {};
    var noise = [];
    if (details.noisy === true) {
      var apart = details.processSpreadRel;
      noise.push("the harness found its processes disagree" + (typeof apart === "number" ? " (medians " + percent(apart) + " apart)" : ""));
    }
    if (interval && interval.method !== PUBLISHED && value) {
      var halfWidth = (interval.high - interval.low) / 2 / value;
      if (halfWidth > NOISY_HALF_WIDTH) { noise.push("95% interval ±" + percent(halfWidth) + " of the value (over " + percent(NOISY_HALF_WIDTH) + ")"); }
    }
    if (known.p20 && known.p80 && known.p80 / known.p20 > NOISY_SPREAD) {
      noise.push("p80/p20 = " + (known.p80 / known.p20).toFixed(2) + "× (over " + NOISY_SPREAD + "×)");
    }
    var minEffect = protocol.comparability.minEffect;
    var hardware = manifest.environment.spec.hardware;
    var benchmark = spec.sourceNative && spec.sourceNative.benchmark;
    return {
      name: name, manifest: manifest, title: (run.metadata && run.metadata.title) || name,
      statistic: statistic, metric: metric, unit: unit, value: value, draws: draws, interval: interval, samples: samples,
      gpu: hardware.product + " (" + hardware.architecture + ")",
      pass: spec.timedPass || (benchmark && benchmark.indexOf("/") >= 0 ? benchmark.slice(benchmark.lastIndexOf("/") + 1) : "unspecified"),
      family: protocol.comparability.family, workload: spec.workloadDigest, observed: String(spec.observedAt).slice(0, 10),
      protocol: manifest.protocol.metadata.name,
      noisy: noise.length ? noise.join("; ") : null, minEffect: minEffect === undefined || minEffect === null ? MIN_EFFECT : minEffect
    };
  };

  var intervalText = function (f) {
    if (!f.interval) { return "no interval"; }
    var span = spread(f.interval.low, f.interval.high, f.unit);
    return f.interval.method === "bootstrap" ? span : span + " (" + f.interval.method + ")";
  };

  var ratioInterval = function (a, b) {
    if (a.draws && b.draws && a.draws.every(function (x) { return x > 0; })) {
      var ratios = new Float64Array(REPLICATES);
      for (var i = 0; i < REPLICATES; i++) { ratios[i] = b.draws[i] / a.draws[i]; }
      var r = bounds(ratios);
      return [r[0], r[1], "95% bootstrap interval of the ratio, from " + REPLICATES.toLocaleString("en-US") + " resamples of each run's raw samples"];
    }
    if (a.interval && b.interval && a.interval.high > 0 && a.interval.low > 0) {
      var kinds = [a.interval.method, b.interval.method].filter(function (k, i, all) { return all.indexOf(k) === i; }).sort();
      return [b.interval.low / a.interval.high, b.interval.high / a.interval.low, "range from each run's " + kinds.join(" and ")];
    }
    return null;
  };

  var percent = function (fraction) { return (Math.abs(fraction) * 100).toFixed(1).replace(/\.0$/, "") + "%"; };
  var times = function (ratio) { return ratio < 1.1 ? ratio.toFixed(3) + "×" : ratio.toFixed(2) + "×"; };

  // ranking._separate: [distinct rank?, reason] for two runs of one cohort, ahead no slower.
  var separation = function (ahead, behind, aheadName) {
    var threshold = Math.max(ahead.minEffect, behind.minEffect);
    if (!ahead.value) { return [behind.value > 0, aheadName + " measured 0"]; }
    var gap = behind.value / ahead.value - 1;
    var gapText = slowerThan(behind.value, ahead.value, behind.unit, aheadName);
    var found = ratioInterval(ahead, behind), effect = percent(threshold) + " minimum effect";
    if (!found) {
      return gap >= threshold ? [true, gapText + ", at least the " + effect + " (no interval)"] : [false, gapText + ", under the " + effect + " (no interval)"];
    }
    var ci = "ratio " + (behind.value / ahead.value).toFixed(3) + "× (" + (found[2].indexOf("95% bootstrap") === 0 ? "95% bootstrap interval" : found[2]) + " " + found[0].toFixed(3) + "–" + found[1].toFixed(3) + "×)";
    if (found[0] <= 1) { return [false, gapText + ": " + ci + " includes 1"]; }
    if (gap < threshold) { return [false, gapText + ": under the " + effect + ", though the " + ci + " excludes 1"]; }
    return [true, gapText + ": " + ci + " excludes 1 and the gap is at least the " + effect];
  };

  // compare.verdict: a run is called faster only where it would get a rank of its own.
  // noPlace: run name → why it holds no place (compare/index.json's no_place, from the build).
  var verdict = function (a, b, aName, bName, sameGroup, noPlace) {
    if (!sameGroup) {
      return "Not a ranking: the two runs are not in one comparison group (the GPU, pass, workload, protocol family or metric differs), so the ratio is shown but neither is called faster.";
    }
    var unplaced = [[aName, a], [bName, b]].filter(function (p) { return noPlace && Object.prototype.hasOwnProperty.call(noPlace, p[1].name); })
      .map(function (p) { return p[0] + " holds no place in its comparison group (" + noPlace[p[1].name] + ")"; });
    if (unplaced.length) { return "No verdict: " + unplaced.join("; ") + ". Only runs that hold a place in the group are compared, as in its ranks."; }
    var noisy = [[aName, a], [bName, b]].filter(function (p) { return p[1].noisy; }).map(function (p) { return p[0] + " is noisy (" + p[1].noisy + ")"; });
    if (noisy.length) { return "No verdict: " + noisy.join("; ") + ". A noisy run holds no strict rank, so neither is called faster."; }
    var aFirst = a.value < b.value || (a.value === b.value && a.name <= b.name);
    var ahead = aFirst ? a : b, behind = aFirst ? b : a, aheadName = aFirst ? aName : bName, behindName = aFirst ? bName : aName;
    var found = separation(ahead, behind, aheadName);
    var reason = ahead.value ? behindName + " is " + found[1] : found[1];
    var better = (ahead.unit || "ns") === "ns" ? "faster" : "lower in " + ahead.metric;
    return found[0] ? aheadName + " is " + better + " by the rule that gives a distinct rank: " + reason + "."
      : "No verdict: " + reason + ". By the rule that gives a distinct rank, the two share one.";
  };

  // units.slower_than: a time "1.83× slower than torch" / "faster"; any other metric (memory) "more" / "less".
  var slowerThan = function (value, leader, unit, name) {
    var timed = (unit || "ns") === "ns";
    if (value === leader) { return (timed ? "as fast as " : "the same as ") + name; }
    if (value < leader) { return times(leader / value) + (timed ? " faster" : " less") + " than " + name; }
    return times(value / leader) + (timed ? " slower" : " more") + " than " + name;
  };
  var ratioWords = function (aName, bName, aValue, bValue, unit) { return bName + " is " + slowerThan(bValue, aValue, unit, aName); };

  // labels.flatten: nested JSON → [path, text] in document order, lists of scalars joined.
  var scalar = function (v) { return typeof v === "boolean" ? (v ? "true" : "false") : v === null ? "None" : String(v); };
  var flatten = function (value, prefix, out) {
    if (Array.isArray(value)) {
      if (value.every(function (x) { return x === null || typeof x !== "object"; })) { out.push([prefix, value.map(scalar).join(", ")]); return out; }
      value.forEach(function (item, i) { flatten(item, prefix + "[" + i + "]", out); });
      return out;
    }
    if (value !== null && typeof value === "object") {
      Object.keys(value).forEach(function (k) { flatten(value[k], prefix ? prefix + "." + k : k, out); });
      return out;
    }
    out.push([prefix, scalar(value)]);
    return out;
  };
  var flat = function (doc, prefix, skip) {
    var map = new Map();
    flatten(doc, prefix, []).forEach(function (row) {
      var skipped = skip.some(function (s) { return row[0] === s || row[0].indexOf(s + ".") === 0 || row[0].indexOf(s + "[") === 0; });
      if (!skipped) { map.set(row[0], row[1]); }
    });
    return map;
  };

  window.sitegenCompareRules = {
    RESULT_FIELDS: RESULT_FIELDS, facts: facts, intervalText: intervalText, ratioInterval: ratioInterval, verdict: verdict, PUBLISHED: PUBLISHED,
    ratioWords: ratioWords, flat: flat, show: show, scaleOf: scaleOf, significant: significant
  };
})();
