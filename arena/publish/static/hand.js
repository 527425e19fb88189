/* arena publish: the hand viewer. It only displays the states embedded in the page (#hand-data, computed from the
   referee's record when the site was published): nothing is computed or fetched here. Text is set with
   textContent only (bot names are user input). */
(function () {
  "use strict";
  var source = document.getElementById("hand-data");
  if (!source) { return; }
  var data = JSON.parse(source.textContent);
  var steps = data.steps;
  var SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  var index = 0;

  function number(n) { return n.toLocaleString("en-US"); }

  function cards(text, into) {
    while (into.firstChild) { into.removeChild(into.firstChild); }
    for (var i = 0; i + 1 < text.length; i += 2) {
      var card = document.createElement("span");
      card.className = "card " + text[i + 1];
      card.textContent = text[i] + (SUITS[text[i + 1]] || "?");
      into.appendChild(card);
    }
  }

  function show(i) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    var step = steps[index];
    document.getElementById("pot").textContent = number(step.pot);
    document.getElementById("pots").textContent = step.pots
      ? "main " + step.pots.map(number).join(" \u00b7 side ") : "";
    cards(step.board, document.getElementById("board"));
    document.getElementById("step-text").textContent = step.t;
    document.getElementById("step-street").textContent = step.s;
    document.getElementById("step-count").textContent = (index + 1) + " / " + steps.length;
    data.seats.forEach(function (seat, s) {
      var row = document.getElementById("seat-" + s);
      row.querySelector(".stack").textContent = number(step.stacks[s]);
      row.querySelector(".bet").textContent = step.bets[s] ? number(step.bets[s]) : "";
      var visible = seat.hole && (data.record || step.shown.indexOf(s) >= 0);
      var hole = row.querySelector(".hole");
      if (visible) { cards(seat.hole, hole); } else { hole.textContent = "hidden"; }
      row.classList.toggle("folded", !!step.folded[s]);
      row.classList.toggle("acting", step.a === s);
    });
    var items = document.querySelectorAll("#actions li[data-step]");
    for (var k = 0; k < items.length; k++) {
      var at = Number(items[k].getAttribute("data-step"));
      items[k].classList.toggle("current", at === index);
      items[k].classList.toggle("future", at > index);
    }
    document.getElementById("first").disabled = document.getElementById("prev").disabled = index === 0;
    document.getElementById("last").disabled = document.getElementById("next").disabled = index === steps.length - 1;
  }

  document.getElementById("first").addEventListener("click", function () { show(0); });
  document.getElementById("prev").addEventListener("click", function () { show(index - 1); });
  document.getElementById("next").addEventListener("click", function () { show(index + 1); });
  document.getElementById("last").addEventListener("click", function () { show(steps.length - 1); });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    var moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: steps.length - 1 };
    if (Object.prototype.hasOwnProperty.call(moves, event.key)) {
      event.preventDefault();
      show(moves[event.key]);
    }
  });
  document.documentElement.classList.add("viewer-ready");
  show(0);
})();
