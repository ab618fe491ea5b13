// The artifacts page over an artifacts facade answering as the Go API does:
// the list with its filters, a document rendered without its script, an
// HTML preview in a frame with no sandbox permission (srcdoc is the preview
// document, never the page's source), and a screenshot pending its privacy
// review without a download until it is reviewed.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import ArtifactsView from './ArtifactsView.svelte';
import { API_CONTEXT_KEY, type Artifact, type ArtifactQuery, type ArtifactView, type ArtifactsAPI } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';

const base = { runId: 'run_1', workspaceId: 'ws_1', sha256: 'ab'.repeat(32), size: 10, producer: 'publish_artifact', createdAt: '2026-11-25T06:00:00.000Z' };
const arts: Artifact[] = [
  { ...base, artifactId: 'art_doc', kind: 'document', title: 'Report', path: 'r.md', mediaType: 'text/markdown', meta: { language: 'en' } },
  { ...base, artifactId: 'art_html', kind: 'html', title: 'Page', path: 'p.html', mediaType: 'text/html', meta: {} },
  { ...base, artifactId: 'art_shot', kind: 'screenshot', title: 'Shot', mediaType: 'image/png', meta: { privacy: 'pending', viewport: '1280x800' } },
];
const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const views: Record<string, ArtifactView> = {
  art_doc: { artifact: arts[0]!, text: '# Report\n\n<script>window.ran = true</script><img src=x onerror="window.ran=true">\n' },
  art_html: { artifact: arts[1]!, text: '<script>evil()</script><h1>Page</h1>', preview: '<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src \'none\'"><h1>Page</h1>' },
  art_shot: { artifact: arts[2]!, dataUrl: PNG },
};

function facade() {
  const asked: ArtifactQuery[] = [];
  const reviewed: string[] = [];
  const api: ArtifactsAPI = {
    list: async (q) => {
      asked.push(q);
      return arts.filter((a) => !q.kind || a.kind === q.kind);
    },
    get: async (id) => views[id]!,
    review: async (id) => {
      reviewed.push(id);
      const a = { ...views[id]!.artifact, meta: { ...views[id]!.artifact.meta, privacy: 'approved' as const } };
      views[id] = { ...views[id]!, artifact: a };
      return a;
    },
  };
  return { api, asked, reviewed };
}

describe('ArtifactsView', () => {
  it('lists, filters and shows each kind safely', async () => {
    const { api, asked, reviewed } = facade();
    render(ArtifactsView, {
      props: { workspaces: [{ id: 'ws_1', name: 'proj', displayPath: '~/proj', addedAt: '' }], runId: 'run_1', onOpenRun: () => {} },
      context: new Map([[API_CONTEXT_KEY, { ...createMemoryApi(), artifacts: api }]]),
    });
    await waitFor(() => expect(screen.getAllByTestId('artifact-item')).toHaveLength(3), { timeout: 30_000 });
    expect(asked[0]).toMatchObject({ runId: 'run_1' });

    // The first is opened: the document, rendered, its script and handler gone.
    const doc = await screen.findByTestId('artifact-document', {}, { timeout: 30_000 });
    expect(doc.querySelector('h1')).toHaveTextContent('Report');
    expect(doc.querySelector('script')).toBeNull();
    expect(doc.innerHTML).not.toContain('onerror');

    await fireEvent.click(screen.getAllByTestId('artifact-item')[1]!);
    const frame = await screen.findByTestId('artifact-frame', {}, { timeout: 30_000 });
    expect(frame.getAttribute('sandbox')).toBe('');
    expect(frame.getAttribute('srcdoc')).toBe(views.art_html!.preview);

    await fireEvent.click(screen.getAllByTestId('artifact-item')[2]!);
    await screen.findByTestId('artifact-privacy-pending', {}, { timeout: 30_000 });
    expect(screen.queryByTestId('artifact-download')).toBeNull();
    await fireEvent.click(screen.getByTestId('artifact-review'));
    await waitFor(() => expect(screen.queryByTestId('artifact-privacy-pending')).toBeNull(), { timeout: 30_000 });
    expect(reviewed).toEqual(['art_shot']);
    expect(screen.getByTestId('artifact-download')).toHaveAttribute('href', PNG);

    await fireEvent.change(screen.getByTestId('artifacts-filter-kind'), { target: { value: 'html' } });
    await waitFor(() => expect(screen.getAllByTestId('artifact-item')).toHaveLength(1), { timeout: 30_000 });
    expect(asked.at(-1)).toMatchObject({ runId: 'run_1', kind: 'html' });
  });
});
