// ledger: local memory for coding agents, OpenCode plugin (a thin shim).
//
// All the logic lives in Python. This file forwards the events that matter, as JSON
// lines, to one long-lived `ledger __serve-session opencode` child (started on the first
// event, restarted if it dies) and applies its answers:
//
//   tool.execute.after               -> facts appended to the tool output (output.output)
//   experimental.session.compacting  -> the Session State block pushed to output.context
//   chat.message                     -> the user's prompt (session record)
//   event (bus): step-finish and patch parts, session.diff, session.idle,
//                session.status idle, session.deleted, todo.updated -> step counts,
//                files changed, the todo list, the idle checkpoint
//
// When the child asks for it ({"id": null, "distill": ...}), the plugin distills through
// OpenCode's own session API: a throwaway session (never observed, deleted afterwards)
// whose answer goes back as a `distill_answer` request.
//
// It never throws into OpenCode: a dead child, a timeout or a bad answer means no
// injection, logged once through client.app.log.
//
// Installed by `ledger install opencode`, which writes the absolute path of the ledger
// command below. Overrides: plugin option `command` (an argv array), $LEDGER_BIN.
// Exports: the default export is the OpenCode 1.x plugin factory, and it also carries
// the 2.x shape ({id, setup}); see setupV2.

import { spawn } from "node:child_process";

const LEDGER_COMMAND = "__LEDGER_COMMAND__";
const PLUGIN_ID = "ledger";
const DEFAULT_TIMEOUT_MS = 3000; // one round trip is ~1 ms; this covers the child's start
const MAX_STARTS = 3; // child starts allowed per window, then the plugin stays quiet
const START_WINDOW_MS = 60_000;
const MAX_OUTPUT = 64_000; // characters of a tool output forwarded (the watcher keeps less)
const DISTILL_TITLE = "ledger-distill";
const NO_TOOLS = {
  "*": false, bash: false, read: false, edit: false, write: false, glob: false, grep: false,
  list: false, patch: false, task: false, webfetch: false, todowrite: false, todoread: false,
};

function isFn(x) {
  return typeof x === "function";
}

// Yes/no environment variables follow ledger's one rule (src/ledger/flags.py; tests run
// both): 1/true/yes/on and 0/false/no/off, any case, spaces around ignored; unset or empty
// means the default; anything else is not guessed at: the default applies and `bad` says
// so (logged once). LEDGER_HOOKS_DISABLED=0 leaves the hooks on.
const TRUE_WORDS = ["1", "true", "yes", "on"];
const FALSE_WORDS = ["0", "false", "no", "off"];

/** `{value, bad}`: the flag's value, and a message when the variable is not a boolean. */
function envFlag(name, fallback = false, env = process.env) {
  const raw = env[name];
  if (raw === undefined || raw === null || String(raw).trim() === "") return { value: fallback, bad: null };
  const word = String(raw).trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return { value: true, bad: null };
  if (FALSE_WORDS.includes(word)) return { value: false, bad: null };
  return {
    value: fallback,
    bad: `$${name}: '${raw}' is not a boolean (1/true/yes/on or 0/false/no/off); using the default, ${fallback}`,
  };
}

