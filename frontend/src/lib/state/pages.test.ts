import { describe, expect, it } from 'vitest';
import { pageHash, parsePage, type Page } from './pages';

describe('pages', () => {
  it('reads the settings and audit addresses, and nothing else', () => {
    expect(parsePage('#/settings')).toEqual({ name: 'settings' });
    expect(parsePage('#/audit')).toEqual({ name: 'audit' });
    expect(parsePage('#/audit/run/run_1')).toEqual({ name: 'audit', runId: 'run_1' });
    expect(parsePage('#/audit/run/')).toEqual({ name: 'audit' });
    expect(parsePage('#/audit/run/%E0%A4%A')).toEqual({ name: 'audit', runId: '%E0%A4%A' });
    expect(parsePage('#/artifacts')).toEqual({ name: 'artifacts' });
    expect(parsePage('#/artifacts/run/run_1')).toEqual({ name: 'artifacts', runId: 'run_1' });
    for (const h of ['', '#/', '#/run/run_1', '#/new', '#/inbox', '#/settingsx', '#/artifactsx']) expect(parsePage(h), h).toBeNull();
  });

  it('round-trips', () => {
    const pages: Page[] = [{ name: 'settings' }, { name: 'audit' }, { name: 'audit', runId: 'run/with slash' }, { name: 'artifacts' }, { name: 'artifacts', runId: 'run_1' }];
    for (const p of pages) expect(parsePage(pageHash(p))).toEqual(p);
  });
});
