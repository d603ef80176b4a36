// Formatting and encoding helpers shared by the pages: times, durations,
// sizes, base64, UTF-8, hex dumps and typed header values. Pure functions,
// unit-tested under console/unit.

import { toBig } from './bigjson.js';

/** u64::MAX, the API's "never" for expiries and "unlimited" for sizes. */
export const U64_MAX = 18446744073709551615n;

const pad = (n, w = 2) => String(n).padStart(w, '0');

/**
 * Formats a microsecond Unix timestamp as local "YYYY-MM-DD HH:MM:SS.mmm".
 * @param {number|bigint|null|undefined} us
 */
export function fmtTime(us) {
  const b = toBig(us);
  if (b === null || b === 0n) return '—';
  const d = new Date(Number(b / 1000n));
  if (Number.isNaN(d.getTime())) return String(us);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/**
 * Formats a duration in microseconds as "1d 2h 3m 4s", at most maxParts
 * units (Infinity = exact, readable back by parseDuration).
 */
export function fmtDuration(us, maxParts = 3) {
  let b = toBig(us);
  if (b === null) return String(us);
  if (b === 0n) return '0s';
  const parts = [];
  const units = [['d', 86400000000n], ['h', 3600000000n], ['m', 60000000n], ['s', 1000000n], ['ms', 1000n], ['µs', 1n]];
  for (const [name, size] of units) {
    if (b >= size) {
      parts.push(`${b / size}${name}`);
      b %= size;
    }
    if (parts.length >= maxParts) break;
  }
  return parts.join(' ');
}

/** Formats a topic message_expiry: 0 = server default, u64::MAX = never. */
export function fmtExpiry(us) {
  const b = toBig(us);
  if (b === null) return String(us);
  if (b === U64_MAX) return 'never';
  if (b === 0n) return 'server default';
  return fmtDuration(b);
}

/** Formats max_topic_size: 0 = server default, u64::MAX = unlimited. */
export function fmtMaxSize(bytes) {
  const b = toBig(bytes);
  if (b === null) return String(bytes);
  if (b === U64_MAX) return 'unlimited';
  if (b === 0n) return 'server default';
  return fmtBytes(b);
}

const DUR_UNITS = {
  us: 1n, 'µs': 1n, ms: 1000n, s: 1000000n, sec: 1000000n, m: 60000000n, min: 60000000n,
  h: 3600000000n, hour: 3600000000n, hours: 3600000000n, d: 86400000000n, day: 86400000000n,
  days: 86400000000n, w: 604800000000n, week: 604800000000n, weeks: 604800000000n,
};

/**
 * Parses a human duration such as "1d 2h 30min", "7 days" or "90s" into
 * microseconds (BigInt). A bare integer is taken as seconds. Returns null if
 * the text is not a duration.
 * @param {string} text
 */
export function parseDuration(text) {
  const t = String(text).trim().toLowerCase();
  if (t === '') return null;
  if (/^[0-9]+$/.test(t)) return BigInt(t) * 1000000n;
  const re = /([0-9]+)\s*([a-zµ]+)/g;
  let total = 0n;
  let consumed = '';
  let m;
  while ((m = re.exec(t)) !== null) {
    const unit = DUR_UNITS[m[2]];
    if (unit === undefined) return null;
    total += BigInt(m[1]) * unit;
    consumed += m[0];
  }
  if (consumed.replace(/\s+/g, '') !== t.replace(/\s+/g, '')) return null;
  return total;
}

const SIZE_UNITS = {
  b: 1n, kb: 1000n, mb: 1000000n, gb: 1000000000n, tb: 1000000000000n,
  kib: 1024n, mib: 1048576n, gib: 1073741824n, tib: 1099511627776n,
};

/** Parses "1 GiB", "500 MB" or a bare byte count into a BigInt; null if invalid. */
export function parseSize(text) {
  const t = String(text).trim().toLowerCase();
  const m = /^([0-9]+)\s*([a-z]*)$/.exec(t);
  if (!m) return null;
  const unit = m[2] === '' ? 1n : SIZE_UNITS[m[2]];
  if (unit === undefined) return null;
  return BigInt(m[1]) * unit;
}

/** Formats a byte count with binary units: 1536 -> "1.5 KiB". */
export function fmtBytes(n) {
  const b = toBig(n);
  let v = b === null ? Number(n) : Number(b);
  if (!Number.isFinite(v)) return String(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const s = u === 0 ? String(Math.round(v)) : v.toFixed(v < 10 ? 2 : 1).replace(/\.?0+$/, '');
  return `${s} ${units[u]}`;
}

/**
 * Parses the API's size strings ("3136.5 KiB", "1.234 KB", "0 B") into a
 * byte count (Number; precision beyond 2^53 is irrelevant for charts).
 */
export function sizeStringToBytes(s) {
  if (typeof s === 'number') return s;
  if (typeof s === 'bigint') return Number(s);
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$/.exec(String(s));
  if (!m) return NaN;
  const mult = {
    '': 1, B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, PB: 1e15, EB: 1e18,
    KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, PiB: 1024 ** 5, EiB: 1024 ** 6,
  }[m[2]];
  return mult === undefined ? NaN : Number(m[1]) * mult;
}

/** Formats an integer (Number or BigInt) with thin group separators. */
export function fmtInt(n) {
  const b = toBig(n);
  if (b === null) return n === undefined || n === null ? '—' : String(n);
  const neg = b < 0n;
  const s = (neg ? -b : b).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return neg ? '-' + s : s;
}

/** Decodes standard base64 to bytes; throws on invalid input. */
export function b64ToBytes(s) {
  const bin = atob(String(s));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Encodes bytes as standard base64 with padding. */
export function bytesToB64(bytes) {
  let bin = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    bin += String.fromCharCode.apply(null, bytes.subarray(i, i + chunk));
  }
  return btoa(bin);
}

/** UTF-8 encodes a string. */
export function utf8(s) {
  return new TextEncoder().encode(String(s));
}

/**
 * Decodes bytes as UTF-8. valid=false when the bytes are not UTF-8 (the text
 * then shows U+FFFD replacement characters).
 * @returns {{text: string, valid: boolean}}
 */
export function decodeUTF8(bytes) {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), valid: true };
  } catch {
    return { text: new TextDecoder('utf-8').decode(bytes), valid: false };
  }
}