function envNumber(name, fallback) {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/** The argv that starts the child. */
function childArgv(options) {
  const opt = options && options.command;
  if (Array.isArray(opt) && opt.length && opt.every((x) => typeof x === "string")) return opt.slice();
  if (typeof opt === "string" && opt) return [opt, "__serve-session", "opencode"];
  const bin = process.env.LEDGER_BIN || (LEDGER_COMMAND.startsWith("__") ? "ledger" : LEDGER_COMMAND);
  return [bin, "__serve-session", "opencode"];
}

/** Bus events worth a round trip (everything else, e.g. streaming deltas, stays here). */
function isForwarded(event) {
  const type = event && event.type;
  if (type === "message.part.updated") {
    const p = (event.properties || event.data || {}).part;
    return !!p && (p.type === "step-finish" || p.type === "patch");
  }
  if (type === "session.status") {
    const s = (event.properties || event.data || {}).status;
    return !!s && s.type === "idle";
  }
  return type === "session.idle" || type === "session.diff" || type === "session.deleted" ||
    type === "session.execution.succeeded" || type === "todo.updated";
}

function eventSession(event) {
  const props = (event && (event.properties || event.data)) || {};
  if (props.part && typeof props.part.sessionID === "string") return props.part.sessionID;
  if (typeof props.sessionID === "string") return props.sessionID;
  if (props.info && typeof props.info.id === "string") return props.info.id;
  return undefined;
}

function cut(text, max = MAX_OUTPUT) {
  if (typeof text !== "string" || text.length <= max) return text;
  const head = Math.floor(max * 0.75);
  const tail = max - head;
  return text.slice(0, head) + `\n… [${text.length - max} chars cut by the ledger plugin] …\n` + text.slice(-tail);
}

// Everything else a request carries (tool arguments, bus events, prompt parts) is bounded
// like the output: a `write` of 17 MB would otherwise make a line the child refuses
// (16 MiB), the call would wait out the timeout and its observation would be lost. Each
// string is cut to MAX_OUTPUT; when the whole is still over MAX_FORWARDED characters of
// JSON, the per-string cap halves (down to MIN_STRING) until it fits, else the value is
// replaced by its cut JSON text. Lists and objects keep MAX_ITEMS entries, nesting stops at
// MAX_DEPTH, and at most MAX_NODES values are visited (a cyclic or enormous object costs
// no more). The watcher keeps far less of the arguments (ledger.redact.clip_value).
const MAX_FORWARDED = 256_000; // characters of JSON per bounded value
const MIN_STRING = 256;
const MAX_ITEMS = 200;
const MAX_DEPTH = 12;
const MAX_NODES = 20_000;
const MAX_REQUEST_BYTES = 16 * 1024 * 1024; // the child refuses longer lines (ledger.harness.jsonlines)

function walk(v, cap, depth, budget) {
  if (--budget.nodes < 0) return "[too many values]";
  if (typeof v === "string") return cut(v, cap);
  if (v === null || typeof v === "number" || typeof v === "boolean") return v;
  if (v === undefined || typeof v === "function" || typeof v === "symbol") return undefined;
  if (typeof v !== "object") return String(v);
  if (depth >= MAX_DEPTH) return "[nested too deep]";
  if (Array.isArray(v)) {
    const out = v.slice(0, MAX_ITEMS).map((x) => {
      const y = walk(x, cap, depth + 1, budget);
      return y === undefined ? null : y;
    });
    if (v.length > MAX_ITEMS) out.push(`… [${v.length - MAX_ITEMS} more items]`);
    return out;
  }
  const out = {};
  const keys = Object.keys(v);
  for (const k of keys.slice(0, MAX_ITEMS)) {
    let item;
    try {
      item = v[k];
    } catch (_) {
      continue; // a throwing getter
    }
    const y = walk(item, cap, depth + 1, budget);
    if (y !== undefined) out[cut(k, 200)] = y;
  }
  if (keys.length > MAX_ITEMS) out["…"] = `… [${keys.length - MAX_ITEMS} more items]`;
  return out;
}

/** A bounded, JSON-safe copy of `value` (see above); never throws. */
function bounded(value, total = MAX_FORWARDED) {
  let cap = MAX_OUTPUT;
  for (;;) {
    let out;
    let text;
    try {
      out = walk(value, cap, 0, { nodes: MAX_NODES });
      text = JSON.stringify(out);
    } catch (_) {
      return null;
    }
    if (text === undefined || text.length <= total) return out;
    if (cap <= MIN_STRING) return { "[truncated]": cut(text, total) };
    cap = Math.max(MIN_STRING, Math.floor(cap / 2));
  }
}

/** A bus event as forwarded: bounded, and session.diff without the files' contents
 * (some builds send each file's `before` and `after`; only the names are used). */
function slimEvent(event) {
  const props = event && (event.properties || event.data);
  if (event && event.type === "session.diff" && props && Array.isArray(props.diff)) {
    const diff = props.diff.map((d) => (d && typeof d === "object"
      ? { file: d.file, additions: d.additions, deletions: d.deletions, status: d.status }
      : d));
    const key = event.properties ? "properties" : "data";
    event = { ...event, [key]: { ...props, diff } };
  }
  return bounded(event);
}

function slimOutput(output) {
  if (output === null || output === undefined) return null;
  if (typeof output === "string") return cut(output);
  if (typeof output !== "object") return String(output);
  const meta = output.metadata && typeof output.metadata === "object" ? output.metadata : {};
  const slim = { title: typeof output.title === "string" ? output.title : undefined, metadata: {} };
  for (const k of ["exit", "truncated", "error"]) {
    const v = meta[k];
    if (v === null || ["number", "boolean", "string"].includes(typeof v)) slim.metadata[k] = v;
  }
  if (typeof output.output === "string") slim.output = cut(output.output);
  else if (Array.isArray(output.content)) {
    slim.content = output.content
      .filter((b) => b && typeof b.text === "string")
      .map((b) => ({ type: "text", text: cut(b.text) }));
  }
  return slim;
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    Promise.resolve(promise).finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]);
}

