/**
 * `npm run stack -- up|down|status [--json]`, `up --brokers N`. Progress goes to stderr, the status table (or JSON)
 * to stdout. Exit code 0 when every part is (or was brought) up or stopped, 1 otherwise, 2 on
 * wrong usage.
 */
import { redactText } from '@trawl/streams';
import { MAX_KAFKA_NODES } from './context.ts';
import { formatDownStep, formatStatusTable, formatUpStep, formatUpSummary, styleFor } from './report.ts';
import { stackDown, stackStatus, stackUp } from './stack.ts';

const USAGE = `usage: npm run stack -- <command> [--json] [--brokers N]

  up       start every part that is not running (idempotent), provision the topics
           --brokers N: Kafka as a cluster of N nodes (3: topics in three copies, min ISR 2);
           later \`up\`s keep the number the log was formatted for
  down     stop what \`up\` started (pid files under TRAWL_HOME/run)
  status   one line per part: state, endpoint, pid, memory; exits 1 when a part is down

Parts: postgres, kafka, registry, clickhouse, chromium, topics. See scripts/stack/README.md.`;

/** JSON that keeps an error's message and name, which JSON.stringify drops, with every credential in a URL masked. */
function toJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_k, v: unknown) => (v instanceof Error ? { ...v, name: v.name, message: redactText(v.message) } : typeof v === 'string' ? redactText(v) : v),
    2,
  );
}

/** `--brokers N` or `--brokers=N` taken out of argv; NaN when its value is missing. */
function takeBrokers(argv: string[]): { brokers: number | undefined; rest: string[] } {
  const rest: string[] = [];
  let brokers: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--brokers') brokers = Number(argv[++i] ?? Number.NaN);
    else if (a.startsWith('--brokers=')) brokers = Number(a.slice('--brokers='.length));
    else rest.push(a);
  }
  return { brokers, rest };
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const { brokers, rest: args } = takeBrokers(argv.filter((a) => a !== '--json'));
  const [command, ...rest] = args;
  const err = styleFor(process.stderr);
  const waiting = (pid: number): void => void process.stderr.write(err.dim(`waiting for another stack command (pid ${pid}) to finish…\n`));
  if (rest.length > 0) {
    process.stderr.write(`unexpected arguments: ${rest.join(' ')}\n${USAGE}\n`);
    return 2;
  }
  if (brokers !== undefined && (command !== 'up' || !Number.isInteger(brokers) || brokers < 1 || brokers > MAX_KAFKA_NODES)) {
    process.stderr.write(`--brokers takes a number from 1 to ${MAX_KAFKA_NODES}, with \`up\` only\n${USAGE}\n`);
    return 2;
  }
  switch (command) {
    case 'up': {
      const report = await stackUp({ onStep: (s) => process.stderr.write(formatUpStep(s, err) + '\n'), onWait: waiting, ...(brokers !== undefined ? { brokers } : {}) });
      process.stderr.write(formatUpSummary(report.ok, report.ms, report.steps, err) + '\n');
      if (json) process.stdout.write(toJson(report) + '\n');
      return report.ok ? 0 : 1;
    }
    case 'down': {
      const steps = await stackDown({ onStep: (s) => process.stderr.write(formatDownStep(s, err) + '\n'), onWait: waiting });
      if (json) process.stdout.write(toJson(steps) + '\n');
      return 0;
    }
    case 'status': {
      const report = await stackStatus();
      process.stdout.write((json ? toJson(report) : formatStatusTable(report.parts, styleFor(process.stdout))) + '\n');
      return report.ok ? 0 : 1;
    }
    default:
      process.stderr.write(USAGE + '\n');
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`stack: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
