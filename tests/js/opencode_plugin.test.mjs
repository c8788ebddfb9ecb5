// The OpenCode plugin (src/ledger/harness/opencode/ledger.js) under node's test runner:
// a fake plugin context (client with app.log and the session API) and a fake child
// (fake_child.mjs) that speaks the JSON-lines protocol; plus, when $LEDGER_TEST_BIN names
// a `ledger` command, the real `ledger __serve-session opencode` child.
//
//   node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pluginUrl = new URL("../../src/ledger/harness/opencode/ledger.js", import.meta.url);
const { default: LedgerPlugin } = await import(pluginUrl);
const FAKE = path.join(here, "fake_child.mjs");

function tmpdir(prefix = "ledger-js-") {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function fakeClient({ answer = '[{"fact": "x", "topic": "t", "files": []}]', failCreate = false } = {}) {
  const calls = [];
  const logs = [];
  return {
    calls,
    logs,
    app: { log: async ({ body }) => { logs.push(body.message); return true; } },
    session: {
      create: async (x) => {
        calls.push(["create", x]);
        if (failCreate) throw new Error("create refused");
        return { data: { id: "ses_distill" } };
      },
      prompt: async (x) => {
        calls.push(["prompt", x]);
        return { data: { info: {}, parts: [{ type: "step-start" }, { type: "text", text: answer }] } };
      },
      delete: async (x) => { calls.push(["delete", x]); return { data: true }; },
    },
  };
}

/** A plugin instance wired to the fake child in `mode`; returns hooks, client, log reader. */
async function withFake(mode, extra = {}) {
  const dir = tmpdir();
  const logFile = path.join(dir, "requests.jsonl");
  process.env.FAKE_MODE = mode;
  process.env.FAKE_LOG = logFile;
  const client = extra.client || fakeClient();
  const hooks = await LedgerPlugin(
    { client, directory: dir, worktree: dir, project: {}, $: null, serverUrl: new URL("http://127.0.0.1:1") },
    { command: [process.execPath, FAKE], ...(extra.options || {}) },
  );
  const requests = () =>
    fs.existsSync(logFile)
      ? fs.readFileSync(logFile, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l))
      : [];
  return { hooks, client, dir, requests };
}

async function until(fn, ms = 3000) {
  const start = Date.now();
  while (Date.now() - start < ms) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  return fn();
}

const readCall = (sessionID = "ses_1", callID = "call_1") => ({
  tool: "read", sessionID, callID, args: { filePath: "/proj/notes.txt" },
});

test("the default export is the 1.x factory and carries the 2.x shape", async () => {
  assert.equal(typeof LedgerPlugin, "function");
  assert.equal(LedgerPlugin.id, "ledger");
  assert.equal(LedgerPlugin.server, LedgerPlugin);
  assert.equal(typeof LedgerPlugin.setup, "function");
  const mod = await import(pluginUrl);
  assert.deepEqual(Object.keys(mod), ["default"], "1.x loaders call every export: only one");
  const { hooks } = await withFake("facts");
  assert.deepEqual(Object.keys(hooks).sort(), [
    "chat.message", "dispose", "event", "experimental.session.compacting", "tool.execute.after", "tool.execute.before",
  ]);
  await hooks.dispose();
});

test("tool.execute.after forwards the call and appends the child's facts", async () => {
  const { hooks, dir, requests } = await withFake("facts");
  const output = { title: "notes.txt", output: "1: the answer is 42", metadata: { preview: "x".repeat(50), exit: 0 } };
  await hooks["tool.execute.after"](readCall(), output);
  assert.equal(output.output, "1: the answer is 42\n\nFACTS for read");
  const [{ req }] = requests();
  assert.equal(req.event.hook, "tool.execute.after");
  assert.equal(req.event.directory, dir);
  assert.deepEqual(req.event.input, readCall());
  assert.deepEqual(req.event.output.metadata, { exit: 0 }, "only small metadata crosses the pipe");
  assert.equal(req.event.output.output, "1: the answer is 42");
  await hooks.dispose();
});