/** One long-lived child speaking JSON lines; every method resolves, none rejects. */
class Child {
  constructor(argv, log) {
    this.argv = argv;
    this.log = log;
    this.proc = null;
    this.pending = new Map();
    this.nextId = 1;
    this.buffer = "";
    this.starts = [];
    this.onPush = null;
  }

  ensure() {
    if (this.proc) return true;
    const now = Date.now();
    this.starts = this.starts.filter((t) => now - t < START_WINDOW_MS);
    if (this.starts.length >= MAX_STARTS) {
      this.log("starts", `ledger child died ${MAX_STARTS} times within ${START_WINDOW_MS / 1000} s; not restarting it for now`);
      return false;
    }
    this.starts.push(now);
    let proc;
    try {
      const env = { ...process.env };
      proc = spawn(this.argv[0], this.argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env, windowsHide: true });
    } catch (e) {
      this.log("spawn", `cannot start the ledger child (${this.argv.join(" ")}): ${e && e.message}`);
      return false;
    }
    this.proc = proc;
    this.buffer = "";
    proc.on("error", (e) => {
      this.log("spawn", `cannot run the ledger child (${this.argv.join(" ")}): ${e && e.message}`);
      this.died(proc);
    });
    proc.on("exit", (code, signal) => {
      if (this.proc === proc && !this.closing) {
        this.log("exit", `the ledger child exited (code ${code}, signal ${signal}); it is restarted on the next event`);
      }
      this.died(proc);
    });
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (chunk) => this.data(proc, chunk));
    proc.stdout.on("error", () => {});
    proc.stderr.on("data", () => {}); // drained, never shown inside OpenCode
    proc.stderr.on("error", () => {});
    proc.stdin.on("error", () => {}); // EPIPE once the child is gone
    // Never keep OpenCode alive on our account; pending requests hold their own timers.
    for (const h of [proc, proc.stdin, proc.stdout, proc.stderr]) {
      try {
        if (h && isFn(h.unref)) h.unref();
      } catch (_) {}
    }
    return true;
  }

  died(proc) {
    if (this.proc !== proc) return;
    this.proc = null;
    this.buffer = "";
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const done of waiting) done(null);
  }

  data(proc, chunk) {
    if (this.proc !== proc) return;
    this.buffer += chunk;
    let nl;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      if (!line.trim()) continue;
      let msg;
      try {
        msg = JSON.parse(line);
      } catch (_) {
        this.log("badline", `the ledger child sent a line that is not JSON: ${line.slice(0, 120)}`);
        continue;
      }
      if (!msg || typeof msg !== "object") continue;
      if ((msg.id === null || msg.id === undefined) && msg.distill) {
        if (this.onPush) this.onPush(msg);
        continue;
      }
      const done = this.pending.get(msg.id);
      if (done) {
        this.pending.delete(msg.id);
        done(msg);
      }
    }
  }

  /** Send one request; resolves with the response object, or null (dead, timeout). */
  request(payload, timeoutMs) {
    if (!this.ensure()) return Promise.resolve(null);
    const id = this.nextId++;
    const proc = this.proc;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.pending.delete(id)) {
          this.log("timeout", `the ledger child did not answer within ${timeoutMs} ms (request ${payload.type || (payload.event && payload.event.hook)})`);
          resolve(null);
        }
      }, timeoutMs);
      this.pending.set(id, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
      try {
        const line = JSON.stringify({ id, ...payload }) + "\n";
        if (line.length > MAX_REQUEST_BYTES / 3 && Buffer.byteLength(line) > MAX_REQUEST_BYTES) {
          // Bounded above, so this should not happen; if it does, answer at once instead of
          // waiting out the timeout for a line the child would refuse.
          this.pending.delete(id);
          clearTimeout(timer);
          this.log("toolong", `a ledger request of ${Buffer.byteLength(line)} bytes was not sent (limit ${MAX_REQUEST_BYTES})`);
          resolve(null);
          return;
        }
        proc.stdin.write(line);
      } catch (e) {
        this.pending.delete(id);
        clearTimeout(timer);
        this.log("write", `cannot write to the ledger child: ${e && e.message}`);
        resolve(null);
      }
    });
  }

  /** Let pending requests finish (up to graceMs), then end the child's input. */
  async close(graceMs = 2000) {
    const started = Date.now();
    while (this.pending.size && Date.now() - started < graceMs) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const proc = this.proc;
    this.closing = true;
    if (proc) {
      try {
        proc.stdin.end();
      } catch (_) {}
    }
  }
}

