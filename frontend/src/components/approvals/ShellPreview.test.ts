import { render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import ShellPreview from './ShellPreview.svelte';

const base = { command: 'make test', shell: '/bin/sh -c', cwd: '.', env: ['HOME', 'PATH'], timeoutSeconds: 120 };

describe('ShellPreview confinement', () => {
  it('says where the command may write and that it has no network', () => {
    render(ShellPreview, {
      preview: {
        ...base,
        confinement: { confined: true, abi: 7, writes: ['workspace', 'private temp'], network: 'none' },
      },
    });
    expect(screen.getByTestId('shell-confinement')).toHaveTextContent(
      'writes only: workspace, private temp dir' + 'network: none',
    );
  });

  it('names the ports a CLI may reach', () => {
    render(ShellPreview, {
      preview: { ...base, confinement: { confined: true, writes: ['workspace', 'agent state'], network: 'ports', ports: [8080] } },
    });
    expect(screen.getByTestId('shell-confinement')).toHaveTextContent('network: TCP ports 8080 only');
  });

  it('says the Landlock fallback blocks TCP only, and that no UNIX socket is reachable', () => {
    render(ShellPreview, {
      preview: {
        ...base,
        confinement: { confined: true, writes: ['workspace'], network: 'no tcp', networkBy: 'landlock', noUnixSockets: true },
      },
    });
    const dd = screen.getByTestId('shell-confinement');
    expect(dd).toHaveTextContent('network: no TCP (UDP is not restricted on this kernel)');
    expect(dd).not.toHaveTextContent('not restricted (this kernel cannot)');
    expect(dd).toHaveTextContent('UNIX sockets: none');
  });

  it('says plainly when nothing confines the command', () => {
    render(ShellPreview, { preview: { ...base, confinement: { confined: false, reason: 'the kernel lacks Landlock' } } });
    const dd = screen.getByTestId('shell-confinement');
    expect(dd).toHaveTextContent('not confined: the kernel lacks Landlock');
    expect(dd).toHaveClass('unconfined');
  });

  it('shows nothing for a preview without confinement (older approvals)', () => {
    render(ShellPreview, { preview: base });
    expect(screen.queryByTestId('shell-confinement')).toBeNull();
  });
});
