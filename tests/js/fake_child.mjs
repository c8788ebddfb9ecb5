// A scripted stand-in for `ledger __serve-session opencode`: speaks the JSON-lines
// protocol on stdin/stdout and records every request (one JSON line each) in $FAKE_LOG.
//
// $FAKE_MODE picks the behaviour:
//   facts     answers tool events with append "\n\nFACTS for <tool>", compaction with a
//             context entry, everything else with an empty answer (the default)
//   garbage   answers every request with a line that is not JSON
//   slow      never answers
//   die       answers the first request, then exits (code 3)
//   crash     exits at once without answering
//   distill   like facts, and after the first tool event pushes a distill request
import fs from "node:fs";

const mode = process.env.FAKE_MODE || "facts";
const logFile = process.env.FAKE_LOG;
const record = (obj) => {
  if (logFile) fs.appendFileSync(logFile, JSON.stringify({ pid: process.pid, ...obj }) + "\n");
};
const send = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

if (mode === "crash") process.exit(3);

let buffer = "";
let answered = 0;
let pushed = false;
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (!line.trim()) continue;
    const req = JSON.parse(line);
    record({ req });
    handle(req);
  }
});
process.stdin.on("end", () => {
  record({ end: true });
  process.exit(0);
});

function handle(req) {
  if (mode === "slow") return;
  if (mode === "garbage") {
    process.stdout.write("this is not json\n");
    return;
  }
  const res = { id: req.id, append: null, context: [], error: null, pid: process.pid };
  const ev = req.event;
  if (req.type === "ping") res.pong = true;
  if (ev && (ev.hook === "tool.execute.after" || ev.hook === "execute.after")) {
    res.append = `\n\nFACTS for ${ev.input.tool}`;
  }
  if (ev && ev.hook === "experimental.session.compacting") res.context = ["## Session State (fake)"];
  send(res);
  answered += 1;
  if (mode === "die" && answered === 1) process.exit(3);
  if (mode === "distill" && !pushed && ev && ev.hook === "tool.execute.after") {
    pushed = true;
    send({ id: null, distill: { token: "d1", session: `opencode:${ev.input.sessionID}`, prompt: "PROMPT TEXT",
      system: "SYSTEM TEXT", agent: "plan", model: "prov/model-x", timeoutMs: 5000 } });
  }
}
