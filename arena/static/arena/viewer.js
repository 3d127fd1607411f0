/* Quatre Sept Arena replay viewer: plays a replay (format 1) card by card.
 *
 * Reads two JSON scripts the page embeds: #replay-data (the replay, as /api/matches/{id}/replay/
 * serves it) and #viewer-data (deck, card names and indices, seat labels). Card faces are the
 * sprite the server inlined (symbols "fr-TH", "de-TH", "fr-back", "fr-suit-H").
 *
 * A replay becomes a list of steps: per deal, any called-off deals (where the deal starts: Page
 * Up/Down and "Go to" land there), the deal itself (hands dealt),
 * what was said before play, then every card in order (with the melds or claims said just before
 * it, and the signals or politaine said with it), a fault where one ended the match, and the
 * deal's scoring. The page shows the state after the current step. A seat's view draws the other
 * hands face down (a finished match's replay is public anyway: this is for watching fairly).
 *
 * Keys: Left/Right one step, PageUp/PageDown one deal, Home/End the first/last step.
 */
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var root = document.getElementById("viewer");
  if (!root) return;
  var replay = JSON.parse(document.getElementById("replay-data").textContent);
  var meta = JSON.parse(document.getElementById("viewer-data").textContent);
  var players = replay.players.slice().sort(function (a, b) { return a.seat - b.seat; });
  var labels = players.map(function (p) {
    var seat = meta.seats[p.seat];
    return seat ? seat.label : p.bot + (p.version != null ? " v" + p.version : "");
  });
  var POSITIONS = ["south", "west", "north", "east"];

  // --- steps -----------------------------------------------------------------------------------

  function buildSteps() {
    var steps = [];
    replay.deals.forEach(function (deal, di) {
      (deal.redeals || []).forEach(function (redeal, ri) {
        steps.push({ kind: "redeal", deal: di, redeal: ri, ti: 0, shown: 0, said: -1 });
      });
      steps.push({ kind: "deal", deal: di, ti: 0, shown: 0, said: -1 });
      var attached = {};
      var pending = [];
      deal.said.forEach(function (s, i) {
        if (s.card) {
          var key = s.trick + ":" + s.seat + ":" + s.card;
          (attached[key] = attached[key] || []).push(i);
        } else if (s.trick === 0) {
          steps.push({ kind: "say", deal: di, ti: 0, shown: 0, said: i });
        } else {
          pending.push(i);
        }
      });
      var tricks = allTricks(deal);
      var lastTi = 0;
      var lastShown = 0;
      tricks.forEach(function (trick, ti) {
        trick.cards.forEach(function (card, pos) {
          var seat = (trick.leader + pos) % 4;
          pending = pending.filter(function (i) {
            var s = deal.said[i];
            if (s.trick === ti + 1 && s.seat === seat) {
              steps.push({ kind: "say", deal: di, ti: ti, shown: pos, said: i });
              return false;
            }
            return true;
          });
          steps.push({
            kind: "card", deal: di, ti: ti, shown: pos + 1, said: -1, seat: seat, card: card,
            says: attached[(ti + 1) + ":" + seat + ":" + card] || []
          });
          lastTi = ti;
          lastShown = pos + 1;
        });
      });
      pending.forEach(function (i) {
        var s = deal.said[i];
        var ti = Math.max(0, s.trick - 1);
        var shown = ti < tricks.length ? (ti === lastTi ? lastShown : 0) : 0;
        if (ti >= tricks.length) { ti = lastTi; shown = lastShown === 4 ? 4 : lastShown; }
        steps.push({ kind: "say", deal: di, ti: ti, shown: shown, said: i });
      });
      var last = di === replay.deals.length - 1;
      if (last && replay.result.fault) {
        steps.push({ kind: "fault", deal: di, ti: lastTi, shown: lastShown, said: -1 });
      }
      steps.push({ kind: "end", deal: di, ti: lastTi, shown: lastShown, said: -1 });
    });
    steps.forEach(function (step, index) { step.index = index; });
    return steps;
  }

  function allTricks(deal) {
    var tricks = deal.tricks.slice();
    if (deal.trick && deal.trick.cards && deal.trick.cards.length) tricks.push(deal.trick);
    return tricks;
  }

  var steps = buildSteps();
  var dealStarts = [];  // a deal's first step: its first called-off deal, if any, else the deal
  steps.forEach(function (step) {
    if (dealStarts[step.deal] == null) dealStarts[step.deal] = step.index;
  });

  // --- elements --------------------------------------------------------------------------------

  function $(id) { return document.getElementById(id); }
  var slider = $("v-slider");
  var stepOut = $("v-step");
  var caption = $("v-caption");
  var viewSelect = $("v-view");
  var dealSelect = $("v-deal");
  var playButton = $("v-play");
  var current = 0;
  var timer = null;
  var moved = false;  // the URL's #step=N follows the viewer once the reader moves

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    return node;
  }

  function cardSvg(code, small) {
    var svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("viewBox", "0 0 60 90");
    svg.setAttribute("class", "card" + (small ? " small" : "") + (code ? "" : " back"));
    svg.setAttribute("role", "img");
    var use = document.createElementNS(SVG_NS, "use");
    if (code) {
      svg.setAttribute("aria-label", meta.cards[code].name);
      svg.setAttribute("data-card", code);
      use.setAttribute("href", "#" + meta.prefix + "-" + code);
    } else {
      svg.setAttribute("aria-label", "face-down card");
      use.setAttribute("href", "#" + meta.prefix + "-back");
    }
    svg.appendChild(use);
    return svg;
  }

  /* A card named inline in text: its index and suit sign, e.g. "10♥". */
  function chip(code) {
    var span = el("span", "chip");
    span.setAttribute("data-card", code);
    span.setAttribute("title", meta.cards[code].name);
    var label = el("span", "visually-hidden", meta.cards[code].name);
    var index = el("span", "", meta.cards[code].index);
    index.setAttribute("aria-hidden", "true");
    var suit = document.createElementNS(SVG_NS, "svg");
    suit.setAttribute("viewBox", "0 0 100 100");
    suit.setAttribute("class", "suit");
    suit.setAttribute("aria-hidden", "true");
    var use = document.createElementNS(SVG_NS, "use");
    use.setAttribute("href", "#" + meta.prefix + "-suit-" + code[1]);
    suit.appendChild(use);
    span.appendChild(label);
    span.appendChild(index);
    span.appendChild(suit);
    return span;
  }

  function seatName(seat) { return "seat " + seat + " (" + labels[seat] + ")"; }

  function describeSay(s) {
    var say = s.say;
    var parts = say.split(" ");
    if (parts[0] === "meld") {
      if (parts[1] === "pollack") return "melds a pollack in " + suitName(parts[2]);
      if (parts[1] === "three") {
        return "melds three " + rankWord(parts[2]) + " (no " + suitName(parts[3]) + ")";
      }
      if (parts[1] === "four") return "melds four " + rankWord(parts[2]);
      return say;
    }
    if (parts[0] === "poules") return "announces " + parts[1] + " poule" + (parts[1] === "1" ? "" : "s");
    if (say === "claim") return "claims the target";
    if (say === "politaine") return "announces a politaine";
    if (say === "tap") return "taps (good cards in this suit)";
    if (say === "slide") return "slides (good cards in the other suit of this colour)";
    return say;
  }

  function suitName(suit) {
    var name = meta.cards["T" + suit].name;
    return meta.deck === "german" ? name.split(" ")[0] : name.split(" of ")[1];
  }

  function rankWord(rank) {
    var name = meta.cards[rank + "C"].name;
    var word = meta.deck === "german" ? name.split(" ")[1] : name.split(" of ")[0];
    return word + (meta.deck === "german" ? "" : "s");
  }

  function shortSay(s) {
    var parts = s.say.split(" ");
    if (parts[0] === "meld") return "meld " + parts.slice(1).join(" ");
    return s.say;
  }

  // --- state after a step ----------------------------------------------------------------------

  function stateAt(index) {
    var step = steps[index];
    var deal = replay.deals[step.deal];
    var tricks = allTricks(deal);
    var hands;
    if (step.kind === "redeal") {
      hands = deal.redeals[step.redeal].hands.map(function (h) { return h.slice(); });
      return { step: step, deal: deal, hands: hands, trick: null, done: [], said: [] };
    }
    var played = {};
    var said = [];
    for (var i = dealStarts[step.deal]; i <= index; i++) {
      var s = steps[i];
      if (s.kind === "card") {
        played[s.card] = true;
        s.says.forEach(function (j) { said.push(j); });
      } else if (s.kind === "say") {
        said.push(s.said);
      }
    }
    hands = deal.hands.map(function (hand) {
      return hand.filter(function (c) { return !played[c]; });
    });
    var done = [];
    for (var t = 0; t < tricks.length; t++) {
      var complete = t < deal.tricks.length;
      if (t < step.ti || (t === step.ti && complete && step.shown === 4)) {
        if (complete) done.push(tricks[t]);
      }
    }
    var trick = null;
    if (step.kind !== "deal" && step.kind !== "redeal" && tricks.length) {
      var shownTrick = tricks[step.ti];
      if (shownTrick && step.shown > 0) {
        trick = {
          leader: shownTrick.leader,
          cards: shownTrick.cards.slice(0, step.shown),
          winner: step.shown === 4 && step.ti < deal.tricks.length ? shownTrick.winner : null,
          number: step.ti + 1
        };
      }
    }
    return { step: step, deal: deal, hands: hands, trick: trick, done: done, said: said };
  }

  // --- drawing ---------------------------------------------------------------------------------

  function viewSeat() {
    var value = viewSelect.value;
    return value === "all" ? null : Number(value);
  }

  function positionOf(seat) {
    var bottom = viewSeat() == null ? 0 : viewSeat();
    return POSITIONS[(seat - bottom + 4) % 4];
  }

  function render() {
    var state = stateAt(current);
    var step = state.step;
    var deal = state.deal;
    var seen = viewSeat();
    var fault = replay.result.fault;
    var faultShown = fault && (step.kind === "fault" || (step.kind === "end" && step.deal === replay.deals.length - 1));
    var lastSaid = {};  // per seat, what it said in the trick in play (a card can carry two)
    state.said.forEach(function (i) {
      var s = deal.said[i];
      var inTrick = s.trick === 0 ? step.ti === 0 && !state.trick : s.trick === (state.trick ? state.trick.number : step.ti + 1);
      if (inTrick || i === step.said) (lastSaid[s.seat] = lastSaid[s.seat] || []).push(i);
    });
    var fresh = step.said >= 0 ? [step.said] : step.kind === "card" ? step.says : [];

    for (var seat = 0; seat < 4; seat++) {
      var box = $("seat-" + seat);
      box.setAttribute("data-pos", positionOf(seat));
      box.classList.toggle("dealer", deal.dealer === seat);
      box.classList.toggle("to-act", step.kind === "card" && step.seat === seat);
      box.classList.toggle("faulted", !!(faultShown && fault.seat === seat));
      var hand = $("hand-" + seat);
      hand.textContent = "";
      var faceUp = seen == null || seen === seat || step.kind === "end";
      state.hands[seat].forEach(function (code) { hand.appendChild(cardSvg(faceUp ? code : null)); });
      hand.setAttribute("aria-label", labels[seat] + "'s hand: " + state.hands[seat].length +
        " card" + (state.hands[seat].length === 1 ? "" : "s") + (faceUp ? "" : ", face down"));
      $("dealer-" + seat).hidden = deal.dealer !== seat;
      var won = state.done.filter(function (t) { return t.winner === seat; }).length;
      $("won-" + seat).textContent = won ? won + " trick" + (won === 1 ? "" : "s") : "";
      var bubble = $("say-" + seat);
      var mine = lastSaid[seat] || [];
      bubble.textContent = mine.map(function (i) { return shortSay(deal.said[i]); }).join(" · ");
      bubble.hidden = !mine.length;
      bubble.classList.toggle("fresh", mine.some(function (i) { return fresh.indexOf(i) >= 0; }));
      if (step.kind === "redeal" && deal.redeals[step.redeal].by === seat) {
        bubble.textContent = "redeal";
        bubble.hidden = false;
        bubble.classList.add("fresh");
      }
      var faultBox = $("fault-" + seat);
      faultBox.hidden = !(faultShown && fault.seat === seat);
      if (faultShown && fault.seat === seat) faultBox.textContent = "fault: " + fault.kind;
    }

    drawTrick(state);
    drawTaken(state);
    drawSaid(state);
    drawScores(state);
    caption.textContent = describe(state);
    slider.value = String(current);
    slider.setAttribute("aria-valuetext", "step " + (current + 1) + " of " + steps.length + ": " + caption.textContent);
    stepOut.textContent = "Deal " + deal.number + " · step " + (current + 1) + " / " + steps.length;
    dealSelect.value = String(step.deal);
    root.setAttribute("data-step", String(current));
    root.setAttribute("data-kind", step.kind);
    $("v-first").disabled = $("v-prev").disabled = current === 0;
    $("v-last").disabled = $("v-next").disabled = current === steps.length - 1;
    if (moved && history.replaceState) history.replaceState(null, "", "#step=" + (current + 1));
    moved = true;
  }

  function drawTrick(state) {
    var box = $("trick");
    box.textContent = "";
    var trick = state.trick;
    $("trick-label").textContent = trick ? "Trick " + trick.number + (trick.winner != null ? ": won by " + seatName(trick.winner) : "") :
      state.step.kind === "redeal" ? "Called off: these hands are dealt again" : "";
    if (!trick) {
      box.setAttribute("aria-label", "No trick in play");
      return;
    }
    var names = [];
    trick.cards.forEach(function (code, pos) {
      var seat = (trick.leader + pos) % 4;
      var slot = el("div", "played pos-" + positionOf(seat) + (trick.winner === seat ? " winner" : ""));
      slot.setAttribute("data-seat", String(seat));
      slot.appendChild(cardSvg(code));
      if (pos === 0) slot.appendChild(el("span", "lead-mark", "lead"));
      box.appendChild(slot);
      names.push(meta.cards[code].name + " by seat " + seat);
    });
    box.setAttribute("aria-label", "Trick " + trick.number + ": " + names.join(", "));
  }

  function drawTaken(state) {
    var list = $("v-tricks");
    list.textContent = "";
    var thirds = [0, 0];
    state.done.forEach(function (trick, t) {
      thirds[trick.winner % 2] += trick.thirds;
      var item = el("li");
      item.appendChild(el("span", "trick-no", (t + 1) + "."));
      trick.cards.forEach(function (code) { item.appendChild(chip(code)); });
      item.appendChild(el("span", "trick-win", "→ seat " + trick.winner + " · " + thirdsText(trick.thirds)));
      list.appendChild(item);
    });
    if (!state.done.length) list.appendChild(el("li", "muted", "No trick taken yet."));
    $("taken-0").textContent = thirdsText(thirds[0]);
    $("taken-1").textContent = thirdsText(thirds[1]);
    $("taken-0").setAttribute("data-thirds", String(thirds[0]));
    $("taken-1").setAttribute("data-thirds", String(thirds[1]));
  }

  function thirdsText(thirds) {
    var whole = Math.floor(thirds / 3);
    var rest = thirds % 3;
    return (whole || !rest ? String(whole) : "") + (rest === 1 ? "⅓" : rest === 2 ? "⅔" : "");
  }

  function drawSaid(state) {
    var list = $("v-said");
    list.textContent = "";
    var deal = state.deal;
    if (state.step.kind === "redeal" || state.step.kind === "deal") {
      (deal.redeals || []).forEach(function (redeal, ri) {
        if (state.step.kind === "redeal" && ri > state.step.redeal) return;
        list.appendChild(el("li", "", seatName(redeal.by) + " asks for a new deal (no T, 9 or A)"));
      });
    }
    state.said.forEach(function (i) {
      var s = deal.said[i];
      var item = el("li", i === state.step.said ? "fresh" : "");
      item.appendChild(el("span", "when", s.trick ? "trick " + s.trick : "before play"));
      item.appendChild(document.createTextNode(" " + seatName(s.seat) + " " + describeSay(s)));
      if (s.card) { item.appendChild(document.createTextNode(" with ")); item.appendChild(chip(s.card)); }
      list.appendChild(item);
    });
    if (!list.children.length) list.appendChild(el("li", "muted", "Nothing said yet this deal."));
    list.scrollTop = list.scrollHeight;  // the latest is last: keep it in sight
  }

  function drawScores(state) {
    var step = state.step;
    var body = $("v-scores");
    body.textContent = "";
    var total = [0, 0];
    replay.deals.forEach(function (deal, di) {
      if (di > step.deal) return;
      var scored = di < step.deal || step.kind === "end";
      var row = el("tr", di === step.deal ? "current" : "");
      var head = el("th", "", String(deal.number));
      head.setAttribute("scope", "row");
      row.appendChild(head);
      if (scored) {
        total = deal.score.slice();
        [0, 1].forEach(function (team) {
          var cell = el("td", "num");
          var extra = deal.bonus[team] + deal.melds[team];
          cell.textContent = deal.points[team] + (extra ? " + " + extra : "");
          cell.title = thirdsText(deal.thirds[team]) + " card points (" + deal.thirds[team] + " thirds), bonus " + deal.bonus[team] + ", melds " + deal.melds[team];
          row.appendChild(cell);
        });
        row.appendChild(el("td", "num", deal.score[0] + "–" + deal.score[1]));
      } else {
        var cell = el("td", "muted", "in play");
        cell.colSpan = 3;
        row.appendChild(cell);
      }
      body.appendChild(row);
    });
    $("v-scores-box").scrollTop = $("v-scores-box").scrollHeight;  // the current deal is last
    $("score-0").textContent = String(total[0]);
    $("score-1").textContent = String(total[1]);
  }

  function describe(state) {
    var step = state.step;
    var deal = state.deal;
    var head = "Deal " + deal.number + ": ";
    if (step.kind === "redeal") {
      return head + "dealt by seat " + deal.dealer + "; " + seatName(deal.redeals[step.redeal].by) + " asks for a new deal.";
    }
    if (step.kind === "deal") {
      var again = (deal.redeals || []).length;
      return head + "seat " + deal.dealer + (again ? " deals again (" + (again === 1 ? "once" : again + " times") + ")" : " deals") +
        "; " + seatName((deal.dealer + 1) % 4) + " leads.";
    }
    if (step.kind === "say") {
      var s = deal.said[step.said];
      return head + seatName(s.seat) + " " + describeSay(s) + ".";
    }
    if (step.kind === "card") {
      var text = head + "trick " + (step.ti + 1) + ", " + seatName(step.seat) + " plays " + meta.cards[step.card].name;
      step.says.forEach(function (i) { text += " and " + describeSay(deal.said[i]); });
      if (state.trick && state.trick.winner != null) text += "; " + seatName(state.trick.winner) + " wins the trick";
      return text + ".";
    }
    if (step.kind === "fault") {
      var f = replay.result.fault;
      return head + seatName(f.seat) + " faults (" + f.kind + ": " + f.detail + "); team " + (f.seat % 2) + " forfeits.";
    }
    var parts = [head + "team 0 takes " + thirdsText(deal.thirds[0]) + ", team 1 " + thirdsText(deal.thirds[1]) +
      "; points " + deal.points[0] + "–" + deal.points[1]];
    if (deal.bonus[0] || deal.bonus[1]) parts.push(bonusName() + " bonus " + deal.bonus[0] + "–" + deal.bonus[1]);
    if (deal.melds[0] || deal.melds[1]) parts.push("melds " + deal.melds[0] + "–" + deal.melds[1]);
    parts.push("total " + deal.score[0] + "–" + deal.score[1]);
    var text2 = parts.join("; ") + ".";
    if (deal.end === "claim") text2 += " The match ends: " + describeClaim(deal);
    else if (deal.end) text2 += " The match ends: " + (meta.reasons[deal.end] || deal.end) + ".";
    if (step.deal === replay.deals.length - 1) {
      var r = replay.result;
      if (r.fault) text2 += " " + seatName(r.fault.seat) + " faulted (" + r.fault.kind + ": " + r.fault.detail + ").";
      text2 += r.winner == null ? " Draw " : " Team " + r.winner + " wins ";
      text2 += r.score[0] + "–" + r.score[1] + " (" + (meta.reasons[r.reason] || r.reason) + ").";
    }
    return text2;
  }

  /* La Poule calls the bonus a poule (announced before play); the other games a politaine. */
  function bonusName() {
    return replay.rules && replay.rules.politaine === "before-play" ? "poule" : "politaine";
  }

  /* Who claimed and what his team counted: the match total before the deal, the card points
     taken so far and the melds of the deal, which is the deal's score (docs/rules.md). */
  function describeClaim(deal) {
    var claims = deal.said.filter(function (s) { return s.say === "claim"; });
    if (!claims.length) return "claim.";
    var seat = claims[claims.length - 1].seat;
    var team = seat % 2;
    var target = replay.rules && replay.rules.target;
    var counted = deal.score[team];
    var text = "claim by " + seatName(seat) + "; team " + team + " claimed with " + counted;
    if (target != null) text += " of " + target + ", " + (counted >= target ? "enough" : "short of the target");
    return text + ".";
  }

  // --- controls --------------------------------------------------------------------------------

  function go(index) {
    current = Math.max(0, Math.min(steps.length - 1, index));
    render();
  }

  function dealJump(delta) {
    var di = steps[current].deal + delta;
    if (delta < 0 && current !== dealStarts[steps[current].deal]) di = steps[current].deal;
    if (di < 0) return go(0);
    if (di >= replay.deals.length) return go(steps.length - 1);
    go(dealStarts[di]);
  }

  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    playButton.setAttribute("aria-pressed", "false");
    playButton.textContent = "Play";
  }

  function play() {
    if (timer) return stop();
    if (current === steps.length - 1) go(0);
    playButton.setAttribute("aria-pressed", "true");
    playButton.textContent = "Pause";
    timer = setInterval(function () {
      if (current >= steps.length - 1) return stop();
      go(current + 1);
    }, 700);
  }

  slider.max = String(steps.length - 1);
  replay.deals.forEach(function (deal, di) {
    var option = el("option", "", "Deal " + deal.number);
    option.value = String(di);
    dealSelect.appendChild(option);
  });
  $("v-first").addEventListener("click", function () { stop(); go(0); });
  $("v-prev").addEventListener("click", function () { stop(); go(current - 1); });
  $("v-next").addEventListener("click", function () { stop(); go(current + 1); });
  $("v-last").addEventListener("click", function () { stop(); go(steps.length - 1); });
  $("v-prev-deal").addEventListener("click", function () { stop(); dealJump(-1); });
  $("v-next-deal").addEventListener("click", function () { stop(); dealJump(1); });
  playButton.addEventListener("click", play);
  slider.addEventListener("input", function () { stop(); go(Number(slider.value)); });
  viewSelect.addEventListener("change", render);
  dealSelect.addEventListener("change", function () { stop(); go(dealStarts[Number(dealSelect.value)]); });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var target = event.target;
    var tag = target && target.tagName;
    // The slider's arrow keys step through the viewer here too, not through the browser's own
    // range handling, so that a key moves exactly one step, at once, in every browser.
    if (tag === "SELECT" || tag === "TEXTAREA" ||
        (tag === "INPUT" && target.type !== "range") || (target && target.isContentEditable)) return;
    var keys = {
      ArrowRight: function () { go(current + 1); },
      ArrowLeft: function () { go(current - 1); },
      Home: function () { go(0); },
      End: function () { go(steps.length - 1); },
      PageDown: function () { dealJump(1); },
      PageUp: function () { dealJump(-1); }
    };
    if (keys[event.key]) {
      event.preventDefault();
      stop();
      keys[event.key]();
    }
  });

  var match = /step=(\d+)/.exec(location.hash);
  root.hidden = false;
  $("viewer-loading").hidden = true;
  go(match ? Number(match[1]) - 1 : 0);
  window.arenaViewer = { steps: steps, go: go, state: function () { return stateAt(current); } };
})();
