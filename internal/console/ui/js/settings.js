// Console preferences kept in localStorage: theme and refresh interval.
// Nothing secret is stored here.

const DEFAULTS = { theme: 'system', refreshMs: 5000 };
/** Allowed refresh interval range (ms). */
export const REFRESH_MIN_MS = 1000;
export const REFRESH_MAX_MS = 3600_000;

/** Reads a preference, falling back to its default. */
export function getSetting(name) {
  try {
    if (name === 'theme') {
      const t = localStorage.getItem('iggo.theme');
      return t === 'light' || t === 'dark' || t === 'system' ? t : DEFAULTS.theme;
    }
    if (name === 'refreshMs') {
      const n = Number(localStorage.getItem('iggo.refreshMs'));
      return Number.isFinite(n) && n >= REFRESH_MIN_MS && n <= REFRESH_MAX_MS ? n : DEFAULTS.refreshMs;
    }
  } catch {
    // storage disabled: defaults
  }
  return DEFAULTS[name];
}

/** Stores the refresh interval (clamped). */
export function setRefreshMs(ms) {
  const n = Math.min(REFRESH_MAX_MS, Math.max(REFRESH_MIN_MS, Math.round(Number(ms))));
  localStorage.setItem('iggo.refreshMs', String(n));
  return n;
}

/** Applies the stored theme to the document (data-theme = light | dark). */
export function applyTheme() {
  const t = getSetting('theme');
  const dark = t === 'dark' || (t === 'system' && window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}
