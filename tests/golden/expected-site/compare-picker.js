// The compare page's picker: an operation, then two of its runs from lists, instead of pasting
// run names of 85 characters. It reads catalog.json (the operations and their run shards) once
// the list is used, then the chosen operation's shard, and fills the form's A and B fields;
// Compare submits them.
(function () {
  "use strict";
  var app = document.getElementById("compare-app");
  var picker = document.getElementById("compare-picker");
  if (!app || !picker) { return; }
  var root = app.getAttribute("data-root");
  var operation = document.getElementById("pick-operation");
  var lists = { a: document.getElementById("pick-a"), b: document.getElementById("pick-b") };
  var option = function (value, text) {
    var node = document.createElement("option");
    node.value = value;
    node.textContent = text;
    return node;
  };
  var show = function (primary) {
    var rules = window.sitegenCompareRules;
    return rules && rules.show ? rules.show(primary.value, primary.unit) : primary.value + " " + primary.unit;
  };
  var label = function (run) {
    var value = run.primary && run.primary.value !== null ? " · " + show(run.primary) : "";
    return [run.implementation, run.workload, run.gpu, run.timedPass + " pass"].join(" · ") + value + " · " + run.observedAt.slice(0, 10);
  };
  // The catalog is read when the list is first used, not with every comparison opened by URL.
  var loaded = false;
  // An operation's runs come in parts of at most 500 lines (catalog.json's "shards"), keyed by the first.
  var parts = {};
  var load = function () {
    if (loaded) { return; }
    loaded = true;
    fetch(root + "catalog.json").then(function (r) { return r.json(); }).then(function (catalog) {
      catalog.runShards.forEach(function (shard) {
        parts[shard.shard] = shard.shards || [shard.shard];
        operation.appendChild(option(shard.shard, shard.operation + " (" + shard.runs.toLocaleString("en-US") + ")"));
      });
    });
  };
  operation.addEventListener("focus", load);
  operation.addEventListener("pointerdown", load);
  picker.hidden = false;
  operation.addEventListener("change", function () {
    ["a", "b"].forEach(function (side) { lists[side].replaceChildren(option("", "choose a run")); });
    if (!operation.value) { return; }
    var asked = operation.value;
    var urls = parts[asked] || [asked];
    Promise.all(urls.map(function (url) {
      return fetch(root + url).then(function (r) {
        if (!r.ok) { throw new Error(url + ": HTTP " + r.status); }
        return r.text();
      });
    })).then(function (texts) {
      if (operation.value !== asked) { return; }  // another operation was chosen meanwhile
      var runs = texts.join("").split("\n").filter(Boolean).map(JSON.parse);
      runs.sort(function (x, y) { return label(x) < label(y) ? -1 : label(x) > label(y) ? 1 : 0; });
      ["a", "b"].forEach(function (side) {
        runs.forEach(function (run) { lists[side].appendChild(option(run.name, label(run))); });
      });
    });
  });
  ["a", "b"].forEach(function (side) {
    lists[side].addEventListener("change", function () { document.getElementById("compare-" + side).value = lists[side].value; });
  });
})();