/** The shared core of the 1.x and 2.x entry points. */
function createShim({ directory, worktree, client, options, api }) {
  const logged = new Set();
  const log = (key, message) => {
    if (logged.has(key)) return;
    logged.add(key);
    try {
      const p = client && client.app && isFn(client.app.log)
        ? client.app.log({ body: { service: PLUGIN_ID, level: "warn", message } })
        : null;
      if (p && isFn(p.catch)) p.catch(() => {});
    } catch (_) {}
    if (envFlag("LEDGER_OPENCODE_DEBUG").value) {
      try {
        console.error(`[ledger] ${message}`);
      } catch (_) {}
    }
  };
  const timeoutMs = (options && Number(options.timeoutMs) > 0 && Number(options.timeoutMs)) ||
    envNumber("LEDGER_OPENCODE_TIMEOUT_MS", DEFAULT_TIMEOUT_MS);
  const child = new Child(childArgv(options), log);
  const ignored = new Set(); // our own distillation sessions: never observed
  const argsByCall = new Map(); // callID -> args, for builds whose after-hook lacks args
  const dir = directory || process.cwd();
  const tree = worktree || dir;

  const check = (res, what) => {
    if (res && typeof res === "object" && res.error) log(`error:${what}`, `ledger could not handle ${what}: ${String(res.error).slice(0, 300)}`);
    return res && typeof res === "object" ? res : null;
  };
  const send = async (event, what) =>
    check(await child.request({ event: { directory: dir, worktree: tree, ...event } }, timeoutMs), what);

  async function distill(d) {
    let sid = null;
    let text = null;
    let error = null;
    try {
      const session = client && client.session;
      if (!session || !isFn(session.create) || !isFn(session.prompt)) {
        throw new Error("this OpenCode gives plugins no session API; configure another [llm] backend for ledger");
      }
      const created = await withTimeout(session.create({ body: { title: DISTILL_TITLE } }), 15_000, "session.create");
      sid = (created && created.data && created.data.id) || (created && created.id) || null;
      if (!sid) throw new Error("session.create returned no session id");
      ignored.add(sid);
      await child.request({ type: "ignore_session", session: sid }, timeoutMs);
      const body = { system: d.system, tools: NO_TOOLS, parts: [{ type: "text", text: d.prompt }] };
      if (d.agent) body.agent = d.agent;
      if (typeof d.model === "string" && d.model.includes("/")) {
        const i = d.model.indexOf("/");
        body.model = { providerID: d.model.slice(0, i), modelID: d.model.slice(i + 1) };
      }
      const res = await withTimeout(session.prompt({ path: { id: sid }, body }), Number(d.timeoutMs) || 120_000, "session.prompt");
      if (res && res.error) throw new Error(`session.prompt failed: ${JSON.stringify(res.error).slice(0, 300)}`);
      const parts = (res && res.data && res.data.parts) || (res && res.parts) || [];
      text = parts
        .filter((p) => p && p.type === "text" && typeof p.text === "string")
        .map((p) => p.text)
        .join("\n")
        .trim();
    } catch (e) {
      error = String((e && e.message) || e);
      log(`distill:${error.slice(0, 40)}`, `ledger distillation through OpenCode failed: ${error}`);
    } finally {
      if (sid) {
        try {
          await withTimeout(client.session.delete({ path: { id: sid } }), 10_000, "session.delete");
        } catch (e) {
          log("distill-delete", `could not delete the ledger distillation session ${sid}: ${e && e.message}`);
        }
      }
    }
    await child.request({ type: "distill_answer", token: d.token, text, error }, timeoutMs);
  }

  child.onPush = (msg) => {
    if (api === 2) {
      child.request({ type: "distill_answer", token: msg.distill.token, text: null,
        error: "distillation through OpenCode 2.x sessions is not supported; configure another [llm] backend" }, timeoutMs);
      return;
    }
    distill(msg.distill).catch(() => {});
  };

  return {
    child,
    ignored,
    log,

    async before(input, output) {
      if (!input || ignored.has(input.sessionID)) return;
      if (input.callID && output && output.args && typeof output.args === "object") {
        if (argsByCall.size > 1000) argsByCall.clear();
        argsByCall.set(input.callID, output.args);
      }
    },

    /** V1 tool.execute.after: observe, and append the facts the child returns. */
    async after(input, output) {
      if (!input || ignored.has(input.sessionID)) return;
      const args = (input.args && typeof input.args === "object" ? input.args : null) || argsByCall.get(input.callID) || {};
      argsByCall.delete(input.callID);
      const res = await send({
        hook: "tool.execute.after",
        input: { tool: input.tool, sessionID: input.sessionID, callID: input.callID, args: bounded(args) },
        output: slimOutput(output),
      }, "tool.execute.after");
      if (res && typeof res.append === "string" && res.append && output && typeof output.output === "string") {
        output.output += res.append;
      }
    },

    /** V2 execute.after: same, on the V2 event object (result or error, mutable). */
    async afterV2(evt) {
      if (!evt || ignored.has(evt.sessionID)) return;
      const res = await send({
        hook: "execute.after",
        input: { tool: evt.tool, sessionID: evt.sessionID, id: evt.id, input: bounded(evt.input),
          error: typeof evt.error === "string" ? cut(evt.error) : bounded(evt.error) },
        output: slimOutput(evt.result),
      }, "execute.after");
      if (!res || typeof res.append !== "string" || !res.append) return;
      if (typeof evt.result === "string") evt.result += res.append;
      else if (evt.result && typeof evt.result.output === "string") evt.result.output += res.append;
    },

    async compacting(input, output) {
      const sid = input && input.sessionID;
      if (sid && ignored.has(sid)) return;
      const res = await send({ hook: "experimental.session.compacting", input: { sessionID: sid } }, "compaction");
      if (!res || !Array.isArray(res.context) || !output || !Array.isArray(output.context)) return;
      for (const text of res.context) if (typeof text === "string" && text) output.context.push(text);
    },

    /** chat.message: a new user message; only its text parts travel (bounded). */
    async message(input, output) {
      const sid = input && input.sessionID;
      if (!sid || ignored.has(sid)) return;
      const msg = (output && output.message) || {};
      if (msg.role && msg.role !== "user") return;
      const parts = bounded(((output && output.parts) || [])
        .filter((p) => p && p.type === "text" && typeof p.text === "string")
        .map((p) => ({ type: "text", text: p.text, synthetic: !!p.synthetic, ignored: !!p.ignored })));
      if (!parts.length) return;
      await send({ hook: "chat.message", input: { sessionID: sid }, output: { message: { role: "user" }, parts } },
        "chat.message");
    },

    async event(event) {
      if (!isForwarded(event)) return;
      const sid = eventSession(event);
      if (sid && ignored.has(sid)) return;
      await send({ hook: "event", event: slimEvent(event) }, event.type);
    },

    close: (graceMs) => child.close(graceMs),
  };
}

