import '@testing-library/jest-dom/vitest';
import { configure } from '@testing-library/dom';

// Tests wait for conditions, never for time, and the machine that runs them
// is shared and busy (2 cores, several builds at once): a lazy chunk that
// compiles on first import can take many seconds. findBy*/waitFor therefore
// wait up to 30 s by default; they return as soon as the condition holds, so
// a fast machine pays nothing. The per-test limit (vite.config.ts
// testTimeout) is above this, so a wait that runs out reports its own
// condition instead of a bare "test timed out".
configure({ asyncUtilTimeout: 30_000 });
