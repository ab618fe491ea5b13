// Drives AgentHub's AG-UI endpoint with the official AG-UI client
// (@ag-ui/client HttpAgent, whose runAgent applies the protocol's schemas
// and its event verifier; every stream is verified again with verifyEvents
// and parsed with @ag-ui/core's EventSchemas) and its AI SDK v6 endpoint
// with the ai package (DefaultChatTransport, readUIMessageStream,
// validateUIMessages). Run by protocols_test.go, which starts `agenthub
// serve`; prints one JSON summary line, and exits non-zero on the first
// failed expectation.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpAgent, verifyEvents } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import {
  DefaultChatTransport,
  readUIMessageStream,
  validateUIMessages,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from 'ai';
import { from, lastValueFrom, toArray } from 'rxjs';

const { AGENTHUB_URL: base, AGENTHUB_TOKEN: token, WORKSPACE_ID: workspaceId, WORKSPACE_DIR: wsDir, PROFILE: profile } =
  process.env;
for (const [k, v] of Object.entries({ base, token, workspaceId, wsDir, profile })) assert.ok(v, `missing ${k}`);
const auth = { Authorization: `Bearer ${token}` };

// Any warning the clients print (a field they stripped, an event they
// bridged) is a conformance failure, not noise.
const warnings = [];
const warn = console.warn;
console.warn = (...args) => {
  warnings.push(args.map(String).join(' '));
  warn(...args);
};

const summary = { agui: {}, aisdk: {}, warnings };
const notes = () => readFileSync(join(wsDir, 'notes.txt'), 'utf8').split('\n');

