// Element construction without HTML strings.
//
// Every node of the console is built with h(): text children become Text
// nodes and attributes are set one by one, so data from the server (stream
// names, payloads, headers) can never be interpreted as markup or script.
// The code base has no innerHTML, insertAdjacentHTML or document.write.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(el, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child) append(el, c);
    return;
  }
  if (child instanceof Node) {
    el.appendChild(child);
    return;
  }
  el.appendChild(document.createTextNode(String(child)));
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k === 'class') {
      el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    } else if (k === 'style' && typeof v === 'object') {
      for (const [p, pv] of Object.entries(v)) el.style.setProperty(p, pv);
    } else if (k === 'dataset') {
      for (const [p, pv] of Object.entries(v)) el.dataset[p] = pv;
    } else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected') {
      el[k] = v;
    } else if (k === 'href' && typeof v === 'string' && /^\s*javascript:/i.test(v)) {
      throw new Error('refusing javascript: URL');
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

function isAttrs(x) {
  return x && typeof x === 'object' && !Array.isArray(x) && !(x instanceof Node);
}

/**
 * Creates an HTML element: h('div', {class: 'x', onclick: fn}, 'text', child).
 * @param {string} tag
 * @param {...any} rest optional attributes object, then children
 * @returns {HTMLElement}
 */
export function h(tag, ...rest) {
  const el = document.createElement(tag);
  if (isAttrs(rest[0])) setAttrs(el, rest.shift());
  append(el, rest);
  return el;
}

/** Creates an SVG element with attributes and children. */
export function svg(tag, ...rest) {
  const el = document.createElementNS(SVG_NS, tag);
  if (isAttrs(rest[0])) {
    for (const [k, v] of Object.entries(rest.shift())) {
      if (v !== undefined && v !== null) el.setAttribute(k, String(v));
    }
  }
  append(el, rest);
  return el;
}

/** Replaces all children of el with the given children. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Appends children to el. */
export function add(el, ...children) {
  append(el, children);
  return el;
}
