// The local card buffer: enough cards to keep swiping offline, deduplicated by item id because a
// refetch may serve a card already held.

import { get } from './api.js';

const PRELOAD = 20;   // cards asked for at once (the preload route allows up to 200)
const LOW = 8;        // refill below this many

/** The item inside a card: `school` on the schools catalog, `item` on others. */
export function itemOf(card) {
  return card.school || card.item || {};
}

export class Deck extends EventTarget {
  constructor() {
    super();
    this.reset();
  }

  reset() {
    this.cards = [];
    this.known = new Set();   // ids held or already swiped: never shown twice
    this.exhausted = false;
    this.loading = null;
  }

  get current() { return this.cards[0] || null; }

  /** Removes and returns the top card. */
  take() {
    const card = this.cards.shift() || null;
    if (this.cards.length < LOW) this.refill().catch(() => {});
    return card;
  }

  /** Fetches more cards unless a fetch is running; resolves to the number of new cards. */
  refill() {
    if (this.exhausted || navigator.onLine === false) return Promise.resolve(0);
    if (!this.loading) {
      this.loading = get(`/student/recommendations/preload?count=${PRELOAD}`)
        .then(deck => {
          const fresh = (deck.recommendations || []).filter(card => {
            const id = itemOf(card).id;
            if (!id || this.known.has(id)) return false;
            this.known.add(id);
            return true;
          });
          // An empty answer means the student has seen every card.
          if (!(deck.recommendations || []).length) this.exhausted = true;
          this.cards.push(...fresh);
          this.dispatchEvent(new CustomEvent('change', { detail: deck }));
          return fresh.length;
        })
        .finally(() => { this.loading = null; });
    }
    return this.loading;
  }
}