test("arguments captured in tool.execute.before are used when after has none", async () => {
  const { hooks, requests } = await withFake("facts");
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "c9" }, { args: { command: "cat a.txt" } });
  const output = { title: "", output: "A", metadata: {} };
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "c9" }, output);
  assert.deepEqual(requests()[0].req.event.input.args, { command: "cat a.txt" });
  await hooks.dispose();
});

test("huge tool outputs are cut before they cross the pipe", async () => {
  const { hooks, requests } = await withFake("facts");
  const output = { title: "", output: "y".repeat(500_000), metadata: {} };
  await hooks["tool.execute.after"](readCall(), output);
  const sent = requests()[0].req.event.output.output;
  assert.ok(sent.length < 70_000, `forwarded ${sent.length} chars`);
  assert.match(sent, /chars cut by the ledger plugin/);
  assert.ok(output.output.startsWith("y".repeat(1000)) && output.output.endsWith("FACTS for read"));
  await hooks.dispose();
});

test("huge tool arguments are bounded like the output (a 17 MB write)", async () => {
  const { hooks, requests, client } = await withFake("facts");
  const content = "w".repeat(17 * 1024 * 1024);
  const t0 = Date.now();
  const output = { title: "", output: "Wrote file successfully.", metadata: {} };
  await hooks["tool.execute.after"]({ tool: "write", sessionID: "s", callID: "w1", args: { filePath: "/p/big.txt", content } }, output);
  assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
  assert.equal(output.output, "Wrote file successfully.\n\nFACTS for write");
  const args = requests()[0].req.event.input.args;
  assert.equal(args.filePath, "/p/big.txt");
  assert.ok(args.content.length <= 70_000, `forwarded ${args.content.length} chars`);
  assert.match(args.content, /chars cut by the ledger plugin/);
  assert.ok(args.content.startsWith("w".repeat(1000)) && args.content.endsWith("w".repeat(1000)));
  assert.deepEqual(client.logs, []);
  await hooks.dispose();
});

test("many large arguments, deep nesting and cycles stay bounded and never throw", async () => {
  const { hooks, requests } = await withFake("facts");
  const edits = Array.from({ length: 1000 }, (_, i) => ({ oldString: `o${i}`.repeat(20_000), newString: "n".repeat(100_000) }));
  let deep = { leaf: "x" };
  for (let i = 0; i < 50; i++) deep = { deep };
  const cyclic = { name: "c" };
  cyclic.self = cyclic;
  const args = { filePath: "/p/a.py", edits, deep, cyclic, fn: () => 1, big: 10n };
  await hooks["tool.execute.before"]({ tool: "multiedit", sessionID: "s", callID: "m1" }, { args });
  await hooks["tool.execute.after"]({ tool: "multiedit", sessionID: "s", callID: "m1" }, { title: "", output: "ok", metadata: {} });
  const line = JSON.stringify(requests()[0].req);
  assert.ok(line.length < 400_000, `request of ${line.length} chars`);
  const sent = requests()[0].req.event.input.args;
  assert.equal(sent.filePath, "/p/a.py");
  assert.equal(sent.edits.length, 201, "200 edits and a note of the rest");
  assert.match(sent.edits[200], /800 more items/);
  assert.match(JSON.stringify(sent.deep), /nested too deep/);
  assert.equal(sent.cyclic.name, "c");
  assert.equal(sent.fn, undefined);
  assert.equal(sent.big, "10");
  await hooks.dispose();
});

