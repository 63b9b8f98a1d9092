// tracebook notebook behaviour. Everything reads with JavaScript off; this script adds the
// reader's time zone, deep-link opening, search, filters, the theme switch, copy-link buttons,
// j/k navigation, expand-all for printing, code colouring, and decoding of the turns a large
// page stores compressed. It never loads anything.
(function () {
  "use strict";
  var doc = document, root = doc.documentElement;
  root.classList.add("js");
  function $(id) { return doc.getElementById(id); }
  function all(sel, el) { return Array.prototype.slice.call((el || doc).querySelectorAll(sel)); }
  function openAround(el) {
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
  }

  // Stored blocks: past the page's inline budget, whole turns (and a large turn's steps) are
  // zstd-compressed in data blocks, each leaving a stub, and so is the turn list past its first
  // entries; the page carries fzstd to read them. The blocks are taken out of the document at
  // load (keeping it small) and decoded into place when the reader scrolls to a stub or to the
  // end of the turn list, opens a Process, follows a link into a stored turn, or reaches a
  // match with search. A filter counts stored turns from their stubs (each stored turn's line
  // carries the census of its steps' kinds and statuses) and shows the stubs that hold a match,
  // so they are decoded as the reader scrolls to them like any other.
  var stored = {}, parents = {}, blockOf = {}, texts = {}, watcher = null;
  // The blocks whose stub or placeholder is near the view, placed one at a time.
  var near = {}, pumping = false;
  // Watches which turn is in view, for the turn list.
  var spy = null;
  function collectStored() {
    all("template.stored").forEach(function (s) {
      var id = s.getAttribute("data-block");
      // The element itself is kept (out of the document): its text is read when decoded. A
      // template, not a script: the browser's parser reads a template's text fastest.
      stored[id] = s;
      if (s.hasAttribute("data-in")) parents[id] = s.getAttribute("data-in");
      s.parentNode.removeChild(s);
    });
    if (window.IntersectionObserver && window.fzstd) {
      watcher = new IntersectionObserver(function (seen) {
        seen.forEach(function (e) {
          var id = e.target.getAttribute("data-block");
          if (e.isIntersecting) near[id] = true; else delete near[id];
        });
        pump();
      }, { rootMargin: "1500px 0px" });
    }
    hold(doc);
    all("section.turn.stored").forEach(function (s) {
      s.getAttribute("data-turns").split(" ").forEach(function (t) { blockOf[t] = s.getAttribute("data-block"); });
    });
    // A stub is decoded as it nears the view; so is the rest of the turn list, as the reader
    // scrolls the list to its end, and a turn's stored steps once its Process is open.
    if (watcher) all("section.turn.stored, ol.toc-stored, ol.steps.lazy").forEach(function (s) { watcher.observe(s); });
  }
  // Places the blocks near the view one at a time, decoding in one task and placing in the
  // next, so no task does more than one block's work however many stubs come near at once (a
  // filter that hides most turns brings many together); a block that has left the view by
  // then waits, decoded.
  function pump() {
    if (pumping) return;
    var id = Object.keys(near).filter(function (b) { return b in stored; })[0];
    if (!id) return;
    pumping = true;
    setTimeout(function () {
      for (var b = id; b; b = parents[b] in stored ? parents[b] : null) htmlOf(b);
      setTimeout(function () {
        pumping = false;
        if (near[id]) placeNow(id);
        delete near[id];
        pump();
      }, 0);
    }, 0);
  }
  function storedIds() { return Object.keys(stored); }
  // Where a block stands in the document now: its stubs, or its steps' placeholder. Kept by
  // id as they enter the document, so finding them costs nothing on a page of 400k nodes.
  var holding = {};
  function hold(scope) {
    all("[data-block]", scope).forEach(function (h) {
      var id = h.getAttribute("data-block");
      (holding[id] = holding[id] || []).push(h);
    });
  }
  function holders(id) {
    return (holding[id] || []).filter(function (h) { return h.isConnected; });
  }
  // A block's HTML; throws when its data is damaged.
  function inflate(id) {
    var bin = atob(stored[id].content.textContent.trim()), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TextDecoder().decode(window.fzstd.decompress(bytes));
  }
  // The blocks' HTML was written and sanitized by tracebook like the rest of the page.
  function place(id, html) {
    var at = holders(id);
    if (!(id in stored) || !at.length) return;
    delete stored[id];
    var t = doc.createElement("template");
    t.innerHTML = html;
    localTimes(t.content);
    hold(t.content);
    // A filter on: what the block holds is filtered before it shows.
    if (filter) {
      all(FILTERED, t.content).forEach(filterOne);
      if (at[0].classList.contains("toc-stored")) tocShown(t.content, ":scope > li");
    }
    var nodes = Array.prototype.slice.call(t.content.childNodes);
    var placedTurns = all(":scope > .turn[id]", t.content);
    var lazy = all("ol.steps.lazy", t.content);
    at[0].parentNode.insertBefore(t.content, at[0]);
    searchPlaced(id, nodes);
    nodes.forEach(colourSoon);
    if (spy) placedTurns.forEach(function (s) { spy.observe(s); });
    if (watcher) lazy.forEach(function (s) { watcher.observe(s); });
    at.forEach(function (h) {
      if (watcher) watcher.unobserve(h);
      h.parentNode.removeChild(h);
    });
    delete holding[id];
  }
  // Decodes a block in one task and places it in the next, after the block that holds its
  // placeholder.
  function later() { return new Promise(function (done) { setTimeout(done, 0); }); }
  function open(id) {
    if (!(id in stored) || !window.fzstd) return Promise.resolve();
    var first = parents[id] in stored ? open(parents[id]) : Promise.resolve();
    return first.then(later).then(function () { htmlOf(id); }).then(later)
      .then(function () { placeNow(id); });
  }
  // Every block in place at once, before a print lays the page out: outer blocks first, then
  // the steps blocks they held.
  function placeAll() {
    if (!window.fzstd) return;
    var before;
    do {
      before = storedIds().length;
      storedIds().forEach(function (id) {
        if (!holders(id).length) return;
        try { place(id, inflate(id)); } catch (e) { /* left stored */ }
      });
    } while (storedIds().length && storedIds().length < before);
  }
  // Work over many stored blocks runs a slice at a time, each in a task of its own (about
  // 40 ms of work), so a large page keeps answering: the count line shows how far it got, and
  // Esc or a newer search or filter stops it. Resolves true when every item was done.
  var job = 0;
  function sliced(items, step, label) {
    var mine = ++job, i = 0, count = $("q-count");
    return new Promise(function (done) {
      function next() {
        if (mine !== job) { done(false); return; }
        var start = Date.now();
        while (i < items.length && Date.now() - start < 40) step(items[i++]);
        if (i < items.length) {
          if (count) count.textContent = label + " " + i + " of " + items.length + " steps… (Esc stops)";
          setTimeout(next, 0);
        } else done(true);
      }
      // In a task of its own: the work that started it (a search marking the page) had its own.
      setTimeout(next, 0);
    });
  }
  function stopWork() {
    var was = job;
    job++;
    var count = $("q-count");
    if (count && /steps… \(Esc/.test(count.textContent) && was) count.textContent = "stopped";
  }
  // A block's HTML, decoded once and kept until placed; "" when its data is damaged.
  var html = {};
  function htmlOf(id) {
    if (html[id] === undefined) { try { html[id] = inflate(id); } catch (e) { html[id] = ""; } }
    return html[id];
  }
  function run(step) { step(); }
  // Places a block now (after the block holding its placeholder), for sliced work.
  function placeNow(id) {
    if (parents[id] in stored) placeNow(parents[id]);
    if (!(id in stored)) return;
    var h = htmlOf(id);
    delete html[id];
    if (h) place(id, h);
  }
  // The plain text of every stored block, decoded once, for search: the block's HTML without
  // its tags and buttons, entities read back (no parse: a block's parse is the slow part).
  var ENTITIES = { lt: "<", gt: ">", amp: "&", quot: "\"", apos: "'", nbsp: "\u00a0" };
  function plainText(html) {
    return html.replace(/<button[^>]*>[^<]*<\/button>/g, "").replace(/<[^>]*>/g, "")
      .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, function (m, e) {
        if (e.charAt(0) !== "#") return ENTITIES[e] !== undefined ? ENTITIES[e] : m;
        var n = e.charAt(1) === "x" || e.charAt(1) === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        try { return String.fromCodePoint(n); } catch (err) { return m; }
      });
  }
  // Each stored block's matches of `q`, counted into `counts`: decoding a block, reading its
  // text and counting are steps of their own, so no one task does two.
  function storedTexts(q, counts) {
    if (!window.fzstd) return Promise.resolve(true);
    var steps = [];
    storedIds().forEach(function (id) {
      var h = "";
      if (texts[id] === undefined) {
        steps.push(function () {
          try { h = html[id] !== undefined ? html[id] : inflate(id); } catch (e) { h = ""; /* damaged: no text */ }
        });
        steps.push(function () { texts[id] = plainText(h).toLowerCase(); h = ""; });
      }
      steps.push(function () { if (id in stored && texts[id] !== undefined) counts[id] = occurrences(texts[id], q); });
    });
    return sliced(steps, run, "searching");
  }
  // The stored block that holds element `id` when it is not in the document yet: its turn's
  // block, or the block of its turn's steps.
  // A stub's line for a stored turn carries the turn's id, and an empty anchor for each id
  // inside the turn (a stored steps placeholder, one for each id inside the steps), so links
  // land with scripts off: such an element is not the one linked to.
  function placed(id) {
    var el = $(id);
    return el && !el.closest("section.turn.stored, ol.steps.lazy") ? el : null;
  }
  function blockFor(id) {
    if (placed(id)) return null;
    var name = id.split("-")[0], turn = placed(name), ol = turn && turn.querySelector("ol.steps.lazy");
    var b = turn ? ol && ol.getAttribute("data-block") : blockOf[name];
    return b && b in stored ? b : null;
  }

  // Deep links: open the folds around the target and highlight it.
  function reveal(id) {
    var block = id && blockFor(id);
    if (block) { open(block).then(function () { if (!(block in stored)) reveal(id); }); return; }
    var el = id && (placed(id) || $(id));
    if (!el) { if (id) missing(id); return; }
    notice("");
    openAround(el);
    if (el.firstElementChild && el.firstElementChild.tagName === "DETAILS") el.firstElementChild.open = true;
    all(".targeted").forEach(function (o) { o.classList.remove("targeted"); });
    el.classList.add("targeted");
    el.scrollIntoView({ block: "start" });
  }
  // A link to a turn or step the notebook does not hold says so near the top, until
  // dismissed or another link lands; turns and steps decoded first.
  function missing(id) {
    var m = /^t(\d+)(?:-s(\d+))?(?:$|-)/.exec(id);
    if (!m) return;
    var turn = "t" + m[1];
    if (!$(turn)) notice("This notebook has no turn " + m[1] + keeps() + ".");
    else if (m[2] && !$(turn + "-s" + m[2])) notice("This notebook has no step " + m[2] + " in turn " + m[1] + ".");
    else notice("This notebook has nothing at #" + id + " in turn " + m[1] + ".");
  }
  // The turns the notebook holds, in words: " (it keeps turns 3–7)".
  function keeps() {
    var ns = all("#notebook > .turn[id]").map(function (t) { return t.id; }).concat(Object.keys(blockOf))
      .map(function (t) { return parseInt(t.slice(1), 10); }).filter(function (n) { return n > 0; });
    if (!ns.length) return "";
    var lo = Math.min.apply(null, ns), hi = Math.max.apply(null, ns);
    return lo === hi ? " (it keeps turn " + lo + ")" : " (it keeps turns " + lo + "–" + hi + ")";
  }
  var noticed = null;
  function notice(text) {
    if (!text) { if (noticed) noticed.hidden = true; return; }
    var book = $("notebook");
    if (!book) return;
    if (!noticed) {
      noticed = doc.createElement("div");
      noticed.className = "link-notice";
      noticed.setAttribute("role", "status");
      var said = doc.createElement("span"), close = doc.createElement("button");
      close.type = "button";
      close.textContent = "Dismiss";
      close.setAttribute("aria-label", "Dismiss this notice");
      close.addEventListener("click", function () { noticed.hidden = true; });
      noticed.appendChild(said);
      noticed.appendChild(close);
      book.insertBefore(noticed, book.firstChild);
    }
    noticed.hidden = false;
    // Written once the region is in the document, so screen readers announce it.
    var said = noticed.firstChild;
    said.textContent = "";
    setTimeout(function () { said.textContent = text; }, 50);
  }
  function fromHash() {
    try { reveal(decodeURIComponent(location.hash.slice(1))); } catch (e) { /* bad hash */ }
  }

  // Times in the reader's zone, named (two readers of one ticket compare them); the UTC
  // original on hover. A step's time is its time of day: its turn's heading holds the date.
  // One formatter of each kind for the page: making one per time costs more than the layout.
  var stamp = null, clock = null;
  function localTimes(scope) {
    if (!stamp) {
      stamp = new Intl.DateTimeFormat(undefined, {
        year: "numeric", month: "short", day: "numeric",
        hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
      });
      clock = new Intl.DateTimeFormat(undefined, {
        hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
      });
    }
    all("time[datetime]", scope).forEach(function (t) {
      var iso = t.getAttribute("datetime"), d = new Date(iso);
      if (isNaN(d.getTime())) return;
      t.title = iso + " (UTC)";
      t.textContent = (t.classList.contains("clock") ? clock : stamp).format(d);
    });
  }

  // Theme: auto (system) → light → dark, remembered where the browser allows it.
  var themes = ["auto", "light", "dark"];
  function setTheme(name) {
    if (name === "auto") root.removeAttribute("data-theme"); else root.setAttribute("data-theme", name);
    var b = $("theme");
    if (b) b.textContent = "theme: " + name;
    try { localStorage.setItem("tracebook-theme", name); } catch (e) { /* storage off */ }
  }
  try { var saved = localStorage.getItem("tracebook-theme"); if (themes.indexOf(saved) > 0) setTheme(saved); } catch (e) { /* storage off */ }

  // Copy link: the anchor (`#t3-s7`), or the page's address with it when the page is served
  // over http(s) (a file:// address names the sender's folders and opens nothing for anyone
  // else), followed by what it points at: "#t3-s7 (Turn 3, step 7: Bash `npm test`, error)".
  function linkLabel(id) {
    var el = $(id);
    if (!el) return "";
    var turn = el.closest("section.turn"), head = turn && turn.querySelector(".turn-head a.anchor");
    var parts = [head ? head.textContent.trim() : ""];
    var step = /-s(\d+)$/.exec(id);
    if (el.classList.contains("prompt")) parts.push("prompt");
    else if (el.classList.contains("response")) parts.push("response");
    else if (step) parts.push("step " + step[1]);
    var what = "";
    if (el.classList.contains("tool")) {
      var name = el.querySelector(".tool-name"), arg = el.querySelector(".tool-arg");
      var a = arg ? arg.textContent.trim() : "";
      if (a.length > 60) a = a.slice(0, 59) + "…";
      what = (name ? name.textContent.trim() : "call") + (a ? " `" + a + "`" : "") + ", " + (el.getAttribute("data-status") || "unknown");
    } else if (el.classList.contains("thinking")) what = "reasoning";
    else if (el.classList.contains("assistant")) what = "assistant message";
    var label = parts.filter(Boolean).join(", ");
    return what ? label + ": " + what : label;
  }
  function copyLink(btn) {
    var id = btn.getAttribute("data-link");
    var link = /^https?:$/.test(location.protocol) ? location.href.split("#")[0] + "#" + id : "#" + id;
    var label = linkLabel(id), text = label ? link + " (" + label + ")" : link;
    history.replaceState(null, "", "#" + id);
    var done = function () { btn.textContent = "copied"; setTimeout(function () { btn.textContent = "copy link"; }, 1500); };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, done);
    } else { done(); }
  }

  // Colouring: code the page marks (`data-lang`, or `data-diff` for the code of a diff) is
  // coloured in token classes by the vendored Prism grammars, in page order, a few blocks per
  // task; a stored block's code once it is placed. Only spans are added around runs of the
  // text, which itself never changes; a diff's signs and headers and a file's line-number
  // gutter are not code and stay plain. Without JavaScript, or without the grammars, the code
  // reads plain.
  var TOKEN_CLASS = {
    comment: "hc", prolog: "hc", doctype: "hc", cdata: "hc", shebang: "hc",
    string: "hs", char: "hs", "template-string": "hs", "attr-value": "hs", regex: "hs", url: "hs",
    keyword: "hk", tag: "hk", important: "hk", atrule: "hk", selector: "hk", directive: "hk",
    number: "hn", boolean: "hn", constant: "hn", symbol: "hn", entity: "hn", "null": "hn",
    "function": "hf", "attr-name": "hf", property: "hf", "function-definition": "hf",
    "class-name": "ht", builtin: "ht", namespace: "ht", "maybe-class-name": "ht"
  };
  var GUTTERS = { tab: /^ *\d+\t/, arrow: /^ *\d+\u2192/, pipe: /^ *\d+\| /, colon: /^ *\d+: / };
  var MARKED = "code[data-lang], code[data-diff]", toColour = [], colouring = false;
  function tokenClass(token) {
    var c = TOKEN_CLASS[token.type];
    if (c) return c;
    var alias = [].concat(token.alias || []);
    for (var i = 0; i < alias.length; i++) if (TOKEN_CLASS[alias[i]]) return TOKEN_CLASS[alias[i]];
    return null;
  }
  function colourSoon(scope) {
    if (!window.Prism) return;
    if (scope.matches && scope.matches(MARKED)) toColour.push(scope);
    if (scope.querySelectorAll) toColour.push.apply(toColour, all(MARKED, scope));
    if (!colouring && toColour.length) { colouring = true; setTimeout(colourSome, 0); }
  }
  // Blocks in turn until 8 ms have gone, then the rest in a later task.
  function colourSome(budget) {
    var until = performance.now() + (budget || 8);
    while (toColour.length && performance.now() < until) {
      // A grammar that fails on some text leaves that block plain, the rest coloured.
      try { colourOne(toColour.shift()); } catch (e) { /* stays plain */ }
    }
    if (toColour.length) setTimeout(colourSome, 0); else colouring = false;
  }
  function colourOne(el) {
    if (el.__coloured || !el.isConnected) return;
    el.__coloured = true;
    var diff = el.hasAttribute("data-diff"), lang = el.getAttribute(diff ? "data-diff" : "data-lang");
    var grammar = window.Prism.languages[lang];
    if (!grammar) return;
    // The code as the grammar reads it: the text, with what is not code (a diff's headers and
    // signs, a gutter) turned into spaces of the same length, so offsets stay the text's.
    var nodes = [], code = "";
    (function walk(e, plain) {
      for (var c = e.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) {
          nodes.push([c, code.length, plain]);
          code += plain ? c.nodeValue.replace(/[^\n]/g, " ") : c.nodeValue;
        } else if (c.nodeType === 1) {
          walk(c, plain || (diff && (c.classList.contains("file") || c.classList.contains("hunk"))));
        }
      }
    })(el, false);
    var gutter = GUTTERS[el.getAttribute("data-gutter")], keep = [];
    if (diff || gutter) {
      var lines = code.split("\n"), at = 0;
      code = lines.map(function (line) {
        var n = diff ? (line.codePointAt(0) > 0xffff ? 2 : Math.min(1, line.length)) : ((gutter.exec(line) || [""])[0].length);
        if (n) keep.push([at, at + n]);
        at += line.length + 1;
        return " ".repeat(n) + line.slice(n);
      }).join("\n");
    }
    // Each position's class, innermost token first; what is not code has none.
    var cls = new Array(code.length), pos = 0;
    (function spread(tokens, outer) {
      tokens.forEach(function (t) {
        if (typeof t === "string") {
          if (outer) for (var i = 0; i < t.length; i++) cls[pos + i] = outer;
          pos += t.length;
        } else {
          var c = tokenClass(t) || outer;
          if (typeof t.content === "string") {
            if (c) for (var j = 0; j < t.content.length; j++) cls[pos + j] = c;
            pos += t.content.length;
          } else spread([].concat(t.content), c);
        }
      });
    })(window.Prism.tokenize(code, grammar), null);
    keep.forEach(function (k) { for (var i = k[0]; i < k[1]; i++) cls[i] = null; });
    nodes.forEach(function (n) {
      var node = n[0], start = n[1], text = node.nodeValue;
      if (n[2] || !node.parentNode) return;
      var frag = doc.createDocumentFragment(), from = 0, any = false;
      for (var i = 1; i <= text.length; i++) {
        var c = cls[start + from];
        if (i < text.length && cls[start + i] === c) continue;
        var piece = doc.createTextNode(text.slice(from, i));
        if (c) {
          var span = doc.createElement("span");
          span.className = c;
          span.appendChild(piece);
          frag.appendChild(span);
          any = true;
        } else frag.appendChild(piece);
        from = i;
      }
      if (any) node.parentNode.replaceChild(frag, node);
    });
  }

  // Search: marks every match in the notebook, opens the fold holding the current one. The
  // text of a <pre> is searched as one string, so a match may run across highlighted tokens;
  // such a match is one hit made of several marks.
  var hits = [], current = -1, MAX_HITS = 5000;
  function clearHits() {
    all("mark.hit").forEach(function (m) {
      var parent = m.parentNode;
      parent.replaceChild(doc.createTextNode(m.textContent), m);
      parent.normalize();
    });
    hits = []; current = -1;
  }
  // Runs of text searched as one: each text node alone, except the nodes of one <pre>. A
  // stub's lines and notes are not searched: the stored block they stand for is. One walk
  // down the tree, leaving out those subtrees whole (asking each text node for its ancestors
  // costs more than the search on a large page).
  function skipped(el) {
    var tag = el.tagName, c = el.classList;
    return tag === "BUTTON" || tag === "SCRIPT" || tag === "TEMPLATE" || c.contains("lazy-note") ||
      c.contains("link-notice") || (tag === "SECTION" && c.contains("stored"));
  }
  function textRuns(root) {
    var runs = [];
    function fresh() { var r = { nodes: [], starts: [], text: "" }; runs.push(r); return r; }
    function walk(el, run) {
      for (var c = el.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) {
          var r = run || fresh();
          r.nodes.push(c); r.starts.push(r.text.length); r.text += c.nodeValue;
        } else if (c.nodeType === 1 && !skipped(c)) {
          walk(c, run || (c.tagName === "PRE" ? fresh() : null));
        }
      }
    }
    if (!skipped(root)) walk(root, root.tagName === "PRE" ? fresh() : null);
    return runs;
  }
  function markRun(run, q, list) {
    var lower = run.text.toLowerCase(), at = 0, idx, cuts = run.nodes.map(function () { return []; });
    while ((idx = lower.indexOf(q, at)) >= 0 && list.length < MAX_HITS) {
      var end = idx + q.length, hit = [];
      for (var k = 0; k < run.nodes.length; k++) {
        var s = run.starts[k], e = s + run.nodes[k].nodeValue.length;
        if (e > idx && s < end) cuts[k].push([Math.max(idx, s) - s, Math.min(end, e) - s, hit]);
      }
      list.push(hit);
      at = end;
    }
    cuts.forEach(function (list, k) {
      if (!list.length) return;
      var node = run.nodes[k], text = node.nodeValue, pos = 0, frag = doc.createDocumentFragment();
      list.forEach(function (c) {
        frag.appendChild(doc.createTextNode(text.slice(pos, c[0])));
        var m = doc.createElement("mark");
        m.className = "hit";
        m.textContent = text.slice(c[0], c[1]);
        frag.appendChild(m);
        c[2].push(m);
        pos = c[1];
      });
      frag.appendChild(doc.createTextNode(text.slice(pos)));
      node.parentNode.replaceChild(frag, node);
    });
  }
  // Search over stored blocks inserts only what is shown: the page as placed is marked at
  // once; each stored block's text is searched a slice at a time, and its matches wait in the
  // list of hits as placeholders, at the place of the block's stub, until Enter or ↑/↓
  // reaches one. Then that block alone is decoded and placed, and its matches marked.
  var searching = 0, query = "";
  // Only the parts whose text holds the query are walked: most of a large page has none.
  function marksIn(nodes, q) {
    var list = [];
    function mark(run) { if (list.length < MAX_HITS && run.text.toLowerCase().indexOf(q) >= 0) markRun(run, q, list); }
    function scan(el) {
      if (list.length >= MAX_HITS || skipped(el) || el.textContent.toLowerCase().indexOf(q) < 0) return;
      if (el.tagName === "PRE" || !el.firstElementChild) { textRuns(el).forEach(mark); return; }
      for (var c = el.firstChild, next; c; c = next) {
        next = c.nextSibling;
        if (c.nodeType === 1) scan(c);
        else if (c.nodeType === 3) mark({ nodes: [c], starts: [0], text: c.nodeValue });
      }
    }
    nodes.forEach(function (n) { if (n.nodeType === 1) scan(n); });
    return list;
  }
  // Where a stored block stands: its stub or placeholder, else the block that holds it.
  function anchorOf(id) {
    var at = holders(id);
    if (at.length) return at[0];
    return parents[id] ? anchorOf(parents[id]) : null;
  }
  function posOf(h) { return h.block ? anchorOf(h.block) : h[0]; }
  // The first hit after element `el` in document order.
  function hitAfter(el) {
    var lo = 0, hi = hits.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1, p = posOf(hits[mid]);
      if (p && p !== el && (el.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING)) hi = mid; else lo = mid + 1;
    }
    return lo;
  }
  function waiting(id, n) {
    var el = anchorOf(id);
    if (!el || !n) return;
    var at = hitAfter(el), add = [];
    for (var k = 0; k < n && hits.length + add.length < MAX_HITS; k++) add.push({ block: id });
    Array.prototype.splice.apply(hits, [at, 0].concat(add));
  }
  function occurrences(text, q) {
    var n = 0, at = 0, idx;
    while ((idx = text.indexOf(q, at)) >= 0 && n < MAX_HITS) { n++; at = idx + q.length; }
    return n;
  }
  function showCount() {
    $("q-count").textContent = (current + 1) + " of " + hits.length + (hits.length >= MAX_HITS ? "+" : "");
  }
  function search(q) {
    clearHits();
    var count = $("q-count"), mine = ++searching;
    q = q.trim().toLowerCase();
    query = q;
    if (!q) { count.textContent = ""; return; }
    hits = marksIn([$("notebook")], q);
    if (hits.length) go(0);
    if (!storedIds().length || !window.fzstd) { if (!hits.length) count.textContent = "no matches"; return; }
    if (!hits.length) count.textContent = "searching stored turns…";
    var counts = {};
    storedTexts(q, counts).then(function (done) {
      if (!done || mine !== searching) return;
      var shown = current >= 0 ? hits[current] : null;
      storedIds().forEach(function (id) { if (counts[id]) waiting(id, counts[id]); });
      if (!hits.length) { count.textContent = "no matches"; return; }
      current = shown ? hits.indexOf(shown) : -1;
      if (current < 0) go(0); else showCount();
    });
  }
  // A block just placed: its waiting matches become marks, and the matches of the blocks it
  // held move to where those now stand.
  function searchPlaced(id, nodes) {
    if (!query) return;
    var first = -1;
    for (var i = 0; i < hits.length; i++) if (hits[i].block === id) { first = i; break; }
    if (first < 0) {
      // Placed before its matches were counted (as the reader scrolls during a search): they
      // are marked where they stand.
      var found = marksIn(nodes, query);
      if (!found.length) return;
      var was = hits[current];
      Array.prototype.splice.apply(hits, [hitAfter(found[0][0]), 0].concat(found));
      if (was) current = hits.indexOf(was);
      if (/^\d+ of /.test($("q-count").textContent)) showCount();
      return;
    }
    var shown = hits[current], n = 0;
    while (first + n < hits.length && hits[first + n].block === id) n++;
    var marks = marksIn(nodes, query);
    Array.prototype.splice.apply(hits, [first, n].concat(marks));
    var inner = {};
    hits = hits.filter(function (h) {
      if (!h.block || parents[h.block] !== id) return true;
      inner[h.block] = (inner[h.block] || 0) + 1;
      return false;
    });
    Object.keys(inner).forEach(function (b) { waiting(b, inner[b]); });
    var at = hits.indexOf(shown);
    current = at >= 0 ? at : Math.min(first, hits.length - 1);
  }
  // Decodes and places the block of a waiting match, in two tasks, then shows the match.
  function reach(id) {
    var mine = searching;
    $("q-count").textContent = "opening stored turns…";
    setTimeout(function () {
      if (mine !== searching) return;
      for (var b = id; b; b = parents[b] in stored ? parents[b] : null) htmlOf(b);
      setTimeout(function () {
        if (mine !== searching) return;
        var before = hits.length;
        placeNow(id);
        if (id in stored) {
          // Damaged data: its matches cannot be shown.
          hits = hits.filter(function (h) { return h.block !== id; });
        }
        if (!hits.length) { $("q-count").textContent = "no matches"; return; }
        if (hits.length !== before || !hits[current] || hits[current].block) current = Math.max(0, Math.min(current, hits.length - 1));
        go(current);
      }, 0);
    }, 0);
  }
  function go(i) {
    if (!hits.length) return;
    if (current >= 0 && hits[current] && !hits[current].block) hits[current].forEach(function (m) { m.classList.remove("current"); });
    current = (i + hits.length) % hits.length;
    var hit = hits[current];
    if (hit.block) { reach(hit.block); return; }
    hit.forEach(function (m) { m.classList.add("current"); });
    openAround(hit[0]);
    hit[0].scrollIntoView({ block: "center" });
    showCount();
  }

  // Filters: status and step kind narrow the steps shown; turns without a match hide. Only
  // what is placed is filtered: a stored turn's line in its stub, and a turn's stored steps,
  // match by their census ("edit.error:2 message:3"), so the count is exact without decoding,
  // and the stubs that hold a match show, to be decoded as they near the view.
  var filter = null;
  var FILTERED = ".step, .stored-turns > li[data-census], ol.steps.lazy";
  function applyFilters() {
    var status = value("f-status"), kind = value("f-kind");
    filter = status || kind ? { status: status, kind: kind } : null;
    return filterPage();
  }
  function value(id) { var el = $(id); return el ? el.value : ""; }
  // How many steps a census holds that the filter keeps.
  function censusCount(census, f) {
    var n = 0;
    (census || "").split(" ").forEach(function (e) {
      var colon = e.lastIndexOf(":"), key = e.slice(0, colon).split(".");
      if (colon > 0 && (!f.kind || key[0] === f.kind) && (!f.status || key[1] === f.status)) n += parseInt(e.slice(colon + 1), 10) || 0;
    });
    return n;
  }
  function filterOne(s) {
    var f = filter;
    if (!f) return;
    if (s.classList.contains("step")) {
      if ((f.kind && s.getAttribute("data-kind") !== f.kind) || (f.status && s.getAttribute("data-status") !== f.status)) return;
      // A matching call opens, so what failed reads at once.
      if (s.classList.contains("tool") && s.firstElementChild && s.firstElementChild.tagName === "DETAILS") s.firstElementChild.open = true;
    } else {
      s.matched = censusCount(s.getAttribute("data-census"), f);
      if (!s.matched) return;
    }
    s.classList.add("shown");
    for (var p = s.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
      if (p.classList.contains("turn") || p.classList.contains("tool-group") ||
          p.classList.contains("step") || p.classList.contains("subagent-wrap")) p.classList.add("shown");
    }
  }
  // Review mode: what the filter found, counted, in words: the steps shown, and the stored
  // ones their stubs count.
  function filterWords(status, kind) {
    var words = { error: ["failed call", "failed calls"], unknown: ["call with unknown status", "calls with unknown status"],
      ok: ["call that worked", "calls that worked"], message: ["message", "messages"], thinking: ["reasoning step", "reasoning steps"] };
    var w = !kind ? words[status] : words[kind] || [kind + " call", kind + " calls"];
    if (kind && status) w = [w[0] + " (" + status + ")", w[1] + " (" + status + ")"];
    return w;
  }
  function counted(n, turns, w) {
    return n + " " + w[n === 1 ? 0 : 1] + " in " + turns + (turns === 1 ? " turn" : " turns");
  }
  function filterSummary(status, kind) {
    var w = filterWords(status, kind);
    // A call shows when a step inside it (a subagent's) matched: only the matches count.
    var n = all("#notebook .step.shown" + (kind ? "[data-kind='" + kind + "']" : "") +
      (status ? "[data-status='" + status + "']" : "")).length;
    var turns = all("#notebook > .turn.shown:not(.stored)").length;
    all("#notebook .stored-turns > li.shown, #notebook ol.steps.lazy.shown").forEach(function (s) {
      n += s.matched || 0;
      if (s.tagName === "LI") turns++;
    });
    // Each stub says what it holds, until it is decoded.
    all("#notebook > section.turn.stored.shown").forEach(function (stub) {
      var lines = all(".stored-turns > li.shown", stub), k = 0;
      lines.forEach(function (li) { k += li.matched || 0; });
      var note = stub.querySelector(".stub-count") || doc.createElement("p");
      note.className = "stub-count";
      note.textContent = counted(k, lines.length, w) + " stored here: shown as you scroll to them.";
      var head = stub.querySelector(".turn-head");
      if (!note.parentNode && head) head.parentNode.insertBefore(note, head.nextSibling);
    });
    if (!n) return "No " + w[1] + " in this notebook";
    return counted(n, turns, w);
  }
  // The turn list keeps the turns that matched.
  function tocShown(scope, lines) {
    all(lines || ".toc li", scope).forEach(function (li) {
      var a = li.querySelector("a[href^='#t']"), t = a && $(a.getAttribute("href").slice(1));
      if (t && t.classList.contains("shown")) li.classList.add("shown");
    });
  }
  function filterPage() {
    var status = filter ? filter.status : "", kind = filter ? filter.kind : "";
    var view = $("f-view") ? $("f-view").value : "full";
    doc.body.classList.toggle("view-conversation", view === "conversation");
    doc.body.classList.toggle("filtering", !!filter);
    all(".shown").forEach(function (e) { e.classList.remove("shown"); });
    all(".stub-count").forEach(function (e) { e.parentNode.removeChild(e); });
    var fc = $("f-count");
    if (fc) fc.textContent = "";
    if (!filter) return Promise.resolve(true);
    var mine = filter;
    return sliced(all(FILTERED, $("notebook")), filterOne, "filtering").then(function (done) {
      if (!done || filter !== mine) return false;
      $("q-count").textContent = "";
      tocShown();
      if (fc) fc.textContent = filterSummary(status, kind);
      return done;
    });
  }

  // j / k: next and previous turn (top-level turns, from where the page is scrolled now).
  var lastTurn = null;
  // Lines of each output a printout keeps.
  var PRINT_LINES = 12, PRINT_DIFF_LINES = 30;
  function turnStep(dir) {
    var turns = all("#notebook > .turn").filter(function (t) { return t.offsetParent !== null; });
    if (!turns.length) return;
    var idx = lastTurn ? turns.indexOf(lastTurn) : -1, next;
    if (idx >= 0 && Math.abs(lastTurn.getBoundingClientRect().top) < window.innerHeight) {
      next = idx + dir;
    } else {
      idx = -1;
      for (var i = 0; i < turns.length; i++) if (turns[i].getBoundingClientRect().top <= 100) idx = i;
      next = dir > 0 ? idx + 1 : (idx >= 0 && turns[idx].getBoundingClientRect().top < 0 ? idx : idx - 1);
    }
    var t = turns[Math.max(0, Math.min(turns.length - 1, next))];
    lastTurn = t;
    history.replaceState(null, "", "#" + t.id);
    all(".targeted").forEach(function (o) { o.classList.remove("targeted"); });
    t.classList.add("targeted");
    t.scrollIntoView({ block: "start" });
  }

  function init() {
    collectStored();
    colourSoon(doc);
    // The embedded report is for tools that read the file; the page has no use for it.
    var data = $("tracebook-report");
    if (data) data.parentNode.removeChild(data);
    localTimes();
    if (window.matchMedia && window.matchMedia("(max-width: 860px)").matches) {
      all(".toc > details").forEach(function (d) { d.open = false; });
    }
    // On a phone the session's facts fold to one line, so the first prompt is on screen one.
    if (window.matchMedia && window.matchMedia("(max-width: 600px)").matches) {
      all("details.session-details").forEach(function (d) { d.open = false; });
    }
    // A link target, j/k and focus land under the sticky toolbar whatever its height.
    var bar = doc.querySelector(".toolbar");
    if (bar) {
      var barHeight = function () { root.style.setProperty("--toolbar-h", bar.offsetHeight + "px"); };
      barHeight();
      if (window.ResizeObserver) new ResizeObserver(barHeight).observe(bar);
    }
    // The turn list marks the turn in view and keeps it in sight.
    if (window.IntersectionObserver) {
      var spyLink = null;
      spy = new IntersectionObserver(function (seen) {
        seen.forEach(function (e) {
          if (!e.isIntersecting) return;
          var a = doc.querySelector('.toc li a[href="#' + e.target.id + '"]');
          if (!a || a === spyLink) return;
          if (spyLink) spyLink.removeAttribute("aria-current");
          a.setAttribute("aria-current", "true");
          spyLink = a;
          var list = a.closest(".toc");
          if (list && list.scrollHeight > list.clientHeight) {
            var r = a.getBoundingClientRect(), l = list.getBoundingClientRect();
            if (r.top < l.top || r.bottom > l.bottom) list.scrollTop += r.top - l.top - l.height / 2;
          }
        });
      }, { rootMargin: "-20% 0px -70% 0px" });
      all("#notebook > .turn[id]").forEach(function (t) { spy.observe(t); });
    }
    // The heading held under the toolbar (CSS holds it) is marked, so it shows the turn's
    // prompt in browsers whose CSS cannot tell that a heading is held.
    var held = null, heldQueued = false, notebook = $("notebook");
    var markHeld = function () {
      heldQueued = false;
      var line = bar ? bar.getBoundingClientRect().bottom : 0, box = notebook && notebook.getBoundingClientRect();
      var at = box && doc.elementFromPoint(box.left + Math.min(24, box.width / 2), Math.max(0, line) + 2);
      var turn = at && at.closest("#notebook > .turn"), top = turn && turn.querySelector(":scope > .turn-top");
      if (top && !(turn.getBoundingClientRect().top < line - 1 && Math.abs(top.getBoundingClientRect().top - line) < 2)) top = null;
      if (top === held) return;
      if (held) held.classList.remove("held");
      if (top) top.classList.add("held");
      held = top;
    };
    if (notebook && doc.elementFromPoint) {
      window.addEventListener("scroll", function () {
        if (!heldQueued) { heldQueued = true; requestAnimationFrame(markHeld); }
      }, { passive: true });
      markHeld();
    }
    var filtersToggle = $("f-toggle");
    if (filtersToggle && bar) {
      filtersToggle.addEventListener("click", function () {
        var shown = bar.classList.toggle("filters-open");
        filtersToggle.setAttribute("aria-expanded", shown ? "true" : "false");
      });
    }
    var theme = $("theme");
    if (theme) {
      var cur = root.getAttribute("data-theme") || "auto";
      theme.textContent = "theme: " + cur;
      theme.addEventListener("click", function () {
        var now = root.getAttribute("data-theme") || "auto";
        setTheme(themes[(themes.indexOf(now) + 1) % themes.length]);
      });
    }
    // Opening a turn's Process decodes its stored steps (as it nears the view, when the
    // browser can tell).
    if (!watcher) doc.addEventListener("toggle", function (e) {
      var d = e.target;
      if (d.open && d.classList && d.classList.contains("process")) {
        var ol = d.querySelector("ol.steps.lazy");
        if (ol) open(ol.getAttribute("data-block"));
      }
    }, true);
    doc.addEventListener("click", function (e) {
      var btn = e.target.closest && e.target.closest("button.copy");
      if (!btn) return;
      e.preventDefault();
      e.stopPropagation();
      copyLink(btn);
    });
    var q = $("q"), timer = null;
    if (q) {
      q.addEventListener("input", function () {
        clearTimeout(timer);
        // The search a pause in typing starts counts as run: Enter then moves to the next match.
        timer = setTimeout(function () { search(q.value); q.setAttribute("data-searched", q.value); }, 200);
      });
      q.addEventListener("keydown", function (e) {
        if (e.key === "Enter") {
          e.preventDefault();
          clearTimeout(timer);
          if (!hits.length || q.getAttribute("data-searched") !== q.value) { search(q.value); q.setAttribute("data-searched", q.value); }
          else go(current + (e.shiftKey ? -1 : 1));
        } else if (e.key === "Escape") { stopWork(); q.blur(); }
      });
      $("q-next").addEventListener("click", function () { go(current + 1); });
      $("q-prev").addEventListener("click", function () { go(current - 1); });
    }
    ["f-status", "f-kind", "f-view"].forEach(function (id) {
      var el = $(id);
      if (el) el.addEventListener("change", applyFilters);
    });
    doc.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      var tag = e.target && e.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      if (e.key === "Escape") stopWork();
      else if (e.key === "j") { e.preventDefault(); turnStep(1); }
      else if (e.key === "k") { e.preventDefault(); turnStep(-1); }
      else if (e.key === "/" && q) { e.preventDefault(); q.focus(); q.select(); }
    });
    var reopen = [], cuts = [];
    window.addEventListener("beforeprint", function () {
      placeAll();
      // What is not coloured yet is, within a second and a half; paper gets the rest plain.
      if (toColour.length) colourSome(1500);
      // A call's arguments and the rest of a long output stay closed: paper gets their heads.
      // Reasoning stays folded, as on screen, and so does a call that worked, unless it
      // edited a file: paper holds what failed and what changed.
      reopen = all("details:not([open]):not(.args):not(.more)").filter(function (d) {
        var li = d.parentElement;
        return !li.classList.contains("thinking") &&
          !(li.classList.contains("st-ok") && li.getAttribute("data-kind") !== "edit");
      });
      reopen.forEach(function (d) { d.open = true; });
      // An output prints its first lines and says how many more the page holds.
      all(".tool-body > pre.output, .tool-body > pre.diff").forEach(function (pre) {
        var diff = pre.classList.contains("diff"), keep = diff ? PRINT_DIFF_LINES : PRINT_LINES;
        var lines = pre.textContent.split("\n").length - 1, more = pre.nextElementSibling;
        if (more && more.classList.contains("more")) lines += parseInt(more.textContent, 10) || 0;
        if (lines <= keep) return;
        var note = doc.createElement("p");
        note.className = "print-omitted dim";
        note.textContent = (lines - keep) + " more lines of " + (diff ? "the patch" : "output") + " in the notebook";
        if (diff) pre.classList.add("print-cut-diff");
        pre.classList.add("print-cut");
        pre.parentNode.insertBefore(note, more && more.classList.contains("more") ? more.nextSibling : pre.nextSibling);
        cuts.push([pre, note]);
      });
    });
    window.addEventListener("afterprint", function () {
      reopen.forEach(function (d) { d.open = false; });
      reopen = [];
      cuts.forEach(function (c) { c[0].classList.remove("print-cut", "print-cut-diff"); c[1].parentNode.removeChild(c[1]); });
      cuts = [];
    });
    fromHash();
  }
  window.addEventListener("hashchange", fromHash);
  if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", init); else init();
})();
