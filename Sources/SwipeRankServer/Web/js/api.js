// The HTTP client: API base, the bearer token, JSON requests and the server's error shape.

const API_KEY = 'swiperank.api';
const TOKEN_KEY = 'swiperank.token';
const META_KEY = 'swiperank.tokenMeta';

// ?api=http://127.0.0.1:PORT points a page served elsewhere (development) at a server; it is
// remembered so in-app links keep working. ?api= (empty) forgets it.
const params = new URLSearchParams(location.search);
if (params.has('api')) {
  const value = (params.get('api') || '').trim().replace(/\/+$/, '');
  if (value) localStorage.setItem(API_KEY, value);
  else localStorage.removeItem(API_KEY);
}

export function apiBase() {
  return localStorage.getItem(API_KEY) || location.origin;
}

/** A refusal from the server ({"error":{code,message,details}}) or a local one. */
export class ApiError extends Error {
  constructor(status, code, message, details = {}, retryAfter = 0) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter; // seconds, from Retry-After on 429/503
  }
}

/** The server could not be reached (offline, DNS, connection refused). */
export class NetworkError extends Error {}

// --- token -----------------------------------------------------------------------------------

export function token() {
  return localStorage.getItem(TOKEN_KEY);
}

/** What we know about the token: {student_id, expires_at (s), guest}. */
export function tokenMeta() {
  try { return JSON.parse(localStorage.getItem(META_KEY)) || {}; } catch { return {}; }
}

// A pasted token's subject and expiry come from its payload; the server still checks it.
function decodeJWT(jwt) {
  try {
    const part = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part.padEnd(part.length + (4 - part.length % 4) % 4, '=')));
  } catch { return {}; }
}

export function setToken(jwt, meta = {}) {
  const claims = decodeJWT(jwt);
  localStorage.setItem(TOKEN_KEY, jwt);
  localStorage.setItem(META_KEY, JSON.stringify({
    student_id: meta.student_id || claims.sub || '',
    expires_at: meta.expires_at || claims.exp || 0,
    guest: !!meta.guest,
  }));
  scheduleRefresh();
}

export function clearToken() {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(META_KEY);
  clearTimeout(refreshTimer);
}

// --- requests --------------------------------------------------------------------------------

// After a 429, nothing more goes to that limit before Retry-After has passed. Guest sign-in
// is limited per address, everything else per student: separate clocks.
const blockedUntil = { auth: 0, api: 0 };
const limitOf = path => (path.startsWith('/auth/') ? 'auth' : 'api');

/**
 * One JSON request. Resolves to the parsed body (null for an empty one); rejects with ApiError
 * for an HTTP error or NetworkError when the server cannot be reached.
 */
export async function request(method, path, { body, auth = true, signal } = {}) {
  const wait = Math.ceil((blockedUntil[limitOf(path)] - Date.now()) / 1000);
  if (wait > 0) throw new ApiError(429, 'RATE_LIMITED', `Too many requests: try again in ${wait} s.`, {}, wait);
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (auth && token()) headers.Authorization = `Bearer ${token()}`;
  let response;
  try {
    response = await fetch(apiBase() + path, {
      method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new NetworkError('The server cannot be reached.');
  }
  const text = await response.text().catch(() => '');
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (response.ok) return data;
  const retryAfter = parseInt(response.headers.get('Retry-After') || '0', 10) || 0;
  if (response.status === 429) blockedUntil[limitOf(path)] = Date.now() + Math.max(retryAfter, 1) * 1000;
  const err = data && data.error;
  throw new ApiError(response.status, err?.code || `HTTP_${response.status}`,
    err?.message || `The server answered ${response.status}.`, err?.details || {}, retryAfter);
}

export const get = (path, opts) => request('GET', path, opts);
export const post = (path, body, opts) => request('POST', path, { ...opts, body });
export const put = (path, body, opts) => request('PUT', path, { ...opts, body });

// --- guest tokens ----------------------------------------------------------------------------

export async function signInAsGuest() {
  const answer = await request('POST', '/auth/guest', { auth: false });
  setToken(answer.token, { ...answer, guest: true });
  return answer;
}

let refreshTimer = 0;
let refreshDue = 0;

// A guest token is refreshed a minute (or a tenth of its life, if shorter) before it expires;
// long waits are cut into hourly checks because setTimeout overflows past ~24 days.
export function scheduleRefresh() {
  clearTimeout(refreshTimer);
  const meta = tokenMeta();
  if (!meta.guest || !meta.expires_at || !token()) return;
  const left = meta.expires_at * 1000 - Date.now();
  refreshDue = Date.now() + left - Math.min(60_000, Math.max(left / 10, 5_000));
  refreshTimer = setTimeout(refreshGuest, Math.max(0, Math.min(refreshDue - Date.now(), 3_600_000)));
}

async function refreshGuest() {
  if (Date.now() < refreshDue - 1000) return scheduleRefresh();  // an hourly check, not due yet
  const meta = tokenMeta();
  try {
    const answer = await request('POST', '/auth/guest/refresh');
    setToken(answer.token, { ...answer, guest: true });
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      window.dispatchEvent(new CustomEvent('swiperank:signed-out', { detail: 'Your guest session expired.' }));
      return;
    }
    // Offline or a passing error: try again soon while the token is still valid.
    if (meta.expires_at * 1000 > Date.now()) refreshTimer = setTimeout(refreshGuest, 15_000);
  }
}

/** A fresh client id (swipe_id, like_id); randomUUID needs a secure context, hence the fallback. */
export function newID() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, x => x.toString(16).padStart(2, '0')).join('');
}

/** The user-facing text of any failure. */
export function describe(error) {
  if (error instanceof ApiError || error instanceof NetworkError) return error.message;
  return 'Something went wrong.';
}
