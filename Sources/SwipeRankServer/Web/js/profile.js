// The profile form: the schools fields (StudentProfile.swift) with a major picker, or a JSON
// textarea when the server's catalog is not schools.

import { ApiError, get, put } from './api.js';

const $ = id => document.getElementById(id);

let catalog = { kind: 'schools', item: 'school' };
let majorsLoaded = false;

/** The catalog kind; a server without GET /catalog serves schools. */
export async function loadCatalog() {
  try {
    catalog = await get('/catalog', { auth: false });
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 404)) throw e;
  }
  const schools = catalog.kind !== 'items';
  $('profile-fields').hidden = !schools;
  $('profile-json-field').hidden = schools;
  return catalog;
}

export const isSchools = () => catalog.kind !== 'items';

async function loadMajors() {
  if (majorsLoaded || !isSchools()) return;
  const list = $('major-list');
  try {
    const { majors } = await get('/catalog/majors', { auth: false });
    list.replaceChildren(...majors.map(m => majorBox(m.name, `${m.schools} schools`)));
    majorsLoaded = true;
  } catch (e) {
    // An older server has no majors list: names are typed instead (comma-separated).
    $('major-picker').hidden = true;
    $('major-text-field').hidden = false;
  }
}

function majorBox(name, note) {
  const label = document.createElement('label');
  label.className = 'major';
  label.dataset.name = name.toLowerCase();
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.name = 'major';
  box.value = name;
  box.dataset.testid = 'major-option';
  box.addEventListener('change', renderChosen);
  const count = document.createElement('span');
  count.className = 'muted';
  count.textContent = note;
  label.append(box, ` ${name} `, count);
  return label;
}

function chosenMajors() {
  if (!$('major-text-field').hidden) {
    return $('major-text').value.split(',').map(s => s.trim()).filter(Boolean);
  }
  return [...document.querySelectorAll('#major-list input:checked')].map(b => b.value);
}

function renderChosen() {
  const chosen = chosenMajors();
  $('major-chosen').textContent = chosen.length ? `Chosen: ${chosen.join(', ')}` : 'No major chosen yet.';
}

function filterMajors() {
  const q = $('major-filter').value.trim().toLowerCase();
  for (const label of $('major-list').children) label.hidden = q !== '' && !label.dataset.name.includes(q);
}

function num(id) {
  const v = $(id).value.trim();
  return v === '' ? undefined : Number(v);
}

/** The profile JSON from the form; fields left empty are omitted (the server's defaults apply). */
function formProfile() {
  if (!isSchools()) return JSON.parse($('profile-json').value || '{}');
  const p = {};
  const lat = num('p-lat'), lon = num('p-lon');
  if (lat !== undefined && lon !== undefined) p.home = { latitude: lat, longitude: lon };
  const state = $('p-state').value.trim().toUpperCase();
  if (state) p.home_state = state;
  if (num('p-distance') !== undefined) p.max_distance_miles = num('p-distance');
  if (num('p-budget') !== undefined) p.annual_budget = num('p-budget');
  if (num('p-sat') !== undefined) p.sat = num('p-sat');
  p.intended_majors = chosenMajors();
  p.size_preference = $('p-size').value;
  p.control_preference = $('p-control').value;
  p.setting_preference = $('p-setting').value;
  p.academic_priority = Number($('p-academic').value);
  p.earnings_priority = Number($('p-earnings').value);
  return p;
}

function fill(p) {
  if (!isSchools()) { $('profile-json').value = JSON.stringify(p, null, 2); return; }
  $('p-lat').value = p.home?.latitude ?? '';
  $('p-lon').value = p.home?.longitude ?? '';
  $('p-state').value = p.home_state ?? '';
  $('p-distance').value = p.max_distance_miles ?? 500;
  $('p-budget').value = p.annual_budget ?? '';
  $('p-sat').value = p.sat ?? '';
  $('p-size').value = p.size_preference ?? 'any';
  $('p-control').value = p.control_preference ?? 'any';
  $('p-setting').value = p.setting_preference ?? 'any';
  $('p-academic').value = p.academic_priority ?? 0.5;
  $('p-earnings').value = p.earnings_priority ?? 0.5;
  const majors = new Set(p.intended_majors || []);
  const boxes = [...document.querySelectorAll('#major-list input')];
  for (const box of boxes) box.checked = majors.has(box.value);
  // A major saved by code or by a name not in the list stays chosen (listed first), not dropped.
  if (majorsLoaded) {
    const listed = new Set(boxes.map(b => b.value));
    const extra = [...majors].filter(m => !listed.has(m)).map(m => majorBox(m, 'saved'));
    for (const label of extra) label.querySelector('input').checked = true;
    $('major-list').prepend(...extra);
  }
  $('major-text').value = [...majors].join(', ');
  showPriorities();
  renderChosen();
}

function showPriorities() {
  $('p-academic-out').value = Number($('p-academic').value).toFixed(1);
  $('p-earnings-out').value = Number($('p-earnings').value).toFixed(1);
}

/** Loads the student's profile into the form; resolves false when they have none yet. */
export async function loadProfile() {
  await loadMajors();
  try {
    const answer = await get('/student/profile');
    fill(answer.profile || {});
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) { fill({}); return false; }
    throw e;
  }
}

/** Wires the form; `onSaved` runs after a successful PUT. */
export function initProfile({ onSaved, onError }) {
  $('major-filter').addEventListener('input', filterMajors);
  $('p-academic').addEventListener('input', showPriorities);
  $('p-earnings').addEventListener('input', showPriorities);
  $('p-locate').addEventListener('click', () => {
    if (!navigator.geolocation) return onError(new Error('Location is not available in this browser.'));
    navigator.geolocation.getCurrentPosition(
      pos => { $('p-lat').value = pos.coords.latitude.toFixed(4); $('p-lon').value = pos.coords.longitude.toFixed(4); },
      () => onError(new Error('Location permission was refused.')));
  });
  $('profile-form').addEventListener('submit', async event => {
    event.preventDefault();
    let profile;
    try { profile = formProfile(); } catch { return onError(new Error('The profile is not valid JSON.')); }
    const button = $('profile-save');
    button.disabled = true;
    $('profile-status').textContent = 'Saving…';
    try {
      await put('/student/profile', profile);
      $('profile-status').textContent = 'Profile saved.';
      onSaved();
    } catch (e) {
      $('profile-status').textContent = '';
      onError(e);
    } finally {
      button.disabled = false;
    }
  });
}
