// The reader's choice of diff layout, remembered on this device.
import type { ViewMode } from './rows';

const KEY = 'agenthub.diff.mode';

export function loadMode(): ViewMode {
  try {
    return globalThis.localStorage?.getItem(KEY) === 'split' ? 'split' : 'unified';
  } catch {
    return 'unified';
  }
}

export function saveMode(mode: ViewMode): void {
  try {
    globalThis.localStorage?.setItem(KEY, mode);
  } catch {
    // Private mode or storage full: the choice lasts until reload.
  }
}
