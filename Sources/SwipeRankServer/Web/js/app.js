// The app shell: sign-in, views, the swipe card (buttons, arrow keys, drag), feedback prompts,
// the learning-state panel and the saved list.

import * as api from './api.js';
import { SwipeQueue } from './queue.js';
import { Deck, itemOf } from './deck.js';
import { initProfile, loadCatalog, loadProfile } from './profile.js';
import { initGroup, resetGroup, showGroup } from './group.js';

const $ = id => document.getElementById(id);
const queue = new SwipeQueue();
const deck = new Deck();
const names = new Map();     // item id → name, for feedback prompts about swiped cards
let sendChain = Promise.resolve();  // swipes are sent one after another, in order
let view = '';
let feedbackFor = null;

// --- messages --------------------------------------------------------------------------------

function announce(text) {
  // Cleared first so the same text twice is still read out.
  $('live').textContent = '';
  requestAnimationFrame(() => { $('live').textContent = text; });
}

let toastTimer = 0;
function showError(error) {
  const text = error instanceof api.ApiError || error instanceof api.NetworkError ? error.message
    : error?.message || 'Something went wrong.';
  $('toast').textContent = text;
  $('toast').hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { $('toast').hidden = true; }, 6000);
  if (error instanceof api.ApiError && error.status === 401) signOut('Please sign in again.');
}

// --- views -----------------------------------------------------------------------------------

function show(name, { focus = false } = {}) {
  view = name;
  $('toast').hidden = true;  // an error belongs to the view it happened in
  for (const section of document.querySelectorAll('.view')) section.hidden = section.id !== `view-${name}`;
  for (const tab of document.querySelectorAll('#tabs button')) {
    tab.setAttribute('aria-current', tab.dataset.view === name ? 'page' : 'false');
  }
  const signedIn = !!api.token();
  $('tabs').hidden = !signedIn;
  $('signout').hidden = !signedIn;
  // A view chosen from the tabs takes focus at its heading, so screen readers follow.
  if (focus) document.querySelector(`#view-${name} h2`)?.focus();
  if (name === 'progress') loadLearningState();
  if (name === 'saved') loadSaved();
  if (name === 'group') showGroup();
  if (name === 'swipe') {
    if (!deck.cards.length) refill();  // first, so the empty message does not flash while it loads
    renderCard();
  }
}

async function start() {
  if (!api.token()) return show('signin');
  const meta = api.tokenMeta();
  if (meta.expires_at && meta.expires_at * 1000 < Date.now()) return signOut('Your session expired. Please sign in again.');
  api.scheduleRefresh();
  queue.use(meta.student_id);
  try {
    await loadCatalog();
    const hasProfile = await loadProfile();
    show(hasProfile ? 'swipe' : 'profile');
  } catch (e) {
    if (e instanceof api.ApiError && e.status === 401) return showError(e);  // signs out
    // Offline at start: the swipe view still works with the queue and any held cards.
    show('swipe');
    showError(e);
  }
}

function signOut(reason) {
  api.clearToken();
  deck.reset();
  resetGroup();
  hideFeedback();
  show('signin');
  if (reason) { $('toast').textContent = reason; $('toast').hidden = false; }
  announce('Signed out.');
}

// --- sign in ---------------------------------------------------------------------------------

$('guest').addEventListener('click', async () => {
  $('guest').disabled = true;
  try {
    await api.signInAsGuest();
    announce('Signed in as a guest.');
    await start();
  } catch (e) {
    showError(e.status === 404 && e.code === 'GUEST_DISABLED'
      ? new Error('Guest sign-in is turned off on this server: paste a token instead.') : e);
  } finally {
    $('guest').disabled = false;
  }
});

$('token-form').addEventListener('submit', async event => {
  event.preventDefault();
  const jwt = $('token-input').value.trim().replace(/^Bearer\s+/i, '');
  if (!jwt) return showError(new Error('Paste a token first.'));
  api.setToken(jwt);
  $('token-input').value = '';
  await start();
});

$('signout').addEventListener('click', async () => {
  if (queue.size) await queue.flush();
  signOut();
});
addEventListener('swiperank:signed-out', e => signOut(e.detail));

