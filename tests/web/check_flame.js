#!/usr/bin/env node
/*
 * check_flame.js - open a pmutop flame graph page in Debian's chromium
 * (headless, driven by playwright-core; no browser download) and check it
 * the way a user would use it. Prints one JSON object with what it saw and
 * a line per failed check on stderr; exits 1 if any check failed.
 *
 * usage: node check_flame.js URL [options]
 *   --search RE          type RE into the search box, report "Matched: X%"
 *                        (repeatable; results in .searches)
 *   --shares             the shares workload: each of A_expect_1_82 ..
 *                        J_expect_18_18 matches k/55 of what "_expect_"
 *                        matches, within --tol percentage points (1.0)
 *   --zoom NAME          click the widest drawn frame named NAME ('*': the
 *                        widest at depth 2, for benchmarks): it must
 *                        then span the chart, frames outside it must be gone
 *                        and the pixels must change; then Reset
 *   --hover NAME         move the mouse over NAME; .tooltip has the text
 *   --expect-text TEXT   TEXT must be in the tooltip of --hover, as text
 *   --invert             the icicle toggle must change the pixels
 *   --allow-fetch        a live page: same-origin fetches of its data are fine
 *   --wait-refresh       a live page: wait for one refresh of the data
 *   --screenshot FILE    save a PNG of the page
 *   --size WxH           the viewport (default 1200x800)
 *   --color MODE         choose this colour mode before the screenshot
 *
 * Always checked: no console errors, no uncaught exceptions, no dialogs
 * (a hostile name that ran would open one), no request to anything but
 * the page itself (and its data with --allow-fetch).
 * Environment: CHROMIUM (default /usr/bin/chromium).
 */
'use strict';

const { chromium } = require('playwright-core');

function parseArgs(argv) {
  const o = { url: null, searches: [], shares: false, tol: 1.0, zoom: null, hover: null,
              expectText: null, invert: false, allowFetch: false, waitRefresh: false,
              screenshot: null, color: null, size: '1200x800' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(a + ' needs a value');
      return argv[++i];
    };
    if (a === '--search') o.searches.push(next());
    else if (a === '--shares') o.shares = true;
    else if (a === '--tol') o.tol = parseFloat(next());
    else if (a === '--zoom') o.zoom = next();
    else if (a === '--hover') o.hover = next();
    else if (a === '--expect-text') o.expectText = next();
    else if (a === '--invert') o.invert = true;
    else if (a === '--allow-fetch') o.allowFetch = true;
    else if (a === '--wait-refresh') o.waitRefresh = true;
    else if (a === '--screenshot') o.screenshot = next();
    else if (a === '--color') o.color = next();
    else if (a === '--size') o.size = next();
    else if (!o.url && !a.startsWith('--')) o.url = a;
    else throw new Error('unknown argument ' + a);
  }
  if (!o.url) throw new Error('usage: check_flame.js URL [options]');
  return o;
}

async function matched(page, re) {
  await page.fill('#search', re);
  const text = await page.textContent('#matched');
  const m = /Matched: ([0-9.]+)%/.exec(text || '');
  return { re, text, pct: m ? parseFloat(m[1]) : null };
}

// Scroll so that frame f (canvas coordinates) is in the viewport; the canvas's box after it.
async function scrollTo(page, f) {
  await page.evaluate((f) => {
    const r = document.getElementById('canvas').getBoundingClientRect();
    if (r.top + f.y >= 0 && r.top + f.y + f.h <= window.innerHeight) return; // visible already
    window.scrollTo(0, Math.max(0, r.top + window.scrollY + f.y - window.innerHeight / 2));
  }, f);
  return page.locator('#canvas').boundingBox();
}

