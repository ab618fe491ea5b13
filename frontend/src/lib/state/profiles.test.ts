import { describe, expect, it } from 'vitest';
import { ApiError, type ProfileInfo } from '../api';
import { createMemoryApi } from '../api/memory';
import { setLocale } from '../i18n';
import { canResume, defaultProfile, profileOptionLabel, ProfilesState } from './profiles.svelte';

const demo: ProfileInfo = { name: 'demo', runtime: 'script', scripted: true, default: true };
const playbook: ProfileInfo = { name: 'playbook:ab12', runtime: 'script', scripted: true, default: false };
const qwen: ProfileInfo = { name: 'local-qwen', runtime: 'native', provider: 'openai', model: 'qwen3:8b', scripted: false, default: false };
const claude: ProfileInfo = {
  name: 'cc',
  runtime: 'claude',
  provider: 'anthropic',
  model: 'sonnet',
  scripted: false,
  default: false,
  capabilities: {
    gating: { write: 'enforced', shell: 'enforced' },
    streaming: true,
    steer: false,
    durableContinuation: false,
    partialApply: true,
    usage: true,
    scripted: false,
  },
};

describe('profiles', () => {
  it('resume: the built-in loop and playbooks can, an external runtime only if it declares it', () => {
    expect(canResume(demo)).toBe(true);
    expect(canResume(qwen)).toBe(true);
    expect(canResume(claude)).toBe(false);
    expect(canResume({ ...claude, capabilities: { ...claude.capabilities!, durableContinuation: true } })).toBe(true);
    expect(canResume({ ...qwen, runtime: 'something-else' })).toBe(false);
    expect(canResume(undefined)).toBe(false);
  });

  it('the default is the profile marked default, else the first', () => {
    expect(defaultProfile([qwen, demo])?.name).toBe('demo');
    expect(defaultProfile([qwen, claude])?.name).toBe('local-qwen');
    expect(defaultProfile([])).toBeUndefined();
  });

  it('a scripted profile is labelled scripted and never names a model', () => {
    setLocale('en');
    expect(profileOptionLabel(demo)).toBe('Demo — scripted playbook, no AI model');
    expect(profileOptionLabel({ ...playbook, model: 'gpt-4o' })).toBe('playbook:ab12 — scripted playbook, no AI model');
    expect(profileOptionLabel(qwen)).toBe('local-qwen — openai · qwen3:8b');
    expect(profileOptionLabel(claude)).toBe('cc — Claude Code CLI · anthropic · sonnet');
    setLocale('zh-CN');
    expect(profileOptionLabel(playbook)).toMatch(/预设脚本/);
    setLocale('en');
  });

  it('loads once for concurrent callers and keeps an error for a retry', async () => {
    const api = createMemoryApi({ profiles: [demo, qwen] });
    const s = new ProfilesState(api);
    await Promise.all([s.load(), s.load()]);
    expect(api.calls.filter((c) => c.method === 'runs.profiles')).toHaveLength(1);
    expect(s.items.map((p) => p.name)).toEqual(['demo', 'local-qwen']);
    expect(s.get('local-qwen')?.model).toBe('qwen3:8b');

    const failing = createMemoryApi();
    failing.fail('runs.profiles', new ApiError({ code: 'not_ready', message: 'opening' }));
    const f = new ProfilesState(failing);
    await f.load();
    expect(f.status).toBe('error');
    await f.load();
    expect(f.status).toBe('ready');
    expect(f.items.map((p) => p.name)).toEqual(['demo']);
  });
});