test("bus events and prompts are bounded too; session.diff travels without file contents", async () => {
  const { hooks, requests } = await withFake("facts");
  const before = "b".repeat(5_000_000);
  await hooks.event({ event: { type: "session.diff", properties: { sessionID: "s", diff: [
    { file: "a.txt", before, after: before + "!", additions: 1, deletions: 0 }] } } });
  await hooks["chat.message"]({ sessionID: "s" }, { message: { role: "user" },
    parts: Array.from({ length: 400 }, () => ({ type: "text", text: "p".repeat(100_000) })) });
  const [diff, chat] = requests().map(({ req }) => req.event);
  assert.deepEqual(diff.event.properties.diff, [{ file: "a.txt", additions: 1, deletions: 0 }]);
  assert.ok(JSON.stringify(chat).length < 400_000);
  assert.equal(chat.output.parts[0].type, "text");
  assert.match(chat.output.parts[0].text, /chars cut by the ledger plugin/);
  await hooks.dispose();
});

test("compaction pushes the child's context into output.context", async () => {
  const { hooks } = await withFake("facts");
  const output = { context: ["keep me"], prompt: undefined };
  await hooks["experimental.session.compacting"]({ sessionID: "ses_1" }, output);
  assert.deepEqual(output.context, ["keep me", "## Session State (fake)"]);
  assert.equal(output.prompt, undefined, "the default compaction prompt stays");
  await hooks.dispose();
});

test("only the bus events that matter are forwarded", async () => {
  const { hooks, requests } = await withFake("facts");
  const ev = (type, properties) => hooks.event({ event: { type, properties } });
  await ev("message.part.delta", { sessionID: "s", delta: "tok" });
  await ev("message.part.updated", { sessionID: "s", part: { type: "text", sessionID: "s", text: "hi" } });
  await ev("session.status", { sessionID: "s", status: { type: "busy" } });
  await ev("message.part.updated", { sessionID: "s", part: { id: "p1", type: "step-finish", sessionID: "s" } });
  await ev("message.part.updated", { sessionID: "s", part: { id: "p2", type: "patch", sessionID: "s", files: ["/p/a"] } });
  await ev("session.diff", { sessionID: "s", diff: [{ file: "a.txt", additions: 1, deletions: 0 }] });
  await ev("session.status", { sessionID: "s", status: { type: "idle" } });
  await ev("session.idle", { sessionID: "s" });
  await ev("todo.updated", { sessionID: "s", todos: [{ content: "a", status: "pending", priority: "high", id: "1" }] });
  await ev("message.updated", { info: { id: "m1", sessionID: "s" } });
  const types = requests().map(({ req }) => req.event.event.type + (req.event.event.properties.part ? ":" + req.event.event.properties.part.type : ""));
  assert.deepEqual(types, [
    "message.part.updated:step-finish", "message.part.updated:patch", "session.diff", "session.status", "session.idle",
    "todo.updated",
  ]);
  await hooks.dispose();
});

test("chat.message forwards the user's text parts only", async () => {
  const { hooks, requests } = await withFake("facts");
  await hooks["chat.message"]({ sessionID: "s", agent: "build" }, {
    message: { id: "m1", role: "user", sessionID: "s" },
    parts: [{ type: "text", text: "Fix the parser" }, { type: "file", url: "file:///x" },
      { type: "text", text: "<file contents>", synthetic: true }],
  });
  await hooks["chat.message"]({ sessionID: "s" }, { message: { role: "assistant" }, parts: [{ type: "text", text: "no" }] });
  await hooks["chat.message"]({ sessionID: "s" }, { message: { role: "user" }, parts: [{ type: "file" }] });
  await hooks["chat.message"](undefined, undefined);
  const sent = requests().map(({ req }) => req.event);
  assert.equal(sent.length, 1);
  assert.equal(sent[0].hook, "chat.message");
  assert.deepEqual(sent[0].output.parts, [
    { type: "text", text: "Fix the parser", synthetic: false, ignored: false },
    { type: "text", text: "<file contents>", synthetic: true, ignored: false },
  ]);
  await hooks.dispose();
});

