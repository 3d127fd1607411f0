// A complete Quatre Sept bot in JavaScript (Node.js): it plays a random legal action.
//
// Protocol 1 in one paragraph: the referee writes one JSON object per line on our stdin. We
// answer "hello" with a "ready" line and every "turn" with the turn's id and one action copied
// from its "legal" list. "deal_end" and "match_end" need no answer. We must answer within the
// clock (1 s per decision by default) and print nothing else on stdout: logs go to stderr.
//
// Run it locally, from the repository's root:
//   .venv/bin/python manage.py play --rules quatre-sept examples/javascript/bot.js builtin:random
// Upload it as it is, or zip it with other files and a bot.json: {"command": "node bot.js"}.

"use strict";

const readline = require("readline");

// Pick an action. Replace this with your strategy: turn.state is what you can see (your hand,
// the tricks so far, the score...), turn.legal every action you may take.
function choose(turn) {
  return turn.legal[Math.floor(Math.random() * turn.legal.length)];
}

// Write one JSON line on stdout (console.log adds the newline).
function send(message) {
  console.log(JSON.stringify(message));
}

// readline hands us stdin one line at a time.
const lines = readline.createInterface({ input: process.stdin });

lines.on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      // message.seat, message.rules and message.clock are worth keeping.
      send({ type: "ready", name: "random-javascript" });
      break;
    case "turn":
      send({ id: message.id, action: choose(message) });
      break;
    case "deal_end":
      console.error("deal over:", JSON.stringify(message.score)); // stderr is our log
      break;
    case "match_end":
      lines.close(); // the referee closes stdin next; we are done
      break;
  }
});
