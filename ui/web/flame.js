/*
 * flame.js - pmutop's flame graph page: lays out the call tree pmutop
 * embedded as JSON and draws it on a canvas.
 *
 * Why a canvas: a profile of 100,000 distinct stacks is hundreds of
 * thousands of frames; as SVG or DOM nodes that locks a browser, while a
 * canvas only paints what is wider than a pixel at the current zoom (the
 * rest is skipped whole subtree at a time and counted in a note).
 *
 * The data (pmutop's src/profile/flamegraph.c writes it): nodes of the
 * merged call tree in pre-order with their depth, root first, children
 * sorted by name; per event the inclusive weight and sample count of each
 * node; a frame table (name, module, file, kind) over a string table.
 * Names come from the profiled program and are untrusted: they are only
 * ever drawn with fillText or put in the page with textContent.
 *
 * No request leaves the page, except that a live page (served by pmutop
 * --http) re-fetches its own data from the same server.
 */
(function () {
  'use strict';

  var FRAME_H = 17;          // px per frame row
  var MIN_PX = 1;            // frames narrower than this are not drawn
  var KINDS = [
    { name: 'user', hue: function (h) { return rgb(205 + 50 * h, 40 + 90 * h, 40 + 30 * h); } },
    { name: 'kernel', hue: function (h) { return rgb(225 + 30 * h, 150 + 45 * h, 30 + 25 * h); } },
    { name: 'JIT', hue: function (h) { return rgb(70 + 50 * h, 180 + 50 * h, 70 + 40 * h); } },
    { name: 'unknown', hue: function (h) { return rgb(165 + 30 * h, 165 + 30 * h, 165 + 30 * h); } },
    { name: 'inlined', hue: function (h) { return rgb(70 + 40 * h, 190 + 40 * h, 200 + 30 * h); } },
    { name: 'root', hue: function () { return 'rgb(200,200,200)'; } }
  ];
  var OFFCPU = function (h) { return rgb(50 + 50 * h, 100 + 60 * h, 200 + 55 * h); };
  var MATCH_COLOR = 'rgb(230,0,230)';

  // Ratio presets: event aliases (lower case, '-' and '_' dropped), scale.
  var ALIASES = {
    cycles: ['cycles', 'cpucycles'],
    instructions: ['instructions', 'instr'],
    branches: ['branches', 'branchinstructions'],
    branchMisses: ['branchmisses'],
    cacheMisses: ['cachemisses', 'llcmisses', 'llcloadmisses']
  };
  var PRESETS = [
    { id: 'ipc', label: 'IPC (instructions / cycles)', num: 'instructions', den: 'cycles', scale: 1, unit: '' },
    { id: 'brmiss', label: 'branch-miss % (branchMisses / branches)', num: 'branchMisses', den: 'branches', scale: 100, unit: '%' },
    { id: 'mpki', label: 'cache misses per 1k instructions', num: 'cacheMisses', den: 'instructions', scale: 1000, unit: '' }
  ];

  var $ = function (id) { return document.getElementById(id); };
  var D = null;              // the data
  var T = null;              // the tree: typed arrays derived from D
  var S = {                  // what the user chose
    widthEv: 0, color: null, num: 0, den: 0, inverted: false,
    zoom: 0, re: null, hover: -1
  };
  var drawn = [];            // per depth: node indices drawn, left to right
  var lastDraw = { nodes: 0, skipped: 0, ms: 0 };
  var readyMs = 0;           // performance.now() when the page was drawn and usable
  var phases = {};           // ms spent parsing, building, laying out (for make bench)

  function rgb(r, g, b) { return 'rgb(' + (r | 0) + ',' + (g | 0) + ',' + (b | 0) + ')'; }

  // A stable pseudo-random 0..1 per name, so a function keeps its colour.
  function nameHash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return ((h >>> 0) % 1000) / 1000;
  }

  function normEvent(n) { return String(n).toLowerCase().replace(/:[a-z]*$/, '').replace(/[-_]/g, ''); }
  function findEvent(kind) {
    for (var k = 0; k < D.events.length; k++)
      if (ALIASES[kind].indexOf(normEvent(D.events[k].name)) >= 0) return k;
    return -1;
  }
  function isOffCpu(ev) { return !ev.wall && /off.?cpu|sched.?switch|blocked|wait/i.test(ev.name); }

  // With an off-CPU event and an on-CPU time event (both in nanoseconds), a
  // third, derived width: wall time = on-CPU + off-CPU, per frame. Added to
  // the data's events (marked .wall = [on, off]) so every view treats it as
  // one more event; the header lists only the recorded ones.
  function addWall(data) {
    var ev = data.events, on = -1, off = -1, k;
    for (k = 0; k < ev.length; k++) {
      if (ev[k].wall) return -1;
      if (ev[k].unit !== 'nanoseconds') continue;
      if (isOffCpu(ev[k])) { if (off < 0) off = k; } else if (on < 0) on = k;
    }
    if (on < 0 || off < 0) return -1;
    var nd = data.nodes, n = nd.frame.length, v = new Array(n), c = new Array(n);
    for (var i = 0; i < n; i++) {
      v[i] = nd.value[on][i] + nd.value[off][i];
      c[i] = nd.samples[on][i] + nd.samples[off][i];
    }
    nd.value.push(v);
    nd.samples.push(c);
    ev.push({ name: 'wall (' + ev[on].name + ' + ' + ev[off].name + ')', unit: 'nanoseconds',
              wall: [on, off] });
    return ev.length - 1;
  }
  function wallEvent() {
    for (var k = 0; k < D.events.length; k++) if (D.events[k].wall) return k;
    return -1;
  }

  function fmtCount(v) { return Math.round(v).toLocaleString('en-US'); }
  function fmtValue(v, ev) {
    if (ev.unit === 'nanoseconds') {
      if (v >= 1e9) return (v / 1e9).toFixed(2) + ' s';
      if (v >= 1e6) return (v / 1e6).toFixed(2) + ' ms';
      if (v >= 1e3) return (v / 1e3).toFixed(1) + ' \u00b5s';
      return fmtCount(v) + ' ns';
    }
    return fmtCount(v) + ' ' + ev.name;
  }
  function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(2) + '%' : '-'; }

  // ---- the tree -------------------------------------------------------------

  function build(data) {
    var nd = data.nodes, n = nd.frame.length, k;
    var t = {
      n: n, frame: Int32Array.from(nd.frame), depth: Int32Array.from(nd.depth),
      line: nd.line ? Float64Array.from(nd.line) : new Float64Array(n), value: [], samples: [], base: null,
      parent: new Int32Array(n), end: new Int32Array(n), x: new Float64Array(n), maxDepth: 0,
      names: [], kinds: null
    };
    for (k = 0; k < data.events.length; k++) {
      t.value.push(Float64Array.from(nd.value[k]));
      t.samples.push(Float64Array.from(nd.samples[k]));
    }
    if (nd.base) t.base = Float64Array.from(nd.base);
    // Parents and subtree ends from pre-order + depth.
    var stack = [];
    for (var i = 0; i < n; i++) {
      var d = t.depth[i];
      while (stack.length && t.depth[stack[stack.length - 1]] >= d) t.end[stack.pop()] = i;
      t.parent[i] = stack.length ? stack[stack.length - 1] : -1;
      stack.push(i);
      if (d > t.maxDepth) t.maxDepth = d;
    }
    while (stack.length) t.end[stack.pop()] = n;
    var nf = data.frames.length / 4;
    t.kinds = new Int8Array(nf);
    for (var f = 0; f < nf; f++) {
      t.names.push(data.strings[data.frames[4 * f]]);
      t.kinds[f] = data.frames[4 * f + 3];
    }
    return t;
  }

  // x of every node (in units of the width event): children side by side from the parent's x.
  function layout() {
    var v = T.value[S.widthEv], cursor = new Float64Array(T.n);
    for (var i = 0; i < T.n; i++) {
      var p = T.parent[i];
      T.x[i] = p < 0 ? 0 : cursor[p];
      if (p >= 0) cursor[p] += v[i];
      cursor[i] = T.x[i];
    }
  }

  function frameName(i) { return T.names[T.frame[i]]; }
  function frameKind(i) { return T.kinds[T.frame[i]]; }
  function frameInfo(i) {
    var f = T.frame[i], s = D.strings;
    return { name: s[D.frames[4 * f]], module: s[D.frames[4 * f + 1]], file: s[D.frames[4 * f + 2]],
             kind: D.frames[4 * f + 3] };
  }

  // ---- colours --------------------------------------------------------------

  function ratioOf(i) {
    var den = T.value[S.den][i];
    return den > 0 ? T.value[S.num][i] / den * S.scale : NaN;
  }

  // Colour scale for ratios: blue (low) - yellow - red (high) over [lo, hi].
  function rampColor(t) {
    t = Math.max(0, Math.min(1, t));
    var stops = [[49, 54, 149], [116, 173, 209], [254, 224, 144], [244, 109, 67], [165, 0, 38]];
    var p = t * (stops.length - 1), j = Math.min(stops.length - 2, Math.floor(p)), u = p - j;
    var a = stops[j], b = stops[j + 1];
    return rgb(a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u, a[2] + (b[2] - a[2]) * u);
  }

  function diffOf(i) {
    var nt = T.value[S.widthEv][0], bt = D.diff.total;
    var a = nt > 0 ? T.value[S.widthEv][i] / nt : 0, b = bt > 0 ? T.base[i] / bt : 0;
    return a - b;  // change of the share of the total (1 = 100 pp)
  }

  function diffColor(d) {
    var t = S.diffMax > 0 ? Math.min(1, Math.abs(d) / S.diffMax) : 0;
    var c = 255 - Math.round(200 * t);
    return d > 0 ? rgb(255, c, c) : d < 0 ? rgb(c, c, 255) : rgb(245, 245, 245);
  }

  function colorOf(i) {
    var name = frameName(i);
    if (S.matchFrame && S.matchFrame[T.frame[i]]) return MATCH_COLOR;
    if (S.color === 'diff' && T.base) return diffColor(diffOf(i));
    if (S.color !== 'kind') {
      var r = ratioOf(i);
      if (isNaN(r)) return 'rgb(215,215,215)';
      return rampColor(S.hi > S.lo ? (r - S.lo) / (S.hi - S.lo) : 0.5);
    }
    var kind = frameKind(i);
    if (kind !== 5 && isOffCpu(D.events[S.widthEv])) return OFFCPU(nameHash(name));
    return (KINDS[kind] || KINDS[3]).hue(nameHash(name));
  }

  // Range of the ratio over frames that hold at least 0.1% of the width event.
  function ratioRange() {
    var v = T.value[S.widthEv], tot = v[0], lo = Infinity, hi = -Infinity;
    for (var i = 0; i < T.n; i++) {
      if (v[i] < tot * 0.001) continue;
      var r = ratioOf(i);
      if (isNaN(r)) continue;
      if (r < lo) lo = r;
      if (r > hi) hi = r;
    }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    S.lo = lo; S.hi = hi;
  }

  function diffRange() {
    var m = 0;
    for (var i = 1; i < T.n; i++) { var d = Math.abs(diffOf(i)); if (d > m) m = d; }
    S.diffMax = m;
  }

  // ---- drawing --------------------------------------------------------------

  var canvas = $('canvas'), ctx = canvas.getContext('2d');

  function draw() {
    if (!T) return;
    var t0 = performance.now();
    var W = canvas.parentNode.clientWidth || 800, dpr = window.devicePixelRatio || 1;
    var rows = T.maxDepth + 1, H = rows * FRAME_H + 2;
    canvas.style.height = H + 'px';
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = '12px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace';
    ctx.textBaseline = 'middle';
    var charW = ctx.measureText('mmmmmmmmmm').width / 10 || 7;
    var v = T.value[S.widthEv], z = S.zoom, x0 = T.x[z], span = v[z] || 1, scale = W / span;
    drawn = [];
    for (var d = 0; d <= T.maxDepth; d++) drawn.push([]);
    var count = 0, skipped = 0;

    function box(i, x, w, dim) {
      var d = T.depth[i];
      var y = S.inverted ? d * FRAME_H : H - (d + 1) * FRAME_H - 1;
      ctx.globalAlpha = dim ? 0.55 : 1;
      ctx.fillStyle = colorOf(i);
      ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), FRAME_H - 1);
      if (w > charW * 3 + 6) {
        var name = frameName(i), fit = Math.floor((w - 6) / charW);
        ctx.fillStyle = '#000';
        ctx.fillText(name.length > fit ? name.slice(0, Math.max(fit - 2, 1)) + '..' : name, x + 3, y + FRAME_H / 2);
      }
      ctx.globalAlpha = 1;
      drawn[d].push(i);
      count++;
    }
    // Ancestors of the zoomed frame span the width, dimmed.
    for (var a = T.parent[z], anc = []; a >= 0; a = T.parent[a]) anc.push(a);
    for (var j = anc.length - 1; j >= 0; j--) box(anc[j], 0, W, true);
    for (var i = z; i < T.end[z];) {
      var w = v[i] * scale;
      if (w < MIN_PX) { skipped += T.end[i] - i; i = T.end[i]; continue; }
      box(i, (T.x[i] - x0) * scale, w, false);
      i++;
    }
    lastDraw = { nodes: count, skipped: skipped, ms: performance.now() - t0 };
    notes();
  }

  // The frame under (x, y) in CSS pixels, or -1.
  function hit(x, y) {
    if (!T) return -1;
    var H = (T.maxDepth + 1) * FRAME_H + 2;
    var d = S.inverted ? Math.floor(y / FRAME_H) : Math.floor((H - 1 - y) / FRAME_H);
    if (d < 0 || d >= drawn.length) return -1;
    var W = canvas.parentNode.clientWidth || 800, v = T.value[S.widthEv], z = S.zoom;
    var scale = W / (v[z] || 1), row = drawn[d];
    for (var k = 0; k < row.length; k++) {
      var i = row[k], bx, bw;
      if (T.depth[i] < T.depth[z]) { bx = 0; bw = W; } else { bx = (T.x[i] - T.x[z]) * scale; bw = v[i] * scale; }
      if (x >= bx && x < bx + bw) return i;
    }
    return -1;
  }

  // ---- text around the chart -----------------------------------------------

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function header() {
    var facts = $('facts'), ev = D.events;
    $('title').textContent = D.title || 'pmutop flame graph';
    document.title = 'pmutop: ' + (D.title || 'flame graph');
    facts.textContent = '';
    function fact(k, v) { var d = el('div'); d.appendChild(el('dt', k)); d.appendChild(el('dd', v)); facts.appendChild(d); }
    fact('Events', ev.filter(function (e) { return !e.wall; }).map(function (e) {
      return e.name + (e.period ? ' (period ' + fmtCount(e.period) + ')' : '') +
        (e.scale > 1.0001 ? ' x' + e.scale.toFixed(2) + ' multiplexed' : '');
    }).join(', '));
    if (D.duration_ns) fact('Duration', (D.duration_ns / 1e9).toFixed(2) + ' s');
    if (D.start_ns) fact('Started', new Date(D.start_ns / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));
    fact('Samples', fmtCount(D.samples || ev[0].samples));
    fact('Lost', fmtCount(D.lost) + (D.samples ? ' (' + pct(D.lost, D.samples + D.lost) + ')' : ''));
    if (D.throttled) fact('Throttled', fmtCount(D.throttled));
    if (D.threads) fact('Threads', fmtCount(D.threads));
    var tot = 0;
    D.unwind.forEach(function (u) { tot += u[1]; });
    if (tot) fact('Unwind', D.unwind.map(function (u) { return u[0] + ' ' + pct(u[1], tot); }).join(', '));
    if (D.diff) fact('Base', D.diff.file + ' (' + D.diff.event + ')');
  }

  function notes() {
    var ul = $('notes'), list = [];
    if (D.trimmed && D.trimmed.nodes)
      list.push(fmtCount(D.trimmed.nodes) + ' frames smaller than ' + (100 * D.trimmed.below).toPrecision(2) +
        '% of the total were left out of this page (at most ' + fmtCount(D.trimmed.max) + ' frames).');
    var rd = D.reduced || {}, mib = rd.max_memory ? ' (--max-memory ' + Math.round(rd.max_memory / 1048576) + 'M)' : '';
    if (rd.max_depth)
      list.push(fmtCount(rd.max_depth) + ' samples (' + pct(rd.max_depth, D.samples || 1) +
        ') had stacks deeper than --max-depth: their outermost frames are cut, so those towers do not reach the root.');
    if (rd.pruned)
      list.push(fmtCount(rd.pruned) + ' cold frames were pruned over the memory budget' + mib + ': ' +
        fmtCount(rd.pruned_samples) + ' samples keep their callers but end in a "[N cold frames pruned]" frame.');
    if (rd.threads_folded)
      list.push(fmtCount(rd.threads_folded) + ' exited threads were folded into their names over the memory budget' + mib + '.');
    if (rd.leaf_dropped)
      list.push('The instruction addresses of ' + fmtCount(rd.leaf_dropped) +
        ' leaf samples were dropped over the memory budget' + mib + ' (frames and widths are unchanged).');
    if (lastDraw.skipped)
      list.push(fmtCount(lastDraw.skipped) + ' frames narrower than a pixel are not drawn: click a frame to zoom in.');
    if (D.diff && D.diff.base_only)
      list.push('Frames only in the base profile (' + pct(D.diff.base_only, D.diff.total) +
        ' of it) have no width here: widths come from the new profile.');
    if (S.liveNote) list.push(S.liveNote);
    ul.textContent = '';
    list.forEach(function (t) { ul.appendChild(el('li', t)); });
  }

  function legend() {
    var lg = $('legend');
    lg.textContent = '';
    if (S.color === 'diff') {
      var sw = function (c, t) { var s = el('span'); var b = el('span', undefined, 'swatch'); b.style.background = c; s.appendChild(b); s.appendChild(document.createTextNode(t)); lg.appendChild(s); };
      sw(diffColor(S.diffMax), 'grew (share of ' + D.events[S.widthEv].name + ' up to +' + (100 * S.diffMax).toFixed(2) + ' pp)');
      sw(diffColor(-S.diffMax), 'shrank (down to -' + (100 * S.diffMax).toFixed(2) + ' pp)');
      sw(diffColor(0), 'unchanged; compared with ' + D.diff.file);
      return;
    }
    if (S.color !== 'kind') {
      var c = document.createElement('canvas');
      c.width = 160; c.height = 12;
      var g = c.getContext('2d');
      for (var x = 0; x < 160; x++) { g.fillStyle = rampColor(x / 159); g.fillRect(x, 0, 1, 12); }
      var fmt = function (r) { return (Math.abs(r) >= 100 ? r.toFixed(0) : r.toPrecision(3)) + S.unit; };
      lg.appendChild(el('span', S.label + ':'));
      lg.appendChild(el('span', fmt(S.lo)));
      lg.appendChild(c);
      lg.appendChild(el('span', fmt(S.hi)));
      lg.appendChild(el('span', S.color === 'oncpu' ? '(blue: waiting off-CPU, red: running)' :
        '(grey: no ' + D.events[S.den].name + ')', 'sub'));
      return;
    }
    var kinds = [0, 1, 2, 4, 3], seen = {};
    for (var f = 0; f < T.kinds.length; f++) seen[T.kinds[f]] = true;
    var off = isOffCpu(D.events[S.widthEv]);
    kinds.forEach(function (k) {
      if (!seen[k] && k !== 0) return;
      var s = el('span'), b = el('span', undefined, 'swatch');
      b.style.background = off ? OFFCPU(0.5) : KINDS[k].hue(0.5);
      s.appendChild(b);
      s.appendChild(document.createTextNode((off ? 'off-CPU ' : '') + KINDS[k].name));
      lg.appendChild(s);
    });
    var m = el('span'), mb = el('span', undefined, 'swatch');
    mb.style.background = MATCH_COLOR;
    m.appendChild(mb); m.appendChild(document.createTextNode('search match'));
    lg.appendChild(m);
  }

  function tooltipLines(i) {
    var f = frameInfo(i), lines = [];
    lines.push([f.name, 'name']);
    var kind = (KINDS[f.kind] || KINDS[3]).name;
    if (f.kind !== 5) lines.push([kind + (f.module ? ' \u00b7 ' + f.module : ''), 'sub']);
    if (f.file && f.file !== f.module) {
      var ln = T.line[i];
      lines.push([f.file + (ln > 0 ? ':' + ln : ln < 0 ? ' (several lines)' : ''), 'sub']);
    }
    for (var k = 0; k < D.events.length; k++) {
      var ev = D.events[k];
      lines.push([ev.name + ': ' + fmtValue(T.value[k][i], ev) + ' (' + pct(T.value[k][i], T.value[k][0]) + '), ' +
        fmtCount(T.samples[k][i]) + ' samples', k === S.widthEv ? '' : 'sub']);
    }
    if (S.color !== 'kind' && S.color !== 'diff') {
      var r = ratioOf(i);
      lines.push([S.label + ': ' + (isNaN(r) ? '-' : r.toPrecision(3) + S.unit), '']);
    }
    if (T.base) {
      var d = diffOf(i);
      lines.push(['base: ' + fmtValue(T.base[i], D.events[S.widthEv]) + ' (' + pct(T.base[i], D.diff.total) +
        '), change ' + (d >= 0 ? '+' : '') + (100 * d).toFixed(2) + ' pp', '']);
    }
    return lines;
  }

  function showTip(i, cx, cy) {
    var tip = $('tooltip');
    if (i < 0) { tip.hidden = true; $('details').textContent = '\u00a0'; return; }
    var lines = tooltipLines(i);
    tip.textContent = '';
    lines.forEach(function (l) { tip.appendChild(el('div', l[0], l[1])); });
    tip.hidden = false;
    var r = tip.getBoundingClientRect();
    var x = cx + 14, y = cy + 14;
    if (x + r.width > window.innerWidth) x = Math.max(0, cx - r.width - 10);
    if (y + r.height > window.innerHeight) y = Math.max(0, cy - r.height - 10);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
    $('details').textContent = lines[0][0] + ' \u2014 ' + lines.slice(2).map(function (l) { return l[0]; })
      .filter(function (t) { return t.indexOf(D.events[S.widthEv].name + ':') === 0; }).join(' ');
  }

  // ---- search: share of the total counted once per sample --------------------

  function search() {
    var text = $('search').value, out = $('matched');
    S.matchFrame = null;
    $('search').classList.remove('bad');
    out.textContent = '';
    if (text) {
      var re;
      try { re = new RegExp(text); } catch (e) {
        $('search').classList.add('bad');
        out.textContent = 'invalid regular expression';
        draw();
        return;
      }
      S.matchFrame = new Uint8Array(T.names.length);
      for (var f = 0; f < T.names.length; f++) S.matchFrame[f] = re.test(T.names[f]) ? 1 : 0;
      // The topmost matching frames: a sample matching twice on its stack counts once.
      var v = T.value[S.widthEv], sum = 0;
      for (var i = 0; i < T.n;) {
        if (S.matchFrame[T.frame[i]]) { sum += v[i]; i = T.end[i]; } else i++;
      }
      out.textContent = 'Matched: ' + pct(sum, v[0]);
      out.title = fmtValue(sum, D.events[S.widthEv]) + ' of ' + fmtValue(v[0], D.events[S.widthEv]);
    }
    draw();
  }

  // ---- controls ---------------------------------------------------------------

  function option(sel, value, text) {
    var o = document.createElement('option');
    o.value = value; o.textContent = text;
    sel.appendChild(o);
  }

  function controls() {
    var we = $('width-event'), cm = $('color-mode'), rn = $('ratio-num'), rd = $('ratio-den');
    we.textContent = ''; cm.textContent = ''; rn.textContent = ''; rd.textContent = '';
    D.events.forEach(function (e, k) { option(we, k, e.name); option(rn, k, e.name); option(rd, k, e.name); });
    we.value = String(S.widthEv);
    $('width-label').hidden = D.events.length < 2;
    option(cm, 'kind', isOffCpu(D.events[0]) ? 'off-CPU / kind' : 'user / kernel / JIT');
    if (D.diff) option(cm, 'diff', 'differential (vs base)');
    if (wallEvent() >= 0) option(cm, 'oncpu', 'on-CPU % of wall (red: running, blue: waiting)');
    PRESETS.forEach(function (p) {
      var n = findEvent(p.num), d = findEvent(p.den);
      if (n >= 0 && d >= 0) option(cm, p.id, p.label);
    });
    if (D.events.length >= 2) option(cm, 'custom', 'ratio of two events\u2026');
    var ok = false;
    for (var i = 0; i < cm.options.length; i++) if (cm.options[i].value === S.color) ok = true;
    if (!ok) {
      // First look: the differential colours, else the first ratio the events allow.
      S.color = D.diff ? 'diff' : cm.options.length > 1 && cm.options[1].value !== 'custom' ? cm.options[1].value : 'kind';
      if (D.events[S.widthEv].wall && !D.diff) S.color = 'oncpu';
    }
    cm.value = S.color;
    if (S.color === 'custom') { rn.value = String(S.num); rd.value = String(S.den); }
    else if (D.events.length >= 2) { rn.value = '1'; rd.value = '0'; }
  }

  function applyColor() {
    var cm = $('color-mode').value;
    S.color = cm;
    $('custom-ratio').hidden = cm !== 'custom';
    S.fixed = false;
    if (cm === 'custom') {
      S.num = +$('ratio-num').value; S.den = +$('ratio-den').value; S.scale = 1; S.unit = '';
      S.label = D.events[S.num].name + ' / ' + D.events[S.den].name;
    } else if (cm === 'oncpu') {
      var w = wallEvent();
      S.num = D.events[w].wall[0]; S.den = w; S.scale = 100; S.unit = '%'; S.fixed = true;
      S.label = 'on-CPU share of wall time';
    } else {
      PRESETS.forEach(function (p) {
        if (p.id !== cm) return;
        S.num = findEvent(p.num); S.den = findEvent(p.den); S.scale = p.scale; S.unit = p.unit; S.label = p.label;
      });
    }
    if (cm !== 'kind' && cm !== 'diff') ratioRange();
    if (S.fixed) { S.lo = 0; S.hi = 100; }
    if (T.base) diffRange();
    legend();
    draw();
  }

  function zoomTo(i) {
    S.zoom = i < 0 ? 0 : i;
    draw();
  }

  // The zoomed frame's path of names, to find it again in fresh live data.
  function zoomPath() {
    var p = [];
    for (var i = S.zoom; i > 0; i = T.parent[i]) p.unshift(frameName(i));
    return p;
  }
  function findPath(p) {
    var at = 0;
    for (var k = 0; k < p.length; k++) {
      var next = -1;
      for (var c = at + 1; c < T.end[at]; c = T.end[c]) if (frameName(c) === p[k]) { next = c; break; }
      if (next < 0) return at;
      at = next;
    }
    return at;
  }

  function install(data) {
    var path = T ? zoomPath() : [], t0 = performance.now();
    D = data;
    var wall = addWall(D);
    if (!T && wall >= 0) S.widthEv = wall;  // first look: wall time, coloured hot/cold
    T = build(D);
    phases.build = performance.now() - t0;
    if (S.widthEv >= D.events.length) S.widthEv = 0;
    controls();
    header();
    t0 = performance.now();
    layout();
    phases.layout = performance.now() - t0;
    S.zoom = findPath(path);
    $('search').value ? search() : null;
    applyColor();
  }

  // ---- live pages: re-fetch the data from the server that sent the page --------

  function live() {
    var l = D.live, wait = 1000;
    // This page's own query (seconds, period, a token) with the event it got, as JSON.
    var q = new URLSearchParams(window.location.search);
    q.set('seconds', String(l.seconds));
    q.set('event', l.event);
    q.set('format', 'json');
    q.delete('live');
    var url = window.location.pathname + '?' + q.toString();
    function again(ms) { setTimeout(tick, ms); }
    function tick() {
      S.liveNote = 'Live: taking the next ' + l.seconds + ' s profile\u2026';
      notes();
      fetch(url, { cache: 'no-store' }).then(function (r) {
        if (r.status === 429) {
          var ra = +(r.headers.get('Retry-After') || 2);
          S.liveNote = 'Live: the server is busy; retrying in ' + ra + ' s.';
          notes();
          return again(ra * 1000);
        }
        if (!r.ok) throw new Error('HTTP ' + r.status);
        return r.json().then(function (data) {
          data.live = l;
          install(data);
          S.liveNote = 'Live: refreshed at ' + new Date().toLocaleTimeString() + '; every ' + l.seconds + ' s.';
          notes();
          again(wait);
        });
      }).catch(function (e) {
        S.liveNote = 'Live: refresh failed (' + e.message + '); retrying in 5 s.';
        notes();
        again(5000);
      });
    }
    again(wait);
  }

  // ---- start -------------------------------------------------------------------

  function start() {
    var src = $('pmutop-data'), data = null, t0 = performance.now();
    try { var txt = src ? src.textContent : ''; data = txt.length > 2 ? JSON.parse(txt) : null; } catch (e) { data = null; }
    phases.parse = performance.now() - t0;
    if (!data || !data.nodes) {
      $('title').textContent = 'pmutop flame graph: no profile in this page';
      $('notes').appendChild(el('li', 'Write one with: pmutop --dump flame.html -- COMMAND'));
      return;
    }
    install(data);

    canvas.addEventListener('mousemove', function (e) {
      var r = canvas.getBoundingClientRect(), i = hit(e.clientX - r.left, e.clientY - r.top);
      S.hover = i;
      showTip(i, e.clientX, e.clientY);
    });
    canvas.addEventListener('mouseleave', function () { showTip(-1); });
    canvas.addEventListener('click', function (e) {
      var r = canvas.getBoundingClientRect(), i = hit(e.clientX - r.left, e.clientY - r.top);
      if (i >= 0) zoomTo(i);
    });
    $('reset').addEventListener('click', function () { zoomTo(0); });
    $('invert').addEventListener('click', function () {
      S.inverted = !S.inverted;
      $('invert').textContent = S.inverted ? 'Flame' : 'Icicle';
      draw();
    });
    $('width-event').addEventListener('change', function () {
      S.widthEv = +$('width-event').value;
      layout();
      search();
      applyColor();
    });
    $('color-mode').addEventListener('change', applyColor);
    $('ratio-num').addEventListener('change', applyColor);
    $('ratio-den').addEventListener('change', applyColor);
    $('search').addEventListener('input', search);
    document.addEventListener('keydown', function (e) {
      if (e.key === 'Escape') { zoomTo(0); }
      if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); $('search').focus(); }
    });
    var pending = 0;
    window.addEventListener('resize', function () {
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(draw);
    });
    if (D.live) live();

    // Read-only view for tests and curious users: what is drawn where.
    window.pmutopFlame = {
      drawn: function () {
        var out = [], W = canvas.parentNode.clientWidth, v = T.value[S.widthEv], z = S.zoom;
        var H = (T.maxDepth + 1) * FRAME_H + 2, scale = W / (v[z] || 1);
        drawn.forEach(function (row) {
          row.forEach(function (i) {
            var anc = T.depth[i] < T.depth[z], d = T.depth[i];
            out.push({ name: frameName(i), depth: d, x: anc ? 0 : (T.x[i] - T.x[z]) * scale,
                       w: anc ? W : v[i] * scale,
                       y: S.inverted ? d * FRAME_H : H - (d + 1) * FRAME_H - 1, h: FRAME_H - 1 });
          });
        });
        return out;
      },
      state: function () {
        return { zoom: frameName(S.zoom), inverted: S.inverted, widthEvent: D.events[S.widthEv].name,
                 color: S.color, drawnFrames: lastDraw.nodes, skippedFrames: lastDraw.skipped, nodes: T.n,
                 drawMs: lastDraw.ms, readyMs: readyMs, phases: phases };
      }
    };
    // A deep graph is taller than the window: open on its root (the flame's
    // base, at the bottom of the canvas), not on the empty space above it.
    var cr = canvas.getBoundingClientRect();
    if (!S.inverted && cr.bottom > window.innerHeight)
      window.scrollTo(0, window.scrollY + cr.bottom - window.innerHeight + 4);
    readyMs = performance.now();
    document.documentElement.setAttribute('data-ready', '1');
  }

  start();
})();
