#!/usr/bin/env node
/*
 * check_svg.js - open a pmutop SVG flame graph (--dump FILE.svg) in Debian's
 * chromium (headless, playwright-core) and use it as a flamegraph.pl user
 * would: Ctrl-F opens the search prompt, a regex highlights its matches and
 * prints "Matched: X%"; clicking a frame zooms (it then spans the chart and
 * its siblings are hidden), "Reset Zoom" restores the layout. Prints one
 * JSON object; a line per failed check on stderr; exit 1 if any failed.
 *
 * usage: node check_svg.js URL [--search RE] [--zoom NAME] [--size WxH]
 * Always checked: no console error, no page error, no request but the file.
 * Reported: .scroll_y and .root_visible (the "all" frame in the viewport
 * after load: a deep graph must open on its root, not on empty space).
 */
'use strict';

const { chromium } = require('playwright-core');

async function main() {
  const argv = process.argv.slice(2);
  const o = { url: null, search: null, zoom: null, size: '1200x800' };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--search') o.search = argv[++i];
    else if (argv[i] === '--zoom') o.zoom = argv[++i];
    else if (argv[i] === '--size') o.size = argv[++i];
    else o.url = argv[i];
  }
  const out = { console: [], errors: [], foreign: [] };
  const failures = [];
  const check = (ok, what) => { if (!ok) failures.push(what); };
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-default-apps']
  });
  try {
    const [vw, vh] = o.size.split('x').map(Number);
    const page = await browser.newPage({ viewport: { width: vw, height: vh } });
    page.on('request', (r) => { if (r.url() !== o.url) out.foreign.push(r.url()); });
    page.on('console', (m) => { if (m.type() === 'error') out.console.push(m.text()); });
    page.on('pageerror', (e) => out.errors.push(String(e)));
    await page.goto(o.url, { waitUntil: 'load', timeout: 60000 });
    await page.waitForTimeout(200);
    const frameInfo = (name) => page.evaluate((name) => {
      const gs = Array.from(document.querySelectorAll('g.f'));
      let best = null;
      gs.forEach((g) => {
        const t = g.querySelector('title').textContent;
        if (t.substring(0, t.lastIndexOf(' (')) !== name) return;
        const w = +g.querySelector('rect').getAttribute('width');
        if (!best || w > best.w) best = { g, w };
      });
      if (!best) return null;
      const r = best.g.querySelector('rect').getBoundingClientRect();
      return { w: best.w, x: r.x + r.width / 2, y: r.y + r.height / 2, top: r.top,
               bottom: r.bottom, visible: !best.g.classList.contains('hide') };
    }, name);
    out.frames = await page.evaluate(() => document.querySelectorAll('g.f').length);
    out.scroll_y = await page.evaluate(() => window.scrollY);
    const root = await frameInfo('all');
    out.root_visible = !!root && root.top >= 0 && root.bottom <= vh;
    if (o.search) {
      page.once('dialog', (d) => d.accept(o.search));
      await page.keyboard.press('Control+F');
      await page.waitForTimeout(200);
      out.matched = await page.textContent('#matched');
      out.highlighted = await page.evaluate(() => Array.from(document.querySelectorAll('g.f rect'))
        .filter((r) => r.getAttribute('fill') === 'rgb(230,0,230)').length);
      check(/Matched: [0-9.]+%/.test(out.matched || ''), 'no "Matched: X%" after Ctrl-F');
    }
    if (o.zoom) {
      const f = await frameInfo(o.zoom);
      check(f, 'no frame named ' + o.zoom);
      if (f) {
        const total = await page.evaluate(() => document.querySelectorAll('g.f:not(.hide)').length);
        await page.mouse.click(f.x, f.y);
        await page.waitForTimeout(100);
        const z = await frameInfo(o.zoom);
        out.zoom = { width_before: f.w, width_after: z && z.w, drawn_before: total,
                     drawn_after: await page.evaluate(() => document.querySelectorAll('g.f:not(.hide)').length) };
        check(z && Math.abs(z.w - 1180) < 0.5, 'the zoomed frame does not span the chart');
        check(out.zoom.drawn_after < total, 'zoom hid nothing');
        await page.click('#unzoom');
        const u = await frameInfo(o.zoom);
        out.zoom.width_reset = u && u.w;
        check(u && Math.abs(u.w - f.w) < 0.01, 'Reset Zoom did not restore the width');
      }
    }
  } finally {
    await browser.close();
  }
  check(out.console.length === 0, 'console errors: ' + out.console.join(' | '));
  check(out.errors.length === 0, 'page errors: ' + out.errors.join(' | '));
  check(out.foreign.length === 0, 'requests left the file: ' + out.foreign.join(' '));
  out.failures = failures;
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
  failures.forEach((f) => process.stderr.write('check_svg: ' + f + '\n'));
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => { process.stderr.write('check_svg: ' + (e && e.stack || e) + '\n'); process.exit(2); });
