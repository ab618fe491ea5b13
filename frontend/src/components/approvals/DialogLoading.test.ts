import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import DialogLoading from './DialogLoading.svelte';

describe('DialogLoading', () => {
  it('is a focused, named, busy dialog that Esc closes', async () => {
    const onDismiss = vi.fn();
    render(DialogLoading, { onDismiss });
    const dialog = screen.getByRole('dialog', { name: 'Loading the approval…' });
    expect(dialog).toHaveFocus();
    expect(dialog).toHaveAttribute('aria-busy', 'true');
    expect(screen.getByRole('status')).toHaveTextContent('Loading…');
    await fireEvent.keyDown(window, { key: 'Escape' });
    expect(onDismiss).toHaveBeenCalledTimes(1);
  });

  it('offers a retry when the chunk could not be loaded', async () => {
    const onRetry = vi.fn();
    render(DialogLoading, { failed: true, onRetry, onDismiss: () => {} });
    expect(screen.getByRole('alert')).toHaveTextContent('This view could not be loaded.');
    await fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(onRetry).toHaveBeenCalledTimes(1);
  });
});
