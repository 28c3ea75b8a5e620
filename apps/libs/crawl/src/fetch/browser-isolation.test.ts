/**
 * What a page rendered in the worker's Chromium can and cannot do: reach only what the address
 * policy allows (by host and port, through every channel a script has), download nothing, and run
 * in a browser that is not root, sandboxed where the kernel allows it, without the worker's
 * environment.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { BrowserFetcher } from './browser-fetcher.ts';

let site: LocalServer;
let victim: LocalServer;
let udp: UdpSocket;
const udpPackets: string[] = [];
let browser: BrowserFetcher;
const SECRET = 'TRAWL_TEST_WORKER_SECRET';

const page = (script: string) => `<!doctype html><html><body><p id="out"></p><script>
const done = (r) => { document.getElementById('out').textContent = r; };
${script}
</script></body></html>`;

function pages(): Record<string, string> {
  const other = `http://127.0.0.1:${victim.port}`;
  const udpPort = udp.address().port;
  return {
    // fetch() and a DROP DATABASE-style POST (a simple request: sent whatever CORS says), an image,
    // a form POST into an iframe, a WebSocket, sendBeacon: all to a port the allow-list does not open.
    '/reach-other-port': page(`
      const results = [];
      const note = (what) => (r) => results.push(what + ':' + r);
      Promise.allSettled([
        fetch('${other}/secret').then(() => 'leaked', () => 'blocked').then(note('get')),
        fetch('${other}/', { method: 'POST', mode: 'no-cors', body: 'DROP DATABASE trawl' }).then(() => 'leaked', () => 'blocked').then(note('post')),
        new Promise((res) => { const i = new Image(); i.onload = () => res('leaked'); i.onerror = () => res('blocked'); i.src = '${other}/pixel'; }).then(note('img')),
        new Promise((res) => { const ws = new WebSocket('ws://127.0.0.1:${victim.port}/ws'); ws.onopen = () => res('leaked'); ws.onerror = () => res('blocked'); }).then(note('ws')),
      ]).then(() => {
        navigator.sendBeacon('${other}/beacon', 'x');
        const f = document.createElement('form'); f.method = 'POST'; f.action = '${other}/form'; f.target = 'sink';
        const i = document.createElement('iframe'); i.name = 'sink'; document.body.append(i, f); f.submit();
        setTimeout(() => done(results.sort().join(' ')), 500);
      });`),
    // WebRTC gathers candidates over UDP by itself, outside any proxy, unless told not to.
    '/webrtc': page(`
      const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${udpPort}' }, { urls: 'turn:127.0.0.1:${udpPort}?transport=udp', username: 'u', credential: 'p' }] });
      pc.createDataChannel('x');
      pc.createOffer().then((o) => pc.setLocalDescription(o));
      setTimeout(() => done('gathered'), 2000);`),
    '/download': page(`
      const a = document.createElement('a'); a.href = '/payload.bin'; a.download = 'payload.bin'; document.body.append(a); a.click();
      setTimeout(() => done('clicked'), 1500);`),
  };
}

beforeAll(async () => {
  udp = createSocket('udp4');
  udp.on('message', (_m, r) => udpPackets.push(`${r.address}:${r.port}`));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  victim = await startLocalServer({});
  const routes = pages();
  site = await startLocalServer({
    ...Object.fromEntries(Object.entries(routes).map(([path, html]) => [path, (_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end(html)])),
    '/payload.bin': (_q, r) => r.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename=payload.bin' }).end(Buffer.alloc(4096, 1)),
  } as Record<string, Parameters<typeof startLocalServer>[0][string]>);
  process.env[SECRET] = 'postgres://trawl:hunter2@127.0.0.1:5432/trawl';
  // Only the site's port is open on 127.0.0.1, as `trawl up` opens only the demo site's.
  browser = await BrowserFetcher.launch({ policy: new AddressPolicy(parseAllowList(`127.0.0.1:${site.port}`)), concurrency: 1, navigationTimeoutMs: 15_000 });
}, 60_000);

afterAll(async () => {
  delete process.env[SECRET];
  await browser?.close();
  await site?.close();
  await victim?.close();
  udp?.close();
});

/** Chromium's processes: those whose command line carries this fetcher's profile directory. */
function chromiumProcesses(): { pid: number; uid: number; args: string }[] {
  const out: { pid: number; uid: number; args: string }[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (!args.includes(`--user-data-dir=${browser.profileDir}`)) continue;
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
      out.push({ pid: Number(pid), uid, args });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('a page in the worker’s Chromium', () => {
  it('reaches no port the allow-list does not open on an allowed address: fetch, POST, image, WebSocket, beacon, form', async () => {
    const r = await browser.fetch(`${site.origin}/reach-other-port`, { waitForSelector: '#out:not(:empty)' });
    expect(r.body).toContain('get:blocked img:blocked post:blocked ws:blocked');
    await new Promise((res) => setTimeout(res, 500));
    expect(victim.hits).toEqual([]);
  });

  it('sends no UDP of its own (WebRTC STUN/TURN to a local address)', async () => {
    await browser.fetch(`${site.origin}/webrtc`, { waitForSelector: '#out:not(:empty)' });
    await new Promise((res) => setTimeout(res, 500));
    expect(udpPackets).toEqual([]);
  });

  it('downloads nothing', async () => {
    await browser.fetch(`${site.origin}/download`, { waitForSelector: '#out:not(:empty)' });
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir)) {
        const p = join(dir, e);
        try {
          if (statSync(p).isDirectory()) walk(p);
          else if (/payload\.bin|\.crdownload$/.test(e)) found.push(p);
        } catch {
          // removed meanwhile
        }
      }
    };
    walk(browser.profileDir);
    expect(found).toEqual([]);
  });
});

describe('the worker’s Chromium', () => {
  it('never runs as root, and runs as the browser user when the worker is root', () => {
    const procs = chromiumProcesses();
    expect(procs.length).toBeGreaterThan(0);
    expect(procs.every((p) => p.uid !== 0)).toBe(true);
    if (process.getuid?.() === 0) expect(browser.sandbox.user).toBe(process.env.TRAWL_BROWSER_USER || 'trawl-browser');
    expect(statSync(browser.profileDir).uid).toBe(procs[0]!.uid);
  });

  it('has its sandbox on where the kernel allows it: renderers live in their own user namespace', () => {
    const procs = chromiumProcesses();
    const renderers = procs.filter((p) => p.args.includes('--type=renderer'));
    expect(renderers.length).toBeGreaterThan(0);
    if (browser.sandbox.state === 'on') {
      expect(procs.some((p) => p.args.includes('--no-sandbox'))).toBe(false);
      const ownNs = readlinkSync('/proc/self/ns/user');
      for (const r of renderers) expect(readlinkSync(`/proc/${r.pid}/ns/user`), `renderer ${r.pid}`).not.toBe(ownNs);
    } else {
      // Where the kernel forbids it, the fetcher says so and why.
      expect(browser.sandbox).toMatchObject({ state: 'off', reason: expect.stringContaining('namespaces') });
    }
  });

  it('does not inherit the worker’s environment (no endpoint, no credential)', () => {
    const browserProcess = chromiumProcesses().find((p) => !p.args.includes('--type='))!;
    const environ = existsSync(`/proc/${browserProcess.pid}/environ`) ? readFileSync(`/proc/${browserProcess.pid}/environ`, 'utf8') : '';
    expect(environ).toContain(`HOME=${browser.profileDir}`);
    expect(environ).not.toContain(SECRET);
    expect(environ).not.toContain('hunter2');
  });
});
