// The worker is a process (src/main.ts), not a library: no package imports it, so it exports nothing.
export {};