test("a child that cannot start means no injection, no throw, one log line", async () => {
  const client = fakeClient();
  const hooks = await LedgerPlugin({ client, directory: tmpdir(), worktree: "/" }, { command: ["/nonexistent/ledger-bin"] });
  for (let i = 0; i < 5; i++) {
    const output = { title: "", output: "out", metadata: {} };
    await hooks["tool.execute.after"](readCall("s", `c${i}`), output);
    assert.equal(output.output, "out");
  }
  const output = { context: [] };
  await hooks["experimental.session.compacting"]({ sessionID: "s" }, output);
  assert.deepEqual(output.context, []);
  const cannot = client.logs.filter((m) => m.includes("cannot run the ledger child"));
  assert.equal(cannot.length, 1, client.logs.join("\n"));
  assert.equal(new Set(client.logs).size, client.logs.length, "every message is logged once");
  assert.ok(client.logs.some((m) => m.includes("not restarting it for now")), client.logs.join("\n"));
  await hooks.dispose();
});

test("a child that dies is restarted on the next event", async () => {
  const { hooks, client, requests } = await withFake("die");
  const a = { title: "", output: "A", metadata: {} };
  await hooks["tool.execute.after"](readCall("s", "c1"), a);
  assert.equal(a.output, "A\n\nFACTS for read");
  await until(() => client.logs.some((m) => m.includes("exited")));
  const b = { title: "", output: "B", metadata: {} };
  await hooks["tool.execute.after"](readCall("s", "c2"), b);
  assert.equal(b.output, "B\n\nFACTS for read");
  const pids = new Set(requests().map((r) => r.pid));
  assert.equal(pids.size, 2, "a second child answered");
  assert.equal(client.logs.filter((m) => m.includes("exited")).length, 1, "logged once");
  await hooks.dispose();
});

test("a child that exits at once costs nothing and is logged once", async () => {
  const { hooks, client } = await withFake("crash");
  for (let i = 0; i < 4; i++) {
    const o = { title: "", output: "X", metadata: {} };
    await hooks["tool.execute.after"](readCall("s", `c${i}`), o);
    assert.equal(o.output, "X");
  }
  assert.equal(client.logs.filter((m) => m.includes("exited")).length, 1);
  await hooks.dispose();
});

test("a bad answer means no injection and one log line", async () => {
  const { hooks, client } = await withFake("garbage", { options: { timeoutMs: 300 } });
  for (let i = 0; i < 3; i++) {
    const o = { title: "", output: "X", metadata: {} };
    await hooks["tool.execute.after"](readCall("s", `c${i}`), o);
    assert.equal(o.output, "X");
  }
  assert.equal(client.logs.filter((m) => m.includes("not JSON")).length, 1, client.logs.join("\n"));
  await hooks.dispose();
});

test("a child that does not answer times out quietly", async () => {
  const { hooks, client } = await withFake("slow", { options: { timeoutMs: 150 } });
  const t0 = Date.now();
  const o = { title: "", output: "X", metadata: {} };
  await hooks["tool.execute.after"](readCall(), o);
  assert.ok(Date.now() - t0 < 1500);
  assert.equal(o.output, "X");
  assert.equal(client.logs.filter((m) => m.includes("did not answer")).length, 1);
  await hooks.dispose(100);
});

test("hooks never throw, whatever OpenCode passes", async () => {
  const { hooks } = await withFake("facts");
  await hooks["tool.execute.after"](undefined, undefined);
  await hooks["tool.execute.after"]({ tool: "mcp_x", sessionID: "s", callID: "c" }, { content: [{ type: "text", text: "t" }] });
  await hooks["tool.execute.before"](null, null);
  await hooks["experimental.session.compacting"](undefined, undefined);
  await hooks.event(undefined);
  await hooks.event({ event: null });
  await hooks.dispose();
});

