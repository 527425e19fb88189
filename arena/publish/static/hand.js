/* arena publish: the hand viewer. One page, hand.html, shows any hand of any match named in its address
   (hand.html#<match>/<hand>), from the match's compact data (arena/publish/match_data.py): a script per block of
   hands that calls arenaHands({...}), loaded with a plain <script> element, so the site works opened from disk as
   well as from any host; a league's host serves the same blocks from its database.

   The states a person steps through (pot, stacks, bets, main and side pots, board, cards shown) are replayed here
   from the recorded events exactly as arena/publish/hands.py computes them (tests/publish/test_viewer_replay.py
   runs both on every hand of a database). Text is set with textContent only: bot names and the bots' decision
   comments (shown beside their actions once a match is over) are user input. */
(function () {
  "use strict";
  var SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  var STREETS = ["pre-flop", "flop", "turn", "river", "showdown"];
  var POSTS = { A: "posts an ante of", S: "posts the small blind", B: "posts the big blind",
                E: "posts an entry blind of" };
  var LIVE_POSTS = { S: true, B: true, E: true };
  var BOARD_NAMES = { 3: "Flop", 4: "Turn", 5: "River" };
  var DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";
  var CARDS = "(?:[2-9TJQKA][cdhs])+";
  var TOKEN = new RegExp("^(?:(H)|(D)(\\d)=(" + CARDS + ")|([ASBEfxcbrupwm])([0-9a-z])(\\d*)(?:\\.(\\d+))?(?:=(" +
                         CARDS + "))?(!?))$");
  var MINUS = "\u2212";
  var DECISIONS = "fxcbr";  /* the events a bot plays, the only ones a comment may go with */

  /* A fault in a data file: the page says what it is, never shows a blank. */
  function DataError(message) { this.message = message; }

  function number(n) { return n.toLocaleString("en-US"); }

  function signed(x, digits) {  /* as arena.publish.formatting.signed: +1,234.5, −3.0 */
    var text = Math.abs(x).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
    return (x < 0 ? MINUS : "+") + text;
  }

  function chips(n) { return n > 0 ? "+" + number(n) : n < 0 ? MINUS + number(-n) : "0"; }

  function cardList(text) {
    var out = [];
    for (var i = 0; i + 1 < text.length; i += 2) { out.push({ rank: text[i], suit: text[i + 1] }); }
    return out;
  }

  function shownCards(text) {
    return cardList(text).map(function (c) { return c.rank + SUITS[c.suit]; }).join(" ");
  }

  /* Each seat's position label: BTN, SB, BB (heads-up the button is the small blind, R2.3). */
  function positions(button, n) {
    var labels = [];
    for (var s = 0; s < n; s++) { labels.push(""); }
    if (n === 2) {
      labels[button] = "BTN/SB";
      labels[(button + 1) % n] = "BB";
    } else {
      labels[button] = "BTN";
      labels[(button + 1) % n] = "SB";
      labels[(button + 2) % n] = "BB";
    }
    return labels;
  }

  /* Main and side pots, main first (R10.1): arena.engine.pots.build_pots, the amounts only. */
  function buildPots(contributions, folded, dead) {
    var inHand = [];
    folded.forEach(function (f, s) { if (!f) { inHand.push(s); } });
    var pots = dead && inHand.length ? [{ amount: dead, eligible: inHand.join() }] : [];
    var levels = contributions.filter(function (c) { return c > 0; })
      .filter(function (c, i, all) { return all.indexOf(c) === i; }).sort(function (a, b) { return a - b; });
    var previous = 0, carry = 0;
    levels.forEach(function (level) {
      var contributors = [];
      contributions.forEach(function (c, s) { if (c >= level) { contributors.push(s); } });
      var amount = (level - previous) * contributors.length + carry;
      carry = 0;
      var eligible = contributors.filter(function (s) { return !folded[s]; }).join();
      var last = pots[pots.length - 1];
      if (last && (!eligible || eligible === last.eligible)) {
        last.amount += amount;
      } else if (eligible) {
        pots.push({ amount: amount, eligible: eligible });
      } else {
        carry = amount;
      }
      previous = level;
    });
    return pots.map(function (p) { return p.amount; });
  }

  function integer(text, what) {
    if (!/^-?\d+$/.test(text)) { throw new DataError(what + " is " + JSON.stringify(text) + ", not a number"); }
    return Number(text);
  }

  function figures(text, n, what) {
    if (!text) { return null; }
    var values = text.split(",").map(Number);
    if (values.length !== n || values.some(function (v) { return !isFinite(v); })) {
      throw new DataError("its " + what + " figures are " + JSON.stringify(text));
    }
    return values;
  }

  /* A finished hand's decision comments (fields k:text from the tenth on, k the event's index, % and | in the
     text percent-encoded) set on their events as ``comment``. */
  function comments(fields, events) {
    fields.forEach(function (field) {
      var m = /^(\d+):([\s\S]+)$/.exec(field), text;
      if (!m) { throw new DataError("its comment " + JSON.stringify(field) + " is not k:text"); }
      var e = events[Number(m[1])];
      if (!e || DECISIONS.indexOf(e.kind) < 0 || e.comment !== undefined) {
        throw new DataError("its comment " + JSON.stringify(field) + " names no action of the hand, or one twice");
      }
      try { text = decodeURIComponent(m[2]); } catch (err) {
        throw new DataError("its comment " + JSON.stringify(field) + " has a broken escape");
      }
      e.comment = text;
    });
  }

  /* One hand of a block from its line: number|deal.rotation|button|seating|stacks|holes|events|all-in EV|AIVAT,
     then its comments. */
  function decode(block, line) {
    var f = String(line).split("|");
    if (f.length < 7) { throw new DataError("a hand has " + f.length + " fields, not 7 or more"); }
    var dealt = f[1].split(".");
    var seating = f[3].split("").map(function (c) { return DIGITS.indexOf(c); });
    var n = seating.length;
    if (n < 2 || seating.some(function (p) { return p < 0 || p >= block.bots.length; })) {
      throw new DataError("its seating " + JSON.stringify(f[3]) + " does not name the match's bots");
    }
    var button = DIGITS.indexOf(f[2]);
    if (button < 0 || button >= n) { throw new DataError("its button " + JSON.stringify(f[2]) + " is not a seat"); }
    var stacks = f[4] ? f[4].split(",").map(function (s) { return integer(s, "a starting stack"); }) : [];
    if (!f[4]) { for (var s = 0; s < n; s++) { stacks.push(block.stack); } }
    if (stacks.length !== n) { throw new DataError("it has " + stacks.length + " starting stacks for " + n + " seats"); }
    if (f[5].length !== 4 * n || !new RegExp("^(?:" + CARDS + "|\\?)*$").test(f[5])) {
      throw new DataError("its hole cards " + JSON.stringify(f[5]) + " are not two cards a seat");
    }
    var holes = [];
    for (var k = 0; k < n; k++) {
      var hole = f[5].slice(4 * k, 4 * k + 4);
      holes.push(hole.indexOf("?") >= 0 ? null : hole);
    }
    var events = f[6] ? f[6].split(" ").map(function (token) {
      var m = TOKEN.exec(token);
      if (!m) { throw new DataError("its event " + JSON.stringify(token) + " cannot be read"); }
      if (m[1]) { return { kind: "H", seat: -1 }; }
      if (m[2]) { return { kind: "D", seat: -1, street: Number(m[3]), cards: m[4] }; }
      var seat = DIGITS.indexOf(m[6]);
      if (seat >= n) { throw new DataError("its event " + JSON.stringify(token) + " names no seat of the table"); }
      return { kind: m[5], seat: seat, amount: m[7] ? Number(m[7]) : 0, pot: m[8] ? Number(m[8]) : 0,
               cards: m[9] || "", allIn: m[10] === "!" };
    }) : [];
    comments(f.slice(9), events);
    return {
      number: integer(f[0], "its number"), deal: integer(dealt[0], "its deal"),
      rotation: integer(dealt[1] || "0", "its rotation"), button: button, seating: seating,
      names: seating.map(function (p) { return String(block.bots[p]); }), stacks: stacks, holes: holes,
      events: events, allin: figures(f[7], n, "all-in EV"), aivat: figures(f[8], n, "AIVAT")
    };
  }

  function zeros(n) { var out = []; for (var i = 0; i < n; i++) { out.push(0); } return out; }

  /* Every state of the hand, from the deal to the payoffs: arena.publish.hands.hand_steps, step for step. */
  function replay(hand) {
    var n = hand.seating.length, who = hand.names;
    var stacks = hand.stacks.slice(), bets = zeros(n), folded = zeros(n), shown = [], board = "";
    var committed = zeros(n), dead = zeros(n), pot = 0, street = 0, paying = false, steps = [];

    function add(text, actor, brief) {
      var pots = null;
      if (!paying && committed.some(function (c) { return c; })) {
        var live = committed.map(function (c, s) { return c - dead[s]; });
        var split = buildPots(live, folded, dead.reduce(function (a, b) { return a + b; }, 0));
        pots = split.length > 1 ? split : null;
      }
      steps.push({ t: text, s: STREETS[Math.min(street, 4)], a: actor, pot: pot, stacks: stacks.slice(),
                   bets: bets.slice(), board: board, folded: folded.slice(), shown: shown.slice(), brief: !!brief,
                   pots: pots });
    }

    add("The hand begins", -1);
    hand.events.forEach(function (e) {
      var s = e.seat, name = who[s], amount = e.amount, allIn = e.allIn ? " (all-in)" : "";
      switch (e.kind) {
        case "A": case "S": case "B": case "E":
          stacks[s] -= amount;
          pot += amount;
          committed[s] += amount;
          if (LIVE_POSTS[e.kind]) { bets[s] += amount; } else { dead[s] += amount; }
          add(name + " " + POSTS[e.kind] + " " + number(amount) + allIn, s);
          break;
        case "H":
          add("Hole cards are dealt", -1);
          break;
        case "D":
          street = Math.max(street, e.street);
          board += e.cards;
          bets = zeros(n);
          add((BOARD_NAMES[board.length / 2] || "Board") + ": " + shownCards(e.cards), -1);
          break;
        case "f":
          folded[s] = 1;
          add(name + " folds", s, true);
          break;
        case "x":
          add(name + " checks", s, true);
          break;
        case "c":
          stacks[s] -= amount;
          bets[s] += amount;
          pot += amount;
          committed[s] += amount;
          add(name + " calls " + number(amount) + allIn, s, true);
          break;
        case "b": case "r":
          var put = amount - bets[s];
          stacks[s] -= put;
          bets[s] = amount;
          pot += put;
          committed[s] += put;
          add(name + (e.kind === "b" ? " bets " : " raises to ") + number(amount) + allIn, s, true);
          break;
        case "u":
          stacks[s] += amount;
          bets[s] = Math.max(0, bets[s] - amount);
          pot -= amount;
          committed[s] -= amount;
          add(number(amount) + " uncalled returned to " + name, s, true);
          break;
        case "w": case "m":
          street = 4;
          bets = zeros(n);
          if (e.kind === "w") {
            shown.push(s);
            add(name + " shows " + shownCards(e.cards), s, true);
          } else {
            add(name + " mucks", s, true);
          }
          break;
        case "p":
          paying = true;
          bets = zeros(n);
          stacks[s] += amount;
          pot -= amount;
          add(name + " wins " + number(amount) + " from " + (e.pot <= 0 ? "the main pot" : "side pot " + e.pot), s, true);
          break;
      }
    });
    if (pot !== 0 || stacks.some(function (x) { return x < 0; })) {
      throw new DataError("its events end with " + number(pot) + " chips in the pot and stacks " + stacks.join(", "));
    }
    return steps;
  }

  if (typeof document === "undefined") {  /* Node.js: the replay alone, for the tests */
    module.exports = { decode: decode, replay: replay, buildPots: buildPots, positions: positions, signed: signed,
                       DataError: DataError };
    return;
  }

  /* ------------------------------------------------------------------------------------------- the page */

  var viewer = document.getElementById("hand-viewer");
  if (!viewer) { return; }
  var SOURCE = viewer.getAttribute("data-source");
  var SIZE = Number(viewer.getAttribute("data-block"));
  var FORMAT = Number(viewer.getAttribute("data-format"));
  var SLUG = /^[a-z0-9][a-z0-9._-]{0,80}$/;
  var blocks = {};  /* "slug/block" -> {data, lines: {number: line}, numbers: [ascending]} */
  var waiting = {};  /* "slug/block" -> callbacks for the block being loaded */
  var received;  /* what the data script being run handed to arenaHands */
  var shown = null;  /* the hand on the page: {slug, hand, steps, block} */
  var index = 0;
  var keepStreet = null;  /* the street to open the next hand at (moving between the seats of a deal) */
  var $ = function (id) { return document.getElementById(id); };
  var TITLE = document.title.replace(/^Hand viewer · /, "");

  window.arenaHands = function (data) { received = data; };

  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = text; }
    if (className) { node.className = className; }
    return node;
  }

  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } return node; }

  function cards(text, into) {
    clear(into);
    cardList(text || "").forEach(function (c) {
      into.appendChild(el("span", c.rank + (SUITS[c.suit] || "?"), "card " + c.suit));
    });
    return into;
  }

  function link(slug, n, text) {
    var a = el("a", text);
    a.href = "#" + slug + "/" + n;
    return a;
  }

  function state(value) { viewer.setAttribute("data-state", value); }

  function message(text, isError) {
    var box = $("message");
    box.textContent = text;
    box.className = "message" + (isError ? " error" : "");
    box.hidden = false;
  }

  function fail(text) {
    ["viewer", "actions", "result", "mirrors"].forEach(function (id) { $(id).hidden = true; });
    $("hand-title").textContent = "Hand viewer";
    clear($("hand-summary"));
    clear($("hand-links"));
    shown = null;
    message(text, true);
    state("error");
  }

  function check(data, slug, block, url) {
    if (!data || typeof data !== "object") {
      return "it did not hand over any hands (it is cut short, damaged, or not one of this site's data files)";
    }
    if (data.format !== FORMAT) {
      return "it is in format " + JSON.stringify(data.format) + " and this viewer reads format " + FORMAT +
        " (publish the site again)";
    }
    if (data.slug !== slug || data.block !== block) {
      return "it holds block " + JSON.stringify(data.block) + " of match " + JSON.stringify(data.slug) +
        ", not block " + block + " of " + slug;
    }
    if (!Array.isArray(data.hands) || !Array.isArray(data.bots) || typeof data.stack !== "number") {
      return "its hands, bots or starting stack are missing";
    }
    return null;
  }

  /* Load block ``block`` of match ``slug`` (once), then call done(error, block). */
  function load(slug, block, done) {
    var key = slug + "/" + block;
    if (blocks[key]) { done(null, blocks[key]); return; }
    if (waiting[key]) { waiting[key].push(done); return; }
    waiting[key] = [done];
    var url = SOURCE.replace("{slug}", slug).replace("{block}", String(block));
    var script = document.createElement("script");
    function finish(error) {
      var callbacks = waiting[key];
      delete waiting[key];
      script.parentNode.removeChild(script);
      callbacks.forEach(function (callback) { callback(error, blocks[key]); });
    }
    script.onload = function () {
      var data = received;
      received = undefined;
      var problem = check(data, slug, block, url);
      if (problem) { finish("The hand data file " + url + " is damaged: " + problem + "."); return; }
      var lines = {}, numbers = [];
      data.hands.forEach(function (line) {
        var n = Number(String(line).split("|", 1)[0]);
        lines[n] = line;
        numbers.push(n);
      });
      numbers.sort(function (a, b) { return a - b; });
      blocks[key] = { data: data, lines: lines, numbers: numbers };
      finish(null);
    };
    script.onerror = function () {
      finish("The hand data file " + url + " could not be loaded: it is missing from the site, or the site is " +
             "not complete (publish it again with arena publish).");
    };
    received = undefined;
    script.src = url;
    document.head.appendChild(script);
  }

  /* Load every block in ``wanted`` (those that exist), then call done(error). */
  function loadAll(slug, wanted, done) {
    var left = wanted.length, failed = null;
    if (!left) { done(null); return; }
    wanted.forEach(function (block) {
      load(slug, block, function (error) {
        failed = failed || error;
        if (--left === 0) { done(failed); }
      });
    });
  }

  /* Hand ``n`` of a loaded block, or null (not loaded, not there, or damaged: the hand itself says so when shown). */
  function hand(slug, n) {
    var loaded = blocks[slug + "/" + Math.floor(n / SIZE)];
    if (!loaded || loaded.lines[n] === undefined) { return null; }
    try {
      return decode(loaded.data, loaded.lines[n]);
    } catch (e) {
      if (e instanceof DataError) { return null; }
      throw e;
    }
  }

  /* The hand before or after ``n`` (by ``step`` -1 or +1) among those the match shows, or null. */
  function neighbour(block, n, step) {
    var numbers = block.numbers, i = numbers.indexOf(n) + step;
    if (i >= 0 && i < numbers.length) { return numbers[i]; }
    var next = n + step, data = block.data;
    return data.first !== null && next >= data.first && next <= data.last ? next : null;
  }

  /* The hands of the same deal (loaded), in order: a deal's hands are played one after another. */
  function dealHands(slug, h, perDeal) {
    var out = [];
    for (var n = Math.max(0, h.number - 2 * perDeal); n <= h.number + 2 * perDeal; n++) {
      var other = n === h.number ? h : hand(slug, n);
      if (other && other.deal === h.deal) { out.push(other); }
    }
    return out;
  }

  function route() {
    var hash = location.hash.replace(/^#/, "");
    var m = /^([^/]+)\/(\d+)$/.exec(hash);
    if (!hash) {
      fail("No hand is named in this page's address: open one from a match's page (its address ends with " +
           "#<match>/<hand>, for instance hand.html#my-match/0).");
      return;
    }
    if (!m || !SLUG.test(m[1])) {
      fail("The address names no hand: it ends with #" + hash + " where #<match>/<hand> was expected " +
           "(for instance hand.html#my-match/0).");
      return;
    }
    var slug = m[1], n = Number(m[2]), block = Math.floor(n / SIZE);
    state("loading");
    message("Loading hand " + n + " of match " + slug + "…", false);
    function noSuchHand(data) {
      fail("Match " + data.match + " has no hand " + n + " to show: its hands shown run from " +
           (data.first === null ? "none" : data.first + " to " + data.last) + (data.finished ? "." :
           " (the match is still running: a deal's hands are shown once it has been played in every seat)."));
    }
    load(slug, block, function (error, loaded) {
      if (location.hash.replace(/^#/, "") !== hash) { return; }  /* moved on meanwhile */
      if (error && block > 0) {  /* no such file: past the match's last hand, or missing? its first file says */
        load(slug, 0, function (other, first) {
          if (location.hash.replace(/^#/, "") !== hash) { return; }
          if (!other && first.data.last !== null && n > first.data.last) { noSuchHand(first.data); } else { fail(error); }
        });
        return;
      }
      if (error) { fail(error); return; }
      var data = loaded.data;
      if (loaded.lines[n] === undefined) { noSuchHand(data); return; }
      var h, steps;
      try {
        h = decode(data, loaded.lines[n]);
        steps = replay(h);
      } catch (e) {
        if (!(e instanceof DataError)) { throw e; }
        fail("Hand " + n + " of match " + data.match + " is damaged in its data file: " + e.message + ".");
        return;
      }
      var street = keepStreet;
      keepStreet = null;
      shown = { slug: slug, hand: h, steps: steps, block: loaded };
      render(shown);
      var start = 0;
      if (street !== null) {
        start = steps.length - 1;
        for (var i = 0; i < steps.length; i++) { if (steps[i].s === street) { start = i; break; } }
      }
      step(start);
      state("ready");
      var near = [];
      var low = Math.floor(Math.max(0, n - 2 * data.per_deal) / SIZE), high = Math.floor((n + 2 * data.per_deal) / SIZE);
      for (var b = low; b <= high; b++) { if (b !== block && data.last !== null && b * SIZE <= data.last) { near.push(b); } }
      loadAll(slug, near, function () {
        if (shown && shown.hand === h) { renderMirrors(shown); }
      });
    });
  }

  /* The decision comment on step ``i``'s action (step i > 0 is the hand's event i - 1), or null: none is shown
     before the match is over (its data has none then either). */
  function comment(view, i) {
    var e = i > 0 ? view.hand.events[i - 1] : null;
    return e && e.comment !== undefined && view.block.data.finished === true ? e.comment : null;
  }

  function render(view) {
    var h = view.hand, data = view.block.data, n = h.seating.length, labels = positions(h.button, n);
    $("message").hidden = true;
    document.title = "Hand " + h.number + " · " + data.match + " · " + TITLE;
    $("hand-title").textContent = "Hand " + h.number;
    var back = $("match-link");
    back.href = "matches/" + view.slug + ".html#hands";
    back.textContent = "← Match " + data.match;
    var summary = clear($("hand-summary"));
    summary.appendChild(el("span", "Match "));
    summary.appendChild(el("span", data.match, "match-id"));
    summary.appendChild(el("span", " · deal " + h.deal + " · rotation " + h.rotation + " · " + data.game));
    var links = clear($("hand-links"));
    var before = neighbour(view.block, h.number, -1), after = neighbour(view.block, h.number, 1);
    if (before !== null) {
      links.appendChild(el("span", " · "));
      var p = links.appendChild(link(view.slug, before, "hand " + before));
      p.id = "previous-hand";
    }
    if (after !== null) {
      links.appendChild(el("span", " · "));
      var a = links.appendChild(link(view.slug, after, "hand " + after));
      a.id = "next-hand";
    }

    var body = clear($("seats").tBodies[0]);
    h.names.forEach(function (name, s) {
      var row = body.insertRow();
      row.id = "seat-" + s;
      row.appendChild(el("td", String(s + 1), "num"));
      row.appendChild(el("td", labels[s]));
      row.appendChild(el("td", null, "name")).appendChild(el("bdi", name));
      row.appendChild(el("td", null, "hole"));
      row.appendChild(el("td", number(h.stacks[s]), "num stack"));
      row.appendChild(el("td", "", "num bet"));
    });

    var streets = clear($("streets")), list = null, last = null;
    view.steps.forEach(function (st, i) {
      if (st.s !== last) {
        last = st.s;
        var box = streets.appendChild(el("div", null, "street"));
        var title = box.appendChild(el("h3", st.s));
        if (st.board) {
          title.appendChild(document.createTextNode(" "));
          cards(st.board, title.appendChild(el("span", null, "board")));
        }
        list = box.appendChild(el("ol"));
      }
      var item = list.appendChild(el("li", st.t));
      item.setAttribute("data-step", String(i));
      var said = comment(view, i);
      if (said !== null) {
        item.appendChild(document.createTextNode(" "));
        item.appendChild(el("q", null, "comment")).appendChild(el("bdi", said));
      }
    });

    var end = view.steps[view.steps.length - 1], results = clear($("results").tBodies[0]);
    h.names.forEach(function (name, s) {
      var row = results.insertRow();
      row.appendChild(el("td", null, "name")).appendChild(el("bdi", name));
      var hole = row.appendChild(el("td", null, "hole"));
      if (h.holes[s]) { cards(h.holes[s], hole); } else { hole.textContent = "hidden"; }
      row.appendChild(el("td", number(h.stacks[s]), "num"));
      row.appendChild(el("td", chips(end.stacks[s] - h.stacks[s]), "num payoff"));
      row.appendChild(el("td", number(end.stacks[s]), "num"));
      row.appendChild(el("td", h.allin ? signed(h.allin[s], 1) : "—", "num allin"));
      row.appendChild(el("td", h.aivat ? signed(h.aivat[s], 1) : "—", "num aivat"));
    });
    $("estimates-note").textContent = !data.finished
      ? "All-in EV and AIVAT are shown once the match is over: they are computed from every card."
      : (h.allin ? "" : "All-in EV: for a hand whose betting ended all-in with board cards still to come. ") +
        "AIVAT: the payoff with the luck of the cards and of the referee's draws taken out.";
    $("viewer-note").textContent = data.finished
      ? "Every hole card is shown: the referee's record of a finished match."
      : "The match is still running: only the cards shown at the table are visible.";
    ["viewer", "actions", "result"].forEach(function (id) { $(id).hidden = false; });
    renderMirrors(view);
  }

  function renderMirrors(view) {
    var data = view.block.data, section = $("mirrors");
    var deal = data.per_deal > 1 ? dealHands(view.slug, view.hand, data.per_deal) : [];
    view.deal = deal;
    section.hidden = deal.length < 2;
    if (deal.length < 2) { return; }
    $("mirrors-title").textContent = "Deal " + view.hand.deal + " in every seat";
    var list = clear($("mirror-list"));
    deal.forEach(function (other) {
      var steps;
      try {
        steps = other === view.hand ? view.steps : replay(other);
      } catch (e) {
        if (e instanceof DataError) { return; }  /* a damaged hand of the deal: it says so when shown */
        throw e;
      }
      var current = other === view.hand;
      var box = list.appendChild(el("article", null, "mirror" + (current ? " current" : "")));
      var title = box.appendChild(el("h3"));
      if (current) {
        title.appendChild(el("span", "Hand " + other.number + " (this one)"));
      } else {
        title.appendChild(link(view.slug, other.number, "Hand " + other.number));
      }
      title.appendChild(el("span", ", rotation " + other.rotation));
      var seats = box.appendChild(el("ul", null, "mirror-seats")), labels = positions(other.button, other.seating.length);
      var end = steps[steps.length - 1];
      other.names.forEach(function (name, s) {
        var item = seats.appendChild(el("li"));
        item.appendChild(el("span", labels[s] || "seat " + (s + 1), "pos"));
        item.appendChild(el("span", null, "name")).appendChild(el("bdi", name));
        if (other.holes[s]) { cards(other.holes[s], item.appendChild(el("span"))); }
        item.appendChild(el("span", chips(end.stacks[s] - other.stacks[s]), "payoff"));
      });
      var street = null, line = null, brief = [];
      function flush() {
        if (line && brief.length) { line.appendChild(document.createTextNode(": " + brief.join("; "))); box.appendChild(line); }
      }
      steps.forEach(function (st) {
        if (st.s !== street) {
          flush();
          street = st.s;
          brief = [];
          line = el("p", null, "mirror-street");
          line.appendChild(el("strong", st.s));
          if (st.board) { line.appendChild(document.createTextNode(" ")); cards(st.board, line.appendChild(el("span"))); }
        }
        if (st.brief) { brief.push(st.t); }
      });
      flush();
    });
  }

  /* Show step ``i`` of the hand on the page. */
  function step(i) {
    if (!shown) { return; }
    var steps = shown.steps, h = shown.hand, finished = shown.block.data.finished;
    index = Math.max(0, Math.min(steps.length - 1, i));
    var st = steps[index];
    $("pot").textContent = number(st.pot);
    $("pots").textContent = st.pots ? "main " + st.pots.map(number).join(" \u00b7 side ") : "";
    cards(st.board, $("board"));
    $("step-text").textContent = st.t;
    var said = comment(shown, index);
    var quote = clear($("step-comment"));
    if (said !== null) { quote.appendChild(el("bdi", said)); }
    quote.hidden = said === null;
    $("step-street").textContent = st.s;
    $("step-count").textContent = (index + 1) + " / " + steps.length;
    h.names.forEach(function (name, s) {
      var row = $("seat-" + s);
      row.querySelector(".stack").textContent = number(st.stacks[s]);
      row.querySelector(".bet").textContent = st.bets[s] ? number(st.bets[s]) : "";
      var hole = row.querySelector(".hole");
      if (h.holes[s] && (finished || st.shown.indexOf(s) >= 0)) { cards(h.holes[s], hole); } else { hole.textContent = "hidden"; }
      row.classList.toggle("folded", !!st.folded[s]);
      row.classList.toggle("acting", st.a === s);
    });
    var items = document.querySelectorAll("#streets li[data-step]");
    for (var k = 0; k < items.length; k++) {
      var at = Number(items[k].getAttribute("data-step"));
      items[k].classList.toggle("current", at === index);
      items[k].classList.toggle("future", at > index);
    }
    $("first").disabled = $("prev").disabled = index === 0;
    $("last").disabled = $("next").disabled = index === steps.length - 1;
  }

  function go(n, street) {
    if (n === null || !shown) { return; }
    keepStreet = street || null;
    location.hash = "#" + shown.slug + "/" + n;
  }

  function otherSeats(direction) {
    if (!shown || !shown.deal || shown.deal.length < 2) { return; }
    var i = shown.deal.indexOf(shown.hand), deal = shown.deal;
    go(deal[(i + direction + deal.length) % deal.length].number, shown.steps[index].s);
  }

  $("first").addEventListener("click", function () { step(0); });
  $("prev").addEventListener("click", function () { step(index - 1); });
  $("next").addEventListener("click", function () { step(index + 1); });
  $("last").addEventListener("click", function () { step(shown ? shown.steps.length - 1 : 0); });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || !shown) { return; }
    var key = event.key, h = shown.hand;
    var moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: shown.steps.length - 1 };
    if (Object.prototype.hasOwnProperty.call(moves, key)) {
      step(moves[key]);
    } else if (key === "n" || key === "N" || key === "PageDown") {
      go(neighbour(shown.block, h.number, 1));
    } else if (key === "p" || key === "P" || key === "PageUp") {
      go(neighbour(shown.block, h.number, -1));
    } else if (key === "d" || key === "D") {
      otherSeats(event.shiftKey ? -1 : 1);
    } else {
      return;
    }
    event.preventDefault();
  });
  window.addEventListener("hashchange", route);
  route();
})();
