// The page side of locators. The runtime calls this function in the page with a spec
// {steps, op, arg, tid} and, after it, the elements that accessibility queries (getByRole,
// getByLabel) found, which Chromium computed. It returns {n, p?, v?, w?}: the number of
// elements matched, previews of them when an operation needs one element and got several or
// none, the operation's value, or what an action is waiting for.
async function pwscriptEngine(spec, ...ax) {
  const normalize = (s) => String(s).replace(/\u200b/g, '').trim().replace(/\s+/g, ' ');
  const texts = new Map();

  // The text Playwright matches getByText and hasText against: text of child nodes and
  // elements, skipping script and style, and the value of button-like inputs.
  function elementText(node) {
    let t = texts.get(node);
    if (t !== undefined) return t;
    t = '';
    if (node.nodeType === 1 && node.nodeName === 'INPUT' && ['button', 'submit', 'reset'].includes(node.type)) {
      t = node.value;
    } else {
      for (let c = node.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) t += c.nodeValue;
        else if (c.nodeType === 1 && !skipForText(c)) t += elementText(c);
      }
      if (node.shadowRoot) t += elementText(node.shadowRoot);
    }
    texts.set(node, t);
    return t;
  }
  function skipForText(el) {
    return ['SCRIPT', 'NOSCRIPT', 'STYLE', 'TEMPLATE'].includes(el.nodeName) || (document.head && document.head.contains(el));
  }
  function matches(m, s) {
    if (m.re !== undefined) return new RegExp(m.re, m.f).test(normalize(s));
    const t = normalize(s), want = normalize(m.s);
    return m.x ? t === want : t.toLowerCase().includes(want.toLowerCase());
  }
  // An element matches getByText when its text matches and no child element's text does on
  // its own: the smallest element holding the text.
  function matchesSelf(m, el) {
    if (skipForText(el) || !matches(m, elementText(el))) return false;
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
      if (!skipForText(c) && matches(m, elementText(c))) return false;
    }
    return true;
  }

  function allElements(root) {
    const out = [];
    const visit = (r) => {
      for (const el of r.querySelectorAll('*')) {
        out.push(el);
        if (el.shadowRoot) visit(el.shadowRoot);
      }
    };
    visit(root);
    return out;
  }
  function cssAll(root, sel) {
    const out = [...root.querySelectorAll(sel)];
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) out.push(...cssAll(el.shadowRoot, sel));
    return out;
  }
  function inDocumentOrder(els) {
    const uniq = [...new Set(els)];
    uniq.sort((a, b) => (a === b ? 0 : a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    return uniq;
  }
  const within = (scope, el) => scope === document || (scope !== el && scope.contains(el));

  // Playwright's CSS: the browser's selectors plus the pseudo-classes it does not know —
  // :has-text(), :text(), :text-is(), :text-matches(), :visible, :nth-match(), the layout
  // ones (:right-of() …) and :has()/:is()/:not() holding any of them. A selector with none
  // of them goes to querySelectorAll as it is.
  const pwCSS = (() => {
    const custom = new Set(['has-text', 'text', 'text-is', 'text-matches', 'visible', 'nth-match', 'right-of', 'left-of', 'above', 'below', 'near']);
    const extRe = /:(has-text|text|text-is|text-matches|visible|nth-match|right-of|left-of|above|below|near)(?![\w-])/;
    const extended = (sel) => extRe.test(sel);
    const parsed = new Map();

    // split cuts s at top-level occurrences of the characters in seps (outside quotes,
    // parentheses and brackets).
    function scan(s, onChar) {
      let depth = 0, quote = '';
      for (let i = 0; i < s.length; i++) {
        const c = s[i];
        if (quote) { if (c === '\\') i++; else if (c === quote) quote = ''; continue; }
        if (c === '"' || c === "'") { quote = c; continue; }
        if (c === '\\') { i++; continue; }
        if (c === '(' || c === '[') depth++;
        else if (c === ')' || c === ']') depth--;
        else if (depth === 0 && onChar(c, i) === false) return;
      }
    }
    function splitList(s) {
      const out = [];
      let start = 0;
      scan(s, (c, i) => { if (c === ',') { out.push(s.slice(start, i)); start = i + 1; } });
      out.push(s.slice(start));
      return out.map((x) => x.trim()).filter((x) => x);
    }
    // parseComplex: compounds and the combinators between them.
    function parseComplex(s) {
      const compounds = [], combs = [];
      let cur = '', pendingComb = '';
      let depth = 0, quote = '';
      const flush = () => { if (cur.trim()) { if (compounds.length) combs.push(pendingComb || ' '); compounds.push(parseCompound(cur.trim())); } cur = ''; pendingComb = ''; };
      for (let i = 0; i < s.length; i++) {
        const c = s[i];
        if (quote) { cur += c; if (c === '\\') { cur += s[++i] || ''; } else if (c === quote) quote = ''; continue; }
        if (c === '"' || c === "'") { quote = c; cur += c; continue; }
        if (c === '(' || c === '[') depth++;
        if (c === ')' || c === ']') depth--;
        if (depth === 0 && (c === '>' || c === '+' || c === '~')) { flush(); pendingComb = c; continue; }
        if (depth === 0 && /\s/.test(c)) { if (cur.trim()) flush(); continue; }
        cur += c;
      }
      flush();
      return { compounds, combs };
    }
    // parseCompound: the native part and the pseudo-classes evaluated here.
    function parseCompound(s) {
      let css = '';
      const pseudos = [];
      for (let i = 0; i < s.length;) {
        if (s[i] === ':' && s[i + 1] !== ':') {
          const m = /^:([\w-]+)/.exec(s.slice(i));
          const name = m[1];
          let j = i + m[0].length, arg;
          if (s[j] === '(') {
            let depth = 0, quote = '', k = j;
            for (; k < s.length; k++) {
              const c = s[k];
              if (quote) { if (c === '\\') k++; else if (c === quote) quote = ''; continue; }
              if (c === '"' || c === "'") { quote = c; continue; }
              if (c === '(') depth++;
              if (c === ')' && --depth === 0) break;
            }
            arg = s.slice(j + 1, k);
            j = k + 1;
          }
          if (custom.has(name) || (['has', 'is', 'not', 'where'].includes(name) && extended(arg || ''))) {
            pseudos.push({ name, arg });
          } else {
            css += s.slice(i, j);
          }
          i = j;
          continue;
        }
        css += s[i++];
      }
      return { css: css.trim(), pseudos };
    }
    function unquote(a) {
      a = a.trim();
      if (a.length > 1 && (a[0] === '"' || a[0] === "'") && a[a.length - 1] === a[0]) return a.slice(1, -1).replace(/\\(.)/g, '$1');
      return a;
    }
    function list(sel) {
      let l = parsed.get(sel);
      if (!l) { l = splitList(sel).map(parseComplex); parsed.set(sel, l); }
      return l;
    }
    const parent = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;
    function matchesFrom(el, cx, i) {
      if (!matchesCompound(el, cx.compounds[i])) return false;
      if (i === 0) return true;
      switch (cx.combs[i - 1]) {
        case '>': { const p = parent(el); return !!p && matchesFrom(p, cx, i - 1); }
        case '+': { const p = el.previousElementSibling; return !!p && matchesFrom(p, cx, i - 1); }
        case '~': for (let p = el.previousElementSibling; p; p = p.previousElementSibling) if (matchesFrom(p, cx, i - 1)) return true; return false;
        default: for (let p = parent(el); p; p = parent(p)) if (matchesFrom(p, cx, i - 1)) return true; return false;
      }
    }
    function matchesCompound(el, c) {
      if (c.css && c.css !== '*' && !el.matches(c.css)) return false;
      return c.pseudos.every((p) => pseudo(el, p));
    }
    function matchesSelector(el, sel) {
      return list(sel).some((cx) => matchesFrom(el, cx, cx.compounds.length - 1));
    }
    const nthCache = new Map();
    function pseudo(el, p) {
      switch (p.name) {
        case 'visible': return isVisible(el);
        case 'has-text': return !skipForText(el) && matches({ s: unquote(p.arg) }, elementText(el));
        case 'text': return matchesSelf({ s: unquote(p.arg) }, el);
        case 'text-is': return matchesSelf({ s: unquote(p.arg), x: true }, el);
        case 'text-matches': {
          const args = splitList(p.arg);
          return matchesSelf({ re: unquote(args[0]), f: args[1] ? unquote(args[1]) : '' }, el);
        }
        case 'has': return query(p.arg, [el]).length > 0;
        case 'is': case 'where': return matchesSelector(el, p.arg);
        case 'not': return !matchesSelector(el, p.arg);
        case 'nth-match': {
          const args = splitList(p.arg);
          const n = parseInt(args[args.length - 1], 10);
          const inner = p.arg.slice(0, p.arg.lastIndexOf(','));
          let all = nthCache.get(inner);
          if (!all) { all = query(inner, [el.ownerDocument]); nthCache.set(inner, all); }
          return all[n - 1] === el;
        }
        default: return layoutDistance(el, p) !== undefined;
      }
    }
    // The layout pseudo-classes, as Playwright scores them: the element must lie wholly on
    // that side of some anchor (within maxDistance, default unlimited; 50px for :near).
    function layoutDistance(el, p) {
      const args = splitList(p.arg);
      let inner = p.arg, max;
      if (args.length > 1 && /^\d+$/.test(args[args.length - 1])) { max = +args[args.length - 1]; inner = p.arg.slice(0, p.arg.lastIndexOf(',')); }
      const box = el.getBoundingClientRect();
      let best;
      for (const a of query(inner, [el.ownerDocument])) {
        if (a === el) continue;
        const b = a.getBoundingClientRect();
        let d;
        const dx = Math.max(b.left - box.right, box.left - b.right, 0), dy = Math.max(b.top - box.bottom, box.top - b.bottom, 0);
        switch (p.name) {
          case 'right-of': if (box.left >= b.right) d = box.left - b.right + dy; break;
          case 'left-of': if (box.right <= b.left) d = b.left - box.right + dy; break;
          case 'above': if (box.bottom <= b.top) d = b.top - box.bottom + dx; break;
          case 'below': if (box.top >= b.bottom) d = box.top - b.bottom + dx; break;
          case 'near': { const dd = Math.max(dx, dy); if (dd <= (max === undefined ? 50 : max)) d = dd; break; }
        }
        if (d === undefined || (max !== undefined && p.name !== 'near' && d > max)) continue;
        if (best === undefined || d < best) best = d;
      }
      return best;
    }
    function query(sel, scopes) {
      const out = [];
      for (const cx of list(sel)) {
        const last = cx.compounds[cx.compounds.length - 1];
        for (const s of scopes) {
          for (const el of cssAll(s, last.css || '*')) if (matchesFrom(el, cx, cx.compounds.length - 1)) out.push(el);
        }
      }
      const els = inDocumentOrder(out);
      // Layout pseudo-classes sort by distance to the anchor, nearest first, as Playwright does.
      const lay = list(sel).flatMap((cx) => cx.compounds[cx.compounds.length - 1].pseudos).filter((p) => ['right-of', 'left-of', 'above', 'below', 'near'].includes(p.name));
      if (lay.length) {
        const score = new Map(els.map((el) => [el, lay.reduce((acc, p) => acc + (layoutDistance(el, p) || 0), 0)]));
        els.sort((a, b) => score.get(a) - score.get(b));
      }
      return els;
    }
    return { extended, query };
  })();

  function apply(scopes, step) {
    switch (step.t) {
      case 'css':
        if (!pwCSS.extended(step.s)) return inDocumentOrder(scopes.flatMap((s) => cssAll(s, step.s)));
        return pwCSS.query(step.s, scopes);
      case 'frame':
        // Into an iframe's document: readable for a frame of the page's own origin only.
        return scopes.flatMap((el) => {
          if (el.nodeName !== 'IFRAME' && el.nodeName !== 'FRAME') return [];
          try { return el.contentDocument ? [el.contentDocument] : []; } catch (e) { return []; }
        });
      case 'framepath': {
        let docs = [document];
        for (const p of step.path) {
          const next = [];
          for (const d of docs) {
            const alike = [...d.querySelectorAll('iframe, frame')].filter((f) => {
              try { return f.contentWindow.name === p.name && f.contentWindow.location.href === p.url; } catch (e) { return false; }
            });
            const f = alike[p.idx];
            try { if (f && f.contentDocument) next.push(f.contentDocument); } catch (e) { /* another origin */ }
          }
          docs = next;
        }
        return docs;
      }
      case 'xpath': {
        const out = [];
        for (const s of scopes) {
          const r = document.evaluate(step.s, s, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
          for (let i = 0; i < r.snapshotLength; i++) {
            const n = r.snapshotItem(i);
            if (n.nodeType === 1) out.push(n);
          }
        }
        return inDocumentOrder(out);
      }
      case 'text':
        return inDocumentOrder(scopes.flatMap((s) => [...(s.nodeType === 1 ? [s] : []), ...allElements(s)].filter((el) => matchesSelf(step.m, el))));
      case 'attr':
        return inDocumentOrder(scopes.flatMap((s) => allElements(s).filter((el) => el.hasAttribute(step.a) && matches(step.m, el.getAttribute(step.a)))));
      case 'testid':
        return inDocumentOrder(scopes.flatMap((s) => allElements(s).filter((el) => el.getAttribute(spec.tid) === step.s)));
      case 'ax': {
        // Parts of the browser's own controls (the fields inside a date input) are in the
        // accessibility tree but not in the page's DOM.
        // An element of another origin's frame reaches the page as undefined: out of reach.
        const inPage = (el) => { if (!el) return false; const root = el.getRootNode(); return root.nodeType === 9 || (!!root.host && root.host.shadowRoot === root); };
        const found = ax.slice(step.i, step.i + step.n).filter(inPage);
        return inDocumentOrder(found.filter((el) => scopes.some((s) => within(s, el))));
      }
      case 'nth': {
        const i = step.i < 0 ? scopes.length + step.i : step.i;
        return i >= 0 && i < scopes.length ? [scopes[i]] : [];
      }
      case 'filter':
        return scopes.filter((el) =>
          (!step.ht || matches(step.ht, elementText(el))) &&
          (!step.hnt || !matches(step.hnt, elementText(el))) &&
          (!step.has || run(step.has, [el]).length > 0) &&
          (!step.hasNot || run(step.hasNot, [el]).length === 0) &&
          (step.vis === undefined || isVisible(el) === step.vis));
      case 'and': {
        const other = new Set(run(step.o, [document]));
        return scopes.filter((el) => other.has(el));
      }
      case 'or':
        return inDocumentOrder([...scopes, ...run(step.o, [document])]);
    }
    throw new Error('unknown locator step ' + step.t);
  }
  function run(steps, scopes) {
    let cur = scopes;
    for (const step of steps) cur = apply(cur, step);
    return cur;
  }

  // Playwright's visibility: a non-empty box and visibility: visible.
  function isVisible(el) {
    const style = getComputedStyle(el);
    if (style.display === 'contents') {
      for (let c = el.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 1 && isVisible(c)) return true;
        if (c.nodeType === 3) {
          const r = document.createRange();
          r.selectNodeContents(c);
          const b = r.getBoundingClientRect();
          if (b.width > 0 && b.height > 0) return true;
        }
      }
      return false;
    }
    if (el.checkVisibility && !el.checkVisibility()) return false;
    if (style.visibility !== 'visible') return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }
  function isDisabled(el) {
    if (['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP'].includes(el.nodeName) && el.matches(':disabled')) return true;
    return !!el.closest('[aria-disabled="true"]');
  }
  function isEditable(el) {
    if (isDisabled(el)) return false;
    if (['INPUT', 'TEXTAREA', 'SELECT'].includes(el.nodeName)) return !el.readOnly;
    if (el.isContentEditable) return true;
    if (el.getAttribute('aria-readonly') === 'true') return false;
    return ['textbox', 'searchbox', 'combobox', 'spinbutton', 'gridcell'].includes(el.getAttribute('role') || '');
  }
  function checkedState(el) {
    if (el.nodeName === 'INPUT' && ['checkbox', 'radio'].includes(el.type)) return el.checked;
    const role = el.getAttribute('role') || '';
    if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem'].includes(role)) {
      const a = el.getAttribute('aria-checked');
      return a === 'true' || a === 'mixed';
    }
    throw new Error('Not a checkbox or radio button');
  }
  function inputValue(el) {
    if (['INPUT', 'TEXTAREA', 'SELECT'].includes(el.nodeName)) return el.value;
    throw new Error('Node is not an <input>, <textarea> or <select> element');
  }

  const voidTags = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
  function preview(el) {
    const tag = el.nodeName.toLowerCase();
    let attrs = '';
    for (const a of el.attributes) {
      if (a.name === 'style') continue;
      const v = a.value.length > 50 ? a.value.slice(0, 49) + '…' : a.value;
      attrs += ' ' + a.name + (a.value ? '="' + v + '"' : '');
      if (attrs.length > 200) break;
    }
    if (voidTags.has(tag)) return '<' + tag + attrs + '/>';
    const t = normalize(el.textContent || '');
    return '<' + tag + attrs + '>' + (t.length > 50 ? t.slice(0, 49) + '…' : t) + '</' + tag + '>';
  }

  function read(el, a) {
    switch (a.k) {
      case 'textContent': return el.textContent;
      case 'innerText': return el.innerText;
      case 'innerHTML': return el.innerHTML;
      case 'inputValue': return inputValue(el);
      case 'attr': return el.getAttribute(a.name);
      case 'visible': return isVisible(el);
      case 'enabled': return !isDisabled(el);
      case 'editable': return isEditable(el);
      case 'checked': return checkedState(el);
      case 'focused': return el === el.ownerDocument.activeElement || el.contains(el.ownerDocument.activeElement);
      case 'box': {
        const r = el.getBoundingClientRect();
        if (!isVisible(el)) return null;
        const off = frameOffset(el);
        return { x: r.left + off.x + scrollX, y: r.top + off.y + scrollY, width: r.width, height: r.height };
      }
      case 'text': return a.inner ? el.innerText : el.textContent;
      case 'tag': return el.nodeName.toLowerCase();
    }
    throw new Error('unknown read ' + a.k);
  }

  const frame = () => new Promise((resolve) => { requestAnimationFrame(() => resolve()); setTimeout(resolve, 100); });
  // frameOffset is where the viewport of el's frame sits in the page's: input events take
  // the page's coordinates.
  function frameOffset(el) {
    let x = 0, y = 0;
    for (let w = el.ownerDocument.defaultView; w && w !== window && w.frameElement; w = w.frameElement.ownerDocument.defaultView) {
      const fe = w.frameElement, r = fe.getBoundingClientRect(), cs = getComputedStyle(fe);
      x += r.left + fe.clientLeft + parseFloat(cs.paddingLeft);
      y += r.top + fe.clientTop + parseFloat(cs.paddingTop);
    }
    return { x, y };
  }
  function hitTarget(x, y, doc = document) {
    let hit = doc.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }
  function receives(el, hit) {
    if (!hit) return false;
    if (hit === el || el.contains(hit)) return true;
    const label = hit.closest('label');
    return !!(label && label.control === el);
  }

  // point: after the actionability checks, the viewport point to click or hover.
  async function point(el, a) {
    if (!a.force) {
      if (!isVisible(el)) return { w: 'element is not visible' };
      if (a.enabled && isDisabled(el)) return { w: 'element is not enabled' };
    }
    if (el.scrollIntoViewIfNeeded) el.scrollIntoViewIfNeeded(true);
    else el.scrollIntoView({ block: 'center', inline: 'center' });
    const r1 = el.getBoundingClientRect();
    await frame();
    const r = el.getBoundingClientRect();
    if (!a.force && (r1.left !== r.left || r1.top !== r.top || r1.width !== r.width || r1.height !== r.height)) return { w: 'element is not stable' };
    const x = a.pos ? r.left + a.pos.x : r.left + r.width / 2;
    const y = a.pos ? r.top + a.pos.y : r.top + r.height / 2;
    if (!a.force) {
      const hit = hitTarget(x, y, el.ownerDocument);
      if (!receives(el, hit)) return { w: (hit ? preview(hit) : 'another element') + ' intercepts pointer events' };
    }
    const off = frameOffset(el);
    return { v: { x: x + off.x, y: y + off.y } };
  }

  const textTypes = new Set(['', 'email', 'number', 'password', 'search', 'tel', 'text', 'url']);
  const setTypes = new Set(['color', 'date', 'time', 'datetime-local', 'month', 'range', 'week']);
  // fill: focus the field and select its content; the runtime then types the value with
  // Input.insertText. Fields typed as dates and the like get their value set directly.
  function fill(el, value) {
    if (!isVisible(el)) return { w: 'element is not visible' };
    if (el.nodeName === 'INPUT') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (!textTypes.has(type) && !setTypes.has(type)) throw new Error('Input of type "' + type + '" cannot be filled');
      if (isDisabled(el)) return { w: 'element is not enabled' };
      if (el.readOnly) return { w: 'element is not editable' };
      if (setTypes.has(type)) {
        el.focus();
        el.value = value;
        if (el.value !== value) throw new Error('Malformed value');
        el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
        return { v: 'set' };
      }
      el.focus();
      el.select();
      return { v: 'type' };
    }
    if (el.nodeName === 'TEXTAREA') {
      if (isDisabled(el)) return { w: 'element is not enabled' };
      if (el.readOnly) return { w: 'element is not editable' };
      el.focus();
      el.select();
      return { v: 'type' };
    }
    if (el.isContentEditable) {
      el.focus();
      const range = document.createRange();
      range.selectNodeContents(el);
      const sel = getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      return { v: 'type' };
    }
    throw new Error('Element is not an <input>, <textarea> or [contenteditable] element');
  }

  // setFiles: setInputFiles with files made from the script's bytes.
  function setFiles(el, files) {
    if (el.nodeName !== 'INPUT' || el.type !== 'file') throw new Error('Node is not an HTMLInputElement of type file');
    if (files.length > 1 && !el.multiple) throw new Error('Error: Non-multiple file input can only accept single file');
    if (isDisabled(el)) return { w: 'element is not enabled' };
    const dt = new DataTransfer();
    for (const f of files) {
      const bin = atob(f.b64), bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], f.name, { type: f.mimeType || '' }));
    }
    el.files = dt.files;
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { v: true };
  }

  function selectOption(el, wanted) {
    if (el.nodeName !== 'SELECT') throw new Error('Element is not a <select> element');
    if (!isVisible(el)) return { w: 'element is not visible' };
    if (isDisabled(el)) return { w: 'element is not enabled' };
    const options = [...el.options];
    const chosen = [];
    for (const w of wanted) {
      const o = options.find((o, i) =>
        (w.value !== undefined && o.value === w.value) || (w.label !== undefined && o.label === w.label) ||
        (w.index !== undefined && i === w.index) || (w.any !== undefined && (o.value === w.any || o.label === w.any)));
      if (!o) return { w: 'did not find some options' };
      chosen.push(o);
    }
    if (!el.multiple && chosen.length > 1) throw new Error('Error: Target select element is not multiple, but multiple options are being selected');
    for (const o of options) o.selected = chosen.includes(o);
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { v: chosen.map((o) => o.value) };
  }

  const els = run(spec.steps, [document]);
  const out = { n: els.length };
  const single = () => {
    if (els.length === 1) return els[0];
    if (els.length > 1) out.p = els.slice(0, 10).map(preview);
    return null;
  };
  let el;
  switch (spec.op) {
    case 'count':
      break;
    case 'previews':
      out.p = els.slice(0, 10).map(preview);
      break;
    case 'all':
      out.v = els.map((e) => read(e, spec.arg));
      break;
    case 'read':
      if ((el = single())) out.v = read(el, spec.arg);
      break;
    case 'point':
      if ((el = single())) Object.assign(out, await point(el, spec.arg));
      break;
    case 'fill':
      if ((el = single())) Object.assign(out, fill(el, spec.arg));
      break;
    case 'select':
      if ((el = single())) Object.assign(out, selectOption(el, spec.arg));
      break;
    case 'focus':
      if ((el = single())) { el.focus(); out.v = true; }
      break;
    case 'blur':
      if ((el = single())) { el.blur(); out.v = true; }
      break;
    case 'clear':
      if ((el = single())) Object.assign(out, fill(el, ''));
      break;
    case 'scroll':
      if ((el = single())) { el.scrollIntoView({ block: 'center', inline: 'center' }); out.v = true; }
      break;
    case 'files':
      if ((el = single())) Object.assign(out, setFiles(el, spec.arg));
      break;
    case 'selectText':
      if ((el = single())) {
        if (!isVisible(el)) { out.w = 'element is not visible'; break; }
        if (el.nodeName === 'INPUT' || el.nodeName === 'TEXTAREA') { el.focus(); el.select(); } else {
          const range = el.ownerDocument.createRange();
          range.selectNodeContents(el);
          const sel = el.ownerDocument.getSelection();
          sel.removeAllRanges();
          sel.addRange(range);
        }
        out.v = true;
      }
      break;
    case 'dispatch':
      if ((el = single())) { el.dispatchEvent(new Event(spec.arg, { bubbles: true, cancelable: true, composed: true })); out.v = true; }
      break;
    default:
      throw new Error('unknown operation ' + spec.op);
  }
  return out;
}
