// Drives `agenthub acp` with the official ACP TypeScript client
// (@agentclientprotocol/sdk's ClientSideConnection, which validates every
// message the agent sends against the protocol's schema before it reaches
// a handler here). Run by acp_test.go, which checks the files on disk and
// the audit trail afterwards; this script checks what the editor sees and
// prints a JSON summary on its last line of stdout.
//
// Environment: AGENTHUB_BIN, AGENTHUB_HOME, ACP_WORKSPACE (allowlisted),
// ACP_OUTSIDE (a directory that is not), ACP_PLAYBOOK.
//
// The conversation:
//  1. session/new on ACP_OUTSIDE is refused with workspace_outside_allowlist
//     and the next step;
//  2. a prompt whose run asks four times: create notes.txt (first answered
//     with an option it never offered, which must decide nothing and be
//     asked again; then allowed once),
//     create rejected.txt (rejected), edit story.txt in two hunks (only
//     hunk 1 allowed) and run `echo hello`, which is approved meanwhile
//     from another surface (`agenthub approve`, as from the window) while
//     the editor's dialog is open: the editor's late "reject" must change
//     nothing; it ends end_turn;
//  3. a second prompt in the same session, cancelled at its first
//     permission request; it ends cancelled;
//  4. a third prompt, during whose first permission request the editor
//     goes away (closes the agent's stdin): the run must go on in the
//     engine with its approval pending, which acp_test.go checks;
//  5. a new `agenthub acp` (the editor restarted) loads the session: its
//     three prompts and what their runs did are replayed; an unknown
//     session is refused with not_found.
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const bin = env("AGENTHUB_BIN");
const workspace = env("ACP_WORKSPACE");
const outside = env("ACP_OUTSIDE");
const playbook = env("ACP_PLAYBOOK");

// Anything the SDK reports (a message that failed its validation is
// logged and dropped) fails the run.
const sdkErrors = [];
const origError = console.error;
console.error = (...args) => {
  sdkErrors.push(args.map(String).join(" "));
  origError(...args);
};

function fail(msg) {
  throw new Error(msg);
}


const updates = []; // every session/update, in order
const permissions = []; // every session/request_permission with the chosen option
let phase = "decide"; // "decide" answers per title; "cancel" cancels the prompt; "leave" never answers
let asked; // resolves with the title of the first question in phase "leave"
const leftAsked = new Promise((resolve) => (asked = resolve));
let conn;
let bogusSent = false;

const choose = (req) => {
  const title = req.toolCall.title ?? "";
  const ids = req.options.map((o) => o.optionId);
  if (title.startsWith("Create notes.txt")) {
    if (bogusSent) return "allow_once";
    bogusSent = true;
    return "hunks:7"; // a buggy or hostile client: no such option
  }
  if (title.startsWith("Create rejected.txt")) return "reject";
  if (title.startsWith("Edit story.txt")) {
    for (const id of ["hunks:1", "hunks:2"]) {
      if (!ids.includes(id)) fail(`the story.txt patch offers no ${id}: ${ids.join(", ")}`);
    }
    return "hunks:1";
  }
  if (title.startsWith("Run: echo hello")) return "reject"; // too late: approved elsewhere first
  fail(`unexpected permission request: ${title}`);
};

// approveElsewhere approves the pending approval titled title through the
// CLI, another surface of the same engine, and waits until that command
// has followed the run to its end.
const run = promisify(execFile);
async function approveElsewhere(title) {
  const { stdout } = await run(bin, ["approvals", "list", "--json"], { env: process.env });
  const pending = JSON.parse(stdout).filter((a) => a.title === title);
  if (pending.length !== 1) fail(`${pending.length} pending approvals titled ${title}`);
  await run(bin, ["approve", pending[0].approvalId], { env: process.env });
  return pending[0].approvalId;
}

