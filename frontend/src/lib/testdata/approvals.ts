// Approval requests shaped exactly as the demo profile's (captured from
// `agenthub serve`), for unit tests.
import type { ApprovalRequest } from '../api';

const unified = `diff --git a/NOTES.md b/NOTES.md
--- a/NOTES.md
+++ b/NOTES.md
@@ -1,3 +1,3 @@
 # Notes
-old line
+new line
 keep
@@ -10,2 +10,3 @@
 ten
+eleven
 twelve
`;

export const patchRequest: ApprovalRequest = {
  approvalId: 'apr_patch',
  runId: 'run_1',
  toolCallId: 'call_s3_1',
  kind: 'patch',
  title: 'Edit NOTES.md',
  preview: {
    tool: 'write_file',
    path: 'NOTES.md',
    operation: 'modify',
    unified,
    diff: {
      status: 'modified',
      old: { path: 'NOTES.md', exists: true, size: 40, lines: 12 },
      new: { path: 'NOTES.md', exists: true, size: 47, lines: 13 },
      hunks: [
        {
          oldStart: 1,
          oldLines: 3,
          newStart: 1,
          newLines: 3,
          lines: [
            { op: 'context', old: 1, new: 1, text: '# Notes', eol: 'lf' },
            { op: 'delete', old: 2, text: 'old line', eol: 'lf', spans: [{ start: 0, end: 3 }] },
            { op: 'add', new: 2, text: 'new line', eol: 'lf', spans: [{ start: 0, end: 3 }] },
            { op: 'context', old: 3, new: 3, text: 'keep', eol: 'lf' },
          ],
        },
        {
          oldStart: 10,
          oldLines: 2,
          newStart: 10,
          newLines: 3,
          lines: [
            { op: 'context', old: 10, new: 10, text: 'ten', eol: 'lf' },
            { op: 'add', new: 11, text: 'eleven', eol: 'lf' },
            { op: 'context', old: 11, new: 12, text: 'twelve', eol: 'lf' },
          ],
        },
      ],
      stats: { added: 2, deleted: 1 },
    },
  },
  risk: 'medium',
  subject: { kind: 'patch', path: 'NOTES.md' },
  subjectHash: 'sha256:patchpatch',
  policyTrace: [{ rule: 'default:patch', pattern: '', matched: true, verdict: 'ask' }],
  enforcement: 'enforced',
  decisionsOffered: ['approve_once', 'approve_for_run', 'always_allow_workspace', 'reject_and_tell', 'reject_and_stop'],
  status: 'pending',
  createdAt: '2026-01-01T00:00:10.000Z',
};

export const shellRequest: ApprovalRequest = {
  approvalId: 'apr_shell',
  runId: 'run_1',
  toolCallId: 'call_s4_1',
  kind: 'shell',
  title: 'Run: git status --short',
  preview: { command: 'git status --short', shell: '/bin/sh -c', cwd: '.', env: ['HOME', 'PATH'], timeoutSeconds: 120 },
  risk: 'medium',
  subject: { kind: 'shell', command: 'git status --short', cwd: '.' },
  subjectHash: 'sha256:shellshell',
  policyTrace: [
    { rule: 'allow-git-log', pattern: 'git log *', matched: false },
    { rule: 'default:shell', pattern: '', matched: true, verdict: 'ask' },
  ],
  enforcement: 'enforced',
  decisionsOffered: ['approve_once', 'approve_for_run', 'always_allow_workspace', 'reject_and_tell', 'reject_and_stop'],
  status: 'pending',
  createdAt: '2026-01-01T00:00:20.000Z',
};

export const pushRequest: ApprovalRequest = {
  ...shellRequest,
  approvalId: 'apr_push',
  kind: 'push',
  title: 'Push main to origin',
  preview: { remote: 'origin', branch: 'main' },
  risk: 'high',
  subjectHash: 'sha256:pushpush',
  decisionsOffered: ['approve_once', 'reject_and_tell', 'reject_and_stop'],
};

export const readRequest: ApprovalRequest = {
  ...shellRequest,
  approvalId: 'apr_read',
  kind: 'read',
  title: 'Read ../secrets.txt',
  preview: { path: '../secrets.txt' },
  subjectHash: 'sha256:readread',
};