const served = new WeakSet();

/** OpenCode 1.x plugin factory: `(input, options) => hooks`. */
async function LedgerPlugin(input, options) {
  const hooks = {};
  try {
    const disabled = envFlag("LEDGER_HOOKS_DISABLED");
    if (disabled.value) return hooks;
    if (input && typeof input === "object") {
      if (served.has(input)) return hooks; // a loader that calls every export: load once
      served.add(input);
    }
    const shim = createShim({
      directory: input && input.directory,
      worktree: input && input.worktree,
      client: input && input.client,
      options: options || {},
      api: 1,
    });
    for (const flag of [disabled, envFlag("LEDGER_OPENCODE_DEBUG")]) if (flag.bad) shim.log(`flag:${flag.bad}`, flag.bad);
    const guard = (name, fn) => async (...args) => {
      try {
        await fn(...args);
      } catch (e) {
        shim.log(`throw:${name}`, `ledger ${name} hook failed: ${e && e.message}`);
      }
    };
    hooks.event = guard("event", ({ event } = {}) => shim.event(event));
    hooks["tool.execute.before"] = guard("tool.execute.before", shim.before);
    hooks["tool.execute.after"] = guard("tool.execute.after", shim.after);
    hooks["experimental.session.compacting"] = guard("experimental.session.compacting", shim.compacting);
    hooks["chat.message"] = guard("chat.message", shim.message);
    hooks.dispose = guard("dispose", () => shim.close(3000));
  } catch (_) {
    // never throw into OpenCode
  }
  return hooks;
}