test("distillation runs a throwaway OpenCode session that is never observed", async () => {
  const client = fakeClient({ answer: '[{"fact": "notes.txt holds 42", "topic": "file:notes.txt", "files": ["notes.txt"]}]' });
  const { hooks, requests } = await withFake("distill", { client });
  await hooks["tool.execute.after"](readCall("ses_user"), { title: "", output: "X", metadata: {} });
  const answer = await until(() => requests().find((r) => r.req.type === "distill_answer"));
  assert.ok(answer, "the answer went back to the child");
  assert.equal(answer.req.token, "d1");
  assert.equal(answer.req.error, null);
  assert.match(answer.req.text, /notes.txt holds 42/);

  const [create, prompt, del] = client.calls;
  assert.equal(create[0], "create");
  assert.equal(create[1].body.title, "ledger-distill");
  assert.equal(prompt[0], "prompt");
  assert.deepEqual(prompt[1].path, { id: "ses_distill" });
  assert.equal(prompt[1].body.system, "SYSTEM TEXT");
  assert.equal(prompt[1].body.agent, "plan");
  assert.deepEqual(prompt[1].body.model, { providerID: "prov", modelID: "model-x" });
  assert.equal(prompt[1].body.tools["*"], false);
  assert.deepEqual(prompt[1].body.parts, [{ type: "text", text: "PROMPT TEXT" }]);
  assert.deepEqual(del, ["delete", { path: { id: "ses_distill" } }]);
  assert.ok(requests().some((r) => r.req.type === "ignore_session" && r.req.session === "ses_distill"));

  // The throwaway session's own traffic stays out of the watcher.
  const before = requests().length;
  const o = { title: "", output: "inner", metadata: {} };
  await hooks["tool.execute.after"](readCall("ses_distill", "c5"), o);
  await hooks.event({ event: { type: "message.part.updated", properties: { part: { id: "p", type: "step-finish", sessionID: "ses_distill" } } } });
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_distill" } } });
  await hooks["experimental.session.compacting"]({ sessionID: "ses_distill" }, { context: [] });
  assert.equal(o.output, "inner");
  assert.equal(requests().length, before, "nothing of the distillation session was forwarded");
  await hooks.dispose();
});

test("a failed distillation sends the error back and deletes nothing it did not create", async () => {
  const client = fakeClient({ failCreate: true });
  const { hooks, requests } = await withFake("distill", { client });
  await hooks["tool.execute.after"](readCall("ses_user"), { title: "", output: "X", metadata: {} });
  const answer = await until(() => requests().find((r) => r.req.type === "distill_answer"));
  assert.equal(answer.req.text, null);
  assert.match(answer.req.error, /create refused/);
  assert.ok(!client.calls.some((c) => c[0] === "delete"));
  await hooks.dispose();
});

test("LEDGER_HOOKS_DISABLED turns the plugin off", async () => {
  process.env.LEDGER_HOOKS_DISABLED = "1";
  try {
    const hooks = await LedgerPlugin({ client: fakeClient(), directory: tmpdir() }, { command: [process.execPath, FAKE] });
    assert.deepEqual(hooks, {});
  } finally {
    delete process.env.LEDGER_HOOKS_DISABLED;
  }
});