async function canvasHash(page) {
  return page.evaluate(() => {
    const d = document.getElementById('canvas').toDataURL();
    let h = 0;
    for (let i = 0; i < d.length; i++) h = (Math.imul(h, 31) + d.charCodeAt(i)) | 0;
    return h + ':' + d.length;
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const out = { url: o.url, requests: [], foreign: [], console: [], errors: [], dialogs: [] };
  const failures = [];
  const check = (ok, what) => { if (!ok) failures.push(what); };
  const pageUrl = new URL(o.url);

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-default-apps']
  });
  try {
    const [vw, vh] = o.size.split('x').map(Number);
    const page = await browser.newPage({ viewport: { width: vw || 1200, height: vh || 800 } });
    page.on('request', (r) => {
      const u = r.url();
      out.requests.push(u);
      if (u.startsWith('data:')) return;
      const x = new URL(u);
      const same = x.origin === pageUrl.origin && x.pathname === pageUrl.pathname;
      const liveData = o.allowFetch && x.origin === pageUrl.origin &&
        x.pathname === pageUrl.pathname && x.searchParams.get('format') === 'json';
      if (!(same && (x.search === pageUrl.search || liveData)) && u !== o.url) out.foreign.push(u);
    });
    page.on('console', (m) => { if (m.type() === 'error') out.console.push(m.text()); });
    page.on('pageerror', (e) => out.errors.push(String(e)));
    page.on('dialog', async (d) => { out.dialogs.push(d.message()); await d.dismiss(); });

    const t0 = Date.now();
    await page.goto(o.url, { waitUntil: 'load', timeout: 120000 });
    await page.waitForSelector('html[data-ready="1"]', { timeout: 120000 });
    out.load_ms = Date.now() - t0;
    out.paint = await page.evaluate(() => {
      const p = {};
      performance.getEntriesByType('paint').forEach((e) => { p[e.name] = e.startTime; });
      return p;
    });
    out.state = await page.evaluate(() => window.pmutopFlame.state());
    // Where the page opened: is the root frame (bottom row of a flame) in the window?
    out.opened = await page.evaluate(() => {
      const r = document.getElementById('canvas').getBoundingClientRect();
      return { scroll_y: window.scrollY, canvas_h: r.height,
               root_in_view: r.bottom - 16 >= 0 && r.bottom <= window.innerHeight + 1 };
    });
    out.note_items = await page.evaluate(() => Array.from(document.querySelectorAll('#notes li')).map((l) => l.textContent));
    out.title = await page.textContent('#title');
    out.facts = await page.textContent('#facts');
    out.notes = await page.textContent('#notes');
    out.legend = await page.textContent('#legend');

    for (const re of o.searches) (out.searches = out.searches || []).push(await matched(page, re));

    if (o.shares) {
      const all = await matched(page, '_expect_');
      const names = ['A_expect_1_82', 'B_expect_3_64', 'C_expect_5_45', 'D_expect_7_27',
        'E_expect_9_09', 'F_expect_10_91', 'G_expect_12_73', 'H_expect_14_55',
        'I_expect_16_36', 'J_expect_18_18'];
      out.shares = { all: all.pct, rows: [] };
      check(all.pct > 50, 'search "_expect_" matched only ' + all.text);
      let worst = 0;
      for (let k = 1; k <= 10; k++) {
        const m = await matched(page, '^' + names[k - 1] + '$');
        const got = all.pct > 0 && m.pct !== null ? 100 * m.pct / all.pct : NaN;
        const want = 100 * k / 55;
        const err = Math.abs(got - want);
        out.shares.rows.push({ name: names[k - 1], matched: m.pct, share: +got.toFixed(2), want: +want.toFixed(2) });
        if (!(err <= worst)) worst = err;
        check(err <= o.tol, names[k - 1] + ': ' + got.toFixed(2) + '% of the ten, want ' +
              want.toFixed(2) + '% within ' + o.tol + ' pp (Matched: ' + m.pct + '%)');
      }
      out.shares.max_error_pp = +worst.toFixed(2);
      // Matching twice on one stack counts once: main's subtree cannot exceed 100%.
      const twice = await matched(page, 'main|_expect_');
      check(twice.pct !== null && twice.pct <= 100.0001, 'overlapping matches counted twice: ' + twice.text);
      await page.fill('#search', '');
    }

    if (o.zoom) {
      const before = await canvasHash(page);
      const drawnBefore = await page.evaluate(() => window.pmutopFlame.drawn());
      // '*': the widest frame two levels up from the root (a benchmark's pick).
      const cands = drawnBefore.filter((f) => (o.zoom === '*' ? f.depth === 2 : f.name === o.zoom))
        .sort((a, b) => b.w - a.w);
      if (o.zoom === '*' && cands.length) o.zoom = cands[0].name;
      check(cands.length > 0, 'frame ' + o.zoom + ' is not drawn');
      if (cands.length) {
        const f = cands[0];
        const box = await scrollTo(page, f);
        await page.mouse.click(box.x + f.x + Math.min(f.w / 2, 20), box.y + f.y + f.h / 2);
        const st = await page.evaluate(() => window.pmutopFlame.state());
        const after = await canvasHash(page);
        const drawnAfter = await page.evaluate(() => window.pmutopFlame.drawn());
        const z = drawnAfter.filter((g) => g.name === o.zoom && g.depth === f.depth);
        const namesBefore = new Set(drawnBefore.map((g) => g.name));
        const namesAfter = new Set(drawnAfter.map((g) => g.name));
        const gone = [...namesBefore].filter((n) => !namesAfter.has(n));
        out.zoom = { clicked: f, state: st, drawn_before: drawnBefore.length, drawn_after: drawnAfter.length,
                     gone: gone.slice(0, 20), width_after: z.length ? z[0].w : null };
        check(st.zoom === o.zoom, 'after clicking ' + o.zoom + ' the zoom is on ' + st.zoom);
        check(before !== after, 'zooming did not change the pixels');
        check(z.length === 1 && Math.abs(z[0].w - box.width) < 2, 'the zoomed frame does not span the chart');
        check(gone.length > 0, 'zooming left every frame drawn');
        await page.click('#reset');
        const reset = await page.evaluate(() => window.pmutopFlame.state());
        check(reset.zoom === 'all' && (await canvasHash(page)) === before, 'Reset zoom does not restore the view');
      }
    }

    if (o.invert) {
      const before = await canvasHash(page);
      await page.click('#invert');
      const st = await page.evaluate(() => window.pmutopFlame.state());
      check(st.inverted && (await canvasHash(page)) !== before, 'the icicle toggle did not change the drawing');
      await page.click('#invert');
    }

    if (o.hover) {
      const fr = (await page.evaluate(() => window.pmutopFlame.drawn()))
        .filter((f) => f.name === o.hover).sort((a, b) => b.w - a.w);
      check(fr.length > 0, 'frame to hover is not drawn: ' + JSON.stringify(o.hover));
      if (fr.length) {
        const box = await scrollTo(page, fr[0]);
        await page.mouse.move(box.x + fr[0].x + Math.min(fr[0].w / 2, 20), box.y + fr[0].y + fr[0].h / 2);
        out.tooltip = await page.evaluate(() => {
          const t = document.getElementById('tooltip');
          return t.hidden ? null : Array.from(t.children).map((c) => c.textContent);
        });
        out.tooltip_elements = await page.evaluate(() => document.getElementById('tooltip').querySelectorAll('*').length);
        check(out.tooltip && out.tooltip.length > 2, 'no tooltip over ' + o.hover);
        if (o.expectText !== null)
          check(out.tooltip && out.tooltip[0] === o.expectText, 'tooltip name is ' +
                JSON.stringify(out.tooltip && out.tooltip[0]) + ', want ' + JSON.stringify(o.expectText));
      }
    }

    if (o.waitRefresh) {
      // Polled from here: the page's CSP forbids the eval waitForFunction needs.
      const until = Date.now() + 60000;
      const before = await canvasHash(page);
      out.live_notes = '';
      while (!/Live: refreshed/.test(out.live_notes) && Date.now() < until) {
        await page.waitForTimeout(250);
        out.live_notes = await page.textContent('#notes');
      }
      check(/Live: refreshed/.test(out.live_notes), 'the live page did not refresh within 60 s: ' + out.live_notes);
      out.live_redrawn = (await canvasHash(page)) !== before;
      out.live_requests = out.requests.filter((u) => /format=json/.test(u)).length;
      check(out.live_requests >= 1, 'the live page fetched no fresh data');
    }

    if (o.color) {
      await page.selectOption('#color-mode', o.color);
      out.legend = await page.textContent('#legend');
    }
    if (o.screenshot) await page.screenshot({ path: o.screenshot, fullPage: false });

    out.state_end = await page.evaluate(() => window.pmutopFlame.state());
  } finally {
    await browser.close();
  }
  check(out.console.length === 0, 'console errors: ' + out.console.join(' | '));
  check(out.errors.length === 0, 'page errors: ' + out.errors.join(' | '));
  check(out.dialogs.length === 0, 'dialogs opened (script ran?): ' + out.dialogs.join(' | '));
  check(out.foreign.length === 0, 'requests left the page: ' + out.foreign.join(' '));
  out.failures = failures;
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
  failures.forEach((f) => process.stderr.write('check_flame: ' + f + '\n'));
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => {
  process.stderr.write('check_flame: ' + (e && e.stack || e) + '\n');
  process.exit(2);
});
