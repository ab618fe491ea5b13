import { describe, expect, it, vi } from 'vitest';
import type { Component } from 'svelte';
import { Lazy } from './lazy.svelte';

const Comp = (() => {}) as unknown as Component;

describe('Lazy', () => {
  it('loads once, on first read, and then gives the component synchronously', async () => {
    const load = vi.fn(() => Promise.resolve({ default: Comp }));
    const lazy = new Lazy(load);
    expect(load).not.toHaveBeenCalled();
    expect(lazy.current).toBeNull();
    expect(lazy.current).toBeNull();
    expect(await lazy.load()).toBe(Comp);
    expect(lazy.current).toBe(Comp);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('reports a failed load and loads again on retry', async () => {
    const load = vi.fn().mockRejectedValueOnce(new Error('offline')).mockResolvedValue({ default: Comp });
    const lazy = new Lazy(load);
    await expect(lazy.load()).rejects.toThrow('offline');
    expect(lazy.failed).toBe(true);
    expect(lazy.current).toBeNull();
    expect(load).toHaveBeenCalledTimes(1); // no retry loop while failed
    lazy.retry();
    expect(lazy.failed).toBe(false);
    await vi.waitFor(() => expect(lazy.current).toBe(Comp));
    expect(load).toHaveBeenCalledTimes(2);
  });
});
