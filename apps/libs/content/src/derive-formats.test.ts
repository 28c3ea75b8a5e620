import { describe, expect, it } from 'vitest';
import { derivePage } from './derive-formats.ts';

const filler = 'The harbour master keeps a log of every ship that enters and leaves the port. '.repeat(8);
const ARTICLE = `<!doctype html><html><head><title>Harbour log</title><style>p{}</style></head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a></nav>
<article><h1>Harbour log</h1><p>${filler}</p><p>See the <a href="../tides">tide table</a> for times.</p>
<ul><li>North pier</li><li>South pier</li></ul></article>
<footer>Copyright the harbour board</footer><script>track()</script></body></html>`;

describe('derived formats', () => {
  it('keep the main content and drop navigation, footer and scripts when asked to (only_main_content)', () => {
    const page = derivePage(ARTICLE, 'https://port.example/logs/today', { mainContent: true });
    expect(page.title).toBe('Harbour log');
    expect(page.text).toContain('The harbour master keeps a log');
    expect(page.text).toContain('North pier\nSouth pier');
    for (const boilerplate of ['About us', 'Copyright', 'track()', 'p{}']) {
      expect(page.text).not.toContain(boilerplate);
      expect(page.markdown).not.toContain(boilerplate);
    }
  });

  it('keep the whole body, navigation and footer included, but no scripts or styles by default', () => {
    const page = derivePage(ARTICLE, 'https://port.example/logs/today');
    for (const kept of ['About us', 'The harbour master keeps a log', 'Copyright the harbour board']) {
      expect(page.text).toContain(kept);
      expect(page.markdown).toContain(kept);
    }
    for (const dropped of ['track()', 'p{}']) expect(page.text + page.markdown).not.toContain(dropped);
  });

  it('write Markdown with a title heading, list items and absolute links', () => {
    const md = derivePage(ARTICLE, 'https://port.example/logs/today', { mainContent: true }).markdown;
    expect(md.startsWith('# Harbour log\n')).toBe(true);
    expect(md).toContain('[tide table](https://port.example/tides)');
    expect(md).toMatch(/^- +North pier$/m);
  });

  it('fall back to the whole body when there is no article', () => {
    const page = derivePage('<html><body><p>Only <b>this</b></p><script>x()</script></body></html>', 'https://e.example/', { mainContent: true });
    expect(page.text).toBe('Only this');
    expect(page.markdown).toBe('Only **this**\n');
  });
});
