// Desktop notifications for approvals that arrive while the window is not
// focused, where the platform supports them. Permission is asked only from a
// user action (starting a run), never on load.

type NotificationCtor = {
  permission: NotificationPermission;
  requestPermission(): Promise<NotificationPermission>;
  new (title: string, options?: NotificationOptions): Notification;
};

function ctor(): NotificationCtor | null {
  const n = (globalThis as { Notification?: NotificationCtor }).Notification;
  return typeof n === 'function' ? n : null;
}

/** Asks once, from a user gesture; does nothing if already answered. */
export function askPermission(): void {
  const N = ctor();
  if (!N || N.permission !== 'default') return;
  N.requestPermission().catch(() => {});
}

/** Shows a notification when allowed; clicking it focuses the window and calls onClick. */
export function notify(title: string, body: string, tag: string, onClick: () => void): void {
  const N = ctor();
  if (!N || N.permission !== 'granted') return;
  try {
    const n = new N(title, { body, tag });
    n.onclick = () => {
      window.focus();
      onClick();
      n.close();
    };
  } catch {
    // some webviews expose the API but refuse to construct; the title count remains
  }
}
