// Fills the reader's access date into citations and adds a "Copy citation" button.
// The page is complete without it: the placeholder "[access date]" stays.
(function () {
  "use strict";
  var today = new Date();
  var pad = function (n) { return (n < 10 ? "0" : "") + n; };
  var iso = today.getFullYear() + "-" + pad(today.getMonth() + 1) + "-" + pad(today.getDate());
  var fill = function () {
    document.querySelectorAll("[data-access]").forEach(function (el) {
      el.textContent = el.textContent.split("[access date]").join(iso);
    });
  };
  // The Clipboard API needs a secure context (https or localhost); elsewhere select and copy.
  var copy = function (target, text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    return new Promise(function (resolve, reject) {
      var range = document.createRange();
      range.selectNodeContents(target);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      (document.execCommand && document.execCommand("copy")) ? resolve() : reject();
    });
  };
  document.querySelectorAll("[data-copy-target]").forEach(function (slot) {
    var target = document.getElementById(slot.getAttribute("data-copy-target"));
    if (!target) { return; }
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = "Copy citation";
    var status = document.createElement("span");
    status.setAttribute("role", "status");
    status.className = "muted";
    button.addEventListener("click", function () {
      fill();
      copy(target, target.textContent.trim()).then(function () {
        status.textContent = " Copied.";
      }, function () {
        status.textContent = " Copy failed; select the text instead.";
      });
    });
    slot.appendChild(button);
    slot.appendChild(status);
  });
  fill();
})();
// Pagefind's search box, on builds that ran Pagefind (its script is then loaded first).
// The query lives in the URL (?q=), so a search can be shared and the back button keeps it;
// "/" anywhere outside a text field jumps to the box.
(function () {
  "use strict";
  var slot = document.getElementById("search");
  var script = document.querySelector('script[src$="pagefind/pagefind-ui.js"]');
  if (!slot || !window.PagefindUI || !script) { return; }
  var escape = function (text) {
    return text.replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c]; });
  };
  // The index is in shards (pagefind/bundles.json lists them), merged at query time, so a
  // rebuild re-indexes only the shards whose pages changed.
  var base = script.src.replace(/pagefind-ui\.js$/, "");
  var NAMES_WEIGHT = 4;
  fetch(base + "bundles.json").then(function (r) { return r.json(); }).then(function (bundles) {
    if (!bundles.length) { return; }
    // Pagefind favours short pages by default; a listing or a record page is no worse for being long.
    var ranking = { pageLength: 0.1 };
    // The names shard (sitegen.site.outputs.search_names) holds each operation and GPU page by
    // its name alone: the shortest name holding the words first, and ahead of the run pages
    // that carry the name in their titles.
    // Results link under the site's own root (a site may be served below a path), for the
    // first bundle too, whose links Pagefind would otherwise start at the domain's root.
    var root = new URL(base + "../").pathname;
    var options = function (b) {
      return b === "names" ? { bundlePath: base + b + "/", baseUrl: root, ranking: { pageLength: 1, termSaturation: 0.5, termSimilarity: 9 }, indexWeight: NAMES_WEIGHT }
                           : { bundlePath: base + b + "/", baseUrl: root, ranking: ranking };
    };
    var primary = options(bundles[0]);
    var ui = new window.PagefindUI({ element: "#search", showImages: false, showSubResults: false, resetStyles: false,
      bundlePath: primary.bundlePath, baseUrl: root, ranking: primary.ranking, indexWeight: primary.indexWeight || 1,
      mergeIndex: bundles.slice(1).map(options),
      translations: { placeholder: "Search (press /)" },
      // A page's own summary (record: implementation, pass, value, GPU; operation: its leaders)
      // says more than a passage that happens to hold the words.
      processResult: function (result) {
        if (result.meta && result.meta.summary) { result.excerpt = escape(result.meta.summary); }
        return result;
      } });
    var query = new URLSearchParams(window.location.search).get("q");
    if (query) { ui.triggerSearch(query); }
  });
  slot.addEventListener("input", function (event) {
    if (!event.target || event.target.tagName !== "INPUT") { return; }
    var url = new URL(window.location.href);
    if (event.target.value) { url.searchParams.set("q", event.target.value); } else { url.searchParams.delete("q"); }
    window.history.replaceState(null, "", url);
  });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
    if (event.key !== "/" || typing || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var input = slot.querySelector("input");
    if (input) { event.preventDefault(); input.focus(); }
  });
})();
// The canonical manifest of a record page: the page links its JSON twin rather than printing the
// same bytes again; opened, the box shows the twin's text. Without JavaScript (or where fetch
// fails, as on file://) the box keeps its link to the twin.
(function () {
  "use strict";
  document.querySelectorAll("details[data-manifest]").forEach(function (box) {
    var code = box.querySelector("code");
    var loaded = false;
    box.addEventListener("toggle", function () {
      if (!box.open || loaded || !code || !window.fetch) { return; }
      loaded = true;
      fetch(box.getAttribute("data-manifest")).then(function (response) {
        if (!response.ok) { throw new Error(response.status); }
        return response.text();
      }).then(function (text) { code.textContent = text; }, function () { loaded = false; });
    });
  });
})();