/** True when the bytes look like binary rather than text (NULs or other C0 controls). */
export function looksBinary(bytes) {
  const n = Math.min(bytes.length, 4096);
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c < 0x09 || (c > 0x0d && c < 0x20) || c === 0x7f) return true;
  }
  return false;
}

/** Lower-case hex of bytes, no separators. */
export function toHex(bytes) {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/**
 * Classic hex dump: offset, 16 hex bytes, printable ASCII. At most maxBytes
 * bytes are dumped; the returned text says how many were left out.
 */
export function hexDump(bytes, maxBytes = 64 * 1024) {
  const n = Math.min(bytes.length, maxBytes);
  const lines = [];
  for (let off = 0; off < n; off += 16) {
    const row = bytes.subarray(off, Math.min(off + 16, n));
    let hex = '';
    let asc = '';
    for (let j = 0; j < 16; j++) {
      if (j < row.length) {
        hex += row[j].toString(16).padStart(2, '0') + (j === 7 ? '  ' : ' ');
        asc += row[j] >= 0x20 && row[j] < 0x7f ? String.fromCharCode(row[j]) : '.';
      } else {
        hex += j === 7 ? '    ' : '   ';
      }
    }
    lines.push(`${off.toString(16).padStart(8, '0')}  ${hex} |${asc}|`);
  }
  if (bytes.length > n) lines.push(`… ${bytes.length - n} more bytes not shown`);
  return lines.join('\n');
}

const INT_KINDS = {
  int8: [1, true], int16: [2, true], int32: [4, true], int64: [8, true], int128: [16, true],
  uint8: [1, false], uint16: [2, false], uint32: [4, false], uint64: [8, false], uint128: [16, false],
};

function leInt(bytes, signed) {
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]);
  if (signed && bytes.length > 0 && bytes[bytes.length - 1] & 0x80) v -= 1n << BigInt(bytes.length * 8);
  return v;
}

/**
 * Decodes a header value by its kind name (raw, string, bool, int8..uint128,
 * float32, float64; little endian). Returns {text, ok}; ok=false when the
 * bytes do not fit the kind, and text is then the hex.
 */