async function api(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function waitFor(what, fn) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// ---- AG-UI ----------------------------------------------------------------

/** Runs the agent once and returns its events, each checked by the schemas
 * and, as a stream, by the verifier (a stream that was cut is not whole,
 * so only its events are checked). */
async function aguiRun(agent, params) {
  const events = [];
  let error = null;
  try {
    await agent.runAgent(params, { onEvent: ({ event }) => events.push(event) });
  } catch (e) {
    error = e;
  }
  for (const e of events) {
    const r = EventSchemas.safeParse(e);
    assert.ok(r.success, `AG-UI schema refused ${JSON.stringify(e)}: ${r.error}`);
  }
  if (!agent.cut) await lastValueFrom(from(events).pipe(verifyEvents(), toArray()));
  return { events, error };
}

/** A fetch whose response is cut, as a network drop would, right after the
 * first SSE message that matches cutAfter: the client never sees what the
 * server sent after it, and the connection is closed. */
function cuttingFetch(cutAfter) {
  return async (url, init) => {
    const abort = new AbortController();
    init.signal?.addEventListener('abort', () => abort.abort());
    const res = await fetch(url, { ...init, signal: abort.signal });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buf = '';
    const body = new ReadableStream({
      async pull(ctl) {
        const { value, done } = await reader.read();
        if (done) return ctl.close();
        buf += decoder.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const msg = buf.slice(0, i + 2);
          buf = buf.slice(i + 2);
          ctl.enqueue(encoder.encode(msg));
          if (cutAfter(msg)) {
            abort.abort(); // the server sees the connection close
            ctl.close();
            return;
          }
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

const seqOf = (e) => e.metadata?.agenthub?.sequence;
const finished = (events) => events.find((e) => e.type === 'RUN_FINISHED');

function newAgent(threadId, cutAfter) {
  const agent = new HttpAgent({ url: `${base}/agui`, headers: auth, threadId,
    ...(cutAfter && { fetch: cuttingFetch(cutAfter) }) });
  agent.cut = Boolean(cutAfter);
  return agent;
}

async function aguiFullRun() {
  const agent = newAgent();
  agent.addMessage({ id: 'u1', role: 'user', content: 'Edit notes.txt, then show the status.' });
  const props = { forwardedProps: { agenthub: { workspaceId, profile } } };
  const first = await aguiRun(agent, props);
  assert.equal(first.error, null, String(first.error));
  const types = first.events.map((e) => e.type);
  for (const t of ['RUN_STARTED', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END',
    'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'STATE_SNAPSHOT', 'CUSTOM', 'RUN_FINISHED']) {
    assert.ok(types.includes(t), `first stream lacks ${t}: ${types}`);
  }
  const fin = finished(first.events);
  assert.equal(fin.outcome.type, 'interrupt');
  const [intr] = fin.outcome.interrupts;
  const hub = intr.metadata.agenthub;
  assert.equal(intr.id, hub.approvalId);
  assert.equal(hub.kind, 'patch');
  assert.equal(hub.path, 'notes.txt');
  assert.equal(hub.hunks, 2);
  assert.match(hub.diff, /^@@ -1,4 \+1,4 @@/m);
  assert.deepEqual(intr.responseSchema.properties.subjectHash, { type: 'string', const: hub.subjectHash });
  assert.ok(intr.responseSchema.properties.decision.enum.includes('approve_once'));
  assert.equal(intr.responseSchema.properties.hunks.items.properties.index.maximum, 1);
  assert.deepEqual(agent.pendingInterrupts.map((i) => i.id), [intr.id]);
  summary.agui.runId = hub.runId;

  // A stale hash is refused and nothing is applied: the file is unchanged
  // and the approval still pending.
  const stale = await aguiRun(agent, {
    resume: [{ interruptId: intr.id, status: 'resolved', payload: { decision: 'approve_once', subjectHash: 'sha256:' + '0'.repeat(64) } }],
  });
  assert.ok(stale.error, 'a stale hash was accepted');
  assert.match(String(stale.error), /409/);
  assert.equal(notes()[0], 'line 1');
  const pending = await api('GET', `/api/approvals?runId=${hub.runId}`);
  assert.deepEqual(pending.body.map((a) => a.approvalId), [intr.id]);
  summary.agui.staleRefused = String(stale.error);

  // Partial approval: only the second hunk (line 40).
  const second = await aguiRun(agent, {
    resume: [{ interruptId: intr.id, status: 'resolved',
      payload: { decision: 'approve_once', subjectHash: hub.subjectHash, hunks: [{ path: 'notes.txt', index: 1 }] } }],
  });
  assert.equal(second.error, null, String(second.error));
  const st = second.events.map((e) => e.type);
  assert.ok(st.includes('TOOL_CALL_RESULT'), `resume stream lacks the tool result: ${st}`);
  assert.ok(second.events.some((e) => e.type === 'CUSTOM' && e.name === 'agenthub.run.patch.applied'));
  assert.ok(second.events.some((e) => e.type === 'CUSTOM' && e.name === 'agenthub.run.approval.resolved'));
  const lines = notes();
  assert.equal(lines[0], 'line 1');
  assert.equal(lines[39], 'line 40 changed');
  const cmd = finished(second.events).outcome.interrupts[0];
  assert.equal(cmd.metadata.agenthub.kind, 'shell');
  assert.equal(cmd.metadata.agenthub.command, 'git status --short');
  assert.ok(!cmd.responseSchema.properties.hunks, 'a command offers no hunk selection');

  // Rejection of the command: the run goes on and completes.
  const third = await aguiRun(agent, {
    resume: [{ interruptId: cmd.id, status: 'resolved',
      payload: { decision: 'reject_and_tell', subjectHash: cmd.metadata.agenthub.subjectHash, reason: 'not now' } }],
  });
  assert.equal(third.error, null, String(third.error));
  const result = third.events.find((e) => e.type === 'TOOL_CALL_RESULT');
  assert.match(result.content, /rejected by the reviewer: not now/);
  const end = finished(third.events);
  assert.equal(end.outcome.type, 'success');
  assert.equal(end.result.agenthubRunId, hub.runId);
  assert.equal(agent.pendingInterrupts.length, 0);
  const run = await api('GET', `/api/runs/${hub.runId}`);
  assert.equal(run.body.state, 'Completed');
  summary.agui.full = { streams: 3, events: first.events.length + second.events.length + third.events.length };
}

// A dropped stream: the resume POST's stream is cut after the tool result,
// then a new stream reattaches from the last sequence it saw. Together
// they carry every event exactly once.
async function aguiDrop() {
  const agent = newAgent(undefined, (msg) => msg.includes('"TOOL_CALL_RESULT"'));
  agent.addMessage({ id: 'u1', role: 'user', content: 'Edit notes.txt again.' });
  const first = await aguiRun(agent, { forwardedProps: { agenthub: { workspaceId, profile } } });
  const intr = finished(first.events).outcome.interrupts[0];
  const runId = intr.metadata.agenthub.runId;
  const cut = await aguiRun(
    agent,
    { resume: [{ interruptId: intr.id, status: 'resolved',
      payload: { decision: 'reject_and_tell', subjectHash: intr.metadata.agenthub.subjectHash } }] },
  );
  assert.ok(!finished(cut.events), 'the cut stream was not cut');
  assert.equal(cut.events.at(-1).type, 'TOOL_CALL_RESULT');
  const seen = cut.events.map(seqOf).filter(Boolean);
  const after = Math.max(...seen);
  // The run went on without a listener: it waits at the command.
  await waitFor('the command approval', async () => (await api('GET', `/api/approvals?runId=${runId}`)).body.length === 1);
  const again = newAgent(agent.threadId);
  const back = await aguiRun(again, { forwardedProps: { agenthub: { runId, after } } });
  assert.equal(back.error, null, String(back.error));
  const fin = finished(back.events);
  assert.equal(fin.outcome.type, 'interrupt');
  // The reattached stream opens with the conversation before its cursor,
  // which the client takes as its messages.
  const snap = back.events.find((e) => e.type === 'MESSAGES_SNAPSHOT');
  assert.ok(snap, 'no MESSAGES_SNAPSHOT on reattach');
  assert.deepEqual(snap.messages.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.equal(snap.messages[0].content, 'Edit notes.txt again.');
  assert.equal(snap.messages[1].toolCalls[0].function.name, 'write_file');
  assert.match(snap.messages[2].content, /rejected by the reviewer/);
  assert.ok(again.messages.some((m) => m.role === 'tool' && m.toolCallId === snap.messages[2].toolCallId));
  const got = new Set([...seen, ...back.events.map(seqOf).filter(Boolean)]);
  const all = (await api('GET', `/api/runs/${runId}/events?after=${intr.metadata.cursor}`)).body;
  const carried = all.filter((e) => !['run.status.changed', 'run.checkpoint.created'].includes(e.type)
    && e.sequence <= fin.metadata.agenthub.sequence);
  const missing = carried.filter((e) => !got.has(e.sequence)).map((e) => `${e.sequence} ${e.type}`);
  assert.deepEqual(missing, [], 'events lost between the streams');
  const dup = back.events.filter((e) => seen.includes(seqOf(e)) && e.type !== 'RUN_FINISHED');
  assert.deepEqual(dup, [], 'events delivered twice');
  summary.agui.drop = { cutAt: after, reattached: back.events.length };

  // Cancel: the interrupt is abandoned; nothing runs and the run stops.
  const cmd = fin.outcome.interrupts[0];
  const cancelled = await aguiRun(again, { resume: [{ interruptId: cmd.id, status: 'cancelled' }] });
  assert.equal(cancelled.error, null, String(cancelled.error));
  const last = cancelled.events.at(-1);
  assert.ok(last.type === 'RUN_FINISHED' || last.type === 'RUN_ERROR', `cancel ended with ${last.type}`);
  const run = await waitFor('the run to end', async () => {
    const r = await api('GET', `/api/runs/${runId}`);
    return ['Completed', 'Failed', 'Cancelled'].includes(r.body.state) && r.body;
  });
  summary.agui.cancel = { last: last.type, outcome: last.outcome?.type, code: last.code, state: run.state };
}

// ---- AI SDK v6 --------------------------------------------------------------

const transport = new DefaultChatTransport({ api: `${base}/aisdk/chat`, headers: auth });

/** One POST: the SDK's transport parses and validates every chunk; the
 * reader folds them into the assistant message. */
async function chatTurn(chatId, messages, body, { abortAfter } = {}) {
  const abort = new AbortController();
  const last = messages.at(-1);
  const stream = await transport.sendMessages({
    chatId, messages, trigger: 'submit-message', messageId: undefined, abortSignal: abort.signal, body,
  });
  let message;
  const chunks = [];
  let error = null;
  const tap = stream.pipeThrough(new TransformStream({
    transform(chunk, ctl) {
      chunks.push(chunk);
      ctl.enqueue(chunk);
      if (abortAfter && abortAfter(chunk)) {
        // The connection drops here: nothing after this chunk arrives. The
        // reader's side closes first, so the chunks already passed on are
        // read; the abort then errors only the cut connection (the other
        // order errored the pipe and could drop this very chunk).
        ctl.terminate();
        abort.abort();
      }
    },
  }));
  try {
    for await (const m of readUIMessageStream({
      message: last.role === 'assistant' ? structuredClone(last) : undefined,
      stream: tap,
      terminateOnError: true,
      onError: (e) => { error = e; },
    })) message = m;
  } catch (e) {
    error = e;
  }
  return { message, chunks, error };
}

const replaceLast = (messages, m) => (messages.at(-1).role === 'assistant' ? [...messages.slice(0, -1), m] : [...messages, m]);
const approvalPart = (m) => m.parts.findLast((p) => p.state === 'approval-requested');

async function aisdkRun() {
  // The AG-UI runs changed line 40: the file starts over, so the playbook's
  // write is two hunks again.
  execFileSync('git', ['checkout', '--', 'notes.txt'], { cwd: wsDir });
  const chatId = 'chat-1';
  let messages = [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Edit notes.txt, then show the status.' }] }];
  const t1 = await chatTurn(chatId, messages, { agenthub: { workspaceId, profile } });
  assert.equal(t1.error, null, String(t1.error));
  const finish1 = t1.chunks.at(-1);
  assert.deepEqual([finish1.type, finish1.finishReason], ['finish', 'tool-calls']);
  messages = replaceLast(messages, t1.message);
  await validateUIMessages({ messages });
  const runId = t1.message.metadata.agenthub.runId;
  summary.aisdk.runId = runId;
  assert.ok(t1.message.parts.some((p) => p.type === 'text' && p.text === 'I will edit notes.txt.'));
  const part = approvalPart(t1.message);
  assert.equal(part.type, 'dynamic-tool');
  assert.equal(part.toolName, 'write_file');
  const data = t1.message.parts.find((p) => p.type === 'data-agenthub-approval').data;
  assert.equal(data.hunks, 2);
  assert.equal(part.approval.id, `${data.approvalId}#${data.subjectHash}`);

  // The next POST answers: the SDK's own approval response (approved) and,
  // for the hunk selection, agenthub.decisions; only hunk 0 (line 1).
  part.state = 'approval-responded';
  part.approval = { ...part.approval, approved: true };
  assert.ok(lastAssistantMessageIsCompleteWithApprovalResponses({ messages }));
  const t2 = await chatTurn(chatId, messages, {
    agenthub: { decisions: [{ approvalId: part.approval.id, decision: 'approve_once', subjectHash: data.subjectHash,
      hunks: [{ path: 'notes.txt', index: 0 }] }] },
  });
  assert.equal(t2.error, null, String(t2.error));
  messages = replaceLast(messages, t2.message);
  await validateUIMessages({ messages });
  const written = t2.message.parts.find((p) => p.toolCallId === part.toolCallId);
  assert.equal(written.state, 'output-available');
  assert.match(written.output, /approved 1 of 2 hunks/);
  assert.ok(t2.message.parts.some((p) => p.type === 'data-agenthub-run-patch-applied'));
  assert.equal(notes()[0], 'line 1 changed');
  assert.equal(notes()[39], 'line 40');
  assert.equal(t2.chunks.at(-1).finishReason, 'tool-calls');

  // A stale approval token is refused (409) and the command does not run.
  const cmd = approvalPart(t2.message);
  assert.equal(cmd.input.command, 'git status --short');
  const staleMsgs = structuredClone(messages);
  const staleCmd = approvalPart(staleMsgs.at(-1));
  staleCmd.state = 'approval-responded';
  staleCmd.approval = { id: staleCmd.approval.id.replace(/#.*/, '#sha256:' + 'f'.repeat(64)), approved: true };
  const stale = await chatTurn(chatId, staleMsgs, {}).catch((e) => ({ error: e }));
  assert.ok(stale.error, 'a stale approval was accepted');
  assert.match(String(stale.error.message ?? stale.error), /approval_stale/);
  assert.equal((await api('GET', `/api/approvals?runId=${runId}`)).body.length, 1);
  summary.aisdk.staleRefused = String(stale.error.message ?? stale.error);

  // Denied with the SDK's own response: reject_and_tell, the run goes on;
  // the stream is cut after the denial and resumed from the cursor the
  // message metadata carries.
  cmd.state = 'approval-responded';
  cmd.approval = { ...cmd.approval, approved: false, reason: 'not now' };
  const cut = await chatTurn(chatId, messages, {}, { abortAfter: (c) => c.type === 'tool-output-denied' });
  const cutMsg = cut.message;
  assert.equal(cutMsg.parts.find((p) => p.toolCallId === cmd.toolCallId).state, 'output-denied');
  assert.ok(!cut.chunks.some((c) => c.type === 'finish'), 'the cut stream was not cut');
  messages = replaceLast(messages, cutMsg);
  await waitFor('the run to complete', async () => (await api('GET', `/api/runs/${runId}`)).body.state === 'Completed');
  const t3 = await chatTurn(chatId, messages, {});
  assert.equal(t3.error, null, String(t3.error));
  messages = replaceLast(messages, t3.message);
  await validateUIMessages({ messages });
  assert.deepEqual([t3.chunks.at(-1).type, t3.chunks.at(-1).finishReason], ['finish', 'stop']);
  const texts = t3.message.parts.filter((p) => p.type === 'text').map((p) => p.text);
  assert.deepEqual(texts, ['I will edit notes.txt.', 'Now the status.', 'Done.'], 'text lost or doubled across the streams');
  summary.aisdk.full = { chunks: t1.chunks.length + t2.chunks.length + cut.chunks.length + t3.chunks.length, texts };

  // Cancel: a new turn in the same chat starts a run in the same session;
  // agenthub.cancel on the next POST stops it.
  messages = [...messages, { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Once more.' }] }];
  const t4 = await chatTurn(chatId, messages, { agenthub: { workspaceId, profile } });
  assert.equal(t4.chunks.at(-1).finishReason, 'tool-calls');
  const run2 = t4.message.metadata.agenthub.runId;
  assert.notEqual(run2, runId);
  const [r1, r2] = await Promise.all([api('GET', `/api/runs/${runId}`), api('GET', `/api/runs/${run2}`)]);
  assert.equal(r2.body.sessionId, r1.body.sessionId);
  messages = replaceLast(messages, t4.message);
  const t5 = await chatTurn(chatId, messages, { agenthub: { cancel: true } });
  assert.equal(t5.chunks.at(-1).type, 'abort');
  messages = replaceLast(messages, t5.message);
  await validateUIMessages({ messages });
  assert.equal((await api('GET', `/api/runs/${run2}`)).body.state, 'Cancelled');
  summary.aisdk.cancel = { runId: run2, last: t5.chunks.at(-1).type };
}

let done = false;
process.on('exit', (code) => {
  // A promise a client never settles leaves nothing to run: node exits 0
  // without a word. That is a failure too.
  if (!done && code === 0) {
    console.log(JSON.stringify({ ...summary, failure: `stopped in ${summary.step}: a promise never settled` }));
    process.exitCode = 1;
  }
});

async function main() {
  for (const [name, step] of Object.entries({ aguiFullRun, aguiDrop, aisdkRun })) {
    summary.step = name;
    console.error(`drive.mjs: ${name}`);
    await step();
  }
  done = true;
  assert.deepEqual(warnings, [], 'the clients warned');
  console.log(JSON.stringify(summary));
}

main().catch((e) => {
  console.error(e);
  console.log(JSON.stringify({ ...summary, failure: String(e?.stack ?? e) }));
  process.exit(1);
});
