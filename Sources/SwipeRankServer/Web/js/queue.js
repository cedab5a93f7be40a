// The offline queue: swipes (and saves) made without a connection, kept in localStorage per
// student and sent later through POST /student/sync. Swipe ids make a repeated flush harmless.

import { ApiError, NetworkError, post } from './api.js';

const MAX_BATCH = 500;           // the server's maxItems for /student/sync
const MAX_DELAY = 60_000;        // backoff ceiling between flush attempts

export class SwipeQueue extends EventTarget {
  constructor() {
    super();
    this.student = '';
    this.flushing = null;
    this.timer = 0;
    this.delay = 2_000;
    this.online = navigator.onLine;
    addEventListener('online', () => { this.delay = 2_000; this.setOnline(true); this.flush(); });
    addEventListener('offline', () => { this.setOnline(false); });
  }

  get key() { return `swiperank.queue.${this.student}`; }

  /** Switches to a student's queue (each token has its own). */
  use(student) {
    this.student = student || 'anonymous';
    this.changed();
    if (this.size) this.flush();
  }

  items() {
    try { return JSON.parse(localStorage.getItem(this.key)) || []; } catch { return []; }
  }

  get size() { return this.items().length; }

  save(items) {
    localStorage.setItem(this.key, JSON.stringify(items));
    this.changed();
  }

  /** Queues a swipe ({swipe_id, item_id, action, timestamp}) or a save ({kind:'save', item_id, timestamp}). */
  add(entry) {
    this.save([...this.items(), entry]);
    this.schedule();
  }

  setOnline(online) {
    if (this.online === online) return;
    this.online = online;
    this.changed();
  }

  changed() {
    this.dispatchEvent(new CustomEvent('change', { detail: { size: this.size, online: this.online } }));
  }

  schedule() {
    clearTimeout(this.timer);
    if (!this.size) return;
    this.timer = setTimeout(() => this.flush(), this.delay);
  }

  /** Sends everything queued; one flush at a time. Resolves true when the queue is empty. */
  flush() {
    if (!this.flushing) this.flushing = this.run().finally(() => { this.flushing = null; });
    return this.flushing;
  }

  async run() {
    clearTimeout(this.timer);
    if (!this.size) return true;
    if (navigator.onLine === false) {
      // The `online` event normally ends this; the timer is the fallback if it never fires.
      this.setOnline(false);
      this.backoff(0);
      return false;
    }
    try {
      const batch = this.items().slice(0, MAX_BATCH);
      const done = new Set();
      const swipes = batch.filter(e => e.kind !== 'save');
      if (swipes.length) {
        const answer = await post('/student/sync', {
          swipes: swipes.map(({ swipe_id, item_id, action, timestamp }) => ({ swipe_id, item_id, action, timestamp })),
        });
        for (const r of answer.results || []) {
          // 2xx recorded or replayed; 4xx (unknown item, reused id) will never succeed: drop it.
          if (r.status < 500 && r.status !== 429) done.add(r.swipe_id);
        }
        this.dispatchEvent(new CustomEvent('synced', { detail: answer }));
      }
      for (const entry of batch.filter(e => e.kind === 'save')) {
        try {
          await post(`/student/items/${encodeURIComponent(entry.item_id)}/save`, { timestamp: entry.timestamp });
          done.add(entry.swipe_id);
        } catch (e) {
          if (e instanceof ApiError && e.status < 500 && e.status !== 429) done.add(entry.swipe_id);
          else throw e;
        }
      }
      this.save(this.items().filter(e => !done.has(e.swipe_id)));
      this.setOnline(true);
      // Everything sent went through: the next batch (if any) goes soon; a swipe the server
      // failed on (5xx) waits longer each time.
      if (batch.some(e => !done.has(e.swipe_id))) this.backoff(0);
      else { this.delay = 2_000; this.schedule(); }
    } catch (e) {
      if (e instanceof NetworkError) this.setOnline(false);
      if (e instanceof ApiError && e.status === 401) return false;  // the token is gone: wait for sign-in
      this.backoff(e instanceof ApiError ? e.retryAfter * 1000 : 0);
    }
    return this.size === 0;
  }

  /** Waits longer before the next attempt (at least `atLeast` ms, for Retry-After). */
  backoff(atLeast) {
    this.delay = Math.min(MAX_DELAY, Math.max(this.delay * 2, atLeast));
    this.schedule();
  }
}