for (const tab of document.querySelectorAll('#tabs button')) tab.addEventListener('click', () => show(tab.dataset.view, { focus: true }));

// --- the card --------------------------------------------------------------------------------

const percent = x => `${Math.round((x || 0) * 100)}%`;

function renderCard() {
  const card = deck.current;
  $('view-swipe').dataset.buffered = String(deck.cards.length);
  $('card').hidden = !card;
  const empty = !card && (deck.exhausted || !deck.loading);
  $('deck-empty').hidden = !empty;
  $('deck-empty-text').textContent = deck.exhausted
    ? 'You have seen every card. Check your saved list or your progress.'
    : navigator.onLine === false ? 'No cards held offline: they load when you are back online.' : 'No cards right now.';
  for (const b of ['btn-like', 'btn-dislike', 'btn-save']) $(b).disabled = !card;
  if (!card) return;
  const item = itemOf(card);
  const el = $('card');
  el.dataset.itemId = item.id;
  el.style.transform = '';
  $('card-name').textContent = item.name || item.id;
  $('card-place').textContent = [item.city, item.state].filter(Boolean).join(', ') || otherFacts(item);
  $('card-match').textContent = percent(card.match_score);
  $('card-grade').textContent = card.grade || '';
  $('card-grade').setAttribute('aria-label', `Grade ${card.grade || 'none'}`);
  $('card-probe').hidden = !card.is_probe;
  el.classList.toggle('probe-card', !!card.is_probe);
  const miles = card.distance;
  $('card-distance').textContent = miles == null ? '' : `${miles < 10 ? miles.toFixed(1) : Math.round(miles)} miles from home`;
  $('card-majors').replaceChildren(...(card.matched_majors || []).map(m => li(m)));
  $('card-why').replaceChildren(...(card.explanations || []).map(t => li(t)));
  el.setAttribute('aria-label', `${item.name}, ${percent(card.match_score)} match`);
}

// Outside the schools catalog an item's attributes are all we can show of it.
const plainKeys = new Set(['id', 'name', 'latitude', 'longitude', 'image_url']);
function otherFacts(item) {
  return Object.entries(item).filter(([k, v]) => !plainKeys.has(k) && v != null && typeof v !== 'object')
    .slice(0, 5).map(([k, v]) => `${k.replace(/_/g, ' ')}: ${v}`).join(' · ');
}

function li(text) {
  const el = document.createElement('li');
  el.textContent = text;
  return el;
}

async function refill() {
  try {
    await deck.refill();
  } catch (e) {
    if (e instanceof api.NetworkError) queue.setOnline(false);
    else if (e.status === 404 && e.details?.resource === 'profile') show('profile');
    else showError(e);
  }
  renderCard();
}

// --- swiping ---------------------------------------------------------------------------------

const verbs = { like: 'Liked', dislike: 'Disliked', save: 'Saved' };

function swipe(action) {
  const card = deck.current;
  if (!card || view !== 'swipe') return;
  const item = itemOf(card);
  names.set(item.id, item.name);
  deck.take();
  renderCard();
  announce(`${verbs[action]} ${item.name}.`);
  if (!deck.cards.length) refill();

  const entry = { swipe_id: api.newID(), item_id: item.id, action, timestamp: Date.now() };
  if (action === 'save') entry.kind = 'save';
  sendChain = sendChain.then(() => send(entry)).finally(() => {
    const section = $('view-swipe');
    section.dataset.swipesDone = String(Number(section.dataset.swipesDone) + 1);
  });
}

/** Sends one swipe, or queues it when offline, rate limited or behind queued ones. */
async function send(entry) {
  // Behind a non-empty queue a swipe waits its turn, so the server learns them in order.
  if (navigator.onLine === false || queue.size) return queue.add(entry);
  try {
    const answer = entry.kind === 'save'
      ? await api.post(`/student/items/${encodeURIComponent(entry.item_id)}/save`, { timestamp: entry.timestamp })
      : await api.post('/student/swipe', {
        swipe_id: entry.swipe_id, item_id: entry.item_id, action: entry.action, timestamp: entry.timestamp,
      });
    queue.setOnline(true);
    showLearningState(answer);
    if (answer.feedback) showFeedback(answer.feedback);
  } catch (e) {
    if (e instanceof api.NetworkError || (e instanceof api.ApiError && (e.status === 429 || e.status >= 500))) {
      if (e instanceof api.NetworkError) queue.setOnline(false);
      else showError(e);  // the server's words: rate limited (with the wait) or failing
      queue.add(entry);
    } else {
      showError(e);
    }
  }
}

