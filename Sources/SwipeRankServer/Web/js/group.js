// Group mode: create or join a session, vote on the shared deck, and watch the session's event
// stream for joins and the match. EventSource cannot send an Authorization header, so the
// stream is read with fetch and parsed here.

import { ApiError, apiBase, get, newID, post, token, tokenMeta } from './api.js';

const $ = id => document.getElementById(id);
const GROUP_KEY = 'swiperank.group';

let ui;                 // {announce, showError}
let group = null;       // the last status body
let options = [];       // options not voted on yet
let cursor = 0;         // `after` for the next page
let exhausted = false;
let stream = null;      // AbortController of the running event stream
let voting = false;

const place = o => [o.city, o.state].filter(Boolean).join(', ');
const money = n => `$${Math.round(n).toLocaleString('en-US')}`;

/** A line of what a group weighs for a school (other catalogs: none). */
function facts(o) {
  return [
    o.net_price != null && `${money(o.net_price)}/yr net price`,
    o.admission_rate != null && `admits ${Math.round(o.admission_rate * 100)}%`,
    o.undergrad_enrollment != null && `${o.undergrad_enrollment.toLocaleString('en-US')} undergrads`,
  ].filter(Boolean).join(' · ');
}

export function initGroup(handlers) {
  ui = handlers;
  $('group-create-form').addEventListener('submit', e => { e.preventDefault(); create(); });
  $('group-join-form').addEventListener('submit', e => { e.preventDefault(); join(); });
  $('group-like').addEventListener('click', () => vote('like'));
  $('group-pass').addEventListener('click', () => vote('pass'));
  $('group-leave').addEventListener('click', leave);
  document.addEventListener('keydown', event => {
    if ($('view-group').hidden || $('group-vote').hidden || event.repeat || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest('input, textarea, select')) return;
    const action = { ArrowLeft: 'pass', ArrowRight: 'like' }[event.key];
    if (!action) return;
    event.preventDefault();
    vote(action);
  });
  $('group-copy').addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(group.invite_code); ui.announce('Invite code copied.'); } catch { /* no clipboard permission */ }
  });
}

/** Shows the remembered group, if any (called when the view opens or the user signs in). */
export async function showGroup() {
  const id = localStorage.getItem(GROUP_KEY);
  if (!id) return render();
  if (group?.session_id === id) {
    if (group.status === 'open') listen();  // reconnects a stream that gave up
    return render();
  }
  try {
    enter(await get(`/groups/${encodeURIComponent(id)}`));
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 403)) localStorage.removeItem(GROUP_KEY);
    else ui.showError(e);
    render();
  }
}

/** Forgets the group locally (sign-out). */
export function resetGroup() {
  stream?.abort();
  stream = null;
  group = null;
  options = [];
  localStorage.removeItem(GROUP_KEY);
  render();
}

async function create() {
  const quorum = Number($('group-quorum').value) || 2;
  try {
    enter(await post('/groups', { quorum_n: quorum }));
    ui.announce(`Group created. Invite code ${group.invite_code}.`);
  } catch (e) { ui.showError(e); }
}

async function join() {
  const code = $('group-join-code').value.trim();
  if (!code) return ui.showError(new Error('Type the invite code first.'));
  try {
    enter(await post('/groups/join', { invite_code: code }));
    ui.announce('Joined the group.');
  } catch (e) { ui.showError(e); }
}

function leave() {
  // The creator's leaving closes the session for everyone; a member just forgets it here.
  if (group && group.status === 'open' && group.creator_id === currentStudent()) {
    post(`/groups/${group.session_id}/close`).catch(() => {});
  }
  resetGroup();
}

const currentStudent = () => tokenMeta().student_id || '';

function enter(status) {
  if (group?.session_id !== status.session_id) {
    options = [];
    cursor = 0;
    exhausted = false;
  }
  group = status;
  localStorage.setItem(GROUP_KEY, status.session_id);
  render();
  if (status.status === 'open') {
    listen();
    if (!options.length) loadOptions();
  } else if (status.status === 'matched') {
    showMatch();
  }
}

async function loadOptions() {
  if (!group || exhausted) return render();
  try {
    const page = await get(`/groups/${group.session_id}/options?count=10${cursor ? `&after=${cursor}` : ''}`);
    const held = new Set(options.map(o => o.option_id));
    options.push(...page.options.filter(o => !held.has(o.option_id)));
    cursor = page.cursor;
    exhausted = page.exhausted;
    if (page.status !== 'open') group.status = page.status;
  } catch (e) { ui.showError(e); }
  render();
}

