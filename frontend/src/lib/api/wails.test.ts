import { describe, expect, it } from 'vitest';
import { ApiError } from './error';
import { createWailsApi, EVENTS_CHANNEL, OPEN_CHANNEL } from './wails';
import type { RunEvent } from './types';

describe('Wails transport', () => {
  it('calls window.go.api.<Facade>.<Method> with the arguments', async () => {
    const seen: unknown[][] = [];
    const api = createWailsApi({
      go: {
        api: {
          WorkspacesAPI: { Add: async (...a: unknown[]) => (seen.push(['Add', ...a]), { id: 'ws_1' }), Remove: async () => null },
          RunsAPI: { Events: async (...a: unknown[]) => (seen.push(['Events', ...a]), null) },
          SettingsAPI: { Set: async (...a: unknown[]) => (seen.push(['Set', ...a]), a[0]) },
        },
      },
    });
    expect(await api.workspaces.add('/tmp/x')).toEqual({ id: 'ws_1' });
    expect(await api.workspaces.remove('ws_1')).toBeUndefined();
    expect(await api.runs.events('run_1', 5, 100)).toEqual([]); // Go nil slice → null → []
    await api.settings.set({ theme: 'dark', language: 'zh-CN' });
    expect(seen).toEqual([
      ['Add', '/tmp/x'],
      ['Events', 'run_1', 5, 100],
      ['Set', { theme: 'dark', language: 'zh-CN' }],
    ]);
  });

  it('maps a rejection to ApiError', async () => {
    const api = createWailsApi({
      go: {
        api: {
          WorkspacesAPI: {
            Add: async () => {
              throw JSON.stringify({ code: 'invalid_input', message: 'not a folder', next: 'Correct the input and try again.' });
            },
          },
        },
      },
    });
    const err = await api.workspaces.add('/nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'invalid_input', message: 'not a folder', next: 'Correct the input and try again.' });
  });

  it('reports a missing binding with a code and a next step', async () => {
    const err = await createWailsApi({ go: { api: {} } }).settings.get().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'internal_error' });
    expect((err as ApiError).next).not.toBe('');
  });

  it('takes the open request once the window says one waits', async () => {
    const handlers = new Map<string, (...d: unknown[]) => void>();
    let waiting: { approvalId?: string } | null = null;
    const api = createWailsApi({
      go: { api: { SystemAPI: { TakeOpen: async () => ((w) => ((waiting = null), w))(waiting) } } },
      runtime: {
        EventsOn(name, cb) {
          handlers.set(name, cb);
          return () => handlers.delete(name);
        },
      },
    });
    expect(await api.system.takeOpen!()).toEqual({}); // Go's zero value may come as null
    const taken: (string | undefined)[] = [];
    const off = api.system.onOpen!(() => void api.system.takeOpen!().then((r) => taken.push(r.approvalId)));
    waiting = { approvalId: 'apr_1' };
    handlers.get(OPEN_CHANNEL)?.();
    await new Promise((r) => setTimeout(r, 0));
    expect(taken).toEqual(['apr_1']);
    off();
    expect(handlers.has(OPEN_CHANNEL)).toBe(false);
  });

  it('subscribes to agenthub:events batches and unsubscribes', () => {
    const handlers = new Map<string, (...d: unknown[]) => void>();
    const api = createWailsApi({
      runtime: {
        EventsOn(name, cb) {
          handlers.set(name, cb);
          return () => handlers.delete(name);
        },
      },
    });
    const got: RunEvent[][] = [];
    const off = api.events.subscribe({ onEvents: (b) => got.push(b) });
    const ev = { runId: 'run_1', sequence: 1 } as RunEvent;
    handlers.get(EVENTS_CHANNEL)!([ev]);
    handlers.get(EVENTS_CHANNEL)!([]); // empty batches are not delivered
    expect(got).toEqual([[ev]]);
    off();
    expect(handlers.has(EVENTS_CHANNEL)).toBe(false);
  });

  it('binds profiles, resume, policy and the audit export to their facades', async () => {
    const seen: unknown[][] = [];
    const api = createWailsApi({
      go: {
        api: {
          RunsAPI: {
            Profiles: async () => (seen.push(['Profiles']), null),
            Resume: async (...a: unknown[]) => (seen.push(['Resume', ...a]), { id: 'run_2' }),
          },
          PolicyAPI: { Get: async (...a: unknown[]) => (seen.push(['Get', ...a]), { source: 'file' }) },
          AuditFileAPI: { Save: async () => (seen.push(['Save']), { saved: false, entries: 3, verified: true, head: 'h' }) },
        },
      },
    });
    expect(await api.runs.profiles()).toEqual([]); // Go nil slice → null → []
    expect(await api.workspaces.policy('ws_1')).toEqual({ source: 'file' });
    expect(await api.audit.export()).toMatchObject({ saved: false, entries: 3 });
    expect(await api.runs.resume('run_1')).toEqual({ id: 'run_2' });
    expect(seen).toEqual([['Profiles'], ['Get', 'ws_1'], ['Save'], ['Resume', 'run_1']]);
  });
});