for (const [id, action] of [['btn-like', 'like'], ['btn-dislike', 'dislike'], ['btn-save', 'save']]) {
  $(id).addEventListener('click', () => swipe(action));
}

document.addEventListener('keydown', event => {
  if (event.key === 'Escape' && !$('feedback').hidden) { hideFeedback(); return; }  // Escape skips the question
  // A held key repeats: one swipe per press, not a run of accidental ones.
  if (view !== 'swipe' || event.repeat || event.altKey || event.ctrlKey || event.metaKey) return;
  // Arrows keep their meaning inside form controls and option groups.
  if (event.target.closest('input, textarea, select, #feedback')) return;
  const action = { ArrowLeft: 'dislike', ArrowRight: 'like', ArrowUp: 'save' }[event.key];
  if (!action) return;
  event.preventDefault();
  swipe(action);
});

// Drag (mouse, pen or touch): past a third of the card's width, the card goes that way.
(() => {
  const el = $('card');
  let start = null;
  el.addEventListener('pointerdown', event => {
    if (event.button !== 0) return;
    start = { x: event.clientX, y: event.clientY };
    el.setPointerCapture(event.pointerId);
    el.classList.add('dragging');
  });
  el.addEventListener('pointermove', event => {
    if (!start) return;
    const dx = event.clientX - start.x;
    el.style.transform = `translateX(${dx}px) rotate(${dx / 20}deg)`;
    el.dataset.drag = dx > 40 ? 'like' : dx < -40 ? 'dislike' : '';
  });
  const end = event => {
    if (!start) return;
    const dx = event.clientX - start.x;
    start = null;
    el.classList.remove('dragging');
    el.dataset.drag = '';
    el.style.transform = '';
    if (event.type === 'pointerup' && Math.abs(dx) > Math.min(120, el.offsetWidth / 3)) swipe(dx > 0 ? 'like' : 'dislike');
  };
  el.addEventListener('pointerup', end);
  el.addEventListener('pointercancel', end);
})();

// --- feedback --------------------------------------------------------------------------------

/** Options are strings now and {code, label} objects later: both become {code, label}. */
const option = o => (typeof o === 'string' ? { code: o, label: o } : { code: o.code, label: o.label || o.code });

function showFeedback(prompt) {
  feedbackFor = prompt.card_id;
  const name = names.get(prompt.card_id) || 'that one';
  $('feedback-title').textContent = prompt.reason === 'probe'
    ? `What stood out about ${name}?` : `That surprised us: why ${name}?`;
  $('feedback-options').replaceChildren(...(prompt.options || []).map(option).map(({ code, label }) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'toggle';
    b.textContent = label;
    b.dataset.code = code;
    b.dataset.testid = 'feedback-option';
    b.setAttribute('aria-pressed', 'false');
    b.addEventListener('click', () => {
      b.setAttribute('aria-pressed', String(b.getAttribute('aria-pressed') !== 'true'));
      $('feedback-send').disabled = !$('feedback-options').querySelector('[aria-pressed="true"]');
    });
    return b;
  }));
  $('feedback-send').disabled = true;
  $('feedback').hidden = false;
  announce(`${$('feedback-title').textContent} Choose answers below, or skip.`);
}

function hideFeedback() {
  $('feedback').hidden = true;
  feedbackFor = null;
}

$('feedback-skip').addEventListener('click', () => { hideFeedback(); $('card').focus(); });
$('feedback-send').addEventListener('click', async () => {
  const codes = [...$('feedback-options').querySelectorAll('[aria-pressed="true"]')].map(b => b.dataset.code);
  if (!feedbackFor || !codes.length) return;
  $('feedback-send').disabled = true;
  try {
    showLearningState(await api.post('/student/feedback', { item_id: feedbackFor, options: codes }));
    hideFeedback();
    announce('Thanks: feedback sent.');
    $('card').focus();
  } catch (e) {
    $('feedback-send').disabled = false;
    showError(e);
  }
});