test("the 2.x setup registers through ctx domains and appends to the result", async () => {
  const dir = tmpdir();
  process.env.FAKE_MODE = "facts";
  process.env.FAKE_LOG = path.join(dir, "requests.jsonl");
  const registered = {};
  let events = [{ type: "session.idle", data: { sessionID: "s2" } }];
  const ctx = {
    options: { command: [process.execPath, FAKE] },
    location: { directory: dir, project: dir },
    tool: { hook: (name, cb) => { registered["tool:" + name] = cb; } },
    session: { hook: (name, cb) => { registered["session:" + name] = cb; } },
    event: { subscribe: async function* () { for (const e of events) yield e; } },
  };
  const cleanup = await LedgerPlugin.setup(ctx);
  assert.ok(registered["tool:execute.after"] && registered["session:compaction"]);
  const evt = { tool: "read", sessionID: "s2", id: "c1", input: { filePath: "/p/x" }, result: { output: "R" } };
  await registered["tool:execute.after"](evt);
  assert.equal(evt.result.output, "R\n\nFACTS for read");
  const str = { tool: "bash", sessionID: "s2", id: "c2", input: { command: "ls" }, result: "plain" };
  await registered["tool:execute.after"](str);
  assert.equal(str.result, "plain\n\nFACTS for bash");
  const comp = { sessionID: "s2", context: [] };
  await registered["session:compaction"](comp);
  assert.deepEqual(comp.context, ["## Session State (fake)"]);
  const reqs = await until(() => {
    const lines = fs.readFileSync(process.env.FAKE_LOG, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    return lines.some((l) => l.req && l.req.event && l.req.event.event) ? lines : null;
  });
  assert.ok(reqs.some((l) => l.req.event.event && l.req.event.event.type === "session.idle"));
  await cleanup();
});

// ---------------------------------------------------------------- the real child
const BIN = process.env.LEDGER_TEST_BIN;

test("with the real `ledger __serve-session opencode` child", { skip: !BIN && "set LEDGER_TEST_BIN to a ledger command" }, async () => {
  const home = tmpdir("ledger-js-home-");
  const project = tmpdir("ledger-js-proj-");
  const env = { ...process.env, LEDGER_HOME: home };
  delete env.LEDGER_DB;
  delete env.LEDGER_LLM_BACKEND;
  fs.writeFileSync(path.join(project, "model.ckpt"), "weights");
  execFileSync(BIN, ["remember", "model.ckpt is a safetensors file", "--cluster", "code", "--file", path.join(project, "model.ckpt")],
    { env, stdio: "pipe" });
  const saved = process.env.LEDGER_HOME;
  process.env.LEDGER_HOME = home;
  try {
    const client = fakeClient();
    const hooks = await LedgerPlugin({ client, directory: project, worktree: project },
      { command: [BIN, "__serve-session", "opencode"], timeoutMs: 10_000 });
    const out = { title: "model.ckpt", output: "<content>weights</content>", metadata: {} };
    await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_real", callID: "c1", args: { filePath: path.join(project, "model.ckpt") } }, out);
    assert.match(out.output, /KNOWN FACTS/);
    assert.match(out.output, /model\.ckpt is a safetensors file/);
    await hooks["chat.message"]({ sessionID: "ses_real" }, { message: { role: "user" }, parts: [{ type: "text", text: "Convert model.ckpt (TASK-JS-9)" }] });
    await hooks.event({ event: { type: "todo.updated", properties: { sessionID: "ses_real", todos: [
      { content: "load the weights", status: "completed", priority: "high", id: "1" },
      { content: "write safetensors", status: "in_progress", priority: "high", id: "2" }] } } });
    await hooks.event({ event: { type: "session.diff", properties: { sessionID: "ses_real", diff: [{ file: "model.ckpt", additions: 1, deletions: 0 }] } } });
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_real" } } });
    const checkpoint = path.join(project, ".agents", "checkpoint.md");
    assert.ok(await until(() => fs.existsSync(checkpoint)), "checkpoint written on idle");
    const md = fs.readFileSync(checkpoint, "utf8");
    assert.match(md, /## Files Changed This Session\n- model\.ckpt/);
    assert.match(md, /## Current Task\n> Convert model\.ckpt \(TASK-JS-9\)/);
    assert.match(md, /## Todo List\n- \[x\] load the weights\n- \[~\] write safetensors \(in progress\)/);
    const comp = { context: [] };
    await hooks["experimental.session.compacting"]({ sessionID: "ses_real" }, comp);
    assert.match(comp.context[0], /Session State/);
    assert.match(comp.context[0], /### Task \(the user's words\)\n> Convert model\.ckpt/);
    assert.match(comp.context[0], /### Todo List\n- \[x\] load the weights/);
    assert.match(comp.context[0], /### Files Edited This Session\n- model\.ckpt/);
    assert.match(comp.context[0], /model\.ckpt is a safetensors file/);
    assert.deepEqual(client.logs, []);
    await hooks.dispose();
  } finally {
    if (saved === undefined) delete process.env.LEDGER_HOME;
    else process.env.LEDGER_HOME = saved;
  }
});
