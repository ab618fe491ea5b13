// The views the first paint of a run does not need, each its own chunk so
// the app chunk the page waits for (parsed before anything renders) stays
// small. They are fetched in the background once the app has rendered, so
// opening an approval is normally instant; one opened earlier loads then.
import { Lazy } from './lib/lazy.svelte';

export const approvalDialog = new Lazy(() => import('./components/approvals/ApprovalDialog.svelte'));
export const auditView = new Lazy(() => import('./components/audit/AuditView.svelte'));
export const settingsView = new Lazy(() => import('./components/settings/SettingsView.svelte'));
export const artifactsView = new Lazy(() => import('./components/artifacts/ArtifactsView.svelte'));

/** Loads them all when the page is idle after the first render. */
export function preloadViews(): () => void {
  const all = () => {
    for (const v of [approvalDialog, auditView, settingsView, artifactsView]) void v.load().catch(() => {});
  };
  // Idle time after a timeout, so the first page's rows are painted before;
  // the timeout caps the wait while a long run's history keeps loading.
  const idle = window.requestIdleCallback ?? ((cb: () => void) => setTimeout(cb, 0));
  let handle = 0;
  const timer = setTimeout(() => (handle = idle(all, { timeout: 2000 })), 1000);
  return () => {
    clearTimeout(timer);
    if (handle) (window.cancelIdleCallback ?? clearTimeout)(handle);
  };
}