class TestClient {
  async requestPermission(req) {
    const entry = {
      phase,
      title: req.toolCall.title,
      kind: req.toolCall.kind,
      toolCallId: req.toolCall.toolCallId,
      options: req.options.map((o) => ({ id: o.optionId, kind: o.kind, name: o.name })),
      content: req.toolCall.content ?? [],
    };
    permissions.push(entry);
    if (phase === "leave") {
      entry.chosen = "none: the editor went away";
      asked(req.toolCall.title);
      return new Promise(() => {});
    }
    if (phase === "cancel") {
      // What an editor does when the user presses stop while a dialog is
      // open: cancel the turn, and answer the open request "cancelled".
      await conn.cancel({ sessionId: req.sessionId });
      entry.chosen = "cancelled";
      return { outcome: { outcome: "cancelled" } };
    }
    entry.chosen = choose(req);
    if (req.toolCall.title === "Run: echo hello") entry.approvedElsewhere = await approveElsewhere(req.toolCall.title);
    return { outcome: { outcome: "selected", optionId: entry.chosen } };
  }
  async sessionUpdate(n) {
    updates.push({ phase, ...n.update });
  }
  async writeTextFile() {
    fail("agenthub acp must not write through the editor");
  }
  async readTextFile() {
    fail("agenthub acp must not read through the editor");
  }
}

// start runs `agenthub acp` as an editor does and connects to it.
function start() {
  const child = spawn(bin, ["acp", "--playbook", playbook], { stdio: ["pipe", "pipe", "inherit"], env: process.env });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  conn = new acp.ClientSideConnection(
    () => new TestClient(),
    acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
  );
  return { child, exited };
}

const initialize = () =>
  conn.initialize({
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "agenthub-acp-test", version: "1" },
  });

const summary = {};
let { child, exited } = start();
try {
  const init = await initialize();
  summary.agentInfo = init.agentInfo;
  summary.loadSession = init.agentCapabilities?.loadSession;
  summary.protocolVersion = init.protocolVersion;

  // 1. Not an allowlisted workspace: a clear error, code and next step.
  try {
    await conn.newSession({ cwd: outside, mcpServers: [] });
    fail("session/new on a directory outside the allowlist succeeded");
  } catch (err) {
    if (!(err instanceof acp.RequestError) && err?.code === undefined) throw err;
    summary.outsideError = { code: err.code, message: err.message, data: err.data };
  }

  const { sessionId } = await conn.newSession({ cwd: workspace, mcpServers: [] });
  summary.sessionId = sessionId;

  // 2. Approve, reject, approve part, approve.
  phase = "decide";
  const first = await conn.prompt({ sessionId, prompt: [{ type: "text", text: "write the notes" }] });
  summary.first = { stopReason: first.stopReason, meta: first._meta };

  // 3. Cancel at the first question.
  phase = "cancel";
  const second = await conn.prompt({ sessionId, prompt: [{ type: "text", text: "write them again" }] });
  summary.second = { stopReason: second.stopReason, meta: second._meta };

  // 4. Go away while a question is open.
  phase = "leave";
  const third = conn
    .prompt({ sessionId, prompt: [{ type: "text", text: "and once more" }] })
    .then((r) => ({ stopReason: r.stopReason }), (err) => ({ error: String(err?.message ?? err) }));
  summary.leftAt = await leftAsked;
  child.stdin.end();
  summary.third = await third;
  summary.exit = await exited;

  // 5. The editor restarted: load the session.
  ({ child, exited } = start());
  await initialize();
  phase = "load";
  await conn.loadSession({ sessionId, cwd: workspace, mcpServers: [] });
  try {
    await conn.loadSession({ sessionId: "acp_000000000000000000000000", cwd: workspace, mcpServers: [] });
    fail("session/load of a session that never existed succeeded");
  } catch (err) {
    if (err?.code === undefined) throw err;
    summary.unknownLoadError = { code: err.code, data: err.data };
  }
} finally {
  child.stdin.end();
}
summary.loadExit = await exited;
summary.permissions = permissions;
summary.updates = updates;
summary.sdkErrors = sdkErrors;
process.stdout.write(JSON.stringify(summary) + "\n");
