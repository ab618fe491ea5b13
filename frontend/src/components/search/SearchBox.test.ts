// The search dialog over the memory api plus a history facade: Ctrl+K opens
// it, typing searches with the chosen filters (the latest answer wins), the
// matched words are marked, Enter opens the best result at its event, and
// Escape closes it.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import SearchBox from './SearchBox.svelte';
import { API_CONTEXT_KEY, type HistoryAPI, type SearchRequest, type SearchResult } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';

const hit = (runId: string, sequence: number, words: string): SearchResult => ({
  runId,
  sequence,
  type: 'run.tool.result',
  timestamp: '2026-11-25T07:00:00.000Z',
  snippet: [{ text: 'found ' }, { text: words, match: true }, { text: ' in main.go' }],
  task: `task of ${runId}`,
  state: 'Completed',
  workspaceId: 'ws_1',
  workspaceName: 'proj',
  profile: 'demo',
  runtime: 'native',
  createdAt: '2026-11-25T06:00:00.000Z',
});

function setup() {
  const asked: SearchRequest[] = [];
  const history: HistoryAPI = {
    search: async (req) => {
      asked.push(req);
      return req.query.startsWith('narw') ? [hit('run_aaaaaa', 7, 'narwhal'), hit('run_bbbbbb', 3, 'narwhal')] : [];
    },
    exportRun: async () => ({ saved: true, file: 'x.zip', events: 1 }),
  };
  const onOpen = vi.fn();
  const api = { ...createMemoryApi(), history };
  render(SearchBox, {
    props: { workspaces: [{ id: 'ws_1', name: 'proj', displayPath: '~/proj', addedAt: '' }], onOpen },
    context: new Map([[API_CONTEXT_KEY, api]]),
  });
  return { asked, onOpen };
}

describe('SearchBox', () => {
  it('opens with Ctrl+K, searches with the filters, marks the match and opens the run at its event', async () => {
    const { asked, onOpen } = setup();
    expect(screen.queryByTestId('search-dialog')).toBeNull();
    await fireEvent.keyDown(window, { key: 'k', ctrlKey: true });
    const input = await screen.findByTestId('search-input');
    await waitFor(() => expect(document.activeElement).toBe(input));
    await fireEvent.change(screen.getByTestId('search-status'), { target: { value: 'Completed' } });
    await fireEvent.input(screen.getByTestId('search-file'), { target: { value: 'src/main.go' } });
    await fireEvent.input(screen.getByTestId('search-from'), { target: { value: '2026-11-01' } });
    await fireEvent.input(input, { target: { value: 'narwh' } });
    const hits = await screen.findAllByTestId('search-hit', {}, { timeout: 30_000 });
    expect(hits).toHaveLength(2);
    expect(hits[0]!.querySelector('mark')?.textContent).toBe('narwhal');
    expect(hits[0]).toHaveTextContent('task of run_aaaaaa');
    expect(asked.at(-1)).toMatchObject({
      query: 'narwh',
      status: ['Completed'],
      changedFile: 'src/main.go',
      from: new Date('2026-11-01T00:00').toISOString(),
    });
    await fireEvent.keyDown(input, { key: 'ArrowDown' });
    await fireEvent.keyDown(input, { key: 'Enter' });
    expect(onOpen).toHaveBeenCalledWith('run_bbbbbb', 3);
    expect(screen.queryByTestId('search-dialog')).toBeNull();
  });

  it('says when nothing matches, and Escape closes', async () => {
    setup();
    await fireEvent.click(screen.getByTestId('search-open'));
    const input = await screen.findByTestId('search-input');
    await fireEvent.input(input, { target: { value: 'nothing' } });
    await screen.findByTestId('search-empty', {}, { timeout: 30_000 });
    await fireEvent.keyDown(input, { key: 'Escape' });
    expect(screen.queryByTestId('search-dialog')).toBeNull();
  });
});