/**
 * OpenCode 2.x entry: `setup(ctx)` registers through ctx domains when they exist
 * (`ctx.tool.hook("execute.after")`, `ctx.session.hook("compaction")`,
 * `ctx.event.subscribe()`), and returns a cleanup. Written against the documented 2.x
 * plugin API; no 2.x build was available to test it against.
 */
async function setupV2(ctx) {
  try {
    const disabled = envFlag("LEDGER_HOOKS_DISABLED");
    if (disabled.value) return () => {};
    const loc = (ctx && ctx.location) || {};
    const shim = createShim({
      directory: loc.directory,
      worktree: loc.project || loc.worktree,
      client: null,
      options: (ctx && ctx.options) || {},
      api: 2,
    });
    for (const flag of [disabled, envFlag("LEDGER_OPENCODE_DEBUG")]) if (flag.bad) shim.log(`flag:${flag.bad}`, flag.bad);
    let wired = false;
    const tool = ctx && ctx.tool;
    if (tool && isFn(tool.hook)) {
      tool.hook("execute.after", (evt) => shim.afterV2(evt).catch(() => {}));
      wired = true;
    }
    const session = ctx && ctx.session;
    if (session && isFn(session.hook)) {
      session.hook("compaction", (evt) =>
        shim.compacting({ sessionID: evt && evt.sessionID }, { context: evt && Array.isArray(evt.context) ? evt.context : [] })
          .catch(() => {}));
    }
    const events = ctx && ctx.event;
    let stop = false;
    if (events && isFn(events.subscribe)) {
      (async () => {
        for await (const event of events.subscribe()) {
          if (stop) break;
          await shim.event(event).catch(() => {});
        }
      })().catch(() => {});
    }
    if (!wired) shim.log("v2-no-tool", "this OpenCode gives plugins no tool hooks; ledger cannot inject facts here");
    return () => {
      stop = true;
      return shim.close(3000);
    };
  } catch (_) {
    return () => {};
  }
}

LedgerPlugin.id = PLUGIN_ID;
LedgerPlugin.server = LedgerPlugin;
LedgerPlugin.setup = setupV2;

export default LedgerPlugin;