export function decodeHeaderValue(kind, bytes) {
  const k = String(kind).toLowerCase();
  if (k === 'string') {
    const d = decodeUTF8(bytes);
    return { text: d.text, ok: d.valid };
  }
  if (k === 'bool') {
    if (bytes.length === 1 && bytes[0] <= 1) return { text: bytes[0] ? 'true' : 'false', ok: true };
    return { text: toHex(bytes), ok: false };
  }
  if (INT_KINDS[k]) {
    const [size, signed] = INT_KINDS[k];
    if (bytes.length !== size) return { text: toHex(bytes), ok: false };
    return { text: leInt(bytes, signed).toString(), ok: true };
  }
  if (k === 'float32' || k === 'float64') {
    const size = k === 'float32' ? 4 : 8;
    if (bytes.length !== size) return { text: toHex(bytes), ok: false };
    const dv = new DataView(bytes.buffer, bytes.byteOffset, size);
    return { text: String(size === 4 ? dv.getFloat32(0, true) : dv.getFloat64(0, true)), ok: true };
  }
  return { text: toHex(bytes), ok: k === 'raw' };
}

/**
 * Encodes a header value typed by the user into bytes for the given kind.
 * raw takes hex. Throws an Error with a readable message on bad input.
 */
export function encodeHeaderValue(kind, text) {
  const k = String(kind).toLowerCase();
  const t = String(text);
  if (k === 'string') return utf8(t);
  if (k === 'raw') {
    const hex = t.replace(/\s+/g, '');
    if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new Error('raw value must be hex bytes');
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
    return out;
  }
  if (k === 'bool') {
    if (t === 'true') return new Uint8Array([1]);
    if (t === 'false') return new Uint8Array([0]);
    throw new Error('bool value must be true or false');
  }
  if (INT_KINDS[k]) {
    const [size, signed] = INT_KINDS[k];
    if (!/^-?[0-9]+$/.test(t.trim())) throw new Error(`${k} value must be an integer`);
    let v = BigInt(t.trim());
    const bits = BigInt(size * 8);
    const min = signed ? -(1n << (bits - 1n)) : 0n;
    const max = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
    if (v < min || v > max) throw new Error(`${k} value out of range`);
    if (v < 0n) v += 1n << bits;
    const out = new Uint8Array(size);
    for (let i = 0; i < size; i++) {
      out[i] = Number(v & 0xffn);
      v >>= 8n;
    }
    return out;
  }
  if (k === 'float32' || k === 'float64') {
    const f = Number(t);
    if (t.trim() === '' || Number.isNaN(f)) throw new Error(`${k} value must be a number`);
    const size = k === 'float32' ? 4 : 8;
    const out = new Uint8Array(size);
    const dv = new DataView(out.buffer);
    if (size === 4) dv.setFloat32(0, f, true);
    else dv.setFloat64(0, f, true);
    return out;
  }
  throw new Error(`unknown header kind ${kind}`);
}

/** The header kinds of the HTTP API, in protocol order. */
export const HEADER_KINDS = ['raw', 'string', 'bool', 'int8', 'int16', 'int32', 'int64', 'int128',
  'uint8', 'uint16', 'uint32', 'uint64', 'uint128', 'float32', 'float64'];

/** Formats a u128 message id as a UUID string (8-4-4-4-12 hex). */
export function u128ToUUID(id) {
  const b = toBig(id);
  if (b === null) return String(id);
  const h = b.toString(16).padStart(32, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Encodes a partition id as the 4-byte little-endian base64 the API wants. */
export function partitionIdValue(id) {
  const n = Number(id) >>> 0;
  return bytesToB64(new Uint8Array([n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]));
}

/** Escapes one CSV field (RFC 4180). */
export function csvField(v) {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

/**
 * Re-formats one of the API's size strings ("143898.92 KB", "71236780 KiB")
 * with binary units ("140.5 MiB"); text that is not a size is returned as is.
 */
export function prettySize(s) {
  const n = sizeStringToBytes(s);
  return Number.isFinite(n) ? fmtBytes(Math.round(n)) : String(s);
}

/** Formats an uptime in microseconds to the second: "3d 4h 5m", "26s". */
export function fmtUptime(us) {
  const b = toBig(us);
  if (b === null) return String(us);
  return fmtDuration((b / 1000000n) * 1000000n, 3);
}