async function vote(action) {
  const option = options[0];
  if (!option || voting || group?.status !== 'open') return;
  voting = true;
  try {
    const answer = await post(`/groups/${group.session_id}/likes`,
      { like_id: newID(), option_id: option.option_id, action });
    options.shift();
    ui.announce(`${action === 'like' ? 'Liked' : 'Passed'} ${option.option.name}.`);
    if (answer.match_found) {
      group.status = 'matched';
      group.matched_option_id = answer.matched_option_id;
      await showMatch();
    } else if (options.length < 3) {
      await loadOptions();
    }
  } catch (e) {
    ui.showError(e);
  } finally {
    voting = false;
    render();
  }
}

async function showMatch() {
  // The matched event carries only the id; the status body has the option itself.
  if (!group.matched_option) {
    try { group = await get(`/groups/${group.session_id}`); } catch (e) { ui.showError(e); }
  }
  stream?.abort();
  stream = null;
  render();
  if (group.matched_option) ui.announce(`It's a match: ${group.matched_option.name}!`);
}

// --- the event stream ----------------------------------------------------------------------

function listen() {
  if (stream) return;
  const controller = new AbortController();
  stream = controller;
  (async () => {
    // Reconnects with backoff while the session is open; bounded so a dead server is not
    // polled forever (the view reconnects when reopened).
    for (let attempt = 0; attempt < 8 && !controller.signal.aborted; attempt++) {
      try {
        await readStream(controller.signal, () => { attempt = 0; });
      } catch (e) {
        if (controller.signal.aborted) return;
        if (e instanceof ApiError && e.status < 500 && e.status !== 429) { ui.showError(e); break; }
      }
      if (controller.signal.aborted || !group || group.status !== 'open') break;
      await new Promise(r => setTimeout(r, Math.min(30_000, 1000 * 2 ** attempt)));
    }
    if (stream === controller) stream = null;
  })();
}

async function readStream(signal, onOpen) {
  const response = await fetch(`${apiBase()}/groups/${group.session_id}/events`, {
    headers: { Accept: 'text/event-stream', Authorization: `Bearer ${token()}` }, signal,
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new ApiError(response.status, body.error?.code || '', body.error?.message || 'The group stream failed.');
  }
  onOpen();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;            // keep-alive comment
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') name = v;
        else if (field === 'data') data.push(v);
      }
      if (data.length) onEvent(name, data.join('\n'));
    }
  }
}

function onEvent(name, text) {
  let data = {};
  try { data = JSON.parse(text); } catch { return; }
  if (!group) return;
  if (name === 'status') {
    group = { ...group, ...data };
    if (group.status === 'matched') showMatch();
  } else if (name === 'joined') {
    group.participants = [...(group.participants || []), { student_id: data.student_id }];
    ui.announce(`Someone joined: ${data.participants} in the group.`);
  } else if (name === 'matched') {
    group.status = 'matched';
    group.matched_option_id = data.matched_option_id;
    group.matched_option = null;
    showMatch();
  } else if (name === 'closed') {
    group.status = 'closed';
    ui.announce('The group was closed.');
  }
  render();
}

// --- rendering -----------------------------------------------------------------------------

function render() {
  const inGroup = !!group;
  $('group-start').hidden = inGroup;
  $('group-session').hidden = !inGroup;
  if (!inGroup) return;
  $('group-code').textContent = group.invite_code;
  const members = group.participants?.length || 1;
  $('group-members').textContent =
    `${members} member${members === 1 ? '' : 's'} · a match needs ${group.quorum_n} likes`;
  $('group-members').dataset.count = members;
  $('group-leave').textContent = group.creator_id === currentStudent() && group.status === 'open' ? 'Close group' : 'Leave group';

  const matched = group.status === 'matched';
  $('group-match').hidden = !matched;
  $('group-vote').hidden = matched || group.status !== 'open';
  $('group-closed').hidden = group.status !== 'closed';
  if (matched) {
    const o = group.matched_option;
    $('group-match-name').textContent = o ? o.name : group.matched_option_id;
    $('group-match-place').textContent = o ? place(o) : '';
    return;
  }
  const option = options[0];
  $('group-option').hidden = !option;
  $('group-empty').hidden = !!option;
  $('group-empty').textContent = exhausted ? 'No options left in this deck.' : 'Loading options…';
  $('group-like').disabled = $('group-pass').disabled = !option;
  if (option) {
    $('group-option').dataset.optionId = option.option_id;
    $('group-option-name').textContent = option.option.name;
    $('group-option-place').textContent = place(option.option);
    $('group-option-facts').textContent = facts(option.option);
    $('group-option-likes').textContent = `${option.likes} like${option.likes === 1 ? '' : 's'} so far`;
  }
}
