// JSON parsing and writing that never rounds large integers.
//
// The HTTP API sends u64 offsets and u128 message ids as bare JSON numbers.
// JSON.parse turns every number into a float64, so 2^53+1 silently becomes
// 2^53. parse() below is a small complete JSON parser: an integer literal
// that fits in Number.MAX_SAFE_INTEGER becomes a Number, a larger one a
// BigInt, and any other number (fraction or exponent) a Number as usual.
// stringify() writes BigInt values back as bare digits.

/** Error thrown for malformed JSON text, with the byte position. */
export class JSONSyntaxError extends Error {
  constructor(message, pos) {
    super(`${message} at position ${pos}`);
    this.name = 'JSONSyntaxError';
    this.pos = pos;
  }
}

const MAX_DEPTH = 512;
const INT_RE = /^-?(0|[1-9][0-9]*)$/;

/**
 * Parses JSON text. Integers beyond ±(2^53-1) are returned as BigInt.
 * @param {string} text
 * @returns {any}
 */
export function parse(text) {
  let i = 0;
  const n = text.length;

  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const fail = (msg) => {
    throw new JSONSyntaxError(msg, i);
  };

  const number = () => {
    const start = i;
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (text[i] >= '1' && text[i] <= '9') while (text[i] >= '0' && text[i] <= '9') i++;
    else fail('invalid number');
    let integral = true;
    if (text[i] === '.') {
      integral = false;
      i++;
      if (!(text[i] >= '0' && text[i] <= '9')) fail('invalid fraction');
      while (text[i] >= '0' && text[i] <= '9') i++;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      integral = false;
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!(text[i] >= '0' && text[i] <= '9')) fail('invalid exponent');
      while (text[i] >= '0' && text[i] <= '9') i++;
    }
    const lit = text.slice(start, i);
    if (integral) {
      const v = Number(lit);
      if (Number.isSafeInteger(v)) return v;
      return BigInt(lit);
    }
    return Number(lit);
  };

  const string = () => {
    i++; // opening quote
    let out = '';
    let chunk = i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(chunk, i);
        i++;
        return out;
      }
      if (c < 0x20) fail('control character in string');
      if (c === 0x5c) {
        out += text.slice(chunk, i);
        i++;
        const e = text[i];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const hex = text.slice(i + 1, i + 5);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('invalid unicode escape');
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default: fail('invalid escape');
        }
        i++;
        chunk = i;
        continue;
      }
      i++;
    }
  };

  const literal = (word, value) => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail('unexpected token');
  };

  const value = (depth) => {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj = {};
      ws();
      if (text[i] === '}') { i++; return obj; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected string key');
        const k = string();
        ws();
        if (text[i] !== ':') fail('expected colon');
        i++;
        // defineProperty so that a "__proto__" key is data, not a prototype.
        Object.defineProperty(obj, k, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return obj; }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      ws();
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return arr; }
        fail('expected , or ]');
      }
    }
    if (c === '"') return string();
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    if (c === 't') return literal('true', true);
    if (c === 'f') return literal('false', false);
    if (c === 'n') return literal('null', null);
    return fail(i >= n ? 'unexpected end' : 'unexpected token');
  };

  const v = value(0);
  ws();
  if (i !== n) fail('trailing characters');
  return v;
}

/**
 * Writes a value as JSON; BigInt values become bare integer literals.
 * @param {any} value
 * @param {number} [indent] spaces per level (0 = compact)
 * @returns {string}
 */
export function stringify(value, indent = 0) {
  const pad = (d) => (indent ? '\n' + ' '.repeat(indent * d) : '');
  const sep = indent ? ': ' : ':';
  const walk = (v, d) => {
    if (v === null || v === undefined) return 'null';
    switch (typeof v) {
      case 'bigint': return v.toString();
      case 'number': return Number.isFinite(v) ? String(v) : 'null';
      case 'boolean': return v ? 'true' : 'false';
      case 'string': return JSON.stringify(v);
      default: break;
    }
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return '[' + v.map((x) => pad(d + 1) + walk(x, d + 1)).join(',') + pad(d) + ']';
    }
    const keys = Object.keys(v).filter((k) => v[k] !== undefined);
    if (keys.length === 0) return '{}';
    return '{' + keys.map((k) => pad(d + 1) + JSON.stringify(k) + sep + walk(v[k], d + 1)).join(',') + pad(d) + '}';
  };
  return walk(value, 0);
}

/**
 * Converts a Number, BigInt or decimal string to BigInt (for arithmetic on
 * offsets). Returns null for anything else.
 * @param {any} v
 * @returns {bigint|null}
 */
export function toBig(v) {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && INT_RE.test(v.trim())) return BigInt(v.trim());
  return null;
}

/**
 * Returns a JSON-ready integer: a Number when it is safe, else a BigInt.
 * @param {bigint|number|string} v
 */
export function toWireInt(v) {
  const b = toBig(v);
  if (b === null) throw new TypeError(`not an integer: ${v}`);
  const lim = BigInt(Number.MAX_SAFE_INTEGER);
  return b <= lim && b >= -lim ? Number(b) : b;
}
