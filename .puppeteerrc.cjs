// Puppeteer's own browser download cannot work offline; Trawl drives the system Chromium
// (CHROMIUM_PATH, default /usr/bin/chromium) through puppeteer-core instead.
module.exports = { skipDownload: true };
