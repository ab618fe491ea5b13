// Server-Sent Events over fetch rather than EventSource: fetch can send the
// bearer token and an explicit Last-Event-ID on every reconnect (EventSource
// can do neither after a manual restart), and it stops on 401 instead of
// retrying forever.
import { ApiError, codeForStatus, toApiError, CLIENT_CODES } from './error';

export interface SseMessage {
  id: string;
  event: string;
  data: string;
}

/**
 * Incremental text/event-stream parser (WHATWG HTML §9.2.6). Feed decoded
 * text in any chunking; complete messages come out.
 */
export class SseParser {
  private buf = '';
  private data: string[] = [];
  private event = '';
  /** The last event id seen, carried across messages as the spec says. */
  lastEventId = '';
  /** Reconnection delay requested by the server with `retry:`, if any. */
  retry: number | null = null;

  push(chunk: string): SseMessage[] {
    this.buf += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const nl = this.buf.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      // A lone \r at the end of the buffer may be the first half of \r\n.
      if (this.buf[nl] === '\r' && nl === this.buf.length - 1) break;
      const width = this.buf.startsWith('\r\n', nl) ? 2 : 1;
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + width);
      const msg = this.line(line);
      if (msg) out.push(msg);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null; // comment / heartbeat
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const data = this.data;
    const event = this.event || 'message';
    this.data = [];
    this.event = '';
    if (data.length === 0) return null;
    return { id: this.lastEventId, event, data: data.join('\n') };
  }
}

export interface StreamOptions {
  url: string;
  fetch: typeof fetch;
  headers: Record<string, string>;
  /** Resume point for the first connection (then the last id received). */
  lastEventId?: string;
  onMessages(batch: SseMessage[]): void;
  onStatus?(s: 'open' | 'reconnecting' | 'closed'): void;
  onError?(err: ApiError): void;
  /** Delay before reconnect attempt n (0-based). */
  backoff?(attempt: number): number;
  sleep?(ms: number): Promise<void>;
}

const defaultBackoff = (n: number) => Math.min(500 * 2 ** n, 10_000);
const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Opens a resuming SSE stream; returns the function that closes it. */
export function openStream(o: StreamOptions): () => void {
  let closed = false;
  let ctrl: AbortController | null = null;
  const parser = new SseParser();
  parser.lastEventId = o.lastEventId ?? '';
  const backoff = o.backoff ?? defaultBackoff;
  const sleep = o.sleep ?? defaultSleep;

  async function once(): Promise<'retry' | 'stop'> {
    ctrl = new AbortController();
    const headers: Record<string, string> = { ...o.headers, Accept: 'text/event-stream' };
    if (parser.lastEventId) headers['Last-Event-ID'] = parser.lastEventId;
    const res = await o.fetch(o.url, {
      headers,
      signal: ctrl.signal,
      credentials: 'same-origin',
      cache: 'no-store',
    });
    if (res.status === 401 || res.status === 403) {
      const body = await res.json().catch(() => null);
      o.onError?.(body ? toApiError(body) : new ApiError({ code: codeForStatus(res.status) }, res.status));
      return 'stop';
    }
    if (!res.ok || !res.body) throw new ApiError({ code: codeForStatus(res.status) }, res.status);
    o.onStatus?.('open');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'retry';
      const batch = parser.push(value);
      if (batch.length > 0) o.onMessages(batch);
    }
  }

  async function loop() {
    let attempt = 0;
    while (!closed) {
      let outcome: 'retry' | 'stop' = 'retry';
      try {
        outcome = await once();
        attempt = 0;
      } catch (err) {
        if (closed) break;
        if (attempt === 0) console.warn('event stream interrupted', toApiError(err).code);
      }
      if (closed || outcome === 'stop') break;
      o.onStatus?.('reconnecting');
      await sleep(parser.retry ?? backoff(attempt++));
    }
    o.onStatus?.('closed');
  }

  void loop();
  return () => {
    closed = true;
    ctrl?.abort();
  };
}

export { CLIENT_CODES };
