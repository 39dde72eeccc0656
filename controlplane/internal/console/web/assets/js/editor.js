// A plain-text script editor: a textarea with a line-number gutter, which marks the line of the
// API's syntax error ("line 12, column 5: …") and moves the caret to its column.
import { h, clear } from './ui.js';

export function scriptEditor(name, value) {
  const textarea = h('textarea', { name, rows: 16, spellcheck: 'false', autocapitalize: 'off', wrap: 'off', class: 'script' });
  textarea.value = value;
  const gutter = h('div', { class: 'gutter', 'aria-hidden': 'true' });
  const el = h('div', { class: 'editor' }, gutter, textarea);
  let errorLine = 0;
  const numbers = () => {
    const n = textarea.value.split('\n').length;
    clear(gutter, Array.from({ length: n }, (_, i) => h('span', { class: i + 1 === errorLine ? 'err' : null }, String(i + 1))));
    gutter.scrollTop = textarea.scrollTop;
  };
  textarea.addEventListener('input', () => { errorLine = 0; numbers(); });
  textarea.addEventListener('scroll', () => { gutter.scrollTop = textarea.scrollTop; });
  numbers();
  // markError marks the line of a syntax error in the API's message about the script (the
  // message itself shows under the field) and puts the caret at its column.
  el.markError = (msg) => {
    const m = /line (\d+), column (\d+)/.exec(msg || '');
    errorLine = m ? Number(m[1]) : 0;
    numbers();
    if (!m) return;
    const lines = textarea.value.split('\n');
    const offset = lines.slice(0, errorLine - 1).reduce((a, l) => a + l.length + 1, 0) + Math.max(0, Number(m[2]) - 1);
    textarea.focus();
    textarea.setSelectionRange(offset, Math.min(offset + 1, textarea.value.length));
    const lineHeight = textarea.scrollHeight / Math.max(lines.length, 1);
    textarea.scrollTop = Math.max(0, (errorLine - 4) * lineHeight);
  };
  return { el, textarea };
}