// --- learning state and saved ----------------------------------------------------------------

const weightNames = {
  academic_fit: 'Academic fit', academic_selectivity: 'Selectivity', cost_weight: 'Cost',
  distance_weight: 'Distance', earnings_weight: 'Earnings', graduation_weight: 'Graduation rate',
  major_weight: 'Your majors', public_preference: 'Public over private', size_preference: 'Size',
  urban_preference: 'City setting', budget: 'Budget', distance: 'Distance', major_fit: 'Major fit',
};
const pretty = key => weightNames[key] || key.replace(/_/g, ' ').replace(/^./, c => c.toUpperCase());

function showLearningState(answer) {
  if (!answer || !answer.learning_state) return;
  const ls = answer.learning_state;
  if (answer.total_swipes != null) $('ls-total').textContent = answer.total_swipes;
  if (answer.unseen_cards != null) $('ls-unseen').textContent = answer.unseen_cards;
  $('ls-phase').textContent = ls.phase;
  $('ls-progress').value = ls.progress;
  $('ls-progress').textContent = percent(ls.progress);
  const weights = Object.entries(ls.preference_weights || {}).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  const scale = Math.max(0.01, ...weights.map(([, w]) => Math.abs(w)));
  $('ls-weights').replaceChildren(...weights.map(([key, w]) => {
    const row = document.createElement('li');
    const label = document.createElement('span');
    label.textContent = pretty(key);
    const track = document.createElement('span');
    track.className = 'track';
    track.setAttribute('role', 'img');
    track.setAttribute('aria-label', `${pretty(key)}: ${w.toFixed(2)}`);
    const bar = document.createElement('span');
    bar.className = w < 0 ? 'bar neg' : 'bar';
    bar.style.width = `${(Math.abs(w) / scale) * 50}%`;
    track.append(bar);
    const value = document.createElement('span');
    value.className = 'value';
    value.textContent = w.toFixed(2);
    row.append(label, track, value);
    return row;
  }));
}

async function loadLearningState() {
  try { showLearningState(await api.get('/student/learning-state')); } catch (e) { showError(e); }
}

async function loadSaved() {
  try {
    const { saved } = await api.get('/student/saved');
    $('saved-list').replaceChildren(...saved.map(card => {
      const item = itemOf(card);
      const row = document.createElement('li');
      const name = document.createElement('strong');
      name.textContent = item.name;
      const info = document.createElement('span');
      info.className = 'muted';
      info.textContent = [[item.city, item.state].filter(Boolean).join(', '), `${percent(card.match_score)} match`]
        .filter(Boolean).join(' · ');
      row.append(name, info);
      return row;
    }));
    $('saved-empty').hidden = saved.length > 0;
  } catch (e) { showError(e); }
}

// --- connection ------------------------------------------------------------------------------

queue.addEventListener('change', ({ detail: { size, online } }) => {
  const el = $('net-status');
  el.dataset.count = String(size);
  el.dataset.online = String(online);
  el.hidden = online && size === 0;
  const swipes = `${size} swipe${size === 1 ? '' : 's'}`;
  el.textContent = online ? `Syncing ${swipes}…` : size ? `Offline — ${swipes} queued` : 'Offline';
  if (online && size === 0 && view === 'swipe' && deck.cards.length < 8) refill();
});
queue.addEventListener('synced', ({ detail }) => {
  showLearningState(detail);
  announce('Offline swipes synced.');
});

// A background refill only updates the count, unless the stage was empty (no re-render mid-drag).
deck.addEventListener('change', () => {
  $('view-swipe').dataset.buffered = String(deck.cards.length);
  if ($('card').hidden) renderCard();
});

initProfile({
  onSaved: () => { deck.reset(); show('swipe'); announce('Profile saved.'); },
  onError: showError,
});
initGroup({ announce, showError });
start();
